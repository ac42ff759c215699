# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The report filter plugins: registered under their names, same results as the pure code, errors naming the filter."""

from __future__ import annotations

import importlib
import os
import xml.etree.ElementTree as ET

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.lustre.iokit.plugins.module_utils.parsers.catalog import PARSERS
from ansible_collections.lustre.iokit.plugins.module_utils.results import EnvelopeBuilder
from ansible_collections.lustre.iokit.plugins.plugin_utils.report import analysis, compare, criteria
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.samples import as_samples

FIXTURES = os.path.join(os.path.dirname(__file__), '..', 'module_utils', 'parsers', 'fixtures')
NAMES = ('report_samples', 'report_outliers', 'report_saturation', 'report_layer_efficiency', 'report_repeat_stats',
         'compare_runs', 'acceptance_verdict', 'acceptance_junit')


def _filter(name):
    filters = importlib.import_module('ansible_collections.lustre.iokit.plugins.filter.%s' % name).FilterModule().filters()
    assert list(filters) == [name]
    return filters[name]


def _envelopes(run_id='run-1', slow=0.5):
    """obdfilter from the manual's example output on four hosts (oss3 slower), sgpdd from the README on each."""
    with open(os.path.join(FIXTURES, 'obdfilter_survey', 'manual_example_output.txt'), encoding='utf-8') as handle:
        obdfilter = PARSERS['obdfilter_survey'](handle.read())
    with open(os.path.join(FIXTURES, 'sgpdd_survey', 'readme_current.txt'), encoding='utf-8') as handle:
        sgpdd = PARSERS['sgpdd_survey'](handle.read())
    envelopes = []
    for host, factor in (('oss1', 1.0), ('oss2', 1.01), ('oss3', slow), ('oss4', 0.99)):
        records = [dict(record, tests={test: dict(result, mib_s=result['mib_s'] * factor)
                                       for test, result in record['tests'].items()}) for record in obdfilter]
        for survey, survey_records in (('obdfilter', records), ('sgpdd', sgpdd)):
            builder = EnvelopeBuilder(run_id, host, survey, 'native', {}, now=1795342501)
            for record in survey_records:
                builder.add_record(record)
            envelopes.append(builder.finish(now=1795342601))
    return envelopes


@pytest.fixture
def samples():
    return _filter('report_samples')(_envelopes())


def test_report_samples_flattens_envelopes(samples):
    assert len(samples) == 4 * (3 + 2)  # obdfilter write/rewrite/read, sgpdd write/read
    assert [{key: value for key, value in sample.items() if key != 'point_label'} for sample in samples] == \
        [sample.to_dict() for sample in as_samples(_envelopes())]
    assert {sample['point_label'] for sample in samples if sample['survey'] == 'obdfilter'} == {'rsz 1024K obj 10 thr 10'}
    assert _filter('report_samples')(_envelopes()[0]) == samples[:3]


def test_analysis_filters_return_what_the_pure_code_returns(samples):
    pure = as_samples(samples)
    assert _filter('report_outliers')(samples, threshold=3) == analysis.outliers(pure, 3)
    assert {row['subject'] for row in _filter('report_outliers')(samples)} == {'oss3'}
    assert _filter('report_saturation')(samples, share=0.8) == analysis.saturation(pure, 0.8)
    efficiency = _filter('report_layer_efficiency')(samples)
    assert efficiency == analysis.layer_efficiency(pure)
    # The manual's 10-OST obdfilter write against the README's 30-device sgpdd write on the same host.
    write = next(row for row in efficiency if row['host'] == 'oss1' and row['test'] == 'write')
    assert write['ratio'] == pytest.approx(10982.73 / 6036.79)
    repeated = samples + [dict(sample, iteration=2, value=sample['value'] * 1.1) for sample in samples]
    assert _filter('report_repeat_stats')(repeated) == analysis.repeat_stats(as_samples(repeated))
    assert _filter('report_repeat_stats')(repeated)[0]['n'] == 2


def test_compare_runs_filter_takes_runs_or_baselines(samples):
    slower = _filter('report_samples')(_envelopes('run-2', slow=0.2))
    rows = _filter('compare_runs')(slower, samples, tolerance_pct=10)
    assert rows == compare.compare_runs(as_samples(slower), as_samples(samples), 10)
    assert {row['subject'] for row in rows if row['status'] == 'regression'} == {'oss3'}
    baseline = compare.make_baseline(as_samples(samples))
    # The baseline keeps 3 decimals: same subjects and statuses, deltas within rounding.
    against_baseline = _filter('compare_runs')(slower, baseline, tolerance_pct=10)
    assert [(r['subject'], r['metric'], r['status']) for r in against_baseline] == [
        (r['subject'], r['metric'], r['status']) for r in rows]
    assert [r['delta_pct'] for r in against_baseline] == pytest.approx([r['delta_pct'] for r in rows], abs=1e-3)


def test_verdict_and_junit_filters(samples):
    rules = {'floors': [{'metric': 'obdfilter_write_mib_s', 'min': 8000}]}
    verdict = _filter('acceptance_verdict')(samples, rules)
    assert verdict == criteria.evaluate(as_samples(samples), rules)
    assert verdict['verdict'] == 'failed' and 'oss3' in verdict['failures'][0]
    root = ET.fromstring(_filter('acceptance_junit')(verdict, name='site acceptance'))
    assert root.get('name') == 'site acceptance' and root.get('failures') == '1'
    # A verdict read back from verdict.json: a failed case's diagnosis ends its failure message, the names stay.
    failed = next(case for case in verdict['cases'] if case['status'] == 'failed')
    diagnosed = criteria.add_diagnoses(verdict, {(failed['metric'], failed['subject']): 'diagnosis: slow'})
    again = ET.fromstring(_filter('acceptance_junit')(diagnosed, name='site acceptance'))
    assert [case.attrib for case in again.iter('testcase')] == [case.attrib for case in root.iter('testcase')]
    assert [failure.get('message') for failure in again.iter('failure')] == [failed['message'] + ' - diagnosis: slow']


@pytest.mark.parametrize('name', NAMES[:-2])
@pytest.mark.parametrize('bad', [12, 'text', [{'metric': 'x'}]], ids=['int', 'str', 'bad-sample'])
def test_bad_samples_raise_an_error_naming_the_filter(name, bad):
    with pytest.raises(AnsibleFilterError, match=r'^%s: ' % name):
        if name == 'compare_runs':
            _filter(name)(bad, [])
        elif name == 'acceptance_verdict':
            _filter(name)(bad, {})
        else:
            _filter(name)(bad)


def test_bad_arguments_raise_an_error_naming_the_filter(samples):
    with pytest.raises(AnsibleFilterError, match='^report_outliers: outlier threshold'):
        _filter('report_outliers')(samples, threshold=-1)
    with pytest.raises(AnsibleFilterError, match='^acceptance_verdict: acceptance_criteria.floors'):
        _filter('acceptance_verdict')(samples, {'floors': [{'metric': 'x'}]})
    with pytest.raises(AnsibleFilterError, match='^compare_runs: baseline schema'):
        _filter('compare_runs')(samples, {'schema': 'x', 'values': []})
    with pytest.raises(AnsibleFilterError, match='^acceptance_junit: expected a verdict'):
        _filter('acceptance_junit')({'verdict': 'passed'})
    with pytest.raises(AnsibleFilterError, match='^report_layer_efficiency: expected must be two numbers'):
        _filter('report_layer_efficiency')(samples, expected=[1])
