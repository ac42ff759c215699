# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The mdtest engine against a fake client: exact mpirun/srun/mdtest argument lists, sweep order, best tasks per
node, cache drops, environment modules, the marked tree removed after a failure or a timeout, and the cleanup of a
tree left by a kill; and one sweep through the simulator's srun and module shims."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shlex

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import client_launch, progress, results
from ansible_collections.lustre.iokit.plugins.module_utils.cleanup import Cleanup
from ansible_collections.lustre.iokit.plugins.module_utils.engines import mdtest
from ansible_collections.lustre.iokit.plugins.module_utils.engines.contract import EngineContext
from ansible_collections.lustre.iokit.plugins.module_utils.engines.errors import EngineError
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState
from ansible_collections.lustre.iokit.plugins.module_utils.progress import progress_path, read_progress
from ansible_collections.lustre.iokit.plugins.module_utils.runner import CommandResult, Runner
from ansible_collections.lustre.iokit.tests.unit.fakes import FakeClock, Killed, client_survey_progress, killed_after

RUN = 'run-1'
# the module shell of these tests (a login shell would reset PATH and lose the simulator's shims)
SHELL = ('/bin/sh', '-c')
# file creation rate of a point as the fake mdtest reports it: best at 2 tasks per node
CREATE_RATES = {(1, 1): 1000.0, (1, 2): 1800.0, (1, 4): 1800.0, (2, 2): 3500.0, (3, 2): 5000.0}

SUMMARY_33 = '''-- started at 11/23/2026 10:00:00 --

mdtest-3.3.0 was launched with {tasks} total task(s) on {nodes} node(s)
Command line used: mdtest
Path: {path}
FS: 1.0 GiB   Used FS: 1.0%   Inodes: 1.0 Mi   Used Inodes: 0.1%

Nodemap: 1
{tasks} tasks, {items} files/directories

SUMMARY rate: (of {iterations} iterations)
   Operation                      Max            Min           Mean        Std Dev
   ---------                      ---            ---           ----        -------
   Directory creation        :        900.000        700.000        800.000         50.000
   File creation             :   {create:12.3f}   {create:12.3f}   {create:12.3f}          0.000
   File stat                 :      20000.000      10000.000      15000.000       1000.000
   Tree creation             :        100.000        100.000        100.000          0.000
-- finished at 11/23/2026 10:00:01 --
'''


class FakeRunner:
    """Plays the client: lfs getname for the mount, mpirun hostfile or srun placement, a module shell, mdtest's
    summary. ``calls`` has every command as given; ``launches`` the launcher commands with the modules loaded first."""

    def __init__(self, mount, fail_points=(), hang_points=(), getname_rc=0, rates=None):
        self.mount = mount
        self.rates = CREATE_RATES if rates is None else rates
        self.calls = []
        self.stop_reason = None
        self.fail_points = set(fail_points)
        self.hang_points = set(hang_points)
        self.getname_rc = getname_rc
        self.tree_seen = []
        self.launches = []

    def expired(self):
        return self.stop_reason is not None

    def run(self, argv, env=None, cwd=None):
        self.calls.append(list(argv))
        if argv[:2] == ['lfs', 'getname']:
            if self.getname_rc:
                return CommandResult(argv, 25, '', "'%s' is not on a Lustre filesystem\n" % argv[2], 0.0)
            return CommandResult(argv, 0, 'testfs-ffff0000aaaa1111 %s\n' % self.mount, '', 0.0)
        if argv[:2] in (['lfs', 'mkdir'], ['lfs', 'setstripe']):
            if argv[1] == 'mkdir':
                os.mkdir(argv[-1])
            return CommandResult(argv, 0, '', '', 0.0)
        if argv[0] == 'lctl':
            return CommandResult(argv, 0, '2.15.5\n', '', 0.0)
        modules = []
        if argv[0] == '/bin/sh' and argv[1] == '-c':
            # the module shell: "module load a b && exec <launcher ...>"
            words = shlex.split(argv[2])
            assert words[:2] == ['module', 'load'] and words[words.index('&&') + 1] == 'exec', argv
            modules = words[2:words.index('&&')]
            argv = words[words.index('&&') + 2:]
        if argv[0] in ('mpirun', 'srun'):
            self.launches.append((modules, list(argv)))
            return self._mpirun(argv) if argv[0] == 'mpirun' else self._srun(argv)
        raise AssertionError('unexpected command %r' % (argv,))

    def _mpirun(self, argv):
        hostfile = argv[argv.index('--hostfile') + 1]
        with open(hostfile) as handle:
            lines = handle.read().splitlines()
        tasks = int(argv[argv.index('-np') + 1])
        nodes = len(lines)
        slots = int(lines[0].split('slots=')[1])
        assert tasks == nodes * slots
        program = argv[argv.index('-np') + 2:]
        if '--allow-run-as-root' in program:
            program = program[1:]
        return self._program(argv, program, nodes, slots)

    def _srun(self, argv):
        nodes = int(argv[argv.index('-N') + 1])
        tasks = int(argv[argv.index('-n') + 1])
        slots = int(argv[argv.index('--ntasks-per-node') + 1])
        assert tasks == nodes * slots
        position = argv.index('--ntasks-per-node') + 2
        while argv[position] in ('-p', '-A'):
            position += 2
        return self._program(argv, argv[position:], nodes, slots)

    def _program(self, argv, program, nodes, slots):
        tasks = nodes * slots
        if program[0] != 'mdtest':
            return CommandResult(argv, 0, '', '', 0.0)
        directory = program[program.index('-d') + 1]
        self.tree_seen.append(os.path.dirname(directory))
        point = (nodes, slots)
        if point in self.hang_points:
            self.stop_reason = 'timeout'
            return CommandResult(argv, -15, '-- started at --\n', '', 1.0, timed_out=True)
        if point in self.fail_points:
            return CommandResult(argv, 1, '', 'mdtest: Process 0: FAILED in create_remove_items_helper\n', 0.1)
        iterations = program[program.index('-i') + 1]
        return CommandResult(argv, 0, SUMMARY_33.format(tasks=tasks, nodes=nodes, path=directory, items=tasks * 10,
                                                        iterations=iterations, create=self.rates[point]), '', 0.5)


