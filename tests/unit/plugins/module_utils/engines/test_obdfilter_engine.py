# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The obdfilter engine against a fake lctl: command lists and order, sweep rules, arithmetic, judging, cleanup."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shlex

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import adaptive
from ansible_collections.lustre.iokit.plugins.module_utils import plan_estimate
from ansible_collections.lustre.iokit.plugins.module_utils import progress
from ansible_collections.lustre.iokit.plugins.module_utils.engines import obdfilter
from ansible_collections.lustre.iokit.plugins.module_utils.engines.contract import EngineContext
from ansible_collections.lustre.iokit.plugins.module_utils.engines import obdfilter_iokit
from ansible_collections.lustre.iokit.plugins.module_utils.engines import obdfilter_network
from ansible_collections.lustre.iokit.plugins.module_utils.engines.errors import EngineError
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState
from ansible_collections.lustre.iokit.plugins.module_utils.parsers import _obdfilter_detail as obdfilter_detail
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.obdfilter_survey import parse_obdfilter_survey
from ansible_collections.lustre.iokit.plugins.module_utils.runner import CommandResult
from ansible_collections.lustre.iokit.tests.unit.fakes import FakeClock, FakeNode, RawSink, run_whole

OSTS = ('testfs-OST0000', 'testfs-OST0001')
LSMOD_HEADER = 'Module                  Size  Used by\n'


def samples_output(thr, rates, total=None):
    """What ``lctl --threads`` prints for a test with one sample per rate."""
    lines = ['Print status every 1 seconds', '--threads: starting %d threads on device X running test_brw' % thr]
    lines += ['%d/%d Total: %.6f/second' % (thr, thr, rate) for rate in rates]
    if total is not None:
        lines.append('Total: total 100 threads %d sec 5.000000 %.6f/second' % (thr, total))
    return '\n'.join(lines) + '\n'


class FakeLustre(FakeNode):
    """A node with OSTs, answering lctl/lsmod/modprobe/rmmod as Lustre does, and recording every command.

    ``brw`` maps an OST to a function ``(argv) -> (rc, stdout, stderr)`` for
    its test_brw runs; each run_many advances the clock by
    ``seconds_per_batch``.  ``stop_after_batches`` makes the batch after
    that many behave as a timeout.
    """

    def __init__(self, clock=None, osts=OSTS, obdecho_loaded=False, leftover=(), seconds_per_batch=4.0,
                 stop_after_batches=None, node_state=None, created_ids=None):
        self.clock = clock or FakeClock()
        self.devices = [{'index': 0, 'status': 'UP', 'type': 'mgc', 'name': 'MGC192.168.1.10@tcp', 'uuid': 'u0'},
                        {'index': 1, 'status': 'UP', 'type': 'ost', 'name': 'OSS', 'uuid': 'OSS_uuid'}]
        for ost in osts:
            self.devices.append({'index': len(self.devices), 'status': 'UP', 'type': 'obdfilter', 'name': ost,
                                 'uuid': ost + '_UUID'})
        for ost in leftover:
            self.devices.append({'index': len(self.devices), 'status': 'UP', 'type': 'echo_client',
                                 'name': ost + '_ecc', 'uuid': ost + '_ecc_UUID'})
        self.obdecho_loaded = obdecho_loaded or bool(leftover)
        self.seconds_per_batch = seconds_per_batch
        self.stop_after_batches = stop_after_batches
        self.node_state = node_state
        self.created_ids = created_ids
        self.version = '2.15.5'
        self.brw = {}
        self.commands = []
        self.batches = []
        self.stop_reason = None
        self.next_object = 2
        self.state_at = {}
        self.uuids = {}

    # -- runner interface ----------------------------------------------------------------

    def run_many(self, argvs, env=None, cwd=None):
        brw = [argv for argv in argvs if 'test_brw' in argv]
        if brw:
            self.batches.append([list(argv) for argv in argvs])
            self.clock.now += self.seconds_per_batch
            if self.stop_after_batches is not None and len(self.batches) > self.stop_after_batches:
                self.stop_reason = 'timeout'
        results = []
        for argv in argvs:
            self.commands.append(list(argv))
            if self.stop_reason is not None and 'test_brw' in argv or self.expired() and argv[1:2] == ['set_param']:
                results.append(CommandResult(argv, -15, '', '', self.seconds_per_batch, timed_out=True))
                continue
            rc, out, err = self.answer(list(argv))
            results.append(CommandResult(argv, rc, out, err, self.seconds_per_batch if brw else 0.01))
        return results

    # -- Lustre ------------------------------------------------------------------------------

    def find(self, name):
        return next((device for device in self.devices if device['name'] == name), None)

    def dl(self):
        return ''.join('%3d %s %s %s %s 3\n' % (d['index'], d['status'], d['type'], d['name'], d['uuid'])
                       for d in self.devices)

    def answer(self, argv):
        if argv == ['lsmod']:
            used = '%d\n' % self.obdecho_users()
            return 0, LSMOD_HEADER + ('obdecho 135168 ' + used if self.obdecho_loaded else ''), ''
        if argv == ['modprobe', 'obdecho']:
            if self.node_state is not None:
                self.state_at['modprobe'] = self.node_state.read()
            self.obdecho_loaded = True
            return 0, '', ''
        if argv == ['rmmod', 'obdecho']:
            if self.obdecho_users():
                return 1, '', 'rmmod: ERROR: Module obdecho is in use\n'
            self.obdecho_loaded = False
            return 0, '', ''
        assert argv[0] == 'lctl', argv
        args = argv[1:]
        if args == ['dl']:
            return 0, self.dl(), ''
        if args == ['dl', '-t']:
            lines = []
            for d in self.devices:
                nid = ' ' + d['nid'] if d.get('nid') else ''
                lines.append('%3d %s %s %s %s 3%s\n' % (d['index'], d['status'], d['type'], d['name'], d['uuid'], nid))
            return 0, ''.join(lines), ''
        if args == ['get_param', '-n', 'version']:
            return 0, self.version + '\n', ''
        if args[:2] == ['set_param', '-n']:
            return 0, '', ''
        if args[0] == 'add_uuid':
            self.uuids[args[1]] = args[2]
            return 0, '', ''
        if args[0] == 'del_uuid':
            self.uuids.pop(args[1], None)
            return 0, '', ''
        if args[0] == 'attach':
            if self.node_state is not None:
                self.state_at['attach ' + args[2]] = self.node_state.read()
            if self.find(args[2]):
                return 1, '', 'error: attach: File exists\n'
            self.devices.append({'index': len(self.devices), 'status': 'AT', 'type': args[1], 'name': args[2],
                                 'uuid': args[3]})
            return 0, '', ''
        if args[0] == '--device':
            device = self.find(args[1])
            command = args[2]
            if command == 'setup':
                device['status'] = 'UP'
                device['setup'] = args[3:]
                return 0, '', ''
            if command == 'cleanup':
                device['status'] = 'AT'
                return 0, '', ''
            if command == 'detach':
                self.devices.remove(device)
                return 0, '', ''
            if command == 'create':
                count = int(args[3])
                if self.node_state is not None:
                    self.state_at['create %s' % args[1]] = self.node_state.read()
                ids = self.created_ids or list(range(self.next_object, self.next_object + count))
                self.next_object += count
                lines = ['create: %d objects' % count]
                lines += ['create: #%d is object id 0x%x' % (number + 1, value) for number, value in enumerate(ids)]
                return 0, '\n'.join(lines) + '\n', ''
            if command == 'destroy':
                first, count = int(args[3], 0), int(args[4])
                lines = ['destroy: %d objects' % count]
                lines += ['destroy: #%d is object id 0x%x' % (n + 1, first + n) for n in range(count)]
                return 0, '\n'.join(lines) + '\n', ''
        if args[:2] == ['get_param', '-n'] and args[2].endswith('.kbytesavail'):
            # The module's free-space check before writing: ample room on every OST (a quarter used).
            return 0, ''.join('%d\n' % (3 << 40 if param.endswith('.kbytesavail') else 4 << 40) for param in args[2:]), ''
        if args[0] == '--threads':
            # <ost>_ecc, or <ost>_<run tag>_ecc from the module
            ost = args[3][:-len('_ecc')].split('_')[0]
            if ost in self.brw:
                return self.brw[ost](argv)
            thr = int(args[1])
            return 0, samples_output(thr, [100.0, 120.0], total=110.0), ''
        raise AssertionError('unexpected command %r' % (argv,))

    def obdecho_users(self):
        """Each device of a type obdecho registers holds the module, as lsmod counts it."""
        return sum(1 for device in self.devices if device['type'] in ('echo_client', 'obdecho'))

    def actions(self):
        """The commands that change something, in order (reads like dl and lsmod left out)."""
        return [argv for argv in self.commands if argv not in (['lsmod'], ['lctl', 'dl'])]


WALL_ORIGIN = 1800000000.0


def context_of(runner, state, host, options):
    """The engine's context on the fake node ``runner``, taking from ``options`` what the context carries (and
    ``make_context``, what builds it: EngineContext unless a test gives its own)."""
    make_context = options.pop('make_context', EngineContext)
    # The wall clock moves with the fake monotonic one, from another origin, as the real ones do.
    wall_clock = options.pop('wall_clock', lambda: WALL_ORIGIN + runner.clock.now)
    return make_context(runner, options.pop('control_runner', None), state, 'run-1', host, clock=runner.clock,
                        wall_clock=wall_clock)


def make_survey(lustre, tmp_path, targets=OSTS, **options):
    state = NodeState(str(tmp_path / 'work'))
    lustre.node_state = state
    options.setdefault('size_mib', 16)
    raw = RawSink()
    # The wall clock moves with the fake monotonic one, from another origin, as the real ones do.
    context = context_of(lustre, state, 'oss1', options)
    survey = obdfilter.ObdfilterSurvey(context, list(targets), raw=raw, **options)
    return survey, state, raw


def brw(device, thr, count, mode, pages, objspec):
    return ['lctl', '--threads', str(thr), '-1', device, 'test_brw', str(count), mode, 'q', str(pages), objspec,
            'p%d' % pages]


# --------------------------------------------------------------------------
# Planning and arithmetic


