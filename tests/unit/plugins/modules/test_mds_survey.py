# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The mds_survey module on a fake MDS: validation before anything is made, check-mode plan, envelope, cleanup."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
import os

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import progress, results
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState, run_tag
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.mds_survey import parse_mds_survey
from ansible_collections.lustre.iokit.plugins.modules import mds_survey
from ansible_collections.lustre.iokit.tests.unit.plugins.module_utils.engines.test_mds_engine import FakeRunner

READ_ONLY = (['lctl', 'dl'], ['lctl', 'get_param', '-n', 'version'], ['lctl', 'lustre_build_version'])


class Node:
    fake = None


@pytest.fixture(autouse=True)
def seams(fake_runners):
    Node.fake = FakeRunner()
    fake_runners(mds_survey, Node.fake)


@pytest.fixture
def run_module(run_in_process):
    return functools.partial(run_in_process, mds_survey)


def base(tmp_path, **change):
    args = {'thrlo': 1, 'thrhi': 2, 'file_count': 100, 'dir_count': 1, 'run_id': 'test-run',
            'workdir': str(tmp_path / 'work')}
    args.update(change)
    return args


def made_anything():
    return [argv for argv in Node.fake.calls if argv not in [list(argv_) for argv_ in READ_ONLY]
            and not (argv[1:3] == ['get_param', '-n'] and argv[3].endswith('.filesfree'))]


@pytest.mark.parametrize('change, message', [
    ({'thrlo': 8, 'thrhi': 4}, 'thrlo: 8 is greater than thrhi (4)'),
    ({'file_count': 1}, 'file_count: 1 is less than 2 threads'),
    ({'tests': ['lookup', 'destroy']}, "tests: the first test must be 'create'"),
    ({'targets': ['testfs-MDT0007']}, 'targets: testfs-MDT0007 is not a device on this node'),
    ({'targets': ['testfs-MDT0002']}, 'targets: testfs-MDT0002 is AT, not UP'),
    ({'timeout': 0}, 'timeout: must be at least 1 second'),
    ({'dir_count': 4}, 'dir_count: 4 is greater than every thread count'),
])
def test_bad_parameters_fail_before_anything_is_made(run_module, tmp_path, change, message):
    result = run_module(base(tmp_path, **change))
    assert result['failed'] is True and message in result['msg'], result['msg']
    assert made_anything() == []
    assert not os.path.exists(str(tmp_path / 'work' / 'test-run'))


def test_check_mode_returns_the_plan_and_touches_nothing(run_module, tmp_path):
    result = run_module(base(tmp_path, thrlo=1, thrhi=4, dir_count=2), check_mode=True)
    assert made_anything() == []
    assert result['status'] == 'skipped' and result['records'] == []
    assert [point['thr'] for point in result['plan']['points'] if point['skip'] is None] == [2, 4]
    assert result['plan']['lines'][:2] == ['thread counts to run: [2, 4]', 'MDTs: %s' % [
        target['target'] for target in result['plan']['targets']]]
    tag = run_tag(result['run_id'])
    assert result['plan']['echo_clients'] == ['testfs-MDT0000_%s_ecc' % tag, 'testfs-MDT0001_%s_ecc' % tag]
    assert NodeState(str(tmp_path / 'work')).read()['echo_clients'] == []


def test_a_run_returns_a_valid_envelope_and_leaves_nothing(run_module, tmp_path):
    result = run_module(base(tmp_path))
    envelope = result['envelope']
    assert results.validate_envelope(envelope) == []
    assert envelope['status'] == 'ok' and envelope['survey'] == 'mds'
    assert [record['thr'] for record in envelope['records']] == [1, 2]
    assert result['changed'] is True and 'started' not in result
    # Each MDT's fill level before the sweep, from one lctl call per MDT.
    mdts = [target['target'] for target in envelope['environment']['targets']]
    assert mdts and envelope['environment']['free_inodes'] == dict((mdt, 3 << 30) for mdt in mdts)
    assert envelope['environment']['total_inodes'] == dict((mdt, 4 << 30) for mdt in mdts)
    with open(envelope['raw_output']) as handle:
        parsed = parse_mds_survey(handle.read())
    assert [record['tests']['create']['ops_s'] for record in parsed] == [1000.0, 1000.0]
    state = NodeState(str(tmp_path / 'work')).read()
    assert state['echo_clients'] == [] and state['modules'] == []
    assert Node.fake.echo == {}
    assert ['modprobe', 'obdecho'] in Node.fake.calls


