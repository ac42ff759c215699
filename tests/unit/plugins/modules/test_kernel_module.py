# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""kernel_module run as Ansible runs it (a child process) against the simulator (obdecho, lnet_selftest), in this
process on a fake kernel (sg, which the simulator leaves to the real modprobe; a module built into the kernel), and
its decision table."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import kernel_module as kernel_module_utils
from ansible_collections.lustre.iokit.plugins.module_utils import lctl as lctl_utils
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState
from ansible_collections.lustre.iokit.plugins.module_utils.runner import CommandResult, Runner
from ansible_collections.lustre.iokit.plugins.module_utils.kernel_module import predict
from ansible_collections.lustre.iokit.plugins.modules import kernel_module

UNUSED = {'size': 1, 'use_count': 0, 'used_by': []}
USED = {'size': 1, 'use_count': 2, 'used_by': []}


@pytest.mark.parametrize('state, loaded, ours, expected', [
    ('present', None, False, ('loaded', True, True)),
    ('present', UNUSED, False, ('already_loaded', True, False)),
    ('present', USED, True, ('already_loaded', True, True)),
    ('absent', UNUSED, True, ('unloaded', False, False)),
    ('absent', USED, True, ('in_use', True, True)),
    ('absent', UNUSED, False, ('not_ours', True, False)),
    ('absent', None, True, ('not_loaded', False, False)),
    ('absent', None, False, ('not_loaded', False, False)),
])
def test_predict(state, loaded, ours, expected):
    assert predict(state, loaded, ours) == expected


@pytest.mark.parametrize('state, ours, expected', [
    ('present', False, ('already_loaded', True, False)),
    ('present', True, ('already_loaded', True, False)),
    ('absent', False, ('not_ours', True, False)),
    ('absent', True, ('not_ours', True, False)),
])
def test_predict_built_in(state, ours, expected):
    """Built into the kernel: always loaded, never ours (a record saying so is stale), never unloaded."""
    assert predict(state, None, ours, builtin=True) == expected


@pytest.fixture
def sim_init_args():
    return ['--osts', '2', '--mdts', '1', '--ost-size-mib', '32', '--fsname', 'demo']


@pytest.fixture
def run_module(run_as_ansible):
    def run(workdir, check_mode=False, name='obdecho', **args):
        return run_as_ansible('kernel_module', dict(args, name=name, workdir=workdir), check_mode=check_mode)
    return run


def obdecho_loaded():
    return 'obdecho' in lctl_utils.loaded_modules(Runner())


def recorded_modules(workdir):
    return [(entry['name'], entry['run_id']) for entry in NodeState(workdir).entries('modules')]


def test_load_records_ours_then_unload_crosses_it_off(run_module, sim, tmp_path):
    workdir = str(tmp_path / 'work')
    loaded = run_module(workdir, state='present', run_id='run-1')
    assert (loaded['changed'], loaded['action'], loaded['loaded'], loaded['ours']) == (True, 'loaded', True, True)
    assert obdecho_loaded() and recorded_modules(workdir) == [('obdecho', 'run-1')]

    again = run_module(workdir, state='present', run_id='run-2')
    assert (again['changed'], again['action'], again['ours']) == (False, 'already_loaded', True)
    assert recorded_modules(workdir) == [('obdecho', 'run-1')]

    unloaded = run_module(workdir, state='absent')
    assert (unloaded['changed'], unloaded['action'], unloaded['loaded'], unloaded['ours']) == (
        True, 'unloaded', False, False)
    assert not obdecho_loaded() and recorded_modules(workdir) == []

    nothing = run_module(workdir, state='absent')
    assert (nothing['changed'], nothing['action'], nothing['loaded']) == (False, 'not_loaded', False)


def test_a_module_loaded_by_someone_else_is_left_alone(run_module, sim, tmp_path):
    workdir = str(tmp_path / 'work')
    subprocess.run(['modprobe', 'obdecho'], check=True)
    present = run_module(workdir, state='present', run_id='run-1')
    assert (present['changed'], present['action'], present['ours']) == (False, 'already_loaded', False)
    absent = run_module(workdir, state='absent')
    assert (absent['changed'], absent['action'], absent['loaded'], absent['ours']) == (False, 'not_ours', True, False)
    assert obdecho_loaded() and recorded_modules(workdir) == []


