# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""files/grafana/lustre-iokit.json: valid JSON whose every query names what the export writes, the Lustre exporter
metrics docs/monitoring.md names, or the history database's tables and columns."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import survey_catalog
from ansible_collections.lustre.iokit.plugins.module_utils.engines import mds, obdfilter, ost, sgpdd
from ansible_collections.lustre.iokit.plugins.plugin_utils.export import prometheus
from ansible_collections.lustre.iokit.plugins.plugin_utils.export.series import BASE_UNITS, run_series
from ansible_collections.lustre.iokit.plugins.module_utils.sample_extraction import UNIT_MIB_S, UNIT_OPS_S
from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.export.helpers import store_run

ROOT = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', '..')
DASHBOARD = os.path.join(ROOT, 'files', 'grafana', 'lustre-iokit.json')
MONITORING_DOC = os.path.join(ROOT, 'docs', 'monitoring.md')
HISTORY_SCHEMA = 'ansible_collections.lustre.iokit.plugins.plugin_utils.history.schema'

# The Lustre exporters' own metrics the dashboard reads beside the survey's (HPE lustre_exporter and its forks).
EXPORTER_METRICS = {'lustre_write_bytes_total', 'lustre_read_bytes_total', 'lustre_stats_total'}
# The tests each survey on the dashboard can report, from its engine.
SURVEY_TESTS = {'obdfilter': obdfilter.DEFAULT_TESTS, 'ost': ost.OPERATIONS, 'mds': mds.TESTS, 'sgpdd': sgpdd.ACTIONS}


def _exported_names():
    names = {prometheus.RUN_INFO, prometheus.RUN_FINISHED}
    names.update(prometheus.duration_metric(survey) for survey in survey_catalog.MEASURING)
    for survey, tests in SURVEY_TESTS.items():
        unit = UNIT_OPS_S if survey_catalog.CATALOG[survey].component == 'MDT' else UNIT_MIB_S
        names.update(prometheus.rate_metric(survey, test, BASE_UNITS[unit][0]) for test in tests)
    return names


def _dashboard():
    with open(DASHBOARD, encoding='utf-8') as handle:
        return json.load(handle)


def _queries(dashboard):
    """``[(where, kind, text)]``: every query of the dashboard, kind ``promql`` or ``sql``."""
    found = []
    for panel in dashboard['panels']:
        for target in panel.get('targets', ()):
            if 'expr' in target:
                found.append((panel['title'], 'promql', target['expr']))
            if 'rawSql' in target:
                found.append((panel['title'], 'sql', target['rawSql']))
    for variable in dashboard['templating']['list']:
        if variable['type'] != 'query':
            continue
        query = variable['query']['query'] if isinstance(variable['query'], dict) else variable['query']
        kind = 'sql' if variable['datasource']['type'].endswith('postgresql-datasource') else 'promql'
        found.append(('variable ' + variable['name'], kind, query))
    for annotation in dashboard['annotations']['list']:
        if 'expr' in annotation:
            found.append(('annotation ' + annotation['name'], 'promql', annotation['expr']))
        if 'rawQuery' in annotation:
            found.append(('annotation ' + annotation['name'], 'sql', annotation['rawQuery']))
    return found


def test_every_promql_query_names_an_exported_or_exporter_metric():
    exported = _exported_names()
    queries = [query for query in _queries(_dashboard()) if query[1] == 'promql']
    assert queries
    used = set()
    for where, _kind, text in queries:
        names = set(re.findall(r'\blustre_[a-z0-9_]+', text))
        assert names, '%s: %s names no metric' % (where, text)
        unknown = {name for name in names if name not in exported and name not in EXPORTER_METRICS}
        assert not unknown, '%s: %s not written by the export nor a Lustre exporter metric' % (where, sorted(unknown))
        used |= names
    with open(MONITORING_DOC, encoding='utf-8') as handle:
        doc = handle.read()
    assert not [name for name in used & EXPORTER_METRICS if name not in doc], 'docs/monitoring.md names them'


def test_the_dashboard_names_match_a_real_export(tmp_path):
    """The names built above are the writer's: a stored obdfilter and mds run writes the ones the dashboard uses."""
    store_run(tmp_path)
    written = set()
    for survey in ('obdfilter', 'mds'):
        written |= {name for name, _help, _samples in prometheus.families(
            run_series(str(tmp_path), '20261122T101500Z-test', survey))}
    used = {name for _where, kind, text in _queries(_dashboard()) if kind == 'promql'
            for name in re.findall(r'\blustre_iokit_(?:obdfilter|mds)_[a-z0-9_]+|\blustre_iokit_run_[a-z_]+', text)}
    assert used and used <= written, sorted(used - written)


def _history_tables():
    """{table or view: set of columns} from the history's schema (branch history-store; None when not merged)."""
    if importlib.util.find_spec('ansible_collections.lustre.iokit.plugins.plugin_utils.history') is None:
        return None
    schema = importlib.import_module(HISTORY_SCHEMA)
    tables = {}
    for migration in schema.MIGRATIONS:
        for step in migration.steps:
            if not isinstance(step, str):
                continue
            table = re.match(r'\s*CREATE TABLE (\w+) \((.*)\)', step, re.S)
            if table:
                tables[table.group(1)] = set(re.findall(r'^\s*(\w+) [A-Z{]', table.group(2), re.M))
            view = re.match(r'\s*CREATE VIEW (\w+) AS\s+SELECT (.*?)\s+FROM', step, re.S)
            if view:
                tables[view.group(1)] = {column.split()[-1].split('.')[-1] for column in view.group(2).split(',')}
    return tables


def test_every_sql_query_names_history_tables_and_columns():
    tables = _history_tables()
    if tables is None:
        pytest.skip('the history database (plugins/plugin_utils/history) is not in this checkout')
    for where, _kind, text in [query for query in _queries(_dashboard()) if query[1] == 'sql']:
        aliases = dict((alias or table, table) for table, alias in re.findall(r'(?:FROM|JOIN)\s+(\w+)(?:\s+(\w+))?', text)
                       if alias not in ('WHERE', 'JOIN', 'ORDER', 'GROUP', 'ON'))
        for table in set(re.findall(r'(?:FROM|JOIN)\s+(\w+)', text)):
            assert table in tables, '%s: the history has no table %s' % (where, table)
        for alias, column in re.findall(r'\b(\w+)\.(\w+)\b', text):
            if alias in aliases:
                assert column in tables[aliases[alias]], '%s: %s has no column %s' % (where, aliases[alias], column)
