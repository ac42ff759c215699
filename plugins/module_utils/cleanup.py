# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Undo what surveys left on a node: the logic of the ``iokit_cleanup`` module.

What is ours comes from the node state (``node_state.py``), written before
each survey acted; I/O-kit leftovers come from ``lctl dl`` by name.  The
order matters:

1. our helper processes (an ``lctl --threads test_brw`` holds its echo client);
2. echo clients we recorded: destroy the objects we created while the device
   still exists, then ``cleanup`` and ``detach`` it by name;
3. I/O-kit leftovers (echo clients before the ``echotmp`` osc they sit on);
4. our lst sessions; 5. our scratch paths (only under the workdir);
6. kernel modules we loaded, once nothing uses them.

Something already gone is crossed off the node state and reported under
``forgotten``, never an error.  In check mode nothing is changed, the node
state included, and ``removed`` says what would be removed.

Target-side code: standard library only, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil
import signal
import time

from ansible_collections.lustre.iokit.plugins.module_utils import lctl as lctl_utils
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import (
    STATE_FILE,
    NodeStateError,
    is_same_process,
    process_start_time,
)

REMOVED_KINDS = ('processes', 'echo_clients', 'lst_sessions', 'params', 'paths', 'modules')
_POLL_INTERVAL_S = 0.05
# osc and obdecho leftovers of the network case are set up under their echo client: remove them last.
_LEFTOVER_TYPE_ORDER = {'echo_client': 0, 'osc': 1, 'obdecho': 2}


def _signal(pid, signum, group):
    try:
        if group:
            os.killpg(pid, signum)
        else:
            os.kill(pid, signum)
    except OSError:
        pass


def _is_zombie(pid):
    try:
        with open('/proc/%d/stat' % pid) as handle:
            return handle.read().rsplit(')', 1)[1].split()[0] == 'Z'
    except (IOError, OSError, IndexError):
        return True


def _object_ranges(objects):
    """(first, count) ranges from an entry's ``objects``.

    The form the engines record is ``[[first_id, count], ...]`` (ranges as
    ``lctl create`` hands them out); single ids and ``{'first', 'count'}``
    dicts are read too.
    """
    ranges = []
    ids = []
    for item in objects or []:
        if isinstance(item, dict):
            if item.get('first') is not None:
                ranges.append((int(item['first']), int(item.get('count') or 1)))
        elif isinstance(item, (list, tuple)):
            if len(item) == 2:
                ranges.append((int(item[0]), int(item[1])))
        else:
            ids.append(int(item))
    for object_id in sorted(set(ids)):
        if ranges and ranges[-1][0] + ranges[-1][1] == object_id:
            ranges[-1] = (ranges[-1][0], ranges[-1][1] + 1)
        else:
            ranges.append((object_id, 1))
    return [(first, count) for first, count in ranges if first > 0 and count > 0]


def _is_under(path, directory):
    path = os.path.abspath(path)
    directory = os.path.abspath(directory)
    return path != directory and path.startswith(directory.rstrip(os.sep) + os.sep)


