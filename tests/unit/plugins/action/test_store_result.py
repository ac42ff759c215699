# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""store_result: the envelope and its raw output land under the run's directory, checked, never half written."""

from __future__ import annotations

import base64
import gzip
import json
import os

import pytest

RUN_ID = '20261122T101500Z-3f2a'
HOST_VARS = {'inventory_hostname': 'oss1'}


def stored(path):
    with open(path, encoding='utf-8') as handle:
        return json.load(handle)


def packed(data):
    """Raw output as lustre.iokit.async_result returns it."""
    return base64.b64encode(gzip.compress(data)).decode('ascii')


@pytest.fixture
def store(tmp_path):
    return tmp_path / 'store'


def test_a_modules_result_is_stored_as_its_envelope_under_run_host_and_survey(store, run_action, make_envelope):
    envelope = make_envelope()
    registered = dict(envelope, changed=True, invocation={'module_args': {}}, raw_files=[])
    result = run_action('store_result', {'envelope': registered, 'results_dir': str(store)}, task_vars=HOST_VARS)
    path = store / RUN_ID / 'oss1' / 'obdfilter.json'
    assert result['path'] == str(path)
    assert (result['changed'], result['status'], result['run_id'], result['survey']) == (True, 'ok', RUN_ID, 'obdfilter')
    # Only the envelope is kept, not the task's own keys.
    assert stored(str(path)) == envelope
    assert sorted(os.listdir(str(store / RUN_ID / 'oss1'))) == ['obdfilter.json']


def test_storing_the_same_envelope_again_changes_nothing_and_a_new_one_replaces_it(store, run_action, make_envelope):
    args = {'envelope': make_envelope(), 'results_dir': str(store)}
    assert run_action('store_result', args, task_vars=HOST_VARS)['changed'] is True
    assert run_action('store_result', args, task_vars=HOST_VARS)['changed'] is False
    rerun = make_envelope(status='partial', errors=['timeout after 60 s'])
    result = run_action('store_result', {'envelope': rerun, 'results_dir': str(store)}, task_vars=HOST_VARS)
    assert result['changed'] is True and stored(result['path'])['status'] == 'partial'
    # Written atomically: no temporary file is left beside it.
    assert os.listdir(str(store / RUN_ID / 'oss1')) == ['obdfilter.json']


def test_the_envelope_under_a_registered_results_envelope_key_is_taken(store, run_action, make_envelope):
    envelope = make_envelope(survey='mds')
    result = run_action('store_result', {'envelope': {'envelope': envelope, 'changed': True},
                                         'results_dir': str(store)}, task_vars=HOST_VARS)
    assert stored(result['path']) == envelope and result['path'].endswith(os.path.join('oss1', 'mds.json'))


def test_the_store_is_organised_by_inventory_name_and_keeps_the_nodes_own_name(store, run_action, make_envelope):
    envelope = make_envelope(host='oss1-node17')
    result = run_action('store_result', {'envelope': envelope, 'results_dir': str(store)}, task_vars=HOST_VARS)
    kept = stored(result['path'])
    assert result['path'] == str(store / RUN_ID / 'oss1' / 'obdfilter.json')
    assert kept['host'] == 'oss1' and kept['environment']['node_hostname'] == 'oss1-node17'
    explicit = run_action('store_result', {'envelope': envelope, 'results_dir': str(store), 'host': 'oss9'},
                          task_vars=HOST_VARS)
    assert explicit['path'] == str(store / RUN_ID / 'oss9' / 'obdfilter.json')


def test_an_invalid_envelope_is_refused_with_every_problem_and_nothing_is_written(store, action_fails, make_envelope):
    envelope = dict(make_envelope(), status='ok', records=[], duration_s=-1)
    del envelope['parameters']
    message = action_fails('store_result', {'envelope': envelope, 'results_dir': str(store)}, task_vars=HOST_VARS)
    assert message.startswith('envelope of oss1: invalid result envelope: ')
    for problem in ('missing keys: parameters', 'duration_s: must be a non-negative number', "status: 'ok' but records is empty"):
        assert problem in message
    assert not store.exists()