def test_ours_but_in_use_stays_loaded_and_recorded(run_module, sim, tmp_path):
    workdir = str(tmp_path / 'work')
    assert run_module(workdir, state='present', run_id='run-1')['action'] == 'loaded'
    lctl_utils.Lctl(Runner()).attach_echo_client('demo-OST0000_ecc', 'demo-OST0000')
    absent = run_module(workdir, state='absent')
    assert (absent['changed'], absent['action'], absent['loaded'], absent['ours']) == (False, 'in_use', True, True)
    assert absent['use_count'] > 0 and 'still in use' in json.dumps(absent['warnings'])
    assert obdecho_loaded() and recorded_modules(workdir) == [('obdecho', 'run-1')]


def test_rmmod_refusing_is_in_use_too(run_module, sim, tmp_path):
    workdir = str(tmp_path / 'work')
    assert run_module(workdir, state='present', run_id='run-1')['action'] == 'loaded'
    sim.fault('obdecho_busy')
    absent = run_module(workdir, state='absent')
    assert (absent['changed'], absent['action'], absent['loaded']) == (False, 'in_use', True)
    assert recorded_modules(workdir) == [('obdecho', 'run-1')]


def test_check_mode_predicts_and_changes_nothing(run_module, sim, tmp_path):
    workdir = str(tmp_path / 'work')
    planned = run_module(workdir, check_mode=True, state='present', run_id='run-1')
    assert (planned['changed'], planned['action'], planned['loaded'], planned['ours']) == (True, 'loaded', True, True)
    assert not obdecho_loaded() and not os.path.exists(workdir)

    assert run_module(workdir, state='present', run_id='run-1')['action'] == 'loaded'
    planned = run_module(workdir, check_mode=True, state='absent')
    assert (planned['changed'], planned['action'], planned['loaded']) == (True, 'unloaded', False)
    assert obdecho_loaded() and recorded_modules(workdir) == [('obdecho', 'run-1')]


def test_a_fresh_run_id_is_made_and_a_bad_one_refused(run_module, sim, tmp_path):
    workdir = str(tmp_path / 'work')
    bad = run_module(workdir, state='present', run_id='../etc')
    assert bad['failed'] and bad['msg'].startswith('run_id:') and not obdecho_loaded()
    made = run_module(workdir, state='present')
    assert made['action'] == 'loaded' and recorded_modules(workdir) == [('obdecho', made['run_id'])]
    assert made['run_id'][:8].isdigit() and made['run_id'][8] == 'T'


def test_a_failed_modprobe_fails_and_leaves_no_record(run_module, sim, tmp_path):
    workdir = str(tmp_path / 'work')
    sim.fault('host_dead')
    failed = run_module(workdir, state='present', run_id='run-1')
    assert failed['failed'] and 'Connection refused' in failed['msg']
    assert recorded_modules(workdir) == []


def test_lnet_selftest_follows_the_same_rule(run_module, sim, tmp_path):
    """lnet_selftest follows obdecho's rule: loaded and recorded as ours, unloaded only by us."""
    workdir = str(tmp_path / 'work')
    loaded = run_module(workdir, name='lnet_selftest', state='present', run_id='run-1')
    assert (loaded['changed'], loaded['action'], loaded['ours']) == (True, 'loaded', True)
    assert 'lnet_selftest' in lctl_utils.loaded_modules(Runner())
    assert recorded_modules(workdir) == [('lnet_selftest', 'run-1')]
    unloaded = run_module(workdir, name='lnet_selftest', state='absent')
    assert (unloaded['changed'], unloaded['action'], unloaded['loaded']) == (True, 'unloaded', False)
    assert 'lnet_selftest' not in lctl_utils.loaded_modules(Runner()) and recorded_modules(workdir) == []


def test_only_the_modules_it_knows_are_accepted(run_module, sim, tmp_path):
    refused = run_module(str(tmp_path / 'work'), name='ext4', state='absent')
    assert refused['failed'] and 'value of name must be one of: obdecho, lnet_selftest, sg' in refused['msg']


# -- sg and built-in modules, on a fake kernel -------------------------------------------------------------------


class FakeKernel:
    """lsmod, modprobe and rmmod of a kernel with loadable modules ``loaded`` ({name: use count}); remembers the
    commands it ran."""

    def __init__(self, loaded=None):
        self.loaded = dict(loaded or {})
        self.commands = []

    def run(self, argv, env=None):
        self.commands.append(' '.join(argv))
        if argv == ['lsmod']:
            lines = ['Module                  Size  Used by'] + [
                '%-19s %8d  %d' % (name, 4096, count) for name, count in self.loaded.items()]
            return CommandResult(argv, 0, '\n'.join(lines) + '\n', '', 0.01)
        if argv[0] == 'modprobe':
            self.loaded.setdefault(argv[1], 0)
            return CommandResult(argv, 0, '', '', 0.01)
        if argv[0] == 'rmmod':
            if self.loaded.get(argv[1]):
                return CommandResult(argv, 1, '', 'rmmod: ERROR: Module %s is in use\n' % argv[1], 0.01)
            self.loaded.pop(argv[1], None)
            return CommandResult(argv, 0, '', '', 0.01)
        raise AssertionError('unexpected command %r' % argv)