@pytest.fixture
def mount(tmp_path):
    path = tmp_path / 'mnt'
    path.mkdir()
    return str(path)


def survey_for(mount, tmp_path, runner=None, hosts=('c1', 'c2', 'c3'), make_context=EngineContext, **options):
    runner = runner or FakeRunner(mount)
    options.setdefault('items', 10)
    options.setdefault('tasks_per_node', [1, 2, 4])
    node_state = NodeState(str(tmp_path / 'work'))
    survey = mdtest.MdtestSurvey(make_context(runner, runner, node_state, RUN, None), mount, list(hosts), options,
                                 workdir=str(tmp_path / 'work'), allow_run_as_root=True, shell=SHELL)
    return survey, runner, node_state


def mpirun_calls(runner):
    return [argv for modules, argv in runner.launches if argv[0] == 'mpirun']


def test_mdtest_argv_with_every_option():
    opts = mdtest.with_defaults({'items': 50, 'depth': 2, 'branching': 3, 'unique_dir_per_task': True,
                                 'files_only': True, 'leaf_only': True, 'write_bytes': 4096, 'read_bytes': 4096,
                                 'stride': 4, 'repetitions': 5, 'stonewall_s': 0, 'phases': ['create', 'stat']})
    assert mdtest.mdtest_argv(opts, '/mnt/t/p') == [
        'mdtest', '-n', '50', '-z', '2', '-b', '3', '-u', '-F', '-L', '-w', '4096', '-e', '4096', '-N', '4',
        '-i', '5', '-C', '-T', '-d', '/mnt/t/p']
    opts = mdtest.with_defaults({'items_per_dir': 8, 'unique_dir_per_task': False, 'dirs_only': True,
                                 'stonewall_s': 30, 'repetitions': 1})
    # every phase: no phase flag at all, as mdtest runs them by default
    assert mdtest.mdtest_argv(opts, '/d', mdtest='/usr/bin/mdtest') == [
        '/usr/bin/mdtest', '-I', '8', '-z', '0', '-b', '1', '-D', '-W', '30', '-i', '1', '-d', '/d']
    assert mdtest.mdtest_argv(opts, '/d', phase='read', repetitions=1)[-3:] == ['-E', '-d', '/d']


@pytest.mark.parametrize('options, hosts, message', [
    ({'items': 10, 'items_per_dir': 5}, 1, 'items, items_per_dir: give one of them'),
    ({'items': 0}, 1, 'items: must be at least 1'),
    ({'files_only': True, 'dirs_only': True}, 1, 'files_only, dirs_only'),
    ({'dirs_only': True, 'write_bytes': 10, 'best_by': 'directory creation'}, 1, 'write_bytes, read_bytes'),
    ({'write_bytes': 10, 'read_bytes': 20}, 1, 'read_bytes: cannot read 20 bytes'),
    ({'stonewall_s': 10, 'branching': 2}, 1, 'stonewall_s: mdtest -W works only with a branching factor of 1'),
    ({'phases': ['stat']}, 1, 'phases: every point starts from an empty directory'),
    ({'phases': ['create', 'rename']}, 1, 'phases: unknown rename'),
    ({'tasks_per_node': [4, 2]}, 1, 'tasks_per_node: give the counts in increasing order'),
    ({'tasks_per_node': [0, 1]}, 1, 'tasks_per_node: every count must be an integer of at least 1'),
    ({'nodes': [1, 2, 4]}, 2, 'nodes: 4 nodes asked but hosts lists only 2'),
    ({}, 0, 'hosts: give at least one client host name'),
    ({'launcher': 'pbs'}, 1, 'launcher: must be mpirun or srun'),
    ({'account': 'proj1'}, 1, 'partition, account: Slurm settings need launcher srun'),
    ({'environment_modules': ['openmpi mdtest']}, 1, 'environment_modules: module names are single words'),
    ({'best_by': 'file creation', 'dirs_only': True}, 1, 'best_by: file creation is not measured with dirs_only'),
    ({'best_by': 'file rename'}, 1, "best_by: unknown operation 'file rename'"),
    ({'stripe_count': 0}, 1, 'stripe_count: must be -1'),
    ({'mdt_count': -2}, 1, 'mdt_count: must be -1'),
    ({'mdt_index': -1}, 1, 'mdt_index: must be 0 or more'),
    ({'repetitions': 0}, 1, 'repetitions: must be at least 1'),
    ({'drop_caches': True, 'drop_caches_command': []}, 1, 'drop_caches_command: give the command'),
])
def test_bad_options_are_named(options, hosts, message):
    problems = mdtest.option_problems(options, hosts)
    assert any(str(problem).startswith(message) for problem in problems), problems


def test_good_options_have_no_problem():
    assert mdtest.option_problems({'items': 100, 'files_only': True, 'write_bytes': 4096, 'read_bytes': 4096,
                                   'nodes': [1, 2], 'stonewall_s': 5}, 2) == []


