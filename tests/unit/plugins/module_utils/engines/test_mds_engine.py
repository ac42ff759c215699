# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The mds engine against a fake runner: lctl commands and order, thread loop, per-MDT rates, errors, node state."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import adaptive
from ansible_collections.lustre.iokit.plugins.module_utils.engines import mds
from ansible_collections.lustre.iokit.plugins.module_utils.engines.contract import EngineContext
from ansible_collections.lustre.iokit.plugins.module_utils.engines.errors import EngineError
from ansible_collections.lustre.iokit.plugins.module_utils.lctl import Lctl
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.mds_survey import parse_mds_survey
from ansible_collections.lustre.iokit.plugins.module_utils.runner import CommandResult
from ansible_collections.lustre.iokit.tests.unit.fakes import FakeClock, FakeNode, RawSink

DL_BASE = """\
  0 UP osd-ldiskfs MGS-osd MGS-osd_UUID 4
  3 UP osd-ldiskfs testfs-MDT0000-osd testfs-MDT0000-osd_UUID 6
  6 UP mdt testfs-MDT0000 testfs-MDT0000_UUID 10
  9 UP osp testfs-OST0000-osc-MDT0000 testfs-MDT0000-mdtlov_UUID 4
 14 UP mdt testfs-MDT0001 testfs-MDT0001_UUID 10
 15 AT mdt testfs-MDT0002 testfs-MDT0002_UUID 1
 22 UP obdfilter testfs-OST0000 testfs-OST0000_UUID 6
"""


def threads_output(thr, test, rate, samples=(), devno=27):
    lines = ['Print status every 1 seconds',
             '--threads: starting %d threads on device %d running test_%s' % (thr, devno, test)]
    lines += ['%d/%d Total: %f/second' % (thr, thr, sample) for sample in samples]
    lines.append('Total: total 1000 threads %d sec 0.500000 %f/second' % (thr, rate))
    return '\n'.join(lines) + '\n'


class FakeRunner(FakeNode):
    """Plays lctl: ``dl`` lists the devices (echo clients appear once attached); ``--threads``
    answers from ``rates`` ({(target devno, test): (rate, samples)}); everything is logged."""

    def __init__(self, rates=None, failures=None, stop_at=None):
        # epoch seconds that only this runner moves: each --threads takes seconds_per_run
        self.wall = FakeClock(1800000000.0)
        self.seconds_per_run = 2.5
        self.threads_started = []
        self.calls = []
        self.echo = {}
        self.rates = rates or {}
        self.failures = failures or {}
        self.stop_at = stop_at
        self.stop_reason = None

    def dl_text(self):
        text = DL_BASE
        for name, index in sorted(self.echo.items(), key=lambda item: item[1]):
            text += ' %2d UP echo_client %s %s_UUID 3\n' % (index, name, name)
        return text

    def run_many(self, argvs, env=None, cwd=None):
        results = []
        for argv in argvs:
            self.calls.append(list(argv))
            results.append(self._answer(list(argv)))
        return results

    def _answer(self, argv):
        args = argv[1:]
        if args == ['dl']:
            return CommandResult(argv, 0, self.dl_text(), '', 0.01)
        if args[:2] == ['attach', 'echo_client']:
            self.echo[args[2]] = 27 + len(self.echo)
            return CommandResult(argv, 0, '', '', 0.01)
        if len(args) >= 3 and args[0] == '--device' and args[2] in ('cleanup', 'detach'):
            if args[2] == 'detach':
                self.echo.pop(args[1], None)
            return CommandResult(argv, 0, '', '', 0.01)
        if args[:2] == ['get_param', '-n'] and args[2].endswith('.filesfree'):
            # The module's free-inode check: ample inodes on every MDT (a quarter used).
            return CommandResult(argv, 0, ''.join('%d\n' % (3 << 30 if param.endswith('.filesfree') else 4 << 30)
                                                  for param in args[2:]), '', 0.01)
        if args and args[0] == '--threads':
            thr, devno, test = int(args[1]), int(args[3]), args[4][len('test_'):]
            self.threads_started.append((thr, test, self.wall.now))
            self.wall.sleep(self.seconds_per_run)
            if self.stop_at == (devno, test):
                self.stop_reason = 'timeout'
                return CommandResult(argv, -15, threads_output(thr, test, 1.0)[:60], '', 1.0, timed_out=True)
            if (devno, test) in self.failures:
                return CommandResult(argv, 1, threads_output(thr, test, 1.0).partition('Total')[0],
                                     self.failures[(devno, test)], 0.1)
            rate, samples = self.rates.get((devno, test), (1000.0, ()))
            return CommandResult(argv, 0, threads_output(thr, test, rate, samples, devno), '', 0.5)
        return CommandResult(argv, 0, '', '', 0.01)


def make_survey(tmp_path, runner, targets=None, make_context=EngineContext, **options):
    lctl = Lctl(runner)
    devices = lctl.devices()
    chosen = mds.resolve_targets(devices, targets)
    state = NodeState(str(tmp_path))
    defaults = dict(thrlo=1, thrhi=4, file_count=400, dir_count=1)
    defaults.update(options)
    context = make_context(runner, runner, state, 'run-1', 'mds1', wall_clock=defaults.pop('wall_clock', runner.wall))
    return mds.MdsSurvey(context, chosen, raw=RawSink(), **defaults), state


