# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/stats-collect.yml (start, then collect) around real echo I/O on a simulated Lustre node.

    .venv/bin/python -m pytest tests/playbooks/test_stats_collect.py -q -p no:cacheprovider

The I/O between start and collect is known exactly (64 writes of 1 MiB on OST0000), so the stored
brw_stats delta must show exactly that, and nothing on the other OST.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys

import pytest

from conftest import ROOT, WAIT_POLL_S, wait_for

from ansible_collections.lustre.iokit.plugins.module_utils.engines.stats_collect_parsers import parse_vmstat
from ansible_collections.lustre.iokit.plugins.module_utils.engines.stats_collect_sampler import sampler_alive
from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import envelope_path, read_envelope

VENV_BIN = os.path.join(ROOT, '.venv', 'bin')
LUSTRE_SIM = shutil.which('lustre-sim', path=VENV_BIN + os.pathsep + os.environ.get('PATH', ''))
ANSIBLE_PLAYBOOK = os.path.join(VENV_BIN, 'ansible-playbook')
RUN_ID = 'stats-pb-1'
WRITES = 64
IOSTAT = shutil.which('iostat')

pytestmark = pytest.mark.skipif(LUSTRE_SIM is None or not os.access(ANSIBLE_PLAYBOOK, os.X_OK)
                                or shutil.which('vmstat') is None,
                                reason='needs the checkout venv (make setup) with lustre-sim, and vmstat')

INVENTORY = '''
all:
  hosts:
    localhost:
      ansible_connection: local
      ansible_python_interpreter: {python}
'''


class Node:
    def __init__(self, base):
        self.root = os.path.join(base, 'node')
        self.results = os.path.join(base, 'results')
        self.workdir = os.path.join(base, 'work')
        self.inventory = os.path.join(base, 'inventory.yml')
        self.env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, '.venv', 'collections'),
                        ANSIBLE_PIPELINING='1', ANSIBLE_NOCOLOR='1', ANSIBLE_FORCE_COLOR='0', LUSTRE_SIM_ROOT=self.root,
                        PATH=os.path.join(self.root, 'bin') + os.pathsep + VENV_BIN + os.pathsep + os.environ['PATH'])

    def run(self, *argv, check=True):
        return subprocess.run(list(argv), env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, check=check)

    def playbook(self, action, *extra):
        argv = [ANSIBLE_PLAYBOOK, '-i', self.inventory, '-e', 'stats_collect_action=%s' % action] + list(extra)
        argv += ['-e', 'iokit_run_id=%s' % RUN_ID, '-e', 'iokit_results_dir=%s' % self.results,
                 '-e', 'iokit_workdir=%s' % self.workdir, os.path.join(ROOT, 'playbooks', 'stats-collect.yml')]
        return subprocess.run(
            argv, cwd=ROOT, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
            check=False)

    def node_state(self):
        path = os.path.join(self.workdir, 'node-state.json')
        if not os.path.exists(path):
            # The cleanup removes the file once nothing is left to undo.
            return {'processes': []}
        with open(path, encoding='utf-8') as handle:
            return json.load(handle)

    def vmstat_reports(self):
        """The reports the running vmstat sampler has written so far (a loaded machine delays them)."""
        try:
            with open(os.path.join(self.workdir, RUN_ID, 'stats', 'stats-vmstat.out'), encoding='utf-8') as handle:
                return parse_vmstat(handle.read())
        except FileNotFoundError:
            return []

    def echo_writes(self, target, count):
        """``count`` writes of 1 MiB (256 pages) on ``target`` through an echo client, then remove it."""
        self.run('lctl', 'attach', 'echo_client', 'stats_ecc', 'stats_ecc_UUID')
        self.run('lctl', '--device', 'stats_ecc', 'setup', target)
        created = self.run('lctl', '--device', 'stats_ecc', 'create', '1').stdout
        object_id = created.split()[-1]
        self.run('lctl', '--device', 'stats_ecc', 'test_brw', str(count), 'w', 'v', '256', object_id)
        self.run('lctl', '--device', 'stats_ecc', 'destroy', object_id)
        self.run('lctl', '--device', 'stats_ecc', 'cleanup')
        self.run('lctl', '--device', 'stats_ecc', 'detach')


