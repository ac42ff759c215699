# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Acceptance criteria: every kind, per subject, messages that say why, and the JUnit XML."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from ansible_collections.lustre.iokit.plugins.plugin_utils.report import compare, criteria
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.samples import as_samples

from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.report.helpers import (
    RUN_ID, envelope, obdfilter_sweep, sgpdd_sweep)


def _cases(verdict, kind):
    return {case['subject']: case for case in verdict['cases'] if case['kind'] == kind}


def test_floor_per_subject_with_a_message_naming_everything(fleet_envelopes):
    verdict = criteria.evaluate(fleet_envelopes, {'floors': [{'metric': 'obdfilter_write_mib_s', 'subjects': 'oss*',
                                                              'min': 900}]})
    cases = _cases(verdict, 'floors')
    assert sorted(cases) == ['oss1', 'oss2', 'oss3', 'oss4']
    assert {s: c['status'] for s, c in cases.items()} == {'oss1': 'passed', 'oss2': 'passed', 'oss3': 'failed',
                                                          'oss4': 'passed'}
    message = cases['oss3']['message']
    for part in ('obdfilter_write_mib_s', 'oss3', '500.00 MiB/s', 'below the floor 900', RUN_ID):
        assert part in message
    assert verdict['verdict'] == 'failed' and verdict['counts'] == {'tests': 4, 'passed': 3, 'failed': 1, 'skipped': 0}
    assert verdict['failures'] == [message]


def test_a_criterion_matching_nothing_fails_unless_not_required(fleet_envelopes):
    verdict = criteria.evaluate(fleet_envelopes, {'floors': [{'metric': 'mdtest_*', 'min': 1}]})
    assert verdict['verdict'] == 'failed' and 'no measured subject matches metric mdtest_*' in verdict['failures'][0]
    verdict = criteria.evaluate(fleet_envelopes, {'floors': [{'metric': 'mdtest_*', 'min': 1, 'required': False}]})
    # nothing was checked: no verdict, never passed
    assert verdict['verdict'] == 'no verdict' and verdict['counts']['skipped'] == 1


def test_ratio_between_surveys_per_host():
    envelopes = [envelope('oss1', 'obdfilter', obdfilter_sweep(0.95)), envelope('oss1', 'sgpdd', sgpdd_sweep(1000)),
                 envelope('oss2', 'obdfilter', obdfilter_sweep(0.6)), envelope('oss2', 'sgpdd', sgpdd_sweep(1000)),
                 envelope('oss3', 'obdfilter', obdfilter_sweep(1.0))]
    verdict = criteria.evaluate(envelopes, {'ratios': [{'numerator': 'obdfilter_write_mib_s',
                                                        'denominator': 'sgpdd_write_mib_s', 'min': 0.85}]})
    cases = _cases(verdict, 'ratios')
    assert cases['oss1']['status'] == 'passed' and cases['oss1']['value'] == pytest.approx(0.95)
    assert cases['oss2']['status'] == 'failed' and '0.60 (600.00 / 1000.00 MiB/s)' in cases['oss2']['message']
    assert cases['oss3']['status'] == 'failed' and 'sgpdd_write_mib_s was not measured' in cases['oss3']['message']


def test_outlier_limit_per_subject(fleet_envelopes):
    verdict = criteria.evaluate(fleet_envelopes, {'outliers': [{'metric': 'obdfilter_write_mib_s', 'max': 0}]})
    cases = _cases(verdict, 'outliers')
    assert {s: c['status'] for s, c in cases.items()} == {'oss1': 'passed', 'oss2': 'passed', 'oss3': 'failed',
                                                          'oss4': 'passed'}
    assert cases['oss3']['value'] == 12 and 'against a peer median of' in cases['oss3']['message']
    # High outliers are not counted by default: a fast subject does not fail acceptance.
    verdict = criteria.evaluate(fleet_envelopes, {'outliers': [{'metric': 'obdfilter_write_mib_s', 'direction': 'high'}]})
    assert verdict['verdict'] == 'passed'


def test_regression_against_a_baseline_names_both_runs():
    before = [envelope(h, 'obdfilter', obdfilter_sweep(1.0), run_id='run-a') for h in ('oss1', 'oss2', 'oss3')]
    after = [envelope('oss1', 'obdfilter', obdfilter_sweep(0.97), run_id='run-b'),
             envelope('oss2', 'obdfilter', obdfilter_sweep(0.8), run_id='run-b')]
    baseline = compare.make_baseline(before)
    verdict = criteria.evaluate(after, {'regressions': [{'metric': '*_write_*', 'max_pct': 10}]}, baseline=baseline)
    cases = _cases(verdict, 'regressions')
    assert cases['oss1']['status'] == 'passed'
    assert cases['oss2']['status'] == 'failed' and cases['oss2']['value'] == pytest.approx(-20.0)
    assert 'run run-b, baseline run run-a' in cases['oss2']['message']
    assert cases['oss3']['status'] == 'failed' and 'not measured' in cases['oss3']['message']
    assert verdict['baseline_run_id'] == 'run-a'