# -- targets and options ------------------------------------------------------------------------


def test_targets_default_to_every_up_mdt():
    devices = Lctl(FakeRunner()).devices()
    targets = mds.resolve_targets(devices)
    assert [(target.name, target.index, target.echo_client) for target in targets] == [
        ('testfs-MDT0000', 0, 'testfs-MDT0000_ecc'), ('testfs-MDT0001', 1, 'testfs-MDT0001_ecc')]


@pytest.mark.parametrize('names, message', [
    (['testfs-MDT0009'], 'targets: testfs-MDT0009 is not a device on this node'),
    (['testfs-MDT0002'], 'targets: testfs-MDT0002 is AT, not UP'),
    (['testfs-OST0000'], 'targets: testfs-OST0000 is a obdfilter device, not an mdt'),
    (['testfs-MDT0000', 'testfs-MDT0000'], 'targets: each MDT may appear once'),
])
def test_bad_targets_are_refused_naming_the_option(names, message):
    devices = Lctl(FakeRunner()).devices()
    with pytest.raises(EngineError, match=message):
        mds.resolve_targets(devices, names)


def test_no_mdt_on_the_node_is_refused():
    with pytest.raises(EngineError, match='targets: this node has no UP mdt'):
        mds.resolve_targets([{'name': 'testfs-OST0000', 'type': 'obdfilter', 'status': 'UP'}])


def test_mdt_index_is_hex_from_the_name():
    assert mds.mdt_index('fs-MDT001a') == 26
    assert mds.mdt_index('nomdt') is None
    assert mds.MdtTarget('fs-MDT001a', 26).directories(3) == ['/MDT001a-tests', '/MDT001a-tests1', '/MDT001a-tests2']


def test_sweep_doubles_and_skips_thread_counts_below_dir_count():
    assert mds.sweep(1, 8, 2, 1000) == [
        {'thr': 1, 'files_per_thread': 1000, 'skip': 'thr < dir_count: fewer threads than directories'},
        {'thr': 2, 'files_per_thread': 500, 'skip': None},
        {'thr': 4, 'files_per_thread': 250, 'skip': None},
        {'thr': 8, 'files_per_thread': 125, 'skip': None},
    ]


@pytest.mark.parametrize('options, message', [
    (dict(thrlo=8, thrhi=4), 'thrlo: 8 is greater than thrhi (4)'),
    (dict(file_count=3), 'file_count: 3 is less than 4 threads'),
    (dict(dir_count=8), 'dir_count: 8 is greater than every thread count'),
    (dict(tests=['lookup', 'destroy']), "tests: the first test must be 'create'"),
    (dict(tests=['create', 'lookup']), "tests: the first test must be 'create' and the last 'destroy'"),
    (dict(tests=['create', 'rename', 'destroy']), 'tests: unknown test rename'),
    (dict(layer='osd'), 'layer: only mdd'),
    (dict(stripe_count=-1), 'stripe_count: must not be negative'),
    (dict(thrhi=8192, file_count=10 ** 6), 'thrhi: lctl --threads allows at most 4096'),
])
def test_option_problems_name_the_option(options, message):
    arguments = dict(thrlo=1, thrhi=4, file_count=400, dir_count=1, stripe_count=0, tests=list(mds.TESTS),
                     start_number=2, layer='mdd')
    arguments.update(options)
    problems = mds.option_problems(**arguments)
    assert any(message in str(problem) for problem in problems), problems


def test_valid_options_have_no_problem():
    assert mds.option_problems(4, 32, 100000, 4, 0, list(mds.TESTS), 2, 'mdd') == []


# -- lctl --threads output ------------------------------------------------------------------------


def test_average_from_total_line_and_min_max_from_samples():
    stats = mds.threads_stats(threads_output(4, 'create', 5652.05, samples=(999.01, 46940.48, 3000.0)))
    assert stats == {'samples': 4, 'ops_s': 5652.05, 'min_ops_s': 999.01, 'max_ops_s': 46940.48,
                     'status': 'ok', 'message': None}


def test_only_the_total_line_gives_min_equal_max_equal_average():
    stats = mds.threads_stats(threads_output(1, 'lookup', 80211.5))
    assert (stats['ops_s'], stats['min_ops_s'], stats['max_ops_s'], stats['samples']) == (80211.5, 80211.5, 80211.5, 1)


@pytest.mark.parametrize('stdout, stderr, message', [
    (threads_output(2, 'create', 10.0), 'error: test_create-1: No such file or directory\n', 'error: test_create-1'),
    (threads_output(2, 'create', 10.0), '--threads: PID 42 had rc=5\n', 'PID 42 had rc=5'),
    ('Print status every 1 seconds\n--threads: starting 2 threads\n2/2 Total: 5.000000/second\n', '',
     'no "Total:" line'),
    ('--threads: starting 2 threads\n2/2 Total: 5.000000/second\ngarbage here\n', '', 'unexpected line: garbage'),
])
def test_errors_make_the_mdt_test_an_error(stdout, stderr, message):
    stats = mds.threads_stats(stdout, stderr, 1)
    assert stats['status'] == 'error' and stats['samples'] == -1 and stats['ops_s'] is None
    assert message in stats['message']


def test_worker_exit_zero_is_ignored():
    stats = mds.threads_stats(threads_output(2, 'create', 10.0), '--threads: PID 42 had rc=0\n')
    assert stats['status'] == 'ok'


