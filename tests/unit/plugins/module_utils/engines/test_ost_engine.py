# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ost engine against a fake runner: refusals, command order, timing, statistics, cache and cleanup."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import os

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils.engines import ost
from ansible_collections.lustre.iokit.plugins.module_utils.engines.contract import EngineContext
from ansible_collections.lustre.iokit.plugins.module_utils.engines.errors import EngineError
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.ost_survey import parse_ost_survey
from ansible_collections.lustre.iokit.plugins.module_utils.runner import CommandResult
from ansible_collections.lustre.iokit.tests.unit.fakes import FakeClock, FakeNode

INSTANCE = 'testfs-ffff8803c9f3a800'
TARGET_OBD = ('0: testfs-OST0000_UUID ACTIVE\n1: testfs-OST0001_UUID INACTIVE\n'
              '2: testfs-OST0002_UUID ACTIVE\n3: testfs-OST0003_UUID ACTIVE\n')
CACHED = 'users: 1\nmax_cached_mb: 12051\nused_mb: 0\nunused_mb: 12051\nreclaim_count: 0\n'


def lfs_df(mount, available_kib):
    lines = ['UUID                   1K-blocks        Used   Available Use% Mounted on',
             'testfs-MDT0000_UUID       524288           0      524288   0%% %s[MDT:0]' % mount]
    for index, available in sorted(available_kib.items()):
        if available is None:
            lines.append('OST%04x             : inactive device' % index)
        else:
            lines.append('testfs-OST%04x_UUID      1048576           0 %11d   0%% %s[OST:%d]' % (
                index, available, mount, index))
    return '\n'.join(lines) + '\n'


class FakeRunner(FakeNode):
    """Plays lfs, lctl, sync and dd; dd advances the clock by ``seconds[(operation, ost)]``."""

    def __init__(self, clock, mount, seconds=None, available=None, getname_rc=0, stop_at=None, dd_fail=None):
        self.clock = clock
        self.mount = mount
        self.seconds = seconds or {}
        self.available = available or {0: 10 ** 6, 2: 10 ** 6, 3: 10 ** 6, 1: None}
        self.getname_rc = getname_rc
        self.stop_at = stop_at
        self.dd_fail = dd_fail
        self.stop_reason = None
        self.calls = []

    def run(self, argv, env=None, cwd=None):
        self.calls.append(list(argv))
        ok = CommandResult(argv, 0, '', '', 0.01)
        if argv[:2] == ['lfs', 'getname']:
            if self.getname_rc:
                return CommandResult(argv, 19, '', "cannot get instance for '%s': No such device\n" % argv[2], 0.01)
            return CommandResult(argv, 0, '%s %s\n' % (INSTANCE, self.mount), '', 0.01)
        if argv[:2] == ['lfs', 'df']:
            return CommandResult(argv, 0, lfs_df(self.mount, self.available), '', 0.01)
        if argv[:3] == ['lctl', 'get_param', '-n']:
            if argv[3].endswith('target_obd'):
                return CommandResult(argv, 0, TARGET_OBD, '', 0.01)
            return CommandResult(argv, 0, CACHED, '', 0.01)
        if argv[:2] == ['lctl', 'list_nids']:
            return CommandResult(argv, 0, '192.168.1.10@tcp\n', '', 0.01)
        if argv[:2] == ['lfs', 'setstripe']:
            if self.stop_at == ('setstripe', int(os.path.basename(argv[-1])[len('file'):])):
                self.stop_reason = 'timeout'
                return CommandResult(argv, -15, '', '', 1.0, timed_out=True)
            open(argv[-1], 'w').close()
            return ok
        if argv[0] == 'dd':
            write = argv[1].startswith('of=')
            path = argv[1][3:]
            operation = 'write' if write else 'read'
            index = int(os.path.basename(path if write else argv[1][3:])[len('file'):])
            if self.stop_at == (operation, index):
                self.stop_reason = 'timeout'
                return CommandResult(argv, -15, '', '', 1.0, timed_out=True)
            if self.dd_fail == (operation, index):
                return CommandResult(argv, 1, '', 'dd: error writing: Input/output error\n', 0.1)
            self.clock.now += self.seconds.get((operation, index), 1.0)
            return ok
        return ok


WALL_ORIGIN = 1800000000.0


