# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The client-launch layer that IOR and mdtest share: launcher command lines, the module shell, the counts and
launch options checked by name, the marker."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import client_launch


def test_mpirun_gets_a_hostfile_with_slots_and_the_task_count():
    assert client_launch.mpirun_argv('mpirun', '/w/hf', 6, ['mdtest', '-n', '1'], True, ['--mca', 'btl', 'self']) == [
        'mpirun', '--hostfile', '/w/hf', '-np', '6', '--allow-run-as-root', '--mca', 'btl', 'self',
        'mdtest', '-n', '1']
    assert client_launch.hostfile_text(['c1', 'c2'], 4) == 'c1 slots=4\nc2 slots=4\n'


def test_srun_gets_nodes_tasks_and_the_slurm_settings():
    assert client_launch.srun_argv('srun', 2, 4, ['ior'], partition='batch', account='a1') == [
        'srun', '-N', '2', '-n', '8', '--ntasks-per-node', '4', '-p', 'batch', '-A', 'a1', 'ior']
    assert client_launch.srun_argv('srun', 1, 1, ['mdtest'], extra_args=['--mpi=pmix']) == [
        'srun', '-N', '1', '-n', '1', '--ntasks-per-node', '1', '--mpi=pmix', 'mdtest']


def test_modules_are_loaded_in_the_shell_that_execs_the_launcher():
    assert client_launch.with_modules(['srun', 'ior', '-o', "it's"], ['gcc', 'openmpi']) == [
        '/bin/bash', '-l', '-c', "module load gcc openmpi && exec srun ior -o 'it'\"'\"'s'"]
    assert client_launch.with_modules(['mpirun', 'mdtest'], ['gcc/12.2'], ('/bin/sh', '-c')) == [
        '/bin/sh', '-c', 'module load gcc/12.2 && exec mpirun mdtest']
    assert client_launch.with_modules(['mpirun', 'ior'], []) == ['mpirun', 'ior']


def test_default_node_counts():
    assert client_launch.default_node_counts(1) == [1]
    assert client_launch.default_node_counts(4) == [1, 2, 4]
    assert client_launch.default_node_counts(6) == [1, 2, 4, 6]


def _opts(**change):
    opts = dict(client_launch.LAUNCH_DEFAULTS, tasks_per_node=[1], nodes=None, iterations=1, stripe_count=None)
    opts.update(change)
    return opts


@pytest.mark.parametrize('change, hosts, message', [
    ({'launcher': 'pbs'}, 1, "launcher: must be mpirun or srun, got 'pbs'"),
    ({'partition': 'batch'}, 1, 'partition, account: Slurm settings need launcher srun'),
    ({'environment_modules': ['gcc', 'openmpi; rm -rf /', '', 'a b', 'gcc\n']}, 1,
     "environment_modules: module names are single words of letters, digits and ._+/@:,=~%-, got "
     "'openmpi; rm -rf /', '', 'a b', 'gcc\\n'"),
    ({'tasks_per_node': [2, 1]}, 1, 'tasks_per_node: give the counts in increasing order'),
    ({'nodes': [1, 3]}, 2, 'nodes: 3 nodes asked but hosts lists only 2'),
    ({}, 0, 'hosts: give at least one client host name'),
    ({'iterations': 0}, 1, 'iterations: must be at least 1'),
    ({'stripe_count': 0}, 1, 'stripe_count: must be -1'),
])
def test_launch_options_are_named(change, hosts, message):
    problems = client_launch.launch_option_problems(_opts(**change), hosts)
    assert any(problem.startswith(message) for problem in problems), problems


def test_good_launch_options_have_no_problem():
    assert client_launch.launch_option_problems(_opts(launcher='srun', partition='batch', account='p1',
                                                      environment_modules=['gcc/12.2.0', 'intel-oneapi-mpi/2021.9',
                                                                           'hdf5/1.14+mpi']), 1) == []


def test_the_marker_names_the_run(tmp_path):
    assert client_launch.read_marker(str(tmp_path), '.marker') is None
    (tmp_path / '.marker').write_text('run-7\n')
    assert client_launch.read_marker(str(tmp_path), '.marker') == 'run-7'


def test_the_module_refuses_root_without_allow_run_as_root_only_with_mpirun():
    params = {'directory': None, 'launcher': 'mpirun', 'allow_run_as_root': False, 'timeout': None, 'run_id': None}
    assert [problem.split(':')[0] for problem in client_launch.module_option_problems(params, euid=0)] == [
        'allow_run_as_root']
    assert client_launch.module_option_problems(dict(params, launcher='srun'), euid=0) == []
    assert client_launch.module_option_problems(dict(params, directory='../x'), ['nodes: x'], euid=1000) == [
        'nodes: x', 'directory: give a path relative to mount_point without "..", got ../x']