def test_global_rate_is_the_mean_of_the_mdt_averages():
    per_mdt = [mds.threads_stats(threads_output(2, 'create', 100.0, samples=(50.0, 150.0))),
               mds.threads_stats(threads_output(2, 'create', 300.0, samples=(250.0, 400.0)))]
    assert mds.global_stats(per_mdt) == {'ops_s': 200.0, 'min_ops_s': 50.0, 'max_ops_s': 400.0, 'status': 'ok'}
    per_mdt[1] = mds.threads_stats('', 'error: test_create: Input/output error\n', 5)
    assert mds.global_stats(per_mdt) == {'ops_s': None, 'min_ops_s': None, 'max_ops_s': None, 'status': 'error'}


# -- a whole survey ---------------------------------------------------------------------------------


def test_setup_attaches_pre_cleans_and_creates_directories_in_order(tmp_path):
    runner = FakeRunner()
    survey, state = make_survey(tmp_path, runner, dir_count=2, thrlo=2)
    survey.setup()
    commands = [call[1:] for call in runner.calls if call[1:] != ['dl']]
    assert commands == [
        ['attach', 'echo_client', 'testfs-MDT0000_ecc', 'testfs-MDT0000_ecc_UUID'],
        ['--device', 'testfs-MDT0000_ecc', 'setup', 'testfs-MDT0000', 'mdd'],
        ['attach', 'echo_client', 'testfs-MDT0001_ecc', 'testfs-MDT0001_ecc_UUID'],
        ['--device', 'testfs-MDT0001_ecc', 'setup', 'testfs-MDT0001', 'mdd'],
        ['--device', '27', 'test_rmdir', '/MDT0000-tests'],
        ['--device', '27', 'test_rmdir', '/MDT0000-tests1'],
        ['--device', '27', 'test_mkdir', '/MDT0000-tests', '-c', '2', '--stripe_index', '0'],
        ['--device', '27', 'test_mkdir', '/MDT0000-tests1', '-c', '2', '--stripe_index', '0'],
        ['--device', '28', 'test_rmdir', '/MDT0001-tests'],
        ['--device', '28', 'test_rmdir', '/MDT0001-tests1'],
        ['--device', '28', 'test_mkdir', '/MDT0001-tests', '-c', '2', '--stripe_index', '1'],
        ['--device', '28', 'test_mkdir', '/MDT0001-tests1', '-c', '2', '--stripe_index', '1'],
    ]
    entries = dict((entry['name'], entry) for entry in state.entries('echo_clients', 'run-1'))
    assert entries['testfs-MDT0001_ecc']['target'] == 'testfs-MDT0001'
    assert entries['testfs-MDT0001_ecc']['directories'] == ['/MDT0001-tests', '/MDT0001-tests1']


def test_echo_client_is_recorded_before_it_is_attached(tmp_path):
    runner = FakeRunner()
    survey, state = make_survey(tmp_path, runner, targets=['testfs-MDT0000'])
    seen = []
    attach = survey.lctl.attach_echo_client

    def attach_and_look(name, target, layer=None):
        seen.append([entry['name'] for entry in state.entries('echo_clients')])
        return attach(name, target, layer=layer)

    survey.lctl.attach_echo_client = attach_and_look
    survey.setup()
    assert seen == [['testfs-MDT0000_ecc']]


def test_thread_loop_runs_tests_in_order_on_every_mdt_at_once(tmp_path):
    runner = FakeRunner()
    survey, unused_state = make_survey(tmp_path, runner, thrlo=1, thrhi=4, dir_count=2, file_count=400,
                                       stripe_count=1, start_number=5)
    survey.setup()
    del runner.calls[:]
    records = list(survey.run())
    threads = [call for call in runner.calls if call[1] == '--threads']
    assert threads[:2] == [
        ['lctl', '--threads', '2', '-1', '27', 'test_create', '-c', '1', '-d', '/MDT0000-tests', '-D', '2',
         '-b', '5', '-n', '200'],
        ['lctl', '--threads', '2', '-1', '28', 'test_create', '-c', '1', '-d', '/MDT0001-tests', '-D', '2',
         '-b', '5', '-n', '200'],
    ]
    assert threads[2] == ['lctl', '--threads', '2', '-1', '27', 'test_lookup', '-d', '/MDT0000-tests', '-D', '2',
                          '-b', '5', '-n', '200']
    assert [(call[2], call[5]) for call in threads[::2]] == [
        ('2', 'test_create'), ('2', 'test_lookup'), ('2', 'test_md_getattr'), ('2', 'test_setxattr'),
        ('2', 'test_destroy'),
        ('4', 'test_create'), ('4', 'test_lookup'), ('4', 'test_md_getattr'), ('4', 'test_setxattr'),
        ('4', 'test_destroy')]
    assert threads[-1][-2:] == ['-n', '100']
    assert [record['thr'] for record in records] == [2, 4]
    assert list(records[0]['tests']) == list(mds.TESTS)


