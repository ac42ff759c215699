# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""ansible-playbook SIGKILLed mid-survey: its forked worker stops waiting, and cleanup.yml removes the job files;
a job file lost under a running survey fails the wait at once, naming why.

In the first, only the main ansible-playbook process is killed (as when the OOM killer or a lost AWX node takes it):
its worker, polling the node for the survey, is left behind and must notice on its own.  In both, the survey hangs in
test_brw (a simulator fault), so the job is still running when the controller goes or its job file does.

    .venv/bin/python -m pytest tests/playbooks/test_lost_controller.py -q -p no:cacheprovider
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from conftest import ANSIBLE_PLAYBOOK, LUSTRE_SIM, ROOT, VENV_BIN, localhost_inventory, wait_for

RUN_ID = 'lost-controller-1'
# Far beyond the test's deadlines: without the check, the worker would poll for this long.
SURVEY_TIMEOUT_S = 1800
DEADLINE_S = 180

pytestmark = pytest.mark.skipif(LUSTRE_SIM is None or not os.access(ANSIBLE_PLAYBOOK, os.X_OK),
                                reason='needs the checkout venv (make setup) with lustre-sim')


def children_of(pid):
    found = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % entry, encoding='utf-8', errors='replace') as handle:
                fields = handle.read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry))
    return found


def alive(pid):
    try:
        with open('/proc/%d/stat' % pid, encoding='utf-8', errors='replace') as handle:
            return handle.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


@pytest.fixture
def node(tmp_path):
    base = str(tmp_path)
    made = {'root': os.path.join(base, 'node'), 'async': os.path.join(base, 'async'), 'base': base,
            'inventory': os.path.join(base, 'inventory.yml'), 'log': os.path.join(base, 'survey.log')}
    subprocess.run([LUSTRE_SIM, 'init', '--root', made['root'], '--osts', '1', '--mdts', '1', '--ost-size-mib', '64',
                    '--force'], check=True, stdout=subprocess.DEVNULL)
    with open(made['inventory'], 'w', encoding='utf-8') as handle:
        handle.write(localhost_inventory(sys.executable, ['oss']))
    made['env'] = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'),
                       ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, '.venv', 'collections'), ANSIBLE_NOCOLOR='1',
                       ANSIBLE_FORCE_COLOR='0', LUSTRE_SIM_ROOT=made['root'], ANSIBLE_ASYNC_DIR=made['async'],
                       PATH=os.path.join(made['root'], 'bin') + os.pathsep + VENV_BIN + os.pathsep + os.environ['PATH'])
    made['vars'] = ['-e', json.dumps({
        'iokit_results_dir': os.path.join(base, 'results'), 'iokit_workdir': os.path.join(base, 'work'),
        'iokit_run_id': RUN_ID, 'iokit_timeout_s': SURVEY_TIMEOUT_S, 'obdfilter_size_mib': 4, 'obdfilter_nobjhi': 1,
        'obdfilter_thrhi': 1, 'obdfilter_tests': ['write'], 'obdfilter_poll_interval_s': 1})]
    try:
        yield made
    finally:
        subprocess.run([LUSTRE_SIM, 'fault', '--root', made['root'], 'clear', '--all'], check=False,
                       stdout=subprocess.DEVNULL)
        subprocess.run([LUSTRE_SIM, 'destroy', '--root', made['root']], check=False, stdout=subprocess.DEVNULL)


def start_hanging_survey(node):
    """survey-obdfilter.yml on the node, its test_brw hanging (the job runs until stopped); output to node['log']."""
    subprocess.run([LUSTRE_SIM, 'fault', '--root', node['root'], 'add', 'hang', '--command', 'test_brw'], check=True,
                   stdout=subprocess.DEVNULL)
    with open(node['log'], 'w', encoding='utf-8') as log:
        return subprocess.Popen([ANSIBLE_PLAYBOOK, '-i', node['inventory']] + node['vars']
                                + [os.path.join(ROOT, 'playbooks', 'survey-obdfilter.yml')],
                                cwd=node['base'], env=node['env'], stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)


def test_a_killed_controller_leaves_no_polling_worker_and_cleanup_removes_the_job_files(node):
    controller = start_hanging_survey(node)
    try:
        def waiting():
            with open(node['log'], encoding='utf-8') as handle:
                return 'Wait for the survey' in handle.read() and os.path.isdir(node['async']) \
                    and os.listdir(node['async']) and children_of(controller.pid)
        workers = wait_for('the worker waiting for the survey', waiting, DEADLINE_S)
        os.kill(controller.pid, signal.SIGKILL)
        controller.wait(timeout=30)
        # The job still runs on the node (test_brw hangs); the worker must stop asking for it.
        wait_for('the orphaned worker(s) %s to stop polling' % workers,
                 lambda: not any(alive(pid) for pid in workers), DEADLINE_S)
    finally:
        if controller.poll() is None:
            controller.kill()
            controller.wait(timeout=30)
    assert os.listdir(node['async']), 'the survey job file should still be there before the cleanup'

    cleanup = subprocess.run([ANSIBLE_PLAYBOOK, '-i', node['inventory']] + node['vars']
                             + ['-e', 'cleanup_run_id=%s' % RUN_ID, os.path.join(ROOT, 'playbooks', 'cleanup.yml')],
                             cwd=node['base'], env=node['env'], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             universal_newlines=True, check=False)
    assert cleanup.returncode == 0, cleanup.stdout[-4000:]
    left = {}
    for name in os.listdir(node['async']):
        with open(os.path.join(node['async'], name), encoding='utf-8') as handle:
            left[name] = handle.read()[:300]
    assert left == {}, (left, cleanup.stdout[-3000:])
    status = json.loads(subprocess.run([LUSTRE_SIM, 'status', '--root', node['root']], check=True,
                                       stdout=subprocess.PIPE, universal_newlines=True).stdout)
    assert [device['name'] for device in status['devices'] if device['type'] == 'echo_client'] == []


def test_a_lost_job_file_fails_the_wait_at_once_with_its_reason(node):
    # The job runs on (test_brw hangs) while its async job file is gone, as when the node's temporary directory is
    # cleaned under a survey: the wait must fail on its first look with the module's message, not poll until the
    # survey's timeout nor fail on an undefined `finished`.
    controller = start_hanging_survey(node)
    try:
        def job_files():
            with open(node['log'], encoding='utf-8') as handle:
                waiting = 'Wait for the survey' in handle.read()
            return waiting and os.path.isdir(node['async']) and os.listdir(node['async'])
        for name in wait_for('the survey waited on', job_files, DEADLINE_S):
            os.unlink(os.path.join(node['async'], name))
        wait_for('ansible-playbook to end', lambda: controller.poll() is not None, DEADLINE_S)
    finally:
        if controller.poll() is None:
            os.killpg(controller.pid, signal.SIGKILL)
            controller.wait(timeout=30)
    with open(node['log'], encoding='utf-8') as handle:
        output = handle.read()
    assert controller.returncode != 0, output[-4000:]
    assert 'results_file: no async job file' in output, output[-4000:]
    # The play's cleanup still stopped the survey and removed its echo device.
    status = json.loads(subprocess.run([LUSTRE_SIM, 'status', '--root', node['root']], check=True,
                                       stdout=subprocess.PIPE, universal_newlines=True).stdout)
    assert [device['name'] for device in status['devices'] if device['type'] == 'echo_client'] == []