def make_survey(tmp_path, make_context=EngineContext, **options):
    mount = tmp_path / 'mnt'
    mount.mkdir()
    clock = FakeClock(1000.0)
    runner_class = options.pop('runner_class', FakeRunner)
    runner_options = dict((key, options.pop(key)) for key in list(options)
                          if key in ('seconds', 'available', 'getname_rc', 'stop_at', 'dd_fail', 'rates',
                                     'deadline_s'))
    runner = runner_class(clock, str(mount), **runner_options)
    state = NodeState(str(tmp_path / 'work'))
    mountinfo = tmp_path / 'mountinfo'
    mountinfo.write_text('42 27 0:39 / %s rw,relatime - lustre 10.0.0.1@tcp:/testfs rw\n' % mount)
    # The wall clock moves with the fake monotonic one, from a different origin, as the real ones do.
    defaults = dict(size_mib=30, workdir=str(tmp_path / 'work'), page_size=4096, mountinfo_path=str(mountinfo))
    defaults.update(options)
    context = make_context(runner, runner, state, 'run-1', 'client1', clock=clock,
                           wall_clock=lambda: WALL_ORIGIN + clock.now)
    survey = ost.OstSurvey(context, str(mount), **defaults)
    return survey, runner, state


# -- parsing what the client says -----------------------------------------------------------------


def test_getname_gives_fsname_and_instance():
    assert ost.parse_getname('%s /mnt/testfs\n' % INSTANCE) == ('testfs', 'ffff8803c9f3a800')
    assert ost.parse_getname('my-fs-ffff88\n') == ('my-fs', 'ffff88')
    assert ost.parse_getname('') is None


def test_target_obd_marks_active_and_keeps_printed_indices():
    assert ost.parse_target_obd('0: a_UUID ACTIVE\n5: b_UUID INACTIVE\n') == [
        {'position': 0, 'ost': 0, 'uuid': 'a_UUID', 'active': True},
        {'position': 1, 'ost': 5, 'uuid': 'b_UUID', 'active': False}]


def test_lfs_df_gives_available_kib_per_ost_and_skips_inactive():
    assert ost.parse_lfs_df(lfs_df('/mnt', {0: 1234, 1: None, 2: 99})) == {0: 1234, 2: 99}


# lustre-sim's lfs df on a client of a node of three 32 MiB OSTs (simulator/src/lustre_sim/tools/lfs.py, as Lustre's
# lfs prints it), captured 2026-11-29
SIM_LFS_DF = '''UUID                   1K-blocks        Used   Available Use% Mounted on
testfs-MDT0000_UUID       524288           0      524288   0% /tmp/simtry-mnt[MDT:0]
testfs-OST0000_UUID        32768           0       32768   0% /tmp/simtry-mnt[OST:0]
testfs-OST0001_UUID        32768        1024       31744   4% /tmp/simtry-mnt[OST:1]
testfs-OST0002_UUID        32768           0       32768   0% /tmp/simtry-mnt[OST:2]

filesystem_summary:        98304        1024       97280   2% /tmp/simtry-mnt

'''


def test_lfs_df_usage_gives_total_used_and_available_kib_per_ost():
    usage = ost.parse_lfs_df_usage(SIM_LFS_DF)
    assert sorted(usage) == [0, 1, 2]
    assert usage[1] == {'uuid': 'testfs-OST0001_UUID', 'total_kib': 32768, 'used_kib': 1024, 'available_kib': 31744}
    assert ost.parse_lfs_df(SIM_LFS_DF) == {0: 32768, 1: 31744, 2: 32768}
    assert ost.parse_lfs_df_usage(lfs_df('/mnt', {0: 5, 1: None}))[0]['total_kib'] == 1048576
    assert 1 not in ost.parse_lfs_df_usage(lfs_df('/mnt', {0: 5, 1: None}))
    assert ost.parse_lfs_df_usage('') == {}


def test_fill_names_each_active_ost_with_its_free_and_total_kib(tmp_path):
    survey, unused_runner, unused_state = make_survey(tmp_path, available={0: 7, 1: None, 2: 8, 3: None})
    survey.inspect()
    # OST 3 is active but lfs df showed no figures for it: left out, not guessed
    assert survey.fill() == ({'testfs-OST0000': 7, 'testfs-OST0002': 8},
                             {'testfs-OST0000': 1048576, 'testfs-OST0002': 1048576})


