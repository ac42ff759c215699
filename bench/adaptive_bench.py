#!/usr/bin/env python3
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Adaptive sweeps against full sweeps over simulated saturation curves: the targets below, measured.

Targets: at least 40 % less survey time on the I/O kit's default grids, and the adaptive sweep's peak within
2 % of the full sweep's in at least 95 % of the curves.

Each curve is a lustre-sim concurrency curve (``lustre_sim/curve.py``, the very model the simulator
throttles to): knees at every thread count of the grid, linear and smooth rises, declines past a second
point, seeded noise.  Each curve is swept over each survey's default grid twice, ``full`` and
``adaptive``, in the engine's loop order with the engine's own bookkeeping
(``plugins/module_utils/adaptive.InnerSweeps``, the real stop rule).  Survey time is modelled, not
measured: every test of every point that runs costs its bytes (or operations) divided by the curve's rate
at that thread count, plus ``--overhead-s`` per test (process start, object create/destroy).  The peak is
the best figure of each test over the grid; a curve's adaptive peak counts as within 2 % when every test's
is.  A noisy curve reports its noise as the points' spread (min/max), which the rule respects.

    .venv/bin/python bench/adaptive_bench.py           # every curve on every grid
    .venv/bin/python bench/adaptive_bench.py --quick   # a third of the curves

