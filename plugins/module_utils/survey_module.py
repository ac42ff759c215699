# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What every survey module does the same way around its engine.

Target-side code: the standard library and this collection's module_utils, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import socket
import time

from ansible_collections.lustre.iokit.plugins.module_utils import lctl as lctl_utils
from ansible_collections.lustre.iokit.plugins.module_utils import plan_estimate
from ansible_collections.lustre.iokit.plugins.module_utils import progress as progress_utils
from ansible_collections.lustre.iokit.plugins.module_utils import results
from ansible_collections.lustre.iokit.plugins.module_utils.cleanup import Cleanup, record_entries
from ansible_collections.lustre.iokit.plugins.module_utils.engines.contract import EngineContext
from ansible_collections.lustre.iokit.plugins.module_utils.engines.errors import EngineError
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import (
    NodeState,
    NodeStateError,
    SurveyLock,
    SurveyLockHeld,
    command_line,
    has_exited,
    is_same_process,
    parent_pid,
)

# Ansible's own keys of an async job's result: ``async_status`` reads ``finished`` to know whether the
# job ended, and turns a timestamp there into a boolean, so the envelope's fields of these names
# appear only inside ``envelope``.
ASYNC_RESERVED_KEYS = ('started', 'finished')
# How long a survey launched with a start_signal waits for it: its controller is gone after that.
START_SIGNAL_WAIT_S = 900
START_SIGNAL_POLL_S = 0.2


def module_result(envelope):
    """The module's result: the envelope under ``envelope`` and its keys at the top level, except Ansible's async keys."""
    result = dict((key, value) for key, value in envelope.items() if key not in ASYNC_RESERVED_KEYS)
    result['envelope'] = envelope
    return result


class RawOutput:
    """The I/O kit's ``.summary`` and ``.detail`` files, written as the survey goes.

    Flushed after every write, so that what a killed survey measured is on disk for the user to read.
    """

    def __init__(self, prefix):
        self.summary_path = prefix + '.summary'
        self.detail_path = prefix + '.detail'
        self._summary = open(self.summary_path, 'w')
        self._detail = open(self.detail_path, 'w')

    def summary(self, text):
        self._summary.write(text)
        self._summary.flush()

    def detail(self, text):
        self._detail.write(text)
        self._detail.flush()

    def close(self):
        self._summary.close()
        self._detail.close()


def fail_on_problems(module, problems):
    """Fail with every problem (OptionProblem) in one message, so that the user fixes them all at once."""
    if problems:
        module.fail_json(msg='; '.join(str(problem) for problem in problems))


def short_host_name():
    return socket.gethostname().split('.')[0]


def iokit_script_path(module):
    """The ``iokit_script`` option as a path: a bare name is looked up in PATH (failing when it is not there)."""
    script = module.params['iokit_script']
    if os.sep not in script:
        script = module.get_bin_path(script, required=True)
    return script


