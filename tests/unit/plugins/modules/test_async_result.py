# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""async_result run as Ansible runs it (a child process) against job files written the way the async wrapper writes them."""

from __future__ import annotations

import base64
import gzip
import json
import os
import threading
import time

import pytest

from ansible_collections.lustre.iokit.plugins.modules import async_result

RUNNING = {'started': True, 'finished': False, 'ansible_job_id': 'j1.42'}
# ansible-core before 2.19 wrote integers.
RUNNING_OLD = {'started': 1, 'finished': 0, 'ansible_job_id': 'j1.42'}


def write_job(path, content):
    # The async wrapper's way: a temporary file renamed over the job file.
    with open(path + '.tmp', 'w') as handle:
        json.dump(content, handle)
    os.rename(path + '.tmp', path)


@pytest.fixture
def run_module(run_as_ansible):
    """async_result as Ansible runs it: a child process reading its arguments from a file."""
    def run(check_mode=False, **args):
        return run_as_ansible('async_result', args, check_mode=check_mode)
    return run


def survey_result(raw_files):
    envelope = {'survey': 'obdfilter', 'status': 'ok', 'started': '2026-11-23T10:00:00Z',
                'finished': '2026-11-23T10:01:00Z', 'raw_output': raw_files[0] if raw_files else None}
    return {'changed': True, 'survey': 'obdfilter', 'status': 'ok', 'envelope': envelope, 'raw_files': raw_files}


def unpack(content):
    return gzip.decompress(base64.b64decode(content))


def test_a_job_ending_during_the_wait_is_returned_at_once_untouched_with_its_raw_output(tmp_path, run_module):
    summary = tmp_path / 'obdfilter.summary'
    detail = tmp_path / 'obdfilter.detail'
    summary.write_bytes(b'ost  1 sz 65536K rsz 1024K obj 1 thr 1 write 100.00 [ 50.00, 60.00]\n')
    detail.write_bytes(b'\x00binary-safe\xff\n' * 1000)
    job = str(tmp_path / 'j1.42')
    write_job(job, RUNNING)
    finished = survey_result([str(summary), str(detail)])
    timer = threading.Timer(1.0, write_job, (job, finished))
    timer.start()
    started = time.monotonic()
    result = run_module(results_file=job, wait_s=30)
    took = time.monotonic() - started
    timer.join()

    assert result['finished'] is True
    # Not the 30 s of wait_s: the end is seen at the next look, every half second.
    assert took < 15
    # The envelope's timestamps stay strings (async_status would have made them booleans).
    assert result['job'] == finished
    assert [(item['path'], item['name']) for item in result['raw_contents']] == [
        (str(summary), 'obdfilter.summary'), (str(detail), 'obdfilter.detail')]
    assert unpack(result['raw_contents'][0]['content']) == summary.read_bytes()
    assert unpack(result['raw_contents'][1]['content']) == detail.read_bytes()
    assert result['removed'] is True and not os.path.exists(job)
    assert 'msg' not in result


@pytest.mark.parametrize('marker', [RUNNING, RUNNING_OLD])
def test_a_running_job_is_not_finished_after_the_wait_and_its_file_stays(tmp_path, marker, run_module):
    job = str(tmp_path / 'j1.42')
    write_job(job, marker)
    result = run_module(results_file=job, wait_s=1)
    assert result['finished'] is False
    assert result['waited_s'] >= 1
    assert result['job'] == marker
    assert result['raw_contents'] == []
    assert result['msg'] == 'the job is still running after 1 s'
    assert os.path.exists(job)


# What ansible-core's async wrapper writes when the module's process printed nothing (it was SIGKILLed).
WRAPPER_TRACEBACK = ('Traceback (most recent call last):\n  File "async_wrapper.py", line 166, in _run_module\n'
                     'ValueError: No start of json char found\n')


