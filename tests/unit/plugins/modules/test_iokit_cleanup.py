# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""iokit_cleanup against the simulator, for real: every form of leftover, with a real Runner.

The simulated node's lctl/lsmod/rmmod/lst are put first on PATH; the cleanup
logic runs in this process and the module itself runs as a child, the way
Ansible runs it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import lctl as lctl_utils
from ansible_collections.lustre.iokit.plugins.module_utils import process_match
from ansible_collections.lustre.iokit.plugins.module_utils.cleanup import Cleanup, record_entries
from ansible_collections.lustre.iokit.plugins.module_utils.cleanup_echo_clients import object_ranges
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState, process_start_time
from ansible_collections.lustre.iokit.plugins.module_utils.runner import Runner
from ansible_collections.lustre.iokit.tests.unit.waiting import wait_for

RUN = 'run-1'


@pytest.fixture
def sim_init_args():
    # OST0001 throttled to 2 MiB/s, so that writes to it are still running when a test kills them
    return ['--osts', '2', '--mdts', '1', '--ost-size-mib', '64', '--ost-mib-s-override', 'OST0001=2']


@pytest.fixture
def state(tmp_path):
    return NodeState(str(tmp_path / 'work'))


def cleanup(state, **options):
    options.setdefault('kill_grace_s', 2.0)
    options.setdefault('lst_path', shutil.which('lst'))
    return Cleanup(Runner(), state, **options).run()


def names(report, kind='echo_clients'):
    return [item.get('name', item.get('pid', item.get('path'))) for item in report['removed'][kind]]


def start_own_process(argv):
    """A helper as the Runner starts one: its own session and process group."""
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def test_leftover_echo_client_of_an_aborted_iokit_run(sim, state):
    sim.fault('leftover_echo_client', '--target', 'testfs-OST0000')
    assert 'testfs-OST0000_ecc' in sim.device_names()
    report = cleanup(state)
    assert report['changed'] and report['errors'] == []
    assert report['removed']['echo_clients'] == [
        {'name': 'testfs-OST0000_ecc', 'source': 'iokit_leftover', 'type': 'echo_client', 'status': 'UP',
         'objects_destroyed': [], 'steps': ['cleanup', 'detach']}]
    assert 'testfs-OST0000_ecc' not in sim.device_names()
    # The leftover's obdecho was not loaded by us: it stays, and the report says so and how to unload it.
    assert 'obdecho' in sim.modules() and report['removed']['modules'] == []
    assert [(item['kind'], item['id']) for item in report['kept']] == [('modules', 'obdecho')]
    assert 'not by this collection' in report['kept'][0]['reason'] and 'rmmod obdecho' in report['kept'][0]['reason']
    again = cleanup(state)
    assert not again['changed'] and again['removed']['echo_clients'] == []


def test_leftovers_are_left_alone_when_not_asked_for(sim, state):
    sim.fault('leftover_echo_client', '--target', 'testfs-OST0001')
    report = cleanup(state, include_iokit_leftovers=False)
    assert not report['changed']
    assert 'testfs-OST0001_ecc' in sim.device_names()


def test_half_made_device_is_only_detached(sim, state):
    subprocess.run(['modprobe', 'obdecho'], check=True)
    sim.lctl('attach', 'echo_client', 'testfs-OST0001_ecc', 'testfs-OST0001_ecc_UUID')
    sim.lctl('attach', 'echo_client', 'echotmp_ecc', 'echotmp_ecc_UUID')
    report = cleanup(state)
    removed = dict((item['name'], item) for item in report['removed']['echo_clients'])
    assert set(removed) == {'testfs-OST0001_ecc', 'echotmp_ecc'}
    assert all(item['status'] == 'AT' and item['steps'] == ['detach'] for item in removed.values())
    assert not any(name.endswith('_ecc') for name in sim.device_names())


def test_a_device_that_only_looks_like_a_leftover_by_name_is_kept(sim, state):
    # Only echo device types are leftovers; an OST whose name happens to match is never touched.
    devices = [{'index': 1, 'status': 'UP', 'type': 'obdfilter', 'name': 'ECHO_ost', 'uuid': 'u', 'refcount': 3},
               {'index': 2, 'status': 'UP', 'type': 'echo_client', 'name': 'ECHO_oss1', 'uuid': 'u', 'refcount': 3},
               {'index': 3, 'status': 'UP', 'type': 'osc', 'name': 'echotmp', 'uuid': 'u', 'refcount': 3},
               {'index': 4, 'status': 'UP', 'type': 'osc', 'name': 'testfs-OST0000-osc', 'uuid': 'u', 'refcount': 3}]
    assert [lctl_utils.is_echo_leftover(device) for device in devices] == [False, True, True, False]


def test_obdecho_we_loaded_is_unloaded_once_unused_and_kept_while_busy(sim, state):
    runner = Runner()
    assert lctl_utils.load_module(runner, state, 'obdecho', RUN) is True
    sim.fault('obdecho_busy')
    busy = cleanup(state)
    assert not busy['changed'] and busy['errors'] == []
    assert busy['kept'] == [{'kind': 'modules', 'id': 'obdecho', 'reason': 'still in use'}]
    assert 'obdecho' in sim.modules()
    assert [entry['name'] for entry in state.entries('modules')] == ['obdecho']
    assert not cleanup(state)['changed']
    sim.cli('fault', '--root', sim.root, 'clear', '--all')
    freed = cleanup(state)
    assert freed['changed'] and names(freed, 'modules') == ['obdecho']
    assert 'obdecho' not in sim.modules() and state.entries('modules') == []


