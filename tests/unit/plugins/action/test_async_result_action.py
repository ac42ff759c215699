# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The wait stops when the ansible-playbook that forked its worker is gone: a real fork, a real parent killed."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time

import pytest

from ansible_collections.lustre.iokit.plugins.action.async_result import controller_gone


class Parent:
    def __init__(self, pid):
        self.pid = pid


def test_a_worker_whose_parent_lives_goes_on():
    assert controller_gone(Parent(4242), getppid=lambda: 4242) is None


def test_a_reparented_worker_names_its_lost_controller():
    assert controller_gone(Parent(4242), getppid=lambda: 1) == 4242
    assert controller_gone(Parent(4242), getppid=lambda: 977) == 4242  # a subreaper took it


def test_outside_a_forked_worker_there_is_nothing_to_tell():
    assert controller_gone() is None


def _worker(report):
    # What the action sees in a worker: looks until its parent is gone, then says which pid it lost.
    os.write(report, b'ready\n')
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        gone = controller_gone()
        if gone is not None:
            os.write(report, str(gone).encode() + b'\n')
            return
        time.sleep(0.05)


def _controller(report):
    # Stands for ansible-playbook: forks a worker the way its strategy does, then is SIGKILLed.
    worker = multiprocessing.get_context('fork').Process(target=_worker, args=(report,))
    worker.start()
    while True:
        time.sleep(1)


@pytest.mark.skipif(not hasattr(os, 'fork'), reason='needs fork')
def test_a_real_worker_sees_its_controller_killed():
    read_end, write_end = os.pipe()
    controller = multiprocessing.get_context('fork').Process(target=_controller, args=(write_end,))
    controller.start()
    os.close(write_end)
    try:
        with os.fdopen(read_end, 'rb') as report:
            # Each read blocks until the worker writes (or exits, closing the pipe: an empty line fails the test).
            assert report.readline() == b'ready\n'
            os.kill(controller.pid, signal.SIGKILL)
            controller.join(30)
            line = report.readline()
    finally:
        if controller.is_alive():
            controller.kill()
    assert line.strip() == str(controller.pid).encode()


def test_the_hosts_workers_share_their_progress_and_one_line_is_printed_per_interval(tmp_path):
    from ansible_collections.lustre.iokit.plugins.action.async_result import share_progress
    directory = str(tmp_path / 'fleet')
    slow = {'survey': 'obdfilter', 'state': 'running', 'done': 1, 'total': 4, 'eta_s': 60}
    fast = {'survey': 'obdfilter', 'state': 'running', 'done': 3, 'total': 4, 'eta_s': 20}
    first = share_progress(directory, 'oss2', slow, every_s=10, now=1000.0)
    assert first.startswith('obdfilter: 1 host, 1/4 points (25 %), ETA ')
    # Within the interval another host's poll only leaves its progress for the next line.
    assert share_progress(directory, 'oss1', fast, every_s=10, now=1005.0) is None
    later = share_progress(directory, 'oss2', dict(slow, done=2), every_s=10, now=1010.0)
    assert later.startswith('obdfilter: 2 hosts, 5/8 points (62 %), slowest oss2 50 %, ETA ')