class SurveyStart:
    """What a survey module holds once its options are accepted: the run, the envelope builder and the runners.

    ``runner`` measures, under the deadline from the ``timeout`` option. ``control_runner`` makes and undoes
    things with no deadline, so that teardown still runs after a timeout; ``lctl`` drives lctl through it.
    ``context`` is what the module hands its engine (contract.EngineContext): the runners, the node state, the run
    id and the host, with the engine's default clocks.
    """

    def __init__(self, module, run_id, host, builder, node_state, runner, control_runner, survey=None,
                 exclusive=False):
        self.module = module
        self.survey = survey
        self._recorded = False
        self._recorded_for_cleanup = False
        self.progress = None
        self._earlier_points = []
        # The records of _earlier_points, in the same order (an adaptive sweep takes their figures into account).
        self.done_records = []
        # One survey of this kind per node at a time (taken in start_run, before anything is made).
        self.lock = SurveyLock(None, survey) if exclusive and node_state is not None else None
        self.run_id = run_id
        self.host = host
        self.builder = builder
        self.node_state = node_state
        self.runner = runner
        self.control_runner = control_runner
        self.lctl = lctl_utils.Lctl(control_runner) if control_runner is not None else None
        self.context = EngineContext(runner, control_runner, node_state, run_id, host)

    def start_run(self, planned=None, planned_duration_s=None, record_point=None, parts=False):
        """Start the run on this node: take the survey's node lock, record the module for the cleanup, resume the
        run id's earlier attempts and start the progress log; returns the run directory ``<workdir>/<run_id>``.

        The directory is created if needed; the module fails naming ``workdir`` when it cannot be.
        Called once every check has passed, right before the survey makes anything: with a node state, the
        module first takes the lock (``exclusive``) and records itself and the directory there for the cleanup
        (``record_for_cleanup``).
        Outside check mode the run's progress log starts there (``planned``: progress.planned_points of the
        engine's plan), told of every record the envelope builder receives.
        With ``record_point`` (a record to its entry of ``planned``, without weight) the run resumes: the points
        an earlier attempt of this run id finished here go into the envelope first, ``done_by()`` gives them to
        the engine to skip, and the envelope lists the attempts; the ``force_rerun`` option starts over.
        With ``parts`` (a survey whose one record covers its whole sweep: ost), the points file keeps the finished
        parts of that record instead (one OST written and read): an earlier attempt's parts are not put into the
        envelope, the engine builds its record from them (``done_records``); ``record_point`` names the part's
        point, or None for a logged whole record (left out), and a part is done for every planned point that has
        its keys and values (an OST's write and its read).
        """
        run_dir = os.path.join(self.module.params['workdir'], self.run_id)
        if self.node_state is not None and not self.module.check_mode and not self._recorded:
            self._recorded = True
            if self.lock is not None:
                self.take_lock()
            self._record_for_cleanup()
        try:
            os.makedirs(run_dir, exist_ok=True)
        except OSError as exc:
            self.module.fail_json(msg='workdir: cannot create %s: %s' % (run_dir, exc))
        if not self.module.check_mode:
            self.wait_for_start_signal()
        if self.survey is not None and not self.module.check_mode and self.progress is None:
            attempt, done_before = 1, 0
            if record_point is not None:
                attempt = self._resume(run_dir, record_point, parts)
                planned = planned or []
                remaining = [point for point in planned if not any(
                    _covers(done, point) if parts else done == _without_weight(point) for done in self._earlier_points)]
                done_before = len(planned) - len(remaining) if parts else len(self._earlier_points)
                planned = remaining
            self.progress = progress_utils.ProgressLog(run_dir, self.survey, self.run_id, self.host, planned=planned,
                                                       planned_duration_s=planned_duration_s, attempt=attempt,
                                                       done_before=done_before)
            if record_point is not None:
                self.progress.envelope_fields = self.builder.extra_fields
            self.builder.observers.append(self.progress)
        return run_dir

    def wait_for_start_signal(self):
        """Wait for the ``start_signal`` file, if the module has one, then remove it; fail naming it after
        START_SIGNAL_WAIT_S.  In ``start_run`` once the lock is held and the module recorded for the cleanup (a
        controller lost meanwhile leaves nothing the cleanup does not find), and before the attempt and its progress
        log start, whose clocks are the measurement's."""
        path = self.module.params.get('start_signal')
        if not path:
            return
        began = time.monotonic()
        deadline = began + START_SIGNAL_WAIT_S
        while not os.path.exists(path):
            if time.monotonic() >= deadline:
                self.module.fail_json(msg='start_signal: %s did not appear within %d s: the controller that launched '
                                          'the %s survey did not start it (lost or stopped); nothing was measured'
                                          % (path, START_SIGNAL_WAIT_S, self.survey or 'this'))
            time.sleep(START_SIGNAL_POLL_S)
        try:
            os.remove(path)
        except OSError:
            pass  # gone already, or another look at it removes it: the start is what counts
        # The envelope's start and duration are the survey's; how long it waited for the fleet is kept apart.
        self.builder.set_environment(start_wait_s=round(time.monotonic() - began, 3))
        self.builder.restart_clock()

    def done_by(self, *keys):
        """The points earlier attempts finished (after ``start_run``), as the engine looks them up: the tuple of
        the point's ``keys`` (the one value for a single key) -> its record."""
        def key_of(point):
            return point[keys[0]] if len(keys) == 1 else tuple(point[key] for key in keys)
        return dict((key_of(point), record) for point, record in zip(self._earlier_points, self.done_records))

    def follow_sweep(self, inner_sweeps):
        """Each point the adaptive sweep passes over leaves the progress log's total (after ``start_run``)."""
        if self.progress is not None:
            inner_sweeps.on_skip = self.progress.point_skipped

    def _resume(self, run_dir, record_point, parts=False):
        try:
            attempt, attempts, earlier = progress_utils.start_attempt(
                run_dir, self.survey, self.builder.parameters, force=bool(self.module.params.get('force_rerun')))
        except progress_utils.ResumeError as exc:
            self.module.fail_json(msg='%s: run %s not resumed: %s' % (self.survey, self.run_id, exc))
        except (IOError, OSError) as exc:
            self.module.fail_json(msg='workdir: cannot read or note the attempts of run %s in %s: %s'
                                      % (self.run_id, run_dir, exc))
        if parts:
            earlier = [record for record in earlier if record_point(record) is not None]
        else:
            for record in earlier:
                self.builder.add_record(record)
        self._earlier_points = [record_point(record) for record in earlier]
        self.done_records = list(earlier)
        self.builder.extra_fields['attempts'] = attempts
        return attempt

    def take_lock(self):
        """Hold this survey's node lock until the module exits; fail naming the live run that holds it.

        The lock is the node's, whatever the workdir (node_state.node_lock_dir), so that two runs with different
        workdirs never survey the same targets at once.  A live holder of this very run id on this host is this
        run's own survey, left running by a controller that was killed or an AWX job that was cancelled: the
        relaunch waits for it to end (within its own timeout) and then resumes, taking the points it measured.
        A record left under a free lock is a killed run's: once none of its recorded processes runs any more,
        what it left is removed first (its echo clients and objects, its test directories); while one still
        runs (a worker that outlived its module), the survey does not start.
        """
        workdir = self.module.params['workdir']
        record = {'run_id': self.run_id, 'launch': self.node_state.launch, 'host': self.host, 'pid': os.getpid(),
                  'workdir': os.path.abspath(workdir)}
        waited = []

        def own_run_still_running(holder):
            if holder.get('run_id') != self.run_id or holder.get('host') != self.host or self.runner.expired():
                return False
            if not waited:
                waited.append(dict(holder))
                # The module is recorded now, so that a cleanup of the run stops it while it waits; the run directory
                # only once the lock is ours: this launch's cleanup must not remove what the running survey writes.
                self._record_for_cleanup(run_dir=False)
            return True

        try:
            previous = self.lock.acquire_when_free(record, own_run_still_running)
        except SurveyLockHeld as exc:
            if waited and exc.holder.get('run_id') == self.run_id:
                self.module.fail_json(msg='%s: run %s: stopped (%s) while waiting for this run\'s own survey '
                                          'started earlier on this node (pid %s, started %s) to end'
                                          % (self.survey, self.run_id, self.runner.stop_reason, exc.holder.get('pid'),
                                             exc.holder.get('started')), lock_holder=exc.holder)
            self.module.fail_json(msg='%s: run %s not started: %s. Wait for it to end, or stop it with '
                                      'playbooks/cleanup.yml -e cleanup_run_id=%s'
                                      % (self.survey, self.run_id, exc, exc.holder.get('run_id') or '<its run id>'),
                                  lock_holder=exc.holder)
        except (IOError, OSError) as exc:
            self.module.fail_json(msg='workdir: cannot take the %s survey lock in %s: %s'
                                      % (self.survey, os.path.dirname(self.lock.path), exc))
        if waited:
            try:
                self.node_state.adopt(self.run_id, waited[0].get('launch'))
            except (NodeStateError, OSError) as exc:
                self.module.fail_json(msg='workdir: cannot take over the records of run %s\'s earlier launch in the '
                                          'node state under %s: %s' % (self.run_id, workdir, exc))
            self.builder.set_environment(waited_for_own_run={
                'pid': waited[0].get('pid'), 'launch': waited[0].get('launch'), 'started': waited[0].get('started')})
        if not previous or not previous.get('run_id'):
            return
        # The killed holder's leftovers are listed in its own workdir's node state.
        previous_state = NodeState(previous.get('workdir') or workdir)
        running = [entry for entry in previous_state.entries('processes', run_id=previous['run_id'])
                   if entry.get('launch') == previous.get('launch') and is_same_process(entry)
                   and not has_exited(entry['pid'])]
        if running:
            self.lock.release()
            self.module.fail_json(msg='%s: run %s not started: run %s (host %s, pid %s, started %s) was killed but '
                                      'its processes %s still run; stop them with playbooks/cleanup.yml -e '
                                      'cleanup_run_id=%s' % (self.survey, self.run_id, previous['run_id'],
                                                             previous.get('host'), previous.get('pid'),
                                                             previous.get('started'),
                                                             ', '.join(str(entry['pid']) for entry in running),
                                                             previous['run_id']))
        report = Cleanup(self.control_runner, previous_state, run_id=previous['run_id'],
                         launch=previous.get('launch'), surveys=[self.survey], include_iokit_leftovers=False).run()
        removed = dict((kind, items) for kind, items in report['removed'].items() if items)
        self.builder.set_environment(killed_run_cleaned={'run_id': previous['run_id'], 'pid': previous.get('pid'),
                                                         'started': previous.get('started'), 'removed': removed,
                                                         'errors': report['errors']})

    def _record_for_cleanup(self, run_dir=True):
        try:
            if self._recorded_for_cleanup:
                if run_dir:
                    record_entries(self.node_state, self.survey, run_id=self.run_id,
                                   paths=[{'path': os.path.join(self.node_state.workdir, self.run_id)}])
                return
            self._recorded_for_cleanup = True
            record_for_cleanup(self.node_state, self.survey, self.run_id, self.module, lock=self.lock, run_dir=run_dir)
        except (NodeStateError, OSError) as exc:
            self.module.fail_json(msg='workdir: cannot record the survey in the node state under %s: %s'
                                      % (self.module.params['workdir'], exc))

    def remove_leftover_echo_clients(self, tool, names):
        """Tear down the echo clients an I/O-kit script left (its own trap is not trusted), each an envelope error."""
        for name in names:
            try:
                steps = self.lctl.teardown(name)
            except lctl_utils.LctlError as exc:
                self.builder.add_error('%s left echo_client %s and it could not be removed: %s' % (tool, name, exc))
                continue
            if steps:
                self.builder.add_error('%s left echo_client %s behind; removed it (%s)' % (tool, name, ', '.join(steps)))
            self.node_state.forget('echo_clients', name)

    def load_kernel_module(self, name):
        """Load ``name`` unless loaded, recording it for the cleanup; True when we loaded it. Fails the module."""
        try:
            return lctl_utils.load_module(self.control_runner, self.node_state, name, self.run_id)
        except lctl_utils.LctlError as exc:
            self.module.fail_json(msg='cannot load %s: %s' % (name, exc))

    def unload_kernel_module(self, name):
        """Unload ``name`` if we loaded it; what goes wrong is an error in the envelope, not a failure."""
        try:
            outcome = lctl_utils.unload_module_if_ours(self.control_runner, self.node_state, name)
        except lctl_utils.LctlError as exc:
            self.builder.add_error('unload %s: %s' % (name, exc))
        else:
            if outcome == 'in_use':
                self.builder.add_error('%s is still in use; left loaded (recorded for the cleanup)' % name)


