# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""survey_start: the survey's module gets, from the role's variables, what each role's own module task gave it.

``survey_start_module_args.json`` holds, for every scenario below and every survey, the arguments that the roles'
former ``tasks/start.yml`` (one module task per role, every option templated from its role variable) produced from
the role's defaults and the scenario's variables, templated by Ansible; but the hostfile of ior and mdtest, which
those tasks ordered as a set after the launcher, is in the client group's order, as their comment meant.
"""

from __future__ import annotations

import json
import os

import pytest

from ansible.parsing.dataloader import DataLoader

from ansible_collections.lustre.iokit.plugins.module_utils import survey_catalog

ROLES = os.path.join(os.path.dirname(survey_catalog.__file__), '..', '..', 'roles')
EXPECTED = os.path.join(os.path.dirname(__file__), 'survey_start_module_args.json')

# What a host of the run has besides the role's defaults when survey_common starts the module.
HOST = {
    'inventory_hostname': 'client2',
    'groups': {'all': ['client1', 'client2', 'client3'], 'clients': ['client1', 'client2', 'client3']},
    'hostvars': {'client1': {'ior_mpi_hostname': 'c1-ib', 'mdtest_mpi_hostname': 'c1-ib'}, 'client2': {}, 'client3': {}},
    # facts of the lnet role's prepare.yml and of the preflights
    'lnet_servers': ['10.0.0.1@tcp'], 'lnet_clients': ['10.0.0.2@tcp'], 'sgpdd_devices': ['/dev/sdb'],
    'lnet_nid_owner_map': {'10.0.0.1@tcp': 'oss1', '10.0.0.2@tcp': 'client1'},
    'ost_mount_point': '/mnt/testfs', 'ior_mount_point': '/mnt/testfs', 'mdtest_mount_point': '/mnt/testfs',
}

SCENARIOS = {
    'defaults': {},
    # every value a role left out, converted or computed in its module task
    'given': {
        'iokit_engine': 'iokit', 'iokit_timeout_s': 60, 'iokit_workdir': '/w',
        'mds_dir_count': 8, 'lnet_distribute': '1:1', 'lnet_sizes': [1, '4k'],
        'ior_directory': 'sub', 'ior_stripe_count': 2, 'ior_stripe_size_kib': 1024, 'ior_partition': 'p',
        'ior_account': 'a', 'ior_nodes': [1, 2], 'ior_client_memory_mib': 0, 'ansible_memtotal_mb': 4096,
        'ior_iterations': 3,
        'mdtest_items_per_dir': 10, 'mdtest_stripe_count': 1, 'mdtest_mdt_count': 2, 'mdtest_mdt_index': 0,
        'mdtest_hosts': ['a', 'b'], 'mdtest_directory': 'm', 'mdtest_nodes': [1], 'mdtest_partition': 'q',
    },
    'memory': {'ior_client_memory_mib': 2048, 'ansible_memtotal_mb': 4096, 'ior_hosts': ['x'],
               'mdtest_client_group': 'none'},
}

RUN = {'run_id': 'run-1', 'launch_id': 'launch-1'}


def role_variables(survey, scenario):
    """The role's defaults (templates, as Ansible loads them), then the host's and the scenario's variables."""
    path = os.path.join(ROLES, survey, 'defaults', 'main.yml')
    try:
        loaded = DataLoader().load_from_file(path, trusted_as_template=True)
    except TypeError:  # before ansible-core 2.19 every loaded string may be templated
        loaded = DataLoader().load_from_file(path)
    variables = dict(loaded)
    variables.update(HOST)
    variables.update(SCENARIOS[scenario])
    return variables


@pytest.fixture
def started(action_for, node, monkeypatch):
    """``started(survey, variables, **args)``: (module name, arguments) the action ran on the node, and its result."""
    def execute(module_name, module_args, check_mode=False):
        node.calls.append((module_name, dict(module_args)))
        return {'ansible_job_id': 'j1.1', 'results_file': '/root/.ansible_async/j1.1', 'started': 1}
    monkeypatch.setattr(node, 'execute', execute)

    def start(survey, variables, **args):
        result = action_for('survey_start', dict(RUN, survey=survey, **args), task_vars=variables).run(
            task_vars=variables)
        return node.calls[-1], result
    return start