def test_records_have_the_parser_shape_and_per_mdt_figures(tmp_path):
    rates = {(27, 'create'): (100.0, (80.0, 120.0)), (28, 'create'): (300.0, (290.0, 310.0))}
    runner = FakeRunner(rates=rates)
    survey, unused_state = make_survey(tmp_path, runner, thrlo=2, thrhi=2)
    survey.setup()
    record = list(survey.run())[0]
    assert record['tests']['create'] == {'ops_s': 200.0, 'min_ops_s': 80.0, 'max_ops_s': 310.0, 'status': 'ok',
                                         'start_time': 1800000000.0, 'end_time': 1800000005.0}
    assert (record['mdt'], record['file'], record['dir'], record['thr']) == (2, 400, 1, 2)
    assert [(entry['target'], entry['tests']['create']['ops_s']) for entry in record['per_mdt']] == [
        ('testfs-MDT0000', 100.0), ('testfs-MDT0001', 300.0)]
    parsed = parse_mds_survey(survey.raw.summary_text)
    assert len(parsed) == 1
    assert parsed[0]['tests']['create'] == {'ops_s': 200.0, 'min_ops_s': 80.0, 'max_ops_s': 310.0, 'status': 'ok'}
    assert (parsed[0]['mdt'], parsed[0]['file'], parsed[0]['thr'], parsed[0]['host']) == (2, 400, 2, 'mds1')


def test_each_test_carries_its_wall_clock_window_in_run_order(tmp_path):
    runner = FakeRunner()
    survey, unused_state = make_survey(tmp_path, runner, thrlo=2, thrhi=4)
    survey.setup()
    records = list(survey.run())
    # Two MDTs, one --threads each per test: every test spans 2 x 2.5 s of the injected wall clock.
    windows = [(record['thr'], test, record['tests'][test]['start_time'], record['tests'][test]['end_time'])
               for record in records for test in mds.TESTS]
    # Each test's first --threads (MDT0000's) starts its window.
    assert [(thr, test, start) for thr, test, start, unused in windows] == runner.threads_started[::2]
    assert all(end - start == 5.0 for unused, unused, start, end in windows)
    # Back to back and in order: each test starts where the one before ended.
    assert all(windows[index][2] == windows[index - 1][3] for index in range(1, len(windows)))


def test_an_error_on_one_mdt_prints_error_and_is_reported(tmp_path):
    runner = FakeRunner(failures={(28, 'setxattr'): 'error: test_setxattr-1: Input/output error\n'})
    survey, unused_state = make_survey(tmp_path, runner, thrlo=2, thrhi=2)
    survey.setup()
    record = list(survey.run())[0]
    setxattr = dict(record['tests']['setxattr'])
    assert setxattr.pop('end_time') > setxattr.pop('start_time')
    assert setxattr == {'ops_s': None, 'min_ops_s': None, 'max_ops_s': None, 'status': 'error'}
    assert record['tests']['destroy']['status'] == 'ok'
    assert record['per_mdt'][0]['tests']['setxattr']['status'] == 'ok'
    assert survey.errors == [{'point': {'thr': 2, 'test': 'setxattr'},
                              'message': 'setxattr: ERROR: testfs-MDT0001: error: test_setxattr-1: '
                                         'Input/output error'}]
    assert parse_mds_survey(survey.raw.summary_text)[0]['tests']['setxattr']['status'] == 'error'


def test_create_records_the_file_range_and_destroy_forgets_it(tmp_path):
    runner = FakeRunner()
    survey, state = make_survey(tmp_path, runner, targets=['testfs-MDT0000'], thrlo=2, thrhi=2)
    survey.setup()
    files_seen = []
    original = runner.run_many

    def watch(argvs, env=None, cwd=None):
        files_seen.append(state.entries('echo_clients')[0]['files'])
        return original(argvs, env=env)

    runner.run_many = watch
    list(survey.run())
    assert files_seen[0] == {'threads': 2, 'files_per_thread': 200, 'start_number': 2, 'dir_count': 1,
                             'basedir': '/MDT0000-tests'}
    assert state.entries('echo_clients')[0]['files'] is None


def test_timeout_mid_test_gives_a_partial_record_and_teardown_removes_everything(tmp_path):
    runner = FakeRunner(stop_at=(27, 'md_getattr'))
    survey, state = make_survey(tmp_path, runner, targets=['testfs-MDT0000'], thrlo=2, thrhi=4)
    survey.setup()
    records = list(survey.run())
    assert len(records) == 1
    assert records[0]['tests']['lookup']['status'] == 'ok'
    assert records[0]['tests']['md_getattr']['status'] == 'incomplete'
    assert survey.aborted == 'timeout'
    assert survey.errors[-1] == {'point': {'thr': 2, 'test': 'md_getattr'}, 'message': 'md_getattr interrupted: timeout'}
    cleanup_runner = FakeRunner()
    cleanup_runner.echo = dict(runner.echo)
    problems = survey.teardown(cleanup_runner)
    assert problems == []
    commands = [call[1:] for call in cleanup_runner.calls if call[1:] != ['dl']]
    assert commands == [
        ['--threads', '2', '-1', '27', 'test_destroy', '-d', '/MDT0000-tests', '-D', '1', '-b', '2', '-n', '200'],
        ['--device', '27', 'test_rmdir', '/MDT0000-tests'],
        ['--device', 'testfs-MDT0000_ecc', 'cleanup'],
        ['--device', 'testfs-MDT0000_ecc', 'detach'],
    ]
    assert state.entries('echo_clients') == []