@pytest.fixture(scope='module')
def node(tmp_path_factory):
    made = Node(str(tmp_path_factory.mktemp('stats-collect')))
    subprocess.run([LUSTRE_SIM, 'init', '--root', made.root, '--osts', '2', '--mdts', '1', '--ost-size-mib', '128',
                    '--force'], check=True, stdout=subprocess.DEVNULL)
    # Somebody else's vmstat on the node: stopping our samplers must leave it running.
    made.decoy = subprocess.Popen(['vmstat', '1', '600'], stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        with open(made.inventory, 'w', encoding='utf-8') as handle:
            handle.write(INVENTORY.format(python=sys.executable))
        made.run('modprobe', 'obdecho')
        made.start = made.playbook('start')
        made.samplers = [entry for entry in made.node_state()['processes'] if entry.get('sampler')]
        made.alive_after_start = [sampler_alive(entry) for entry in made.samplers]
        made.echo_writes('testfs-OST0000', WRITES)
        wait_for('two vmstat reports', lambda: len(made.vmstat_reports()) >= 2)
        made.collect = made.playbook('collect')
        made.first_envelope = envelope(made) if made.collect.returncode == 0 else None
        made.collect_again = made.playbook('collect')
        made.envelope_again = envelope(made) if made.collect_again.returncode == 0 else None
        # A second collection in the run, as a second survey on the same host makes: both are kept.
        made.second_start = made.playbook('start', '-e', 'stats_collect_label=second')
        made.second_collect = made.playbook('collect')
        yield made
    finally:
        made.decoy.send_signal(signal.SIGKILL)
        made.decoy.wait()
        subprocess.run([LUSTRE_SIM, 'destroy', '--root', made.root], check=False, stdout=subprocess.DEVNULL)


def envelope(node):
    return read_envelope(envelope_path(node.results, RUN_ID, 'localhost', 'stats_collect'))


def test_start_runs_the_samplers_and_records_them(node):
    assert node.start.returncode == 0, node.start.stdout[-6000:]
    assert 'stop and collect: -e stats_collect_action=collect -e iokit_run_id=%s' % RUN_ID in node.start.stdout
    # brw_stats is sampled too (stats_collect_brw_interval 1), for the report's per-phase histograms.
    assert [entry['sampler'] for entry in node.samplers] == ['vmstat', 'brw'] + (['iostat'] if IOSTAT else [])
    assert all(node.alive_after_start) and node.alive_after_start


def test_collect_stores_the_histogram_of_exactly_the_io_between(node):
    assert node.collect.returncode == 0, node.collect.stdout[-6000:]
    stored = node.first_envelope
    assert (stored['survey'], stored['run_id'], stored['status']) == ('stats_collect', RUN_ID, 'ok')
    brw = dict((record['target'], record) for record in stored['records'] if record['collector'] == 'brw')
    assert sorted(brw) == ['testfs-MDT0000', 'testfs-OST0000', 'testfs-OST0001']
    assert brw['testfs-OST0000']['histograms']['disk I/O size'] == [
        {'bucket': '1M', 'read': {'count': 0, 'pct': 0, 'cum_pct': 0},
         'write': {'count': WRITES, 'pct': 100, 'cum_pct': 100}}]
    assert brw['testfs-OST0000']['histograms']['pages per bulk r/w'][0]['bucket'] == '256'
    assert all(rows == [] for rows in brw['testfs-OST0001']['histograms'].values())
    counters = dict((record['param'], record['counters']) for record in stored['records']
                    if record['collector'] == 'service')
    assert counters['obdfilter.testfs-OST0000.stats']['write_bytes'] == {
        'count': WRITES, 'sum': WRITES * 1048576, 'unit': 'bytes'}
    assert counters['obdfilter.testfs-OST0001.stats'] == {}
    vmstat = [record for record in stored['records'] if record['collector'] == 'vmstat'][0]
    assert vmstat['summary']['samples'] >= 2
    assert all(0 <= sample['wa'] <= 100 and sample['time'] for sample in vmstat['samples'])
    iostat = [record for record in stored['records'] if record['collector'] == 'iostat']
    if IOSTAT:
        assert iostat[0]['samples'] and all(report['devices'] and report['time'] for report in iostat[0]['samples'])
    else:
        assert iostat == []
    assert 'testfs-OST0000 disk I/Os by size (read/write): 1M 0/%d' % WRITES in node.collect.stdout
    stored_files = os.listdir(os.path.join(node.results, RUN_ID, 'localhost'))
    assert {'stats-brw.start', 'stats-brw.end', 'stats-vmstat.out'} <= set(stored_files)


def test_no_sampler_is_left_and_only_ours_were_stopped(node):
    # sampler_alive: a stopped sampler may stay a zombie for a moment, until init reaps it.
    assert not any(sampler_alive(entry) for entry in node.samplers)
    assert [entry for entry in node.node_state()['processes'] if entry.get('sampler')] == []
    assert node.decoy.poll() is None


def test_a_second_collect_stores_the_same_result_without_change(node):
    assert node.collect_again.returncode == 0, node.collect_again.stdout[-6000:]
    assert 'changed=0' in node.collect_again.stdout
    assert node.envelope_again == node.first_envelope


def test_a_second_collection_in_the_run_keeps_the_first(node):
    assert node.second_start.returncode == 0, node.second_start.stdout[-6000:]
    assert node.second_collect.returncode == 0, node.second_collect.stdout[-6000:]
    stored = envelope(node)
    first = [record for record in stored['records'] if record['label'] == 'stats']
    second = [record for record in stored['records'] if record['label'] == 'second']
    assert first == node.first_envelope['records']
    assert second and all(rows == [] for record in second if record['collector'] == 'brw'
                          for rows in record['histograms'].values())
    assert stored['started'] == node.first_envelope['started'] and stored['finished'] > node.first_envelope['finished']


def test_a_failed_collection_fails_the_host_unless_told_to_keep_going(node):
    broken_run = RUN_ID + '-broken'
    manifest = os.path.join(node.workdir, broken_run, 'stats', 'manifest.json')
    os.makedirs(os.path.dirname(manifest))
    with open(manifest, 'w', encoding='utf-8') as handle:
        handle.write('{"truncated": ')

    def collect(*extra):
        return subprocess.run(
            [ANSIBLE_PLAYBOOK, '-i', node.inventory, '-e', 'stats_collect_action=collect', '-e', 'iokit_run_id=' + broken_run,
             '-e', 'iokit_results_dir=%s' % node.results, '-e', 'iokit_workdir=%s' % node.workdir] + list(extra)
            + [os.path.join(ROOT, 'playbooks', 'stats-collect.yml')],
            cwd=ROOT, env=node.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)

    failed = collect()
    assert failed.returncode != 0 and 'manifest.json is not valid JSON' in failed.stdout
    # What the survey playbooks do: their cleanup runs next, so the host goes on.
    kept_going = collect('-e', 'stats_collect_keep_going=true')
    assert kept_going.returncode == 0, kept_going.stdout[-6000:]
    assert 'statistics of run %s not collected on localhost' % broken_run in kept_going.stdout


@pytest.fixture(scope='module')
def survey_with_stats(node, tmp_path_factory):
    """playbooks/survey-obdfilter.yml with stats_collect_enabled and no iokit_run_id: one run for both results."""
    results = str(tmp_path_factory.mktemp('survey-results'))
    extra = {'iokit_obdfilter_hosts': 'localhost', 'stats_collect_enabled': True, 'iokit_results_dir': results, 'iokit_workdir': node.workdir,
             'iokit_timeout_s': 600, 'obdfilter_size_mib': 4, 'obdfilter_nobjhi': 1, 'obdfilter_thrhi': 1,
             'obdfilter_tests': ['write', 'read'], 'obdfilter_poll_interval_s': WAIT_POLL_S, 'obdfilter_async_margin_s': 30,
             'iokit_report': True}
    completed = subprocess.run(
        [ANSIBLE_PLAYBOOK, '-i', node.inventory, '-e', json.dumps(extra),
         os.path.join(ROOT, 'playbooks', 'survey-obdfilter.yml')],
        cwd=ROOT, env=node.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    return completed, results


def test_a_survey_playbook_collects_its_statistics_in_the_same_run(node, survey_with_stats):
    completed, results = survey_with_stats
    assert completed.returncode == 0, completed.stdout[-6000:]
    # The run's directory, beside the results history's database (iokit_history).
    runs = [name for name in os.listdir(results) if os.path.isdir(os.path.join(results, name))]
    assert len(runs) == 1, runs
    survey = read_envelope(envelope_path(results, runs[0], 'localhost', 'obdfilter'))
    stats = read_envelope(envelope_path(results, runs[0], 'localhost', 'stats_collect'))
    assert survey['status'] == 'ok' and stats['status'] == 'ok', stats['errors']
    assert {record['label'] for record in stats['records']} == {'obdfilter'}
    # The statistics span the survey.
    assert stats['started'] <= survey['started'] and stats['finished'] >= survey['finished']
    for target in ('testfs-OST0000', 'testfs-OST0001'):
        brw = [record for record in stats['records'] if record.get('target') == target][0]
        assert brw['histograms']['disk I/O size'] == [
            {'bucket': '1M', 'read': {'count': 4, 'pct': 100, 'cum_pct': 100},
             'write': {'count': 4, 'pct': 100, 'cum_pct': 100}}]
    assert [entry for entry in node.node_state()['processes'] if entry.get('sampler')] == []


def test_the_report_cuts_cpu_per_sweep_point_and_io_sizes_per_phase(survey_with_stats):
    completed, results = survey_with_stats
    assert completed.returncode == 0, completed.stdout[-6000:]
    [run_id] = [name for name in os.listdir(results) if os.path.isdir(os.path.join(results, name))]
    run_dir = os.path.join(results, run_id)
    survey = read_envelope(envelope_path(results, run_id, 'localhost', 'obdfilter'))
    [record] = survey['records']
    # The engine's wall-clock times: write, then read, within the survey.
    write, read = record['tests']['write'], record['tests']['read']
    assert write['start_time'] <= write['end_time'] <= read['start_time'] <= read['end_time']
    with open(os.path.join(run_dir, 'analysis.json'), encoding='utf-8') as handle:
        stats = json.load(handle)['stats']
    point = 'rsz 1024K obj 2 thr 2'
    assert [(row['host'], row['survey'], row['label'], row['test']) for row in stats['point_cpu']] == [
        ('localhost', 'obdfilter', point, 'write'), ('localhost', 'obdfilter', point, 'read')]
    # vmstat reports every second: each test, however short, overlaps at least one.
    assert all(row['samples'] >= 1 and 0 <= row['iowait_mean'] <= 100 for row in stats['point_cpu'])
    # brw_stats sampled every second (the role's default): each phase's 4 I/Os of 1 MiB per OST, in its column.
    assert sorted((row['test'], row['column'], row['target'], row['bucket'], row['ios'])
                  for row in stats['phase_io_sizes']) == [
        ('read', 'read', 'testfs-OST0000', '1M', 4), ('read', 'read', 'testfs-OST0001', '1M', 4),
        ('write', 'write', 'testfs-OST0000', '1M', 4), ('write', 'write', 'testfs-OST0001', '1M', 4)]
    assert all(row['before_s'] >= 0 and row['after_s'] >= 0 for row in stats['phase_io_sizes'])
    assert stats['point_cpu_notes'] == [] and stats['phase_io_notes'] == []
    with open(os.path.join(run_dir, 'summary.md'), encoding='utf-8') as handle:
        summary = handle.read()
    assert '## Statistics per sweep point (stats_collect)' in summary
    assert '| localhost | obdfilter | %s | 1 | write |' % point in summary
    assert '| localhost | %s | 1 | read | testfs-OST0001 | 1M | 4 | 100.0 |' % point in summary
