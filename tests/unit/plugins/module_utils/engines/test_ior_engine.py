# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The IOR engine against the simulated client (real ior, mpirun, srun and module shims): argument lists,
the sweep, the cache rule, both launchers with environment modules, the marked tree removed afterwards and by
the cleanup after a kill."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils.cleanup import Cleanup
from ansible_collections.lustre.iokit.plugins.module_utils.engines import ior
from ansible_collections.lustre.iokit.plugins.module_utils.engines.contract import EngineContext
from ansible_collections.lustre.iokit.plugins.module_utils.engines.errors import EngineError
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState
from ansible_collections.lustre.iokit.plugins.module_utils.runner import Runner
from ansible_collections.lustre.iokit.tests.unit.fakes import killed_after

RUN = 'ior-run-1'
SHELL = ('/bin/sh', '-c')


@pytest.fixture
def sim_init_args(tmp_path):
    config = tmp_path / 'sim.yaml'
    config.write_text('osts: 2\nmdts: 1\nost_size_mib: 64\nclient_mount: %s\n'
                      'slurm: {partitions: [batch], accounts: [acct1], nodes: 2}\n'
                      'modules: {available: [gcc, openmpi, ior]}\n' % (tmp_path / 'mnt'))
    return ['--config', str(config)]


@pytest.fixture
def mount(sim, tmp_path):
    return str(tmp_path / 'mnt')


def survey_for(mount, tmp_path, hosts=('c1', 'c2'), make_context=EngineContext, **options):
    options.setdefault('block_size_mib', 1)
    options.setdefault('transfer_sizes_kib', [256])
    options.setdefault('memory_factor', 0)
    node_state = NodeState(str(tmp_path / 'work'))
    runner = Runner()
    survey = ior.IorSurvey(make_context(runner, runner, node_state, RUN, None), mount, list(hosts), options,
                           workdir=str(tmp_path / 'work'), allow_run_as_root=True,
                           launcher_extra_args=(), shell=SHELL)
    return survey, node_state


def test_ior_argv():
    opts = ior.with_defaults({'block_size_mib': 64, 'repetitions': 3, 'stonewall_s': 30})
    point = {'access': 'fpp', 'nodes': 2, 'tasks_per_node': 4, 'tasks': 8, 'transfer_kib': 1024, 'segments': 5}
    assert ior.ior_argv(opts, point, '/mnt/l/ior_x/p/ior.dat') == [
        'ior', '-a', 'POSIX', '-w', '-r', '-C', '-e', '-F', '-t', '1024k', '-b', '64m', '-s', '5', '-i', '3',
        '-D', '30', '-O', 'stoneWallingWearOut=1', '-v', '-v', '-v', '-o', '/mnt/l/ior_x/p/ior.dat']
    opts = ior.with_defaults({'per_task_timings': False})
    assert '-v' not in ior.ior_argv(opts, point, '/mnt/l/ior_x/p/ior.dat')


def _stamps(iteration, access, task, start, seconds):
    # the six stamps of one task's phase, as parse_ior gives them
    return {'test': 0, 'iter': iteration, 'access': access, 'task': task, 'open_start': start,
            'open_stop': start, 'start': start, 'stop': start + seconds, 'close_start': start + seconds,
            'close_stop': start + seconds}