def test_leftover_files_of_an_aborted_run_are_destroyed_before_the_directories(tmp_path):
    state = NodeState(str(tmp_path))
    state.record('echo_clients', 'old-run', name='testfs-MDT0000_ecc', target='testfs-MDT0000',
                 directories=['/MDT0000-tests'],
                 files={'threads': 8, 'files_per_thread': 50, 'start_number': 2, 'dir_count': 1,
                        'basedir': '/MDT0000-tests'})
    runner = FakeRunner()
    survey, unused_state = make_survey(tmp_path, runner, targets=['testfs-MDT0000'])
    survey.setup()
    commands = [call[1:] for call in runner.calls if call[1:] != ['dl']]
    assert commands[2:5] == [
        ['--threads', '8', '-1', '27', 'test_destroy', '-d', '/MDT0000-tests', '-D', '1', '-b', '2', '-n', '50'],
        ['--device', '27', 'test_rmdir', '/MDT0000-tests'],
        ['--device', '27', 'test_mkdir', '/MDT0000-tests', '-c', '1', '--stripe_index', '0'],
    ]
    assert state.entries('echo_clients', 'old-run') == []


def test_mkdir_failure_raises_and_teardown_still_cleans(tmp_path):
    runner = FakeRunner()
    original = runner._answer

    def answer(argv):
        if 'test_mkdir' in argv:
            return CommandResult(argv, 17, '', 'error: test_mkdir: File exists\n', 0.01)
        return original(argv)

    runner._answer = answer
    survey, state = make_survey(tmp_path, runner, targets=['testfs-MDT0000'])
    with pytest.raises(EngineError, match='test_mkdir /MDT0000-tests on testfs-MDT0000 failed'):
        survey.setup()
    assert 'created directories on mds1:testfs-MDT0000 failed' in survey.raw.summary_text
    assert survey.teardown(runner) == []
    assert state.entries('echo_clients') == []


def test_check_plan_lists_points_objects_and_touches_nothing(tmp_path):
    runner = FakeRunner()
    survey, state = make_survey(tmp_path, runner, thrlo=1, thrhi=4, dir_count=2, file_count=1000)
    del runner.calls[:]
    plan = survey.plan()
    assert runner.calls == [] and state.entries('echo_clients') == []
    assert plan['echo_clients'] == ['testfs-MDT0000_ecc', 'testfs-MDT0001_ecc']
    assert plan['directories']['testfs-MDT0001'] == ['/MDT0001-tests', '/MDT0001-tests1']
    assert plan['files_per_mdt_per_point'] == {2: 1000, 4: 1000}
    assert [point['skip'] is None for point in plan['points']] == [False, True, True]


# -- engine: iokit -------------------------------------------------------------------------------


def test_iokit_runs_the_script_with_the_same_parameters_and_trusts_the_text(tmp_path):
    rslt = str(tmp_path / 'mds_survey')
    summary = ('Mon Nov 23 2026 /usr/bin/mds-survey from mds1\n'
               'mdt 1 file     400 dir    1 thr    1 create 20967.33 [ 20967.33, 20967.33] '
               'lookup             ERROR destroy 42439.58 [ 42439.58, 42439.58] \n')

    class ScriptRunner:
        stop_reason = None

        def __init__(self):
            self.calls = []

        def run(self, argv, env=None, cwd=None):
            self.calls.append((argv, env))
            with open(rslt + '.summary', 'w') as handle:
                handle.write(summary)
            return CommandResult(argv, 0, summary, '', 3.0)

    runner = ScriptRunner()
    records, errors, unused = mds.run_iokit(
        runner, '/usr/bin/mds-survey', rslt, targets=['testfs-MDT0000'], thrlo=1, thrhi=1, file_count=400,
        dir_count=1, stripe_count=0, tests=['create', 'lookup', 'destroy'], start_number=2, layer='mdd')
    argv, env = runner.calls[0]
    assert argv == ['bash', '/usr/bin/mds-survey']
    assert env == {'targets': 'testfs-MDT0000', 'thrlo': '1', 'thrhi': '1', 'file_count': '400', 'dir_count': '1',
                   'stripe_count': '0', 'tests_str': 'create lookup destroy', 'start_number': '2', 'layer': 'mdd',
                   'rslt': rslt}
    assert records[0]['tests']['create']['ops_s'] == 20967.33
    assert errors == [{'point': {'thr': 1, 'test': 'lookup'}, 'message': 'lookup: ERROR in the mds-survey summary'}]


def test_iokit_exit_status_zero_with_a_failure_line_is_an_error(tmp_path):
    class ScriptRunner:
        stop_reason = None

        def run(self, argv, env=None, cwd=None):
            return CommandResult(argv, 0, "Can't find any MDT to test.  Please set targets=...\n", '', 0.1)

    records, errors, unused = mds.run_iokit(
        ScriptRunner(), 'mds-survey', str(tmp_path / 'r'), targets=[], thrlo=1, thrhi=1, file_count=1, dir_count=1,
        stripe_count=0, tests=list(mds.TESTS), start_number=2, layer='mdd')
    assert records == []
    assert errors == [{'point': None, 'message': "mds-survey: Can't find any MDT to test.  Please set targets=..."}]