def test_obdecho_loaded_by_someone_else_is_never_unloaded(sim, state):
    subprocess.run(['modprobe', 'obdecho'], check=True)
    runner = Runner()
    assert lctl_utils.load_module(runner, state, 'obdecho', RUN) is False
    assert state.entries('modules') == []
    report = cleanup(state)
    assert not report['changed'] and 'obdecho' in sim.modules()


def test_process_that_exited_and_pid_reused_by_another_process(sim, state):
    finished = subprocess.Popen(['true'])
    finished.wait()
    state.record('processes', RUN, pid=finished.pid, start_time=12345, command='lctl --threads 2 test_brw')
    bystander = start_own_process(['sleep', '60'])
    try:
        # Same pid, other start time: the pid now belongs to an unrelated process.
        state.record('processes', RUN, pid=bystander.pid, start_time=process_start_time(bystander.pid) - 7,
                     command='vmstat 5')
        report = cleanup(state)
        assert not report['changed'] and report['removed']['processes'] == []
        reasons = dict((item['id'], item['reason']) for item in report['forgotten'])
        assert reasons[finished.pid] == 'the process has exited'
        assert 'belongs to another process' in reasons[bystander.pid]
        assert bystander.poll() is None
        assert state.entries('processes') == []
    finally:
        bystander.kill()
        bystander.wait()


def test_our_running_helper_is_stopped_by_pid_and_start_time(sim, state):
    helper = start_own_process(['sleep', '60'])
    state.record('processes', RUN, pid=helper.pid, command='sleep 60')
    report = cleanup(state)
    helper.wait(timeout=10)
    assert report['removed']['processes'] == [
        {'pid': helper.pid, 'command': 'sleep 60', 'run_id': RUN, 'signal': 'SIGTERM'}]
    assert helper.returncode == -signal.SIGTERM
    assert not cleanup(state)['changed']


# A survey module as the cleanup meets it: on SIGTERM it says whether its command was still alive, then stops it
# itself and exits, as a module's teardown does.
MODULE_THAT_STOPS_ITS_COMMAND = """
import os, signal, subprocess, sys
child = subprocess.Popen(['sleep', '60'], start_new_session=True)
def stop(signum, frame):
    alive = child.poll() is None
    with open(sys.argv[1], 'w') as handle:
        handle.write('alive' if alive else 'dead')
    if alive:
        os.killpg(child.pid, signal.SIGTERM)
    child.wait()
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
print(child.pid, flush=True)
while True:
    signal.pause()  # until the cleanup's SIGTERM
"""


