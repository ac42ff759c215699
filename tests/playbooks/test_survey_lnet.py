# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/survey-lnet.yml, run for real on this machine against a simulated LNet.

    .venv/bin/python -m pytest tests/playbooks/test_survey_lnet.py -q -p no:cacheprovider

localhost is the oss and the clients group: the first run reads its NID with lctl list_nids (the same NID
for both groups); the second gives four NIDs (three servers), one of them with a slow link, and runs each server alone too.
Both runs are imports of the unchanged playbook in one ansible-playbook call.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import COLLECTIONS, ROOT, WAIT_POLL_S

from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import envelope_path, read_envelope

VENV_BIN = os.path.join(ROOT, '.venv', 'bin')
LUSTRE_SIM = shutil.which('lustre-sim', path=VENV_BIN + os.pathsep + os.environ.get('PATH', ''))
ANSIBLE_PLAYBOOK = os.path.join(VENV_BIN, 'ansible-playbook')
SIM_NID = '192.168.1.10@tcp'
SERVERS = ['10.0.0.1@tcp', '10.0.0.2@tcp', '10.0.0.4@tcp']  # three: a component needs two peers to be judged
CLIENTS = ['10.0.0.3@tcp']
SLOW_NID = '10.0.0.2@tcp'
# Owners given for NIDs the role cannot read (lnet_nid_owners); one outside the test's groups
OWNERS = {'10.0.0.1@tcp': 'oss-a', '10.0.0.3@tcp': 'client-a', '10.0.0.9@tcp': 'elsewhere'}

pytestmark = pytest.mark.skipif(LUSTRE_SIM is None or not os.access(ANSIBLE_PLAYBOOK, os.X_OK),
                                reason='needs the checkout venv (make setup) with lustre-sim')

INVENTORY = '''
all:
  hosts:
    localhost:
      ansible_connection: local
      ansible_python_interpreter: {python}
  children:
    oss: {{hosts: {{localhost: }}}}
    clients: {{hosts: {{localhost: }}}}
'''

SIM_CONFIG = '''
lnet:
  link_mib_s: 1000
  per_nid:
    "{slow}": 100
'''

COMMON = {'iokit_timeout_s': 600, 'lnet_modes': ['read', 'ping'], 'lnet_sizes': ['1m'], 'lnet_stat_count': 1,
          'lnet_stat_delay_s': 1, 'lnet_poll_interval_s': WAIT_POLL_S, 'lnet_async_margin_s': 30}

# The unchanged playbook twice: NIDs discovered, then given with each server alone and the run's report.
RUNS = '''
- name: NIDs read with lctl list_nids
  ansible.builtin.import_playbook: {playbook}
  vars:
    iokit_run_id: lnet-discovered

- name: NIDs given, each server alone too
  ansible.builtin.import_playbook: {playbook}
  vars:
    iokit_run_id: lnet-given
    lnet_server_nids: {servers}
    lnet_client_nids: {clients}
    lnet_nid_owners: {owners}
    lnet_split: [all, each_server]
    iokit_report: true
'''


class Cluster:
    def __init__(self, base):
        self.base = base
        self.root = os.path.join(base, 'node')
        self.results = os.path.join(base, 'results')
        self.workdir = os.path.join(base, 'work')

    def sim(self, *args):
        return subprocess.run([LUSTRE_SIM] + list(args), check=True, stdout=subprocess.PIPE,
                              universal_newlines=True).stdout

    def status(self):
        return json.loads(self.sim('status', '--root', self.root))

    def write(self, name, text):
        path = os.path.join(self.base, name)
        with open(path, 'w', encoding='utf-8') as handle:
            handle.write(text)
        return path

    def playbook(self, playbook, extra_vars, *options):
        env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS,
                   ANSIBLE_PIPELINING='1', ANSIBLE_NOCOLOR='1', ANSIBLE_FORCE_COLOR='0', LUSTRE_SIM_ROOT=self.root,
                   PATH=os.path.join(self.root, 'bin') + os.pathsep + VENV_BIN + os.pathsep + os.environ['PATH'])
        argv = [ANSIBLE_PLAYBOOK, '-i', self.inventory, '-e', '@' + extra_vars] + list(options) + [playbook]
        return subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, check=False)

    def envelope(self, run_id):
        return read_envelope(envelope_path(self.results, run_id, 'localhost', 'lnet'))

    def summary(self, run_id):
        with open(os.path.join(self.results, run_id, 'summary-lnet.md'), encoding='utf-8') as handle:
            return handle.read()


