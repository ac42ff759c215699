# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import time

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils.node_state import (
    KINDS,
    NodeState,
    NodeStateError,
    has_exited,
    is_same_process,
    parent_pid,
    process_start_time,
)


def test_a_fresh_node_has_nothing_to_undo(tmp_path):
    state = NodeState(str(tmp_path / 'work'))
    assert all(state.entries(kind) == [] for kind in KINDS)
    assert not os.path.exists(state.path)


def test_record_then_forget(tmp_path):
    state = NodeState(str(tmp_path / 'work'))
    state.record('modules', 'run-1', name='obdecho')
    state.record('echo_clients', 'run-1', name='testfs-OST0000_ecc', target='testfs-OST0000', objects=[[2, 4]])
    state.record('echo_clients', 'run-2', name='testfs-OST0001_ecc', target='testfs-OST0001')
    assert [e['name'] for e in state.entries('echo_clients')] == ['testfs-OST0000_ecc', 'testfs-OST0001_ecc']
    assert [e['name'] for e in state.entries('echo_clients', run_id='run-2')] == ['testfs-OST0001_ecc']
    state.forget('echo_clients', 'testfs-OST0000_ecc')
    assert [e['name'] for e in state.entries('echo_clients')] == ['testfs-OST0001_ecc']
    assert state.entries('modules')[0]['run_id'] == 'run-1'
    # no temporary file is left beside the state
    assert sorted(os.listdir(state.workdir)) == ['node-state.json', 'node-state.json.lock']


def test_recording_the_same_thing_twice_keeps_one_entry(tmp_path):
    state = NodeState(str(tmp_path))
    state.record('modules', 'run-1', name='sg')
    state.record('modules', 'run-2', name='sg')
    assert [(e['name'], e['run_id']) for e in state.entries('modules')] == [('sg', 'run-2')]


def test_a_relaunch_adopts_only_its_own_runs_records_of_the_earlier_launch(tmp_path):
    workdir = str(tmp_path)
    first, other = NodeState(workdir, launch='first'), NodeState(workdir, launch='other')
    first.record('paths', 'run-1', path='/work/run-1')
    first.record('processes', 'run-1', pid=os.getpid(), module=False, async_watchdog_of=1)
    first.record('paths', 'run-2', path='/work/run-2')
    other.record('paths', 'run-1', path='/work/run-1-other')
    relaunch = NodeState(workdir, launch='relaunch')
    assert relaunch.adopt('run-1', 'first') == 2
    launches = dict((e.get('path') or e.get('pid'), e['launch']) for kind in ('paths', 'processes')
                    for e in relaunch.entries(kind))
    assert launches == {'/work/run-1': 'relaunch', os.getpid(): 'relaunch', '/work/run-2': 'first',
                        '/work/run-1-other': 'other'}
    # Nothing to take over from itself, or without a launch.
    assert relaunch.adopt('run-1', 'relaunch') == 0 and NodeState(workdir).adopt('run-1', 'other') == 0


def test_an_entry_needs_its_identity(tmp_path):
    with pytest.raises(ValueError, match="needs 'pid'"):
        NodeState(str(tmp_path)).record('processes', 'run-1', argv=['vmstat', '1'])


def test_a_process_is_ours_only_with_the_same_start_time(tmp_path):
    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])
    try:
        state = NodeState(str(tmp_path))
        entry = state.record('processes', 'run-1', pid=child.pid, argv=['sleep'])
        assert entry['start_time'] is not None
        assert entry['start_time'] == process_start_time(child.pid)
        assert is_same_process(entry)
        assert not is_same_process(dict(entry, start_time=entry['start_time'] - 1))
    finally:
        child.kill()
        child.wait()
    assert not is_same_process(entry)


def test_a_child_has_exited_while_it_waits_to_be_reaped_and_once_it_is_gone():
    """The cleanup and the samplers' liveness both rely on this: a zombie is nothing left to stop."""
    child = subprocess.Popen([sys.executable, '-c', 'import sys; sys.stdin.read()'], stdin=subprocess.PIPE)
    try:
        assert not has_exited(child.pid)
        assert parent_pid(child.pid) == os.getpid()
    finally:
        child.stdin.close()
    # Not reaped yet: the process is a zombie until wait() collects it.
    for unused in range(500):
        if has_exited(child.pid):
            break
        time.sleep(0.01)
    assert has_exited(child.pid)
    assert process_start_time(child.pid) is not None  # still listed, so only its state says it is done
    child.wait()
    assert has_exited(child.pid)
    assert parent_pid(child.pid) is None and process_start_time(child.pid) is None


@pytest.mark.parametrize('content, message', [
    ('{not json', 'is not valid JSON'),
    (json.dumps({'schema': 'something/else'}), 'is not a lustre.iokit node-state file'),
    (json.dumps([1, 2]), 'is not a lustre.iokit node-state file'),
])
def test_a_damaged_file_is_named(tmp_path, content, message):
    state = NodeState(str(tmp_path))
    with open(state.path, 'w', encoding='utf-8') as handle:
        handle.write(content)
    with pytest.raises(NodeStateError, match=message) as caught:
        state.read()
    assert state.path in str(caught.value)


def _record_many(workdir, worker):
    state = NodeState(workdir)
    for index in range(25):
        state.record('paths', 'run-%d' % worker, path='/tmp/x-%d-%d' % (worker, index))


def test_concurrent_writers_lose_nothing(tmp_path):
    workdir = str(tmp_path)
    workers = [multiprocessing.Process(target=_record_many, args=(workdir, n)) for n in range(4)]
    for proc in workers:
        proc.start()
    for proc in workers:
        proc.join(60)
    assert len(NodeState(workdir).entries('paths')) == 100