def _without_weight(point):
    return dict((key, value) for key, value in point.items() if key != 'weight')


def _covers(done, point):
    """True when the done part ``done`` has the keys and values of the planned ``point`` it covers."""
    return all(key in point and point[key] == value for key, value in done.items())


def start_survey(module, survey, parameter_names, runner_class, recording_runner_class=None, exclusive=False):
    """The run, the envelope builder and the runners every survey module starts with.

    The runner classes come from the calling module at call time, so that its tests can replace them there.
    With ``recording_runner_class`` (a ProcessRecordingRunner) the measuring runner writes its children into
    the node state under ``workdir`` for the cleanup, and a control runner is made; without it the measuring
    runner is a plain ``runner_class`` and there is neither node state nor control runner.
    Installs the SIGTERM handler that stops the measuring runner's children.
    With ``exclusive`` (needs the recording runner), ``start_run`` first takes the node lock of ``survey``
    (SurveyStart.take_lock).  Every node-state entry carries the launch id (``launch_id`` option, else a new one).
    """
    params = module.params
    run_id = params['run_id'] or results.new_run_id()
    host = short_host_name()
    parameters = dict((name, params[name]) for name in parameter_names)
    builder = results.EnvelopeBuilder(run_id, host, survey, params['engine'], parameters,
                                      check_mode=module.check_mode)
    launch = params.get('launch_id') or results.new_launch_id()
    node_state = NodeState(params['workdir'], launch=launch) if recording_runner_class is not None else None
    deadline = time.monotonic() + params['timeout'] if params['timeout'] else None
    if recording_runner_class is None:
        runner = runner_class(deadline=deadline)
    else:
        runner = recording_runner_class(node_state, run_id, deadline=deadline)
    runner.install_sigterm_handler()
    control_runner = runner_class() if recording_runner_class is not None else None
    return SurveyStart(module, run_id, host, builder, node_state, runner, control_runner, survey=survey,
                       exclusive=exclusive)