class SaturatingRunner(FakeRunner):
    """MDTs that saturate at ``knee`` threads: 1000 operations per second per thread up to it, flat after."""

    def __init__(self, knee):
        FakeRunner.__init__(self)
        self.knee = knee

    def _answer(self, argv):
        if argv[1:2] == ['--threads']:
            thr, devno, test = int(argv[2]), int(argv[4]), argv[5][len('test_'):]
            self.rates[(devno, test)] = (1000.0 * min(thr, self.knee), ())
        return FakeRunner._answer(self, argv)


class SlowMdtRunner(SaturatingRunner):
    """As SaturatingRunner, with the MDT behind ``slow_devno`` at ``share`` of its peer's rate."""

    def __init__(self, knee, slow_devno, share):
        SaturatingRunner.__init__(self, knee)
        self.slow_devno = slow_devno
        self.share = share

    def _answer(self, argv):
        if argv[1:2] == ['--threads']:
            thr, devno, test = int(argv[2]), int(argv[4]), argv[5][len('test_'):]
            share = self.share if devno == self.slow_devno else 1.0
            self.rates[(devno, test)] = (1000.0 * min(thr, self.knee) * share, ())
            return FakeRunner._answer(self, argv)
        return SaturatingRunner._answer(self, argv)


def test_an_adaptive_sweep_stops_with_one_slow_mdt(tmp_path):
    # the second MDT at 60 %: the host's single-MDT min..max spans 600-1000 ops/s at the plateau, 25 % of the
    # figure per MDT, which judged as one curve was noise at every point; each MDT's own curve is flat past thr 2
    runner = SlowMdtRunner(knee=2, slow_devno=28, share=0.6)
    survey, unused_state = make_survey(tmp_path, runner, thrlo=1, thrhi=16, dir_count=1, file_count=1600)
    survey.inner_sweeps = adaptive.InnerSweeps('adaptive')
    survey.setup()
    records = list(survey.run())
    survey.teardown(runner)
    assert [record['thr'] for record in records] == [1, 2, 4]
    assert [entry['point'] for entry in survey.inner_sweeps.skipped_points] == [{'thr': 8}, {'thr': 16}]


@pytest.mark.parametrize('mode, expected', [('adaptive', [1, 2, 4]), ('full', [1, 2, 4, 8, 16])])
def test_adaptive_thread_sweep_stops_one_point_past_the_knee(tmp_path, mode, expected):
    runner = SaturatingRunner(knee=2)
    survey, unused_state = make_survey(tmp_path, runner, thrlo=1, thrhi=16, dir_count=1, file_count=1600)
    survey.inner_sweeps = adaptive.InnerSweeps(mode)
    survey.setup()
    records = list(survey.run())
    survey.teardown(runner)
    assert [record['thr'] for record in records] == expected
    if mode == 'adaptive':
        reasons = set(entry['reason'] for entry in survey.inner_sweeps.skipped_points)
        assert [entry['point'] for entry in survey.inner_sweeps.skipped_points] == [{'thr': 8}, {'thr': 16}]
        # each MDT's curve of each test is judged, and named
        assert len(reasons) == 1
        reason = reasons.pop()
        assert 'create testfs-MDT0000 saturated at thr 4: +0.0 % < 3 %' in reason
        assert 'create testfs-MDT0001 saturated at thr 4: +0.0 % < 3 %' in reason
    else:
        assert survey.inner_sweeps.skipped_points == []


# --------------------------------------------------------------------------
# Time-bounded points


class RateRunner(FakeRunner):
    """MDTs that handle items at set rates: a ``--threads`` run lasts the files it handles (threads x ``-n``) over
    its MDT's rate for that test (items per second, ``rates[devno](test, thr)``) and lctl prints that rate; a batch
    lasts as long as its slowest MDT.  ``deadline_s`` on the wall clock gives the survey's timeout
    (``remaining_s``, as a Runner has)."""

    def __init__(self, rates, deadline_s=None):
        FakeRunner.__init__(self)
        self.item_rates = rates
        self.deadline_s = deadline_s
        self.batches = []

    def remaining_s(self):
        if self.deadline_s is None:
            return None
        return max(0.0, self.deadline_s - self.wall.now)

    def run_many(self, argvs, env=None, cwd=None):
        if not all(argv[1:2] == ['--threads'] for argv in argvs):
            return FakeRunner.run_many(self, argvs, env=env, cwd=cwd)
        results = []
        batch = []
        for argv in argvs:
            self.calls.append(list(argv))
            thr, devno, test = int(argv[2]), int(argv[4]), argv[5][len('test_'):]
            per_thread = int(argv[argv.index('-n') + 1])
            rate = self.item_rates[devno](test, thr)
            self.threads_started.append((thr, test, self.wall.now))
            batch.append((thr, test, devno, per_thread))
            results.append(CommandResult(argv, 0, threads_output(thr, test, rate, (), devno), '',
                                         thr * per_thread / rate))
        self.batches.append(batch)
        self.wall.sleep(max(result.elapsed_s for result in results))
        return results


def slow_and_fast_mdts():
    """MDT0001 (devno 28) creates 95 files per second per thread up to 300; its other tests are four times faster;
    MDT0000 (devno 27) is twice as fast in every test."""
    def slow(test, thr):
        create = min(95.0 * thr, 300.0)
        return create if test == 'create' else 4 * create
    return {28: slow, 27: lambda test, thr: 2 * slow(test, thr)}


