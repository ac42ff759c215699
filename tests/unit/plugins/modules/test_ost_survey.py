# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ost_survey module on a fake client: refusals, check-mode plan, envelope, cache restored, files removed."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
import json
import os

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import progress as progress_utils
from ansible_collections.lustre.iokit.plugins.module_utils import results
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.ost_survey import parse_ost_survey
from ansible_collections.lustre.iokit.plugins.modules import ost_survey
from ansible_collections.lustre.iokit.tests.unit.fakes import FakeClock
from ansible_collections.lustre.iokit.tests.unit.plugins.module_utils.engines.test_ost_engine import (
    INSTANCE,
    FakeRunner,
)


class Node:
    fake = None


@pytest.fixture
def mount(tmp_path, fake_runners):
    path = tmp_path / 'mnt'
    path.mkdir()
    Node.fake = FakeRunner(FakeClock(1000.0), str(path))
    fake_runners(ost_survey, Node.fake)
    return str(path)


@pytest.fixture
def run_module(run_in_process):
    return functools.partial(run_in_process, ost_survey)


def base(tmp_path, mount, **change):
    args = {'mount_point': mount, 'size_mib': 4, 'run_id': 'test-run', 'workdir': str(tmp_path / 'work')}
    args.update(change)
    return args


def changes():
    return [argv for argv in Node.fake.calls
            if argv[0] in ('dd', 'sync') or argv[:2] in (['lctl', 'set_param'], ['lfs', 'setstripe'])]


@pytest.mark.parametrize('change, message', [
    ({'size_mib': 0}, 'size_mib: must be at least 1'),
    ({'min_free_factor': 0.5}, 'min_free_factor: must be at least 1'),
    ({'timeout': 0}, 'timeout: must be at least 1 second'),
])
def test_bad_parameters_fail_before_anything_is_made(run_module, tmp_path, mount, change, message):
    result = run_module(base(tmp_path, mount, **change))
    assert result['failed'] is True and message in result['msg']
    assert Node.fake.calls == []


def test_a_mount_that_is_not_lustre_is_refused(run_module, tmp_path, mount):
    Node.fake.getname_rc = 19
    result = run_module(base(tmp_path, mount))
    assert result['failed'] is True
    assert result['msg'].startswith('mount_point: %s is not a Lustre client mount' % mount)
    assert changes() == []


def test_short_free_space_is_refused(run_module, tmp_path, mount):
    Node.fake.available = {0: 100, 1: None, 2: 10 ** 6, 3: 10 ** 6}
    result = run_module(base(tmp_path, mount))
    assert result['failed'] is True and result['msg'].startswith('size_mib: OST index 0 (testfs-OST0000_UUID) has 100 KiB')
    assert changes() == []


def test_check_mode_returns_the_plan_and_touches_nothing(run_module, tmp_path, mount):
    result = run_module(base(tmp_path, mount), check_mode=True)
    assert changes() == [] and os.listdir(mount) == []
    assert result['status'] == 'skipped'
    assert result['plan']['bytes_written_per_ost'] == 4 * 1024 * 1024
    assert [entry['active'] for entry in result['plan']['osts']] == [True, False, True, True]
    assert result['plan']['lines'] == ['OSTs: %s in %s' % ([entry['ost'] for entry in result['plan']['osts']],
                                                           result['plan']['directory'])]


def test_a_run_returns_one_record_restores_the_cache_and_removes_the_files(run_module, tmp_path, mount):
    result = run_module(base(tmp_path, mount))
    envelope = result['envelope']
    assert results.validate_envelope(envelope) == []
    assert envelope['status'] == 'ok' and len(envelope['records']) == 1
    record = envelope['records'][0]
    assert (record['active_osts'], record['inactive_osts'], record['complete']) == (3, 1, True)
    assert Node.fake.calls[-1] == ['lctl', 'set_param', '-n', 'llite.%s.max_cached_mb=12051' % INSTANCE]
    assert os.listdir(mount) == []
    # The test files are crossed off; left for the cleanup: the run's raw output directory and the workdir the
    # module created. The module's own process entry is crossed off as it exits.
    state = NodeState(str(tmp_path / 'work')).read()
    assert sorted(entry['path'] for entry in state['paths']) == [
        str(tmp_path / 'work'), str(tmp_path / 'work' / 'test-run')]
    assert state['processes'] == []
    with open(envelope['raw_output']) as handle:
        assert parse_ost_survey(handle.read())['active_osts'] == 3


