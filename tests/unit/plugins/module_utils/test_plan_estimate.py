# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The plan estimator every survey uses: each plan's work, an assumed or a stored run's rate, the fleet's totals."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import plan_estimate, results

MIB = 1024 * 1024

OBDFILTER_PLAN = {
    'points': [{'thr': 1, 'skip': None}, {'thr': 2, 'skip': None}, {'thr': 3, 'skip': 'thr not a multiple'}],
    # OST0001 moves more than OST0000: it sets the pace
    'per_ost': {'OST0000': {'bytes_written': 64 * MIB, 'bytes_read': 64 * MIB},
                'OST0001': {'bytes_written': 100 * MIB, 'bytes_read': 100 * MIB}},
}

PLANS = {
    'obdfilter': OBDFILTER_PLAN,
    'sgpdd': {'points': [{'skip': None}, {'skip': 'ENOMEM'}],
              'bytes_written_per_device': {'/dev/sdb': 10 * MIB, '/dev/sdc': 30 * MIB},
              'bytes_read_per_device': {'/dev/sdb': 10 * MIB, '/dev/sdc': 30 * MIB}},
    'ost': {'osts': [{'ost': 0, 'active': True}, {'ost': 1, 'active': False}, {'ost': 2, 'active': True}],
            'bytes_written_per_ost': 8 * MIB, 'bytes_read_per_ost': 8 * MIB},
    'mds': {'points': [{'thr': 1, 'skip': None}, {'thr': 2, 'skip': None}],
            'files_per_mdt_per_point': {1: 1000, 2: 1000}, 'tests': ['create', 'lookup', 'destroy']},
    'lnet': {'points': 4, 'estimated_duration_s': 120},
    'ior': {'points': [{}, {}], 'bytes_written': 512 * MIB, 'bytes_read': 512 * MIB},
    'mdtest': {'points': [{}, {}, {}]},
}

# (points, bytes written, bytes read, work amount)
WORK = {
    'obdfilter': (2, 164 * MIB, 164 * MIB, 200.0),
    'sgpdd': (1, 40 * MIB, 40 * MIB, 60.0),
    'ost': (2, 16 * MIB, 16 * MIB, 32.0),
    'mds': (2, 0, 0, 6000.0),
    'lnet': (4, 0, 0, 120.0),
    'ior': (2, 512 * MIB, 512 * MIB, 1024.0),
    'mdtest': (3, 0, 0, 3.0),
}


@pytest.mark.parametrize('survey', sorted(PLANS))
def test_every_survey_has_its_work(survey):
    work = plan_estimate.work_of(survey, PLANS[survey])
    assert (work['points'], work['bytes_written'], work['bytes_read'], work['amount']) == WORK[survey]
    assert work['unit'] == plan_estimate.WORK_UNITS[survey][0]


def test_every_stored_survey_but_stats_collect_has_work():
    assert set(plan_estimate.WORK_UNITS) == set(results.SURVEYS) - {'stats_collect'}
    with pytest.raises(ValueError):
        plan_estimate.work_of('stats_collect', {})


def test_a_given_rate_is_assumed_and_named():
    answer = plan_estimate.estimate('obdfilter', OBDFILTER_PLAN, 50, 'plan_ost_mib_s')
    assert answer['estimated_duration_s'] == 4.0
    assert answer['estimate_basis'] == 'assumed 50 MiB/s per OST (plan_ost_mib_s)'
    assert answer['source'] == 'assumed' and 'measured_run' not in answer


def test_without_a_rate_the_built_in_one_is_assumed_and_said():
    answer = plan_estimate.estimate('sgpdd', PLANS['sgpdd'])
    assert answer['rate'] == 300.0 and answer['estimated_duration_s'] == 0.2
    assert answer['estimate_basis'] == 'assumed 300 MiB/s per device (built-in guess)'


def test_lnet_takes_its_sampling_time():
    answer = plan_estimate.estimate('lnet', PLANS['lnet'])
    assert answer['estimated_duration_s'] == 120.0 and 'stat_count' in answer['estimate_basis']


def test_mdtest_has_no_duration_until_a_run_is_stored():
    answer = plan_estimate.estimate('mdtest', PLANS['mdtest'])
    assert answer['estimated_duration_s'] is None and answer['estimate_basis'].startswith('no rate assumed')


def test_an_ost_survey_without_active_ost_has_no_duration():
    answer = plan_estimate.estimate('ost', {'osts': [{'ost': 0, 'active': False}], 'bytes_written_per_ost': MIB})
    assert answer['points'] == 0 and answer['estimated_duration_s'] is None


def envelope(run_id='earlier', status='ok', duration_s=20.0, amount=200.0, points=2, **extra):
    made = {'schema': results.SCHEMA, 'run_id': run_id, 'host': 'oss1', 'survey': 'obdfilter', 'engine': 'native',
            'status': status, 'parameters': {}, 'started': '2026-03-01T10:00:00Z',
            'finished': '2026-03-01T10:00:20Z', 'duration_s': duration_s, 'records': [{'thr': 1}],
            'errors': [] if status == 'ok' else [{'point': None, 'message': 'x'}], 'environment': {},
            'raw_output': None,
            'plan_work': {'points': points, 'amount': amount, 'unit': 'MiB per OST'}}
    made.update(extra)
    return made


