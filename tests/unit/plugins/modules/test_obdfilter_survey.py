# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The obdfilter_survey module on a fake Lustre node: validation, version refusals, check-mode plan, envelope."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
import json
import os

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import results
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState, run_tag
from ansible_collections.lustre.iokit.plugins.module_utils.engines import obdfilter
from ansible_collections.lustre.iokit.plugins.modules import obdfilter_survey
from ansible_collections.lustre.iokit.tests.unit.plugins.module_utils.engines.test_obdfilter_engine import (
    OSTS,
    FakeLustre,
)


class Node:
    """One fake Lustre node shared by every runner the module makes."""
    lustre = None
    runners = []


@pytest.fixture(autouse=True)
def seams(fake_runners):
    Node.lustre = FakeLustre(seconds_per_batch=3.0)
    Node.runners = fake_runners(obdfilter_survey, Node.lustre)


@pytest.fixture
def run_module(run_in_process):
    return functools.partial(run_in_process, obdfilter_survey)


def base(tmp_path, **change):
    args = {'size_mib': 16, 'nobjhi': 2, 'thrhi': 2, 'tests': ['write', 'read'], 'run_id': 'test-run',
            'workdir': str(tmp_path / 'work')}
    args.update(change)
    return args


def made_anything():
    return [argv for argv in Node.lustre.commands
            if argv not in (['lsmod'], ['lctl', 'dl'], ['lctl', 'dl', '-t'], ['lctl', 'get_param', '-n', 'version'])
            and not (argv[1:3] == ['get_param', '-n'] and argv[3].endswith('.kbytesavail'))]


@pytest.mark.parametrize('change, message', [
    ({'thrlo': 8, 'thrhi': 4}, 'thrlo: 8 is greater than thrhi (4)'),
    ({'nobjlo': 4, 'nobjhi': 2}, 'nobjlo: 4 is greater than nobjhi (2)'),
    ({'size_mib': 3, 'rszlo': 2048, 'rszhi': 2048}, 'size_mib: 3 MiB is not a multiple of the 2048 KiB record'),
    ({'targets': ['testfs-OST0007']}, 'targets: testfs-OST0007 is not an obdfilter device on this node'),
    ({'tests': ['read']}, "tests: the first test must be 'write'"),
    ({'timeout': 0}, 'timeout: must be at least 1 second'),
    ({'run_id': '../x'}, 'run_id must not contain ".."'),
    ({'case': 'netdisk'}, 'targets: case=netdisk found no UP osc device here (lctl dl -t)'),
    ({'case': 'network', 'targets': ['10.0.0.1@tcp'], 'nettype': 'tcp@x'}, "nettype: 'tcp@x' is not an LNet"),
    ({'case': 'network', 'targets': ['@tcp']}, "targets: '@tcp' is not a NID"),
    ({'case': 'network', 'targets': []}, 'targets: case=network takes exactly one server'),
    ({'engine': 'iokit', 'iokit_script': '/nonexistent/obdfilter-survey'},
     'iokit_script: /nonexistent/obdfilter-survey does not exist'),
])
def test_bad_parameters_fail_before_anything_is_made(run_module, tmp_path, change, message):
    result = run_module(base(tmp_path, **change))
    assert result['failed'] is True and message in result['msg'], result['msg']
    assert made_anything() == []


@pytest.mark.parametrize('change, message', [
    ({'thrlo': 8, 'thrhi': 4}, 'thrlo: 8 is greater than thrhi (4)'),
    ({'tests': ['read'], 'case': 'network', 'targets': ['10.0.0.1@tcp']}, "tests: the first test must be 'write'"),
])
def test_the_sweep_settings_are_refused_before_the_node_is_asked_anything(run_module, tmp_path, change, message):
    result = run_module(base(tmp_path, **change))
    assert result['failed'] is True and message in result['msg'], result['msg']
    assert Node.lustre.commands == []
    assert not os.path.exists(str(tmp_path / 'work'))


def test_a_target_that_is_not_up_fails_naming_targets(run_module, tmp_path):
    Node.lustre.devices[3]['status'] = 'AT'
    result = run_module(base(tmp_path, targets=list(OSTS)))
    assert result['failed'] is True and result['msg'] == 'targets: testfs-OST0001 is in state AT, not UP'
    assert made_anything() == []


