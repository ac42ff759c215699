# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""mdtest envelopes (the mdtest module's sweep records) as report samples: each point keeps nodes x tasks per node."""

from __future__ import annotations

from ansible_collections.lustre.iokit.plugins.module_utils.sample_extraction import point_label
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.samples import envelope_samples


def record(step, nodes, tasks_per_node, create, stat=None):
    summary = {'file creation': {'max': create, 'min': create, 'mean': create, 'stddev': 0.0}}
    if stat is not None:
        summary['file stat'] = {'max': stat, 'min': stat, 'mean': stat, 'stddev': 1.0}
    return {'version': '3.3.0', 'tasks': nodes * tasks_per_node, 'nodes': nodes, 'iterations': 3, 'summary': summary,
            'unit': 'ops/sec', 'step': step, 'tasks_per_node': tasks_per_node, 'best_tasks_per_node': False}


def envelope(*records):
    return {'schema': 'lustre.iokit/result/v1', 'run_id': 'r1', 'host': 'client1', 'survey': 'mdtest',
            'status': 'ok', 'parameters': {}, 'records': list(records), 'errors': []}


def test_every_point_of_the_sweep_is_its_own_sample_with_nodes_and_tasks_per_node():
    samples, problems = envelope_samples(envelope(
        record('tasks_per_node', 1, 1, 1000.0, stat=9000.0), record('tasks_per_node', 1, 4, 3000.0),
        # two points with the same task count: 4 tasks on 1 node and 2 x 2 are different points
        record('nodes', 2, 2, 3500.0)))
    creates = [(sample.point_dict(), sample.value) for sample in samples if sample.test == 'file creation']
    assert creates == [({'nodes': 1, 'tasks_per_node': 1, 'tasks': 1}, 1000.0),
                       ({'nodes': 1, 'tasks_per_node': 4, 'tasks': 4}, 3000.0),
                       ({'nodes': 2, 'tasks_per_node': 2, 'tasks': 4}, 3500.0)]
    assert {sample.metric for sample in samples} == {'mdtest_file_creation_ops_s', 'mdtest_file_stat_ops_s'}
    assert point_label(samples[-1].point) == 'nodes 2 ppn 2 tasks 4'
    assert problems == []