def test_sweep_order_and_the_thr_multiple_of_nobj_rule():
    points = obdfilter.sweep(1024, 2048, 1, 4, 1, 4)
    assert [(p['rsz_kib'], p['nobj'], p['thr']) for p in points] == [
        (rsz, nobj, thr) for rsz in (1024, 2048) for nobj in (1, 2, 4) for thr in (1, 2, 4)]
    skipped = [(p['nobj'], p['thr']) for p in points if p['skip']]
    assert skipped == [(2, 1), (4, 1), (4, 2)] * 2
    assert all(p['skip'] == obdfilter.SKIP_THR_NOT_MULTIPLE for p in points if p['skip'])


def test_doubling_stops_at_or_below_the_high_value():
    assert list(obdfilter.doubling(3, 20)) == [3, 6, 12]
    assert list(obdfilter.doubling(8, 4)) == []


@pytest.mark.parametrize('size_mib, rsz, thr, page, expected', [
    (16, 1024, 1, 4, {'pages': 256, 'actual_rsz_kib': 1024, 'count': 16, 'size_kib': 16384}),
    (16, 1024, 4, 4, {'pages': 256, 'actual_rsz_kib': 1024, 'count': 4, 'size_kib': 16384}),
    # count is an integer division: 16384 / (1024 * 3) = 5, so 15 MiB move, not 16
    (16, 1024, 3, 4, {'pages': 256, 'actual_rsz_kib': 1024, 'count': 5, 'size_kib': 15360}),
    # a record that is not whole pages is rounded up, as the script does
    (1, 6, 1, 4, {'pages': 2, 'actual_rsz_kib': 8, 'count': 128, 'size_kib': 1024}),
    (1, 64, 1, 64, {'pages': 1, 'actual_rsz_kib': 64, 'count': 16, 'size_kib': 1024}),
    (1, 1024, 2, 4, {'pages': 256, 'actual_rsz_kib': 1024, 'count': 0, 'size_kib': 0}),
])
def test_point_arithmetic(size_mib, rsz, thr, page, expected):
    assert obdfilter.point_arithmetic(size_mib, rsz, thr, page) == expected


@pytest.mark.parametrize('test, verify, mode', [
    ('write', False, 'wx'), ('rewrite', False, 'wx'), ('rewrite_again', True, 'w'), ('read', False, 'rx'),
    ('reread', True, 'r'),
])
def test_mode_follows_the_test_name_and_verify(test, verify, mode):
    assert obdfilter.test_mode(test, verify) == mode


def test_test_brw_argv_is_the_scripts():
    assert obdfilter.test_brw_argv('X_ecc', 8, 2, 16, 'wx', 256, '0x2') == [
        'lctl', '--threads', '8', '-1', 'X_ecc', 'test_brw', '16', 'wx', 'q', '256', '4t0x2', 'p256']


def test_summary_line_parses_back_to_the_same_figures():
    line = obdfilter.summary_prefix(2, 32768, 1024, 4, 8)
    line += obdfilter.summary_test('write', {'mib_s': 812.455, 'min_mib_s': 380.0, 'max_mib_s': 452.0,
                                             'status': 'ok'})
    line += obdfilter.summary_test('rewrite', {'mib_s': 120.5, 'min_mib_s': None, 'max_mib_s': None,
                                               'status': 'error'})
    line += obdfilter.summary_test('read', {'mib_s': 40.0, 'min_mib_s': None, 'max_mib_s': None, 'status': 'short'})
    [record] = parse_obdfilter_survey(line)
    assert (record['ost'], record['size_kib'], record['rsz_kib'], record['obj'], record['thr']) == (2, 32768, 1024, 4, 8)
    assert record['tests']['write'] == {'mib_s': 812.46, 'min_mib_s': 380.0, 'max_mib_s': 452.0, 'status': 'ok'}
    assert record['tests']['rewrite']['status'] == 'error' and record['tests']['rewrite']['mib_s'] == 120.5
    assert record['tests']['read']['status'] == 'short'


# --------------------------------------------------------------------------
# Judging lctl output


def test_samples_are_collected_and_total_lines_ignored():
    judged = obdfilter_detail.parse_thread_samples(samples_output(2, [20.5, 19.5, 21.0], total=20.1))
    assert judged == {'rates': [20.5, 19.5, 21.0], 'count': 3, 'error_line': None, 'total_rate': 20.1}


def test_no_sample_counts_zero():
    judged = obdfilter_detail.parse_thread_samples(samples_output(1, [], total=300.0))
    assert judged['count'] == 0 and judged['rates'] == [] and judged['total_rate'] == 300.0


def test_a_line_with_error_makes_the_ost_an_error():
    text = samples_output(1, [10.0]) + 'error: test_brw-1: #3 - Input/output error on write\n'
    judged = obdfilter_detail.parse_thread_samples(text)
    assert judged['count'] == -1
    assert judged['error_line'] == 'error: test_brw-1: #3 - Input/output error on write'


def test_an_unexpected_line_after_the_first_sample_is_an_error_but_not_before():
    before = 'some banner\n' + samples_output(1, [10.0, 11.0])
    assert obdfilter_detail.parse_thread_samples(before)['count'] == 2
    after = samples_output(1, [10.0]) + '--threads: PID 4242 had rc=5\n'
    judged = obdfilter_detail.parse_thread_samples(after)
    assert judged['count'] == -1 and judged['error_line'] == '--threads: PID 4242 had rc=5'


def test_selected_device_line_resets_the_samples():
    text = samples_output(1, [5.0]) + 'Selected device 3\n' + '1/1 Total: 7.000000/second\n'
    assert obdfilter_detail.parse_thread_samples(text)['rates'] == [7.0]


@pytest.mark.parametrize('ids, problem', [
    ([2, 3, 4], None),
    ([2, 4, 5], 'created object ids are not contiguous: 0x2 0x4 0x5'),
    ([2, 3], '3 objects asked, 2 created'),
    ([], 'no object was created'),
])
def test_created_objects_must_be_contiguous(ids, problem):
    text = 'create: %d objects\n' % len(ids) + ''.join(
        'create: #%d is object id 0x%x\n' % (n + 1, value) for n, value in enumerate(ids))
    assert obdfilter.parse_created_objects(text, 3) == (ids, problem)


def test_id_ranges_keep_gaps_out():
    assert obdfilter.id_ranges([2, 3, 5, 6, 7, 10]) == [(2, 2), (5, 3), (10, 1)]


# --------------------------------------------------------------------------
# Versions, targets, options


@pytest.mark.parametrize('case, version, expected', [
    ('disk', '2.16.1', None),
    ('network', '2.15.5', None),
    ('network', '2.15.6', None),
    ('network', '2.15.7', 'removed in 2.15.7 and 2.16.0'),
    ('network', '2.16.1', 'cannot run on Lustre 2.16.1'),
    ('network', None, 'could not be read'),
    ('netdisk', '2.16.1', 'removed from obdfilter-survey in Lustre 2.15.6'),
    ('netdisk', '2.15.6', 'this node runs Lustre 2.15.6'),
    ('netdisk', '2.15.5', None),
    ('netdisk', '2.12.9', None),
    ('netdisk', None, 'this node runs Lustre unknown'),
])
def test_case_problem_names_the_version(case, version, expected):
    problem = obdfilter.case_problem(case, version)
    if expected is None:
        assert problem is None
    else:
        assert problem.startswith('case: ') and expected in problem


def devices_of(lustre):
    return [dict(device, refcount=3, nid=None, host=None) for device in lustre.devices]


def test_targets_default_to_every_up_obdfilter():
    lustre = FakeLustre(osts=('a-OST0000', 'a-OST0001', 'a-OST0002'))
    lustre.devices[3]['status'] = 'AT'
    assert obdfilter.select_targets(devices_of(lustre), []) == ['a-OST0000', 'a-OST0002']


@pytest.mark.parametrize('requested, message', [
    (['testfs-OST0009'], 'targets: testfs-OST0009 is not an obdfilter device on this node'),
    (['OSS'], 'targets: OSS is not an obdfilter device'),
    (['oss2:testfs-OST0000'], 'targets: oss2:testfs-OST0000 names host oss2'),
    (['testfs-OST0000', 'testfs-OST0000'], 'targets: testfs-OST0000 is listed twice'),
])
def test_bad_targets_are_refused_naming_the_option(requested, message):
    with pytest.raises(EngineError) as caught:
        obdfilter.select_targets(devices_of(FakeLustre()), requested)
    assert message in str(caught.value)


def test_a_target_that_is_not_up_is_refused():
    lustre = FakeLustre()
    lustre.devices[2]['status'] = 'IN'
    with pytest.raises(EngineError) as caught:
        obdfilter.select_targets(devices_of(lustre), ['testfs-OST0000', 'localhost:testfs-OST0001'])
    assert str(caught.value) == 'targets: testfs-OST0000 is in state IN, not UP'


def test_no_obdfilter_at_all_is_refused():
    with pytest.raises(EngineError) as caught:
        obdfilter.select_targets(devices_of(FakeLustre(osts=())), [])
    assert 'no UP obdfilter device' in str(caught.value)


@pytest.mark.parametrize('options, message', [
    ({'thrlo': 8, 'thrhi': 4}, 'thrlo: 8 is greater than thrhi (4)'),
    ({'nobjlo': 4, 'nobjhi': 2}, 'nobjlo: 4 is greater than nobjhi (2)'),
    ({'rszlo': 2048, 'rszhi': 1024}, 'rszlo: 2048 is greater than rszhi (1024)'),
    ({'rszhi': 8192}, 'rszhi: 8192 KiB is above the 4096 KiB'),
    ({'size_mib': 0}, 'size_mib: must be at least 1'),
    ({'thrhi': 8192}, "thrhi: 8192 is above lctl's limit"),
    ({'tests': ['read', 'write']}, "tests: the first test must be 'write'"),
    ({'tests': ['write', 'read', 'read']}, 'tests: each test may appear once'),
    ({'rszlo': 6, 'rszhi': 6}, 'rszlo: 6 KiB is not a whole number of 4 KiB pages'),
    ({'size_mib': 1, 'rszlo': 768, 'rszhi': 768}, 'size_mib: 1 MiB is not a multiple of the 768 KiB record'),
    ({'size_mib': 1, 'thrhi': 2}, 'size_mib: 1 MiB per OST is less than one 1024 KiB record for each of 2 threads'),
    ({'nobjlo': 4, 'nobjhi': 4, 'thrlo': 1, 'thrhi': 2}, 'thrhi: no thread count from thrlo (1) to thrhi (2)'),
])
def test_bad_options_are_found_before_anything_is_made(tmp_path, options, message):
    lustre = FakeLustre()
    survey, unused_state, unused_raw = make_survey(lustre, tmp_path, **options)
    assert any(str(problem).startswith(message) for problem in survey.problems()), survey.problems()
    assert lustre.commands == []