def record_for_cleanup(node_state, survey, run_id, module, pid=None, lock=None, run_dir=True):
    """Write this module's processes and its run directory into the node state, before the survey makes anything.

    Killed by the async limit or orphaned by a lost controller, the module is then found by pid and start time
    (SIGTERM makes it undo what it made), and its run directory is removed; no role task has to record them
    first. Under ``async`` the wrapper's processes above the module (the one that runs it and the watchdog that
    enforces the limit) are recorded too, so that a cleanup after a lost controller leaves none of them
    running. The module crosses its processes off, except the watchdog, when it exits through ``module``'s
    exit_json or fail_json
    (and then lets ``lock`` go); a SIGKILLed one leaves them to iokit_cleanup, which also forgets a process that
    has exited.
    """
    pid = os.getpid() if pid is None else pid
    if run_dir:
        record_entries(node_state, survey, run_id=run_id, paths=[{'path': os.path.join(node_state.workdir, run_id)}])
    pids = [pid] + async_wrapper_ancestors(pid)
    # The watchdog (the wrapper's outer process) outlives the module by up to one of its polls: it stays recorded,
    # naming the module it watches, and the cleanup waits for it to end (cleanup.wait_for_finished_async_watchdogs).
    watchdog = pids[2] if len(pids) == 3 else None
    for recorded in pids:
        details = {'async_watchdog_of': pid} if recorded == watchdog else {}
        node_state.record('processes', run_id, pid=recorded, command=command_line(recorded)[:3], survey=survey,
                          module=recorded == pid, **details)
    ending_with_module = [recorded for recorded in pids if recorded != watchdog]
    module.exit_json = _forgetting_first(module.exit_json, node_state, ending_with_module, lock)
    module.fail_json = _forgetting_first(module.fail_json, node_state, ending_with_module, lock)


