# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The stats_collect engine: exact commands, which processes are signalled, delta arithmetic on real brw_stats."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import signal
import sys

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils.engines import stats_collect as sc
from ansible_collections.lustre.iokit.plugins.module_utils.engines import stats_collect_parsers as scp
from ansible_collections.lustre.iokit.plugins.module_utils.engines import stats_collect_sampler as scs
from ansible_collections.lustre.iokit.plugins.module_utils.engines.errors import EngineError
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState, process_start_time
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.brw_stats import parse_brw_stats
from ansible_collections.lustre.iokit.plugins.module_utils.runner import CommandResult
from ansible_collections.lustre.iokit.tests.unit.fakes import FakeClock
from ansible_collections.lustre.iokit.tests.unit.waiting import wait_for

BRW_FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), 'parsers', 'fixtures', 'brw_stats')
PYTHON = '/usr/bin/python3'
OSD_PARAMS = ['osd-ldiskfs.testfs-OST0000.brw_stats', 'osd-ldiskfs.testfs-OST0001.brw_stats']
SERVICE_PARAMS = ['obdfilter.testfs-OST0000.stats', 'ost.OSS.ost_io.stats']


def fixture(name):
    with open(os.path.join(BRW_FIXTURES, name), encoding='utf-8') as handle:
        return handle.read()


def add_to_row(text, title, bucket, read=0, write=0):
    """``text`` with ``read``/``write`` added to one row of one histogram (percent columns left as they were)."""
    lines = text.split('\n')
    inside = False
    for index, line in enumerate(lines):
        if line.startswith(title):
            inside = True
            continue
        if inside and line.startswith(bucket + ':'):
            match = re.match(r'^(\S+:\s*)(\d+)(\s+\d+\s+\d+\s*\|\s*)(\d+)(.*)$', line)
            lines[index] = '%s%d%s%d%s' % (match.group(1), int(match.group(2)) + read, match.group(3),
                                           int(match.group(4)) + write, match.group(5))
            return '\n'.join(lines)
    raise AssertionError('no row %s in %s' % (bucket, title))


class FakeRunner:
    """Answers lctl list_param/get_param and the vmstat probe; records every command."""

    def __init__(self, params=None, snapshots=None, vmstat_t=True):
        self.params = params if params is not None else {'osd-*.*.brw_stats': OSD_PARAMS,
                                                         'obdfilter.*.stats': SERVICE_PARAMS[:1],
                                                         'ost.OSS.*.stats': SERVICE_PARAMS[1:]}
        self.snapshots = list(snapshots or [])
        self.vmstat_t = vmstat_t
        self.commands = []

    def run(self, argv, env=None, cwd=None):
        self.commands.append(list(argv))
        if argv[1] == 'list_param':
            found = self.params.get(argv[2])
            if not found:
                return CommandResult(argv, 2, '', "error: list_param: param_path '%s': No such file or directory\n"
                                     % argv[2], 0.01)
            return CommandResult(argv, 0, '\n'.join(found) + '\n', '', 0.01)
        if argv[1] == 'get_param':
            text = self.snapshots.pop(0) if self.snapshots else ''
            return CommandResult(argv, 0, text, '', 0.01)
        if argv[1:] == ['-n', '-t', '1', '1']:  # the vmstat probe
            return CommandResult(argv, 0 if self.vmstat_t else 2, '', '' if self.vmstat_t else 'invalid option -- t',
                                 0.01)
        raise AssertionError('unexpected command %r' % (argv,))


class FakeProcess:
    def __init__(self, pid):
        self.pid = pid


class FakeProcesses:
    """The spawner, the liveness check and the signal sender of a node whose processes obey (or ignore) signals."""

    def __init__(self, first_pid=4000, ignore_term=()):
        self.next_pid = first_pid
        self.spawned = []
        self.running = set()
        self.ignore_term = set(ignore_term)
        self.signals = []

    def spawn(self, argv, stdout_path, stderr_path, env=None):
        pid = self.next_pid
        self.next_pid += 1
        self.spawned.append({'argv': list(argv), 'stdout': os.path.basename(stdout_path),
                             'stderr': os.path.basename(stderr_path), 'env': dict(env or {}), 'pid': pid})
        self.running.add(pid)
        return FakeProcess(pid)

    def alive(self, entry):
        return entry.get('pid') in self.running

    def signal(self, pid, signum):
        self.signals.append((pid, signum))
        if signum == signal.SIGKILL or (signum == signal.SIGTERM and pid not in self.ignore_term):
            self.running.discard(pid)


def which(installed):
    return lambda name: '/usr/bin/' + name if name in installed else None