def test_sweep_order_tasks_first_then_nodes_at_the_best_tasks_per_node(mount, tmp_path):
    survey, runner, unused = survey_for(mount, tmp_path)
    survey.inspect()
    survey.setup()
    records = list(survey.run())
    problems = survey.teardown()
    assert problems == [] and survey.errors == [] and survey.aborted is None
    launches = mpirun_calls(runner)
    tree = os.path.join(mount, 'mdtest_' + RUN)
    work = str(tmp_path / 'work' / RUN)
    assert launches[0] == ['mpirun', '--hostfile', os.path.join(work, 'hostfile-1x1'), '-np', '1',
                           '--allow-run-as-root', 'mdtest', '-n', '10', '-z', '0', '-b', '1', '-u', '-i', '3',
                           '-d', os.path.join(tree, 'nodes1-ppn1')]
    assert [(argv[argv.index('-np') + 1], argv[-1]) for argv in launches] == [
        ('1', os.path.join(tree, 'nodes1-ppn1')), ('2', os.path.join(tree, 'nodes1-ppn2')),
        ('4', os.path.join(tree, 'nodes1-ppn4')),
        # 1 node at 2 tasks is the best point of the first step: not run again
        ('4', os.path.join(tree, 'nodes2-ppn2')), ('6', os.path.join(tree, 'nodes3-ppn2'))]
    # 2 and 4 tasks tie on file creation: the fewer tasks win
    assert [(r['step'], r['nodes'], r['tasks_per_node'], r['tasks'], r['best_tasks_per_node']) for r in records] == [
        ('tasks_per_node', 1, 1, 1, False), ('tasks_per_node', 1, 2, 2, True), ('tasks_per_node', 1, 4, 4, False),
        ('nodes', 2, 2, 4, False), ('nodes', 3, 2, 6, False)]
    assert records[3]['hosts'] == ['c1', 'c2'] and records[4]['mdtest_nodes'] == 3
    assert records[4]['summary']['file creation']['mean'] == 5000.0 and records[0]['iterations'] == 3
    assert records[0]['unit'] == 'ops/sec' and records[0]['version'] == '3.3.0'
    # the tree and the hostfiles are gone, the node state is empty again
    assert not os.path.exists(tree) and os.listdir(work) == []
    assert NodeState(str(tmp_path / 'work')).entries('paths') == []


def test_the_tree_is_marked_and_recorded_before_mdtest_runs(mount, tmp_path):
    survey, runner, node_state = survey_for(mount, tmp_path)
    survey.inspect()
    survey.setup()
    tree = os.path.join(mount, 'mdtest_' + RUN)
    assert client_launch.read_marker(tree, mdtest.MARKER) == RUN
    assert [(e['path'], e['survey'], e['mount_point'], e['marker']) for e in node_state.entries('paths')] == [
        (tree, 'mdtest', mount, mdtest.MARKER)]
    survey.teardown()


def test_a_failing_point_is_an_error_and_the_sweep_goes_on(mount, tmp_path):
    runner = FakeRunner(mount, fail_points=[(1, 4)])
    survey, runner, unused = survey_for(mount, tmp_path, runner=runner)
    survey.inspect()
    survey.setup()
    records = list(survey.run())
    survey.teardown()
    assert [(r['nodes'], r['tasks_per_node']) for r in records] == [(1, 1), (1, 2), (2, 2), (3, 2)]
    assert survey.errors[0]['point'] == {'nodes': 1, 'tasks_per_node': 4}
    assert 'mpirun mdtest failed (rc 1)' in survey.errors[0]['message']
    assert not os.path.exists(os.path.join(mount, 'mdtest_' + RUN))


def test_a_timeout_stops_the_sweep_and_the_tree_is_still_removed(mount, tmp_path):
    runner = FakeRunner(mount, hang_points=[(1, 2)])
    survey, runner, unused = survey_for(mount, tmp_path, runner=runner)
    survey.inspect()
    survey.setup()
    records = list(survey.run())
    assert survey.teardown() == []
    assert [r['tasks_per_node'] for r in records] == [1]
    assert survey.aborted == 'timeout'
    assert survey.errors == [{'point': {'nodes': 1, 'tasks_per_node': 2}, 'message': 'mdtest interrupted: timeout'}]
    assert len(mpirun_calls(runner)) == 2
    assert not os.path.exists(os.path.join(mount, 'mdtest_' + RUN))


def test_nothing_measured_by_best_by_skips_the_nodes_step(mount, tmp_path):
    runner = FakeRunner(mount, fail_points=[(1, 1), (1, 2)])
    survey, runner, unused = survey_for(mount, tmp_path, runner=runner, tasks_per_node=[1, 2])
    survey.inspect()
    survey.setup()
    assert list(survey.run()) == []
    survey.teardown()
    assert survey.errors[-1]['message'] == 'no tasks-per-node point measured file creation; the nodes step did not run'
    assert len(mpirun_calls(runner)) == 2


def test_layout_commands_for_mdts_and_stripes(mount, tmp_path):
    survey, runner, unused = survey_for(mount, tmp_path, hosts=['c1'], tasks_per_node=[1], mdt_count=2,
                                        mdt_index=1, stripe_count=-1)
    survey.inspect()
    survey.setup()
    list(survey.run())
    survey.teardown()
    point = os.path.join(mount, 'mdtest_' + RUN, 'nodes1-ppn1')
    layout = [argv for argv in runner.calls if argv[0] == 'lfs' and argv[1] != 'getname']
    assert layout == [['lfs', 'mkdir', '-c', '2', '-i', '1', point], ['lfs', 'setstripe', '-c', '-1', point]]


def test_drop_caches_runs_each_phase_alone_with_a_drop_before_all_but_create(mount, tmp_path):
    survey, runner, unused = survey_for(mount, tmp_path, hosts=['c1', 'c2'], tasks_per_node=[2], nodes=[1, 2],
                                        repetitions=2, drop_caches=True, drop_caches_command=['dropper', '-x'],
                                        phases=['create', 'stat', 'remove'])
    survey.inspect()
    survey.setup()
    records = list(survey.run())
    survey.teardown()
    programs = []
    for argv in mpirun_calls(runner):
        program = argv[argv.index('--allow-run-as-root') + 1:]
        nodes = argv[argv.index('-np') + 1]
        programs.append('drop %s' % nodes if program[0] == 'dropper' else '%s %s %s' % (
            program[program.index('-i') + 1], program[-3], os.path.basename(program[-1])))
    one_point = ['1 -C iteration0', 'drop %s', '1 -T iteration0', 'drop %s', '1 -r iteration0',
                 '1 -C iteration1', 'drop %s', '1 -T iteration1', 'drop %s', '1 -r iteration1']
    assert programs == [step.replace('%s', '1') for step in one_point] + [step.replace('%s', '2') for step in one_point]
    assert [r['caches_dropped'] for r in records] == [True, True]
    # statistics over the two iterations, computed here: both equal, so no spread
    assert records[0]['summary']['file creation'] == {'max': 1800.0, 'min': 1800.0, 'mean': 1800.0, 'stddev': 0.0}
    assert records[0]['iterations'] == 2
    # a phase's zero rows of other phases are not mixed in: stat comes from the -T runs only
    assert records[0]['summary']['file stat']['mean'] == 15000.0


