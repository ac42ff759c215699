# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The statistics cut per sweep point and test: CPU/iowait per timed test, disk I/O size per OST and phase."""

from __future__ import annotations

import json
import os

from ansible_collections.lustre.iokit.plugins.module_utils.results import EnvelopeBuilder
from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import write_envelope
from ansible_collections.lustre.iokit.plugins.plugin_utils.report import run, stats

from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.report.helpers import REPORT_TEMPLATES, RUN_ID

T0 = 1795342000
OSTS = ['testfs-OST0000', 'testfs-OST0001']


def vmstat_record():
    # One report a second; CPU busy of the report stamped T0+k is k %, iowait 2k %.
    samples = [{'time': float(T0 + k), 'us': k, 'sy': 0, 'id': 100 - k, 'wa': 2 * k, 'st': 0} for k in range(1, 41)]
    return {'collector': 'vmstat', 'interval_s': 1, 'samples': samples, 'summary': {}}


def series_record(target, deltas, resets=(), label='obdfilter'):
    """A sampled brw record: samples at T0+1.5 ... T0+30.5 after the start snapshot at T0+0.5."""
    buckets = []
    rows = []
    for sample, bucket, read, write in deltas:
        if bucket not in buckets:
            buckets.append(bucket)
        rows.append([sample, buckets.index(bucket), read, write])
    histograms = {'disk I/O size': {'buckets': buckets, 'deltas': rows}} if rows else {}
    return {'collector': 'brw', 'target': target, 'label': label, 'interval_s': 1, 'start_time': T0 + 0.5,
            'end_time': T0 + 30.5, 'elapsed_s': 30.0, 'reset': bool(resets), 'samples': 31,
            'histograms': {'disk I/O size': []},
            'series': {'times': [T0 + sample + 1.5 for sample in range(30)], 'resets': list(resets),
                       'histograms': histograms}}


def stats_envelope(host, records):
    builder = EnvelopeBuilder(RUN_ID, host, 'stats_collect', 'native', {}, now=T0)
    for record in records:
        builder.add_record(record)
    return builder.finish(now=T0 + 40)


def obdfilter_record(thr, write, read, iteration=None):
    record = {'ost': 2, 'size_kib': 8192, 'rsz_kib': 1024, 'obj': 2, 'thr': thr, 'case': 'disk', 'targets': OSTS,
              'tests': {'write': {'mib_s': 100.0, 'status': 'ok', 'start_time': T0 + write[0], 'end_time': T0 + write[1]},
                        'read': {'mib_s': 120.0, 'status': 'ok', 'start_time': T0 + read[0], 'end_time': T0 + read[1]}}}
    if iteration is not None:
        record['iteration'] = iteration
    return record


def survey_envelope(host, survey, records, engine='native'):
    builder = EnvelopeBuilder(RUN_ID, host, survey, engine, {}, now=T0 + 5)
    for record in records:
        builder.add_record(record)
    return builder.finish(now=T0 + 35)


OBDFILTER = [obdfilter_record(2, (10.2, 12.7), (13.0, 14.5)), obdfilter_record(4, (20.0, 22.0), (22.5, 23.0))]
# OST0000: 12 writes of 1M during the first write phase, a 4K write just after it (in the bracket),
# 16 reads of 1M during the first read; OST0001: 512K writes during the second write, with a reset.
OST0000 = [(9, '1M', 0, 4), (10, '1M', 0, 4), (11, '1M', 0, 4), (12, '4K', 0, 1), (12, '1M', 8, 0), (13, '1M', 8, 0)]
OST0001 = [(19, '512K', 0, 2), (20, '512K', 0, 3)]


def store(tmp_path, envelopes):
    for item in envelopes:
        write_envelope(str(tmp_path), item)
    return run.load_run(str(tmp_path), RUN_ID)


def section_of(tmp_path, envelopes):
    loaded = store(tmp_path, envelopes)
    return stats.stats_section(loaded.run_dir, loaded.envelopes)


