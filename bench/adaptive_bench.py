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

    .venv/bin/python bench/adaptive_bench.py                  # every curve on every grid
    .venv/bin/python bench/adaptive_bench.py --quick          # a third of the curves
    .venv/bin/python bench/adaptive_bench.py --profile fast   # the fast profile beside the full sweep

Both end with ``adaptive: N curves, time saved X %, peak within 2 % in Y %`` (time saved: the mean over the
curves of each one's saving; N counting each curve on each grid).

``--profile fast`` models the fast profile instead of the adaptive rule alone: an adaptive sweep whose inner
sweeps start one doubling below the previous knee, with time-bounded points
(``plugins/module_utils/point_budget``: each point moves ``--point-s`` seconds' worth at the rate it is sized from,
never less than the default floor of the modelled node, never more than the I/O kit's size).  The rate a point
is sized from is the modelled (measured) rate of the point ``point_budget.SizingRates`` picks.  A read cache is
modelled, so that the floor has something to defeat: when a test's data on the host (its amount per target
times the host's targets) is smaller than the cache figure of the survey, the test runs at ``CACHE_SPEEDUP`` times the
device's rate at that concurrency.  The run ends with
``fast: N curves, time saved X %, pooled P %, peak within 2 % in Y %`` (pooled: 1 - the sum of the fast
survey times over the sum of the full ones).
"""

from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLLECTIONS = os.path.join(ROOT, '.venv', 'collections')
SIMULATOR = os.path.join(ROOT, 'simulator', 'src')


def _imports():
    # The checkout is linked as .venv/collections/ansible_collections/lustre/iokit by `make setup`; appended, so
    # that a PYTHONPATH naming another checkout (a git worktree) is the one imported.
    for path in (COLLECTIONS, SIMULATOR):
        if path not in sys.path:
            sys.path.append(path)
    from ansible_collections.lustre.iokit.plugins.module_utils import adaptive, point_budget
    from lustre_sim import curve
    return adaptive, point_budget, curve


adaptive, point_budget, curve = _imports()

# A test served from a cache runs this many times faster than the device behind it: a page cache or a controller's
# memory streams a few GB/s against the few hundred MiB/s of the modelled OSTs and LUNs.
CACHE_SPEEDUP = 4.0


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


# The modelled node behind each grid: how many targets run side by side (the floor is per target, a cache is the
# host's) and the figures ``point_budget.default_floor`` derives the floor from; ``cache``: the cache figure the model
# serves tests from, and which tests it serves.  An OSS of 8 OSTs with 64 GiB of memory on ldiskfs (the OSD's read
# cache on: the read test can be served from the page cache; the OSD writes to the device); LUNs behind a RAID
# controller whose write-back cache, not reported, is assumed (it absorbs writes and serves the reads that follow);
# mds-survey's files stay cached at any count (both profiles alike), so no cache is modelled for it.
def node_model(args):
    mem_mib = args.oss_mem_gib * 1024
    controller_mib = point_budget.ASSUMED_CONTROLLER_CACHE_MIB
    return {
        'obdfilter': {'targets': args.osts, 'figures': {'mem_total_mib': mem_mib},
                      'cache_mib': mem_mib, 'cached_tests': ('read',)},
        'sgpdd': {'targets': args.luns, 'figures': {}, 'cache_mib': controller_mib,
                  'cached_tests': ('write', 'read')},
        'mds': {'targets': 1, 'figures': {}, 'cache_mib': 0, 'cached_tests': ()},
    }


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


def sweep(grid, tests, model, spread, mode, min_gain_pct, patience, overhead_s, near_knee=False, node=None):
    """Model one survey over ``grid``: (seconds, best figure per test, the InnerSweeps bookkeeping, tests cached).

    ``node``: None for the I/O kit's fixed size at every point and no cache; else a dict with the survey, the node's
    ``targets``, ``cache_mib`` and ``cached_tests`` (the cache model), and ``point_s`` and ``floor``: time-bounded
    points when ``point_s`` is a number, the I/O kit's fixed size when it is None.
    """
    inner = adaptive.InnerSweeps(mode, min_gain_pct, patience, start_near_knee=near_knee)
    rates = point_budget.SizingRates()
    seconds = 0.0
    cached = 0
    best = dict((test, 0.0) for test in tests)
    for outer, thr, full in grid:
        reason = inner.stopped(outer, thr)
        if reason:
            inner.skip(dict(outer, thr=thr), reason)
            continue
        amount = full
        if node and node['point_s'] is not None:
            amount = point_budget.size_point(node['survey'], full, node['floor'], node['point_s'],
                                             rates.rate_for(outer, thr)).amount
        figures = {}
        for test in tests:
            # The noise differs per outer combination and test, as repeated measurements would.
            rate = curve.rate(model, thr, '/'.join('%s=%s' % item for item in sorted(outer.items())), test)
            if node and test in node['cached_tests'] and amount * node['targets'] < node['cache_mib']:
                rate *= CACHE_SPEEDUP
                cached += 1
            seconds += amount / rate + overhead_s
            best[test] = max(best[test], rate)
            figures[test] = {'value': rate, 'spread_pct': spread}
        rates.measured(outer, thr, min(figure['value'] for figure in figures.values()))
        inner.measured(outer, thr, figures)
    return seconds, best, inner, cached


def summary(rows):
    """(mean time saved per curve %, pooled time saved %, share of curves with the peak within 2 %)."""
    saved = sum(row['saved_pct'] for row in rows) / len(rows)
    pooled = 100.0 * (1 - sum(row['profile_s'] for row in rows) / sum(row['full_s'] for row in rows))
    # within either way: a cache-inflated peak above the full sweep's is as wrong as one below it
    within = 100.0 * sum(1 for row in rows if abs(row['peak_pct'] - 100.0) <= 2.0) / len(rows)
    return saved, pooled, within


def peak_ratio(best, full_best, tests):
    """The test whose best figure strays furthest from the full sweep's, as a ratio (above 1: inflated)."""
    return max((best[test] / full_best[test] for test in tests), key=lambda ratio: abs(ratio - 1.0))


def model_curves(args, node):
    """One row per curve and grid: the full sweep against ``args.profile``."""
    rows = []
    for survey, (make_grid, tests, peak_key, peak) in sorted(GRIDS.items()):
        grid = make_grid()
        axis_values = sorted(set(thr for unused_outer, thr, unused_amount in grid))
        models = curves_for(axis_values, peak_key, peak)
        if args.quick:
            models = models[::3]
        fast = args.profile == 'fast'
        if fast:
            site = node[survey]
            floor = point_budget.default_floor(survey, site['targets'], **site['figures'])[0]
            cache = dict(survey=survey, targets=site['targets'], cache_mib=site['cache_mib'],
                         cached_tests=site['cached_tests'])
            full_rule = dict(cache, point_s=None, floor=None)
            fast_rule = dict(cache, point_s=args.point_s, floor=floor)
            # the same, with the floor's minimum alone: what the floor's cache term prevents
            minimum_rule = dict(fast_rule, floor=point_budget.MDS_FLOOR_ITEMS if survey == 'mds'
                                else point_budget.MIN_FLOOR_MIB)
        for label, model, spread in models:
            common = (grid, tests, model, spread)
            settings = (args.min_gain_pct, args.patience, args.overhead_s)
            full_s, full_best, unused, full_cached = sweep(*(common + ('full',) + settings),
                                                           node=full_rule if fast else None)
            profile_s, best, inner, cached = sweep(*(common + ('adaptive',) + settings),
                                                   near_knee=args.near_knee or fast,
                                                   node=fast_rule if fast else None)
            row = {'survey': survey, 'curve': label, 'points': len(grid), 'run': inner.points_run,
                   'full_s': full_s, 'profile_s': profile_s, 'saved_pct': 100.0 * (1 - profile_s / full_s),
                   'peak_pct': 100.0 * peak_ratio(best, full_best, tests), 'full_cached': full_cached,
                   'cached': cached}
            if fast:
                unused, minimum_best, unused, minimum_cached = sweep(*(common + ('adaptive',) + settings),
                                                                     near_knee=True, node=minimum_rule)
                row.update(minimum_peak_pct=100.0 * peak_ratio(minimum_best, full_best, tests),
                           minimum_cached=minimum_cached)
            rows.append(row)
    return rows


def print_table(rows, fast):
    columns = '%-10s %-42s %6s %5s %9s %9s %7s %8s'
    values = '%-10s %-42s %6d %5d %9.0f %9.0f %6.1f%% %7.2f%%'
    names = ('survey', 'curve', 'points', 'run', 'full s', 'fast s' if fast else 'adapt s', 'saved', 'peak')
    if fast:
        columns += ' %6s %6s %10s %6s'
        values += ' %6d %6d %9.2f%% %6d'
        names += ('cached', 'fcache', 'min peak', 'mcache')
    header = columns % names
    print(header)
    print('-' * len(header))
    for row in rows:
        fields = (row['survey'], row['curve'], row['points'], row['run'], row['full_s'], row['profile_s'],
                  row['saved_pct'], row['peak_pct'])
        if fast:
            fields += (row['cached'], row['full_cached'], row['minimum_peak_pct'], row['minimum_cached'])
        print(values % fields)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--quick', action='store_true', help='every third curve only')
    parser.add_argument('--profile', choices=('adaptive', 'fast'), default='adaptive',
                        help='adaptive: the stop rule alone (fixed-size points); fast: adaptive, near the knee, '
                             'time-bounded points with the default floors, and the cache model')
    parser.add_argument('--min-gain-pct', type=float, default=adaptive.DEFAULT_MIN_GAIN_PCT)
    parser.add_argument('--patience', type=int, default=adaptive.DEFAULT_PATIENCE)
    parser.add_argument('--overhead-s', type=float, default=1.0, help='fixed cost of every test run (s)')
    parser.add_argument('--worst', type=int, default=5, help='worst cases to print')
    parser.add_argument('--near-knee', action='store_true',
                        help='start each inner sweep one doubling below the previous knee (always with fast)')
    parser.add_argument('--point-s', type=float, default=point_budget.FAST_POINT_S,
                        help='fast: seconds for each test of a point (default %(default)s)')
    parser.add_argument('--oss-mem-gib', type=float, default=64, help='fast: the modelled OSS\'s memory')
    parser.add_argument('--osts', type=int, default=8, help='fast: OSTs of the modelled OSS')
    parser.add_argument('--luns', type=int, default=8, help='fast: LUNs of the modelled sgpdd host')
    args = parser.parse_args()
    fast = args.profile == 'fast'
    node = node_model(args)

    if fast:
        print('fast profile: adaptive (min gain %g %%, patience %d), each inner sweep from one doubling below the '
              'previous knee, %g s per test of a point; cache served at %g x the device rate' % (
                  args.min_gain_pct, args.patience, args.point_s, CACHE_SPEEDUP))
        for survey in sorted(node):
            site = node[survey]
            floor, reason = point_budget.default_floor(survey, site['targets'], **site['figures'])
            print('  %-10s floor %s; cache modelled: %s' % (
                survey, reason, '%d MiB on the host, %s test(s)' % (site['cache_mib'], '+'.join(site['cached_tests']))
                if site['cached_tests'] else 'none'))
        print('columns: cached/fcache = tests the cache served in the fast/full sweep; min peak, mcache = the fast '
              'profile with the floor\'s minimum alone (%d MiB), without its cache term' % point_budget.MIN_FLOOR_MIB)
        print()
    rows = model_curves(args, node)
    print_table(rows, fast)

    label = 'fast' if fast else 'adaptive'
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
    for row in sorted(rows, key=lambda row: -abs(row['peak_pct'] - 100.0))[:args.worst]:
        print('  %-10s %-42s peak %6.2f %%, saved %5.1f %%' % (row['survey'], row['curve'], row['peak_pct'],
                                                               row['saved_pct']))
    print('least time saved:')
    for row in sorted(rows, key=lambda row: row['saved_pct'])[:args.worst]:
        print('  %-10s %-42s saved %5.1f %%, peak %6.2f %%' % (row['survey'], row['curve'], row['saved_pct'],
                                                               row['peak_pct']))
    if fast:
        inflated = [row for row in rows if row['minimum_peak_pct'] > 102.0]
        print()
        print('the floor: %d tests served from the cache with the default floors, %d with the minimum alone, '
              'which inflates the peak by more than 2 %% in %d of %d curves'
              % (sum(row['cached'] for row in rows), sum(row['minimum_cached'] for row in rows), len(inflated),
                 len(rows)))
    saved, pooled, within = summary(rows)
    print()
    print('pooled time saved (sum of %s over sum of full survey times): %.1f %%' % (label, pooled))
    if fast:
        print('fast: %d curves, time saved %.1f %%, pooled %.1f %%, peak within 2 %% in %.1f %%'
              % (len(rows), saved, pooled, within))
    else:
        print('adaptive: %d curves, time saved %.1f %%, peak within 2 %% in %.1f %%' % (len(rows), saved, within))


if __name__ == '__main__':
    main()