def test_max_cached_mb_reads_both_forms():
    assert ost.parse_max_cached_mb(CACHED) == 12051
    assert ost.parse_max_cached_mb('4096\n') == 4096
    assert ost.parse_max_cached_mb('users: 1\n') is None


def test_cache_limit_is_256_pages():
    assert ost.cache_limit_mb(4096) == 1
    assert ost.cache_limit_mb(65536) == 16


def test_mount_fstype_reads_mountinfo(tmp_path):
    info = tmp_path / 'mountinfo'
    info.write_text('1 0 8:1 / / rw - ext4 /dev/sda1 rw\n'
                    '42 1 0:39 / /mnt/with\\040space rw - fuse.lustre-sim lustre-sim rw\n')
    assert ost.mount_fstype('/mnt/with space', str(info)) == 'fuse.lustre-sim'
    assert ost.mount_fstype('/', str(info)) == 'ext4'


# -- statistics ------------------------------------------------------------------------------------


def test_statistics_divide_by_the_total_ost_count_like_ost_survey():
    osts = [{'ost': 0, 'active': True, 'read_mib_s': 100.0}, {'ost': 1, 'active': False, 'read_mib_s': None},
            {'ost': 2, 'active': True, 'read_mib_s': 50.0}, {'ost': 3, 'active': True, 'read_mib_s': 150.0}]
    stats = ost.operation_statistics(osts, 'read', 4)
    average = 300.0 / 4
    deviation = math.sqrt(((100 - average) ** 2 + (50 - average) ** 2 + (150 - average) ** 2) / 4)
    assert stats == {'worst': {'ost': 2, 'mib_s': 50.0}, 'best': {'ost': 3, 'mib_s': 150.0},
                     'avg_mib_s': average, 'stddev_mib_s': deviation}


def test_the_first_ost_wins_a_tie():
    osts = [{'ost': 0, 'active': True, 'write_mib_s': 10.0}, {'ost': 1, 'active': True, 'write_mib_s': 10.0}]
    stats = ost.operation_statistics(osts, 'write', 2)
    assert stats['worst']['ost'] == 0 and stats['best']['ost'] == 0 and stats['stddev_mib_s'] == 0.0


def test_nothing_measured_gives_null_statistics():
    assert ost.operation_statistics([], 'read', 4) == {'worst': None, 'best': None, 'avg_mib_s': None,
                                                       'stddev_mib_s': None}


# -- refusals -------------------------------------------------------------------------------------------


def test_a_mount_that_is_not_lustre_is_refused(tmp_path):
    survey, runner, unused_state = make_survey(tmp_path, getname_rc=19)
    message = r'mount_point: .* is not a Lustre client mount: lfs getname failed \(rc 19\)'
    with pytest.raises(EngineError, match=message):
        survey.inspect()
    assert runner.calls == [['lfs', 'getname', survey.mount_point]]


def test_short_free_space_is_refused_naming_the_ost(tmp_path):
    survey, unused_runner, state = make_survey(tmp_path, size_mib=100, min_free_factor=2,
                                               available={0: 10 ** 6, 1: None, 2: 150000, 3: 10 ** 6})
    survey.inspect()
    assert [str(problem) for problem in survey.space_problems()] == [
        'size_mib: OST index 2 (testfs-OST0002_UUID) has 150000 KiB available, the survey needs 204800 KiB '
        '(size_mib 100 x min_free_factor 2)']
    assert state.entries('paths') == []


def test_inspect_reads_osts_free_space_and_fstype(tmp_path):
    survey, runner, unused_state = make_survey(tmp_path)
    survey.inspect()
    assert runner.calls == [
        ['lfs', 'getname', survey.mount_point],
        ['lctl', 'get_param', '-n', 'lov.testfs-clilov-ffff8803c9f3a800.target_obd'],
        ['lfs', 'df', survey.mount_point],
        ['lctl', 'list_nids'],
    ]
    assert [ost_entry['ost'] for ost_entry in survey.active_osts()] == [0, 2, 3]
    assert survey.fstype == 'lustre' and survey.client_nid == '192.168.1.10@tcp'
    assert survey.space_problems() == []


# -- a whole survey -------------------------------------------------------------------------------------


