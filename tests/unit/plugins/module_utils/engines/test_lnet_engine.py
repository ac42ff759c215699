# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The lnet engine against a fake lst console: command lists and order, split modes, per-node figures, errors,
the session always ended, stale sessions, timeouts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import survey_module
from ansible_collections.lustre.iokit.plugins.module_utils.engines import lnet
from ansible_collections.lustre.iokit.plugins.module_utils.engines.contract import EngineContext
from ansible_collections.lustre.iokit.plugins.module_utils.engines.errors import EngineError
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.lst_survey import parse_lst_survey
from ansible_collections.lustre.iokit.plugins.module_utils.runner import CommandResult
from ansible_collections.lustre.iokit.tests.unit.fakes import FakeNode, RawSink, run_whole

S1, S2, C1 = '10.0.0.1@tcp', '10.0.0.2@tcp', '10.0.0.3@tcp'
KEY = 4242


def stat_block(label, read_mib, write_mib, read_rpc=1000.0, write_rpc=2000.0, spread=0.0):
    return ('[LNet Rates of %s]\n'
            '[R] Avg: %-8.0f RPC/s Min: %-8.0f RPC/s Max: %-8.0f RPC/s\n'
            '[W] Avg: %-8.0f RPC/s Min: %-8.0f RPC/s Max: %-8.0f RPC/s\n'
            '[LNet Bandwidth of %s]\n'
            '[R] Avg: %-8.2f MiB/s Min: %-8.2f MiB/s Max: %-8.2f MiB/s \n'
            '[W] Avg: %-8.2f MiB/s Min: %-8.2f MiB/s Max: %-8.2f MiB/s \n') % (
        label, read_rpc, read_rpc, read_rpc, write_rpc, write_rpc, write_rpc,
        label, read_mib, read_mib - spread, read_mib + spread, write_mib, write_mib - spread, write_mib + spread)


class FakeConsole(FakeNode):
    """Plays lst: one session per key, groups, batches; ``stat`` prints ``samples`` samples of every label
    (a node's write bandwidth from ``node_write``, default 100); ``show_error`` reports ``node_errors``."""

    def __init__(self, session=None, node_write=None, node_errors=None, stop_on_stat=None, samples=None):
        self.calls = []
        self.session = session  # (name, key)
        self.node_write = node_write or {}
        self.node_errors = node_errors or {}
        self.stop_on_stat = stop_on_stat
        self.samples = samples
        self.stop_reason = None
        self.stats = 0
        self.groups = {}

    def run_many(self, argvs, env=None, cwd=None):
        return [self._answer(list(argv), dict(env or {})) for argv in argvs]

    def _answer(self, argv, env):
        key = int(env.get('LST_SESSION', 0))
        self.calls.append((key, argv[1:]))
        command, args = argv[1], argv[2:]
        if command == 'show_session':
            if self.session is None:
                return CommandResult(argv, 255, '', 'No session exists\n', 0.01)
            return CommandResult(argv, 0, '%s ID: 1@10.0.0.9@tcp, KEY: %d FEATURES: 1 NODES: 0\n' % self.session,
                                 '', 0.01)
        if command == 'new_session':
            if self.session is not None and '--force' not in args:
                return CommandResult(argv, 255, '', 'session already exists\n', 0.01)
            self.session = (args[-1], key)
            return CommandResult(argv, 0, 'SESSION: %s FEATURES: 1 TIMEOUT: 300 FORCE: No\n' % args[-1], '', 0.01)
        if self.session is None:
            return CommandResult(argv, 255, '', 'No session exists\n', 0.01)
        if key != self.session[1]:
            return CommandResult(argv, 255, '', 'Unmatched session key or not root\n', 0.01)
        if command == 'end_session':
            self.session = None
            return CommandResult(argv, 0, 'session is ended\n', '', 0.01)
        if command == 'add_group':
            self.groups[args[0]] = args[1:]
        if command == 'stat':
            return self._stat(argv, args)
        if command == 'show_error':
            return self._show_error(argv, args)
        return CommandResult(argv, 0, '', '', 0.01)

    def _stat(self, argv, args):
        self.stats += 1
        labels = args[args.index('--delay') + 2:]
        count = int(args[args.index('--count') + 1]) if self.samples is None else self.samples
        text = ''
        for unused in range(count):
            for label in labels:
                nids = self.groups.get(label, [label])
                writes = [self.node_write.get(nid, 100.0) for nid in nids]
                text += stat_block(label, 10.0, sum(writes) / len(writes))
        if self.stop_on_stat == self.stats:
            self.stop_reason = 'timeout'
            return CommandResult(argv, -15, text, '', 1.0, timed_out=True)
        return CommandResult(argv, 0, text, '', 1.0)

    def _show_error(self, argv, args):
        out, err = '', ''
        for group in args:
            out += '%s:\n' % group
            bad = [nid for nid in self.groups.get(group, []) if nid in self.node_errors]
            for nid in bad:
                err += '12345-%s: [Session %d brw errors, 0 ping errors] [RPC: 0 errors, 0 dropped, 0 expired]\n' % (
                    nid, self.node_errors[nid])
            out += 'Total %d error nodes in %s\n' % (len(bad), group)
        return CommandResult(argv, 0, out, err, 0.01)


