# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Prometheus and OpenMetrics texts of a stored run (promtool checks them in tests/export)."""

from __future__ import annotations

import os
import re

import pytest

from ansible_collections.lustre.iokit.plugins.plugin_utils.export import prometheus
from ansible_collections.lustre.iokit.plugins.plugin_utils.export.series import checked_directory, run_series
from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.export.helpers import FINISHED, store_run

SAMPLE_LINE = re.compile(r'^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?P<labels>\{.*\})? (?P<value>\S+)(?: (?P<ts>\S+))?$')
LABEL = re.compile(r'(?P<name>[a-zA-Z_][a-zA-Z0-9_]*)="(?P<value>(?:[^"\\]|\\.)*)"')


def parse(text):
    """``({name: [(labels dict, value, timestamp)]}, {name: help}, {name: type})`` of an exposition text."""
    samples, helps, types = {}, {}, {}
    for line in text.splitlines():
        if line.startswith('# HELP '):
            name, help_text = line[len('# HELP '):].split(' ', 1)
            assert name not in helps, 'HELP twice for %s' % name
            helps[name] = help_text
        elif line.startswith('# TYPE '):
            name, kind = line[len('# TYPE '):].split(' ', 1)
            assert name not in types, 'TYPE twice for %s' % name
            types[name] = kind
        elif line == '# EOF':
            continue
        else:
            match = SAMPLE_LINE.match(line)
            assert match, line
            labels = dict((label.group('name'), label.group('value'))
                          for label in LABEL.finditer(match.group('labels') or ''))
            samples.setdefault(match.group('name'), []).append((labels, float(match.group('value')), match.group('ts')))
    return samples, helps, types


@pytest.fixture
def obdfilter_export(tmp_path):
    store_run(tmp_path)
    return run_series(str(tmp_path), '20261122T101500Z-test', 'obdfilter')


def test_textfile_has_base_units_median_labels_and_no_timestamps(obdfilter_export):
    samples, helps, types = parse(prometheus.textfile(obdfilter_export))
    writes = samples['lustre_iokit_obdfilter_write_bytes_per_second']
    assert all(ts is None for values in samples.values() for _labels, _value, ts in values)
    assert set(helps) == set(types) == set(samples)
    assert set(types.values()) == {'gauge'}
    point = [(labels, value) for labels, value, _ts in writes
             if labels['target'] == 'testfs-OST0002' and labels['threads'] == '8' and labels['objects'] == '1']
    # Iterations at x1, x0.5 and x2: the median is the x1 iteration, 1000 MiB/s.
    assert point == [({'component': 'ost', 'target': 'testfs-OST0002', 'host': 'oss2', 'case': 'disk',
                       'osts': '1', 'size_kib': '1048576', 'record_size_kib': '1024', 'objects': '1', 'threads': '8'},
                      1000 * 1048576.0)]
    assert {labels['target'] for labels, _value, _ts in writes} == {'testfs-OST000%d' % index for index in range(4)}
    assert samples['lustre_iokit_run_info'] == [({'run_id': '20261122T101500Z-test', 'survey': 'obdfilter'}, 1.0, None)]
    # The run id is on the info series only.
    assert all('run_id' not in labels for name, values in samples.items() if name != 'lustre_iokit_run_info'
               for labels, _value, _ts in values)
    assert samples['lustre_iokit_run_finished_timestamp_seconds'] == [({'survey': 'obdfilter'}, FINISHED, None)]
    assert {labels['host'] for labels, _value, _ts in samples['lustre_iokit_obdfilter_duration_seconds']} == {
        'oss1', 'oss2'}


def test_metadata_rates_are_operations_per_second(tmp_path):
    store_run(tmp_path)
    samples, _helps, _types = parse(prometheus.textfile(run_series(str(tmp_path), '20261122T101500Z-test', 'mds')))
    creates = samples['lustre_iokit_mds_create_operations_per_second']
    assert ({'component': 'mdt', 'target': 'testfs-MDT0000', 'host': 'mds1', 'mdts': '1', 'dirs': '1', 'files': '1000',
             'stripe_count': '0', 'threads': '4'}, 4000.0, None) in creates


def test_openmetrics_has_the_finish_time_and_eof(obdfilter_export):
    text = prometheus.openmetrics(obdfilter_export)
    assert text.endswith('# EOF\n')
    samples, _helps, types = parse(text)
    assert types['lustre_iokit_run'] == 'info'
    assert {ts for values in samples.values() for _labels, _value, ts in values} == {str(FINISHED)}


def test_label_values_are_escaped():
    assert prometheus.escape_label_value('a"b\\c\nd') == 'a\\"b\\\\c\\nd'


def test_write_run_replaces_the_survey_file_atomically(tmp_path, obdfilter_export):
    export_dir = tmp_path / 'textfiles'
    paths = prometheus.write_run(str(export_dir), obdfilter_export)
    assert sorted(os.path.basename(path) for path in paths) == [
        'lustre_iokit_obdfilter.20261122T101500Z-test.om', 'lustre_iokit_obdfilter.prom']
    store_run(tmp_path, run_id='20261123T101500Z-next', factors=(2.0,))
    prometheus.write_run(str(export_dir), run_series(str(tmp_path), '20261123T101500Z-next', 'obdfilter'))
    names = sorted(os.listdir(str(export_dir)))
    # One textfile per survey (the newer run's), no temporary file left; one backfill file per run.
    assert names == ['lustre_iokit_obdfilter.20261122T101500Z-test.om',
                     'lustre_iokit_obdfilter.20261123T101500Z-next.om', 'lustre_iokit_obdfilter.prom']
    samples, _helps, _types = parse((export_dir / 'lustre_iokit_obdfilter.prom').read_text())
    assert samples['lustre_iokit_run_info'][0][0]['run_id'] == '20261123T101500Z-next'


def test_checked_directory_names_the_variable(tmp_path):
    assert checked_directory('', 'iokit_export_prometheus_dir') is None
    blocker = tmp_path / 'a-file'
    blocker.write_text('x')
    with pytest.raises(ValueError, match='iokit_export_prometheus_dir'):
        checked_directory(str(blocker), 'iokit_export_prometheus_dir')
    with pytest.raises(ValueError, match='iokit_export_prometheus_dir'):
        checked_directory(['a list'], 'iokit_export_prometheus_dir')
    assert checked_directory(str(tmp_path / 'new'), 'iokit_export_prometheus_dir') == str(tmp_path / 'new')


def test_a_run_without_the_survey_is_refused(tmp_path):
    store_run(tmp_path)
    with pytest.raises(ValueError, match='no stored ior result'):
        run_series(str(tmp_path), '20261122T101500Z-test', 'ior')
