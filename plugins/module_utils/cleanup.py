# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Undo what surveys left on a node: the logic of the ``iokit_cleanup`` module.

What is ours comes from the node state (``node_state.py``), written before
each survey acted; I/O-kit leftovers come from ``lctl dl`` by name.  The
order matters:

1. processes a role recorded by command line (a survey module killed by the
   async limit: SIGTERM lets it tear down what it made), then our helper
   processes by pid (an ``lctl --threads test_brw`` holds its echo client);
2. echo clients we recorded: destroy the objects we created while the device
   still exists, then ``cleanup`` and ``detach`` it by name;
3. I/O-kit leftovers (echo clients before the ``echotmp`` osc they sit on);
   Slurm jobs a client survey submitted (``scancel`` by the recorded job id or
   unique job name, then the job's output file and script);
4. our lst sessions; 5. tunables; 6. loop devices a role recorded (while
   still backed by the recorded file), then scratch paths (a survey's only
   under the workdir or its Lustre directory, a role's where it recorded them);
7. kernel modules we loaded, once nothing uses them;
8. when nothing is left to undo, the state file itself and the directories
   a role recorded as ``empty_dir`` (the workdir it created), if empty.

Something already gone is crossed off the node state and reported under
``forgotten``, never an error.  In check mode nothing is changed, the node
state included, and ``removed`` says what would be removed.

Two parts live in files of their own: the echo clients (step 2 and 3's leftovers, ``cleanup_echo_clients.py``)
and finding our processes in /proc (``process_match.py``).

Target-side code: standard library only, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import signal
import time

from ansible_collections.lustre.iokit.plugins.module_utils.progress import remove_tree_keeping_points
from ansible_collections.lustre.iokit.plugins.module_utils import lctl as lctl_utils
from ansible_collections.lustre.iokit.plugins.module_utils import payload as payload_utils
from ansible_collections.lustre.iokit.plugins.module_utils import process_match
from ansible_collections.lustre.iokit.plugins.module_utils.cleanup_echo_clients import EchoClientCleanup
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import (
    KINDS,
    LOCK_DIR,
    STATE_FILE,
    NodeStateError,
    command_id,
    has_exited,
    is_empty,
    is_same_process,
    live_runs,
    remove_free_locks,
    process_start_time,
)

REMOVED_KINDS = ('processes', 'slurm_jobs', 'echo_clients', 'lst_sessions', 'params', 'loop_devices', 'paths', 'modules',
                 'module_payloads')
_POLL_INTERVAL_S = 0.05
# How often Ansible's async watchdog looks at its job (async_wrapper's ``step``).
ASYNC_WATCHDOG_POLL_S = 5.0
# What the workdir holds of ours when nothing else is left in it.
_STATE_NAMES = set([STATE_FILE, STATE_FILE + '.lock', LOCK_DIR])


def _is_under(path, directory):
    path = os.path.abspath(path)
    directory = os.path.abspath(directory)
    return path != directory and path.startswith(directory.rstrip(os.sep) + os.sep)


class Cleanup(EchoClientCleanup):
    """One cleanup pass.  ``run()`` returns the report (see the module's RETURN)."""

    def __init__(self, runner, node_state, run_id=None, include_iokit_leftovers=True, unload_modules=True,
                 check_mode=False, kill_grace_s=5.0, lst_path=None, lctl='lctl', surveys=None, losetup_path=None,
                 launch=None, scancel_path=None, module_payloads=False, payload_parents=None, keep_points=False):
        self.runner = runner
        self.node_state = node_state
        self.run_id = run_id
        # One launch of the run only (a survey play's always): a second launch of the same run id, refused by the
        # survey lock, must not undo what the first, still running, made.
        self.launch = launch
        # Without a run id, what a live run (one holding a survey lock) recorded is not a leftover.
        self.live = [] if run_id is not None else list(live_runs().values())
        self.surveys = None if surveys is None else set(surveys)
        self.losetup_path = losetup_path
        self.scancel_path = scancel_path
        # Off unless asked (iokit_cleanup's option): a survey module cleaning up after a killed run of its own does
        # not sweep the node's temporary directory.
        self.module_payloads = module_payloads
        self.payload_parents = payload_parents
        self.keep_points = keep_points
        self.include_iokit_leftovers = include_iokit_leftovers
        self.unload_modules = unload_modules
        self.check_mode = check_mode
        self.kill_grace_s = kill_grace_s
        self.lst_path = lst_path
        self.lctl = lctl_utils.Lctl(runner, lctl)
        self.removed = dict((kind, []) for kind in REMOVED_KINDS)
        self.forgotten = []
        self.kept = []
        self.errors = []
        self._devices = None
        self._devices_unreadable = False
        self._state = None

    # -- bookkeeping -----------------------------------------------------------------

    def _selected(self, entry):
        # A role's entries carry no run id (only their survey); a module's carry no survey (only their run id).
        if self.run_id is not None and entry.get('run_id') not in (self.run_id, None):
            return False
        if self.launch is not None and entry.get('launch') not in (self.launch, None):
            return False
        if self._of_live_run(entry):
            return False
        return self.surveys is None or entry.get('survey') is None or entry['survey'] in self.surveys

    def _of_live_run(self, entry):
        return any(entry.get('run_id') == holder.get('run_id') and entry.get('launch') in (holder.get('launch'), None)
                   for holder in self.live if holder.get('run_id'))

    def _entries(self, kind):
        return [entry for entry in self._state.get(kind, []) if self._selected(entry)]

    def _forget(self, kind, identity, reason):
        self.forgotten.append({'kind': kind, 'id': identity, 'reason': reason})
        if not self.check_mode:
            self.node_state.forget(kind, identity)

    def _keep(self, kind, identity, reason):
        self.kept.append({'kind': kind, 'id': identity, 'reason': reason})

    def _error(self, kind, identity, exc):
        error = {'kind': kind, 'id': identity, 'message': str(exc)}
        if isinstance(exc, lctl_utils.LctlError):
            error.update(command=exc.command, stderr=exc.stderr, rc=exc.rc)
        self.errors.append(error)

    def _device_list(self):
        """``lctl dl`` (read once, again after each change); None, with an error, when lctl fails."""
        if self._devices is None and not self._devices_unreadable:
            try:
                self._devices = self.lctl.devices()
            except lctl_utils.LctlError as exc:
                if exc.rc is None and 'cannot run' in exc.stderr:
                    # No lctl on this node: no device can be left, ours or the I/O kit's.
                    self._devices = []
                else:
                    self._error('echo_clients', None, exc)
                    self._devices_unreadable = True
        return self._devices

    # -- the pass ----------------------------------------------------------------------

    def _read_state(self):
        try:
            self._state = self.node_state.read()
        except NodeStateError as exc:
            # Without the record we cannot tell what is ours; leftovers by name are still safe to remove.
            self.errors.append({'kind': 'node_state', 'id': self.node_state.path, 'message': str(exc)})
            self._state = dict((kind, []) for kind in KINDS)
            return False
        return True

    def run(self):
        state_readable = self._read_state()
        for holder in self.live:
            reason = ('a live %s survey (host %s, pid %s, started %s): what it recorded is left alone; stop it with '
                      'run_id %s' % (holder.get('survey'), holder.get('host'), holder.get('pid'),
                                     holder.get('started'), holder.get('run_id')))
            self._keep('runs', holder.get('run_id'), reason)
        # The survey modules first: a module whose commands die under it first would take their end for the
        # point's end and log the cut point as finished, to be kept and skipped by a rerun. Stopped first, a module
        # ends its commands itself as a stop; what it leaves running is stopped next.
        self.stop_processes()
        self._reread_after_stops(0, state_readable)
        stopped_before = len(self.removed['processes'])
        self.stop_recorded_commands()
        self._reread_after_stops(stopped_before, state_readable)
        self.cancel_slurm_jobs()
        handled = self.remove_recorded_echo_clients()
        if self.include_iokit_leftovers:
            self.remove_leftover_devices(handled)
        self.end_lst_sessions()
        self.restore_params()
        self.detach_loop_devices()
        self.remove_paths()
        if self.unload_modules:
            self.unload_our_modules()
        self.note_foreign_echo_module(handled)
        if self.module_payloads:
            self.remove_module_payloads()
        if state_readable:
            self.finish()
        return self.report()

    def remove_module_payloads(self):
        """The module payloads Ansible extracted for this collection's modules that were SIGKILLed (payload.py)."""
        removed, errors = payload_utils.remove_stale_payloads(self.payload_parents, check_mode=self.check_mode)
        self.removed['module_payloads'].extend(removed)
        for path, message in errors:
            self._error('module_payloads', path, message)

    def report(self):
        changed = any(self.removed[kind] for kind in REMOVED_KINDS)
        return {'changed': changed, 'removed': self.removed, 'forgotten': self.forgotten, 'kept': self.kept,
                'errors': self.errors}

    # -- processes -----------------------------------------------------------------------

    def stop_recorded_commands(self):
        """Stop the processes a role recorded by command name and arguments, then cross the entries off."""
        entries = self._entries('commands')
        if not entries:
            return
        running = process_match.command_lines()
        # Scoped to a run (a survey play's always): a process found by its arguments alone (any survey module of
        # that name on the node) is ours only when it uses the run's directory, where a survey module keeps its
        # raw output open; another run's module, or another user's, is left alone.
        run_dir = os.path.join(self.node_state.workdir, self.run_id) if self.run_id is not None else None
        stopping = []
        for entry in entries:
            pids = [pid for pid, (comm, argv) in sorted(running.items())
                    if process_match.matches_command(entry, comm, argv)
                    and (run_dir is None or entry.get('name') is not None or process_match.uses_directory(pid, run_dir))]
            if not pids:
                self._forget('commands', entry['id'], 'no such process is running')
                continue
            for pid in pids:
                fake = {'pid': pid, 'start_time': process_start_time(pid)}
                summary = {'pid': pid, 'command': running[pid][1], 'survey': entry.get('survey'),
                           'matched': entry['id']}
                stopping.append((fake, summary, False, entry))
        if self.check_mode:
            self.removed['processes'].extend(summary for unused, summary, unused_group, unused_entry in stopping)
            return
        stopped = self._stop(stopping)
        for entry in entries:
            mine = [item for item in stopping if item[3] is entry]
            if mine and all(item in stopped for item in mine):
                self.node_state.forget('commands', entry['id'])

    def _reread_after_stops(self, stopped_before, state_readable):
        # A survey module stopped by SIGTERM tears down and crosses off (or rewrites) what it made: what was read
        # before it stopped is stale, and removing by it would find the files its teardown removed gone.
        if len(self.removed['processes']) > stopped_before and state_readable:
            self._read_state()

    def _stop(self, stopping):
        """SIGTERM, SIGKILL after the grace time, then report; ``stopping``: (entry, summary, group, ...)."""
        for item in stopping:
            process_match.signal_process(int(item[0]['pid']), signal.SIGTERM, item[2])
        deadline = time.monotonic() + self.kill_grace_s
        while time.monotonic() < deadline and any(process_match.still_running(item[0], item[2]) for item in stopping):
            time.sleep(_POLL_INTERVAL_S)
        for item in stopping:
            if process_match.still_running(item[0], item[2]):
                process_match.signal_process(int(item[0]['pid']), signal.SIGKILL, item[2])
                item[1]['signal'] = 'SIGKILL'
            else:
                item[1]['signal'] = 'SIGTERM'
        deadline = time.monotonic() + max(self.kill_grace_s, 1.0)
        while time.monotonic() < deadline and any(process_match.still_running(item[0], item[2]) for item in stopping):
            time.sleep(_POLL_INTERVAL_S)
        stopped = []
        for item in stopping:
            if process_match.still_running(item[0], item[2]):
                self._error('processes', item[1]['pid'], 'process %d survived SIGKILL' % item[1]['pid'])
                continue
            self.removed['processes'].append(item[1])
            stopped.append(item)
        return stopped

    def stop_processes(self):
        self.wait_for_finished_async_watchdogs()
        stopping = []
        for entry in self._entries('processes'):
            pid = int(entry['pid'])
            summary = {'pid': pid, 'command': entry.get('command'), 'run_id': entry.get('run_id')}
            # A zombie has exited as much as a reaped process (its parent has yet to wait for it).
            gone = process_start_time(pid) is None or (is_same_process(entry) and has_exited(pid))
            if is_same_process(entry) and not gone:
                # Runner children lead their own process group; stopping the group stops their workers too.
                group = process_match.leader_of_own_group(pid)
                stopping.append((entry, summary, group))
            elif gone and process_match.live_group_members(pid):
                # The leader died (SIGKILL) but its workers live on in its group; a pid that still names a
                # process group cannot have been given to another process, so the group is ours.
                summary['orphaned_group'] = True
                stopping.append((entry, summary, True))
            elif gone:
                self._forget('processes', pid, 'the process has exited')
            else:
                self._forget('processes', pid, 'pid %d now belongs to another process (start time differs)' % pid)
        if not stopping:
            return
        if self.check_mode:
            for unused_entry, summary, unused_group in stopping:
                self.removed['processes'].append(summary)
            return
        # The survey modules first, and alone until they have ended: signalled together with their commands, a
        # module whose sgp_dd or lctl died before its own handler ran (under load, or in another thread) took
        # that end for the point's end and logged the cut point as finished, to be kept and skipped by a rerun.
        # Stopped first, a module ends its commands itself as a stop; what is still running is stopped next.
        stopped = self._stop([item for item in stopping if item[0].get('module')])
        still_running = []
        for item in stopping:
            if item[0].get('module'):
                continue
            if process_match.still_running(item[0], item[2]):
                still_running.append(item)
            else:
                item[1]['signal'] = None  # its module ended it; the cleanup sent nothing
                self.removed['processes'].append(item[1])
                stopped.append(item)
        stopped.extend(self._stop(still_running))
        for entry, unused_summary, unused_group in stopped:
            self.node_state.forget('processes', entry['pid'])

    def wait_for_finished_async_watchdogs(self):
        """Let the async watchdogs of finished survey modules end by themselves, within a deadline.

        Ansible's async watchdog notices that its job ended only at its next poll (every
        ASYNC_WATCHDOG_POLL_S), then removes the job's temporary files and exits: a cleanup right after a run
        would otherwise find it still running.  Its job has finished when the survey module it watches
        (``async_watchdog_of``) has crossed itself off.  One still running after the deadline is stopped with
        the other processes (its temporary files then stay); a watchdog whose module is still recorded (running,
        or SIGKILLed) is stopped at once, as before.
        """
        if self.check_mode:
            return
        entries = self._entries('processes')
        modules = set(int(entry['pid']) for entry in entries if entry.get('module'))
        waiting = [entry for entry in entries if entry.get('async_watchdog_of') is not None
                   and int(entry['async_watchdog_of']) not in modules and is_same_process(entry)]
        deadline = time.monotonic() + ASYNC_WATCHDOG_POLL_S + self.kill_grace_s
        while waiting and time.monotonic() < deadline:
            time.sleep(_POLL_INTERVAL_S)
            waiting = [entry for entry in waiting if process_match.still_running(entry, False)]

    # -- echo clients ------------------------------------------------------------------------

    # -- Slurm jobs ------------------------------------------------------------------------------

    def cancel_slurm_jobs(self):
        """Cancel the Slurm jobs a killed client survey left (by id when recorded, else by their unique name and
        user), then remove their output file (only inside the survey's tree while its marker names the run) and
        their script (only under the workdir)."""
        for entry in self._entries('slurm_jobs'):
            name = entry['name']
            scancel = entry.get('scancel') if entry.get('scancel') and os.access(entry['scancel'], os.X_OK) else None
            scancel = scancel or self.scancel_path
            if scancel is None:
                self._keep('slurm_jobs', name, 'scancel is not in PATH; cancel the job by hand: scancel --name %s'
                           % name)
                continue
            summary = {'name': name, 'job_id': entry.get('job_id'), 'run_id': entry.get('run_id'),
                       'survey': entry.get('survey'), 'allocation': entry.get('allocation')}
            files = self._slurm_job_files(entry)
            summary['files'] = files
            if self.check_mode:
                self.removed['slurm_jobs'].append(summary)
                continue
            argv = [scancel, str(entry['job_id'])] if entry.get('job_id') else (
                [scancel, '--name', name] + (['--user', entry['user']] if entry.get('user') else []))
            cancelled = self.runner.run(argv)
            text = '%s %s' % (cancelled.stderr, cancelled.stdout)
            if cancelled.rc != 0 and 'already completing or completed' not in text and 'Invalid job id' not in text:
                self._error('slurm_jobs', name, '%s failed (rc %s): %s'
                            % (' '.join(argv), cancelled.rc, text.strip()))
                continue
            for path in files:
                try:
                    os.unlink(path)
                except OSError as exc:
                    if os.path.lexists(path):
                        self._error('slurm_jobs', name, exc)
            self.node_state.forget('slurm_jobs', name)
            self.removed['slurm_jobs'].append(summary)

    def _slurm_job_files(self, entry):
        """The recorded job's files that are there and ours: the output inside the marked tree, the script under the
        workdir."""
        files = []
        output, tree = entry.get('output'), entry.get('tree')
        if output and tree and os.path.dirname(os.path.abspath(output)) == os.path.abspath(tree) \
                and _carries_marker(tree, entry) and os.path.isfile(output) and not os.path.islink(output):
            files.append(output)
        script = entry.get('script')
        if script and _is_under(script, self.node_state.workdir) and os.path.isfile(script):
            files.append(script)
        return files

    # -- lst sessions ---------------------------------------------------------------------------

    def end_lst_sessions(self):
        for entry in self._entries('lst_sessions'):
            name = entry['name']
            if self.lst_path is None:
                self._forget('lst_sessions', name, 'lst is not installed, so no session can be open')
                continue
            key = entry.get('key')
            if key is None:
                self._keep('lst_sessions', name, 'no session key (LST_SESSION) recorded; end it by hand')
                continue
            env = {'LST_SESSION': str(key)}
            shown = self.runner.run([self.lst_path, 'show_session'], env=env)
            words = shown.stdout.split()
            if shown.rc != 0 or not words or words[0] != name or ('KEY: %s' % key) not in shown.stdout:
                self._forget('lst_sessions', name, 'no such lst session is open')
                continue
            summary = {'name': name, 'key': key, 'run_id': entry.get('run_id')}
            if self.check_mode:
                self.removed['lst_sessions'].append(summary)
                continue
            ended = self.runner.run([self.lst_path, 'end_session'], env=env)
            if ended.rc != 0:
                self._error('lst_sessions', name, lctl_utils.LctlError(ended.argv, ended.stderr, ended.rc))
                continue
            self.removed['lst_sessions'].append(summary)
            self.node_state.forget('lst_sessions', name)

    # -- paths ------------------------------------------------------------------------------------

    def restore_params(self):
        """Set every tunable a survey changed (ost-survey's max_cached_mb) back to its recorded value."""
        for entry in self._entries('params'):
            name, old_value = entry['name'], entry.get('old_value')
            if old_value is None:
                self._forget('params', name, 'no old value was recorded')
                continue
            summary = {'name': name, 'value': old_value, 'run_id': entry.get('run_id')}
            if not self.check_mode:
                restored = self.runner.run([self.lctl.lctl, 'set_param', '-n', '%s=%s' % (name, old_value)])
                if restored.rc != 0:
                    self._error('params', name, lctl_utils.LctlError(restored.argv, restored.stderr, restored.rc))
                    continue
                self.node_state.forget('params', name)
            self.removed['params'].append(summary)

    def _removable_path(self, entry, absolute, protected):
        """Where a recorded path may be removed from: our workdir, or the survey's own directory on the
        Lustre mount it recorded (ost-survey writes its files there); never through a symlink leading out."""
        roots = [self.node_state.workdir]
        if entry.get('survey') == 'ost' and entry.get('mount_point'):
            roots.append(entry['mount_point'])
        if entry.get('survey') in ('mdtest', 'ior') and entry.get('mount_point') and (
                _carries_marker(absolute, entry) or not os.path.lexists(absolute)):
            # mdtest's and IOR's trees are removed from the Lustre mount only while their marker names the recorded run
            # (a tree already gone is only crossed off)
            roots.append(entry['mount_point'])
        real_parent = os.path.realpath(os.path.dirname(absolute))
        for root in roots:
            real_root = os.path.realpath(root)
            if (_is_under(absolute, root) and absolute not in protected
                    and (real_parent == real_root or _is_under(real_parent, real_root))):
                return True
        return False

    def remove_paths(self):
        workdir = self.node_state.workdir
        protected = set(os.path.abspath(os.path.join(workdir, name)) for name in (STATE_FILE, STATE_FILE + '.lock'))
        protected.update([os.sep, os.path.abspath(workdir)])
        for entry in self._entries('paths'):
            path = entry['path']
            absolute = os.path.abspath(path)
            if entry.get('remove') == 'empty_dir':
                continue  # in finish(), once nothing else is left
            if entry.get('remove') == 'tree':
                # A role recorded it, where its playbook said, before creating it: removed wherever it is.
                removable = os.path.isabs(path) and absolute not in protected
            else:
                removable = self._removable_path(entry, absolute, protected)
            if not removable:
                self._keep('paths', path, 'not under the workdir %s nor a survey directory on a Lustre mount; '
                           'never removed' % workdir)
                continue
            if not os.path.lexists(absolute):
                self._forget('paths', path, 'already gone')
                continue
            summary = {'path': path, 'run_id': entry.get('run_id')}
            if not self.check_mode:
                try:
                    if os.path.isdir(absolute) and not os.path.islink(absolute):
                        # A survey's finished points stay, so that a rerun of the run measures only the others.
                        remove_tree_keeping_points(absolute, keep_finished=self.keep_points)
                    else:
                        os.unlink(absolute)
                except OSError as exc:
                    if os.path.lexists(absolute):
                        self._error('paths', path, exc)
                        continue
                self.node_state.forget('paths', path)
            self.removed['paths'].append(summary)

    # -- loop devices ------------------------------------------------------------------------------

    def detach_loop_devices(self):
        """Detach the recorded loop devices still backed by the recorded file, then remove that file."""
        entries = self._entries('loop_devices')
        if not entries:
            return
        attached = {}
        if self.losetup_path is not None:
            listed = self.runner.run([self.losetup_path, '--list', '--noheadings', '--raw', '--output',
                                      'NAME,BACK-FILE'])
            if listed.rc != 0:
                self._error('loop_devices', None, lctl_utils.LctlError(listed.argv, listed.stderr, listed.rc))
                return
            for line in listed.stdout.splitlines():
                words = line.split(None, 1)
                if len(words) == 2:
                    # losetup appends " (deleted)" to a backing file that is gone.
                    attached[words[0]] = re.sub(r' \(deleted\)$', '', words[1].strip())
        for entry in entries:
            device, backing = entry['device'], os.path.normpath(entry['backing_file'])
            summary = {'device': device, 'backing_file': backing, 'survey': entry.get('survey'), 'steps': []}
            if attached.get(device) == backing:
                summary['steps'].append('detach')
                if not self.check_mode:
                    detached = self.runner.run([self.losetup_path, '--detach', device])
                    if detached.rc != 0:
                        self._error('loop_devices', device,
                                    lctl_utils.LctlError(detached.argv, detached.stderr, detached.rc))
                        continue
            elif device in attached:
                self._keep('loop_devices', device, 'now backed by %s, not by the recorded %s' % (attached[device], backing))
            if os.path.lexists(backing):
                summary['steps'].append('remove_backing_file')
                if not self.check_mode:
                    try:
                        os.unlink(backing)
                    except OSError as exc:
                        if os.path.lexists(backing):
                            self._error('loop_devices', device, exc)
                            continue
            if not summary['steps']:
                self._forget('loop_devices', device, 'not attached to the recorded file, which is gone')
                continue
            if not self.check_mode:
                self.node_state.forget('loop_devices', device)
            self.removed['loop_devices'].append(summary)

    # -- modules ----------------------------------------------------------------------------------

    def unload_our_modules(self):
        entries = self._entries('modules')
        if not entries:
            return
        try:
            loaded = lctl_utils.loaded_modules(self.runner)
        except lctl_utils.LctlError as exc:
            self._error('modules', None, exc)
            return
        echo_devices_left = [device for device in self._device_list() or [] if device['type'] in ('echo_client', 'obdecho')]
        for entry in entries:
            name = lctl_utils.canonical_module(entry['name'])
            summary = {'name': name, 'run_id': entry.get('run_id')}
            if self.check_mode:
                self._predict_unload(name, loaded, summary)
                continue
            try:
                outcome = lctl_utils.unload_module_if_ours(self.runner, self.node_state, name)
            except lctl_utils.LctlError as exc:
                self._error('modules', name, exc)
                continue
            if outcome == 'unloaded':
                self.removed['modules'].append(summary)
            elif outcome == 'not_loaded':
                self.forgotten.append({'kind': 'modules', 'id': name, 'reason': 'not loaded any more'})
            elif outcome == 'in_use':
                users = loaded.get(name, {}).get('used_by') or [device['name'] for device in echo_devices_left]
                self._keep('modules', name, 'still in use%s' % (' by ' + ', '.join(users) if users else ''))

    def note_foreign_echo_module(self, handled):
        """After removing I/O-kit leftovers, say so when obdecho stays loaded because we did not load it.

        docs/architecture.md section 7: only what this collection loaded is unloaded.  The module that an aborted
        lustre-iokit script (or an administrator) loaded is left, and the report says how to unload it.
        """
        removed_leftovers = [item for item in self.removed['echo_clients'] if item.get('source') == 'iokit_leftover']
        if not removed_leftovers:
            return
        echo_module = lctl_utils.ECHO_MODULE
        if any(lctl_utils.canonical_module(entry.get('name', '')) == echo_module for entry in self._state['modules']):
            return
        try:
            loaded = lctl_utils.loaded_modules(self.runner)
        except lctl_utils.LctlError:
            return
        if echo_module in loaded:
            self._keep('modules', echo_module, 'loaded, but not by this collection (the aborted run whose echo '
                       'devices were removed, or an administrator, loaded it); left loaded: run "rmmod %s" once '
                       'nothing else uses it' % echo_module)

    # -- the state file ---------------------------------------------------------------------------

    def finish(self):
        """Once nothing is left to undo: remove the state file, then the directories a role recorded as
        ``empty_dir`` (the workdir it created), each only when empty."""
        try:
            state = self.node_state.read()
        except NodeStateError:
            return
        last = [entry for entry in state['paths'] if entry.get('remove') == 'empty_dir' and self._selected(entry)]
        rest = dict(state)
        rest['paths'] = [entry for entry in state['paths'] if entry not in last]
        if not is_empty(rest):
            return
        directories = sorted(set(os.path.abspath(entry['path']) for entry in last), key=len, reverse=True)
        if self.check_mode:
            self.removed['paths'].extend({'path': path, 'run_id': None} for path in directories
                                         if os.path.isdir(path) and set(os.listdir(path)) <= _STATE_NAMES)
            return
        for path in directories:
            self.node_state.forget('paths', path)
        # The lock file goes too: a survey starting this very moment would re-create both.
        if not self.node_state.remove_if_empty():
            return
        remove_free_locks(self.node_state.workdir)
        for path in directories:
            try:
                os.rmdir(path)
            except OSError as exc:
                if os.path.isdir(path):
                    self._keep('paths', path, 'not empty (%s); left in place' % exc.strerror)
                continue
            self.removed['paths'].append({'path': path, 'run_id': None})

    def _predict_unload(self, name, loaded, summary):
        if name not in loaded:
            self.forgotten.append({'kind': 'modules', 'id': name, 'reason': 'not loaded any more'})
            return
        going = set(item['name'] for item in self.removed['echo_clients'])
        staying = [device['name'] for device in self._device_list() or []
                   if device['type'] in ('echo_client', 'obdecho') and device['name'] not in going]
        if loaded[name]['used_by'] or (name == lctl_utils.ECHO_MODULE and staying):
            self._keep('modules', name, 'would still be in use by %s' % ', '.join(loaded[name]['used_by'] + staying))
            return
        self.removed['modules'].append(summary)


def _carries_marker(path, entry):
    """True when the directory ``path`` holds the file ``entry['marker']`` whose text is the entry's run id."""
    marker = entry.get('marker')
    if not marker or os.sep in marker or os.path.islink(path) or not os.path.isdir(path):
        return False
    try:
        with open(os.path.join(path, marker)) as handle:
            return handle.read().strip() == entry.get('run_id')
    except (IOError, OSError):
        return False


def record_entries(node_state, survey, run_id=None, processes=(), paths=(), modules=(), loop_devices=(),
                   check_mode=False):
    """Write down what a role is about to start, create or load (iokit_cleanup ``state=recorded``).

    Returns the entries that were not recorded yet (each with its ``kind``); recording the same thing
    twice keeps one entry, so a rerun changes nothing.  The workdir itself is recorded as an
    ``empty_dir`` when it does not exist yet, so that the cleanup removes it once it is empty again.
    """
    wanted = []
    if not os.path.isdir(node_state.workdir):
        wanted.append(('paths', {'path': os.path.normpath(node_state.workdir), 'remove': 'empty_dir'}))
    for process in processes:
        args_any = [str(arg) for arg in process['args_any']]
        wanted.append(('commands', {'id': command_id(process.get('name'), args_any), 'name': process.get('name'),
                                    'args_any': args_any}))
    for path in paths:
        wanted.append(('paths', {'path': os.path.normpath(path['path']), 'remove': path.get('kind') or 'tree'}))
    for module in modules:
        wanted.append(('modules', {'name': module}))
    for loop_device in loop_devices:
        wanted.append(('loop_devices', {'device': loop_device['device'],
                                        'backing_file': os.path.normpath(loop_device['backing_file'])}))
    state = node_state.read()
    new = []
    for kind, details in wanted:
        details['survey'] = survey
        key = KINDS[kind]
        same = [entry for entry in state[kind] if entry.get(key) == details[key]]
        if any(all(entry.get(field) == value for field, value in details.items()) and entry.get('run_id') == run_id
               for entry in same):
            continue
        new.append(dict(details, kind=kind, run_id=run_id))
        if not check_mode:
            node_state.record(kind, run_id, **details)
    return new