def test_a_survey_module_is_stopped_before_the_commands_it_runs(sim, state, tmp_path):
    # Signalled together, a command could die before its module's handler ran, and the module would log the cut
    # point as a finished one.  The module goes first and alone; its command is then already gone.
    seen = tmp_path / 'seen'
    module = subprocess.Popen([sys.executable, '-c', MODULE_THAT_STOPS_ITS_COMMAND, str(seen)],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    child_pid = int(module.stdout.readline())
    try:
        state.record('processes', RUN, pid=module.pid, command='sgpdd_survey', survey='sgpdd', module=True)
        state.record('processes', RUN, pid=child_pid, command=['sleep', '60'], group=True)
        report = cleanup(state, kill_grace_s=30.0)
        module.wait(timeout=10)
        assert seen.read_text() == 'alive'
        assert module.returncode == 0
        signals = dict((item['pid'], item['signal']) for item in report['removed']['processes'])
        assert signals == {module.pid: 'SIGTERM', child_pid: None}
        assert state.entries('processes') == []
    finally:
        if module.poll() is None:
            module.kill()
            module.wait()
        process_match.signal_process(child_pid, signal.SIGKILL, True)


def test_helper_ignoring_sigterm_gets_sigkill(sim, state):
    helper = subprocess.Popen([sys.executable, '-c',
                               'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); '
                               'print("ready", flush=True); time.sleep(60)'],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    # Recorded only once it ignores SIGTERM (it says so), however long the machine takes to start it.
    assert helper.stdout.readline() == b'ready\n'
    state.record('processes', RUN, pid=helper.pid, command='stubborn')
    report = cleanup(state, kill_grace_s=0.5)
    helper.wait(timeout=10)
    assert report['removed']['processes'][0]['signal'] == 'SIGKILL'
    assert helper.returncode == -signal.SIGKILL


def obdfilter_style_start(sim, state, target, objects):
    """What the obdfilter engine does, recording each step first: module, echo client, objects."""
    runner = Runner()
    lctl = lctl_utils.Lctl(runner)
    assert lctl_utils.load_module(runner, state, 'obdecho', RUN)
    name = lctl_utils.echo_client_name(target)
    state.record('echo_clients', RUN, name=name, target=target)
    lctl.attach_echo_client(name, target)
    ids = lctl.create_objects(name, objects)
    state.record('echo_clients', RUN, name=name, target=target, objects=[[ids[0], len(ids)]])
    return name, ids


def test_echo_client_of_a_sigkilled_obdfilter_sequence(sim, state):
    target = 'testfs-OST0001'          # throttled to 2 MiB/s: the writes are still running when we kill
    name, ids = obdfilter_style_start(sim, state, target, 2)
    assert len(sim.echo_objects(target)) == 2
    brw = start_own_process(['lctl', '--threads', '2', '-1', name, 'test_brw', '64', 'wx', 'q', '256',
                             '1t%d' % ids[0], 'p256'])
    state.record('processes', RUN, pid=brw.pid, command='lctl --threads 2 -1 %s test_brw' % name)
    # Killed once both workers run (the leader and two workers in its group); at 2 MiB/s they write for minutes.
    wait_for('the lctl leader and its two workers', lambda: len(_group(brw.pid)) >= 3, 60, brw)
    assert brw.poll() is None
    # SIGKILL the leader only, as Ansible's async wrapper does to the module: its forked workers live on.
    os.kill(brw.pid, signal.SIGKILL)
    brw.wait()
    workers = _group(brw.pid)
    assert workers, 'the simulated lctl workers should outlive their SIGKILLed parent'

    plan = cleanup(state, check_mode=True)
    assert names(plan) == [name] and names(plan, 'modules') == ['obdecho']
    assert plan['removed']['processes'][0]['orphaned_group'] is True
    assert name in sim.device_names() and _group(brw.pid) and len(state.entries('echo_clients')) == 1

    report = cleanup(state)
    assert report['errors'] == [], report['errors']
    assert report['removed']['processes'][0]['pid'] == brw.pid
    assert not _group(brw.pid)
    removed = report['removed']['echo_clients'][0]
    assert removed['name'] == name and removed['source'] == 'node_state'
    assert removed['objects_destroyed'] == ids and removed['steps'] == ['cleanup', 'detach']
    assert sim.echo_objects(target) == []
    assert name not in sim.device_names()
    assert names(report, 'modules') == ['obdecho'] and 'obdecho' not in sim.modules()
    assert all(state.entries(kind) == [] for kind in ('processes', 'echo_clients', 'modules'))
    assert not cleanup(state)['changed']


def start_survey_module(name, args, tmp_path):
    """The module ``name`` as Ansible starts it (a child reading its arguments from a file), left running."""
    args_file = str(tmp_path / (name + '-args.json'))
    with open(args_file, 'w') as handle:
        json.dump({'ANSIBLE_MODULE_ARGS': args}, handle)
    collection_parent = os.path.abspath(os.path.join(os.path.dirname(lctl_utils.__file__), *(['..'] * 5)))
    env = dict(os.environ, PYTHONPATH=collection_parent + os.pathsep + os.environ.get('PYTHONPATH', ''))
    return subprocess.Popen([sys.executable, '-m', 'ansible_collections.lustre.iokit.plugins.modules.' + name,
                             args_file], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            universal_newlines=True, env=env, start_new_session=True)


def hung_commands(sim):
    """{pid: command} of the simulated commands holding on a hang fault now."""
    path = os.path.join(sim.root, 'state', 'hangs.json')
    try:
        with open(path) as handle:
            hangs = json.load(handle).get('hangs', [])
    except (IOError, OSError, ValueError):
        return {}
    return dict((hang['pid'], hang['command']) for hang in hangs if process_start_time(hang['pid']) is not None)


def _gone(pid):
    return process_start_time(pid) is None or not _group(pid)


@pytest.mark.parametrize('create_ends', ['by_itself', 'stopped_by_the_cleanup'])
def test_objects_of_an_lctl_create_running_when_the_survey_is_sigkilled_are_destroyed(
        sim, state, tmp_path, run_as_ansible, create_ends):
    # Issue #35: the create's ids were printed to an unlinked temporary file and lost with the SIGKILLed survey;
    # its range was recorded with no first id, so the cleanup could not destroy the objects and a rerun of the
    # run id left them on the OST.
    target = 'testfs-OST0000'
    args = {'targets': [target], 'size_mib': 4, 'rszlo': 1024, 'rszhi': 1024, 'nobjlo': 2, 'nobjhi': 2,
            'thrlo': 2, 'thrhi': 2, 'tests': ['write'], 'run_id': RUN, 'workdir': state.workdir}
    # lctl create holds after its first object, created and its id printed, until the fault is cleared
    sim.fault('hang', '--command', 'obj_batch create')
    survey = start_survey_module('obdfilter_survey', args, tmp_path)
    try:
        creates = wait_for('lctl create to hold after its first object',
                           lambda: [pid for pid, command in hung_commands(sim).items() if 'obj_batch' in command],
                           120, survey)
        assert len(sim.echo_objects(target)) == 1
        os.killpg(survey.pid, signal.SIGKILL)    # the module only: lctl create runs in a session of its own
        survey.wait()
    finally:
        if survey.poll() is None:
            os.killpg(survey.pid, signal.SIGKILL)
            survey.wait()
    create = creates[0]
    assert not _gone(create), 'lctl create should outlive the survey that started it'
    [entry] = state.entries('echo_clients')
    assert [item['first'] for item in entry['objects']] == [None]
    if create_ends == 'by_itself':
        sim.cli('fault', '--root', sim.root, 'clear', 'hang')
        wait_for('lctl create to end once its fault is cleared', lambda: _gone(create), 60)
        made = 2
    else:
        made = 1
    assert len(sim.echo_objects(target)) == made

    report = cleanup(state, run_id=RUN)
    assert report['errors'] == [], report['errors']
    kept = [item['reason'] for item in report['kept'] if item['kind'] == 'objects']
    if create_ends == 'by_itself':
        assert kept == []
    else:
        # stopped before it made the second object, which the cleanup cannot know: it says what it could not name
        assert len(kept) == 1 and 'lctl create was making 2 objects on %s' % target in kept[0], kept
        assert 'its output %s names 1; the other 1 may remain' % entry['create_output'] in kept[0], kept
    stopped = [item for item in report['removed']['processes'] if item.get('create_output')]
    assert [item['pid'] for item in stopped] == ([] if create_ends == 'by_itself' else [create])
    assert _gone(create)
    [removed] = report['removed']['echo_clients']
    assert removed['name'] == entry['name'] and len(removed['objects_destroyed']) == made
    assert sim.echo_objects(target) == []
    assert state.entries('echo_clients') == [] and not os.path.exists(entry['create_output'])
    assert not cleanup(state, run_id=RUN)['changed']

    # the rerun of the run id succeeds and leaves nothing on the OST either
    sim.cli('fault', '--root', sim.root, 'clear', 'hang')
    rerun = run_as_ansible('obdfilter_survey', args)
    assert rerun['status'] == 'ok', rerun
    assert sim.echo_objects(target) == []
    assert state.entries('echo_clients') == []


def test_a_create_cut_before_it_started_made_nothing_and_one_without_its_output_is_named(sim, state):
    name, ids = obdfilter_style_start(sim, state, 'testfs-OST0000', 1)
    missing = os.path.join(state.workdir, RUN, name + '.create')
    # killed after the record, before the create started: no output file, nothing made
    state.record('echo_clients', RUN, name=name, target='testfs-OST0000',
                 objects=[{'first': ids[0], 'count': 1}, {'first': None, 'count': 2}], create_output=missing)
    report = cleanup(state)
    assert report['errors'] == [] and report['kept'] == []
    assert report['removed']['echo_clients'][0]['objects_destroyed'] == ids
    # a record of a create without its output file (an older collection's): what it may have made is named
    name, ids = obdfilter_style_start(sim, state, 'testfs-OST0001', 1)
    state.record('echo_clients', RUN, name=name, target='testfs-OST0001',
                 objects=[{'first': ids[0], 'count': 1}, {'first': None, 'count': 2}])
    report = cleanup(state)
    assert report['errors'] == [] and report['removed']['echo_clients'][0]['objects_destroyed'] == ids
    assert [item['kind'] for item in report['kept']] == ['objects']
    assert report['kept'][0]['reason'].startswith('lctl create was making 2 objects on testfs-OST0001 when its '
                                                  'survey was killed, and their ids were never recorded; they may')
    assert state.entries('echo_clients') == []


def _group(pgid):
    members = []
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                with open('/proc/%s/stat' % entry) as handle:
                    fields = handle.read().rsplit(')', 1)[1].split()
            except (IOError, OSError):
                continue
            if fields[2] == str(pgid) and fields[0] != 'Z':
                members.append(int(entry))
    return members


def test_recorded_objects_are_destroyed_after_their_echo_client_is_gone(sim, state):
    subprocess.run(['modprobe', 'obdecho'], check=True)
    name = 'testfs-OST0000_abc123_ecc'
    lctl = lctl_utils.Lctl(Runner())
    lctl.attach_echo_client(name, 'testfs-OST0000')
    ids = lctl.create_objects(name, 3)
    state.record('echo_clients', RUN, name=name, target='testfs-OST0000',
                 objects=[{'first': ids[0], 'count': 3}])
    lctl.teardown(name)
    assert len(sim.echo_objects('testfs-OST0000')) == 3 and name not in sim.device_names()
    report = cleanup(state)
    assert report['errors'] == [] and names(report) == [name]
    assert report['removed']['echo_clients'][0]['objects_destroyed'] == ids
    assert sim.echo_objects('testfs-OST0000') == [] and name not in sim.device_names()
    assert state.entries('echo_clients') == []


def test_recorded_objects_that_cannot_be_reached_are_named_with_how_to_remove_them(sim, state):
    subprocess.run(['modprobe', 'obdecho'], check=True)
    state.record('echo_clients', RUN, name='testfs-OST0009_abc123_ecc', target='testfs-OST0009',
                 objects=[{'first': 5, 'count': 2}])
    report = cleanup(state)
    kept = [item for item in report['kept'] if item['kind'] == 'echo_clients']
    assert kept and 'objects 0x5 (2) remain on testfs-OST0009' in kept[0]['reason']
    assert 'lctl --device testfs-OST0009_abc123_ecc destroy 0x5 2' in kept[0]['reason']
    assert state.entries('echo_clients') != []


def test_recorded_echo_client_already_gone_is_forgotten_not_an_error(sim, state):
    state.record('echo_clients', RUN, name='testfs-OST0000_ecc', target='testfs-OST0000', objects=[])
    report = cleanup(state)
    assert not report['changed'] and report['errors'] == []
    assert report['forgotten'] == [{'kind': 'echo_clients', 'id': 'testfs-OST0000_ecc',
                                    'reason': 'no such device in lctl dl'}]
    assert state.entries('echo_clients') == []


def test_objects_already_destroyed_do_not_stop_the_teardown(sim, state):
    name, ids = obdfilter_style_start(sim, state, 'testfs-OST0000', 3)
    lctl_utils.Lctl(Runner()).destroy_objects(name, ids[0], 1)
    report = cleanup(state)
    assert report['errors'] == []
    assert report['removed']['echo_clients'][0]['objects_destroyed'] == ids[1:]
    assert report['kept'][0]['kind'] == 'objects'
    assert name not in sim.device_names() and sim.echo_objects('testfs-OST0000') == []


def test_check_mode_reports_and_changes_nothing(sim, state):
    name, ids = obdfilter_style_start(sim, state, 'testfs-OST0001', 1)
    sim.fault('leftover_echo_client', '--target', 'testfs-OST0000')
    scratch = os.path.join(state.workdir, RUN, 'obdfilter.out')
    os.makedirs(os.path.dirname(scratch))
    open(scratch, 'w').close()
    state.record('paths', RUN, path=os.path.dirname(scratch))
    before = state.read()
    report = cleanup(state, check_mode=True)
    assert report['changed']
    assert sorted(names(report)) == ['testfs-OST0000_ecc', name]
    assert names(report, 'paths') == [os.path.dirname(scratch)]
    # obdecho is ours, and would be unused once both echo clients are gone.
    assert names(report, 'modules') == ['obdecho']
    assert state.read() == before and os.path.exists(scratch)
    assert {'testfs-OST0000_ecc', name} <= set(sim.device_names())
    assert len(sim.echo_objects('testfs-OST0001')) == 1


def test_paths_only_under_the_workdir(sim, state, tmp_path):
    inside = os.path.join(state.workdir, RUN)
    os.makedirs(os.path.join(inside, 'sub'))
    outside = tmp_path / 'precious'
    outside.mkdir()
    escape = os.path.join(state.workdir, 'escape')
    os.symlink(str(outside), escape)
    state.record('paths', RUN, path=inside)
    state.record('paths', RUN, path=str(outside))
    state.record('paths', RUN, path=os.path.join(escape, 'x'))
    state.record('paths', RUN, path=state.path)
    state.record('paths', RUN, path=os.path.join(state.workdir, 'never-made'))
    (outside / 'x').write_text('keep me')
    report = cleanup(state)
    assert names(report, 'paths') == [inside] and not os.path.exists(inside)
    kept = [item['id'] for item in report['kept']]
    assert kept == [str(outside), os.path.join(escape, 'x'), state.path]
    assert (outside / 'x').read_text() == 'keep me' and os.path.exists(state.path)
    assert report['forgotten'][0]['id'].endswith('never-made')


def test_ost_survey_directory_on_the_lustre_mount_is_removed_but_nothing_else_there(sim, state, tmp_path):
    mount = tmp_path / 'mnt'
    scratch = mount / 'ost_survey_run-1'
    scratch.mkdir(parents=True)
    (scratch / 'file0').write_text('x')
    user_file = mount / 'user-data'
    user_file.write_text('keep me')
    state.record('paths', RUN, path=str(scratch), mount_point=str(mount), survey='ost')
    state.record('paths', RUN, path=str(user_file), mount_point=str(mount))
    report = cleanup(state)
    assert names(report, 'paths') == [str(scratch)] and not scratch.exists()
    assert [item['id'] for item in report['kept']] == [str(user_file)]
    assert user_file.read_text() == 'keep me'


def test_a_tunable_a_survey_changed_is_set_back(sim, state):
    param = 'obdfilter.testfs-OST0000.sync_journal'
    before = sim.lctl('get_param', '-n', param).stdout.strip()
    changed = '0' if before != '0' else '1'
    state.record('params', RUN, name=param, old_value=before)
    sim.lctl('set_param', '-n', '%s=%s' % (param, changed))
    check = cleanup(state, check_mode=True)
    assert check['removed']['params'] == [{'name': param, 'value': before, 'run_id': RUN}]
    assert sim.lctl('get_param', '-n', param).stdout.strip() == changed
    report = cleanup(state)
    assert report['removed']['params'] == [{'name': param, 'value': before, 'run_id': RUN}]
    assert sim.lctl('get_param', '-n', param).stdout.strip() == before
    assert state.entries('params') == []
    assert cleanup(state)['changed'] is False


def test_lst_session_we_opened_is_ended(sim, state):
    subprocess.run(['modprobe', 'lnet_selftest'], check=True)
    env = dict(os.environ, LST_SESSION='4242')
    subprocess.run(['lst', 'new_session', '--timeout', '300', 'iokit_run1'], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    state.record('lst_sessions', RUN, name='iokit_run1', key=4242)
    state.record('lst_sessions', RUN, name='iokit_gone', key=4343)
    report = cleanup(state)
    assert report['removed']['lst_sessions'] == [{'name': 'iokit_run1', 'key': 4242, 'run_id': RUN}]
    assert report['forgotten'][0]['id'] == 'iokit_gone'
    shown = subprocess.run(['lst', 'show_session'], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    assert shown.returncode != 0
    assert not cleanup(state)['changed']


def test_run_id_limits_the_cleanup_to_that_run(sim, state):
    runner = Runner()
    lctl = lctl_utils.Lctl(runner)
    subprocess.run(['modprobe', 'obdecho'], check=True)
    for run_id, target in (('run-a', 'testfs-OST0000'), ('run-b', 'testfs-OST0001')):
        name = lctl_utils.echo_client_name(target)
        state.record('echo_clients', run_id, name=name, target=target)
        lctl.attach_echo_client(name, target)
    report = cleanup(state, run_id='run-a')
    assert names(report) == ['testfs-OST0000_ecc']
    assert report['kept'] == [{'kind': 'echo_clients', 'id': 'testfs-OST0001_ecc',
                               'reason': 'recorded by another run; clean it up with that run_id or none'}]
    assert 'testfs-OST0001_ecc' in sim.device_names()
    assert names(cleanup(state)) == ['testfs-OST0001_ecc']


def test_a_dead_host_is_an_error_and_forgets_nothing(sim, state):
    state.record('echo_clients', RUN, name='testfs-OST0000_ecc', target='testfs-OST0000')
    sim.fault('host_dead')
    report = cleanup(state)
    assert not report['changed'] and report['errors'][0]['rc'] == 255
    assert [entry['name'] for entry in state.entries('echo_clients')] == ['testfs-OST0000_ecc']


def test_object_ranges():
    assert object_ranges([[2, 3], {'first': 9, 'count': 2}, 20, 21, 23]) == [(2, 3), (9, 2), (20, 2), (23, 1)]
    assert object_ranges(None) == [] and object_ranges([[0, 5], [4, 0]]) == []


@pytest.fixture
def run_module(run_as_ansible):
    def run(args, check_mode=False):
        return run_as_ansible('iokit_cleanup', args, check_mode=check_mode)
    return run


def test_module_end_to_end_is_idempotent_and_check_mode_safe(run_module, sim, state):
    obdfilter_style_start(sim, state, 'testfs-OST0000', 2)
    sim.fault('leftover_echo_client', '--target', 'testfs-OST0001')
    args = {'workdir': state.workdir}
    plan = run_module(args, check_mode=True)
    assert plan['changed'] and sorted(item['name'] for item in plan['removed']['echo_clients']) == [
        'testfs-OST0000_ecc', 'testfs-OST0001_ecc']
    assert {'testfs-OST0000_ecc', 'testfs-OST0001_ecc'} <= set(sim.device_names())
    first = run_module(args)
    assert first['changed'] and not first.get('failed')
    assert [item['name'] for item in first['removed']['modules']] == ['obdecho']
    assert not any(name.endswith('_ecc') for name in sim.device_names())
    second = run_module(args)
    assert second['changed'] is False and second['removed'] == {
        'processes': [], 'slurm_jobs': [], 'echo_clients': [], 'lst_sessions': [], 'params': [], 'loop_devices': [], 'paths': [],
        'modules': [], 'module_payloads': []}


def test_module_fails_naming_what_is_left_unless_told_not_to(run_module, sim, state):
    state.record('echo_clients', RUN, name='testfs-OST0000_ecc', target='testfs-OST0000')
    sim.fault('host_dead')
    failed = run_module({'workdir': state.workdir})
    assert failed['failed'] and 'cleanup left things behind' in failed['msg']
    tolerated = run_module({'workdir': state.workdir, 'fail_on_error': False})
    assert not tolerated.get('failed') and tolerated['errors']
    bad = run_module({'workdir': state.workdir, 'kill_grace_s': -1})
    assert bad['failed'] and bad['msg'].startswith('kill_grace_s:')


# -- what roles record (state=recorded) in the same node state ------------------------------------------------


def start_fake_survey_module(tmp_path, name='AnsiballZ_fake_survey.py', ignore_term=False):
    """A process that looks like a survey module run by Python: its script name is an argument."""
    script = tmp_path / name
    ready = tmp_path / (name + '.ready')
    script.write_text('import signal, sys, time\n'
                      + ('signal.signal(signal.SIGTERM, signal.SIG_IGN)\n' if ignore_term else '')
                      + 'open(sys.argv[1], "w").close()\ntime.sleep(120)\n')
    process = subprocess.Popen([sys.executable, str(script), str(ready)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    # Ready once its signal disposition is set (before that it would die of SIGTERM even when it must not).
    wait_for('%s to set its signal disposition' % name, ready.exists, 60, process)
    return process


def test_role_records_are_undone_and_the_workdir_it_created_removed(sim, state, tmp_path):
    module = start_fake_survey_module(tmp_path)
    bystander = start_fake_survey_module(tmp_path, name='someone_elses_tool.py')
    try:
        recorded = record_entries(state, 'obdfilter', processes=[{'name': None, 'args_any': ['AnsiballZ_fake_survey.py']}],
                                  paths=[{'path': state.workdir + '/run-1'}])
        assert [(entry['kind'], entry['survey']) for entry in recorded] == [
            ('paths', 'obdfilter'), ('commands', 'obdfilter'), ('paths', 'obdfilter')]
        assert recorded[0] == {'kind': 'paths', 'path': state.workdir, 'remove': 'empty_dir', 'survey': 'obdfilter',
                               'run_id': None}
        # Recording the same again changes nothing.
        assert record_entries(state, 'obdfilter', processes=[{'name': None, 'args_any': ['AnsiballZ_fake_survey.py']}],
                              paths=[{'path': state.workdir + '/run-1'}]) == []
        os.makedirs(os.path.join(state.workdir, 'run-1', 'sub'))
        # As playbooks/cleanup.yml does after a cancelled job: every run, processes found by their arguments.
        report = cleanup(state, surveys=['obdfilter'])
        assert report['errors'] == [] and report['changed']
        assert [(item['pid'], item['signal'], item['matched']) for item in report['removed']['processes']] == [
            (module.pid, 'SIGTERM', '* AnsiballZ_fake_survey.py')]
        assert module.wait(timeout=5) == -signal.SIGTERM and bystander.poll() is None
        assert names(report, 'paths') == [state.workdir + '/run-1', state.workdir]
        assert not os.path.exists(state.workdir)
        again = cleanup(state, surveys=['obdfilter'])
        assert not again['changed'] and not os.path.exists(state.workdir)
    finally:
        for process in (module, bystander):
            process.kill()
            process.wait()


def test_a_recorded_process_ignoring_sigterm_is_killed(sim, state, tmp_path):
    stubborn = start_fake_survey_module(tmp_path, ignore_term=True)
    try:
        record_entries(state, 'sgpdd', processes=[{'args_any': ['AnsiballZ_fake_survey.py']}])
        report = cleanup(state, kill_grace_s=0.5)
        assert [(item['pid'], item['signal']) for item in report['removed']['processes']] == [(stubborn.pid, 'SIGKILL')]
        assert stubborn.wait(timeout=5) == -signal.SIGKILL
        assert state.read()['commands'] == [] if os.path.exists(state.path) else True
    finally:
        stubborn.kill()
        stubborn.wait()


def test_surveys_select_the_role_entries_and_the_state_file_stays_while_others_remain(sim, state):
    record_entries(state, 'sgpdd', paths=[{'path': state.workdir + '/sgpdd-run'}])
    record_entries(state, 'obdfilter', paths=[{'path': state.workdir + '/obdfilter-run'}])
    for name in ('sgpdd-run', 'obdfilter-run'):
        os.makedirs(os.path.join(state.workdir, name))
    report = cleanup(state, surveys=['obdfilter'])
    assert names(report, 'paths') == [state.workdir + '/obdfilter-run']
    assert os.path.isdir(state.workdir + '/sgpdd-run') and os.path.exists(state.path)
    left = state.read()['paths']
    assert sorted(entry['path'] for entry in left) == [state.workdir, state.workdir + '/sgpdd-run']
    # The last survey's cleanup removes the state file and the workdir the first recording created.
    final = cleanup(state, surveys=['sgpdd'])
    assert names(final, 'paths') == [state.workdir + '/sgpdd-run', state.workdir]
    assert not os.path.exists(state.workdir)


def test_a_path_a_role_recorded_is_removed_where_it_was_recorded(sim, state, tmp_path):
    scratch = tmp_path / 'demo' / 'loop'
    scratch.mkdir(parents=True)
    (scratch / 'image').write_bytes(b'\0' * 10)
    record_entries(state, 'sgpdd', paths=[{'path': str(scratch)}])
    report = cleanup(state)
    assert names(report, 'paths') == [str(scratch), state.workdir]
    assert not scratch.exists() and (tmp_path / 'demo').exists()


def fake_losetup(tmp_path, listing):
    """A losetup that prints ``listing`` for --list and logs every call."""
    log = tmp_path / 'losetup.log'
    tool = tmp_path / 'losetup'
    tool.write_text('#!/bin/sh\necho "$*" >> %s\n[ "$1" = --list ] && printf "%%s" "%s"\nexit 0\n' % (log, listing))
    tool.chmod(0o755)
    return str(tool), log


def test_recorded_loop_devices_are_detached_only_while_backed_by_the_recorded_file(sim, state, tmp_path):
    ours = tmp_path / 'ours.img'
    ours.write_bytes(b'\0')
    gone = tmp_path / 'gone.img'
    other = tmp_path / 'other.img'
    other.write_bytes(b'\0')
    losetup, log = fake_losetup(tmp_path, '/dev/loop3 %s\n/dev/loop4 %s (deleted)\n/dev/loop5 /srv/someone.img\n'
                                % (ours, gone))
    record_entries(state, 'sgpdd', loop_devices=[{'device': '/dev/loop3', 'backing_file': str(ours)},
                                                 {'device': '/dev/loop4', 'backing_file': str(gone)},
                                                 {'device': '/dev/loop5', 'backing_file': str(other)}])
    plan = cleanup(state, losetup_path=losetup, check_mode=True)
    assert [item['device'] for item in plan['removed']['loop_devices']] == ['/dev/loop3', '/dev/loop4', '/dev/loop5']
    assert log.read_text().splitlines() == ['--list --noheadings --raw --output NAME,BACK-FILE']
    report = cleanup(state, losetup_path=losetup)
    assert [(item['device'], item['steps']) for item in report['removed']['loop_devices']] == [
        ('/dev/loop3', ['detach', 'remove_backing_file']), ('/dev/loop4', ['detach']),
        ('/dev/loop5', ['remove_backing_file'])]
    assert [line for line in log.read_text().splitlines() if line.startswith('--detach')] == [
        '--detach /dev/loop3', '--detach /dev/loop4']
    assert report['kept'] == [{'kind': 'loop_devices', 'id': '/dev/loop5',
                               'reason': 'now backed by /srv/someone.img, not by the recorded %s' % other}]
    assert not ours.exists() and not other.exists()


def test_module_records_idempotently_and_names_bad_options(run_module, sim, state):
    args = {'workdir': state.workdir, 'state': 'recorded', 'survey': 'mds',
            'record': {'paths': [{'path': state.workdir + '/run-9'}], 'modules': ['obdecho']}}
    planned = run_module(args, check_mode=True)
    assert planned['changed'] and not os.path.exists(state.workdir)
    first = run_module(args)
    assert first['changed'] and [entry['kind'] for entry in first['recorded']] == ['paths', 'paths', 'modules']
    assert run_module(args)['changed'] is False
    missing = run_module({'workdir': state.workdir, 'state': 'recorded'})
    assert missing['failed'] and missing['msg'].startswith('survey: required with state=recorded')
    relative = run_module(dict(args, record={'paths': [{'path': 'scratch'}]}))
    assert relative['failed'] and 'record.paths[0].path: must be an absolute path' in relative['msg']


def test_a_run_scoped_cleanup_stops_only_the_module_that_uses_the_runs_directory(sim, state, tmp_path):
    # Two survey modules of the same name on the node: this run's keeps its raw output open in <workdir>/<run>,
    # another run's (another workdir) does not; a survey play's always (run_id set) stops only the first.
    os.makedirs(os.path.join(state.workdir, RUN))
    ours_dir, theirs_dir = tmp_path / 'ours', tmp_path / 'theirs'
    ours_dir.mkdir()
    theirs_dir.mkdir()
    ours = subprocess.Popen([sys.executable, '-c', 'import sys, time; f = open(sys.argv[1], "w"); time.sleep(120)',
                             os.path.join(state.workdir, RUN, 'obdfilter_survey.out'), 'AnsiballZ_x_survey.py'],
                            cwd=str(ours_dir))
    theirs = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)', 'AnsiballZ_x_survey.py'],
                              cwd=str(theirs_dir))
    try:
        out = os.path.join(state.workdir, RUN, 'obdfilter_survey.out')
        wait_for('our survey module to open %s' % out, lambda: os.path.exists(out), 60, ours)
        record_entries(state, 'obdfilter', processes=[{'args_any': ['AnsiballZ_x_survey.py']}])
        report = cleanup(state, run_id=RUN, surveys=['obdfilter'])
        assert [item['pid'] for item in report['removed']['processes']] == [ours.pid]
        assert ours.wait(timeout=5) == -signal.SIGTERM and theirs.poll() is None
    finally:
        for process in (ours, theirs):
            process.kill()
            process.wait()


def test_objects_are_destroyed_through_obdecho_loaded_for_it_then_unloaded(sim, state):
    subprocess.run(['modprobe', 'obdecho'], check=True)
    name = 'testfs-OST0001_abc123_ecc'
    lctl = lctl_utils.Lctl(Runner())
    lctl.attach_echo_client(name, 'testfs-OST0001')
    ids = lctl.create_objects(name, 2)
    state.record('echo_clients', RUN, name=name, target='testfs-OST0001', objects=[{'first': ids[0], 'count': 2}])
    lctl.teardown(name)
    subprocess.run(['rmmod', 'obdecho'], check=True)
    report = cleanup(state)
    assert report['errors'] == [] and names(report) == [name]
    assert sim.echo_objects('testfs-OST0001') == [] and 'obdecho' not in sim.modules()


def test_an_mdt_tree_on_a_failing_mdt_is_kept_recorded_with_how_to_remove_it_then_removed_once_repaired(sim, state):
    subprocess.run(['modprobe', 'obdecho'], check=True)
    name, directory = 'testfs-MDT0000_abc123_ecc', '/MDT0000-abc123-tests'
    lctl = lctl_utils.Lctl(Runner())
    lctl.attach_echo_client(name, 'testfs-MDT0000', layer='mdd')
    sim.lctl('--device', name, 'test_mkdir', directory)
    state.record('echo_clients', RUN, name=name, target='testfs-MDT0000', layer='mdd', directories=[directory],
                 files=None)
    sim.fault('io_error', '--target', 'testfs-MDT0000')
    report = cleanup(state)
    # The MDT's failure is not the cleanup's: named under kept, with what may remain and how to remove it.
    assert report['errors'] == []
    kept = [item for item in report['kept'] if item['kind'] == 'echo_clients']
    assert [item['id'] for item in kept] == [name]
    reason = kept[0]['reason']
    assert 'test directories %s may remain on testfs-MDT0000' % directory in reason
    assert 'Input/output error' in reason and 'cleanup_run_id=%s' % RUN in reason
    assert 'lctl --device %s setup testfs-MDT0000 mdd' % name in reason and 'test_rmdir <dir>' in reason
    # Its echo client is gone; the record stays for the next cleanup.
    assert name not in sim.device_names()
    assert [entry['name'] for entry in state.entries('echo_clients')] == [name]
    sim.cli('fault', '--root', sim.root, 'clear', '--all')
    report = cleanup(state)
    assert report['errors'] == [] and report['kept'] == [] and names(report) == [name]
    assert report['removed']['echo_clients'][0]['directories_removed'] == [directory]
    assert state.entries('echo_clients') == [] and name not in sim.device_names()
    assert sim.lctl('--device', name, 'test_lookup', '-d', '/', '-b', '0', check=False).returncode != 0