def test_iteration_statistics():
    assert mdtest.iteration_statistics([1.0, 3.0]) == {'max': 3.0, 'min': 1.0, 'mean': 2.0,
                                                       'stddev': pytest.approx(1.4142135)}
    assert mdtest.iteration_statistics([None]) == {'max': None, 'min': None, 'mean': None, 'stddev': None}


def test_a_mount_that_is_not_lustre_is_refused(mount, tmp_path):
    survey, runner, unused = survey_for(mount, tmp_path, runner=FakeRunner(mount, getname_rc=25))
    with pytest.raises(EngineError, match='mount_point: .* is not a Lustre client mount'):
        survey.inspect()


def test_a_tree_without_our_marker_is_refused_and_kept(mount, tmp_path):
    tree = os.path.join(mount, 'mdtest_' + RUN)
    os.mkdir(tree)
    with open(os.path.join(tree, 'user-file'), 'w') as handle:
        handle.write('keep')
    survey, runner, unused = survey_for(mount, tmp_path)
    with pytest.raises(EngineError, match='run_id: .* does not carry the marker'):
        survey.inspect()
    assert os.path.exists(os.path.join(tree, 'user-file'))


def test_a_parent_outside_the_mount_is_refused(mount, tmp_path):
    runner = FakeRunner(mount)
    context = EngineContext(runner, runner, NodeState(str(tmp_path / 'work')), RUN)
    survey = mdtest.MdtestSurvey(context, mount, ['c1'], {},
                                 parent='../elsewhere', workdir=str(tmp_path / 'work'))
    with pytest.raises(EngineError, match='directory: .* is not below mount_point'):
        survey.inspect()


def test_cleanup_removes_a_tree_left_by_a_killed_run_only_while_it_carries_the_marker(mount, tmp_path):
    survey, runner, node_state = survey_for(mount, tmp_path)
    survey.inspect()
    survey.setup()
    tree = os.path.join(mount, 'mdtest_' + RUN)
    os.makedirs(os.path.join(tree, 'nodes1-ppn1', 'test-dir.0-0'))
    # a second recorded tree whose marker was replaced: not provably ours any more
    other = os.path.join(mount, 'mdtest_other')
    os.mkdir(other)
    with open(os.path.join(other, mdtest.MARKER), 'w') as handle:
        handle.write('someone-else\n')
    node_state.record('paths', RUN, path=other, mount_point=mount, survey='mdtest', marker=mdtest.MARKER)
    # the module was killed: no teardown; the standalone cleanup runs instead
    report = Cleanup(runner, node_state, include_iokit_leftovers=False, unload_modules=False).run()
    assert [item['path'] for item in report['removed']['paths']] == [tree]
    assert not os.path.exists(tree) and os.path.exists(other)
    assert [item['id'] for item in report['kept']] == [other]
    # idempotent: the tree is gone and crossed off; the other one stays kept
    again = Cleanup(runner, node_state, include_iokit_leftovers=False, unload_modules=False).run()
    assert again['removed']['paths'] == [] and [item['id'] for item in again['kept']] == [other]
    assert [entry['path'] for entry in node_state.entries('paths')] == [other]


def test_srun_with_environment_modules_loads_them_first_and_places_every_point(mount, tmp_path):
    modules = ['gcc', 'openmpi', 'mdtest']
    survey, runner, unused = survey_for(mount, tmp_path, tasks_per_node=[1, 2], launcher='srun', partition='batch',
                                        account='proj1', environment_modules=modules)
    plan = survey.plan()
    assert (plan['launcher'], plan['environment_modules']) == ('srun', modules)
    assert plan['first_command'][:2] == ['/bin/sh', '-c'] and plan['first_command'][2].startswith(
        'module load gcc openmpi mdtest && exec srun -N 1 -n 1 --ntasks-per-node 1 -p batch -A proj1 mdtest -n 10 ')
    survey.inspect()
    survey.setup()
    records = list(survey.run())
    assert survey.teardown() == [] and survey.errors == []
    assert [(r['nodes'], r['tasks_per_node'], r['mdtest_nodes'], r['mdtest_tasks']) for r in records] == [
        (1, 1, 1, 1), (1, 2, 1, 2), (2, 2, 2, 4), (3, 2, 3, 6)]
    assert [(loaded, argv[:11]) for loaded, argv in runner.launches] == [
        (modules, ['srun', '-N', str(nodes), '-n', str(nodes * ppn), '--ntasks-per-node', str(ppn), '-p', 'batch',
                   '-A', 'proj1']) for nodes, ppn in ((1, 1), (1, 2), (2, 2), (3, 2))]
    # no hostfile with srun; the raw output names the whole command, module load first
    assert not [name for name in os.listdir(survey.run_dir) if name.startswith('hostfile')]
    assert survey.raw_text().startswith('# /bin/sh -c module load gcc openmpi mdtest && exec srun -N 1 ')
    assert not os.path.exists(os.path.join(mount, 'mdtest_' + RUN))


def test_drop_caches_go_through_srun_one_task_per_node(mount, tmp_path):
    survey, runner, unused = survey_for(mount, tmp_path, hosts=['c1', 'c2'], tasks_per_node=[2], nodes=[1, 2],
                                        repetitions=1, drop_caches=True, drop_caches_command=['dropper', '-x'],
                                        phases=['create', 'stat'], launcher='srun')
    survey.inspect()
    survey.setup()
    records = list(survey.run())
    survey.teardown()
    drops = [argv for unused_modules, argv in runner.launches if 'dropper' in argv]
    assert drops == [['srun', '-N', str(nodes), '-n', str(nodes), '--ntasks-per-node', '1', 'dropper', '-x']
                     for nodes in (1, 2)]
    assert [r['caches_dropped'] for r in records] == [True, True]