@pytest.mark.parametrize('host', ['../oss1', '.hidden', 'a/b', ''])
def test_an_unsafe_host_name_is_refused(store, host, action_fails, make_envelope):
    message = action_fails('store_result', {'envelope': make_envelope(), 'results_dir': str(store), 'host': host},
                           task_vars={'inventory_hostname': host})
    assert message.startswith('host: ')
    assert not store.exists()


def test_the_raw_output_is_fetched_from_the_node_and_stored_beside_the_envelope(tmp_path, store, run_action, make_envelope, node):
    summary = tmp_path / 'node' / 'obdfilter.summary'
    summary.parent.mkdir()
    summary.write_bytes(b'ost  1 sz 65536K rsz 1024K obj 1 thr 1 write 100.00 [ 50.00, 60.00]\n')
    # A raw file named like an envelope is stored as .raw, never to be read as one.
    detail = tmp_path / 'node' / 'obdfilter.json'
    detail.write_bytes(b'\x00\xffnot an envelope')
    registered = dict(make_envelope(raw_output=str(summary)), raw_files=[str(summary), str(detail)])
    result = run_action('store_result', {'envelope': registered, 'results_dir': str(store)}, task_vars=HOST_VARS)
    run_host = store / RUN_ID / 'oss1'
    assert result['raw_output_paths'] == [str(run_host / 'obdfilter.summary'), str(run_host / 'obdfilter.json.raw')]
    assert (run_host / 'obdfilter.summary').read_bytes() == summary.read_bytes()
    assert (run_host / 'obdfilter.json.raw').read_bytes() == detail.read_bytes()
    assert stored(result['path'])['raw_output'] == str(summary)
    assert [name for name, unused in node.calls] == ['ansible.legacy.slurp', 'ansible.legacy.slurp']


def test_without_raw_files_the_envelopes_raw_output_is_fetched(tmp_path, store, run_action, make_envelope):
    summary = tmp_path / 'sgpdd.out'
    summary.write_bytes(b'raw\n')
    result = run_action('store_result', {'envelope': make_envelope(survey='sgpdd', raw_output=str(summary)),
                                         'results_dir': str(store)}, task_vars=HOST_VARS)
    assert result['raw_output_paths'] == [str(store / RUN_ID / 'oss1' / 'sgpdd.out')]


def test_a_raw_file_the_node_cannot_give_is_a_warning_and_the_envelope_is_still_stored(tmp_path, store, run_action, make_envelope):
    missing = str(tmp_path / 'gone.summary')
    result = run_action('store_result', {'envelope': make_envelope(raw_output=missing), 'results_dir': str(store)},
                        task_vars=HOST_VARS)
    assert not result.get('failed') and result['raw_output_paths'] == []
    assert os.listdir(str(store / RUN_ID / 'oss1')) == ['obdfilter.json']


def test_raw_contents_from_async_result_are_stored_without_reading_the_node(store, run_action, make_envelope, node):
    contents = [{'name': 'obdfilter-iteration2.summary', 'content': packed(b'summary bytes\n')},
                {'name': 'obdfilter.detail', 'content': packed(b'\x00detail')}]
    result = run_action('store_result', {'envelope': make_envelope(), 'results_dir': str(store),
                                         'raw_contents': contents}, task_vars=HOST_VARS)
    run_host = store / RUN_ID / 'oss1'
    assert (run_host / 'obdfilter-iteration2.summary').read_bytes() == b'summary bytes\n'
    assert (run_host / 'obdfilter.detail').read_bytes() == b'\x00detail'
    assert len(result['raw_output_paths']) == 2 and node.calls == []


def test_a_raw_name_with_directories_is_stored_under_its_base_name_inside_the_run(store, run_action, make_envelope):
    contents = [{'name': '../../../escape.summary', 'content': packed(b'x')}]
    result = run_action('store_result', {'envelope': make_envelope(), 'results_dir': str(store),
                                         'raw_contents': contents}, task_vars=HOST_VARS)
    assert result['raw_output_paths'] == [str(store / RUN_ID / 'oss1' / 'escape.summary')]
    assert (store / RUN_ID / 'oss1' / 'escape.summary').read_bytes() == b'x'


