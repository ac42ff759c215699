# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The line protocol written to a real InfluxDB: Debian's influxdb (1.6, requirements-apt.txt) parses every line,
keeps the tags and the run's time, and a second publication of the run overwrites its points.

Debian's InfluxDB predates the 2.x write API (``/api/v2/write``, InfluxDB 1.8 and newer) that
``influx.write_http`` uses, so the lines are posted to its 1.x ``/write`` here; the HTTP client itself is tested
against a recording server (tests/unit/plugins/plugin_utils/export/test_influx.py)."""

from __future__ import annotations

import pytest

from servers import INFLUXD, influx_query, influx_write_v1, influxdb_server, log_tail

from ansible_collections.lustre.iokit.plugins.plugin_utils.export import influx
from ansible_collections.lustre.iokit.plugins.plugin_utils.export.series import run_series
from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.export.helpers import FINISHED, store_run

RUN_ID = '20261122T101500Z-test'
DATABASE = 'iokit'

pytestmark = pytest.mark.skipif(
    INFLUXD is None, reason='influxd is not installed: apt-get install -y influxdb (requirements-apt.txt)')


def test_influxdb_takes_the_lines_and_a_second_publication_overwrites(tmp_path):
    store_run(tmp_path / 'store')
    lines = influx.run_lines(run_series(str(tmp_path / 'store'), RUN_ID, 'obdfilter'))
    server_dir = tmp_path / 'influxdb'
    server_dir.mkdir()
    with influxdb_server(str(server_dir)) as (url, log):
        try:
            influx_query(url, DATABASE, 'CREATE DATABASE %s' % DATABASE, method='POST')
            for _publication in range(2):
                assert influx_write_v1(url, DATABASE, lines) == 204
            counted = influx_query(url, DATABASE, 'SELECT count(write_bytes_per_second) FROM lustre_iokit_obdfilter')
            assert counted[0]['values'][0][1] == len(lines)
            point = influx_query(url, DATABASE, 'SELECT write_bytes_per_second, run_id FROM lustre_iokit_obdfilter '
                                 'WHERE "name" = \'testfs-OST0002\' AND threads = \'8\' AND objects = \'1\'')
            assert point[0]['values'] == [[FINISHED * 10 ** 9, 1000 * 1048576.0, RUN_ID]]
            keys = influx_query(url, DATABASE, 'SHOW TAG KEYS FROM lustre_iokit_obdfilter')
            assert {'name', 'component', 'host', 'threads', 'objects'} <= {row[0] for row in keys[0]['values']}
        except AssertionError as exc:
            raise AssertionError('%s\ninfluxd log:\n%s' % (exc, log_tail(log))) from exc