def test_plan_and_totals_per_ost(tmp_path):
    survey, unused_state, unused_raw = make_survey(FakeLustre(), tmp_path, size_mib=16, nobjhi=2, thrhi=2,
                                                   tests=['write', 'rewrite', 'read'])
    runnable = [p for p in survey.points() if p['skip'] is None]
    assert [(p['nobj'], p['thr'], p['count'], p['obj'], p['threads']) for p in runnable] == [
        (1, 1, 16, 2, 2), (1, 2, 8, 2, 4), (2, 2, 8, 4, 4)]
    totals = survey.totals_per_ost()
    assert sorted(totals) == list(OSTS)
    mib = 1024 * 1024
    assert totals[OSTS[0]] == {'bytes_written': 3 * 2 * 16 * mib, 'bytes_read': 3 * 16 * mib,
                               'objects_created': 4, 'max_objects_at_once': 2, 'max_bytes_at_once': 16 * mib}
    # what the plan estimator divides: each OST's bytes written and read (the OSTs run side by side)
    plan = {'points': survey.points(), 'per_ost': totals}
    assert plan_estimate.estimate('obdfilter', plan, 16)['estimated_duration_s'] == 9.0


# --------------------------------------------------------------------------
# Running


def test_a_sweep_runs_the_scripts_commands_in_order(tmp_path):
    lustre = FakeLustre()
    survey, state, raw = make_survey(lustre, tmp_path, size_mib=16, nobjhi=2, thrhi=2, tests=['write', 'read'])
    records = list(run_whole(survey))
    a, b = [ost + '_ecc' for ost in OSTS]
    sync = ['lctl', 'set_param', '-n', 'osd*.*.force_sync', '1']
    # obdecho is the module driver's to load and unload (test_obdfilter_survey.py)
    assert lustre.actions() == [
        ['lctl', 'attach', 'echo_client', a, a + '_UUID'], ['lctl', '--device', a, 'setup', OSTS[0]],
        ['lctl', 'attach', 'echo_client', b, b + '_UUID'], ['lctl', '--device', b, 'setup', OSTS[1]],
        # nobj 1, thr 1
        ['lctl', '--device', a, 'create', '1'], ['lctl', '--device', b, 'create', '1'],
        sync, brw(a, 1, 16, 'wx', 256, '1t0x2'), brw(b, 1, 16, 'wx', 256, '1t0x3'),
        sync, brw(a, 1, 16, 'rx', 256, '1t0x2'), brw(b, 1, 16, 'rx', 256, '1t0x3'),
        ['lctl', '--device', a, 'destroy', '0x2', '1'], ['lctl', '--device', b, 'destroy', '0x3', '1'],
        # nobj 1, thr 2
        ['lctl', '--device', a, 'create', '1'], ['lctl', '--device', b, 'create', '1'],
        sync, brw(a, 2, 8, 'wx', 256, '2t0x4'), brw(b, 2, 8, 'wx', 256, '2t0x5'),
        sync, brw(a, 2, 8, 'rx', 256, '2t0x4'), brw(b, 2, 8, 'rx', 256, '2t0x5'),
        ['lctl', '--device', a, 'destroy', '0x4', '1'], ['lctl', '--device', b, 'destroy', '0x5', '1'],
        # nobj 2, thr 1 is skipped (1 is not a multiple of 2); nobj 2, thr 2: one thread per object
        ['lctl', '--device', a, 'create', '2'], ['lctl', '--device', b, 'create', '2'],
        sync, brw(a, 2, 8, 'wx', 256, '1t0x6'), brw(b, 2, 8, 'wx', 256, '1t0x8'),
        sync, brw(a, 2, 8, 'rx', 256, '1t0x6'), brw(b, 2, 8, 'rx', 256, '1t0x8'),
        ['lctl', '--device', a, 'destroy', '0x6', '2'], ['lctl', '--device', b, 'destroy', '0x8', '2'],
        ['lctl', '--device', a, 'cleanup'], ['lctl', '--device', a, 'detach'],
        ['lctl', '--device', b, 'cleanup'], ['lctl', '--device', b, 'detach'],
    ]
    # the OSTs of a test run together, in one batch
    assert [len(batch) for batch in lustre.batches] == [2] * 6
    assert [(r['ost'], r['obj'], r['thr'], r['obj_per_ost'], r['thr_per_ost']) for r in records] == [
        (2, 2, 2, 1, 1), (2, 2, 4, 1, 2), (2, 4, 4, 2, 2)]
    assert survey.errors == [] and survey.aborted is None
    assert state.read()['echo_clients'] == [] and state.read()['modules'] == []
    assert not any(device['type'] == 'echo_client' for device in lustre.devices)
    assert len(parse_obdfilter_survey(raw.summary_text)) == 3


def test_figures_aggregate_from_wall_clock_min_max_from_per_ost_samples(tmp_path):
    lustre = FakeLustre(seconds_per_batch=4.0)
    lustre.brw[OSTS[0]] = lambda argv: (0, samples_output(1, [100.0, 120.0, 110.0], total=110.0), '')
    lustre.brw[OSTS[1]] = lambda argv: (0, samples_output(1, [30.0, 25.0], total=28.0), '')
    survey, unused_state, unused_raw = make_survey(lustre, tmp_path, size_mib=16, nobjhi=1, thrhi=1,
                                                   tests=['write'], rszlo=512, rszhi=512)
    [record] = list(run_whole(survey))
    write = record['tests']['write']
    # 2 OSTs x 16 MiB in 4 s of wall clock
    assert write['mib_s'] == pytest.approx(8.0)
    # samples are operations per second of one OST; x 512 KiB records
    assert (write['min_mib_s'], write['max_mib_s'], write['status']) == (12.5, 60.0, 'ok')
    fast, slow = record['per_ost'][OSTS[0]]['write'], record['per_ost'][OSTS[1]]['write']
    assert (fast['min_mib_s'], fast['max_mib_s'], fast['samples'], fast['status']) == (50.0, 60.0, 3, 'ok')
    assert (slow['min_mib_s'], slow['max_mib_s'], slow['samples'], slow['status']) == (12.5, 15.0, 2, 'ok')
    assert (fast['lctl_mib_s'], slow['lctl_mib_s']) == (55.0, 14.0)
    assert fast['mib_s'] == pytest.approx(4.0) and fast['elapsed_s'] == 4.0
    assert (record['rsz_kib'], record['size_kib'], record['count'], record['pages']) == (512, 32768, 32, 128)


def test_each_test_carries_its_wall_clock_window_in_run_order(tmp_path):
    lustre = FakeLustre(seconds_per_batch=4.0)
    survey, unused_state, unused_raw = make_survey(lustre, tmp_path, size_mib=16, nobjlo=1, nobjhi=2, thrhi=2,
                                                   tests=['write', 'rewrite', 'read'])
    records = list(run_whole(survey))
    windows = [(record['obj'], record['thr'], test, round(record['tests'][test]['start_time'] - WALL_ORIGIN, 3),
                round(record['tests'][test]['end_time'] - WALL_ORIGIN, 3))
               for record in records for test in ('write', 'rewrite', 'read')]
    # One test_brw batch per test, 4 s each on the fake clock, in sweep order and back to back.
    assert [window[:3] for window in windows] == [
        (obj, thr, test) for obj, thr in ((2, 2), (2, 4), (4, 4)) for test in ('write', 'rewrite', 'read')]
    assert [window[3:] for window in windows] == [(100.0 + 4.0 * index, 104.0 + 4.0 * index)
                                                  for index in range(len(windows))]


def test_short_when_any_ost_has_no_sample_error_wins_over_short(tmp_path):
    lustre = FakeLustre()
    outputs = {'write': samples_output(1, [], total=500.0), 'read': 'error: test_brw-1: #1 - bad\n'}

    def second_ost(argv):
        return 0, outputs['write' if argv[7].startswith('w') else 'read'], ''
    lustre.brw[OSTS[1]] = second_ost
    lustre.brw[OSTS[0]] = lambda argv: (0, samples_output(1, [] if argv[7] == 'rx' else [10.0]), '')
    survey, unused_state, unused_raw = make_survey(lustre, tmp_path, size_mib=16, nobjhi=1, thrhi=1,
                                                   tests=['write', 'read'])
    [record] = list(run_whole(survey))
    assert record['tests']['write']['status'] == 'short'
    assert record['tests']['write']['min_mib_s'] is None and record['tests']['write']['mib_s'] == 8.0
    assert record['tests']['read']['status'] == 'error'
    assert record['per_ost'][OSTS[0]]['write']['status'] == 'ok'
    assert record['per_ost'][OSTS[0]]['read']['status'] == 'short'
    assert survey.errors == [{'point': {'rsz_kib': 1024, 'nobj': 1, 'thr': 1, 'test': 'read'},
                              'message': 'read ERROR on testfs-OST0001: error: test_brw-1: #1 - bad'}]


def test_enomem_from_test_brw_is_an_error_and_the_sweep_goes_on(tmp_path):
    lustre = FakeLustre()
    lustre.brw[OSTS[0]] = lambda argv: (
        12, samples_output(1, []), 'error: test_brw-1: #1 - Cannot allocate memory on write\n'
                                   '--threads: PID 23335 had rc=12\n')
    survey, unused_state, unused_raw = make_survey(lustre, tmp_path, size_mib=16, nobjhi=1, thrhi=2, tests=['write'])
    records = list(run_whole(survey))
    assert len(records) == 2
    for record in records:
        assert record['tests']['write']['status'] == 'error'
        assert record['per_ost'][OSTS[0]]['write']['error'] == \
            'error: test_brw-1: #1 - Cannot allocate memory on write'
        assert record['per_ost'][OSTS[1]]['write']['status'] == 'ok'
    assert len(survey.errors) == 2 and 'Cannot allocate memory' in survey.errors[0]['message']


def test_a_failing_exit_without_error_text_is_still_an_error(tmp_path):
    lustre = FakeLustre()
    lustre.brw[OSTS[1]] = lambda argv: (1, samples_output(1, [10.0, 11.0]), '')
    survey, unused_state, unused_raw = make_survey(lustre, tmp_path, size_mib=16, nobjhi=1, thrhi=1, tests=['write'])
    [record] = list(run_whole(survey))
    assert record['per_ost'][OSTS[1]]['write']['status'] == 'error'
    assert record['per_ost'][OSTS[1]]['write']['error'] == 'lctl exited with rc 1'