def test_the_envelope_records_how_full_each_ost_measured_was_before_the_survey(run_module, tmp_path, mount):
    Node.fake.available = {0: 10 ** 6, 1: None, 2: 900000, 3: 800000}
    envelope = run_module(base(tmp_path, mount))['envelope']
    assert results.validate_envelope(envelope) == []
    measured = ['testfs-OST%04x' % row['ost'] for row in envelope['records'][0]['osts'] if row['write_mib_s']]
    assert measured == ['testfs-OST0000', 'testfs-OST0002', 'testfs-OST0003']
    # lfs df's Available and 1K-blocks, read before anything was written; the inactive OST 1 shows none
    assert envelope['environment']['free_kib'] == {
        'testfs-OST0000': 10 ** 6, 'testfs-OST0002': 900000, 'testfs-OST0003': 800000}
    assert envelope['environment']['total_kib'] == dict((name, 1048576) for name in measured)
    first_write = [argv[0] for argv in Node.fake.calls].index('dd')
    assert ['lfs', 'df', mount] in Node.fake.calls[:first_write]


@pytest.fixture
def sim_init_args(tmp_path):
    return ['--osts', '3', '--mdts', '1', '--ost-size-mib', '32', '--client-mount', str(tmp_path / 'simmnt')]


def test_on_the_simulator_every_ost_measured_has_its_fill_in_the_envelope(run_module, sim, tmp_path):
    mount = str(tmp_path / 'simmnt')
    result = run_module(base(tmp_path, mount, size_mib=1))
    envelope = result['envelope']
    assert envelope['status'] == 'ok', envelope['errors']
    measured = ['%s-OST%04x' % (envelope['environment']['fsname'], row['ost'])
                for row in envelope['records'][0]['osts'] if row['write_mib_s'] is not None]
    assert len(measured) == 3
    environment = envelope['environment']
    assert sorted(environment['free_kib']) == sorted(environment['total_kib']) == sorted(measured)
    # the simulator's 32 MiB OSTs, empty before the survey wrote
    assert all(environment['total_kib'][name] == 32 * 1024 for name in measured)
    assert all(0 < environment['free_kib'][name] <= environment['total_kib'][name] for name in measured)


def test_timeout_gives_a_partial_result_and_cleans_up(run_module, tmp_path, mount):
    Node.fake.stop_at = ('read', 0)
    result = run_module(base(tmp_path, mount))
    assert result['status'] == 'partial'
    assert result['records'][0]['complete'] is False
    assert result['records'][0]['read']['avg_mib_s'] is None
    assert Node.fake.calls[-1] == ['lctl', 'set_param', '-n', 'llite.%s.max_cached_mb=12051' % INSTANCE]
    assert os.listdir(mount) == []


def test_each_ost_written_or_read_moves_the_progress_on(run_module, tmp_path, mount, monkeypatch):
    """The one record comes at the end: the progress counts every OST written, then read, as a point."""
    progress_file = tmp_path / 'work' / 'test-run' / 'ost.progress.json'
    seen = []
    play = Node.fake.run

    def run_noting_the_progress(argv, env=None, cwd=None):
        if argv[0] == 'dd':
            summary = progress_utils.read_progress(str(progress_file))
            seen.append((summary['done'], summary['total'], summary['current'], summary['eta_s'] is not None,
                         (summary['last'] or {}).get('figure')))
        return play(argv, env=env, cwd=cwd)
    monkeypatch.setattr(Node.fake, 'run', run_noting_the_progress)
    result = run_module(base(tmp_path, mount))
    assert result['envelope']['status'] == 'ok'
    # three active OSTs (0, 2, 3): written, then read; the plan's ETA before the first step ends
    assert [entry[:3] for entry in seen] == [
        (0, 6, {'operation': 'write', 'ost': 0}), (1, 6, {'operation': 'write', 'ost': 2}),
        (2, 6, {'operation': 'write', 'ost': 3}), (3, 6, {'operation': 'read', 'ost': 0}),
        (4, 6, {'operation': 'read', 'ost': 2}), (5, 6, {'operation': 'read', 'ost': 3})]
    assert all(entry[3] for entry in seen)
    assert seen[0][4] is None and seen[1][4].startswith('write ') and seen[4][4].startswith('read ')
    final = progress_utils.read_progress(str(progress_file))
    assert (final['state'], final['done'], final['total'], final['current']) == ('ok', 6, 6, None)
    # kept on the node, not counted as more points: each OST's row as its read ended, then the whole record
    with open(str(tmp_path / 'work' / 'test-run' / 'ost.points.jsonl')) as handle:
        kept = [json.loads(line)['record'] for line in handle]
    assert [row.get('ost') for row in kept[:3]] == [0, 2, 3] and kept[3]['active_osts'] == 3


