# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The report with a history: a fleet slower than its past as a whole (no OST low among its peers) fails the verdict,
with its regressions first in summary.md and report.html, a failing JUnit case each, and a trend chart each."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import write_envelope
from ansible_collections.lustre.iokit.plugins.plugin_utils.report import criteria, run

from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.report.helpers import (
    REPORT_TEMPLATES, envelope, history_rows, per_ost_obdfilter)

OSTS = {'oss1': ('testfs-OST0000', 'testfs-OST0001', 'testfs-OST0002'),
        'oss2': ('testfs-OST0003', 'testfs-OST0004', 'testfs-OST0005')}
EARLIER = ['20260%d01T080000Z-run%d' % (month, month) for month in range(1, 5)]
CURRENT = '20260601T080000Z-run5'


def store_run(store, run_id, factor):
    """obdfilter on two OSS with three OSTs each, every OST at ``factor`` of 500 MiB/s per thread step."""
    for host, osts in OSTS.items():
        write_envelope(store, envelope(host, 'obdfilter', per_ost_obdfilter(host, dict.fromkeys(osts, factor)),
                                       run_id=run_id))
    return run.load_run(store, run_id)


def finished(run_id):
    return '%s-%s-%sT09:00:00Z' % (run_id[:4], run_id[4:6], run_id[6:8])


@pytest.fixture
def history(tmp_path):
    """Runs 1-4 with every OST at one rate (1 % apart), run 5 with every OST at half of it; a fifth earlier run with
    other survey variables."""
    store = str(tmp_path)
    earlier = []
    for index, run_id in enumerate(EARLIER):
        earlier += history_rows(store_run(store, run_id, 1.0 + 0.01 * index).samples, finished(run_id))
    other = store_run(store, '20260515T080000Z-other', 2.0)
    earlier += history_rows(other.samples, finished(other.run_id), params_hash='vars-2')
    current = store_run(store, CURRENT, 0.5)
    return store, {'current': history_rows(current.samples, finished(CURRENT)), 'earlier': earlier, 'settings': {}}


def generate(store, history, run_id=CURRENT, **kwargs):
    return run.generate(store, run_id, REPORT_TEMPLATES, history=history, **kwargs)


def read(path):
    with open(path, encoding='utf-8') as handle:
        return handle.read()


def test_a_fleet_at_half_its_history_fails_with_every_ost_named(history):
    store, rows = history
    summary = generate(store, rows, default_criteria=True)
    assert summary['verdict'] == 'failed'
    # no OST is low among its peers: only the history sees it
    assert summary['findings'] == [] and summary['outliers'] == 0
    regressed = summary['history']
    assert (regressed['components'], regressed['regressions']) == (8, 16)  # 6 OSTs and 2 hosts, write and read
    assert [item['run_id'] for item in regressed['incomparable_runs']] == ['20260515T080000Z-other']
    failures = [failure for failure in summary['failures'] if 'history baseline' in failure]
    assert len(failures) == 16
    for ost in OSTS['oss1'] + OSTS['oss2']:
        assert any('on OST %s:' % ost in failure for failure in failures), ost
    assert all(', '.join(reversed(EARLIER)) in failure for failure in failures)
    analysis = json.loads(read(summary['files']['analysis']))
    assert len(analysis['history']['findings']) == 8


def test_regressions_come_first_in_summary_and_html(history):
    store, rows = history
    files = generate(store, rows)['files']
    markdown = read(files['markdown'])
    sections = re.findall(r'^## (.+)$', markdown, flags=re.MULTILINE)
    assert sections[:2] == ['Regressions against history', 'Findings']
    first = markdown.split('## Findings')[0]
    assert '| 1 | OST **testfs-OST0000** | obdfilter | obdfilter_read_mib_s |' in first
    assert '-50.7%' in first and '20260401T080000Z-run4, 20260301T080000Z-run3' in first
    assert 'Not compared: run 20260515T080000Z-other' in first
    html = read(files['html'])
    assert re.findall(r'<h2 id="([^"]+)"', html)[:2] == ['history', 'findings']
    assert html.index('id="history-table"') < html.index('id="findings"')
    assert '<th>vs history</th>' in html and 'class="num vs-history regression"' in html


def test_each_regression_is_a_failing_junit_case_naming_what_and_against_which_runs(history):
    store, rows = history
    summary = generate(store, rows)
    root = ET.fromstring(read(summary['files']['junit']))
    suite, = [suite for suite in root if suite.get('name').endswith('.history')]
    assert (suite.get('tests'), suite.get('failures')) == ('16', '16')
    case = suite.find("testcase[@name='no regression against history [testfs-OST0003]']"
                      "[@classname='lustre.iokit.history.obdfilter_write_mib_s']")
    message = case.find('failure').get('message')
    # every point lost as much: the headline is one of them, its value against its own baseline
    assert re.match(r'obdfilter obdfilter_write_mib_s on OST testfs-OST0003: (62\.50|125\.00|250\.00) MiB/s at rsz '
                    r'1024K obj 1 thr [124] against a history baseline of (126\.88|253\.75|507\.50) MiB/s, -50\.7% '
                    r'\(band .* MiB/s; regressed at 3 of 3 sweep points\)', message), message
    assert ('baseline: the median of runs 20260401T080000Z-run4, 20260301T080000Z-run3, 20260201T080000Z-run2, '
            '20260101T080000Z-run1 (run %s)' % CURRENT) in message


