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
so that one file says everything.  The cleanup module reads this file and undoes exactly what is
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
import hashlib
import json
import os
import stat
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
    'slurm_jobs': 'name',     # Slurm jobs (salloc, sbatch) a client survey submitted, by their unique job name
    'params': 'name',         # tunables we changed (with old_value), e.g. llite.*.max_cached_mb
    # Recorded by roles (iokit_cleanup state=recorded) before they start or create something:
    'commands': 'id',         # processes found by command name and arguments (a survey module, sgp_dd)
    'loop_devices': 'device',  # loop devices made for a test or the demo (with backing_file)
}


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
    """The node-state file under ``workdir``.

    ``launch`` (one start of a survey module) is written into every entry recorded through this object, so that
    the cleanup of one launch never undoes what another launch of the same run id made.
    """

    def __init__(self, workdir, launch=None):
        self.workdir = workdir
        self.launch = launch
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
        if self.launch is not None:
            entry.setdefault('launch', self.launch)
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

    def adopt(self, run_id, launch):
        """Make the entries of ``run_id`` recorded by an earlier ``launch`` this launch's; returns how many.

        A relaunch that waited for its own run's survey and took its result takes over what that launch recorded
        (its async watchdog, which outlives the module by a poll), so that the relaunch's own cleanup, which
        undoes only its launch's records, undoes them too."""
        if self.launch is None or not launch or launch == self.launch:
            return 0
        adopted = 0
        with self.update() as state:
            for kind in KINDS:
                for entry in state[kind]:
                    if entry.get('run_id') == run_id and entry.get('launch') == launch:
                        entry['launch'] = self.launch
                        adopted += 1
        return adopted

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


# -- one survey of a kind per node -------------------------------------------------------------------------------

# Where the survey locks lived before they became node-wide: a cleanup still removes free ones found there.
LOCK_DIR = 'locks'
# The node's own place for them (docs/architecture.md section 7): every run on the node finds it, whatever its
# iokit_workdir, and a reboot, which ends every holder, empties it (/run is a tmpfs).
NODE_LOCK_DIR = '/run/lustre-iokit/locks'
RUN_TAG_LENGTH = 6


def run_tag(run_id):
    """A short tag of ``run_id`` for the names of what a run makes on a node (echo clients, MDT test directories).

    Six hex digits of a hash: the run id itself may be 64 characters, and an echo client's UUID (its name plus
    ``_UUID``) must stay below Lustre's 40-byte limit.  Two runs of one survey never share a node at once (the
    survey lock), so a shared tag could only meet a dead run's leftovers, which are removed before starting.
    """
    return hashlib.sha1((run_id or '').encode('utf-8')).hexdigest()[:RUN_TAG_LENGTH]


def node_lock_dir():
    """The directory of this node's survey locks, the same for every run on the node whatever its workdir.

    A simulated node (``LUSTRE_SIM_ROOT`` in the environment, as the simulator's shims and the tests set it) has its
    own ``/run`` under its root, so that several simulated nodes on one machine never share a lock while two
    workdirs of one node do.  Without root, ``/run`` is not writable: the user's runtime directory, else a private
    directory under the temporary directory, takes its place (the surveys that lock need root anyway).
    """
    sim_root = os.environ.get('LUSTRE_SIM_ROOT')
    if sim_root:
        return os.path.join(sim_root, NODE_LOCK_DIR.lstrip('/'))
    if os.geteuid() == 0:
        return NODE_LOCK_DIR
    runtime = '/run/user/%d' % os.geteuid()
    if _owned_directory(runtime):
        return os.path.join(runtime, 'lustre-iokit', 'locks')
    return os.path.join(tempfile.gettempdir(), 'lustre-iokit-locks-%d' % os.geteuid())


def _owned_directory(path):
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid()


def _make_lock_dir(directory):
    """Create ``directory`` (0700) if needed; refuse one that is a symbolic link or someone else's.

    In a shared temporary directory another user could otherwise plant the directory and hold or read our locks.
    """
    try:
        os.makedirs(directory, 0o700)
    except OSError as exc:
        if exc.errno != errno.EEXIST:
            raise
    if not _owned_directory(directory):
        raise OSError(errno.EPERM, 'not a directory of user %d (a symbolic link, or made by someone else)'
                      % os.geteuid(), directory)


class SurveyLockHeld(Exception):
    """Another live run holds the lock; ``holder`` is its record (run_id, host, pid, started, launch)."""

    def __init__(self, name, holder):
        self.name = name
        self.holder = holder or {}
        super(SurveyLockHeld, self).__init__(describe_holder(name, self.holder))


def describe_holder(name, holder):
    """One sentence naming the run that holds the lock ``name``: run id, host, pid and start time."""
    if not holder.get('run_id'):
        return ('another %s survey is starting on this node (its lock %s is held, its record not written yet)'
                % (name, name))
    return ('another %s survey runs on this node: run %s on host %s, pid %s, started %s'
            % (name, holder.get('run_id'), holder.get('host'), holder.get('pid'), holder.get('started')))


