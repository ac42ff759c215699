# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/acceptance.yml with its IOR stage, on a simulated Lustre client on this machine.

    .venv/bin/python -m pytest tests/playbooks/test_acceptance_ior.py -q -p no:cacheprovider

One run, the ior stage alone (the other stages are switched off): a small sweep (1 MiB per task, one transfer size,
1 and 2 tasks on the one client, both access patterns, no cache rule). Two floors on the aggregate write bandwidth:
one any machine passes, one far above what a simulated client (or any real one) reaches. The stage stores its
envelope, the report charts and tabulates ior_write_mib_s and ior_read_mib_s, and the verdict fails on the high floor
alone, naming the metric, the client, the value and the limit.
"""

from __future__ import annotations

import csv
import json
import os
import re
from xml.etree import ElementTree

import pytest

from conftest import WAIT_POLL_S
from test_acceptance import ONLY_OBDFILTER, _acceptance_on_sim
from test_survey_playbooks import pytestmark as survey_mark

pytestmark = survey_mark

RUN_ID = 'pbtest-accept-ior'
# 10 TiB/s of aggregate write from one client: out of reach of anything this test runs on
UNREACHABLE_MIB_S = 10000000
CRITERIA = {
    'floors': [{'name': 'ior write any machine passes', 'metric': 'ior_write_mib_s', 'min': 0.001},
               {'name': 'ior write out of reach', 'metric': 'ior_write_mib_s', 'min': UNREACHABLE_MIB_S}],
}
IOR_VARS = {
    'ior_block_size_mib': 1, 'ior_transfer_sizes_kib': [256], 'ior_tasks_per_node': [1, 2],
    'ior_access': ['fpp', 'ssf'], 'ior_memory_factor': 0, 'ior_allow_run_as_root': True,
    'ior_poll_interval_s': WAIT_POLL_S, 'ior_async_margin_s': 30,
}


@pytest.fixture(scope='module')
def ior_run(tmp_path_factory):
    base = str(tmp_path_factory.mktemp('acceptance-ior'))
    os.environ['ANSIBLE_SHOW_CUSTOM_STATS'] = '1'
    try:
        return _acceptance_on_sim(base, RUN_ID, ['--osts', '2', '--client-mount', '{mount}'], dict(
            ONLY_OBDFILTER, **IOR_VARS, acceptance_run_obdfilter=False, acceptance_run_ior=True,
            ior_mount_point=os.path.join(base, 'mnt'), acceptance_criteria=CRITERIA))
    finally:
        os.environ.pop('ANSIBLE_SHOW_CUSTOM_STATS', None)


def read_run_file(made, name):
    with open(made.run_file(RUN_ID, name), encoding='utf-8') as handle:
        return handle.read()


def test_the_ior_stage_ran_and_stored_its_envelope(ior_run):
    output = ior_run.result.stdout
    envelope = ior_run.envelope('ior', RUN_ID)
    assert (envelope['run_id'], envelope['status'], envelope['errors']) == (RUN_ID, 'ok', []), output[-8000:]
    assert [(r['access'], r['nodes'], r['tasks_per_node'], r['transfer_kib']) for r in envelope['records']] == [
        (access, 1, ppn, 256) for access in ('fpp', 'ssf') for ppn in (1, 2)]
    assert all(r['ior_write_mib_s'] > 0 and r['ior_read_mib_s'] > 0 for r in envelope['records'])
    stages = dict((stage['stage'], stage) for stage in ior_run.published(output)['iokit_acceptance_stages'])
    assert [name for name, stage in stages.items() if stage['ran']] == ['ior'], stages
    # the stage's cleanup crossed off the test tree it had recorded (the simulated node is gone by now)
    state_file = os.path.join(ior_run.workdir, 'node-state.json')
    if os.path.exists(state_file):  # removed once nothing is left in it
        with open(state_file, encoding='utf-8') as handle:
            assert json.load(handle)['paths'] == []


def test_the_report_charts_and_tabulates_the_ior_metrics(ior_run):
    html = read_run_file(ior_run, 'report.html')
    for chart in ('fleet-ior_write_mib_s', 'fleet-ior_read_mib_s', 'host-localhost-ior_write_mib_s',
                  'host-localhost-ior_read_mib_s'):
        assert '<figure class="chart" id="%s">' % chart in html, chart
    summary = read_run_file(ior_run, 'summary.md')
    assert 'ior_write_mib_s' in summary and 'ior_read_mib_s' in summary
    analysis = read_run_file(ior_run, 'analysis.json')
    assert '"ior_write_mib_s"' in analysis and '"ior_read_mib_s"' in analysis
    with open(ior_run.run_file(RUN_ID, 'results.csv'), encoding='utf-8', newline='') as handle:
        metrics = set(row['metric'] for row in csv.DictReader(handle) if row.get('survey') == 'ior')
    assert metrics == {'ior_write_mib_s', 'ior_read_mib_s'}


def test_a_floor_above_the_reach_of_the_client_fails_naming_metric_value_and_limit(ior_run):
    output = ior_run.result.stdout
    assert ior_run.result.returncode != 0, output[-8000:]
    verdict = json.loads(read_run_file(ior_run, 'verdict.json'))
    assert verdict['verdict'] == 'failed'
    floors = [case for case in verdict['cases'] if case['kind'] == 'floors']
    assert sorted((case['criterion'], case['status']) for case in floors) == [
        ('ior write any machine passes', 'passed'), ('ior write out of reach', 'failed')], floors
    failed = [case for case in verdict['cases'] if case['status'] == 'failed']
    assert len(failed) == 1, failed
    case = failed[0]
    assert (case['subject'], case['metric'], case['limit']) == ('localhost', 'ior_write_mib_s', UNREACHABLE_MIB_S)
    value = '%.2f MiB/s' % case['value']
    message = case['message']
    for part in ('ior_write_mib_s on localhost', value, 'below the floor %d MiB/s' % UNREACHABLE_MIB_S, RUN_ID):
        assert part in message, message
    # the same words where a user reads them: the JUnit failure and the summary's verdict section
    junit = ElementTree.parse(ior_run.run_file(RUN_ID, 'junit.xml')).getroot()
    failures = [failure.get('message') or failure.text or '' for failure in junit.iter('failure')]
    assert len(failures) == 1 and 'ior_write_mib_s' in failures[0] and value in failures[0], failures
    assert 'below the floor %d' % UNREACHABLE_MIB_S in failures[0], failures
    verdict_section = read_run_file(ior_run, 'summary.md').split('## Verdict', 1)[1]
    assert verdict_section.lstrip().startswith('**Verdict: FAILED**')
    assert re.search(r'ior_write_mib_s on localhost: [0-9.]+ MiB/s', verdict_section), verdict_section
