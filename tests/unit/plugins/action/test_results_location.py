# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""results_location: one results directory and one run id per playbook run, a bad value refused naming its variable."""

from __future__ import annotations

import os
import re
import stat

import pytest

RUN_ID = '20261122T101500Z-3f2a'
NEW_RUN_ID = re.compile(r'^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{4}\Z')


@pytest.fixture
def start_dir(tmp_path, monkeypatch):
    """The directory ansible-playbook was started from."""
    directory = tmp_path / 'start'
    directory.mkdir()
    monkeypatch.chdir(directory)
    return directory


def test_without_settings_a_new_run_goes_to_iokit_results_of_the_start_directory(start_dir, run_action):
    result = run_action('results_location', {})
    assert result['results_dir'] == str(start_dir / 'iokit-results')
    assert NEW_RUN_ID.match(result['run_id']) and result['run_id_generated'] is True
    assert result['run_dir'] == os.path.join(result['results_dir'], result['run_id'])
    assert (start_dir / 'iokit-results').is_dir()
    assert not result.get('failed') and result['changed'] is False
    # Nothing is left by the writability probe.
    assert os.listdir(str(start_dir / 'iokit-results')) == []


def test_two_calls_without_a_run_id_make_two_runs(start_dir, run_action):
    assert run_action('results_location', {})['run_id'] != run_action('results_location', {})['run_id']


def test_a_relative_results_dir_is_taken_from_the_start_directory_and_made_absolute(start_dir, run_action):
    result = run_action('results_location', {}, task_vars={'iokit_results_dir': 'store/../results',
                                                           'iokit_run_id': RUN_ID})
    assert result['results_dir'] == str(start_dir / 'results')
    assert (result['run_id'], result['run_id_generated']) == (RUN_ID, False)
    assert result['run_dir'] == str(start_dir / 'results' / RUN_ID)


def test_home_is_expanded(start_dir, tmp_path, monkeypatch, run_action):
    monkeypatch.setenv('HOME', str(tmp_path / 'home'))
    result = run_action('results_location', {}, task_vars={'iokit_results_dir': '~/iokit'})
    assert result['results_dir'] == str(tmp_path / 'home' / 'iokit')


def test_a_variable_made_of_other_variables_is_templated(start_dir, tmp_path, run_action, template):
    result = run_action('results_location', {}, task_vars={'base': str(tmp_path / 'base'),
                                                           'iokit_results_dir': template('{{ base }}/store')})
    assert result['results_dir'] == str(tmp_path / 'base' / 'store')


def test_the_tasks_options_come_before_the_variables(start_dir, tmp_path, run_action):
    result = run_action('results_location', {'results_dir': str(tmp_path / 'option'), 'run_id': 'option-run'},
                        task_vars={'iokit_results_dir': str(tmp_path / 'variable'), 'iokit_run_id': RUN_ID})
    assert (result['results_dir'], result['run_id']) == (str(tmp_path / 'option'), 'option-run')
    assert not (tmp_path / 'variable').exists()


def test_a_later_call_of_the_same_playbook_run_keeps_the_registered_run_id(start_dir, run_action):
    first = run_action('results_location', {})
    again = run_action('results_location', {}, task_vars={'iokit_run': first})
    assert (again['run_id'], again['run_id_generated']) == (first['run_id'], False)
    # A run id the user gives wins over the registered one.
    chosen = run_action('results_location', {}, task_vars={'iokit_run': first, 'iokit_run_id': RUN_ID})
    assert chosen['run_id'] == RUN_ID


def test_one_launch_id_per_playbook_run_and_a_new_one_for_the_next(start_dir, run_action):
    first = run_action('results_location', {})
    assert re.match(r'^[0-9a-f]{8}\Z', first['launch_id'])
    # Every survey play of one ansible-playbook run (acceptance.yml's stages) scopes its cleanup by the same launch,
    # even when the run id is given again.
    again = run_action('results_location', {}, task_vars={'iokit_run': first, 'iokit_run_id': RUN_ID})
    assert again['launch_id'] == first['launch_id']
    # Another ansible-playbook run of the same run id (an AWX job launched twice) is another launch.
    other = run_action('results_location', {}, task_vars={'iokit_run_id': RUN_ID})
    assert other['run_id'] == RUN_ID and other['launch_id'] != first['launch_id']


