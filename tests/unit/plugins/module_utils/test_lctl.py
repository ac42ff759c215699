# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The lctl helper: pure parsing, then echo clients and modules on the simulator with a real Runner."""

from __future__ import annotations

import subprocess

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import lctl as lctl_utils
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState
from ansible_collections.lustre.iokit.plugins.module_utils.runner import CommandResult, Runner


class ScriptedRunner:
    """Answers each command from a table and remembers the commands, for the version fallbacks."""

    def __init__(self, answers):
        self.answers = answers
        self.commands = []

    def run(self, argv, env=None, cwd=None):
        self.commands.append(list(argv))
        rc, stdout, stderr = self.answers[' '.join(argv)]
        return CommandResult(argv, rc, stdout, stderr, 0.01)


@pytest.mark.parametrize('text, version', [
    ('2.15.5\n', '2.15.5'),
    ('lustre: 2.15.5\nkernel: patchless_client\nbuild: 2.15.5-1.el8\n', '2.15.5'),
    ('lustre: 2.12.9_ddn12\n', '2.12.9_ddn12'),
    ('Lustre version: 2.16.1\n', '2.16.1'),
    ('2.15.64\n', '2.15.64'),
    ('', None),
    ('error: get_param: param_path \'version\': No such file or directory\n', None),
])
def test_parse_version(text, version):
    assert lctl_utils.parse_version(text) == version


def test_version_falls_back_to_lustre_build_version():
    runner = ScriptedRunner({
        'lctl get_param -n version': (2, '', "error: get_param: param_path 'version': No such file or directory"),
        'lctl lustre_build_version': (0, 'Lustre version: 2.12.9\n', ''),
    })
    assert lctl_utils.Lctl(runner).version() == '2.12.9'
    assert runner.commands == [['lctl', 'get_param', '-n', 'version'], ['lctl', 'lustre_build_version']]


def test_parse_object_ids_and_lsmod():
    text = 'create: 3 objects\ncreate: #1 is object id 0x2\ncreate: #2 is object id 0x3\ncreate: #3 is object id 0x1f\n'
    assert lctl_utils.parse_object_ids(text) == [2, 3, 31]
    lsmod = ('Module                  Size  Used by\nobdecho               135168  2\n'
             'lnet                  712704  3 ksocklnd,ptlrpc,obdclass\nosd-ldiskfs 811008 0\n')
    assert lctl_utils.parse_lsmod(lsmod) == {
        'obdecho': {'size': 135168, 'use_count': 2, 'used_by': []},
        'lnet': {'size': 712704, 'use_count': 3, 'used_by': ['ksocklnd', 'ptlrpc', 'obdclass']},
        'osd_ldiskfs': {'size': 811008, 'use_count': 0, 'used_by': []}}


@pytest.mark.parametrize('name, leftover', [
    ('testfs-OST0000_ecc', True), ('echotmp', True), ('echotmp_ecc', True), ('ECHO_oss1', True),
    ('testfs-OST0000_osc', True), ('testfs-OST0000_osc_ecc', True), ('echo_srv', True),
    ('testfs-OST0000', False), ('testfs-OST0000-osc-ffff8f4a1b2c3000', False), ('echo_srv_2', False),
    ('my_ecc_dev', False), ('', False)])
def test_leftover_names(name, leftover):
    assert lctl_utils.is_leftover_name(name) is leftover


def test_errors_carry_the_command_and_stderr():
    error = lctl_utils.LctlError(['lctl', 'attach', 'echo_client', 'x_ecc', 'x_ecc_UUID'], 'error: attach: File exists\n', 17)
    assert str(error) == 'lctl attach echo_client x_ecc x_ecc_UUID: error: attach: File exists'
    assert error.as_dict() == {'command': 'lctl attach echo_client x_ecc x_ecc_UUID', 'rc': 17,
                               'stderr': 'error: attach: File exists', 'message': str(error)}


@pytest.fixture
def sim_init_args():
    # The shared ``sim`` fixture (tests/unit/conftest.py) makes this node: lctl of a 2.16 server.
    return ['--osts', '2', '--mdts', '1', '--ost-size-mib', '32', '--lustre-version', '2.16.1']


