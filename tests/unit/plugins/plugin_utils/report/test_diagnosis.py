# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One finding per weak component, diagnosed across the layers: the grouping, each rule of the table on a
synthetic fleet built through the report's own sample extraction, and the new key of analysis.json and verdict.json."""

from __future__ import annotations

import itertools
import json
import os
import re
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.lustre.iokit.plugins.plugin_utils.report import analysis, criteria, diagnosis, run
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.samples import as_samples
from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import write_envelope
from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.report.helpers import (
    REPORT_TEMPLATES, RUN_ID, envelope, ior_clients, lnet_nodes, obdfilter_sweep, ost_survey, per_lun_sgpdd,
    per_mdt_mds, per_ost_obdfilter)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', '..', '..')
OSS = {'oss1': ('testfs-OST0000', 'testfs-OST0001'), 'oss2': ('testfs-OST0002', 'testfs-OST0003'),
       'oss3': ('testfs-OST0004', 'testfs-OST0005')}
DEVICES = ('/dev/sdb', '/dev/sdc')
# Each OST on its own LUN: OST0002 on oss2's sdb, OST0003 on oss2's sdc.
OST_LUNS = {ost: [(host, device)] for host, osts in OSS.items() for ost, device in zip(osts, DEVICES)}
SERVER_NIDS = {'192.0.2.11@tcp': 'oss1', '192.0.2.12@tcp': 'oss2', '192.0.2.13@tcp': 'oss3'}
CLIENT_NIDS = {'192.0.2.21@tcp': 'client1', '192.0.2.22@tcp': 'client2', '192.0.2.23@tcp': 'client3'}
NID_OWNERS = dict(SERVER_NIDS, **CLIENT_NIDS)
CONSOLE = 'client1'
ALL_SURVEYS = ('sgpdd', 'obdfilter', 'lnet', 'ost', 'ior')


def fleet(surveys=ALL_SURVEYS, slow=None):
    """The samples of three OSS with two OSTs and two LUNs each, an LNet test run from client1 between the three
    OSS and three clients, ost-survey from client1 and IOR over the three clients.

    ``slow`` makes components slow: ``{('obdfilter', 'testfs-OST0003'): 0.4, ('ost', 3): 0.4, ('sgpdd', 'oss2',
    '/dev/sdc'): 0.4, ('lnet', '192.0.2.12@tcp'): 0.3, ('ior', 'client2'): 0.4}``.
    """
    slow = slow or {}
    envelopes = []
    for host, osts in OSS.items():
        if 'obdfilter' in surveys:
            rates = {ost: slow.get(('obdfilter', ost), 1.0) for ost in osts}
            envelopes.append(envelope(host, 'obdfilter', per_ost_obdfilter(host, rates)))
        if 'sgpdd' in surveys:
            rates = {device: slow.get(('sgpdd', host, device), 1.0) for device in DEVICES}
            envelopes.append(envelope(host, 'sgpdd', per_lun_sgpdd(host, rates)))
    if 'ost' in surveys:
        envelopes.append(envelope(CONSOLE, 'ost', ost_survey({index: slow.get(('ost', index), 1.0)
                                                              for index in range(6)})))
    if 'lnet' in surveys:
        servers = {nid: slow.get(('lnet', nid), 1.0) for nid in SERVER_NIDS}
        clients = {nid: slow.get(('lnet', nid), 1.0) for nid in CLIENT_NIDS}
        envelopes.append(envelope(CONSOLE, 'lnet', lnet_nodes(servers, clients)))
    if 'ior' in surveys:
        clients = {host: slow.get(('ior', host), 1.0) for host in CLIENT_NIDS.values()}
        envelopes.append(envelope(CONSOLE, 'ior', ior_clients(clients)))
    return as_samples(envelopes)


def diagnose(samples, **mappings):
    return diagnosis.diagnose_components(samples, **mappings)


def only(found):
    assert len(found) == 1, [finding['text'] for finding in found]
    return found[0]


def own_metrics(finding):
    return {(row['survey'], row['metric']) for row in finding['evidence'] if not row['folded']}


# --------------------------------------------------------------------------
# Grouping


def test_a_slow_ost_low_in_four_metrics_and_its_oss_aggregate_is_one_finding():
    samples = fleet(slow={('obdfilter', 'testfs-OST0003'): 0.4, ('ost', 3): 0.4})
    # What the per-row findings say today: the OST four times, its OSS twice.
    assert len(analysis.weak_components(samples)) == 6
    finding = only(diagnose(samples, ost_luns=OST_LUNS, nid_owners=NID_OWNERS))
    assert (finding['kind'], finding['name'], finding['node']) == ('OST', 'testfs-OST0003', 'oss2')
    assert finding['share'] == pytest.approx(0.4) and finding['share_pct'] == pytest.approx(40.0)
    assert own_metrics(finding) == {('obdfilter', 'obdfilter_write_mib_s'), ('obdfilter', 'obdfilter_read_mib_s'),
                                    ('ost', 'ost_write_mib_s'), ('ost', 'ost_read_mib_s')}
    assert finding['folded'] == [{'kind': 'host', 'name': 'oss2', 'node': 'oss2', 'because': 'testfs-OST0003'}]
    host_rows = [row for row in finding['evidence'] if row['folded']]
    assert host_rows and all((row['kind'], row['subject'], row['because']) == ('host', 'oss2', 'testfs-OST0003')
                             for row in host_rows)
    assert all(row['share'] == pytest.approx(0.7) for row in host_rows)
    assert finding['text'].startswith('testfs-OST0003 (oss2): slow at the OST object layer (obdfilter), its LUNs '
                                      'are fine -> backend file system or OST configuration; low in obdfilter '
                                      'write 40 %, obdfilter read 40 %, ost write 40 %, ost read 40 %')
    assert finding['text'].endswith('oss2 is low because testfs-OST0003 is (obdfilter write 70 %, obdfilter read 70 %)')


