# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Live fleet progress of survey-obdfilter.yml on two simulated hosts, one throttled to a crawl.

    .venv/bin/python -m pytest tests/playbooks/test_survey_progress.py -q -p no:cacheprovider

Each host is its own simulated node: its Python runs through a wrapper that puts that node's lustre-sim on
PATH. The slow node's OST moves 2 MiB/s, the other's 64 MiB/s: the slow one is slowest by construction.
"""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from conftest import LUSTRE_SIM, ROOT, VENV_BIN, simulated_local_host

from test_survey_playbooks import ANSIBLE_PLAYBOOK

pytestmark = pytest.mark.skipif(LUSTRE_SIM is None or not os.access(ANSIBLE_PLAYBOOK, os.X_OK),
                                reason='needs the checkout venv (make setup) with lustre-sim')

RUN_ID = 'progress-1'
HOSTS = {'fastoss': 64, 'slowoss': 2}
# Four points (thr 1, 2, 4, 8), each a write and a read of 8 MiB per OST: 8 s a point on the slow node.
SURVEY_VARS = {'iokit_timeout_s': 600, 'obdfilter_size_mib': 8, 'obdfilter_nobjhi': 1, 'obdfilter_thrhi': 8,
               'obdfilter_tests': ['write', 'read'], 'obdfilter_poll_interval_s': 1, 'obdfilter_async_margin_s': 60,
               'iokit_run_id': RUN_ID}
FLEET_LINE = re.compile(r'^obdfilter: 2 hosts, (\d+)/(\d+) points \((\d+) %\), slowest (\S+) \d+ %, ETA (\d\d:\d\d) \(([^)]*)\)$')


@pytest.fixture(scope='module')
def fleet(tmp_path_factory):
    base = str(tmp_path_factory.mktemp('survey-progress'))
    hosts = {}
    for name, mib_s in HOSTS.items():
        hosts[name] = simulated_local_host(base, name, '--osts', '1', '--mdts', '1', '--ost-size-mib', '64',
                                           '--ost-mib-s', str(mib_s))
    inventory = os.path.join(base, 'inventory.json')
    with open(inventory, 'w', encoding='utf-8') as handle:
        json.dump({'all': {'children': {'oss': {'hosts': hosts}}}}, handle)
    extra = os.path.join(base, 'vars.json')
    with open(extra, 'w', encoding='utf-8') as handle:
        json.dump(dict(SURVEY_VARS, iokit_results_dir=os.path.join(base, 'results')), handle)
    yield {'base': base, 'inventory': inventory, 'extra': extra, 'hosts': hosts}
    for name in HOSTS:
        subprocess.run([LUSTRE_SIM, 'destroy', '--root', os.path.join(base, name)], check=False,
                       stdout=subprocess.DEVNULL)


def test_the_callback_prints_fleet_lines_with_a_share_an_eta_and_the_slow_host_as_slowest(fleet):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, '.venv', 'collections'),
               ANSIBLE_PIPELINING='1', ANSIBLE_NOCOLOR='1', ANSIBLE_FORCE_COLOR='0',
               ANSIBLE_STDOUT_CALLBACK='lustre.iokit.survey_progress',
               PATH=VENV_BIN + os.pathsep + os.environ['PATH'])
    done = subprocess.run([ANSIBLE_PLAYBOOK, '-i', fleet['inventory'], '-e', '@' + fleet['extra'],
                           os.path.join(ROOT, 'playbooks', 'survey-obdfilter.yml')], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    assert done.returncode == 0, done.stdout[-6000:]
    lines = [FLEET_LINE.match(line) for line in done.stdout.splitlines()]
    lines = [match for match in lines if match]
    assert lines, done.stdout[-6000:]
    # The throttled node is the one left behind.
    assert set(match.group(4) for match in lines) == {'slowoss'}, done.stdout[-6000:]
    # The count moves between polls and the retry noise is gone for this task.
    assert len(set(match.group(1) for match in lines)) >= 2, done.stdout[-6000:]
    assert 'FAILED - RETRYING' not in done.stdout
    # A run that completed leaves nothing to resume: the cleanup removed its run directories whole.
    for name, host in fleet['hosts'].items():
        assert not os.path.exists(os.path.join(host['iokit_workdir'], RUN_ID)), name


def test_under_ansible_runner_the_wait_itself_prints_the_fleet_line(fleet, tmp_path):
    ansible_runner = pytest.importorskip('ansible_runner')
    env = {'ANSIBLE_COLLECTIONS_PATH': os.path.join(ROOT, '.venv', 'collections'), 'ANSIBLE_PIPELINING': '1',
           'ANSIBLE_NOCOLOR': '1', 'PATH': VENV_BIN + os.pathsep + os.environ['PATH']}
    # AWX's way: its own private directory and its own (fixed) stdout callback, no ansible.cfg of the project.
    run = ansible_runner.run(private_data_dir=str(tmp_path),
                             playbook=os.path.join(ROOT, 'playbooks', 'survey-obdfilter.yml'),
                             inventory=fleet['inventory'], cmdline='-e @%s -e iokit_run_id=progress-awx' % fleet['extra'],
                             envvars=env, quiet=True)
    output = run.stdout.read()
    assert run.rc == 0, output[-6000:]
    lines = [match for match in (FLEET_LINE.match(line.strip()) for line in output.splitlines()) if match]
    assert lines, output[-6000:]
    assert set(match.group(4) for match in lines) == {'slowoss'}, output[-6000:]


# The ost survey ends with one record: its progress counts each OST written, then read. Two OSTs at 1 MiB/s
# through the simulated client mount, 2 MiB each: four steps of 2 s, several polls of 1 s.
OST_LINE = re.compile(r'^ost: 1 host, (\d+)/4 points \((\d+) %\), (ETA \d\d:\d\d \([^)]*\)|done)$')


def test_an_ost_run_has_fleet_lines_with_its_total_and_share(tmp_path):
    base = str(tmp_path)
    mount = os.path.join(base, 'mnt')
    host = simulated_local_host(base, 'client1', '--osts', '2', '--mdts', '1', '--ost-size-mib', '64',
                                '--ost-mib-s', '1', '--client-mount', mount)
    root = os.path.join(base, 'client1')
    try:
        subprocess.run([LUSTRE_SIM, 'mount', '--root', root], check=True, stdout=subprocess.DEVNULL)
        inventory = os.path.join(base, 'inventory.json')
        with open(inventory, 'w', encoding='utf-8') as handle:
            json.dump({'all': {'children': {'clients': {'hosts': {'client1': host}}}}}, handle)
        extra = os.path.join(base, 'vars.json')
        with open(extra, 'w', encoding='utf-8') as handle:
            json.dump({'iokit_timeout_s': 600, 'iokit_run_id': 'progress-ost', 'ost_size_mib': 2,
                       'ost_mount_point': mount, 'ost_poll_interval_s': 1,
                       'ost_async_margin_s': 60, 'iokit_results_dir': os.path.join(base, 'results')}, handle)
        env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, '.venv', 'collections'),
                   ANSIBLE_PIPELINING='1', ANSIBLE_NOCOLOR='1', ANSIBLE_FORCE_COLOR='0',
                   ANSIBLE_STDOUT_CALLBACK='lustre.iokit.survey_progress',
                   PATH=VENV_BIN + os.pathsep + os.environ['PATH'])
        done = subprocess.run([ANSIBLE_PLAYBOOK, '-i', inventory, '-e', '@' + extra,
                               os.path.join(ROOT, 'playbooks', 'survey-ost.yml')], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    finally:
        subprocess.run([LUSTRE_SIM, 'destroy', '--root', root], check=False, stdout=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-6000:]
    lines = [match for match in (OST_LINE.match(line) for line in done.stdout.splitlines()) if match]
    # polls while it ran, with an ETA (4/4 while the survey tears down after its last OST), at least one of them
    # with a share below 100 %; the last line says it is done
    running = [match for match in lines if match.group(3) != 'done']
    assert any(int(match.group(2)) < 100 for match in running), done.stdout[-6000:]
    assert lines[-1].group(1, 2, 3) == ('4', '100', 'done'), done.stdout[-6000:]
    # A poll that comes before the module has written its plan (a loaded machine) knows no total yet and says
    # so; once the four points are known, every line has an ETA.
    assert not re.search(r'/4 points \(\d+ %\), ETA unknown', done.stdout), done.stdout[-6000:]