@pytest.mark.parametrize('case, version, message', [
    ('network', '2.16.1', 'case: network cannot run on Lustre 2.16.1'),
    ('netdisk', '2.15.6', 'case: netdisk was removed from obdfilter-survey in Lustre 2.15.6'),
])
def test_cases_newer_lustre_dropped_fail_naming_the_version(run_module, tmp_path, case, version, message):
    Node.lustre.version = version
    result = run_module(base(tmp_path, case=case, targets=['10.0.0.1'], engine='iokit'))
    assert result['failed'] is True and result['msg'].startswith(message)
    assert made_anything() == []


def test_check_mode_returns_the_plan_and_touches_nothing(run_module, tmp_path):
    result = run_module(base(tmp_path), check_mode=True)
    assert made_anything() == []
    assert ['modprobe', 'obdecho'] not in Node.lustre.commands
    assert not os.path.exists(str(tmp_path / 'work'))
    assert result['status'] == 'skipped' and result['records'] == [] and result['changed'] is True
    plan = result['plan']
    assert [(p['nobj'], p['thr'], p['skip']) for p in plan['points']] == [
        (1, 1, None), (1, 2, None), (2, 1, obdfilter.SKIP_THR_NOT_MULTIPLE), (2, 2, None)]
    assert len(plan['skipped_points']) == 1
    assert plan['lines'] == ['skipped points: 1; per OST: %s' % plan['per_ost']]
    mib = 1024 * 1024
    assert plan['per_ost'][OSTS[0]]['bytes_written'] == 3 * 16 * mib
    assert plan['per_ost'][OSTS[1]]['objects_created'] == 4
    assert results.validate_envelope(result['envelope']) == []
    assert result['environment']['lustre_version'] == '2.15.5' and result['environment']['targets'] == list(OSTS)
    # without plan_ost_mib_s the built-in rate is assumed, and the basis says so
    assert plan['estimated_duration_s'] == round(3 * 16 * 2 / 500.0, 1)
    assert plan['estimate_basis'] == 'assumed 500 MiB/s per OST (built-in guess)'
    assert plan['estimate']['points'] == 3 and plan['estimate']['bytes_written'] == 2 * 3 * 16 * mib


def test_the_plan_estimates_the_duration_from_an_assumed_rate(run_module, tmp_path):
    plan = run_module(base(tmp_path, plan_ost_mib_s=8.0), check_mode=True)['plan']
    # three runnable points of 16 MiB per OST, each written and read, at 8 MiB/s
    assert plan['per_ost'][OSTS[0]]['bytes_written'] == 3 * 16 * 1024 * 1024
    assert plan['estimated_duration_s'] == 3 * 16 * 2 / 8.0
    assert plan['estimate_basis'] == 'assumed 8 MiB/s per OST (plan_ost_mib_s)'
    assert plan['estimate']['source'] == 'assumed' and plan['estimate']['rate'] == 8.0


def test_run_returns_a_valid_envelope_with_per_ost_figures(run_module, tmp_path):
    slow = OSTS[1]
    Node.lustre.brw[slow] = lambda argv: (0, '1/1 Total: 5.000000/second\n1/1 Total: 6.000000/second\n', '')
    result = run_module(base(tmp_path))
    envelope = result['envelope']
    assert results.validate_envelope(envelope) == []
    assert (envelope['status'], envelope['survey'], envelope['engine']) == ('ok', 'obdfilter', 'native')
    assert 'started' not in result and 'finished' not in result and result['changed'] is True
    assert [(r['ost'], r['obj'], r['thr']) for r in result['records']] == [(2, 2, 2), (2, 2, 4), (2, 4, 4)]
    for record in result['records']:
        assert record['per_ost'][slow]['write']['max_mib_s'] == 6.0
        assert record['per_ost'][OSTS[0]]['write']['min_mib_s'] == 100.0
    summary = tmp_path / 'work' / 'test-run' / 'obdfilter_survey.summary'
    assert result['raw_output'] == str(summary) and result['raw_files'][1].endswith('.detail')
    assert 'Obdfilter-survey for case=disk' in summary.read_text()
    state = json.loads((tmp_path / 'work' / 'node-state.json').read_text())
    assert state['echo_clients'] == [] and state['modules'] == []
    assert envelope['environment']['obdecho_loaded_by_us'] is True
    # Each OST's fill level before the sweep, from one lctl call per OST.
    assert envelope['environment']['free_kib'] == dict((ost, 3 << 40) for ost in OSTS)
    assert envelope['environment']['total_kib'] == dict((ost, 4 << 40) for ost in OSTS)