def make_survey(tmp_path, console, servers=(S1, S2), clients=(C1,), make_context=EngineContext, **options):
    state = NodeState(str(tmp_path))
    settings = dict(modes=['read', 'ping'], sizes=['4k'], stat_count=2, stat_delay_s=1, key=KEY, raw=RawSink())
    settings.update(options)
    context = make_context(console, console, state, 'run-1', 'mgs1')
    return lnet.LstSurvey(context, list(servers), list(clients), **settings), state


def commands(console):
    return [args for unused_key, args in console.calls]


# -- options ------------------------------------------------------------------------------------


@pytest.mark.parametrize('change, message', [
    ({'servers': []}, 'servers: give at least one NID'),
    ({'clients': ['node3']}, 'clients: not a NID'),
    ({'clients': ['-x@tcp']}, 'clients: not a NID'),
    ({'servers': [S1, S1]}, 'servers: each NID may appear once'),
    ({'modes': ['read', 'scan']}, 'modes: unknown mode scan'),
    ({'sizes': ['2m']}, 'sizes: 2m is above the LNet MTU'),
    ({'sizes': ['4x']}, "sizes: '4x' is not a size"),
    ({'concurrency': 0}, 'concurrency: must be from 1 to 1024'),
    ({'stat_count': 0}, 'stat_count: must be at least 1'),
    ({'stat_delay_s': 0}, 'stat_delay_s: must be at least 1'),
    ({'split': ['each_oss']}, 'split: unknown each_oss'),
    ({'distribute': '1'}, 'distribute: must be S:D'),
])
def test_bad_options_are_named(change, message):
    options = dict(servers=[S1], clients=[C1], modes=['read'], sizes=['4k'], concurrency=64, stat_count=3,
                   stat_delay_s=3, stat_group='servers', split=['all'])
    options.update(change)
    problems = lnet.option_problems(**options)
    assert any(message in str(problem) for problem in problems), problems


@pytest.mark.parametrize('size, expected', [
    ('512', 512), ('4k', 4096), ('4K', 4096), ('1m', 1048576), ('1M', 1048576), ('64k', 65536), (4096, 4096),
    # lst reads sizes with strtol and one letter k or m: what it would misread is refused.
    ('0', None), (0, None), ('010', None), ('08k', None), ('4KiB', None), ('4 k', None), (' 4k', None),
    ('1g', None), ('4kb', None), ('0x10', None), ('-4k', None), ('', None), (None, None), (True, None),
])
def test_sizes_are_those_lst_reads(size, expected):
    assert lnet.size_bytes(size) == expected


def test_ping_only_needs_no_size():
    assert lnet.option_problems([S1], [C1], ['ping'], [], 64, 3, 3, 'servers', ['all']) == []