@pytest.fixture
def sim_init_args(tmp_path):
    config = tmp_path / 'sim.yaml'
    config.write_text('osts: 2\nmdts: 2\nclient_mount: %s\nslurm: {partitions: [batch], accounts: [proj1], nodes: 2}\n'
                      'modules: {available: [gcc, openmpi, mdtest]}\n' % (tmp_path / 'sim-mnt'))
    return ['--config', str(config)]


@pytest.mark.parametrize('allocation', ['existing', 'salloc', 'sbatch'])
def test_a_sweep_through_the_simulated_srun_with_environment_modules(sim, tmp_path, allocation):
    mount = str(tmp_path / 'sim-mnt')
    runner = Runner()
    node_state = NodeState(str(tmp_path / 'work'))
    survey = mdtest.MdtestSurvey(EngineContext(runner, runner, node_state, RUN), mount, ['c1', 'c2'],
                                 {'items': 10, 'repetitions': 1, 'tasks_per_node': [1, 2], 'launcher': 'srun',
                                  'partition': 'batch', 'account': 'proj1', 'mdt_count': 2,
                                  'environment_modules': ['gcc', 'openmpi', 'mdtest'],
                                  'slurm_allocation': allocation},
                                 workdir=str(tmp_path / 'work'), shell=SHELL)
    survey.inspect()
    survey.setup()
    try:
        records = list(survey.run())
    finally:
        assert survey.teardown() == []
    assert survey.errors == []
    best = [r['tasks_per_node'] for r in records if r['best_tasks_per_node']]
    assert len(best) == 1
    # mdtest itself saw every point's nodes and tasks
    assert [(r['nodes'], r['tasks'], r['mdtest_nodes'], r['mdtest_tasks']) for r in records] == [
        (1, 1, 1, 1), (1, 2, 1, 2), (2, 2 * best[0], 2, 2 * best[0])]
    assert all(r['summary']['file creation']['mean'] > 0 for r in records)
    with open(os.path.join(sim.root, 'state', 'slurm.json')) as handle:
        slurm = json.load(handle)
    jobs = slurm['jobs']
    assert [(job['nodes'], job['partition'], job['account'], job['modules'], job['status']) for job in jobs] == [
        (r['nodes'], 'batch', 'proj1', ['gcc', 'openmpi', 'mdtest'], 0) for r in records]
    assert not os.path.exists(survey.tree) and node_state.entries('paths') == []
    # salloc and sbatch: one job per launch for the point's nodes and tasks per node, each ended, nothing left
    made = slurm.get('allocations', [])
    if allocation == 'existing':
        assert made == []
    else:
        assert [(job['kind'], job['nodes'], job['per_node'], job['state'], job['job_id']) for job in made] == [
            (allocation, r['nodes'], r['tasks_per_node'], 'COMPLETED', step['job_id']) for r, step in zip(records, jobs)]
        assert node_state.entries('slurm_jobs') == []
        assert [name for name in os.listdir(survey.run_dir) if name.endswith('.sh')] == []


# -- adaptive sweeps: the file creation rate (best_by) of each (nodes, tasks per node), min = max (no spread)

FLAT = {(1, 1): 1000.0, (1, 2): 1010.0, (1, 4): 1000.0, (1, 8): 990.0, (2, 2): 1015.0, (4, 2): 1000.0}
RISING = {(1, 1): 1000.0, (1, 2): 1800.0, (1, 4): 3000.0, (1, 8): 5000.0, (2, 8): 9000.0, (4, 8): 16000.0}
KNEE = {(1, 1): 1000.0, (1, 2): 1800.0, (1, 4): 2000.0, (1, 8): 2020.0, (1, 16): 2000.0, (2, 8): 3500.0,
        (4, 8): 3550.0, (8, 8): 3600.0}


def adaptive_run(mount, tmp_path, rates, tasks_per_node, hosts, **options):
    options.setdefault('sweep', 'adaptive')
    survey, runner, unused = survey_for(mount, tmp_path, FakeRunner(mount, rates=rates), hosts=hosts,
                                        tasks_per_node=tasks_per_node, **options)
    survey.inspect()
    survey.setup()
    records = list(survey.run())
    assert survey.teardown() == [] and survey.errors == [] and survey.aborted is None
    return survey, [(record['nodes'], record['tasks_per_node']) for record in records], survey.envelope_fields()


def test_adaptive_flat_curve_stops_both_steps_after_their_first_flat_point(mount, tmp_path):
    survey, points, fields = adaptive_run(mount, tmp_path, FLAT, [1, 2, 4, 8], ('c1', 'c2', 'c3', 'c4'))
    # 2 tasks gain 1 % on 1 task: flat, step 1 stops; 2 nodes gain 0.5 % on the one-node best point: step 2 stops
    assert points == [(1, 1), (1, 2), (2, 2)]
    assert fields['skipped_points'] == [
        {'point': {'step': 'tasks_per_node', 'nodes': 1, 'tasks_per_node': 4},
         'reason': 'saturated at tasks_per_node 2: +1.0 % < 3 %'},
        {'point': {'step': 'tasks_per_node', 'nodes': 1, 'tasks_per_node': 8},
         'reason': 'saturated at tasks_per_node 2: +1.0 % < 3 %'},
        {'point': {'step': 'nodes', 'nodes': 4, 'tasks_per_node': 2}, 'reason': 'saturated at nodes 2: +0.5 % < 3 %'}]
    sweep = fields['sweep']
    assert (sweep['mode'], sweep['points_run'], sweep['points_full']) == ('adaptive', 3, 6)
    assert sweep['stops'] == [
        {'nodes': 1, 'tasks_per_node': 2, 'axis': 'tasks_per_node', 'reason': 'saturated at tasks_per_node 2: +1.0 % < 3 %'},
        {'tasks_per_node': 2, 'nodes': 2, 'axis': 'nodes', 'reason': 'saturated at nodes 2: +0.5 % < 3 %'}]


def test_adaptive_rising_curve_runs_the_full_sweep(mount, tmp_path):
    survey, points, fields = adaptive_run(mount, tmp_path, RISING, [1, 2, 4, 8], ('c1', 'c2', 'c3', 'c4'))
    assert points == [(1, 1), (1, 2), (1, 4), (1, 8), (2, 8), (4, 8)]
    assert fields['skipped_points'] == [] and fields['sweep']['stops'] == []
    assert (fields['sweep']['points_run'], fields['sweep']['points_full']) == (6, 6)


