# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The sgpdd_survey module with its runner and device checks replaced: validation, refusals, plan, envelope."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import results
from ansible_collections.lustre.iokit.plugins.module_utils.engines import sgpdd
from ansible_collections.lustre.iokit.plugins.module_utils.runner import CommandResult
from ansible_collections.lustre.iokit.plugins.module_utils.safety import DeviceRefused
from ansible_collections.lustre.iokit.plugins.modules import sgpdd_survey

TIMING = 'time to transfer data was 0.010000 secs, 419.43 MB/sec\n8192+0 records in\n8192+0 records out\n'


class Devices:
    """Every command succeeds; sgp_dd prints its timing. Records every command."""

    def __init__(self):
        self.commands = []

    def run_many(self, argvs, env=None, cwd=None):
        self.commands.extend(list(argv) for argv in argvs)
        return [CommandResult(argv, 0, '', TIMING if argv[0] == 'sgp_dd' else '', 0.01) for argv in argvs]


class Node:
    devices = None
    runners = []


class CleanDevices:
    refuse = {}

    def __init__(self, runner):
        self.runner = runner

    def check_all(self, devices, allow_signatures=False, destructive=True):
        refusals = dict((device, reasons) for device, reasons in self.refuse.items() if device in devices)
        if refusals and destructive:
            raise DeviceRefused(refusals)
        return [{'device': device, 'path': device, 'kind': 'block', 'name': device.split('/')[-1],
                 'block': device.split('/')[-1]} for device in devices]


def fake_target(identity, runner):
    return sgpdd.Target(identity['device'], identity['path'], sgpdd.PATH_BLOCK, 4096, 16384, identity['name'],
                        identity['block'])


def fake_environment(runner, targets):
    return {'sg3_utils': '1.46', 'kernel': '6.1', 'mem_total_kib': 8 * 1024 * 1024, 'sgp_dd_version': '5.77',
            'devices': [target.as_dict() for target in targets]}


@pytest.fixture(autouse=True)
def seams(monkeypatch, fake_runners):
    Node.devices = Devices()
    Node.runners = fake_runners(sgpdd_survey, Node.devices)
    CleanDevices.refuse = {}
    monkeypatch.setattr(sgpdd_survey, 'DeviceSafety', CleanDevices)
    monkeypatch.setattr(sgpdd.__name__ + '.resolve_target', fake_target)
    monkeypatch.setattr(sgpdd.__name__ + '.collect_environment', fake_environment)


@pytest.fixture
def run_module(run_in_process):
    return functools.partial(run_in_process, sgpdd_survey)


BASE = {'devices': ['/dev/loop0', '/dev/loop1'], 'size_mib': 4, 'crghi': 2, 'thrhi': 2, 'destroy_data': True,
        'run_id': 'test-run'}


def sgp_dd_commands():
    return [argv for argv in Node.devices.commands if argv[0] == 'sgp_dd']


@pytest.mark.parametrize('change, message', [
    ({'thrlo': 8, 'thrhi': 4}, 'thrlo: 8 is greater than thrhi (4)'),
    ({'crglo': 4, 'crghi': 2}, 'crglo: 4 is greater than crghi (2)'),
    ({'destroy_data': False}, 'destroy_data: must be true to run the write action'),
    ({'devices': []}, 'devices: give at least one device'),
    ({'size_mib': 0}, 'size_mib: must be at least 1'),
    ({'run_id': '../x'}, 'run_id must not contain ".."'),
    ({'actions': ['read', 'read']}, 'actions: each action may appear once'),
])
def test_invalid_options_fail_before_any_command(run_module, change, message):
    result = run_module(dict(BASE, **change))
    assert result['failed'] and message in result['msg']
    assert Node.devices.commands == []


def test_devices_is_required(run_module):
    result = run_module({'size_mib': 4})
    assert result['failed'] and 'devices' in result['msg']


def test_rszlo_not_a_multiple_of_the_block_size_fails_naming_the_option(run_module):
    result = run_module(dict(BASE, rszlo=1, rszhi=1))
    assert result['failed'] is True
    assert result['msg'].startswith('rszlo: 1 KiB is not a multiple of the block size of /dev/loop0')
    assert sgp_dd_commands() == []


def test_refused_device_touches_no_device(run_module):
    CleanDevices.refuse = {'/dev/loop1': ['/dev/loop1 is mounted at /mnt (ext4); unmount it first']}
    result = run_module(BASE)
    assert result['failed'] is True
    assert result['msg'] == 'refusing /dev/loop1: /dev/loop1 is mounted at /mnt (ext4); unmount it first'
    assert result['refusals'] == {'/dev/loop1': ['/dev/loop1 is mounted at /mnt (ext4); unmount it first']}
    assert sgp_dd_commands() == []