def test_a_trend_chart_per_regressed_component_and_per_fleet_peak_self_contained(history):
    store, rows = history
    html = read(generate(store, rows)['files']['html'])
    charts = re.findall(r'<figure class="chart history-chart (\w+)" id="([^"]+)">', html)
    ids = [chart_id for _status, chart_id in charts]
    assert 'history-ost-testfs-OST0003-obdfilter_read_mib_s' in ids  # read and write lost as much: read first
    assert 'history-fleet-obdfilter_write_mib_s-ost' in ids and 'history-fleet-obdfilter_read_mib_s-host' in ids
    assert len(charts) == 8 + 4 and {status for status, _id in charts} == {'regression'}
    chart = html[html.index('id="history-ost-testfs-OST0003-obdfilter_read_mib_s"'):]
    chart = chart[:chart.index('</figure>')]
    # the band shaded, the four earlier runs and this run marked, dates on the x axis
    assert chart.count('<polygon class="history-band"') == 1
    assert chart.count('<circle class="earlier"') == 4 and chart.count('<circle class="current"') == 1
    assert re.findall(r'text-anchor="middle">(\d\d-\d\d)</text>', chart) == ['01-01', '02-01', '03-01', '04-01', '06-01']
    assert 'run, by the day it finished (2026)' in chart
    assert re.search(r'20260601T080000Z-run5, 2026-06-01 09:00 UTC: [\d.]+ MiB/s \(regression, -50.7% against the '
                     r'baseline\)</title>', chart)
    outside = html.replace('http://www.w3.org/2000/svg', '')
    assert 'http://' not in outside and 'https://' not in outside and '<script src' not in html


def test_a_run_back_at_the_first_rate_passes(history):
    store, rows = history
    back = store_run(store, '20260701T080000Z-run6', 1.0)
    earlier = rows['earlier'] + rows['current']
    summary = generate(store, {'current': history_rows(back.samples, finished(back.run_id)), 'earlier': earlier,
                               'settings': {}}, run_id=back.run_id)
    assert summary['verdict'] == 'passed' and summary['failures'] == []
    assert summary['history']['regressions'] == 0 and summary['history']['judged'] == 16
    markdown = read(summary['files']['markdown'])
    assert 'No regression: every component judged (16 component metric(s)) is within its history.' in markdown
    # the run at half is one of its five runs: the median keeps the baseline where runs 2-4 put it
    analysis = json.loads(read(summary['files']['analysis']))
    assert all(len(item['runs']) == 5 for item in analysis['history']['judged'])


def test_settings_change_the_judgment(history):
    store, rows = history
    rows['settings'] = {'min_change_pct': 60.0}
    assert generate(store, rows)['verdict'] == 'passed'
    rows['settings'] = {'treshold': 1}
    with pytest.raises(ValueError, match=r'history settings: unknown key\(s\) treshold'):
        generate(store, rows)


def test_history_and_an_explicit_baseline_work_together(history):
    store, rows = history
    summary = generate(store, rows, compare_run_id=EARLIER[-1],
                       acceptance_criteria={'regressions': [{'metric': '*', 'max_pct': 10}]})
    verdict = json.loads(read(summary['files']['verdict']))
    kinds = {case['kind'] for case in verdict['cases'] if case['status'] == 'failed'}
    assert kinds == {'history', 'regressions'}
    assert summary['baseline_run_id'] == EARLIER[-1] and summary['regressions'] > 0
    assert '## Comparison with run %s' % EARLIER[-1] in read(summary['files']['markdown'])


def test_without_history_nothing_changes(history):
    store, _rows = history
    summary = generate(store, None)
    assert summary['history'] is None and summary['verdict'] is None
    html = read(summary['files']['html'])
    assert 'id="history"' not in html and 'vs history' not in html
    assert 'Regressions against history' not in read(summary['files']['markdown'])
    assert json.loads(read(summary['files']['analysis']))['history'] is None


def test_a_run_missing_from_the_history_fails_the_verdict_and_a_first_run_is_not_judged(history):
    store, rows = history
    absent = generate(store, {'current': [], 'earlier': rows['earlier'], 'settings': {}})
    assert absent['verdict'] == 'failed'
    assert absent['failures'] == ['the history database has no sample of this run: nothing was judged against its '
                                  'history (record the run, then report again) (run %s)' % CURRENT]
    first = generate(store, {'current': rows['current'], 'earlier': [], 'settings': {}})
    assert first['verdict'] == 'no verdict'
    verdict = json.loads(read(first['files']['verdict']))
    assert [case['message'] for case in verdict['cases']] == [
        'obdfilter: 48 value(s) without a comparable earlier run in the history, not judged (run %s)' % CURRENT]


def test_history_cases_in_the_verdict_filter():
    judgment = {'settings': {'min_change_pct': 10.0}, 'findings': [], 'not_judged': [],
                'judged': [{'component_kind': 'OST', 'component_id': 'testfs-OST0000', 'survey': 'obdfilter',
                            'metric': 'obdfilter_write_mib_s', 'points': 3, 'regressed_points': 0,
                            'runs': ['r1', 'r2']}]}
    verdict = criteria.evaluate([], {}, run_id='now', history=judgment)
    assert verdict['verdict'] == 'passed'
    assert verdict['cases'][0]['message'] == ('obdfilter obdfilter_write_mib_s on OST testfs-OST0000: within its '
                                              'history at all 3 sweep points judged, against run(s) r1, r2 (run now)')