@pytest.fixture(scope='module')
def cluster(tmp_path_factory):
    made = Cluster(str(tmp_path_factory.mktemp('survey-lnet')))
    config = made.write('sim.yml', SIM_CONFIG.format(slow=SLOW_NID))
    made.sim('init', '--root', made.root, '--config', config, '--osts', '1', '--mdts', '1', '--force')
    try:
        made.inventory = made.write('inventory.yml', INVENTORY.format(python=sys.executable))
        settings = dict(COMMON, iokit_results_dir=made.results, iokit_workdir=made.workdir)
        made.extra_vars = made.write('vars.json', json.dumps(settings))
        runs = made.write('runs.yml', RUNS.format(playbook=os.path.join(ROOT, 'playbooks', 'survey-lnet.yml'),
                                                  servers=json.dumps(SERVERS), clients=json.dumps(CLIENTS),
                                                  owners=json.dumps(OWNERS)))
        made.run = made.playbook(runs, made.extra_vars)
        yield made
    finally:
        subprocess.run([LUSTRE_SIM, 'destroy', '--root', made.root], check=False, stdout=subprocess.DEVNULL)


def test_both_runs_succeed_and_store_valid_envelopes(cluster):
    assert cluster.run.returncode == 0, cluster.run.stdout[-6000:]
    for run_id in ('lnet-discovered', 'lnet-given'):
        envelope = cluster.envelope(run_id)
        assert (envelope['survey'], envelope['host'], envelope['status'], envelope['errors']) == (
            'lnet', 'localhost', 'ok', [])
        raw = os.listdir(os.path.join(cluster.results, run_id, 'localhost'))
        assert sorted(raw) == ['lnet.json', 'lst_survey.detail', 'lst_survey.summary'], raw


def test_nids_are_read_with_lctl_list_nids(cluster):
    envelope = cluster.envelope('lnet-discovered')
    assert envelope['parameters']['servers'] == [SIM_NID] and envelope['parameters']['clients'] == [SIM_NID]
    assert [record['mode'] for record in envelope['records']] == ['read_1m', 'ping']
    assert all(record['servers'] == [SIM_NID] for record in envelope['records'])
    # the host the role read each NID on, recorded for the history (<owner>/<nid>)
    assert envelope['environment']['nid_owners'] == {SIM_NID: 'localhost'}


def test_given_nids_record_the_owners_given_for_the_groups(cluster):
    assert cluster.envelope('lnet-given')['environment']['nid_owners'] == {
        '10.0.0.1@tcp': 'oss-a', '10.0.0.3@tcp': 'client-a'}


def test_given_nids_with_each_server_alone_single_out_the_slow_nic(cluster):
    envelope = cluster.envelope('lnet-given')
    records = envelope['records']
    assert [(record['split'], record['servers'], record['mode']) for record in records] == [
        ('all', SERVERS, 'read_1m'), ('all', SERVERS, 'ping')] + [
        ('each_server', [nid], mode) for nid in SERVERS for mode in ('read_1m', 'ping')]
    alone = dict((record['servers'][0], record['write_mib_s']) for record in records
                 if record['split'] == 'each_server' and record['mode'] == 'read_1m')
    assert alone[SLOW_NID] < 0.5 * alone[SERVERS[0]], alone
    summary = cluster.summary('lnet-given')
    slow_rows = [line for line in summary.splitlines() if line.startswith('|') and '**slow**' in line]
    # Slow against the other server in the same test, and against the other server tested alone.
    assert [line.split('|')[1].strip() for line in slow_rows] == ['all', 'each_server'], summary
    assert all('`%s` | server |' % SLOW_NID in line for line in slow_rows), summary
    assert '| split | servers | clients | mode | Read MiB/s | Read RPC/s | Write MiB/s | Write RPC/s |' in summary


def test_the_report_has_the_lnet_samples(cluster):
    with open(os.path.join(cluster.results, 'lnet-given', 'report.json'), encoding='utf-8') as handle:
        samples = [json.loads(line) for line in handle if line.strip()]
    lnet = [sample for sample in samples if sample.get('survey') == 'lnet']
    assert set(sample.get('target') for sample in lnet) == {None, *SERVERS, *CLIENTS}
    assert set(sample['metric'] for sample in lnet) == {'lnet_read_mib_s', 'lnet_write_mib_s'}


def test_the_report_finds_the_slow_nid_among_the_servers(cluster):
    with open(os.path.join(cluster.results, 'lnet-given', 'analysis.json'), encoding='utf-8') as handle:
        findings = json.load(handle)['findings']
    assert {(row['kind'], row['target']) for row in findings} == {('NID', SLOW_NID)}, findings
    with open(os.path.join(cluster.results, 'lnet-given', 'summary.md'), encoding='utf-8') as handle:
        summary = handle.read()
    assert SLOW_NID in summary.split('## Findings', 1)[1].split('\n## ', 1)[0]


