# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Two survey runs meeting on one simulated node, and interrupted mds surveys, through the real playbooks.

    .venv/bin/python -m pytest tests/playbooks/test_concurrent_runs.py -q -p no:cacheprovider

The first run is long by construction (a simulated hang, cleared by the test), and every wait is on a
condition with a deadline: the survey lock taken, a tree on the MDT, the simulator's state.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile

import pytest

from conftest import ROOT, WAIT_POLL_S, small_tmpfs, wait_for

from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NODE_LOCK_DIR, NodeState
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import live_runs as live_runs_in
from ansible_collections.lustre.iokit.plugins.module_utils.payload import OWNER_FILE
from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import envelope_path, read_envelope

from test_survey_playbooks import ANSIBLE_PLAYBOOK, INVENTORY, LUSTRE_SIM, Cluster

pytestmark = pytest.mark.skipif(LUSTRE_SIM is None or not os.access(ANSIBLE_PLAYBOOK, os.X_OK),
                                reason='needs the checkout venv (make setup) with lustre-sim')

# obdfilter: two points (thr 1 and 2), write and read of 24 MiB per OST at 8 MiB/s (one-second samples in each).
SLOW_VARS = {
    'iokit_timeout_s': 300, 'obdfilter_size_mib': 24, 'obdfilter_nobjhi': 1, 'obdfilter_thrhi': 2,
    'obdfilter_tests': ['write', 'read'], 'obdfilter_poll_interval_s': WAIT_POLL_S, 'obdfilter_async_margin_s': 30,
    'mds_thrlo': 2, 'mds_thrhi': 2, 'mds_dir_count': 1, 'mds_file_count': 6000,
    'mds_poll_interval_s': WAIT_POLL_S, 'mds_async_margin_s': 30,
}
DEADLINE_S = 240


class Node(Cluster):
    """The survey playbooks' simulated node, and a playbook started in the background."""

    def start(self, playbook, **extra):
        argv = [ANSIBLE_PLAYBOOK, '-i', self.inventory, '-e', '@' + self.extra_vars]
        for key, value in extra.items():
            argv += ['-e', '%s=%s' % (key, value)]
        # Its own session: the test can interrupt the whole ansible-playbook process group, as Ctrl-C would.
        return subprocess.Popen(argv + [os.path.join(ROOT, 'playbooks', playbook)], cwd=ROOT, env=self.env(),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                                start_new_session=True)

    def run(self, playbook, **extra):
        return self.playbook(playbook, extra=extra)

    def echo_clients(self):
        return [device['name'] for device in self.status()['devices'] if device['type'] == 'echo_client']

    def ost_objects(self):
        found = []
        for target in sorted(os.listdir(os.path.join(self.root, 'targets'))):
            if '-OST' in target:
                for directory, unused, files in os.walk(os.path.join(self.root, 'targets', target, 'O')):
                    found.extend(os.path.join(directory, name) for name in files)
        return found

    def mdt_tree(self):
        root = os.path.join(self.root, 'targets', 'testfs-MDT0000', 'ROOT_ECHO')
        return sorted(os.listdir(root)) if os.path.isdir(root) else []

    def mdt_entries(self):
        root = os.path.join(self.root, 'targets', 'testfs-MDT0000', 'ROOT_ECHO')
        return sum(len(dirs) + len(files) for unused, dirs, files in os.walk(root))


@pytest.fixture(scope='module')
def node(tmp_path_factory):
    made = Node(str(tmp_path_factory.mktemp('concurrent-runs')))
    made.sim('init', '--root', made.root, '--osts', '2', '--mdts', '1', '--ost-size-mib', '256',
             '--ost-mib-s', '8', '--no-mount', '--force')
    with open(made.inventory, 'w', encoding='utf-8') as handle:
        handle.write(INVENTORY.format(python=sys.executable))
    with open(made.extra_vars, 'w', encoding='utf-8') as handle:
        json.dump(dict(SLOW_VARS, iokit_results_dir=made.results, iokit_workdir=made.workdir), handle)
    try:
        yield made
    finally:
        subprocess.run([LUSTRE_SIM, 'destroy', '--root', made.root], check=False, stdout=subprocess.DEVNULL)


def live_runs(node):
    """The node's live survey locks: a simulated node's /run is under its root (node_state.node_lock_dir)."""
    return live_runs_in(os.path.join(node.root, NODE_LOCK_DIR.lstrip('/')))


