# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A run directory in, report files out: bad and partial input still gives a report that says what is missing."""

from __future__ import annotations

import csv
import json
import os
import xml.etree.ElementTree as ET

import pytest
import yaml

from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import write_envelope
from ansible_collections.lustre.iokit.plugins.plugin_utils.report import run

from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.report.helpers import (
    REPORT_TEMPLATES, RUN_ID, envelope, obdfilter_sweep)


@pytest.fixture
def store(tmp_path, fleet_envelopes):
    for item in fleet_envelopes:
        write_envelope(str(tmp_path), item)
    return str(tmp_path)


def _generate(store, **kwargs):
    return run.generate(store, RUN_ID, REPORT_TEMPLATES, **kwargs)


def _read(path):
    with open(path, encoding='utf-8') as handle:
        return handle.read()


def test_every_report_file_is_written_and_consistent(store):
    summary = _generate(store)
    files = summary['files']
    assert sorted(files) == ['analysis', 'csv', 'html', 'markdown', 'samples']
    assert all(os.path.dirname(path) == os.path.join(store, RUN_ID) for path in files.values())
    lines = [json.loads(line) for line in _read(files['samples']).splitlines()]
    assert len(lines) == summary['samples'] > 0
    assert {line['survey'] for line in lines} == {'obdfilter', 'sgpdd', 'mds', 'ost'}
    assert set(lines[0]) == {'run_id', 'survey', 'test', 'metric', 'value', 'unit', 'host', 'target', 'point',
                             'iteration', 'status'}
    with open(files['csv'], encoding='utf-8', newline='') as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(lines) and {'thr', 'obj', 'crg', 'unit', 'value'} <= set(rows[0])
    assert sorted(float(row['value']) for row in rows) == sorted(line['value'] for line in lines)
    analysis = json.loads(_read(files['analysis']))
    assert {row['subject'] for row in analysis['outliers']} == {'oss3', 'client1/testfs-OST0003'}
    assert summary['verdict'] is None and summary['outliers'] == len(analysis['outliers'])
    html = _read(files['html'])
    assert html.count('<svg') >= 6 and 'MiB/s' in html and 'ops/s' in html and '<script' in html
    assert 'http://' not in html.replace('http://www.w3.org/2000/svg', '') and 'https://' not in html
    assert 'oss3' in html and 'testfs-OST0003' in html
    assert 'NO CRITERIA' in html
    assert '| obdfilter | obdfilter_write_mib_s | MiB/s | 4 |' in _read(files['markdown'])


def test_corrupt_partial_missing_and_one_survey_runs_still_report(tmp_path):
    store = str(tmp_path)
    write_envelope(store, envelope('oss1', 'obdfilter', obdfilter_sweep()))
    write_envelope(store, envelope('oss2', 'obdfilter', obdfilter_sweep()[:3], errors=['lctl test_brw: <b>Cannot allocate memory</b>']))
    write_envelope(store, envelope('oss4', 'obdfilter', [], errors=['echo_client attach failed']))
    corrupt = tmp_path / RUN_ID / 'oss3' / 'obdfilter.json'
    corrupt.parent.mkdir()
    corrupt.write_text('{"schema": "lustre.iokit/result/v1", "records": [', encoding='utf-8')
    summary = _generate(store, expected={'obdfilter': ['oss1', 'oss2', 'oss3', 'oss4', 'oss5']},
                        acceptance_criteria={'floors': [{'metric': 'obdfilter_write_mib_s', 'min': 10}]})
    assert [item['path'] for item in summary['unreadable']] == [os.path.join('oss3', 'obdfilter.json')]
    assert {(item['host'], item['kind']) for item in summary['missing']} == {
        ('oss3', 'unreadable'), ('oss4', 'failed'), ('oss5', 'absent')}
    assert {(item['host'], item['status']) for item in summary['partial']} == {('oss2', 'partial'), ('oss4', 'failed')}
    assert summary['verdict'] == 'failed'
    assert any('oss5: no result in the run directory' in failure for failure in summary['failures'])
    assert any('oss3/obdfilter.json is unusable: not valid JSON' in failure for failure in summary['failures'])
    html = _read(summary['files']['html'])
    assert 'oss3/obdfilter.json' in html and 'not valid JSON' in html
    assert 'oss2 is <b>partial</b>' in html
    # An error message is text, never markup.
    assert '&lt;b&gt;Cannot allocate memory&lt;/b&gt;' in html and '<b>Cannot' not in html
    markdown = _read(summary['files']['markdown'])
    assert 'oss5: no result in the run directory' in markdown and '`oss3/obdfilter.json`' in markdown
    assert 'obdfilter on oss4 is failed: echo_client attach failed' in markdown
    junit = ET.parse(summary['files']['junit']).getroot()
    assert junit.find(".//testsuite[@name='lustre.iokit acceptance.completeness']") is not None


def test_an_empty_run_directory_gives_an_empty_report(tmp_path):
    (tmp_path / RUN_ID).mkdir()
    summary = _generate(str(tmp_path))
    assert summary['samples'] == 0 and summary['surveys'] == []
    html = _read(summary['files']['html'])
    assert 'No survey of this run has a thread sweep to plot' in html