def test_a_run_counts_its_planned_points_in_its_progress_and_keeps_its_work(run_module, tmp_path):
    envelope = run_module(base(tmp_path))['envelope']
    summary = progress.read_progress(str(tmp_path / 'work' / 'test-run' / 'mds.progress.json'))
    assert (summary['done'], summary['total'], summary['state']) == (2, 2, 'ok')
    # what a later plan measures its rate from
    assert envelope['plan_work']['points'] == 2 and envelope['plan_work']['unit'] == 'operations per MDT'


def test_an_error_on_one_test_gives_a_partial_result(run_module, tmp_path):
    Node.fake.failures = {(27, 'lookup'): 'error: test_lookup-1: Input/output error\n'}
    result = run_module(base(tmp_path, thrlo=2))
    assert result['status'] == 'partial'
    assert result['records'][0]['tests']['lookup']['status'] == 'error'
    assert result['errors'][0]['point'] == {'thr': 2, 'test': 'lookup'}


class StoppedAtCreate(FakeRunner):
    """The ``stop_at_create``-th create of the first MDT's echo client is cut short, as a kill or timeout does."""

    def __init__(self, stop_at_create):
        FakeRunner.__init__(self)
        self.stop_at_create = stop_at_create
        self.creates = 0

    def _answer(self, argv):
        if argv[1:2] == ['--threads'] and argv[5] == 'test_create' and argv[4] == '27':
            self.creates += 1
            if self.creates == self.stop_at_create:
                self.stop_at = (27, 'create')
        return FakeRunner._answer(self, argv)


def thread_counts_measured():
    return sorted(set(thr for thr, test, unused in Node.fake.threads_started if test == 'create'))


def test_a_rerun_of_a_cut_run_measures_only_the_missing_thread_counts(run_module, tmp_path, fake_runners):
    # thread counts 1, 2 and 4; the third create is cut short
    Node.fake = StoppedAtCreate(3)
    fake_runners(mds_survey, Node.fake)
    first = run_module(base(tmp_path, thrhi=4))
    assert first['status'] == 'partial' and [record['thr'] for record in first['records']] == [1, 2]
    Node.fake = FakeRunner()
    fake_runners(mds_survey, Node.fake)
    second = run_module(base(tmp_path, thrhi=4))
    assert second['status'] == 'ok'
    assert thread_counts_measured() == [4]
    assert [(record['thr'], record['attempt']) for record in second['records']] == [(1, 1), (2, 1), (4, 2)]
    assert [item['attempt'] for item in second['envelope']['attempts']] == [1, 2]
    assert results.validate_envelope(second['envelope']) == []
    summary = progress.read_progress(str(tmp_path / 'work' / 'test-run' / 'mds.progress.json'))
    assert (summary['done'], summary['total'], summary['attempt']) == (3, 3, 2)


def test_a_rerun_with_other_parameters_is_refused_and_force_rerun_starts_over(run_module, tmp_path, fake_runners):
    Node.fake = StoppedAtCreate(2)
    fake_runners(mds_survey, Node.fake)
    assert run_module(base(tmp_path, thrhi=4))['status'] == 'partial'
    Node.fake = FakeRunner()
    fake_runners(mds_survey, Node.fake)
    refused = run_module(base(tmp_path, thrhi=4, file_count=200))
    assert refused['failed'] is True and thread_counts_measured() == []
    assert 'mds: run test-run not resumed' in refused['msg'] and 'file_count was 100' in refused['msg']
    forced = run_module(base(tmp_path, thrhi=4, file_count=200, force_rerun=True))
    assert forced['status'] == 'ok' and thread_counts_measured() == [1, 2, 4]
    assert [record['attempt'] for record in forced['records']] == [1, 1, 1]


@pytest.mark.parametrize('change, message', [
    ({'point_s': 10.0, 'engine': 'iokit'}, 'point_s: the installed mds-survey creates its fixed file_count at every '
     'point; time-bounded points need engine native'),
    ({'point_s': -1.0}, 'point_s: must be more than 0 seconds, got -1'),
    ({'point_s': 10.0, 'point_min_items': 0}, 'point_min_items: must be at least 1, got 0'),
])
def test_bounded_points_that_cannot_apply_are_refused_before_anything_is_made(run_module, tmp_path, change, message):
    result = run_module(base(tmp_path, **change))
    assert result['failed'] is True and message in result['msg'], result['msg']
    assert made_anything() == []