@pytest.fixture
def sys_module(tmp_path, monkeypatch):
    """An empty /sys/module of the fake kernel: a directory per module it has, loadable and built in."""
    path = tmp_path / 'sys-module'
    path.mkdir()
    monkeypatch.setattr(lctl_utils, 'SYS_MODULE_DIR', str(path))
    return path


@pytest.fixture
def run_on_kernel(run_in_process, fake_runners, tmp_path):
    def run(kernel, check_mode=False, **args):
        fake_runners(kernel_module_utils, kernel)
        return run_in_process(kernel_module, dict(args, name='sg', workdir=str(tmp_path / 'work')),
                              check_mode=check_mode)
    return run


def test_sg_is_loaded_recorded_and_unloaded_like_the_lustre_modules(run_on_kernel, sys_module, tmp_path):
    kernel = FakeKernel()
    planned = run_on_kernel(kernel, check_mode=True, state='present', run_id='run-1')
    assert (planned['changed'], planned['action'], planned['builtin']) == (True, 'loaded', False)
    assert kernel.commands == ['lsmod'] and not (tmp_path / 'work').exists()

    loaded = run_on_kernel(kernel, state='present', run_id='run-1')
    assert (loaded['changed'], loaded['action'], loaded['loaded'], loaded['ours']) == (True, 'loaded', True, True)
    assert 'modprobe sg' in kernel.commands and recorded_modules(str(tmp_path / 'work')) == [('sg', 'run-1')]

    kernel.loaded['sg'] = 1  # an sgp_dd has a /dev/sg node open
    busy = run_on_kernel(kernel, state='absent')
    assert (busy['changed'], busy['action'], busy['use_count']) == (False, 'in_use', 1)
    assert 'rmmod sg' not in kernel.commands and recorded_modules(str(tmp_path / 'work')) == [('sg', 'run-1')]

    kernel.loaded['sg'] = 0
    unloaded = run_on_kernel(kernel, state='absent')
    assert (unloaded['changed'], unloaded['action'], unloaded['loaded']) == (True, 'unloaded', False)
    assert 'sg' not in kernel.loaded
    # The last entry crossed off: no empty state file is left in the workdir.
    assert not (tmp_path / 'work' / 'node-state.json').exists()


def test_sg_loaded_by_someone_else_is_left_alone(run_on_kernel, sys_module, tmp_path):
    (sys_module / 'sg').mkdir()
    kernel = FakeKernel({'sg': 0})
    present = run_on_kernel(kernel, state='present', run_id='run-1')
    assert (present['changed'], present['action'], present['ours'], present['builtin']) == (
        False, 'already_loaded', False, False)
    absent = run_on_kernel(kernel, state='absent')
    assert (absent['changed'], absent['action'], absent['loaded']) == (False, 'not_ours', True)
    assert kernel.commands == ['lsmod'] * 3 and 'sg' in kernel.loaded


@pytest.mark.parametrize('check_mode', [False, True])
def test_a_built_in_sg_is_loaded_never_ours_never_unloaded(run_on_kernel, sys_module, tmp_path, check_mode):
    (sys_module / 'sg').mkdir()
    kernel = FakeKernel()
    present = run_on_kernel(kernel, check_mode=check_mode, state='present', run_id='run-1')
    assert (present['changed'], present['action'], present['loaded'], present['ours'], present['builtin']) == (
        False, 'already_loaded', True, False, True)
    absent = run_on_kernel(kernel, check_mode=check_mode, state='absent')
    assert (absent['changed'], absent['action'], absent['loaded'], absent['ours'], absent['builtin']) == (
        False, 'not_ours', True, False, True)
    assert kernel.commands == ['lsmod', 'lsmod'] and recorded_modules(str(tmp_path / 'work')) == []


def test_a_stale_record_of_a_built_in_module_is_crossed_off(run_on_kernel, sys_module, tmp_path):
    (sys_module / 'sg').mkdir()
    NodeState(str(tmp_path / 'work')).record('modules', 'run-0', name='sg')
    kernel = FakeKernel()
    absent = run_on_kernel(kernel, state='absent')
    assert (absent['changed'], absent['action'], absent['loaded'], absent['ours']) == (False, 'not_ours', True, False)
    assert kernel.commands == ['lsmod'] and recorded_modules(str(tmp_path / 'work')) == []