def test_raw_files_and_raw_contents_are_never_mixed(store, action_fails, make_envelope):
    message = action_fails('store_result', {'envelope': make_envelope(), 'results_dir': str(store),
                                            'raw_files': ['/tmp/x'],
                                            'raw_contents': [{'name': 'x', 'content': packed(b'x')}]},
                           task_vars=HOST_VARS)
    assert 'raw_files and raw_contents are mutually exclusive' in message
    assert not store.exists()


@pytest.mark.parametrize('item, words', [
    ({'name': 'x.summary', 'content': 'not base64!'}, ['raw_contents[0] (x.summary)', 'not base64 of gzip']),
    ({'name': 'x.summary', 'content': base64.b64encode(b'plain, not gzip').decode()}, ['raw_contents[0]', 'gzip']),
    ({'name': '/node/.hidden', 'content': packed(b'x')}, ['raw_contents[0]:', 'raw output file name']),
    ({'content': packed(b'x')}, ['raw_contents[0]: needs a name and a content']),
])
def test_bad_raw_contents_are_named_and_nothing_is_written(store, item, words, action_fails, make_envelope):
    message = action_fails('store_result', {'envelope': make_envelope(), 'results_dir': str(store),
                                            'raw_contents': [item]}, task_vars=HOST_VARS)
    for word in words:
        assert word in message
    assert not store.exists()


def test_check_mode_says_it_would_change_but_reads_and_writes_nothing(tmp_path, store, run_action, make_envelope, node):
    summary = tmp_path / 'obdfilter.summary'
    summary.write_bytes(b'raw\n')
    result = run_action('store_result', {'envelope': make_envelope(raw_output=str(summary)),
                                         'results_dir': str(store)}, task_vars=HOST_VARS, check_mode=True)
    assert result['changed'] is True and result['path'] == str(store / RUN_ID / 'oss1' / 'obdfilter.json')
    assert not store.exists()


def test_an_async_status_result_is_read_back_from_the_nodes_job_file(tmp_path, store, run_action, make_envelope, node):
    envelope = make_envelope()
    job_file = tmp_path / 'j1.42'
    job_file.write_text(json.dumps(dict(envelope, changed=True)))
    # async_status turned the module's timestamps into booleans.
    polled = dict(envelope, started=True, finished=True, ansible_job_id='j1.42', results_file=str(job_file))
    result = run_action('store_result', {'envelope': polled, 'results_dir': str(store), 'fetch_raw_output': False},
                        task_vars=HOST_VARS)
    assert stored(result['path']) == envelope
    assert node.calls == [('ansible.legacy.slurp', {'src': str(job_file)})]


def test_an_async_status_result_whose_job_file_is_gone_fails_naming_it(tmp_path, store, action_fails, make_envelope):
    polled = dict(make_envelope(), started=True, finished=True, ansible_job_id='j1.42',
                  results_file=str(tmp_path / 'j1.42'))
    message = action_fails('store_result', {'envelope': polled, 'results_dir': str(store)}, task_vars=HOST_VARS)
    assert message.startswith('cannot read the async job file %s' % (tmp_path / 'j1.42'))
    assert not store.exists()


def test_a_run_directory_linked_out_of_the_store_is_refused(tmp_path, store, action_fails, make_envelope):
    elsewhere = tmp_path / 'elsewhere'
    elsewhere.mkdir()
    store.mkdir()
    os.symlink(str(elsewhere), str(store / RUN_ID))
    message = action_fails('store_result', {'envelope': make_envelope(), 'results_dir': str(store)},
                           task_vars=HOST_VARS)
    assert message.startswith('results_dir: ') and 'leads out of the results directory' in message
    assert not (elsewhere / 'oss1' / 'obdfilter.json').exists()