def test_the_default_floor_is_point_budgets_items_per_mdt():
    settings = mds_survey.bounded_settings({'point_s': 20.0, 'point_min_items': None}, ['mdt0', 'mdt1'])
    assert (settings['point_s'], settings['point_min_items']) == (20.0, 10000)
    assert settings['floor_reason'].startswith('10000 items per MDT')
    given = mds_survey.bounded_settings({'point_s': 20.0, 'point_min_items': 500}, ['mdt0'])
    assert given == {'point_s': 20.0, 'point_min_items': 500, 'floor_reason': 'point_min_items 500 items per MDT'}
    # unbounded, the floor is still given: the plan shows what the fast profile would create
    assert mds_survey.bounded_settings({'point_s': None, 'point_min_items': None}, ['mdt0'])['point_min_items'] == 10000


def test_check_mode_shows_the_fast_profiles_worst_case_beside_the_full_grid(run_module, tmp_path):
    plan = run_module(base(tmp_path), check_mode=True)['plan']
    assert 'bounded' not in plan
    assert plan['point_sizing'] == {'full': 100, 'floor': 10000, 'point_s': None,
                                    'floor_reason': plan['point_sizing']['floor_reason']}
    # the floor is above file_count: the fast profile would take longer than the full grid
    fast = plan['estimate']['fast_profile']
    assert fast['floor'] == 10000 and fast['estimated_duration_most_s'] > plan['estimated_duration_s']


def test_check_mode_shows_the_bounded_points_and_their_worst_case(run_module, tmp_path):
    result = run_module(base(tmp_path, point_s=5.0, point_min_items=8), check_mode=True)
    plan = result['plan']
    assert plan['bounded']['target_duration_s'] == 5.0 * 5 * 2
    assert plan['lines'][3] == ('time-bounded points: 5 s per test, floor point_min_items 8 items per MDT; about 50 s '
                                'if every test lasts its time; at worst 1000 operations per MDT (every point at the '
                                'larger of its full count and the floor), against 1000 for the full counts')


def test_a_bounded_run_records_what_each_point_created(run_module, tmp_path):
    result = run_module(base(tmp_path, point_s=5.0, point_min_items=8))
    assert result['status'] == 'ok', result['errors']
    # the first point creates the floor; the next, sized at the fake MDTs' 1000 items per second, would create 5000
    # and is capped at file_count
    assert [(r['thr'], r['moved_items_per_mdt'], r['point_limit']) for r in result['records']] == [
        (1, 8, 'floor, no rate yet'), (2, 100, 'full size')]
    assert all(r['bounded'] is True and r['elapsed_s'] >= 0 for r in result['records'])
    assert [thr_test[:2] for thr_test in Node.fake.threads_started[:2]] == [(1, 'create'), (1, 'create')]
    assert [argv[-1] for argv in Node.fake.calls if argv[1:2] == ['--threads']][:2] == ['8', '8']
    assert result['envelope']['parameters']['point_s'] == 5.0
    assert results.validate_envelope(result['envelope']) == []


def test_the_eta_weighs_bounded_points_alike_and_full_ones_by_files():
    points = [{'thr': thr, 'files_per_thread': 100 // thr, 'skip': None} for thr in (1, 2)]
    spec = mds_survey.MdsSpec()
    assert spec.planned(None, {'points': points}) == [{'thr': 1, 'weight': 100}, {'thr': 2, 'weight': 100}]
    # a bounded point lasts about its point_s per test whatever it creates: each weighs one point
    assert spec.planned(None, {'points': points, 'bounded': {'point_s': 20.0}}) == [{'thr': 1}, {'thr': 2}]


def test_sweep_start_near_knee_reaches_the_adaptive_sweep(run_module, tmp_path):
    result = run_module(base(tmp_path, sweep='adaptive', sweep_start_near_knee=True))
    assert result['sweep']['start_near_knee'] is True
    assert run_module(base(tmp_path, run_id='other'))['sweep']['start_near_knee'] is False
