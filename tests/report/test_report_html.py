# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The HTML report in a real headless Chromium: loads cleanly, charts and tables present and labelled, sortable.

    .venv/bin/python -m pytest tests/report -q -p no:cacheprovider

Needs the Debian packages chromium (and chromium-driver for other tools); skipped, saying so, without them.
The screenshot is kept in tests/output/report/.
"""

from __future__ import annotations

import os

import pytest

from browser import Browser, find_chromium
from conftest import ROOT

from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import write_envelope
from ansible_collections.lustre.iokit.plugins.plugin_utils.report import run
from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.report.helpers import (
    REPORT_TEMPLATES, RUN_ID, envelope, fleet, history_rows, obdfilter_sweep, per_ost_obdfilter)

CHROMIUM = find_chromium()
OUTPUT = os.path.join(ROOT, 'tests', 'output', 'report')

SKIP_REASON = ('chromium is not installed (Debian: apt-get install -y chromium chromium-driver); '
               'the HTML report is not checked in a browser')
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)


@pytest.fixture(scope='module')
def browser():
    instance = Browser(CHROMIUM)
    yield instance
    instance.close()


@pytest.fixture(scope='module')
def report(tmp_path_factory):
    """A run with every section: four OSS (one slow), MDS, ost-survey, a partial and a corrupt result, a baseline."""
    store = str(tmp_path_factory.mktemp('store'))
    for item in fleet():
        write_envelope(store, item)
        write_envelope(store, dict(item, run_id='20261101T000000Z-base'))
    write_envelope(store, envelope('oss5', 'obdfilter', obdfilter_sweep()[:4], errors=['timeout after 3600 s']))
    corrupt = os.path.join(store, RUN_ID, 'oss6', 'obdfilter.json')
    os.makedirs(os.path.dirname(corrupt))
    with open(corrupt, 'w', encoding='utf-8') as handle:
        handle.write('{"truncated": ')
    summary = run.generate(store, RUN_ID, REPORT_TEMPLATES, compare_run_id='20261101T000000Z-base',
                           expected={'obdfilter': ['oss1', 'oss2', 'oss3', 'oss4', 'oss5', 'oss6', 'oss7']},
                           acceptance_criteria={'floors': [{'metric': 'obdfilter_write_mib_s', 'min': 900}],
                                                'outliers': [{'metric': 'obdfilter_*'}]})
    return summary['files']['html']


def test_report_loads_without_errors_and_is_readable(browser, report):
    browser.events.clear()
    browser.open(report)
    assert browser.console_errors() == []
    assert browser.evaluate('document.body.dataset.reportReady') == 'true'
    # The findings come first: the weak components before anything else.
    assert browser.evaluate("document.querySelector('h2').id") == 'findings'
    line_charts = browser.evaluate("Array.from(document.querySelectorAll('figure[id^=fleet-] svg, figure[id^=host-] svg'))"
                                   ".map(svg => Array.from(svg.querySelectorAll('text.axis-label')).map(t => t.textContent))")
    assert len(line_charts) >= 8
    for x_label, y_label in line_charts:
        assert x_label.startswith('threads') and y_label in ('bandwidth (MiB/s)', 'rate (ops/s)')
    bars = browser.evaluate("Array.from(document.querySelectorAll('figure[id^=bars-]')).map(f => [f.id, "
                            "f.querySelectorAll('rect.bar').length, f.querySelectorAll('rect.outlier').length])")
    by_id = {chart_id: (count, outliers) for chart_id, count, outliers in bars}
    assert by_id['bars-obdfilter_write_mib_s'][0] == 5 and by_id['bars-obdfilter_write_mib_s'][1] >= 1
    assert by_id['bars-ost_write_mib_s-ost'] == (4, 1)  # OSTs, charted per OST
    headers = browser.evaluate("Array.from(document.querySelectorAll('#subjects-obdfilter th')).map(th => th.textContent)")
    assert headers[:4] == ['host', 'target', 'obdfilter_read_mib_s (MiB/s)', 'at point']
    text = browser.evaluate('document.body.innerText')
    for expected in ('oss3', 'testfs-OST0003', 'oss6/obdfilter.json', 'oss7', 'partial', 'timeout after 3600 s',
                     'Comparison with run 20261101T000000Z-base', 'MiB/s', 'ops/s', 'FAILED'):
        assert expected in text
    screenshot = browser.screenshot(os.path.join(OUTPUT, 'report.png'))
    assert os.path.getsize(screenshot) > 50000


@pytest.fixture(scope='module')
def history_report(tmp_path_factory):
    """Three OSTs judged against four earlier runs: all of them at half their history, none low among its peers."""
    store = str(tmp_path_factory.mktemp('history'))
    rows = {}
    for month, factor in ((1, 1.0), (2, 1.02), (3, 0.99), (4, 1.01), (5, 0.5)):
        run_id = '20260%d01T080000Z-run%d' % (month, month)
        write_envelope(store, envelope('oss1', 'obdfilter', per_ost_obdfilter(
            'oss1', dict.fromkeys(('testfs-OST0000', 'testfs-OST0001', 'testfs-OST0002'), factor)), run_id=run_id))
        rows[run_id] = history_rows(run.load_run(store, run_id).samples, '2026-0%d-01T09:00:00Z' % month)
    current = sorted(rows)[-1]
    summary = run.generate(store, current, REPORT_TEMPLATES, history={
        'current': rows.pop(current), 'earlier': [row for run_rows in rows.values() for row in run_rows],
        'settings': {}})
    return summary['files']['html']


def test_the_regressions_against_history_come_first_with_their_trend_charts(browser, history_report):
    browser.events.clear()
    browser.open(history_report)
    assert browser.console_errors() == []
    assert browser.evaluate("Array.from(document.querySelectorAll('h2')).slice(0, 2).map(h => h.id)") == [
        'history', 'findings']
    charts = browser.evaluate("Array.from(document.querySelectorAll('figure.history-chart')).map(f => [f.id, "
                              "f.querySelectorAll('polygon.history-band').length, "
                              "f.querySelectorAll('circle.earlier').length, f.querySelectorAll('circle.current').length,"
                              " f.querySelector('svg').getBoundingClientRect().width])")
    # one per OST and one for the host's aggregate (its worst metric), then the fleet's peaks (OSTs and hosts, two
    # metrics each)
    assert len(charts) == 4 + 4
    assert all(bands == 1 and earlier == 4 and current == 1 and width > 300 for _id, bands, earlier, current, width
               in charts)
    assert browser.evaluate("document.querySelectorAll('#history-table tbody.finding').length") == 4
    browser.screenshot(os.path.join(OUTPUT, 'report-history.png'))


def test_tables_sort_when_a_header_is_clicked(browser, report):
    browser.events.clear()
    browser.open(report)
    column = "Array.from(document.querySelectorAll('#subjects-obdfilter tbody tr')).map(r => parseFloat(r.cells[4].dataset.v))"
    header = "document.querySelectorAll('#subjects-obdfilter th')[4]"
    browser.evaluate(header + '.click()')
    ascending = browser.evaluate(column)
    assert ascending == sorted(ascending) and len(ascending) == 5
    browser.evaluate(header + '.click()')
    assert browser.evaluate(column) == sorted(ascending, reverse=True)
    assert browser.console_errors() == []


def test_the_check_catches_a_broken_script(browser, report, tmp_path):
    with open(report, encoding='utf-8') as handle:
        html = handle.read()
    broken = tmp_path / 'broken.html'
    broken.write_text(html.replace('"use strict";', '"use strict"; console.error("deliberate"); notDefinedAnywhere();', 1),
                      encoding='utf-8')
    browser.events.clear()
    browser.open(str(broken))
    errors = browser.console_errors()
    assert any('deliberate' in error for error in errors)
    assert any('ReferenceError: notDefinedAnywhere is not defined' in error for error in errors)