def test_check_mode_returns_the_plan_and_runs_nothing(run_module):
    result = run_module(BASE, check_mode=True)
    assert sgp_dd_commands() == []
    assert result['status'] == 'skipped' and result['records'] == [] and result['changed'] is True
    plan = result['plan']
    assert [(p['crg'], p['thr'], p['skip']) for p in plan['points']] == [
        (1, 1, None), (1, 2, None), (2, 1, sgpdd.SKIP_THR_BELOW_CRG), (2, 2, None)]
    assert plan['bytes_written_per_device'] == {'/dev/loop0': 3 * 4 * 1048576, '/dev/loop1': 3 * 4 * 1048576}
    assert plan['lines'] == ['skipped points: 1; bytes written per device: %s' % plan['bytes_written_per_device']]
    assert len(plan['skipped_points']) == 1
    assert results.validate_envelope(result['envelope']) == []


def test_run_returns_a_valid_envelope_and_writes_raw_output(run_module, tmp_path):
    result = run_module(dict(BASE, workdir=str(tmp_path)))
    envelope = result['envelope']
    assert results.validate_envelope(envelope) == []
    assert (envelope['status'], envelope['survey'], envelope['run_id']) == ('ok', 'sgpdd', 'test-run')
    # the top level repeats the envelope except Ansible's async keys
    assert 'started' not in result and 'finished' not in result
    assert result['records'] == envelope['records'] and result['changed'] is True
    assert len(result['records']) == 3 and len(sgp_dd_commands()) == 2 * (2 + 2 + 4)
    assert result['raw_output'] == str(tmp_path / 'test-run' / 'sgpdd_survey.summary')
    summary = (tmp_path / 'test-run' / 'sgpdd_survey.summary').read_text()
    assert summary.count('write ') == 3 and 'sgpdd-survey on /dev/loop0 /dev/loop1' in summary
    assert (tmp_path / 'test-run' / 'sgpdd_survey.detail').read_text().count('time to transfer data') == 16
    assert envelope['parameters']['devices'] == ['/dev/loop0', '/dev/loop1']
    assert envelope['environment']['sg3_utils'] == '1.46'


def test_read_only_run_reports_no_change(run_module, tmp_path):
    result = run_module(dict(BASE, workdir=str(tmp_path), actions=['read'], destroy_data=False))
    assert result['changed'] is False and result['status'] == 'ok'
    assert all(argv[2] == 'of=/dev/null' for argv in sgp_dd_commands())


def test_timeout_option_sets_the_runner_deadline(run_module, tmp_path):
    run_module(dict(BASE, workdir=str(tmp_path), timeout=30))
    assert Node.runners[0].deadline is not None


class StoppedAt(Devices):
    """Like Devices, but the ``stop_at``-th batch of sgp_dd (1-based) is cut short, as a kill or timeout does."""

    def __init__(self, stop_at):
        Devices.__init__(self)
        self.stop_at = stop_at
        self.batches = 0
        self.stop_reason = None

    def expired(self):
        return self.stop_reason is not None

    def run_many(self, argvs, env=None, cwd=None):
        if argvs and argvs[0][0] == 'sgp_dd':
            self.batches += 1
            if self.batches == self.stop_at:
                self.commands.extend(list(argv) for argv in argvs)
                self.stop_reason = 'timeout'
                return [CommandResult(argv, -15, '', '', 0.01, timed_out=True) for argv in argvs]
        return Devices.run_many(self, argvs, env=env)


def measured_points():
    """(crg, thr) per device of each point whose write ran, from the sgp_dd commands (one per region)."""
    return [argv for argv in sgp_dd_commands() if argv[1].startswith('if=/dev/zero')]


def test_a_rerun_of_a_cut_run_measures_only_the_missing_points_and_numbers_the_attempts(
        run_module, tmp_path, fake_runners):
    # three points (crg 1 thr 1, crg 1 thr 2, crg 2 thr 2), each a write then a read: the 5th batch is the
    # third point's write, cut short
    Node.devices = StoppedAt(5)
    fake_runners(sgpdd_survey, Node.devices)
    first = run_module(dict(BASE, workdir=str(tmp_path)))
    assert first['status'] == 'partial' and len(first['records']) == 2
    assert [record['attempt'] for record in first['records']] == [1, 1]
    Node.devices = Devices()
    fake_runners(sgpdd_survey, Node.devices)
    second = run_module(dict(BASE, workdir=str(tmp_path)))
    assert second['status'] == 'ok'
    # only the third point ran again: two devices x two regions, one write and one read each
    assert len(sgp_dd_commands()) == 2 * 2 * 2
    assert [(record['crg_per_dev'], record['thr_per_dev'], record['attempt']) for record in second['records']] == [
        (1, 1, 1), (1, 2, 1), (2, 2, 2)]
    assert [(item['attempt'], item['finished'] is not None) for item in second['envelope']['attempts']] == [
        (1, True), (2, True)]
    assert results.validate_envelope(second['envelope']) == []


