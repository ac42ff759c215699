# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: survey_progress
type: stdout
author:
  - lustre.iokit contributors (@lustre)
version_added: 1.0.0
short_description: The default output, with one fleet progress line per poll of a running survey
description:
  - Prints what C(ansible.builtin.default) prints, except the C(FAILED - RETRYING) line of every host on every poll
    of a survey wait (a task whose result carries C(progress), as M(lustre.iokit.async_result) returns it with its
    C(progress_file) option).
  - "Instead, once every host still running has reported in a poll, one line for the fleet, for example
    C(obdfilter: 16 hosts, 212/400 points (53 %\\), slowest oss7 31 %, ETA 14:32 (41 min\\)).
    The ETA is the controller's local clock time when the last host should end, from each host's measured rate."
  - "With fewer forks than hosts, a host's wait holds a fork until its survey ends, so the waits of the hosts past
    the fork count begin only as forks free up, while their surveys, started with C(poll: 0) on every host, already
    run. The line counts those hosts too, as started not polled yet, from the results of the start task (for example
    C(obdfilter: 128 hosts, 108 started not polled yet, 60/80 points (75 %\\), ETA 14:32 (2 min\\))), and is printed
    once as many hosts as there are forks (or hosts left, if fewer) have reported in a poll."
  - Every O(rows_interval_s) seconds the rows of the O(rows_limit) slowest hosts follow, slowest first, and with
    C(-v) a row for every host on every poll. The limit keeps the default output of a long survey on a large fleet
    bounded per poll, not growing with the hosts (a container log, such as an AWX job's, is cut at 10 MiB).
  - Retries of other tasks are shown as the default callback shows them.
  - Where the stdout callback cannot be chosen (AWX), the survey roles' summary task prints the same fleet line.
  - Also imports the collection's controller code once as ansible-playbook starts, so that the worker it forks for
    every host and task does not compile that code again.
extends_documentation_fragment:
  - default_callback
  - result_format_callback
requirements:
  - set as the stdout callback in the configuration (C(stdout_callback = lustre.iokit.survey_progress))
options:
  rows_interval_s:
    description: Seconds between two tables of per-host rows (without C(-v)); 0 prints them on every poll.
    type: int
    default: 300
    ini:
      - section: lustre_iokit_survey_progress
        key: rows_interval_s
    env:
      - name: IOKIT_PROGRESS_ROWS_INTERVAL_S
  rows_limit:
    description: Rows per table without C(-v) (the slowest hosts); with C(-v) every host has a row. 0 shows every host.
    type: int
    default: 5
    ini:
      - section: lustre_iokit_survey_progress
        key: rows_limit
    env:
      - name: IOKIT_PROGRESS_ROWS_LIMIT
'''

import time

from ansible import context
from ansible.errors import AnsibleError
from ansible.plugins.callback.default import CallbackModule as DefaultCallbackModule

from ansible_collections.lustre.iokit.plugins.plugin_utils.fleet_progress import (
    fleet_line,
    host_rows,
    progress_of,
    survey_of,
)
from ansible_collections.lustre.iokit.plugins.plugin_utils.preload import preload_controller_code


def _parts(result):
    """Host name, task and result dict of a callback result, on ansible-core 2.16 to 2.21."""
    host = getattr(result, 'host', None) or result._host
    task = getattr(result, 'task', None) or result._task
    values = getattr(result, 'result', None)
    if values is None:
        values = result._result
    return host.get_name(), task, values


class CallbackModule(DefaultCallbackModule):

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'stdout'
    CALLBACK_NAME = 'lustre.iokit.survey_progress'

    def __init__(self, *args, **kwargs):
        super(CallbackModule, self).__init__(*args, **kwargs)
        self._fleet_task = None
        self._fleet = {}
        self._reported = set()
        self._ended = set()
        self._play_hosts = None
        self._rows_shown = None
        # The hosts the latest task with a skip skipped (lnet waits on its console host only): not waited for.
        self._skipped = (None, set())
        # The hosts whose survey the latest start task of the play started (survey_start under async, poll 0).
        self._started = (None, set())
        preload_controller_code()

    def v2_playbook_on_play_start(self, play):
        super(CallbackModule, self).v2_playbook_on_play_start(play)
        try:
            inventory = play.get_variable_manager()._inventory
            self._play_hosts = set(host.get_name() for host in inventory.get_hosts(play.hosts))
        except (AttributeError, TypeError, AnsibleError):
            # the host list only times the line; without it, a host reporting twice does
            self._play_hosts = None

    def _track(self, task):
        if self._fleet_task != task._uuid:
            self._fleet_task = task._uuid
            self._fleet = {}
            self._reported = set()
            self._ended = set()

    def _unpolled(self):
        """The hosts whose survey started but whose wait has not reported yet (no fork for it so far)."""
        return len(self._started[1] - set(self._fleet) - self._ended)

    def _expected(self, task):
        """How many hosts a poll round hears from: every host still waiting, at most one per fork."""
        waiting = (self._play_hosts or set(self._fleet)) - self._ended - self._skipped_by(task)
        if self._started[0] is not None:
            # only the hosts whose survey started wait (a failed start ends the host's play)
            waiting = waiting & (self._started[1] | set(self._fleet))
        forks = context.CLIARGS.get('forks') if context.CLIARGS else None
        if isinstance(forks, int) and forks > 0:
            return min(forks, len(waiting))
        return len(waiting)

    def _show(self, now=None):
        now = time.time() if now is None else now
        survey = survey_of(self._fleet)
        self._display.display(fleet_line(survey, self._fleet, now=now, unpolled=self._unpolled()))
        interval = self.get_option('rows_interval_s')
        if self._display.verbosity >= 1 or self._rows_shown is None or now - self._rows_shown >= interval:
            self._rows_shown = now
            rows = host_rows(self._fleet)
            limit = self.get_option('rows_limit')
            if self._display.verbosity < 1 and limit and len(rows) > limit:
                rows = rows[:limit] + ['  ... %d more hosts (-v shows every host)' % (len(rows) - limit)]
            for row in rows:
                self._display.display(row)
        self._reported = set()

    def v2_runner_retry(self, result):
        host, task, values = _parts(result)
        if 'progress' not in values:
            return super(CallbackModule, self).v2_runner_retry(result)
        self._track(task)
        if host in self._reported:
            # a new poll began before every host was heard: say what the last one knew
            self._show()
        self._fleet[host] = progress_of(values)
        self._reported.add(host)
        expected = self._expected(task)
        if expected and len(self._reported) >= expected:
            self._show()
        return None

    def _ended_host(self, result):
        host, task, values = _parts(result)
        if 'progress' in values and self._fleet_task == task._uuid:
            self._fleet[host] = progress_of(values)
            self._ended.add(host)
            self._reported.discard(host)
            if self._play_hosts is not None and self._play_hosts - self._skipped_by(task) <= self._ended:
                self._show()

    def _skipped_by(self, task):
        return self._skipped[1] if self._skipped[0] == task._uuid else set()

    def v2_runner_on_skipped(self, result):
        host, task, unused_values = _parts(result)
        if self._skipped[0] != task._uuid:
            self._skipped = (task._uuid, set())
        self._skipped[1].add(host)
        return super(CallbackModule, self).v2_runner_on_skipped(result)

    def _note_start(self, result):
        host, task, values = _parts(result)
        if task.action in ('lustre.iokit.survey_start', 'survey_start') and values.get('ansible_job_id'):
            if self._started[0] != task._uuid:
                self._started = (task._uuid, set())
            self._started[1].add(host)

    def v2_runner_on_ok(self, result):
        self._note_start(result)
        self._ended_host(result)
        return super(CallbackModule, self).v2_runner_on_ok(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._ended_host(result)
        return super(CallbackModule, self).v2_runner_on_failed(result, ignore_errors=ignore_errors)