def test_tests_follow_lst_surveys_order():
    tests = lnet.tests_plan(['read', 'write', 'ping'], ['4k', '1m'])
    assert [test['mode'] for test in tests] == ['read_4k', 'read_1m', 'write_4k', 'write_1m', 'ping']
    assert lnet.tests_plan(['rw'], ['1m'])[0]['ops'] == ['read', 'write']


def test_split_modes_make_the_group_pairs():
    pairs = lnet.group_pairs([S1, S2], [C1, '10.0.0.4@tcp'], ['all', 'each_server', 'each_client'])
    assert [(pair['split'], pair['servers'], pair['clients']) for pair in pairs] == [
        ('all', [S1, S2], [C1, '10.0.0.4@tcp']),
        ('each_server', [S1], [C1, '10.0.0.4@tcp']), ('each_server', [S2], [C1, '10.0.0.4@tcp']),
        ('each_client', [S1, S2], [C1]), ('each_client', [S1, S2], ['10.0.0.4@tcp'])]
    # lst-survey's --distribute: client group size : server group size.
    assert [lnet.pair_distribute(pair) for pair in pairs] == ['2:2', '2:1', '2:1', '1:2', '1:2']


def test_iokit_is_refused_before_2_16_with_the_version():
    problem = lnet.iokit_version_problem('2.15.5')
    assert 'Lustre 2.15.5' in problem and '2.16' in problem and 'engine: native' in problem
    assert lnet.iokit_version_problem('2.16.1') is None
    assert lnet.iokit_version_problem('2.16') is None and 'Lustre 2.14' in lnet.iokit_version_problem('2.14')
    # A version that cannot be read refuses nothing: lst-survey itself says whether it runs.
    assert lnet.iokit_version_problem(None) is None and lnet.iokit_version_problem('unknown') is None


# -- the command sequence ---------------------------------------------------------------------------


def test_the_exact_lst_commands_in_order(tmp_path):
    console = FakeConsole()
    survey, state = make_survey(tmp_path, console)
    records = list(run_whole(survey))
    stat_tail = ['--bw', '--rate', '--count', '2', '--delay', '1']
    assert commands(console) == [
        ['show_session'],
        ['new_session', '--timeout', '300', 'iokit_4242'],
        ['add_group', 'servers', S1, S2],
        ['add_group', 'clients', C1],
        ['add_batch', 'read_4k_1'],
        ['add_test', '--batch', 'read_4k_1', '--concurrency', '64', '--distribute', '1:2', '--from', 'clients',
         '--to', 'servers', 'brw', 'read', 'size=4k'],
        ['run', 'read_4k_1'],
        ['stat'] + stat_tail + ['servers', 'clients', S1, S2, C1],
        ['stop', 'read_4k_1'],
        ['show_error', 'servers', 'clients'],
        ['add_batch', 'ping_2'],
        ['add_test', '--batch', 'ping_2', '--concurrency', '64', '--distribute', '1:2', '--from', 'clients',
         '--to', 'servers', 'ping'],
        ['run', 'ping_2'],
        ['stat'] + stat_tail + ['servers', 'clients', S1, S2, C1],
        ['stop', 'ping_2'],
        ['show_error', 'servers', 'clients'],
        ['end_session'],
    ]
    # every command under our session key
    assert set(key for key, unused in console.calls) == {KEY}
    assert [record['mode'] for record in records] == ['read_4k', 'ping']
    assert survey.errors == [] and survey.aborted is None and survey.teardown_problems == []
    assert console.session is None and state.entries('lst_sessions') == []


def test_split_each_server_runs_every_server_alone(tmp_path):
    console = FakeConsole()
    survey, unused = make_survey(tmp_path, console, modes=['ping'], split=['each_server'], per_node_stats=False)
    records = list(run_whole(survey))
    assert [(record['split'], record['servers'], record['server_group']) for record in records] == [
        ('each_server', [S1], 'server0'), ('each_server', [S2], 'server1')]
    assert ['add_group', 'clients', C1] in commands(console)
    assert commands(console).count(['add_group', 'clients', C1]) == 1
    stats = [args for args in commands(console) if args[0] == 'stat']
    assert [args[-2:] for args in stats] == [['server0', 'clients'], ['server1', 'clients']]
    assert ['--distribute', '1:1'] == [args for args in commands(console) if args[0] == 'add_test'][0][5:7]


