# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The obdfilter, mds and ost survey playbooks, run for real on this machine against a simulated Lustre node.

    .venv/bin/python -m pytest tests/playbooks -q -p no:cacheprovider

localhost is in every group; the simulator's shims come first on the PATH that ansible-playbook (local
connection) hands to the modules.  OST0001 is slow by construction: every MiB it moves waits 4 s on top of the
real I/O (SLOW_MIB_S), whatever else the machine runs; the other OSTs are unthrottled, so it is the lowest however
loaded the machine is.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from conftest import ANSIBLE_BIN, LUSTRE_SIM, NODE_PYTHON, ROOT, WAIT_POLL_S, SimulatedNode

from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import envelope_path, read_envelope

ANSIBLE_PLAYBOOK = os.path.join(ANSIBLE_BIN, 'ansible-playbook')
RUN_ID = 'pbtest-1'
SLOW_OST = 'testfs-OST0001'
SLOW_MIB_S = '0.25'
# The throttle is a floor on each transfer's time; the margin is for the rounding of the printed rates.
SLOW_CEILING = float(SLOW_MIB_S) * 1.05
SURVEYS = ('obdfilter', 'mds', 'ost')

pytestmark = pytest.mark.skipif(LUSTRE_SIM is None or not os.access(ANSIBLE_PLAYBOOK, os.X_OK),
                                reason='needs the checkout venv (make setup) with lustre-sim')

INVENTORY = '''
all:
  hosts:
    localhost:
      ansible_connection: local
      ansible_python_interpreter: {python}
  children:
    mgs: {{hosts: {{localhost: }}}}
    mds: {{hosts: {{localhost: }}}}
    oss: {{hosts: {{localhost: }}}}
    clients: {{hosts: {{localhost: }}}}
'''

# The smallest sweeps that still measure every test: one point each, a few MiB per OST.
SURVEY_VARS = {
    'iokit_timeout_s': 600,
    'obdfilter_size_mib': 4, 'obdfilter_nobjhi': 1, 'obdfilter_thrhi': 1, 'obdfilter_tests': ['write', 'read'],
    'obdfilter_poll_interval_s': WAIT_POLL_S, 'obdfilter_async_margin_s': 30,
    'mds_thrlo': 1, 'mds_thrhi': 1, 'mds_file_count': 100,
    'mds_poll_interval_s': WAIT_POLL_S, 'mds_async_margin_s': 30,
    'ost_size_mib': 4, 'ost_poll_interval_s': WAIT_POLL_S, 'ost_async_margin_s': 30,
}


class Cluster(SimulatedNode):
    """The survey playbooks' simulated server node (every group is localhost), run with the ansible-core line under
    test (ANSIBLE_BIN: the checkout's, or the core matrix's) and ``key=value`` extra variables."""

    def playbook(self, *playbooks, extra=None):
        argv = [ANSIBLE_PLAYBOOK, '-i', self.inventory, '-e', '@' + self.extra_vars]
        for key, value in (extra or {}).items():
            argv += ['-e', '%s=%s' % (key, value)]
        argv += [os.path.join(ROOT, 'playbooks', name) for name in playbooks]
        return subprocess.run(argv, cwd=ROOT, env=self.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, check=False)

    def envelope(self, survey):
        return read_envelope(envelope_path(self.results, RUN_ID, 'localhost', survey))

    def summary(self, survey):
        with open(os.path.join(self.results, RUN_ID, 'summary-%s.md' % survey), encoding='utf-8') as handle:
            return handle.read()


@pytest.fixture(scope='module')
def cluster(tmp_path_factory):
    made = Cluster(str(tmp_path_factory.mktemp('survey-playbooks')))
    made.sim('init', '--root', made.root, '--osts', '3', '--mdts', '1', '--ost-size-mib', '64',
             '--ost-mib-s-override', SLOW_OST.split('-')[1] + '=' + SLOW_MIB_S,
             '--client-mount', made.mount, '--force')
    try:
        with open(made.inventory, 'w', encoding='utf-8') as handle:
            handle.write(INVENTORY.format(python=NODE_PYTHON))
        with open(made.extra_vars, 'w', encoding='utf-8') as handle:
            # 1 MiB per OST: 4 s per test on the slow OST.
            json.dump(dict(SURVEY_VARS, obdfilter_size_mib=1, ost_size_mib=1, iokit_results_dir=made.results,
                           iokit_workdir=made.workdir, iokit_run_id=RUN_ID, ost_mount_point=made.mount), handle)
        # One ansible-playbook run for the three surveys: the playbooks are what the fleet runs, unchanged.
        made.first_run = made.playbook('survey-obdfilter.yml', 'survey-mds.yml', 'survey-ost.yml')
        yield made
    finally:
        subprocess.run([LUSTRE_SIM, 'destroy', '--root', made.root], check=False, stdout=subprocess.DEVNULL)


def test_the_surveys_ran_and_every_envelope_is_stored_and_valid(cluster):
    assert cluster.first_run.returncode == 0, cluster.first_run.stdout[-6000:]
    for survey in SURVEYS:
        envelope = cluster.envelope(survey)
        assert (envelope['survey'], envelope['run_id'], envelope['host'], envelope['status']) == (
            survey, RUN_ID, 'localhost', 'ok')
        assert envelope['records'] and envelope['errors'] == []
        raw = os.listdir(os.path.join(cluster.results, RUN_ID, 'localhost'))
        assert any(name.startswith(survey) and not name.endswith('.json') for name in raw), raw