class Cleanup:
    """One cleanup pass.  ``run()`` returns the report (see the module's RETURN)."""

    def __init__(self, runner, node_state, run_id=None, include_iokit_leftovers=True, unload_modules=True,
                 check_mode=False, kill_grace_s=5.0, lst_path=None, lctl='lctl'):
        self.runner = runner
        self.node_state = node_state
        self.run_id = run_id
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

    def _entries(self, kind):
        return [entry for entry in self._state[kind] if self.run_id is None or entry.get('run_id') == self.run_id]

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

    def run(self):
        try:
            self._state = self.node_state.read()
        except NodeStateError as exc:
            # Without the record we cannot tell what is ours; leftovers by name are still safe to remove.
            self.errors.append({'kind': 'node_state', 'id': self.node_state.path, 'message': str(exc)})
            self._state = dict((kind, []) for kind in REMOVED_KINDS)
        self.stop_processes()
        handled = self.remove_recorded_echo_clients()
        if self.include_iokit_leftovers:
            self.remove_leftover_devices(handled)
        self.end_lst_sessions()
        self.restore_params()
        self.remove_paths()
        if self.unload_modules:
            self.unload_our_modules()
        return self.report()

    def report(self):
        changed = any(self.removed[kind] for kind in REMOVED_KINDS)
        return {'changed': changed, 'removed': self.removed, 'forgotten': self.forgotten, 'kept': self.kept,
                'errors': self.errors}

    # -- processes -----------------------------------------------------------------------

    def stop_processes(self):
        stopping = []
        for entry in self._entries('processes'):
            pid = int(entry['pid'])
            summary = {'pid': pid, 'command': entry.get('command'), 'run_id': entry.get('run_id')}
            if is_same_process(entry):
                # Runner children lead their own process group; stopping the group stops their workers too.
                group = _leader_of_own_group(pid)
                stopping.append((entry, summary, group))
            elif process_start_time(pid) is None and _live_group_members(pid):
                # The leader died (SIGKILL) but its workers live on in its group; a pid that still names a
                # process group cannot have been given to another process, so the group is ours.
                summary['orphaned_group'] = True
                stopping.append((entry, summary, True))
            elif process_start_time(pid) is None:
                self._forget('processes', pid, 'the process has exited')
            else:
                self._forget('processes', pid, 'pid %d now belongs to another process (start time differs)' % pid)
        if not stopping:
            return
        if self.check_mode:
            for unused_entry, summary, unused_group in stopping:
                self.removed['processes'].append(summary)
            return
        for entry, summary, group in stopping:
            _signal(int(entry['pid']), signal.SIGTERM, group)
        deadline = time.monotonic() + self.kill_grace_s
        while time.monotonic() < deadline and any(_still_running(entry, group) for entry, unused, group in stopping):
            time.sleep(_POLL_INTERVAL_S)
        for entry, summary, group in stopping:
            if _still_running(entry, group):
                _signal(int(entry['pid']), signal.SIGKILL, group)
                summary['signal'] = 'SIGKILL'
            else:
                summary['signal'] = 'SIGTERM'
        deadline = time.monotonic() + self.kill_grace_s
        while time.monotonic() < deadline and any(_still_running(entry, group) for entry, unused, group in stopping):
            time.sleep(_POLL_INTERVAL_S)
        for entry, summary, group in stopping:
            if _still_running(entry, group):
                self._error('processes', summary['pid'], 'process %d survived SIGKILL' % summary['pid'])
                continue
            self.removed['processes'].append(summary)
            self.node_state.forget('processes', entry['pid'])

    # -- echo clients ------------------------------------------------------------------------

    def remove_recorded_echo_clients(self):
        """Tear down the echo clients of the node state; returns the names handled."""
        handled = set()
        for entry in self._entries('echo_clients'):
            name = entry['name']
            handled.add(name)
            devices = self._device_list()
            if devices is None:
                self._keep('echo_clients', name, 'lctl dl failed; cannot tell whether it is still there')
                continue
            device = self.lctl.find(name, devices)
            if device is None:
                self._forget('echo_clients', name, 'no such device in lctl dl')
                continue
            summary = {'name': name, 'source': 'node_state', 'run_id': entry.get('run_id'),
                       'target': entry.get('target'), 'status': device['status'], 'objects_destroyed': []}
            if device['type'] != 'echo_client':
                self._keep('echo_clients', name, 'a %s device now has this name; it is not ours' % device['type'])
                continue
            if device['status'] == 'UP':
                summary['objects_destroyed'] = self._destroy_objects(name, entry.get('objects'))
            if self._teardown(name, device, summary):
                self.removed['echo_clients'].append(summary)
                if not self.check_mode:
                    self.node_state.forget('echo_clients', name)
        return handled

    def _destroy_objects(self, name, objects):
        destroyed = []
        for first, count in _object_ranges(objects):
            if self.check_mode:
                destroyed.extend(range(first, first + count))
                continue
            start, end = first, first + count
            while start < end:
                result = self.lctl.run(['--device', name, 'destroy', str(start), str(end - start)], check=False)
                ids = lctl_utils.parse_object_ids(result.stdout)
                destroyed.extend(ids)
                if result.rc == 0:
                    break
                # lctl stops at the first object it cannot destroy (one the survey already destroyed, say):
                # note it and go on with the next one.
                failed = start + len(ids)
                self._keep('objects', '%s:%d' % (name, failed),
                           result.stderr.strip() or 'destroy exit status %s' % result.rc)
                start = failed + 1
        return destroyed

    def _teardown(self, name, device, summary):
        if self.check_mode:
            summary['steps'] = ['cleanup', 'detach'] if device['status'] == 'UP' else ['detach']
            return True
        try:
            summary['steps'] = self.lctl.teardown(name)
        except lctl_utils.LctlError as exc:
            self._error('echo_clients', name, exc)
            return False
        finally:
            self._devices = None
        return bool(summary['steps'])

    def remove_leftover_devices(self, handled):
        others = set()
        if self.run_id is not None:
            # Another run's recorded echo client is in use by that run, not left over.
            others = set(entry['name'] for entry in self._state['echo_clients'] if entry.get('run_id') != self.run_id)
        leftovers = [device for device in self._device_list() or []
                     if lctl_utils.is_echo_leftover(device) and device['name'] not in handled | others]
        leftovers.sort(key=lambda device: (_LEFTOVER_TYPE_ORDER.get(device['type'], 9), device['index']))
        for device in leftovers:
            summary = {'name': device['name'], 'source': 'iokit_leftover', 'type': device['type'],
                       'status': device['status'], 'objects_destroyed': []}
            if self._teardown(device['name'], device, summary):
                self.removed['echo_clients'].append(summary)
        for name in sorted(others):
            if self.lctl.find(name, self._device_list() or []) is not None:
                self._keep('echo_clients', name, 'recorded by another run; clean it up with that run_id or none')

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
        if entry.get('survey') == 'mdtest' and entry.get('mount_point') and (
                _carries_marker(absolute, entry) or not os.path.lexists(absolute)):
            # mdtest's tree is removed from the Lustre mount only while its marker file names the recorded run
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
        for entry in self._entries('paths'):
            path = entry['path']
            absolute = os.path.abspath(path)
            if not self._removable_path(entry, absolute, protected):
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
                        shutil.rmtree(absolute)
                    else:
                        os.unlink(absolute)
                except OSError as exc:
                    if os.path.lexists(absolute):
                        self._error('paths', path, exc)
                        continue
                self.node_state.forget('paths', path)
            self.removed['paths'].append(summary)

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


def _leader_of_own_group(pid):
    try:
        return os.getpgid(pid) == pid and pid != os.getpgid(0)
    except OSError:
        return False


def _live_group_members(pgid):
    """Pids of the processes in group ``pgid`` that are not zombies (read from /proc)."""
    members = []
    for name in os.listdir('/proc'):
        if not name.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % name) as handle:
                fields = handle.read().rsplit(')', 1)[1].split()
        except (IOError, OSError, IndexError):
            continue
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != 'Z':
            members.append(int(name))
    return members


def _still_running(entry, group):
    pid = int(entry['pid'])
    if group:
        return bool(_live_group_members(pid))
    return is_same_process(entry) and not _is_zombie(pid)
