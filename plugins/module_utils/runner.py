# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run external commands for the survey engines: the seam that tests replace.

Rules (docs/architecture.md section 4):

* a command is an argument list, never a shell string;
* every child runs with ``LANG=C LC_ALL=C`` so that tool output is parsed in
  one language, in a process group of its own, so that stopping it stops
  everything it started;
* a deadline (and a SIGTERM sent to the module) stops every running child:
  SIGTERM to its whole process group, a short grace, then SIGKILL;
* several children can run at once (``run_many``), which is how sgpdd starts
  one ``sgp_dd`` per region per device.

Output goes to unlinked temporary files rather than pipes, so that dozens of
concurrent children can never block on a full pipe while we wait for another.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import signal
import subprocess
import tempfile
import time

DEFAULT_GRACE_S = 5.0
_POLL_INTERVAL_S = 0.05
# Waiting for children polls from 1 ms, doubling up to this: a short probe (blkid, sg_readcap) is seen to
# end within a few ms instead of a whole poll interval, and a measured run's wall time (which the sgpdd and
# obdfilter aggregates divide by) overshoots its end by at most this much.
_WAIT_POLL_MIN_S = 0.001
_WAIT_POLL_MAX_S = 0.01


class CommandResult:
    """What one child did: ``rc`` (negative: killed by that signal; None: could not start),
    ``stdout``, ``stderr``, ``elapsed_s``, ``timed_out`` (stopped by the deadline or a stop request)."""

    def __init__(self, argv, rc, stdout, stderr, elapsed_s, timed_out=False):
        self.argv = list(argv)
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        self.elapsed_s = elapsed_s
        self.timed_out = timed_out

    def as_dict(self):
        return {'argv': list(self.argv), 'rc': self.rc, 'stdout': self.stdout, 'stderr': self.stderr,
                'elapsed_s': self.elapsed_s, 'timed_out': self.timed_out}

    def __repr__(self):
        return 'CommandResult(argv=%r, rc=%r, elapsed_s=%r, timed_out=%r)' % (
            self.argv, self.rc, self.elapsed_s, self.timed_out)


def child_environment(extra=None, base=None):
    """The environment of every child: ``base`` (default: ours) plus ``extra``, with ``LANG=C LC_ALL=C``."""
    env = dict(os.environ if base is None else base)
    env.update(extra or {})
    env['LANG'] = 'C'
    env['LC_ALL'] = 'C'
    return env


def _check_argv(argv):
    if isinstance(argv, (str, bytes)) or not argv:
        raise TypeError('a command must be a non-empty argument list, never a shell string: %r' % (argv,))
    for arg in argv:
        if not isinstance(arg, str):
            raise TypeError('every argument must be a string, got %r in %r' % (arg, argv))
    return list(argv)


class _Child:
    def __init__(self, argv, process, stdout_file, stderr_file, started):
        self.argv = argv
        self.process = process
        self.stdout_file = stdout_file
        self.stderr_file = stderr_file
        self.started = started
        self.finished = None
        self.timed_out = False


