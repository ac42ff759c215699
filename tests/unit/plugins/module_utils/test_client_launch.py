# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The client-launch layer that IOR and mdtest share: launcher command lines, the module shell, the counts and
launch options checked by name, the marker."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import client_launch, launch_commands
from ansible_collections.lustre.iokit.plugins.module_utils.engines.contract import EngineContext
from ansible_collections.lustre.iokit.plugins.module_utils.option_problem import OptionProblem
from ansible_collections.lustre.iokit.tests.unit.fakes import FakeNode


def test_mpirun_gets_a_hostfile_with_slots_and_the_task_count():
    assert launch_commands.mpirun_argv('mpirun', '/w/hf', 6, ['mdtest', '-n', '1'], True, ['--mca', 'btl', 'self']) == [
        'mpirun', '--hostfile', '/w/hf', '-np', '6', '--allow-run-as-root', '--mca', 'btl', 'self',
        'mdtest', '-n', '1']
    assert launch_commands.hostfile_text(['c1', 'c2'], 4) == 'c1 slots=4\nc2 slots=4\n'


def test_srun_gets_nodes_tasks_and_the_slurm_settings():
    assert launch_commands.srun_argv('srun', 2, 4, ['ior'], partition='batch', account='a1') == [
        'srun', '-N', '2', '-n', '8', '--ntasks-per-node', '4', '-p', 'batch', '-A', 'a1', 'ior']
    assert launch_commands.srun_argv('srun', 1, 1, ['mdtest'], extra_args=['--mpi=pmix']) == [
        'srun', '-N', '1', '-n', '1', '--ntasks-per-node', '1', '--mpi=pmix', 'mdtest']


def test_modules_are_loaded_in_the_shell_that_execs_the_launcher():
    assert launch_commands.with_modules(['srun', 'ior', '-o', "it's"], ['gcc', 'openmpi']) == [
        '/bin/bash', '-l', '-c', "module load gcc openmpi && exec srun ior -o 'it'\"'\"'s'"]
    assert launch_commands.with_modules(['mpirun', 'mdtest'], ['gcc/12.2'], ('/bin/sh', '-c')) == [
        '/bin/sh', '-c', 'module load gcc/12.2 && exec mpirun mdtest']
    assert launch_commands.with_modules(['mpirun', 'ior'], []) == ['mpirun', 'ior']


def test_default_node_counts():
    assert launch_commands.default_node_counts(1) == [1]
    assert launch_commands.default_node_counts(4) == [1, 2, 4]
    assert launch_commands.default_node_counts(6) == [1, 2, 4, 6]


def _opts(**change):
    opts = dict(client_launch.LAUNCH_DEFAULTS, tasks_per_node=[1], nodes=None, repetitions=1, stripe_count=None)
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
    ({'repetitions': 0}, 1, 'repetitions: must be at least 1'),
    ({'stripe_count': 0}, 1, 'stripe_count: must be -1'),
])
def test_launch_options_are_named(change, hosts, message):
    problems = client_launch.launch_option_problems(_opts(**change), hosts)
    assert any(str(problem).startswith(message) for problem in problems), problems


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
    assert [problem.options for problem in client_launch.run_as_root_problems(params, euid=0)] == [
        ('allow_run_as_root',)]
    assert client_launch.run_as_root_problems(dict(params, allow_run_as_root=True), euid=0) == []
    assert client_launch.run_as_root_problems(dict(params, launcher='srun'), euid=0) == []
    assert client_launch.run_as_root_problems(params, euid=1000) == []


def test_the_launch_options_problems_follow_the_engines():
    params = {'directory': '../x', 'launcher': 'mpirun', 'allow_run_as_root': False, 'timeout': None, 'run_id': None}
    problems = client_launch.module_option_problems(params, [OptionProblem('nodes', 'x')])
    assert [str(problem) for problem in problems] == [
        'nodes: x', 'directory: give a path relative to mount_point without "..", got ../x']


# --------------------------------------------------------------------------
# Slurm allocations made by the survey: salloc, sbatch --wait, scancel


def test_salloc_and_sbatch_allocate_the_points_nodes_with_partition_and_account():
    assert launch_commands.salloc_argv('salloc', 2, 4, 'job-1', ['srun', 'ior'], 'batch', 'a1') == [
        'salloc', '-N', '2', '--ntasks-per-node', '4', '-J', 'job-1', '-p', 'batch', '-A', 'a1', 'srun', 'ior']
    assert launch_commands.sbatch_argv('sbatch', 1, 2, 'job-2', '/l/t/job-2.out', '/w/job-2.sh') == [
        'sbatch', '--wait', '--parsable', '-N', '1', '--ntasks-per-node', '2', '-J', 'job-2', '-o', '/l/t/job-2.out',
        '/w/job-2.sh']


