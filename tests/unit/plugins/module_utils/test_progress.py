# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A survey's progress files: every finished point on disk, the summary with its ETA, the builder's one hook."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import progress, results
from ansible_collections.lustre.iokit.tests.unit.fakes import FakeClock


def record(thr, write):
    return {'ost': 1, 'rsz_kib': 1024, 'obj': 1, 'thr': thr, 'tests': {'write': {'mib_s': write, 'status': 'ok'}},
            'per_ost': {}}


PLAN = [{'rsz_kib': 1024, 'nobj': 1, 'thr': thr, 'weight': 100} for thr in (1, 2, 4, 8)]


def read_lines(path):
    with open(path) as stream:
        return [json.loads(line) for line in stream]


def test_each_point_is_on_disk_before_the_next_and_the_summary_counts_them(tmp_path):
    clock = FakeClock(1000.0)
    log = progress.ProgressLog(str(tmp_path), 'obdfilter', 'run1', 'oss1', planned=PLAN, clock=clock)
    summary_file = progress.progress_path(str(tmp_path), 'obdfilter')
    first = progress.read_progress(summary_file, now=clock.now)
    assert (first['done'], first['total'], first['eta_s'], first['state']) == (0, 4, None, 'running')
    assert first['current'] == {'rsz_kib': 1024, 'nobj': 1, 'thr': 1}

    clock.now += 10
    log.point_done(record(1, 100.0))
    clock.now += 30
    log.point_done(record(2, 150.0))
    lines = read_lines(progress.points_path(str(tmp_path), 'obdfilter'))
    assert [line['n'] for line in lines] == [1, 2]
    assert [line['duration_s'] for line in lines] == [10, 30]
    assert lines[1]['point'] == {'rsz_kib': 1024, 'obj': 1, 'thr': 2, 'ost': 1}
    assert lines[1]['record']['tests']['write']['mib_s'] == 150.0 and lines[1]['attempt'] == 1

    summary = progress.read_progress(summary_file, now=clock.now)
    assert (summary['done'], summary['total']) == (2, 4)
    assert summary['current'] == {'rsz_kib': 1024, 'nobj': 1, 'thr': 4}
    assert summary['last']['figure'] == 'write 150.0 MiB/s'
    # half of the planned work in 40 s: 40 s left
    assert summary['elapsed_s'] == 40 and summary['eta_s'] == 40


def test_between_points_elapsed_moves_on_and_the_eta_counts_down(tmp_path):
    clock = FakeClock(1000.0)
    log = progress.ProgressLog(str(tmp_path), 'obdfilter', 'run1', 'oss1', planned=PLAN, clock=clock)
    clock.now += 20
    log.point_done(record(1, 100.0))
    later = progress.read_progress(progress.progress_path(str(tmp_path), 'obdfilter'), now=clock.now + 15)
    assert later['elapsed_s'] == 35 and later['eta_s'] == 45


def test_heavier_points_left_make_a_longer_eta():
    assert progress.estimate_remaining_s(10.0, 1.0, 4.0) == 30.0
    assert progress.estimate_remaining_s(10.0, 1.0, 10.0) == 90.0
    assert progress.estimate_remaining_s(0.0, 0.0, 4.0, planned_remaining_s=120.0) == 120.0


def test_the_builder_tells_its_observers_of_every_record_and_of_the_end(tmp_path):
    builder = results.EnvelopeBuilder('run1', 'oss1', 'obdfilter', 'native')
    log = progress.ProgressLog(str(tmp_path), 'obdfilter', 'run1', 'oss1', planned=PLAN[:2])
    builder.observers.append(log)
    builder.add_record(record(1, 90.0))
    builder.add_record(record(2, 95.0))
    envelope = builder.finish()
    summary = progress.read_progress(progress.progress_path(str(tmp_path), 'obdfilter'))
    assert summary['state'] == envelope['status'] == 'ok'
    assert (summary['done'], summary['total'], summary['eta_s'], summary['current']) == (2, 2, 0.0, None)
    assert len(read_lines(progress.points_path(str(tmp_path), 'obdfilter'))) == 2


