# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The report's statistics section: I/O size rows per target, CPU/iowait per survey window, time lines."""

from __future__ import annotations

import os

from ansible_collections.lustre.iokit.plugins.module_utils.results import EnvelopeBuilder
from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import write_envelope
from ansible_collections.lustre.iokit.plugins.plugin_utils.report import run, stats

from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.report.helpers import REPORT_TEMPLATES, RUN_ID

T0 = 1795342000


def brw_record(target, rows):
    return {'collector': 'brw', 'target': target, 'elapsed_s': 300.0, 'reset': False,
            'histograms': {'disk I/O size': rows, 'pages per bulk r/w': []}}


def row(bucket, read, write, read_pct, write_pct):
    return {'bucket': bucket, 'read': {'count': read, 'pct': read_pct, 'cum_pct': 0},
            'write': {'count': write, 'pct': write_pct, 'cum_pct': 0}}


def vmstat_record(busy_inside=80, wait_inside=50):
    samples = []
    for offset in range(10, 301, 10):
        inside = 100 <= offset <= 200
        samples.append({'time': float(T0 + offset), 'us': busy_inside - 10 if inside else 5, 'sy': 10 if inside else 1,
                        'id': 0, 'wa': wait_inside if inside else 0, 'st': 0})
    return {'collector': 'vmstat', 'interval_s': 10, 'samples': samples, 'summary': {}}


def stats_envelope(host, records, errors=(), skipped=None):
    builder = EnvelopeBuilder(RUN_ID, host, 'stats_collect', 'native', {}, now=T0)
    for record in records:
        builder.add_record(record)
    for message in errors:
        builder.add_error(message)
    builder.set_environment(skipped_collectors=skipped or {'iostat': 'iostat is not installed'})
    return builder.finish(now=T0 + 300)


def survey_envelope(host, start, end):
    builder = EnvelopeBuilder(RUN_ID, host, 'obdfilter', 'native', {}, now=start)
    builder.add_record({'ost': 1, 'obj': 1, 'thr': 1, 'rsz_kib': 1024, 'size_kib': 1024,
                        'tests': {'write': {'mib_s': 100.0, 'min_mib_s': 90.0, 'max_mib_s': 110.0, 'status': 'ok'}}})
    return builder.finish(now=end)


def store(tmp_path, envelopes):
    results_dir = str(tmp_path)
    for item in envelopes:
        write_envelope(results_dir, item)
    return results_dir


def test_io_size_rows_keep_only_the_buckets_that_moved_per_target():
    envelope = stats_envelope('oss1', [brw_record('testfs-OST0000', [row('4K', 3, 0, 100, 0), row('1M', 0, 64, 0, 100)]),
                                       brw_record('testfs-OST0001', []), vmstat_record()])
    assert [(item['target'], item['bucket'], item['read'], item['write'], item['write_pct'])
            for item in stats.io_size_rows(envelope)] == [
        ('testfs-OST0000', '4K', 3, 0, 0), ('testfs-OST0000', '1M', 0, 64, 100)]


def test_cpu_is_summarised_over_the_collection_and_within_each_survey(tmp_path):
    results_dir = store(tmp_path, [stats_envelope('oss1', [vmstat_record()]),
                                   survey_envelope('oss1', T0 + 100, T0 + 200),
                                   survey_envelope('oss2', T0 + 10, T0 + 20)])
    loaded = run.load_run(results_dir, RUN_ID)
    section = stats.stats_section(loaded.run_dir, loaded.envelopes)
    whole, survey = section['cpu']
    assert (whole['host'], whole['window'], whole['samples']) == ('oss1', 'whole collection', 30)
    assert whole['iowait_mean'] == 11 * 50 / 30 and whole['iowait_max'] == 50
    # Only the eleven reports stamped from the survey's start to its end second count for the survey.
    assert (survey['window'], survey['samples'], survey['iowait_mean'], survey['busy_mean'], survey['busy_max']) == (
        'obdfilter survey', 11, 50, 80, 80)


def test_time_line_of_cpu_and_iowait_in_the_line_chart_shape(tmp_path):
    results_dir = store(tmp_path, [stats_envelope('oss1', [vmstat_record()])])
    section = stats.stats_section(os.path.join(results_dir, RUN_ID), [])
    chart = section['charts'][0]
    assert chart['id'] == 'stats-cpu-oss1'
    assert [series['label'] for series in chart['series']] == ['CPU busy (us+sy)', 'iowait (wa)']
    assert chart['x_label'] == 'seconds since the first vmstat report'
    assert [tick['label'] for tick in chart['x_ticks']] == ['0', '100', '200']
    assert chart['x_ticks'][0]['x'] == chart['plot']['left']
    # 30 points: one marker each, with the value in its tooltip.
    assert len(chart['series'][1]['markers']) == 30
    assert chart['series'][1]['markers'][9]['title'] == 'iowait (wa): 50.0 % at 90 seconds since the first vmstat report'


def test_many_hosts_get_tables_but_only_a_few_time_lines(tmp_path):
    results_dir = store(tmp_path, [stats_envelope('oss%d' % index, [vmstat_record()]) for index in range(5)])
    section = stats.stats_section(os.path.join(results_dir, RUN_ID), [], max_charts=2)
    assert [item['host'] for item in section['hosts']] == ['oss0', 'oss1', 'oss2', 'oss3', 'oss4']
    assert section['charted_hosts'] == 2 and len(section['cpu']) == 5


def test_an_unusable_stats_file_is_named(tmp_path):
    path = os.path.join(str(tmp_path), RUN_ID, 'oss9', 'stats_collect.json')
    os.makedirs(os.path.dirname(path))
    with open(path, 'w', encoding='utf-8') as handle:
        handle.write('{"schema": ')
    section = stats.stats_section(os.path.join(str(tmp_path), RUN_ID), [])
    assert section['hosts'] == [] and section['unusable'][0]['path'] == 'oss9/stats_collect.json'


def test_the_html_report_has_the_statistics_and_no_unsupported_warning(tmp_path):
    results_dir = store(tmp_path, [
        stats_envelope('oss1', [brw_record('testfs-OST0000', [row('1M', 0, 64, 0, 100)]), vmstat_record()],
                       errors=['the vmstat sampler had ended before the stop: killed']),
        survey_envelope('oss1', T0 + 100, T0 + 200)])
    summary = run.generate(results_dir, RUN_ID, REPORT_TEMPLATES)
    with open(summary['files']['html'], encoding='utf-8') as handle:
        html = handle.read()
    assert '<h2 id="stats">' in html and 'id="stats-cpu-oss1"' in html
    assert '<td>oss1</td><td>stats</td><td>testfs-OST0000</td><td>1M</td>' in html
    assert 'the vmstat sampler had ended before the stop: killed' in html
    assert 'iostat (iostat is not installed)' in html
    assert 'Survey stats_collect: its records are kept but this report does not chart them yet' not in html


def test_a_run_without_statistics_has_no_section(tmp_path):
    results_dir = store(tmp_path, [survey_envelope('oss1', T0 + 100, T0 + 200)])
    summary = run.generate(results_dir, RUN_ID, REPORT_TEMPLATES)
    with open(summary['files']['html'], encoding='utf-8') as handle:
        assert 'id="stats"' not in handle.read()