def test_every_low_row_is_evidence_of_exactly_one_finding_with_its_value_median_and_share():
    samples = fleet(slow={('obdfilter', 'testfs-OST0003'): 0.4, ('ost', 3): 0.4, ('sgpdd', 'oss1', '/dev/sdb'): 0.5,
                          ('lnet', '192.0.2.13@tcp'): 0.3, ('ior', 'client3'): 0.5})
    outliers, judged = analysis.judge_points(samples)
    low = [row for row in outliers if row['direction'] == 'low']
    found = diagnosis.diagnose_components(samples, outliers, judged, nid_owners=NID_OWNERS, ost_luns=OST_LUNS)
    evidence = [row for finding in found for row in finding['evidence']]
    key = ('survey', 'metric', 'subject', 'point_label', 'value', 'median', 'share', 'peers')
    assert sorted(tuple(row[k] for k in key) for row in evidence) == sorted(tuple(row[k] for k in key) for row in low)
    assert all(isinstance(row['point'], dict) and row['unit'] == 'MiB/s' for row in evidence)


def test_a_host_low_while_each_of_its_components_is_fine_stays_a_host_finding():
    # Each OST of oss3 is as fast as its peers alone, but together they get half of what the others' get.
    samples = as_samples([envelope(host, 'obdfilter', per_ost_obdfilter(host, {ost: 1.0 for ost in osts},
                                                                        aggregate=0.5 if host == 'oss3' else 1.0))
                          for host, osts in OSS.items()])
    finding = only(diagnose(samples))
    assert (finding['kind'], finding['name'], finding['node'], finding['rule']) == ('host', 'oss3', 'oss3', 'host')
    assert finding['layers'] == {'components': 'fine'} and finding['folded'] == []
    assert finding['text'].startswith('oss3 (oss3): low as a whole while each of its components is fine -> the host '
                                      'itself: what its components share (CPU, memory, HBA, NIC); low in obdfilter '
                                      'write 50 %, obdfilter read 50 %')


def test_a_host_with_aggregates_only_says_it_cannot_tell_which_component():
    samples = as_samples([envelope('oss%d' % index, 'obdfilter', obdfilter_sweep(factor))
                          for index, factor in enumerate((1.0, 1.0, 0.5, 1.0), start=1)])
    finding = only(diagnose(samples))
    assert (finding['name'], finding['rule'], finding['layers']) == ('oss3', 'host-aggregates-only',
                                                                     {'components': 'not measured'})
    assert 'its survey gave host aggregates only: cannot tell which of its components' in finding['text']


def test_a_host_aggregate_only_survey_folds_into_the_hosts_slow_component_of_that_kind():
    # obdfilter gave host aggregates only; ost-survey names the slow OST, and ost_luns says it is oss2's.
    samples = as_samples([envelope(host, 'obdfilter', obdfilter_sweep(0.6 if host == 'oss2' else 1.0))
                          for host in OSS] + [envelope(CONSOLE, 'ost', ost_survey({0: 1, 1: 1, 2: 1, 3: 0.4}))])
    finding = only(diagnose(samples, ost_luns=OST_LUNS))
    assert (finding['name'], finding['node'], finding['rule']) == ('testfs-OST0003', 'oss2', 'ost-object-not-measured')
    assert finding['folded'] == [{'kind': 'host', 'name': 'oss2', 'node': 'oss2', 'because': 'testfs-OST0003'}]
    assert 'obdfilter did not measure it: cannot tell the OST from the network' in finding['text']


def test_a_slow_nid_names_the_node_that_owns_it_never_the_console():
    samples = fleet(surveys=('lnet',), slow={('lnet', '192.0.2.12@tcp'): 0.3})
    assert {row['subject'] for row in analysis.weak_components(samples)} == {'%s/192.0.2.12@tcp' % CONSOLE}
    finding = only(diagnose(samples, nid_owners=NID_OWNERS))
    assert (finding['kind'], finding['name'], finding['node'], finding['rule']) == ('NID', '192.0.2.12@tcp', 'oss2',
                                                                                    'nid')
    assert finding['text'].startswith('192.0.2.12@tcp (oss2): slow in the LNet self-test -> the NIC or link of oss2;'
                                      ' low in lnet write 30 %, lnet read 30 %')
    assert CONSOLE not in finding['text']