def test_a_progress_file_that_cannot_be_written_costs_the_survey_nothing(tmp_path):
    log = progress.ProgressLog(str(tmp_path / 'gone'), 'obdfilter', 'run1', 'oss1', planned=PLAN)
    log.point_done(record(1, 90.0))
    assert log.done == 1 and len(log.problems) == 2
    assert progress.read_progress(str(tmp_path / 'gone' / 'x.json')) is None


def test_planned_points_keeps_the_runnable_ones_with_their_weight():
    points = [{'rsz_kib': 1024, 'nobj': 1, 'thr': 1, 'size_kib': 4, 'skip': None, 'pages': 3},
              {'rsz_kib': 1024, 'nobj': 1, 'thr': 512, 'size_kib': 4, 'skip': 'too many threads'}]
    assert progress.planned_points(points, ('rsz_kib', 'nobj', 'thr'), 'size_kib') == [
        {'rsz_kib': 1024, 'nobj': 1, 'thr': 1, 'weight': 4}]


PARAMETERS = {'size_mib': 8, 'thrhi': 8, 'tests': ['write', 'read']}


def test_a_rerun_gets_the_points_the_killed_attempt_finished_whole_and_a_torn_line_is_measured_again(tmp_path):
    run_dir = str(tmp_path)
    attempt, attempts, earlier = progress.start_attempt(run_dir, 'obdfilter', PARAMETERS, clock=FakeClock(100))
    assert (attempt, earlier) == (1, [])
    log = progress.ProgressLog(run_dir, 'obdfilter', 'run1', 'oss1', planned=PLAN, attempt=attempt)
    log.point_done(record(1, 100.0))
    cut = record(2, 0.0)
    cut['tests']['read'] = {'mib_s': None, 'status': 'incomplete'}
    log.point_done(cut)
    with open(progress.points_path(run_dir, 'obdfilter'), 'a') as stream:
        stream.write('{"n": 3, "record": {"thr"')  # SIGKILL in the middle of a write

    attempt, attempts, earlier = progress.start_attempt(run_dir, 'obdfilter', PARAMETERS, clock=FakeClock(200))
    assert attempt == 2
    assert [(item['attempt'], item['finished']) for item in attempts] == [(1, None), (2, None)]
    assert [(item['thr'], item['attempt']) for item in earlier] == [(1, 1)]

    log = progress.ProgressLog(run_dir, 'obdfilter', 'run1', 'oss1', planned=PLAN[1:], attempt=2, done_before=1)
    fields = {}
    log.envelope_fields = fields
    fresh = record(2, 120.0)
    log.point_done(fresh)
    assert fresh['attempt'] == 2
    log.finish('partial')
    assert [item['attempt'] for item in fields['attempts']] == [1, 2] and fields['attempts'][1]['finished']
    summary = progress.read_progress(progress.progress_path(run_dir, 'obdfilter'))
    assert (summary['done'], summary['total']) == (2, 4)


def test_other_parameters_under_the_same_run_id_are_refused_unless_forced(tmp_path):
    run_dir = str(tmp_path)
    progress.start_attempt(run_dir, 'obdfilter', PARAMETERS)
    with pytest.raises(progress.ResumeError, match=r'thrhi changed: thrhi was 8.*new iokit_run_id.*iokit_force_rerun'):
        progress.start_attempt(run_dir, 'obdfilter', dict(PARAMETERS, thrhi=16))
    attempt, attempts, earlier = progress.start_attempt(run_dir, 'obdfilter', dict(PARAMETERS, thrhi=16), force=True)
    assert (attempt, len(attempts), earlier) == (1, 1, [])