class Runner:
    """Starts commands, enforces one deadline for all of them, and stops them on request.

    ``deadline`` is a ``time.monotonic()`` value (None: no deadline); once it
    has passed, running children are stopped and new ones are not started
    (they come back with ``rc`` None and ``timed_out`` True).
    """

    def __init__(self, deadline=None, grace_s=DEFAULT_GRACE_S, env=None, clock=time.monotonic):
        self.deadline = deadline
        self.grace_s = grace_s
        self.env = dict(env or {})
        self.clock = clock
        self.stop_reason = None
        self._running = []

    # -- deadline and stop requests ------------------------------------------

    def remaining_s(self):
        """Seconds until the deadline (never negative), or None without one."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - self.clock())

    def expired(self):
        """True once the deadline has passed or a stop was requested."""
        if self.stop_reason is not None:
            return True
        if self.deadline is not None and self.clock() >= self.deadline:
            self.stop_reason = 'timeout'
            return True
        return False

    def request_stop(self, reason='stopped'):
        """Ask every running and future child to stop (safe to call from a signal handler)."""
        if self.stop_reason is None:
            self.stop_reason = reason

    def install_sigterm_handler(self):
        """On SIGTERM to this process, stop the children and let the caller return its partial result."""
        def handler(signum, frame):
            self.request_stop('terminated by signal %d' % signum)
        return signal.signal(signal.SIGTERM, handler)

    # -- running -----------------------------------------------------------------

    def run(self, argv, env=None, cwd=None):
        """Run one command and wait for it; returns a CommandResult."""
        return self.run_many([argv], env=env, cwd=cwd)[0]

    def run_to_file(self, argv, stdout_path, env=None, cwd=None):
        """Run one command with its standard output written to ``stdout_path`` as it comes, and kept there.

        What the command prints outlives this process: SIGKILLed while the command runs, we lose its output
        from a temporary file, not from this one (``lctl create`` prints the ids of the objects it creates).
        Returns a CommandResult as ``run`` does; the file is the caller's to remove.
        """
        return self.run_many([argv], env=env, cwd=cwd, stdout_paths=[stdout_path])[0]

    def run_many(self, argvs, env=None, cwd=None, stdout_paths=None):
        """Start every command at once, wait for all; one CommandResult per command, in order.

        ``stdout_paths`` (one path or None per command): where a command's standard output is written instead
        of a temporary file (see ``run_to_file``).
        """
        argvs = [_check_argv(argv) for argv in argvs]
        stdout_paths = list(stdout_paths or [])
        merged = dict(self.env)
        merged.update(env or {})
        child_env = child_environment(merged)
        children = []
        results = [None] * len(argvs)
        try:
            for index, argv in enumerate(argvs):
                if self.expired():
                    results[index] = CommandResult(argv, None, '', 'not started: %s' % self.stop_reason, 0.0, True)
                    continue
                child = self._start(argv, child_env, cwd,
                                    stdout_paths[index] if index < len(stdout_paths) else None)
                if isinstance(child, CommandResult):
                    results[index] = child
                else:
                    children.append((index, child))
            self._wait([child for unused_index, child in children])
        finally:
            # Whatever interrupted us, no child may outlive this call.
            self._stop([child for unused_index, child in children if child.process.poll() is None])
            for index, child in children:
                results[index] = self._collect(child)
        return results

    def on_start(self, pid, argv):
        """Called right after a child is started (before anything waits on it); override to track it."""

    def on_exit(self, pid):
        """Called once a child has been reaped and its output read."""

    def _start(self, argv, env, cwd, stdout_path=None):
        if stdout_path:
            try:
                stdout_file = open(stdout_path, 'w+b')
            except (IOError, OSError) as exc:
                return CommandResult(argv, None, '', 'cannot write the output of %s to %s: %s'
                                     % (argv[0], stdout_path, exc), 0.0)
        else:
            stdout_file = tempfile.TemporaryFile()
        stderr_file = tempfile.TemporaryFile()
        started = self.clock()
        try:
            # start_new_session: the child leads a new process group, so that
            # killpg reaches whatever it starts and not us.  AnsibleModule.run_command
            # cannot do this, nor run children concurrently under one deadline.
            process = subprocess.Popen(  # pylint: disable=ansible-bad-function
                argv, stdin=subprocess.DEVNULL, stdout=stdout_file, stderr=stderr_file,
                env=env, cwd=cwd, close_fds=True, start_new_session=True)
        except OSError as exc:
            stdout_file.close()
            stderr_file.close()
            return CommandResult(argv, None, '', 'cannot run %s: %s' % (argv[0], exc), 0.0)
        child = _Child(argv, process, stdout_file, stderr_file, started)
        self._running.append(child)
        self.on_start(process.pid, argv)
        return child

    def _wait(self, children):
        pending = list(children)
        delay = _WAIT_POLL_MIN_S
        while pending:
            for child in list(pending):
                if child.process.poll() is not None:
                    child.finished = self.clock()
                    pending.remove(child)
            if not pending:
                break
            if self.expired():
                for child in pending:
                    child.timed_out = True
                self._stop(pending)
                break
            time.sleep(delay)
            delay = min(delay * 2, _WAIT_POLL_MAX_S)

    def _stop(self, children):
        """SIGTERM each child's process group, wait up to the grace, then SIGKILL what is left."""
        alive = [child for child in children if child.process.poll() is None]
        for child in alive:
            _signal_group(child.process.pid, signal.SIGTERM)
        grace_end = self.clock() + self.grace_s
        while alive and self.clock() < grace_end:
            alive = [child for child in alive if child.process.poll() is None]
            if alive:
                time.sleep(_POLL_INTERVAL_S)
        for child in alive:
            # Only leaders not yet reaped: a reaped leader's id may already belong to someone else.
            _signal_group(child.process.pid, signal.SIGKILL)
        for child in children:
            child.process.wait()
            if child.finished is None:
                child.finished = self.clock()

    def _collect(self, child):
        if child in self._running:
            self._running.remove(child)
        if child.finished is None:
            child.finished = self.clock()
        stdout = _read_and_close(child.stdout_file)
        stderr = _read_and_close(child.stderr_file)
        self.on_exit(child.process.pid)
        return CommandResult(child.argv, child.process.returncode, stdout, stderr,
                             round(child.finished - child.started, 6), child.timed_out)


class ProcessRecordingRunner(Runner):
    """A Runner that writes every child it starts into the node state and crosses it off once reaped.

    A pid cannot be known before the process exists, so the entry is written
    right after the fork, before anything waits on the child; the cleanup
    module stops the child's whole process group (``lctl --threads`` forks
    one worker per thread into it), so a SIGKILLed survey leaves nothing running.
    """

    def __init__(self, node_state, run_id, **kwargs):
        super(ProcessRecordingRunner, self).__init__(**kwargs)
        self.node_state = node_state
        self.run_id = run_id

    def on_start(self, pid, argv):
        self.node_state.record('processes', self.run_id, pid=pid, command=list(argv), group=True)

    def on_exit(self, pid):
        self.node_state.forget('processes', pid)


def _signal_group(pid, signum):
    try:
        os.killpg(pid, signum)
    except OSError:
        # ESRCH: the group is gone; EPERM cannot happen for our own children.
        pass


def _read_and_close(handle):
    try:
        handle.seek(0)
        return handle.read().decode('utf-8', 'replace')
    finally:
        handle.close()
