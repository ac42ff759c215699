# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What this collection started or loaded on a node, kept on the node.

A survey that is SIGKILLed (Ansible's async limit, a cancelled AWX job, a
lost controller) never runs its own cleanup, and the I/O kit's trap is no
help either.  So every survey writes down, *before* it acts, each thing it
must undo — a kernel module it loaded, an echo_client it attached, a helper
process it started, a scratch path, an lst session — and crosses it off once
undone.  Survey roles record here too, through ``iokit_cleanup`` with
``state=recorded`` (processes by command line, scratch paths, loop devices),
so that one file says everything; the role's old ``state.json`` is merged in
once (``adopt_legacy_role_state``).  The cleanup module reads this file and undoes exactly what is
listed, and nothing that was there before us.

The file is ``<workdir>/node-state.json``; every change is made under an
exclusive lock and written atomically, so concurrent surveys on one node
and a cleanup running beside them never lose an entry.

Target-side code: standard library only, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import errno
import fcntl
import json
import os
import tempfile
import time

SCHEMA = 'lustre.iokit/node-state/v1'
STATE_FILE = 'node-state.json'
# Each kind of thing we may leave behind, and the key that identifies one entry of it.
KINDS = {
    'modules': 'name',        # kernel modules we loaded (obdecho, sg, lnet_selftest)
    'echo_clients': 'name',   # echo_client devices we attached (with their target and objects)
    'processes': 'pid',       # helper processes we started (samplers, sgp_dd, lctl --threads)
    'paths': 'path',          # scratch files and directories we created
    'lst_sessions': 'name',   # LNet self-test sessions we opened
    'params': 'name',         # tunables we changed (with old_value), e.g. llite.*.max_cached_mb
    # Recorded by roles (iokit_cleanup state=recorded) before they start or create something:
    'commands': 'id',         # processes found by command name and arguments (a survey module, sgp_dd)
    'loop_devices': 'device',  # loop devices made for a test or the demo (with backing_file)
}
# Before node-state.json, roles/cleanup kept its own entries here; read once, then merged and removed.
LEGACY_ROLE_STATE_FILE = 'state.json'
LEGACY_ROLE_STATE_SCHEMA = 'lustre.iokit/cleanup-role-state/v1'


def command_id(name, args_any):
    """The identity of a ``commands`` entry: its command name (``*`` for any) and its arguments."""
    return '%s %s' % (name or '*', ' '.join(args_any))


def is_empty(state):
    """True when the state lists nothing to undo."""
    return not any(state.get(kind) for kind in KINDS)


class NodeStateError(Exception):
    """The state file exists but cannot be read as ours (names the file)."""


def _empty():
    state = {'schema': SCHEMA}
    for kind in KINDS:
        state[kind] = []
    return state


def _stat_fields(pid):
    """The fields of /proc/<pid>/stat after the command name (state first), or None if it is gone."""
    try:
        with open('/proc/%d/stat' % int(pid)) as handle:
            stat = handle.read()
    except (IOError, OSError, ValueError):
        return None
    # The command name (field 2) may contain spaces and parentheses; fields after its last ')' are fixed.
    return stat.rsplit(')', 1)[-1].split()


def _stat_int(pid, index):
    fields = _stat_fields(pid)
    try:
        return int(fields[index])
    except (TypeError, IndexError, ValueError):
        return None


def process_start_time(pid):
    """The kernel's start time of ``pid`` in clock ticks since boot, or None if it is gone.

    Stored with every process entry, so that a pid reused by an unrelated
    process after a reboot or a long pause is never taken for ours.
    """
    return _stat_int(pid, 19)


def parent_pid(pid):
    """The parent of ``pid`` (from /proc), or None if it is gone."""
    return _stat_int(pid, 1)


def has_exited(pid):
    """True when ``pid`` is gone or has exited and waits to be reaped (a zombie): nothing left to stop."""
    fields = _stat_fields(pid)
    return not fields or fields[0] in ('Z', 'X')


def command_line(pid):
    """The arguments of ``pid`` (from /proc), or [] if it is gone or a kernel thread."""
    try:
        with open('/proc/%d/cmdline' % int(pid), 'rb') as handle:
            return [arg.decode('utf-8', 'replace') for arg in handle.read().split(b'\0') if arg]
    except (IOError, OSError, ValueError):
        return []


def is_same_process(entry):
    """True when the process an entry describes is still running (same pid *and* start time)."""
    start = process_start_time(entry.get('pid'))
    return start is not None and start == entry.get('start_time')