def test_a_nid_without_its_owner_says_so_instead_of_naming_the_console():
    finding = only(diagnose(fleet(surveys=('lnet',), slow={('lnet', '192.0.2.12@tcp'): 0.3})))
    assert finding['node'] is None
    assert finding['text'].startswith('192.0.2.12@tcp (its node (not in nid_owners)): slow in the LNet self-test -> '
                                      'the NIC or link of its node (not in nid_owners)')
    assert CONSOLE not in finding['text']


def test_an_ost_named_without_its_file_system_is_the_same_component():
    samples = fleet(surveys=('obdfilter',), slow={('obdfilter', 'testfs-OST0003'): 0.4})
    samples += as_samples([envelope(CONSOLE, 'ost', ost_survey({index: 0.4 if index == 3 else 1.0
                                                               for index in range(6)}, fsname=None))])
    assert {sample.target for sample in samples if sample.survey == 'ost'} >= {'OST0003'}
    finding = only(diagnose(samples))
    assert finding['name'] == 'testfs-OST0003' and ('ost', 'ost_write_mib_s') in own_metrics(finding)


def test_weakest_first_ties_in_the_order_found():
    samples = fleet(surveys=('obdfilter', 'lnet'), slow={('obdfilter', 'testfs-OST0001'): 0.5,
                                                         ('obdfilter', 'testfs-OST0004'): 0.5,
                                                         ('lnet', '192.0.2.22@tcp'): 0.3})
    found = diagnose(samples, nid_owners=NID_OWNERS)
    assert [finding['name'] for finding in found] == ['192.0.2.22@tcp', 'testfs-OST0001', 'testfs-OST0004']
    assert [finding['share'] for finding in found] == pytest.approx([0.3, 0.5, 0.5])


def test_the_findings_are_plain_json():
    samples = fleet(slow={('obdfilter', 'testfs-OST0003'): 0.4, ('lnet', '192.0.2.22@tcp'): 0.3})
    found = diagnose(samples, nid_owners=NID_OWNERS, ost_luns=OST_LUNS)
    assert json.loads(json.dumps(found, allow_nan=False)) == found
    assert set(found[0]) == {'kind', 'name', 'node', 'share', 'share_pct', 'rule', 'layer', 'diagnosis', 'points_at',
                             'look_at', 'layers', 'folded', 'metrics', 'evidence', 'text'}


def test_nothing_low_gives_no_finding():
    assert diagnose(fleet(), nid_owners=NID_OWNERS, ost_luns=OST_LUNS) == []


@pytest.mark.parametrize('mappings, message', [
    ({'nid_owners': ['192.0.2.11@tcp']}, 'nid_owners must map each NID'),
    ({'nid_owners': {'192.0.2.11@tcp': 1}}, 'nid_owners must map each NID'),
    ({'ost_luns': [('oss1', 'sdb')]}, 'ost_luns must map each OST'),
    ({'ost_luns': {'testfs-OST0000': 'oss1:/dev/sdb'}}, r'ost_luns.testfs-OST0000: each LUN must be a \[host, device\]'),
    ({'ost_luns': {'testfs-OST0000': [('oss1',)]}}, r'ost_luns.testfs-OST0000: each LUN must be a \[host, device\]'),
])
def test_malformed_mappings_are_errors_naming_them(mappings, message):
    with pytest.raises(ValueError, match=message):
        diagnose(fleet(surveys=('obdfilter',)), **mappings)


def test_ost_names_are_written_as_lustre_writes_them():
    assert diagnosis.ost_name('testfs-OST3') == 'testfs-OST0003'
    assert diagnosis.ost_name('OST000A') == 'OST000a'
    assert diagnosis.ost_name('testfs-MDT0000') == 'testfs-MDT0000'


# --------------------------------------------------------------------------
# The rules, each on a fleet where it applies


def test_rule_lun_under_target_folds_the_ost_and_the_oss_into_the_lun():
    samples = fleet(slow={('sgpdd', 'oss2', '/dev/sdc'): 0.4, ('obdfilter', 'testfs-OST0003'): 0.45, ('ost', 3): 0.45})
    finding = only(diagnose(samples, ost_luns=OST_LUNS, nid_owners=NID_OWNERS))
    assert (finding['kind'], finding['name'], finding['node'], finding['rule']) == ('LUN', 'sdc', 'oss2',
                                                                                    'lun-under-target')
    assert finding['layer'] == 'raw LUN (sgpdd)' and finding['points_at'] == 'the device or its path'
    assert {(part['kind'], part['name'], part['because']) for part in finding['folded']} == {
        ('OST', 'testfs-OST0003', 'sdc'), ('host', 'oss2', 'sdc'), ('host', 'oss2', 'testfs-OST0003')}
    assert finding['text'].startswith('sdc (oss2): slow at the raw device, and testfs-OST0003 on it is low too -> '
                                      'the device or its path; low in sgpdd write 40 %, sgpdd read 40 %')
    assert 'testfs-OST0003 is low because sdc is (obdfilter write 45 %, obdfilter read 45 %, ost write 45 %' \
        in finding['text']
    assert 'SCSI/medium errors' in finding['look_at']