def async_wrapper_ancestors(pid):
    """Ansible's async wrapper processes above ``pid``: the one running the module, then its watchdog."""
    found = []
    current = pid
    for unused in range(2):
        parent = parent_pid(current)
        if not parent or parent == 1 or not any('async_wrapper' in arg for arg in command_line(parent)[:2]):
            break
        found.append(parent)
        current = parent
    return found


def _forgetting_first(exit_function, node_state, pids, lock=None):
    def exit_after_forgetting(*args, **kwargs):
        try:
            for pid in pids:
                node_state.forget('processes', pid)
        except (NodeStateError, OSError) as exc:
            kwargs.setdefault('warnings', []).append('node state: cannot cross off this module (pids %s): %s'
                                                     % (pids, exc))
        if lock is not None:
            lock.release()
        exit_function(*args, **kwargs)
    return exit_after_forgetting


def add_iokit_outcome(builder, records, errors, runner):
    """What an I/O-kit script produced, and whether its runner stopped it."""
    for record in records:
        builder.add_record(record)
    for error in errors:
        builder.add_error(error['message'], error['point'])
    if runner.stop_reason:
        builder.mark_aborted('stopped: %s' % runner.stop_reason)


def run_native(builder, survey, control_runner, raw_prefix=None):
    """Run a native engine through its contract (engines/contract.py) into the envelope builder.

    ``setup()``, every record of ``run()`` into ``builder`` as its point completes, and always
    ``teardown(control_runner)``; an ``EngineError``, ``LctlError`` or ``OSError`` on the way is an envelope error,
    not a failure. The earlier attempts' records the engine ``withdrawn`` leave the envelope (a resumed sweep that
    no longer has their points). Then the engine's errors, the cleanup's problems and why the sweep stopped early
    go into the envelope (``add_survey_outcome``). With ``raw_prefix`` the survey writes the I/O kit's ``.summary`` and
    ``.detail`` files there as it goes. Returns the records this attempt measured and the raw files' paths.
    """
    raw = RawOutput(raw_prefix) if raw_prefix is not None else None
    if raw is not None:
        survey.raw = raw
    measured = []
    try:
        survey.setup()
        for record in survey.run():
            builder.add_record(record)
            measured.append(record)
    except (EngineError, lctl_utils.LctlError, OSError) as exc:
        builder.add_error(str(exc))
    finally:
        cleanup_problems = survey.teardown(control_runner)
        if raw is not None:
            raw.close()
    for item in survey.withdrawn:
        builder.withdraw_record(item['record'], item['reason'], item['point'])
    add_survey_outcome(builder, survey, cleanup_problems)
    return measured, [raw.summary_path, raw.detail_path] if raw is not None else []


