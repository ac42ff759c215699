# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What every survey module does the same way: its start, its run directory, kernel modules, outcome, exit."""

from __future__ import annotations

import threading
import time

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import results
from ansible_collections.lustre.iokit.plugins.module_utils import survey_module
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import KINDS, NodeState
from ansible_collections.lustre.iokit.plugins.module_utils.runner import CommandResult
from ansible_collections.lustre.iokit.tests.unit.waiting import wait_for

LSMOD_HEADER = 'Module                  Size  Used by\n'


class Ended(Exception):
    def __init__(self, how, result):
        super().__init__(how)
        self.how = how
        self.result = result


class FakeModule:
    def __init__(self, tmp_path, check_mode=False, **params):
        self.params = dict({'run_id': None, 'engine': 'native', 'timeout': None, 'workdir': str(tmp_path / 'work'),
                            'size_mib': 4}, **params)
        self.check_mode = check_mode

    def fail_json(self, **result):
        raise Ended('failed', result)

    def exit_json(self, **result):
        raise Ended('exited', result)


class Made:
    """Stands for Runner and ProcessRecordingRunner: remembers how each runner was made."""

    def __init__(self, *args, **kwargs):
        self.args = args
        self.deadline = kwargs.get('deadline')
        self.handler_installed = False
        self.commands = []
        self.lsmod = LSMOD_HEADER

    def install_sigterm_handler(self):
        self.handler_installed = True

    def run(self, argv, env=None, cwd=None):
        self.commands.append(list(argv))
        if argv == ['lsmod']:
            return CommandResult(argv, 0, self.lsmod, '', 0.01)
        if argv[:2] == ['lctl', 'dl']:
            return CommandResult(argv, 0, ' 27 UP echo_client left_ecc left_ecc_UUID 3\n', '', 0.01)
        return CommandResult(argv, 0, '', '', 0.01)


def test_a_recording_start_makes_node_state_both_runners_and_lctl(tmp_path):
    module = FakeModule(tmp_path, run_id='run-9', timeout=60)
    before = time.monotonic()
    start = survey_module.start_survey(module, 'mds', ('size_mib', 'timeout'), Made, Made)
    assert (start.run_id, start.host) == ('run-9', survey_module.short_host_name())
    assert isinstance(start.node_state, NodeState) and start.node_state.workdir == module.params['workdir']
    # the measuring runner records its children under the run and stops at the deadline
    assert start.runner.args == (start.node_state, 'run-9') and start.runner.handler_installed
    assert before + 60 <= start.runner.deadline <= time.monotonic() + 60
    # the control runner has no deadline, so that teardown runs after a timeout
    assert start.control_runner.deadline is None and not start.control_runner.handler_installed
    assert start.lctl.runner is start.control_runner
    envelope = start.builder.finish()
    assert (envelope['survey'], envelope['run_id'], envelope['engine']) == ('mds', 'run-9', 'native')
    assert envelope['parameters'] == {'size_mib': 4, 'timeout': 60}


def test_a_plain_start_has_one_runner_and_no_node_state(tmp_path):
    module = FakeModule(tmp_path, check_mode=True)
    start = survey_module.start_survey(module, 'sgpdd', ('size_mib',), Made)
    assert start.node_state is None and start.control_runner is None and start.lctl is None
    assert start.runner.args == () and start.runner.deadline is None and start.runner.handler_installed
    assert results.validate_run_id(start.run_id) == start.run_id
    assert start.builder.finish()['status'] == results.STATUS_SKIPPED


def test_problems_fail_together_and_none_pass(tmp_path):
    module = FakeModule(tmp_path)
    survey_module.fail_on_problems(module, [])
    with pytest.raises(Ended) as ended:
        survey_module.fail_on_problems(module, ['thrlo: too big', 'timeout: must be at least 1 second'])
    assert ended.value.result == {'msg': 'thrlo: too big; timeout: must be at least 1 second'}


def test_the_run_dir_is_made_once_and_a_blocked_one_names_workdir(tmp_path):
    start = survey_module.start_survey(FakeModule(tmp_path, run_id='r1'), 'ost', (), Made, Made)
    assert start.start_run() == str(tmp_path / 'work' / 'r1') == start.start_run()
    (tmp_path / 'file').write_text('')
    blocked = survey_module.start_survey(FakeModule(tmp_path, run_id='r1', workdir=str(tmp_path / 'file')), 'ost',
                                         (), Made, Made)
    with pytest.raises(Ended) as ended:
        blocked.start_run()
    # The module records itself in the node state under the workdir before it creates anything there.
    assert ended.value.result['msg'].startswith('workdir: cannot record the survey in the node state under %s: '
                                                % (tmp_path / 'file'))


def test_a_survey_waits_for_its_start_signal_with_its_lock_held_then_removes_it(tmp_path, monkeypatch):
    monkeypatch.setenv('LUSTRE_SIM_ROOT', str(tmp_path / 'node'))  # the node lock under the test's own /run
    signal = tmp_path / 'obdfilter.start'
    start = survey_module.start_survey(FakeModule(tmp_path, run_id='r1', start_signal=str(signal)), 'obdfilter',
                                       (), Made, Made, exclusive=True)
    started = []
    worker = threading.Thread(target=lambda: started.append(start.start_run()))
    worker.start()
    try:
        # Waiting: recorded for the cleanup and holding the node lock, the measurement not begun.
        wait_for('the survey to lock and record itself',
                 lambda: start.lock.held and any(start.node_state.read().get(kind) for kind in KINDS))
        assert worker.is_alive() and not started
        signalled = time.time()
        signal.write_text('')
    finally:
        worker.join(30)
    assert started == [str(tmp_path / 'work' / 'r1')] and not signal.exists()
    # the envelope's clock starts after the wait, which it keeps apart
    assert start.builder._started >= signalled  # pylint: disable=protected-access
    assert start.builder.finish()['environment']['start_wait_s'] >= 0


