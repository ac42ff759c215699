# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.lustre.iokit.plugins.filter.merge_iterations import FilterModule, merge_iterations
from ansible_collections.lustre.iokit.plugins.module_utils.results import check_envelope
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.analysis import repeat_stats
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.samples import as_samples


def envelope(status='ok', records=None, errors=None, started='2026-11-22T10:00:00Z', finished='2026-11-22T10:01:00Z',
             duration=60.0, raw='/tmp/lustre-iokit/r1/obdfilter_survey-iteration1.summary', host='oss1'):
    if records is None:
        records = [{'ost': 1, 'sz_kib': 4096, 'rsz_kib': 1024, 'obj': 1, 'thr': thr,
                    'tests': {'write': {'mib_s': 100.0 + thr, 'status': 'ok'}},
                    'targets': ['testfs-OST0000']} for thr in (1, 2)]
    return {'schema': 'lustre.iokit/result/v1', 'run_id': 'r1', 'host': host, 'survey': 'obdfilter',
            'engine': 'native', 'status': status, 'parameters': {'thrlo': 1, 'thrhi': 2},
            'started': started, 'finished': finished, 'duration_s': duration, 'records': records,
            'errors': errors or [], 'environment': {'lustre_version': '2.15.5'}, 'raw_output': raw}


def test_one_iteration_is_returned_unchanged():
    given = envelope()
    assert merge_iterations([given]) is given
    assert merge_iterations([given], iterations=1) is given


def test_two_ok_iterations_make_one_ok_envelope_with_numbered_records():
    second = envelope(started='2026-11-22T10:01:05Z', finished='2026-11-22T10:02:00Z', duration=55.0,
                      raw='/tmp/lustre-iokit/r1/obdfilter_survey-iteration2.summary')
    merged = check_envelope(merge_iterations([envelope(), second], iterations=2))
    assert merged['status'] == 'ok' and merged['errors'] == []
    assert [(record['thr'], record['iteration']) for record in merged['records']] == [(1, 1), (2, 1), (1, 2), (2, 2)]
    assert merged['parameters'] == {'thrlo': 1, 'thrhi': 2, 'iterations': 2}
    assert (merged['started'], merged['finished'], merged['duration_s']) == (
        '2026-11-22T10:00:00Z', '2026-11-22T10:02:00Z', 115.0)
    assert merged['raw_output'].endswith('-iteration1.summary')
    # The given envelopes are not changed.
    assert 'iteration' not in envelope()['records'][0]


def test_the_report_sees_the_iterations_as_repeats_of_each_point():
    second = envelope(records=[{'ost': 1, 'sz_kib': 4096, 'rsz_kib': 1024, 'obj': 1, 'thr': thr,
                                'tests': {'write': {'mib_s': 110.0 + thr, 'status': 'ok'}},
                                'targets': ['testfs-OST0000']} for thr in (1, 2)])
    rows = repeat_stats(as_samples([merge_iterations([envelope(), second])]))
    assert sorted((row['point']['thr'], row['n'], row['mean']) for row in rows) == [(1, 2, 106.0), (2, 2, 107.0)]


def test_an_iteration_that_stopped_the_repeats_makes_the_envelope_partial_and_names_what_did_not_run():
    stopped = envelope(status='partial', records=envelope()['records'][:1],
                       errors=[{'point': {'thr': 2}, 'message': 'timeout after 60 s'}])
    merged = check_envelope(merge_iterations([envelope(), stopped], iterations=3))
    assert merged['status'] == 'partial'
    assert merged['errors'] == [
        {'point': {'thr': 2}, 'message': 'timeout after 60 s', 'iteration': 2},
        {'point': None, 'iteration': 3, 'message': 'iteration 3 of 3 not run: iteration 2 ended partial'}]
    assert merged['parameters']['iterations'] == 3 and len(merged['records']) == 3


def test_a_failed_first_iteration_is_a_failed_envelope():
    failed = envelope(status='failed', records=[], errors=[{'point': None, 'message': 'lctl: No such device'}])
    merged = check_envelope(merge_iterations([failed], iterations=2))
    assert merged['status'] == 'failed' and [error['iteration'] for error in merged['errors']] == [1, 2]


def test_check_mode_iterations_stay_skipped():
    skipped = envelope(status='skipped', records=[])
    assert merge_iterations([skipped], iterations=2)['status'] == 'skipped'


@pytest.mark.parametrize('given, iterations, expected', [
    ([], None, 'non-empty list'),
    ('x', None, 'non-empty list'),
    ([envelope()], 0, 'iterations must be an integer'),
    ([envelope(), envelope()], 1, 'iterations must be an integer'),
    ([envelope(), envelope()], True, 'iterations must be an integer'),
    ([envelope(), envelope(host='oss2')], 2, 'of one host, got oss1, oss2'),
])
def test_bad_input_is_refused_naming_the_problem(given, iterations, expected):
    with pytest.raises(AnsibleFilterError, match=expected):
        merge_iterations(given, iterations=iterations)


def test_the_filter_is_registered():
    assert FilterModule().filters()['merge_iterations'] is merge_iterations