class SurveyLock:
    """``<directory>/<name>.lock``: an fcntl lock held by one survey module for its whole life, and its record.

    ``directory`` is the node's (node_lock_dir()) unless a caller gives another; the record names the holder's
    workdir, whose node state lists what a killed holder left.

    The kernel drops the lock when the holder dies, however it dies (SIGKILL included), so a lock that cannot be
    taken is held by a live process; the record in the file (run id, launch, host, pid, start times) says whose.
    A record found under a free lock is a dead holder's: ``acquire`` returns it for its leftovers to be removed.
    """

    def __init__(self, directory, name):
        self.name = name
        self.path = os.path.join(directory if directory is not None else node_lock_dir(), '%s.lock' % name)
        self._fd = None

    def _open(self):
        _make_lock_dir(os.path.dirname(self.path))
        return os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, 'O_NOFOLLOW', 0), 0o600)

    def acquire(self, record):
        """Take the lock for ``record`` (run_id, launch, host...) or raise SurveyLockHeld naming the live holder.

        Returns the dead holder's record found in the file (None when it was empty): its run was killed
        without releasing, and what it left is the caller's to remove.
        """
        while True:
            fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except (IOError, OSError) as exc:
                os.close(fd)
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise
                raise SurveyLockHeld(self.name, self.read())
            if _is_current(fd, self.path):
                break
            # remove_free_locks unlinked this file between our open and our lock: take the new one
            os.close(fd)
        previous = _read_lock_record(fd)
        own = dict(record)
        own.setdefault('pid', os.getpid())
        own['start_time'] = process_start_time(own['pid'])
        own.setdefault('started', time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()))
        own['survey'] = self.name
        _write_lock_record(fd, own)
        self._fd = fd
        return previous

    def acquire_when_free(self, record, keep_waiting, poll_s=0.5):
        """``acquire``, waiting while a live holder has it and ``keep_waiting(holder record)`` says so.

        Polls rather than blocks in flock: a blocking flock resumes after the module's SIGTERM handler returns, and
        a stop request must end the wait.  Raises the last SurveyLockHeld once ``keep_waiting`` is False.
        """
        while True:
            try:
                return self.acquire(record)
            except SurveyLockHeld as exc:
                if not keep_waiting(exc.holder):
                    raise
            time.sleep(poll_s)

    def release(self):
        """Empty the record and let the lock go (a clean exit: nothing is left for the next run to remove)."""
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, 0)
        finally:
            os.close(self._fd)  # closing the last descriptor drops the flock
            self._fd = None

    @property
    def held(self):
        return self._fd is not None

    def read(self):
        """The record in the lock file, whoever holds it (None when empty or absent)."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return None
        try:
            return _read_lock_record(fd)
        finally:
            os.close(fd)

    def holder(self):
        """The record of the live process holding this lock, or None when nobody holds it."""
        if self._fd is not None:
            return self.read()
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except (IOError, OSError):
                return _read_lock_record(fd) or {}
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        finally:
            os.close(fd)


def _is_current(fd, path):
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except OSError:
        return False


def remove_free_locks(workdir):
    """Remove the lock files nobody holds whose record is this workdir's (or empty), then the old ``<workdir>/locks``
    directory if empty: for a cleanup that found nothing left to undo under ``workdir`` (a killed holder's record
    then names nothing), so that a workdir the collection made can go.

    The record of a killed run of another workdir stays: the next survey there removes what that run left.
    A survey that opened a lock file just before it is unlinked sees that under its lock and opens the new one
    (SurveyLock.acquire).
    """
    workdir = os.path.abspath(workdir)
    for directory, own_only in ((node_lock_dir(), True), (os.path.join(workdir, LOCK_DIR), False)):
        _remove_free_locks_in(directory, workdir if own_only else None)
    try:
        os.rmdir(os.path.join(workdir, LOCK_DIR))
    except OSError:
        pass


def _remove_free_locks_in(directory, workdir):
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for filename in names:
        path = os.path.join(directory, filename)
        try:
            fd = os.open(path, os.O_RDWR | getattr(os, 'O_NOFOLLOW', 0))
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            record = _read_lock_record(fd)
            if workdir is not None and record and record.get('workdir') not in (None, workdir):
                continue
            if _is_current(fd, path):
                os.unlink(path)
        except (IOError, OSError):
            pass
        finally:
            os.close(fd)


def live_runs(directory=None):
    """{lock name: holder record} of every survey lock in ``directory`` (the node's) held by a live process."""
    directory = node_lock_dir() if directory is None else directory
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return {}
    held = {}
    for filename in names:
        if not filename.endswith('.lock'):
            continue
        holder = SurveyLock(directory, filename[:-len('.lock')]).holder()
        if holder is not None:
            held[filename[:-len('.lock')]] = holder
    return held


def _read_lock_record(fd):
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    text = b''.join(chunks).decode('utf-8', 'replace').strip()
    if not text:
        return None
    try:
        record = json.loads(text)
    except ValueError:
        return {'unreadable': text[:200]}
    return record if isinstance(record, dict) else {'unreadable': text[:200]}


def _write_lock_record(fd, record):
    data = json.dumps(record, sort_keys=True).encode('utf-8')
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, data)
    os.fsync(fd)