def test_timed_tests_name_each_point_by_its_sweep_keys_and_count_repeats():
    envelope = survey_envelope('oss1', 'obdfilter', OBDFILTER + [obdfilter_record(2, (30.0, 31.0), (31.0, 32.0))])
    windows = stats.timed_tests(envelope)
    assert [(window['label'], window['iteration'], window['test'], round(window['start'] - T0, 3),
             round(window['end'] - T0, 3)) for window in windows] == [
        ('rsz 1024K obj 2 thr 2', 1, 'write', 10.2, 12.7), ('rsz 1024K obj 2 thr 2', 1, 'read', 13.0, 14.5),
        ('rsz 1024K obj 2 thr 4', 1, 'write', 20.0, 22.0), ('rsz 1024K obj 2 thr 4', 1, 'read', 22.5, 23.0),
        ('rsz 1024K obj 2 thr 2', 2, 'write', 30.0, 31.0), ('rsz 1024K obj 2 thr 2', 2, 'read', 31.0, 32.0)]
    assert windows[0]['point'] == {'case': 'disk', 'ost': 2, 'size_kib': 8192, 'rsz_kib': 1024, 'obj': 2, 'thr': 2}
    mds = survey_envelope('mds1', 'mds', [{'mdt': 1, 'file': 100, 'dir': 4, 'thr': 4, 'tests': {
        'create': {'ops_s': 10.0, 'status': 'ok', 'start_time': T0 + 1, 'end_time': T0 + 2}}}])
    assert [(window['point'], window['test']) for window in stats.timed_tests(mds)] == [
        ({'mdt': 1, 'file': 100, 'dir': 4, 'thr': 4}, 'create')]
    ost = survey_envelope('client1', 'ost', [{'active_osts': 1, 'osts': [
        {'ost': 0, 'active': True, 'write_start_time': T0 + 1, 'write_end_time': T0 + 2,
         'read_start_time': T0 + 2, 'read_end_time': T0 + 3},
        {'ost': 1, 'active': False, 'write_start_time': None, 'write_end_time': None}]}])
    assert [(window['label'], window['test'], window['end'] - T0) for window in stats.timed_tests(ost)] == [
        ('OST index 0', 'write', 2), ('OST index 0', 'read', 3)]
    # What the iokit engine stores (parsed I/O kit output) has no times: nothing to cut.
    iokit = survey_envelope('oss1', 'obdfilter', [{'ost': 1, 'obj': 1, 'thr': 1, 'tests': {'write': {'mib_s': 1.0}}}])
    assert stats.timed_tests(iokit) == []


def test_cpu_per_point_and_test_takes_the_vmstat_reports_that_overlap_the_test(tmp_path):
    section = section_of(tmp_path, [stats_envelope('oss1', [vmstat_record()]),
                                    survey_envelope('oss1', 'obdfilter', OBDFILTER)])
    rows = [(row['label'], row['test'], row['samples'], row['busy_mean'], row['busy_max'], row['iowait_mean'],
             row['iowait_max'], row['seconds']) for row in section['point_cpu']]
    # A report stamped T covers (T-1, T] and its stamp is cut down to the second: for the write from
    # T0+10.2 to T0+12.7 the reports T0+10 ... T0+13 count.
    assert rows == [('rsz 1024K obj 2 thr 2', 'write', 4, 11.5, 13, 23.0, 26, 2.5),
                    ('rsz 1024K obj 2 thr 2', 'read', 3, 14.0, 15, 28.0, 30, 1.5),
                    ('rsz 1024K obj 2 thr 4', 'write', 3, 21.0, 22, 42.0, 44, 2.0),
                    ('rsz 1024K obj 2 thr 4', 'read', 2, 22.5, 23, 45.0, 46, 0.5)]
    assert section['point_cpu'][0]['host'] == 'oss1' and section['point_cpu'][0]['iteration'] == 1
    assert section['point_cpu_notes'] == []


def test_phase_histogram_is_bracketed_by_the_samples_around_the_phase():
    record = series_record('testfs-OST0000', OST0000)
    # Write from T0+10.2 to T0+12.7: from the sample at T0+9.5 to the one at T0+13.5, so the 4K write
    # of the second after the phase is counted, and the uncertainty says so.
    assert stats.phase_histogram(record, T0 + 10.2, T0 + 12.7, 'write') == {
        'buckets': [('4K', 1), ('1M', 12)], 'before_s': 0.7, 'after_s': 0.8, 'reset': False}
    # The read column only: the 4K write in the same sample is not a read.
    assert stats.phase_histogram(record, T0 + 13.0, T0 + 14.5, 'read') == {
        'buckets': [('1M', 16)], 'before_s': 0.5, 'after_s': 0.0, 'reset': False}
    # A sample taken 0.5 s before the phase but whose read may have lasted 0.6 s is not a safe base: the one
    # before it is, and the window widens by a second.
    record['series']['read_s'] = 0.6
    assert stats.phase_histogram(record, T0 + 13.0, T0 + 14.5, 'read') == {
        'buckets': [('1M', 16)], 'before_s': 1.5, 'after_s': 0.0, 'reset': False}
    del record['series']['read_s']
    # A phase before the first sample starts from the start snapshot; one past the last ends at the last.
    edge = stats.phase_histogram(record, T0 + 0.1, T0 + 40.0, 'write')
    assert edge['buckets'] == [('4K', 1), ('1M', 12)] and edge['after_s'] == -9.5


def test_histogram_buckets_sort_by_size_and_unreadable_labels_last():
    # brw_stats buckets are sizes (4K ... 1M) or page counts (1 ... 256), read as the tools print sizes.
    assert sorted(['1M', 'other', '4K', '512K', '8K'], key=stats._bucket_order) == ['4K', '8K', '512K', '1M', 'other']
    assert sorted(['256', '1', '16', '2'], key=stats._bucket_order) == ['1', '2', '16', '256']


