# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The statistics section of the HTML report in headless Chromium: drawn, labelled, sortable, no script error.

    .venv/bin/python -m pytest tests/report/test_report_stats.py -q -p no:cacheprovider
"""

from __future__ import annotations

import os

import pytest

from browser import Browser, find_chromium
from conftest import ROOT

from ansible_collections.lustre.iokit.plugins.module_utils.results import EnvelopeBuilder
from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import write_envelope
from ansible_collections.lustre.iokit.plugins.plugin_utils.report import run
from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.report.helpers import REPORT_TEMPLATES, RUN_ID, fleet

CHROMIUM = find_chromium()
OUTPUT = os.path.join(ROOT, 'tests', 'output', 'report')
STARTED = 1795342491  # ten seconds before the fleet's surveys start

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason='chromium is not installed (Debian: apt-get install -y chromium '
                                                         'chromium-driver); the HTML report is not checked in a browser')


def stats_envelope(host, writes_1m, reads_4k):
    builder = EnvelopeBuilder(RUN_ID, host, 'stats_collect', 'native', {}, now=STARTED)
    histogram = [{'bucket': '4K', 'read': {'count': reads_4k, 'pct': 100, 'cum_pct': 100},
                  'write': {'count': 0, 'pct': 0, 'cum_pct': 0}},
                 {'bucket': '1M', 'read': {'count': 0, 'pct': 0, 'cum_pct': 100},
                  'write': {'count': writes_1m, 'pct': 100, 'cum_pct': 100}}]
    builder.add_record({'collector': 'brw', 'target': 'testfs-OST0000', 'elapsed_s': 1030.0, 'reset': False,
                        'histograms': {'disk I/O size': histogram}})
    samples = [{'time': float(STARTED + offset), 'us': 20 + offset % 7, 'sy': 5, 'id': 50, 'wa': 25 if offset > 10 else 0,
                'st': 0} for offset in range(5, 1031, 5)]
    builder.add_record({'collector': 'vmstat', 'interval_s': 5, 'samples': samples, 'summary': {}})
    return builder.finish(now=STARTED + 1030)


@pytest.fixture(scope='module')
def report(tmp_path_factory):
    store = str(tmp_path_factory.mktemp('stats-store'))
    for item in fleet():
        write_envelope(store, item)
    write_envelope(store, stats_envelope('oss1', 16384, 12))
    write_envelope(store, stats_envelope('oss2', 8192, 3))
    return run.generate(store, RUN_ID, REPORT_TEMPLATES)['files']['html']


@pytest.fixture(scope='module')
def browser():
    instance = Browser(CHROMIUM)
    yield instance
    instance.close()


def test_the_statistics_section_is_drawn_and_labelled(browser, report):
    browser.events.clear()
    browser.open(report)
    assert browser.console_errors() == []
    assert browser.evaluate("document.querySelector('#stats').textContent") == \
        'Statistics during the run (stats_collect)'
    charts = browser.evaluate("Array.from(document.querySelectorAll('figure[id^=stats-cpu-]')).map(f => [f.id, "
                              "f.querySelectorAll('polyline.series').length, "
                              "Array.from(f.querySelectorAll('text.axis-label')).map(t => t.textContent)])")
    assert charts == [['stats-cpu-oss1', 2, ['seconds since the first vmstat report', 'share of CPU time (%)']],
                      ['stats-cpu-oss2', 2, ['seconds since the first vmstat report', 'share of CPU time (%)']]]
    # 205 reports per host: drawn as lines, without a circle per report.
    assert browser.evaluate("document.querySelectorAll('figure[id^=stats-cpu-] circle').length") == 0
    windows = browser.evaluate("Array.from(document.querySelectorAll('#stats-cpu-table tbody tr'))"
                               ".map(r => [r.cells[0].textContent, r.cells[1].textContent])")
    assert ['oss1', 'whole collection'] in windows and ['oss1', 'obdfilter survey'] in windows
    assert ['oss1', 'sgpdd survey'] in windows
    text = browser.evaluate('document.body.innerText')
    assert 'its records are kept but this report does not chart them yet' not in text
    browser.evaluate("document.getElementById('stats').scrollIntoView()")
    browser.screenshot(os.path.join(OUTPUT, 'report-stats.png'))


def test_the_io_size_table_sorts_by_write_count(browser, report):
    browser.events.clear()
    browser.open(report)
    column = "Array.from(document.querySelectorAll('#stats-io-size-table tbody tr')).map(r => parseFloat(r.cells[6].dataset.v))"
    header = "document.querySelectorAll('#stats-io-size-table th')[6]"
    browser.evaluate(header + '.click()')
    assert browser.evaluate(column) == [0, 0, 8192, 16384]
    browser.evaluate(header + '.click()')
    assert browser.evaluate(column) == [16384, 8192, 0, 0]
    assert browser.console_errors() == []
