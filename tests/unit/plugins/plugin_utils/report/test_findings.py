# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one rule of a weak component, per-component subjects, the default criteria and the findings in every file."""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import write_envelope
from ansible_collections.lustre.iokit.plugins.plugin_utils.report import analysis, criteria, findings, run
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.samples import envelope_samples
from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.report.helpers import (
    REPORT_TEMPLATES, RUN_ID, envelope, sgpdd_sweep)

OSTS = ['testfs-OST0000', 'testfs-OST0001', 'testfs-OST0002']


def _rule(**kwargs):
    return findings.Rule.make(**kwargs)


@pytest.mark.parametrize('values, weak', [
    ([300.0, 300.0, 87.0], 2),          # 29 % of two equal peers
    ([300.0, 290.0, 87.0], 2),          # with some spread among the healthy ones
    ([300.0, 250.0, 87.0], 2),          # a wide spread: the share still catches it
    ([100.0, 100.0, 100.0, 96.0], None),  # within 5 %: never, even with a MAD of 0
    ([100.0, 99.0, 101.0, 95.5], None),
    ([100.0, 100.0], None),             # two are not enough peers
    ([300.0, 299.0, 276.0], None),      # 8 % below two near-equal peers: noise among three, not a finding
    ([300.0] * 6 + [299.0] * 6 + [276.0], 12),  # the same among thirteen: the robust z-score flags it
])
def test_the_rule(values, weak):
    stats = findings.peer_stats(values)
    flagged = [index for index, value in enumerate(values) if findings.judge(value, stats, _rule())]
    assert flagged == ([] if weak is None else [weak])


def test_within_five_percent_is_never_an_outlier_whatever_the_knobs():
    values = [1000.0] * 50 + [951.0]
    stats = findings.peer_stats(values)
    assert findings.judge(951.0, stats, _rule(threshold=0.1, slow_share=0.99)) is None
    assert findings.judge(949.0, stats, _rule(threshold=0.1, slow_share=0.99))['direction'] == 'low'


def test_bad_knobs_are_errors_naming_them():
    with pytest.raises(ValueError, match='slow share'):
        _rule(slow_share=1.5)
    with pytest.raises(ValueError, match='threshold'):
        _rule(threshold=0)


def native_obdfilter(rates, host='oss1', osts=None):
    """Records as the native engine stores them: the host's aggregate and each OST's own figures."""
    osts = osts or OSTS
    records = []
    for thr in (1, 2, 4):
        factor = thr / 4.0
        per_ost = {ost: {'write': {'mib_s': rate * factor, 'status': 'ok'}, 'read': {'mib_s': rate * factor,
                                                                                     'status': 'ok'}}
                   for ost, rate in zip(osts, rates)}
        total = sum(rates) * factor
        records.append({'ost': len(rates), 'size_kib': 3 * 65536, 'rsz_kib': 1024, 'obj': len(rates),
                        'thr': thr * len(rates), 'case': 'disk', 'host': host, 'skipped': False, 'error': None,
                        'obj_per_ost': 1, 'thr_per_ost': thr, 'targets': list(osts[:len(rates)]),
                        'tests': {'write': {'mib_s': total, 'status': 'ok'}, 'read': {'mib_s': total, 'status': 'ok'}},
                        'per_ost': per_ost})
    return records


def test_native_obdfilter_gives_the_host_aggregate_and_each_ost():
    samples = envelope_samples(envelope('oss1', 'obdfilter', native_obdfilter([300, 300, 60])))[0]
    assert {s.target for s in samples} == {None, *OSTS}
    kinds = {findings.component_kind(s.survey, s.target) for s in samples}
    assert kinds == {'host', 'OST'}


def test_one_host_with_three_osts_has_peers_and_names_the_slow_one():
    samples = envelope_samples(envelope('oss1', 'obdfilter', native_obdfilter([300, 300, 60])))[0]
    weak = analysis.weak_components(samples)
    assert [(row['subject'], row['metric']) for row in weak] == [('oss1/testfs-OST0002', 'obdfilter_read_mib_s'),
                                                                 ('oss1/testfs-OST0002', 'obdfilter_write_mib_s')]
    row = weak[1]
    assert row['kind'] == 'OST' and row['share_pct'] == pytest.approx(20.0) and row['low_points'] == 3
    assert row['points'] == 3 and 'brw_stats' in row['next']
    text = findings.finding_text(row)
    assert 'testfs-OST0002' in text and 'obdfilter' in text and '20 %' in text


