# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one way the collection's tests wait: for a condition, with a deadline, never for a fixed time.

Import it as ``from ansible_collections.lustre.iokit.tests.unit.waiting import wait_for``: the unit tests reach it so
from the checkout and from ansible-test's staged copy, the playbook tests through .venv/collections (their conftest
passes it on). The simulator's tests are a project of their own and keep theirs (simulator/tests/conftest.py).
"""

from __future__ import annotations

import os
import time

# How often the condition is asked: often enough that a test goes on soon after it holds.
POLL_S = 0.05


def _ended(process):
    """What a process that ended says of itself: its program, its exit status and the end of its output."""
    args = getattr(process, 'args', None)
    program = os.path.basename(str(args[0] if isinstance(args, (list, tuple)) else args)) if args else 'the process'
    output = process.stdout.read() if getattr(process, 'stdout', None) is not None else ''
    if isinstance(output, bytes):
        output = output.decode('utf-8', 'replace')
    return '%s ended first (rc %s)%s' % (program, process.returncode, ':\n' + output[-6000:] if output else '')


def wait_for(what, condition, deadline_s=120.0, process=None):
    """``condition()``'s first true value, polled until ``deadline_s`` seconds have passed, else an AssertionError
    naming ``what`` and the deadline: a test waits for what it needs, so a loaded machine only makes it slower.

    With ``process`` (a ``subprocess.Popen``, best started with ``stdout=PIPE``), its ending before the condition
    holds fails at once, with its exit status and the end of its output.
    """
    deadline = time.monotonic() + deadline_s
    while True:
        value = condition()
        if value:
            return value
        if process is not None and process.poll() is not None:
            value = condition()  # it may have come true just before the process ended
            if value:
                return value
            raise AssertionError('%s: %s' % (what, _ended(process)))
        if time.monotonic() >= deadline:
            raise AssertionError('timed out after %d s waiting for %s' % (deadline_s, what))
        time.sleep(POLL_S)
