# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""obdecho run as Ansible runs it (a child process) against the simulator, and its decision table."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import lctl as lctl_utils
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState
from ansible_collections.lustre.iokit.plugins.module_utils.runner import Runner
from ansible_collections.lustre.iokit.plugins.module_utils.kernel_module import predict

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


@pytest.fixture
def sim_init_args():
    return ['--osts', '2', '--mdts', '1', '--ost-size-mib', '32', '--fsname', 'demo']


@pytest.fixture
def run_module(run_as_ansible):
    def run(workdir, check_mode=False, module='obdecho', **args):
        return run_as_ansible(module, dict(args, workdir=workdir), check_mode=check_mode)
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
    """lnet_selftest shares obdecho's implementation: loaded and recorded as ours, unloaded only by us."""
    workdir = str(tmp_path / 'work')
    loaded = run_module(workdir, module='lnet_selftest', state='present', run_id='run-1')
    assert (loaded['changed'], loaded['action'], loaded['ours']) == (True, 'loaded', True)
    assert 'lnet_selftest' in lctl_utils.loaded_modules(Runner())
    assert recorded_modules(workdir) == [('lnet_selftest', 'run-1')]
    unloaded = run_module(workdir, module='lnet_selftest', state='absent')
    assert (unloaded['changed'], unloaded['action'], unloaded['loaded']) == (True, 'unloaded', False)
    assert 'lnet_selftest' not in lctl_utils.loaded_modules(Runner()) and recorded_modules(workdir) == []