def test_survey_commands_in_order_with_cache_saved_and_restored(tmp_path):
    survey, runner, state = make_survey(tmp_path, size_mib=8)
    survey.inspect()
    del runner.calls[:]
    survey.setup()
    record = survey.sweep()
    assert survey.teardown(runner) == []
    directory = survey.directory
    expected = [['lctl', 'get_param', '-n', 'llite.%s.max_cached_mb' % INSTANCE],
                ['lctl', 'set_param', '-n', 'llite.%s.max_cached_mb=1' % INSTANCE]]
    for index in (0, 2, 3):
        path = '%s/file%d' % (directory, index)
        expected += [['lfs', 'setstripe', '-S', '0', '-i', str(index), '-c', '1', path],
                     ['sync'], ['dd', 'of=' + path, 'if=/dev/zero', 'count=8', 'bs=1048576'], ['sync']]
    for index in (0, 2, 3):
        path = '%s/file%d' % (directory, index)
        expected += [['sync'], ['dd', 'if=' + path, 'of=/dev/null', 'count=8', 'bs=1048576'], ['sync']]
    expected.append(['lctl', 'set_param', '-n', 'llite.%s.max_cached_mb=12051' % INSTANCE])
    assert runner.calls == expected
    assert record['complete'] is True
    assert not os.path.exists(directory)
    assert state.entries('paths') == []


def test_rates_are_size_over_time_including_sync_and_the_slow_ost_shows(tmp_path):
    seconds = {('write', 0): 0.5, ('write', 2): 4.0, ('write', 3): 0.4,
               ('read', 0): 0.25, ('read', 2): 2.0, ('read', 3): 0.2}
    survey, unused_runner, unused_state = make_survey(tmp_path, size_mib=20, seconds=seconds)
    survey.inspect()
    survey.setup()
    record = survey.sweep()
    survey.teardown(survey.runner)
    rows = dict((entry['ost'], entry) for entry in record['osts'])
    assert rows[2]['write_mib_s'] == 5.0 and rows[2]['write_time_s'] == 4.0
    assert rows[0]['read_mib_s'] == 80.0
    assert rows[1] == {'ost': 1, 'uuid': 'testfs-OST0001_UUID', 'active': False, 'read_mib_s': None,
                       'write_mib_s': None, 'read_time_s': None, 'write_time_s': None, 'write_start_time': None,
                       'write_end_time': None, 'read_start_time': None, 'read_end_time': None}
    assert record['write']['worst'] == {'ost': 2, 'mib_s': 5.0}
    assert record['write']['best']['ost'] == 3
    assert record['write']['best']['mib_s'] == pytest.approx(50.0)
    assert record['write']['avg_mib_s'] == pytest.approx((40.0 + 5.0 + 50.0) / 4)
    assert (record['active_osts'], record['inactive_osts']) == (3, 1)
    # Each OST's dd (between its syncs) has its wall-clock window, write pass then read pass, back to back.
    windows = [(operation, entry['ost'], round(entry[operation + '_start_time'] - WALL_ORIGIN, 3),
                round(entry[operation + '_end_time'] - WALL_ORIGIN, 3))
               for operation in ('write', 'read') for entry in record['osts'] if entry['active']]
    assert windows == [('write', 0, 1000.0, 1000.5), ('write', 2, 1000.5, 1004.5), ('write', 3, 1004.5, 1004.9),
                       ('read', 0, 1004.9, 1005.15), ('read', 2, 1005.15, 1007.15), ('read', 3, 1007.15, 1007.35)]
    parsed = parse_ost_survey(ost.report_text(record))
    for key in ('active_osts', 'inactive_osts', 'mount_point', 'client_nid'):
        assert parsed[key] == record[key]
    assert parsed['write']['worst'] == {'ost': 2, 'mib_s': 5.0}
    assert parsed['read']['avg_mib_s'] == pytest.approx(record['read']['avg_mib_s'], abs=1e-6)
    assert [entry['active'] for entry in parsed['osts']] == [True, False, True, True]


def test_node_state_records_changes_before_they_are_made(tmp_path):
    survey, runner, state = make_survey(tmp_path, size_mib=1)
    survey.inspect()
    snapshots = {}
    original = runner.run

    def watch(argv, env=None, cwd=None):
        if argv[:2] == ['lctl', 'set_param'] and 'set' not in snapshots:
            snapshots['set'] = [(entry['name'], entry['old_value']) for entry in state.entries('params')]
        if argv[:2] == ['lfs', 'setstripe']:
            snapshots.setdefault('setstripe', [entry['path'] for entry in state.entries('paths')])
        return original(argv, env=env)

    runner.run = watch
    survey.setup()
    survey.sweep()
    assert [name for name, unused_old in snapshots['set']] == ['llite.%s.max_cached_mb' % INSTANCE]
    assert survey.directory in snapshots['setstripe']
    assert '%s/file0' % survey.directory in snapshots['setstripe']
    assert survey.teardown(runner) == []
    assert state.entries('paths') == []
    assert state.entries('params') == []