def bounded_mds(tmp_path, runner, **options):
    settings = dict(thrlo=1, thrhi=8, dir_count=1, file_count=20000, point_s=10.0, point_min_items=1001,
                    floor_reason='point_min_items 1001 items per MDT')
    settings.update(options)
    # the survey times its points on the clock the fake MDTs move
    context = functools.partial(EngineContext, clock=runner.wall)
    survey = make_survey(tmp_path, runner, make_context=context, **settings)[0]
    survey.setup()
    return survey


def files_per_thread_per_mdt(runner):
    """Each test's --threads batch as (threads, test, {devno: files per thread})."""
    return [(batch[0][0], batch[0][1], dict((devno, per_thread) for unused, unused, devno, per_thread in batch))
            for batch in runner.batches]


def test_a_bounded_point_creates_the_floor_first_then_its_time_at_the_slowest_mdts_rate(tmp_path):
    runner = RateRunner(slow_and_fast_mdts())
    survey = bounded_mds(tmp_path, runner)
    records = list(survey.run())
    assert survey.errors == []
    # per MDT: thr 1 has no rate yet (the floor); thr 2 at 95/s x 10 s = 950, below the 1001 floor, which is rounded
    # up to whole files for 2 threads; thr 4 at 190/s: 1900; thr 8 at 300/s: 3000; never the 20000 of file_count
    assert [(r['thr'], r['moved_items_per_mdt'], r['point_limit'], r['sized_from_ops_s']) for r in records] == [
        (1, 1001, 'floor, no rate yet', None), (2, 1002, 'floor', 95.0), (4, 1900, 'time budget', 190.0),
        (8, 3000, 'time budget', 300.0)]
    assert all(r['bounded'] is True and r['point_s'] == 10.0 for r in records)
    assert [(r['file'], r['files_per_thread']) for r in records] == [(1001, 1001), (1002, 501), (1900, 475),
                                                                     (3000, 375)]
    # every test of a point acts on the files its create made, and every MDT handles the same count
    expected = [(thr, test, {27: per_thread, 28: per_thread})
                for thr, per_thread in ((1, 1001), (2, 501), (4, 475), (8, 375)) for test in mds.TESTS]
    assert files_per_thread_per_mdt(runner) == expected
    # on the plateau the slowest MDT's slowest test (create) lasts its point_s exactly, the others a quarter of it
    last = records[-1]
    assert last['elapsed_s'] == 10.0 + 4 * 2.5
    assert last['tests']['create']['end_time'] - last['tests']['create']['start_time'] == 10.0
    assert [entry['tests']['create']['ops_s'] for entry in last['per_mdt']] == [600.0, 300.0]
    # the I/O kit's summary line says what the point created
    assert parse_mds_survey(survey.raw.summary_text)[-1]['file'] == 3000


def test_a_bounded_point_never_creates_more_than_file_count(tmp_path):
    runner = RateRunner(slow_and_fast_mdts())
    records = list(bounded_mds(tmp_path, runner, file_count=2000).run())
    # thr 8 would create 3000: file_count caps it, split as the I/O kit splits it
    assert [(r['moved_items_per_mdt'], r['point_limit']) for r in records] == [
        (1001, 'floor, no rate yet'), (1002, 'floor'), (1900, 'time budget'), (2000, 'full size')]
    assert records[-1]['files_per_thread'] == 250


def test_the_floor_wins_over_file_count(tmp_path):
    runner = RateRunner(slow_and_fast_mdts())
    records = list(bounded_mds(tmp_path, runner, file_count=500).run())
    # the floor, rounded up to whole files for every thread
    assert [(r['thr'], r['moved_items_per_mdt'], r['point_limit']) for r in records] == [
        (1, 1001, 'floor, no rate yet'), (2, 1002, 'floor'), (4, 1004, 'floor'), (8, 1008, 'floor')]


def first_point_s():
    """How long the first bounded point lasts on slow_and_fast_mdts: 1001 files at 95 per second to create, then
    four tests at 380 per second."""
    return 1001 / 95.0 + 4 * 1001 / 380.0


def test_a_point_whose_floor_cannot_be_created_before_the_timeout_is_not_run_and_says_why(tmp_path):
    # after the first point 50.5 s are left, 10.1 s per test, less than the 10.5 s its floor takes at 95 per second
    runner = RateRunner(slow_and_fast_mdts(), deadline_s=1800000000.0 + first_point_s() + 50.5)
    survey = bounded_mds(tmp_path, runner)
    records = list(survey.run())
    assert [r['thr'] for r in records] == [1]
    assert sorted(set(thr for thr, unused, unused in files_per_thread_per_mdt(runner))) == [1]
    # the next points are sized from the same rate (thr 1's, the last one measured) and refused alike
    assert [error['point'] for error in survey.errors] == [{'thr': 2}, {'thr': 4}, {'thr': 8}]
    message = survey.errors[0]['message']
    assert message.startswith('not run: point_min_items: every mds point must move at least 1001 items per target')
    assert 'about 11 s at the 95.0 items/s measured so far, more than the 10 s left before timeout' in message


def test_the_time_left_bounds_a_point_as_point_s_does(tmp_path):
    # after the first point 60.5 s are left, 12.1 s per test: thr 2 at 95 per second gets 1150 files (whole files
    # for its 2 threads), not 30 s worth
    runner = RateRunner(slow_and_fast_mdts(), deadline_s=1800000000.0 + first_point_s() + 60.5)
    survey = bounded_mds(tmp_path, runner, thrhi=2, point_s=30.0)
    records = list(survey.run())
    assert [(r['thr'], r['moved_items_per_mdt'], r['point_limit']) for r in records] == [
        (1, 1001, 'floor, no rate yet'), (2, 1150, 'time budget')]
    assert survey.errors == []


