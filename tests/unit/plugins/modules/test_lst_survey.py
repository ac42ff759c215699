# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The lst_survey module on a fake console: validation before anything runs, check-mode plan, envelope,
lnet_selftest loaded and unloaded, the iokit engine refused before 2.16."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
import os

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import progress as progress_utils
from ansible_collections.lustre.iokit.plugins.module_utils import results
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.lst_survey import parse_lst_survey
from ansible_collections.lustre.iokit.plugins.module_utils.runner import CommandResult
from ansible_collections.lustre.iokit.plugins.modules import lst_survey
from ansible_collections.lustre.iokit.tests.unit.plugins.module_utils.engines.test_lnet_engine import FakeConsole

LSMOD_HEADER = 'Module                  Size  Used by\n'


class Node:
    console = None
    version = '2.15.5'
    loaded = []
    calls = []


class NodeCommands:
    """lctl, lsmod/modprobe/rmmod on the fake node; lst on the fake console (which a test may replace)."""

    @property
    def stop_reason(self):
        return Node.console.stop_reason

    def expired(self):
        return Node.console.expired()

    def run_many(self, argvs, env=None, cwd=None):
        answers = []
        for argv in argvs:
            Node.calls.append(list(argv))
            answers.append(self._answer(list(argv), env))
        return answers

    def _answer(self, argv, env):
        if argv[0] == 'lst':
            return Node.console.run(argv, env=env)
        if argv[:2] == ['lctl', 'get_param']:
            return CommandResult(argv, 0, Node.version + '\n', '', 0.01)
        if argv == ['lsmod']:
            return CommandResult(argv, 0, LSMOD_HEADER + ''.join('%s 294912 0\n' % name for name in Node.loaded), '',
                                 0.01)
        if argv[0] == 'modprobe':
            Node.loaded.append(argv[1])
        if argv[0] == 'rmmod':
            Node.loaded.remove(argv[1])
        return CommandResult(argv, 0, '', '', 0.01)


@pytest.fixture(autouse=True)
def seams(monkeypatch, tmp_path, fake_runners):
    Node.console = FakeConsole()
    Node.version = '2.15.5'
    Node.loaded = []
    Node.calls = []
    fake_runners(lst_survey, NodeCommands())
    # The module checks that lst is installed; the fake console answers for it.
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    (bin_dir / 'lst').write_text('#!/bin/sh\nexit 1\n')
    os.chmod(str(bin_dir / 'lst'), 0o755)
    monkeypatch.setenv('PATH', '%s:%s' % (bin_dir, os.environ.get('PATH', '')))


@pytest.fixture
def run_module(run_in_process):
    return functools.partial(run_in_process, lst_survey)


def base(tmp_path, **change):
    args = {'servers': ['10.0.0.1@tcp', '10.0.0.2@tcp'], 'clients': ['10.0.0.3@tcp'], 'modes': ['read', 'ping'],
            'sizes': ['4k'], 'stat_count': 1, 'stat_delay_s': 1, 'run_id': 'test-run',
            'workdir': str(tmp_path / 'work')}
    args.update(change)
    return args


def changed_anything():
    return [argv for argv in Node.calls if argv[0] in ('modprobe', 'rmmod')] + Node.console.calls


@pytest.mark.parametrize('change, message', [
    ({'servers': ['oss1']}, 'servers: not a NID'),
    ({'clients': []}, 'clients: give at least one NID'),
    ({'sizes': ['4m']}, 'sizes: 4m is above the LNet MTU'),
    ({'concurrency': 2000}, 'concurrency: must be from 1 to 1024'),
    ({'stat_count': 0}, 'stat_count: must be at least 1 sample'),
    ({'timeout': 0}, 'timeout: must be at least 1 second'),
    ({'run_id': '../x'}, 'run_id'),
    ({'nid_owners': {'10.0.0.1@tcp': ''}}, 'nid_owners: map each NID to the inventory name'),
])
def test_bad_parameters_fail_naming_them_before_anything_runs(run_module, tmp_path, change, message):
    result = run_module(base(tmp_path, **change))
    assert result['failed'] is True and message in result['msg'], result['msg']
    assert changed_anything() == []
    assert not os.path.exists(str(tmp_path / 'work' / 'test-run'))


