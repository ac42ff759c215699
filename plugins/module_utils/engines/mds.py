# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The mds survey engine: metadata rates through an echo_client on each MDT's MDD layer.

Planned and measured as lustre-iokit's ``mds-survey`` does (docs/iokit-notes.md, 5):

* one echo client ``<mdt>_ecc`` per MDT, set up on the ``mdd`` layer;
* per MDT, the ``dir_count`` test directories ``/MDTxxxx-tests``,
  ``/MDTxxxx-tests1`` ... are first removed (leftovers of an aborted run),
  then created with ``test_mkdir <dir> -c <number of MDTs> --stripe_index <idx>``;
* ``thr`` doubles from ``thrlo`` to ``thrhi``, a thread count below
  ``dir_count`` is skipped, each thread handles ``file_count // thr`` files;
* for every thread count the tests run in order (``create`` first,
  ``destroy`` last), each one on all MDTs at once::

      lctl --threads <thr> -1 <devno> test_<test> [-c <stripe_count>] -d /MDTxxxx-tests
           -D <dir_count> -b <start_number> -n <file_count // thr>

* per MDT the average is the rate of lctl's ``Total: total ...`` line and
  min/max come from the per-second samples (only the Total line: min = max
  = average); any ``error`` line or unexpected line after the data makes
  that MDT's test ``ERROR``;
* the reported rate is the arithmetic mean of the per-MDT averages (not
  their sum), min/max over every MDT's samples, as the script prints them.

Differences from the script, on purpose, each stricter: a worker that exits
non-zero (``--threads: PID <n> had rc=<m>``, m > 0) or a missing ``Total:``
line is an error (the script would print an average of 0); a run stopped by
the deadline gives ``incomplete`` instead of a number.

With ``point_s`` set (time-bounded points, point_budget.py) a point creates, per MDT,
``max(floor, min(file_count, point_s x rate))`` items instead of ``file_count``,
the rate being the slowest MDT's slowest test of the point it is sized from;
every test of the point (lookup, md_getattr, setxattr, destroy) acts on the
files its create made, so they all use the count the point was sized to.

Everything the survey creates is written to the node state before it is
created (the echo clients, with the test directories and the file range of
a ``create`` not yet destroyed) and crossed off once undone, so that a
cleanup after a kill can remove it.

``engine: iokit`` runs the installed ``mds-survey`` with the same
parameters and parses its summary with ``parse_mds_survey``.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import time

from ansible_collections.lustre.iokit.plugins.module_utils import adaptive
from ansible_collections.lustre.iokit.plugins.module_utils import point_budget
from ansible_collections.lustre.iokit.plugins.module_utils import sample_extraction as extraction
from ansible_collections.lustre.iokit.plugins.module_utils.engines.contract import NativeSurvey
from ansible_collections.lustre.iokit.plugins.module_utils.engines.errors import EngineError
from ansible_collections.lustre.iokit.plugins.module_utils.engines.iokit_script import run_script
from ansible_collections.lustre.iokit.plugins.module_utils.lctl import Lctl, LctlError, echo_client_name
from ansible_collections.lustre.iokit.plugins.module_utils.engines.mds_tree_removal import (
    TargetFailure, destroy_files, remaining_ranges, remove_directories, thread_ranges)
from ansible_collections.lustre.iokit.plugins.module_utils.option_problem import OptionProblem
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.mds_survey import parse_mds_survey

TESTS = ('create', 'lookup', 'md_getattr', 'setxattr', 'destroy')
# The kernel's echo_client setup accepts only "mdd" as the third word for an MDT.
LAYERS = ('mdd',)
DEFAULT_START_NUMBER = 2
# lctl --threads refuses more (MAX_THREADS in lustre/utils/obd.c).
MAX_THREADS = 4096
STATUS_OK = 'ok'
STATUS_ERROR = 'error'
STATUS_INCOMPLETE = 'incomplete'

_MDT_INDEX_RE = re.compile(r'MDT([0-9a-fA-F]{4})')
_TOTAL_RE = re.compile(r'^Total: total [0-9]+ threads [0-9]+ sec [0-9.]+ (?P<rate>[0-9]+\.[0-9]+)/second$')
_SAMPLE_RE = re.compile(r'^[0-9]+/[0-9]+ Total: (?P<rate>[0-9]+\.[0-9]+)/second$')
_WORKER_RC_RE = re.compile(r'PID [0-9]+ had rc=(?P<rc>-?[0-9]+)')


# --------------------------------------------------------------------------
# Targets and plan


