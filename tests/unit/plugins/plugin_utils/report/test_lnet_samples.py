# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lnet envelopes (lst_survey records) as report samples: a split's node is the subject, problems are named."""

from __future__ import annotations

from ansible_collections.lustre.iokit.plugins.plugin_utils.report.samples import envelope_samples


def record(split, servers, write_mib_s, **change):
    data = {'mode': 'read_1m', 'split': split, 'servers': servers, 'clients': ['10.0.0.9@tcp'], 'read_mib_s': 1.5,
            'write_mib_s': write_mib_s, 'read_rpc_s': 900.0, 'write_rpc_s': 1800.0, 'server_errors': 0,
            'client_errors': 0, 'complete': True, 'error': None}
    data.update(change)
    return data


def envelope(*records):
    return {'schema': 'lustre.iokit/result/v1', 'run_id': 'r1', 'host': 'client1', 'survey': 'lnet',
            'status': 'ok', 'parameters': {}, 'records': list(records), 'errors': []}


def test_each_server_alone_is_its_own_subject_not_a_repeat():
    samples, problems = envelope_samples(envelope(
        record('all', ['10.0.0.1@tcp', '10.0.0.2@tcp'], 500.0),
        record('each_server', ['10.0.0.1@tcp'], 900.0),
        record('each_server', ['10.0.0.2@tcp'], 90.0)))
    writes = [(sample.target, sample.value, sample.iteration) for sample in samples if sample.test == 'write']
    assert writes == [(None, 500.0, 1), ('10.0.0.1@tcp', 900.0, 1), ('10.0.0.2@tcp', 90.0, 1)]
    assert set(sample.metric for sample in samples) == {'lnet_read_mib_s', 'lnet_write_mib_s'}
    assert samples[0].point_dict() == {'mode': 'read_1m'} and problems == []


def test_incomplete_records_and_error_nodes_are_problems():
    samples, problems = envelope_samples(envelope(
        record('each_client', ['10.0.0.1@tcp'], 400.0, clients=['10.0.0.5@tcp'], client_errors=1),
        record('all', ['10.0.0.1@tcp'], 10.0, complete=False, error='stopped after 1 of 3 samples')))
    assert [sample.target for sample in samples] == ['10.0.0.5@tcp', '10.0.0.5@tcp']
    assert problems == ['read_1m on 10.0.0.5@tcp: 1 client node(s) with LNet errors',
                        'read_1m: stopped after 1 of 3 samples']