def test_adaptive_knee_stops_past_it_and_the_nodes_step_goes_on_while_it_gains(mount, tmp_path):
    hosts = ('c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8')
    survey, points, fields = adaptive_run(mount, tmp_path, KNEE, [1, 2, 4, 8, 16], hosts, sweep_patience=1)
    # 4 tasks still gain 11 %, 8 tasks 1 %: 16 is skipped; 8 tasks is the best, 2 nodes gain 73 %, 4 nodes 1.4 %
    assert points == [(1, 1), (1, 2), (1, 4), (1, 8), (2, 8), (4, 8)]
    assert [(item['point']['step'], item['point']['nodes'], item['point']['tasks_per_node'])
            for item in fields['skipped_points']] == [('tasks_per_node', 1, 16), ('nodes', 8, 8)]
    assert [item['reason'] for item in fields['skipped_points']] == [
        'saturated at tasks_per_node 8: +1.0 % < 3 %', 'saturated at nodes 4: +1.4 % < 3 %']
    assert (fields['sweep']['points_run'], fields['sweep']['points_full']) == (6, 8)
    assert [record for record in survey.records if record['best_tasks_per_node']][0]['tasks_per_node'] == 8


def test_full_sweep_runs_every_point_of_a_flat_curve_and_skips_nothing(mount, tmp_path):
    survey, points, fields = adaptive_run(mount, tmp_path, FLAT, [1, 2, 4, 8], ('c1', 'c2', 'c3', 'c4'),
                                          sweep='full')
    assert points == [(1, 1), (1, 2), (1, 4), (1, 8), (2, 2), (4, 2)]
    assert fields['skipped_points'] == [] and fields['sweep']['mode'] == 'full'
    assert (fields['sweep']['points_run'], fields['sweep']['points_full']) == (6, 6)


class TimedRunner(FakeRunner):
    """Each mdtest run takes 2 s of ``clock``; right before it, a poll reads the progress as async_result does."""

    def __init__(self, mount, clock, **kwargs):
        FakeRunner.__init__(self, mount, **kwargs)
        self.clock = clock
        self.progress_file = None
        self.polls = []

    def _program(self, argv, program, nodes, slots):
        if program[0] == 'mdtest':
            self.polls.append(read_progress(self.progress_file, now=self.clock.now))
            self.clock.sleep(2)
        return FakeRunner._program(self, argv, program, nodes, slots)


def progress_run(mount, tmp_path, runner, **options):
    """The survey run by the client-launch layer with its progress log, as the mdtest module runs it."""
    survey, unused_runner, unused_state = survey_for(mount, tmp_path, runner, **options)
    survey.inspect()
    log, builder = client_survey_progress(survey, runner.clock)
    runner.progress_file = progress_path(survey.run_dir, 'mdtest')
    assert client_launch._run(survey, builder, os.path.join(survey.run_dir, 'mdtest.out')) is True
    return survey, builder


def test_each_poll_sees_the_points_done_of_the_planned_total_the_current_point_the_last_figure_and_an_eta(
        mount, tmp_path):
    runner = TimedRunner(mount, FakeClock())
    survey, builder = progress_run(mount, tmp_path, runner)
    # 3 points of tasks per node on one node, then 2 and 3 nodes at the best (2): 5 planned, step 2's one-node point
    # being step 1's best
    assert [(poll['done'], poll['total']) for poll in runner.polls] == [(n, 5) for n in range(5)]
    # every point counted is in the envelope already
    assert [(record['nodes'], record['tasks_per_node']) for record in builder.records] == [
        (1, 1), (1, 2), (1, 4), (2, 2), (3, 2)]
    # step 2's tasks per node is not known when it is planned: its points name their nodes
    assert [poll['current'] for poll in runner.polls] == [
        {'step': 'tasks_per_node', 'nodes': 1, 'tasks_per_node': 1},
        {'step': 'tasks_per_node', 'nodes': 1, 'tasks_per_node': 2},
        {'step': 'tasks_per_node', 'nodes': 1, 'tasks_per_node': 4},
        {'step': 'nodes', 'nodes': 2}, {'step': 'nodes', 'nodes': 3}]
    assert [poll['last'] and poll['last']['figure'] for poll in runner.polls] == [None] + [
        'file creation %.1f ops/s, file stat 15000.0 ops/s' % CREATE_RATES[point]
        for point in [(1, 1), (1, 2), (1, 4), (2, 2)]]
    assert runner.polls[1]['last']['point'] == {'step': 'tasks_per_node', 'nodes': 1, 'tasks_per_node': 1}
    # no rate to assume for mdtest: no ETA before the first point, then 2 s per point for the points left
    assert [poll['eta_s'] for poll in runner.polls] == [None, 8.0, 6.0, 4.0, 2.0]
    summary = read_progress(runner.progress_file, now=runner.clock.now)
    assert (summary['done'], summary['total'], summary['current']) == (5, 5, None)
    envelope = builder.finish()
    assert envelope['status'] == 'ok' and len(envelope['records']) == 5
    summary = read_progress(runner.progress_file)
    assert (summary['state'], summary['done'], summary['total']) == ('ok', 5, 5)


def test_an_adaptive_sweep_takes_the_points_it_passes_over_out_of_the_total(mount, tmp_path):
    runner = TimedRunner(mount, FakeClock(), rates=FLAT)
    survey, builder = progress_run(mount, tmp_path, runner, hosts=('c1', 'c2', 'c3', 'c4'),
                                   tasks_per_node=[1, 2, 4, 8], sweep='adaptive')
    # planned: 4 points of step 1, 2 of step 2; step 1 stops after 2 tasks per node (4 and 8 passed over), so the
    # third run is step 2's first point, of 4
    assert [(poll['done'], poll['total'], poll['current']) for poll in runner.polls] == [
        (0, 6, {'step': 'tasks_per_node', 'nodes': 1, 'tasks_per_node': 1}),
        (1, 6, {'step': 'tasks_per_node', 'nodes': 1, 'tasks_per_node': 2}),
        (2, 4, {'step': 'nodes', 'nodes': 2})]
    # step 2 stops too: 4 nodes is passed over, and the run ends with every point it ran done
    summary = read_progress(runner.progress_file, now=runner.clock.now)
    assert (summary['done'], summary['total'], summary['current'], summary['eta_s']) == (3, 3, None, 0.0)
    assert len(builder.records) == 3 and len(survey.envelope_fields()['skipped_points']) == 3


