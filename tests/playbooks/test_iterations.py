# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""iokit_iterations=2: each survey runs twice on the node and the one stored envelope holds both iterations.

    .venv/bin/python -m pytest tests/playbooks/test_iterations.py -q -p no:cacheprovider

The obdfilter, mds and ost survey playbooks run on a simulated node (localhost), then playbooks/report.yml
with a variation criterion: the report's repeat statistics come from the records' ``iteration``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from test_survey_playbooks import INVENTORY, LUSTRE_SIM, SURVEY_VARS, Cluster, pytestmark as survey_mark

from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import envelope_path, read_envelope

pytestmark = survey_mark

RUN_ID = 'pbtest-iterations'
ITERATIONS = 2
RAW_PREFIXES = {'obdfilter': 'obdfilter_survey', 'mds': 'mds_survey', 'ost': 'ost_survey'}


class IteratedCluster(Cluster):
    def envelope(self, survey):
        return read_envelope(envelope_path(self.results, RUN_ID, 'localhost', survey))

    def run_file(self, name):
        return os.path.join(self.results, RUN_ID, name)


@pytest.fixture(scope='module')
def cluster(tmp_path_factory):
    made = IteratedCluster(str(tmp_path_factory.mktemp('iterations')))
    made.sim('init', '--root', made.root, '--osts', '3', '--mdts', '1', '--ost-size-mib', '64',
             '--ost-mib-s', '24', '--client-mount', made.mount, '--force')
    try:
        with open(made.inventory, 'w', encoding='utf-8') as handle:
            handle.write(INVENTORY.format(python=sys.executable))
        with open(made.extra_vars, 'w', encoding='utf-8') as handle:
            json.dump(dict(SURVEY_VARS, iokit_results_dir=made.results, iokit_workdir=made.workdir,
                           iokit_run_id=RUN_ID, ost_mount_point=made.mount,
                           iokit_iterations=ITERATIONS, iokit_report=True,
                           acceptance_criteria={'variation': [{'metric': 'obdfilter_*', 'max_cv_pct': 1000},
                                                              {'metric': 'mds_*', 'max_cv_pct': 1000}]}), handle)
        made.first_run = made.playbook('survey-obdfilter.yml', 'survey-mds.yml', 'survey-ost.yml', 'report.yml')
        yield made
    finally:
        subprocess.run([LUSTRE_SIM, 'destroy', '--root', made.root], check=False, stdout=subprocess.DEVNULL)


def test_each_survey_ran_twice_into_one_ok_envelope(cluster):
    assert cluster.first_run.returncode == 0, cluster.first_run.stdout[-6000:]
    for survey in RAW_PREFIXES:
        envelope = cluster.envelope(survey)
        assert (envelope['status'], envelope['errors']) == ('ok', []), (survey, envelope['errors'])
        assert envelope['parameters']['iterations'] == ITERATIONS
        by_iteration = {}
        for record in envelope['records']:
            by_iteration.setdefault(record['iteration'], []).append(record)
        assert sorted(by_iteration) == [1, 2], survey
        # The same sweep, measured twice: the same points in the same order.
        points = [[dict((key, value) for key, value in record.items()
                        if key in ('thr', 'obj', 'rsz_kib', 'file', 'dir', 'target', 'targets'))
                   for record in records] for records in (by_iteration[1], by_iteration[2])]
        assert points[0] == points[1] and points[0], survey
        assert envelope['duration_s'] > 0 and envelope['started'] < envelope['finished']


def test_each_iteration_keeps_its_raw_output(cluster):
    stored = os.listdir(os.path.join(cluster.results, RUN_ID, 'localhost'))
    for survey, prefix in RAW_PREFIXES.items():
        for iteration in (1, 2):
            assert any(name.startswith('%s-iteration%d.' % (prefix, iteration)) for name in stored), (survey, stored)
        envelope = cluster.envelope(survey)
        assert os.path.basename(envelope['raw_output']).startswith(prefix + '-iteration1.')


def test_the_report_has_repeat_statistics_for_every_point(cluster):
    with open(cluster.run_file('report.json'), encoding='utf-8') as handle:
        samples = [json.loads(line) for line in handle if line.strip()]
    assert set(sample['iteration'] for sample in samples) == {1, 2}
    with open(cluster.run_file('analysis.json'), encoding='utf-8') as handle:
        repeats = json.load(handle)['repeats']
    for survey in RAW_PREFIXES:
        rows = [row for row in repeats if row['survey'] == survey]
        assert rows and all(row['n'] == ITERATIONS for row in rows), survey
        assert all(row['min'] <= row['mean'] <= row['max'] and row['stddev'] >= 0 for row in rows)
    with open(cluster.run_file('report.html'), encoding='utf-8') as handle:
        assert 'id="repeats-table"' in handle.read()


def test_the_variation_criterion_is_checked_per_subject(cluster):
    with open(cluster.run_file('verdict.json'), encoding='utf-8') as handle:
        verdict = json.load(handle)
    cases = [case for case in verdict['cases'] if case['kind'] == 'variation']
    subjects = set(case['subject'] for case in cases)
    assert 'localhost' in subjects or any(subject.startswith('localhost/') for subject in subjects), cases
    assert cases and all(case['status'] == 'passed' for case in cases), cases
    assert verdict['verdict'] == 'passed'


def test_a_rerun_skips_the_complete_iterations_and_nothing_is_left(cluster):
    before = cluster.envelope('obdfilter')
    rerun = cluster.playbook('survey-obdfilter.yml')
    assert rerun.returncode == 0, rerun.stdout[-6000:]
    assert 'obdfilter on localhost is already ok in run %s' % RUN_ID in rerun.stdout
    assert cluster.envelope('obdfilter') == before
    status = cluster.status()
    assert [device['name'] for device in status['devices'] if device['type'] == 'echo_client'] == []
    assert not os.path.exists(os.path.join(cluster.workdir, RUN_ID))