def _store(tmp_path, envelopes):
    store = str(tmp_path)
    for item in envelopes:
        write_envelope(store, item)
    return store


def _generate(store, **kwargs):
    return run.generate(store, RUN_ID, REPORT_TEMPLATES, **kwargs)


def test_default_criteria_fail_a_slow_ost_everywhere(tmp_path):
    store = _store(tmp_path, [envelope('oss1', 'obdfilter', native_obdfilter([300, 300, 60]))])
    result = _generate(store, expected={'obdfilter': ['oss1']}, default_criteria=True)
    assert result['verdict'] == 'failed'
    assert any('testfs-OST0002' in line for line in result['findings'])
    junit = ET.parse(result['files']['junit']).getroot()
    failures = [f.get('message') for f in junit.iter('failure')]
    assert failures and all('testfs-OST0002' in m and 'obdfilter' in m and 'peer median' in m and '20 %' in m
                            and 'limit 0' in m for m in failures)
    html = open(result['files']['html'], encoding='utf-8').read()
    first = html.index('<h2')
    assert html[first:].startswith('<h2 id="findings">Findings</h2>')
    assert 'testfs-OST0002' in html[first:html.index('<h2', first + 1)]
    summary = open(result['files']['markdown'], encoding='utf-8').read()
    first = summary.index('\n## ')
    assert summary[first:].startswith('\n## Findings')
    assert 'oss1/testfs-OST0002' in summary[first:summary.index('\n## ', first + 1)]
    analysis_json = json.load(open(result['files']['analysis'], encoding='utf-8'))
    assert {row['subject'] for row in analysis_json['findings']} == {'oss1/testfs-OST0002'}
    verdict = json.load(open(result['files']['verdict'], encoding='utf-8'))
    assert verdict['verdict'] == 'failed'


def test_all_equal_passes_with_a_case_of_every_default_criterion(tmp_path):
    store = _store(tmp_path, [envelope('oss1', 'obdfilter', native_obdfilter([300, 300, 300])),
                              envelope('oss1', 'sgpdd', sgpdd_sweep(peak_write=1000.0, peak_read=1000.0))])
    result = _generate(store, expected={'obdfilter': ['oss1'], 'sgpdd': ['oss1']}, default_criteria=True)
    verdict = json.load(open(result['files']['verdict'], encoding='utf-8'))
    assert verdict['verdict'] == 'passed', verdict['failures']
    passed = {case['kind'] for case in verdict['cases'] if case['status'] == 'passed'}
    assert passed == {'completeness', 'outliers', 'ratios'}
    summary = open(result['files']['markdown'], encoding='utf-8').read()
    assert 'No finding: no component is low among its peers.' in summary


def test_user_criteria_replace_the_defaults_when_asked():
    user = {'floors': [{'metric': 'obdfilter_write_mib_s', 'min': 1}]}
    assert criteria.effective_criteria(user, False)['outliers'] == []
    merged = criteria.effective_criteria(user, True)
    assert merged['floors'] == user['floors'] and merged['outliers'] and len(merged['ratios']) == 2
    assert criteria.effective_criteria(None, False) is None


def test_zero_checks_is_no_verdict_in_every_file(tmp_path):
    store = _store(tmp_path, [envelope('oss1', 'obdfilter', native_obdfilter([300, 300, 60]))])
    result = _generate(store, acceptance_criteria={}, default_criteria=False)
    assert result['verdict'] == 'no verdict'
    assert json.load(open(result['files']['verdict'], encoding='utf-8'))['verdict'] == 'no verdict'
    junit = ET.parse(result['files']['junit']).getroot()
    assert junit.get('errors') == '1' and 'no verdict' in next(junit.iter('error')).get('message')
    html = open(result['files']['html'], encoding='utf-8').read()
    assert 'class="verdict no-verdict"' in html and 'class="verdict passed"' not in html