def test_a_stored_run_gives_its_measured_rate_and_is_named():
    measured = plan_estimate.measured_rate('obdfilter', envelope())
    assert measured['rate'] == 10.0
    answer = plan_estimate.estimate('obdfilter', OBDFILTER_PLAN, 500, 'plan_ost_mib_s', measured=measured)
    assert answer['estimated_duration_s'] == 20.0 and answer['source'] == 'stored run'
    assert answer['estimate_basis'] == 'from run earlier of 2026-03-01 (10 MiB/s per OST measured)'
    assert answer['measured_run'] == {'run_id': 'earlier', 'finished': '2026-03-01T10:00:20Z'}


def test_a_resumed_run_counts_the_time_of_its_attempts():
    attempts = [{'attempt': 1, 'started': '2026-03-01T10:00:00Z', 'finished': '2026-03-01T10:00:05Z'},
                {'attempt': 2, 'started': '2026-03-01T11:00:00Z', 'finished': '2026-03-01T11:00:15Z'}]
    # 20 s of measuring, not the hour between the attempts nor the last attempt's 15 s alone
    assert plan_estimate.measured_rate('obdfilter', envelope(duration_s=15.0, attempts=attempts))['rate'] == 10.0


def test_an_adaptive_run_counts_only_the_points_it_measured():
    measured = plan_estimate.measured_rate('obdfilter', envelope(skipped_points=[{'point': {}, 'reason': 'sat'}]))
    assert measured['rate'] == 5.0


def test_a_bounded_run_gives_no_rate_its_points_moved_less_than_the_plan():
    assert plan_estimate.measured_rate('obdfilter', envelope(parameters={'point_s': 20.0})) is None
    assert plan_estimate.measured_rate('obdfilter', envelope(parameters={'point_s': None}))['rate'] == 10.0


def test_merged_iterations_each_ran_the_plan():
    assert plan_estimate.measured_rate('obdfilter', envelope(duration_s=40.0, parameters={'iterations': 2}))['rate'] == 10.0


@pytest.mark.parametrize('survey, unit', [('ior', 'MiB through the clients'), ('mdtest', 'points')])
def test_a_client_surveys_own_repeat_count_is_not_counted_again(survey, unit):
    # ior -i 3 / mdtest -i 3: each point of the plan's work already holds the three passes, the run is one envelope
    stored = envelope(survey=survey, parameters={'iterations': 3}, plan_work={'points': 2, 'amount': 200, 'unit': unit})
    assert plan_estimate.measured_rate(survey, stored)['rate'] == 10.0


@pytest.mark.parametrize('changed', [{'status': 'partial'}, {'plan_work': None}, {'duration_s': 0},
                                     {'plan_work': {'points': 2, 'amount': 200, 'unit': 'operations per MDT'}},
                                     {'survey': 'mds'}])
def test_a_run_that_cannot_tell_a_rate_is_not_used(changed):
    assert plan_estimate.measured_rate('obdfilter', dict(envelope(), **changed)) is None


def test_fleet_totals_add_the_work_and_take_the_slowest_host():
    totals = plan_estimate.fleet_totals([
        {'points': 2, 'bytes_written': 10, 'bytes_read': 1, 'estimated_duration_s': 30.0},
        {'points': 3, 'bytes_written': 20, 'bytes_read': 2, 'estimated_duration_s': 90.0},
        {'points': 1, 'bytes_written': 0, 'bytes_read': 0, 'estimated_duration_s': None}])
    assert totals == {'hosts': 3, 'points': 6, 'bytes_written': 30, 'bytes_read': 3, 'estimated_duration_s': 90.0,
                      'unknown_hosts': 1, 'fast_duration_most_s': None}


def test_an_adaptive_plan_gives_the_full_grid_as_its_worst_case_and_a_flat_start_as_its_fewest():
    plan = dict(OBDFILTER_PLAN, sweep={'mode': 'adaptive', 'min_gain_pct': 3.0, 'patience': 1, 'points_full': 2,
                                       'points_most': 2, 'points_fewest': 1})
    answer = plan_estimate.estimate('obdfilter', plan, rate=100.0)
    # 200 MiB per OST at 100 MiB/s: 2 s for the full grid, also the worst case; half the points, about half of it
    assert answer['estimated_duration_s'] == 2.0
    assert answer['adaptive'] == {'points_full': 2, 'points_most': 2, 'points_fewest': 1,
                                  'estimated_duration_most_s': 2.0, 'estimated_duration_fewest_s': 1.0,
                                  'min_gain_pct': 3.0, 'patience': 1}
    full = dict(OBDFILTER_PLAN, sweep={'mode': 'full', 'min_gain_pct': 3.0, 'patience': 1, 'points_full': 2})
    assert 'adaptive' not in plan_estimate.estimate('obdfilter', full, rate=100.0)
    # without a rate the points still say it
    mdtest = {'points': [{}, {}, {}, {'reuses_best_tasks_point': True}, {}],
              'sweep': {'mode': 'adaptive', 'points_full': 4, 'points_most': 4, 'points_fewest': 2}}
    answer = plan_estimate.estimate('mdtest', mdtest)
    assert answer['points'] == 4 and answer['adaptive']['estimated_duration_most_s'] is None
    assert (answer['adaptive']['points_most'], answer['adaptive']['points_fewest']) == (4, 2)