def echo_module_steps():
    """The node's commands that load or unload obdecho or attach or detach a device, in order."""
    return [argv for argv in Node.lustre.commands
            if argv[0] in ('modprobe', 'rmmod') or argv[1:2] == ['attach'] or argv[-1:] == ['detach']]


def test_the_driver_loads_obdecho_once_before_setup_and_unloads_it_after_teardown(run_module, tmp_path):
    # the fake node reads the node state when modprobe runs
    Node.lustre.node_state = NodeState(str(tmp_path / 'work'))
    result = run_module(base(tmp_path, nobjhi=1, thrhi=1, tests=['write']))
    assert result['status'] == 'ok'
    a, b = [obdfilter.echo_client_name(ost, run_tag(result['run_id'])) for ost in OSTS]
    assert echo_module_steps() == [
        ['modprobe', 'obdecho'],
        ['lctl', 'attach', 'echo_client', a, a + '_UUID'], ['lctl', 'attach', 'echo_client', b, b + '_UUID'],
        ['lctl', '--device', a, 'detach'], ['lctl', '--device', b, 'detach'],
        ['rmmod', 'obdecho']]
    # recorded for the cleanup before modprobe, crossed off once unloaded
    assert [entry['name'] for entry in Node.lustre.state_at['modprobe']['modules']] == ['obdecho']
    state = json.loads((tmp_path / 'work' / 'node-state.json').read_text())
    assert state['modules'] == [] and not Node.lustre.obdecho_loaded
    assert result['environment']['obdecho_loaded_by_us'] is True


def test_an_obdecho_loaded_before_the_run_is_left_loaded(run_module, tmp_path):
    Node.lustre.obdecho_loaded = True
    result = run_module(base(tmp_path, nobjhi=1, thrhi=1, tests=['write']))
    assert result['status'] == 'ok'
    assert [argv for argv in echo_module_steps() if argv[0] in ('modprobe', 'rmmod')] == []
    assert Node.lustre.obdecho_loaded and result['environment']['obdecho_loaded_by_us'] is False


def test_an_echo_client_the_teardown_leaves_keeps_obdecho_loaded_and_recorded(run_module, tmp_path):
    original = Node.lustre.answer

    def refuse_cleanup(argv):
        if argv[-1:] == ['cleanup'] and argv[2].startswith(OSTS[1]):
            return 16, '', 'error: cleanup: Device or resource busy\n'
        return original(argv)
    Node.lustre.answer = refuse_cleanup
    result = run_module(base(tmp_path, nobjhi=1, thrhi=1, tests=['write']))
    assert result['status'] == 'partial'
    messages = [error['message'] for error in result['errors']]
    assert any(message.startswith('cleanup: tear down echo_client ' + OSTS[1]) for message in messages)
    assert 'obdecho is still in use; left loaded (recorded for the cleanup)' in messages
    assert ['rmmod', 'obdecho'] not in Node.lustre.commands and Node.lustre.obdecho_loaded
    state = json.loads((tmp_path / 'work' / 'node-state.json').read_text())
    assert [entry['name'] for entry in state['modules']] == ['obdecho']
    assert [entry['target'] for entry in state['echo_clients']] == [OSTS[1]]
    assert result['environment']['obdecho_loaded_by_us'] is True


def test_timeout_sets_the_measuring_runners_deadline_only(run_module, tmp_path):
    run_module(base(tmp_path, timeout=30))
    deadlines = [runner.deadline for runner in Node.runners]
    assert deadlines.count(None) == 1 and len(deadlines) == 2