def test_rule_lun_when_the_ost_on_it_is_fine():
    finding = only(diagnose(fleet(slow={('sgpdd', 'oss2', '/dev/sdc'): 0.4}), ost_luns=OST_LUNS))
    assert (finding['kind'], finding['name'], finding['rule']) == ('LUN', 'sdc', 'lun')
    assert finding['layers'] == {'LUN': 'low', 'target': 'fine'}


def test_rule_target_backend_when_its_luns_are_fine():
    finding = only(diagnose(fleet(slow={('obdfilter', 'testfs-OST0003'): 0.4}), ost_luns=OST_LUNS))
    assert (finding['rule'], finding['layers']['LUN'], finding['layer']) == (
        'target-backend', 'fine', 'the OST object layer (obdfilter)')
    assert finding['points_at'] == 'backend file system or OST configuration' and 'brw_stats' in finding['look_at']


@pytest.mark.parametrize('surveys, mappings, status, gap', [
    (('obdfilter',), {'ost_luns': OST_LUNS}, 'not measured', 'its LUNs were not (all) surveyed by sgpdd'),
    (('obdfilter',), {}, 'not measured', 'its LUNs were not (all) surveyed by sgpdd'),
    (('obdfilter', 'sgpdd'), {}, 'unknown', 'which LUNs back it is not known (ost_luns)'),
])
def test_rule_target_luns_not_measured_names_what_is_missing(surveys, mappings, status, gap):
    finding = only(diagnose(fleet(surveys, slow={('obdfilter', 'testfs-OST0003'): 0.4}), **mappings))
    assert (finding['rule'], finding['layers']['LUN']) == ('target-luns-not-measured', status)
    assert finding['diagnosis'] == ('slow at the OST object layer (obdfilter); %s: cannot tell the device from the '
                                    'OST configuration' % gap)


def test_rule_ost_network_folds_the_osss_osts_into_its_slow_nid():
    samples = fleet(slow={('ost', 2): 0.4, ('ost', 3): 0.4, ('lnet', '192.0.2.12@tcp'): 0.3})
    finding = only(diagnose(samples, nid_owners=NID_OWNERS, ost_luns=OST_LUNS))
    assert (finding['kind'], finding['name'], finding['node'], finding['rule']) == ('NID', '192.0.2.12@tcp', 'oss2',
                                                                                    'nid')
    assert finding['folded'] == [{'kind': 'OST', 'name': name, 'node': 'oss2', 'because': '192.0.2.12@tcp'}
                                 for name in ('testfs-OST0002', 'testfs-OST0003')]
    assert diagnosis.choose_rule('OST', {'LUN': 'fine', 'target': 'fine', 'network': 'low', 'clients': 'low'}).name \
        == 'ost-network'


def test_rule_ost_client_path_when_the_object_layer_and_lnet_are_fine():
    finding = only(diagnose(fleet(slow={('ost', 3): 0.4}), nid_owners=NID_OWNERS, ost_luns=OST_LUNS))
    assert (finding['name'], finding['rule']) == ('testfs-OST0003', 'ost-client-path')
    assert finding['layers'] == {'LUN': 'fine', 'target': 'fine', 'network': 'fine', 'clients': 'low'}
    assert finding['layer'] == 'OST from a client (ost-survey)' and 'max_rpcs_in_flight' in finding['look_at']


@pytest.mark.parametrize('surveys, mappings, gap', [
    (('obdfilter', 'ost'), {}, 'LNet did not measure the NIDs of oss2'),
    (('obdfilter', 'ost', 'lnet'), {}, 'the NIDs of oss2 are not known (nid_owners)'),
])
def test_rule_ost_network_not_measured(surveys, mappings, gap):
    finding = only(diagnose(fleet(surveys, slow={('ost', 3): 0.4}), **mappings))
    assert finding['rule'] == 'ost-network-not-measured'
    assert finding['diagnosis'] == ("fine at the OST object layer (obdfilter) but slow from the clients; %s: cannot "
                                    "tell the network from the OST's client path" % gap)


def test_rule_ost_object_not_measured_without_obdfilter():
    finding = only(diagnose(fleet(('ost',), slow={('ost', 3): 0.4})))
    assert (finding['name'], finding['node'], finding['rule']) == ('testfs-OST0003', None, 'ost-object-not-measured')
    assert finding['text'].startswith('testfs-OST0003 (its node (not known)): slow from the clients; obdfilter did '
                                      'not measure it: cannot tell the OST from the network')


def test_rule_client_network_folds_the_client_into_its_slow_nid():
    samples = fleet(slow={('ior', 'client2'): 0.4, ('lnet', '192.0.2.22@tcp'): 0.3})
    finding = only(diagnose(samples, nid_owners=NID_OWNERS, ost_luns=OST_LUNS))
    assert (finding['kind'], finding['name'], finding['node']) == ('NID', '192.0.2.22@tcp', 'client2')
    assert finding['folded'] == [{'kind': 'client', 'name': 'client2', 'node': 'client2',
                                  'because': '192.0.2.22@tcp'}]
    assert 'client2 is low because 192.0.2.22@tcp is (ior client write 40 %, ior client read 40 %)' in finding['text']


