# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""async_result's controller side: the module's answer passed on, the fleet's progress printed once per interval by
one of the hosts, the purge pointed at the connection's async directory."""

from __future__ import annotations

import json
import os
import tempfile

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import progress

RUN_ID = '20261122T101500Z-3f2a'


def write_job(path, content):
    with open(str(path), 'w') as handle:
        json.dump(content, handle)


@pytest.fixture
def finished_job(tmp_path, make_envelope):
    """``job(host)``: the job file of a finished obdfilter survey on ``host``, with its raw output on the node."""
    def job(host='oss1'):
        raw = tmp_path / ('%s-obdfilter.summary' % host)
        raw.write_bytes(b'ost  1 sz 65536K rsz 1024K obj 1 thr 1 write 100.00 [ 50.00, 60.00]\n')
        envelope = make_envelope(host=host, raw_output=str(raw))
        path = tmp_path / ('j%s.42' % host)
        write_job(path, dict(envelope, changed=True, envelope=envelope, raw_files=[str(raw)]))
        return path
    return job


def test_the_jobs_result_comes_back_untouched_and_store_result_keeps_it(tmp_path, finished_job, run_action, node):
    job = finished_job()
    waited = run_action('async_result', {'results_file': str(job), 'wait_s': 600},
                        task_vars={'inventory_hostname': 'oss1'})
    assert waited['finished'] is True and waited['removed'] is True and not job.exists()
    assert isinstance(waited['job']['started'], str) and waited['job']['envelope']['status'] == 'ok'
    assert [item['name'] for item in waited['raw_contents']] == ['oss1-obdfilter.summary']
    assert node.calls[0][0] == 'lustre.iokit.async_result'
    store = tmp_path / 'store'
    stored = run_action('store_result', {'envelope': waited['job'], 'raw_contents': waited['raw_contents'],
                                         'results_dir': str(store)}, task_vars={'inventory_hostname': 'oss1'})
    assert stored['changed'] is True
    assert (store / RUN_ID / 'oss1' / 'oss1-obdfilter.summary').read_bytes() == (tmp_path / 'oss1-obdfilter.summary').read_bytes()


@pytest.fixture
def controller_tmp(tmp_path, monkeypatch):
    """The controller's temporary directory, where the hosts of a wait meet."""
    directory = tmp_path / 'controller-tmp'
    directory.mkdir()
    monkeypatch.setattr(tempfile, 'tempdir', str(directory))
    return directory


def progress_file(tmp_path, host, done):
    """The progress file of ``host``'s survey after ``done`` of its 4 points."""
    directory = tmp_path / ('node-' + host)
    directory.mkdir()
    log = progress.ProgressLog(str(directory), 'obdfilter', RUN_ID, host, planned=[{'thr': 2 ** n} for n in range(4)])
    for point in range(done):
        log.point_done({'thr': 2 ** point, 'tests': {'write': {'mib_s': 100.0}}})
    return progress.progress_path(str(directory), 'obdfilter')


def test_one_fleet_line_per_interval_whichever_host_polls(tmp_path, finished_job, controller_tmp, run_action, monkeypatch, capsys):
    monkeypatch.setenv('ANSIBLE_STDOUT_CALLBACK', 'default')
    task_uuid = 'task-1'
    # The interval is the task's wait_s: a day, so the second poll is within it on any machine (the jobs have
    # finished, so no poll waits).
    first = run_action('async_result', {'results_file': str(finished_job('oss1')), 'wait_s': 86400,
                                        'progress_file': progress_file(tmp_path, 'oss1', 1)},
                       task_vars={'inventory_hostname': 'oss1'}, task_uuid=task_uuid)
    assert (first['progress']['done'], first['progress']['total']) == (1, 4)
    printed = capsys.readouterr().out
    assert 'obdfilter: 1 host, 1/4 points (25 %)' in printed
    # The second host polls within the interval: its progress waits for the next line.
    run_action('async_result', {'results_file': str(finished_job('oss2')), 'wait_s': 86400,
                                'progress_file': progress_file(tmp_path, 'oss2', 3)},
               task_vars={'inventory_hostname': 'oss2'}, task_uuid=task_uuid)
    assert 'points' not in capsys.readouterr().out
    # One directory per controller (ansible-playbook's pid, the workers' parent), one per wait task in it.
    assert os.listdir(str(controller_tmp)) == ['lustre-iokit-controller-%d' % os.getppid()]
    shared = controller_tmp / ('lustre-iokit-controller-%d' % os.getppid()) / ('fleet-' + task_uuid)
    assert sorted(name for name in os.listdir(str(shared)) if name.endswith('.json')) == ['oss1.json', 'oss2.json']


def test_the_progress_callback_prints_the_line_itself(tmp_path, finished_job, controller_tmp, run_action, monkeypatch,
                                                      capsys):
    monkeypatch.setenv('ANSIBLE_STDOUT_CALLBACK', 'lustre.iokit.survey_progress')
    result = run_action('async_result', {'results_file': str(finished_job('oss1')), 'wait_s': 600,
                                         'progress_file': progress_file(tmp_path, 'oss1', 2)},
                        task_vars={'inventory_hostname': 'oss1'})
    assert result['progress']['done'] == 2
    assert 'points' not in capsys.readouterr().out and os.listdir(str(controller_tmp)) == []


def test_without_a_progress_file_nothing_is_shared(finished_job, controller_tmp, run_action, monkeypatch, capsys):
    monkeypatch.setenv('ANSIBLE_STDOUT_CALLBACK', 'default')
    result = run_action('async_result', {'results_file': str(finished_job('oss1')), 'wait_s': 600},
                        task_vars={'inventory_hostname': 'oss1'})
    assert result['progress'] is None and os.listdir(str(controller_tmp)) == []


def test_the_purge_looks_in_the_connections_async_directory(tmp_path, make_envelope, run_action, node):
    async_dir = tmp_path / 'async'
    async_dir.mkdir()
    ours = make_envelope()
    write_job(async_dir / 'j1.100', dict(ours, changed=True, envelope=ours))
    write_job(async_dir / 'j2.200', {'changed': False, 'rc': 0})  # another module's job
    result = run_action('async_result', {'purge': True, 'run_id': RUN_ID},
                        shell_options={'async_dir': str(async_dir)})
    assert node.calls[0][1]['async_dir'] == str(async_dir)
    assert result['changed'] is True and os.listdir(str(async_dir)) == ['j2.200']


def test_an_async_dir_given_to_the_task_wins_over_the_connections(tmp_path, run_action, node):
    given = tmp_path / 'given'
    given.mkdir()
    result = run_action('async_result', {'purge': True, 'async_dir': str(given)},
                        shell_options={'async_dir': str(tmp_path / 'shell')})
    assert node.calls[0][1]['async_dir'] == str(given) and result['changed'] is False