def test_timeout_keeps_measured_points_and_undoes_everything(tmp_path):
    lustre = FakeLustre(stop_after_batches=3)
    survey, state, unused_raw = make_survey(lustre, tmp_path, size_mib=16, nobjhi=1, thrhi=4,
                                            tests=['write', 'read'])
    records = list(run_whole(survey))
    # point 1 (2 batches) complete; point 2 has its write, then its read was stopped
    assert len(records) == 2
    assert records[0]['tests']['read']['status'] == 'ok'
    assert records[1]['tests']['write']['status'] == 'ok'
    assert records[1]['tests']['read']['status'] == 'incomplete' and records[1]['tests']['read']['mib_s'] is None
    assert survey.aborted == 'timeout'
    assert survey.errors[-1] == {'point': {'rsz_kib': 1024, 'nobj': 1, 'thr': 2, 'test': 'read'},
                                 'message': 'read interrupted: timeout'}
    # the stopped point's objects are destroyed, then the echo clients
    tail = lustre.actions()[-6:]
    assert tail == [['lctl', '--device', OSTS[0] + '_ecc', 'destroy', '0x4', '1'],
                    ['lctl', '--device', OSTS[1] + '_ecc', 'destroy', '0x5', '1'],
                    ['lctl', '--device', OSTS[0] + '_ecc', 'cleanup'], ['lctl', '--device', OSTS[0] + '_ecc', 'detach'],
                    ['lctl', '--device', OSTS[1] + '_ecc', 'cleanup'], ['lctl', '--device', OSTS[1] + '_ecc', 'detach']]
    assert not any('thr' in argv for argv in lustre.commands)
    assert state.read()['echo_clients'] == [] and state.read()['modules'] == []


def test_a_stop_before_a_point_runs_nothing_more(tmp_path):
    lustre = FakeLustre()
    survey, unused_state, unused_raw = make_survey(lustre, tmp_path, size_mib=16, nobjhi=1, thrhi=2, tests=['write'])
    lustre.stop_reason = 'terminated by signal 15'
    assert list(run_whole(survey)) == []
    assert not any('create' in argv for argv in lustre.commands)
    assert survey.errors == [{'point': {'rsz_kib': 1024, 'nobj': 1, 'thr': 1},
                              'message': 'not run: terminated by signal 15'}]


def test_non_contiguous_objects_stop_the_survey_and_destroy_what_was_made(tmp_path):
    lustre = FakeLustre(created_ids=[7, 9])
    survey, state, raw = make_survey(lustre, tmp_path, size_mib=16, nobjlo=2, nobjhi=2, thrlo=2, thrhi=2,
                                     tests=['write'])
    [record] = list(run_whole(survey))
    assert record['tests'] == {}
    assert record['error'].startswith('created object #s on localhost:testfs-OST0000_ecc not contiguous')
    assert survey.aborted == 'object creation failed'
    ecc = OSTS[0] + '_ecc'
    # only the ids we got, never the gap between them
    assert ['lctl', '--device', ecc, 'destroy', '0x7', '1'] in lustre.commands
    assert ['lctl', '--device', ecc, 'destroy', '0x9', '1'] in lustre.commands
    assert not any('test_brw' in argv for argv in lustre.commands)
    assert state.read()['echo_clients'] == []
    assert 'not contiguous' in raw.summary_text


def test_everything_is_recorded_before_it_is_made(tmp_path):
    lustre = FakeLustre()
    survey, state, unused_raw = make_survey(lustre, tmp_path, size_mib=16, nobjhi=1, thrhi=1, tests=['write'])
    list(run_whole(survey))
    first_attach = lustre.state_at['attach %s_ecc' % OSTS[0]]['echo_clients']
    assert [(e['name'], e['target'], e['run_id']) for e in first_attach] == [(OSTS[0] + '_ecc', OSTS[0], 'run-1')]
    at_create = lustre.state_at['create %s_ecc' % OSTS[1]]['echo_clients']
    # the first OST's objects are known; the second's count is written before its ids exist
    assert [e['objects'] for e in at_create] == [[{'first': 2, 'count': 1}], [{'first': None, 'count': 1}]]
    assert state.read()['echo_clients'] == [] and state.read()['modules'] == []


def test_a_leftover_echo_client_is_reused_then_removed_and_obdecho_left_alone(tmp_path):
    lustre = FakeLustre(leftover=[OSTS[0]])
    survey, state, unused_raw = make_survey(lustre, tmp_path, size_mib=16, nobjhi=1, thrhi=1, tests=['write'])
    [record] = list(run_whole(survey))
    assert record['tests']['write']['status'] == 'ok'
    assert survey.reused_echo_clients == [OSTS[0] + '_ecc']
    attaches = [argv for argv in lustre.commands if argv[1:2] == ['attach']]
    assert attaches == [['lctl', 'attach', 'echo_client', OSTS[1] + '_ecc', OSTS[1] + '_ecc_UUID']]
    assert ['lctl', '--device', OSTS[0] + '_ecc', 'detach'] in lustre.commands
    assert ['modprobe', 'obdecho'] not in lustre.commands and ['rmmod', 'obdecho'] not in lustre.commands
    assert state.read()['echo_clients'] == []


def test_a_half_made_leftover_is_detached_before_attaching(tmp_path):
    lustre = FakeLustre(leftover=[OSTS[0]])
    lustre.find(OSTS[0] + '_ecc')['status'] = 'AT'
    survey, unused_state, unused_raw = make_survey(lustre, tmp_path, targets=OSTS[:1], size_mib=16, nobjhi=1,
                                                   thrhi=1, tests=['write'])
    assert len(list(run_whole(survey))) == 1
    name = OSTS[0] + '_ecc'
    assert lustre.actions()[:3] == [['lctl', '--device', name, 'detach'],
                                    ['lctl', 'attach', 'echo_client', name, name + '_UUID'],
                                    ['lctl', '--device', name, 'setup', OSTS[0]]]


def test_failed_setup_reports_and_tears_down_what_was_made(tmp_path):
    lustre = FakeLustre()
    original = lustre.answer

    def refuse_second_setup(argv):
        if argv[-2:] == ['setup', OSTS[1]]:
            return 22, '', 'error: setup: Invalid argument\n'
        return original(argv)
    lustre.answer = refuse_second_setup
    survey, state, unused_raw = make_survey(lustre, tmp_path, size_mib=16, nobjhi=1, thrhi=1, tests=['write'])
    assert list(run_whole(survey)) == []
    assert survey.aborted == 'setup failed'
    assert "can't set up echo-client testfs-OST0001_ecc" in survey.errors[0]['message']
    assert 'Invalid argument' in survey.errors[0]['message']
    assert not any(device['type'] == 'echo_client' for device in lustre.devices)
    assert state.read()['echo_clients'] == []


# --------------------------------------------------------------------------
# engine: iokit


SCRIPT_SUMMARY = (
    'Mon Nov 23 10:00:00 UTC 2026 Obdfilter-survey for case=disk from oss1\n'
    'ost  2 sz    32768K rsz 1024K obj    2 thr    2 write   40.10 [  19.00,   21.00] read   41.00 [  20.00,   22.00] \n'
    'ost  2 sz    32768K rsz 1024K obj    2 thr    4 write   39.00             ERROR read   40.00             SHORT \n')


class ScriptRunner:
    def __init__(self, summary=None, stdout='done!\n', rc=0, timed_out=False):
        self.summary = summary
        self.stdout = stdout
        self.rc = rc
        self.timed_out = timed_out
        self.calls = []
        self.stop_reason = 'timeout' if timed_out else None

    def run(self, argv, env=None, cwd=None):
        self.calls.append((list(argv), dict(env or {})))
        if self.summary is not None:
            with open(env['rslt'] + '.summary', 'w') as handle:
                handle.write(self.summary)
        return CommandResult(argv, self.rc, self.stdout, '', 1.0, self.timed_out)


def iokit_parameters(**change):
    parameters = dict(targets=list(OSTS), size_mib=16, rszlo=1024, rszhi=1024, nobjlo=1, nobjhi=1, thrlo=1,
                      thrhi=2, tests=['write', 'read'], verify=False)
    parameters.update(change)
    return parameters


def test_iokit_gets_the_same_parameters_through_its_environment(tmp_path):
    runner = ScriptRunner(summary=SCRIPT_SUMMARY)
    rslt = str(tmp_path / 'obdfilter_survey')
    records, errors, unused = obdfilter_iokit.run_iokit(runner, '/usr/bin/obdfilter-survey', rslt, **iokit_parameters())
    [(argv, env)] = runner.calls
    assert argv == ['bash', '/usr/bin/obdfilter-survey']
    assert env == {'case': 'disk', 'targets': 'testfs-OST0000 testfs-OST0001', 'size': '16', 'rszlo': '1024',
                   'rszhi': '1024', 'nobjlo': '1', 'nobjhi': '1', 'thrlo': '1', 'thrhi': '2',
                   'tests_str': 'write read', 'verify': '0', 'rslt': rslt}
    assert [(r['thr'], r['tests']['write']['status'], r['tests']['read']['status']) for r in records] == [
        (2, 'ok', 'ok'), (4, 'error', 'short')]
    # SHORT is a finding, not an error; ERROR is
    assert errors == [{'point': {'rsz_kib': 1024, 'obj': 2, 'thr': 4, 'test': 'write'},
                       'message': 'write ERROR (see the .detail file)'}]


def test_iokit_exit_status_zero_without_result_is_a_failure(tmp_path):
    stdout = "Can't find any OSTs to test.  Please set targets=...\ndone!\n"
    runner = ScriptRunner(stdout=stdout, rc=0)
    records, errors, unused = obdfilter_iokit.run_iokit(runner, 'obdfilter-survey', str(tmp_path / 'r'),
                                                        **iokit_parameters())
    assert records == []
    assert errors == [{'point': None, 'message': "obdfilter-survey produced no result: Can't find any OSTs to test."
                                                 "  Please set targets=..."}]