def test_timeout_during_the_read_pass_keeps_the_write_statistics_and_cleans_up(tmp_path):
    survey, runner, state = make_survey(tmp_path, stop_at=('read', 2))
    survey.inspect()
    survey.setup()
    record = survey.sweep()
    assert record['complete'] is False
    assert record['write']['avg_mib_s'] == pytest.approx(30.0 * 3 / 4)
    assert record['read'] == {'worst': None, 'best': None, 'avg_mib_s': None, 'stddev_mib_s': None}
    assert survey.aborted == 'timeout'
    assert survey.errors == [{'point': {'ost': 2, 'operation': 'read'}, 'message': 'read interrupted: timeout'}]
    cleanup = FakeRunner(runner.clock, survey.mount_point)
    assert survey.teardown(cleanup) == []
    assert cleanup.calls == [['lctl', 'set_param', '-n', 'llite.%s.max_cached_mb=12051' % INSTANCE]]
    assert not os.path.exists(survey.directory)
    assert state.entries('paths') == []


def test_a_timeout_during_setstripe_stops_the_survey_and_blames_no_ost(tmp_path):
    survey, runner, state = make_survey(tmp_path, stop_at=('setstripe', 2))
    survey.inspect()
    survey.setup()
    record = survey.sweep()
    assert record['complete'] is False
    assert survey.aborted == 'timeout'
    assert survey.errors == [{'point': {'ost': 2, 'operation': 'write'}, 'message': 'setstripe interrupted: timeout'}]
    assert not any(call[0] == 'dd' and call[1].endswith('file3') for call in runner.calls)
    assert survey.teardown(FakeRunner(runner.clock, survey.mount_point)) == []
    assert state.entries('paths') == []


def test_a_failing_dd_is_reported_and_leaves_that_ost_null(tmp_path):
    survey, unused_runner, unused_state = make_survey(tmp_path, dd_fail=('write', 3))
    survey.inspect()
    survey.setup()
    record = survey.sweep()
    survey.teardown(survey.runner)
    rows = dict((entry['ost'], entry) for entry in record['osts'])
    assert rows[3]['write_mib_s'] is None and rows[3]['read_mib_s'] is None
    assert survey.errors[0]['point'] == {'ost': 3, 'operation': 'write'}
    assert 'Input/output error' in survey.errors[0]['message']


def test_plan_has_bytes_per_ost_files_and_touches_nothing(tmp_path):
    survey, runner, state = make_survey(tmp_path, size_mib=64)
    survey.inspect()
    del runner.calls[:]
    plan = survey.plan()
    assert runner.calls == [] and state.entries('paths') == []
    assert plan['bytes_written_per_ost'] == 64 * 1024 * 1024
    assert [entry['file'] for entry in plan['osts']] == [
        survey.directory + '/file0', None, survey.directory + '/file2', survey.directory + '/file3']
    assert not os.path.exists(survey.directory)


# -- engine: iokit -------------------------------------------------------------------------------------


def test_iokit_runs_ost_survey_and_parses_its_stdout(tmp_path):
    stdout = ('ost-survey: 11/23/26 OST speed survey on /mnt/t from 10.0.0.1@tcp\n'
              'Number of Active OST devices : 1\n'
              'Worst  Read OST indx: 0 speed: 40.000000\nBest   Read OST indx: 0 speed: 40.000000\n'
              'Read Average: 40.000000 +/- 0.000000 MB/s\n'
              'Worst  Write OST indx: 0 speed: 20.000000\nBest   Write OST indx: 0 speed: 20.000000\n'
              'Write Average: 20.000000 +/- 0.000000 MB/s\n'
              'Ost#  Read(MB/s)  Write(MB/s)  Read-time  Write-time\n'
              '----------------------------------------------------\n'
              '0     40.000       20.000        0.750      1.500\n')

    class ScriptRunner:
        stop_reason = None

        def __init__(self):
            self.calls = []

        def run(self, argv, env=None, cwd=None):
            self.calls.append(argv)
            return CommandResult(argv, 0, stdout, '', 3.0)

    runner = ScriptRunner()
    raw = str(tmp_path / 'ost_survey.out')
    record, errors, unused = ost.run_iokit(runner, '/usr/bin/ost-survey', 30, '/mnt/t', raw)
    assert runner.calls == [['perl', '/usr/bin/ost-survey', '-s', '30', '/mnt/t']]
    assert errors == []
    assert record['write']['avg_mib_s'] == 20.0 and record['osts'][0]['read_time_s'] == 0.75
    with open(raw) as handle:
        assert handle.read() == stdout