def test_rule_client_servers_when_a_server_component_is_weak_too():
    samples = fleet(slow={('ior', 'client2'): 0.4, ('obdfilter', 'testfs-OST0003'): 0.3})
    found = diagnose(samples, nid_owners=NID_OWNERS, ost_luns=OST_LUNS)
    assert [(finding['name'], finding['rule']) for finding in found] == [('testfs-OST0003', 'target-backend'),
                                                                         ('client2', 'client-servers')]
    assert found[1]['points_at'].startswith('the weak server components first')


def test_rule_client_network_not_measured():
    finding = only(diagnose(fleet(('obdfilter', 'ior'), slow={('ior', 'client2'): 0.4})))
    assert (finding['rule'], finding['layers']) == ('client-network-not-measured', {
        'client': 'low', 'network': 'not measured', 'servers': 'fine'})
    assert finding['diagnosis'] == ('slow from this client; LNet did not measure the NIDs of client2: cannot tell '
                                    'the client from its network')


def test_rule_client_servers_not_measured():
    samples = as_samples([envelope(CONSOLE, 'lnet', lnet_nodes({}, {nid: 1.0 for nid in CLIENT_NIDS})),
                          envelope(CONSOLE, 'ior', ior_clients({'client1': 1.0, 'client2': 0.4, 'client3': 1.0}))])
    finding = only(diagnose(samples, nid_owners=NID_OWNERS))
    assert (finding['rule'], finding['layers']['servers']) == ('client-servers-not-measured', 'not measured')
    assert 'no server component was surveyed: cannot tell the client from the servers' in finding['diagnosis']


def test_rule_client_when_everything_below_is_fine():
    finding = only(diagnose(fleet(slow={('ior', 'client2'): 0.4}), nid_owners=NID_OWNERS, ost_luns=OST_LUNS))
    assert (finding['kind'], finding['name'], finding['node'], finding['rule']) == ('client', 'client2', 'client2',
                                                                                    'client')
    assert finding['text'].startswith('client2 (client2): slow from this client while everything below it is fine '
                                      '-> the client or striping; low in ior client write 40 %, ior client read 40 %')
    assert 'lfs getstripe' in finding['look_at']


@pytest.mark.parametrize('mappings, rule, points_at', [
    ({}, 'target-luns-not-measured', 'the device or the MDT configuration'),
    ({'ost_luns': {'testfs-MDT0001': [('mds1', '/dev/sdc')]}}, 'target-backend',
     'backend file system or MDT configuration'),
])
def test_an_mdt_is_diagnosed_like_an_ost(mappings, rule, points_at):
    mdts = {'testfs-MDT0000': 1.0, 'testfs-MDT0001': 0.3, 'testfs-MDT0002': 1.0}
    samples = as_samples([envelope('mds1', 'mds', per_mdt_mds('mds1', mdts)),
                          envelope('mds1', 'sgpdd', per_lun_sgpdd('mds1', {'/dev/sdb': 1, '/dev/sdc': 1,
                                                                           '/dev/sdd': 1}))])
    finding = only(diagnose(samples, **mappings))
    assert (finding['kind'], finding['name'], finding['node'], finding['rule']) == ('MDT', 'testfs-MDT0001', 'mds1',
                                                                                    rule)
    assert finding['points_at'] == points_at and finding['layer'] == 'the MDT (mds-survey)'


def test_a_component_of_an_unknown_kind_falls_to_the_last_row():
    assert diagnosis.choose_rule('target', {}).name == 'low'


# --------------------------------------------------------------------------
# The table itself


def _combinations(kind):
    layers = diagnosis.KIND_LAYERS[kind]
    statuses = (diagnosis.LOW, diagnosis.FINE) + diagnosis.GAPS
    for values in itertools.product(statuses, repeat=len(layers)):
        yield dict(zip(layers, values))


# A component is in a finding only when it was low in one of its own layers.
_LOW_SOMEWHERE = {'OST': ('target', 'clients'), 'MDT': ('target',), 'LUN': ('LUN',), 'NID': ('network',),
                  'client': ('client',)}


@pytest.mark.parametrize('kind', sorted(diagnosis.KIND_LAYERS))
def test_every_possible_state_of_a_known_kind_has_a_row_of_its_own(kind):
    for layers in _combinations(kind):
        if kind != 'host' and not any(layers[layer] == diagnosis.LOW for layer in _LOW_SOMEWHERE[kind]):
            continue
        if kind == 'host' and layers['components'] == diagnosis.LOW:
            continue  # a low component explains the host: its row is folded, never a host finding
        rule = diagnosis.choose_rule(kind, layers)
        assert rule.name != 'low', (kind, layers)
        assert rule.gap is None or layers[rule.gap] in diagnosis.GAPS, (rule.name, layers)


