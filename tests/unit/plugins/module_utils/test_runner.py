# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The runner with real child processes: environment, concurrency, deadline, process-group kill."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import signal
import sys
import time

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState
from ansible_collections.lustre.iokit.plugins.module_utils.runner import ProcessRecordingRunner, Runner, child_environment
from ansible_collections.lustre.iokit.tests.unit.waiting import wait_for

PY = sys.executable


def process_state(pid):
    """The state letter of ``pid`` from /proc (``Z`` for a zombie nobody reaped yet), None when it is gone."""
    try:
        with open('/proc/%d/stat' % pid) as handle:
            return handle.read().rsplit(')', 1)[1].split()[0]
    except (IOError, OSError):
        return None


def test_argument_list_and_c_locale():
    result = Runner(env={'EXTRA': 'a b;c'}).run(
        [PY, '-c', 'import os, sys; print(os.environ["LANG"], os.environ["LC_ALL"], os.environ["EXTRA"], sys.argv[1])',
         '$(echo not a shell)'])
    assert (result.rc, result.timed_out) == (0, False)
    assert result.stdout == 'C C a b;c $(echo not a shell)\n'


def test_shell_strings_are_refused():
    with pytest.raises(TypeError, match='argument list'):
        Runner().run('echo hi')


def test_child_environment_overrides_locale():
    env = child_environment({'LANG': 'de_DE.UTF-8', 'X': '1'}, base={'LC_ALL': 'fr_FR'})
    assert env == {'LANG': 'C', 'LC_ALL': 'C', 'X': '1'}


def test_stdout_stderr_rc_and_missing_program():
    runner = Runner()
    result = runner.run([PY, '-c', 'import sys; sys.stderr.write("oops\\n"); sys.exit(3)'])
    assert (result.rc, result.stderr, result.stdout) == (3, 'oops\n', '')
    missing = runner.run(['/nonexistent/tool', 'x'])
    assert missing.rc is None and 'cannot run /nonexistent/tool' in missing.stderr


def test_run_to_file_keeps_the_output_in_the_file_it_names(tmp_path):
    path = tmp_path / 'out'
    result = Runner().run_to_file([sys.executable, '-c', 'print("created")'], str(path))
    assert (result.rc, result.stdout) == (0, 'created\n')
    assert path.read_text() == 'created\n'
    refused = Runner().run_to_file([sys.executable, '-c', 'print(1)'], str(tmp_path / 'missing' / 'out'))
    assert refused.rc is None and 'cannot write the output of' in refused.stderr


def test_children_run_concurrently_in_their_own_process_groups(tmp_path):
    # A barrier proves concurrency without a clock: each child announces itself, then waits until all four
    # have, which children run one after another never see (the first gives up after its deadline).
    barrier = ('import os, sys, time\n'
               'open(os.path.join(sys.argv[1], str(os.getpid())), "w").close()\n'
               'deadline = time.monotonic() + 60\n'
               'while len(os.listdir(sys.argv[1])) < 4 and time.monotonic() < deadline:\n'
               '    time.sleep(0.01)\n'
               'print(len(os.listdir(sys.argv[1])) == 4, os.getpgid(0) == os.getpid())\n')
    runner = Runner()
    results = runner.run_many([[PY, '-c', barrier, str(tmp_path)]] * 4)
    assert [r.stdout for r in results] == ['True True\n'] * 4


def test_deadline_kills_whole_process_group_and_reports_timeout(tmp_path):
    pidfile = tmp_path / 'grandchild.pid'
    # the child starts a grandchild in its group and ignores SIGTERM itself: both must die
    script = ('import os, signal, subprocess, sys, time\n'
              'signal.signal(signal.SIGTERM, signal.SIG_IGN)\n'
              'p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])\n'
              'open(sys.argv[1], "w").write(str(p.pid))\n'
              'time.sleep(60)\n')
    runner = Runner(deadline=time.monotonic() + 1.0, grace_s=0.5)
    fast, slow = runner.run_many([[PY, '-c', 'print("done")'], [PY, '-c', script, str(pidfile)]])
    assert (fast.rc, fast.timed_out, fast.stdout) == (0, False, 'done\n')
    # Killed at the deadline (it would sleep 60 s and ignores SIGTERM): SIGKILL, and timed_out says why.
    assert slow.timed_out and slow.rc == -signal.SIGKILL
    grandchild = int(pidfile.read_text())
    # SIGKILL went to the whole group; the grandchild is gone (or a zombie) once the kernel has delivered it.
    wait_for('the grandchild %d to be gone' % grandchild, lambda: process_state(grandchild) in (None, 'Z'), 30)
    assert runner.expired() and runner.stop_reason == 'timeout'
    late = runner.run([PY, '-c', 'print(1)'])
    assert late.rc is None and late.timed_out


def test_stop_request_terminates_running_children():
    runner = Runner(grace_s=2.0)
    handler_before = signal.getsignal(signal.SIGTERM)
    try:
        runner.install_sigterm_handler()
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        previous_alarm = signal.signal(signal.SIGALRM, lambda *args: os.kill(os.getpid(), signal.SIGTERM))
        try:
            (result,) = runner.run_many([[PY, '-c', 'import time; time.sleep(30)']])
        finally:
            signal.signal(signal.SIGALRM, previous_alarm)
    finally:
        signal.signal(signal.SIGTERM, handler_before)
    assert result.timed_out and result.rc == -signal.SIGTERM
    assert runner.stop_reason == 'terminated by signal %d' % signal.SIGTERM


def test_remaining_without_and_with_deadline():
    assert Runner().remaining_s() is None
    clock = [10.0]
    runner = Runner(deadline=12.0, clock=lambda: clock[0])
    assert runner.remaining_s() == 2.0
    clock[0] = 13.0
    assert runner.remaining_s() == 0.0 and runner.expired()


def test_process_recording_runner_records_children_while_they_run(tmp_path):
    state = NodeState(str(tmp_path))
    runner = ProcessRecordingRunner(state, 'run-1')
    # The runner records the child once it has started (it needs the pid), so the child may look before the record
    # is written: it reads the state until it finds itself there (a deadline, not a bet on which process is first).
    script = '\n'.join([
        'import json, os, time',
        'deadline = time.monotonic() + 60',
        'while True:',
        '    try:',
        '        processes = json.load(open(%r))["processes"]' % state.path,
        '    except (OSError, ValueError, KeyError):',
        '        processes = []',
        '    if any(entry.get("pid") == os.getpid() for entry in processes) or time.monotonic() > deadline:',
        '        break',
        '    time.sleep(0.02)',
        'print(json.dumps([os.getpid(), processes]))',
    ])
    result = runner.run([sys.executable, '-c', script])
    pid, processes = json.loads(result.stdout)
    assert [(entry['pid'], entry['run_id'], entry['command'][0]) for entry in processes] == [
        (pid, 'run-1', sys.executable)]
    assert state.read()['processes'] == []