def dd_runs():
    """(operation, OST index) of every dd the fake client ran, in order."""
    return [('write' if argv[1].startswith('of=') else 'read', int(argv[1].rsplit('file', 1)[1]))
            for argv in Node.fake.calls if argv[0] == 'dd']


def cut_while_reading_ost_2(run_module, tmp_path, mount, fake_runners):
    """A first attempt cut while reading OST 2: OST 0 is written and read whole, OSTs 2 and 3 only written."""
    Node.fake.stop_at = ('read', 2)
    first = run_module(base(tmp_path, mount))
    assert first['status'] == 'partial'
    assert dd_runs() == [('write', 0), ('write', 2), ('write', 3), ('read', 0), ('read', 2)]
    Node.fake = FakeRunner(FakeClock(2000.0), mount)
    fake_runners(ost_survey, Node.fake)
    return first


def test_a_rerun_of_a_cut_run_writes_and_reads_only_the_osts_it_left(run_module, tmp_path, mount, fake_runners):
    """OST 0 is kept; OSTs 2 and 3, written but never read back, are written and read again: an OST is never
    written in one attempt and read in another."""
    cut_while_reading_ost_2(run_module, tmp_path, mount, fake_runners)
    second = run_module(base(tmp_path, mount))
    assert second['status'] == 'ok', second['errors']
    assert dd_runs() == [('write', 2), ('write', 3), ('read', 2), ('read', 3)]
    envelope = second['envelope']
    assert results.validate_envelope(envelope) == []
    assert [item['attempt'] for item in envelope['attempts']] == [1, 2]
    assert all(item['finished'] for item in envelope['attempts'])
    [record] = envelope['records']
    assert (record['attempt'], record['complete'], record['active_osts']) == (2, True, 3)
    rows = dict((row['ost'], row) for row in record['osts'])
    assert [(index, rows[index].get('attempt')) for index in (0, 2, 3)] == [(0, 1), (2, 2), (3, 2)]
    assert all(rows[index]['write_mib_s'] and rows[index]['read_mib_s'] for index in (0, 2, 3))
    # the first attempt's row of OST 0 keeps its own times, from before the second attempt began
    assert rows[0]['read_end_time'] <= rows[2]['write_start_time']
    # the statistics are over every OST, the kept one too
    assert record['write']['worst']['ost'] in (0, 2, 3) and record['read']['avg_mib_s'] is not None
    summary = progress_utils.read_progress(str(tmp_path / 'work' / 'test-run' / 'ost.progress.json'))
    assert (summary['state'], summary['done'], summary['total'], summary['attempt']) == ('ok', 6, 6, 2)
    assert os.listdir(mount) == []


def test_a_third_run_of_a_finished_run_measures_nothing_again(run_module, tmp_path, mount, fake_runners):
    cut_while_reading_ost_2(run_module, tmp_path, mount, fake_runners)
    assert run_module(base(tmp_path, mount))['status'] == 'ok'
    Node.fake = FakeRunner(FakeClock(3000.0), mount)
    fake_runners(ost_survey, Node.fake)
    third = run_module(base(tmp_path, mount))
    assert third['status'] == 'ok' and dd_runs() == []
    rows = dict((row['ost'], row.get('attempt')) for row in third['records'][0]['osts'])
    assert rows == {0: 1, 1: None, 2: 2, 3: 2}