def holder_of(node, survey, run_id):
    holder = live_runs(node).get(survey)
    return holder if holder and holder.get('run_id') == run_id else None


@contextlib.contextmanager
def hanging_survey(node, run_id, **extra):
    """survey-obdfilter.yml as run ``run_id``, its test_brw hanging until the fault is cleared, so that it is still
    measuring whatever the test does next, however slow the machine is.  Yields the ansible-playbook process and
    the lock's holder once the survey holds the lock and has attached its two echo clients; on the way out the
    fault is cleared and the process, if it still runs, killed."""
    node.sim('fault', '--root', node.root, 'add', 'hang', '--command', 'test_brw')
    survey = node.start('survey-obdfilter.yml', iokit_run_id=run_id, **extra)
    try:
        holder = wait_for('run %s to take the lock' % run_id, lambda: holder_of(node, 'obdfilter', run_id),
                          DEADLINE_S, survey)
        wait_for('run %s to attach its two echo clients' % run_id, lambda: len(node.echo_clients()) == 2,
                 DEADLINE_S, survey)
        yield survey, holder
    finally:
        node.sim('fault', '--root', node.root, 'clear', '--all')
        if survey.poll() is None:
            os.killpg(survey.pid, signal.SIGKILL)
            survey.wait()


@pytest.mark.parametrize('second_run_id, second_workdir', [('conc-b', None), ('conc-c', 'other-work')],
                         ids=['another-run-id', 'another-workdir'])
def test_a_second_obdfilter_run_is_refused_and_the_first_completes(node, second_run_id, second_workdir):
    first_id = 'conc-a-%s' % second_run_id
    second_id = second_run_id
    # The lock is the node's: a run with a workdir of its own meets it as well (it would load the same OSTs).
    extra = {'iokit_workdir': os.path.join(os.path.dirname(node.workdir), second_workdir)} if second_workdir else {}
    # The first run is still measuring while the second starts, is refused and runs its own cleanup.
    with hanging_survey(node, first_id) as (first, holder):
        echo_clients = node.echo_clients()
        second = node.run('survey-obdfilter.yml', iokit_run_id=second_id, **extra)
        assert second.returncode != 0
        refusal = 'run %s on host %s, pid %s, started %s' % (first_id, holder['host'], holder['pid'],
                                                             holder['started'])
        assert refusal in second.stdout, second.stdout[-6000:]
        # The second run's always-section cleanup left the first's survey and echo clients alone.
        assert first.poll() is None and holder_of(node, 'obdfilter', first_id) == holder
        assert node.echo_clients() == echo_clients
        node.sim('fault', '--root', node.root, 'clear', '--all')
        output, unused = first.communicate(timeout=DEADLINE_S)
    assert first.returncode == 0, output[-6000:]
    envelope = read_envelope(envelope_path(node.results, first_id, 'localhost', 'obdfilter'))
    assert envelope['status'] == 'ok' and envelope['errors'] == []
    assert [record['thr'] for record in envelope['records']] == [2, 4]  # both points of both OSTs
    assert all(test['status'] == 'ok' for record in envelope['records'] for test in record['tests'].values())
    assert node.echo_clients() == [] and node.ost_objects() == []
    assert 'obdecho' not in node.status()['modules']
    assert live_runs(node) == {}