def test_the_table_is_well_formed():
    names = [rule.name for rule in diagnosis.RULES]
    assert len(names) == len(set(names))
    placeholders = {'node', 'kind', 'target', 'gap', 'above', 'below'}
    for rule in diagnosis.RULES:
        assert set(re.findall(r'{(\w+)}', rule.diagnosis + rule.points_at)) <= placeholders, rule.name
        assert ('{gap}' in rule.diagnosis) == (rule.gap is not None), rule.name
        assert rule.fold in (None, diagnosis.LUN, diagnosis.NETWORK), rule.name
        assert set(rule.when) <= {layer for kind in rule.kinds for layer in diagnosis.KIND_LAYERS[kind]}, rule.name
    # Rows that fold point at a lower component whose own rows never fold: no chain, no cycle.
    assert not any(rule.fold for rule in diagnosis.RULES if set(rule.kinds) & {'LUN', 'NID'})


def test_every_rule_is_explained_in_the_docs():
    with open(os.path.join(ROOT, 'docs', 'diagnosis.md'), encoding='utf-8') as handle:
        text = handle.read()
    missing = [rule.name for rule in diagnosis.RULES if '`%s`' % rule.name not in text]
    assert missing == [], 'docs/diagnosis.md does not explain %s' % missing


# --------------------------------------------------------------------------
# In the report files


def _store(tmp_path, samples_envelopes):
    for item in samples_envelopes:
        write_envelope(str(tmp_path), item)
    return str(tmp_path)


def test_analysis_and_verdict_json_carry_the_components_beside_the_unchanged_findings(tmp_path):
    envelopes = [envelope(host, 'obdfilter', per_ost_obdfilter(host, {ost: 0.4 if ost.endswith('3') else 1.0
                                                                      for ost in osts}))
                 for host, osts in OSS.items()]
    store = _store(tmp_path, envelopes)
    result = run.generate(store, RUN_ID, REPORT_TEMPLATES, default_criteria=True,
                          ost_luns=OST_LUNS, nid_owners=NID_OWNERS)
    with open(result['files']['analysis'], encoding='utf-8') as handle:
        written = json.load(handle)
    assert len(written['findings']) == 4
    assert [(item['name'], item['rule']) for item in written['components']] == [('testfs-OST0003',
                                                                                 'target-luns-not-measured')]
    with open(result['files']['verdict'], encoding='utf-8') as handle:
        verdict = json.load(handle)
    assert verdict['components'] == written['components'] and verdict['verdict'] == 'failed'
    assert result['findings'] and 'components' not in result


def test_the_report_model_without_mappings_still_diagnoses(tmp_path):
    store = _store(tmp_path, [envelope(CONSOLE, 'lnet', lnet_nodes(
        {nid: 0.3 if nid.endswith('12@tcp') else 1.0 for nid in SERVER_NIDS}, {nid: 1.0 for nid in CLIENT_NIDS}))])
    model = run.build_report(run.load_run(store, RUN_ID))
    finding = only(model['components'])
    assert (finding['name'], finding['node']) == ('192.0.2.12@tcp', None)
    owned = run.build_report(run.load_run(store, RUN_ID), nid_owners=NID_OWNERS)
    assert only(owned['components'])['node'] == 'oss2'


# --------------------------------------------------------------------------
# What the report prints: the rows of the findings tables, the JUnit messages


def test_the_finding_rows_list_each_component_once_weakest_first_with_its_evidence_beneath():
    samples = fleet(slow={('obdfilter', 'testfs-OST0003'): 0.4, ('ost', 3): 0.4, ('lnet', '192.0.2.13@tcp'): 0.3})
    found = diagnose(samples, ost_luns=OST_LUNS, nid_owners=NID_OWNERS)
    rows = diagnosis.finding_rows(found)
    assert [(row['rank'], row['kind'], row['name'], row['node']) for row in rows] == [
        (1, 'NID', '192.0.2.13@tcp', 'oss3'), (2, 'OST', 'testfs-OST0003', 'oss2')]
    ost = rows[1]
    assert (ost['layer'], ost['points_at']) == ('the OST object layer (obdfilter)',
                                                'backend file system or OST configuration')
    assert ost['diagnosis'] == found[1]['diagnosis'] and ost['text'] == found[1]['text']
    assert ost['share_pct'] == pytest.approx(40.0) and 'brw_stats' in ost['look_at']
    # Its own rows in the order of the layers (obdfilter before ost-survey, write before read), then its OSS's.
    assert [(item['measured'], item['subject'], item['because']) for item in ost['evidence']] == [
        ('obdfilter write', 'oss2/testfs-OST0003', ''), ('obdfilter read', 'oss2/testfs-OST0003', ''),
        ('ost write', 'client1/testfs-OST0003', ''), ('ost read', 'client1/testfs-OST0003', ''),
        ('obdfilter write', 'oss2', 'oss2 is low because testfs-OST0003 is'),
        ('obdfilter read', 'oss2', 'oss2 is low because testfs-OST0003 is')]


