# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""`make demo` end to end, twice, as a user runs it (without `make setup`, which the test run has done):

1. interrupted with Ctrl-C (SIGINT to make's process group) while the sgpdd survey runs on the fleet: make runs
   the demo's teardown, and nothing of the fleet stays (no node, mount, loop device, cgroup, process, directory);
2. then the whole demo: it succeeds, prints the failed verdict, exactly three findings, one per fault planted in
   inventories/demo (slow OST, slow LUN, slow NIC), each naming its component, the node that owns it and the
   layer's diagnosis, and the path of report.html; nothing stays.

The planted faults are read from the inventory. The demo's directory and results go to a directory of the test
(DEMO_ARGS), so a user's `make demo` is not disturbed.

    .venv/bin/python -m pytest tests/playbooks/test_demo.py -q -p no:cacheprovider
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import pytest
import yaml

from conftest import LUSTRE_SIM, ROOT, wait_for

INVENTORY = os.path.join(ROOT, 'inventories', 'demo')
MAKE = shutil.which('make')
CGROUP_V1_BLKIO = '/sys/fs/cgroup/blkio'
# What make prints before it runs the demo's teardown after a failed or interrupted demo.
STOPPED = 'make demo: the demo failed or was interrupted'
# What makes the demo's slow LUN (its variable demo_slow_device), and names its block-I/O cgroup.
SLOW_DEVICE = os.path.join(ROOT, 'tests', 'integration', 'targets', 'setup_slow_device', 'files', 'slow_device.py')


def _slow_device():
    spec = importlib.util.spec_from_file_location('slow_device', SLOW_DEVICE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _demo_hosts():
    """Every host of inventories/demo: each has its directory <demo_dir>/<host> (demo_host_dir)."""
    with open(os.path.join(INVENTORY, 'hosts.yml'), encoding='utf-8') as handle:
        pending, hosts = [yaml.safe_load(handle)['all']], set()
    while pending:
        group = pending.pop() or {}
        hosts.update(group.get('hosts') or {})
        pending.extend((group.get('children') or {}).values())
    return hosts


def _cgroup_roots():
    roots = [CGROUP_V1_BLKIO] if os.path.isdir(CGROUP_V1_BLKIO) else []
    with open('/proc/self/mounts', encoding='utf-8') as mounts:
        roots += [line.split()[1] for line in mounts if line.split()[2:3] == ['cgroup2']]
    return roots


pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which('losetup') or not shutil.which('sgp_dd') or MAKE is None
    or LUSTRE_SIM is None or not os.path.exists('/dev/fuse') or not _cgroup_roots(),
    reason='needs root, losetup, sgp_dd (sg3-utils), make, /dev/fuse, a block-I/O cgroup and the checkout venv')


class Demo:
    """One `make demo` into a directory of its own."""

    def __init__(self, base, **extra_vars):
        self.base = base
        os.mkdir(base)
        self.demo_dir = os.path.join(base, 'fleet')
        self.results = os.path.join(base, 'results')
        self.log = os.path.join(base, 'demo.log')
        self.vars_file = os.path.join(base, 'vars.json')
        self.interrupts = 1
        self.interrupted_last = None
        self.interrupted_at = None
        with open(self.vars_file, 'w', encoding='utf-8') as handle:
            json.dump(dict(extra_vars, demo_dir=self.demo_dir, iokit_results_dir=self.results), handle)

    def start(self):
        # Unbuffered: the test watches the output to know when the surveys run.
        env = dict(os.environ, ANSIBLE_NOCOLOR='1', ANSIBLE_FORCE_COLOR='0', PYTHONUNBUFFERED='1')
        self.output = open(self.log, 'w', encoding='utf-8')
        # A session of its own: its process group is what a terminal's Ctrl-C reaches.
        self.process = subprocess.Popen([MAKE, '--no-print-directory', '-o', 'setup', 'demo',
                                         'DEMO_ARGS=-e @%s' % self.vars_file], cwd=ROOT, env=env, stdout=self.output,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        return self

    def finish(self):
        try:
            self.returncode = self.process.wait(timeout=1800)
        finally:
            self.output.close()
        with open(self.log, encoding='utf-8') as handle:
            self.stdout = handle.read()
        return self

    def stopped_or_interrupt_again(self, every_s=5):
        """Whether make said that the demo stopped (or make ended); if not, Ctrl-C again every ``every_s`` s."""
        if STOPPED in self.text() or self.process.poll() is not None:
            return True
        if time.monotonic() - self.interrupted_last >= every_s:
            playbook = self.playbook_pid()
            if playbook is not None:
                os.kill(playbook, signal.SIGINT)
                self.interrupts += 1
            self.interrupted_last = time.monotonic()
        return False

    def playbook_pid(self):
        """The pid of the demo's own ansible-playbook (playbooks/demo.yml, not the teardown), None once it ended."""
        for pid in filter(str.isdigit, os.listdir('/proc')):
            try:
                if os.getpgid(int(pid)) != self.process.pid:
                    continue
                with open('/proc/%s/cmdline' % pid, 'rb') as handle:
                    argv = handle.read().split(b'\0')
            except OSError:
                continue  # gone meanwhile
            if any(arg.endswith(b'ansible-playbook') for arg in argv) and b'playbooks/demo.yml' in argv:
                return int(pid)
        return None

    def text(self):
        with open(self.log, encoding='utf-8') as handle:
            return handle.read()

    def loops(self):
        """The loop devices the fleet's OSSs got, as the demo showed them."""
        return sorted(set(re.findall(r'LUN (/dev/loop\d+) at ', self.text())))

    def leftovers(self):
        """What of the fleet is still on the machine (empty when nothing is)."""
        left = []
        if os.path.exists(self.demo_dir):
            left.append('directory %s' % self.demo_dir)
        with open('/proc/mounts', encoding='utf-8') as mounts:
            left += ['mount %s' % line.split()[1] for line in mounts if line.split()[1].startswith(self.demo_dir + '/')]
        listing = subprocess.run(['losetup', '--list', '--json', '--output', 'NAME,BACK-FILE'], check=True,
                                 stdout=subprocess.PIPE, universal_newlines=True).stdout
        for device in (json.loads(listing)['loopdevices'] if listing.strip() else []):
            if (device.get('back-file') or '').startswith(self.demo_dir + '/'):
                left.append('loop device %s on %s' % (device['name'], device['back-file']))
        slow_device = _slow_device()
        for loop in self.loops():
            number = '%d:%d' % (os.major(os.stat(loop).st_rdev), os.minor(os.stat(loop).st_rdev))
            for host in _demo_hosts():
                name = slow_device.group_name(number, os.path.join(self.demo_dir, host, 'lun-python'))
                left += ['cgroup %s' % os.path.join(root, name) for root in _cgroup_roots()
                         if os.path.isdir(os.path.join(root, name))]
        for pid in filter(str.isdigit, os.listdir('/proc')):
            try:
                with open('/proc/%s/cmdline' % pid, 'rb') as handle:
                    cmdline = handle.read()
                with open('/proc/%s/environ' % pid, 'rb') as handle:
                    environ = handle.read()
            except OSError:
                continue  # gone, or a kernel thread
            # Every process started through a node's wrapper has LUSTRE_SIM_ROOT under demo_dir in its environment.
            if self.demo_dir.encode() in cmdline or self.demo_dir.encode() in environ:
                left.append('process %s: %s' % (pid, cmdline.replace(b'\0', b' ').decode(errors='replace')[:200]))
        return left


def _planted(run_dir):
    """The planted faults from inventories/demo: (component name, the host that owns it) -> fault."""
    with open(os.path.join(INVENTORY, 'hosts.yml'), encoding='utf-8') as handle:
        fleet = yaml.safe_load(handle)['all']['children']['fleet']['children']
    with open(os.path.join(INVENTORY, 'group_vars', 'all.yml'), encoding='utf-8') as handle:
        fsname = yaml.safe_load(handle)['demo_fsname']
    planted = {}
    for host, hostvars in fleet['oss']['hosts'].items():
        for label in (hostvars or {}).get('demo_slow_osts') or {}:
            planted[('%s-%s' % (fsname, label), host)] = 'slow OST'
        if 'demo_slow_lun_mib_s' in (hostvars or {}):
            with open(os.path.join(run_dir, host, 'sgpdd.json'), encoding='utf-8') as handle:
                devices = json.load(handle)['parameters']['devices']
            planted[(os.path.basename(devices[0]), host)] = 'slow LUN'
        if 'demo_slow_nic_mib_s' in (hostvars or {}):
            planted[(hostvars['demo_nid'], host)] = 'slow NIC'
    return planted


@pytest.fixture(scope='module')
def base():
    # No '-' in the demo's paths (see inventories/demo/group_vars/all.yml), hence not pytest's tmp_path.
    made = tempfile.mkdtemp(prefix='iokit_demo_test_', dir='/tmp')
    yield made
    shutil.rmtree(made, ignore_errors=True)


def sgpdd_waiting(text):
    """The sgpdd play has started its survey and waits on it (the wait is survey_common's, shared by every survey)."""
    play = text.find('PLAY [Survey raw block devices with sgp_dd]')
    return play >= 0 and 'TASK [lustre.iokit.survey_common : Wait for the survey]' in text[play:]


@pytest.fixture(scope='module')
def interrupted(base):
    # The stages after sgpdd are switched off: the interruption comes in sgpdd, so they would never run, and their
    # preflights (every enabled stage's, before the first) only cost time; the fleet made and torn down is the same.
    demo = Demo(os.path.join(base, 'interrupted'), **dict(('acceptance_run_' + stage, False) for stage in (
        'obdfilter', 'mds', 'ost', 'lnet', 'ior', 'mdtest')))
    demo.start()
    try:
        wait_for('the sgpdd survey to run on the fleet',
                 lambda: sgpdd_waiting(demo.text()) or demo.process.poll() is not None, 900)
        assert demo.process.poll() is None, demo.text()[-6000:]
        # Ctrl-C: the terminal signals make's whole process group.
        demo.interrupted_at = len(demo.text())
        demo.interrupted_last = time.monotonic()
        os.killpg(demo.process.pid, signal.SIGINT)
        # ansible-playbook loses a SIGINT that comes while it forks a worker: its handler raises KeyboardInterrupt
        # inside logging's at-fork hook, where Python ignores exceptions ("Exception ignored in: _releaseLock"), and
        # the play goes on.  A user then presses Ctrl-C again; so does the test, every 5 s while the demo's own
        # playbook still runs, and only to it: once it has ended, make's shell runs the teardown, which must finish.
        wait_for('the demo to stop after Ctrl-C (pressed again every 5 s)', demo.stopped_or_interrupt_again, 300)
    finally:
        demo.finish()
    return demo


@pytest.fixture(scope='module')
def demo(base, interrupted):
    """The whole demo, after the interrupted one (so `make demo` ran twice)."""
    made = Demo(os.path.join(base, 'full'))
    made.start().finish()
    match = re.search(r'"Report: (\S+/report\.html)"', made.stdout)
    made.report = match.group(1) if match else None
    made.run_dir = os.path.dirname(made.report) if made.report else None
    return made


def test_an_interrupted_demo_removes_its_fleet(interrupted):
    # What the demo printed from one moment before the Ctrl-C on, and how it ended.
    around = 'Ctrl-C pressed %d time(s); the output from just before the first on:\n%s\n...\n%s' % (
        interrupted.interrupts, interrupted.stdout[max(0, interrupted.interrupted_at - 1500):][:6000],
        interrupted.stdout[-2000:])
    assert interrupted.returncode != 0, around
    assert STOPPED in interrupted.stdout, around
    assert len(interrupted.loops()) == 4, interrupted.loops()
    wait_for('nothing of the interrupted demo left', lambda: not interrupted.leftovers(), 60)


def test_the_demo_succeeds_and_says_that_the_verdict_failed(demo):
    assert demo.returncode == 0, demo.stdout[-8000:]
    last = demo.stdout[demo.stdout.rindex('TASK [Show the findings and the report]'):]
    assert 'Verdict: FAILED (' in last and 'the demo itself succeeded' in last, last
    assert demo.report and demo.report.startswith(demo.results + '/'), last


def test_the_findings_are_the_planted_faults_one_each_with_its_node_and_diagnosis(demo):
    planted = _planted(demo.run_dir)
    assert sorted(planted.values()) == ['slow LUN', 'slow NIC', 'slow OST'], planted
    with open(os.path.join(demo.run_dir, 'analysis.json'), encoding='utf-8') as handle:
        components = json.load(handle)['components']
    # Exactly one finding per planted fault, naming its component and the node that owns it; nothing else (the
    # OSS aggregates and the ost-survey rows of the slow OST are evidence beneath its finding).
    assert sorted((item['name'], item['node']) for item in components) == sorted(planted), components
    by_fault = {planted[(item['name'], item['node'])]: item for item in components}
    # Each with the layer where it first appears, read across the layers (the OSTs are mounted from their LUNs).
    assert (by_fault['slow LUN']['kind'], by_fault['slow LUN']['rule']) == ('LUN', 'lun'), by_fault['slow LUN']
    assert (by_fault['slow OST']['kind'], by_fault['slow OST']['rule']) == ('OST', 'target-backend'), \
        by_fault['slow OST']
    assert by_fault['slow NIC']['kind'] == 'NID' and by_fault['slow NIC']['rule'] == 'nid', by_fault['slow NIC']
    last = demo.stdout[demo.stdout.rindex('TASK [Show the findings and the report]'):]
    assert all(item['text'] in last for item in components), last
    found = last.split('Found: ', 1)[1].split(';', 1)[0]
    assert all(fault in found for fault in planted.values()), last
    assert '; anything else: nothing' in last, last
    # The verdict fails on them alone, and JUnit's failures carry each component's diagnosis.
    with open(os.path.join(demo.run_dir, 'verdict.json'), encoding='utf-8') as handle:
        verdict = json.load(handle)
    failed = [case for case in verdict['cases'] if case['status'] == 'failed']
    assert verdict['verdict'] == 'failed' and failed, verdict['counts']
    planted_hosts = set(host for unused_name, host in planted)
    assert all(any(name in case['subject'] for name, unused_host in planted)
               or case['subject'] in planted_hosts for case in failed), failed


def test_every_stage_ran_and_the_report_is_written(demo):
    assert os.path.getsize(demo.report) > 0
    with open(os.path.join(demo.run_dir, 'report.json'), encoding='utf-8') as handle:
        surveys = set(json.loads(line)['survey'] for line in handle if line.strip())
    assert {'sgpdd', 'obdfilter', 'mds', 'ost', 'lnet', 'mdtest'} <= surveys, surveys


def test_the_live_progress_is_shown(demo):
    # One fleet line per poll of a running survey (the survey_progress callback set in ansible.cfg), e.g.
    # "obdfilter: 4 hosts, 3/4 points (75 %), slowest oss2 0 %, ETA 02:33 (< 1 min)". The obdfilter survey outlasts
    # a poll interval by construction: the slow OST moves its 8 MiB twice at 1 MiB/s.
    assert re.search(r'^obdfilter: 4 hosts, \d+/4 points \(\d+ %\), ', demo.stdout, re.MULTILINE), demo.stdout[-6000:]


def test_nothing_is_left_behind(demo):
    assert len(demo.loops()) == 4, demo.loops()
    wait_for('nothing of the demo left', lambda: not demo.leftovers(), 60)