def test_iokit_non_contiguous_objects_are_an_error(tmp_path):
    summary = ('ost  2 sz    32768K rsz 1024K obj    2 thr    2 '
               'created object #s on localhost:testfs-OST0000_ecc not contiguous\n')
    records, errors, unused = obdfilter_iokit.run_iokit(ScriptRunner(summary=summary), 'obdfilter-survey',
                                                        str(tmp_path / 'r'), **iokit_parameters())
    assert len(records) == 1 and 'not contiguous' in errors[0]['message']


def test_iokit_stopped_by_the_deadline_says_so(tmp_path):
    runner = ScriptRunner(summary=SCRIPT_SUMMARY.splitlines(True)[1], rc=-15, timed_out=True)
    records, errors, unused = obdfilter_iokit.run_iokit(runner, 'obdfilter-survey', str(tmp_path / 'r'),
                                                        **iokit_parameters())
    assert len(records) == 1
    assert errors[-1] == {'point': None, 'message': 'obdfilter-survey stopped: timeout'}


def test_iokit_summary_missing_falls_back_to_stdout(tmp_path):
    runner = ScriptRunner(stdout=SCRIPT_SUMMARY + 'done!\n')
    records, unused_errors, unused = obdfilter_iokit.run_iokit(runner, 'obdfilter-survey', str(tmp_path / 'r'),
                                                               **iokit_parameters())
    assert len(records) == 2 and not os.path.exists(str(tmp_path / 'r.summary'))


SCRIPT_DETAIL = (
    '=======================> ost  2 sz    32768K rsz 1024K obj    2 thr    2 \n'
    '=============> Create 1 on localhost:testfs-OST0000_ecc\n'
    'create: 1 objects\ncreate: #1 is object id 0x2\n'
    '=============> write localhost:testfs-OST0000_ecc\n'
    + samples_output(1, [19.0, 21.0], total=20.0) +
    '=============> write localhost:testfs-OST0001_ecc\n'
    + samples_output(1, [5.0, 4.0, 4.5]) +
    '=============> write global\n2 19.000000 21.000000\n3 4.000000 5.000000\n'
    '=============> read localhost:testfs-OST0000_ecc\n'
    + samples_output(1, []) +
    '=============> read localhost:testfs-OST0001_ecc\n'
    'error: test_brw-1: #1 - Input/output error on read\n'
    '=============> Destroy 1 on localhost:testfs-OST0000_ecc\n'
    'destroy: 1 objects\n')


def test_iokit_detail_gives_every_osts_figures():
    points = obdfilter_detail.parse_obdfilter_detail(SCRIPT_DETAIL)
    assert list(points) == [(2, 32768, 1024, 2, 2)]
    per_ost = points[(2, 32768, 1024, 2, 2)]
    assert per_ost['testfs-OST0000']['write'] == {
        'mib_s': None, 'min_mib_s': 19.0, 'max_mib_s': 21.0, 'samples': 2, 'lctl_mib_s': 20.0, 'error': None,
        'status': 'ok'}
    assert (per_ost['testfs-OST0001']['write']['min_mib_s'], per_ost['testfs-OST0001']['write']['max_mib_s']) == \
        (4.0, 5.0)
    assert per_ost['testfs-OST0000']['read']['status'] == 'short'
    assert per_ost['testfs-OST0001']['read']['status'] == 'error'
    assert per_ost['testfs-OST0001']['read']['error'] == 'error: test_brw-1: #1 - Input/output error on read'


def test_iokit_records_get_per_ost_figures_from_the_detail_file(tmp_path):
    rslt = str(tmp_path / 'r')
    with open(rslt + '.detail', 'w') as handle:
        handle.write(SCRIPT_DETAIL)
    records, unused_errors, unused = obdfilter_iokit.run_iokit(ScriptRunner(summary=SCRIPT_SUMMARY), 'obdfilter-survey',
                                                               rslt, **iokit_parameters())
    assert records[0]['per_ost']['testfs-OST0001']['write']['max_mib_s'] == 5.0
    # the second point has no section in this detail file: no per_ost rather than a wrong one
    assert 'per_ost' not in records[1]


# --------------------------------------------------------------------------
# case=network

SERVER = '192.168.1.21'
SSH = ['ssh', '-o', 'BatchMode=yes']
QUIET_SERVER_COMMANDS = (['lsmod'], ['lctl', 'dl'], ['lctl', 'get_param', '-n', 'version'])


class TwoNodes:
    """A client node and the echo server behind ``ssh <server> '<command>'``: every command lands on one of them.

    ``log`` keeps ``('client'|'server', argv)`` in the order the commands ran.
    """

    def __init__(self, client, server):
        self.client = client
        self.server = server
        self.clock = client.clock
        self.log = []
        self.stop_reason = None

    def expired(self):
        return self.client.expired()

    def run(self, argv, env=None, cwd=None):
        return self.run_many([argv], env=env)[0]

    def run_many(self, argvs, env=None, cwd=None):
        results = []
        for argv in argvs:
            if argv[:len(SSH)] == SSH:
                assert argv[len(SSH)] == SERVER and len(argv) == len(SSH) + 2, argv
                words = shlex.split(argv[-1])
                assert words[:3] == ['env', 'LANG=C', 'LC_ALL=C'], words
                self.log.append(('server', words[3:]))
                rc, out, err = self.server.answer(words[3:])
                self.server.commands.append(words[3:])
                results.append(CommandResult(argv, rc, out, err, 0.01))
            else:
                self.log.append(('client', list(argv)))
                results.append(self.client.run_many([argv], env=env)[0])
        return results

    def actions(self):
        return [(side, argv) for side, argv in self.log
                if argv not in QUIET_SERVER_COMMANDS and argv not in (['lsmod'], ['lctl', 'dl'])]


def network_nodes(server_has_oss=True, server_obdecho=True):
    client = FakeLustre(osts=())
    client.devices = [device for device in client.devices if device['type'] != 'ost']
    server = FakeLustre(obdecho_loaded=server_obdecho)
    if not server_has_oss:
        server.devices = [device for device in server.devices if device['type'] != 'ost']
    return TwoNodes(client, server)


def make_network_survey(nodes, tmp_path, **options):
    state = NodeState(str(tmp_path / 'work'))
    nodes.client.node_state = state
    options.setdefault('size_mib', 16)
    raw = RawSink()
    server_runner = obdfilter_network.RemoteRunner(nodes, SSH, SERVER)
    survey = obdfilter_network.NetworkSurvey(context_of(nodes, state, 'client1', options), SERVER, SERVER + '@tcp',
                                             raw=raw, server_runner=server_runner, **options)
    return survey, state, raw


def gbrw(thr, count, mode, objspec):
    return ['lctl', '--threads', str(thr), '-1', 'echotmp_ecc', 'test_brw', str(count), mode, 'q', '256', objspec,
            'g256']


def test_network_case_sets_up_both_nodes_as_the_iokit_does_and_undoes_it_all(tmp_path):
    nodes = network_nodes()
    survey, state, raw = make_network_survey(nodes, tmp_path, thrhi=2, nobjhi=1, tests=['write', 'read'])
    records = list(run_whole(survey))
    sync = ['lctl', 'set_param', '-n', 'osd*.*.force_sync', '1']
    assert nodes.actions() == [
        ('server', ['lctl', 'attach', 'obdecho', 'echo_srv', 'echo_srv_UUID']),
        ('server', ['lctl', '--device', 'echo_srv', 'setup']),
        ('client', ['lctl', 'add_uuid', 'echo_UUID', '192.168.1.21@tcp']),
        ('client', ['lctl', 'attach', 'osc', 'echotmp', 'echotmp_UUID']),
        ('client', ['lctl', '--device', 'echotmp', 'setup', 'echo_srv_UUID', 'echo_UUID']),
        ('client', ['lctl', 'attach', 'echo_client', 'echotmp_ecc', 'echotmp_ecc_UUID']),
        ('client', ['lctl', '--device', 'echotmp_ecc', 'setup', 'echotmp']),
        ('client', ['lctl', '--device', 'echotmp_ecc', 'create', '1']),
        ('client', sync), ('client', gbrw(1, 16, 'wx', '1t0x2')),
        ('client', sync), ('client', gbrw(1, 16, 'rx', '1t0x2')),
        ('client', ['lctl', '--device', 'echotmp_ecc', 'destroy', '0x2', '1']),
        ('client', ['lctl', '--device', 'echotmp_ecc', 'create', '1']),
        ('client', sync), ('client', gbrw(2, 8, 'wx', '2t0x3')),
        ('client', sync), ('client', gbrw(2, 8, 'rx', '2t0x3')),
        ('client', ['lctl', '--device', 'echotmp_ecc', 'destroy', '0x3', '1']),
        ('client', ['lctl', '--device', 'echotmp_ecc', 'cleanup']),
        ('client', ['lctl', '--device', 'echotmp_ecc', 'detach']),
        ('client', ['lctl', '--device', 'echotmp', 'cleanup']),
        ('client', ['lctl', '--device', 'echotmp', 'detach']),
        ('client', ['lctl', 'del_uuid', 'echo_UUID']),
        ('server', ['lctl', '--device', 'echo_srv', 'cleanup']),
        ('server', ['lctl', '--device', 'echo_srv', 'detach']),
    ]
    assert [(r['case'], r['ost'], r['obj'], r['thr'], r['targets']) for r in records] == [
        ('network', 1, 1, 1, [SERVER]), ('network', 1, 1, 2, [SERVER])]
    assert records[0]['tests']['write']['status'] == 'ok' and list(records[0]['per_ost']) == [SERVER]
    assert survey.errors == [] and survey.aborted is None
    # the server's own devices and module are as they were; nothing of ours is left on the client
    assert [d['name'] for d in nodes.server.devices] == ['MGC192.168.1.10@tcp', 'OSS', OSTS[0], OSTS[1]]
    assert nodes.server.obdecho_loaded and nodes.client.uuids == {}
    assert [d['name'] for d in nodes.client.devices] == ['MGC192.168.1.10@tcp']
    assert state.read()['echo_clients'] == [] and state.read()['modules'] == []
    assert 'Obdfilter-survey for case=network from client1' in raw.summary_text
    assert len(parse_obdfilter_survey(raw.summary_text)) == 2


