# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The survey lock: one survey of a kind per node, held by a live process, its record naming the holder."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import lctl as lctl_utils
from ansible_collections.lustre.iokit.plugins.module_utils import node_state as node_state_module
from ansible_collections.lustre.iokit.plugins.module_utils.cleanup import Cleanup
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import (
    NodeState,
    SurveyLock,
    SurveyLockHeld,
    live_runs,
    run_tag,
)

# The real one, before the unit tests' conftest makes every test a node of its own.
REAL_NODE_LOCK_DIR = node_state_module.node_lock_dir
COLLECTIONS = os.path.abspath(os.path.join(os.path.dirname(lctl_utils.__file__), '..', '..', '..', '..', '..'))

HOLDER = textwrap.dedent('''
    import sys
    sys.path.insert(0, %r)
    from ansible_collections.lustre.iokit.plugins.module_utils.node_state import SurveyLock
    lock = SurveyLock(sys.argv[1], 'obdfilter')
    lock.acquire({'run_id': sys.argv[2], 'launch': 'l-1', 'host': 'oss1'})
    print('held', flush=True)
    sys.stdin.read()
''')


@pytest.fixture
def holder(tmp_path):
    """Start a process that holds the obdfilter lock under tmp_path for run-a, until its stdin closes."""
    started = []

    def start(run_id='run-a', directory=None):
        process = subprocess.Popen([sys.executable, '-c', HOLDER % COLLECTIONS, directory or str(tmp_path), run_id],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, universal_newlines=True)
        assert process.stdout.readline().strip() == 'held'
        started.append(process)
        return process
    yield start
    for process in started:
        process.kill()
        process.wait()


def test_a_second_start_is_refused_naming_the_holder(tmp_path, holder):
    process = holder()
    with pytest.raises(SurveyLockHeld) as refused:
        SurveyLock(str(tmp_path), 'obdfilter').acquire({'run_id': 'run-b', 'host': 'oss1'})
    message = str(refused.value)
    assert 'run run-a' in message and 'host oss1' in message and 'pid %d' % process.pid in message
    assert 'started 20' in message
    # The same run id is refused too: only the lock says who runs, not the run id.
    with pytest.raises(SurveyLockHeld):
        SurveyLock(str(tmp_path), 'obdfilter').acquire({'run_id': 'run-a', 'host': 'oss1'})
    # Waiting is the caller's choice: told to stop, it is refused as well.
    with pytest.raises(SurveyLockHeld):
        SurveyLock(str(tmp_path), 'obdfilter').acquire_when_free({'run_id': 'run-a'}, lambda holder: False)
    # Another survey's lock is another lock.
    other = SurveyLock(str(tmp_path), 'mds')
    assert other.acquire({'run_id': 'run-b'}) is None
    other.release()
    assert live_runs(str(tmp_path))['obdfilter']['run_id'] == 'run-a'


def test_a_killed_holder_frees_the_lock_and_leaves_its_record(tmp_path, holder):
    process = holder()
    process.kill()
    process.wait()
    assert live_runs(str(tmp_path)) == {}
    lock = SurveyLock(str(tmp_path), 'obdfilter')
    previous = lock.acquire({'run_id': 'run-b', 'host': 'oss1'})
    assert (previous['run_id'], previous['pid'], previous['launch']) == ('run-a', process.pid, 'l-1')
    assert lock.holder()['run_id'] == 'run-b'
    lock.release()
    # A clean release leaves no record: the next start finds nothing to remove.
    assert SurveyLock(str(tmp_path), 'obdfilter').acquire({'run_id': 'run-c'}) is None


def test_a_cleanup_without_run_id_leaves_a_live_runs_records(tmp_path, holder, node_lock_dir):
    holder('run-a', directory=node_lock_dir)
    state = NodeState(str(tmp_path), launch='l-1')
    state.record('paths', 'run-a', path=str(tmp_path / 'run-a'))
    state.record('paths', 'run-z', path=str(tmp_path / 'run-z'))
    os.makedirs(str(tmp_path / 'run-a'))
    os.makedirs(str(tmp_path / 'run-z'))
    report = Cleanup(None, NodeState(str(tmp_path)), include_iokit_leftovers=False, unload_modules=False).run()
    assert [item['path'] for item in report['removed']['paths']] == [str(tmp_path / 'run-z')]
    assert os.path.isdir(str(tmp_path / 'run-a'))
    kept = [item for item in report['kept'] if item['kind'] == 'runs']
    assert kept and kept[0]['id'] == 'run-a' and 'host oss1' in kept[0]['reason']