def test_a_longer_timeout_resumes_the_run(tmp_path):
    # a killed attempt's points are kept: the attempt that finishes the sweep may be given more time
    run_dir = str(tmp_path)
    progress.start_attempt(run_dir, 'obdfilter', dict(PARAMETERS, timeout=60))
    attempt, attempts, unused = progress.start_attempt(run_dir, 'obdfilter', dict(PARAMETERS, timeout=3600))
    assert (attempt, len(attempts)) == (2, 2)
    with pytest.raises(progress.ResumeError, match=r'thrhi changed'):
        progress.start_attempt(run_dir, 'obdfilter', dict(PARAMETERS, timeout=3600, thrhi=16))


def test_the_cleanup_keeps_only_the_progress_files_of_a_run_directory(tmp_path):
    run_dir = tmp_path / 'run1'
    (run_dir / 'sub').mkdir(parents=True)
    for name in ('obdfilter.attempts.json', 'obdfilter.summary', 'sub/x'):
        (run_dir / name).write_text('x')
    (run_dir / 'obdfilter.points.jsonl').write_text(FINISHED_POINT_LINE)
    (run_dir / 'obdfilter.progress.json').write_text('{"state": "running"}')
    assert progress.remove_tree_keeping_points(str(run_dir)) is False
    assert sorted(os.listdir(str(run_dir))) == ['obdfilter.attempts.json', 'obdfilter.points.jsonl',
                                                'obdfilter.progress.json']
    other = tmp_path / 'run2'
    other.mkdir()
    (other / 'mds.summary').write_text('x')
    assert progress.remove_tree_keeping_points(str(other)) is True and not other.exists()
    # A run that ended ok leaves nothing to resume: all of it goes.
    done = tmp_path / 'run3'
    done.mkdir()
    log = progress.ProgressLog(str(done), 'obdfilter', 'run3', 'oss1', planned=PLAN[:1])
    log.point_done(record(1, 90.0))
    log.finish('ok')
    assert progress.remove_tree_keeping_points(str(done)) is True and not done.exists()


# One line of <survey>.points.jsonl: a point measured whole, and one the stop of the run cut short.
FINISHED_POINT_LINE = '{"n": 1, "record": {"thr": 1, "tests": {"write": {"status": "ok", "mib_s": 90.0}}}}\n'
CUT_SHORT_POINT_LINE = ('{"n": 1, "record": {"thr": 1, "tests": {"write": {"status": "ok", "mib_s": 90.0}, '
                        '"read": {"status": "incomplete"}}}}\n')


def test_a_run_stopped_in_its_first_point_leaves_nothing_even_if_that_point_was_logged(tmp_path):
    # A rerun measures a cut-short point again: keeping the files for it would only leave debris on the node.
    run_dir = tmp_path / 'run5'
    run_dir.mkdir()
    (run_dir / 'sgpdd.points.jsonl').write_text(CUT_SHORT_POINT_LINE + 'not json\n')
    (run_dir / 'sgpdd.progress.json').write_text('{"state": "running"}')
    (run_dir / 'sgpdd.attempts.json').write_text('{}')
    assert progress.remove_tree_keeping_points(str(run_dir)) is True and not run_dir.exists()


def test_a_run_that_failed_before_its_first_point_leaves_nothing(tmp_path):
    run_dir = tmp_path / 'run4'
    run_dir.mkdir()
    progress.ProgressLog(str(run_dir), 'mdtest', 'run4', 'client1')
    assert progress.remove_tree_keeping_points(str(run_dir)) is True and not run_dir.exists()


