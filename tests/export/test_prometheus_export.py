# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Prometheus export against Prometheus's own tools: promtool's lint, node_exporter's textfile collector scraped
by a real Prometheus server, and promtool's backfill of the OpenMetrics file (Debian's prometheus and
prometheus-node-exporter, from requirements-apt.txt)."""

from __future__ import annotations

import glob
import json
import subprocess

import pytest

from servers import NODE_EXPORTER, PROMETHEUS, PROMTOOL, log_tail, node_exporter, prometheus_server, query, wait_for

from ansible_collections.lustre.iokit.plugins.plugin_utils.export import prometheus
from ansible_collections.lustre.iokit.plugins.plugin_utils.export.series import run_series
from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.export.helpers import FINISHED, store_run

RUN_ID = '20261122T101500Z-test'
NEXT_RUN_ID = '20261123T101500Z-next'
INSTALL = 'apt-get install -y prometheus prometheus-node-exporter (requirements-apt.txt)'


def _export(tmp_path, run_id=RUN_ID, factors=(1.0, 0.5, 2.0)):
    store = tmp_path / 'store'
    store_run(store, run_id=run_id, factors=factors)
    textfiles = tmp_path / 'textfiles'
    paths = []
    for survey in ('obdfilter', 'mds'):
        paths.extend(prometheus.write_run(str(textfiles), run_series(str(store), run_id, survey)))
    return textfiles, paths


@pytest.mark.skipif(PROMTOOL is None, reason='promtool is not installed: ' + INSTALL)
def test_textfiles_pass_promtool_check_metrics(tmp_path):
    _textfiles, paths = _export(tmp_path)
    for path in paths:
        if path.endswith('.prom'):
            with open(path, 'rb') as handle:
                checked = subprocess.run([PROMTOOL, 'check', 'metrics'], stdin=handle, capture_output=True, check=False)
            assert checked.returncode == 0, '%s: %s%s' % (path, checked.stdout.decode(), checked.stderr.decode())


@pytest.mark.skipif(PROMTOOL is None, reason='promtool is not installed: ' + INSTALL)
def test_openmetrics_file_backfills_into_a_block_at_the_run_time(tmp_path):
    _textfiles, paths = _export(tmp_path)
    blocks = tmp_path / 'blocks'
    for path in paths:
        if path.endswith('.om'):
            made = subprocess.run([PROMTOOL, 'tsdb', 'create-blocks-from', 'openmetrics', path, str(blocks)],
                                  capture_output=True, check=False)
            assert made.returncode == 0, made.stdout.decode() + made.stderr.decode()
    metas = glob.glob(str(blocks / '*' / 'meta.json'))
    assert len(metas) >= 1
    for meta_path in metas:
        with open(meta_path, encoding='utf-8') as handle:
            meta = json.load(handle)
        assert meta['minTime'] == FINISHED * 1000 and meta['stats']['numSamples'] > 0


@pytest.mark.skipif(PROMETHEUS is None or NODE_EXPORTER is None, reason='prometheus or node_exporter missing: ' + INSTALL)
def test_prometheus_scrapes_the_series_with_the_exporters_labels_and_a_new_run_replaces_them(tmp_path):
    textfiles, _paths = _export(tmp_path)
    servers = tmp_path / 'servers'
    servers.mkdir()
    with node_exporter(str(textfiles), str(servers)) as (address, exporter_log):
        with prometheus_server(address, str(servers)) as (url, prometheus_log):
            try:
                written = wait_for(lambda: query(url, 'lustre_iokit_obdfilter_write_bytes_per_second'
                                                 '{target="testfs-OST0002",threads="8",objects="1"}'),
                                   'the obdfilter series in Prometheus')
                labels = dict(written[0]['metric'])
                assert float(written[0]['value'][1]) == 1000 * 1048576.0
                assert {key: labels[key] for key in ('component', 'target', 'host', 'record_size_kib')} == {
                    'component': 'ost', 'target': 'testfs-OST0002', 'host': 'oss2', 'record_size_kib': '1024'}
                assert 'run_id' not in labels
                creates = wait_for(lambda: query(url, 'lustre_iokit_mds_create_operations_per_second{threads="4"}'),
                                   'the mds series in Prometheus')
                assert creates[0]['metric']['component'] == 'mdt' and float(creates[0]['value'][1]) == 4000.0
                info = query(url, 'lustre_iokit_run_info')
                assert sorted((one['metric']['survey'], one['metric']['run_id']) for one in info) == [
                    ('mds', RUN_ID), ('obdfilter', RUN_ID)]
                # No scrape error: node_exporter read every file it was given.
                errors = query(url, 'node_textfile_scrape_error')
                assert [float(one['value'][1]) for one in errors] == [0.0]

                # The next run replaces the survey's file: Prometheus sees its run id and its values.
                _export(tmp_path, run_id=NEXT_RUN_ID, factors=(2.0,))
                wait_for(lambda: query(url, 'lustre_iokit_run_info{survey="obdfilter",run_id="%s"}' % NEXT_RUN_ID),
                         'the next run in Prometheus')
                doubled = wait_for(lambda: [one for one in query(
                    url, 'lustre_iokit_obdfilter_write_bytes_per_second{target="testfs-OST0002",threads="8",objects="1"}')
                    if float(one['value'][1]) == 2000 * 1048576.0], 'the next run\'s value in Prometheus')
                assert len(doubled) == 1
                assert [one['metric']['run_id'] for one in query(url, 'lustre_iokit_run_info{survey="obdfilter"}')] == [
                    NEXT_RUN_ID]
            except AssertionError as exc:
                raise AssertionError('%s\nnode_exporter log:\n%s\nPrometheus log:\n%s'
                                     % (exc, log_tail(exporter_log), log_tail(prometheus_log))) from exc