def test_the_job_script_execs_the_command_quoted():
    text = launch_commands.job_script_text(['/bin/sh', '-c', "module load gcc && exec srun ior -o 'a b'"])
    assert text.splitlines()[0] == '#!/bin/sh'
    assert text.splitlines()[-1] == "exec /bin/sh -c 'module load gcc && exec srun ior -o '\"'\"'a b'\"'\"''"


def test_the_job_id_is_read_from_what_sbatch_and_salloc_print():
    assert launch_commands.parse_job_id('4242\n', '', 'sbatch') == '4242'
    assert launch_commands.parse_job_id('4243;cluster1\n', '', 'sbatch') == '4243'
    assert launch_commands.parse_job_id('', 'salloc: Granted job allocation 77\n', 'salloc') == '77'
    assert launch_commands.parse_job_id('', 'salloc: Pending job allocation 78\n', 'salloc') == '78'
    assert launch_commands.parse_job_id('IOR output 12\n', 'error\n', 'salloc') is None


def test_scancel_by_id_else_by_name_and_user():
    assert launch_commands.scancel_argv('scancel', '42', 'job-1', 'alice') == ['scancel', '42']
    assert launch_commands.scancel_argv('scancel', None, 'job-1', 'alice') == [
        'scancel', '--name', 'job-1', '--user', 'alice']


@pytest.mark.parametrize('change, message', [
    ({'slurm_allocation': 'pbs', 'launcher': 'srun'}, "slurm_allocation: must be existing, salloc or sbatch, got 'pbs'"),
    ({'slurm_allocation': 'sbatch'}, 'slurm_allocation: sbatch makes a Slurm allocation for srun; it needs launcher '
                                     'srun, got mpirun'),
])
def test_allocation_problems_are_named(change, message):
    assert message in [str(problem) for problem in client_launch.launch_option_problems(_opts(**change), 1)]


