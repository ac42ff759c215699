# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/survey-mdtest.yml, run for real on this machine against a simulated Lustre client.

    .venv/bin/python -m pytest tests/playbooks/test_survey_mdtest.py -q -p no:cacheprovider

localhost launches; the clients group also holds a second client (never contacted: the simulator's mpirun and srun
run every rank here, counting nodes from the hostfile or -N), so the sweep has a two-node step. Both launchers; srun
with environment modules loaded in the shell that starts it.
"""

from __future__ import annotations

import json
import os
import re

import pytest

from conftest import ANSIBLE_PLAYBOOK, LUSTRE_SIM, WAIT_POLL_S, SimulatedClient

from ansible_collections.lustre.iokit.plugins.module_utils.engines.mdtest import MARKER
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState

RUN_ID = 'pbtest-mdtest'
DEADLINE_S = 180

pytestmark = pytest.mark.skipif(LUSTRE_SIM is None or not os.access(ANSIBLE_PLAYBOOK, os.X_OK),
                                reason='needs the checkout venv (make setup) with lustre-sim')

INVENTORY = '''
all:
  hosts:
    localhost:
      ansible_connection: local
      ansible_python_interpreter: {python}
  children:
    clients:
      hosts:
        localhost:
        client2:
          ansible_connection: local
          ansible_python_interpreter: {python}
          mdtest_mpi_hostname: client2-ib
'''

SIM_CONFIG = '''osts: 2
mdts: 2
client_mount: {mount}
slurm: {{partitions: [batch, debug], accounts: [proj1], nodes: 2}}
modules: {{available: [gcc/12.2, openmpi, mdtest]}}
'''

SURVEY_VARS = {
    'iokit_timeout_s': 120, 'mdtest_items': 20, 'mdtest_repetitions': 2, 'mdtest_tasks_per_node': [1, 2],
    'mdtest_allow_run_as_root': True, 'mdtest_poll_interval_s': WAIT_POLL_S, 'mdtest_async_margin_s': 30,
    'mdtest_stride': 1, 'mdtest_mdt_count': 2,
}


@pytest.fixture(scope='module')
def client(tmp_path_factory):
    made = SimulatedClient('mdtest', str(tmp_path_factory.mktemp('survey-mdtest')))
    try:
        made.start(SIM_CONFIG, INVENTORY, dict(SURVEY_VARS, iokit_run_id=RUN_ID))
        made.first_run = made.playbook('survey-mdtest.yml')
        yield made
    finally:
        made.destroy()


def test_the_sweep_ran_and_its_envelope_is_stored(client):
    assert client.first_run.returncode == 0, client.first_run.stdout[-6000:]
    envelope = client.envelope(RUN_ID)
    assert (envelope['survey'], envelope['engine'], envelope['status'], envelope['errors']) == (
        'mdtest', 'native', 'ok', [])
    records = envelope['records']
    best = [record for record in records if record['best_tasks_per_node']]
    assert len(best) == 1 and best[0]['nodes'] == 1
    assert [(r['step'], r['nodes'], r['tasks_per_node']) for r in records] == [
        ('tasks_per_node', 1, 1), ('tasks_per_node', 1, 2), ('nodes', 2, best[0]['tasks_per_node'])]
    # the hostfile names come from the clients group, the second by its mdtest_mpi_hostname
    assert envelope['parameters']['hosts'] == ['localhost', 'client2-ib'] and records[2]['hosts'] == ['localhost',
                                                                                                      'client2-ib']
    for record in records:
        # mdtest itself saw the point's tasks and nodes
        assert (record['mdtest_tasks'], record['mdtest_nodes']) == (record['tasks'], record['nodes'])
        assert record['iterations'] == 2 and record['summary']['file creation']['mean'] > 0
        assert record['summary']['file creation']['stddev'] is not None
    raw = [name for name in os.listdir(os.path.join(client.results, RUN_ID, 'localhost'))
           if name.startswith('mdtest') and not name.endswith('.json')]
    assert raw, os.listdir(os.path.join(client.results, RUN_ID, 'localhost'))


def test_the_sweep_runs_through_srun_with_environment_modules_and_leaves_nothing(client):
    run_id = 'pbtest-mdtest-srun'
    modules = ['gcc', 'openmpi', 'mdtest']
    jobs_before = len(client.slurm_jobs())
    result = client.playbook('survey-mdtest.yml', extra={
        'iokit_run_id': run_id, 'mdtest_launcher': 'srun', 'mdtest_partition': 'batch', 'mdtest_account': 'proj1',
        'mdtest_environment_modules': modules, 'mdtest_repetitions': 1,
        # a login shell would reset PATH and lose the simulator's shims
        'mdtest_module_shell': ['/bin/sh', '-c']})
    assert result.returncode == 0, result.stdout[-6000:]
    envelope = client.envelope(run_id)
    assert (envelope['status'], envelope['errors']) == ('ok', [])
    assert (envelope['parameters']['launcher'], envelope['parameters']['environment_modules']) == ('srun', modules)
    records = envelope['records']
    best = [record['tasks_per_node'] for record in records if record['best_tasks_per_node']]
    assert [(r['nodes'], r['tasks']) for r in records] == [(1, 1), (1, 2), (2, 2 * best[0])]
    for record in records:
        assert (record['mdtest_tasks'], record['mdtest_nodes']) == (record['tasks'], record['nodes'])
        assert record['summary']['file creation']['mean'] > 0
    # one Slurm job per point, each started by a shell that had loaded the modules
    jobs = client.slurm_jobs()[jobs_before:]
    assert [(job['nodes'], job['ntasks'], job['partition'], job['account'], job['modules'], job['status'])
            for job in jobs] == [(r['nodes'], r['tasks'], 'batch', 'proj1', modules, 0) for r in records]
    assert client.trees() == []
    state = NodeState(client.workdir).read()
    assert state['paths'] == [] and state['processes'] == []


def test_bad_launch_variables_are_all_named_before_anything_runs(client):
    jobs_before = len(client.slurm_jobs())
    bad = client.playbook('survey-mdtest.yml', extra={
        'iokit_run_id': 'pbtest-mdtest-bad-launch', 'mdtest_launcher': 'pbs', 'mdtest_account': 'proj1',
        'mdtest_environment_modules': ['gcc', 'openmpi mdtest']})
    assert bad.returncode != 0
    for message in ("mdtest_launcher (pbs): must be mpirun or srun",
                    "mdtest_partition, mdtest_account: Slurm settings need launcher srun",
                    "mdtest_environment_modules (['gcc', 'openmpi mdtest']): module names are single words"):
        assert message in bad.stdout, bad.stdout[-4000:]
    assert not os.path.exists(os.path.join(client.results, 'pbtest-mdtest-bad-launch'))
    assert len(client.slurm_jobs()) == jobs_before


def test_the_summary_shows_every_point(client):
    with open(os.path.join(client.results, RUN_ID, 'summary-mdtest.md'), encoding='utf-8') as handle:
        summary = handle.read()
    assert '## localhost — ok' in summary
    assert '| step | nodes | tasks/node | tasks | directory creation |' in summary
    rows = [line for line in summary.splitlines() if line.startswith(('| tasks per node |', '| nodes |'))]
    assert len(rows) == 3 and sum('**' in row for row in rows) == 1


def test_nothing_is_left_on_the_client(client):
    assert client.trees() == []
    status = client.status()
    assert [helper['command'] for helper in status['helpers']] == ['lustre-sim client mount %s' % client.mount]
    assert not os.path.exists(os.path.join(client.workdir, 'state.json'))
    state = NodeState(client.workdir).read()
    assert state['paths'] == [] and state['processes'] == []
    assert not os.path.exists(os.path.join(client.workdir, RUN_ID))


def test_check_mode_shows_the_plan_and_creates_nothing(client):
    checked = client.playbook('survey-mdtest.yml', '--check', extra={'iokit_run_id': 'pbtest-mdtest-check'})
    assert checked.returncode == 0, checked.stdout[-6000:]
    assert 'points (nodes x tasks per node): 1x1, 1x2, 1xbest, 2xbest' in checked.stdout
    assert client.trees() == []
    assert not os.path.exists(os.path.join(client.results, 'pbtest-mdtest-check', 'localhost'))


def test_a_bad_variable_fails_before_anything_runs(client):
    bad = client.playbook('survey-mdtest.yml', extra={'iokit_run_id': 'pbtest-mdtest-bad', 'mdtest_stonewall_s': 5,
                                                      'mdtest_branching': 2})
    assert bad.returncode != 0
    assert 'mdtest_stonewall_s (5): mdtest -W works only with a branching factor of 1, got branching 2' in bad.stdout
    assert not os.path.exists(os.path.join(client.results, 'pbtest-mdtest-bad'))


def test_a_hanging_mdtest_is_stopped_and_its_tree_removed(client):
    client.sim('fault', '--root', client.root, 'add', 'hang', '--command', 'mdtest')
    try:
        stopped = client.playbook('survey-mdtest.yml', extra={'iokit_run_id': 'pbtest-mdtest-hang',
                                                              'iokit_timeout_s': 20})
    finally:
        client.sim('fault', '--root', client.root, 'clear', '--all')
    # nothing measured: the run fails, but the envelope says why and nothing is left
    assert stopped.returncode != 0
    envelope = client.envelope('pbtest-mdtest-hang')
    assert envelope['status'] == 'failed'
    assert {'point': {'nodes': 1, 'tasks_per_node': 1}, 'message': 'mdtest interrupted: timeout'} in envelope['errors']
    assert client.trees() == []
    assert [helper['command'] for helper in client.status()['helpers']] == [
        'lustre-sim client mount %s' % client.mount]


def test_the_cleanup_playbook_removes_a_tree_left_by_a_killed_run_and_keeps_an_unmarked_one(client):
    killed = os.path.join(client.mount, 'mdtest_killed-run')
    os.makedirs(os.path.join(killed, 'nodes1-ppn1', 'test-dir.0-0'))
    with open(os.path.join(killed, MARKER), 'w', encoding='utf-8') as handle:
        handle.write('killed-run\n')
    stranger = os.path.join(client.mount, 'mdtest_not-ours')
    os.mkdir(stranger)
    state = NodeState(client.workdir)
    state.record('paths', 'killed-run', path=killed, mount_point=client.mount, survey='mdtest', marker=MARKER)
    state.record('paths', 'not-ours', path=stranger, mount_point=client.mount, survey='mdtest', marker=MARKER)
    # client2 is only a name for the hostfile: the cleanup runs where the launcher ran
    cleanup = client.playbook('cleanup.yml', '--limit', 'localhost')
    assert cleanup.returncode == 0, cleanup.stdout[-6000:]
    assert client.trees() == ['mdtest_not-ours']
    left = [entry['path'] for entry in NodeState(client.workdir).entries('paths') if entry.get('survey') == 'mdtest']
    assert left == [stranger]
    os.rmdir(stranger)


def test_a_rerun_of_a_killed_run_measures_only_the_points_it_left(client):
    run_id = 'pbtest-mdtest-resumed'
    # the first point (1 task per node) ends; the second hangs in its own directory, the one word that names it
    second = os.path.join(client.mount, 'mdtest_' + run_id, 'nodes1-ppn2')
    client.kill_at_a_hang_and_clean_up(run_id, 'mdtest ' + second, 'mdtest hanging at the second point', DEADLINE_S)
    # the cleanup keeps the point the killed attempt finished, and removes the tree
    with open(os.path.join(client.workdir, run_id, 'mdtest.points.jsonl'), encoding='utf-8') as handle:
        kept = [json.loads(line) for line in handle]
    assert [(line['attempt'], line['point']['tasks_per_node']) for line in kept] == [(1, 1)]
    assert client.trees() == []
    rerun = client.playbook('survey-mdtest.yml', extra={'iokit_run_id': run_id})
    assert rerun.returncode == 0, rerun.stdout[-6000:]
    envelope = client.envelope(run_id)
    assert (envelope['status'], envelope['errors']) == ('ok', [])
    records = [(r['step'], r['nodes'], r['tasks_per_node'], r['attempt']) for r in envelope['records']]
    best = [r['tasks_per_node'] for r in envelope['records'] if r['best_tasks_per_node']]
    # each point once: the first from the killed attempt, the rest measured by the rerun
    assert records == [('tasks_per_node', 1, 1, 1), ('tasks_per_node', 1, 2, 2), ('nodes', 2, best[0], 2)]
    assert [attempt['attempt'] for attempt in envelope['attempts']] == [1, 2]
    assert client.trees() == []


# An MDT that saturates at 2 tasks: 20 ops/s for one task, 40 ops/s (its peak) for two or more, far below the
# machine's speed, so every phase's rate is the curve's (lustre-sim holds mdtest to the first curved MDT).
SATURATING_CONFIG = '''osts: 1
mdts: [{{index: 0, curve: {{peak_ops_s: 40, knee_threads: 2}}}}]
client_mount: {mount}
'''
# The knee doubles the rate whatever the machine. On the plateau a phase's rate is its items over the curve's time
# plus the launch's overhead O, which a loaded machine stretches: with 100 items per task, 2 tasks take 5 s + O and
# 4 tasks 10 s + O, so 4 tasks "gain" O / (10 s + O) on 2 - under the 20 % minimum for any O below 2.5 s (with 10
# items per task and 10 %, an overhead of 0.3 s under load already made 4 tasks gain 23 % and run 8).
ADAPTIVE_VARS = {
    'mdtest_sweep': 'adaptive', 'mdtest_tasks_per_node': [1, 2, 4, 8], 'mdtest_items': 100, 'mdtest_files_only': True,
    'mdtest_phases': ['create', 'remove'],
    'mdtest_sweep_min_gain_pct': 20,
    # about a minute of phases at the curve's rates; the shared 120 s would leave a loaded machine little room
    'iokit_timeout_s': 600,
}


@pytest.fixture
def saturating_client(tmp_path):
    made = SimulatedClient('mdtest', str(tmp_path))
    survey_vars = dict((name, value) for name, value in SURVEY_VARS.items() if name != 'mdtest_mdt_count')
    try:
        yield made.start(SATURATING_CONFIG, INVENTORY, dict(survey_vars, iokit_run_id='pbtest-mdtest-adaptive'))
    finally:
        made.destroy()


def test_an_adaptive_sweep_stops_past_the_mdts_knee_and_runs_fewer_points_than_the_full_sweep(saturating_client):
    checked = saturating_client.playbook('survey-mdtest.yml', '--check', extra=dict(
        ADAPTIVE_VARS, iokit_run_id='pbtest-mdtest-adaptive-check'))
    assert checked.returncode == 0, checked.stdout[-6000:]
    # the full sweep: 4 tasks-per-node points and 2 nodes at the best; the adaptive one may need all of them
    assert ('adaptive sweep: 5 points in the worst case (the full sweep, when every step keeps gaining), as few as 3'
            in checked.stdout), checked.stdout[-6000:]
    result = saturating_client.playbook('survey-mdtest.yml', extra=ADAPTIVE_VARS)
    assert result.returncode == 0, result.stdout[-6000:]
    envelope = saturating_client.envelope('pbtest-mdtest-adaptive')
    assert (envelope['status'], envelope['errors']) == ('ok', [])
    records = envelope['records']
    best = [record['tasks_per_node'] for record in records if record['best_tasks_per_node']]
    # 2 tasks double the rate of 1; 4 gain nothing more: 8 is not run. The nodes step still runs its 2 nodes.
    assert [(r['step'], r['nodes'], r['tasks_per_node']) for r in records] == [
        ('tasks_per_node', 1, 1), ('tasks_per_node', 1, 2), ('tasks_per_node', 1, 4), ('nodes', 2, best[0])]
    assert [item['point'] for item in envelope['skipped_points']] == [
        {'step': 'tasks_per_node', 'nodes': 1, 'tasks_per_node': 8}]
    assert envelope['skipped_points'][0]['reason'].startswith(('saturated at tasks_per_node 4: ',
                                                               'declined at tasks_per_node 4: '))
    sweep = envelope['sweep']
    assert (sweep['mode'], sweep['points_run'], sweep['points_full']) == ('adaptive', 4, 5)
    assert [stop['axis'] for stop in sweep['stops']][:1] == ['tasks_per_node']
    with open(os.path.join(saturating_client.results, 'pbtest-mdtest-adaptive', 'summary-mdtest.md'),
              encoding='utf-8') as handle:
        assert '- adaptive sweep: 4 of 5 points of the full sweep (80 %); tasks per node stopped: ' in handle.read()
    assert saturating_client.trees() == []


# Two points on the saturating MDT, each slow by construction: 1 task creates and removes 80 files at 20 ops/s
# (8 s), 2 tasks 160 files at 40 ops/s (8 s); the one-node point of the nodes step is the best of these, not run
# again. The wait polls every second; the shipped ansible.cfg sets the survey_progress callback. mdtest -i is set by
# its deprecated role variable, mdtest_iterations, which must still work and say what replaces it.
PROGRESS_VARS = {'mdtest_tasks_per_node': [1, 2], 'mdtest_nodes': [1], 'mdtest_items': 80, 'mdtest_iterations': 1,
                 'mdtest_files_only': True, 'mdtest_phases': ['create', 'remove'],
                 'mdtest_poll_interval_s': 1, 'iokit_run_id': 'pbtest-mdtest-progress'}
FLEET_LINE = re.compile(r'^mdtest: \d+ hosts?, (\d+)/(\d+) points \((\d+) %\),(?: slowest \S+ \d+ %,)? '
                        r'(ETA \d\d:\d\d \([^)]*\)|ETA unknown|done)$')


def test_each_poll_shows_the_points_done_of_the_planned_total(saturating_client):
    result = saturating_client.playbook('survey-mdtest.yml', extra=PROGRESS_VARS)
    assert result.returncode == 0, result.stdout[-6000:]
    lines = [match for match in (FLEET_LINE.match(line) for line in result.stdout.splitlines()) if match]
    # the planned total from the first poll on, and the count moving while the survey runs
    assert lines and set(match.group(2) for match in lines) == {'2'}, result.stdout[-6000:]
    running = [match for match in lines if match.group(4) != 'done']
    assert {'0', '1'} <= set(match.group(1) for match in running), result.stdout[-6000:]
    # an ETA once the first point has ended (mdtest has no rate to assume before)
    assert any(match.group(1) == '1' and match.group(4) != 'ETA unknown' for match in running), result.stdout[-6000:]
    envelope = saturating_client.envelope('pbtest-mdtest-progress')
    assert envelope['status'] == 'ok' and len(envelope['records']) == 2
    assert envelope['parameters']['repetitions'] == 1  # the role default is 3: the old name reached the module
    assert 'mdtest_iterations is the old name of mdtest_repetitions' in ' '.join(result.stdout.split())
