# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Asking the history (plugins/plugin_utils/history/queries.py), in SQLite."""

from __future__ import annotations

import csv
import datetime
import json

import pytest

from ansible_collections.lustre.iokit.plugins.plugin_utils.history import queries
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.store import History
from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.history.helpers import store_run

RUN_1, RUN_2, RUN_3, RUN_4 = ('20261122T1%d0000Z-run%d' % (number, number) for number in range(1, 5))
NOW = datetime.datetime(2026, 11, 29, 12, 0)


@pytest.mark.parametrize('text, since, until', [
    ('now-90d:now', NOW - datetime.timedelta(days=90), NOW),
    ('20260101:20260301', datetime.datetime(2026, 1, 1), datetime.datetime(2026, 3, 1)),
    ('20260101T0830:20260101T083015', datetime.datetime(2026, 1, 1, 8, 30), datetime.datetime(2026, 1, 1, 8, 30, 15)),
    ('now-1w+2d-3h+30m:now+1h', NOW - datetime.timedelta(weeks=1) + datetime.timedelta(days=2, minutes=-150),
     NOW + datetime.timedelta(hours=1)),
    ('20260301-1d:20260301', datetime.datetime(2026, 2, 28), datetime.datetime(2026, 3, 1)),
])
def test_a_period_is_two_times_each_a_date_or_now_with_shifts(text, since, until):
    selection = queries.parse_selection(text, 'history_lhs', now=NOW)
    assert (selection.kind, selection.since, selection.until) == (queries.PERIOD, since, until)


def test_a_run_id_and_tags_are_selections_too():
    assert queries.parse_selection(RUN_1, 'history_lhs').run_id == RUN_1
    selection = queries.parse_selection('quarter=2026Q3,site=north', 'history_rhs')
    assert (selection.kind, selection.tags) == (queries.TAGS, {'quarter': '2026Q3', 'site': 'north'})


@pytest.mark.parametrize('text, words', [
    ('', 'give a run id'),
    (None, 'give a run id'),
    ('yesterday:now', "'yesterday' is not a time"),
    ('20261301:now', 'is not a date'),
    ('now:now-1d', 'ends before it starts'),
    ('now-3y:now', 'is not a time'),
    ('../etc', 'neither a run id'),
    ('=2026Q3', 'tag key'),
])
def test_a_bad_selection_names_the_variable(text, words):
    with pytest.raises(ValueError) as raised:
        queries.parse_selection(text, 'history_rhs', now=NOW)
    assert str(raised.value).startswith('history_rhs: ')
    assert words in str(raised.value)


def record(database, results_dir, factors=(1.0, 1.0, 1.0, 0.5)):
    dsn = database.new_dsn()
    for number, (run_id, factor) in enumerate(zip((RUN_1, RUN_2, RUN_3, RUN_4), factors)):
        store_run(results_dir, run_id, number=number, factor=factor, surveys=('obdfilter', 'mds'),
                  parameters={'size_mib': 128} if run_id == RUN_3 else None)
    with History(dsn) as history:
        history.import_results(results_dir)
        history.set_tags(RUN_1, {'quarter': '2026Q3'})
        history.set_tags(RUN_2, {'quarter': '2026Q3'})
    return dsn


def test_selections_find_their_runs(database, results_dir):
    dsn = record(database, results_dir)
    with History(dsn) as history:
        def ids(text):
            return [run.run_id for run in queries.select_runs(history, queries.parse_selection(text, 'x'))]
        assert ids('20261122T1100:20261122T1300') == [RUN_2, RUN_3]
        assert ids('quarter=2026Q3') == [RUN_1, RUN_2]
        assert ids(RUN_4) == [RUN_4]
        assert ids('20200101:20200102') == []
        with pytest.raises(KeyError):
            ids('20261122T000000Z-nothere')
        rows = queries.run_rows(history.runs())
        assert rows[0]['tags'] == {'quarter': '2026Q3'} and rows[0]['surveys'] == ['mds', 'obdfilter']
        shown = queries.show_run(history, RUN_1)
        assert [survey['survey'] for survey in shown['surveys']] == ['mds', 'obdfilter']
        assert all(survey['samples'] > 0 and survey['parameters_hash'] for survey in shown['surveys'])
        assert {fill['used_pct'] for fill in shown['fill']} == {25.0, 10.0}


def test_compare_halved_rates_are_regressions_and_other_variables_are_named(database, results_dir):
    dsn = record(database, results_dir)
    with History(dsn) as history:
        left = history.runs(run_ids=[RUN_4])
        right = history.runs(run_ids=[RUN_1, RUN_2, RUN_3])
        rows, incomparable = queries.compare(history, left, right)
    rates = [row for row in rows if row['unit'] == 'MiB/s']
    assert rates and all(row['verdict'] == 'regression' for row in rates)
    assert all(row['pdiff'] == pytest.approx(-50.0) for row in rates)
    assert all(row['left'] == pytest.approx(row['right'] / 2) for row in rates)
    # Run 3 measured with other variables: named, not mixed into the right side's median.
    assert {(item['run_id'], item['survey']) for item in incomparable} == {(RUN_3, 'obdfilter'), (RUN_3, 'mds')}