@pytest.mark.parametrize('measured, figure', [
    ({'mode': 'rw_1m', 'read_mib_s': 812.34, 'write_mib_s': 790.0}, 'write 790.0 MiB/s, read 812.3 MiB/s'),
    ({'access': 'fpp', 'ior_write_mib_s': 1500.0, 'ior_read_mib_s': None}, 'write 1500.0 MiB/s'),
    ({'thr': 4, 'tests': {'create': {'ops_s': 2500.0, 'status': 'ok'}}}, 'create 2500.0 ops/s'),
    ({'mode': 'ping', 'read_mib_s': None, 'write_mib_s': None}, None),
    ({'nodes': 1, 'unit': 'ops/sec', 'summary': {'directory creation': {'mean': 800.0}, 'file stat': {'mean': 15000.0},
                                                 'file creation': {'mean': 1800.0}}},
     'file creation 1800.0 ops/s, file stat 15000.0 ops/s'),
])
def test_the_last_figure_of_lnet_ior_mds_and_mdtest_records(measured, figure):
    assert progress.figure_of(measured) == figure


def test_steps_of_a_one_record_survey_are_its_points_and_its_record_is_kept_not_counted(tmp_path):
    clock = FakeClock(1000.0)
    log = progress.ProgressLog(str(tmp_path), 'ost', 'run-1', 'client1', clock=clock, planned_duration_s=40.0,
                               planned=[{'operation': operation, 'ost': index}
                                        for operation in ('write', 'read') for index in (0, 1)])
    assert (log.summary()['total'], log.summary()['eta_s']) == (4, 40.0)
    for seconds, (operation, index) in zip((10, 10, 5), [('write', 0), ('write', 1), ('read', 0)]):
        clock.now += seconds
        log.step_done({'operation': operation, 'ost': index}, '%s 3.2 MiB/s' % operation)
    summary = log.summary()
    assert (summary['done'], summary['total'], summary['current']) == (3, 4, {'operation': 'read', 'ost': 1})
    assert summary['last'] == {'point': {'operation': 'read', 'ost': 0}, 'figure': 'read 3.2 MiB/s', 'duration_s': 5.0}
    assert summary['eta_s'] == round(25.0 / 3, 1)
    clock.now += 5
    log.step_done({'operation': 'read', 'ost': 1}, None)
    the_record = {'active_osts': 2, 'osts': []}
    log.point_done(the_record)
    log.point_done(the_record)
    log.finish('ok')
    assert (log.summary()['done'], log.summary()['total']) == (4, 4)
    assert len(read_lines(progress.points_path(str(tmp_path), 'ost'))) == 1


def test_a_point_the_sweep_passes_over_leaves_the_total_and_the_current_point(tmp_path):
    clock = FakeClock()
    planned = [{'step': 'tasks_per_node', 'nodes': 1, 'tasks_per_node': count} for count in (1, 2, 4)]
    planned.append({'step': 'nodes', 'nodes': 2})
    log = progress.ProgressLog(str(tmp_path), 'mdtest', 'run5', 'client1', planned=planned, clock=clock)
    clock.sleep(3)
    log.point_done({'step': 'tasks_per_node', 'nodes': 1, 'tasks_per_node': 1})
    # an adaptive step stopped: the point is out of the total, the next planned one is current
    assert log.point_skipped({'step': 'tasks_per_node', 'nodes': 1, 'tasks_per_node': 4}) is True
    assert log.point_skipped({'step': 'tasks_per_node', 'nodes': 1, 'tasks_per_node': 4}) is False
    summary = log.summary()
    assert (summary['done'], summary['total'], summary['current']) == (
        1, 3, {'step': 'tasks_per_node', 'nodes': 1, 'tasks_per_node': 2})
    assert summary['eta_s'] == 6.0
    clock.sleep(3)
    log.point_done({'step': 'tasks_per_node', 'nodes': 1, 'tasks_per_node': 2})
    # a point named with more keys than planned (the nodes step's tasks per node, known once it runs) matches
    assert log.point_skipped({'step': 'nodes', 'nodes': 2, 'tasks_per_node': 2}) is True
    summary = log.summary()
    assert (summary['done'], summary['total'], summary['current'], summary['eta_s']) == (2, 2, None, 0.0)
