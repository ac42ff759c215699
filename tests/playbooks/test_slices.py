# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One run in four slices, the way AWX slices a job: an 8-host simulated fleet, four ansible-playbook processes
of survey-obdfilter.yml at once on the round-robin subsets of one inventory (``hosts[i::4]`` by name, through
``--limit``: nothing tells a slice that it is one), each given only the AWX workflow job id AWX gives every slice of
a launch, from which they all take one run id; then one report job.

    .venv/bin/python -m pytest tests/playbooks/test_slices.py -q -p no:cacheprovider

AWX merges the slices' set_stats artifacts with a shallow dict update in the order they finish, then passes them
on with the report job's; the test captures each job's artifacts with the ansible.posix.json stdout callback and
merges them the same way.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import re
import sqlite3
import subprocess
import threading

import pytest

from conftest import COLLECTIONS, LUSTRE_SIM, ROOT, simulated_local_host, wait_for

from test_survey_playbooks import ANSIBLE_PLAYBOOK

pytestmark = pytest.mark.skipif(LUSTRE_SIM is None or not os.access(ANSIBLE_PLAYBOOK, os.X_OK),
                                reason='needs the checkout venv (make setup) with lustre-sim')

AWX_WORKFLOW_JOB_ID = 77
# The run id every slice makes from it (results_location), which the report job is given.
RUN_ID = 'awx-wf%d' % AWX_WORKFLOW_JOB_ID
HOSTS = ['oss%d' % number for number in range(1, 9)]
SLICES = 4
# One point (one object, one thread), a write of 2 MiB on one OST per host: the smallest sweep that measures.
SURVEY_VARS = {'iokit_timeout_s': 600, 'obdfilter_size_mib': 2, 'obdfilter_nobjhi': 1, 'obdfilter_thrhi': 1,
               'obdfilter_tests': ['write'], 'obdfilter_poll_interval_s': 1, 'obdfilter_async_margin_s': 60}
# A deadline for a slow machine, never a measure.
DEADLINE_S = 900


def awx_slices(hosts, count):
    """AWX's cut of an inventory into ``count`` job slices: round robin over the hosts sorted by name."""
    ordered = sorted(hosts)
    return [ordered[index::count] for index in range(count)]


def artifacts(stdout):
    """The set_stats data of one ansible-playbook run, from the ansible.posix.json callback's document."""
    # Lines before the document are what the survey's actions print themselves (the live progress).
    start = 0 if stdout.startswith('{') else stdout.index('\n{\n') + 1
    return json.loads(stdout[start:])['global_custom_stats']


@pytest.fixture(scope='module')
def sliced_run(tmp_path_factory):
    base = str(tmp_path_factory.mktemp('slices'))
    hosts = {name: simulated_local_host(base, name, '--osts', '1', '--mdts', '1', '--ost-size-mib', '64',
                                        '--ost-mib-s', '64')
             for name in HOSTS}
    inventory = os.path.join(base, 'inventory.json')
    with open(inventory, 'w', encoding='utf-8') as handle:
        json.dump({'all': {'children': {'oss': {'hosts': hosts}}}}, handle)
    results = os.path.join(base, 'results')
    extra = os.path.join(base, 'vars.json')
    with open(extra, 'w', encoding='utf-8') as handle:
        json.dump(dict(SURVEY_VARS, iokit_results_dir=results), handle)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_PIPELINING='1', ANSIBLE_NOCOLOR='1',
               ANSIBLE_STDOUT_CALLBACK='ansible.posix.json', ANSIBLE_SHOW_CUSTOM_STATS='1')
    argv = [ANSIBLE_PLAYBOOK, '-i', inventory, '-e', '@' + extra]
    finished = []
    started = []
    lock = threading.Lock()

    def run_slice(index, limit):
        # What AWX gives every slice of one launch: the id of the workflow job it runs the slices in, no run id.
        process = subprocess.Popen(argv + ['-e', 'awx_workflow_job_id=%d' % AWX_WORKFLOW_JOB_ID,
                                           '--limit', ','.join(limit),
                                           os.path.join(ROOT, 'playbooks', 'survey-obdfilter.yml')],
                                   cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   universal_newlines=True)
        with lock:
            started.append(process)
        stdout, stderr = process.communicate()
        with lock:
            finished.append({'index': index, 'hosts': limit, 'rc': process.returncode, 'stdout': stdout,
                             'stderr': stderr})

    try:
        threads = [threading.Thread(target=run_slice, args=(index, limit), daemon=True)
                   for index, limit in enumerate(awx_slices(HOSTS, SLICES))]
        for thread in threads:
            thread.start()
        # In the order they end, as AWX merges their artifacts.
        wait_for('the %d slices to end' % SLICES, lambda: len(finished) == SLICES, DEADLINE_S)
        # The report job, once every slice has ended, told the run and the hosts the slices had to measure.
        report_vars = {'iokit_run_id': RUN_ID, 'report_expected': {'obdfilter': HOSTS}}
        report = subprocess.run(argv + ['-e', json.dumps(report_vars), os.path.join(ROOT, 'playbooks', 'report.yml')],
                                cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                universal_newlines=True, timeout=DEADLINE_S, check=False)
        yield {'slices': finished, 'report': report, 'run_dir': os.path.join(results, RUN_ID)}
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
        for name in HOSTS:
            subprocess.run([LUSTRE_SIM, 'destroy', '--root', os.path.join(base, name)], check=False,
                           stdout=subprocess.DEVNULL)