def test_rw_adds_a_read_and_a_write_test_to_one_batch(tmp_path):
    console = FakeConsole()
    survey, unused = make_survey(tmp_path, console, modes=['rw'], sizes=['1m'])
    list(run_whole(survey))
    added = [args for args in commands(console) if args[0] == 'add_test']
    assert [args[-3:] for args in added] == [['brw', 'read', 'size=1m'], ['brw', 'write', 'size=1m']]
    assert set(args[2] for args in added) == {'rw_1m_1'}


# -- records ---------------------------------------------------------------------------------------


def test_records_have_the_parse_lst_survey_shape_and_each_nodes_figures(tmp_path):
    console = FakeConsole(node_write={S2: 20.0})
    survey, unused = make_survey(tmp_path, console, modes=['read'])
    record = list(run_whole(survey))[0]
    assert record['servers'] == [S1, S2] and record['clients'] == [C1] and record['mode'] == 'read_4k'
    assert record['read_mib_s'] == 10.0 and record['write_mib_s'] == 60.0
    assert record['read_rpc_s'] == 1000.0 and record['write_rpc_s'] == 2000.0
    assert (record['server_errors'], record['client_errors'], record['complete']) == (0, 0, True)
    assert record['samples'] == 2 and record['concurrency'] == 64 and record['distribute'] == '1:2'
    nodes = dict((node['nid'], node) for node in record['nodes'])
    assert nodes[S2]['write_mib_s'] == 20.0 and nodes[S1]['write_mib_s'] == 100.0
    assert [nodes[nid]['role'] for nid in (S1, S2, C1)] == ['server', 'server', 'client']
    assert record['groups']['clients']['bandwidth']['write']['avg'] == 100.0
    # The CSV written as raw output reads back through the lst-survey parser.
    parsed = parse_lst_survey(survey.raw.summary_text)
    assert [(row['servers'], row['mode'], row['write_mib_s'], row['server_errors']) for row in parsed] == [
        ([S1, S2], 'read_4k', 60.0, 0)]


def test_lst_stat_min_and_max_are_kept(tmp_path):
    console = FakeConsole()
    survey, unused = make_survey(tmp_path, console, modes=['read'])
    original = console._stat

    def spread_stat(argv, args):
        result = original(argv, args)
        result.stdout = result.stdout.replace('Min: 100.00', 'Min: 40.00  ').replace('Max: 100.00', 'Max: 160.00 ')
        return result
    console._stat = spread_stat
    record = list(run_whole(survey))[0]
    assert (record['write_min_mib_s'], record['write_max_mib_s']) == (40.0, 160.0)


def test_errors_of_one_node_are_per_test_and_named(tmp_path):
    console = FakeConsole(node_errors={S2: 3})
    survey, unused = make_survey(tmp_path, console)
    records = list(run_whole(survey))
    first, second = records
    assert first['server_errors'] == 1 and first['client_errors'] == 0
    assert [node['errors'] for node in first['nodes'] if node['nid'] == S2] == [
        {'brw': 3, 'ping': 0, 'rpc': 0, 'dropped': 0, 'expired': 0}]
    # The session counter did not move during the second test: no error there.
    assert second['server_errors'] == 0
    assert survey.errors == [{'point': {'split': 'all', 'servers': 'servers', 'clients': 'clients', 'mode': 'read_4k'},
                              'message': 'LNet errors on 10.0.0.2@tcp (3 brw)'}]


