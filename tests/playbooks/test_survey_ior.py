# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/survey-ior.yml, run for real on this machine against a simulated Lustre client.

    .venv/bin/python -m pytest tests/playbooks/test_survey_ior.py -q -p no:cacheprovider

localhost launches; the clients group also holds a second client (never contacted: the simulator's mpirun and srun
run every rank here, counting nodes from the hostfile or -N). Both access patterns, both launchers, environment
modules; the tree is gone afterwards, and after a SIGKILLed ansible-playbook plus cleanup.yml. With three clients
and one capped by the simulator (ior.client_mib_s), report.yml names that client from IOR's per-task stamps.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from conftest import ANSIBLE_PLAYBOOK, LUSTRE_SIM, ROOT, WAIT_POLL_S, SimulatedClient, wait_for

from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState

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
'''

SIM_CONFIG = '''osts: 2
mdts: 1
ost_size_mib: 64
client_mount: {mount}
slurm: {{partitions: [batch, debug], accounts: [proj1], nodes: 2}}
modules: {{available: [gcc/12.2, openmpi, ior]}}
'''

SURVEY_VARS = {
    'iokit_timeout_s': 120, 'ior_block_size_mib': 1, 'ior_transfer_sizes_kib': [256, 512], 'ior_memory_factor': 0,
    'ior_tasks_per_node': [1, 2], 'ior_access': ['fpp', 'ssf'], 'ior_allow_run_as_root': True,
    'ior_poll_interval_s': WAIT_POLL_S, 'ior_async_margin_s': 30, 'ior_environment_modules': ['gcc', 'openmpi', 'ior'],
    # a login shell would reset PATH and lose the simulator's shims
    'ior_module_shell': ['/bin/sh', '-c'], 'ior_stripe_count': 2,
}


def processes_naming(word):
    """Processes whose command line holds ``word`` (the launcher and IOR name the test tree in theirs)."""
    found = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/cmdline' % entry, 'rb') as handle:
                command = handle.read().replace(b'\0', b' ').decode('utf-8', 'replace')
        except OSError:
            continue
        if word in command and 'ansible' not in command:
            found.append(int(entry))
    return found


@pytest.fixture(scope='module')
def client(tmp_path_factory):
    made = SimulatedClient('ior', str(tmp_path_factory.mktemp('survey-ior')))
    try:
        yield made.start(SIM_CONFIG, INVENTORY, SURVEY_VARS)
    finally:
        made.destroy()


@pytest.mark.parametrize('launcher', ['mpirun', 'srun'])
def test_the_sweep_runs_with_both_access_patterns_and_leaves_nothing(client, launcher):
    run_id = 'pbtest-ior-%s' % launcher
    extra = {'iokit_run_id': run_id, 'ior_launcher': launcher}
    if launcher == 'srun':
        extra.update(ior_partition='batch', ior_account='proj1')
    jobs_before = len(client.slurm_jobs())
    result = client.playbook('survey-ior.yml', extra=extra)
    assert result.returncode == 0, result.stdout[-6000:]
    envelope = client.envelope(run_id)
    assert (envelope['survey'], envelope['status'], envelope['errors']) == ('ior', 'ok', [])
    records = envelope['records']
    assert [(r['access'], r['nodes'], r['tasks_per_node'], r['transfer_kib']) for r in records] == [
        (access, nodes, ppn, xfer) for access in ('fpp', 'ssf') for nodes in (1, 2) for ppn in (1, 2)
        for xfer in (256, 512)]
    for record in records:
        assert (record['ior']['tasks'], record['ior']['nodes']) == (record['tasks'], record['nodes'])
        assert record['ior_write_mib_s'] > 0 and record['ior_read_mib_s'] > 0
    assert envelope['parameters']['hosts'] == ['localhost', 'client2']
    jobs = client.slurm_jobs()[jobs_before:]
    if launcher == 'srun':
        assert len(jobs) == len(records)
        assert {(job['partition'], job['account'], tuple(job['modules'])) for job in jobs} == {
            ('batch', 'proj1', ('gcc', 'openmpi', 'ior'))}
    else:
        assert jobs == []
    with open(os.path.join(client.results, run_id, 'summary-ior.md'), encoding='utf-8') as handle:
        summary = handle.read()
    assert '## localhost — ok' in summary and summary.count('| fpp |') == 8 and summary.count('| ssf |') == 8
    # nothing left: no tree on the mount, no recorded path, no hostfile
    assert client.trees() == []
    state = NodeState(client.workdir).read()
    assert state['paths'] == [] and state['processes'] == []


def test_check_mode_plans_points_and_bytes(client):
    checked = client.playbook('survey-ior.yml', '--check', extra={'iokit_run_id': 'pbtest-ior-check'})
    assert checked.returncode == 0, checked.stdout[-6000:]
    # 16 points; per phase 1 MiB per task: (1+2+2+4) tasks x 2 transfer sizes x 2 access patterns = 36 MiB
    assert '16 points; 0.04 GiB written and read' in checked.stdout
    assert client.trees() == []


def test_bad_variables_are_all_named_before_anything_runs(client):
    bad = client.playbook('survey-ior.yml', extra={'iokit_run_id': 'pbtest-ior-bad', 'ior_access': ['fpp', 'both'],
                                                   'ior_nodes': [1, 3], 'ior_partition': 'batch'})
    assert bad.returncode != 0
    for message in ("ior_access (['fpp', 'both']): each must be fpp or ssf",
                    'ior_nodes ([1, 3]): 3 nodes asked but hosts lists only 2',
                    'ior_partition, ior_account: Slurm settings need launcher srun'):
        assert message in bad.stdout, bad.stdout[-4000:]
    assert not os.path.exists(os.path.join(client.results, 'pbtest-ior-bad', 'localhost'))


def test_after_a_sigkill_cleanup_removes_the_tree_and_stops_ior(client):
    run_id = 'pbtest-ior-killed'
    client.sim('fault', '--root', client.root, 'add', 'hang', '--command', 'ior')
    try:
        client.kill_the_playbook_once(run_id, 'ior hanging in its marked tree', lambda: client.trees() == [
            'ior_' + run_id] and processes_naming('ior_' + run_id), DEADLINE_S)
        # the async module still runs on the node: the tree stays until the cleanup
        assert client.trees() == ['ior_' + run_id]
        cleanup = client.playbook('cleanup.yml', '--limit', 'localhost', extra={'cleanup_run_id': run_id})
        assert cleanup.returncode == 0, cleanup.stdout[-6000:]
    finally:
        client.sim('fault', '--root', client.root, 'clear', '--all')
    assert client.trees() == []
    wait_for('the launcher and ior to be gone', lambda: not processes_naming('ior_' + run_id), DEADLINE_S)


def test_a_rerun_of_a_killed_run_measures_only_the_points_it_left(client):
    run_id = 'pbtest-ior-resumed'
    points_file = os.path.join(client.workdir, run_id, 'ior.points.jsonl')
    # the first point (transfer 256 KiB) ends; the second (512 KiB) hangs until the kill
    client.kill_at_a_hang_and_clean_up(run_id, 'ior 512k', 'ior hanging at the second point', DEADLINE_S)
    wait_for('the launcher and ior to be gone', lambda: not processes_naming('ior_' + run_id), DEADLINE_S)
    # the cleanup keeps the point the killed attempt finished
    with open(points_file, encoding='utf-8') as handle:
        kept = [json.loads(line) for line in handle]
    assert [(line['attempt'], line['point']['transfer_kib']) for line in kept] == [(1, 256)]
    rerun = client.playbook('survey-ior.yml', extra={'iokit_run_id': run_id})
    assert rerun.returncode == 0, rerun.stdout[-6000:]
    envelope = client.envelope(run_id)
    assert (envelope['status'], envelope['errors']) == ('ok', [])
    points = [(r['access'], r['nodes'], r['tasks_per_node'], r['transfer_kib']) for r in envelope['records']]
    assert points == [(access, nodes, ppn, xfer) for access in ('fpp', 'ssf') for nodes in (1, 2) for ppn in (1, 2)
                      for xfer in (256, 512)]
    # the first point is the killed attempt's; the rerun measured the other 15 only, each once
    assert [r['attempt'] for r in envelope['records']] == [1] + [2] * 15
    # the cleanup stopped the first attempt (SIGTERM), which noted its end; the second started after it
    first, second = envelope['attempts']
    assert (first['attempt'], second['attempt']) == (1, 2) and second['finished'] is not None
    assert first['finished'] is None or second['started'] >= first['finished']
    assert client.trees() == []


def allocations(client):
    return client.state('slurm').get('allocations', [])


def leftovers(client, run_id):
    """What a job of the run could leave: a job not ended, an output file on the mount, a job script, an entry."""
    running = [job['job_id'] for job in allocations(client) if job['state'] in ('PENDING', 'RUNNING')]
    outputs = [os.path.join(top, name) for top, unused, names in os.walk(client.mount) for name in names
               if name.endswith('.out')]
    run_dir = os.path.join(client.workdir, run_id)
    scripts = [name for name in os.listdir(run_dir) if name.endswith('.sh')] if os.path.isdir(run_dir) else []
    entries = NodeState(client.workdir).read()['slurm_jobs']
    return running, outputs, scripts, entries


@pytest.mark.parametrize('allocation', ['salloc', 'sbatch'])
def test_srun_in_a_job_the_survey_makes_measures_and_leaves_no_job(client, allocation):
    run_id = 'pbtest-ior-%s' % allocation
    extra = {'iokit_run_id': run_id, 'ior_launcher': 'srun', 'ior_slurm_allocation': allocation,
             'ior_partition': 'batch', 'ior_account': 'proj1', 'ior_transfer_sizes_kib': [256]}
    before = len(allocations(client))
    steps_before = len(client.slurm_jobs())
    result = client.playbook('survey-ior.yml', extra=extra)
    assert result.returncode == 0, result.stdout[-6000:]
    envelope = client.envelope(run_id)
    assert (envelope['status'], envelope['errors']) == ('ok', [])
    records = envelope['records']
    assert [(r['access'], r['nodes'], r['tasks_per_node']) for r in records] == [
        (access, nodes, ppn) for access in ('fpp', 'ssf') for nodes in (1, 2) for ppn in (1, 2)]
    for record in records:
        assert (record['ior']['tasks'], record['ior']['nodes']) == (record['tasks'], record['nodes'])
        assert record['ior_write_mib_s'] > 0 and record['ior_read_mib_s'] > 0
    assert envelope['parameters']['slurm_allocation'] == allocation
    # one job per point, made for the point's nodes and tasks per node, in the partition and account asked
    jobs = allocations(client)[before:]
    assert [(job['kind'], job['nodes'], job['per_node'], job['partition'], job['account'], job['state'])
            for job in jobs] == [(allocation, r['nodes'], r['tasks_per_node'], 'batch', 'proj1', 'COMPLETED')
                                 for r in records]
    assert [job['name'] for job in jobs] == ['lustre-iokit-ior-%s-%d' % (run_id, n) for n in range(1, 9)]
    # the srun of each job ran as its step, in the shell that loaded the modules
    steps = client.slurm_jobs()[steps_before:]
    assert [(step['job_id'], step['nodes'], step['ntasks'], step['modules']) for step in steps] == [
        (job['job_id'], r['nodes'], r['tasks'], ['gcc', 'openmpi', 'ior']) for job, r in zip(jobs, records)]
    assert leftovers(client, run_id) == ([], [], [], [])
    assert client.trees() == []


def test_a_killed_sbatch_survey_leaves_no_job_after_cleanup(client):
    run_id = 'pbtest-ior-sbatch-killed'
    client.sim('fault', '--root', client.root, 'add', 'hang', '--command', 'ior')
    try:
        client.kill_the_playbook_once(run_id, 'ior hanging in a batch job', lambda: leftovers(client, run_id)[0] and (
            processes_naming('ior_' + run_id)), DEADLINE_S, extra={'ior_launcher': 'srun', 'ior_slurm_allocation': 'sbatch'})
        # the job outlives the controller (sbatch --wait of the still running module waits for it)
        running, unused_outputs, unused_scripts, entries = leftovers(client, run_id)
        assert len(running) == 1 and [entry['name'] for entry in entries] == ['lustre-iokit-ior-%s-1' % run_id]
        cleanup = client.playbook('cleanup.yml', '--limit', 'localhost', extra={'cleanup_run_id': run_id})
        assert cleanup.returncode == 0, cleanup.stdout[-6000:]
    finally:
        client.sim('fault', '--root', client.root, 'clear', '--all')
    assert leftovers(client, run_id) == ([], [], [], [])
    assert [job['state'] for job in allocations(client) if job['name'].startswith('lustre-iokit-ior-' + run_id)] == [
        'CANCELLED']
    assert client.trees() == []
    wait_for('the job and ior to be gone', lambda: not processes_naming('ior_' + run_id), DEADLINE_S)


THREE_CLIENTS = '''
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
        client3:
          ansible_connection: local
          ansible_python_interpreter: {python}
