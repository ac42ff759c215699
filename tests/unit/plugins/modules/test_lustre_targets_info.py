# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lustre_targets_info run as Ansible runs it (a child process) against the simulator."""

from __future__ import annotations

import os
import subprocess

import pytest
import yaml

from ansible_collections.lustre.iokit.plugins.module_utils import lctl as lctl_utils
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState
from ansible_collections.lustre.iokit.plugins.module_utils.runner import Runner
from ansible_collections.lustre.iokit.plugins.modules.lustre_targets_info import (
    add_mount_devices, describe_target, parse_mntdev, server_mounts)
from ansible_collections.lustre.iokit.tests.unit.conftest import LUSTRE_SIM


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


PROC_MOUNTS = (
    '/dev/sda1 / ext4 rw,relatime 0 0\n'
    '/dev/sdc /lustre/demo/ost0 lustre ro,svname=demo-OST0000,mgsnode=10.0.0.1@tcp,osd=osd-ldiskfs 0 0\n'
    'ostpool/ost1 /lustre/demo/ost1 lustre ro,svname=demo-OST0001,osd=osd-zfs 0 0\n'
    '10.0.0.1@tcp:/demo /mnt/demo lustre rw,flock 0 0\n'
    '/dev/mapper/mdt0 /lustre/demo\\040mdt0 lustre ro,svname=demo-MDT0000 0 0\n')


def test_server_mounts_are_found_by_svname():
    assert server_mounts(PROC_MOUNTS) == {
        'demo-OST0000': ('/dev/sdc', '/lustre/demo/ost0'), 'demo-OST0001': ('ostpool/ost1', '/lustre/demo/ost1'),
        'demo-MDT0000': ('/dev/mapper/mdt0', '/lustre/demo mdt0')}
    assert parse_mntdev('osd-ldiskfs.demo-OST0002.mntdev=/dev/sdd\nosd-zfs.demo-OST0001.mntdev=ostpool/ost1\n'
                        'junk\n') == {'demo-OST0002': '/dev/sdd', 'demo-OST0001': 'ostpool/ost1'}


def test_mount_devices_come_from_the_mount_table_then_mntdev_and_only_name_block_devices():
    targets = [{'name': 'demo-OST000%d' % index} for index in range(4)]
    add_mount_devices(targets, server_mounts(PROC_MOUNTS),
                      {'demo-OST0000': '/dev/other', 'demo-OST0002': '/dev/sdd', 'demo-OST0003': '/srv/ost3'})
    assert [(t['mount_device'], t['mount_point']) for t in targets] == [
        ('/dev/sdc', '/lustre/demo/ost0'),  # the mount table wins
        (None, '/lustre/demo/ost1'),        # a ZFS dataset is not a LUN
        ('/dev/sdd', None),                 # mntdev when the target is not in the mount table
        (None, None)]                       # a directory is not a device either


def test_mount_devices_of_a_simulated_node_come_from_mntdev(run_as_ansible, tmp_path, monkeypatch):
    if LUSTRE_SIM is None:
        pytest.skip('lustre-sim (simulator/) is not installed')
    root = str(tmp_path / 'node')
    config = tmp_path / 'node.yml'
    # OST0001 sits on a (named, not real) LUN at 5 MiB/s and inherits its rate; OST0000 names no device.
    config.write_text('fsname: demo\nmdts: [{index: 0, device: /dev/loop41}]\nosts:\n  - {index: 0}\n'
                      '  - {index: 1, device: /dev/loop42, device_mib_s: 5}\n', encoding='utf-8')
    subprocess.run([LUSTRE_SIM, 'init', '--root', root, '--config', str(config), '--ost-size-mib', '32',
                    '--no-mount', '--force'], stdout=subprocess.DEVNULL, check=True)
    try:
        monkeypatch.setenv('PATH', os.path.join(root, 'bin') + os.pathsep + os.environ['PATH'])
        monkeypatch.setenv('LUSTRE_SIM_ROOT', root)
        result = run_as_ansible('lustre_targets_info', {'workdir': str(tmp_path / 'work')})
        assert [(t['name'], t['mount_device'], t['mount_point']) for t in result['osts'] + result['mdts']] == [
            ('demo-OST0000', None, None), ('demo-OST0001', '/dev/loop42', None), ('demo-MDT0000', '/dev/loop41', None)]
        with open(os.path.join(root, 'config.yaml'), encoding='utf-8') as handle:
            osts = yaml.safe_load(handle)['osts']
        assert [(o.get('device'), o.get('device_mib_s'), o['mib_s']) for o in osts] == [
            (None, None, None), ('/dev/loop42', 5.0, 5.0)]
    finally:
        subprocess.run([LUSTRE_SIM, 'destroy', '--root', root], stdout=subprocess.DEVNULL, check=False)