def collection(tmp_path, runner, processes, installed=('vmstat', 'lctl'), clock=None):
    clock = clock or FakeClock(1000.0)
    return sc.StatsCollection(runner, NodeState(str(tmp_path)), 'run1', str(tmp_path), host='oss1',
                              spawner=processes, clock=clock, which=which(installed), python=PYTHON,
                              grace_s=2.0, sleep=clock.sleep, alive=processes.alive,
                              signal_process=processes.signal)


def test_start_reads_params_takes_snapshots_and_spawns_samplers_in_order(tmp_path):
    runner = FakeRunner(snapshots=['brw at start\n', 'service at start\n'])
    processes = FakeProcesses()
    stats = collection(tmp_path, runner, processes, installed=('vmstat', 'iostat', 'lctl'))
    outcome = stats.start(list(sc.COLLECTORS), {'vmstat': 2, 'iostat': 5, 'brw': 10, 'service': 0, 'client': 0},
                          max_duration_s=600)
    assert outcome['changed'] is True
    assert runner.commands == [
        ['/usr/bin/vmstat', '-n', '-t', '1', '1'],
        ['lctl', 'list_param', 'osd-*.*.brw_stats'],
        ['lctl', 'list_param', 'obdfilter.*.stats'],
        ['lctl', 'list_param', 'ost.OSS.*.stats'],
        ['lctl', 'list_param', 'mdt.*.md_stats'],
        ['lctl', 'list_param', 'mds.MDS.*.stats'],
        ['lctl', 'list_param', 'ldlm.services.*.stats'],
        ['lctl', 'list_param', 'osc.*.stats'],
        ['lctl', 'list_param', 'llite.*.stats'],
        ['lctl', 'list_param', 'mdc.*.md_stats'],
        ['lctl', 'get_param'] + OSD_PARAMS,
        ['lctl', 'get_param'] + SERVICE_PARAMS,
    ]
    assert [(item['argv'], item['stdout']) for item in processes.spawned] == [
        (['/usr/bin/vmstat', '-n', '-t', '2', '301'], 'stats-vmstat.out'),
        ([PYTHON, '-c', scs.SAMPLER_SOURCE, '10', '600', 'lctl', 'get_param'] + OSD_PARAMS, 'stats-brw.out'),
        (['/usr/bin/iostat', '-d', '-x', '-k', '-t', '-y', '5', '121'], 'stats-iostat.out'),
    ]
    # Times in UTC and ISO form, so that the parsers read them without the node's locale or time zone.
    assert all(item['env'] == {'TZ': 'UTC', 'S_TIME_FORMAT': 'ISO'} for item in processes.spawned)
    assert outcome['manifest']['skipped'] == {'client': 'no osc.*.stats, llite.*.stats, mdc.*.md_stats parameters '
                                                        'on this node'}
    recorded = NodeState(str(tmp_path)).entries('processes', 'run1')
    assert [(entry['pid'], entry['sampler'], entry.get('survey'), entry['group']) for entry in recorded] == [
        (4000, 'vmstat', None, True), (4001, 'brw', None, True), (4002, 'iostat', None, True)]
    # The sampler's source is not repeated in the node state.
    assert recorded[1]['command'][:3] == [PYTHON, '-c', '<lustre.iokit sampler>']
    with open(os.path.join(stats.directory, 'stats-brw.start')) as handle:
        expected = '%s 1000.000000 rc=0 took=0.000000\nbrw at start\n%s\n' % (scp.SAMPLE_MARK, scp.SAMPLE_END)
        assert handle.read() == expected


def test_start_falls_back_to_obdfilter_brw_stats_and_vmstat_without_timestamps(tmp_path):
    runner = FakeRunner(params={'obdfilter.*.brw_stats': ['obdfilter.lustre-OST0000.brw_stats']}, vmstat_t=False)
    processes = FakeProcesses()
    stats = collection(tmp_path, runner, processes)
    stats.start([sc.VMSTAT, sc.BRW], {'vmstat': 1, 'brw': 0}, max_duration_s=60)
    assert runner.commands == [
        ['/usr/bin/vmstat', '-n', '-t', '1', '1'],
        ['lctl', 'list_param', 'osd-*.*.brw_stats'],
        ['lctl', 'list_param', 'obdfilter.*.brw_stats'],
        ['lctl', 'get_param', 'obdfilter.lustre-OST0000.brw_stats'],
    ]
    assert [item['argv'] for item in processes.spawned] == [['/usr/bin/vmstat', '-n', '1', '61']]


