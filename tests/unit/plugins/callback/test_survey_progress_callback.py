# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The survey_progress callback fed poll results: a fleet line per poll, hosts that skip the wait not waited for."""

from __future__ import annotations

from ansible.inventory.host import Host
from ansible.playbook.task import Task
from ansible.plugins.loader import callback_loader


class PollResult:
    """What a callback reads of a task result (the attributes of ansible-core 2.16's and 2.21's)."""

    def __init__(self, host, task, values):
        self.host = self._host = host
        self.task = self._task = task
        self.result = self._result = values
        self.task_name = task.name


def polled(host, task, done, state='running'):
    progress = {'survey': 'lnet', 'state': state, 'done': done, 'total': 4, 'eta_s': 60.0, 'elapsed_s': 10.0,
                'current': {'mode': 'read_1m'}, 'last': {'figure': 'read 800.0 MiB/s'}}
    return PollResult(host, task, {'finished': state != 'running', 'progress': progress, 'changed': False})


def fleet_lines(capsys):
    return [line for line in capsys.readouterr().out.splitlines() if line.startswith('lnet: ')]


def test_hosts_that_skip_the_wait_are_not_waited_for(capsys):
    """lnet waits on its console host only: each poll of that host is the fleet's, and its end is shown."""
    hosts = [Host(name) for name in ('console', 'oss1', 'client1')]
    task = Task()
    task.name = 'Wait for the survey'
    callback = callback_loader.get('lustre.iokit.survey_progress')
    callback.set_options()
    callback._play_hosts = set(host.get_name() for host in hosts)
    for host in hosts[1:]:
        callback.v2_runner_on_skipped(PollResult(host, task, {'skipped': True, 'changed': False}))
    callback.v2_runner_retry(polled(hosts[0], task, 1))
    # the line of each poll at once, not one poll late
    assert [line.split(', ETA ')[0] for line in fleet_lines(capsys)] == ['lnet: 1 host, 1/4 points (25 %)']
    callback.v2_runner_retry(polled(hosts[0], task, 2))
    assert [line.split(', ETA ')[0] for line in fleet_lines(capsys)] == ['lnet: 1 host, 2/4 points (50 %)']
    callback.v2_runner_on_ok(polled(hosts[0], task, 4, state='ok'))
    assert fleet_lines(capsys) == ['lnet: 1 host, 4/4 points (100 %), done']