def test_a_module_killed_without_a_result_is_named_not_the_wrappers_traceback(tmp_path, run_module):
    job = str(tmp_path / 'j2.42')
    write_job(job, {'failed': True, 'cmd': '/root/.ansible/tmp/ansible-tmp-1/AnsiballZ_mds_survey.py', 'data': '',
                    'stderr': '', 'msg': WRAPPER_TRACEBACK, 'ansible_job_id': 'j2.42'})
    result = run_module(results_file=job, wait_s=5)
    assert result['finished'] is True and result['killed'] is True
    assert result['msg'].startswith('the mds_survey process on ')
    assert 'was killed (signal 9, SIGKILL' in result['msg'] and 'No start of json' not in str(result)
    assert result['job']['msg'] == result['msg']
    # A module that died printing a traceback of its own is quoted instead.
    write_job(job, {'failed': True, 'cmd': 'AnsiballZ_mds_survey.py', 'data': '', 'msg': WRAPPER_TRACEBACK,
                    'stderr': 'Traceback (most recent call last):\nKeyboardInterrupt\n'})
    result = run_module(results_file=job, wait_s=5)
    assert result['msg'].endswith('ended without writing its result: KeyboardInterrupt')


def test_a_job_killed_by_its_async_limit_is_finished_with_the_wrappers_message(tmp_path, run_module):
    job = str(tmp_path / 'j1.42')
    write_job(job, {'msg': 'Timeout exceeded', 'failed': True, 'child_pid': 4242})
    result = run_module(results_file=job, wait_s=5)
    assert result['finished'] is True
    assert result['job']['failed'] is True
    assert result['msg'] == 'Timeout exceeded'
    assert result['raw_contents'] == [] and result['removed'] is True


def test_iterations_get_names_of_their_own_and_a_missing_raw_file_is_named(tmp_path, run_module):
    summary = tmp_path / 'mds.summary'
    summary.write_text('mdt 1 file 100 dir 1 thr 1 create 10.00 [ 10.00, 10.00]\n')
    job = str(tmp_path / 'j2.1')
    write_job(job, survey_result([str(summary), str(tmp_path / 'gone.detail')]))
    result = run_module(results_file=job, wait_s=0, raw_name_suffix='-iteration2')
    assert [item['name'] for item in result['raw_contents']] == ['mds-iteration2.summary']
    assert len(result['raw_problems']) == 1 and 'gone.detail' in result['raw_problems'][0]


def test_check_mode_reads_but_keeps_the_job_file(tmp_path, run_module):
    job = str(tmp_path / 'j3.1')
    write_job(job, survey_result([]))
    result = run_module(check_mode=True, results_file=job, wait_s=0)
    assert result['finished'] is True and result['removed'] is False
    assert os.path.exists(job)


@pytest.mark.parametrize('args, message', [
    ({'wait_s': -1}, 'wait_s must be 0 or more'),
    ({'raw_name_suffix': '../x'}, 'raw_name_suffix must not contain "/"'),
])
def test_bad_parameters_are_named(tmp_path, args, message, run_module):
    job = str(tmp_path / 'j4.1')
    write_job(job, RUNNING)
    result = run_module(results_file=job, **args)
    assert result['failed'] is True and message in result['msg']


def test_a_missing_or_foreign_job_file_is_an_error_that_says_which(tmp_path, run_module):
    missing = run_module(results_file=str(tmp_path / 'never'))
    assert missing['failed'] is True and 'no async job file' in missing['msg']
    foreign = tmp_path / 'foreign'
    foreign.write_text('not json')
    damaged = run_module(results_file=str(foreign), wait_s=0)
    assert damaged['failed'] is True and 'is not an async job file' in damaged['msg']


def test_wait_for_job_looks_until_the_deadline_with_a_fake_clock(tmp_path):
    job = str(tmp_path / 'j5.1')
    write_job(job, RUNNING)
    now = [0.0]
    sleeps = []

    def sleep(seconds):
        sleeps.append(seconds)
        now[0] += seconds
        if now[0] >= 2.0:
            write_job(job, {'rc': 0})

    content, finished, waited = async_result.wait_for_job(job, 10, clock=lambda: now[0], sleep=sleep)
    assert finished is True and content == {'rc': 0}
    assert sleeps == [async_result.POLL_S] * 4 and waited == 2.0


# --------------------------------------------------------------------------
# purge: the job files nobody read after the controller was killed