def test_without_tools_every_collector_is_skipped_with_its_reason(tmp_path):
    runner = FakeRunner()
    processes = FakeProcesses()
    stats = collection(tmp_path, runner, processes, installed=())
    outcome = stats.start(list(sc.COLLECTORS), dict(sc.DEFAULT_INTERVALS), 60)
    assert runner.commands == [] and processes.spawned == []
    assert outcome['manifest']['skipped'] == {
        'vmstat': 'vmstat is not installed', 'iostat': 'iostat is not installed',
        'brw': 'lctl is not installed (no Lustre utilities on this node)',
        'service': 'lctl is not installed (no Lustre utilities on this node)',
        'client': 'lctl is not installed (no Lustre utilities on this node)'}


def test_second_start_changes_nothing(tmp_path):
    runner = FakeRunner()
    processes = FakeProcesses()
    stats = collection(tmp_path, runner, processes)
    stats.start([sc.VMSTAT], {'vmstat': 1}, 60)
    count = len(runner.commands)
    again = stats.start([sc.VMSTAT], {'vmstat': 1}, 60)
    assert again['changed'] is False
    assert len(runner.commands) == count and len(processes.spawned) == 1


def test_stop_signals_only_our_samplers_kills_the_stubborn_one_and_is_idempotent(tmp_path):
    runner = FakeRunner(snapshots=['brw start\n', 'service start\n', 'brw end\n', 'service end\n'])
    processes = FakeProcesses(ignore_term=[4001])
    processes.running.add(77)  # somebody else's process
    stats = collection(tmp_path, runner, processes)
    stats.start([sc.VMSTAT, sc.BRW, sc.SERVICE], {'vmstat': 1, 'brw': 1, 'service': 0}, 600)
    runner.commands = []
    outcome = stats.stop()
    assert outcome['changed'] is True
    assert processes.signals == [(4000, signal.SIGTERM), (4001, signal.SIGTERM), (4001, signal.SIGKILL)]
    assert outcome['stopped'] == [{'collector': 'vmstat', 'pid': 4000, 'signal': 'SIGTERM'},
                                  {'collector': 'brw', 'pid': 4001, 'signal': 'SIGKILL'}]
    assert runner.commands == [['lctl', 'get_param'] + OSD_PARAMS, ['lctl', 'get_param'] + SERVICE_PARAMS]
    assert processes.running == {77}
    assert NodeState(str(tmp_path)).entries('processes') == []
    again = stats.stop()
    assert again['changed'] is False and again['stopped'] == []
    assert len(processes.signals) == 3 and len(runner.commands) == 2


def test_a_sampler_gone_before_the_stop_is_an_error_and_never_signalled(tmp_path):
    runner = FakeRunner()
    processes = FakeProcesses()
    stats = collection(tmp_path, runner, processes)
    stats.start([sc.VMSTAT], {'vmstat': 1}, 600)
    processes.running.clear()
    with open(os.path.join(stats.directory, 'stats-vmstat.err'), 'w') as handle:
        handle.write('vmstat: something went wrong\n')
    outcome = stats.stop()
    assert processes.signals == []
    assert outcome['manifest']['errors'] == ['the vmstat sampler had ended before the stop: vmstat: something went wrong']
    assert NodeState(str(tmp_path)).entries('processes') == []


def test_a_sampler_that_reached_its_time_limit_is_no_error(tmp_path):
    clock = FakeClock(1000.0)
    runner = FakeRunner()
    processes = FakeProcesses()
    stats = collection(tmp_path, runner, processes, clock=clock)
    stats.start([sc.VMSTAT], {'vmstat': 1}, 60)
    processes.running.clear()
    clock.now += 120
    assert stats.stop()['manifest']['errors'] == []


def test_stop_without_a_start_changes_nothing(tmp_path):
    processes = FakeProcesses()
    outcome = collection(tmp_path, FakeRunner(), processes).stop()
    assert outcome == {'changed': False, 'stopped': [], 'manifest': None}


def test_stopping_never_signals_a_process_that_reused_the_pid():
    own = {'pid': os.getpid(), 'start_time': process_start_time(os.getpid())}
    assert scs.sampler_alive(own) is True
    assert scs.sampler_alive(dict(own, start_time=own['start_time'] - 1)) is False
    assert scs.sampler_alive({'pid': None}) is False


# -- delta arithmetic on real brw_stats ------------------------------------------------------------------


