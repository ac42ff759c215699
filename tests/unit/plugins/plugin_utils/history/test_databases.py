# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The history on a database: schema and migrations, idempotent recording, several writers, import, failures.

Every test takes the ``database`` fixture: SQLite in the unit tests (conftest.py), SQLite and a real PostgreSQL
server in tests/history, which runs these same tests (tests/history/test_history_databases.py).
"""

from __future__ import annotations

import os
import threading

import pytest

from ansible_collections.lustre.iokit.plugins.plugin_utils.history import identity
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.errors import (
    HistorySchemaError, HistoryUnavailable)
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.judging_rows import (
    load_history_rows, load_history_values)
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.schema import MIGRATIONS, Migration
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.store import History
from ansible_collections.lustre.iokit.plugins.plugin_utils.report import history_judge
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.samples import envelope_samples
from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import write_envelope
from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.history.helpers import (
    FIRST_START, TABLES, dump, envelope, nid_owners, store_run, tree_digest)
from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.report.helpers import lnet_nodes, ost_survey

RUN_1, RUN_2, RUN_3, RUN_4, RUN_5, RUN_6 = ('20261122T1%d0000Z-run%d' % (number, number) for number in range(1, 7))


def note_step(backend, dialect):
    """A callable migration step, as a release may need one: fills the new column for the runs already there."""
    backend.execute("UPDATE runs SET note = 'before version 2'")


SECOND = Migration(2, 'a note on each run (a test step)', ('ALTER TABLE runs ADD COLUMN note TEXT', note_step))


# -- schema -----------------------------------------------------------------------------------------------------


def test_an_empty_database_gets_every_table_at_the_latest_version(database):
    dsn = database.new_dsn()
    with History(dsn) as history:
        assert history.schema_version() == MIGRATIONS[-1].version
        assert dump(history) == {table: [] for table in TABLES}
    # Opening it again applies nothing twice.
    with History(dsn) as history:
        assert history._backend.query('SELECT version FROM schema_migrations') == [(1,)]


def test_migrations_take_an_empty_database_and_one_at_version_1_to_version_2(database, results_dir):
    store_run(results_dir, RUN_1)
    empty = database.new_dsn()
    with History(empty, migrations=MIGRATIONS + (SECOND,)) as history:
        assert history.schema_version() == 2
        history.record_run(results_dir, RUN_1)
        assert history._backend.query('SELECT note FROM runs') == [(None,)]
    at_one = database.new_dsn()
    with History(at_one) as history:
        history.record_run(results_dir, RUN_1)
        before = dump(history)
    with History(at_one, migrations=MIGRATIONS + (SECOND,)) as history:
        assert history.schema_version() == 2
        assert [row[0] for row in history._backend.query('SELECT version FROM schema_migrations ORDER BY version')] \
            == [1, 2]
        assert history._backend.query('SELECT note FROM runs') == [('before version 2',)]
        assert {table: rows for table, rows in dump(history).items() if table != 'runs'} == \
            {table: rows for table, rows in before.items() if table != 'runs'}
    # A collection that knows only version 1 refuses the newer database instead of writing into it.
    with pytest.raises(HistorySchemaError, match='version 2, newer than this collection knows \\(1\\)'):
        History(at_one)


def test_migrations_must_be_numbered_in_order(database):
    with pytest.raises(ValueError, match='numbered 1, 2, 3'):
        History(database.new_dsn(), migrations=MIGRATIONS + (SECOND._replace(version=3),))


def test_two_first_writers_create_the_schema_once(database):
    dsn = database.new_dsn()
    barrier = threading.Barrier(2)
    failures = []

    def open_it():
        barrier.wait()
        try:
            History(dsn).close()
        except Exception as exc:  # pylint: disable=broad-except
            failures.append(exc)

    threads = [threading.Thread(target=open_it) for _number in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    with History(dsn) as history:
        assert history._backend.query('SELECT version FROM schema_migrations') == [(1,)]


# -- recording -------------------------------------------------------------------------------------------------


def test_recording_a_run_twice_changes_nothing(database, results_dir):
    stored = store_run(results_dir, RUN_1)
    with History(database.new_dsn()) as history:
        first = history.record_run(results_dir, RUN_1, tags={'quarter': '2026Q3'}, nid_owners=nid_owners())
        expected_samples = sum(len(envelope_samples(item)[0]) for item in stored)
        assert (first.run_new, first.envelopes_new, first.samples_added) == (True, len(stored), expected_samples)
        before = dump(history)
        again = history.record_run(results_dir, RUN_1, tags={'quarter': '2026Q3'}, nid_owners=nid_owners())
        assert (again.run_new, again.envelopes_new, again.envelopes_changed, again.envelopes_unchanged,
                again.samples_added, again.changed) == (False, 0, 0, len(stored), 0, False)
        imported = history.import_results(results_dir)
        assert (imported.runs_new, imported.samples_added) == (0, 0)
        assert dump(history) == before


def test_a_result_stored_again_replaces_its_samples_and_no_other(database, results_dir):
    stored = store_run(results_dir, RUN_1)
    with History(database.new_dsn()) as history:
        history.record_run(results_dir, RUN_1)
        total = len(history.samples(runs=[RUN_1]))
        # oss1's obdfilter measured again (a rerun with iokit_force_rerun): slower now.
        rerun = store_run(results_dir, RUN_1, oss_count=1, factor=0.5, surveys=('obdfilter',))[0]
        outcome = history.record_run(results_dir, RUN_1)
        count = len(envelope_samples(rerun)[0])
        assert (outcome.envelopes_changed, outcome.envelopes_unchanged, outcome.samples_added,
                outcome.samples_removed) == (1, len(stored) - 1, count, count)
        assert len(history.samples(runs=[RUN_1])) == total
        peaks = {sample.component_id: sample.value for sample in history.samples(
            runs=[RUN_1], survey='obdfilter', component_kind='OST', metric='obdfilter_write_mib_s',
            point={'case': 'disk', 'rsz_kib': 1024, 'obj': 1, 'thr': 4})}
        assert peaks == {'testfs-OST0000': 250.0, 'testfs-OST0001': 250.0, 'testfs-OST0002': 500.0,
                         'testfs-OST0003': 500.0}


def test_what_is_stored_is_what_the_report_calls_a_sample(database, results_dir):
    stored = store_run(results_dir, RUN_1)
    with History(database.new_dsn()) as history:
        history.record_run(results_dir, RUN_1)
        recorded = sorted((sample.to_sample() for sample in history.samples(runs=[RUN_1])), key=repr)
    assert recorded == sorted((sample for item in stored for sample in envelope_samples(item)[0]), key=repr)


def test_components_keep_their_identity_across_a_recabling(database, results_dir):
    store_run(results_dir, RUN_1, cabling=0)
    store_run(results_dir, RUN_2, number=1, cabling=1)
    with History(database.new_dsn()) as history:
        history.import_results(results_dir, nid_owners=nid_owners())
        by_kind = {}
        for sample in history.samples():
            by_kind.setdefault(sample.component_kind, set()).add(sample.component_id)
        assert by_kind == {
            'OST': {'testfs-OST0000', 'testfs-OST0001', 'testfs-OST0002', 'testfs-OST0003'},
            'MDT': {'testfs-MDT0000'},
            'LUN': {'wwid:naa.oss1-0', 'wwid:naa.oss1-1', 'wwid:naa.oss2-0', 'wwid:naa.oss2-1'},
            'NID': {'oss1/192.168.1.1@tcp', 'oss2/192.168.1.2@tcp', 'client1/192.168.1.100@tcp'},
            'host': {'oss1', 'oss2', 'mds1', 'client1'}}
        # One disk, two kernel names: sdb in the first run, sdc after the re-cabling.
        disk = history.samples(component_kind='LUN', component_id='wwid:naa.oss1-0', metric='sgpdd_write_mib_s')
        assert sorted(set((sample.run_id, sample.target) for sample in disk)) == [(RUN_1, 'sdb'), (RUN_2, 'sdc')]


def test_an_lnet_result_keys_its_nids_by_the_owners_it_records_and_an_ost_result_keeps_its_fill(
        database, results_dir):
    # As lst_survey and ost_survey record them: environment.nid_owners; environment.free_kib and total_kib
    owners = {'192.168.1.1@tcp': 'oss1', '192.168.1.100@tcp': 'client1'}
    write_envelope(results_dir, envelope(
        RUN_1, 'client1', 'lnet', lnet_nodes({'192.168.1.1@tcp': 1.0}, {'192.168.1.100@tcp': 1.0}), FIRST_START,
        {'servers': ['192.168.1.1@tcp'], 'clients': ['192.168.1.100@tcp']}, {'nid_owners': owners}))
    write_envelope(results_dir, envelope(
        RUN_1, 'client1', 'ost', ost_survey({0: 1.0, 1: 1.0}), FIRST_START, {'size_mib': 30},
        {'fsname': 'testfs', 'free_kib': {'testfs-OST0000': 250, 'testfs-OST0001': 500},
         'total_kib': {'testfs-OST0000': 1000, 'testfs-OST0001': 1000}}))
    with History(database.new_dsn()) as history:
        # no owners given to the record: the result's own
        history.record_run(results_dir, RUN_1)
        assert set(sample.component_id for sample in history.samples(survey='lnet', component_kind='NID')) == {
            'oss1/192.168.1.1@tcp', 'client1/192.168.1.100@tcp'}
        fill = {(item.survey, item.component_kind, item.component_id): item.used_pct for item in history.fill(RUN_1)}
        assert fill == {('ost', 'OST', 'testfs-OST0000'): 75.0, ('ost', 'OST', 'testfs-OST0001'): 50.0}


def test_a_run_record_says_when_where_and_with_what(database, results_dir):
    store_run(results_dir, RUN_1)
    with History(database.new_dsn()) as history:
        history.record_run(results_dir, RUN_1, tags=['quarter=2026Q3', 'reason=acceptance'], collection_version='1.2.0')
        run = history.run(RUN_1)
        assert (run.started, run.finished, run.fsname, run.lustre_version, run.collection_version, run.host_count) == (
            '2026-11-22T10:15:01Z', '2026-11-22T10:25:01Z', 'testfs', '2.15.5', '1.2.0', 4)
        assert run.tags == {'quarter': '2026Q3', 'reason': 'acceptance'}
        assert sorted(run.surveys) == ['lnet', 'mds', 'obdfilter', 'sgpdd']
        # Each OSS lists its own OSTs and devices: the hash leaves them out, so the hosts agree.
        obdfilter = run.surveys['obdfilter']
        assert obdfilter.parameters == {'size_mib': 64, 'thrhi': 4} and obdfilter.host_count == 2
        assert obdfilter.parameters_hash == identity.parameters_hash({'size_mib': 64, 'thrhi': 4, 'targets': ['x']})
        fill = {(item.component_kind, item.component_id): item.used_pct for item in history.fill(RUN_1)}
        assert fill == {('OST', 'testfs-OST0000'): 25.0, ('OST', 'testfs-OST0001'): 25.0,
                        ('OST', 'testfs-OST0002'): 25.0, ('OST', 'testfs-OST0003'): 25.0,
                        ('MDT', 'testfs-MDT0000'): 10.0}
        # A tag given again takes its new value; the others stay.
        history.record_run(results_dir, RUN_1, tags={'reason': 'after firmware upgrade'})
        assert history.run(RUN_1).tags == {'quarter': '2026Q3', 'reason': 'after firmware upgrade'}


def test_runs_are_selected_by_time_tags_and_survey(database, results_dir):
    store_run(results_dir, RUN_1)
    store_run(results_dir, RUN_2, number=1, surveys=('mds',))
    store_run(results_dir, RUN_3, number=2)
    with History(database.new_dsn()) as history:
        history.record_run(results_dir, RUN_1, tags={'quarter': '2026Q3'})
        history.record_run(results_dir, RUN_2, tags={'quarter': '2026Q4'})
        history.record_run(results_dir, RUN_3, tags={'quarter': '2026Q4'})
        assert [run.run_id for run in history.runs()] == [RUN_1, RUN_2, RUN_3]
        assert [run.run_id for run in history.runs(since='2026-11-22T11:00:00Z')] == [RUN_2, RUN_3]
        assert [run.run_id for run in history.runs(until='2026-11-22T12:15:01Z')] == [RUN_1, RUN_2]
        assert [run.run_id for run in history.runs(tags={'quarter': '2026Q4'})] == [RUN_2, RUN_3]
        assert [run.run_id for run in history.runs(tags=['quarter=2026Q4'], survey='obdfilter')] == [RUN_3]


def test_comparable_runs_are_the_last_earlier_ones_with_the_same_variables(database, results_dir):
    for number, run_id in enumerate((RUN_1, RUN_2, RUN_3, RUN_4, RUN_5, RUN_6)):
        # The third run measured with other variables: never mixed in, named instead.
        store_run(results_dir, run_id, number=number, parameters={'size_mib': 128} if run_id == RUN_3 else None)
    with History(database.new_dsn()) as history:
        history.import_results(results_dir)
        three = history.comparable_runs(RUN_6, limit=3)
        assert sorted(three) == ['lnet', 'mds', 'obdfilter', 'sgpdd']
        obdfilter = three['obdfilter']
        assert [run.run_id for run in obdfilter.runs] == [RUN_5, RUN_4, RUN_2]
        assert [run.run_id for run in obdfilter.differing] == [RUN_3]
        assert obdfilter.differing[0].surveys['obdfilter'].parameters['size_mib'] == 128
        # lnet's variables have no size_mib: every earlier run is comparable.
        assert [run.run_id for run in three['lnet'].runs] == [RUN_5, RUN_4, RUN_3]
        every = history.comparable_runs(RUN_6, limit=5, survey='obdfilter')['obdfilter']
        assert ([run.run_id for run in every.runs], [run.run_id for run in every.differing]) == (
            [RUN_5, RUN_4, RUN_2, RUN_1], [RUN_3])
        assert history.comparable_runs(RUN_1)['obdfilter'].runs == []
        # What a baseline of RUN_6 reads: the same series in the comparable runs.
        baseline = history.samples(runs=[run.run_id for run in every.runs], survey='obdfilter',
                                   series_of_run=RUN_6)
        assert len(baseline) == 4 * len(history.samples(runs=[RUN_6], survey='obdfilter'))
        with pytest.raises(KeyError, match='not in the history'):
            history.comparable_runs('20991231T000000Z-none')


def test_the_judgement_against_history_reads_its_rows_from_the_database(database, results_dir):
    # Five runs at one rate, the sixth at half of it everywhere (no OST is low among its peers); the third measured
    # with other variables: it is named, never mixed in.
    for number, run_id in enumerate((RUN_1, RUN_2, RUN_3, RUN_4, RUN_5, RUN_6)):
        store_run(results_dir, run_id, number=number, surveys=('obdfilter',), factor=0.5 if run_id == RUN_6 else 1.0,
                  parameters={'size_mib': 128} if run_id == RUN_3 else None)
    dsn = database.new_dsn()
    with History(dsn) as history:
        history.import_results(results_dir)
    rows = load_history_rows(dsn, RUN_6, 5)
    assert {row['run_id'] for row in rows['current']} == {RUN_6}
    assert {row['run_id'] for row in rows['earlier']} == {RUN_1, RUN_2, RUN_4, RUN_5}
    assert [(run['run_id'], run['survey']) for run in rows['other_runs']] == [(RUN_3, 'obdfilter')]
    judgment = history_judge.judge_history(rows['current'], rows['earlier'], runs=5, other_runs=rows['other_runs'])
    regressed = sorted((finding['component_kind'], finding['component_id']) for finding in judgment['findings'])
    osts = [('OST', 'testfs-OST%04d' % number) for number in range(4)]
    assert regressed == osts + [('host', 'oss1'), ('host', 'oss2')]
    assert [run['run_id'] for run in judgment['incomparable_runs']] == [RUN_3]
    # What the report judges by: the same samples read as series and values, and the same judgment.
    values = load_history_values(dsn, RUN_6, 5)
    assert sum(len(item['values']) for item in values['earlier']) == len(rows['earlier'])
    assert history_judge.judge_history_values(values, runs=5) == judgment
    # A run never recorded says how to record it; without a DSN the results directory says where the default is.
    with pytest.raises(KeyError, match='record it first'):
        load_history_rows(dsn, '20991231T000000Z-none', 5)
    with pytest.raises(ValueError, match='no history database'):
        load_history_rows(None, RUN_6, 5)


# -- several writers -----------------------------------------------------------------------------------------------


def _content(history):
    """What was recorded, without the keys and times that depend on the order of the writers."""
    runs = [run._replace(recorded=None) for run in history.runs()]
    return runs, sorted(history.samples(), key=repr), sorted(history.fill(RUN_1), key=repr)


def test_writers_at_once_lose_and_double_nothing(database, results_dir):
    # Two AWX slices of one run each record their own hosts, while a third writer records another run and a fourth
    # the whole first run: every one at the same time, twice.
    store_run(results_dir, RUN_1, oss_count=4)
    store_run(results_dir, RUN_2, number=1, oss_count=4)
    dsn = database.new_dsn()
    History(dsn).close()
    jobs = [dict(run_id=RUN_1, hosts=['oss1', 'oss2', 'mds1']), dict(run_id=RUN_1, hosts=['oss3', 'oss4', 'client1']),
            dict(run_id=RUN_2), dict(run_id=RUN_1)]
    barrier = threading.Barrier(len(jobs))
    failures = []

    def record(job):
        try:
            with History(dsn) as history:
                barrier.wait()
                for _round in range(2):
                    history.record_run(results_dir, **job)
        except Exception as exc:  # pylint: disable=broad-except
            failures.append(exc)

    threads = [threading.Thread(target=record, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    reference = database.new_dsn()
    with History(reference) as history:
        history.record_run(results_dir, RUN_1)
        history.record_run(results_dir, RUN_2)
        expected = _content(history)
    with History(dsn) as history:
        assert _content(history) == expected
        assert history.run(RUN_1).host_count == 6
        counts = history._backend.query('SELECT COUNT(*), COUNT(DISTINCT envelope_id) FROM samples')[0]
        assert counts == (len(expected[1]), 2 * (4 * 2 + 2))


# -- import -------------------------------------------------------------------------------------------------------


def test_import_records_every_stored_run_once(database, results_dir, tmp_path):
    store_run(results_dir, RUN_1)
    store_run(results_dir, RUN_2, number=1)
    # A host's result that cannot be read is named, the others of its run are recorded.
    broken = os.path.join(results_dir, RUN_2, 'oss1', 'obdfilter.json')
    with open(broken, 'w', encoding='utf-8') as handle:
        handle.write('{"not": "an envelope"')
    os.mkdir(os.path.join(results_dir, 'not a run'))
    with open(os.path.join(results_dir, 'notes.txt'), 'w', encoding='utf-8') as handle:
        handle.write('the results directory may hold other files\n')
    with History(database.new_dsn()) as history:
        imported = history.import_results(results_dir)
        assert [outcome.run_id for outcome in imported.runs] == [RUN_1, RUN_2]
        assert imported.runs_new == 2 and imported.samples_added == len(history.samples())
        assert [path for path, _why in imported.not_runs] == [os.path.join(results_dir, 'not a run')]
        assert [path for path, _why in imported.runs[1].unreadable] == [broken]
        assert history.run(RUN_2).host_count == 4 and 'obdfilter' in history.run(RUN_2).surveys
        again = history.import_results(results_dir)
        assert (again.runs_new, again.samples_added) == (0, 0)
    with pytest.raises(ValueError, match='is not a directory'):
        with History(database.new_dsn()) as history:
            history.import_results(str(tmp_path / 'nothing-here'))


# -- failures --------------------------------------------------------------------------------------------------------


def test_a_locked_database_fails_naming_it_and_the_run_files_stay(database, results_dir):
    store_run(results_dir, RUN_1)
    dsn = database.new_dsn()
    History(dsn).close()
    before = tree_digest(results_dir)
    with database.locked(dsn):
        with pytest.raises(HistoryUnavailable) as raised:
            with History(dsn, timeout_s=0.5) as history:
                history.record_run(results_dir, RUN_1)
    message = str(raised.value)
    shown = raised.value.dsn
    assert shown in message and 'locked by another writer' in message and 'try again' in message
    assert 'secret' not in message
    assert tree_digest(results_dir) == before
    # Once the other writer is gone, the same run records whole.
    with History(dsn) as history:
        assert history.record_run(results_dir, RUN_1).run_new is True


def test_a_database_that_cannot_be_opened_fails_naming_it(database, results_dir):
    store_run(results_dir, RUN_1)
    before = tree_digest(results_dir)
    dsn = database.unreachable_dsn()
    with pytest.raises(HistoryUnavailable) as raised:
        History(dsn, timeout_s=2)
    assert raised.value.dsn in str(raised.value) and 'secret' not in str(raised.value)
    assert tree_digest(results_dir) == before


def test_a_result_that_measured_nothing_is_recorded_without_samples(database, results_dir):
    store_run(results_dir, RUN_1, surveys=('mds',))
    item = envelope(RUN_1, 'oss9', 'obdfilter', [], 1795342501)
    write_envelope(results_dir, item)
    with History(database.new_dsn()) as history:
        outcome = history.record_run(results_dir, RUN_1)
        # A failed result (nothing measured) is recorded, with no samples: the run says the host took part.
        assert outcome.envelopes_new == 2 and history.run(RUN_1).host_count == 2
        assert history.samples(runs=[RUN_1], host='oss9') == []