def test_nothing_measured_fails_with_the_envelope(run_module, tmp_path):
    original = Node.lustre.answer

    def refuse_setup(argv):
        if 'setup' in argv:
            return 22, '', 'error: setup: Invalid argument\n'
        return original(argv)
    Node.lustre.answer = refuse_setup
    result = run_module(base(tmp_path))
    assert result['failed'] is True and result['status'] == 'failed'
    # The run's tag is in the echo client's name.
    assert "can't set up echo-client testfs-OST0000_%s_ecc" % run_tag(result['run_id']) in result['msg']
    assert results.validate_envelope(result['envelope']) == []
    # the driver loaded obdecho before the failed setup, so it says so and unloads it
    assert result['environment']['obdecho_loaded_by_us'] is True
    assert Node.lustre.commands.count(['modprobe', 'obdecho']) == 1
    assert ['rmmod', 'obdecho'] in Node.lustre.commands and not Node.lustre.obdecho_loaded
    state = json.loads((tmp_path / 'work' / 'node-state.json').read_text())
    assert state['echo_clients'] == [] and state['modules'] == []


def test_iokit_engine_runs_the_script_and_undoes_its_leftovers(run_module, tmp_path):
    script = tmp_path / 'obdfilter-survey'
    script.write_text('# stands in for the installed script\n')
    lustre = Node.lustre
    original = lustre.answer

    def script_leaves_an_echo_client(argv):
        if argv[0] == 'bash':
            lustre.devices.append({'index': 40, 'status': 'UP', 'type': 'echo_client', 'name': OSTS[1] + '_ecc',
                                   'uuid': OSTS[1] + '_ecc_UUID'})
            with open(str(tmp_path / 'work' / 'test-run' / 'obdfilter_survey.summary'), 'w') as handle:
                handle.write('ost  2 sz    32768K rsz 1024K obj    2 thr    2 write   40.10 [  19.00,   21.00] \n')
            return 0, 'done!\n', ''
        return original(argv)
    lustre.answer = script_leaves_an_echo_client
    result = run_module(base(tmp_path, engine='iokit', iokit_script=str(script), tests=['write']))
    assert [argv for argv in lustre.commands if argv[0] == 'bash'] == [['bash', str(script)]]
    # loaded before the script, which then leaves it alone; unloaded once the script's leftover is gone
    steps = [argv for argv in lustre.commands if argv[0] in ('modprobe', 'bash', 'rmmod') or argv[-1:] == ['detach']]
    assert steps == [['modprobe', 'obdecho'], ['bash', str(script)],
                     ['lctl', '--device', OSTS[1] + '_ecc', 'detach'], ['rmmod', 'obdecho']]
    assert result['environment']['obdecho_loaded_by_us'] is True
    assert result['status'] == 'partial' and len(result['records']) == 1
    assert result['errors'] == [{'point': None, 'message': 'obdfilter-survey left echo_client testfs-OST0001_ecc '
                                                           'behind; removed it (cleanup, detach)'}]
    assert not any(device['type'] == 'echo_client' for device in lustre.devices)
    state = json.loads((tmp_path / 'work' / 'node-state.json').read_text())
    assert state['echo_clients'] == [] and state['modules'] == []


# --------------------------------------------------------------------------
# case=network: here the echo server is this same node (server_shell: []), so one fake node sees every command


def network_args(tmp_path, **change):
    return base(tmp_path, case='network', targets=['10.0.0.1@tcp'], server_shell=[], nobjhi=1, thrhi=1,
                **change)


def test_network_case_runs_natively_against_the_echo_server_and_leaves_nothing(run_module, tmp_path):
    result = run_module(network_args(tmp_path))
    assert result.get('failed') is not True, result.get('msg')
    assert result['status'] == 'ok' and result['changed'] is True
    [record] = result['records']
    assert record['case'] == 'network' and record['targets'] == ['10.0.0.1@tcp']
    assert record['tests']['write']['status'] == 'ok'
    assert result['environment']['server_nid'] == '10.0.0.1@tcp'
    assert result['environment']['server_lustre_version'] == '2.15.5'
    made = made_anything()
    assert ['lctl', 'add_uuid', 'echo_UUID', '10.0.0.1@tcp'] in made
    # the driver loaded obdecho before setup, so the server side (this node) found it loaded; the driver
    # unloads it once both sides are torn down
    assert made.count(['modprobe', 'obdecho']) == 1 and made[0] == ['modprobe', 'obdecho']
    assert result['environment']['obdecho_loaded_by_us'] is True
    assert made[-4:] == [['lctl', 'del_uuid', 'echo_UUID'], ['lctl', '--device', 'echo_srv', 'cleanup'],
                         ['lctl', '--device', 'echo_srv', 'detach'], ['rmmod', 'obdecho']]
    assert not Node.lustre.obdecho_loaded
    assert any(argv[-1] == 'g256' for argv in made if 'test_brw' in argv)
    assert [d['name'] for d in Node.lustre.devices] == ['MGC192.168.1.10@tcp', 'OSS'] + list(OSTS)


