# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The mdtest module on a fake client: refusals naming the option, check-mode plan, envelope, tree removed."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
import os

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import client_launch, progress, results
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState
from ansible_collections.lustre.iokit.plugins.modules import mdtest as mdtest_module
from ansible_collections.lustre.iokit.tests.unit.plugins.module_utils.engines.test_mdtest_engine import FakeRunner


class Node:
    fake = None


@pytest.fixture
def mount(tmp_path, monkeypatch, fake_runners):
    path = tmp_path / 'mnt'
    path.mkdir()
    Node.fake = FakeRunner(str(path))
    fake_runners(mdtest_module, Node.fake)
    monkeypatch.setattr(client_launch, 'resolve', lambda module, name, option, required=True: name)
    return str(path)


@pytest.fixture
def run_module(run_in_process):
    return functools.partial(run_in_process, mdtest_module)


def base(tmp_path, mount, **change):
    args = {'mount_point': mount, 'hosts': ['c1', 'c2'], 'items': 10, 'tasks_per_node': [1, 2], 'repetitions': 2,
            'run_id': 'test-run', 'workdir': str(tmp_path / 'work'), 'allow_run_as_root': True}
    args.update(change)
    return args


def launches():
    return [argv for unused_modules, argv in Node.fake.launches]


@pytest.mark.parametrize('change, message', [
    ({'engine': 'iokit'}, 'value of engine must be one of: native, got: iokit'),
    ({'items_per_dir': 4}, 'items, items_per_dir: give one of them'),
    ({'files_only': True, 'dirs_only': True}, 'files_only, dirs_only'),
    ({'stonewall_s': 5, 'branching': 2}, 'stonewall_s:'),
    ({'nodes': [1, 2, 3]}, 'nodes: 3 nodes asked but hosts lists only 2'),
    ({'directory': '/abs'}, 'directory: give a path relative to mount_point'),
    ({'directory': 'a/../..'}, 'directory: give a path relative to mount_point'),
    ({'timeout': 0}, 'timeout: must be at least 1 second'),
    ({'phases': ['stat']}, 'phases: every point starts from an empty directory'),
])
def test_bad_options_fail_naming_them_before_anything_runs(run_module, tmp_path, mount, change, message):
    result = run_module(base(tmp_path, mount, **change))
    assert result['failed'] and message in result['msg']
    assert Node.fake.calls == []


def test_root_without_allow_run_as_root_is_refused_before_anything_runs(run_module, tmp_path, mount, monkeypatch):
    monkeypatch.setattr(client_launch.os, 'geteuid', lambda: 0)
    result = run_module(base(tmp_path, mount, allow_run_as_root=False))
    assert result['failed'] and 'allow_run_as_root: the module runs as root' in result['msg']
    assert Node.fake.calls == []


def test_a_mount_that_is_not_lustre_is_refused(run_module, tmp_path, mount):
    Node.fake.getname_rc = 25
    result = run_module(base(tmp_path, mount))
    assert result['failed'] and 'mount_point: %s is not a Lustre client mount' % mount in result['msg']
    assert launches() == []


def test_check_mode_returns_the_plan_and_touches_nothing(run_module, tmp_path, mount):
    result = run_module(base(tmp_path, mount), check_mode=True)
    assert result['status'] == 'skipped' and result['changed']
    plan = result['plan']
    assert [(p['step'], p['nodes'], p['tasks_per_node']) for p in plan['points']] == [
        ('tasks_per_node', 1, 1), ('tasks_per_node', 1, 2), ('nodes', 1, None), ('nodes', 2, None)]
    assert plan['tree'] == os.path.join(mount, 'mdtest_test-run')
    assert plan['lines'][1] == 'points (nodes x tasks per node): 1x1, 1x2, 1xbest, 2xbest'
    assert plan['lines'][2] == 'first command: ' + ' '.join(plan['first_command'])
    assert plan['first_command'][:5] == ['mpirun', '--hostfile', str(tmp_path / 'work' / 'test-run' / 'hostfile-1x1'),
                                         '-np', '1']
    assert launches() == [] and os.listdir(mount) == []


