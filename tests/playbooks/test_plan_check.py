# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``acceptance.yml --check`` prints the run's plan: every stage's hosts, points, bytes and duration added up.

    .venv/bin/python -m pytest tests/playbooks/test_plan_check.py -q -p no:cacheprovider

Two simulated nodes, each an OSS and an MDS of its own; the obdfilter and mds stages are planned.  First with an
empty results store (every estimate assumed, and said so); then, after a real obdfilter run of both nodes is
stored, the obdfilter estimates come from that run (named) while mds stays assumed.  Nothing asserts a duration's
value: only where it comes from and that the totals are there.
"""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from conftest import COLLECTIONS, LUSTRE_SIM, ROOT, VENV_BIN, WAIT_POLL_S, simulated_local_host

from test_survey_playbooks import ANSIBLE_PLAYBOOK

from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import envelope_path, read_envelope

pytestmark = pytest.mark.skipif(LUSTRE_SIM is None or not os.access(ANSIBLE_PLAYBOOK, os.X_OK),
                                reason='needs the checkout venv (make setup) with lustre-sim')

HOSTS = ('node1', 'node2')
STORED_RUN = 'pbtest-plan-stored'
VARS = {
    'iokit_timeout_s': 300,
    'obdfilter_size_mib': 4, 'obdfilter_nobjhi': 1, 'obdfilter_thrhi': 2, 'obdfilter_tests': ['write', 'read'],
    'obdfilter_poll_interval_s': WAIT_POLL_S, 'obdfilter_async_margin_s': 30,
    'mds_thrlo': 1, 'mds_thrhi': 1, 'mds_file_count': 100,
    'mds_poll_interval_s': WAIT_POLL_S, 'mds_async_margin_s': 30,
    'acceptance_run_prepare': False, 'acceptance_run_ost': False, 'acceptance_run_lnet': False,
    'acceptance_run_mdtest': False,
}
# obdfilter: thr 1 and 2 on one object, two OSTs of 4 MiB written per point: 16 MiB per host
OBDFILTER_LINE = r'  {host}: 2 points, 16 MiB written, about [^(]+ \({basis}\)'


@pytest.fixture(scope='module')
def fleet(tmp_path_factory):
    base = str(tmp_path_factory.mktemp('plan-check'))
    hosts = {}
    for name in HOSTS:
        hosts[name] = simulated_local_host(base, name, '--osts', '2', '--mdts', '1', '--ost-size-mib', '64')
    inventory = os.path.join(base, 'inventory.json')
    with open(inventory, 'w', encoding='utf-8') as handle:
        json.dump({'all': {'children': {'oss': {'hosts': hosts}, 'mds': {'hosts': dict((name, {}) for name in HOSTS)},
                                        'clients': {'hosts': {}}}}}, handle)
    extra = os.path.join(base, 'vars.json')
    results = os.path.join(base, 'results')
    with open(extra, 'w', encoding='utf-8') as handle:
        json.dump(dict(VARS, iokit_results_dir=results), handle)

    def playbook(name, *options, run_id):
        env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS,
                   ANSIBLE_NOCOLOR='1', ANSIBLE_FORCE_COLOR='0', ANSIBLE_PIPELINING='1',
                   PATH=VENV_BIN + os.pathsep + os.environ['PATH'])
        argv = [ANSIBLE_PLAYBOOK, '-i', inventory, '-e', '@' + extra, '-e', 'iokit_run_id=' + run_id]
        argv += list(options) + [os.path.join(ROOT, 'playbooks', name)]
        return subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, check=False)

    made = {'results': results}
    made['assumed'] = playbook('acceptance.yml', '--check', run_id='pbtest-plan-1')
    made['stored'] = playbook('survey-obdfilter.yml', run_id=STORED_RUN)
    made['measured'] = playbook('acceptance.yml', '--check', run_id='pbtest-plan-2')
    made['fast'] = playbook('acceptance.yml', '--check', '-e', 'iokit_sweep_profile=fast', '-e',
                            'obdfilter_point_min_mib=8', run_id='pbtest-plan-fast')
    try:
        yield made
    finally:
        for name in HOSTS:
            subprocess.run([LUSTRE_SIM, 'destroy', '--root', os.path.join(base, name)], check=False,
                           stdout=subprocess.DEVNULL)


def run_plan(output):
    """The lines of the run's plan (the last play's message) in the output."""
    start = output.index('run plan: ')
    return [line.strip().strip('",').strip() for line in output[start:].splitlines()[:len(HOSTS) + 1]]


def test_check_mode_prints_the_run_plan_summed_over_the_stages(fleet):
    output = fleet['assumed'].stdout
    assert fleet['assumed'].returncode == 0, output[-6000:]
    plan = run_plan(output)
    # the fast profile's worst case beside it (obdfilter has bounded points; its estimate's arithmetic is the unit
    # tests')
    assert re.match(r'^run plan: 2 surveys on 2 hosts, \d+ points, 32 MiB written, about .+ \(surveys one after '
                    r'another: obdfilter about .+, mds about .+\); fast profile at most .+ than the full grid\)$',
                    plan[0]), plan
    for host, line in zip(HOSTS, plan[1:]):
        assert re.match(r'^%s: obdfilter, mds, \d+ points, 16 MiB written, about ' % host, line), plan
    # each survey's fleet line and host lines, the rate assumed and its source named
    assert re.search(r'obdfilter plan: 2 hosts, 4 points, 32 MiB written, about < 1 min', output), output[-6000:]
    for host in HOSTS:
        assert re.search(OBDFILTER_LINE.format(host=host, basis=r'assumed 500 MiB/s per OST \(plan_ost_mib_s\)'),
                         output), output[-6000:]
        assert re.search(r'  %s: 1 points, 0 B written, about < 1 min \(assumed 5000 operations/s per MDT '
                         r'\(built-in guess\)\)' % host, output), output[-6000:]
    assert 'from run' not in output


def test_the_fast_profile_reaches_every_surveys_module_and_its_plan_shows_the_saving(fleet):
    output = fleet['fast'].stdout
    assert fleet['fast'].returncode == 0, output[-6000:]
    # obdfilter's module got the profile's adaptive sweep and 20 s points, above the floor given
    assert len(re.findall(r'"time-bounded points: 20 s per test, floor point_min_mib 8 MiB per OST', output)) == len(
        HOSTS), output[-6000:]
    assert len(re.findall(r'adaptive sweep: up to the full grid \(2 points', output)) >= len(HOSTS), output[-6000:]
    for host in HOSTS:
        assert re.search(r'  %s: 2 points, 16 MiB written, about [^;]+; adaptive sweep: [^;]+; fast profile at most '
                         r'.+ \(20 s per test, floor 8 per target: point_min_mib 8 MiB per OST\)' % host,
                         output), output[-6000:]
    assert 'fast profile at most' in run_plan(output)[0]


def test_check_mode_shows_each_hosts_plan_in_the_modules_words(fleet):
    output = fleet['assumed'].stdout
    # the lines the survey modules return with their plans (plan.lines), after the estimate
    assert len(re.findall(r'"skipped points: 0; per OST: ', output)) == len(HOSTS), output[-6000:]
    assert len(re.findall(r'"thread counts to run: \[1\]",\s+"MDTs: \[', output)) == len(HOSTS), output[-6000:]
    assert len(re.findall(r'"files per MDT per point: \{1: \d+\}"', output)) == len(HOSTS), output[-6000:]


def test_a_stored_run_gives_the_next_plan_its_measured_rate(fleet):
    assert fleet['stored'].returncode == 0, fleet['stored'].stdout[-6000:]
    for host in HOSTS:
        envelope = read_envelope(envelope_path(fleet['results'], STORED_RUN, host, 'obdfilter'))
        assert envelope['status'] == 'ok'
        assert envelope['plan_work'] == {'points': 2, 'amount': 16.0, 'unit': 'MiB per OST'}
    output = fleet['measured'].stdout
    assert fleet['measured'].returncode == 0, output[-6000:]
    for host in HOSTS:
        assert re.search(OBDFILTER_LINE.format(
            host=host, basis=r'from run %s of \d{4}-\d\d-\d\d \([0-9.]+ MiB/s per OST measured\)' % STORED_RUN),
            output), output[-6000:]
        # nothing stored for mds: still assumed
        assert re.search(r'  %s: 1 points, 0 B written, about < 1 min \(assumed 5000' % host, output)
    assert run_plan(output)[0].startswith('run plan: 2 surveys on 2 hosts')