def _mds(rates):
    return [{'mdt': len(rates), 'file': 1000, 'dir': 1, 'thr': thr, 'host': 'mds1', 'tests': {
        'create': {'ops_s': sum(rates) * thr, 'status': 'ok'}},
        'per_mdt': [{'target': 'testfs-MDT%04x' % index, 'index': index,
                     'tests': {'create': {'ops_s': rate * thr, 'status': 'ok'}}} for index, rate in enumerate(rates)]}
        for thr in (1, 2)]


def _sgpdd(rates):
    devices = ['/dev/loop%d' % index for index in range(len(rates))]
    return [{'dev': len(rates), 'size_kib': 65536, 'rsz_kib': 1024, 'crg': len(rates), 'thr': 2 * len(rates),
             'crg_per_dev': 1, 'thr_per_dev': 2, 'devices': devices, 'enomem': False,
             'tests': {'write': {'mib_s': sum(rates), 'status': 'ok', 'devices': [
                 {'device': device, 'failed': 0, 'min_mib_s': rate, 'max_mib_s': rate}
                 for device, rate in zip(devices, rates)]}}}]


def _lnet(rates):
    nids = ['192.0.2.%d@tcp' % (index + 1) for index in range(len(rates))]
    return [{'mode': 'read', 'servers': nids, 'clients': ['192.0.2.100@tcp'], 'read_mib_s': sum(rates),
             'write_mib_s': 0.0, 'complete': True, 'split': 'all',
             'nodes': [{'nid': nid, 'role': 'server', 'read_mib_s': rate, 'write_mib_s': 0.0, 'errors': None}
                       for nid, rate in zip(nids, rates)]
             + [{'nid': '192.0.2.100@tcp', 'role': 'client', 'read_mib_s': sum(rates), 'write_mib_s': 0.0,
                 'errors': None}]}]


@pytest.mark.parametrize('survey, records, slow, kind', [
    ('mds', _mds([5000, 5000, 1000]), 'mds1/testfs-MDT0002', 'MDT'),
    ('sgpdd', _sgpdd([400, 400, 90]), 'oss1/loop2', 'LUN'),
    ('lnet', _lnet([1100, 1100, 300]), 'client1/192.0.2.3@tcp', 'NID'),
])
def test_each_kind_of_component_is_judged_among_its_peers(survey, records, slow, kind):
    host = {'mds': 'mds1', 'sgpdd': 'oss1', 'lnet': 'client1'}[survey]
    samples = envelope_samples(envelope(host, survey, records))[0]
    weak = analysis.weak_components(samples)
    assert {row['subject'] for row in weak} == {slow}
    assert {row['kind'] for row in weak} == {kind}


def test_csv_cells_never_start_a_formula(tmp_path):
    # Host names are restricted to safe file names; target names come from the nodes' own output.
    osts = ['=HYPERLINK("x")', '+1+1', '@SUM(A1)']
    store = _store(tmp_path, [envelope('oss1', 'obdfilter', native_obdfilter([300, 300, 300], osts=osts))])
    result = _generate(store)
    rows = list(csv.reader(open(result['files']['csv'], encoding='utf-8')))
    cells = [cell for row in rows[1:] for cell in row]
    assert "'=HYPERLINK(\"x\")" in cells and "'+1+1" in cells and "'@SUM(A1)" in cells
    assert not any(cell[:1] in ('=', '+', '@', '\t', '\r') for cell in cells)
    assert run.csv_cell('-1+2') == "'-1+2" and run.csv_cell('\tx') == "'\tx" and run.csv_cell('oss1') == 'oss1'


def test_summary_md_carries_no_raw_html_from_names(tmp_path):
    osts = ['testfs-OST0000', 'testfs-OST0001', '<img src=x onerror=alert(1)>']
    store = _store(tmp_path, [envelope('oss1', 'obdfilter', native_obdfilter([300, 300, 60], osts=osts))])
    result = _generate(store, expected={'obdfilter': ['oss1']}, default_criteria=True)
    summary = open(result['files']['markdown'], encoding='utf-8').read()
    assert '<img' not in summary
    assert 'oss1/&lt;img src=x onerror=alert(1)&gt;' in summary