def test_iokit_die_with_exit_zero_text_is_an_error():
    class ScriptRunner:
        stop_reason = None

        def run(self, argv, env=None, cwd=None):
            return CommandResult(argv, 2, '', '`lfs getname /mnt/x` error: 4864\n', 0.1)

    record, errors, unused = ost.run_iokit(ScriptRunner(), 'ost-survey', 30, '/mnt/x')
    assert record is None
    assert 'ost-survey printed no result (rc 2)' in errors[0]['message']


# -- time-bounded points ----------------------------------------------------------------------------------------


class RateRunner(FakeRunner):
    """OSTs that move data at set rates: a dd lasts its ``count`` MiB over ``rates[(operation, OST index)]`` MiB/s.
    ``deadline_s`` on the fake clock is the survey's timeout: ``remaining_s`` as a Runner has it, and a dd that would
    run past it is cut there."""

    def __init__(self, clock, mount, rates=None, deadline_s=None, **options):
        FakeRunner.__init__(self, clock, mount, **options)
        self.rates = rates or {}
        self.deadline_s = deadline_s
        self.moved = []

    def remaining_s(self):
        if self.deadline_s is None:
            return None
        return max(0.0, self.deadline_s - self.clock.now)

    def run(self, argv, env=None, cwd=None):
        if argv[0] != 'dd':
            return FakeRunner.run(self, argv, env=env, cwd=cwd)
        self.calls.append(list(argv))
        operation = 'write' if argv[1].startswith('of=') else 'read'
        index = int(argv[1].rsplit('file', 1)[1])
        count = int([word for word in argv if word.startswith('count=')][0][len('count='):])
        self.moved.append((operation, index, count))
        seconds = count / self.rates[(operation, index)]
        if self.deadline_s is not None and self.clock.now + seconds > self.deadline_s:
            self.clock.now = self.deadline_s
            self.stop_reason = 'timeout'
            return CommandResult(argv, -15, '', '', seconds, timed_out=True)
        self.clock.now += seconds
        return CommandResult(argv, 0, '', '', seconds)


def uneven_osts():
    """OST 0 writes 128 MiB/s, OST 2 64 and OST 3 256; each reads twice as fast as it writes."""
    writes = {0: 128.0, 2: 64.0, 3: 256.0}
    rates = dict((('write', index), rate) for index, rate in writes.items())
    rates.update((('read', index), 2 * rate) for index, rate in writes.items())
    return rates


def even_osts():
    """Every OST writes 128 MiB/s and reads 256."""
    return dict(((operation, index), 128.0 if operation == 'write' else 256.0)
                for operation in ost.OPERATIONS for index in (0, 2, 3))


def bounded_ost_survey(tmp_path, **options):
    settings = dict(size_mib=4096, point_s=8.0, point_min_mib=256, floor_reason='point_min_mib 256 MiB per OST',
                    runner_class=RateRunner, rates=uneven_osts())
    settings.update(options)
    tmp_path.mkdir(parents=True, exist_ok=True)
    survey, runner, unused_state = make_survey(tmp_path, **settings)
    survey.inspect()
    survey.setup()
    return survey, runner


def measured_osts(record):
    return [(row['ost'], row['moved_mib'], row['point_limit'], row['sized_from_mib_s'])
            for row in record['osts'] if 'moved_mib' in row]