def survey_job(run_id, survey='obdfilter'):
    envelope = {'schema': 'lustre.iokit/result/v1', 'run_id': run_id, 'survey': survey, 'status': 'ok'}
    return {'changed': True, 'envelope': envelope, 'raw_files': []}


def test_purge_removes_the_finished_surveys_of_the_run_and_nothing_else(tmp_path, run_module):
    tmp_path = tmp_path / 'async'  # the fixture keeps the module's arguments in tmp_path
    tmp_path.mkdir()
    jobs = {
        'j1.1': survey_job('run-a'),                      # the run's finished survey: removed
        'j1.2': survey_job('run-b'),                      # another run: kept
        'j1.3': RUNNING,                                  # a job still running: kept
        'j1.4': {'changed': False, 'ping': 'pong'},       # another module's result: kept
        'j1.5': {'failed': 1, 'msg': 'Timeout exceeded', 'ansible_job_id': 'j1.5'},  # no envelope: kept
        'j1.6': RUNNING_OLD,                              # named by job_ids (its wrapper was stopped): removed
        'j9.4871': RUNNING,                               # its id as the wrapper's command line has it: removed
    }
    for name, content in jobs.items():
        write_job(str(tmp_path / name), content)
    (tmp_path / 'j1.7').write_text('{"started": ')     # not JSON: kept
    os.symlink(str(tmp_path / 'j1.1'), str(tmp_path / 'j1.8'))  # not a regular file: kept
    result = run_module(purge=True, run_id='run-a', async_dir=str(tmp_path), job_ids=['j1.6', 'j9'])
    assert result['changed'] is True
    assert sorted(result['purged']) == [str(tmp_path / name) for name in ('j1.1', 'j1.6', 'j9.4871')]
    assert sorted(os.listdir(str(tmp_path))) == ['j1.2', 'j1.3', 'j1.4', 'j1.5', 'j1.7', 'j1.8']


def test_purge_without_run_id_keeps_the_recent_ones_a_live_controller_may_still_read(tmp_path):
    old = str(tmp_path / 'j2.1')
    recent = str(tmp_path / 'j2.2')
    write_job(old, survey_job('run-a'))
    write_job(recent, survey_job('run-b'))
    now = time.time()
    os.utime(old, (now - 3600, now - 3600))
    assert async_result.purge_job_files(str(tmp_path), min_age_s=600, now=now) == [old]
    assert os.listdir(str(tmp_path)) == ['j2.2']


def test_purge_of_a_missing_directory_and_in_check_mode_removes_nothing(tmp_path, run_module):
    tmp_path = tmp_path / 'async'
    tmp_path.mkdir()
    assert run_module(purge=True, async_dir=str(tmp_path / 'none'))['purged'] == []
    write_job(str(tmp_path / 'j3.1'), survey_job('run-a'))
    result = run_module(check_mode=True, purge=True, run_id='run-a', async_dir=str(tmp_path))
    assert result['changed'] is False and os.listdir(str(tmp_path)) == ['j3.1']


def test_results_file_is_required_without_purge(run_module):
    result = run_module(wait_s=0)
    assert result['failed'] and 'results_file' in result['msg']


def test_each_poll_returns_the_surveys_progress_and_null_before_the_first_summary(tmp_path, run_module):
    from ansible_collections.lustre.iokit.plugins.module_utils import progress
    job = str(tmp_path / 'j1.42')
    write_job(job, RUNNING)
    summary_file = progress.progress_path(str(tmp_path), 'obdfilter')
    assert run_module(results_file=job, wait_s=0, progress_file=summary_file)['progress'] is None
    log = progress.ProgressLog(str(tmp_path), 'obdfilter', 'run1', 'oss1', planned=[{'thr': 1}, {'thr': 2}])
    log.point_done({'thr': 1, 'tests': {'write': {'mib_s': 42.0}}})
    result = run_module(results_file=job, wait_s=0, progress_file=summary_file)
    assert result['finished'] is False
    assert (result['progress']['done'], result['progress']['total']) == (1, 2)
    assert result['progress']['current'] == {'thr': 2}
    assert result['progress']['last']['figure'] == 'write 42.0 MiB/s'
    assert result['progress']['eta_s'] is not None