def test_each_evidence_row_lists_every_low_point_in_sweep_order_with_its_share():
    samples = fleet(slow={('obdfilter', 'testfs-OST0003'): 0.4, ('ost', 3): 0.4})
    outliers, judged = analysis.judge_points(samples)
    found = diagnosis.diagnose_components(samples, outliers, judged, ost_luns=OST_LUNS, nid_owners=NID_OWNERS)
    rows = diagnosis.finding_rows(found)
    low = [row for row in outliers if row['direction'] == 'low']
    shown = [(item['survey'], item['metric'], item['subject'], point['point_label'])
             for row in rows for item in row['evidence'] for point in item['low_at']]
    # Every low point once, and nothing else.
    assert sorted(shown) == sorted((row['survey'], row['metric'], row['subject'], row['point_label']) for row in low)
    item = rows[0]['evidence'][0]
    labels = [point['point_label'] for point in item['low_at']]
    threads = [int(label.rsplit(' ', 1)[1]) for label in labels]
    assert len(threads) > 1 and threads == sorted(threads), labels
    assert all(point['share_pct'] == pytest.approx(40.0) for point in item['low_at'])
    assert item['low_at_text'] == ', '.join('%s 40 %%' % label for label in labels)
    assert item['low_points'] == len(labels) and item['points'] >= item['low_points']
    assert item['share_pct'] == pytest.approx(40.0) and item['value'] == pytest.approx(0.4 * item['median'])


def test_a_finding_row_says_when_the_node_is_not_known():
    samples = fleet(surveys=('lnet',), slow={('lnet', '192.0.2.12@tcp'): 0.3})
    row = only(diagnosis.finding_rows(diagnose(samples)))
    assert (row['kind'], row['name'], row['node']) == ('NID', '192.0.2.12@tcp', 'its node (not in nid_owners)')
    assert [item['subject'] for item in row['evidence']] == ['client1/192.0.2.12@tcp'] * 2


def test_no_finding_gives_no_rows_and_no_case_diagnosis():
    found = diagnose(fleet())
    assert found == [] and diagnosis.finding_rows(found) == [] and diagnosis.case_diagnoses(found) == {}


def test_each_low_subject_and_metric_maps_to_the_diagnosis_of_its_finding():
    samples = fleet(slow={('obdfilter', 'testfs-OST0003'): 0.4, ('ost', 3): 0.4})
    finding = only(diagnose(samples, ost_luns=OST_LUNS, nid_owners=NID_OWNERS))
    texts = diagnosis.case_diagnoses([finding])
    assert set(texts) == {(row['metric'], row['subject']) for row in finding['metrics']}
    own = texts[('obdfilter_write_mib_s', 'oss2/testfs-OST0003')]
    assert own == ('diagnosis: testfs-OST0003 (oss2): slow at the OST object layer (obdfilter), its LUNs are fine '
                   '-> backend file system or OST configuration (first weak at: the OST object layer (obdfilter))')
    assert texts[('ost_read_mib_s', 'client1/testfs-OST0003')] == own
    assert texts[('obdfilter_write_mib_s', 'oss2')] == 'oss2 is low because testfs-OST0003 is; ' + own


def _junit_cases(xml):
    root = ET.fromstring(xml)
    return {(case.get('classname'), case.get('name')): case for case in root.iter('testcase')}


def test_junit_keeps_one_case_per_component_and_metric_with_its_name_and_adds_the_diagnosis(tmp_path):
    envelopes = [envelope(host, 'obdfilter', per_ost_obdfilter(host, {ost: 0.4 if ost.endswith('3') else 1.0
                                                                      for ost in osts}))
                 for host, osts in OSS.items()]
    envelopes.append(envelope(CONSOLE, 'ost', ost_survey({index: 0.4 if index == 3 else 1.0 for index in range(6)})))
    store = _store(tmp_path, envelopes)
    loaded = run.load_run(store, RUN_ID)
    model = run.build_report(loaded, acceptance_criteria=criteria.effective_criteria(None, True),
                             ost_luns=OST_LUNS, nid_owners=NID_OWNERS)
    plain = criteria.evaluate(loaded.samples, criteria.effective_criteria(None, True), run_id=RUN_ID)
    with_diagnosis, without = _junit_cases(criteria.junit_xml(model['verdict'])), _junit_cases(criteria.junit_xml(plain))
    # The same test cases, by the names pipelines gate on, failing the same way.
    assert set(with_diagnosis) == set(without)
    failing = {key for key, case in without.items() if case.find('failure') is not None}
    assert failing == {key for key, case in with_diagnosis.items() if case.find('failure') is not None}
    assert {name for _classname, name in failing} == {
        'no low outlier among peers [oss2/testfs-OST0003]', 'no low outlier among peers [client1/testfs-OST0003]',
        'no low outlier among peers [oss2]'}
    assert len(failing) == 6  # obdfilter write and read, ost write and read, the OSS's write and read
    finding = only(model['components'])
    for key in failing:
        before, after = without[key].find('failure').get('message'), with_diagnosis[key].find('failure').get('message')
        assert after.startswith(before + ' - ') and 'diagnosis: testfs-OST0003 (oss2): ' + finding['diagnosis'] in after
        assert with_diagnosis[key].find('failure').text == after
        assert ('oss2 is low because testfs-OST0003 is' in after) == key[1].endswith('[oss2]')
    # Passing cases say what they said.
    for key in set(without) - failing:
        assert ET.tostring(with_diagnosis[key]) == ET.tostring(without[key])
    # verdict.json keeps every case's message, and gives the failed ones their diagnosis.
    assert [case['message'] for case in model['verdict']['cases']] == [case['message'] for case in plain['cases']]
    assert all(('diagnosis' in case) == (case['status'] == 'failed') for case in model['verdict']['cases'])


