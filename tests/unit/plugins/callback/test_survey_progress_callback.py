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


def started(host, task):
    """The start task's result under ``async`` with ``poll: 0``."""
    return PollResult(host, task, {'ansible_job_id': 'j1.%s' % host.get_name(), 'started': 1, 'finished': 0,
                                   'results_file': '/root/.ansible_async/j1', 'changed': True})


def test_with_fewer_forks_than_hosts_the_line_counts_the_hosts_not_polled_yet(capsys, monkeypatch):
    """forks 2, 4 hosts: two waits hold the forks, the other two surveys run unpolled and are still counted."""
    from ansible import context
    from ansible.module_utils.common.collections import ImmutableDict
    monkeypatch.setattr(context, 'CLIARGS', ImmutableDict(forks=2))
    hosts = [Host('oss%d' % index) for index in range(1, 5)]
    start = Task()
    start.name = 'Start the survey on every host at once'
    start.action = 'lustre.iokit.survey_start'
    wait = Task()
    wait.name = 'Wait for the survey'
    callback = callback_loader.get('lustre.iokit.survey_progress')
    callback.set_options()
    callback._play_hosts = set(host.get_name() for host in hosts)
    for host in hosts:
        callback.v2_runner_on_ok(started(host, start))
    capsys.readouterr()
    # the first round: the two hosts holding a fork report; the line comes at once and counts all four
    callback.v2_runner_retry(polled(hosts[0], wait, 1))
    assert fleet_lines(capsys) == []
    callback.v2_runner_retry(polled(hosts[1], wait, 2))
    assert [line.split(', ETA ')[0] for line in fleet_lines(capsys)] == [
        'lnet: 4 hosts, 2 started not polled yet, 3/8 points (37 %), slowest oss1 25 %']
    # oss1 ends; oss3's wait takes its fork, and the round of oss2 and oss3 counts oss4 alone as not polled
    callback.v2_runner_on_ok(polled(hosts[0], wait, 4, state='ok'))
    assert fleet_lines(capsys) == []
    callback.v2_runner_retry(polled(hosts[2], wait, 3))
    callback.v2_runner_retry(polled(hosts[1], wait, 3))
    assert [line.split(', ETA ')[0] for line in fleet_lines(capsys)] == [
        'lnet: 4 hosts, 1 started not polled yet, 10/12 points (83 %), slowest oss2 75 %']
    for host in hosts[1:]:
        callback.v2_runner_on_ok(polled(host, wait, 4, state='ok'))
    assert fleet_lines(capsys) == ['lnet: 4 hosts, 16/16 points (100 %), done']


def test_without_v_a_table_shows_the_slowest_hosts_only(capsys):
    """The rows of a large fleet: the slowest few and a count of the others, so a poll's output does not grow."""
    hosts = [Host('oss%02d' % index) for index in range(1, 9)]
    wait = Task()
    wait.name = 'Wait for the survey'
    callback = callback_loader.get('lustre.iokit.survey_progress')
    callback.set_options()
    callback._play_hosts = set(host.get_name() for host in hosts)
    for index, host in enumerate(hosts):
        callback.v2_runner_retry(polled(host, wait, 1 if index == 5 else 2))
    out = capsys.readouterr().out.splitlines()
    rows = [line for line in out if line.startswith('  ')]
    assert len(rows) == 6, out
    assert rows[0].startswith('  oss06: 1/4 points'), out
    assert rows[-1] == '  ... 3 more hosts (-v shows every host)', out