def test_network_check_mode_plans_both_nodes_and_touches_nothing(run_module, tmp_path):
    result = run_module(network_args(tmp_path), check_mode=True)
    assert result['status'] == 'skipped'
    assert result['plan']['setup']['server'][1] == ['lctl', 'attach', 'obdecho', 'echo_srv', 'echo_srv_UUID']
    assert ['lctl', 'add_uuid', 'echo_UUID', '10.0.0.1@tcp'] in result['plan']['setup']['client']
    assert list(result['plan']['per_ost']) == ['10.0.0.1@tcp']
    assert made_anything() == []


def test_network_case_refuses_a_node_with_a_mounted_client(run_module, tmp_path):
    Node.lustre.devices.append({'index': 8, 'status': 'UP', 'type': 'osc', 'name': 'testfs-OST0000-osc-ffff9a',
                                'uuid': 'u8'})
    result = run_module(network_args(tmp_path))
    assert result['failed'] is True
    assert result['msg'].startswith('case: network needs a node without a mounted Lustre client')
    assert 'testfs-OST0000-osc-ffff9a' in result['msg']
    assert made_anything() == []


def test_network_on_2_15_7_fails_before_anything_naming_case_and_version(run_module, tmp_path):
    Node.lustre.version = '2.15.7'
    result = run_module(network_args(tmp_path))
    assert result['failed'] is True
    assert result['msg'].startswith('case: network cannot run on Lustre 2.15.7')
    assert made_anything() == []


# --------------------------------------------------------------------------
# case=netdisk (2.15.5 here): the node is also a client, with an osc per OST and the OSS's NID


def add_client_oscs():
    for number, ost in enumerate(OSTS):
        Node.lustre.devices.append({'index': 20 + number, 'status': 'UP', 'type': 'osc',
                                    'name': '%s-osc-ffff8a01' % ost, 'uuid': 'c%d' % number,
                                    'nid': '10.0.0.21@tcp'})


def test_netdisk_surveys_every_ost_of_the_mounted_client_and_leaves_nothing(run_module, tmp_path):
    add_client_oscs()
    before = [dict(device) for device in Node.lustre.devices]
    result = run_module(base(tmp_path, case='netdisk', nobjhi=1, thrhi=1, tests=['write']))
    assert result.get('failed') is not True, result.get('msg')
    [record] = result['records']
    assert record['case'] == 'netdisk' and record['targets'] == list(OSTS)
    assert sorted(record['per_ost']) == sorted(OSTS)
    assert result['environment']['netdisk_nids'] == dict((ost, '10.0.0.21@tcp') for ost in OSTS)
    made = made_anything()
    assert ['lctl', 'add_uuid', 'host_0_UUID', '10.0.0.21@tcp'] in made
    assert ['lctl', '--device', OSTS[0] + '_osc', 'setup', OSTS[0] + '_UUID', 'host_0_UUID'] in made
    assert all(argv[-1] == 'g256' for argv in made if 'test_brw' in argv)
    # the driver unloads obdecho once the oscs and UUIDs are gone too
    assert made[-2:] == [['lctl', 'del_uuid', 'host_0_UUID'], ['rmmod', 'obdecho']]
    assert [device['name'] for device in Node.lustre.devices] == [device['name'] for device in before]


def test_netdisk_check_mode_plans_the_client_setup_and_touches_nothing(run_module, tmp_path):
    add_client_oscs()
    result = run_module(base(tmp_path, case='netdisk', targets=[OSTS[1]]), check_mode=True)
    assert result['status'] == 'skipped'
    assert result['plan']['setup']['client'][1] == ['lctl', 'add_uuid', 'host_0_UUID', '10.0.0.21@tcp']
    assert list(result['plan']['per_ost']) == [OSTS[1]]
    assert made_anything() == []


