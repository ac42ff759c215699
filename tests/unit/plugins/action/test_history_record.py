# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""history_record: the stored results recorded in the history as a task records them; results_location's check."""

from __future__ import annotations

import os

import pytest

from ansible_collections.lustre.iokit.plugins.plugin_utils.history import dsn as dsn_module
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.store import History
from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.history.helpers import (
    SqliteDatabase, store_run, tree_digest)

RUN_1 = '20261122T110000Z-run1'
RUN_2 = '20261122T120000Z-run2'


@pytest.fixture
def results_dir(tmp_path):
    path = tmp_path / 'results'
    path.mkdir()
    store_run(str(path), RUN_1)
    return str(path)


def test_a_hosts_result_is_recorded_beside_the_results_once(run_action, results_dir):
    args = {'results_dir': results_dir, 'run_id': RUN_1, 'hosts': ['oss1'], 'surveys': ['obdfilter']}
    first = run_action('history_record', args)
    assert first['dsn'] == 'sqlite://%s/history.sqlite' % results_dir and first['changed'] is True
    assert (first['runs_new'], first['envelopes_new']) == (1, 1) and first['samples_added'] > 0
    assert first['runs'][0]['run_id'] == RUN_1 and first['unreadable'] == []
    again = run_action('history_record', args)
    assert again['changed'] is False and again['runs'][0]['envelopes_unchanged'] == 1
    with History(first['dsn']) as history:
        run = history.run(RUN_1)
        assert (run.host_count, sorted(run.surveys)) == (1, ['obdfilter'])
        # The collection that records right after the store is the one that measured.
        assert run.collection_version


def test_without_a_run_every_stored_run_is_imported_with_the_tags_and_nid_owners_given(
        run_action, results_dir, tmp_path):
    store_run(results_dir, RUN_2, number=1)
    dsn = 'sqlite://%s/elsewhere/history.sqlite' % tmp_path
    hostvars = {'oss1': {'lnet_host_nid': '192.168.1.1@tcp'}, 'oss2': {}}
    result = run_action('history_record', {'results_dir': results_dir, 'nid_owners': {'192.168.1.2@tcp': 'oss2'}},
                        task_vars={'iokit_history_dsn': dsn, 'iokit_history_tags': {'site': 'lab'},
                                   'hostvars': hostvars, 'groups': {'all': ['oss1', 'oss2']}})
    assert result['dsn'] == dsn and [run['run_id'] for run in result['runs']] == [RUN_1, RUN_2]
    assert result['runs_new'] == 2 and result['not_runs'] == []
    with History(dsn) as history:
        assert [run.tags for run in history.runs()] == [{'site': 'lab'}, {'site': 'lab'}]
        assert sorted(set(sample.component_id for sample in history.samples(component_kind='NID'))) == [
            '192.168.1.100@tcp', 'oss1/192.168.1.1@tcp', 'oss2/192.168.1.2@tcp']


def test_check_mode_opens_no_database(run_action, results_dir):
    result = run_action('history_record', {'results_dir': results_dir, 'run_id': RUN_1}, check_mode=True)
    assert result['changed'] is False and 'check mode' in result['msg']
    assert not os.path.exists(os.path.join(results_dir, 'history.sqlite'))


def test_a_bad_dsn_fails_naming_its_variable(action_fails, results_dir):
    message = action_fails('history_record', {'results_dir': results_dir, 'run_id': RUN_1},
                           task_vars={'iokit_history_dsn': 'mysql://iokit:s3cret@db/iokit'})
    assert message.startswith('iokit_history_dsn: ') and 's3cret' not in message
    assert action_fails('history_record', {'results_dir': results_dir, 'run_id': RUN_1, 'dsn': 'sqlite://x'}) \
        .startswith('dsn: ')


def test_a_database_on_lustre_is_refused(action_fails, results_dir, tmp_path, monkeypatch):
    mountinfo = tmp_path / 'mountinfo'
    mountinfo.write_text('22 1 8:1 / / rw - ext4 /dev/sda1 rw\n'
                         '40 22 0:35 / %s rw - lustre 10.0.0.1@tcp:/testfs rw\n' % results_dir)
    monkeypatch.setattr(dsn_module, 'MOUNTINFO_PATH', str(mountinfo))
    message = action_fails('history_record', {'results_dir': results_dir, 'run_id': RUN_1})
    assert 'is on a Lustre file system (%s, type lustre)' % results_dir in message
    assert not os.path.exists(os.path.join(results_dir, 'history.sqlite'))


def test_a_locked_database_fails_the_step_naming_it_and_the_results_stay(action_fails, results_dir, tmp_path):
    database = SqliteDatabase(tmp_path / 'db')
    dsn = database.new_dsn()
    History(dsn).close()
    before = tree_digest(results_dir)
    with database.locked(dsn):
        message = action_fails('history_record', {'results_dir': results_dir, 'run_id': RUN_1, 'dsn': dsn,
                                                  'timeout_s': 0.3})
    assert message.startswith('history database %s: locked by another writer' % dsn)
    assert 'its results stay in %s' % os.path.join(results_dir, RUN_1) in message
    assert 'playbooks/history.yml -e history_action=import -e history_from=%s' % results_dir in message
    assert tree_digest(results_dir) == before


def test_a_database_that_cannot_be_opened_names_where_the_results_stay(action_fails, results_dir, tmp_path):
    message = action_fails('history_record', {'results_dir': results_dir, 'run_id': RUN_1,
                                              'dsn': SqliteDatabase(tmp_path / 'db').unreachable_dsn()})
    assert 'cannot create its directory' in message and 'its results stay in' in message


# -- results_location checks the settings before any node is touched ------------------------------------------------


def test_the_preflight_checks_and_returns_the_history_settings(run_action, action_fails, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    variables = {'iokit_results_dir': str(tmp_path / 'results'), 'iokit_run_id': RUN_1}
    result = run_action('results_location', {'check_history': True}, task_vars=variables)
    assert result['history'] == {'enabled': True, 'dsn': 'sqlite://%s/results/history.sqlite' % tmp_path}
    assert 'history' not in run_action('results_location', {}, task_vars=variables)
    off = run_action('results_location', {'check_history': True}, task_vars=dict(variables, iokit_history='false'))
    assert off['history'] == {'enabled': False, 'dsn': None}
    given = dict(variables, iokit_history_dsn='postgresql://iokit:s3cret@db/iokit')
    assert run_action('results_location', {'check_history': True}, task_vars=given)['history']['dsn'] == \
        'postgresql://iokit:***@db/iokit'
    message = action_fails('results_location', {'check_history': True},
                           task_vars=dict(variables, iokit_history_dsn='sqlite://relative'))
    assert message.startswith('iokit_history_dsn: ')
    assert message.endswith('nothing was started (iokit_history=false records no history)')
    assert action_fails('results_location', {'check_history': True},
                        task_vars=dict(variables, iokit_history='maybe')).startswith('iokit_history: must be true')