def test_each_ost_is_sized_from_the_one_written_before_it_and_the_first_moves_the_floor(tmp_path):
    survey, runner = bounded_ost_survey(tmp_path)
    record = survey.sweep()
    assert survey.errors == [] and record['complete'] is True
    assert (record['bounded'], record['point_s'], record['size_mib']) == (True, 8.0, 4096)
    # OST 0 has no rate yet: the floor; OST 2 at OST 0's 128 MiB/s x 8 s; OST 3 at OST 2's 64 MiB/s x 8 s
    assert measured_osts(record) == [(0, 256, 'floor, no rate yet', None), (2, 1024, 'time budget', 128.0),
                                     (3, 512, 'time budget', 64.0)]
    # each file is written then read back whole, never the 4096 MiB of the full size
    assert runner.moved == [('write', 0, 256), ('write', 2, 1024), ('write', 3, 512),
                            ('read', 0, 256), ('read', 2, 1024), ('read', 3, 512)]
    rows = dict((row['ost'], row) for row in record['osts'])
    # the figures are what each OST moved over its time: OST 2, slower than the OST that sized it, takes twice
    # its point_s, which is why per-OST figures stay comparable but not all OSTs last point_s
    assert [(rows[index]['write_mib_s'], rows[index]['read_mib_s']) for index in (0, 2, 3)] == [
        (128.0, 256.0), (64.0, 128.0), (256.0, 512.0)]
    assert (rows[2]['write_time_s'], rows[2]['read_time_s'], rows[2]['elapsed_s']) == (16.0, 8.0, 24.0)
    assert 'moved_mib' not in rows[1]
    assert parse_ost_survey(ost.report_text(record))['write']['worst'] == {'ost': 2, 'mib_s': 64.0}
    survey.teardown(runner)


def test_a_bounded_ost_never_moves_more_than_size_mib(tmp_path):
    survey, unused_runner = bounded_ost_survey(tmp_path, size_mib=768)
    assert [(index, mib, limit) for index, mib, limit, unused in measured_osts(survey.sweep())] == [
        (0, 256, 'floor, no rate yet'), (2, 768, 'full size'), (3, 512, 'time budget')]


def test_the_floor_wins_over_size_mib(tmp_path):
    survey, runner = bounded_ost_survey(tmp_path, size_mib=128)
    assert [(index, mib, limit) for index, mib, limit, unused in measured_osts(survey.sweep())] == [
        (0, 256, 'floor, no rate yet'), (2, 256, 'floor'), (3, 256, 'floor')]
    assert [count for unused, unused, count in runner.moved] == [256] * 6


def test_an_ost_whose_floor_and_the_reads_to_come_do_not_fit_before_the_timeout_is_not_written(tmp_path):
    # after OST 0's 2 s write, 5 s are left and its read (2 s at its write rate) is still to come: 1.5 s for each
    # test of OST 2, less than the 2 s its floor takes at 128 MiB/s
    survey, runner = bounded_ost_survey(tmp_path, deadline_s=1000.0 + 2.0 + 5.0)
    record = survey.sweep()
    assert runner.moved == [('write', 0, 256), ('read', 0, 256)]
    assert [error['point'] for error in survey.errors] == [{'ost': 2, 'operation': 'write'},
                                                           {'ost': 3, 'operation': 'write'}]
    message = survey.errors[0]['message']
    assert message.startswith('not run: point_min_mib: every ost point must move at least 256 MiB per target')
    assert 'about 2 s at the 128.0 MiB/s measured so far, more than the 1 s left before timeout' in message
    # OST 0's read, kept time for, completes: the survey was not cut
    assert survey.aborted is None and record['complete'] is True
    rows = dict((row['ost'], row) for row in record['osts'])
    assert rows[0]['read_mib_s'] == 256.0 and rows[2]['write_mib_s'] is None and rows[2]['read_mib_s'] is None


def test_the_time_left_bounds_an_ost_as_point_s_does(tmp_path):
    # at OST 2's write 12 s are left, 2 of them for OST 0's read to come: 5 s for each of its tests, 640 MiB at
    # 128 MiB/s; then nothing is left for OST 3 beyond the reads to come
    survey, runner = bounded_ost_survey(tmp_path, rates=even_osts(), deadline_s=1000.0 + 2.0 + 12.0)
    record = survey.sweep()
    assert measured_osts(record) == [(0, 256, 'floor, no rate yet', None), (2, 640, 'time budget', 128.0)]
    assert [error['point'] for error in survey.errors] == [{'ost': 3, 'operation': 'write'}]
    assert runner.moved == [('write', 0, 256), ('write', 2, 640), ('read', 0, 256), ('read', 2, 640)]
    assert survey.aborted is None and runner.clock.now <= 1014.0