def test_network_case_makes_the_oss_service_and_loads_obdecho_on_a_bare_server_then_removes_them(tmp_path):
    nodes = network_nodes(server_has_oss=False, server_obdecho=False)
    survey, state, raw = make_network_survey(nodes, tmp_path, thrhi=1, nobjhi=1, tests=['write'])
    list(run_whole(survey))
    server = [argv for side, argv in nodes.actions() if side == 'server']
    assert server == [
        ['modprobe', 'obdecho'],
        ['lctl', 'attach', 'obdecho', 'echo_srv', 'echo_srv_UUID'], ['lctl', '--device', 'echo_srv', 'setup'],
        ['lctl', 'attach', 'ost', 'OSS', 'OSS_UUID'], ['lctl', '--device', 'OSS', 'setup'],
        ['lctl', '--device', 'OSS', 'cleanup'], ['lctl', '--device', 'OSS', 'detach'],
        ['lctl', '--device', 'echo_srv', 'cleanup'], ['lctl', '--device', 'echo_srv', 'detach'],
        ['rmmod', 'obdecho'],
    ]
    assert survey.errors == [] and not nodes.server.obdecho_loaded
    assert not any(d['type'] in ('obdecho', 'ost') for d in nodes.server.devices)


def test_network_case_uses_an_up_echo_server_of_another_client_and_leaves_it(tmp_path):
    nodes = network_nodes()
    nodes.server.devices.append({'index': 9, 'status': 'UP', 'type': 'obdecho', 'name': 'echo_srv',
                                 'uuid': 'echo_srv_UUID'})
    survey, state, raw = make_network_survey(nodes, tmp_path, thrhi=1, nobjhi=1, tests=['write'])
    list(run_whole(survey))
    assert [argv for side, argv in nodes.actions() if side == 'server'] == []
    assert survey.server_reused == ['echo_srv'] and survey.errors == []
    assert nodes.server.find('echo_srv')['status'] == 'UP'


def test_network_case_refuses_a_leftover_echotmp_before_touching_either_node(tmp_path):
    nodes = network_nodes()
    nodes.client.devices.append({'index': 5, 'status': 'UP', 'type': 'osc', 'name': 'echotmp',
                                 'uuid': 'echotmp_UUID'})
    survey, state, raw = make_network_survey(nodes, tmp_path, thrhi=1, nobjhi=1, tests=['write'])
    assert list(run_whole(survey)) == []
    assert nodes.actions() == []
    assert survey.aborted == 'setup failed'
    assert 'osc device echotmp already exists' in survey.errors[0]['message']
    assert 'playbooks/cleanup.yml' in survey.errors[0]['message']


def test_network_case_undoes_the_server_side_when_the_client_side_fails(tmp_path):
    nodes = network_nodes()
    original = nodes.client.answer

    def refuse_osc(argv):
        if argv[:3] == ['lctl', '--device', 'echotmp'] and argv[3:4] == ['setup']:
            return 1, '', 'setup: echotmp: Connection refused\n'
        return original(argv)
    nodes.client.answer = refuse_osc
    survey, state, raw = make_network_survey(nodes, tmp_path, thrhi=1, nobjhi=1, tests=['write'])
    assert list(run_whole(survey)) == []
    assert 'cannot connect an osc to the echo server 192.168.1.21 (192.168.1.21@tcp)' in survey.errors[0]['message']
    assert nodes.server.find('echo_srv') is None and nodes.client.find('echotmp') is None
    assert nodes.client.uuids == {} and not nodes.client.obdecho_loaded


def test_network_case_einval_of_the_removed_kbrw_path_is_an_error_per_point(tmp_path):
    nodes = network_nodes()
    nodes.client.brw['echotmp'] = lambda argv: (1, '', 'error: test_brw: Invalid argument\n')
    survey, state, raw = make_network_survey(nodes, tmp_path, thrhi=1, nobjhi=1, tests=['write'])
    [record] = list(run_whole(survey))
    assert record['tests']['write']['status'] == 'error'
    assert 'Invalid argument' in survey.errors[0]['message']


def test_network_plan_lists_the_setup_of_both_nodes(tmp_path):
    nodes = network_nodes()
    survey, state, raw = make_network_survey(nodes, tmp_path, thrhi=1, nobjhi=1, tests=['write', 'read'])
    setup = survey.setup_commands()
    assert setup['server'][1] == SSH + [SERVER, 'env LANG=C LC_ALL=C lctl attach obdecho echo_srv echo_srv_UUID']
    assert setup['client'][3] == ['lctl', '--device', 'echotmp', 'setup', 'echo_srv_UUID', 'echo_UUID']
    assert survey.totals_per_ost() == {SERVER: {
        'bytes_written': 16 * 1024 * 1024, 'bytes_read': 16 * 1024 * 1024, 'objects_created': 1,
        'max_objects_at_once': 1, 'max_bytes_at_once': 16 * 1024 * 1024, 'stored_on_server': False}}
    assert nodes.log == []


@pytest.mark.parametrize('server, nid', [
    ('10.0.0.5', '10.0.0.5@tcp'),
    ('10.0.0.5@o2ib1', '10.0.0.5@o2ib1'),
    ('oss7', '10.9.8.7@tcp'),
])
def test_network_peer_gives_the_ssh_host_and_the_nid(server, nid):
    host, got = obdfilter_network.network_peer(server, resolve=lambda name: {'oss7': '10.9.8.7'}[name])
    assert got == nid and host == server.split('@')[0]


def test_network_peer_that_does_not_resolve_names_targets():
    def fail(name):
        raise OSError('Name or service not known')
    with pytest.raises(EngineError, match='^targets: the server nowhere does not resolve'):
        obdfilter_network.network_peer('nowhere', resolve=fail)


def test_remote_runner_quotes_each_word_and_runs_locally_without_a_shell():
    seen = []

    class Recorder:
        def run(self, argv, env=None, cwd=None):
            seen.append(argv)
    obdfilter_network.RemoteRunner(Recorder(), ['ssh'], 'oss1').run(['lctl', 'set_param', "a b'c"])
    obdfilter_network.RemoteRunner(Recorder(), [], 'oss1').run(['lctl', 'dl'])
    assert seen[0][:2] == ['ssh', 'oss1'] and shlex.split(seen[0][2]) == [
        'env', 'LANG=C', 'LC_ALL=C', 'lctl', 'set_param', "a b'c"]
    assert seen[1] == ['lctl', 'dl']


def test_mounted_client_oscs_leave_the_mdt_ones_out():
    devices = [{'type': 'osc', 'status': 'UP', 'name': 'testfs-OST0000-osc-ffff8800'},
               {'type': 'osc', 'status': 'UP', 'name': 'testfs-OST0000-osc-MDT0000'},
               {'type': 'osc', 'status': 'AT', 'name': 'testfs-OST0001-osc-ffff8800'}]
    assert obdfilter_network.mounted_client_oscs(devices) == ['testfs-OST0000-osc-ffff8800']


# --------------------------------------------------------------------------
# case=netdisk

CLIENT_OSCS = [
    {'index': 5, 'status': 'UP', 'type': 'osc', 'name': 'testfs-OST0000-osc-ffff8a01', 'uuid': 'c5',
     'nid': '10.0.0.21@tcp'},
    {'index': 6, 'status': 'UP', 'type': 'osc', 'name': 'testfs-OST0001-osc-ffff8a01', 'uuid': 'c6',
     'nid': '10.0.0.21@tcp'},
    {'index': 7, 'status': 'UP', 'type': 'osc', 'name': 'testfs-OST0002-osc-ffff8a01', 'uuid': 'c7',
     'nid': '10.0.0.22@tcp'},
    {'index': 8, 'status': 'UP', 'type': 'osc', 'name': 'testfs-OST0000-osc-MDT0000', 'uuid': 'c8',
     'nid': '10.0.0.21@tcp'},
]


def test_netdisk_targets_come_from_the_mounted_clients_oscs_and_their_nids():
    assert obdfilter_network.netdisk_targets(CLIENT_OSCS, []) == [
        ('testfs-OST0000', '10.0.0.21@tcp'), ('testfs-OST0001', '10.0.0.21@tcp'),
        ('testfs-OST0002', '10.0.0.22@tcp')]


def test_netdisk_named_targets_take_the_host_or_the_oscs_nid():
    peers = obdfilter_network.netdisk_targets(CLIENT_OSCS, ['oss9:testfs-OST0009', 'testfs-OST0002'], nettype='o2ib',
                                              resolve=lambda name: {'oss9': '10.0.0.29'}[name])
    assert peers == [('testfs-OST0009', '10.0.0.29@o2ib'), ('testfs-OST0002', '10.0.0.22@tcp')]


@pytest.mark.parametrize('devices, requested, message', [
    ([], [], 'targets: case=netdisk found no UP osc device here'),
    (CLIENT_OSCS, ['testfs-OST0007'], 'targets: testfs-OST0007 has no UP osc with a NID on this node'),
    (CLIENT_OSCS, ['testfs-OST0002', 'testfs-OST0002'], 'listed twice'),
    ([dict(CLIENT_OSCS[0], nid=None)], [], 'lctl dl -t shows no NID for the osc of testfs-OST0000'),
])
def test_netdisk_bad_targets_name_the_option(devices, requested, message):
    with pytest.raises(EngineError, match=message):
        obdfilter_network.netdisk_targets(devices, requested)


def make_netdisk_survey(lustre, tmp_path, peers, **options):
    state = NodeState(str(tmp_path / 'work'))
    lustre.node_state = state
    options.setdefault('size_mib', 16)
    raw = RawSink()
    survey = obdfilter_network.NetdiskSurvey(context_of(lustre, state, 'client1', options), peers, raw=raw, **options)
    return survey, state, raw