def test_attach_reuse_teardown_on_the_simulator(sim, tmp_path):
    runner = Runner()
    lctl = lctl_utils.Lctl(runner)
    assert lctl.version() == '2.16.1'
    state = NodeState(str(tmp_path / 'work'))
    assert lctl_utils.load_module(runner, state, 'obdecho', 'r1') is True
    name = lctl_utils.echo_client_name('testfs-OST0000')
    created = lctl.attach_echo_client(name, 'testfs-OST0000')
    assert (created['status'], created['type'], created['reused']) == ('UP', 'echo_client', False)
    assert lctl.devno(name) == created['index']
    assert lctl.attach_echo_client(name, 'testfs-OST0000')['reused'] is True
    ids = lctl.create_objects(name, 3)
    assert len(ids) == 3 and lctl.destroy_objects(name, ids[0], 3) == ids
    mdt = lctl.attach_echo_client('testfs-MDT0000_ecc', 'testfs-MDT0000', layer='mdd')
    assert mdt['status'] == 'UP'
    # obdecho is ours but held by the echo clients: kept.
    assert lctl_utils.unload_module_if_ours(runner, state, 'obdecho') == 'in_use'
    assert lctl.teardown(name) == ['cleanup', 'detach']
    assert lctl.teardown(name) == [] and lctl.find(name) is None and lctl.devno(name) is None
    assert lctl.teardown('testfs-MDT0000_ecc') == ['cleanup', 'detach']
    assert lctl_utils.unload_module_if_ours(runner, state, 'obdecho') == 'unloaded'
    assert lctl_utils.unload_module_if_ours(runner, state, 'obdecho') == 'not_ours'


def test_half_made_device_is_detached_before_attach(sim):
    subprocess.run(['modprobe', 'obdecho'], check=True)
    subprocess.run(['lctl', 'attach', 'echo_client', 'testfs-OST0001_ecc', 'testfs-OST0001_ecc_UUID'], check=True)
    lctl = lctl_utils.Lctl(Runner())
    assert lctl.find('testfs-OST0001_ecc')['status'] == 'AT'
    device = lctl.attach_echo_client('testfs-OST0001_ecc', 'testfs-OST0001')
    assert device['status'] == 'UP' and device['reused'] is False


def test_failed_setup_leaves_nothing_behind_and_names_the_command(sim):
    subprocess.run(['modprobe', 'obdecho'], check=True)
    lctl = lctl_utils.Lctl(Runner())
    with pytest.raises(lctl_utils.LctlError) as raised:
        lctl.attach_echo_client('testfs-MDT0000_ecc', 'testfs-MDT0000')   # an MDT needs layer mdd
    assert raised.value.command == 'lctl --device testfs-MDT0000_ecc setup testfs-MDT0000'
    assert raised.value.stderr == 'error: setup: Invalid argument'
    assert lctl.find('testfs-MDT0000_ecc') is None


def test_a_device_of_another_type_is_never_replaced(sim):
    lctl = lctl_utils.Lctl(Runner())
    with pytest.raises(lctl_utils.LctlError, match='obdfilter device named testfs-OST0000 already exists'):
        lctl.attach_echo_client('testfs-OST0000', 'testfs-OST0001')
    assert lctl.find('testfs-OST0000')['status'] == 'UP'


def test_attach_without_obdecho_fails_with_the_lctl_error(sim):
    lctl = lctl_utils.Lctl(Runner())
    with pytest.raises(lctl_utils.LctlError) as raised:
        lctl.attach_echo_client('testfs-OST0000_ecc', 'testfs-OST0000')
    assert raised.value.stderr == 'error: attach: No such device'


def test_module_loaded_by_others_is_neither_recorded_nor_unloaded(sim, tmp_path):
    runner = Runner()
    state = NodeState(str(tmp_path / 'work'))
    subprocess.run(['modprobe', 'obdecho'], check=True)
    assert lctl_utils.load_module(runner, state, 'obdecho', 'r1') is False
    assert lctl_utils.unload_module_if_ours(runner, state, 'obdecho') == 'not_ours'
    assert 'obdecho' in lctl_utils.loaded_modules(runner)


def test_failed_modprobe_is_not_left_recorded(sim, tmp_path):
    runner = Runner()
    state = NodeState(str(tmp_path / 'work'))
    with pytest.raises(lctl_utils.LctlError) as raised:
        lctl_utils.load_module(runner, state, 'no_such_module_xyz', 'r1')
    assert raised.value.command == 'modprobe no_such_module_xyz'
    assert state.entries('modules') == []


def test_a_built_in_module_is_never_loaded_nor_recorded(tmp_path, monkeypatch):
    """/sys/module has sg but lsmod does not list it: built into the kernel, so there is nothing to load."""
    (tmp_path / 'sys-module' / 'sg').mkdir(parents=True)
    monkeypatch.setattr(lctl_utils, 'SYS_MODULE_DIR', str(tmp_path / 'sys-module'))
    runner = ScriptedRunner({'lsmod': (0, 'Module                  Size  Used by\n', '')})
    state = NodeState(str(tmp_path / 'work'))
    assert lctl_utils.is_builtin('sg', {}) and not lctl_utils.is_builtin('obdecho', {})
    assert lctl_utils.load_module(runner, state, 'sg', 'r1') is False
    assert runner.commands == [['lsmod']] and state.entries('modules') == []