Both end with ``adaptive: N curves, time saved X %, peak within 2 % in Y %`` (time saved over the sum of
all runs' time, N counting each curve on each grid).
"""

from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLLECTIONS = os.path.join(ROOT, '.venv', 'collections')
SIMULATOR = os.path.join(ROOT, 'simulator', 'src')


def _imports():
    # The checkout is linked as .venv/collections/ansible_collections/lustre/iokit by `make setup`.
    for path in (COLLECTIONS, SIMULATOR):
        if path not in sys.path:
            sys.path.insert(0, path)
    from ansible_collections.lustre.iokit.plugins.module_utils import adaptive
    from lustre_sim import curve
    return adaptive, curve


adaptive, curve = _imports()


def doubling(low, high):
    value = low
    while value <= high:
        yield value
        value *= 2


# The I/O kit's grids (the obdfilter grid with thrhi 64, as the report bench and most sites run it).
# Each point: the outer coordinates, the thread count, and what one test moves per target (MiB or operations).
def obdfilter_grid():
    """nobj 1-16 x thr 1-64 at rsz 1024, thr a multiple of nobj; 16 GiB per OST per test."""
    return [({'rsz_kib': 1024, 'nobj': nobj}, thr, 16384.0)
            for nobj in doubling(1, 16) for thr in doubling(1, 64) if thr % nobj == 0]


def sgpdd_grid():
    """crg 1-256 x thr 1-4096, skipping thr < crg and thr/crg > 16; 8 GiB per device per action."""
    return [({'rsz_kib': 1024, 'crg': crg}, thr, 8192.0)
            for crg in doubling(1, 256) for thr in doubling(1, 4096) if crg <= thr <= 16 * crg]


def mds_grid():
    """thr 4-32 (the script's thrlo/thrhi); 100,000 files per test."""
    return [({'dir': 4}, thr, 100000.0) for thr in doubling(4, 32)]


GRIDS = {
    'obdfilter': (obdfilter_grid, ('write', 'rewrite', 'read'), 'peak_mib_s', 400.0),
    'sgpdd': (sgpdd_grid, ('write', 'read'), 'peak_mib_s', 1200.0),
    'mds': (mds_grid, ('create', 'lookup', 'destroy'), 'peak_ops_s', 40000.0),
}


def curves_for(axis_values, peak_key, peak):
    """At least 20 curves over one grid's thread axis: (label, curve section, reported spread %)."""
    made = []
    for knee in axis_values:
        made.append(('knee %d' % knee, {'knee_threads': knee}, None))
        made.append(('smooth knee %d' % knee, {'knee_threads': knee, 'rise': 'smooth'}, None))
    middle = axis_values[len(axis_values) // 2]
    low = axis_values[max(len(axis_values) // 4, 1) - 1]
    for knee, decline, pct in ((low, middle, 10.0), (low, low, 25.0), (middle, axis_values[-2], 15.0),
                               (axis_values[0], axis_values[1], 5.0)):
        made.append(('knee %d, -%g %%/doubling from %d' % (knee, pct, decline),
                     {'knee_threads': knee, 'decline_threads': decline, 'decline_pct': pct}, None))
    for seed, (knee, noise, spread) in enumerate(((low, 1.0, 1.0), (middle, 1.0, 1.0), (low, 2.0, 2.0),
                                                  (middle, 2.0, 2.0), (middle, 2.0, None), (low, 5.0, 5.0),
                                                  (middle, 5.0, 5.0))):
        made.append(('knee %d, noise %g %%%s' % (knee, noise, '' if spread else ' (no spread printed)'),
                     {'knee_threads': knee, 'noise_pct': noise, 'seed': seed + 1}, spread))
    result = []
    for label, section, spread in made:
        section = dict(section, **{peak_key: peak})
        result.append((label, curve.normalise_curve(section, label, peak_key), spread))
    return result


def sweep(grid, tests, model, spread, mode, min_gain_pct, patience, overhead_s, near_knee=False):
    """Model one survey over ``grid``: (seconds, best figure per test, the InnerSweeps bookkeeping)."""
    inner = adaptive.InnerSweeps(mode, min_gain_pct, patience, start_near_knee=near_knee)
    seconds = 0.0
    best = dict((test, 0.0) for test in tests)
    for outer, thr, amount in grid:
        reason = inner.stopped(outer, thr)
        if reason:
            inner.skip(dict(outer, thr=thr), reason)
            continue
        figures = {}
        for test in tests:
            # The noise differs per outer combination and test, as repeated measurements would.
            rate = curve.rate(model, thr, '/'.join('%s=%s' % item for item in sorted(outer.items())), test)
            seconds += amount / rate + overhead_s
            best[test] = max(best[test], rate)
            figures[test] = {'value': rate, 'spread_pct': spread}
        inner.measured(outer, thr, figures)
    return seconds, best, inner


def summary(rows):
    """(mean time saved per curve %, pooled time saved %, share of curves with the peak within 2 %)."""
    saved = sum(row['saved_pct'] for row in rows) / len(rows)
    pooled = 100.0 * (1 - sum(row['adaptive_s'] for row in rows) / sum(row['full_s'] for row in rows))
    within = 100.0 * sum(1 for row in rows if row['peak_pct'] >= 98.0) / len(rows)
    return saved, pooled, within


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--quick', action='store_true', help='every third curve only')
    parser.add_argument('--min-gain-pct', type=float, default=adaptive.DEFAULT_MIN_GAIN_PCT)
    parser.add_argument('--patience', type=int, default=adaptive.DEFAULT_PATIENCE)
    parser.add_argument('--overhead-s', type=float, default=1.0, help='fixed cost of every test run (s)')
    parser.add_argument('--worst', type=int, default=5, help='worst cases to print')
    parser.add_argument('--near-knee', action='store_true',
                        help='start each inner sweep one doubling below the previous knee')
    args = parser.parse_args()

    rows = []
    for survey, (make_grid, tests, peak_key, peak) in sorted(GRIDS.items()):
        grid = make_grid()
        axis_values = sorted(set(thr for unused_outer, thr, unused_amount in grid))
        models = curves_for(axis_values, peak_key, peak)
        if args.quick:
            models = models[::3]
        for label, model, spread in models:
            full_s, full_best, unused = sweep(grid, tests, model, spread, 'full', args.min_gain_pct,
                                              args.patience, args.overhead_s)
            fast_s, fast_best, inner = sweep(grid, tests, model, spread, 'adaptive', args.min_gain_pct,
                                             args.patience, args.overhead_s, near_knee=args.near_knee)
            ratio = min(fast_best[test] / full_best[test] for test in tests)
            rows.append({'survey': survey, 'curve': label, 'points': len(grid), 'run': inner.points_run,
                         'full_s': full_s, 'adaptive_s': fast_s, 'saved_pct': 100.0 * (1 - fast_s / full_s),
                         'peak_pct': 100.0 * ratio})

    header = '%-10s %-42s %6s %5s %9s %9s %7s %8s' % ('survey', 'curve', 'points', 'run', 'full s', 'adapt s',
                                                     'saved', 'peak')
    print(header)
    print('-' * len(header))
    for row in rows:
        print('%-10s %-42s %6d %5d %9.0f %9.0f %6.1f%% %7.2f%%' % (
            row['survey'], row['curve'], row['points'], row['run'], row['full_s'], row['adaptive_s'],
            row['saved_pct'], row['peak_pct']))

    print()
    print('per survey (time saved: mean over the curves; pooled: over the sum of their survey times):')
    for survey in sorted(set(row['survey'] for row in rows)):
        mine = [row for row in rows if row['survey'] == survey]
        print('  %-10s %3d curves, time saved %5.1f %% (pooled %5.1f %%), peak within 2 %% in %5.1f %%'
              % ((survey, len(mine)) + summary(mine)))
    print()
    print('points not run (the time saved if every point took the same time): %.1f %%'
          % (100.0 * sum(1 - row['run'] / float(row['points']) for row in rows) / len(rows)))
    print()
    print('worst peaks:')
    for row in sorted(rows, key=lambda row: row['peak_pct'])[:args.worst]:
        print('  %-10s %-42s peak %6.2f %%, saved %5.1f %%' % (row['survey'], row['curve'], row['peak_pct'],
                                                               row['saved_pct']))
    print('least time saved:')
    for row in sorted(rows, key=lambda row: row['saved_pct'])[:args.worst]:
        print('  %-10s %-42s saved %5.1f %%, peak %6.2f %%' % (row['survey'], row['curve'], row['saved_pct'],
                                                               row['peak_pct']))
    saved, pooled, within = summary(rows)
    print()
    print('pooled time saved (sum of adaptive over sum of full survey times): %.1f %%' % pooled)
    print('adaptive: %d curves, time saved %.1f %%, peak within 2 %% in %.1f %%' % (len(rows), saved, within))


if __name__ == '__main__':
    main()
