# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lustre_targets_info run as Ansible runs it (a child process) against the simulator."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import lctl as lctl_utils
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState
from ansible_collections.lustre.iokit.plugins.module_utils.runner import Runner
from ansible_collections.lustre.iokit.plugins.modules.lustre_targets_info import describe_target

COLLECTION_PARENT = os.path.abspath(os.path.join(os.path.dirname(lctl_utils.__file__), *(['..'] * 5)))


def find_lustre_sim():
    found = shutil.which('lustre-sim')
    if found:
        return found
    directory = os.path.dirname(os.path.abspath(__file__))
    while directory != os.path.dirname(directory):
        candidate = os.path.join(directory, '.venv', 'bin', 'lustre-sim')
        if os.access(candidate, os.X_OK):
            return candidate
        directory = os.path.dirname(directory)
    return None


LUSTRE_SIM = find_lustre_sim()
needs_sim = pytest.mark.skipif(LUSTRE_SIM is None, reason='lustre-sim (simulator/) is not installed')


@pytest.fixture
def sim(tmp_path, monkeypatch):
    root = str(tmp_path / 'node')
    subprocess.run([LUSTRE_SIM, 'init', '--root', root, '--osts', '3', '--mdts', '1', '--ost-size-mib', '32',
                    '--fsname', 'demo', '--force'], stdout=subprocess.DEVNULL, check=True)
    monkeypatch.setenv('PATH', os.path.join(root, 'bin') + os.pathsep + os.environ['PATH'])
    monkeypatch.setenv('LUSTRE_SIM_ROOT', root)
    return root


def run_module(workdir, check_mode=False, path=None):
    args_file = workdir + '-args.json'
    with open(args_file, 'w') as handle:
        json.dump({'ANSIBLE_MODULE_ARGS': {'workdir': workdir, '_ansible_check_mode': check_mode}}, handle)
    env = dict(os.environ, PYTHONPATH=COLLECTION_PARENT + os.pathsep + os.environ.get('PYTHONPATH', ''))
    if path is not None:
        env['PATH'] = path
    completed = subprocess.run(
        [sys.executable, '-m', 'ansible_collections.lustre.iokit.plugins.modules.lustre_targets_info', args_file],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env, check=False)
    return json.loads(completed.stdout)


def test_describe_target_reads_the_hex_index():
    device = {'index': 7, 'status': 'UP', 'type': 'obdfilter', 'name': 'big-fs-OST001a', 'uuid': 'u', 'refcount': 5}
    assert describe_target(device) == {'name': 'big-fs-OST001a', 'fsname': 'big-fs', 'target_index': 26,
                                       'device_index': 7, 'status': 'UP', 'uuid': 'u', 'refcount': 5}
    assert describe_target(dict(device, name='oss01-sdb'))['target_index'] is None


@needs_sim
def test_targets_version_and_no_echo_clients_on_a_fresh_node(sim, tmp_path):
    result = run_module(str(tmp_path / 'work'))
    assert result['changed'] is False and result['lctl_found'] is True
    assert result['lustre_version'] == '2.15.5'
    assert [(t['name'], t['fsname'], t['target_index'], t['status']) for t in result['osts']] == [
        ('demo-OST0000', 'demo', 0, 'UP'), ('demo-OST0001', 'demo', 1, 'UP'), ('demo-OST0002', 'demo', 2, 'UP')]
    assert [t['name'] for t in result['mdts']] == ['demo-MDT0000']
    assert result['echo_clients'] == [] and result['leftovers'] == []
    assert result['modules'] == [{'name': 'obdecho', 'loaded': False, 'use_count': 0, 'used_by': [], 'ours': False}]
    assert len(result['devices']) > 4


@needs_sim
def test_ours_and_leftovers_are_told_apart_and_nothing_changes(sim, tmp_path):
    workdir = str(tmp_path / 'work')
    runner = Runner()
    state = NodeState(workdir)
    assert lctl_utils.load_module(runner, state, 'obdecho', 'run-7')
    state.record('echo_clients', 'run-7', name='demo-OST0000_ecc', target='demo-OST0000')
    lctl_utils.Lctl(runner).attach_echo_client('demo-OST0000_ecc', 'demo-OST0000')
    subprocess.run([LUSTRE_SIM, 'fault', '--root', sim, 'add', 'leftover_echo_client', '--target', 'demo-OST0002'],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(['lctl', 'attach', 'echo_client', 'demo-OST0001_ecc', 'demo-OST0001_ecc_UUID'], check=True)
    before = subprocess.run(['lctl', 'dl'], stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    for check_mode in (True, False):
        result = run_module(workdir, check_mode=check_mode)
        assert result['changed'] is False
        echo = dict((e['name'], e) for e in result['echo_clients'])
        assert echo['demo-OST0000_ecc']['ours'] and echo['demo-OST0000_ecc']['run_id'] == 'run-7'
        assert echo['demo-OST0000_ecc']['target'] == 'demo-OST0000' and not echo['demo-OST0000_ecc']['leftover']
        assert echo['demo-OST0001_ecc']['status'] == 'AT'
        assert sorted(e['name'] for e in result['leftovers']) == ['demo-OST0001_ecc', 'demo-OST0002_ecc']
        assert result['modules'][0]['loaded'] and result['modules'][0]['ours']
        assert result['modules'][0]['use_count'] == 3
    assert subprocess.run(['lctl', 'dl'], stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout == before


@needs_sim
def test_a_dead_host_fails_with_the_command(sim, tmp_path):
    subprocess.run([LUSTRE_SIM, 'fault', '--root', sim, 'add', 'host_dead'], check=True, stdout=subprocess.DEVNULL)
    result = run_module(str(tmp_path / 'work'))
    assert result['failed'] and result['command'].endswith('dl') and result['rc'] == 255
    assert 'Connection refused' in result['stderr']


def test_without_lctl_everything_is_empty(tmp_path):
    bare = str(tmp_path / 'bin')
    os.mkdir(bare)
    result = run_module(str(tmp_path / 'work'), path=bare)
    assert result['lctl_found'] is False and result['lustre_version'] is None
    assert result['osts'] == [] and result['echo_clients'] == [] and result['changed'] is False
