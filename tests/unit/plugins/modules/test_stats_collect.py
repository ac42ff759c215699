# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""stats_collect run as Ansible runs it on a simulated node: start, stop and collect, what check mode leaves alone,
the envelope store_result takes, and bad options named."""

from __future__ import annotations

import os

import pytest

from ansible_collections.lustre.iokit.plugins.modules import stats_collect as stats_collect_module
from ansible_collections.lustre.iokit.plugins.module_utils import results
from ansible_collections.lustre.iokit.tests.unit.waiting import wait_for

RUN_ID = '20261122T101500Z-3f2a'
# Every wait below ends by itself: a sampler that never writes or never ends fails the test after this long.
DEADLINE_S = 60
# The simulated node: testfs with one MDT and two OSTs.
TARGETS = ['testfs-MDT0000', 'testfs-OST0000', 'testfs-OST0001']


def alive(pid):
    try:
        with open('/proc/%d/stat' % pid) as handle:
            # a zombie (state Z) has ended and only waits to be reaped
            return handle.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except (IOError, OSError):
        return False


@pytest.fixture
def stats(tmp_path, run_as_ansible):
    """``stats(state, check_mode=False, **options)``: the module in a child process, workdir under tmp_path.

    The run's samplers are stopped after the test, whatever it left running.
    """
    def run(state, check_mode=False, **options):
        args = dict({'state': state, 'run_id': RUN_ID, 'workdir': str(tmp_path / 'work')}, **options)
        return run_as_ansible('stats_collect', args, check_mode=check_mode)
    yield run
    if (tmp_path / 'work').exists():
        run('stopped', stop_grace_s=0)


SNAPSHOTS = {'collectors': ['brw', 'service'], 'brw_interval': 0, 'service_interval': 0}


def test_snapshots_at_start_and_stop_give_a_valid_envelope_per_target_and_parameter(sim, stats):
    started = stats('started', **SNAPSHOTS)
    assert started['changed'] is True and not started.get('failed'), started
    by_name = dict((sampler['collector'], sampler) for sampler in started['samplers'])
    assert sorted(by_name) == ['brw', 'service']
    # snapshots only: no process runs between start and stop
    assert by_name['brw']['pid'] is None and by_name['service']['pid'] is None
    assert by_name['brw']['params'] == ['osd-ldiskfs.%s.brw_stats' % target for target in TARGETS]
    assert 'obdfilter.testfs-OST0000.stats' in by_name['service']['params']
    stats_dir = started['stats_dir']
    assert stats_dir.endswith(os.path.join(RUN_ID, 'stats'))
    assert os.path.isfile(os.path.join(stats_dir, 'stats-brw.start'))
    # a second start of the same run changes nothing
    assert stats('started', **SNAPSHOTS)['changed'] is False

    collected = stats('collected')
    assert collected['collected'] is True and collected['changed'] is True
    envelope = collected['envelope']
    assert results.check_envelope(envelope) is envelope
    assert (envelope['run_id'], envelope['survey'], envelope['status']) == (RUN_ID, 'stats_collect', 'ok')
    assert envelope['parameters']['collectors'] == ['brw', 'service']
    brw = [record for record in envelope['records'] if record['collector'] == 'brw']
    assert sorted(record['target'] for record in brw) == TARGETS
    service = [record['param'] for record in envelope['records'] if record['collector'] == 'service']
    assert sorted(service) == sorted(by_name['service']['params'])
    assert all(record['label'] == 'stats' for record in envelope['records'])
    # the files store_result fetches are there, the manifest is the raw output
    assert envelope['raw_output'] == os.path.join(stats_dir, 'manifest.json')
    assert collected['raw_files'] and all(os.path.isfile(path) for path in collected['raw_files'])
    assert os.path.join(stats_dir, 'stats-brw.end') in collected['raw_files']
    # collecting again: the same envelope (times are the collection's, not the call's), nothing changed
    again = stats('collected')
    assert again['envelope'] == envelope and again['changed'] is False


def test_a_vmstat_sampler_runs_until_stopped_and_its_samples_are_in_the_envelope(sim, stats):
    started = stats('started', collectors=['vmstat'], vmstat_interval=1, stop_grace_s=10)
    (sampler,) = started['samplers']
    pid = sampler['pid']
    assert sampler['collector'] == 'vmstat' and sampler['interval_s'] == 1 and alive(pid)
    output = os.path.join(started['stats_dir'], 'stats-vmstat.out')

    def sampled_twice():
        # vmstat's two header lines, its since-boot line, then one line per interval
        try:
            with open(output) as handle:
                return len(handle.read().splitlines()) >= 5
        except (IOError, OSError):
            return False
    wait_for('two vmstat samples', sampled_twice, DEADLINE_S)

    stopped = stats('stopped')
    assert stopped['changed'] is True
    assert [(item['collector'], item['pid']) for item in stopped['stopped']] == [('vmstat', pid)]
    wait_for('the vmstat sampler %d gone' % pid, lambda: not alive(pid), DEADLINE_S)
    # stopping again finds nothing to stop
    assert stats('stopped')['stopped'] == []

    collected = stats('collected')
    (record,) = collected['records']
    assert record['collector'] == 'vmstat' and len(record['samples']) >= 1
    assert set(record['summary']) >= {'cpu_busy_pct', 'iowait_pct'}
    assert collected['status'] == 'ok' and collected['errors'] == []


def test_check_mode_starts_and_stops_nothing(sim, stats):
    planned = stats('started', check_mode=True, **SNAPSHOTS)
    assert planned['changed'] is True
    assert sorted(sampler['collector'] for sampler in planned['samplers']) == ['brw', 'service']
    assert not os.path.exists(planned['stats_dir'])

    stats('started', collectors=['vmstat'], vmstat_interval=1, stop_grace_s=10)
    (sampler,) = stats('stopped', check_mode=True)['samplers']
    assert alive(sampler['pid'])
    would_collect = stats('collected', check_mode=True)
    assert (would_collect['changed'], would_collect['collected'], would_collect['stopped']) == (True, False, [])
    assert alive(sampler['pid'])
    stats('stopped', stop_grace_s=10)
    wait_for('the vmstat sampler gone', lambda: not alive(sampler['pid']), DEADLINE_S)


def test_collecting_what_was_never_started_says_so(sim, stats):
    result = stats('collected')
    assert (result['collected'], result['changed']) == (False, False)
    assert result['msg'] == 'no statistics were started in run %s on this node' % RUN_ID


def test_a_node_without_lustre_skips_its_collectors_with_the_reason(tmp_path, stats, monkeypatch):
    # no lctl on PATH: only the tools of the machine
    monkeypatch.setenv('PATH', '/usr/bin:/bin')
    if os.path.exists('/usr/bin/lctl') or os.path.exists('/bin/lctl'):
        pytest.skip('this machine has lctl')
    started = stats('started', check_mode=True, **SNAPSHOTS)
    assert started['samplers'] == []
    assert started['skipped_collectors'] == {
        'brw': 'lctl is not installed (no Lustre utilities on this node)',
        'service': 'lctl is not installed (no Lustre utilities on this node)'}


def test_a_later_collection_of_the_run_keeps_the_other_surveys_records(sim, stats):
    previous = {'started': '2026-11-22T10:15:00Z', 'finished': '2026-11-22T10:20:00Z',
                'records': [{'collector': 'vmstat', 'label': 'ost', 'samples': []}],
                'errors': [{'point': None, 'message': 'ost: the vmstat sampler had ended before the stop: x'}]}
    stats('started', label='mdtest', **SNAPSHOTS)
    envelope = stats('collected', previous=previous)['envelope']
    assert {record['label'] for record in envelope['records']} == {'ost', 'mdtest'}
    assert [error['message'] for error in envelope['errors']] == [previous['errors'][0]['message']]
    assert envelope['started'] == '2026-11-22T10:15:00Z' and envelope['status'] == 'partial'


@pytest.mark.parametrize('options, message', [
    ({'run_id': '../x'}, 'run_id: run_id must not contain ".."'),
    ({'vmstat_interval': 0}, 'vmstat_interval: vmstat samples every N >= 1 seconds, got 0'),
    ({'brw_interval': -1}, 'brw_interval: 0 (a snapshot at start and at stop) or N >= 1 seconds, got -1'),
    ({'max_duration_s': 0}, 'max_duration_s: must be at least 1 second, got 0'),
    ({'label': '  '}, 'label: must not be empty'),
    ({'stop_grace_s': -1}, 'stop_grace_s: must be 0 or more seconds, got -1'),
])
def test_bad_options_are_named_and_nothing_is_made(tmp_path, options, message, run_in_process):
    args = dict({'state': 'started', 'run_id': RUN_ID, 'workdir': str(tmp_path / 'work')}, **options)
    result = run_in_process(stats_collect_module, args)
    assert result['failed'] is True and message in result['msg']
    assert not (tmp_path / 'work').exists()


def test_every_problem_is_named_at_once(tmp_path, run_in_process):
    result = run_in_process(stats_collect_module, {'state': 'started', 'run_id': 'a/b', 'iostat_interval': 0,
                                                   'label': '', 'workdir': str(tmp_path / 'work')})
    assert [problem.split(':')[0] for problem in result['msg'].split('; ')] == ['run_id', 'iostat_interval', 'label']


def test_a_corrupt_manifest_fails_naming_the_workdir(sim, stats, tmp_path):
    started = stats('started', **SNAPSHOTS)
    with open(os.path.join(started['stats_dir'], 'manifest.json'), 'w') as handle:
        handle.write('{"schema": ')
    result = stats('collected')
    assert result['failed'] is True and 'manifest.json' in result['msg']
    assert result['stats_dir'] == started['stats_dir']