class NodeState:
    """The node-state file under ``workdir``."""

    def __init__(self, workdir):
        self.workdir = workdir
        self.path = os.path.join(workdir, STATE_FILE)
        self.lock_path = self.path + '.lock'

    def read(self):
        """A snapshot of the state (empty when there is no file yet)."""
        try:
            with open(self.path) as handle:
                text = handle.read()
        except (IOError, OSError) as exc:
            if exc.errno == errno.ENOENT:
                return _empty()
            raise NodeStateError('cannot read %s: %s' % (self.path, exc))
        try:
            state = json.loads(text)
        except ValueError as exc:
            raise NodeStateError('%s is not valid JSON (%s); move it aside and run the cleanup by hand' % (self.path, exc))
        if not isinstance(state, dict) or state.get('schema') != SCHEMA:
            raise NodeStateError('%s is not a lustre.iokit node-state file (schema %r)'
                                 % (self.path, state.get('schema') if isinstance(state, dict) else None))
        for kind in KINDS:
            state.setdefault(kind, [])
        return state

    @contextlib.contextmanager
    def update(self):
        """Lock, yield the state for changing in place, then write it back atomically."""
        if not os.path.isdir(self.workdir):
            os.makedirs(self.workdir, 0o700)
        with open(self.lock_path, 'a') as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                state = self.read()
                yield state
                self._write(state)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _write(self, state):
        handle, temp = tempfile.mkstemp(prefix='.node-state.', dir=self.workdir)
        try:
            with os.fdopen(handle, 'w') as out:
                json.dump(state, out, indent=1, sort_keys=True)
                out.flush()
                os.fsync(out.fileno())
            os.rename(temp, self.path)
        except BaseException:
            if os.path.exists(temp):
                os.unlink(temp)
            raise

    def record(self, kind, run_id, **details):
        """Write down one thing to undo later, before doing it; returns the stored entry."""
        key = KINDS[kind]
        if key not in details:
            raise ValueError('a %s entry needs %r' % (kind, key))
        entry = dict(details)
        entry['run_id'] = run_id
        entry['recorded'] = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())
        if kind == 'processes' and 'start_time' not in entry:
            entry['start_time'] = process_start_time(entry['pid'])
        with self.update() as state:
            state[kind] = [e for e in state[kind] if e.get(key) != entry[key]] + [entry]
        return entry

    def forget(self, kind, identity):
        """Cross off an entry once it has been undone (or turned out not to exist)."""
        key = KINDS[kind]
        with self.update() as state:
            state[kind] = [e for e in state[kind] if e.get(key) != identity]

    def entries(self, kind, run_id=None):
        """Entries of one kind, optionally only those of one run."""
        return [e for e in self.read()[kind] if run_id is None or e.get('run_id') == run_id]

    def remove_if_empty(self):
        """Remove the state file (and its lock file) when it lists nothing; True when it is gone."""
        if not os.path.isdir(self.workdir):
            return True
        with open(self.lock_path, 'a') as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if not is_empty(self.read()):
                    return False
                for path in (self.path, self.lock_path):
                    try:
                        os.unlink(path)
                    except OSError as exc:
                        if exc.errno != errno.ENOENT:
                            raise
                return True
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def adopt_legacy_role_state(self):
        """Merge the entries of an old roles/cleanup ``state.json`` into this state, then remove that file.

        Returns the entries adopted.  A file that is not the old role's is left alone (NodeStateError).
        """
        legacy = os.path.join(self.workdir, LEGACY_ROLE_STATE_FILE)
        try:
            with open(legacy) as handle:
                old = json.load(handle)
        except (IOError, OSError) as exc:
            if exc.errno == errno.ENOENT:
                return []
            raise NodeStateError('cannot read %s: %s' % (legacy, exc))
        except ValueError as exc:
            raise NodeStateError('%s is not valid JSON (%s); it was left untouched' % (legacy, exc))
        if not isinstance(old, dict) or old.get('schema') != LEGACY_ROLE_STATE_SCHEMA:
            raise NodeStateError('%s is not a lustre.iokit cleanup role state file; it was left untouched' % legacy)
        adopted = []
        with self.update() as state:
            for entry in old.get('entries') or []:
                converted = _from_legacy_role_entry(entry)
                if converted is None:
                    continue
                kind, new = converted
                key = KINDS[kind]
                if not any(e.get(key) == new[key] for e in state[kind]):
                    state[kind].append(new)
                    adopted.append(dict(new, kind=kind))
        os.unlink(legacy)
        return adopted


def _from_legacy_role_entry(entry):
    """(kind, entry) of node-state.json for one entry of the old role state file, or None if unknown."""
    common = {'survey': entry.get('survey'), 'run_id': None,
              'recorded': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}
    kind = entry.get('kind')
    if kind == 'process' and entry.get('args_any'):
        return 'commands', dict(common, id=command_id(entry.get('name'), entry['args_any']), name=entry.get('name'),
                                args_any=list(entry['args_any']))
    if kind == 'module' and entry.get('name'):
        return 'modules', dict(common, name=entry['name'])
    if kind == 'loop' and entry.get('device') and entry.get('backing_file'):
        return 'loop_devices', dict(common, device=entry['device'], backing_file=entry['backing_file'])
    if kind == 'path' and entry.get('path'):
        return 'paths', dict(common, path=entry['path'], remove=entry.get('remove') or 'tree')
    return None
