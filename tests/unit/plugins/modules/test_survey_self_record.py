# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A survey module records itself for the cleanup (no role task does it first): what a killed one leaves is found."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from ansible_collections.lustre.iokit.plugins.module_utils import survey_module
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState

COLLECTION_PARENT = os.path.abspath(os.path.join(os.path.dirname(survey_module.__file__), *(['..'] * 5)))

# A stand-in for a survey module under async: it records itself as the modules do, makes its run directory and
# then runs until it is stopped, like a survey that the controller lost.
RUNNING_SURVEY = '''
import os, sys, time
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState
from ansible_collections.lustre.iokit.plugins.module_utils.survey_module import record_for_cleanup

class Module:
    def exit_json(self, **result):
        sys.exit(0)
    fail_json = exit_json

workdir, run_id = sys.argv[1], sys.argv[2]
module = Module()
record_for_cleanup(NodeState(workdir), 'obdfilter', run_id, module)
os.makedirs(os.path.join(workdir, run_id))
with open(os.path.join(workdir, run_id, 'obdfilter_survey.summary'), 'w') as handle:
    handle.write('measuring\\n')
print('running', flush=True)
time.sleep(120)
'''


def start_survey_process(workdir, run_id):
    env = dict(os.environ, PYTHONPATH=COLLECTION_PARENT + os.pathsep + os.environ.get('PYTHONPATH', ''))
    process = subprocess.Popen([sys.executable, '-c', RUNNING_SURVEY, workdir, run_id], stdout=subprocess.PIPE,
                               universal_newlines=True, env=env)
    assert process.stdout.readline().strip() == 'running'
    return process


def test_a_lost_survey_is_stopped_by_the_cleanup_and_its_run_directory_removed(tmp_path, run_as_ansible):
    workdir = str(tmp_path / 'work')
    process = start_survey_process(workdir, 'run-1')
    try:
        entry = NodeState(workdir).entries('processes')[0]
        assert (entry['pid'], entry['survey'], entry['run_id']) == (process.pid, 'obdfilter', 'run-1')
        assert entry['start_time'] is not None

        result = run_as_ansible('iokit_cleanup', {'workdir': workdir, 'run_id': 'run-1', 'surveys': ['obdfilter'],
                                                  'include_iokit_leftovers': False, 'kill_grace_s': 5})
        assert result.get('failed') is not True, result
        assert process.wait(timeout=10) == -signal.SIGTERM
        assert [item['pid'] for item in result['removed']['processes']] == [process.pid]
        # The run directory and the workdir the survey created are gone, and so is the node state.
        assert not os.path.exists(workdir)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_another_runs_cleanup_leaves_a_running_survey_alone(tmp_path, run_as_ansible):
    workdir = str(tmp_path / 'work')
    process = start_survey_process(workdir, 'run-1')
    try:
        result = run_as_ansible('iokit_cleanup', {'workdir': workdir, 'run_id': 'run-2', 'surveys': ['obdfilter'],
                                                  'include_iokit_leftovers': False, 'kill_grace_s': 5})
        assert result.get('failed') is not True, result
        assert process.poll() is None
        assert os.path.exists(os.path.join(workdir, 'run-1', 'obdfilter_survey.summary'))
    finally:
        process.kill()
        process.wait()


def test_a_module_that_exits_crosses_itself_off_and_leaves_the_run_directory_to_the_cleanup(tmp_path):
    workdir = str(tmp_path / 'work')
    exits = []

    class Module:
        def exit_json(self, **result):
            exits.append(result)

        fail_json = exit_json

    module = Module()
    survey_module.record_for_cleanup(NodeState(workdir), 'mds', 'run-3', module)
    state = NodeState(workdir)
    assert [entry['pid'] for entry in state.entries('processes')] == [os.getpid()]
    module.exit_json(changed=True)
    assert exits == [{'changed': True}]
    assert state.entries('processes') == []
    assert sorted(entry['path'] for entry in state.entries('paths')) == [workdir, os.path.join(workdir, 'run-3')]


def test_the_async_wrappers_processes_above_the_module_are_recorded_and_all_but_the_watchdog_crossed_off(tmp_path):
    # watchdog (async_wrapper.py) -> child (async_wrapper.py) -> module: the layout of Ansible's async wrapper.
    workdir = str(tmp_path / 'work')
    module_script = tmp_path / 'module.py'
    module_script.write_text(RUNNING_SURVEY.replace("print('running', flush=True)\ntime.sleep(120)",
                                                    "print('running', flush=True)\nsys.stdin.readline()\n"
                                                    "module.exit_json()"))
    wrapper = tmp_path / 'async_wrapper.py'
    wrapper.write_text('import subprocess, sys\n'
                       'sys.exit(subprocess.call(sys.argv[1:]))\n')
    env = dict(os.environ, PYTHONPATH=COLLECTION_PARENT + os.pathsep + os.environ.get('PYTHONPATH', ''))
    process = subprocess.Popen([sys.executable, str(wrapper), sys.executable, str(wrapper), sys.executable,
                                str(module_script), workdir, 'run-4'],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, universal_newlines=True, env=env)
    try:
        assert process.stdout.readline().strip() == 'running'
        recorded = NodeState(workdir).entries('processes')
        assert len(recorded) == 3
        assert recorded[0]['module'] is True and [entry['module'] for entry in recorded[1:]] == [False, False]
        assert recorded[2]['pid'] == process.pid
        assert all('async_wrapper.py' in ' '.join(entry['command']) for entry in recorded[1:])
        process.stdin.write('\n')
        process.stdin.flush()
        assert process.wait(timeout=10) == 0
        # The watchdog stays recorded, naming the module it watched: it outlives the module by up to one of its
        # polls, and the cleanup waits for it (test_iokit_cleanup_async_watchdog.py).
        left = NodeState(workdir).entries('processes')
        assert [(entry['pid'], entry['async_watchdog_of']) for entry in left] == [(process.pid, recorded[0]['pid'])]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