def test_baseline_made_from_one_run_compares_the_next(tmp_path):
    store = str(tmp_path)
    for host in ('oss1', 'oss2'):
        write_envelope(store, envelope(host, 'obdfilter', obdfilter_sweep(1.0), run_id='run-a'))
    write_envelope(store, envelope('oss1', 'obdfilter', obdfilter_sweep(1.0), run_id='run-b'))
    write_envelope(store, envelope('oss2', 'obdfilter', obdfilter_sweep(0.7), run_id='run-b'))
    made = run.generate(store, 'run-a', REPORT_TEMPLATES, make_baseline=True)
    baseline_file = made['files']['baseline']
    baseline = yaml.safe_load(_read(baseline_file))
    assert baseline['run_id'] == 'run-a' and len(baseline['values']) == 4
    assert _read(baseline_file).startswith('# Baseline of run run-a')
    criteria = {'regressions': [{'max_pct': 10}]}
    by_file = run.generate(store, 'run-b', REPORT_TEMPLATES, acceptance_criteria=criteria, baseline_file=baseline_file)
    by_run = run.generate(store, 'run-b', REPORT_TEMPLATES, acceptance_criteria=criteria, compare_run_id='run-a')
    samples_file = run.generate(store, 'run-b', REPORT_TEMPLATES, acceptance_criteria=criteria,
                                baseline_file=os.path.join(store, 'run-a', 'report.json'))
    for summary in (by_file, by_run, samples_file):
        assert summary['verdict'] == 'failed' and summary['regressions'] == 2
        assert summary['baseline_run_id'] == 'run-a'
        assert all('oss2' in failure and 'run run-b, baseline run run-a' in failure for failure in summary['failures'])
    html = _read(by_file['files']['html'])
    assert 'Comparison with run run-a' in html and '-30.0%' in html


def test_a_bad_baseline_file_is_an_error_naming_it(tmp_path):
    (tmp_path / RUN_ID).mkdir()
    bad = tmp_path / 'baseline.yml'
    bad.write_text('values: [{survey: obdfilter}]\n', encoding='utf-8')
    with pytest.raises(run.compare.BaselineError, match=r'values\[0\] lacks metric, host, value'):
        _generate(str(tmp_path), baseline_file=str(bad))
    with pytest.raises(run.compare.BaselineError, match='cannot read baseline'):
        _generate(str(tmp_path), baseline_file=str(tmp_path / 'absent.yml'))


def test_large_fleets_keep_the_charts_aggregate(tmp_path):
    store = str(tmp_path)
    for index in range(12):
        targets = ['testfs-OST%04x' % (index * 2 + ost) for ost in range(2)]
        write_envelope(store, envelope('oss%02d' % index, 'obdfilter', obdfilter_sweep(1.0 - 0.01 * index, targets)))
    model = run.build_report(run.load_run(store, RUN_ID), {'host_charts_max_hosts': 4, 'bar_chart_max_bars': 10})
    assert model['charts']['hosts'] == []
    # one target per record: OSTs, charted with OSTs
    assert [chart['id'] for chart in model['charts']['fleet']] == ['fleet-obdfilter_read_mib_s-ost',
                                                                   'fleet-obdfilter_write_mib_s-ost']
    assert all(len(chart['series']) == 3 for chart in model['charts']['fleet'])  # obj 1, 2, 4
    bars = model['charts']['bars'][0]
    assert len(bars['bars']) == 10 and 'the 10 lowest of 24 subjects' in bars['subtitle']
    values = [entry['height'] for entry in bars['bars']]
    assert values == sorted(values)


def test_adaptive_sweeps_are_summarised_and_their_stops_marked_on_the_host_plots(tmp_path):
    records = [record for record in obdfilter_sweep() if record['obj'] == 1 and record['thr'] <= 8]
    adaptive = envelope('oss1', 'obdfilter', records)
    adaptive['sweep'] = {'mode': 'adaptive', 'min_gain_pct': 3.0, 'patience': 1, 'axis': 'thr', 'start_near_knee': False,
                         'points_run': 4, 'points_full': 5,
                         'stops': [{'rsz_kib': 1024, 'nobj': 1, 'thr': 8, 'reason': 'saturated at thr 8: +0.0 % < 3 %'}]}
    adaptive['skipped_points'] = [{'point': {'rsz_kib': 1024, 'nobj': 1, 'thr': 16},
                                   'reason': 'saturated at thr 8: +0.0 % < 3 %'}]
    full = envelope('oss2', 'obdfilter', [record for record in obdfilter_sweep() if record['obj'] == 1])
    full['sweep'] = dict(adaptive['sweep'], mode='full', points_run=5, stops=[])
    for item in (adaptive, full):
        write_envelope(str(tmp_path), item)
    model = run.build_report(run.load_run(str(tmp_path), RUN_ID))
    by_host = {row['host']: row for row in model['sweeps']}
    assert by_host['oss1']['share_pct'] == 80.0 and by_host['oss1']['skipped'] == 1
    assert by_host['oss1']['stops'] == [{'curve': 'nobj 1, rsz_kib 1024', 'x': 8,
                                         'reason': 'saturated at thr 8: +0.0 % < 3 %'}]
    assert by_host['oss2']['mode'] == 'full' and by_host['oss2']['stops'] == []
    stops = {chart['id']: chart['stops'] for chart in model['charts']['hosts']}
    assert [len(marks) for chart_id, marks in sorted(stops.items()) if 'oss1' in chart_id] == [1, 1]
    assert not any(marks for chart_id, marks in stops.items() if 'oss2' in chart_id)
    html = _read(_generate(str(tmp_path))['files']['html'])
    assert 'id="sweeps-table"' in html and 'saturated at thr 8: +0.0 % &lt; 3 %' in html
    assert html.count('class="stop"') == 2
    summary = _read(os.path.join(str(tmp_path), RUN_ID, 'summary.md'))
    assert '| obdfilter | oss1 | 4 | 5 | 80.0 | saturated at thr 8: +0.0 % &lt; 3 % |' in summary  # md escapes HTML
    assert '| obdfilter | oss2 |' not in summary