def test_brw_delta_is_the_io_of_the_survey_only():
    start_text = fixture('osd_ldiskfs_production_2022.txt')
    end_text = add_to_row(add_to_row(start_text, 'disk I/O size', '1M', write=5000), 'disk I/O size', '4K', read=10)
    end_text = add_to_row(end_text, 'pages per bulk r/w', '256', write=5000)
    histograms, reset = scp.brw_delta(parse_brw_stats(start_text), parse_brw_stats(end_text))
    assert reset is False
    assert histograms['disk I/O size'] == [
        {'bucket': '4K', 'read': {'count': 10, 'pct': 100, 'cum_pct': 100}, 'write': {'count': 0, 'pct': 0, 'cum_pct': 0}},
        {'bucket': '1M', 'read': {'count': 0, 'pct': 0, 'cum_pct': 100}, 'write': {'count': 5000, 'pct': 100, 'cum_pct': 100}},
    ]
    assert histograms['pages per bulk r/w'] == [
        {'bucket': '256', 'read': {'count': 0, 'pct': 0, 'cum_pct': 0}, 'write': {'count': 5000, 'pct': 100, 'cum_pct': 100}}]
    # Every other histogram was printed but did not move.
    assert set(histograms) == set(parse_brw_stats(end_text)['histograms'])
    assert all(rows == [] for title, rows in histograms.items() if title not in ('disk I/O size', 'pages per bulk r/w'))


def test_brw_delta_percentages_split_the_survey_io():
    start_text = fixture('osd_ldiskfs_production_2022.txt')
    end_text = start_text
    for bucket, writes in (('4K', 1), ('512K', 1), ('1M', 2)):
        end_text = add_to_row(end_text, 'disk I/O size', bucket, write=writes)
    histograms, unused_reset = scp.brw_delta(parse_brw_stats(start_text), parse_brw_stats(end_text))
    assert [(row['bucket'], row['write']['count'], row['write']['pct'], row['write']['cum_pct'])
            for row in histograms['disk I/O size']] == [('4K', 1, 25, 25), ('512K', 1, 25, 50), ('1M', 2, 50, 100)]


def test_brw_delta_after_a_reset_takes_the_end_counts():
    start = parse_brw_stats(fixture('osd_ldiskfs_production_2022.txt'))
    # Somebody ran `lctl set_param osd-ldiskfs.*.brw_stats=0` during the survey: counts went down.
    end_text = fixture('osd_ldiskfs_production_2022.txt')
    end_text = re.sub(r'(?m)^1M:\s+79706\s+24 100\s+\| 180654', '1M:\t\t         3  24 100   |     7', end_text)
    end = parse_brw_stats(end_text)
    histograms, reset = scp.brw_delta(start, end)
    assert reset is True
    assert [row for row in histograms['disk I/O size'] if row['bucket'] == '1M'][0]['write']['count'] == 7


def test_brw_delta_sees_a_reset_in_the_start_time_when_there_was_something_to_reset():
    targets = parse_brw_stats(fixture('get_param_three_targets.txt'))['targets']
    ost, mdt = targets[1], targets[0]
    assert scp.brw_delta(ost, dict(ost, start_time=ost['start_time'] + 60))[1] is True
    # Nothing counted yet: a moved start_time cannot spoil the delta.
    assert scp.brw_delta(mdt, dict(mdt, start_time=mdt['start_time'] + 60))[1] is False


def test_brw_records_per_target_from_three_target_snapshots(tmp_path):
    start_text = fixture('get_param_three_targets.txt')
    end_text = add_to_row(start_text, 'pages per bulk r/w', '1K', write=100)  # the first 1K row: OST0000's
    runner = FakeRunner(params={'osd-*.*.brw_stats': ['osd-ldiskfs.ai400-MDT0000.brw_stats',
                                                      'osd-ldiskfs.ai400-OST0000.brw_stats',
                                                      'osd-ldiskfs.ai400-OST0001.brw_stats']},
                        snapshots=[start_text, end_text])
    processes = FakeProcesses()
    clock = FakeClock(1000.0)
    stats = collection(tmp_path, runner, processes, clock=clock)
    stats.start([sc.BRW], {'brw': 0}, 600)
    clock.now += 30
    records, errors, info = stats.collect()
    assert errors == []
    assert [(record['collector'], record['target'], record['elapsed_s'], record['reset']) for record in records] == [
        ('brw', 'ai400-MDT0000', 30.0, False), ('brw', 'ai400-OST0000', 30.0, False),
        ('brw', 'ai400-OST0001', 30.0, False)]
    assert records[1]['histograms']['pages per bulk r/w'] == [
        {'bucket': '1K', 'read': {'count': 0, 'pct': 0, 'cum_pct': 0}, 'write': {'count': 100, 'pct': 100, 'cum_pct': 100}}]
    assert all(rows == [] for record in (records[0], records[2]) for rows in record['histograms'].values())
    assert info['collected'] is True and info['stopped_now'] == []


THREE_TARGETS = ['osd-ldiskfs.ai400-MDT0000.brw_stats', 'osd-ldiskfs.ai400-OST0000.brw_stats',
                 'osd-ldiskfs.ai400-OST0001.brw_stats']


