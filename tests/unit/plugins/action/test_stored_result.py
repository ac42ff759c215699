# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""stored_result: reads back what store_result wrote; only a valid ``ok`` in its own place lets a rerun skip."""

from __future__ import annotations

import shutil

import pytest

RUN_ID = '20261122T101500Z-3f2a'


@pytest.fixture
def store(tmp_path):
    return tmp_path / 'store'


@pytest.fixture
def put(store, run_action):
    """``put(envelope, host)``: the envelope stored by store_result as a playbook stores it."""
    def store_one(envelope, host='oss1'):
        return run_action('store_result', {'envelope': envelope, 'results_dir': str(store), 'fetch_raw_output': False},
                          task_vars={'inventory_hostname': host})['path']
    return store_one


def look(run_action, store, survey='obdfilter', inventory_hostname='oss1', **args):
    return run_action('stored_result', dict({'results_dir': str(store), 'run_id': RUN_ID, 'survey': survey}, **args),
                      task_vars={'inventory_hostname': inventory_hostname})


def test_an_ok_result_stored_by_store_result_is_read_back_and_skipped_on_a_rerun(store, put, run_action, make_envelope,
                                                                                 capsys):
    path = put(make_envelope())
    answer = look(run_action, store)
    assert (answer['path'], answer['exists'], answer['status'], answer['problems']) == (path, True, 'ok', [])
    assert answer['skip'] is True and answer['changed'] is False
    assert answer['msg'] == ('obdfilter on oss1 is already ok in run %s (%s); iokit_force_rerun=true runs it again'
                             % (RUN_ID, path))
    assert answer['msg'] in capsys.readouterr().out


def test_force_reruns_an_ok_result(store, put, run_action, make_envelope):
    put(make_envelope())
    answer = look(run_action, store, force=True)
    assert (answer['exists'], answer['status'], answer['skip']) == (True, 'ok', False)
    assert 'msg' not in answer


@pytest.mark.parametrize('status', ['partial', 'failed', 'skipped'])
def test_a_result_that_is_not_ok_is_run_again(store, put, run_action, make_envelope, status):
    put(make_envelope(status=status))
    answer = look(run_action, store)
    assert (answer['status'], answer['skip']) == (status, False)


def test_nothing_stored_yet_is_run(store, run_action):
    answer = look(run_action, store)
    assert (answer['exists'], answer['status'], answer['skip'], answer['problems']) == (False, None, False, [])
    assert answer['path'] == str(store / RUN_ID / 'oss1' / 'obdfilter.json')


def test_another_host_is_asked_by_name(store, put, run_action, make_envelope):
    put(make_envelope(host='oss2'), host='oss2')
    assert look(run_action, store, inventory_hostname='oss1')['exists'] is False
    assert look(run_action, store, inventory_hostname='oss1', host='oss2')['skip'] is True


def test_a_corrupt_file_names_its_problems_and_is_run_again(store, put, run_action, make_envelope):
    path = put(make_envelope())
    with open(path, 'w') as handle:
        handle.write('{"schema": "lustre.iokit/result/v1", "status": "ok"')
    answer = look(run_action, store)
    assert (answer['exists'], answer['status'], answer['skip']) == (True, None, False)
    assert len(answer['problems']) == 1 and answer['problems'][0].startswith('not valid JSON')


def test_an_ok_envelope_copied_into_another_hosts_place_does_not_count_for_it(store, put, run_action, make_envelope):
    path = put(make_envelope())
    (store / RUN_ID / 'oss2').mkdir()
    shutil.copy(path, str(store / RUN_ID / 'oss2' / 'obdfilter.json'))
    answer = look(run_action, store, inventory_hostname='oss2')
    assert (answer['exists'], answer['status'], answer['skip']) == (True, 'ok', False)


def test_all_hosts_returns_the_surveys_envelopes_and_names_every_bad_file(store, put, run_action, make_envelope):
    first, second = make_envelope(host='oss1'), make_envelope(host='oss2', status='partial')
    put(first, 'oss1')
    put(second, 'oss2')
    put(make_envelope(host='oss1', survey='sgpdd'), 'oss1')
    broken = store / RUN_ID / 'oss3' / 'obdfilter.json'
    broken.parent.mkdir()
    broken.write_text('[]')
    misplaced = store / RUN_ID / 'oss4' / 'obdfilter.json'
    misplaced.parent.mkdir()
    shutil.copy(str(store / RUN_ID / 'oss1' / 'obdfilter.json'), str(misplaced))
    answer = run_action('stored_result', {'results_dir': str(store), 'run_id': RUN_ID, 'survey': 'obdfilter',
                                          'all_hosts': True})
    assert answer['envelopes'] == [first, second]
    assert answer['run_dir'] == str(store / RUN_ID)
    assert [item['path'] for item in answer['invalid']] == [str(broken), str(misplaced)]
    assert answer['invalid'][0]['problems'] == ['envelope: must be an object, got list']
    assert answer['invalid'][1]['problems'] == ["host: 'oss1' but the file is stored as 'oss4'"]


def test_all_hosts_of_a_run_not_stored_yet_is_empty(store, run_action):
    answer = run_action('stored_result', {'results_dir': str(store), 'run_id': RUN_ID, 'survey': 'mds',
                                          'all_hosts': True})
    assert (answer['envelopes'], answer['invalid']) == ([], [])


@pytest.mark.parametrize('args, start', [
    ({'run_id': '../other'}, 'run_id must not contain ".."'),
    ({'host': '../oss1'}, 'host: host must not contain ".."'),
])
def test_unsafe_names_are_refused(store, args, start, action_fails):
    message = action_fails('stored_result', dict({'results_dir': str(store), 'run_id': RUN_ID, 'survey': 'mds'}, **args),
                           task_vars={'inventory_hostname': 'oss1'})
    assert message.startswith(start)


def test_an_unknown_survey_is_refused_with_the_choices(store, action_fails):
    message = action_fails('stored_result', {'results_dir': str(store), 'run_id': RUN_ID, 'survey': 'iozone'},
                           task_vars={'inventory_hostname': 'oss1'})
    assert 'survey' in message and 'obdfilter' in message and 'iozone' in message