@pytest.mark.parametrize('value, words', [
    ('../elsewhere', ['iokit_run_id:', 'must not contain ".."']),
    ('run/one', ['iokit_run_id:', 'may contain only letters']),
    ('', ['iokit_run_id:', 'must not be empty']),
    ('x' * 65, ['iokit_run_id:', 'longer than 64']),
    (20261122, ['iokit_run_id:', 'a number', 'quote it']),
    (True, ['iokit_run_id:', 'a boolean']),
    (None, ['iokit_run_id:', 'is null']),
])
def test_a_bad_run_id_is_refused_naming_the_variable_and_nothing_is_made(start_dir, value, words, action_fails):
    message = action_fails('results_location', {}, task_vars={'iokit_run_id': value})
    assert message.startswith('iokit_run_id:')
    for word in words:
        assert word in message
    assert not (start_dir / 'iokit-results').exists()


def test_a_bad_run_id_given_to_the_task_is_named_as_its_option(start_dir, action_fails):
    assert action_fails('results_location', {'run_id': '-rf'}).startswith('run_id:')


@pytest.mark.parametrize('value, words', [
    ('', ['iokit_results_dir:', 'must not be empty']),
    ('   ', ['iokit_results_dir:', 'must not be empty']),
    (42, ['iokit_results_dir:', 'must be a directory path', 'a number']),
    (None, ['iokit_results_dir:', 'null']),
])
def test_a_bad_results_dir_is_refused_naming_the_variable(start_dir, value, words, action_fails):
    message = action_fails('results_location', {}, task_vars={'iokit_results_dir': value})
    for word in words:
        assert word in message


def test_a_results_dir_that_is_a_file_fails_before_anything_starts(start_dir, tmp_path, action_fails):
    (tmp_path / 'afile').write_text('not a directory')
    message = action_fails('results_location', {}, task_vars={'iokit_results_dir': str(tmp_path / 'afile')})
    assert message == 'iokit_results_dir: %s is not a directory; nothing was started' % (tmp_path / 'afile')


def test_a_run_directory_that_is_a_file_is_named_with_its_run(start_dir, tmp_path, action_fails):
    (tmp_path / 'store').mkdir()
    (tmp_path / 'store' / RUN_ID).write_text('')
    message = action_fails('results_location', {'results_dir': str(tmp_path / 'store'), 'run_id': RUN_ID})
    assert message.startswith('results_dir/%s: ' % RUN_ID) and 'is not a directory' in message


@pytest.mark.skipif(os.geteuid() == 0, reason='root writes in a read-only directory')
def test_a_results_dir_that_cannot_be_written_fails_naming_the_variable(start_dir, tmp_path, action_fails):
    store = tmp_path / 'readonly'
    store.mkdir()
    store.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        message = action_fails('results_location', {}, task_vars={'iokit_results_dir': str(store)})
    finally:
        store.chmod(stat.S_IRWXU)
    assert message.startswith('iokit_results_dir: cannot write in %s' % store)


def test_without_new_run_id_a_run_must_be_given(start_dir, action_fails, run_action):
    message = action_fails('results_location', {'new_run_id': False})
    assert message.startswith('iokit_run_id: give the run to use')
    assert run_action('results_location', {'new_run_id': False}, task_vars={'iokit_run_id': RUN_ID})['run_id'] == RUN_ID


def test_check_mode_creates_nothing_but_still_refuses_what_cannot_work(start_dir, tmp_path, run_action, action_fails):
    result = run_action('results_location', {}, task_vars={'iokit_results_dir': str(tmp_path / 'a' / 'b')},
                        check_mode=True)
    assert result['results_dir'] == str(tmp_path / 'a' / 'b')
    assert not (tmp_path / 'a').exists()
    (tmp_path / 'afile').write_text('')
    message = action_fails('results_location', {}, task_vars={'iokit_results_dir': str(tmp_path / 'afile' / 'sub')},
                           check_mode=True)
    assert 'cannot be created' in message and 'is not a directory' in message


def test_an_unknown_option_is_refused(start_dir, action_fails):
    assert 'results_directory' in action_fails('results_location', {'results_directory': '/tmp'})


def test_every_slice_of_one_awx_launch_without_a_run_id_gets_the_same_run(start_dir, run_action):
    # AWX gives each slice of a sliced job its workflow job's id and nothing that says it is a slice.
    slices = [run_action('results_location', {}, task_vars={'awx_workflow_job_id': 4711}) for unused in range(3)]
    assert {result['run_id'] for result in slices} == {'awx-wf4711'}
    assert len({result['launch_id'] for result in slices}) == 3


def test_a_given_run_id_wins_over_the_awx_workflow(start_dir, run_action):
    result = run_action('results_location', {}, task_vars={'awx_workflow_job_id': 4711, 'iokit_run_id': RUN_ID})
    assert (result['run_id'], result['run_id_generated']) == (RUN_ID, False)
