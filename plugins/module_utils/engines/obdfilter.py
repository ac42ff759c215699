# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The obdfilter survey engine: OST object-layer bandwidth through ``echo_client``.

The sweep follows lustre-iokit's ``obdfilter-survey`` (docs/iokit-notes.md, 4):
``rsz``, ``nobj`` and ``thr`` double from their low to their high value,
outermost first, and a point whose ``thr`` is not a multiple of ``nobj`` is
skipped.  For every other point, on every OST at once:

* ``lctl --device <ecc> create <nobj>`` — the ids printed must be ``nobj``
  consecutive ids, else the survey stops (the script's exit 3);
* for each test: ``lctl set_param -n osd*.*.force_sync 1`` (errors ignored),
  then one ``lctl --threads <thr> -1 <ecc> test_brw <count> <mode> q <pages>
  <thr/nobj>t<first_obj> p<pages>`` per OST, all concurrently;
* ``lctl --device <ecc> destroy <first_obj> <nobj>``.

``pages = ceil(rsz / page KiB)``, ``actual_rsz = pages * page KiB``,
``count = size * 1024 / (actual_rsz * thr)`` I/Os per thread.  The aggregate
is the KiB written over all OSTs divided by the wall-clock time of the
concurrent lctl runs; min/max are the slowest and fastest one-second sample
(``n/T Total: R/second`` × ``actual_rsz``) of any single OST.  An OST whose
output has a line containing ``error``, or an unexpected line once samples
began, makes the test ``ERROR``; no sample at all makes it ``SHORT``.

Unlike the script, the per-OST figures are kept in every record
(``per_ost``), so one slow OST is visible behind a good aggregate, and a
non-zero exit of lctl also counts as an error.  Echo clients are addressed by
name rather than by device number, which lctl accepts for these ioctl
commands and which cannot point at another device if indices are reused.

Every echo client and object range is written to the node state before it
is made and crossed off once undone, so that the cleanup module can undo a
run that was SIGKILLed.  ``obdecho`` is not loaded here: the module's driver
(``survey_module.run_server_survey``) loads it before ``setup`` and unloads it
after ``teardown``, as for every survey that needs a kernel module.

case=network and case=netdisk are in ``obdfilter_network.py``; ``engine: iokit`` (the installed
``obdfilter-survey`` run with the same parameters, its output parsed) in ``obdfilter_iokit.py``.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

from ansible_collections.lustre.iokit.plugins.module_utils import adaptive
from ansible_collections.lustre.iokit.plugins.module_utils import lctl as lctl_utils
from ansible_collections.lustre.iokit.plugins.module_utils import point_budget
from ansible_collections.lustre.iokit.plugins.module_utils import sample_extraction as extraction
from ansible_collections.lustre.iokit.plugins.module_utils.engines.contract import NativeSurvey
from ansible_collections.lustre.iokit.plugins.module_utils.engines.errors import EngineError
from ansible_collections.lustre.iokit.plugins.module_utils.option_problem import OptionProblem
from ansible_collections.lustre.iokit.plugins.module_utils.parsers._obdfilter_detail import (
    STATUS_ERROR, STATUS_INCOMPLETE, STATUS_OK, STATUS_SHORT, parse_thread_samples)
from ansible_collections.lustre.iokit.plugins.module_utils.units import KIB
from ansible_collections.lustre.iokit.plugins.module_utils.versions import version_tuple

CASE_DISK = 'disk'
CASE_NETWORK = 'network'
CASE_NETDISK = 'netdisk'
CASES = (CASE_DISK, CASE_NETWORK, CASE_NETDISK)
DEFAULT_TESTS = ('write', 'rewrite', 'read')
# The script's rszmax: the disk case refuses larger records.
RSZMAX_KIB = 4096
# lctl's MAX_THREADS for --threads.
MAX_THREADS = 4096
DEFAULT_PAGE_KIB = 4
SKIP_THR_NOT_MULTIPLE = 'thr is not a multiple of nobj'

# docs/iokit-notes.md, 4.7 and 9: netdisk is gone from 2.15.6 on; the kernel's "g"
# (kbrw) path that case=network relies on is gone from 2.15.7 and 2.16.0 on.
LAST_NETDISK_VERSION = (2, 15, 5)
LAST_NETWORK_VERSION = (2, 15, 6)


# test_brw's batching: "p" (prep/commit) on a local obdfilter ("g", through an osc: obdfilter_network.py).
BATCH_DISK = 'p'


# --------------------------------------------------------------------------
# Versions and cases


def case_problem(case, version_text):
    """Why ``case`` cannot run on this Lustre version (a sentence naming ``case``), or None."""
    version = version_tuple(version_text)
    shown = version_text or 'unknown'
    if case == CASE_NETDISK:
        if version is not None and version <= LAST_NETDISK_VERSION:
            return None
        return ('case: netdisk was removed from obdfilter-survey in Lustre 2.15.6 (LU-10994) and this node runs '
                'Lustre %s; survey the OSTs with case: disk on each OSS instead' % shown)
    if case == CASE_NETWORK:
        if version is None:
            return ('case: network needs Lustre 2.15.6 or older (the echo "g" batch path went in 2.15.7/2.16.0, '
                    'LU-10994) and the Lustre version of this node could not be read')
        if version > LAST_NETWORK_VERSION:
            return ('case: network cannot run on Lustre %s: the echo_client "g" batch path it needs was removed '
                    'in 2.15.7 and 2.16.0 (LU-10994), so every test would fail with EINVAL; measure the network '
                    'with the LNet self-test survey (lustre.iokit.lst_survey) instead' % shown)
    return None


# --------------------------------------------------------------------------
# The plan


def doubling(low, high):
    """low, 2*low, 4*low ... up to high, as the I/O kit's loops."""
    value = low
    while value <= high:
        yield value
        value *= 2


def sweep(rszlo, rszhi, nobjlo, nobjhi, thrlo, thrhi):
    """Every point in the I/O kit's order: ``{'rsz_kib', 'nobj', 'thr', 'skip'}`` (skip: reason or None)."""
    points = []
    for rsz in doubling(rszlo, rszhi):
        for nobj in doubling(nobjlo, nobjhi):
            for thr in doubling(thrlo, thrhi):
                skip = SKIP_THR_NOT_MULTIPLE if thr % nobj else None
                points.append({'rsz_kib': rsz, 'nobj': nobj, 'thr': thr, 'skip': skip})
    return points


def point_arithmetic(size_mib, rsz_kib, thr, page_kib=DEFAULT_PAGE_KIB):
    """The script's arithmetic for one point on one OST.

    ``pages`` per I/O, ``actual_rsz_kib`` (whole pages), ``count`` I/Os per
    thread and ``size_kib`` actually moved per OST per test.
    """
    pages = (rsz_kib + page_kib - 1) // page_kib
    actual_rsz = pages * page_kib
    count = size_mib * KIB // (actual_rsz * thr)
    return {'pages': pages, 'actual_rsz_kib': actual_rsz, 'count': count, 'size_kib': actual_rsz * count * thr}


def is_write_test(test):
    """The script treats every test whose name contains ``write`` as a write."""
    return 'write' in test


def test_mode(test, verify=False):
    """test_brw's mode: ``w``/``r``, plus ``x`` (no data check) unless ``verify``."""
    return ('w' if is_write_test(test) else 'r') + ('' if verify else 'x')


def test_brw_argv(device, thr, nobj, count, mode, pages, first_obj, batch='p'):
    """``lctl --threads`` running test_brw with one-second samples, as the script does."""
    return ['lctl', '--threads', str(thr), '-1', device, 'test_brw', str(count), mode, 'q', str(pages),
            '%dt%s' % (thr // nobj, first_obj), '%s%d' % (batch, pages)]


FORCE_SYNC_ARGV = ['lctl', 'set_param', '-n', 'osd*.*.force_sync', '1']


echo_client_name = lctl_utils.echo_client_name


# --------------------------------------------------------------------------
# Output of lctl


def parse_created_objects(text, nobj):
    """``(ids, problem)`` from ``lctl create`` output: the object ids (ints) in the order printed.

    They must be ``nobj`` consecutive ids; ``problem`` says otherwise (None when they are).
    """
    ids = lctl_utils.parse_object_ids(text)
    if not ids:
        return ids, 'no object was created'
    if len(ids) != nobj:
        return ids, '%d objects asked, %d created' % (nobj, len(ids))
    if ids != list(range(ids[0], ids[0] + nobj)):
        return ids, 'created object ids are not contiguous: %s' % ' '.join(hex(value) for value in ids)
    return ids, None


def _remove_quietly(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def id_ranges(ids):
    """Consecutive runs of ``ids`` as ``[(first, count), ...]``, so that only our objects are destroyed."""
    ranges = []
    for value in ids:
        if ranges and ranges[-1][0] + ranges[-1][1] == value:
            ranges[-1] = (ranges[-1][0], ranges[-1][1] + 1)
        else:
            ranges.append((value, 1))
    return ranges


def summary_prefix(nosts, size_kib, rsz_kib, obj, thr):
    """The script's result-line prefix (totals over the OSTs)."""
    return 'ost %2d sz %8dK rsz %4dK obj %4d thr %4d ' % (nosts, size_kib, rsz_kib, obj, thr)


def summary_test(test, result):
    """One test as the script prints it after the prefix."""
    text = '%s %7.2f ' % (test, result['mib_s'] or 0.0)
    if result['status'] == STATUS_OK:
        return text + '[%7.2f, %7.2f] ' % (result['min_mib_s'], result['max_mib_s'])
    if result['status'] in (STATUS_ERROR, STATUS_SHORT):
        return text + '%17s ' % result['status'].upper()
    return '%s ' % test


# --------------------------------------------------------------------------
# Targets


def select_targets(devices, requested, local_names=('localhost',)):
    """The OSTs to survey: ``requested`` names (``[host:]name``) or every UP obdfilter.

    ``devices`` are ``parse_lctl_dl`` records.  Raises EngineError naming
    ``targets`` for an unknown target, one that is not UP, or one on
    another host.
    """
    obdfilters = dict((device['name'], device) for device in devices if device['type'] == 'obdfilter')
    if not requested:
        names = [device['name'] for device in devices if device['type'] == 'obdfilter' and device['status'] == 'UP']
        if not names:
            raise EngineError("targets: no UP obdfilter device on this node (lctl dl); run the survey on an OSS "
                              "with mounted OSTs or name them in targets")
        return names
    problems = []
    names = []
    for item in requested:
        host, separator, name = item.rpartition(':')
        if separator and host not in local_names:
            problems.append('targets: %s names host %s; case=disk runs on the node that holds the OST, so run the '
                            'module on %s' % (item, host, host))
            continue
        device = obdfilters.get(name)
        if device is None:
            problems.append('targets: %s is not an obdfilter device on this node (lctl dl lists %s)'
                            % (name, ', '.join(sorted(obdfilters)) or 'none'))
        elif device['status'] != 'UP':
            problems.append('targets: %s is in state %s, not UP' % (name, device['status']))
        elif name in names:
            problems.append('targets: %s is listed twice' % name)
        else:
            names.append(name)
    if problems:
        raise EngineError('; '.join(problems))
    return names


# --------------------------------------------------------------------------
# The survey


def _outer_key(entry):
    return {'rsz_kib': entry['rsz_kib'], 'nobj': entry['nobj']}


def _point_key(entry, test=None):
    point = {'rsz_kib': entry['rsz_kib'], 'nobj': entry['nobj'], 'thr': entry['thr']}
    if test:
        point['test'] = test
    return point


class ObdfilterSurvey(NativeSurvey):
    """Plans and runs one case=disk obdfilter survey on this node.

    From ``context`` (an EngineContext, contract.py): ``runner`` runs the
    measurements (its deadline and stop request end the survey);
    ``control_runner`` (else the runner) runs the short lctl commands that
    create and undo things, so that teardown still runs after the deadline;
    ``node_state`` (a NodeState) receives every echo client and object range
    before it is made.  ``obdecho`` must be loaded already (the driver does it).  ``raw`` receives the summary and
    detail text (``summary(text)``/``detail(text)``).
    """

    def __init__(self, context, targets, size_mib, rszlo=1024, rszhi=1024, nobjlo=1, nobjhi=16, thrlo=1, thrhi=16,
                 tests=DEFAULT_TESTS, verify=False, page_kib=DEFAULT_PAGE_KIB, raw=None, case=CASE_DISK,
                 name_tag=None, point_s=None, point_min_mib=None, floor_reason=None):
        self.context = context
        self.runner = context.runner
        self.case = case
        # Without a control runner (tests, the controller's option checks) the survey's runner makes things too.
        self.control_runner = context.control_runner or context.runner
        self.lctl = lctl_utils.Lctl(self.control_runner)
        self.targets = list(targets)
        self.total_kib = {}
        self.size_mib = size_mib
        self.rszlo, self.rszhi = rszlo, rszhi
        self.nobjlo, self.nobjhi = nobjlo, nobjhi
        self.thrlo, self.thrhi = thrlo, thrhi
        self.tests = list(tests)
        self.verify = verify
        self.page_kib = page_kib
        self.node_state = context.node_state
        self.run_id = context.run_id
        self.raw = raw
        self.clock = context.clock
        # Epoch seconds on each test (start_time/end_time), to cut the node's statistics per test.
        self.wall_clock = context.wall_clock
        self.host = context.host
        # The run's tag in the echo client names (case=disk): one run's devices are never another's.
        self.name_tag = name_tag
        self.batch = BATCH_DISK
        # Full unless the caller sets an adaptive one: the thread sweep of each (rsz, nobj) may then stop once
        # the OSTs saturate.
        self.inner_sweeps = adaptive.InnerSweeps()
        # (actual rsz KiB, nobj, thr) -> the record an earlier attempt of the run measured (the module resumes)
        self.done_points = {}
        # Time-bounded points (point_budget.py): seconds per test of a point, None for the I/O kit's fixed size;
        # the floor in MiB per OST and where it came from (the module derives the default from the node).
        self.point_s = point_s
        self.point_min_mib = point_min_mib
        self.floor_reason = floor_reason
        self.sizing_rates = point_budget.SizingRates()
        self.errors = []
        self.aborted = None
        self.reused_echo_clients = []
        self.echo_clients = {}
        self._objects = {}

    # -- planning ----------------------------------------------------------------

    def problems(self):
        """Every reason the survey cannot run as asked, each an OptionProblem (checked before anything is made)."""
        problems = []
        for name in ('size_mib', 'rszlo', 'rszhi', 'nobjlo', 'nobjhi', 'thrlo', 'thrhi'):
            if getattr(self, name) < 1:
                problems.append(OptionProblem(name, 'must be at least 1', got='%d' % getattr(self, name)))
        problems.extend(self._bounded_problems())
        # each step's checks need the settings the one before accepted
        return problems or self._setting_problems() or self._sweep_problems()

    def _bounded_problems(self):
        """The time-bounded point's settings: a positive time, a floor of at least 1 MiB, case=disk only."""
        problems = []
        if self.point_s is not None and self.point_s <= 0:
            problems.append(OptionProblem('point_s', 'must be more than 0 seconds', got='%g' % self.point_s))
        if self.point_min_mib is not None and self.point_min_mib < 1:
            problems.append(OptionProblem('point_min_mib', 'must be at least 1', got='%d' % self.point_min_mib))
        if self.point_s is not None and self.case != CASE_DISK:
            problems.append(OptionProblem('point_s', 'time-bounded points are measured on the OSTs themselves '
                                          '(case=disk); leave it unset with {case} %s' % self.case,
                                          mentions='case'))
        return problems

    def _setting_problems(self):
        """The settings each on its own and the ranges (all of them at least 1)."""
        problems = []
        for low, high in (('rszlo', 'rszhi'), ('nobjlo', 'nobjhi'), ('thrlo', 'thrhi')):
            low_value, high_value = getattr(self, low), getattr(self, high)
            if low_value > high_value:
                problems.append(OptionProblem(low, '%d is greater than {%s} (%d)' % (low_value, high, high_value),
                                              mentions=high))
        if self.case == CASE_DISK and self.rszhi > RSZMAX_KIB:
            problems.append(OptionProblem('rszhi', '%d KiB is above the %d KiB the disk case supports'
                                          % (self.rszhi, RSZMAX_KIB)))
        if self.thrhi > MAX_THREADS:
            problems.append(OptionProblem('thrhi', '%d is above lctl\'s limit of %d threads' % (self.thrhi, MAX_THREADS)))
        for target in self.targets:
            problem = lctl_utils.name_problem(echo_client_name(target, self.name_tag))
            if problem:
                problems.append(OptionProblem('targets', '%s: %s' % (target, problem)))
        if not self.tests:
            problems.append(OptionProblem('tests', 'give at least one test'))
        elif self.tests[0] != 'write':
            problems.append(OptionProblem('tests', "the first test must be 'write' (the objects are empty until "
                                          "written)", got='%r' % (self.tests[0],)))
        if len(set(self.tests)) != len(self.tests):
            problems.append(OptionProblem('tests', 'each test may appear once', got=', '.join(self.tests)))
        return problems

    def _sweep_problems(self):
        """The sweep's points with valid settings: whole pages and records, a point to run, a record per thread."""
        problems = []
        for name in ('rszlo', 'rszhi'):
            value = getattr(self, name)
            if value % self.page_kib:
                problems.append(OptionProblem(name, '%d KiB is not a whole number of %d KiB pages'
                                              % (value, self.page_kib)))
        for rsz in doubling(self.rszlo, self.rszhi):
            actual = point_arithmetic(self.size_mib, rsz, 1, self.page_kib)['actual_rsz_kib']
            if (self.size_mib * KIB) % actual:
                problems.append(OptionProblem('size_mib', '%d MiB is not a multiple of the %d KiB record'
                                              % (self.size_mib, actual)))
        runnable = [point for point in sweep(self.rszlo, self.rszhi, self.nobjlo, self.nobjhi, self.thrlo,
                                             self.thrhi) if point['skip'] is None]
        if not runnable:
            rule = ('no thread count from {thrlo} (%d) to {thrhi} (%d) is a multiple of the object counts {nobjlo} '
                    '(%d) to {nobjhi} (%d), so nothing would run' % (self.thrlo, self.thrhi, self.nobjlo, self.nobjhi))
            problems.append(OptionProblem('thrhi', rule, mentions=('thrlo', 'thrhi', 'nobjlo', 'nobjhi')))
        for point in runnable:
            arithmetic = point_arithmetic(self.size_mib, point['rsz_kib'], point['thr'], self.page_kib)
            if arithmetic['count'] == 0:
                problems.append(OptionProblem(
                    'size_mib', '%d MiB per OST is less than one %d KiB record for each of %d threads; raise '
                    '{size_mib} or lower {thrhi}' % (self.size_mib, arithmetic['actual_rsz_kib'], point['thr']),
                    mentions=('size_mib', 'thrhi')))
                break
        return problems

    def free_space_problems(self):
        """Each OST with less free space than the sweep's largest point writes to it, naming ``size_mib``.

        The I/O kit checks nothing and fills the OST until the writes fail; ost-survey's engine checks its
        ``lfs df`` the same way.  The free space is the OST's ``obdfilter.<ost>.kbytesavail``; one that cannot
        be read is not checked (``free_kib`` holds None for it).  Returns ``(problems, free_kib)``; the same read
        keeps each OST's ``kbytestotal`` in ``self.total_kib`` (None where not read), so that the envelope says
        how full each OST was when it was measured.
        """
        runnable = [entry['size_kib_per_ost'] for entry in self.points() if entry['skip'] is None]
        needed_kib = max(runnable or [0])
        problems = []
        free_kib = {}
        for target in self.targets:
            param = 'obdfilter.%s.kbytesavail' % target
            # lctl prints the values of the parameters asked one per line, in the order asked.
            result = self.lctl.run(['get_param', '-n', param, 'obdfilter.%s.kbytestotal' % target], check=False)
            words = result.stdout.split() if result.rc == 0 else []
            free_kib[target] = int(words[0]) if words and words[0].isdigit() else None
            self.total_kib[target] = int(words[1]) if len(words) > 1 and words[1].isdigit() else None
            if free_kib[target] is not None and free_kib[target] < needed_kib:
                problems.append(OptionProblem(
                    'size_mib', '%d MiB per OST does not fit %s, which has %d MiB free (lctl get_param %s); lower '
                    '{size_mib} (obdfilter_size_mib) below that, or free space on the OST'
                    % (self.size_mib, target, free_kib[target] // KIB, param), mentions='size_mib'))
        return problems, free_kib

    def plan(self):
        """The plan: every sweep point (``points()``), those skipped, what each OST gets written and read, the
        adaptive sweep's settings and bounds, and for a network case the setup it makes (``setup_commands()``)."""
        points = self.points()
        sweeps = self.inner_sweeps
        plan = {
            'points': points,
            'skipped_points': [point for point in points if point['skip']],
            'per_ost': self.totals_per_ost(),
            'sweep': adaptive.plan_fields(sweeps.mode, sweeps.min_gain_pct, sweeps.patience,
                                          adaptive.inner_sweep_sizes(points, 'thr', ('rsz_kib', 'nobj'))),
        }
        if self.case in (CASE_NETWORK, CASE_NETDISK):
            plan['setup'] = self.setup_commands()
        if self.point_s is not None:
            plan['bounded'] = self.bounded_plan(points)
        if self.point_min_mib is not None:
            plan['point_sizing'] = point_budget.point_sizing(self.size_mib, self.point_min_mib, self.floor_reason,
                                                             self.point_s)
        return plan

    def bounded_plan(self, points):
        """What time-bounded points change in the plan: the time and floor, and the worst case.

        A point moves ``max(floor, min(full, point_s x rate))`` per OST (point_budget.py), so at worst every
        point moves the larger of the floor and the full size; the time each test aims at is ``point_s``, but a
        slow point whose floor takes longer lasts as long as its floor takes.
        """
        runnable = [entry for entry in points if entry['skip'] is None]
        floor_kib = self.point_min_mib * KIB
        worst_kib = sum(max(entry['size_kib_per_ost'], floor_kib) for entry in runnable)
        return {'point_s': self.point_s, 'point_min_mib': self.point_min_mib, 'floor_reason': self.floor_reason,
                'target_duration_s': self.point_s * len(self.tests) * len(runnable),
                'worst_case_kib_per_ost': worst_kib * len(self.tests),
                'full_kib_per_ost': sum(entry['size_kib_per_ost'] for entry in runnable) * len(self.tests)}

    def points(self):
        """Every sweep point with its arithmetic and whether it runs (``skip`` None) or why not."""
        nosts = len(self.targets)
        planned = []
        for point in sweep(self.rszlo, self.rszhi, self.nobjlo, self.nobjhi, self.thrlo, self.thrhi):
            entry = dict(point)
            arithmetic = point_arithmetic(self.size_mib, point['rsz_kib'], point['thr'], self.page_kib)
            entry.update(pages=arithmetic['pages'], actual_rsz_kib=arithmetic['actual_rsz_kib'],
                         count=arithmetic['count'], size_kib_per_ost=arithmetic['size_kib'],
                         size_kib=arithmetic['size_kib'] * nosts, obj=point['nobj'] * nosts,
                         threads=point['thr'] * nosts)
            planned.append(entry)
        return planned

    def totals_per_ost(self):
        """What the whole sweep does to each OST: bytes written and read, objects created, points run."""
        runnable = [entry for entry in self.points() if entry['skip'] is None]
        writes = sum(1 for test in self.tests if is_write_test(test))
        reads = len(self.tests) - writes
        written = sum(entry['size_kib_per_ost'] for entry in runnable) * KIB * writes
        read = sum(entry['size_kib_per_ost'] for entry in runnable) * KIB * reads
        per_ost = {'bytes_written': written, 'bytes_read': read,
                   'objects_created': sum(entry['nobj'] for entry in runnable),
                   'max_objects_at_once': max([entry['nobj'] for entry in runnable] or [0]),
                   'max_bytes_at_once': max([entry['size_kib_per_ost'] for entry in runnable] or [0]) * KIB}
        return dict((target, dict(per_ost)) for target in self.targets)

    # -- bookkeeping -----------------------------------------------------------------

    def _raw(self, kind, text):
        if self.raw is not None:
            getattr(self.raw, kind)(text)

    def _remember_echo_client(self, target, create_output=None):
        """(Re)write the node-state entry of ``target``'s echo client with its live object ranges.

        A range whose ids are not known yet (``create`` running) has ``first`` null; ``create_output`` is then
        the file the create prints the ids to, for a cleanup after a kill to read them from.
        """
        objects = [{'first': first, 'count': count} for first, count in self._objects.get(target, [])]
        name = self.echo_clients.get(target) or echo_client_name(target, self.name_tag)
        details = {'name': name, 'target': target, 'objects': objects}
        if create_output:
            details['create_output'] = create_output
        self.node_state.record('echo_clients', self.run_id, **details)

    def _create_output_path(self, name):
        """The file ``lctl --device <name> create`` writes its output to: in the run's directory, so that the ids
        it prints outlive this process (SIGKILLed while the create runs, the cleanup reads them there).

        None (the output stays in memory, as for any command) when the control runner cannot write a command's
        output to a file, or the directory cannot be made.
        """
        if getattr(self.control_runner, 'run_to_file', None) is None or self.node_state is None or not self.run_id:
            return None
        directory = os.path.join(self.node_state.workdir, self.run_id)
        try:
            if not os.path.isdir(directory):
                os.makedirs(directory)
        except OSError:
            return None
        return os.path.join(directory, '%s.create' % name)

    # -- setup and teardown ---------------------------------------------------------

    def setup(self):
        """Make the devices the survey measures through (``make_devices``); raises EngineError when that fails."""
        if not self.make_devices():
            self.aborted = 'setup failed'
            failure = self.errors.pop() if self.errors else {'message': 'setup failed'}
            raise EngineError(failure['message'])

    def make_devices(self):
        """Get one echo_client per OST; False (and ``errors``) when it fails.

        A leftover UP ``<ost>_ecc`` is reused (as the I/O kit does) and torn
        down at the end like ours; a half-made one is replaced.
        """
        for target in self.targets:
            name = echo_client_name(target, self.name_tag)
            # written down first: if we are killed half-way, the cleanup still finds it
            self._remember_echo_client(target)
            self.echo_clients[target] = name
            try:
                device = self.lctl.attach_echo_client(name, target)
            except lctl_utils.LctlError as exc:
                self.errors.append({'point': None, 'message': "can't set up echo-client %s on %s: %s"
                                    % (name, target, exc)})
                return False
            if device.get('reused'):
                self.reused_echo_clients.append(name)
        return True

    def destroy_objects(self):
        """Destroy every object range still alive; returns the error messages."""
        problems = []
        for target in list(self._objects):
            name = self.echo_clients[target]
            remaining = []
            for first, count in self._objects[target]:
                if first is None:
                    continue
                result = self.lctl.run(['--device', name, 'destroy', hex(first), str(count)], check=False)
                self._raw('detail', '=============> Destroy %d on localhost:%s\n%s%s'
                          % (count, name, result.stdout, result.stderr))
                if result.rc != 0 or result.timed_out or 'error' in result.stdout + result.stderr:
                    remaining.append((first, count))
                    problems.append('destroy %d objects from %s on %s failed (rc %s): %s' % (
                        count, hex(first), target, result.rc, (result.stderr or result.stdout).strip()))
            if remaining:
                self._objects[target] = remaining
            else:
                del self._objects[target]
            self._remember_echo_client(target)
        return problems

    def teardown(self, control_runner=None):
        """Destroy live objects and tear down the echo clients; returns the problems.

        Runs on the survey's control runner (no deadline), the one the module passes as ``control_runner``.
        An echo client left here keeps obdecho in use, so the driver's unload after this leaves it loaded
        and recorded for the cleanup.
        """
        problems = self.destroy_objects()
        for target, name in list(self.echo_clients.items()):
            if target in self._objects:
                # its objects are still there: keep the device and its entry so that the cleanup retries
                continue
            try:
                self.lctl.teardown(name)
            except lctl_utils.LctlError as exc:
                problems.append('tear down echo_client %s: %s' % (name, exc))
                continue
            del self.echo_clients[target]
            self.node_state.forget('echo_clients', name)
        return problems

    # -- one point -------------------------------------------------------------------

    def _create_objects(self, entry):
        """Create ``nobj`` objects on every OST; None or the reason the survey must stop."""
        for target in self.targets:
            name = self.echo_clients[target]
            # the count is written down before the ids are known, with the file the create prints them to, so
            # that the cleanup after a kill here still finds the objects and their ids
            output = self._create_output_path(name)
            self._objects[target] = [(None, entry['nobj'])]
            self._remember_echo_client(target, create_output=output)
            args = ['--device', name, 'create', str(entry['nobj'])]
            if output:
                result = self.control_runner.run_to_file([self.lctl.lctl] + args, output)
            else:
                result = self.lctl.run(args, check=False)
            self._raw('detail', '=============> Create %d on localhost:%s\n%s%s'
                      % (entry['nobj'], name, result.stdout, result.stderr))
            ids, problem = parse_created_objects(result.stdout, entry['nobj'])
            if ids:
                self._objects[target] = id_ranges(ids)
            else:
                del self._objects[target]
            self._remember_echo_client(target)
            if output:
                # the ids are in the node state now
                _remove_quietly(output)
            if problem is None and (result.rc != 0 or result.timed_out):
                problem = 'lctl create exited with rc %s' % result.rc
            if problem:
                detail = (result.stderr or '').strip()
                return 'created object #s on localhost:%s not contiguous: %s%s' % (
                    name, problem, ' (%s)' % detail if detail else '')
        return None

    def _measure(self, test, entry):
        """Run ``test`` on every OST at once; ``(aggregate, per_ost, interrupted)``."""
        self.runner.run(FORCE_SYNC_ARGV)
        mode = test_mode(test, self.verify)
        argvs = [test_brw_argv(self.echo_clients[target], entry['thr'], entry['nobj'], entry['count'], mode,
                               entry['pages'], hex(self._objects[target][0][0]), batch=self.batch)
                 for target in self.targets]
        start_time = round(self.wall_clock(), 3)
        started = self.clock()
        results = self.runner.run_many(argvs)
        elapsed = self.clock() - started
        end_time = round(self.wall_clock(), 3)
        interrupted = any(result.timed_out for result in results)
        rsz_mib = entry['actual_rsz_kib'] / KIB
        per_ost = {}
        counts = []
        all_rates = []
        for target, result in zip(self.targets, results):
            output = result.stdout + result.stderr
            self._raw('detail', '=============> %s localhost:%s\n%s' % (test, self.echo_clients[target], output))
            judged = parse_thread_samples(output)
            count = judged['count']
            if result.rc != 0 and count >= 0 and not result.timed_out:
                count = -1
                judged['error_line'] = judged['error_line'] or 'lctl exited with rc %s' % result.rc
            seconds = result.elapsed_s
            figures = {'mib_s': entry['size_kib_per_ost'] / KIB / seconds if seconds > 0 else None,
                       'lctl_mib_s': judged['total_rate'] * rsz_mib if judged['total_rate'] is not None else None,
                       'min_mib_s': None, 'max_mib_s': None, 'samples': len(judged['rates']),
                       'elapsed_s': round(seconds, 6), 'error': judged['error_line']}
            if result.timed_out:
                figures['status'] = STATUS_INCOMPLETE
            elif count < 0:
                figures['status'] = STATUS_ERROR
            elif count == 0:
                figures['status'] = STATUS_SHORT
            else:
                figures.update(status=STATUS_OK, min_mib_s=min(judged['rates']) * rsz_mib,
                               max_mib_s=max(judged['rates']) * rsz_mib)
                all_rates.extend(judged['rates'])
            counts.append(count)
            per_ost[target] = figures
        aggregate = {'mib_s': entry['size_kib'] / KIB / elapsed if elapsed > 0 else None,
                     'min_mib_s': None, 'max_mib_s': None, 'elapsed_s': round(elapsed, 6),
                     'start_time': start_time, 'end_time': end_time}
        if interrupted:
            aggregate['status'] = STATUS_INCOMPLETE
            aggregate['mib_s'] = None
        elif min(counts) < 0:
            aggregate['status'] = STATUS_ERROR
        elif min(counts) == 0:
            aggregate['status'] = STATUS_SHORT
        else:
            aggregate.update(status=STATUS_OK, min_mib_s=min(all_rates) * rsz_mib, max_mib_s=max(all_rates) * rsz_mib)
        return aggregate, per_ost, interrupted

    def _slowest_rate(self, record):
        """The slowest OST's slowest test of a measured point, MiB/s per OST: what sizes the next bounded point."""
        rates = [figures.get('mib_s') for tests in record.get('per_ost', {}).values() for figures in tests.values()]
        rates = [rate for rate in rates if rate]
        return min(rates) if rates else None

    def _bounded(self, entry):
        """``(entry, size, rate)``: the point's entry with the amount a bounded point moves, its PointSize and the
        rate per OST it was sized from (None for the survey's first point).

        Every OST of the host moves the same amount, sized from the slowest OST's rate, so that their figures
        compare and the slowest one, which ends the test, takes the point's time.
        The amount is whole records for every thread (test_brw's ``count`` I/Os per thread), rounded up so that
        it never falls below the floor; each test gets the time the survey has left over its tests.
        """
        rate = self.sizing_rates.rate_for(_outer_key(entry), entry['thr'])
        remaining_s = self.runner.remaining_s()
        time_left_s = remaining_s / len(self.tests) if remaining_s is not None else None
        granule_mib = entry['actual_rsz_kib'] * entry['thr'] / KIB
        size = point_budget.size_point('obdfilter', entry['size_kib_per_ost'] / KIB,
                                       self.point_min_mib, self.point_s, rate, time_left_s, granule_mib)
        count = int(round(size.amount * KIB / (entry['actual_rsz_kib'] * entry['thr'])))
        bounded = dict(entry)
        size_kib = entry['actual_rsz_kib'] * count * entry['thr']
        bounded.update(count=count, size_kib_per_ost=size_kib, size_kib=size_kib * len(self.targets))
        return bounded, size, rate

    def _record(self, entry):
        return {'ost': len(self.targets), 'size_kib': entry['size_kib'], 'rsz_kib': entry['actual_rsz_kib'],
                'obj': entry['obj'], 'thr': entry['threads'], 'case': self.case, 'host': self.host,
                'skipped': False, 'error': None, 'obj_per_ost': entry['nobj'], 'thr_per_ost': entry['thr'],
                'count': entry['count'], 'pages': entry['pages'], 'targets': list(self.targets),
                'tests': {}, 'per_ost': dict((target, {}) for target in self.targets)}

    # -- the sweep -------------------------------------------------------------------

    def envelope_fields(self):
        return adaptive.envelope_fields(self.inner_sweeps, self.points())

    def run(self):
        """The sweep (after ``setup``), yielding one record per measured point.

        Stops early on a deadline or stop request (``aborted`` says why), or when objects cannot be created or
        destroyed.
        """
        self._raw('summary', '%s Obdfilter-survey for case=%s from %s\n' % (
            time.strftime('%a %b %d %H:%M:%S %Z %Y'), self.case, self.host or os.uname()[1]))
        for entry in self.points():
            if entry['skip']:
                continue
            earlier = self.done_points.get((entry['actual_rsz_kib'], entry['nobj'], entry['thr']))
            if earlier is not None:
                # the module resumes: the point is in the envelope already, its figures still count
                if not self.inner_sweeps.stopped(_outer_key(entry)):
                    self.inner_sweeps.measured(_outer_key(entry), entry['thr'],
                                               adaptive.figures(earlier['tests'], earlier['ost'],
                                                                components=earlier.get('per_ost')))
                # and its rate sizes the next bounded point, as in the uninterrupted run
                self.sizing_rates.measured(_outer_key(entry), entry['thr'], self._slowest_rate(earlier))
                continue
            stopped = self.inner_sweeps.stopped(_outer_key(entry))
            if stopped:
                self.inner_sweeps.skip(_point_key(entry), stopped, planned={
                    'actual_rsz_kib': entry['actual_rsz_kib'], 'nobj': entry['nobj'], 'thr': entry['thr']})
                continue
            if self.runner.expired():
                self.aborted = self.runner.stop_reason
                self.errors.append({'point': _point_key(entry), 'message': 'not run: %s' % self.aborted})
                return
            size = None
            if self.point_s is not None:
                entry, size, sized_from = self._bounded(entry)
                if size.refused is not None:
                    # never cut short into a figure below its floor: the point fails, the sweep goes on
                    self.errors.append({'point': _point_key(entry), 'message': 'not run: %s' % size.refused})
                    continue
            record = self._record(entry)
            if size is not None:
                record.update(bounded=True, point_s=self.point_s, moved_mib_per_ost=entry['size_kib_per_ost'] / KIB,
                              point_limit=size.limit, sized_from_mib_s=sized_from)
            prefix = summary_prefix(record['ost'], record['size_kib'], record['rsz_kib'], record['obj'],
                                    record['thr'])
            self._raw('summary', prefix)
            self._raw('detail', '=======================> %s\n' % prefix)
            problem = self._create_objects(entry)
            if problem:
                self._raw('summary', problem + '\n')
                record['error'] = problem
                self.errors.append({'point': _point_key(entry), 'message': problem})
                self.aborted = 'object creation failed'
                yield record
                return
            for test in self.tests:
                aggregate, per_ost, interrupted = self._measure(test, entry)
                record['tests'][test] = aggregate
                for target in self.targets:
                    record['per_ost'][target][test] = per_ost[target]
                self._raw('summary', summary_test(test, aggregate))
                if interrupted:
                    self.aborted = self.runner.stop_reason or 'stopped'
                    self.errors.append({'point': _point_key(entry, test),
                                        'message': '%s interrupted: %s' % (test, self.aborted)})
                    self._raw('summary', '\n')
                    if any(result['status'] != STATUS_INCOMPLETE for result in record['tests'].values()):
                        yield record
                    return
                if aggregate['status'] == STATUS_ERROR:
                    failing = ['%s: %s' % (target, per_ost[target]['error']) for target in self.targets
                               if per_ost[target]['status'] == STATUS_ERROR]
                    self.errors.append({'point': _point_key(entry, test),
                                        'message': '%s ERROR on %s' % (test, '; '.join(failing))})
            self._raw('summary', '\n')
            problems = self.destroy_objects()
            if problems:
                for problem in problems:
                    self.errors.append({'point': _point_key(entry), 'message': problem})
                self.aborted = 'object destruction failed'
                yield record
                return
            # each OST's curve is judged on its own samples: a slow OST is a flat curve of its own, not noise
            self.inner_sweeps.measured(_outer_key(entry), entry['thr'],
                                       adaptive.figures(record['tests'], record['ost'], components=record['per_ost']))
            if size is not None:
                record['elapsed_s'] = round(sum(test['elapsed_s'] for test in record['tests'].values()), 6)
                self.sizing_rates.measured(_outer_key(entry), entry['thr'], self._slowest_rate(record))
            yield record


# --------------------------------------------------------------------------
# The report's samples


def record_samples(record, ctx):
    """One record's samples for the report (``sample_extraction``): each test's rate at its point, and with per-OST
    figures each OST's own."""
    if record.get('error'):
        ctx['problems'].append(str(record['error']))
    if record.get('skipped'):
        ctx['problems'].append('not run (too much buffer space) at %s'
                               % extraction.point_label(extraction.make_point(record)))
        return
    per_ost = record.get('per_ost') if isinstance(record.get('per_ost'), dict) else None
    # With per-OST figures (native engine) the record's own rates are the host's aggregate, not one OST's.
    yield from extraction.tests_samples(record, 'mib_s', extraction.UNIT_MIB_S,
                                        ('case', 'ost', 'size_kib', 'rsz_kib', 'obj', 'thr'),
                                        () if per_ost else ('target', 'targets'), ctx)
    if per_ost:
        point = extraction.make_point({'case': record.get('case'), 'rsz_kib': record.get('rsz_kib'),
                                       'obj': record.get('obj_per_ost'), 'thr': record.get('thr_per_ost')})
        for name, tests in per_ost.items():
            yield from extraction.component_samples(tests, 'mib_s', extraction.UNIT_MIB_S, name, point, record)