def test_a_start_signal_that_never_comes_fails_naming_it(tmp_path, monkeypatch):
    monkeypatch.setattr(survey_module, 'START_SIGNAL_WAIT_S', 0.5)
    signal = tmp_path / 'obdfilter.start'
    start = survey_module.start_survey(FakeModule(tmp_path, run_id='r1', start_signal=str(signal)), 'obdfilter',
                                       (), Made, Made)
    with pytest.raises(Ended) as ended:
        start.start_run()
    assert ended.value.how == 'failed'
    assert ended.value.result['msg'].startswith('start_signal: %s did not appear within ' % signal)
    assert 'nothing was measured' in ended.value.result['msg']


def test_check_mode_and_no_start_signal_start_at_once(tmp_path):
    start = survey_module.start_survey(FakeModule(tmp_path, run_id='r1', check_mode=True,
                                                  start_signal=str(tmp_path / 'never')), 'obdfilter', (), Made, Made)
    assert start.start_run() == str(tmp_path / 'work' / 'r1')
    start = survey_module.start_survey(FakeModule(tmp_path, run_id='r2'), 'obdfilter', (), Made, Made)
    assert start.start_run() == str(tmp_path / 'work' / 'r2')


def test_a_module_we_loaded_but_still_used_is_an_error_and_stays_recorded(tmp_path):
    start = survey_module.start_survey(FakeModule(tmp_path, run_id='r1'), 'lnet', (), Made, Made)
    assert start.load_kernel_module('lnet_selftest') is True
    assert ['modprobe', 'lnet_selftest'] in start.control_runner.commands
    start.control_runner.lsmod = LSMOD_HEADER + 'lnet_selftest 294912 1\n'
    start.unload_kernel_module('lnet_selftest')
    assert start.builder.errors == [{'point': None, 'message': 'lnet_selftest is still in use; left loaded '
                                                               '(recorded for the cleanup)'}]
    assert [entry['name'] for entry in start.node_state.entries('modules')] == ['lnet_selftest']


def test_leftover_echo_clients_are_removed_and_reported(tmp_path):
    start = survey_module.start_survey(FakeModule(tmp_path, run_id='r1'), 'mds', (), Made, Made)
    start.node_state.record('echo_clients', 'r1', name='left_ecc', target='t')
    start.remove_leftover_echo_clients('mds-survey', ['left_ecc'])
    assert ['lctl', '--device', 'left_ecc', 'cleanup'] in start.control_runner.commands
    assert start.builder.errors[0]['message'] == 'mds-survey left echo_client left_ecc behind; removed it (cleanup, detach)'
    assert start.node_state.entries('echo_clients') == []


class Stopped:
    errors = [{'message': 'point failed', 'point': {'thr': 2}}]
    aborted = 'timeout'


def test_outcomes_keep_errors_then_cleanup_problems_then_the_stop(tmp_path):
    builder = results.EnvelopeBuilder('r1', 'h', 'lnet', 'native')
    survey_module.add_survey_outcome(builder, Stopped(), cleanup_problems=['session left'])
    assert [error['message'] for error in builder.errors] == [
        'point failed', 'cleanup: session left', 'survey stopped: timeout']
    builder = results.EnvelopeBuilder('r1', 'h', 'mds', 'iokit')
    runner = Made()
    runner.stop_reason = 'terminated by signal 15'
    survey_module.add_iokit_outcome(builder, [{'thr': 1}], [{'message': 'bad line', 'point': None}], runner)
    assert builder.records == [{'thr': 1}] and builder.aborted
    assert [error['message'] for error in builder.errors] == ['bad line', 'stopped: terminated by signal 15']


def test_nothing_measured_fails_with_the_envelope_and_a_measurement_exits(tmp_path):
    module = FakeModule(tmp_path)
    builder = results.EnvelopeBuilder('r1', 'h', 'ost', 'native')
    builder.add_error('no active OST')
    with pytest.raises(Ended) as ended:
        survey_module.exit_with_envelope(module, builder, 'ost survey', False, plan={'points': []})
    assert ended.value.how == 'failed' and ended.value.result['msg'] == 'ost survey measured nothing: no active OST'
    plan = ended.value.result['plan']
    assert plan['points'] == [] and ended.value.result['status'] == 'failed'
    # every plan leaves with its estimate; an ost plan without an active OST has no duration
    assert plan['estimate']['points'] == 0 and plan['estimated_duration_s'] is None
    assert 'plan_work' not in ended.value.result['envelope']
    assert 'started' not in ended.value.result and ended.value.result['envelope']['started']
    builder = results.EnvelopeBuilder('r1', 'h', 'ost', 'native')
    builder.add_record({'osts': []})
    with pytest.raises(Ended) as ended:
        survey_module.exit_with_envelope(module, builder, 'ost survey', True, raw_files=['a'])
    assert ended.value.how == 'exited' and ended.value.result['changed'] is True
    assert ended.value.result['raw_files'] == ['a'] and ended.value.result['status'] == 'ok'