def test_force_rerun_and_the_iokit_engine_measure_every_ost(run_module, tmp_path, mount, fake_runners):
    cut_while_reading_ost_2(run_module, tmp_path, mount, fake_runners)
    forced = run_module(base(tmp_path, mount, force_rerun=True))
    assert forced['status'] == 'ok'
    assert dd_runs() == [('write', 0), ('write', 2), ('write', 3), ('read', 0), ('read', 2), ('read', 3)]
    assert [row.get('attempt') for row in forced['records'][0]['osts'] if row['active']] == [1, 1, 1]


def test_a_rerun_with_another_size_is_refused_naming_it(run_module, tmp_path, mount, fake_runners):
    cut_while_reading_ost_2(run_module, tmp_path, mount, fake_runners)
    refused = run_module(base(tmp_path, mount, size_mib=8))
    assert refused['failed'] is True and dd_runs() == []
    assert 'ost: run test-run not resumed' in refused['msg'] and 'size_mib was 4' in refused['msg']


@pytest.mark.parametrize('change, message', [
    ({'point_s': 10.0, 'point_min_mib': 2, 'engine': 'iokit'}, 'point_s: the installed ost-survey moves its fixed '
     'size at every OST; time-bounded points need engine native'),
    ({'point_s': -1.0, 'point_min_mib': 2}, 'point_s: must be more than 0 seconds, got -1'),
    ({'point_s': 10.0, 'point_min_mib': 0}, 'point_min_mib: must be at least 1, got 0'),
    ({'point_s': 10.0}, "point_min_mib: time-bounded points (point_s) need the floor per OST, and this client cannot "
     "read the OSS's memory"),
])
def test_bounded_points_that_cannot_apply_are_refused_before_anything_is_made(run_module, tmp_path, mount, change,
                                                                              message):
    result = run_module(base(tmp_path, mount, **change))
    assert result['failed'] is True and message in result['msg'], result['msg']
    assert Node.fake.calls == []


def test_check_mode_shows_the_bounded_points_and_their_worst_case(run_module, tmp_path, mount):
    result = run_module(base(tmp_path, mount, point_s=5.0, point_min_mib=8), check_mode=True)
    assert changes() == []
    assert result['plan']['bounded']['target_duration_s'] == 5.0 * 2 * 3
    assert result['plan']['lines'][1] == (
        'time-bounded points: 5 s per test, floor point_min_mib 8 MiB per OST; about 30 s if every test lasts its '
        'time; at worst 16 MiB per OST (every OST at the larger of its full size and the floor, written and read), '
        'against 8 MiB for the full size')


def test_without_a_floor_check_mode_has_no_fast_profile_estimate(run_module, tmp_path, mount):
    # the client cannot find the floor: without point_min_mib there is nothing to time the fast profile with
    assert 'point_sizing' not in run_module(base(tmp_path, mount), check_mode=True)['plan']
    plan = run_module(base(tmp_path, mount, point_min_mib=64), check_mode=True)['plan']
    assert 'bounded' not in plan and plan['point_sizing']['floor'] == 64
    assert plan['estimate']['fast_profile']['floor'] == 64


def test_a_bounded_run_records_what_each_ost_moved(run_module, tmp_path, mount):
    # OST 0 moves the floor; the fake client's dd ends at once, so the rate it measured sizes the next OSTs at
    # size_mib
    result = run_module(base(tmp_path, mount, point_s=5.0, point_min_mib=2))
    assert result['status'] == 'ok', result['errors']
    [record] = result['records']
    assert (record['bounded'], record['point_s']) == (True, 5.0)
    rows = [row for row in record['osts'] if row['active']]
    assert [(row['ost'], row['moved_mib'], row['point_limit']) for row in rows] == [
        (0, 2, 'floor, no rate yet'), (2, 4, 'full size'), (3, 4, 'full size')]
    assert rows[0]['sized_from_mib_s'] is None and rows[1]['sized_from_mib_s'] == rows[0]['write_mib_s']
    assert all(row['elapsed_s'] == round(row['write_time_s'] + row['read_time_s'], 6) for row in rows)
    assert [argv[3] for argv in Node.fake.calls if argv[0] == 'dd'] == ['count=2', 'count=4', 'count=4'] * 2
    assert result['envelope']['parameters']['point_min_mib'] == 2
    assert results.validate_envelope(result['envelope']) == []