@pytest.mark.parametrize('change, message', [
    ({'point_s': 10.0, 'engine': 'iokit'}, 'point_s: the installed obdfilter-survey moves its fixed size at every '
     'point; time-bounded points need engine native'),
    ({'point_s': 10.0, 'case': 'network', 'targets': ['10.0.0.1@tcp']},
     'point_s: time-bounded points are measured on the OSTs themselves (case=disk); leave it unset with case network'),
    ({'point_s': -1.0}, 'point_s: must be more than 0 seconds, got -1'),
])
def test_bounded_points_that_cannot_apply_are_refused_before_anything_is_made(run_module, tmp_path, change, message):
    result = run_module(base(tmp_path, **change))
    assert result['failed'] is True and message in result['msg'], result['msg']
    assert made_anything() == []


def test_the_default_floor_is_memtotal_over_the_osts_surveyed(tmp_path):
    meminfo = tmp_path / 'meminfo'
    meminfo.write_text(u'MemTotal:       67108864 kB\nMemFree:         1024 kB\n')
    assert obdfilter_survey.mem_total_mib(str(meminfo)) == 65536
    params = {'point_s': 20.0, 'point_min_mib': None}
    settings = obdfilter_survey.bounded_settings(params, ['ost%d' % n for n in range(8)], lambda: 65536)
    assert settings == {'point_s': 20.0, 'point_min_mib': 8192,
                        'floor_reason': '8192 MiB per OST: page cache up to MemTotal 65536 MiB over 8 OSTs'}
    params['point_min_mib'] = 1000
    assert obdfilter_survey.bounded_settings(params, ['ost0'], lambda: 65536)['point_min_mib'] == 1000
    # unbounded, the floor is still found (the plan shows the fast profile with it), but never required
    assert obdfilter_survey.bounded_settings({'point_s': None, 'point_min_mib': 1000}, ['ost0'])['point_s'] is None
    assert obdfilter_survey.bounded_settings({'point_s': None, 'point_min_mib': None}, ['ost0'], lambda: None) == {}
    with pytest.raises(ValueError, match='MemTotal'):
        obdfilter_survey.bounded_settings({'point_s': 20.0, 'point_min_mib': None}, ['ost0'], lambda: None)


def test_check_mode_shows_the_bounded_points_and_their_worst_case(run_module, tmp_path):
    result = run_module(base(tmp_path, point_s=5.0, point_min_mib=32), check_mode=True)
    plan = result['plan']
    assert plan['bounded']['target_duration_s'] == 5.0 * 2 * 3
    assert plan['lines'][1] == ('time-bounded points: 5 s per test, floor point_min_mib 32 MiB per OST; about 30 s if '
                                'every test lasts its time; at worst 192 MiB per OST (every point at the larger of '
                                'its full size and the floor), against 96 MiB for the full sizes')


def test_a_bounded_run_records_what_each_point_moved(run_module, tmp_path):
    result = run_module(base(tmp_path, point_s=5.0, point_min_mib=8))
    assert result['status'] == 'ok', result['errors']
    first = result['records'][0]
    assert (first['bounded'], first['moved_mib_per_ost'], first['point_limit']) == (True, 8, 'floor, no rate yet')
    assert results.validate_envelope(result['envelope']) == []


def test_the_eta_weighs_bounded_points_alike_and_full_ones_by_size():
    points = [{'actual_rsz_kib': 1024, 'nobj': 1, 'thr': thr, 'size_kib': 2 * 16384, 'skip': None}
              for thr in (1, 2)]
    spec = obdfilter_survey.ObdfilterSpec()
    assert [point.get('weight') for point in spec.planned(None, {'points': points})] == [32768, 32768]
    # a bounded point lasts about its point_s per test whatever it moves: each weighs one point
    bounded = spec.planned(None, {'points': points, 'bounded': {'point_s': 20.0}})
    assert bounded == [{'actual_rsz_kib': 1024, 'nobj': 1, 'thr': thr} for thr in (1, 2)]
