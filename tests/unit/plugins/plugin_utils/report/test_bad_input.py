# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The issue's bad or partial input, one case at a time: every bad file is named with what is wrong with it,
a partial envelope and a missing host are said, and a run with one survey only still reports (and says what a
criterion about another survey could not check)."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import write_envelope
from ansible_collections.lustre.iokit.plugins.plugin_utils.report import run

from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.report.helpers import (
    REPORT_TEMPLATES, RUN_ID, envelope, obdfilter_sweep)

FLOOR = {'floors': [{'metric': 'obdfilter_write_mib_s', 'min': 10}]}


def _read(path):
    with open(path, encoding='utf-8') as handle:
        return handle.read()


def _good_store(tmp_path):
    store = str(tmp_path)
    write_envelope(store, envelope('oss1', 'obdfilter', obdfilter_sweep()))
    return store


def _valid_envelope_text(host='oss2', **changes):
    data = envelope(host, 'obdfilter', obdfilter_sweep())
    data.update(changes)
    return json.dumps(data)


BAD_FILES = [
    ('empty file', b'', 'not valid JSON'),
    ('truncated JSON', b'{"schema": "lustre.iokit/result/v1", "records": [', 'not valid JSON'),
    ('not UTF-8', b'\xff\xfe{"schema"', ''),
    ('a JSON list', b'[1, 2, 3]', 'envelope: must be an object'),
    ('another schema', _valid_envelope_text(schema='lustre.iokit/result/v0').encode(), 'schema'),
    ('ok without records', _valid_envelope_text(records=[]).encode(), "status: 'ok' but records is empty"),
    ('a number that is not finite', _valid_envelope_text().replace('"duration_s": 1003.0', '"duration_s": NaN')
     .encode(), 'duration_s'),
]


@pytest.mark.parametrize('what, content, reason', BAD_FILES, ids=[case[0] for case in BAD_FILES])
def test_a_bad_result_file_is_named_with_its_problem_and_fails_the_verdict(tmp_path, what, content, reason):
    store = _good_store(tmp_path)
    bad = tmp_path / RUN_ID / 'oss2' / 'obdfilter.json'
    bad.parent.mkdir()
    bad.write_bytes(content)
    summary = run.generate(store, RUN_ID, REPORT_TEMPLATES, acceptance_criteria=FLOOR,
                           expected={'obdfilter': ['oss1', 'oss2']})
    name = os.path.join('oss2', 'obdfilter.json')
    assert [item['path'] for item in summary['unreadable']] == [name], what
    problems = ' '.join(summary['unreadable'][0]['problems'])
    assert reason in problems, problems
    # The good host is still reported; the bad file fails the verdict by name.
    assert summary['hosts'] == ['oss1'] and summary['samples'] > 0
    assert summary['verdict'] == 'failed'
    assert any('oss2/obdfilter.json is unusable' in failure for failure in summary['failures']), summary['failures']
    assert 'oss2/obdfilter.json' in _read(summary['files']['html'])
    assert 'oss2/obdfilter.json' in _read(summary['files']['markdown'])


def test_a_bad_file_is_named_even_when_no_host_was_expected(tmp_path):
    store = _good_store(tmp_path)
    bad = tmp_path / RUN_ID / 'oss7' / 'mds.json'
    bad.parent.mkdir()
    bad.write_text('not json', encoding='utf-8')
    summary = run.generate(store, RUN_ID, REPORT_TEMPLATES)
    assert [item['path'] for item in summary['unreadable']] == [os.path.join('oss7', 'mds.json')]
    assert 'oss7/mds.json' in _read(summary['files']['html'])


def test_an_envelope_stored_under_another_host_is_not_taken_for_that_host(tmp_path):
    store = _good_store(tmp_path)
    misplaced = tmp_path / RUN_ID / 'oss2' / 'obdfilter.json'
    misplaced.parent.mkdir()
    misplaced.write_text(_valid_envelope_text(host='oss9'), encoding='utf-8')
    summary = run.generate(store, RUN_ID, REPORT_TEMPLATES, expected={'obdfilter': ['oss1', 'oss2']})
    assert [item['path'] for item in summary['unreadable']] == [os.path.join('oss2', 'obdfilter.json')]
    assert 'oss9' in ' '.join(summary['unreadable'][0]['problems'])
    assert 'oss9' not in summary['hosts']


def test_a_partial_envelope_is_reported_with_its_error_and_its_measured_points(tmp_path):
    store = _good_store(tmp_path)
    write_envelope(store, envelope('oss2', 'obdfilter', obdfilter_sweep()[:2], aborted=True))
    summary = run.generate(store, RUN_ID, REPORT_TEMPLATES, expected={'obdfilter': ['oss1', 'oss2']})
    assert [(item['host'], item['status']) for item in summary['partial']] == [('oss2', 'partial')]
    assert summary['missing'] == []
    samples = [json.loads(line) for line in _read(summary['files']['samples']).splitlines()]
    assert {sample['host'] for sample in samples} == {'oss1', 'oss2'}
    assert sum(1 for sample in samples if sample['host'] == 'oss2') == 4
    markdown = _read(summary['files']['markdown'])
    assert 'obdfilter on oss2 is partial: timeout after 3600 s' in markdown
    assert 'timeout after 3600 s' in _read(summary['files']['html'])


def test_a_missing_host_is_named_in_the_report_and_in_junit(tmp_path):
    store = _good_store(tmp_path)
    summary = run.generate(store, RUN_ID, REPORT_TEMPLATES, acceptance_criteria=FLOOR,
                           expected={'obdfilter': ['oss1', 'oss2'], 'mds': ['mds1']})
    assert sorted((item['host'], item['survey'], item['kind']) for item in summary['missing']) == [
        ('mds1', 'mds', 'absent'), ('oss2', 'obdfilter', 'absent')]
    junit = ET.parse(summary['files']['junit']).getroot()
    failures = [failure.get('message') or '' for failure in junit.iter('failure')]
    assert any('mds on mds1: no result in the run directory' in message for message in failures), failures
    assert any('obdfilter on oss2: no result in the run directory' in message for message in failures), failures
    html = _read(summary['files']['html'])
    assert 'mds1' in html and 'no result in the run directory' in html


def test_a_run_with_one_survey_only_reports_it_and_says_what_a_criterion_on_another_survey_misses(tmp_path):
    store = _good_store(tmp_path)
    summary = run.generate(store, RUN_ID, REPORT_TEMPLATES, acceptance_criteria={
        'ratios': [{'numerator': 'obdfilter_write_mib_s', 'denominator': 'sgpdd_write_mib_s', 'min': 0.85}]})
    assert summary['surveys'] == ['obdfilter'] and summary['samples'] > 0
    assert summary['verdict'] == 'failed'
    assert any('sgpdd_write_mib_s' in failure and 'not measured' in failure for failure in summary['failures']), \
        summary['failures']
    html = _read(summary['files']['html'])
    assert '<svg' in html and 'obdfilter_write_mib_s' in html
    # No sgpdd: no layer efficiency rows, rather than rows of nothing.
    analysis = json.loads(_read(summary['files']['analysis']))
    assert analysis['efficiency'] == [] and analysis['surveys'] == ['obdfilter']