def sampled_brw(tmp_path, texts, end_text, interval=1):
    """A brw collection at ``interval`` whose sampler wrote ``texts`` one second apart; the collected records."""
    start_text = fixture('get_param_three_targets.txt')
    runner = FakeRunner(params={'osd-*.*.brw_stats': THREE_TARGETS}, snapshots=[start_text, end_text])
    processes = FakeProcesses()
    clock = FakeClock(1000.0)
    stats = collection(tmp_path, runner, processes, clock=clock)
    stats.start([sc.BRW], {'brw': interval}, 600)
    if interval:
        # What SAMPLER_SOURCE writes: one marked sample per get_param, plus one cut short by the stop.
        with open(os.path.join(stats.directory, 'stats-brw.out'), 'w', encoding='utf-8') as handle:
            for second, text in enumerate(texts, 1):
                mark = '%s %.6f rc=0 took=0.250000\n' % (scp.SAMPLE_MARK, 1000.0 + second)
                handle.write(mark + text + scp.SAMPLE_END + '\n')
            handle.write('%s %.6f rc=0\n%s' % (scp.SAMPLE_MARK, 1000.0 + len(texts) + 1, texts[-1][:200]))
    clock.now = 1000.0 + len(texts) + 1.5
    records, errors, unused_info = stats.collect()
    assert errors == []
    return dict((record['target'], record) for record in records)


def test_sampled_brw_keeps_a_sparse_series_whose_sum_is_the_whole_delta(tmp_path):
    base = fixture('get_param_three_targets.txt')
    first = add_to_row(base, 'disk I/O size', '1M', write=10)
    idle = first
    third = add_to_row(add_to_row(first, 'disk I/O size', '1M', read=5), 'disk I/O size', '2M', write=3)
    end = add_to_row(third, 'pages per bulk r/w', '1K', write=7)
    records = sampled_brw(tmp_path, [first, idle, third], end)
    ost = records['ai400-OST0000']
    # The whole-collection delta is as before: first snapshot against the last.
    assert [(row['bucket'], row['read']['count'], row['write']['count'])
            for row in ost['histograms']['disk I/O size']] == [('1M', 5, 10), ('2M', 0, 3)]
    assert ost['series'] == {
        'times': [1001.0, 1002.0, 1003.0, 1004.5],
        # The longest get_param of the samples: what a sample holds was read up to that long after its time.
        'read_s': 0.25,
        'resets': [],
        'histograms': {'disk I/O size': {'buckets': ['1M', '2M'],
                                         'deltas': [[0, 0, 0, 10], [2, 0, 5, 0], [2, 1, 0, 3]]},
                       'pages per bulk r/w': {'buckets': ['1K'], 'deltas': [[3, 0, 0, 7]]}}}
    # Only the histograms the report cuts per phase are kept sample by sample.
    assert set(ost['histograms']) > set(scp.BRW_SERIES_HISTOGRAMS)
    # Idle targets cost their times only.
    assert records['ai400-OST0001']['series'] == {'times': [1001.0, 1002.0, 1003.0, 1004.5], 'resets': [],
                                                  'read_s': 0.25, 'histograms': {}}
    for title in scp.BRW_SERIES_HISTOGRAMS:
        kept = ost['series']['histograms'][title]
        summed = {}
        for unused_sample, bucket, read, write in kept['deltas']:
            totals = summed.setdefault(kept['buckets'][bucket], [0, 0])
            totals[0] += read
            totals[1] += write
        assert summed == dict((row['bucket'], [row['read']['count'], row['write']['count']])
                              for row in ost['histograms'][title])


def test_a_reset_between_samples_counts_that_sample_from_zero(tmp_path):
    base = fixture('get_param_three_targets.txt')
    first = add_to_row(base, 'disk I/O size', '1M', write=10)
    # Somebody ran `lctl set_param osd-ldiskfs.*.brw_stats=0`: OST0000's 2M count fell from 50000 to 4.
    reset = re.sub(r'(?m)^2M:\t\t         0   0   0   \| 50000  99 100$', '2M:\t\t         0   0   0   |    4  99 100',
                   base)
    assert reset != base
    reset = re.sub(r'(?m)^(32K|64K|128K):.*$', lambda match: '%s:\t\t         0   0   0   |    0   0   0'
                   % match.group(1), reset)
    records = sampled_brw(tmp_path, [first, reset], add_to_row(reset, 'disk I/O size', '2M', write=2))
    series = records['ai400-OST0000']['series']
    assert series['resets'] == [1]
    assert series['histograms']['disk I/O size'] == {'buckets': ['1M', '2M'],
                                                     'deltas': [[0, 0, 0, 10], [1, 1, 0, 4], [2, 1, 0, 2]]}
    assert records['ai400-OST0000']['reset'] is True