@pytest.mark.parametrize('scenario', sorted(SCENARIOS))
@pytest.mark.parametrize('survey', survey_catalog.MEASURING)
def test_the_module_gets_what_the_roles_module_task_gave_it(started, survey, scenario):
    with open(EXPECTED) as handle:
        expected = json.load(handle)[scenario][survey]
    expected['force_rerun'] = scenario == 'given'  # survey_common's, not a role variable
    (module_name, args), result = started(survey, role_variables(survey, scenario), force_rerun=scenario == 'given')
    assert module_name == 'lustre.iokit.' + survey_catalog.CATALOG[survey].module
    assert json.loads(json.dumps(args)) == expected
    assert result['results_file'] == '/root/.ansible_async/j1.1'


def test_a_deprecated_variable_wins_while_it_is_set(started):
    variables = dict(role_variables('mdtest', 'defaults'), mdtest_iterations=None, mdtest_repetitions=5)
    assert started('mdtest', variables)[0][1]['repetitions'] == 5
    variables['mdtest_iterations'] = 2
    assert started('mdtest', variables)[0][1]['repetitions'] == 2


def test_an_empty_hostfile_group_falls_back_to_no_hosts_and_a_launcher_outside_it_is_not_added(started):
    variables = dict(role_variables('ior', 'defaults'), inventory_hostname='login1')
    assert started('ior', variables)[0][1]['hosts'] == ['c1-ib', 'client2', 'client3']


def test_a_survey_without_a_module_call_is_refused(action_fails):
    assert 'stats_collect' not in survey_catalog.MEASURING
    message = action_fails('survey_start', dict(RUN, survey='stats_collect'))
    assert 'stats_collect' in message


@pytest.mark.parametrize('async_s', [0, 3900])
def test_the_module_runs_under_the_tasks_async_and_only_a_synchronous_run_removes_its_tmp(action_for, async_s):
    action = action_for('survey_start', dict(RUN, survey='ost'), task_vars=role_variables('ost', 'defaults'))
    action._task.async_val = async_s  # pylint: disable=protected-access
    calls = []
    action._execute_module = lambda **kwargs: calls.append(('execute', kwargs['wrap_async'])) or {}
    action._remove_tmp_path = lambda path: calls.append(('remove', path))
    action.run(task_vars=role_variables('ost', 'defaults'))
    assert calls == [('execute', async_s)] + ([] if async_s else [('remove', None)])


@pytest.mark.parametrize('async_s', [0, 3900])
def test_started_together_each_launch_waits_on_a_file_of_its_own_in_the_run_directory(action_for, async_s):
    """start_together: the module waits for its start_signal, which the action returns for the next task to make;
    a synchronous run (check mode) has nothing to wait for."""
    variables = dict(role_variables('obdfilter', 'defaults'), iokit_workdir='/var/tmp/iokit')
    signals, results = [], []
    for _launch in range(2):
        action = action_for('survey_start', dict(RUN, survey='obdfilter', start_together=True), task_vars=variables)
        action._task.async_val = async_s  # pylint: disable=protected-access
        action._execute_module = lambda **kwargs: signals.append(kwargs['module_args'].get('start_signal')) or {}
        action._remove_tmp_path = lambda path: None
        results.append(action.run(task_vars=variables))
    if not async_s:
        assert signals == [None, None] and all('start_signal' not in result for result in results)
        return
    assert [result['start_signal'] for result in results] == signals
    assert len(set(signals)) == 2
    for signal in signals:
        assert os.path.dirname(signal) == '/var/tmp/iokit/%s' % RUN['run_id']
        assert os.path.basename(signal).startswith('obdfilter.start-')