class FakeRunner(FakeNode):
    """Answers each command with the next result (a function of the argv may act, as a job writing its output)."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.argvs = []
        self.stop_reason = None

    def run(self, argv):
        self.argvs.append(list(argv))
        answer = self.answers.pop(0)
        return answer(argv) if callable(answer) else answer


class Survey(client_launch.ClientTreeSurvey):
    """The launch layer alone: these tests never plan or run a sweep, which the engine contract still requires."""
    SURVEY = 'ior'
    MARKER = '.marker'
    TREE_PREFIX = 'ior_'

    def point_key(self, point):
        return point

    def plan(self):
        raise AssertionError('the launch tests never plan')

    def run(self):
        raise AssertionError('the launch tests never run a sweep')


def _survey(tmp_path, runner, control, **options):
    from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState

    options = dict(dict(client_launch.LAUNCH_DEFAULTS, tasks_per_node=[1], nodes=None, repetitions=1,
                        stripe_count=None), **options)
    mount = tmp_path / 'mnt'
    mount.mkdir()
    context = EngineContext(runner, control, NodeState(str(tmp_path / 'work')), 'r1')
    survey = Survey(context, str(mount), ['c1', 'c2'], options,
                    workdir=str(tmp_path / 'work'), shell=('/bin/sh', '-c'), srun='/s/srun', salloc='/s/salloc',
                    sbatch='/s/sbatch', scancel='/s/scancel')
    survey.setup()
    return survey


def _result(argv, rc=0, stdout='', stderr='', timed_out=False):
    from ansible_collections.lustre.iokit.plugins.module_utils.runner import CommandResult

    return CommandResult(argv, rc, stdout, stderr, 0.1, timed_out)


def test_salloc_wraps_the_module_shell_and_srun_and_the_job_is_crossed_off(tmp_path):
    runner = FakeRunner(lambda argv: _result(argv, stdout='IOR says\n', stderr='salloc: Granted job allocation 7\n'))
    survey = _survey(tmp_path, runner, FakeRunner(), launcher='srun', slurm_allocation='salloc', partition='batch',
                     account='a1', environment_modules=['gcc', 'ior'])
    result = survey.launch('p1', 2, 3, ['ior', '-w'])
    assert runner.argvs == [[
        '/s/salloc', '-N', '2', '--ntasks-per-node', '3', '-J', 'lustre-iokit-ior-r1-1', '-p', 'batch', '-A', 'a1',
        '/bin/sh', '-c', 'module load gcc ior && exec /s/srun -N 2 -n 6 --ntasks-per-node 3 ior -w']]
    assert result.stdout == 'IOR says\n' and survey.errors == []
    assert survey.node_state.entries('slurm_jobs') == []
    assert survey.plan_common()['slurm_allocation'] == 'salloc'


def test_sbatch_runs_a_script_whose_output_file_becomes_the_result_and_is_removed(tmp_path):
    seen = {}

    def job(argv):
        script, output = argv[-1], argv[argv.index('-o') + 1]
        with open(script) as handle:
            seen['script'] = handle.read()
        seen['entries'] = survey.node_state.entries('slurm_jobs')
        with open(output, 'w') as handle:
            handle.write('Max Write: 1.0 MiB/sec\n')
        return _result(argv, stdout='55\n')

    runner = FakeRunner(job)
    survey = _survey(tmp_path, runner, FakeRunner(), launcher='srun', slurm_allocation='sbatch')
    result = survey.launch('p1', 1, 2, ['ior'])
    name = 'lustre-iokit-ior-r1-1'
    output = str(tmp_path / 'mnt' / 'ior_r1' / (name + '.out'))
    assert runner.argvs[0][:-1] == ['/s/sbatch', '--wait', '--parsable', '-N', '1', '--ntasks-per-node', '2',
                                    '-J', name, '-o', output]
    assert seen['script'].endswith('exec /s/srun -N 1 -n 2 --ntasks-per-node 2 ior\n')
    # recorded before the submission: the name, the output file and how to cancel it
    [entry] = seen['entries']
    assert (entry['name'], entry['output'], entry['scancel'], entry['allocation']) == (
        name, output, '/s/scancel', 'sbatch')
    assert result.stdout == 'Max Write: 1.0 MiB/sec\n' and '55' in result.stderr
    assert not os.path.exists(output) and not os.path.exists(runner.argvs[0][-1])
    assert survey.node_state.entries('slurm_jobs') == []


def test_a_stopped_launch_cancels_its_job_by_the_printed_id(tmp_path):
    runner = FakeRunner(_result(['sbatch'], rc=-15, stdout='4242\n', timed_out=True))
    control = FakeRunner(_result(['scancel'], rc=0))
    survey = _survey(tmp_path, runner, control, launcher='srun', slurm_allocation='sbatch')
    runner.stop_reason = 'timeout'
    assert survey.launch('p1', 1, 1, ['ior']) is None
    assert control.argvs == [['/s/scancel', '4242']]
    assert survey.node_state.entries('slurm_jobs') == []
    assert survey.errors == [{'point': 'p1', 'message': 'ior interrupted: timeout'}]


def test_a_job_that_cannot_be_cancelled_stays_recorded_with_its_id_for_the_cleanup(tmp_path):
    runner = FakeRunner(_result(['salloc'], rc=-15, stderr='salloc: Granted job allocation 31\n', timed_out=True))
    control = FakeRunner(_result(['scancel'], rc=1, stderr='scancel: error: Slurm controller not responding'))
    survey = _survey(tmp_path, runner, control, launcher='srun', slurm_allocation='salloc')
    runner.stop_reason = 'terminated by signal 15'
    survey.launch('p1', 1, 1, ['ior'])
    [entry] = survey.node_state.entries('slurm_jobs')
    assert (entry['name'], entry['job_id']) == ('lustre-iokit-ior-r1-1', '31')
    assert 'cannot cancel Slurm job 31 (lustre-iokit-ior-r1-1)' in survey.errors[0]['message']

    from ansible_collections.lustre.iokit.plugins.module_utils.cleanup import Cleanup

    entry_scancel = FakeRunner(_result(['scancel'], rc=0))
    cleanup = Cleanup(entry_scancel, survey.node_state, include_iokit_leftovers=False, unload_modules=False,
                      scancel_path='/usr/bin/scancel')
    report = cleanup.run()
    # the recorded /s/scancel does not exist here: the one found in PATH cancels by the recorded id
    assert entry_scancel.argvs[0] == ['/usr/bin/scancel', '31']
    assert [job['name'] for job in report['removed']['slurm_jobs']] == ['lustre-iokit-ior-r1-1']
    assert survey.node_state.entries('slurm_jobs') == []


def test_the_cleanup_cancels_by_name_and_removes_the_output_only_in_the_marked_tree(tmp_path):
    from ansible_collections.lustre.iokit.plugins.module_utils.cleanup import Cleanup

    survey = _survey(tmp_path, FakeRunner(), FakeRunner(), launcher='srun', slurm_allocation='sbatch')
    name, script, output = survey.job_files(1)
    for path in (script, output):
        with open(path, 'w') as handle:
            handle.write('x')
    survey.node_state.record('slurm_jobs', 'r1', name=name, survey='ior', allocation='sbatch', scancel='/s/scancel',
                             user='alice', output=output, script=script, tree=survey.tree, marker='.marker')
    runner = FakeRunner(_result(['scancel'], rc=0))
    report = Cleanup(runner, survey.node_state, include_iokit_leftovers=False, unload_modules=False,
                     scancel_path='/bin/scancel').run()
    assert runner.argvs[0] == ['/bin/scancel', '--name', name, '--user', 'alice']
    assert report['removed']['slurm_jobs'][0]['files'] == [output, script]
    assert not os.path.exists(output) and not os.path.exists(script)