def test_snapshots_only_brw_has_no_series(tmp_path):
    records = sampled_brw(tmp_path, [], add_to_row(fixture('get_param_three_targets.txt'), 'disk I/O size', '1M',
                                                   write=1), interval=0)
    assert all('series' not in record for record in records.values())
    assert records['ai400-OST0000']['histograms']['disk I/O size'][0]['write']['count'] == 1


# -- counters, vmstat, iostat ------------------------------------------------------------------------------

COUNTERS_START = '''obdfilter.testfs-OST0000.stats=
snapshot_time             1795444766.301403999 secs.nsecs
start_time                1795444700.000000000 secs.nsecs
elapsed_time              66.301403999 secs.nsecs
read_bytes                10 samples [bytes] 4096 1048576 5242880 2748779069440
write_bytes               4 samples [bytes] 1048576 1048576 4194304 4398046511104
setattr                   2 samples [usecs] 3 9 12
statfs                    7 samples [reqs]
ost.OSS.ost_io.stats=
snapshot_time             1795444766.301403999 secs.nsecs
req_waittime              100 samples [usecs] 2 800 9000 1200000
'''
COUNTERS_END = '''obdfilter.testfs-OST0000.stats=
snapshot_time             1795444866.301403999 secs.nsecs
start_time                1795444700.000000000 secs.nsecs
elapsed_time              166.301403999 secs.nsecs
read_bytes                10 samples [bytes] 4096 1048576 5242880 2748779069440
write_bytes               68 samples [bytes] 1048576 1048576 71303168 74766790688768
setattr                   2 samples [usecs] 3 9 12
statfs                    9 samples [reqs]
create                    1 samples [usecs] 40 40 40
ost.OSS.ost_io.stats=
snapshot_time             1795444866.301403999 secs.nsecs
req_waittime              164 samples [usecs] 2 800 15000 1900000
'''


def test_counter_deltas_leave_out_what_did_not_move():
    start = scp.parse_counters(COUNTERS_START)
    end = scp.parse_counters(COUNTERS_END)
    assert start['obdfilter.testfs-OST0000.stats']['counters']['statfs'] == {
        'count': 7, 'unit': 'reqs', 'min': None, 'max': None, 'sum': None, 'sumsq': None}
    counters, reset = scp.counters_delta(start['obdfilter.testfs-OST0000.stats'], end['obdfilter.testfs-OST0000.stats'])
    assert reset is False
    assert counters == {'write_bytes': {'count': 64, 'sum': 67108864, 'unit': 'bytes'},
                        'statfs': {'count': 2, 'sum': None, 'unit': 'reqs'},
                        'create': {'count': 1, 'sum': 40, 'unit': 'usecs'}}
    counters, reset = scp.counters_delta(start['ost.OSS.ost_io.stats'], end['ost.OSS.ost_io.stats'])
    assert counters == {'req_waittime': {'count': 64, 'sum': 6000, 'unit': 'usecs'}}


def test_counter_delta_after_a_clear_is_flagged():
    start = scp.parse_counters(COUNTERS_END)['obdfilter.testfs-OST0000.stats']
    end = scp.parse_counters(COUNTERS_START)['obdfilter.testfs-OST0000.stats']
    end['start_time'] = start['start_time']
    counters, reset = scp.counters_delta(start, end)
    assert reset is True
    assert counters['write_bytes'] == {'count': 4, 'sum': 4194304, 'unit': 'bytes'}


VMSTAT_T = '''procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----
 r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 UTC
 5  0      0 21473076 316440 1887884    0    0 12366 13079  594 1256 41 11 47  0  0 2026-11-23 14:40:39
 1  2      0 21473076 316440 1887884    0    0   104 90000 1223 7315 20 10 40 30  0 2026-11-23 14:40:40
 0  1      0 21473000 316440 1887884    0    0     0 80000 1100 7000 10  6 74 10  0 2026-11-23 14:40:41
'''


def test_vmstat_drops_the_since_boot_line_and_reads_utc_times():
    rows = scp.parse_vmstat(VMSTAT_T)
    assert [(row['us'], row['sy'], row['wa'], row['bo'], row['time']) for row in rows] == [
        (20, 10, 30, 90000, 1795444840.0), (10, 6, 10, 80000, 1795444841.0)]
    assert scp.vmstat_summary(rows) == {'samples': 2, 'cpu_busy_pct': {'mean': 23.0, 'max': 30},
                                        'iowait_pct': {'mean': 20.0, 'max': 30}}