def test_show_error_parser_reads_failures_and_totals():
    parsed = lnet.parse_show_error('servers:\nTotal 2 error nodes in servers\n',
                                   "RPC failure, can't show error on 12345-10.0.0.1@tcp\n"
                                   '12345-10.0.0.2@tcp: [Session 0 brw errors, 2 ping errors]\n')
    assert parsed['totals'] == {'servers': 2}
    assert parsed['nodes'][S1] == {'failure': 'RPC failure'}
    assert parsed['nodes'][S2]['ping'] == 2 and parsed['nodes'][S2]['rpc'] == 0


# -- sessions ----------------------------------------------------------------------------------------


def test_a_stale_session_of_ours_is_ended_first(tmp_path):
    console = FakeConsole(session=('iokit_77', 77))
    survey, state = make_survey(tmp_path, console, modes=['ping'])
    state.record('lst_sessions', 'old-run', name='iokit_77', key=77)
    list(run_whole(survey))
    assert console.calls[:3] == [(KEY, ['show_session']), (77, ['end_session']),
                                 (KEY, ['new_session', '--timeout', '300', 'iokit_4242'])]
    assert 'ended the lst session iokit_77 left open by run old-run' in survey.notes
    assert state.entries('lst_sessions') == []


def test_another_consoles_session_is_reported_and_left_alone(tmp_path):
    console = FakeConsole(session=('lnet_session', 999))
    survey, state = make_survey(tmp_path, console)
    with pytest.raises(EngineError, match='lnet_session .key 999. that this collection did not open'):
        survey.setup()
    assert survey.teardown(survey.control_runner) == []
    assert commands(console) == [['show_session']]
    assert console.session == ('lnet_session', 999) and state.entries('lst_sessions') == []


def test_force_session_replaces_it(tmp_path):
    console = FakeConsole(session=('lnet_session', 999))
    survey, unused = make_survey(tmp_path, console, modes=['ping'], force_session=True)
    assert len(list(run_whole(survey))) == 1
    assert ['new_session', '--timeout', '300', '--force', 'iokit_4242'] in commands(console)


def test_the_session_is_recorded_before_it_is_opened(tmp_path):
    console = FakeConsole()
    survey, state = make_survey(tmp_path, console)
    seen = []
    original = console._answer

    def watch(argv, env):
        if argv[1] == 'new_session':
            seen.extend(state.entries('lst_sessions'))
        return original(argv, env)
    console._answer = watch
    list(run_whole(survey))
    assert [(entry['name'], entry['key'], entry['run_id']) for entry in seen] == [('iokit_4242', KEY, 'run-1')]


# -- stops ------------------------------------------------------------------------------------------


def test_a_timeout_during_stat_keeps_the_samples_and_ends_the_session(tmp_path):
    console = FakeConsole(stop_on_stat=2, samples=1)
    survey, state = make_survey(tmp_path, console, stat_count=1)
    records = list(run_whole(survey))
    assert [record['mode'] for record in records] == ['read_4k', 'ping']
    assert records[-1]['complete'] is False and 'stopped after 1 of 1' in records[-1]['error']
    assert survey.aborted == 'timeout'
    assert any('interrupted: timeout' in error['message'] for error in survey.errors)
    assert commands(console)[-3:] == [['stop', 'ping_2'], ['show_error', 'servers', 'clients'], ['end_session']]
    assert console.session is None and state.entries('lst_sessions') == []


def test_a_stop_before_a_test_starts_ends_the_session(tmp_path):
    console = FakeConsole(stop_on_stat=1, samples=0)
    survey, unused = make_survey(tmp_path, console)
    records = list(run_whole(survey))
    assert records == [] and survey.aborted == 'timeout'
    assert ['add_batch', 'ping_2'] not in commands(console)
    assert commands(console)[-1] == ['end_session'] and console.session is None


def test_an_lst_failure_is_an_error_of_its_test_and_the_survey_goes_on(tmp_path):
    console = FakeConsole()
    original = console._answer

    def refuse(argv, env):
        if argv[1] == 'add_test' and argv[-1] == 'ping':
            console.calls.append((KEY, argv[1:]))
            return CommandResult(argv, 255, '', 'Invalid parameters list in command line\n', 0.01)
        return original(argv, env)
    console._answer = refuse
    survey, unused = make_survey(tmp_path, console, modes=['ping', 'read'])
    records = list(run_whole(survey))
    assert [record['mode'] for record in records] == ['read_4k']
    assert survey.errors[0]['point']['mode'] == 'ping'
    assert 'Invalid parameters list' in survey.errors[0]['message']
    assert commands(console)[-1] == ['end_session']