def test_regression_without_a_baseline_fails_with_a_reason(fleet_envelopes):
    verdict = criteria.evaluate(fleet_envelopes, {'regressions': [{'max_pct': 10}]})
    assert 'no baseline was given' in verdict['failures'][0]


def test_variation_across_iterations():
    steady = obdfilter_sweep(1.0)
    noisy = [dict(r, iteration=2) for r in obdfilter_sweep(0.7)]
    envelopes = [envelope('oss1', 'obdfilter', steady + [dict(r, iteration=2) for r in obdfilter_sweep(1.01)]),
                 envelope('oss2', 'obdfilter', steady + noisy)]
    for record in steady:
        record['iteration'] = 1
    verdict = criteria.evaluate(envelopes, {'variation': [{'metric': 'obdfilter_write_mib_s', 'max_cv_pct': 5}]})
    cases = _cases(verdict, 'variation')
    assert cases['oss1']['status'] == 'passed' and cases['oss2']['status'] == 'failed'
    assert 'coefficient of variation' in cases['oss2']['message'] and 'over 2 iterations' in cases['oss2']['message']


def test_variation_without_iterations_says_why(fleet_envelopes):
    verdict = criteria.evaluate(fleet_envelopes, {'variation': [{'max_cv_pct': 5}]})
    assert 'iokit_iterations > 1' in verdict['failures'][0]


def test_missing_results_are_failed_cases(fleet_envelopes):
    verdict = criteria.evaluate(fleet_envelopes, {}, missing=[{'host': 'oss9', 'survey': 'obdfilter',
                                                              'reason': 'no result in the run directory'}])
    assert verdict['verdict'] == 'failed'
    assert verdict['failures'] == ['obdfilter on oss9: no result in the run directory (run %s)' % RUN_ID]


@pytest.mark.parametrize('bad, message', [
    ('text', 'must be a mapping'),
    ({'floor': []}, "unknown kind 'floor'"),
    ({'floors': {}}, 'must be a list'),
    ({'floors': [{'metric': 'x'}]}, r'floors\[0\]: missing min'),
    ({'floors': [{'metric': 'x', 'min': 'fast'}]}, r'floors\[0\].min must be a number'),
    ({'floors': [{'metric': 'x', 'min': 1, 'minimum': 2}]}, 'unknown key minimum'),
    ({'outliers': [{'direction': 'sideways'}]}, 'direction must be low, high or both'),
    ({'regressions': [{}]}, 'missing max_pct'),
])
def test_invalid_criteria_are_named(bad, message):
    with pytest.raises(criteria.CriteriaError, match=message):
        criteria.validate_criteria(bad)


def test_junit_xml_is_standard_and_carries_the_reasons(fleet_envelopes):
    verdict = criteria.evaluate(fleet_envelopes, {
        'floors': [{'metric': 'obdfilter_write_mib_s', 'min': 900}, {'metric': 'mdtest_*', 'min': 1, 'required': False}],
        'outliers': [{'metric': 'obdfilter_*'}]})
    root = ET.fromstring(criteria.junit_xml(verdict))
    assert root.tag == 'testsuites'
    assert int(root.get('tests')) == verdict['counts']['tests'] == len(root.findall('./testsuite/testcase'))
    assert int(root.get('failures')) == verdict['counts']['failed'] == len(root.findall('.//failure'))
    assert len(root.findall('.//skipped')) == 1
    suites = {suite.get('name') for suite in root.findall('testsuite')}
    assert suites == {'lustre.iokit acceptance.floors', 'lustre.iokit acceptance.outliers'}
    failure = root.find(".//testcase[@name='floor obdfilter_write_mib_s >= 900 [oss3]']/failure")
    assert 'oss3' in failure.get('message') and '500.00 MiB/s' in failure.get('message') and RUN_ID in failure.text
    assert root.find(".//property[@name='run_id']").get('value') == RUN_ID


def test_samples_or_envelopes_give_the_same_verdict(fleet_envelopes):
    rules = {'floors': [{'metric': '*_write_mib_s', 'min': 100}]}
    assert criteria.evaluate(fleet_envelopes, rules) == criteria.evaluate(as_samples(fleet_envelopes), rules)