def test_phase_io_rows_per_ost_with_empty_phases_and_resets(tmp_path):
    section = section_of(tmp_path, [
        stats_envelope('oss1', [vmstat_record(), series_record('testfs-OST0000', OST0000),
                                series_record('testfs-OST0001', OST0001, resets=[20])]),
        survey_envelope('oss1', 'obdfilter', OBDFILTER)])
    rows = [(row['label'], row['test'], row['column'], row['target'], row['bucket'], row['ios'], row['pct'],
             row['reset']) for row in section['phase_io_sizes']]
    assert rows == [
        ('rsz 1024K obj 2 thr 2', 'write', 'write', 'testfs-OST0000', '4K', 1, 7.7, False),
        ('rsz 1024K obj 2 thr 2', 'write', 'write', 'testfs-OST0000', '1M', 12, 92.3, False),
        ('rsz 1024K obj 2 thr 2', 'write', 'write', 'testfs-OST0001', None, 0, None, False),
        ('rsz 1024K obj 2 thr 2', 'read', 'read', 'testfs-OST0000', '1M', 16, 100.0, False),
        ('rsz 1024K obj 2 thr 2', 'read', 'read', 'testfs-OST0001', None, 0, None, False),
        ('rsz 1024K obj 2 thr 4', 'write', 'write', 'testfs-OST0000', None, 0, None, False),
        ('rsz 1024K obj 2 thr 4', 'write', 'write', 'testfs-OST0001', '512K', 5, 100.0, True),
        ('rsz 1024K obj 2 thr 4', 'read', 'read', 'testfs-OST0000', None, 0, None, False),
        ('rsz 1024K obj 2 thr 4', 'read', 'read', 'testfs-OST0001', None, 0, None, False)]
    assert section['phase_io_notes'] == []


def test_no_series_and_no_times_are_each_said_in_one_line(tmp_path):
    snapshots_only = dict(series_record('testfs-OST0000', OST0000))
    del snapshots_only['series']
    section = section_of(tmp_path, [
        stats_envelope('oss1', [vmstat_record(), snapshots_only]),
        survey_envelope('oss1', 'obdfilter', OBDFILTER),
        stats_envelope('oss2', [vmstat_record(), series_record('testfs-OST0002', [])]),
        survey_envelope('oss2', 'obdfilter', [{'ost': 1, 'obj': 1, 'thr': 1, 'rsz_kib': 1024,
                                               'tests': {'write': {'mib_s': 1.0, 'status': 'ok'}}}], engine='iokit')])
    assert section['phase_io_sizes'] == []
    assert section['phase_io_notes'] == [
        'oss1 obdfilter: brw_stats were not sampled during the survey (stats_collect_brw_interval 0), '
        'so only the histogram of the whole collection',
        'oss2 obdfilter (engine iokit): its records carry no test times, so no disk I/O size per phase']
    assert section['point_cpu_notes'] == [
        'oss2 obdfilter (engine iokit): its records carry no test times, so no CPU per sweep point']
    assert [row['host'] for row in section['point_cpu']] == ['oss1'] * 4


def test_the_report_files_show_both_tables(tmp_path):
    store(tmp_path, [stats_envelope('oss1', [vmstat_record(), series_record('testfs-OST0000', OST0000),
                                             series_record('testfs-OST0001', OST0001)]),
                     survey_envelope('oss1', 'obdfilter', OBDFILTER),
                     stats_envelope('oss2', [vmstat_record()]),
                     survey_envelope('oss2', 'sgpdd', [{'dev': 1, 'rsz_kib': 1024, 'crg': 1, 'thr': 1,
                                                        'tests': {'write': {'mib_s': 5.0, 'status': 'ok'}}}],
                                     engine='iokit')])
    summary = run.generate(str(tmp_path), RUN_ID, REPORT_TEMPLATES)
    with open(summary['files']['markdown'], encoding='utf-8') as handle:
        markdown = handle.read()
    with open(summary['files']['html'], encoding='utf-8') as handle:
        html = handle.read()
    with open(summary['files']['analysis'], encoding='utf-8') as handle:
        analysis = json.load(handle)
    assert '## Statistics per sweep point (stats_collect)' in markdown
    assert '| oss1 | obdfilter | rsz 1024K obj 2 thr 2 | 1 | write | 2.500 | 4 | 11.5 | 13 | 23.0 | 26 |' in markdown
    assert '| oss1 | rsz 1024K obj 2 thr 2 | 1 | write | testfs-OST0000 | 1M | 12 | 92.3 | 0.700 | 0.800 |' in markdown
    assert '- oss2 sgpdd (engine iokit): its records carry no test times, so no CPU per sweep point' in markdown
    assert 'id="stats-point-cpu-table"' in html and 'id="stats-phase-io-size-table"' in html
    assert '<td>testfs-OST0001</td><td>512K</td>' in html
    assert len(analysis['stats']['point_cpu']) == 4 and len(analysis['stats']['phase_io_sizes']) == 9
    assert 'charts' not in analysis['stats']
    assert os.path.exists(summary['files']['samples'])