def test_a_relaunch_of_the_same_run_waits_on_its_own_survey_and_takes_its_result(node):
    run_id = 'conc-relaunch'
    # The first launch's survey is still measuring when its controller is killed and the run is launched again
    # (an AWX job cancelled and relaunched).
    second = None
    try:
        with hanging_survey(node, run_id) as (first, holder):
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()
            second = node.start('survey-obdfilter.yml', iokit_run_id=run_id)
            # The relaunch's module records itself before it waits: seen there, it has met the running survey.
            wait_for('the relaunch to wait on the running survey', lambda: [
                entry for entry in NodeState(node.workdir).entries('processes', run_id=run_id)
                if entry.get('module') and entry.get('launch') != holder['launch']], DEADLINE_S, second)
            assert holder_of(node, 'obdfilter', run_id) == holder and second.poll() is None
            node.sim('fault', '--root', node.root, 'clear', '--all')
            output, unused = second.communicate(timeout=DEADLINE_S)
    finally:
        if second is not None and second.poll() is None:
            os.killpg(second.pid, signal.SIGKILL)
            second.wait()
    assert second.returncode == 0, output[-6000:]
    envelope = read_envelope(envelope_path(node.results, run_id, 'localhost', 'obdfilter'))
    assert envelope['status'] == 'ok' and envelope['errors'] == [], envelope['errors']
    # Both points, measured by the first launch's survey and taken from it, none measured again.
    assert [record['thr'] for record in envelope['records']] == [2, 4]
    assert [record['attempt'] for record in envelope['records']] == [1, 1]
    assert envelope['environment']['waited_for_own_run']['pid'] == holder['pid']
    assert node.echo_clients() == [] and node.ost_objects() == []
    assert live_runs(node) == {}
    # The relaunch took over what the first launch recorded (its async watchdog, which outlives the module by a
    # poll), so its own cleanup undid that too: nothing of the run is left in the node state.
    left = dict((kind, NodeState(node.workdir).entries(kind, run_id=run_id)) for kind in ('processes', 'paths'))
    assert left == {'processes': [], 'paths': []}, left


def test_a_survey_module_killed_with_sigkill_is_reported_as_such_and_its_leftovers_removed(node):
    run_id = 'conc-sigkill'
    with hanging_survey(node, run_id) as (survey, holder):
        # As the out-of-memory killer would: the module cannot catch it, print its result or tear down.
        os.kill(holder['pid'], signal.SIGKILL)
        output, unused = survey.communicate(timeout=DEADLINE_S)
    assert survey.returncode != 0
    assert ('the obdfilter_survey process on %s was killed (signal 9, SIGKILL'
            % socket.gethostname().split('.')[0]) in output, output[-6000:]
    assert 'No start of json char found' not in output
    # The play's own cleanup removed what the killed module made, and the payload Ansible could not remove.
    assert node.echo_clients() == [] and node.ost_objects() == []
    assert payloads_of(holder['pid']) == [] and live_runs(node) == {}


@pytest.fixture
def small_results(node):
    """A results directory on a file system of its own, 8 MiB: room for the preflight, until a test fills it."""
    with small_tmpfs(os.path.join(node.base, 'small-results'), '8m') as path:
        yield path


def fill(directory):
    """Write into ``directory`` until its file system is full; the filler's path."""
    filler = os.path.join(directory, 'filler')
    with open(filler, 'wb') as handle:
        try:
            while True:
                handle.write(b'\0' * 65536)
                handle.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
    return filler


def test_a_full_results_directory_names_the_path_and_the_node_keeps_the_points(node, small_results):
    run_id = 'conc-full'
    with hanging_survey(node, run_id, iokit_results_dir=small_results) as (survey, unused_holder):
        filler = fill(small_results)
        node.sim('fault', '--root', node.root, 'clear', '--all')
        output, unused = survey.communicate(timeout=DEADLINE_S)
    assert survey.returncode != 0
    assert 'results_dir: cannot store %s' % os.path.join(small_results, run_id, 'localhost') in output, output[-6000:]
    assert 'No space left on device' in output
    assert not os.path.exists(envelope_path(small_results, run_id, 'localhost', 'obdfilter'))
    # The node kept both measured points for the rerun, though the run itself completed.
    points = os.path.join(node.workdir, run_id, 'obdfilter.points.jsonl')
    with open(points, encoding='utf-8') as handle:
        assert len([line for line in handle if line.strip()]) == 2
    assert node.echo_clients() == [] and node.ost_objects() == []
    os.unlink(filler)
    rerun = node.run('survey-obdfilter.yml', iokit_run_id=run_id, iokit_results_dir=small_results)
    assert rerun.returncode == 0, rerun.stdout[-6000:]
    envelope = read_envelope(envelope_path(small_results, run_id, 'localhost', 'obdfilter'))
    assert envelope['status'] == 'ok' and [record['thr'] for record in envelope['records']] == [2, 4]
    assert [record['attempt'] for record in envelope['records']] == [1, 1]  # nothing measured again


def test_obdfilter_refuses_a_size_beyond_the_free_space_before_writing(node):
    run = node.run('survey-obdfilter.yml', iokit_run_id='conc-too-big', obdfilter_size_mib=1048576)
    assert run.returncode != 0
    assert 'size_mib: 1048576 MiB per OST does not fit testfs-OST0000, which has' in run.stdout, run.stdout[-4000:]
    assert 'obdfilter_size_mib' in run.stdout
    assert node.echo_clients() == [] and node.ost_objects() == []