def test_compare_of_equal_selections_is_within(database, results_dir):
    dsn = record(database, results_dir)
    with History(dsn) as history:
        rows, incomparable = queries.compare(history, history.runs(run_ids=[RUN_2]), history.runs(run_ids=[RUN_1]))
    assert rows and {row['verdict'] for row in rows} == {'within'} and not incomparable
    assert {row['pdiff'] for row in rows} == {0.0}


def test_trend_is_one_value_per_run_oldest_first(database, results_dir):
    dsn = record(database, results_dir)
    with History(dsn) as history:
        sample = next(item for item in history.samples(runs=[RUN_1], survey='obdfilter') if item.unit == 'MiB/s')
        rows = queries.trend(history, sample.component_id, sample.metric, point=dict(sample.point))
    assert [row['run_id'] for row in rows] == [RUN_1, RUN_2, RUN_3, RUN_4]
    assert rows[3]['value'] == pytest.approx(rows[0]['value'] / 2)
    assert rows[0]['started'] < rows[3]['started']


def test_prune_keeps_the_named_runs_and_check_mode_deletes_nothing(database, results_dir):
    dsn = record(database, results_dir)
    with History(dsn) as history:
        with pytest.raises(ValueError, match='history_before'):
            queries.prune(history, '')
        before = '20261122T1300'   # runs 1-3 finished before
        would = queries.prune(history, before, keep_runs=[RUN_2], check=True)
        assert would == {'deleted': [RUN_1, RUN_3], 'kept': [RUN_2]}
        assert len(history.runs()) == 4
        done = queries.prune(history, before, keep_runs=[RUN_2])
        assert done == would
        assert [run.run_id for run in history.runs()] == [RUN_2, RUN_4]
        assert history.samples(runs=[RUN_1]) == []
        assert queries.prune(history, before, keep_runs=[RUN_2]) == {'deleted': [], 'kept': [RUN_2]}


def test_export_writes_every_sample_with_its_run(database, results_dir, tmp_path):
    dsn = record(database, results_dir)
    with History(dsn) as history:
        runs = history.runs(run_ids=[RUN_1, RUN_4])
        count = queries.export(history, runs, str(tmp_path / 'x.csv'), str(tmp_path / 'x.jsonl'))
        expected = len(history.samples(runs=[RUN_1, RUN_4]))
    assert count == expected > 0
    with open(tmp_path / 'x.csv', encoding='utf-8') as handle:
        rows = list(csv.DictReader(handle))
    lines = [json.loads(line) for line in (tmp_path / 'x.jsonl').read_text().splitlines()]
    assert len(rows) == len(lines) == count
    assert {row['run_id'] for row in rows} == {RUN_1, RUN_4}
    assert rows[0]['tags'] == 'quarter=2026Q3' and rows[0]['parameters_hash']
    assert isinstance(lines[0]['point'], dict) and json.loads(rows[0]['point']) == lines[0]['point']


def test_table_lines_up_its_columns():
    lines = queries.table(('run', 'value'), [('a', 1.5), ('bbbb', None)])
    assert lines == ['run   value', '-----------', 'a     1.5', 'bbbb  -']


def test_the_filters_ask_the_same_queries(database, results_dir):
    from ansible.errors import AnsibleFilterError
    from ansible_collections.lustre.iokit.plugins.filter.history_compare import FilterModule as CompareFilters
    from ansible_collections.lustre.iokit.plugins.filter.history_select import FilterModule as SelectFilters
    from ansible_collections.lustre.iokit.plugins.filter.history_trend import FilterModule as TrendFilters

    dsn = record(database, results_dir)
    select = SelectFilters().filters()['history_select']
    compare_filter = CompareFilters().filters()['history_compare']
    trend_filter = TrendFilters().filters()['history_trend']
    assert [run['run_id'] for run in select(dsn, 'quarter=2026Q3')] == [RUN_1, RUN_2]
    compared = compare_filter(dsn, RUN_4, RUN_1)
    assert compared['rows'] and not compared['incomparable']
    assert {row['verdict'] for row in compared['rows'] if row['unit'] == 'MiB/s'} == {'regression'}
    component = compared['rows'][0]['component_id']
    metric = compared['rows'][0]['metric']
    rows = trend_filter(dsn, component, metric, selection='quarter=2026Q3')
    assert {row['run_id'] for row in rows} == {RUN_1, RUN_2}
    with pytest.raises(AnsibleFilterError, match='history_compare: rhs: '):
        compare_filter(dsn, RUN_4, 'now:yesterday')
    with pytest.raises(AnsibleFilterError, match='history_select: give the history database'):
        select('', RUN_1)


def test_delete_runs_checks_the_end_again_under_its_lock(database, results_dir):
    dsn = record(database, results_dir)
    with History(dsn) as history:
        # Run 4 finished after the bound (as if recorded again meanwhile): kept; a run not recorded is passed over.
        deleted = history.delete_runs([RUN_1, RUN_4, '20261122T000000Z-none'], finished_before='2026-11-22T13:00:00Z')
        assert deleted == [RUN_1]
        assert [run.run_id for run in history.runs()] == [RUN_2, RUN_3, RUN_4]
        assert history.delete_runs([]) == []