def test_check_mode_returns_the_plan_and_touches_nothing(run_module, tmp_path):
    result = run_module(base(tmp_path, split=['all', 'each_server']), check_mode=True)
    assert changed_anything() == []
    assert result['status'] == 'skipped' and result['records'] == []
    assert result['plan']['tests'] == ['read_4k', 'ping'] and result['plan']['points'] == 6
    assert result['plan']['lines'][1] == "group pairs: ['all', 'each_server', 'each_server']; tests: ['read_4k', 'ping']"
    assert [pair['servers'] for pair in result['plan']['pairs']] == [
        ['10.0.0.1@tcp', '10.0.0.2@tcp'], ['10.0.0.1@tcp'], ['10.0.0.2@tcp']]
    assert NodeState(str(tmp_path / 'work')).read()['lst_sessions'] == []


def test_a_run_returns_a_valid_envelope_and_leaves_nothing(run_module, tmp_path):
    result = run_module(base(tmp_path))
    envelope = result['envelope']
    assert results.validate_envelope(envelope) == []
    assert envelope['status'] == 'ok' and envelope['survey'] == 'lnet'
    assert [record['mode'] for record in envelope['records']] == ['read_4k', 'ping']
    assert envelope['environment']['lnet_selftest_loaded_by_us'] is True
    assert ['modprobe', 'lnet_selftest'] in Node.calls and ['rmmod', 'lnet_selftest'] in Node.calls
    with open(envelope['raw_output']) as handle:
        assert [row['mode'] for row in parse_lst_survey(handle.read())] == ['read_4k', 'ping']
    state = NodeState(str(tmp_path / 'work')).read()
    assert state['lst_sessions'] == [] and state['modules'] == []
    assert Node.console.session is None


def test_the_envelope_records_the_host_that_owns_each_nid_of_the_groups(run_module, tmp_path):
    owners = {'10.0.0.1@tcp': 'oss1', '10.0.0.2@tcp': 'oss2', '10.0.0.3@tcp': 'client1', '10.0.0.9@tcp': 'oss9'}
    envelope = run_module(base(tmp_path, nid_owners=owners))['envelope']
    assert results.validate_envelope(envelope) == []
    # only the NIDs of the test's groups; not a survey parameter (it changes nothing measured)
    assert envelope['environment']['nid_owners'] == {
        '10.0.0.1@tcp': 'oss1', '10.0.0.2@tcp': 'oss2', '10.0.0.3@tcp': 'client1'}
    assert 'nid_owners' not in envelope['parameters']
    # each node's own figures name its NID, which the history keys by this owner (history/test_identity.py)
    assert set(node['nid'] for record in envelope['records'] for node in record['nodes']) == set(
        envelope['environment']['nid_owners'])


def test_without_nid_owners_the_envelope_records_none(run_module, tmp_path):
    assert run_module(base(tmp_path))['envelope']['environment']['nid_owners'] == {}


def test_lnet_selftest_loaded_by_someone_else_stays(run_module, tmp_path):
    Node.loaded = ['lnet_selftest']
    result = run_module(base(tmp_path))
    assert result['environment']['lnet_selftest_loaded_by_us'] is False
    assert Node.loaded == ['lnet_selftest']
    assert not [argv for argv in Node.calls if argv[0] in ('modprobe', 'rmmod')]


def test_a_timeout_gives_a_partial_envelope(run_module, tmp_path):
    Node.console = FakeConsole(stop_on_stat=2, samples=1)
    result = run_module(base(tmp_path))
    assert result['status'] == 'partial'
    assert [record['complete'] for record in result['records']] == [True, False]
    assert any('interrupted: timeout' in error['message'] for error in result['errors'])
    assert Node.console.session is None