def test_nothing_is_left_on_the_node(cluster):
    status = cluster.status()
    assert status['lst']['session'] is None
    assert 'lnet_selftest' not in status['modules']
    assert not os.path.exists(os.path.join(cluster.workdir, 'state.json'))
    node_state = os.path.join(cluster.workdir, 'node-state.json')
    if os.path.exists(node_state):
        with open(node_state, encoding='utf-8') as handle:
            state = json.load(handle)
        assert all(state[kind] == [] for kind in ('modules', 'lst_sessions', 'processes', 'paths')), state


def test_check_mode_loads_nothing_and_stores_nothing(cluster):
    checked = cluster.playbook(os.path.join(ROOT, 'playbooks', 'survey-lnet.yml'), cluster.extra_vars, '--check',
                               '-e', 'iokit_run_id=lnet-check')
    assert checked.returncode == 0, checked.stdout[-6000:]
    assert 'tests: [\'read_1m\', \'ping\']' in checked.stdout
    assert not os.path.exists(os.path.join(cluster.results, 'lnet-check'))
    assert 'lnet_selftest' not in cluster.status()['modules']


def _iokit_dirs():
    """Directories holding lst-survey and lst.sh: LUSTRE_IOKIT_DIR itself or its per-tag subdirectories."""
    base = os.environ.get('LUSTRE_IOKIT_DIR')
    if not base or not os.path.isdir(base):
        return []
    candidates = [base] + sorted(os.path.join(base, name) for name in os.listdir(base))
    return [path for path in candidates if os.path.isfile(os.path.join(path, 'lst-survey'))
            and os.path.isfile(os.path.join(path, 'lst.sh'))]


@pytest.mark.skipif(not _iokit_dirs(), reason='LUSTRE_IOKIT_DIR with lst-survey and lst.sh (2.16+) not given')
@pytest.mark.parametrize('iokit_dir', _iokit_dirs())
def test_engine_iokit_runs_the_real_lst_survey_and_agrees_with_native(tmp_path, iokit_dir):
    root = str(tmp_path / 'node')
    subprocess.run([LUSTRE_SIM, 'init', '--root', root, '--lustre-version', '2.16.1', '--osts', '1', '--mdts', '1',
                    '--force'], check=True, stdout=subprocess.DEVNULL)
    scripts = tmp_path / 'iokit'
    scripts.mkdir()
    for name in ('lst-survey', 'lst.sh'):
        shutil.copy(os.path.join(iokit_dir, name), str(scripts / name))
        os.chmod(str(scripts / name), 0o755)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_NOCOLOR='1',
               LUSTRE_SIM_ROOT=root, PATH=os.pathsep.join([os.path.join(root, 'bin'), str(scripts), VENV_BIN,
                                                           os.environ['PATH']]))
    results = {}
    try:
        for engine in ('native', 'iokit'):
            args = {'servers': SERVERS, 'clients': CLIENTS, 'modes': ['read', 'ping'], 'sizes': ['4k'],
                    'stat_count': 1, 'stat_delay_s': 1, 'split': ['all', 'each_server'], 'engine': engine,
                    'workdir': str(tmp_path / 'work')}
            done = subprocess.run([os.path.join(VENV_BIN, 'ansible'), 'localhost', '-c', 'local', '-o', '-e',
                                   'ansible_python_interpreter=%s' % sys.executable, '-m', 'lustre.iokit.lst_survey',
                                   '-a', json.dumps(args)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                  universal_newlines=True, check=False)
            assert done.returncode == 0, done.stdout[-4000:]
            results[engine] = json.loads(done.stdout.split('=>', 1)[1])
    finally:
        subprocess.run([LUSTRE_SIM, 'destroy', '--root', root], check=False, stdout=subprocess.DEVNULL)
    native, iokit = results['native'], results['iokit']
    assert iokit['status'] == 'ok' and iokit['engine'] == 'iokit'
    assert [(r['split'], r['servers'], r['mode']) for r in iokit['records']] == [
        (r['split'], r['servers'], r['mode']) for r in native['records']]
    # lst-survey truncates its averages to integers; the model's figures are steady.
    for mine, theirs in zip(native['records'], iokit['records']):
        assert int(mine['write_mib_s']) == theirs['write_mib_s'] and int(mine['read_rpc_s']) == theirs['read_rpc_s']