def test_the_four_slices_and_the_report_job_succeed(sliced_run):
    assert len(sliced_run['slices']) == SLICES
    for job in sliced_run['slices']:
        assert job['rc'] == 0, job['stdout'][-3000:] + job['stderr'][-2000:]
    assert sliced_run['report'].returncode == 0, sliced_run['report'].stdout[-3000:] + sliced_run['report'].stderr[-2000:]


def test_every_host_is_stored_once_in_the_one_run(sliced_run):
    run_dir = sliced_run['run_dir']
    # One run: no slice made a run of its own.
    assert sorted(os.listdir(os.path.dirname(run_dir))) == sorted(['history.sqlite', RUN_ID])
    stored = sorted(name for name in os.listdir(run_dir) if os.path.isdir(os.path.join(run_dir, name)))
    assert stored == HOSTS
    for host in HOSTS:
        with open(os.path.join(run_dir, host, 'obdfilter.json'), encoding='utf-8') as handle:
            envelope = json.load(handle)
        assert (envelope['run_id'], envelope['host'], envelope['status']) == (RUN_ID, host, 'ok')


def test_the_summary_written_by_the_slices_has_every_host_once(sliced_run):
    # Each slice summarises the whole run; the one that wrote last must have seen every slice's hosts.
    with open(os.path.join(sliced_run['run_dir'], 'summary-obdfilter.md'), encoding='utf-8') as handle:
        sections = re.findall(r'^## (\S+) \u2014 ', handle.read(), re.MULTILINE)
    assert sorted(sections) == HOSTS


def test_the_history_records_the_run_once_with_every_host_once(sliced_run):
    with contextlib.closing(sqlite3.connect(os.path.join(os.path.dirname(sliced_run['run_dir']),
                                                         'history.sqlite'))) as database:
        assert database.execute('SELECT run_id, host_count FROM runs').fetchall() == [(RUN_ID, len(HOSTS))]
        assert database.execute('SELECT survey, host_count FROM run_surveys').fetchall() == [('obdfilter', len(HOSTS))]
        hosts = [row[0] for row in database.execute('SELECT host FROM envelopes WHERE run_id = ?', (RUN_ID,))]
    assert sorted(hosts) == HOSTS


def test_the_report_and_results_csv_have_every_host_once(sliced_run):
    run_dir = sliced_run['run_dir']
    with open(os.path.join(run_dir, 'results.csv'), encoding='utf-8', newline='') as handle:
        # One point, one test: one host-level row per host (the per-OST rows name their target).
        csv_hosts = [row['host'] for row in csv.DictReader(handle) if not row['target']]
    assert sorted(csv_hosts) == HOSTS
    with open(os.path.join(run_dir, 'report.json'), encoding='utf-8') as handle:
        samples = [json.loads(line) for line in handle if line.strip()]
    assert sorted(sample['host'] for sample in samples if sample['target'] is None) == HOSTS
    with open(os.path.join(run_dir, 'summary.md'), encoding='utf-8') as handle:
        summary = handle.read()
    assert '%d result file(s), %d host(s)' % (len(HOSTS), len(HOSTS)) in summary
    assert 'Every expected result is present and complete.' in summary
    with open(os.path.join(run_dir, 'report.html'), encoding='utf-8') as handle:
        html = handle.read()
    assert all(re.search(r'\b%s\b' % host, html) for host in HOSTS)


def test_the_merged_artifacts_name_every_host_once(sliced_run):
    merged = {}
    for job in sliced_run['slices']:
        merged.update(artifacts(job['stdout']))
    merged.update(artifacts(sliced_run['report'].stdout))
    assert (merged['iokit_run_id'], merged['iokit_run_dir']) == (RUN_ID, sliced_run['run_dir'])
    # Each slice's hosts under a key of its own, so that none is lost to the merge.
    by_slice = {key: value['obdfilter'] for key, value in merged.items() if key.startswith('iokit_slice_')}
    assert sorted(sorted(hosts) for hosts in by_slice.values()) == sorted(awx_slices(HOSTS, SLICES))
    assert sorted(merged['iokit_report_hosts']) == HOSTS
    assert merged['iokit_report_missing'] == 0
