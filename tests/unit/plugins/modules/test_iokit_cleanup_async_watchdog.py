# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Ansible's async watchdog outlives the survey module it watches by up to one poll: the cleanup that follows a
run waits for it to end by itself (it removes the job's temporary files), and stops it only past a deadline."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import cleanup as cleanup_utils
from ansible_collections.lustre.iokit.plugins.module_utils.cleanup import Cleanup
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState
from ansible_collections.lustre.iokit.plugins.module_utils.runner import Runner

RUN = 'run-w'
# A module pid that is no longer recorded: the module crossed itself off when it exited.
FINISHED_MODULE_PID = 999999


@pytest.fixture
def state(tmp_path):
    return NodeState(str(tmp_path / 'work'))


def start_watchdog(tmp_path, seconds_to_next_poll):
    """A stand-in for the watchdog: async_wrapper.py by name, ending on its own at its next poll (or never)."""
    script = tmp_path / 'async_wrapper.py'
    script.write_text('import sys, time\ntime.sleep(float(sys.argv[1]))\n')
    return subprocess.Popen([sys.executable, str(script), str(seconds_to_next_poll)])


def record_watchdog(state, watchdog, module_pid):
    state.record('processes', RUN, pid=watchdog.pid, command=[sys.executable, 'async_wrapper.py'],
                 survey='obdfilter', module=False, async_watchdog_of=module_pid)


def run_cleanup(state):
    return Cleanup(Runner(), state, run_id=RUN, surveys=['obdfilter'], include_iokit_leftovers=False,
                   kill_grace_s=1.0, lst_path=shutil.which('lst')).run()


def test_the_watchdog_of_a_finished_module_ends_by_itself_before_the_cleanup_returns(sim, state, tmp_path):
    watchdog = start_watchdog(tmp_path, 0.5)
    try:
        record_watchdog(state, watchdog, FINISHED_MODULE_PID)
        report = run_cleanup(state)
        # Gone when the cleanup returns, and it was not signalled: it exited at its own poll.
        assert watchdog.poll() == 0
        assert report['removed']['processes'] == [] and report['errors'] == []
        assert [item['id'] for item in report['forgotten'] if item['kind'] == 'processes'] == [watchdog.pid]
        assert state.entries('processes') == []
    finally:
        watchdog.kill()
        watchdog.wait()


def test_a_watchdog_that_outlives_its_poll_is_stopped(sim, state, tmp_path, monkeypatch):
    monkeypatch.setattr(cleanup_utils, 'ASYNC_WATCHDOG_POLL_S', 0.2)
    watchdog = start_watchdog(tmp_path, 120)
    try:
        record_watchdog(state, watchdog, FINISHED_MODULE_PID)
        report = run_cleanup(state)
        assert watchdog.wait(timeout=30) == -signal.SIGTERM
        assert [item['pid'] for item in report['removed']['processes']] == [watchdog.pid]
    finally:
        watchdog.kill()
        watchdog.wait()


def test_the_watchdog_of_a_module_still_recorded_is_stopped_at_once(sim, state, tmp_path):
    # The module was SIGKILLed (it never crossed itself off): its watchdog is not waited for.
    module = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])
    watchdog = start_watchdog(tmp_path, 120)
    try:
        state.record('processes', RUN, pid=module.pid, command=[sys.executable, 'AnsiballZ_obdfilter_survey.py'],
                     survey='obdfilter', module=True)
        record_watchdog(state, watchdog, module.pid)
        report = run_cleanup(state)
        assert sorted(item['pid'] for item in report['removed']['processes']) == sorted([module.pid, watchdog.pid])
        assert watchdog.wait(timeout=30) == -signal.SIGTERM and module.wait(timeout=30) == -signal.SIGTERM
    finally:
        for process in (module, watchdog):
            process.kill()
            process.wait()