class MdtTarget:
    """One MDT of the survey: its name, its index (from the name) and its echo client."""

    def __init__(self, name, index, tag=None):
        self.name = name
        self.index = index
        # With the run's tag, the echo client and the test directories are this run's alone (the I/O kit's
        # names without it, for engine: iokit and its leftovers).
        self.tag = tag
        self.echo_client = echo_client_name(name, tag)

    @property
    def basedir(self):
        if self.tag:
            return '/MDT%04x-%s-tests' % (self.index, self.tag)
        return '/MDT%04x-tests' % self.index

    def directories(self, dir_count):
        """The test directories as mds-survey names them: ``/MDT0000-tests``, ``/MDT0000-tests1``, ..."""
        return [self.basedir + (str(number) if number else '') for number in range(dir_count)]

    def as_dict(self):
        return {'target': self.name, 'index': self.index, 'echo_client': self.echo_client}


def mdt_index(name):
    """The MDT index in a target name (``testfs-MDT001a`` -> 26), or None."""
    match = _MDT_INDEX_RE.search(name or '')
    return int(match.group(1), 16) if match else None


def resolve_targets(devices, names=None, tag=None):
    """MdtTargets for ``names`` (default: every UP mdt in ``devices``, the parsed ``lctl dl``), named with ``tag``.

    Raises EngineError naming ``targets`` for an unknown name, a device that
    is not an MDT or not UP, or a name without an MDT index.
    """
    by_name = dict((device['name'], device) for device in devices)
    if not names:
        names = [device['name'] for device in devices if device['status'] == 'UP' and device['type'] == 'mdt']
        if not names:
            raise EngineError("targets: this node has no UP mdt device (lctl dl); give targets or run on an MDS")
    problems = []
    targets = []
    for name in names:
        device = by_name.get(name)
        if device is None:
            problems.append('targets: %s is not a device on this node (lctl dl)' % name)
        elif device['type'] != 'mdt':
            problems.append('targets: %s is a %s device, not an mdt' % (name, device['type']))
        elif device['status'] != 'UP':
            problems.append('targets: %s is %s, not UP' % (name, device['status']))
        elif mdt_index(name) is None:
            problems.append('targets: %s has no MDTxxxx index in its name' % name)
        else:
            targets.append(MdtTarget(name, mdt_index(name), tag))
    if len(set(names)) != len(names):
        problems.append('targets: each MDT may appear once, got %s' % ', '.join(names))
    if problems:
        raise EngineError('; '.join(problems))
    return targets


def has_osc_or_osp(devices):
    """True when an UP osc or osp device exists: what ``stripe_count > 0`` needs."""
    return any(device['status'] == 'UP' and device['type'] in ('osc', 'osp') for device in devices)


def thread_counts(thrlo, thrhi):
    counts = []
    thr = thrlo
    while thr <= thrhi:
        counts.append(thr)
        thr *= 2
    return counts


