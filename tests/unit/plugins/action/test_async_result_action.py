# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The wait stops when the ansible-playbook that forked its worker is gone: a real fork, a real parent killed; the
action itself fails in such a worker (a task of a controller that is not there would ask the node for an hour)."""

from __future__ import annotations

import multiprocessing
import os
import select
import signal
import subprocess
import sys
import time

import pytest

from ansible_collections.lustre.iokit.plugins.action.async_result import controller_gone
from ansible_collections.lustre.iokit.tests.unit.waiting import wait_for


class Parent:
    def __init__(self, pid):
        self.pid = pid


def test_a_worker_whose_parent_lives_goes_on():
    assert controller_gone(Parent(4242), getppid=lambda: 4242) is None


def test_a_reparented_worker_names_its_lost_controller():
    assert controller_gone(Parent(4242), getppid=lambda: 1) == 4242
    assert controller_gone(Parent(4242), getppid=lambda: 977) == 4242  # a subreaper took it


def test_outside_a_forked_worker_there_is_nothing_to_tell():
    assert controller_gone() is None


# Every wait in the real-fork test ends by itself: a child that never reports (a lock inherited by the fork,
# a worker that never starts) fails the test after this long instead of hanging the unit run.
DEADLINE_S = 60


def _worker(report, action=None):
    # A worker of a controller that is killed: once re-parented, it says which pid it lost (what the action sees
    # in a worker) or, given the wait task's ``action``, runs it and says how it ended.
    os.write(report, b'ready\n')
    gone = wait_for('the controller to be gone', controller_gone, DEADLINE_S)
    if action is None:
        os.write(report, str(gone).encode() + b'\n')
        return
    try:
        action.run(task_vars={'inventory_hostname': 'oss1'})
        os.write(report, b'ran\n')
    except Exception as exc:  # pylint: disable=broad-exception-caught
        os.write(report, ('%s: %s\n' % (type(exc).__name__, getattr(exc, 'message', exc))).encode())


def _controller(report, action=None):
    # Stands for ansible-playbook: forks a worker the way its strategy does, then lives until the test SIGKILLs
    # it.  Its own process group holds the worker too, so the test can kill both whatever state they are in.
    os.setpgid(0, 0)
    worker = multiprocessing.get_context('fork').Process(target=_worker, args=(report, action))
    worker.start()
    time.sleep(DEADLINE_S)


def _read_line(fd, deadline):
    """One line from the pipe, or what came before the writers closed it or the deadline passed."""
    data = b''
    while not data.endswith(b'\n'):
        ready = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]
        if not ready:
            break
        chunk = os.read(fd, 1)
        if not chunk:
            break
        data += chunk
    return data


def _worker_line_after_killing_its_controller(action=None):
    """The controller's pid and the line its orphaned worker reports once the controller is SIGKILLed."""
    read_end, write_end = os.pipe()
    controller = multiprocessing.get_context('fork').Process(target=_controller, args=(write_end, action))
    controller.start()
    os.close(write_end)
    deadline = time.monotonic() + DEADLINE_S
    try:
        assert _read_line(read_end, deadline) == b'ready\n'
        os.kill(controller.pid, signal.SIGKILL)
        controller.join(DEADLINE_S)
        line = _read_line(read_end, deadline).decode()
    finally:
        os.close(read_end)
        # The controller's group: the controller and the worker it forked, alive or not.
        try:
            os.killpg(controller.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        controller.join(DEADLINE_S)
    return controller.pid, line


@pytest.mark.skipif(not hasattr(os, 'fork'), reason='needs fork')
def test_a_real_worker_sees_its_controller_killed():
    controller_pid, line = _worker_line_after_killing_its_controller()
    assert line.strip() == str(controller_pid)


def test_the_hosts_workers_share_their_progress_and_one_line_is_printed_per_interval(tmp_path):
    from ansible_collections.lustre.iokit.plugins.action.async_result import share_progress
    directory = str(tmp_path / 'fleet')
    slow = {'survey': 'obdfilter', 'state': 'running', 'done': 1, 'total': 4, 'eta_s': 60}
    fast = {'survey': 'obdfilter', 'state': 'running', 'done': 3, 'total': 4, 'eta_s': 20}
    first = share_progress(directory, 'oss2', slow, every_s=10, now=1000.0)
    assert first.startswith('obdfilter: 1 host, 1/4 points (25 %), ETA ')
    # Within the interval another host's poll only leaves its progress for the next line.
    assert share_progress(directory, 'oss1', fast, every_s=10, now=1005.0) is None
    later = share_progress(directory, 'oss2', dict(slow, done=2), every_s=10, now=1010.0)
    assert later.startswith('obdfilter: 2 hosts, 5/8 points (62 %), slowest oss2 50 %, ETA ')


def test_hosts_started_but_not_polled_yet_are_counted_in_the_shared_line(tmp_path, monkeypatch):
    """forks below the host count (AWX's callback): the start task notes every host, the line counts them all."""
    from ansible_collections.lustre.iokit.plugins.action import async_result
    monkeypatch.setattr(async_result.tempfile, 'gettempdir', lambda: str(tmp_path))
    for host in ('oss1', 'oss2', 'oss3', 'oss4'):
        async_result.note_started('run-7', 'obdfilter', 'start-uuid-1', host, parent=4242)
    started = async_result.started_hosts('run-7', 'obdfilter', parent=4242)
    assert started == {'oss1', 'oss2', 'oss3', 'oss4'}
    # another controller's, another survey's or another run's starts are not this wait's
    assert async_result.started_hosts('run-7', 'obdfilter', parent=4243) == set()
    assert async_result.started_hosts('run-7', 'mds', parent=4242) == set()
    assert async_result.started_hosts('run-8', 'obdfilter', parent=4242) == set()
    running = {'survey': 'obdfilter', 'state': 'running', 'done': 1, 'total': 4, 'eta_s': 60}
    line = async_result.share_progress(str(tmp_path / 'fleet'), 'oss1', running, every_s=10, now=1000.0,
                                       started=started)
    assert line.startswith('obdfilter: 4 hosts, 3 started not polled yet, 1/4 points (25 %), ETA '), line
    # a later start task of the same survey (the next iteration) is the one counted
    async_result.note_started('run-7', 'obdfilter', 'start-uuid-2', 'oss2', parent=4242)
    assert async_result.started_hosts('run-7', 'obdfilter', parent=4242) == {'oss2'}


def test_the_wait_finds_the_run_and_survey_in_its_progress_file():
    from ansible_collections.lustre.iokit.plugins.module_utils.progress import progress_path, progress_run_and_survey
    assert progress_run_and_survey(progress_path('/var/tmp/iokit/run-7', 'obdfilter')) == ('run-7', 'obdfilter')
    for path in (None, '', '/var/tmp/iokit/run-7/obdfilter.json', '/var/tmp/iokit/run-7/.progress.json',
                 'obdfilter.progress.json'):
        assert progress_run_and_survey(path) == (None, None), path


def test_the_notes_of_ended_controllers_are_removed_and_a_running_ones_kept(tmp_path, monkeypatch):
    """A controller killed with SIGKILL removes nothing: the next one does, whatever callback either used."""
    from ansible_collections.lustre.iokit.plugins.action import async_result
    monkeypatch.setattr(async_result.tempfile, 'gettempdir', lambda: str(tmp_path))
    ended = subprocess.Popen([sys.executable, '-c', 'pass'])
    ended.wait()  # reaped: its pid names no process now (nothing else of this test can have taken it yet)
    running = subprocess.Popen([sys.executable, '-c', 'import sys; sys.stdin.read()'], stdin=subprocess.PIPE)
    try:
        async_result.note_started('run-7', 'obdfilter', 'start-uuid-1', 'oss1', parent=ended.pid)
        assert async_result.started_hosts('run-7', 'obdfilter', parent=ended.pid) == {'oss1'}
        unrelated = tmp_path / 'lustre-iokit-controller-notes'
        unrelated.mkdir()
        for pid in (running.pid, os.getpid()):
            async_result.note_started('run-7', 'obdfilter', 'start-uuid-1', 'oss1', parent=pid)
        names = sorted(os.listdir(str(tmp_path)))
        assert names == sorted(['lustre-iokit-controller-%d' % running.pid, 'lustre-iokit-controller-%d' % os.getpid(),
                                'lustre-iokit-controller-notes'])
        assert async_result.started_hosts('run-7', 'obdfilter', parent=running.pid) == {'oss1'}
    finally:
        running.communicate(b'')


@pytest.mark.skipif(not hasattr(os, 'fork'), reason='needs fork')
def test_the_wait_task_of_a_killed_controller_fails_at_once_without_asking_the_node(tmp_path, action_for):
    action = action_for('async_result', {'results_file': str(tmp_path / 'j1.42'), 'wait_s': 600})
    controller_pid, line = _worker_line_after_killing_its_controller(action)
    assert line.startswith('AnsibleActionFail: the controller that started this wait (ansible-playbook, pid %d) is gone'
                           % controller_pid)
    assert 'run playbooks/cleanup.yml' in line