def test_a_failed_case_about_no_weak_component_keeps_its_message():
    verdict = {'verdict': 'failed', 'run_id': RUN_ID, 'baseline_run_id': None,
               'counts': {'tests': 1, 'passed': 0, 'failed': 1, 'skipped': 0},
               'cases': [{'kind': 'floors', 'criterion': 'floor', 'subject': 'oss1', 'metric': 'obdfilter_write_mib_s',
                          'value': 1.0, 'limit': 2.0, 'unit': 'MiB/s', 'status': 'failed', 'message': 'below'}]}
    criteria.add_diagnoses(verdict, {('obdfilter_write_mib_s', 'oss2'): 'diagnosis: elsewhere'})
    assert 'diagnosis' not in verdict['cases'][0]
    failure = ET.fromstring(criteria.junit_xml(verdict)).find('.//failure')
    assert failure.get('message') == 'below' and failure.text == 'below'


def _section(text, start, end):
    first = text.index(start)
    return text[first:text.index(end, first + len(start))]


def test_summary_and_html_open_with_one_row_per_component_and_keep_the_rows_further_down(tmp_path):
    envelopes = [envelope(host, 'obdfilter', per_ost_obdfilter(host, {ost: 0.4 if ost.endswith('3') else 1.0
                                                                      for ost in osts}))
                 for host, osts in OSS.items()]
    envelopes.append(envelope(CONSOLE, 'lnet', lnet_nodes(
        {nid: 0.3 if nid.endswith('11@tcp') else 1.0 for nid in SERVER_NIDS}, {nid: 1.0 for nid in CLIENT_NIDS})))
    store = _store(tmp_path, envelopes)
    result = run.generate(store, RUN_ID, REPORT_TEMPLATES, ost_luns=OST_LUNS, nid_owners=NID_OWNERS)
    with open(result['files']['markdown'], encoding='utf-8') as handle:
        summary = handle.read()
    table = _section(summary, '\n## Findings', '\n## ')
    components = [line for line in table.splitlines() if re.match(r'^\| [0-9]+ \|', line)]
    assert len(components) == 2, table
    assert components[0].startswith('| 1 | NID **192.0.2.11@tcp** | oss1 | network (LNet self-test) | slow in the '
                                    'LNet self-test | **the NIC or link of oss1** | 30 % |')
    assert components[1].startswith('| 2 | OST **testfs-OST0003** | oss2 | the OST object layer (obdfilter) |')
    evidence = table.split(components[1], 1)[1].splitlines()
    assert [line.split(' | ')[1] for line in evidence if line.startswith('| | ')] == [
        '↳ obdfilter write on oss2/testfs-OST0003', '↳ obdfilter read on oss2/testfs-OST0003',
        '↳ oss2 is low because testfs-OST0003 is: obdfilter write on oss2',
        '↳ oss2 is low because testfs-OST0003 is: obdfilter read on oss2']
    assert 'client1/192.0.2.11@tcp' in table.split(components[1], 1)[0]
    # The rows per component and metric are the detail, further down, as they were.
    detail = _section(summary, '\n## Low values per component and metric', '\n## ')
    assert len([line for line in detail.splitlines() if line.startswith(('| obdfilter |', '| lnet |'))]) == 6
    assert summary.index('\n## Findings') < summary.index('\n## Verdict') < summary.index('\n## Low values')
    with open(result['files']['html'], encoding='utf-8') as handle:
        html = handle.read()
    findings_html = _section(html, '<h2 id="findings">', '<h2 ')
    assert findings_html.count('<tr class="low component">') == 2
    assert findings_html.count('<tbody class="finding"') == 2
    assert 'oss2 is low because testfs-OST0003 is' in findings_html and 'the NIC or link of oss1' in findings_html
    assert findings_html.index('192.0.2.11@tcp') < findings_html.index('testfs-OST0003')
    detail_html = _section(html, '<h2 id="findings-detail">', '<h2 ')
    assert detail_html.count('<tr class="low">') == 6
    with open(result['files']['analysis'], encoding='utf-8') as handle:
        assert result['findings'] == [row['text'] for row in json.load(handle)['components']]


def test_a_hostile_component_name_stays_text_in_both_tables(tmp_path):
    # Host names are safe file names; target names come from the nodes' own output.
    hostile = '<b>OST|x'
    osts = dict(OSS, oss3=('testfs-OST0004', hostile))
    store = _store(tmp_path, [envelope(host, 'obdfilter', per_ost_obdfilter(
        host, {ost: 0.4 if ost == hostile else 1.0 for ost in names})) for host, names in osts.items()])
    result = run.generate(store, RUN_ID, REPORT_TEMPLATES)
    summary = open(result['files']['markdown'], encoding='utf-8').read()
    html = open(result['files']['html'], encoding='utf-8').read()
    assert '<b>OST' not in summary and '| OST **&lt;b&gt;OST\\|x** | oss3 |' in summary
    assert '<b>OST' not in html and '<td>OST <b>&lt;b&gt;OST|x</b></td>' in html
