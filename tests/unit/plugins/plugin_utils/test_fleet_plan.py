# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The plan in words: a survey's fleet (hosts side by side), a run (surveys one after another), and the action's
choice between a stored run's rate and the assumed one."""

from __future__ import annotations

import os

from ansible_collections.lustre.iokit.plugins.action.survey_plan import plan_entry
from ansible_collections.lustre.iokit.plugins.filter.fleet_plan import fleet_plan
from ansible_collections.lustre.iokit.plugins.module_utils import plan_estimate, results
from ansible_collections.lustre.iokit.plugins.plugin_utils import results_store

GIB = 1024 ** 3


def estimate(points, written, duration, basis='assumed 500 MiB/s per OST (built-in guess)'):
    return {'points': points, 'bytes_written': written, 'bytes_read': 0, 'estimated_duration_s': duration,
            'estimate_basis': basis}


ENTRIES = [
    {'survey': 'obdfilter', 'host': 'oss1', 'estimate': estimate(12, 3 * GIB, 300.0)},
    {'survey': 'obdfilter', 'host': 'oss2', 'estimate': estimate(12, 3 * GIB, 600.0)},
    {'survey': 'mds', 'host': 'mds1', 'estimate': estimate(2, 0, 120.0)},
    {'survey': 'mdtest', 'host': 'client1', 'estimate': estimate(3, 0, None, 'no rate assumed')},
]


def test_a_survey_fleet_takes_its_longest_host():
    lines = fleet_plan(ENTRIES, survey='obdfilter')
    assert lines[0] == ('obdfilter plan: 2 hosts, 24 points, 6.0 GiB written, about 10 min '
                        '(hosts side by side, the longest oss2)')
    assert lines[1] == '  oss1: 12 points, 3.0 GiB written, about 5 min (assumed 500 MiB/s per OST (built-in guess))'


def test_a_run_adds_its_surveys_and_says_at_least_when_one_is_unknown():
    lines = fleet_plan(ENTRIES)
    assert lines[0] == ('run plan: 3 surveys on 4 hosts, 29 points, 6.0 GiB written, at least 12 min '
                        '(surveys one after another: obdfilter about 10 min, mds about 2 min, mdtest duration unknown)')
    assert '  oss2: obdfilter, 12 points, 3.0 GiB written, about 10 min' in lines
    assert '  client1: mdtest, 3 points, 0 B written, duration unknown' in lines


def test_the_hosts_variables_give_the_entries_the_roles_registered():
    hostvars = [{'obdfilter_plan_estimate': {'entry': ENTRIES[0]}, 'mds_plan_estimate': {'entry': ENTRIES[2]},
                 'inventory_hostname': 'oss1'},
                # a host where the task was skipped
                {'obdfilter_plan_estimate': {'skipped': True}}]
    lines = fleet_plan(hostvars)
    assert lines[0].startswith('run plan: 2 surveys on 2 hosts, 14 points, 3.0 GiB written, about 7 min')


def test_the_newest_entry_of_a_host_and_survey_counts():
    lines = fleet_plan(ENTRIES[:1] + [{'survey': 'obdfilter', 'host': 'oss1', 'estimate': estimate(1, GIB, 60.0)}])
    assert lines[0].startswith('run plan: 1 survey on 1 host, 1 points, 1.0 GiB written, about 1 min')


PLAN = {'points': [{'skip': None}], 'per_ost': {'OST0000': {'bytes_written': 100 * 1024 * 1024, 'bytes_read': 0}}}


def test_the_action_takes_the_stored_run_else_the_modules_estimate(tmp_path):
    plan = dict(PLAN, estimate=plan_estimate.estimate('obdfilter', PLAN, 50, 'plan_ost_mib_s'))
    assumed = plan_entry('obdfilter', plan, 'oss1', str(tmp_path), 'now')
    assert assumed['estimate']['estimate_basis'] == 'assumed 50 MiB/s per OST (plan_ost_mib_s)'
    envelope = {'schema': results.SCHEMA, 'run_id': 'before', 'host': 'oss1', 'survey': 'obdfilter',
                'engine': 'native', 'status': 'ok', 'parameters': {}, 'started': '2026-03-01T10:00:00Z',
                'finished': '2026-03-01T10:00:10Z', 'duration_s': 10.0, 'records': [{'thr': 1}], 'errors': [],
                'environment': {}, 'raw_output': None,
                'plan_work': {'points': 1, 'amount': 200.0, 'unit': 'MiB per OST'}}
    path = results_store.envelope_path(str(tmp_path), 'before', 'oss1', 'obdfilter')
    os.makedirs(os.path.dirname(path))
    results_store.write_json_atomic(path, envelope)
    measured = plan_entry('obdfilter', plan, 'oss1', str(tmp_path), 'now')['estimate']
    # 200 MiB per OST in 10 s: 20 MiB/s, so the plan's 100 MiB takes 5 s
    assert measured['estimated_duration_s'] == 5.0 and measured['source'] == 'stored run'
    assert measured['estimate_basis'] == 'from run before of 2026-03-01 (20 MiB/s per OST measured)'