def test_a_survey_returns_every_point_and_leaves_no_tree(run_module, tmp_path, mount):
    result = run_module(base(tmp_path, mount, stride=2, files_only=True, write_bytes=100, read_bytes=100))
    assert result['status'] == 'ok' and result['changed'] and result['errors'] == []
    envelope = result['envelope']
    assert results.validate_envelope(envelope) == []
    assert (envelope['survey'], envelope['engine'], envelope['run_id']) == ('mdtest', 'native', 'test-run')
    assert [(r['step'], r['nodes'], r['tasks_per_node'], r['tasks']) for r in envelope['records']] == [
        ('tasks_per_node', 1, 1, 1), ('tasks_per_node', 1, 2, 2), ('nodes', 2, 2, 4)]
    assert envelope['parameters']['stride'] == 2 and envelope['parameters']['hosts'] == ['c1', 'c2']
    program = launches()[0]
    assert program[program.index('mdtest'):program.index('-d')] == [
        'mdtest', '-n', '10', '-z', '0', '-b', '1', '-u', '-F', '-w', '100', '-e', '100', '-N', '2', '-i', '2']
    with open(envelope['raw_output']) as handle:
        raw = handle.read()
    assert raw.count('SUMMARY rate:') == 3 and raw.startswith('# mpirun --hostfile')
    assert os.listdir(mount) == []
    # The tree is crossed off; what is left for the cleanup is the run's raw output directory (and the workdir
    # the module created), and the module's own process entry is gone with it.
    state = NodeState(str(tmp_path / 'work'))
    assert sorted(entry['path'] for entry in state.entries('paths')) == [
        str(tmp_path / 'work'), str(tmp_path / 'work' / 'test-run')]
    assert state.entries('processes') == []


def test_nothing_measured_fails_with_the_envelope_and_removes_the_tree(run_module, tmp_path, mount):
    Node.fake.fail_points = {(1, 1), (1, 2)}
    result = run_module(base(tmp_path, mount))
    assert result['failed'] and result['status'] == 'failed'
    assert result['msg'].startswith('mdtest measured nothing: mpirun mdtest failed (rc 1)')
    assert result['envelope']['errors'][0]['point'] == {'nodes': 1, 'tasks_per_node': 1}
    assert os.listdir(mount) == []


def test_a_timeout_is_partial(run_module, tmp_path, mount):
    Node.fake.hang_points = {(2, 2)}
    result = run_module(base(tmp_path, mount))
    assert result['status'] == 'partial' and len(result['records']) == 2
    assert {'point': None, 'message': 'survey stopped: timeout'} in result['errors']
    assert os.listdir(mount) == []


def test_a_survey_through_srun_loads_the_modules_in_the_launching_shell(run_module, tmp_path, mount):
    modules = ['gcc', 'openmpi', 'mdtest']
    result = run_module(base(tmp_path, mount, launcher='srun', partition='batch', environment_modules=modules,
                             module_shell=['/bin/sh', '-c'], allow_run_as_root=False))
    assert result['status'] == 'ok' and result['errors'] == []
    assert [(loaded, argv[:9]) for loaded, argv in Node.fake.launches] == [
        (modules, ['srun', '-N', str(nodes), '-n', str(nodes * ppn), '--ntasks-per-node', str(ppn), '-p', 'batch'])
        for nodes, ppn in ((1, 1), (1, 2), (2, 2))]
    parameters = result['envelope']['parameters']
    assert (parameters['launcher'], parameters['partition'], parameters['environment_modules']) == (
        'srun', 'batch', modules)
    assert result['environment']['launcher'] == 'srun' and result['plan']['launcher'] == 'srun'
    assert os.listdir(mount) == []


def test_slurm_settings_need_srun(run_module, tmp_path, mount):
    result = run_module(base(tmp_path, mount, partition='batch'))
    assert result['failed'] and 'partition, account: Slurm settings need launcher srun' in result['msg']
    assert Node.fake.calls == []


def test_an_adaptive_survey_lists_what_it_skipped_and_its_plan_says_up_to_the_full_sweep(run_module, tmp_path, mount):
    args = base(tmp_path, mount, tasks_per_node=[1, 2, 4, 8], sweep='adaptive')
    plan = run_module(args, check_mode=True)['plan']
    assert plan['sweep'] == {'mode': 'adaptive', 'min_gain_pct': 3.0, 'patience': 1, 'points_full': 5,
                             'points_most': 5, 'points_fewest': 3}
    assert plan['estimate']['points'] == 5 and plan['estimate']['adaptive']['points_most'] == 5
    result = run_module(args)
    envelope = result['envelope']
    assert result['status'] == 'ok' and results.validate_envelope(envelope) == []
    # 4 tasks per node create no faster than 2: 8 is not run; the nodes step still runs (2 nodes at 2 tasks)
    assert [(r['nodes'], r['tasks_per_node']) for r in envelope['records']] == [(1, 1), (1, 2), (1, 4), (2, 2)]
    assert envelope['skipped_points'] == [{'point': {'step': 'tasks_per_node', 'nodes': 1, 'tasks_per_node': 8},
                                           'reason': 'saturated at tasks_per_node 4: +0.0 % < 3 %'}]
    assert (envelope['sweep']['points_run'], envelope['sweep']['points_full']) == (4, 5)
    assert envelope['parameters']['sweep'] == 'adaptive'
    # the point passed over left the progress log's total (the sweep's on_skip, wired by SurveyStart.follow_sweep)
    summary = progress.read_progress(str(tmp_path / 'work' / 'test-run' / 'mdtest.progress.json'))
    assert (summary['state'], summary['done'], summary['total']) == ('ok', 4, 4)