def test_the_plan_gives_the_adaptive_sweeps_most_and_fewest_points(mount, tmp_path):
    survey, unused_runner, unused_launches = survey_for(mount, tmp_path, hosts=('c1', 'c2', 'c3', 'c4'),
                                                        tasks_per_node=[1, 2, 4, 8], sweep='adaptive', sweep_patience=2)
    survey.inspect()
    # 4 + 2 points (the one-node point of step 2 is step 1's best); fewest: 3 of step 1, 2 of step 2 (it starts from
    # the best point of step 1)
    assert survey.plan()['sweep'] == {'mode': 'adaptive', 'min_gain_pct': 3.0, 'patience': 2, 'points_full': 6,
                                      'points_most': 6, 'points_fewest': 5}
    survey, unused_runner, unused_launches = survey_for(mount, tmp_path, hosts=('c1', 'c2'))
    assert survey.plan()['sweep'] == {'mode': 'full', 'min_gain_pct': 3.0, 'patience': 1, 'points_full': 4}


@pytest.mark.parametrize('options, message', [
    ({'sweep_min_gain_pct': 0.0}, 'sweep_min_gain_pct: must be above 0'),
    ({'sweep_patience': 0}, 'sweep_patience: must be at least 1'),
    ({'sweep': 'smart'}, 'sweep: must be full or adaptive'),
])
def test_bad_sweep_options_are_named(options, message):
    problems = mdtest.option_problems(options, 1)
    assert any(str(problem).startswith(message) for problem in problems), problems


def resumed(mount, tmp_path, done, rates=None, **options):
    """A new survey of the same run, given the points the killed attempt finished; run to its end."""
    survey, runner, unused = survey_for(mount, tmp_path, FakeRunner(mount, rates=rates), **options)
    survey.done_points = dict((survey.resume_key(record), record) for record in done)
    survey.inspect()
    survey.setup()
    list(survey.run())
    assert survey.teardown() == [] and survey.errors == [] and survey.aborted is None
    measured = [(record['nodes'], record['tasks_per_node']) for record in survey.records]
    return survey, runner, measured


@pytest.mark.parametrize('killed_at, measured_then', [
    (2, [(1, 4), (2, 2), (3, 2)]),
    (4, [(3, 2)]),
])
def test_a_resumed_sweep_measures_only_the_missing_points_and_chooses_the_best_from_all(
        mount, tmp_path, killed_at, measured_then):
    first, unused_runner, unused_state = survey_for(mount, tmp_path)
    done = killed_after(first, killed_at)
    survey, runner, measured = resumed(mount, tmp_path, done)
    assert measured == measured_then
    assert len(mpirun_calls(runner)) == len(measured_then)
    # the best tasks per node (2) is an earlier attempt's point: it is flagged, and the nodes step runs at it
    assert survey.best is done[1] and done[1]['best_tasks_per_node'] is True
    assert [record['best_tasks_per_node'] for record in done + survey.records if record['step'] == 'tasks_per_node'
            ] == [False, True, False]
    assert all(record['tasks_per_node'] == 2 for record in survey.records if record['step'] == 'nodes')


@pytest.mark.parametrize('killed_at, measured_then', [
    (3, [(1, 8), (2, 8), (4, 8)]),
    (5, [(4, 8)]),
])
def test_a_resumed_adaptive_sweep_counts_the_earlier_figures_and_still_stops_past_the_knee(
        mount, tmp_path, killed_at, measured_then):
    hosts = ('c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8')
    options = dict(hosts=hosts, tasks_per_node=[1, 2, 4, 8, 16], sweep='adaptive', sweep_patience=1)
    first, unused_runner, unused_state = survey_for(mount, tmp_path, FakeRunner(mount, rates=KNEE), **options)
    done = killed_after(first, killed_at)
    survey, runner, measured = resumed(mount, tmp_path, done, rates=KNEE, **options)
    # 8 tasks per node gains 1 % on 4 (measured before the kill): 16 is passed over; 4 nodes gain 1.4 % on 2: 8 is
    # passed over too
    assert measured == measured_then
    fields = survey.envelope_fields()
    assert [(item['point']['step'], item['point']['nodes'], item['point']['tasks_per_node'])
            for item in fields['skipped_points']] == [('tasks_per_node', 1, 16), ('nodes', 8, 8)]
    assert (fields['sweep']['points_run'], fields['sweep']['points_full']) == (6, 8)
    assert survey.best['tasks_per_node'] == 8


def test_a_resumed_sweep_whose_every_point_is_done_measures_nothing(mount, tmp_path):
    first, unused_runner, unused_state = survey_for(mount, tmp_path)
    done = killed_after(first, 5)
    survey, runner, measured = resumed(mount, tmp_path, done)
    assert measured == [] and mpirun_calls(runner) == []
    assert survey.best is done[1]


# 2 tasks per node fails in the first attempt, so 4 (1800) is the best there; measured later, 2 (1900) wins
WINNER_LATE = dict(CREATE_RATES)
WINNER_LATE.update({(1, 2): 1900.0, (2, 4): 3000.0, (3, 4): 4000.0})


class KillAfter:
    """An observer of the envelope builder (after the progress log) that kills the attempt once ``count`` points of
    it ended: the progress log has written them to the points file, as a SIGKILL right after would leave them."""

    def __init__(self, count):
        self.count = count

    def point_done(self, record):
        self.count -= 1
        if self.count == 0:
            raise Killed()

    def finish(self, status):
        pass


