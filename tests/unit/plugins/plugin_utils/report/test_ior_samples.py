# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""ior envelopes (the ior module's sweep records) as report samples, and a floor on ior_write_mib_s."""

from __future__ import annotations

from ansible_collections.lustre.iokit.plugins.plugin_utils.report import analysis, charts, criteria, findings
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.samples import envelope_samples

RUN_ID = 'r-ior'


def record(access, nodes, tasks_per_node, write, read, transfer_kib=1024):
    return {'access': access, 'nodes': nodes, 'tasks_per_node': tasks_per_node, 'tasks': nodes * tasks_per_node,
            'transfer_kib': transfer_kib, 'segments': 1, 'ior_write_mib_s': write, 'ior_read_mib_s': read,
            'read_from_own_cache': nodes == 1}


def envelope(*records):
    return {'schema': 'lustre.iokit/result/v1', 'run_id': RUN_ID, 'host': 'client1', 'survey': 'ior',
            'status': 'ok', 'parameters': {}, 'records': list(records), 'errors': []}


def test_every_point_per_access_pattern_gives_write_and_read_samples():
    samples, problems = envelope_samples(envelope(
        record('fpp', 1, 4, 900.0, 1100.0), record('fpp', 2, 4, 1700.0, 2000.0), record('ssf', 2, 4, 800.0, None)))
    assert {sample.metric for sample in samples} == {'ior_write_mib_s', 'ior_read_mib_s'}
    writes = [(sample.point_dict(), sample.value) for sample in samples if sample.test == 'write']
    assert writes == [({'access': 'fpp', 'nodes': 1, 'tasks_per_node': 4, 'transfer_kib': 1024}, 900.0),
                      ({'access': 'fpp', 'nodes': 2, 'tasks_per_node': 4, 'transfer_kib': 1024}, 1700.0),
                      ({'access': 'ssf', 'nodes': 2, 'tasks_per_node': 4, 'transfer_kib': 1024}, 800.0)]
    assert problems == []


def test_a_point_without_any_bandwidth_is_a_problem():
    samples, problems = envelope_samples(envelope(record('ssf', 2, 1, None, None)))
    assert samples == [] and problems == ['ssf on 2 node(s): no bandwidth']


def test_a_floor_on_aggregate_write_names_metric_value_and_limit():
    envelopes = [envelope(record('fpp', 1, 4, 900.0, 1100.0), record('fpp', 2, 4, 1700.0, 2000.0))]
    verdict = criteria.evaluate(envelopes, {'floors': [{'metric': 'ior_write_mib_s', 'min': 2500}]})
    assert verdict['verdict'] == 'failed'
    message = verdict['failures'][0]
    for part in ('ior_write_mib_s', 'client1', '1700.00 MiB/s', 'below the floor 2500', RUN_ID):
        assert part in message, message
    verdict = criteria.evaluate(envelopes, {'floors': [{'metric': 'ior_write_mib_s', 'min': 1500}]})
    assert verdict['verdict'] == 'passed'


def test_the_charts_scale_over_client_nodes_one_curve_per_access_transfer_and_tasks_per_node():
    samples, unused_problems = envelope_samples(envelope(
        record('fpp', 1, 4, 900.0, 1100.0), record('fpp', 2, 4, 1700.0, 2000.0),
        record('ssf', 1, 4, 500.0, 600.0), record('ssf', 2, 4, 800.0, 1000.0)))
    table = analysis.PointTable(samples)
    fleet = {chart['id']: chart for chart in charts.fleet_line_charts(table)}
    assert set(fleet) == {'fleet-ior_write_mib_s', 'fleet-ior_read_mib_s'}
    write = fleet['fleet-ior_write_mib_s']
    assert write['x_label'] == 'client nodes (log2 scale)'
    assert sorted(series['label'] for series in write['series']) == ['fpp ppn 4 xfer 1024K', 'ssf ppn 4 xfer 1024K']
    hosts = {chart['id'] for chart in charts.host_line_charts(table, max_hosts=8)}
    assert hosts == {'host-client1-ior_write_mib_s', 'host-client1-ior_read_mib_s'}


def with_clients(rec, writes, reads):
    # per_client as the ior module gives it with per_task_timings: one entry per client node in host order
    hosts = ['client%d' % (index + 1) for index in range(len(writes))]
    rec = dict(rec, hosts=hosts, per_client=[
        {'host': host, 'node': index, 'tasks': [index], 'ior_write_mib_s': write, 'ior_read_mib_s': read}
        for index, (host, write, read) in enumerate(zip(hosts, writes, reads))])
    return rec


def test_per_client_figures_are_client_components_and_the_slow_client_is_named():
    samples, problems = envelope_samples(envelope(
        with_clients(record('fpp', 3, 1, 900.0, 1100.0), [400.0, 400.0, 100.0], [500.0, 480.0, 120.0]),
        with_clients(record('fpp', 3, 1, 950.0, 1150.0, transfer_kib=4096), [420.0, 410.0, 120.0], [None, 500.0, 150.0])))
    assert problems == []
    clients = [sample for sample in samples if sample.target is not None]
    assert {sample.metric for sample in clients} == {'ior_client_write_mib_s', 'ior_client_read_mib_s'}
    assert len(clients) == 11
    assert findings.component_kind('ior', 'client3') == 'client'
    weak = analysis.weak_components(samples)
    assert {(row['subject'], row['kind']) for row in weak} == {('client1/client3', 'client')}
    assert {row['metric'] for row in weak} == {'ior_client_write_mib_s', 'ior_client_read_mib_s'}
    assert 'client3' in findings.finding_text(weak[0])


def test_a_floor_on_the_aggregate_is_not_held_against_one_clients_share():
    envelopes = [envelope(with_clients(record('fpp', 3, 1, 1800.0, 2000.0), [600.0, 600.0, 600.0],
                                       [700.0, 650.0, 650.0]))]
    verdict = criteria.evaluate(envelopes, {'floors': [{'metric': 'ior_write_mib_s', 'min': 1500}]})
    assert verdict['verdict'] == 'passed'


def test_without_per_client_figures_ior_stays_host_level():
    samples, unused_problems = envelope_samples(envelope(dict(record('fpp', 2, 1, 900.0, 1100.0), per_client=None)))
    assert {sample.target for sample in samples} == {None}
    # one client alone: its figure is the aggregate again, no component
    samples, unused_problems = envelope_samples(envelope(with_clients(record('fpp', 1, 2, 900.0, 1100.0), [900.0],
                                                                      [1100.0])))
    assert {sample.target for sample in samples} == {None}