def test_vmstat_without_timestamps_and_with_the_gu_column():
    text = ('procs -----------memory---------- ---swap-- -----io---- -system-- -------cpu-------\n'
            ' r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st gu\n'
            ' 1  0      0 100 200 300 0 0 1 2 3 4 5 6 89 0 0 0\n'
            ' 2  0      0 100 200 300 0 0 1 2 3 4 50 6 40 4 0 0\n')
    assert scp.parse_vmstat(text) == [{'r': 2, 'b': 0, 'swpd': 0, 'free': 100, 'buff': 200, 'cache': 300, 'si': 0,
                                      'so': 0, 'bi': 1, 'bo': 2, 'in': 3, 'cs': 4, 'us': 50, 'sy': 6, 'id': 40,
                                       'wa': 4, 'st': 0, 'gu': 0, 'time': None}]


IOSTAT = '''Linux 6.1.0 (oss1) \t11/23/2026 \t_x86_64_\t(2 CPU)

2026-11-23T14:40:40+0000
Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   %util
sda              0.00      0.00     0.00   0.00    0.00     0.00    2.00      8.00    0.40
sdb              1.50    192.00     0.00   0.00    1.00   128.00  100.00 102400.00   97.10

2026-11-23T14:40:41+0000
Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   %util
sdb              0.00      0.00     0.00   0.00    0.00     0.00   90.00  92160.00   88.00

'''


def test_iostat_reports_by_time_and_device():
    reports = scp.parse_iostat(IOSTAT)
    assert [report['time'] for report in reports] == [1795444840.0, 1795444841.0]
    assert reports[0]['devices']['sdb']['wkB/s'] == 102400.0
    assert reports[1]['devices'] == {'sdb': {'r/s': 0.0, 'rkB/s': 0.0, 'rrqm/s': 0.0, '%rrqm': 0.0, 'r_await': 0.0,
                                             'rareq-sz': 0.0, 'w/s': 90.0, 'wkB/s': 92160.0, '%util': 88.0}}


def test_a_sample_cut_short_by_a_kill_is_ignored():
    text = ('%s 10.5 rc=0\nfirst\n%s\n%s 11.5 rc=0\nsecond\n%s\n%s 12.5 rc=0\nhalf of the thi'
            % (scp.SAMPLE_MARK, scp.SAMPLE_END, scp.SAMPLE_MARK, scp.SAMPLE_END, scp.SAMPLE_MARK))
    assert scp.split_samples(text) == [(10.5, 0, 'first\n'), (11.5, 0, 'second\n')]


def test_a_sample_says_how_long_its_command_took_when_the_sampler_wrote_it():
    text = ('%s 10.5 rc=0 took=0.125000\nfirst\n%s\n%s 11.5 rc=0\nsecond\n%s\n'
            % (scp.SAMPLE_MARK, scp.SAMPLE_END, scp.SAMPLE_MARK, scp.SAMPLE_END))
    assert scp.split_samples(text) == [(10.5, 0, 'first\n'), (11.5, 0, 'second\n')]
    assert scp.split_samples(text, with_took=True) == [(10.5, 0, 'first\n', 0.125), (11.5, 0, 'second\n', None)]


def test_collect_stops_first_and_returns_every_collector(tmp_path):
    runner = FakeRunner(snapshots=[COUNTERS_START, COUNTERS_END])
    processes = FakeProcesses()
    clock = FakeClock(1000.0)
    stats = collection(tmp_path, runner, processes, clock=clock)
    stats.start([sc.VMSTAT, sc.SERVICE], {'vmstat': 1, 'service': 0}, 600)
    with open(os.path.join(stats.directory, 'stats-vmstat.out'), 'w') as handle:
        handle.write(VMSTAT_T)
    clock.now += 100
    records, errors, info = stats.collect()
    assert processes.signals == [(4000, signal.SIGTERM)]
    assert errors == []
    assert [record['collector'] for record in records] == ['vmstat', 'service', 'service']
    assert records[0]['summary']['iowait_pct'] == {'mean': 20.0, 'max': 30}
    assert records[1]['param'] == 'obdfilter.testfs-OST0000.stats'
    assert records[1]['counters']['write_bytes'] == {'count': 64, 'sum': 67108864, 'unit': 'bytes'}
    assert info['stopped_now'] == [{'collector': 'vmstat', 'pid': 4000, 'signal': 'SIGTERM'}]
    assert sorted(os.path.basename(path) for path in info['files']) == [
        'stats-service.end', 'stats-service.start', 'stats-vmstat.out']


def test_collect_without_a_start_says_so(tmp_path):
    records, errors, info = collection(tmp_path, FakeRunner(), FakeProcesses()).collect()
    assert (records, errors, info['collected']) == ([], [], False)
    assert 'no statistics were started in run run1' in info['reason']


def test_a_corrupt_manifest_names_the_file(tmp_path):
    stats = collection(tmp_path, FakeRunner(), FakeProcesses())
    os.makedirs(stats.directory)
    with open(stats.manifest_path, 'w') as handle:
        handle.write('{not json')
    with pytest.raises(EngineError, match='manifest.json is not valid JSON'):
        stats.stop()


