# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The module payloads a SIGKILLed module leaves: claimed by their module, removed once it is gone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from ansible_collections.lustre.iokit.plugins.module_utils import payload
from ansible_collections.lustre.iokit.plugins.module_utils.cleanup import Cleanup
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState, has_exited
from ansible_collections.lustre.iokit.tests.unit.waiting import wait_for


def fake_payload(parent, module):
    """A payload directory as Ansible extracts one, and the path of a module_utils file inside its zip."""
    directory = os.path.join(str(parent), 'ansible_lustre.iokit.%s_payload_x1y2' % module)
    os.makedirs(directory)
    zipped = os.path.join(directory, 'ansible_lustre.iokit.%s_payload.zip' % module)
    with open(zipped, 'wb') as handle:
        handle.write(b'PK')
    return directory, os.path.join(zipped, 'ansible_collections', 'lustre', 'iokit', 'plugins', 'module_utils',
                                   'payload.py')


def start_module_process():
    process = subprocess.Popen([sys.executable, '-c', 'import sys; print("up", flush=True); sys.stdin.read()'],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, universal_newlines=True)
    assert process.stdout.readline().strip() == 'up'
    return process


def test_the_payload_of_a_killed_module_is_removed_and_a_live_ones_kept(tmp_path):
    killed_dir, killed_file = fake_payload(tmp_path, 'obdfilter_survey')
    live_dir, live_file = fake_payload(tmp_path, 'async_result')
    unclaimed_dir, unused = fake_payload(tmp_path, 'mds_survey')
    os.symlink(killed_dir, str(tmp_path / 'ansible_lustre.iokit.planted_payload_link'))
    killed, live = start_module_process(), start_module_process()
    try:
        assert payload.payload_dir(killed_file) == killed_dir
        assert payload.claim(killed_file, pid=killed.pid) == killed_dir
        assert payload.claim(live_file, pid=live.pid) == live_dir
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        state = NodeState(str(tmp_path / 'work'))
        plan = Cleanup(None, state, include_iokit_leftovers=False, unload_modules=False, check_mode=True,
                       module_payloads=True, payload_parents=[str(tmp_path)]).run()
        assert plan['removed']['module_payloads'] == [{'path': killed_dir, 'pid': killed.pid}]
        assert os.path.isdir(killed_dir)
        report = Cleanup(None, state, include_iokit_leftovers=False, unload_modules=False, module_payloads=True,
                         payload_parents=[str(tmp_path)]).run()
        assert report['removed']['module_payloads'] == [{'path': killed_dir, 'pid': killed.pid}]
        assert report['changed'] and report['errors'] == []
        assert not os.path.exists(killed_dir)
        # The live module's payload, one no module claimed and a planted link stay.
        assert os.path.isdir(live_dir) and os.path.isdir(unclaimed_dir)
        assert os.path.islink(str(tmp_path / 'ansible_lustre.iokit.planted_payload_link'))
    finally:
        for process in (killed, live):
            if process.poll() is None:
                process.kill()
                process.wait()


def test_the_payload_of_a_killed_module_not_reaped_yet_is_removed(tmp_path):
    zombie_dir, zombie_file = fake_payload(tmp_path, 'sgpdd_survey')
    module = start_module_process()
    try:
        payload.claim(zombie_file, pid=module.pid)
        module.send_signal(signal.SIGKILL)
        # Not waited for: a zombie until reaped, with its pid and start time still in /proc.
        wait_for('the killed module to be a zombie', lambda: has_exited(module.pid), 30)
        assert os.path.exists('/proc/%d' % module.pid)
        removed, errors = payload.remove_stale_payloads([str(tmp_path)])
        assert removed == [{'path': zombie_dir, 'pid': module.pid}] and errors == []
        assert not os.path.exists(zombie_dir)
    finally:
        if module.poll() is None:
            module.kill()
        module.wait()


def test_outside_a_payload_claim_does_nothing(tmp_path):
    assert payload.payload_dir() is None and payload.claim() is None
    assert payload.claim(str(tmp_path / 'elsewhere' / 'x.zip' / 'y.py')) is None
    assert os.listdir(str(tmp_path)) == []