def test_with_time_enough_the_timeout_bounds_nothing(tmp_path):
    survey, unused_runner = bounded_ost_survey(tmp_path, deadline_s=1000.0 + 10000.0)
    assert [mib for unused, mib, unused, unused in measured_osts(survey.sweep())] == [256, 1024, 512]


def test_a_resumed_bounded_survey_sizes_the_osts_left_from_the_earlier_attempts(tmp_path):
    whole, unused_runner = bounded_ost_survey(tmp_path / 'whole')
    rows = dict((row['ost'], row) for row in whole.sweep()['osts'])
    resumed, runner = bounded_ost_survey(tmp_path / 'resumed')
    resumed.done_points = {0: dict(rows[0], attempt=1)}
    record = resumed.sweep()
    # only OSTs 2 and 3 run, and they move what they moved in the uninterrupted run: OST 2 from OST 0's rate
    assert runner.moved == [('write', 2, 1024), ('write', 3, 512), ('read', 2, 1024), ('read', 3, 512)]
    assert measured_osts(record) == [(0, 256, 'floor, no rate yet', None), (2, 1024, 'time budget', 128.0),
                                     (3, 512, 'time budget', 64.0)]


def test_without_point_s_the_plan_commands_and_record_are_the_io_kits(tmp_path):
    def commands_plan_and_record(name, **options):
        path = tmp_path / name
        path.mkdir()
        survey, runner, unused_state = make_survey(path, size_mib=8, **options)
        survey.inspect()
        survey.setup()
        record = survey.sweep()
        survey.teardown(runner)
        # the same paths in either directory
        calls = [[word.replace(str(path), '<tmp>') for word in call] for call in runner.calls]
        plan = survey.plan()
        return calls, (plan['bytes_written_per_ost'], 'bounded' in plan), record

    today = commands_plan_and_record('today')
    with_floor_only = commands_plan_and_record('floor', point_min_mib=512)
    assert with_floor_only[:2] == today[:2]
    assert 'bounded' not in today[2] and 'bounded' not in with_floor_only[2]
    assert not any('moved_mib' in row for row in with_floor_only[2]['osts'])


def test_the_plan_of_bounded_points_gives_their_time_and_the_worst_case(tmp_path):
    survey, unused_runner, unused_state = make_survey(tmp_path, size_mib=128, point_s=8.0, point_min_mib=256,
                                                      floor_reason='point_min_mib 256 MiB per OST')
    survey.inspect()
    plan = survey.plan()
    # three active OSTs, each written and read: 48 s if each test lasts its 8 s; at worst each moves its floor
    assert plan['bounded'] == {'point_s': 8.0, 'point_min_mib': 256, 'floor_reason': 'point_min_mib 256 MiB per OST',
                               'target_duration_s': 48.0, 'worst_case_mib_per_ost': 512, 'full_mib_per_ost': 256}
    assert plan['bytes_written_per_ost'] == 128 * 1024 * 1024
    # and what the fast profile's estimate reads
    assert plan['point_sizing'] == {'full': 128, 'floor': 256, 'floor_reason': 'point_min_mib 256 MiB per OST',
                                    'point_s': 8.0}


def test_the_free_space_check_counts_the_floor_when_it_is_above_size_mib(tmp_path):
    survey, unused_runner, unused_state = make_survey(tmp_path, size_mib=128, point_s=8.0, point_min_mib=512,
                                                      available={0: 600 * 1024, 1: None, 2: 10 ** 7, 3: 10 ** 7})
    survey.inspect()
    assert [str(problem) for problem in survey.space_problems()] == [
        'point_min_mib: OST index 0 (testfs-OST0000_UUID) has 614400 KiB available, the survey needs 1048576 KiB '
        '(point_min_mib 512 x min_free_factor 2)']


@pytest.mark.parametrize('options, message', [
    ({'point_s': 0.0}, 'point_s: must be more than 0 seconds, got 0'),
    ({'point_min_mib': 0}, 'point_min_mib: must be at least 1, got 0'),
    ({'point_min_mib': None}, "point_min_mib: time-bounded points (point_s) need the floor per OST, and this client "
                              "cannot read the OSS's memory: give the largest OSS's MemTotal in MiB"),
])
def test_bounded_settings_are_checked(tmp_path, options, message):
    settings = dict(point_s=8.0, point_min_mib=256)
    settings.update(options)
    survey, unused_runner, unused_state = make_survey(tmp_path, **settings)
    assert [str(problem) for problem in survey.problems()][0].startswith(message)