def attempt_of_the_run(mount, tmp_path, runner, kill_after=None):
    """One attempt of the run as the mdtest module makes it: the points earlier attempts finished come from the
    run's points file into the envelope first (SurveyStart._resume), the progress log numbers the attempt, the
    client-launch layer runs the survey. ``(survey, envelope)``; the envelope is None when the attempt was killed."""
    survey, runner, unused = survey_for(mount, tmp_path, runner)
    survey.inspect()
    os.makedirs(survey.run_dir, exist_ok=True)
    attempt, unused_attempts, earlier = progress.start_attempt(survey.run_dir, 'mdtest', {'items': 10})
    builder = results.EnvelopeBuilder(RUN, 'c1', 'mdtest', 'native', {'items': 10})
    for record in earlier:
        builder.add_record(record)
    log = progress.ProgressLog(survey.run_dir, 'mdtest', RUN, 'c1', attempt=attempt, done_before=len(earlier))
    log.envelope_fields = builder.extra_fields
    builder.observers.append(log)
    survey.done_points = dict((survey.resume_key(record), record) for record in earlier)
    raw_path = os.path.join(survey.run_dir, 'mdtest.out')
    if kill_after is None:
        client_launch._run(survey, builder, raw_path)
        return survey, builder.finish()
    builder.observers.append(KillAfter(kill_after))
    with pytest.raises(Killed):
        client_launch._run(survey, builder, raw_path)
    return survey, None


@pytest.mark.parametrize('second_killed_after, measured_last, attempts', [
    # the second attempt measures 2 tasks per node, then the whole nodes step at 2
    (None, [(1, 2), (2, 2), (3, 2)], [1, 1, 2, 2, 2]),
    # killed once more after 2 nodes at 2 tasks: the third takes that point and measures the last one
    (2, [(3, 2)], [1, 1, 2, 2, 3]),
])
def test_a_resumed_sweep_whose_best_tasks_per_node_changes_withdraws_the_earlier_nodes_step_and_ends_as_one_sweep(
        mount, tmp_path, second_killed_after, measured_last, attempts):
    # attempt 1: 2 tasks per node fails, 4 is the best; killed after the nodes step measured 2 nodes at 4 tasks
    first = FakeRunner(mount, rates=WINNER_LATE, fail_points=[(1, 2)])
    attempt_of_the_run(mount, tmp_path, first, kill_after=3)
    assert [(argv[argv.index('-np') + 1], os.path.basename(argv[-1])) for argv in mpirun_calls(first)] == [
        ('1', 'nodes1-ppn1'), ('2', 'nodes1-ppn2'), ('4', 'nodes1-ppn4'), ('8', 'nodes2-ppn4')]
    if second_killed_after is not None:
        attempt_of_the_run(mount, tmp_path, FakeRunner(mount, rates=WINNER_LATE), kill_after=second_killed_after)
    runner = FakeRunner(mount, rates=WINNER_LATE)
    survey, envelope = attempt_of_the_run(mount, tmp_path, runner)
    assert [(int(argv[argv.index('-np') + 1]) // slots, slots) for argv, slots in
            ((argv, int(os.path.basename(argv[-1]).split('ppn')[1])) for argv in mpirun_calls(runner))] == measured_last
    assert envelope['status'] == 'ok' and envelope['errors'] == [] and results.validate_envelope(envelope) == []
    # one sweep: every tasks-per-node point once, then the nodes step at the best (2 tasks per node), each point once
    points = [(record['step'], record['nodes'], record['tasks_per_node']) for record in envelope['records']]
    assert sorted(points) == [('nodes', 2, 2), ('nodes', 3, 2),
                              ('tasks_per_node', 1, 1), ('tasks_per_node', 1, 2), ('tasks_per_node', 1, 4)]
    assert len(set(points)) == len(points) and set(tpn for step, unused, tpn in points if step == 'nodes') == {2}
    assert [record['attempt'] for record in envelope['records']] == attempts
    assert [record['tasks_per_node'] for record in envelope['records'] if record['best_tasks_per_node']] == [2]
    # the earlier nodes step at 4 tasks per node is named, with the attempt that measured it and why it went
    assert envelope['withdrawn_points'] == [{
        'point': {'step': 'nodes', 'nodes': 2, 'tasks_per_node': 4}, 'attempt': 1,
        'reason': 'measured at 4 tasks per node, the best of the tasks-per-node step when attempt 1 ran; the best is '
                  'now 2 tasks per node (measured by attempt 2, file creation 1900.0 ops/s), so the nodes step is '
                  'measured again at 2'}]
    assert [item['attempt'] for item in envelope['attempts']] == list(range(1, max(attempts) + 1))
    # the sweep's count has the points of the one sweep, the withdrawn one not among them
    assert (envelope['sweep']['points_run'], envelope['sweep']['points_full']) == (5, 5)
    assert survey.sweeps['nodes'].points_run == 2 and not os.path.exists(os.path.join(mount, 'mdtest_' + RUN))
    # the run's progress ends with the points the envelope keeps, the withdrawn one not counted
    summary = progress.read_progress(os.path.join(survey.run_dir, 'mdtest.progress.json'))
    assert (summary['done'], summary['total']) == (5, 5), summary


def test_a_resumed_sweep_whose_best_is_unchanged_withdraws_nothing(mount, tmp_path):
    # the failed point fails again: 4 tasks per node stays the best, the earlier nodes step is kept
    attempt_of_the_run(mount, tmp_path, FakeRunner(mount, rates=WINNER_LATE, fail_points=[(1, 2)]), kill_after=3)
    survey, envelope = attempt_of_the_run(mount, tmp_path, FakeRunner(mount, rates=WINNER_LATE, fail_points=[(1, 2)]))
    assert survey.withdrawn == [] and 'withdrawn_points' not in envelope
    assert [(record['step'], record['nodes'], record['tasks_per_node'], record['attempt'])
            for record in envelope['records']] == [
        ('tasks_per_node', 1, 1, 1), ('tasks_per_node', 1, 4, 1), ('nodes', 2, 4, 1), ('nodes', 3, 4, 2)]