def points_launched():
    """The point directory (nodes<N>-ppn<P>) of each mdtest launch, in order."""
    return [os.path.basename(argv[argv.index('-d') + 1]) for argv in launches() if 'mdtest' in argv]


def test_a_rerun_of_a_cut_run_measures_only_the_missing_points(run_module, tmp_path, mount):
    Node.fake.hang_points = {(2, 2)}
    first = run_module(base(tmp_path, mount))
    assert first['status'] == 'partial' and len(first['records']) == 2
    Node.fake.hang_points, Node.fake.stop_reason, Node.fake.launches = set(), None, []
    second = run_module(base(tmp_path, mount))
    assert second['status'] == 'ok' and second['errors'] == []
    assert points_launched() == ['nodes2-ppn2']
    records = second['envelope']['records']
    assert [(r['step'], r['nodes'], r['tasks_per_node'], r['attempt']) for r in records] == [
        ('tasks_per_node', 1, 1, 1), ('tasks_per_node', 1, 2, 1), ('nodes', 2, 2, 2)]
    # the best tasks per node is chosen from the points of the first attempt
    assert [r['best_tasks_per_node'] for r in records] == [False, True, False]
    assert [item['attempt'] for item in second['envelope']['attempts']] == [1, 2]
    assert all(item['finished'] for item in second['envelope']['attempts'])
    assert results.validate_envelope(second['envelope']) == []
    summary = progress.read_progress(str(tmp_path / 'work' / 'test-run' / 'mdtest.progress.json'))
    assert (summary['done'], summary['total'], summary['attempt']) == (3, 3, 2)
    assert os.listdir(mount) == []


def test_a_rerun_whose_failed_tasks_point_now_wins_withdraws_the_earlier_nodes_step_and_measures_it_again(
        run_module, tmp_path, mount):
    # attempt 1: 2 tasks per node fails, so 1 is the best and the nodes step runs at 1
    Node.fake.rates = dict(Node.fake.rates)
    Node.fake.rates[(2, 1)] = 1900.0
    Node.fake.fail_points = {(1, 2)}
    first = run_module(base(tmp_path, mount))
    assert first['status'] == 'partial' and [(r['nodes'], r['tasks_per_node']) for r in first['records']] == [
        (1, 1), (2, 1)]
    # attempt 2: 2 tasks per node measures 1800 ops/s and wins; the nodes step is measured again at 2
    Node.fake.fail_points, Node.fake.launches = set(), []
    second = run_module(base(tmp_path, mount))
    assert second['status'] == 'ok' and second['errors'] == []
    assert points_launched() == ['nodes1-ppn2', 'nodes2-ppn2']
    envelope = second['envelope']
    assert [(r['step'], r['nodes'], r['tasks_per_node'], r['attempt'], r['best_tasks_per_node'])
            for r in envelope['records']] == [
        ('tasks_per_node', 1, 1, 1, False), ('tasks_per_node', 1, 2, 2, True), ('nodes', 2, 2, 2, False)]
    assert envelope['withdrawn_points'] == [{
        'point': {'step': 'nodes', 'nodes': 2, 'tasks_per_node': 1}, 'attempt': 1,
        'reason': 'measured at 1 tasks per node, the best of the tasks-per-node step when attempt 1 ran; the best is '
                  'now 2 tasks per node (measured by attempt 2, file creation 1800.0 ops/s), so the nodes step is '
                  'measured again at 2'}]
    assert second['withdrawn_points'] == envelope['withdrawn_points']
    assert [item['attempt'] for item in envelope['attempts']] == [1, 2]
    assert results.validate_envelope(envelope) == [] and os.listdir(mount) == []


def test_a_rerun_with_other_parameters_is_refused_and_force_rerun_starts_over(run_module, tmp_path, mount):
    Node.fake.hang_points = {(2, 2)}
    assert run_module(base(tmp_path, mount))['status'] == 'partial'
    Node.fake.hang_points, Node.fake.stop_reason, Node.fake.launches = set(), None, []
    refused = run_module(base(tmp_path, mount, items=20))
    assert refused['failed'] is True and points_launched() == []
    assert 'mdtest: run test-run not resumed' in refused['msg'] and 'items was 10' in refused['msg']
    forced = run_module(base(tmp_path, mount, items=20, force_rerun=True))
    assert forced['status'] == 'ok' and points_launched() == ['nodes1-ppn1', 'nodes1-ppn2', 'nodes2-ppn2']
    assert [record['attempt'] for record in forced['records']] == [1, 1, 1]