def add_survey_outcome(builder, survey, cleanup_problems=()):
    """A native survey's errors, its cleanup problems, then why it stopped early (if it did); the envelope fields
    the survey adds itself (``envelope_fields()``, such as an adaptive sweep's), when it has them."""
    fields = getattr(survey, 'envelope_fields', None)
    if callable(fields):
        builder.extra_fields.update(fields())
    for error in survey.errors:
        builder.add_error(error['message'], error['point'])
    for problem in cleanup_problems:
        builder.add_error('cleanup: %s' % problem)
    if survey.aborted:
        builder.mark_aborted('survey stopped: %s' % survey.aborted)


def exit_with_envelope(module, builder, what, changed, **extra):
    """Finish the envelope and end the module: failed when ``what`` measured nothing, else with the result.

    ``extra`` (the plan, raw files...) goes into the result either way.  A plan gets its ``estimate`` (from the
    survey's built-in rate unless the module made one), and a run's envelope keeps the plan's work
    (``plan_work``) for later plans to measure their rate from.
    """
    result = dict(extra)
    plan = result.get('plan')
    if isinstance(plan, dict) and builder.survey in plan_estimate.WORK_UNITS:
        if not isinstance(plan.get('estimate'), dict):
            estimate = plan_estimate.estimate(builder.survey, plan)
            plan = result['plan'] = dict(plan, estimate=estimate, estimated_duration_s=estimate['estimated_duration_s'],
                                         estimate_basis=estimate['estimate_basis'])
        estimate = plan['estimate']
        if not builder.check_mode and estimate['work']['amount'] is not None:
            builder.extra_fields['plan_work'] = {'points': estimate['points'], 'amount': estimate['work']['amount'],
                                                 'unit': estimate['work']['unit']}
    envelope = builder.finish()
    result.update(module_result(envelope))
    if envelope['status'] == results.STATUS_FAILED:
        module.fail_json(msg='%s measured nothing: %s' % (what, '; '.join(
            error['message'] for error in envelope['errors'])), changed=changed, **result)
    module.exit_json(changed=changed, **result)