def test_a_cleanup_of_one_launch_leaves_another_launch_of_the_same_run(tmp_path):
    first = NodeState(str(tmp_path), launch='first')
    second = NodeState(str(tmp_path), launch='second')
    for state, name in ((first, 'one'), (second, 'two')):
        os.makedirs(str(tmp_path / 'run-a' / name))
        state.record('paths', 'run-a', path=str(tmp_path / 'run-a' / name))
    report = Cleanup(None, NodeState(str(tmp_path)), run_id='run-a', launch='second', include_iokit_leftovers=False,
                     unload_modules=False).run()
    assert [item['path'] for item in report['removed']['paths']] == [str(tmp_path / 'run-a' / 'two')]
    assert os.path.isdir(str(tmp_path / 'run-a' / 'one'))


def test_run_tags_are_short_and_names_fit_the_uuid_limit():
    assert run_tag('20261122T101500Z-3f2a') == run_tag('20261122T101500Z-3f2a') != run_tag('other')
    assert len(run_tag('x' * 64)) == 6
    name = lctl_utils.echo_client_name('longfsnm-OST00ff', run_tag('x' * 64))
    assert name.endswith('_ecc') and lctl_utils.name_problem(name) is None
    assert 'under 40 bytes' in lctl_utils.name_problem(lctl_utils.echo_client_name('a' * 40))


def test_a_cleanup_with_nothing_left_removes_the_free_locks_and_the_workdir_it_made(tmp_path, node_lock_dir):
    workdir = str(tmp_path / 'work')
    state = NodeState(workdir)
    state.record('paths', None, path=workdir, remove='empty_dir')
    lock = SurveyLock(None, 'mds')
    lock.acquire({'run_id': 'run-a', 'workdir': workdir})
    lock.release()
    # A killed run of another workdir: its record stays for the next survey to remove what it left.
    other = SurveyLock(None, 'obdfilter')
    other.acquire({'run_id': 'run-k', 'workdir': str(tmp_path / 'other-work')})
    os.close(other._fd)  # pylint: disable=protected-access
    # A lock directory of the former layout, inside the workdir.
    legacy = SurveyLock(os.path.join(workdir, 'locks'), 'mds')
    legacy.acquire({'run_id': 'run-old'})
    legacy.release()
    report = Cleanup(None, NodeState(workdir), include_iokit_leftovers=False, unload_modules=False).run()
    assert report['errors'] == [] and not os.path.exists(workdir)
    assert sorted(os.listdir(node_lock_dir)) == ['obdfilter.lock']
    # A lock file unlinked under a survey about to take it: the survey takes the new file instead.
    again = SurveyLock(None, 'mds')
    assert again.acquire({'run_id': 'run-b'}) is None and again.holder()['run_id'] == 'run-b'
    again.release()


def test_the_lock_is_the_nodes_whatever_the_workdir(tmp_path, monkeypatch):
    """Two runs with different workdirs on one node meet at one lock; two simulated nodes do not."""
    monkeypatch.setattr(node_state_module, 'node_lock_dir', REAL_NODE_LOCK_DIR)
    monkeypatch.setenv('LUSTRE_SIM_ROOT', str(tmp_path / 'node-a'))
    first = SurveyLock(None, 'obdfilter')
    first.acquire({'run_id': 'run-a', 'workdir': str(tmp_path / 'work-1')})
    try:
        assert first.path == str(tmp_path / 'node-a' / 'run' / 'lustre-iokit' / 'locks' / 'obdfilter.lock')
        with pytest.raises(SurveyLockHeld) as refused:
            SurveyLock(None, 'obdfilter').acquire({'run_id': 'run-b', 'workdir': str(tmp_path / 'work-2')})
        assert 'run run-a' in str(refused.value)
        assert live_runs()['obdfilter']['workdir'] == str(tmp_path / 'work-1')
        monkeypatch.setenv('LUSTRE_SIM_ROOT', str(tmp_path / 'node-b'))
        elsewhere = SurveyLock(None, 'obdfilter')
        assert elsewhere.acquire({'run_id': 'run-b'}) is None
        elsewhere.release()
    finally:
        first.release()
    monkeypatch.delenv('LUSTRE_SIM_ROOT')
    if os.geteuid() == 0:
        assert REAL_NODE_LOCK_DIR() == '/run/lustre-iokit/locks'


def test_a_planted_lock_directory_is_refused(tmp_path, node_lock_dir):
    os.makedirs(str(tmp_path / 'elsewhere'))
    os.symlink(str(tmp_path / 'elsewhere'), node_lock_dir)
    with pytest.raises(OSError) as refused:
        SurveyLock(None, 'obdfilter').acquire({'run_id': 'run-a'})
    assert 'symbolic link' in str(refused.value)
    assert os.listdir(str(tmp_path / 'elsewhere')) == []