def test_a_rerun_with_other_parameters_is_refused_naming_them_and_force_rerun_starts_over(run_module, tmp_path,
                                                                                          fake_runners):
    Node.devices = StoppedAt(3)
    fake_runners(sgpdd_survey, Node.devices)
    assert run_module(dict(BASE, workdir=str(tmp_path)))['status'] == 'partial'
    Node.devices = Devices()
    fake_runners(sgpdd_survey, Node.devices)
    refused = run_module(dict(BASE, workdir=str(tmp_path), size_mib=8))
    assert refused['failed'] is True and sgp_dd_commands() == []
    assert 'sgpdd: run test-run not resumed' in refused['msg'] and 'size_mib was 4' in refused['msg']
    assert 'iokit_force_rerun=true' in refused['msg']
    forced = run_module(dict(BASE, workdir=str(tmp_path), size_mib=8, force_rerun=True))
    assert forced['status'] == 'ok' and len(sgp_dd_commands()) == 2 * (2 + 2 + 4)
    assert [record['attempt'] for record in forced['records']] == [1, 1, 1]
    assert [item['attempt'] for item in forced['envelope']['attempts']] == [1]


def test_the_iokit_engine_does_not_resume(run_module, tmp_path, monkeypatch):
    calls = []

    def run_iokit(runner, script, devices, rslt, **unused):
        calls.append(script)
        return [], [{'point': None, 'message': 'script failed'}], None
    monkeypatch.setattr(sgpdd.__name__ + '.run_iokit', run_iokit)
    monkeypatch.setattr(sgpdd_survey.survey_module, 'iokit_script_path', lambda module: '/bin/true')
    result = run_module(dict(BASE, workdir=str(tmp_path), engine='iokit'))
    assert calls == ['/bin/true'] and 'attempts' not in result['envelope']


# --------------------------------------------------------------------------
# Time-bounded points and the start near the knee


@pytest.mark.parametrize('change, message', [
    ({'point_s': 10.0, 'engine': 'iokit'}, 'point_s: the installed sgpdd-survey moves its fixed size at every point; '
     'time-bounded points need engine native'),
    ({'point_s': 0.0}, 'point_s: must be more than 0 seconds, got 0'),
    ({'point_s': -1.0}, 'point_s: must be more than 0 seconds, got -1'),
    ({'point_s': 10.0, 'point_min_mib': 0}, 'point_min_mib: must be at least 1, got 0'),
    ({'point_s': 10.0, 'controller_cache_mib': -1}, 'controller_cache_mib: must not be negative (0: no write-back '
     'cache), got -1'),
])
def test_bounded_settings_that_cannot_apply_are_refused_before_any_command(run_module, change, message):
    result = run_module(dict(BASE, **change))
    assert result['failed'] is True and message in result['msg'], result['msg']
    assert Node.devices.commands == []


def test_the_default_floor_is_the_controller_cache_over_the_devices():
    params = {'devices': ['/dev/sd%s' % letter for letter in 'bcdefghi'], 'point_s': 20.0, 'point_min_mib': None,
              'controller_cache_mib': None}
    assert sgpdd_survey.bounded_settings(params) == {
        'point_s': 20.0, 'point_min_mib': 1024,
        'floor_reason': '1024 MiB per device: controller cache assumed 8192 MiB (not reported) over 8 devices'}
    params['controller_cache_mib'] = 16384
    assert sgpdd_survey.bounded_settings(params)['floor_reason'] == (
        '2048 MiB per device: controller cache 16384 MiB over 8 devices')
    params['point_min_mib'] = 1000
    assert sgpdd_survey.bounded_settings(params) == {
        'point_s': 20.0, 'point_min_mib': 1000, 'floor_reason': 'point_min_mib 1000 MiB per device'}
    # unbounded, the floor is still given: the plan shows what the fast profile would move
    assert sgpdd_survey.bounded_settings(dict(params, point_s=None)) == {
        'point_s': None, 'point_min_mib': 1000, 'floor_reason': 'point_min_mib 1000 MiB per device'}