def test_with_time_enough_the_timeout_bounds_nothing(tmp_path):
    runner = RateRunner(slow_and_fast_mdts(), deadline_s=1800000000.0 + 10000.0)
    records = list(bounded_mds(tmp_path, runner).run())
    assert [r['moved_items_per_mdt'] for r in records] == [1001, 1002, 1900, 3000]


def test_a_resumed_bounded_sweep_sizes_its_next_point_from_the_earlier_attempts(tmp_path):
    whole = [(r['thr'], r['moved_items_per_mdt'])
             for r in bounded_mds(tmp_path / 'whole', RateRunner(slow_and_fast_mdts())).run()]
    killed = bounded_mds(tmp_path / 'killed', RateRunner(slow_and_fast_mdts()))
    done = [record for record, unused in zip(killed.run(), range(2))]
    runner = RateRunner(slow_and_fast_mdts())
    resumed = bounded_mds(tmp_path / 'resumed', runner)
    resumed.done_points = dict((record['thr'], record) for record in done)
    records = list(resumed.run())
    # only the missing points run, and they create what they created in the uninterrupted run
    assert [(r['thr'], r['moved_items_per_mdt']) for r in records] == whole[2:]
    assert sorted(set(thr for thr, unused, unused in files_per_thread_per_mdt(runner))) == [4, 8]


def test_without_point_s_the_plan_and_commands_are_the_io_kits(tmp_path):
    def commands_and_plan(path, **options):
        runner = FakeRunner()
        survey = make_survey(path, runner, thrlo=1, thrhi=4, file_count=400, **options)[0]
        survey.setup()
        records = list(survey.run())
        return runner.calls, survey.plan(), records

    today = commands_and_plan(tmp_path / 'today')
    with_floor_only = commands_and_plan(tmp_path / 'floor', point_min_items=5000)
    # the floor alone only tells the plan what the fast profile would create
    assert with_floor_only[1].pop('point_sizing') == {'full': 400, 'floor': 5000, 'floor_reason': None,
                                                      'point_s': None}
    assert with_floor_only == today
    assert 'bounded' not in today[1] and not any('bounded' in record for record in today[2])


def test_the_plan_of_bounded_points_gives_their_time_and_the_worst_case(tmp_path):
    survey = make_survey(tmp_path, FakeRunner(), thrlo=1, thrhi=8, file_count=500, point_s=10.0,
                         point_min_items=1001, floor_reason='point_min_items 1001 items per MDT')[0]
    plan = survey.plan()
    # four points of five tests: 200 s if each test lasts its 10 s; at worst every point creates its floor, rounded
    # up to whole files for its threads, and every test touches each file
    assert plan['bounded'] == {'point_s': 10.0, 'point_min_items': 1001,
                               'floor_reason': 'point_min_items 1001 items per MDT', 'target_duration_s': 200.0,
                               'worst_case_operations_per_mdt': (1001 + 1002 + 1004 + 1008) * 5,
                               'full_operations_per_mdt': (500 + 500 + 500 + 496) * 5}
    # the points are the full grid's, so a rerun recognises the same points
    assert [point['files_per_thread'] for point in plan['points']] == [500, 250, 125, 62]


def test_the_inode_check_counts_the_floor_when_it_is_above_file_count(tmp_path):
    class FewInodes(FakeRunner):
        def _answer(self, argv):
            if argv[1:3] == ['get_param', '-n'] and argv[3].endswith('.filesfree'):
                return CommandResult(argv, 0, '1005\n', '', 0.01)
            return FakeRunner._answer(self, argv)

    full = make_survey(tmp_path / 'full', FewInodes(), thrlo=1, thrhi=8, file_count=500)[0]
    assert full.free_inode_problems()[0] == []
    bounded = make_survey(tmp_path / 'bounded', FewInodes(), thrlo=1, thrhi=8, file_count=500, point_s=10.0,
                          point_min_items=1001)[0]
    problems, unused = bounded.free_inode_problems()
    # thr 8 creates its floor rounded up to 1008 files, and the directory is an inode too: the floor is to lower
    assert [str(problem) for problem in problems] == [
        'point_min_items: 1008 files and 1 directories do not fit testfs-MDT%04d, which has 1005 free inodes (lctl '
        'get_param osd-*.testfs-MDT%04d.filesfree); lower point_min_items (mds_point_min_items)' % (index, index)
        for index in (0, 1)]


@pytest.mark.parametrize('options, message', [
    ({'point_s': 0.0}, 'point_s: must be more than 0 seconds, got 0'),
    ({'point_s': -5.0}, 'point_s: must be more than 0 seconds, got -5'),
    ({'point_min_items': 0}, 'point_min_items: must be at least 1, got 0'),
])
def test_bounded_settings_are_checked(tmp_path, options, message):
    settings = dict(point_s=10.0, point_min_items=1001)
    settings.update(options)
    survey = make_survey(tmp_path, FakeRunner(), **settings)[0]
    assert [str(problem) for problem in survey.problems()] == [message]