'''
# Every client capped so the figures do not depend on this machine: client3 at 1 MiB/s, the others at 16 MiB/s;
# 4 MiB per task then takes client3 at least 4 s a phase, the others a quarter of a second plus their overheads.
SLOW_CLIENT_CONFIG = SIM_CONFIG + 'ior: {{client_mib_s: {{localhost: 16, client2: 16, client3: 1}}}}\n'
SLOW_CLIENT_RUN_ID = 'pbtest-ior-slow-client'


@pytest.fixture(scope='module')
def slow_client(tmp_path_factory):
    made = SimulatedClient('ior', str(tmp_path_factory.mktemp('survey-ior-slow-client')))
    try:
        made.start(SLOW_CLIENT_CONFIG, THREE_CLIENTS, dict(
            SURVEY_VARS, iokit_run_id=SLOW_CLIENT_RUN_ID, ior_block_size_mib=4, ior_transfer_sizes_kib=[256],
            ior_tasks_per_node=[1], ior_access=['fpp'], ior_nodes=[3], ior_environment_modules=[],
            acceptance_default_criteria=True, fail_on_verdict=False))
        made.result = subprocess.run(made.argv('survey-ior.yml') + [os.path.join(ROOT, 'playbooks', 'report.yml')],
                                     cwd=ROOT, env=made.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     universal_newlines=True, check=False)
        yield made
    finally:
        made.destroy()


def test_a_throttled_client_is_named_by_the_report(slow_client):
    made = slow_client
    assert made.result.returncode == 0, made.result.stdout[-6000:]
    envelope = made.envelope(SLOW_CLIENT_RUN_ID)
    assert (envelope['status'], envelope['errors']) == ('ok', [])
    record, = envelope['records']
    # the launcher first, then the other clients (in no promised order): rank r on the r-th host of the hostfile
    assert record['placement'] and [c['host'] for c in record['per_client']] == record['hosts']
    assert record['hosts'][0] == 'localhost' and sorted(record['hosts']) == ['client2', 'client3', 'localhost']
    assert [c['tasks'] for c in record['per_client']] == [[0], [1], [2]]
    by_host = dict((c['host'], c) for c in record['per_client'])
    for test in ('write', 'read'):
        # by construction: client3 can never pass 1 MiB/s, and nobody can pass its cap
        assert 0 < by_host['client3']['ior_%s_mib_s' % test] <= 1.0
        assert all(0 < c['ior_%s_mib_s' % test] <= 16.0 for c in record['per_client'])
    with open(os.path.join(made.results, SLOW_CLIENT_RUN_ID, 'analysis.json'), encoding='utf-8') as handle:
        analysis = json.load(handle)
    slow = [row for row in analysis['findings'] if row['subject'] == 'localhost/client3']
    assert {(row['kind'], row['metric']) for row in slow} == {
        ('client', 'ior_client_write_mib_s'), ('client', 'ior_client_read_mib_s')}, analysis['findings']
    with open(os.path.join(made.results, SLOW_CLIENT_RUN_ID, 'verdict.json'), encoding='utf-8') as handle:
        verdict = json.load(handle)
    assert verdict['verdict'] == 'failed'
    assert any(case['status'] == 'failed' and 'client3' in case['subject'] for case in verdict['cases']), verdict
    with open(os.path.join(made.results, SLOW_CLIENT_RUN_ID, 'summary.md'), encoding='utf-8') as handle:
        summary = handle.read()
    first = summary.index('\n## ')
    assert summary[first:].startswith('\n## Findings')
    assert 'localhost/client3' in summary[first:summary.index('\n## ', first + 1)]
    assert 'ior: host aggregates only' not in summary