class ServerSurveySpec:
    """How one server survey (sgpdd, obdfilter, mds, ost, lnet) differs from the others, for ``run_server_survey``.

    A module subclasses it with its names and the steps only it has; what is left as it is here is the same for
    every survey.
    """

    # The survey's name (results.SURVEYS), its words in a failure ('obdfilter survey') and its envelope parameters.
    survey = None
    what = None
    parameter_names = ()
    # One such survey per node at a time (the node lock, SurveyStart.take_lock).
    exclusive = False
    # Whether the survey records what it makes in the node state (a ProcessRecordingRunner and a control runner).
    keeps_node_state = True
    # A kernel module loaded around the run (recorded for the cleanup, unloaded after when we loaded it), and the
    # environment fact that says whether we loaded it.
    kernel_module = None
    kernel_module_fact = None
    # The keys of a point in the resume log, and whether the log keeps parts of one record (SurveyStart.start_run).
    resume_keys = ()
    resume_parts = False
    # The option that overrides the estimate's assumed rate (plan_estimate.estimate), if any.
    estimate_option = None
    # Where the native engine writes the I/O kit's .summary and .detail files, under the run directory.
    raw_name = None
    # Whether the result lists ``raw_files``.
    returns_raw_files = True

    def prepare(self, params):
        """Fill in the options whose default depends on another one (after the option checks)."""

    def build(self, start):
        """The engine, with the envelope's environment set; raises EngineError (the module fails with it)."""
        raise NotImplementedError

    def check(self, start, survey):
        """Fail the module with what keeps the engine from starting here (every problem at once)."""
        fail_on_problems(start.module, survey.problems())

    def plan(self, start, survey):
        """The plan the module returns (a dict with the engine's ``points``)."""
        return survey.plan()

    def plan_lines(self, params, plan):
        """The plan in a few lines for people: check mode returns them as the plan's ``lines``."""
        return []

    def changed_in_check_mode(self, start, survey, plan):
        return True

    def before_run(self, start, survey, plan):
        """The last checks that only a run needs (check mode has ended)."""

    def planned(self, survey, plan):
        """The points of the progress log: progress.planned_points of the plan."""
        raise NotImplementedError

    def record_point(self, record):
        """A record's point as ``planned`` names it (resume)."""
        raise NotImplementedError

    def run_native(self, start, survey, run_dir):
        """Run the native engine; returns ``(changed, raw_files)``."""
        raw_prefix = os.path.join(run_dir, self.raw_name) if self.raw_name else None
        records, raw_files = run_native(start.builder, survey, start.control_runner, raw_prefix)
        return bool(records), raw_files

    def run_iokit(self, start, survey, run_dir):
        """Run the node's installed I/O-kit script (``iokit_script``); returns ``(changed, raw_files)``."""
        raise NotImplementedError

    def after_run(self, start, survey):
        """The environment facts only the run knows."""


def run_server_survey(module, spec, runner_class, recording_runner_class=None):
    """A server survey module's whole run once its arguments are parsed, as ``spec`` (a ServerSurveySpec) says.

    Fail on the option problems, start the survey (the runner classes come from the calling module, so that its
    tests can replace them there), build the engine and check it, plan with its estimate (check mode ends there),
    lock, record for the cleanup and resume (``SurveyStart.start_run``), run the native engine or the I/O-kit
    script (``engine``) with the survey's kernel module loaded, and exit with the envelope.
    """
    params = module.params
    fail_on_problems(module, spec.option_problems(params))
    spec.prepare(params)
    start = start_survey(module, spec.survey, spec.parameter_names, runner_class,
                         recording_runner_class if spec.keeps_node_state else None, exclusive=spec.exclusive)
    builder = start.builder
    try:
        survey = spec.build(start)
    except EngineError as exc:
        module.fail_json(msg=str(exc))
    spec.check(start, survey)
    plan = spec.plan(start, survey)
    override = (params[spec.estimate_option], spec.estimate_option) if spec.estimate_option else ()
    estimate = plan_estimate.estimate(spec.survey, plan, *override)
    plan.update(estimate=estimate, estimated_duration_s=estimate['estimated_duration_s'],
                estimate_basis=estimate['estimate_basis'])
    if module.check_mode:
        plan['lines'] = spec.plan_lines(params, plan)
        exit_with_envelope(module, builder, spec.what, spec.changed_in_check_mode(start, survey, plan), plan=plan)
    spec.before_run(start, survey, plan)
    # The installed script cannot skip points: only the native engine resumes.
    resumes = params['engine'] == 'native'
    run_dir = start.start_run(spec.planned(survey, plan), plan['estimated_duration_s'],
                              record_point=spec.record_point if resumes else None, parts=spec.resume_parts)
    inner_sweeps = getattr(survey, 'inner_sweeps', None)
    if inner_sweeps is not None:
        start.follow_sweep(inner_sweeps)
    if resumes:
        survey.done_points = start.done_by(*spec.resume_keys)
    if spec.kernel_module:
        builder.set_environment(**{spec.kernel_module_fact: start.load_kernel_module(spec.kernel_module)})
    try:
        if params['engine'] == 'iokit':
            changed, raw_files = spec.run_iokit(start, survey, run_dir)
        else:
            changed, raw_files = spec.run_native(start, survey, run_dir)
    finally:
        if spec.kernel_module:
            start.unload_kernel_module(spec.kernel_module)
    spec.after_run(start, survey)
    builder.set_raw_output(raw_files[0] if raw_files else None)
    extra = dict(raw_files=raw_files) if spec.returns_raw_files else {}
    exit_with_envelope(module, builder, spec.what, changed, plan=plan, **extra)
