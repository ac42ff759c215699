# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lustre_targets_info run as Ansible runs it (a child process) against the simulator."""

from __future__ import annotations

import os
import subprocess

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import lctl as lctl_utils
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState
from ansible_collections.lustre.iokit.plugins.module_utils.runner import Runner
from ansible_collections.lustre.iokit.plugins.modules.lustre_targets_info import describe_target


@pytest.fixture
def sim_init_args():
    return ['--osts', '3', '--mdts', '1', '--ost-size-mib', '32', '--fsname', 'demo']


@pytest.fixture
def run_module(run_as_ansible):
    def run(workdir, check_mode=False, path=None):
        return run_as_ansible('lustre_targets_info', {'workdir': workdir}, check_mode=check_mode, path=path)
    return run


def test_describe_target_reads_the_hex_index():
    device = {'index': 7, 'status': 'UP', 'type': 'obdfilter', 'name': 'big-fs-OST001a', 'uuid': 'u', 'refcount': 5}
    assert describe_target(device) == {'name': 'big-fs-OST001a', 'fsname': 'big-fs', 'target_index': 26,
                                       'device_index': 7, 'status': 'UP', 'uuid': 'u', 'refcount': 5}
    assert describe_target(dict(device, name='oss01-sdb'))['target_index'] is None


def test_targets_version_and_no_echo_clients_on_a_fresh_node(run_module, sim, tmp_path):
    result = run_module(str(tmp_path / 'work'))
    assert result['changed'] is False and result['lctl_found'] is True
    assert result['lustre_version'] == '2.15.5'
    assert [(t['name'], t['fsname'], t['target_index'], t['status']) for t in result['osts']] == [
        ('demo-OST0000', 'demo', 0, 'UP'), ('demo-OST0001', 'demo', 1, 'UP'), ('demo-OST0002', 'demo', 2, 'UP')]
    assert [t['name'] for t in result['mdts']] == ['demo-MDT0000']
    assert result['echo_clients'] == [] and result['leftovers'] == []
    assert result['modules'] == [{'name': 'obdecho', 'loaded': False, 'use_count': 0, 'used_by': [], 'ours': False}]
    assert len(result['devices']) > 4


def test_ours_and_leftovers_are_told_apart_and_nothing_changes(run_module, sim, tmp_path):
    workdir = str(tmp_path / 'work')
    runner = Runner()
    state = NodeState(workdir)
    assert lctl_utils.load_module(runner, state, 'obdecho', 'run-7')
    state.record('echo_clients', 'run-7', name='demo-OST0000_ecc', target='demo-OST0000')
    lctl_utils.Lctl(runner).attach_echo_client('demo-OST0000_ecc', 'demo-OST0000')
    sim.fault('leftover_echo_client', '--target', 'demo-OST0002')
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


def test_a_dead_host_fails_with_the_command(run_module, sim, tmp_path):
    sim.fault('host_dead')
    result = run_module(str(tmp_path / 'work'))
    assert result['failed'] and result['command'].endswith('dl') and result['rc'] == 255
    assert 'Connection refused' in result['stderr']


def test_without_lctl_everything_is_empty(run_module, tmp_path):
    bare = str(tmp_path / 'bin')
    os.mkdir(bare)
    result = run_module(str(tmp_path / 'work'), path=bare)
    assert result['lctl_found'] is False and result['lustre_version'] is None
    assert result['osts'] == [] and result['echo_clients'] == [] and result['changed'] is False