def test_per_client_rates_follow_the_block_placement_of_ranks():
    # 3 nodes x 2 tasks, 64 MiB per task: node 2 (ranks 4 and 5) takes four times as long in both phases
    run = {'task_timings': [_stamps(0, access, task, 100.0, 4.0 if task // 2 == 2 else 1.0)
                            for access in ('write', 'read') for task in range(6)]
           + [_stamps(1, 'write', task, 200.0, 2.0) for task in range(6)]
           + [_stamps(1, 'read', task, 200.0, 1.0) for task in range(6)]}
    clients = ior.per_client_rates(run, ['c1', 'c2', 'c3'], 2, 64 * ior.MIB)
    assert [(c['host'], c['node'], c['tasks']) for c in clients] == [
        ('c1', 0, [0, 1]), ('c2', 1, [2, 3]), ('c3', 2, [4, 5])]
    # 128 MiB per node: iteration 0 at 128 MiB/s (32 for c3), iteration 1 at 64 (write) and 128 (read)
    assert [c['ior_write_mib_s'] for c in clients] == [96.0, 96.0, 48.0]
    assert [c['ior_read_mib_s'] for c in clients] == [128.0, 128.0, 80.0]


def test_per_client_rates_without_stamps_or_with_one_missing():
    assert ior.per_client_rates({'task_timings': []}, ['c1'], 1, ior.MIB) is None
    assert ior.per_client_rates(None, ['c1'], 1, ior.MIB) is None
    cut = dict(_stamps(0, 'write', 1, 100.0, 1.0), close_stop=None)
    run = {'task_timings': [_stamps(0, 'write', 0, 100.0, 1.0), cut, _stamps(0, 'read', 0, 100.0, 1.0)]}
    clients = ior.per_client_rates(run, ['c1', 'c2'], 1, ior.MIB)
    assert [(c['ior_write_mib_s'], c['ior_read_mib_s']) for c in clients] == [(1.0, 1.0), (None, None)]


def test_cache_rule_raises_the_segment_count():
    opts = ior.with_defaults({'block_size_mib': 1024, 'memory_factor': 1.5, 'client_memory_mib': 65536})
    # 2 nodes x 64 GiB x 1.5 = 192 GiB over 8 tasks of 1 GiB blocks: 24 segments
    assert ior.segments_for(opts, 2, 8) == 24
    assert ior.segments_for(ior.with_defaults({'memory_factor': 0}), 2, 8) == 1


@pytest.mark.parametrize('options,hosts,message', [
    ({'access': ['fpp', 'both']}, 2, 'access: give one or both of fpp'),
    ({'block_size_mib': 1, 'transfer_sizes_kib': [256, 384]}, 2, 'transfer_sizes_kib: IOR needs the block'),
    ({'nodes': [1, 4]}, 2, 'nodes: 4 nodes asked but hosts lists only 2'),
    ({'memory_factor': 2}, 2, 'client_memory_mib: the cache rule'),
    ({'launcher': 'pbs'}, 2, 'launcher: must be mpirun or srun'),
    ({'partition': 'batch'}, 2, 'partition, account: Slurm settings need launcher srun'),
    ({'environment_modules': ['gcc; rm -rf /']}, 2, 'environment_modules: module names are single words'),
    ({'stripe_size_kib': 100}, 2, 'stripe_size_kib: must be a multiple of 64 KiB'),
    ({'tasks_per_node': [2, 1]}, 2, 'tasks_per_node: give the counts in increasing order'),
])
def test_bad_options_are_named(options, hosts, message):
    problems = ior.option_problems(options, hosts)
    assert any(str(problem).startswith(message) for problem in problems), problems


def _sweep(survey):
    survey.inspect()
    survey.setup()
    try:
        list(survey.run())
    finally:
        problems = survey.teardown()
    return problems


@pytest.mark.parametrize('launcher', ['mpirun', 'srun'])
def test_sweep_on_the_simulated_client_with_both_access_patterns(sim, mount, tmp_path, launcher):
    options = {'access': ['fpp', 'ssf'], 'nodes': [1, 2], 'tasks_per_node': [1, 2], 'launcher': launcher,
               'environment_modules': ['gcc', 'openmpi', 'ior'], 'stripe_count': 2, 'stripe_size_kib': 128}
    if launcher == 'srun':
        options.update(partition='batch', account='acct1')
    survey, node_state = survey_for(mount, tmp_path, **options)
    plan = survey.plan()
    assert len(plan['points']) == 2 * 2 * 2
    problems = _sweep(survey)
    assert problems == [] and survey.errors == []
    assert [(r['access'], r['nodes'], r['tasks_per_node']) for r in survey.records] == [
        (access, nodes, ppn) for access in ('fpp', 'ssf') for nodes in (1, 2) for ppn in (1, 2)]
    for record in survey.records:
        run = record['ior']
        assert (run['tasks'], run['nodes'], run['tasks_per_node']) == (
            record['tasks'], record['nodes'], record['tasks_per_node'])
        assert run['access'] == ('file-per-process' if record['access'] == 'fpp' else 'single-shared-file')
        assert record['ior_write_mib_s'] > 0 and record['ior_read_mib_s'] > 0
        assert record['read_from_own_cache'] == (record['nodes'] == 1)
        assert [client['host'] for client in record['per_client']] == record['hosts']
        assert all(client['ior_write_mib_s'] > 0 and client['ior_read_mib_s'] > 0 for client in record['per_client'])
        assert 'task_timings' not in run and record['placement'] == ior.PLACEMENT_RULE
    # the marked tree is gone and crossed off
    assert not os.path.exists(survey.tree)
    assert node_state.entries('paths') == []
    if launcher == 'srun':
        with open(os.path.join(sim.root, 'state', 'slurm.json')) as handle:
            jobs = json.load(handle)['jobs']
        assert [(job['nodes'], job['ntasks'], job['partition'], job['account'], job['modules']) for job in jobs][:2] == [
            (1, 1, 'batch', 'acct1', ['gcc', 'openmpi', 'ior']), (1, 2, 'batch', 'acct1', ['gcc', 'openmpi', 'ior'])]


def test_a_failing_launch_is_an_error_naming_the_point_and_the_tree_is_removed(sim, mount, tmp_path):
    survey, node_state = survey_for(mount, tmp_path, launcher='srun', partition='nosuch', nodes=[1])
    _sweep(survey)
    assert survey.records == []
    assert survey.errors[0]['point'] == {'access': 'fpp', 'nodes': 1, 'tasks_per_node': 1, 'transfer_kib': 256}
    assert 'Invalid partition name specified' in survey.errors[0]['message']
    assert not os.path.exists(survey.tree)


def test_unknown_module_fails_the_point(sim, mount, tmp_path):
    survey, _node_state = survey_for(mount, tmp_path, nodes=[1], access=['ssf'], environment_modules=['nosuch'])
    _sweep(survey)
    assert 'The following module(s) are unknown: "nosuch"' in survey.errors[0]['message']


def test_not_lustre_is_refused(sim, tmp_path):
    other = tmp_path / 'plain'
    other.mkdir()
    survey, _node_state = survey_for(str(other), tmp_path)
    with pytest.raises(EngineError, match='mount_point: .* is not a Lustre client mount'):
        survey.inspect()


def test_cleanup_removes_a_tree_left_by_a_killed_run_only_with_its_marker(sim, mount, tmp_path):
    survey, node_state = survey_for(mount, tmp_path)
    survey.inspect()
    survey.setup()
    os.mkdir(os.path.join(survey.tree, 'fpp-nodes1-ppn1-xfer256k'))
    # the run is killed here: nothing tears down; the standalone cleanup finds the record
    assert node_state.entries('paths')[0]['survey'] == 'ior'
    report = Cleanup(Runner(), node_state, include_iokit_leftovers=False, unload_modules=False).run()
    assert [item['path'] for item in report['removed']['paths']] == [survey.tree]
    assert not os.path.exists(survey.tree)
    # a tree whose marker names another run is kept
    other = os.path.join(mount, 'ior_other')
    os.mkdir(other)
    with open(os.path.join(other, ior.MARKER), 'w') as handle:
        handle.write('someone-else\n')
    node_state.record('paths', RUN, path=other, mount_point=mount, survey='ior', marker=ior.MARKER)
    again = Cleanup(Runner(), node_state, include_iokit_leftovers=False, unload_modules=False).run()
    assert [item['id'] for item in again['kept']] == [other] and os.path.exists(other)


def test_a_resumed_sweep_measures_only_the_points_the_killed_attempt_left(sim, mount, tmp_path):
    options = {'access': ['fpp', 'ssf'], 'nodes': [1, 2], 'tasks_per_node': [1]}
    first, unused_state = survey_for(mount, tmp_path, **options)
    done = killed_after(first, 3)
    survey, node_state = survey_for(mount, tmp_path, **options)
    survey.done_points = dict((survey.resume_key(record), record) for record in done)
    assert [survey.record_point(record) for record in done] == [
        {'access': access, 'nodes': nodes, 'tasks_per_node': 1, 'transfer_kib': 256}
        for access, nodes in (('fpp', 1), ('fpp', 2), ('ssf', 1))]
    assert _sweep(survey) == [] and survey.errors == []
    assert [(r['access'], r['nodes']) for r in survey.records] == [('ssf', 2)]
    # the tree of the killed attempt was made afresh and is gone
    assert not os.path.exists(survey.tree) and node_state.entries('paths') == []
