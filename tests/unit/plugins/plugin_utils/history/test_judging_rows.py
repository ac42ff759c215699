# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""load_history_rows without a DSN: the default database beside the results, as the surveys record into it."""

from __future__ import annotations

from ansible_collections.lustre.iokit.plugins.plugin_utils.history.judging_rows import load_history_rows
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.store import History
from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.history.helpers import store_run

RUN_1, RUN_2 = '20261122T110000Z-run1', '20261122T120000Z-run2'


def test_without_a_dsn_the_rows_come_from_the_database_beside_the_results(results_dir):
    store_run(results_dir, RUN_1, surveys=('mds',))
    store_run(results_dir, RUN_2, number=1, surveys=('mds',))
    with History('sqlite://%s/history.sqlite' % results_dir) as history:
        history.import_results(results_dir)
    rows = load_history_rows(None, RUN_2, 5, results_dir=results_dir)
    row = rows['current'][0]
    assert sorted(row) == ['component_id', 'component_kind', 'direction', 'finished', 'host', 'iteration', 'metric',
                           'params_hash', 'point', 'run_id', 'survey', 'target', 'unit', 'value']
    assert (row['run_id'], row['finished'], row['host'], row['direction']) == (RUN_2, '2026-11-22T11:25:01Z', 'mds1',
                                                                               'higher')
    assert {item['run_id'] for item in rows['earlier']} == {RUN_1} and rows['other_runs'] == []