def test_netdisk_builds_oscs_and_echo_clients_per_ost_runs_g_batches_together_and_undoes_it(tmp_path):
    lustre = FakeLustre(osts=())
    peers = [('testfs-OST0000', '10.0.0.21@tcp'), ('testfs-OST0001', '10.0.0.21@tcp'),
             ('testfs-OST0002', '10.0.0.22@tcp')]
    survey, state, raw = make_netdisk_survey(lustre, tmp_path, peers, nobjhi=1, thrhi=1, tests=['write'])
    [record] = list(run_whole(survey))
    osc = ['testfs-OST000%d_osc' % n for n in range(3)]
    ecc = [name + '_ecc' for name in osc]
    setup = [['lctl', 'add_uuid', 'host_0_UUID', '10.0.0.21@tcp']]
    for n in range(3):
        if n == 2:
            setup.append(['lctl', 'add_uuid', 'host_1_UUID', '10.0.0.22@tcp'])
        setup += [['lctl', 'attach', 'osc', osc[n], osc[n] + '_UUID'],
                  ['lctl', '--device', osc[n], 'setup', 'testfs-OST000%d_UUID' % n, 'host_%d_UUID' % (n // 2)],
                  ['lctl', 'attach', 'echo_client', ecc[n], ecc[n] + '_UUID'],
                  ['lctl', '--device', ecc[n], 'setup', osc[n]]]
    brws = [['lctl', '--threads', '1', '-1', ecc[n], 'test_brw', '16', 'wx', 'q', '256', '1t0x%x' % (n + 2), 'g256']
            for n in range(3)]
    assert lustre.actions() == setup + [['lctl', '--device', name, 'create', '1'] for name in ecc] + [
        ['lctl', 'set_param', '-n', 'osd*.*.force_sync', '1']] + brws + [
        ['lctl', '--device', ecc[n], 'destroy', '0x%x' % (n + 2), '1'] for n in range(3)] + [
        step for name in ecc for step in (['lctl', '--device', name, 'cleanup'], ['lctl', '--device', name, 'detach'])
    ] + [
        step for name in osc for step in (['lctl', '--device', name, 'cleanup'], ['lctl', '--device', name, 'detach'])
    ] + [['lctl', 'del_uuid', 'host_0_UUID'], ['lctl', 'del_uuid', 'host_1_UUID']]
    assert lustre.batches == [brws]
    assert (record['case'], record['ost'], record['targets']) == ('netdisk', 3, [p[0] for p in peers])
    assert survey.errors == [] and lustre.uuids == {} and state.read()['echo_clients'] == []
    assert [d['name'] for d in lustre.devices] == ['MGC192.168.1.10@tcp', 'OSS']
    # the plan: both UUIDs first, then what setup ran per OST
    planned = survey.setup_commands()['client']
    # the plan lists the driver's modprobe first, as setup needs it done
    assert planned[0] == ['modprobe', 'obdecho', '(if not loaded)']
    assert planned[1:3] == [['lctl', 'add_uuid', 'host_0_UUID', '10.0.0.21@tcp'],
                            ['lctl', 'add_uuid', 'host_1_UUID', '10.0.0.22@tcp']]
    assert planned[3:] == [argv for argv in setup if argv[1] != 'add_uuid']


def test_netdisk_refuses_leftover_oscs_before_making_anything(tmp_path):
    lustre = FakeLustre(osts=())
    lustre.devices.append({'index': 9, 'status': 'UP', 'type': 'osc', 'name': 'testfs-OST0000_osc', 'uuid': 'x'})
    survey, state, raw = make_netdisk_survey(lustre, tmp_path, [('testfs-OST0000', '10.0.0.21@tcp')], nobjhi=1,
                                             thrhi=1, tests=['write'])
    assert list(run_whole(survey)) == []
    assert lustre.actions() == []
    assert survey.errors[0]['message'].startswith('testfs-OST0000_osc already exist on this node')


# --------------------------------------------------------------------------
# adaptive sweep


class CurveLustre(FakeLustre):
    """OSTs that saturate: a test_brw batch takes 16 s at one thread, half that at two, down to 4 s from
    ``knee`` threads on; each OST's one-second samples are its own rate with ``sample_spread`` either way."""

    def __init__(self, knee=4, sample_spread=0.0, **options):
        FakeLustre.__init__(self, **options)
        self.knee = knee
        self.sample_spread = sample_spread

    def run_many(self, argvs, env=None, cwd=None):
        brw = [argv for argv in argvs if 'test_brw' in argv]
        if brw:
            thr = int(brw[0][2])
            self.seconds_per_batch = 16.0 / min(thr, self.knee)
            # 16 MiB per OST in 1 MiB records: records per second of one OST
            rate = 16.0 / self.seconds_per_batch
            samples = samples_output(thr, [rate * (1 - self.sample_spread), rate * (1 + self.sample_spread)])
            for ost in OSTS:
                self.brw[ost] = lambda argv, samples=samples: (0, samples, '')
        return FakeLustre.run_many(self, argvs, env=env, cwd=cwd)


def run_adaptive(tmp_path, **options):
    lustre = CurveLustre(knee=options.pop('knee', 4), sample_spread=options.pop('sample_spread', 0.0))
    survey, unused_state, unused_raw = make_survey(lustre, tmp_path, size_mib=16, nobjlo=1, nobjhi=2, thrhi=16,
                                                   tests=['write', 'read'])
    survey.inner_sweeps = adaptive.InnerSweeps(**options)
    records = list(run_whole(survey))
    return survey, [(record['obj_per_ost'], record['thr_per_ost']) for record in records]


def test_adaptive_sweep_stops_each_thread_sweep_one_point_past_the_knee(tmp_path):
    survey, points = run_adaptive(tmp_path, mode='adaptive')
    assert points == [(1, 1), (1, 2), (1, 4), (1, 8), (2, 2), (2, 4), (2, 8)]
    # each OST's curve of each test stopped, and the reason names each
    reason = '; '.join('%s %s saturated at thr 8: +0.0 %% < 3 %%' % (test, ost)
                       for test in ('read', 'write') for ost in OSTS)
    assert survey.inner_sweeps.skipped_points == [
        {'point': {'rsz_kib': 1024, 'nobj': 1, 'thr': 16}, 'reason': reason},
        {'point': {'rsz_kib': 1024, 'nobj': 2, 'thr': 16}, 'reason': reason}]
    summary = survey.inner_sweeps.summary(9)
    assert (summary['mode'], summary['points_run'], summary['points_full']) == ('adaptive', 7, 9)
    assert summary['stops'] == [{'rsz_kib': 1024, 'nobj': 1, 'thr': 8, 'reason': reason},
                                {'rsz_kib': 1024, 'nobj': 2, 'thr': 8, 'reason': reason}]
    assert survey.errors == []


def test_full_sweep_runs_every_point_past_the_knee(tmp_path):
    survey, points = run_adaptive(tmp_path)
    assert points == [(1, 1), (1, 2), (1, 4), (1, 8), (1, 16), (2, 2), (2, 4), (2, 8), (2, 16)]
    assert survey.inner_sweeps.skipped_points == []
    assert survey.inner_sweeps.summary(9)['points_run'] == 9


def test_noisy_points_keep_the_adaptive_sweep_going(tmp_path):
    # one-second samples 10 % either side of the figure: wider than the 3 % gain
    survey, points = run_adaptive(tmp_path, mode='adaptive', sample_spread=0.1)
    assert len(points) == 9
    survey, points = run_adaptive(tmp_path, mode='adaptive', sample_spread=0.1, min_gain_pct=15.0)
    assert len(points) == 7


def test_patience_runs_more_flat_points(tmp_path):
    survey, points = run_adaptive(tmp_path, mode='adaptive', knee=2, patience=2)
    assert points == [(1, 1), (1, 2), (1, 4), (1, 8), (2, 2), (2, 4), (2, 8)]
    assert survey.inner_sweeps.skipped_points[0]['reason'].endswith('< 3 % for 2 points')


def test_a_resumed_adaptive_sweep_counts_the_earlier_attempts_points_in_the_stop_rule(tmp_path):
    first, unused = run_adaptive(tmp_path / 'first', mode='adaptive')
    lustre = CurveLustre(knee=4)
    # an attempt killed after its third point (1 object, thr 4)
    killed, unused_state, unused_raw = make_survey(lustre, tmp_path / 'killed', size_mib=16, nobjlo=1, nobjhi=2,
                                                   thrhi=16, tests=['write', 'read'])
    killed.inner_sweeps = adaptive.InnerSweeps('adaptive')
    done = [record for record, unused in zip(run_whole(killed), range(3))]
    survey, unused_state, unused_raw = make_survey(CurveLustre(knee=4), tmp_path / 'resumed', size_mib=16, nobjlo=1,
                                                   nobjhi=2, thrhi=16, tests=['write', 'read'])
    survey.inner_sweeps = adaptive.InnerSweeps('adaptive')
    survey.done_points = dict(((record['rsz_kib'], record['obj_per_ost'], record['thr_per_ost']), record)
                              for record in done)
    records = list(run_whole(survey))
    # thr 8 of one object runs (flat after thr 4, which the killed attempt measured) and the sweep stops there,
    # as the uninterrupted one did: the resumed run skips the same points
    assert [(record['obj_per_ost'], record['thr_per_ost']) for record in records] == [
        (1, 8), (2, 2), (2, 4), (2, 8)]
    assert survey.inner_sweeps.skipped_points == first.inner_sweeps.skipped_points


def test_the_points_an_adaptive_sweep_passes_over_leave_the_progress_total(tmp_path):
    lustre = CurveLustre(knee=4)
    survey, unused_state, unused_raw = make_survey(lustre, tmp_path, size_mib=16, nobjlo=1, nobjhi=2, thrhi=16,
                                                   tests=['write', 'read'])
    survey.inner_sweeps = adaptive.InnerSweeps('adaptive')
    planned = progress.planned_points(survey.points(), ('actual_rsz_kib', 'nobj', 'thr'), 'size_kib')
    log = progress.ProgressLog(str(tmp_path), 'obdfilter', 'run', 'oss1', planned=planned)
    survey.inner_sweeps.on_skip = log.point_skipped
    totals, records = [], []
    for record in run_whole(survey):
        # kept, as the envelope builder keeps them: the log knows a record it was handed by its identity
        records.append(record)
        log.point_done(record)
        totals.append((log.summary()['done'], log.total))
    log.finish('ok')
    # 9 planned; thr 16 of one object leaves the total after the fourth point, thr 16 of two after the seventh
    assert totals == [(1, 9), (2, 9), (3, 9), (4, 9), (5, 8), (6, 8), (7, 8)]
    summary = log.summary()
    assert (summary['done'], summary['total']) == (7, 7)


# --------------------------------------------------------------------------
# Time-bounded points


class RateLustre(FakeLustre):
    """OSTs that move data at a set rate: each OST's test_brw lasts what it moves over its rate (MiB/s, a
    function of the thread count), its one-second samples are that rate, and a batch lasts as long as its slowest
    OST.  ``deadline_s`` on the fake clock gives the survey's timeout (``remaining_s``, as a Runner has)."""

    def __init__(self, rates, deadline_s=None, **options):
        FakeLustre.__init__(self, **options)
        self.rates = rates
        self.deadline_s = deadline_s

    def remaining_s(self):
        if self.deadline_s is None:
            return None
        return max(0.0, self.deadline_s - self.clock.now)

    def run_many(self, argvs, env=None, cwd=None):
        if not any('test_brw' in argv for argv in argvs):
            return FakeLustre.run_many(self, argvs, env=env, cwd=cwd)
        self.batches.append([list(argv) for argv in argvs])
        results = []
        for argv in argvs:
            self.commands.append(list(argv))
            ost = argv[4][:-len('_ecc')]
            thr, count, pages = int(argv[2]), int(argv[6]), int(argv[9])
            record_mib = pages * 4 / 1024.0
            rate = self.rates[ost](thr)
            seconds = count * thr * record_mib / rate
            samples = [rate / record_mib] * max(1, int(seconds))
            results.append(CommandResult(argv, 0, samples_output(thr, samples), '', seconds))
        self.clock.now += max(result.elapsed_s for result in results)
        return results


def slow_and_fast_osts():
    """OST0001 rises 5 MiB/s per thread to 20 MiB/s from 4 threads on; OST0000 is twice as fast."""
    return {OSTS[1]: lambda thr: min(5.0 * thr, 20.0), OSTS[0]: lambda thr: 2 * min(5.0 * thr, 20.0)}


def adaptive_points(tmp_path, rates, **options):
    """An adaptive sweep of nobj 1, thr 1-16 over OSTs of the given rate curves: the thread counts run, the stops."""
    lustre = RateLustre(rates)
    survey = make_survey(lustre, tmp_path, size_mib=64, nobjlo=1, nobjhi=1, thrhi=16, tests=['write', 'read'])[0]
    survey.inner_sweeps = adaptive.InnerSweeps('adaptive', **options)
    records = list(run_whole(survey))
    assert survey.errors == []
    return [record['thr_per_ost'] for record in records], survey.inner_sweeps.stops


def test_an_adaptive_sweep_stops_on_a_host_with_one_slow_ost(tmp_path):
    # OST0001 at half OST0000's rate, both flat from 4 threads: the host's samples span 20-40 MiB/s, a third of
    # the figure per OST either way, yet each OST's own curve is flat and its samples steady
    threads, stops = adaptive_points(tmp_path, slow_and_fast_osts())
    assert threads == [1, 2, 4, 8]
    assert stops[0]['thr'] == 8
    assert ('write testfs-OST0001 saturated at thr 8: +0.0 % < 3 %' in stops[0]['reason']
            and 'read testfs-OST0000 saturated at thr 8: +0.0 % < 3 %' in stops[0]['reason'])


def test_an_adaptive_sweep_goes_on_while_one_ost_still_rises(tmp_path):
    rates = slow_and_fast_osts()
    rates[OSTS[1]] = lambda thr: 2.5 * thr
    assert adaptive_points(tmp_path, rates) == ([1, 2, 4, 8, 16], [])


def bounded_survey(tmp_path, lustre, **options):
    settings = dict(size_mib=1024, nobjlo=1, nobjhi=1, thrhi=8, tests=['write', 'read'], point_s=10.0,
                    point_min_mib=64, floor_reason='point_min_mib 64 MiB per OST')
    settings.update(options)
    return make_survey(lustre, tmp_path, **settings)[0]


def counts_per_ost(lustre):
    """Each test_brw batch as (threads, {OST: I/Os per thread})."""
    return [(int(batch[0][2]), dict((argv[4][:-len('_ecc')], int(argv[6])) for argv in batch))
            for batch in lustre.batches]


def test_a_bounded_point_moves_the_floor_first_then_its_time_at_the_slowest_osts_rate(tmp_path):
    lustre = RateLustre(slow_and_fast_osts())
    survey = bounded_survey(tmp_path, lustre)
    records = list(run_whole(survey))
    assert survey.errors == []
    # per OST, per test: thr 1 has no rate yet (the floor); thr 2 at 5 MiB/s x 10 s = 50 MiB, below the 64 MiB floor;
    # thr 4 at 10 MiB/s: 100 MiB; thr 8 at 20 MiB/s: 200 MiB; never the 1024 MiB of the full size
    assert [(r['thr_per_ost'], r['moved_mib_per_ost'], r['point_limit'], r['sized_from_mib_s']) for r in records] == [
        (1, 64, 'floor, no rate yet', None), (2, 64, 'floor', 5.0), (4, 100, 'time budget', 10.0),
        (8, 200, 'time budget', 20.0)]
    assert all(r['bounded'] is True and r['point_s'] == 10.0 for r in records)
    # whole 1 MiB records for every thread, and every OST moves the same amount
    assert counts_per_ost(lustre) == [(thr, {OSTS[0]: count, OSTS[1]: count})
                                      for thr, count in ((1, 64), (1, 64), (2, 32), (2, 32), (4, 25), (4, 25),
                                                         (8, 25), (8, 25))]
    assert [r['size_kib'] for r in records] == [2 * mib * 1024 for mib in (64, 64, 100, 200)]
    # on the plateau the slowest OST's test lasts its point_s exactly; the record keeps its time and its figure
    last = records[-1]
    assert [last['per_ost'][OSTS[1]][test]['elapsed_s'] for test in ('write', 'read')] == [10.0, 10.0]
    assert last['elapsed_s'] == 20.0
    assert last['per_ost'][OSTS[1]]['write']['mib_s'] == 20.0 and last['per_ost'][OSTS[0]]['write']['mib_s'] == 40.0


def test_a_bounded_point_never_moves_more_than_the_full_size(tmp_path):
    lustre = RateLustre(slow_and_fast_osts())
    records = list(run_whole(bounded_survey(tmp_path, lustre, size_mib=128)))
    assert [(r['moved_mib_per_ost'], r['point_limit']) for r in records] == [
        (64, 'floor, no rate yet'), (64, 'floor'), (100, 'time budget'), (128, 'full size')]


def test_the_floor_wins_over_the_full_size(tmp_path):
    lustre = RateLustre(slow_and_fast_osts())
    records = list(run_whole(bounded_survey(tmp_path, lustre, size_mib=32)))
    assert [r['moved_mib_per_ost'] for r in records] == [64, 64, 64, 64]


def test_a_point_whose_floor_cannot_be_moved_before_the_timeout_is_not_run_and_says_why(tmp_path):
    # the first point's two tests move 64 MiB at 5 MiB/s on the slow OST: 25.6 s; 20 s are left then, 10 s per test,
    # less than the 12.8 s the floor takes at that rate
    lustre = RateLustre(slow_and_fast_osts(), deadline_s=100.0 + 45.6)
    survey = bounded_survey(tmp_path, lustre, thrhi=2)
    records = list(run_whole(survey))
    assert [r['thr_per_ost'] for r in records] == [1]
    assert [thr for thr, unused in counts_per_ost(lustre)] == [1, 1]
    [error] = survey.errors
    assert error['point'] == {'rsz_kib': 1024, 'nobj': 1, 'thr': 2}
    assert error['message'].startswith('not run: point_min_mib: every obdfilter point must move at least 64 MiB')
    assert 'about 13 s at the 5.0 MiB/s measured so far, more than the 10 s left before timeout' in error['message']


def test_with_time_enough_the_timeout_bounds_nothing(tmp_path):
    lustre = RateLustre(slow_and_fast_osts(), deadline_s=100.0 + 10000.0)
    records = list(run_whole(bounded_survey(tmp_path, lustre)))
    assert [r['moved_mib_per_ost'] for r in records] == [64, 64, 100, 200]


def test_a_resumed_bounded_sweep_sizes_its_next_point_from_the_earlier_attempts(tmp_path):
    whole = [(r['thr_per_ost'], r['moved_mib_per_ost'])
             for r in run_whole(bounded_survey(tmp_path / 'whole', RateLustre(slow_and_fast_osts())))]
    killed = bounded_survey(tmp_path / 'killed', RateLustre(slow_and_fast_osts()))
    done = [record for record, unused in zip(run_whole(killed), range(2))]
    lustre = RateLustre(slow_and_fast_osts())
    resumed = bounded_survey(tmp_path / 'resumed', lustre)
    resumed.done_points = dict(((r['rsz_kib'], r['obj_per_ost'], r['thr_per_ost']), r) for r in done)
    records = list(run_whole(resumed))
    # only the missing points run, and they move what they moved in the uninterrupted run
    assert [(r['thr_per_ost'], r['moved_mib_per_ost']) for r in records] == whole[2:]


def test_without_point_s_the_plan_and_commands_are_the_io_kits(tmp_path):
    def commands_and_plan(path, **options):
        lustre = FakeLustre()
        survey = make_survey(lustre, path, size_mib=16, nobjhi=2, thrhi=2, tests=['write', 'read'], **options)[0]
        records = list(run_whole(survey))
        return lustre.commands, survey.plan(), records

    today = commands_and_plan(tmp_path / 'today')
    with_floor_only = commands_and_plan(tmp_path / 'floor', point_min_mib=512)
    # the floor alone only tells the plan what the fast profile would move
    assert with_floor_only[1].pop('point_sizing') == {'full': 16, 'floor': 512, 'floor_reason': None, 'point_s': None}
    assert with_floor_only == today
    assert 'bounded' not in today[1] and not any('bounded' in record for record in today[2])


def test_the_plan_of_bounded_points_gives_their_time_and_the_worst_case(tmp_path):
    survey = bounded_survey(tmp_path, FakeLustre(), size_mib=32)
    plan = survey.plan()
    # four runnable points, two tests: 80 s if each test lasts its 10 s; at worst every point moves its 64 MiB floor
    assert plan['bounded'] == {'point_s': 10.0, 'point_min_mib': 64, 'floor_reason': 'point_min_mib 64 MiB per OST',
                               'target_duration_s': 80.0, 'worst_case_kib_per_ost': 4 * 2 * 64 * 1024,
                               'full_kib_per_ost': 4 * 2 * 32 * 1024}
    # the points and their keys are the full grid's, so a rerun recognises the same points
    assert [p['count'] for p in plan['points']] == [32, 16, 8, 4]


@pytest.mark.parametrize('options, message', [
    ({'point_s': 0.0}, 'point_s: must be more than 0 seconds, got 0'),
    ({'point_min_mib': 0}, 'point_min_mib: must be at least 1, got 0'),
    ({'case': obdfilter.CASE_NETWORK}, 'point_s: time-bounded points are measured on the OSTs themselves'),
])
def test_bounded_settings_are_checked(tmp_path, options, message):
    survey = bounded_survey(tmp_path, FakeLustre(), **options)
    assert message in [str(problem) for problem in survey.problems()][0]