def test_a_default_floor_the_devices_cannot_hold_names_point_min_mib_and_where_it_came_from(run_module):
    # the fake devices hold 64 MiB; 8 GiB assumed over two devices is 4 GiB each
    result = run_module(dict(BASE, point_s=5.0), check_mode=True)
    assert result['failed'] is True and sgp_dd_commands() == []
    assert result['msg'].startswith('point_min_mib: /dev/loop0 holds 67108864 bytes, but boundary (1024 blocks) plus '
                                    'a bounded point\'s floor (4096 MiB per device: controller cache assumed 8192 MiB '
                                    '(not reported) over 2 devices; 4096 MiB'), result['msg']


def test_check_mode_shows_the_default_floor_and_the_worst_case(run_module, monkeypatch):
    def one_gib_target(identity, runner):
        return sgpdd.Target(identity['device'], identity['path'], sgpdd.PATH_BLOCK, 4096, 262144, identity['name'],
                            identity['block'])
    monkeypatch.setattr(sgpdd.__name__ + '.resolve_target', one_gib_target)
    result = run_module(dict(BASE, point_s=5.0, controller_cache_mib=0), check_mode=True)
    bounded = result['plan']['bounded']
    assert bounded['floor_reason'] == '512 MiB per device: controller cache 0 MiB over 2 devices (at least 512 MiB)'
    assert (bounded['point_min_mib'], bounded['target_duration_s']) == (512, 5.0 * 2 * 3)
    # every point at its 512 MiB floor at worst, against 4 MiB for the I/O kit's: three points, two actions
    assert bounded['worst_case_kib_per_device'] == 2 * 3 * 512 * 1024
    assert bounded['full_kib_per_device'] == 2 * 3 * 4 * 1024


def test_check_mode_prints_the_bounded_points_in_a_line(run_module):
    result = run_module(dict(BASE, point_s=5.0, point_min_mib=8), check_mode=True)
    assert result['plan']['lines'][1] == (
        'time-bounded points: 5 s per action, floor point_min_mib 8 MiB per device; about 30 s if every action lasts '
        'its time; at worst 48 MiB per device (every point at the larger of its full size and the floor), against '
        '24 MiB for the full sizes')
    # the points, what they write and the estimate are the full grid's
    assert result['plan']['bytes_written_per_device'] == {'/dev/loop0': 3 * 4 * 1048576, '/dev/loop1': 3 * 4 * 1048576}


def test_a_bounded_run_records_what_each_point_moved(run_module, tmp_path):
    result = run_module(dict(BASE, workdir=str(tmp_path), point_s=5.0, point_min_mib=8))
    assert result['status'] == 'ok', result['errors']
    records = result['records']
    # the floor wins over the 4 MiB full size at every point, whatever the rate
    assert [(r['bounded'], r['point_s'], r['moved_mib_per_device'], r['size_kib']) for r in records] == [
        (True, 5.0, 8, 2 * 8 * 1024)] * 3
    assert [r['point_limit'] for r in records] == ['floor, no rate yet', 'floor', 'floor']
    assert records[0]['sized_from_mib_s'] is None and records[1]['sized_from_mib_s'] > 0
    assert records[0]['elapsed_s'] == pytest.approx(sum(test['elapsed_s'] for test in records[0]['tests'].values()))
    # 8 MiB of 1 MiB records on each device: 2048 blocks of 4 KiB in its one region, or 1024 in each of two
    assert sorted(set(option for argv in sgp_dd_commands() for option in argv if option.startswith('count='))) == [
        'count=1024', 'count=2048']
    assert result['envelope']['parameters']['point_s'] == 5.0
    assert results.validate_envelope(result['envelope']) == []


def test_the_eta_weighs_bounded_points_alike_and_full_ones_by_size():
    points = [{'rsz_kib': 1024, 'crg': 1, 'thr': thr, 'size_kib': 2 * 8192, 'skip': None} for thr in (1, 2)]
    spec = sgpdd_survey.SgpddSpec()
    assert [point.get('weight') for point in spec.planned(None, {'points': points})] == [16384, 16384]
    # a bounded point lasts about its point_s per action whatever it moves: each weighs one point
    bounded = spec.planned(None, {'points': points, 'bounded': {'point_s': 20.0}})
    assert bounded == [{'rsz_kib': 1024, 'crg': 1, 'thr': thr} for thr in (1, 2)]


@pytest.mark.parametrize('given, started_near', [({}, False), ({'sweep_start_near_knee': False}, False),
                                                 ({'sweep_start_near_knee': True}, True)])
def test_the_start_near_the_knee_reaches_the_adaptive_sweep(run_module, tmp_path, given, started_near):
    result = run_module(dict(BASE, workdir=str(tmp_path), sweep='adaptive', **given))
    assert result['status'] == 'ok'
    assert result['sweep']['start_near_knee'] is started_near