class RefusingBuilder:
    """An envelope builder that fails on the first record it is given."""
    extra_fields = {}

    def add_record(self, record):
        raise RuntimeError('the consumer failed')


def test_an_exception_in_the_consumer_still_ends_the_session(tmp_path):
    console = FakeConsole()
    survey, state = make_survey(tmp_path, console)
    with pytest.raises(RuntimeError):
        survey_module.run_native(RefusingBuilder(), survey, survey.control_runner)
    assert console.session is None and state.entries('lst_sessions') == []
    assert commands(console)[-1] == ['end_session']


def test_check_mode_plan_runs_nothing(tmp_path):
    console = FakeConsole()
    survey, unused = make_survey(tmp_path, console, modes=['read', 'write', 'ping'], sizes=['4k', '1m'],
                                 split=['all', 'each_client'], stat_count=3, stat_delay_s=3)
    plan = survey.plan()
    assert console.calls == []
    assert plan['tests'] == ['read_4k', 'read_1m', 'write_4k', 'write_1m', 'ping']
    assert plan['points'] == 10 and plan['estimated_duration_s'] == 90
    assert plan['session'] == 'iokit_4242'


# -- engine: iokit ------------------------------------------------------------------------------------


def test_iokit_command_line_per_split():
    argv = lnet.iokit_argv('/usr/bin/lst-survey', [S1, S2], [C1], ['read', 'ping'], ['4k'], 64, 3, 3, 'servers',
                           'each_server', '/w/lst_survey.each_server')
    assert argv == ['/usr/bin/lst-survey', '-t', '%s %s' % (S1, S2), '-f', C1, '-m', 'read ping', '-s', '4k',
                    '-c', '64', '-n', '3', '-D', '3', '-g', 'servers', '-O', '/w/lst_survey.each_server', '-N', '1']


def test_a_failed_show_error_is_an_error_and_the_counts_unknown(tmp_path):
    console = FakeConsole()
    original = console._answer

    def refuse(argv, env):
        if argv[1] == 'show_error':
            console.calls.append((KEY, argv[1:]))
            return CommandResult(argv, 255, '', 'Failed to show errors of servers: Input/output error\n', 0.01)
        return original(argv, env)
    console._answer = refuse
    survey, unused = make_survey(tmp_path, console, modes=['ping'])
    record = list(run_whole(survey))[0]
    assert record['server_errors'] is None and record['client_errors'] is None
    assert [error['message'] for error in survey.errors] == [
        'lst show_error failed (rc 255): Failed to show errors of servers: Input/output error']


def test_the_owner_of_each_nid_of_the_groups_is_kept_and_checked():
    owners = {'10.0.0.1@tcp': 'oss1', '10.0.0.3@tcp': ' client1 ', '10.0.0.9@tcp': 'oss9'}
    assert lnet.group_nid_owners(['10.0.0.1@tcp', '10.0.0.2@tcp'], ['10.0.0.3@tcp'], owners) == {
        '10.0.0.1@tcp': 'oss1', '10.0.0.3@tcp': 'client1'}
    assert lnet.group_nid_owners(['10.0.0.1@tcp'], ['10.0.0.3@tcp'], None) == {}
    assert lnet.nid_owner_problems(owners) == [] and lnet.nid_owner_problems(None) == []
    [problem] = lnet.nid_owner_problems({'10.0.0.1@tcp': '', '10.0.0.2@tcp': 3, '10.0.0.3@tcp': 'a/b'})
    assert problem.options == ('nid_owners',) and '10.0.0.1@tcp, 10.0.0.2@tcp, 10.0.0.3@tcp' in problem.rule