def test_the_throttled_ost_is_the_slowest_in_the_per_ost_figures(cluster):
    # Only the order is asserted: the unthrottled OSTs run at whatever the machine gives.
    obdfilter = cluster.envelope('obdfilter')
    for record in obdfilter['records']:
        for test in ('write', 'read'):
            rates = dict((ost, figures[test]['mib_s']) for ost, figures in record['per_ost'].items())
            others = [rate for ost, rate in rates.items() if ost != SLOW_OST]
            assert len(others) == 2 and rates[SLOW_OST] < min(others), (test, rates)
            assert rates[SLOW_OST] <= SLOW_CEILING, (test, rates)

    ost = cluster.envelope('ost')['records'][0]
    assert ost['write']['worst']['ost'] == 1 and ost['read']['worst']['ost'] == 1
    for test in ('write', 'read'):
        rates = dict((row['ost'], row[test + '_mib_s']) for row in ost['osts'])
        assert rates[1] < min(rates[0], rates[2]) and rates[1] <= SLOW_CEILING, (test, rates)


def test_the_summaries_are_rendered(cluster):
    obdfilter = cluster.summary('obdfilter')
    assert '## localhost — ok' in obdfilter and '### localhost per OST' in obdfilter
    assert '## Fleet total per sweep point' in obdfilter
    slowest = obdfilter.split('## Slow OSTs', 1)[1]
    first_write_row = [line for line in slowest.splitlines() if line.startswith('| obdfilter_write_mib_s |')][0]
    assert '`%s`' % SLOW_OST in first_write_row and '**slow**' in first_write_row
    # The host table follows obdfilter-survey's column order.
    assert '| ost | sz (KiB) | rsz (KiB) | obj | thr | write | write [min, max] | read | read [min, max] |' in obdfilter

    mds = cluster.summary('mds')
    assert '## localhost — ok' in mds and '`testfs-MDT0000`' in mds and '## Fleet total per thread count' in mds
    assert '| mdt | file | dir | thr | create |' in mds

    ost = cluster.summary('ost')
    assert '| Ost# | Read (MiB/s) | Write (MiB/s) | Read-time | Write-time |' in ost
    slow_rows = [line for line in ost.split('## Slow OSTs', 1)[1].splitlines() if line.endswith('**slow** |')]
    assert slow_rows and all('`%s`' % SLOW_OST in line for line in slow_rows)


def test_nothing_is_left_on_the_node(cluster):
    status = cluster.status()
    assert [device['name'] for device in status['devices'] if device['type'] == 'echo_client'] == []
    assert 'obdecho' not in status['modules']
    assert [helper['command'] for helper in status['helpers']] == ['lustre-sim client mount %s' % cluster.mount]
    assert not os.path.exists(os.path.join(cluster.workdir, 'state.json'))
    node_state = os.path.join(cluster.workdir, 'node-state.json')
    if os.path.exists(node_state):
        with open(node_state, encoding='utf-8') as handle:
            state = json.load(handle)
        assert all(state[kind] == [] for kind in ('modules', 'echo_clients', 'processes', 'paths')), state
    assert [name for name in os.listdir(cluster.mount) if name.startswith('ost_survey')] == []


def test_a_rerun_with_the_same_run_id_skips_the_hosts_already_ok(cluster):
    before = dict((survey, cluster.envelope(survey)) for survey in SURVEYS)
    rerun = cluster.playbook('survey-obdfilter.yml', 'survey-mds.yml', 'survey-ost.yml', extra={'iokit_report': 'true'})
    assert rerun.returncode == 0, rerun.stdout[-6000:]
    for survey in SURVEYS:
        assert '%s on localhost is already ok in run %s' % (survey, RUN_ID) in rerun.stdout
        assert cluster.envelope(survey) == before[survey]
    assert 'Start the survey on every host at once' not in rerun.stdout
    # iokit_report=true ends each survey playbook with roles/report over the whole run.
    with open(os.path.join(cluster.results, RUN_ID, 'report.json'), encoding='utf-8') as handle:
        surveys_reported = set(json.loads(line)['survey'] for line in handle if line.strip())
    assert surveys_reported == set(SURVEYS)


def test_bad_obdfilter_variables_are_all_named_before_any_node_is_touched(cluster):
    bad = cluster.playbook('survey-obdfilter.yml', extra={
        'iokit_run_id': 'pbtest-bad-vars', 'obdfilter_thrlo': 4, 'obdfilter_thrhi': 2, 'obdfilter_slow_share': 2})
    assert bad.returncode != 0
    # Every problem in one message, one line each, starting with the variable that is wrong and its value.
    # (ansible-core 2.19+ prints the message as it is; older ones show it in JSON, with its newlines escaped).
    text = bad.stdout.replace('\\n', '\n')
    # The lines of the module's and engine's own checks (lustre.iokit.survey_problems), then the role's.
    assert 'obdfilter_thrlo (4): 4 is greater than obdfilter_thrhi (2)\n' in text
    assert '\nobdfilter_slow_share (2): must be in (0, 1]' in text
    assert 'Start the survey on every host at once' not in bad.stdout
    assert not os.path.exists(os.path.join(cluster.results, 'pbtest-bad-vars'))
    assert not os.path.exists(os.path.join(cluster.workdir, 'pbtest-bad-vars'))
    assert [device['name'] for device in cluster.status()['devices'] if device['type'] == 'echo_client'] == []


def test_the_cleanup_playbook_removes_a_leftover_echo_client(cluster):
    cluster.sim('fault', '--root', cluster.root, 'add', 'leftover_echo_client', '--target', 'testfs-OST0002')
    assert 'testfs-OST0002_ecc' in [device['name'] for device in cluster.status()['devices']]
    cleanup = cluster.playbook('cleanup.yml')
    assert cleanup.returncode == 0, cleanup.stdout[-6000:]
    assert [device['name'] for device in cluster.status()['devices'] if device['type'] == 'echo_client'] == []
