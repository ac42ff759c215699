#!/usr/bin/env python3
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Controller CPU per host per poll of a survey wait: the stdout callback's share, survey_progress vs default.

Feeds the callbacks the poll results a 16-host (or --hosts) obdfilter wait delivers (each carrying the host's
``progress``, as async_result returns it), --polls rounds, output to /dev/null, and prints the CPU time per host
per poll of each callback, and of the controller's whole per-poll work measured by the fleet benchmark
(bench/README.md, "Fleet playbook": about 1.2 CPU-seconds per host and run) for scale.

    .venv/bin/python bench/progress_bench.py
    .venv/bin/python bench/progress_bench.py --hosts 16,128 --polls 400
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, '.venv', 'collections'))

from ansible.inventory.host import Host  # noqa: E402
from ansible.playbook.task import Task  # noqa: E402
from ansible.plugins.callback.default import CallbackModule as Default  # noqa: E402
from ansible.plugins.loader import callback_loader  # noqa: E402
from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder  # noqa: E402
from ansible.utils.display import Display  # noqa: E402

_AnsibleCollectionFinder(paths=[os.path.join(ROOT, '.venv', 'collections')])._install()


class PollResult:
    """What a callback reads of a task result (the attributes of ansible-core 2.16's and 2.21's)."""

    def __init__(self, host, task, values):
        self.host = self._host = host
        self.task = self._task = task
        self.result = self._result = values
        self.task_name = task.name


def poll_result(host, task, round_number, total=40):
    progress = {'survey': 'obdfilter', 'state': 'running', 'done': min(total, round_number // 10),
                'total': total, 'eta_s': 600.0, 'elapsed_s': float(round_number), 'current': {'thr': 16, 'nobj': 2},
                'last': {'figure': 'write 812.3 MiB/s'}}
    values = {'finished': False, 'progress': progress, 'retries': 1000, 'attempts': round_number + 1,
              'job': {'started': True, 'finished': False}, 'waited_s': 60.0}
    return PollResult(host, task, values)


def measure(callback, hosts, task, polls):
    started = time.process_time()
    for round_number in range(polls):
        for host in hosts:
            callback.v2_runner_retry(poll_result(host, task, round_number))
    return (time.process_time() - started) / (polls * len(hosts))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--hosts', default='16')
    parser.add_argument('--polls', type=int, default=200)
    args = parser.parse_args()
    devnull = open(os.devnull, 'w')
    sys.stdout = devnull  # Display writes to sys.stdout
    rows = []
    for count in [int(value) for value in args.hosts.split(',')]:
        hosts = [Host('oss%d' % number) for number in range(count)]
        task = Task()
        task.name = 'Wait for the survey'
        default = Default()
        default.set_options()
        progress = callback_loader.get('lustre.iokit.survey_progress')
        progress.set_options()
        progress._play_hosts = set(host.get_name() for host in hosts)
        rows.append((count, measure(default, hosts, task, args.polls), measure(progress, hosts, task, args.polls)))
    sys.stdout = sys.__stdout__
    print('%5s %14s %14s %9s' % ('hosts', 'default us', 'progress us', 'ratio'))
    for count, default_s, progress_s in rows:
        print('%5d %14.1f %14.1f %9.2f' % (count, default_s * 1e6, progress_s * 1e6, progress_s / default_s))
    print('(CPU microseconds per host per poll in the stdout callback; Display: %s)' % type(Display()).__name__)


if __name__ == '__main__':
    main()