def test_mds_refuses_a_file_count_beyond_the_free_inodes(node):
    run = node.run('survey-mds.yml', iokit_run_id='conc-inodes', mds_file_count=100000000)
    assert run.returncode != 0
    assert 'do not fit testfs-MDT0000, which has' in run.stdout and 'mds_file_count' in run.stdout, \
        run.stdout[-4000:]
    assert node.mdt_tree() == []


def payloads_of(pid):
    """The payload directories in the temporary directory claimed by the module process ``pid`` (payload.py)."""
    found = []
    for path in glob.glob(os.path.join(tempfile.gettempdir(), 'ansible_lustre.iokit.*_payload_*')):
        try:
            with open(os.path.join(path, OWNER_FILE), encoding='utf-8') as handle:
                if json.load(handle).get('pid') == pid:
                    found.append(path)
        except (OSError, ValueError):
            continue
    return found


def mdt_files(node):
    root = os.path.join(node.root, 'targets', 'testfs-MDT0000', 'ROOT_ECHO')
    return sum(len(files) for unused, unused_dirs, files in os.walk(root))


# Each of the 2 threads handles 3000 files in batches of 1000; a hang fault "md_batch <op>" holds every thread
# after its first batch, so the moment is reached by construction and seen in the MDT's tree.
MDS_MOMENTS = {
    'after-start': (None, lambda node, run_id: holder_of(node, 'mds', run_id)),
    'mid-create': ('md_batch create', lambda node, run_id: mdt_files(node) == 2000),
    'mid-destroy': ('md_batch destroy', lambda node, run_id: mdt_files(node) == 4000),
}


@pytest.mark.parametrize('moment, kill_module', [
    ('after-start', False), ('mid-create', False), ('mid-create', True), ('mid-destroy', True),
], ids=['after-start', 'mid-create', 'mid-create-module-killed', 'mid-destroy-module-killed'])
def test_cleanup_leaves_the_mdt_empty_after_an_interrupted_mds_survey(node, moment, kill_module):
    run_id = 'conc-mds-%s-%s' % (moment, 'killed' if kill_module else 'int')
    fault, reached = MDS_MOMENTS[moment]
    if fault:
        node.sim('fault', '--root', node.root, 'add', 'hang', '--command', fault)
    survey = node.start('survey-mds.yml', iokit_run_id=run_id)
    try:
        holder = wait_for('the mds survey to take its lock', lambda: holder_of(node, 'mds', run_id), DEADLINE_S, survey)
        wait_for('the mds survey to reach %s' % moment, lambda: reached(node, run_id), DEADLINE_S, survey)
        # Ctrl-C, then the controller is gone: the module goes on under its async wrapper.
        os.killpg(survey.pid, signal.SIGINT)
        try:
            survey.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(survey.pid, signal.SIGKILL)
            survey.wait()
        if kill_module:
            # Worst case: the module dies without its teardown (its lctl workers live on in their groups).
            os.kill(holder['pid'], signal.SIGKILL)
            wait_for('the killed module to drop its lock', lambda: live_runs(node).get('mds') is None, DEADLINE_S)
            # Ansible could not remove the payload it extracted the killed module into: cleanup.yml does.
            killed_payloads = payloads_of(holder['pid'])
            assert len(killed_payloads) == 1, killed_payloads
        if fault:
            assert mdt_files(node) > 0  # interrupted with files on the MDT
    finally:
        node.sim('fault', '--root', node.root, 'clear', '--all')
        if survey.poll() is None:
            os.killpg(survey.pid, signal.SIGKILL)
            survey.wait()
    cleanup = node.run('cleanup.yml', cleanup_run_id=run_id)
    assert cleanup.returncode == 0, cleanup.stdout[-6000:]
    assert node.mdt_entries() == 0, (node.mdt_tree(), cleanup.stdout[-6000:])
    if kill_module:
        assert payloads_of(holder['pid']) == []
    assert node.echo_clients() == [] and live_runs(node) == {}
    state_file = os.path.join(node.workdir, 'node-state.json')
    if os.path.exists(state_file):  # removed once nothing is left in it
        with open(state_file, encoding='utf-8') as handle:
            state = json.load(handle)
        assert state['echo_clients'] == [] and state['processes'] == [], state