def test_an_adaptive_sweeps_host_line_says_up_to_the_full_grid_and_as_few_as_a_flat_start():
    plan = {'points': [{'thr': thr, 'skip': None} for thr in (1, 2, 4, 8)],
            'per_ost': {'OST0000': {'bytes_written': 600 * GIB, 'bytes_read': 0}},
            'sweep': {'mode': 'adaptive', 'min_gain_pct': 3.0, 'patience': 1, 'points_full': 4, 'points_most': 4,
                      'points_fewest': 2}}
    entry = plan_entry('obdfilter', plan, 'oss1')
    # 600 GiB at 500 MiB/s: 1228.8 s; a flat start runs half the points
    assert entry['estimate']['adaptive']['estimated_duration_fewest_s'] == 614.4
    assert fleet_plan([entry], survey='obdfilter')[1] == (
        '  oss1: 4 points, 600.0 GiB written, about 20 min (assumed 500 MiB/s per OST (built-in guess)); adaptive sweep:'
        ' up to the full grid (4 points, about 20 min) if every curve keeps gaining, as few as 2 points (about 10 min)'
        ' if every curve is flat from its first doubling')


def test_the_fast_profiles_worst_case_scales_the_full_grid_by_what_a_point_moves():
    sizing = {'full': 16384, 'floor': 512, 'floor_reason': 'test', 'point_s': None}
    # 20 s at 100 MiB/s moves 2000 MiB of the full 16384: the full grid's hour becomes 2000/16384 of it
    assert plan_estimate.fast_profile_bound(sizing, 3600.0, 100.0)['estimated_duration_most_s'] == round(
        3600.0 * 2000 / 16384, 1)
    # the floor wins over the time: a node whose cache is larger than the I/O kit's size is not faster
    big_cache = dict(sizing, floor=32768)
    assert plan_estimate.fast_profile_bound(big_cache, 3600.0, 100.0)['estimated_duration_most_s'] == 7200.0
    # a plan's own point_s is the one it would use
    assert plan_estimate.fast_profile_bound(dict(sizing, point_s=40), 3600.0, 100.0)['point_s'] == 40
    assert plan_estimate.fast_profile_bound(None, 3600.0, 100.0) is None
    assert plan_estimate.fast_profile_bound(sizing, None, 100.0) is None


def with_fast(entry, fast_s):
    estimate = dict(entry['estimate'], fast_profile={'point_s': 20, 'floor': 512, 'floor_reason': 'test',
                                                     'estimated_duration_most_s': fast_s})
    return dict(entry, estimate=estimate)


def test_check_mode_shows_the_full_grid_and_the_fast_profile_per_host_per_survey_and_for_the_run():
    entries = [with_fast(ENTRIES[0], 60.0), with_fast(ENTRIES[1], 120.0), ENTRIES[2]]
    survey = fleet_plan(entries, survey='obdfilter')
    assert survey[0].endswith('about 10 min (hosts side by side, the longest oss2); '
                              'fast profile at most 2 min (80 % less than the full grid)')
    assert survey[1].endswith('; fast profile at most 1 min (80 % less than the full grid) '
                              '(20 s per test, floor 512 per target: test)')
    run = fleet_plan(entries)
    # obdfilter's 2 min beside mds's full 2 min (it has no bounded points in this plan)
    assert run[0].endswith('; fast profile at most 4 min (67 % less than the full grid)')
    assert '  mds1: mds, 2 points, 0 B written, about 2 min' in run
    # a fleet where one host has no fast estimate shows none (its worst case is unknown)
    assert 'fast profile' not in fleet_plan([with_fast(ENTRIES[0], 60.0), ENTRIES[1]], survey='obdfilter')[0]