@pytest.mark.parametrize('intervals,message', [
    ({'vmstat': 0}, 'vmstat_interval: vmstat samples every N >= 1 seconds, got 0'),
    ({'brw': -1}, 'brw_interval: 0 (a snapshot at start and at stop) or N >= 1 seconds, got -1'),
])
def test_interval_problems_name_the_option(intervals, message):
    assert [str(problem) for problem in sc.interval_problems(intervals, list(intervals), 60)] == [message]


# -- the real sampler and spawner ---------------------------------------------------------------------------


def samples_in(path):
    with open(path) as handle:
        return handle.read().count(scp.SAMPLE_END)


def test_the_real_sampler_runs_detached_and_stops_cleanly_on_sigterm(tmp_path):
    out = str(tmp_path / 'out')
    process = scs.Spawner().spawn([sys.executable, '-c', scs.SAMPLER_SOURCE, '0.1', '60', 'echo', 'hello'],
                                  out, str(tmp_path / 'err'))
    try:
        assert os.getpgid(process.pid) == process.pid
        wait_for('three samples from the sampler', lambda: samples_in(out) >= 3, 60, process)
        os.killpg(process.pid, signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    with open(out) as handle:
        samples = scp.split_samples(handle.read())
    assert len(samples) >= 3
    assert all(rc == 0 and body == 'hello\n' for unused_time, rc, body in samples)
    assert samples[1][0] > samples[0][0]


def test_the_real_sampler_stops_by_itself_at_its_time_limit(tmp_path):
    out = str(tmp_path / 'out')
    process = scs.Spawner().spawn([sys.executable, '-c', scs.SAMPLER_SOURCE, '0.2', '0.5', 'true'],
                                  out, str(tmp_path / 'err'))
    try:
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    with open(out) as handle:
        assert 1 <= len(scp.split_samples(handle.read())) <= 4


def test_start_and_stop_with_real_processes_leave_nothing_running(tmp_path):
    runner = FakeRunner(params={})
    stats = sc.StatsCollection(runner, NodeState(str(tmp_path)), 'run1', str(tmp_path), host='oss1',
                               which=lambda name: '/bin/sh' if name == 'vmstat' else None, grace_s=2.0)
    # /bin/sh stands in for vmstat: `sh -n -t 1 61` is refused at once, so the engine must report it.
    outcome = stats.start([sc.VMSTAT], {'vmstat': 1}, 60)
    assert any('the vmstat sampler exited at once' in problem for problem in outcome['manifest']['errors'])
    assert NodeState(str(tmp_path)).entries('processes') == []
    with open(stats.manifest_path) as handle:
        assert json.load(handle)['collectors']['vmstat']['ended_early'] is True


# -- one host, several surveys in a run ------------------------------------------------------------------------


def test_records_and_errors_carry_the_label_of_their_collection(tmp_path):
    runner = FakeRunner(snapshots=[COUNTERS_START, COUNTERS_END])
    processes = FakeProcesses()
    stats = collection(tmp_path, runner, processes)
    stats.start([sc.VMSTAT, sc.SERVICE], {'vmstat': 1, 'service': 0}, 600, label='mdtest')
    processes.running.clear()  # vmstat died early: an error of this collection
    records, errors, info = stats.collect()
    assert {record['label'] for record in records} == {'mdtest'} and info['label'] == 'mdtest'
    assert errors == ['mdtest: the vmstat sampler had ended before the stop: no error output']


def test_merge_keeps_the_other_surveys_of_the_run_and_replaces_this_one():
    previous = {'started': '2026-11-23T10:00:00Z', 'finished': '2026-11-23T10:05:00Z',
                'records': [{'collector': 'vmstat', 'label': 'ost'}, {'collector': 'brw', 'label': 'mdtest'}],
                'errors': [{'point': None, 'message': 'ost: the vmstat sampler had ended before the stop: x'},
                           {'point': None, 'message': 'mdtest: an old problem'}]}
    later = 1795428000.0 + 600  # 2026-11-23T10:10:00Z
    records, errors, started, stopped = sc.merge_previous(
        previous, 'mdtest', [{'collector': 'vmstat', 'label': 'mdtest'}], ['mdtest: new'], later, later + 60)
    assert records == [{'collector': 'vmstat', 'label': 'ost'}, {'collector': 'vmstat', 'label': 'mdtest'}]
    assert errors == ['ost: the vmstat sampler had ended before the stop: x', 'mdtest: new']
    assert (started, stopped) == (1795428000.0, later + 60)


def test_merge_without_a_previous_envelope_changes_nothing():
    assert sc.merge_previous(None, 'stats', [{'a': 1}], [], 5.0, 6.0) == ([{'a': 1}], [], 5.0, 6.0)