def test_another_session_fails_naming_it(run_module, tmp_path):
    Node.console = FakeConsole(session=('lnet_session', 31))
    result = run_module(base(tmp_path))
    assert result['failed'] is True and result['status'] == 'failed'
    assert 'lnet_session (key 31)' in result['msg'] and 'force_session' in result['msg']
    assert Node.console.session == ('lnet_session', 31)
    assert ['rmmod', 'lnet_selftest'] in Node.calls


def test_the_iokit_engine_is_refused_on_2_15_naming_the_version(run_module, tmp_path):
    result = run_module(base(tmp_path, engine='iokit'))
    assert result['failed'] is True
    assert 'Lustre 2.15.5' in result['msg'] and '2.16' in result['msg']
    assert changed_anything() == []


def test_each_test_of_each_group_pair_moves_the_progress_on(run_module, tmp_path, monkeypatch):
    progress_file = str(tmp_path / 'work' / 'test-run' / 'lnet.progress.json')
    seen = []
    play = Node.console.run

    def run_noting_the_progress(argv, env=None):
        if argv[1] == 'stat':
            summary = progress_utils.read_progress(progress_file)
            seen.append((summary['done'], summary['total'], summary['current'], summary['eta_s']))
        return play(argv, env=env)
    monkeypatch.setattr(Node.console, 'run', run_noting_the_progress)
    result = run_module(base(tmp_path, split=['all', 'each_server']))
    assert result['envelope']['status'] == 'ok'
    assert [entry[:3] for entry in seen] == [
        (0, 6, {'servers': 'servers', 'clients': 'clients', 'mode': 'read_4k'}),
        (1, 6, {'servers': 'servers', 'clients': 'clients', 'mode': 'ping'}),
        (2, 6, {'servers': 'server0', 'clients': 'clients', 'mode': 'read_4k'}),
        (3, 6, {'servers': 'server0', 'clients': 'clients', 'mode': 'ping'}),
        (4, 6, {'servers': 'server1', 'clients': 'clients', 'mode': 'read_4k'}),
        (5, 6, {'servers': 'server1', 'clients': 'clients', 'mode': 'ping'})]
    # before the first test ends the ETA is the plan's: 6 tests of one 1 s sample
    assert seen[0][3] is not None and seen[0][3] <= 6
    final = progress_utils.read_progress(progress_file)
    assert (final['state'], final['done'], final['total']) == ('ok', 6, 6)
    assert final['last']['figure'] is not None


def test_a_rerun_of_the_run_id_measures_only_the_tests_the_stopped_attempt_left(run_module, tmp_path):
    Node.console = FakeConsole(stop_on_stat=2, samples=1)
    first = run_module(base(tmp_path, split=['all', 'each_server']))
    assert first['status'] == 'partial'
    assert [(record['server_group'], record['mode']) for record in first['records'] if record['complete']] == [
        ('servers', 'read_4k')]
    Node.console = FakeConsole()
    resumed = run_module(base(tmp_path, split=['all', 'each_server']))
    envelope = resumed['envelope']
    assert envelope['status'] == 'ok' and results.validate_envelope(envelope) == []
    # the cut test is measured again, whole, by the second attempt; the finished one is kept from the first
    assert [(record['server_group'], record['mode'], record['attempt']) for record in envelope['records']] == [
        ('servers', 'read_4k', 1), ('servers', 'ping', 2), ('server0', 'read_4k', 2), ('server0', 'ping', 2),
        ('server1', 'read_4k', 2), ('server1', 'ping', 2)]
    assert [attempt['attempt'] for attempt in envelope['attempts']] == [1, 2]
    Node.console = FakeConsole()
    again = run_module(base(tmp_path, split=['all', 'each_server'], force_rerun=True))
    assert [record['attempt'] for record in again['envelope']['records']] == [1] * 6
