#!/usr/bin/env python3
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fast sweep profile against the full one, measured through the survey playbooks on slow-by-construction devices.

Targets (the sweep-profile issue): with ``iokit_sweep_profile: fast`` a survey takes at most half the full profile's
wall time, finds every test's peak within 2 % of the full sweep's, and names the same slow component.

Each survey runs twice through its playbook, once with the default profile (``full``: the I/O kit's fixed grid) and
once with ``-e iokit_sweep_profile=fast`` (adaptive sweeps, each inner sweep from one doubling below the previous
knee, time-bounded points), with the same variables otherwise:

* **obdfilter** (``playbooks/survey-obdfilter.yml``) on a simulated OSS (lustre-sim, made fresh for each run, its
  files on /dev/shm) with four OSTs, each throttled to a concurrency curve: linear up to ``KNEE_THREADS`` threads,
  flat at ``OST_PEAK_MIB_S`` after it; ``testfs-OST0003`` is planted slow, its curve at ``SLOW_SHARE`` of its peers'.
  The node has a read cache (the simulator's model of an OSD page cache: a read of data still cached runs four
  times its OST's rate).  The grid has the shape of the I/O kit's default (rsz 1024 KiB, nobj 1-16, thr 1-16,
  write/rewrite/read; ``--quick``: nobj 1-2, thr 1-8), scaled down in size.
* **sgpdd** (``playbooks/survey-sgpdd.yml``) on four loop devices over sparse files on /dev/shm, limited by a
  block-I/O cgroup (``tests/integration/targets/setup_slow_device/files/slow_device.py``, ``throttle``: the modules
  run through an interpreter wrapper that joins the group, given as ``ansible_python_interpreter``); the last is
  planted slow at ``SLOW_SHARE`` of ``LUN_MIB_S``.  A cgroup limit is a flat rate per device whatever the queue
  depth, so these LUNs have **no knee**: every point of the grid measures the same rate.  Grid crg 1-4, thr 1-16,
  write/read (``--quick``: crg 1-2, thr 1-4); ``sgpdd_destroy_data: true`` (the devices are the bench's own).

The sizes follow from the time a bounded point is given (``--point-s``, by default the profile's own 20 s, which the
bench then does not set), so that the proportions are the I/O kit's on a real OSS, where a full point at the peak
(16 GiB at 400 MiB/s) lasts about twice the fast profile's 20 s: the full size per OST or LUN is what the slowest
one moves at its peak in ``2 x point_s``, and the floor (``<survey>_point_min_mib``) a quarter of it.  ``--quick``
shrinks the time scale to 4 s a point (it then passes ``obdfilter_point_s`` and ``sgpdd_point_s``; everything
else still comes from the profile).

The floors are given explicitly.  The default obdfilter floor is the OSS's MemTotal over its OSTs: here that would
be the test machine's memory (gigabytes per OST), not the simulated OSS's read cache, and every fast point would
move the full size.  The bench's floor covers the simulated cache (the cache is 80 % of a floor point's data over
the four OSTs), so that neither profile reads its data back from it; the column ``cache MiB`` is what the reads
of a run found in the cache (the simulator counts it), which should be 0.  The default sgpdd floor assumes an
8 GiB controller cache over the devices, far more than a loop device holds.

For each survey and profile: the points run (of the full grid), the survey's wall time (the module's own
``duration_s``, start to end of the sweep) and the playbook's, each test's peak (the best point of the host's
aggregate, ``report.analysis.peaks``) and the findings: the slow components the collection's one rule names
(``report.analysis.weak_components``, the rule of the report and of the summaries' slow-OST tables), as
``subject (tests)``.  Then, per survey, the time the fast profile saved, its peaks against the full ones and
whether the findings are the same; the last line is
``fast: N surveys, time saved X %, peak within 2 % in Y %, findings equal in Z of N`` (time saved: the mean over
the surveys; a survey's peak is within 2 % when every test's is).

Everything is removed when it ends, whatever happens (Ctrl-C and SIGTERM included): a playbook cut short is
followed by ``playbooks/cleanup.yml`` for its run, then the simulated node is destroyed, the cgroup released and
the loop devices detached.  Run it where no other run of the collection shares the machine (bench/README.md: two
sgpdd runs beside other sessions' tests lost their async job file).  Needs root, losetup and sgp_dd (sg3-utils),
the checkout's venv with lustre-sim.  In a git worktree set ``IOKIT_COLLECTIONS_PATH`` as docs/testing.md says
(a collections path whose ``ansible_collections/lustre/iokit`` is the worktree, then ``.venv/collections``); the
simulator is this checkout's.

    .venv/bin/python bench/fast_bench.py --quick   # 10-11 minutes on the 2-core test machine
    .venv/bin/python bench/fast_bench.py           # about 85 minutes
    .venv/bin/python bench/fast_bench.py --surveys obdfilter --keep /tmp/fb   # one survey, keep logs and results
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIMULATOR = os.path.join(ROOT, 'simulator', 'src')


def _setup_imports():
    """The playbooks run this checkout's collection and simulator: refuse a collections path that holds another."""
    default = os.path.join(ROOT, '.venv', 'collections')
    collections = os.environ.get('IOKIT_COLLECTIONS_PATH') or default
    found = [path for path in collections.split(os.pathsep)
             if os.path.isdir(os.path.join(path, 'ansible_collections', 'lustre', 'iokit'))]
    if not found or os.path.realpath(os.path.join(found[0], 'ansible_collections', 'lustre', 'iokit')) != ROOT:
        sys.exit('%s does not hold this checkout (%s) as lustre.iokit first: run `make setup`, or in a git worktree '
                 'set IOKIT_COLLECTIONS_PATH (docs/testing.md)' % (collections, ROOT))
    os.environ['IOKIT_COLLECTIONS_PATH'] = collections
    # The simulator's tools run under ansible-playbook's modules: the environment carries the path down to them.
    os.environ['PYTHONPATH'] = os.pathsep.join([SIMULATOR] + [path for path in os.environ.get('PYTHONPATH', '').split(
        os.pathsep) if path])
    sys.path.insert(0, SIMULATOR)
    # Measured as a user runs the playbooks: without the test suite's cache of compiled module payloads.
    os.environ.setdefault('IOKIT_MODULE_CODE_CACHE', '')
    sys.path.insert(0, os.path.join(ROOT, 'tests', 'playbooks'))


_setup_imports()

# The playbook tests' helpers (a test-tree module, not a package): the simulated OSS, the throttled loop devices.
import conftest  # noqa: E402 pylint: disable=wrong-import-position
from ansible_collections.lustre.iokit.plugins.module_utils import point_budget  # noqa: E402 pylint: disable=wrong-import-position
from ansible_collections.lustre.iokit.plugins.plugin_utils.report import analysis  # noqa: E402 pylint: disable=wrong-import-position
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.run import load_run  # noqa: E402 pylint: disable=wrong-import-position
from lustre_sim.node import Node  # noqa: E402 pylint: disable=wrong-import-position

PROFILES = ('full', 'fast')
SURVEYS = ('obdfilter', 'sgpdd')
TESTS = {'obdfilter': ('write', 'rewrite', 'read'), 'sgpdd': ('write', 'read')}
OSTS = 4
LUNS = 4
SLOW_INDEX = 3
SLOW_SHARE = 0.6
OST_PEAK_MIB_S = 32.0
KNEE_THREADS = 4
LUN_MIB_S = 40.0
# A full point at the slowest target's peak lasts this many bounded points (16 GiB at 400 MiB/s against 20 s).
FULL_POINT_IN_POINT_S = 2.0
# The floor: a quarter of the full size, as on an OSS with 32 GiB over 8 OSTs against the I/O kit's 16 GiB per OST.
FLOOR_SHARE_OF_FULL = 0.25
# The simulated read cache is this share of a floor point's data on the host: the floor covers it with a margin.
CACHE_SHARE_OF_FLOOR = 0.8
QUICK_POINT_S = 4.0
PEAK_TOLERANCE_PCT = 2.0
# The shapes of the I/O kit's grids, scaled: obdfilter nobj 1-16 x thr 1-16 (its script's defaults), sgpdd crg 1-4 x
# thr 1-16 (its crg 1-256 x thr 1-4096 with at most 16 threads per region, cut at four regions).
GRIDS = {
    'default': {'obdfilter': {'obdfilter_nobjhi': 16, 'obdfilter_thrhi': 16},
                'sgpdd': {'sgpdd_crghi': 4, 'sgpdd_thrhi': 16}},
    'quick': {'obdfilter': {'obdfilter_nobjhi': 2, 'obdfilter_thrhi': 8},
              'sgpdd': {'sgpdd_crghi': 2, 'sgpdd_thrhi': 4}},
}


def round_up(value, granule):
    return int(math.ceil(value / float(granule)) * granule)


class Plan:
    """The sizes and variables of every run, from the time scale ``point_s``."""

    def __init__(self, point_s, quick, set_point_s, slow_share=SLOW_SHARE, min_gain_pct=None):
        self.point_s = point_s
        self.slow_share = slow_share
        self.min_gain_pct = min_gain_pct
        self.profiles = PROFILES
        self.grid = GRIDS['quick' if quick else 'default']
        self.set_point_s = set_point_s
        # multiples of the largest thread count, so that the full size splits into whole records for every thread
        self.obdfilter_size_mib = round_up(FULL_POINT_IN_POINT_S * point_s * OST_PEAK_MIB_S * min(slow_share, 1.0), 16)
        self.obdfilter_floor_mib = round_up(self.obdfilter_size_mib * FLOOR_SHARE_OF_FULL, 16)
        self.read_cache_mib = int(self.obdfilter_floor_mib * OSTS * CACHE_SHARE_OF_FLOOR)
        self.sgpdd_size_mib = round_up(FULL_POINT_IN_POINT_S * point_s * LUN_MIB_S * min(slow_share, 1.0), 16)
        self.sgpdd_floor_mib = round_up(self.sgpdd_size_mib * FLOOR_SHARE_OF_FULL, 16)
        # the survey starts sgpdd_boundary (1024 blocks) into each device
        self.lun_size_mib = self.sgpdd_size_mib + 64

    def simulator_config(self):
        osts = []
        for index in range(OSTS):
            peak = OST_PEAK_MIB_S * (self.slow_share if index == SLOW_INDEX else 1.0)
            osts.append({'index': index, 'curve': {'peak_mib_s': peak, 'knee_threads': KNEE_THREADS}})
        return {'fsname': 'testfs', 'mdts': 1, 'ost_size_mib': 2 * self.obdfilter_size_mib + 64, 'osts': osts,
                'read_cache_mib': self.read_cache_mib}

    def planted(self, subject):
        """The subject planted slow, or None when nothing is (``--slow-share 1``)."""
        return subject if self.slow_share < 1.0 else None

    def lun_rates(self):
        return [LUN_MIB_S * (self.slow_share if index == SLOW_INDEX else 1.0) for index in range(LUNS)]

    def survey_vars(self, survey):
        """The variables both profiles run with: the profile is the only difference (and ``point_s`` when scaled)."""
        common = {'iokit_timeout_s': 6 * 3600, '%s_async_margin_s' % survey: 120,
                  '%s_poll_interval_s' % survey: conftest.WAIT_POLL_S}
        if survey == 'obdfilter':
            common.update(obdfilter_size_mib=self.obdfilter_size_mib, obdfilter_rszlo=1024, obdfilter_rszhi=1024,
                          obdfilter_tests=list(TESTS['obdfilter']), obdfilter_point_min_mib=self.obdfilter_floor_mib)
        else:
            common.update(sgpdd_size_mib=self.sgpdd_size_mib, sgpdd_rszlo=1024, sgpdd_rszhi=1024,
                          sgpdd_actions=list(TESTS['sgpdd']), sgpdd_destroy_data=True,
                          sgpdd_point_min_mib=self.sgpdd_floor_mib)
        common.update(self.grid[survey])
        return common

    def profile_vars(self, survey, profile):
        values = {'iokit_sweep_profile': profile}
        if profile == 'fast' and self.set_point_s:
            values['%s_point_s' % survey] = self.point_s
        if profile == 'fast' and self.min_gain_pct is not None:
            values['%s_sweep_min_gain_pct' % survey] = self.min_gain_pct
        return values

    def describe(self):
        grid = ', '.join('%s %s' % (survey, ' '.join('%s=%s' % (key.split('_', 1)[1], value)
                                                     for key, value in self.grid[survey].items()))
                         for survey in SURVEYS)
        return ('point_s %g s (%s); %s; obdfilter %d MiB per OST, floor %d MiB, read cache %d MiB, OSTs %g MiB/s '
                'at %d threads and more (OST%04d at %d %%); sgpdd %d MiB per LUN, floor %d MiB, LUNs %g MiB/s flat '
                '(LUN %d at %d %%)' % (
                    self.point_s, 'passed as <survey>_point_s' if self.set_point_s else "the fast profile's own",
                    grid, self.obdfilter_size_mib, self.obdfilter_floor_mib, self.read_cache_mib, OST_PEAK_MIB_S,
                    KNEE_THREADS, SLOW_INDEX, self.slow_share * 100, self.sgpdd_size_mib, self.sgpdd_floor_mib,
                    LUN_MIB_S, SLOW_INDEX, self.slow_share * 100)
                + ('; fast sweep_min_gain_pct %g' % self.min_gain_pct if self.min_gain_pct is not None else ''))


def load1():
    return os.getloadavg()[0]


def run_playbook(node, playbook, run_id, extra, log_path):
    """``playbook`` against ``node`` as ``run_id``: its wall seconds.  Cut short (Ctrl-C, SIGTERM, an exception), the
    playbook's process group is ended and playbooks/cleanup.yml stops what its survey left running on the node."""
    argv = node.argv(playbook, extra=dict(extra, iokit_run_id=run_id))
    started = time.monotonic()
    with open(log_path, 'w', encoding='utf-8') as log:
        # its own session: a Ctrl-C reaches the bench, which ends the playbook and cleans up after it
        controller = subprocess.Popen(argv, cwd=ROOT, env=node.env(), stdout=log, stderr=subprocess.STDOUT,
                                      start_new_session=True)
    try:
        returncode = controller.wait()
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(controller.pid, signal.SIGTERM)
        try:
            controller.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(controller.pid, signal.SIGKILL)
            controller.wait()
        print('.. %s cut short: playbooks/cleanup.yml for it' % run_id, file=sys.stderr, flush=True)
        node.playbook('cleanup.yml', '--limit', 'localhost', extra={'cleanup_run_id': run_id})
        raise
    wall = time.monotonic() - started
    if returncode != 0:
        raise RuntimeError('%s: ansible-playbook %s exited %d; see %s' % (run_id, playbook, returncode, log_path))
    return wall


def test_of(survey, metric):
    """``write`` of ``obdfilter_write_mib_s``: the samples' metric names are ``<survey>_<test>_mib_s``."""
    return metric[len(survey) + 1:-len('_mib_s')]


def measure(node, survey, profile, plan, work, planted, keep):
    """One survey run: its row of the table.  ``planted``: the subject planted slow (``host/target``)."""
    run_id = 'fast-bench-%s-%s' % (survey, profile)
    load_before = load1()
    wall = run_playbook(node, 'survey-%s.yml' % survey, run_id, plan.profile_vars(survey, profile),
                        os.path.join(work, run_id + '.log'))
    if keep:
        shutil.copytree(os.path.join(node.results, run_id), os.path.join(work, run_id))
    run = load_run(node.results, run_id)
    (envelope,) = [item for item in run.envelopes if item['survey'] == survey]
    if envelope['status'] != 'ok':
        raise RuntimeError('%s: the survey is %s: %s' % (run_id, envelope['status'], '; '.join(envelope['errors'])))
    sweep = envelope['sweep'] or {}
    # the host's aggregate: the figure obdfilter-survey and sgpdd-survey print per point
    peaks = dict((test_of(survey, row['metric']), row['value']) for row in analysis.peaks(run.samples)
                 if row['target'] is None)
    findings = sorted((row['subject'], test_of(survey, row['metric']))
                      for row in analysis.weak_components(run.samples) if row['kind'] != 'host')
    cached = Node(node.root).read_cache.read_hit_bytes() / 1048576.0 if survey == 'obdfilter' else None
    return {'survey': survey, 'profile': profile, 'points_run': sweep.get('points_run', envelope['records']),
            'points_full': sweep.get('points_full'), 'survey_s': envelope['duration_s'], 'wall_s': wall,
            'peaks': peaks, 'findings': findings, 'planted': planted, 'cache_mib': cached,
            'load': (load_before, load1())}


def obdfilter_runs(plan, base, work, keep):
    """Each profile on an OSS of its own, made fresh (empty read cache, new OST time lines)."""
    os.makedirs(base)
    config = os.path.join(base, 'oss.yml')
    with open(config, 'w', encoding='utf-8') as handle:
        yaml.safe_dump(plan.simulator_config(), handle)
    for profile in plan.profiles:
        with conftest.oss_node(os.path.join(base, profile), plan.survey_vars('obdfilter'), '--config', config) as node:
            yield measure(node, 'obdfilter', profile, plan, work, plan.planted('localhost/testfs-OST%04d' % SLOW_INDEX),
                          keep)


def sgpdd_runs(plan, base, work, keep):
    """Both profiles on the same throttled loop devices (the full run first: it allocates the files' pages)."""
    os.makedirs(base)
    with conftest.throttled_loop_devices(base, plan.lun_rates(), plan.lun_size_mib) as loops:
        print('.. LUNs %s, planted slow: %s' % (', '.join(loops), loops[SLOW_INDEX]), file=sys.stderr, flush=True)
        # Not a simulated node: SimulatedNode only runs the playbooks from here, on localhost in the oss group.
        node = conftest.SimulatedNode(base)
        with open(node.inventory, 'w', encoding='utf-8') as handle:
            handle.write(conftest.localhost_inventory(os.path.join(base, 'slow-python'), ('oss',)))
        with open(node.extra_vars, 'w', encoding='utf-8') as handle:
            json.dump(dict(plan.survey_vars('sgpdd'), sgpdd_devices=loops, iokit_results_dir=node.results,
                           iokit_workdir=node.workdir), handle)
        for profile in plan.profiles:
            # a LUN's samples are named by the device's name, as the report names it
            yield measure(node, 'sgpdd', profile, plan, work,
                          plan.planted('localhost/' + os.path.basename(loops[SLOW_INDEX])), keep)


def findings_text(findings):
    by_subject = {}
    for subject, test in findings:
        by_subject.setdefault(subject, []).append(test)
    return '; '.join('%s (%s)' % (subject, ', '.join(tests)) for subject, tests in sorted(by_subject.items())) or 'none'


def print_table(rows):
    print('%-9s %-7s %9s %9s %10s %9s %9s %9s %9s %9s  %s' % (
        'survey', 'profile', 'points', 'survey s', 'playbook s', 'write', 'rewrite', 'read', 'cache MiB', 'load',
        'findings'))
    for row in rows:
        points = '%s/%s' % (row['points_run'], row['points_full']) if row['points_full'] else str(row['points_run'])
        peaks = ['%9.2f' % row['peaks'][test] if test in row['peaks'] else '%9s' % '-'
                 for test in ('write', 'rewrite', 'read')]
        cache = '-' if row['cache_mib'] is None else '%.0f' % row['cache_mib']
        print('%-9s %-7s %9s %9.1f %10.1f %s %9s %9s  %s' % (
            row['survey'], row['profile'], points, row['survey_s'], row['wall_s'], ' '.join(peaks), cache,
            '%.1f-%.1f' % row['load'], findings_text(row['findings'])))
    sys.stdout.flush()


def planted_only(row):
    """``yes`` when the findings name the planted component and nothing else (nothing when none is); else what
    they name."""
    subjects = sorted(set(subject for subject, unused_test in row['findings']))
    if subjects == ([row['planted']] if row['planted'] else []):
        return 'yes'
    return 'no (%s)' % (', '.join(subjects) or 'nothing')


def compare(rows):
    """Per survey with both profiles: ``{survey, saved_pct, wall_saved_pct, peak_pct, peaks_ok, findings_equal}``."""
    by_survey = {}
    for row in rows:
        by_survey.setdefault(row['survey'], {})[row['profile']] = row
    result = []
    for survey, runs in by_survey.items():
        if set(runs) != set(PROFILES):
            continue
        full, fast = runs['full'], runs['fast']
        peak_pct = {test: 100.0 * fast['peaks'][test] / full['peaks'][test] for test in full['peaks']
                    if test in fast['peaks']}
        result.append({'survey': survey, 'saved_pct': 100.0 * (1 - fast['survey_s'] / full['survey_s']),
                       'wall_saved_pct': 100.0 * (1 - fast['wall_s'] / full['wall_s']), 'peak_pct': peak_pct,
                       'peaks_ok': bool(peak_pct) and all(abs(value - 100.0) <= PEAK_TOLERANCE_PCT
                                                          for value in peak_pct.values()),
                       'findings_equal': set(full['findings']) == set(fast['findings']),
                       'planted': full['planted'],
                       'named': dict((profile, planted_only(runs[profile])) for profile in PROFILES)})
    return result


def print_comparison(compared):
    if not compared:
        return
    print()
    for item in compared:
        print('%-9s fast vs full: survey time saved %.1f %% (playbook %.1f %%); fast peak %s of full; findings %s; '
              'only the planted %s named: full %s, fast %s' % (
                  item['survey'], item['saved_pct'], item['wall_saved_pct'],
                  ', '.join('%s %.1f %%' % (test, item['peak_pct'][test]) for test in TESTS[item['survey']]
                            if test in item['peak_pct']),
                  'equal' if item['findings_equal'] else 'DIFFER', item['planted'], item['named']['full'],
                  item['named']['fast']))
    count = len(compared)
    print('fast: %d surveys, time saved %.1f %%, peak within 2 %% in %.0f %%, findings equal in %d of %d' % (
        count, sum(item['saved_pct'] for item in compared) / count,
        100.0 * sum(1 for item in compared if item['peaks_ok']) / count,
        sum(1 for item in compared if item['findings_equal']), count))
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    parser.add_argument('--quick', action='store_true',
                        help='the smaller grids at a 4 s time scale (10-11 minutes on two cores)')
    parser.add_argument('--point-s', type=float,
                        help="the time scale: seconds per bounded point, which sizes everything (default: the fast "
                             "profile's %g s, or %g s with --quick)" % (point_budget.FAST_POINT_S, QUICK_POINT_S))
    parser.add_argument('--slow-share', type=float, default=SLOW_SHARE,
                        help="the planted OST's and LUN's rate, a share of their peers' (default %(default)s; 1: "
                             "none planted)")
    parser.add_argument('--min-gain-pct', type=float,
                        help="the fast profile's <survey>_sweep_min_gain_pct (default: the rule's own)")
    parser.add_argument('--surveys', default=','.join(SURVEYS), help='comma-separated (default %(default)s)')
    parser.add_argument('--profiles', default=','.join(PROFILES),
                        help='comma-separated (default %(default)s); with one, no comparison is printed')
    parser.add_argument('--keep', help='keep the logs and results in this directory')
    args = parser.parse_args()
    surveys = args.surveys.split(',')
    if set(surveys) - set(SURVEYS):
        parser.error('--surveys: choose from %s' % ', '.join(SURVEYS))
    profiles = tuple(profile for profile in PROFILES if profile in args.profiles.split(','))
    if not profiles or set(args.profiles.split(',')) - set(PROFILES):
        parser.error('--profiles: choose from %s' % ', '.join(PROFILES))
    if os.geteuid() != 0:
        sys.exit('needs root (loop devices, block-I/O cgroups)')
    point_s = args.point_s or (QUICK_POINT_S if args.quick else point_budget.FAST_POINT_S)
    plan = Plan(point_s, args.quick, set_point_s=point_s != point_budget.FAST_POINT_S, slow_share=args.slow_share,
                min_gain_pct=args.min_gain_pct)
    plan.profiles = profiles
    # A SIGTERM unwinds like Ctrl-C: every finally below runs.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit('stopped by signal %d' % signum))
    rows = []
    started = time.monotonic()
    print('%s; %d CPUs, load %.1f' % (plan.describe(), os.cpu_count(), load1()), flush=True)
    with contextlib.ExitStack() as stack:
        work = args.keep or stack.enter_context(tempfile.TemporaryDirectory(prefix='fast-bench-'))
        os.makedirs(work, exist_ok=True)
        # the simulated OSTs and the loop devices' files live in memory, so that no disk's variance enters
        base = stack.enter_context(tempfile.TemporaryDirectory(prefix='fast-bench-', dir='/dev/shm'))
        runners = {'obdfilter': obdfilter_runs, 'sgpdd': sgpdd_runs}
        try:
            for survey in surveys:
                # closed at once however the loop ends: the node, cgroup and devices go before the directory
                with contextlib.closing(runners[survey](plan, os.path.join(base, survey), work, bool(args.keep))) as runs:
                    for row in runs:
                        rows.append(row)
                        print('.. %s %s: %.1f s (playbook %.1f s), %s points' % (
                            survey, row['profile'], row['survey_s'], row['wall_s'], row['points_run']),
                            file=sys.stderr, flush=True)
        except KeyboardInterrupt:
            print('interrupted; cleaned up', file=sys.stderr)
            print_table(rows)
            return 130
    print_table(rows)
    print_comparison(compare(rows))
    print('whole bench: %.1f min' % ((time.monotonic() - started) / 60.0))
    return 0


if __name__ == '__main__':
    sys.exit(main())