def sweep(thrlo, thrhi, dir_count, file_count):
    """Every thread count in order: ``{'thr', 'files_per_thread', 'skip'}`` (skip: reason or None)."""
    points = []
    for thr in thread_counts(thrlo, thrhi):
        skip = None
        if thr < dir_count:
            skip = 'thr < dir_count: fewer threads than directories'
        points.append({'thr': thr, 'files_per_thread': file_count // thr, 'skip': skip})
    return points


def option_problems(thrlo, thrhi, file_count, dir_count, stripe_count, tests, start_number, layer):
    """Every invalid combination of options, each an OptionProblem (checked before anything runs)."""
    problems = []
    for name, value in (('thrlo', thrlo), ('thrhi', thrhi), ('file_count', file_count), ('dir_count', dir_count)):
        if value < 1:
            problems.append(OptionProblem(name, 'must be at least 1', got='%d' % value))
    if stripe_count < 0:
        problems.append(OptionProblem('stripe_count', 'must not be negative', got='%d' % stripe_count))
    if start_number < 0:
        problems.append(OptionProblem('start_number', 'must not be negative', got='%d' % start_number))
    if thrhi > MAX_THREADS:
        problems.append(OptionProblem('thrhi', 'lctl --threads allows at most %d threads' % MAX_THREADS,
                                      got='%d' % thrhi))
    if layer not in LAYERS:
        problems.append(OptionProblem('layer', 'only mdd is accepted by the echo_client setup on an MDT',
                                      got='%r' % (layer,)))
    problems.extend(_tests_problems(tests))
    if problems or thrlo > thrhi:
        if thrlo > thrhi:
            problems.append(OptionProblem('thrlo', '%d is greater than {thrhi} (%d)' % (thrlo, thrhi), mentions='thrhi'))
        return problems
    return _sweep_problems(thrlo, thrhi, file_count, dir_count)


def bounded_problems(point_s, point_min_items):
    """The time-bounded point's settings: a positive time and a floor of at least one item."""
    problems = []
    if point_s is not None and point_s <= 0:
        problems.append(OptionProblem('point_s', 'must be more than 0 seconds', got='%g' % point_s))
    if point_min_items is not None and point_min_items < 1:
        problems.append(OptionProblem('point_min_items', 'must be at least 1', got='%d' % point_min_items))
    return problems


def _tests_problems(tests):
    """``tests``: known names, each once, from create to destroy."""
    problems = []
    if not tests or tests[0] != 'create' or tests[-1] != 'destroy':
        problems.append(OptionProblem('tests', "the first test must be 'create' and the last 'destroy'",
                                      got=', '.join(tests) if tests else 'none'))
    unknown = [test for test in tests or [] if test not in TESTS]
    if unknown:
        problems.append(OptionProblem('tests', 'unknown test %s (known: %s)' % (', '.join(unknown), ', '.join(TESTS))))
    if tests and len(set(tests)) != len(tests):
        problems.append(OptionProblem('tests', 'each test may appear once', got=', '.join(tests)))
    return problems


def _sweep_problems(thrlo, thrhi, file_count, dir_count):
    """Whether the thread counts from ``thrlo`` to ``thrhi`` leave a point to run, each with a file."""
    runnable = [point for point in sweep(thrlo, thrhi, dir_count, file_count) if point['skip'] is None]
    if not runnable:
        return [OptionProblem('dir_count', '%d is greater than every thread count from {thrlo} %d to {thrhi} %d, so '
                              'every thread count would be skipped' % (dir_count, thrlo, thrhi),
                              mentions=('thrlo', 'thrhi'))]
    if file_count < runnable[-1]['thr']:
        return [OptionProblem('file_count', '%d is less than %d threads, so a thread would get no file (lctl rejects '
                              '-n 0); raise {file_count} or lower {thrhi}' % (file_count, runnable[-1]['thr']),
                              mentions=('file_count', 'thrhi'))]
    return []


# --------------------------------------------------------------------------
# lctl --threads output


def threads_stats(stdout, stderr='', rc=0):
    """One MDT's ``lctl --threads`` output as the I/O kit reads it.

    Returns ``{'samples', 'ops_s', 'min_ops_s', 'max_ops_s', 'status', 'message'}``;
    ``samples`` counts the per-second samples plus the Total line, -1 on error.
    """
    samples = 0
    average = None
    minimum = maximum = None
    message = None
    for line in stdout.splitlines():
        line = line.strip()
        if 'starting' in line:
            samples = 0
            continue
        if 'error' in line:
            message = line
            break
        match = _WORKER_RC_RE.search(line)
        if match and match.group('rc') == '0':
            continue
        match = _TOTAL_RE.match(line)
        if match:
            average = float(match.group('rate'))
            samples += 1
            continue
        match = _SAMPLE_RE.match(line)
        if match:
            rate = float(match.group('rate'))
            samples += 1
            minimum = rate if minimum is None else min(minimum, rate)
            maximum = rate if maximum is None else max(maximum, rate)
            continue
        if samples != 0 and line:
            message = 'unexpected line: %s' % line
            break
    if message is None:
        for line in stderr.splitlines():
            line = line.strip()
            match = _WORKER_RC_RE.search(line)
            if 'error' in line or (match and match.group('rc') != '0'):
                message = line
                break
    if message is None and average is None:
        message = 'no "Total:" line (rc %s)' % rc
    if message is not None:
        return {'samples': -1, 'ops_s': None, 'min_ops_s': None, 'max_ops_s': None, 'status': STATUS_ERROR,
                'message': message}
    if minimum is None:
        minimum = maximum = average
    return {'samples': samples, 'ops_s': average, 'min_ops_s': minimum, 'max_ops_s': maximum,
            'status': STATUS_OK, 'message': None}


def global_stats(per_mdt):
    """The figures mds-survey prints for one test from the per-MDT stats: mean of averages, min, max."""
    if any(stats['status'] != STATUS_OK for stats in per_mdt):
        return {'ops_s': None, 'min_ops_s': None, 'max_ops_s': None, 'status': STATUS_ERROR}
    return {'ops_s': sum(stats['ops_s'] for stats in per_mdt) / len(per_mdt),
            'min_ops_s': min(stats['min_ops_s'] for stats in per_mdt),
            'max_ops_s': max(stats['max_ops_s'] for stats in per_mdt),
            'status': STATUS_OK}


def slowest_rate(record):
    """The slowest MDT's slowest test of a measured point, items per second: what sizes the next bounded point."""
    rates = [figures.get('ops_s') for entry in record.get('per_mdt') or [] if isinstance(entry, dict)
             for figures in (entry.get('tests') or {}).values()]
    rates = [rate for rate in rates if rate]
    return min(rates) if rates else None


def _sweep_figures(record, ndevs):
    """The stop rule's figures of a measured point: each MDT's own curve, judged on its own per-second samples, so
    that an MDT slower than its peers does not read as noise (min/max of the whole host would span both)."""
    per_mdt = record.get('per_mdt') if isinstance(record.get('per_mdt'), list) else []
    components = dict((entry.get('target'), entry.get('tests') or {}) for entry in per_mdt if isinstance(entry, dict))
    return adaptive.figures(record['tests'], ndevs, 'ops_s', components=components)


def prefix_line(ndevs, file_count, dir_count, thr):
    return 'mdt %1d file %7d dir %4d thr %4d ' % (ndevs, file_count, dir_count, thr)


def test_summary(test, stats):
    if stats['status'] == STATUS_OK:
        return '%s %7.2f [ %7.2f, %7.2f] ' % (test, stats['ops_s'], stats['min_ops_s'], stats['max_ops_s'])
    if stats['status'] == STATUS_ERROR:
        return '%s %17s ' % (test, 'ERROR')
    return '%s ' % test


# --------------------------------------------------------------------------
# The survey


class MdsSurvey(NativeSurvey):
    """Plans, runs and cleans up one mds survey on this node.

    From ``context`` (an EngineContext, contract.py): the runner measures,
    the echo clients are made through an ``lctl.Lctl`` on the control runner
    (``self.lctl``), ``node_state`` is where everything created is written
    down first, and the wall clock stamps each test's
    ``start_time``/``end_time`` so that statistics sampled on the node can be
    cut per test.  ``raw``: an object with ``summary(text)`` and
    ``detail(text)`` (or None).  ``point_s``, ``point_min_items`` and
    ``floor_reason``: time-bounded points (see the module docstring), None
    for the I/O kit's fixed ``file_count``.
    """

    def __init__(self, context, targets, thrlo=4, thrhi=32, file_count=100000, dir_count=None, stripe_count=0,
                 tests=TESTS, start_number=DEFAULT_START_NUMBER, layer='mdd', raw=None, point_s=None,
                 point_min_items=None, floor_reason=None):
        self.context = context
        self.runner = context.runner
        # The echo clients are attached and detached with no deadline, as the module's own lctl commands are.
        self.lctl = Lctl(context.control_runner)
        self.node_state = context.node_state
        self.run_id = context.run_id
        self.targets = list(targets)
        self.total_inodes = {}
        self.thrlo, self.thrhi = thrlo, thrhi
        self.file_count = file_count
        # mds-survey's default: as many directories as the lowest thread count
        self.dir_count = thrlo if dir_count is None else dir_count
        self.stripe_count = stripe_count
        self.tests = list(tests)
        self.start_number = start_number
        self.layer = layer
        self.raw = raw
        self.host = context.host
        self.wall_clock = context.wall_clock
        self.clock = context.clock
        # Time-bounded points: seconds per test of a point, None for the I/O kit's fixed file_count; the floor in
        # items per MDT and where it came from (the module says).
        self.point_s = point_s
        self.point_min_items = point_min_items
        self.floor_reason = floor_reason
        self.sizing_rates = point_budget.SizingRates()
        # Full unless the caller sets an adaptive one: the thread sweep may then stop once the MDTs saturate.
        self.inner_sweeps = adaptive.InnerSweeps()
        # Thread counts an earlier attempt of the run measured, to their records: not measured again.
        self.done_points = {}
        self.errors = []
        self.aborted = None
        self.devnos = {}
        self._echo_entries = {}

    # -- planning ------------------------------------------------------------------

    def envelope_fields(self):
        return adaptive.envelope_fields(self.inner_sweeps, self.plan()['points'])

    def problems(self):
        return option_problems(self.thrlo, self.thrhi, self.file_count, self.dir_count, self.stripe_count,
                               self.tests, self.start_number, self.layer) + bounded_problems(self.point_s,
                                                                                             self.point_min_items)

    def free_inode_problems(self):
        """Each MDT with fewer free inodes than the survey holds at once (the files of a thread count and the
        test directories), naming ``file_count``, or ``point_min_items`` when a bounded point's floor is what holds
        the most; the count is the MDT's ``osd-*.<mdt>.filesfree`` (one that cannot be read is not checked: None in
        ``free_inodes``).  Returns ``(problems, free_inodes)``; the same read keeps each MDT's ``filestotal`` in
        ``self.total_inodes`` (None where not read), so that the envelope says how full each MDT was when it was
        measured.
        """
        most = [self._most_items(point)
                for point in sweep(self.thrlo, self.thrhi, self.dir_count, self.file_count) if point['skip'] is None]
        option, files = max(most or [('file_count', 0)], key=lambda item: item[1])
        needed = files + self.dir_count
        problems = []
        free = {}
        for target in self.targets:
            param = 'osd-*.%s.filesfree' % target.name
            # lctl prints the values of the parameters asked one per line, in the order asked.
            result = self.lctl.run(['get_param', '-n', param, 'osd-*.%s.filestotal' % target.name], check=False)
            words = result.stdout.split() if result.rc == 0 else []
            free[target.name] = int(words[0]) if words and words[0].isdigit() else None
            self.total_inodes[target.name] = int(words[1]) if len(words) > 1 and words[1].isdigit() else None
            if free[target.name] is not None and free[target.name] < needed:
                rule = ('%d files and %d directories do not fit %s, which has %d free inodes (lctl get_param %s); '
                        'lower {%s} (mds_%s)'
                        % (files, self.dir_count, target.name, free[target.name], param, option, option))
                problems.append(OptionProblem(option, rule, mentions=option))
        return problems, free

    def _most_items(self, point):
        """``(option, files)``: the most files ``point`` may hold on one MDT and the option that sets it - its full
        count (``file_count``), or a bounded point's floor when that is larger (the floor wins over the full
        count)."""
        full = point['files_per_thread'] * point['thr']
        if self.point_s is None:
            return 'file_count', full
        # with no rate the rule gives the floor, rounded up to whole files for every thread
        floor = int(point_budget.size_point('mds', self.file_count, self.point_min_items, self.point_s,
                                            granule=point['thr']).amount)
        return ('point_min_items', floor) if floor > full else ('file_count', full)

    def plan(self):
        """The sweep, what would be created, and the adaptive sweep's settings and bounds, for check mode."""
        points = sweep(self.thrlo, self.thrhi, self.dir_count, self.file_count)
        runnable = [point for point in points if point['skip'] is None]
        plan = {
            'points': points,
            'targets': [target.as_dict() for target in self.targets],
            'echo_clients': [target.echo_client for target in self.targets],
            'directories': dict((target.name, target.directories(self.dir_count)) for target in self.targets),
            'files_per_mdt_per_point': dict((point['thr'], point['files_per_thread'] * point['thr'])
                                            for point in runnable),
            'tests': list(self.tests),
            'estimated_duration_s': None,
            'sweep': adaptive.plan_fields(self.inner_sweeps.mode, self.inner_sweeps.min_gain_pct,
                                          self.inner_sweeps.patience, adaptive.inner_sweep_sizes(points, 'thr', ())),
        }
        if self.point_s is not None:
            plan['bounded'] = self.bounded_plan(runnable)
        if self.point_min_items is not None:
            plan['point_sizing'] = point_budget.point_sizing(self.file_count, self.point_min_items, self.floor_reason,
                                                             self.point_s)
        return plan

    def bounded_plan(self, runnable):
        """What time-bounded points change in the plan: the time and floor, and the worst case.

        A point creates ``max(floor, min(file_count, point_s x rate))`` files per MDT (point_budget.py), so at worst
        every point creates the larger of its full count and the floor; every test touches each file once, so the
        operations are the files times the tests, the unit of the plan's estimate.
        """
        tests = len(self.tests)
        return {'point_s': self.point_s, 'point_min_items': self.point_min_items, 'floor_reason': self.floor_reason,
                'target_duration_s': self.point_s * tests * len(runnable),
                'worst_case_operations_per_mdt': sum(self._most_items(point)[1] for point in runnable) * tests,
                'full_operations_per_mdt': sum(point['files_per_thread'] * point['thr'] for point in runnable) * tests}

    def thread_argv(self, target, test, point):
        """The ``lctl --threads`` argument list of ``test`` on ``target`` at ``point``."""
        argv = [self.lctl.lctl, '--threads', str(point['thr']), '-1', str(self.devnos[target.name]),
                'test_' + test]
        if test == 'create':
            argv += ['-c', str(self.stripe_count)]
        return argv + ['-d', target.basedir, '-D', str(self.dir_count), '-b', str(self.start_number),
                       '-n', str(point['files_per_thread'])]

    # -- node state ------------------------------------------------------------------

    def _remember(self, target, **details):
        entry = self._echo_entries.setdefault(target.name, {'target': target.name, 'layer': self.layer,
                                                            'directories': [], 'files': None})
        entry.update(details)
        self.node_state.record('echo_clients', self.run_id, name=target.echo_client, **entry)

    def _raw(self, kind, text):
        if self.raw is not None:
            getattr(self.raw, kind)(text)

    # -- setup -----------------------------------------------------------------------

    def setup(self):
        """Attach the echo clients and create the test directories.

        Raises LctlError (attach/setup failed) or EngineError (a directory
        could not be created); whatever was made is in the node state and
        removed by ``teardown``.
        """
        # read before our own entries replace those of an aborted run (same echo client names)
        leftover_files = dict((entry['name'], entry['files']) for entry in self.node_state.entries('echo_clients')
                              if entry.get('files') and entry.get('run_id') != self.run_id)
        for target in self.targets:
            self._remember(target)
            self.lctl.attach_echo_client(target.echo_client, target.name, layer=self.layer)
            self.devnos[target.name] = self.lctl.devno(target.echo_client)
        for target in self.targets:
            where = '%s:%s' % (self.host or 'localhost', target.name)
            self._raw('detail', '=======> Create %d directories on %s\n' % (self.dir_count, where))
            if leftover_files.get(target.echo_client):
                self._destroy_files(target, leftover_files[target.echo_client])
            directories = target.directories(self.dir_count)
            for directory in directories:
                # leftovers of an aborted run; only empty ones go, as with the I/O kit
                result = self.runner.run([self.lctl.lctl, '--device', str(self.devnos[target.name]),
                                          'test_rmdir', directory])
                self._raw('detail', result.stdout + result.stderr)
            self._remember(target, directories=directories)
            for directory in directories:
                argv = [self.lctl.lctl, '--device', str(self.devnos[target.name]), 'test_mkdir', directory,
                        '-c', str(len(self.targets)), '--stripe_index', str(target.index)]
                result = self.runner.run(argv)
                self._raw('detail', result.stdout + result.stderr)
                if result.rc != 0 or 'error' in result.stdout + result.stderr or result.timed_out:
                    self._raw('summary', 'created directories on %s failed\n' % where)
                    raise EngineError('test_mkdir %s on %s failed (rc %s): %s' % (
                        directory, target.name, result.rc, (result.stderr or result.stdout).strip()))

    def _logged_run(self, argv):
        result = self.runner.run(argv)
        self._raw('detail', result.stdout + result.stderr)
        return result

    def _destroy_files(self, target, files):
        argv = [self.lctl.lctl, '--threads', str(files['threads']), '-1', str(self.devnos[target.name]),
                'test_destroy', '-d', files['basedir'], '-D', str(files['dir_count']), '-b',
                str(files['start_number']), '-n', str(files['files_per_thread'])]
        result = self.runner.run(argv)
        self._raw('detail', result.stdout + result.stderr)
        return result

    # -- running ---------------------------------------------------------------------

    def run(self):
        """Run the sweep (after ``setup``), yielding one record per thread count.

        Stops at the deadline or a stop request: ``aborted`` holds the reason,
        the last record (if any test finished) has the interrupted test as
        ``incomplete``.
        """
        ndevs = len(self.targets)
        self._raw('summary', '%s %s from %s\n' % (time.strftime('%a %b %d %H:%M:%S %Z %Y'), 'mds-survey',
                                                  self.host or os.uname()[1]))
        for point in sweep(self.thrlo, self.thrhi, self.dir_count, self.file_count):
            if point['skip']:
                continue
            earlier = self.done_points.get(point['thr'])
            if earlier is not None:
                # the module resumes: the point is in the envelope already, its figures still count
                if not self.inner_sweeps.stopped({}, point['thr']):
                    self.inner_sweeps.measured({}, point['thr'], _sweep_figures(earlier, ndevs))
                # and its rate sizes the next bounded point, as in the uninterrupted run
                self.sizing_rates.measured({}, point['thr'], slowest_rate(earlier))
                continue
            stopped = self.inner_sweeps.stopped({}, point['thr'])
            if stopped:
                self.inner_sweeps.skip({'thr': point['thr']}, stopped)
                continue
            if self.runner.expired():
                self._stop({'thr': point['thr']}, 'not run')
                return
            file_count, size = self.file_count, None
            if self.point_s is not None:
                point, size, sized_from = self._bounded(point)
                if size.refused is not None:
                    # never cut short into a figure below its floor: the point is not run, the sweep goes on
                    self.errors.append({'point': {'thr': point['thr']}, 'message': 'not run: %s' % size.refused})
                    continue
                file_count = int(size.amount)
            prefix = prefix_line(ndevs, file_count, self.dir_count, point['thr'])
            self._raw('summary', prefix)
            self._raw('detail', '=======> %s\n' % prefix)
            record = {'mdt': ndevs, 'file': file_count, 'dir': self.dir_count, 'thr': point['thr'],
                      'host': self.host, 'files_per_thread': point['files_per_thread'],
                      'stripe_count': self.stripe_count, 'tests': {},
                      'per_mdt': [dict(target.as_dict(), tests={}) for target in self.targets]}
            if size is not None:
                record.update(bounded=True, point_s=self.point_s,
                              moved_items_per_mdt=point['files_per_thread'] * point['thr'], point_limit=size.limit,
                              sized_from_ops_s=sized_from)
            started = self.clock()
            for test in self.tests:
                stats, interrupted = self._run_test(test, point, record)
                record['tests'][test] = stats
                self._raw('summary', test_summary(test, stats))
                if interrupted:
                    self._raw('summary', '\n')
                    self._stop({'thr': point['thr'], 'test': test}, '%s interrupted' % test)
                    if any(entry['status'] != STATUS_INCOMPLETE for entry in record['tests'].values()):
                        yield record
                    return
                if stats['status'] == STATUS_ERROR:
                    messages = ['%s: %s' % (entry['target'], entry['tests'][test]['message'])
                                for entry in record['per_mdt'] if entry['tests'][test]['message']]
                    self.errors.append({'point': {'thr': point['thr'], 'test': test},
                                        'message': '%s: ERROR: %s' % (test, '; '.join(messages))})
            self._raw('summary', '\n')
            self.inner_sweeps.measured({}, point['thr'], _sweep_figures(record, ndevs))
            if size is not None:
                record['elapsed_s'] = round(self.clock() - started, 6)
                self.sizing_rates.measured({}, point['thr'], slowest_rate(record))
            yield record

    def _bounded(self, point):
        """``(point, size, rate)``: the point with the files per thread a bounded point creates, its PointSize and
        the rate (items per second per MDT) it was sized from.

        Every MDT creates the same count (sized from the slowest MDT), whole files for every thread, rounded up so
        that rounding never takes it below the floor; each test gets the time the survey has left over its tests.
        """
        rate = self.sizing_rates.rate_for({}, point['thr'])
        remaining_s = self.runner.remaining_s()
        time_left_s = remaining_s / len(self.tests) if remaining_s is not None else None
        size = point_budget.size_point('mds', self.file_count, self.point_min_items, self.point_s, rate, time_left_s,
                                       granule=point['thr'])
        return dict(point, files_per_thread=int(size.amount) // point['thr']), size, rate

    def _before_destroy(self, record):
        """Record each MDT's ranges as being destroyed, so that a kill during the destroy test leaves them findable.

        After a create that was ok every range is whole; otherwise what it made is probed first.
        """
        for target, entry in zip(self.targets, record['per_mdt']):
            files = self._echo_entries[target.name]['files']
            if not files:
                continue
            if files.get('created'):
                ranges = thread_ranges(files)
            else:
                try:
                    ranges = remaining_ranges(self._logged_run, self.lctl.lctl, self.devnos[target.name], files)
                except TargetFailure:
                    continue  # the create's record stays: its files are probed again by the teardown or cleanup
            self._remember(target, files=dict(files, ranges=ranges, destroying=True))

    def _stop(self, point, what):
        self.aborted = self.runner.stop_reason or 'stopped'
        self.errors.append({'point': point, 'message': '%s: %s' % (what, self.aborted)})

    def _run_test(self, test, point, record):
        if test == 'create':
            files = {'threads': point['thr'], 'files_per_thread': point['files_per_thread'],
                     'start_number': self.start_number, 'dir_count': self.dir_count}
            for target in self.targets:
                self._remember(target, files=dict(files, basedir=target.basedir))
        if test == 'destroy':
            self._before_destroy(record)
        start_time = round(self.wall_clock(), 3)
        results = self.runner.run_many([self.thread_argv(target, test, point) for target in self.targets])
        times = {'start_time': start_time, 'end_time': round(self.wall_clock(), 3)}
        interrupted = any(result.timed_out for result in results)
        per_mdt = []
        for target, result, entry in zip(self.targets, results, record['per_mdt']):
            where = '%s:%s' % (self.host or 'localhost', target.name)
            self._raw('detail', '=============> %s %s\n%s%s' % (test, where, result.stdout, result.stderr))
            stats = threads_stats(result.stdout, result.stderr, result.rc)
            if result.timed_out:
                stats = {'samples': None, 'ops_s': None, 'min_ops_s': None, 'max_ops_s': None,
                         'status': STATUS_INCOMPLETE, 'message': 'stopped: %s' % (self.runner.stop_reason or 'timeout')}
            entry['tests'][test] = stats
            per_mdt.append(stats)
        if interrupted:
            return dict(times, ops_s=None, min_ops_s=None, max_ops_s=None, status=STATUS_INCOMPLETE), True
        self._raw('detail', '=============> %s global\n%s' % (test, ''.join(
            '%d %f %f %f\n' % (stats['samples'], stats['ops_s'] or 0, stats['min_ops_s'] or 0, stats['max_ops_s'] or 0)
            for stats in per_mdt)))
        if test == 'create':
            for target, stats in zip(self.targets, per_mdt):
                if stats['status'] == STATUS_OK:
                    # every thread made all its files: nothing to probe for to remove them
                    self._remember(target, files=dict(self._echo_entries[target.name]['files'], created=True))
        if test == 'destroy':
            for target, stats in zip(self.targets, per_mdt):
                if stats['status'] == STATUS_OK:
                    self._remember(target, files=None)
        return dict(global_stats(per_mdt), **times), False

    # -- teardown ---------------------------------------------------------------------

    def teardown(self, control_runner):
        """Remove files not yet destroyed, the directories and the echo clients; forget each once gone.

        Runs lctl through ``control_runner``, whose deadline has not passed (the survey's may have).
        Returns a list of problems (empty when all was undone).
        """
        lctl = Lctl(control_runner, self.lctl.lctl)
        problems = []
        runner, self.runner = self.runner, lctl.runner
        survey_lctl, self.lctl = self.lctl, lctl
        try:
            for target in self.targets:
                entry = self._echo_entries.get(target.name)
                if entry is None:
                    continue
                try:
                    problems.extend(self._teardown_target(target, entry))
                except LctlError as exc:
                    problems.append('%s: %s' % (target.echo_client, exc))
        finally:
            self.runner, self.lctl = runner, survey_lctl
        return problems

    def _teardown_target(self, target, entry):
        problems = []
        devno = self.lctl.devno(target.echo_client)
        if devno is not None:
            self.devnos[target.name] = devno
            if entry.get('files'):
                problems.extend(destroy_files(self._logged_run, self.lctl.lctl, devno, entry['files'],
                                              lambda files: self._remember(target, files=files)))
            where = '%s:%s' % (self.host or 'localhost', target.name)
            self._raw('detail', '====> Destroy %d directories on %s\n' % (len(entry['directories']), where))
            if not problems:
                problems.extend('%s: %s' % (target.name, problem) for problem in remove_directories(
                    self._logged_run, self.lctl.lctl, devno, entry['directories']))
        elif entry.get('files') or entry.get('directories'):
            # its device is gone: the cleanup attaches one again to remove the tree
            problems.append('%s is gone; its test tree is left for the cleanup' % target.echo_client)
        self.lctl.teardown(target.echo_client)
        if not problems:
            self.node_state.forget('echo_clients', target.echo_client)
        self._echo_entries.pop(target.name, None)
        return problems


# --------------------------------------------------------------------------
# engine: iokit


def iokit_environment(targets, thrlo, thrhi, file_count, dir_count, stripe_count, tests, start_number, layer, rslt):
    """The environment that makes the installed mds-survey run the same sweep."""
    return {'targets': ' '.join(targets), 'thrlo': str(thrlo), 'thrhi': str(thrhi), 'file_count': str(file_count),
            'dir_count': str(dir_count), 'stripe_count': str(stripe_count), 'tests_str': ' '.join(tests),
            'start_number': str(start_number), 'layer': layer, 'rslt': rslt}


# Lines of mds-survey's stdout that mean it gave up (its exit status is 0 for most of them).
IOKIT_FAILURES = ("Can't find any MDT", 'Need obdfilter to test stripe_count', 'First test must be',
                  "Can't setup echo-client", 'error: lctl not found', 'no devices or hosts specified')


def run_iokit(runner, script, rslt, **sweep_parameters):
    """Run the node's ``mds-survey`` and parse its summary; returns ``(records, errors, result)``.

    Success is decided from the parsed text, never from the exit status
    (docs/iokit-notes.md, 5.4).
    """
    env = iokit_environment(rslt=rslt, **sweep_parameters)
    result, summary = run_script(runner, script, env, rslt)
    records = parse_mds_survey(summary)
    output = result.stdout + result.stderr
    errors = []
    for record in records:
        for test, entry in sorted(record['tests'].items()):
            if entry['status'] != STATUS_OK:
                errors.append({'point': {'thr': record['thr'], 'test': test},
                               'message': '%s: %s in the mds-survey summary' % (test, entry['status'].upper())})
    for line in (summary + '\n' + output).splitlines():
        if 'created directories on' in line and 'failed' in line:
            errors.append({'point': None, 'message': 'mds-survey: %s' % line.strip()})
            break
    for marker in IOKIT_FAILURES:
        if marker in output:
            errors.append({'point': None, 'message': 'mds-survey: %s' % [
                line for line in output.splitlines() if marker in line][0].strip()})
    if result.timed_out:
        errors.append({'point': None, 'message': 'mds-survey stopped: %s' % (runner.stop_reason or 'timeout')})
    elif not records and not errors:
        errors.append({'point': None, 'message': 'mds-survey printed no result (rc %s): %s' % (
            result.rc, output.strip()[-2000:])})
    return records, errors, result


# --------------------------------------------------------------------------
# The report's samples


def record_samples(record, ctx):
    """One record's samples for the report (``sample_extraction``): each test's rate at its point, and with per-MDT
    figures each MDT's own."""
    per_mdt = record.get('per_mdt') if isinstance(record.get('per_mdt'), list) else None
    yield from extraction.tests_samples(record, 'ops_s', extraction.UNIT_OPS_S,
                                        ('mdt', 'file', 'dir', 'stripe', 'thr'),
                                        () if per_mdt else ('target', 'targets'), ctx)
    if per_mdt:
        # each MDT ran the same files per thread at the same thread count: peers of every MDT of the run
        point = extraction.make_point({'file': record.get('file'), 'dir': record.get('dir'),
                                       'stripe': record.get('stripe'), 'thr': record.get('thr')})
        for entry in per_mdt:
            if isinstance(entry, dict):
                yield from extraction.component_samples(entry.get('tests'), 'ops_s', extraction.UNIT_OPS_S,
                                                        entry.get('target'), point, record)
