# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ior module run as Ansible runs it, on the simulated client: refusals naming the option, the check-mode plan,
a real sweep through srun with environment modules, the envelope, the tree removed."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

import pytest


@pytest.fixture
def sim_init_args(tmp_path):
    config = tmp_path / 'sim.yaml'
    config.write_text('osts: 2\nmdts: 1\nost_size_mib: 64\nclient_mount: %s\n'
                      'slurm: {partitions: [batch], nodes: 2}\nmodules: {available: [gcc, openmpi, ior]}\n'
                      % (tmp_path / 'mnt'))
    return ['--config', str(config)]


def args_for(tmp_path, **change):
    args = {'mount_point': str(tmp_path / 'mnt'), 'hosts': ['c1', 'c2'], 'block_size_mib': 1,
            'transfer_sizes_kib': [256], 'memory_factor': 0, 'run_id': 'ior-test', 'workdir': str(tmp_path / 'work'),
            'allow_run_as_root': True}
    args.update(change)
    return args


@pytest.mark.parametrize('change, message', [
    ({'engine': 'iokit'}, 'value of engine must be one of: native, got: iokit'),
    ({'memory_factor': 2}, 'client_memory_mib: the cache rule'),
    ({'nodes': [1, 3]}, 'nodes: 3 nodes asked but hosts lists only 2'),
    ({'partition': 'batch'}, 'partition, account: Slurm settings need launcher srun'),
    ({'directory': '../x'}, 'directory: give a path relative to mount_point'),
])
def test_bad_options_are_named(sim, run_as_ansible, tmp_path, change, message):
    result = run_as_ansible('ior', args_for(tmp_path, **change))
    assert result.get('failed') and message in result['msg'], result


def test_check_mode_plans_points_and_bytes(sim, run_as_ansible, tmp_path):
    result = run_as_ansible('ior', args_for(tmp_path, memory_factor=1.0, client_memory_mib=4, tasks_per_node=[1, 2]),
                            check_mode=True)
    plan = result['plan']
    # 2 access patterns x 2 node counts x 2 tasks per node; the cache rule sets 4 MiB per node at least
    assert len(plan['points']) == 8
    first = [(p['nodes'], p['tasks'], p['segments']) for p in plan['points'][:4]]
    assert first == [(1, 1, 4), (1, 2, 2), (2, 2, 4), (2, 4, 2)]
    assert plan['bytes_written'] == plan['bytes_read'] == 2 * (4 + 4 + 8 + 8) * 1024 * 1024
    assert plan['lines'][0] == '8 points; 0.05 GiB written and read'
    assert result['status'] == 'skipped' and not os.path.exists(plan['tree'])


def test_a_sweep_through_srun_with_environment_modules(sim, run_as_ansible, tmp_path):
    result = run_as_ansible('ior', args_for(tmp_path, launcher='srun', partition='batch', nodes=[1, 2],
                                            environment_modules=['gcc', 'openmpi', 'ior'],
                                            module_shell=['/bin/sh', '-c']))
    assert result.get('failed') is not True, result.get('msg')
    assert result['survey'] == 'ior' and result['status'] == 'ok'
    records = result['records']
    assert [(r['access'], r['nodes']) for r in records] == [('fpp', 1), ('fpp', 2), ('ssf', 1), ('ssf', 2)]
    assert all(r['ior_write_mib_s'] > 0 and r['ior_read_mib_s'] > 0 for r in records)
    assert records[1]['ior']['nodes'] == 2 and records[1]['ior']['access'] == 'file-per-process'
    assert not os.path.exists(result['plan']['tree'])
    with open(result['raw_output']) as handle:
        assert re.search(r'module load gcc openmpi ior && exec \S*srun -N 2 -n 2 --ntasks-per-node 1 -p batch ',
                         handle.read())


def test_a_rerun_of_a_killed_run_measures_only_the_missing_points(sim, run_as_ansible, tmp_path):
    args = args_for(tmp_path, nodes=[1, 2])
    first = run_as_ansible('ior', args)
    assert first['status'] == 'ok' and len(first['records']) == 4
    # what a kill after the second point leaves: two finished points, an attempt that never ended
    run_dir = tmp_path / 'work' / 'ior-test'
    lines = (run_dir / 'ior.points.jsonl').read_text().splitlines(True)
    (run_dir / 'ior.points.jsonl').write_text(''.join(lines[:2]))
    saved = json.loads((run_dir / 'ior.attempts.json').read_text())
    saved['attempts'][0]['finished'] = None
    (run_dir / 'ior.attempts.json').write_text(json.dumps(saved))
    second = run_as_ansible('ior', args)
    assert second.get('failed') is not True, second.get('msg')
    assert second['status'] == 'ok'
    records = second['envelope']['records']
    assert [(r['access'], r['nodes'], r['attempt']) for r in records] == [
        ('fpp', 1, 1), ('fpp', 2, 1), ('ssf', 1, 2), ('ssf', 2, 2)]
    assert [(item['attempt'], item['finished'] is None) for item in second['envelope']['attempts']] == [
        (1, True), (2, False)]
    # only the missing points ran: the raw output of this attempt has their two launches
    with open(second['raw_output']) as handle:
        assert len(re.findall(r'^# \S*mpirun --hostfile ', handle.read(), re.M)) == 2
    forced = run_as_ansible('ior', dict(args, force_rerun=True))
    assert [record['attempt'] for record in forced['records']] == [1, 1, 1, 1]
