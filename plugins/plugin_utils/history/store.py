# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The results history: every stored run's samples in a database, by components that outlive a reboot.

Used on the controller (the ``history_record`` action, ``playbooks/history.yml``, and whatever judges or queries the
history)::

    with History.open('sqlite:///var/lib/lustre-iokit/history.sqlite') as history:
        outcome = history.record_run(results_dir, run_id, tags={'quarter': '2026Q3'})
        for survey, comparable in history.comparable_runs(run_id, limit=5).items():
            baseline = history.samples(runs=[run.run_id for run in comparable.runs], survey=survey,
                                       series_of_run=run_id)

Recording reads the run's envelopes from the results store (``results_store.list_envelopes``) and never writes
there; what a sample is comes from the report's extraction (``report.samples.envelope_samples``), so that the
history stores what the report calls a sample.  A result (run, host, survey) is written in one transaction with its
samples, replacing what an earlier recording of it stored, and skipped when its content has not changed: recording a
run twice changes nothing.  Several writers may record at once, into one run (AWX slices, each with its hosts) or
into different runs (docs/history.md, "Several writers").
"""

from __future__ import annotations

import datetime
import hashlib
import json
import operator
import os
import typing as t

from ansible_collections.lustre.iokit.plugins.module_utils.results import EnvelopeError, validate_run_id
from ansible_collections.lustre.iokit.plugins.module_utils.sample_extraction import make_point
from ansible_collections.lustre.iokit.plugins.plugin_utils.history import identity
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.backends import Backend, chunks, open_backend
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.dsn import Dsn, check_placement, parse_dsn
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.errors import HistoryError, HistorySchemaError
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.schema import (
    MIGRATIONS, MIGRATIONS_TABLE, Migration, check_sequence, latest_version, statements)
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.samples import (
    Sample, envelope_samples, metric_direction)
from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import list_envelopes

# How long a writer waits for another one (SQLite's busy timeout, PostgreSQL's lock and connect timeouts), seconds.
DEFAULT_TIMEOUT_S = 60.0
# A run's results are written in transactions of about this many samples, so that other writers get their turn
# while a large run is recorded, and each commit is worth its cost.
BATCH_SAMPLES = 50000
# How many earlier comparable runs the judgement takes by default.
DEFAULT_COMPARABLE = 5
STATUS_OK = 'ok'

TagsArg = t.Union[t.Mapping[str, t.Any], t.Iterable[str], None]


# --------------------------------------------------------------------------
# What the API returns


class RunSurvey(t.NamedTuple):
    """One survey of a run: the hash its comparisons go by and what it was computed from."""

    survey: str
    parameters_hash: str      # identity.parameters_hash (identity.combined_hash when the hosts differed)
    parameters: t.Any         # the hashed variables: a dict, or a list of dicts when the hosts differed
    engine: str | None        # 'native' or 'iokit' (joined with ',' when the hosts differed)
    host_count: int
    started: str | None
    finished: str | None


class RunRecord(t.NamedTuple):
    """One run of the history.  Times are ISO-8601 UTC text (``2026-11-22T10:15:01Z``)."""

    run_id: str
    started: str | None       # the earliest start of its results
    finished: str | None      # the latest end of its results
    fsname: str | None        # the file systems its results name, sorted and joined with ','
    lustre_version: str | None
    collection_version: str | None
    host_count: int           # hosts with at least one stored result
    recorded: str             # when the run was first recorded
    tags: dict                # {key: value}
    surveys: dict             # {survey: RunSurvey}


class ComponentFill(t.NamedTuple):
    """How full an OST (KiB) or an MDT (inodes) was when a survey of the run read it; None: not read."""

    survey: str
    host: str
    component_kind: str
    component_id: str
    free_kib: int | None
    total_kib: int | None
    free_inodes: int | None
    total_inodes: int | None

    @property
    def used_pct(self) -> float | None:
        """The share used in percent (space for an OST, inodes for an MDT), None when the total is not known."""
        if self.component_kind == identity.MDT:
            return identity.used_percent(self.free_inodes, self.total_inodes)
        return identity.used_percent(self.free_kib, self.total_kib)


class StoredSample(t.NamedTuple):
    """One sample of the history: a report Sample with its run's start and its component's identity."""

    run_id: str
    run_started: str | None
    survey: str
    host: str
    component_kind: str       # identity.KINDS: OST, MDT, LUN, NID, client, host
    component_id: str         # see identity's table
    target: str | None        # the name the report gave the component in that run (Sample.target)
    test: str
    metric: str
    unit: str
    direction: str            # 'higher' or 'lower' (report.samples.metric_direction)
    point: tuple              # ((key, value), ...) as Sample.point
    iteration: int
    value: float
    status: str

    def to_sample(self) -> Sample:
        """The report's Sample, for code written for the report's samples."""
        return Sample(self.run_id, self.survey, self.test, self.metric, self.value, self.unit, self.host,
                      self.target, self.point, self.iteration, self.status)


class Comparable(t.NamedTuple):
    """The earlier runs a run's survey can be judged against (``History.comparable_runs``)."""

    survey: str
    parameters_hash: str
    runs: list                # RunRecords with the same survey variables' hash, newest first, at most the limit
    differing: list           # RunRecords of the same survey passed over for another hash, newest first


class RecordOutcome(t.NamedTuple):
    """What ``record_run`` did."""

    run_id: str
    run_new: bool             # the run was not in the history before
    envelopes_new: int
    envelopes_changed: int    # recorded before with another content: their samples were replaced
    envelopes_unchanged: int  # recorded before with this content: nothing written
    samples_added: int        # samples written (those of new and changed results)
    samples_removed: int      # samples replaced (those the changed results had before)
    unreadable: list          # [(path, message)] envelopes the store could not use: not recorded

    @property
    def changed(self) -> bool:
        return bool(self.run_new or self.envelopes_new or self.envelopes_changed)


class ImportOutcome(t.NamedTuple):
    """What ``import_results`` did: one RecordOutcome per run directory, and the directories that are not runs."""

    runs: list
    not_runs: list            # [(path, why)]

    @property
    def runs_new(self) -> int:
        return sum(1 for outcome in self.runs if outcome.run_new)

    @property
    def samples_added(self) -> int:
        return sum(outcome.samples_added for outcome in self.runs)


# --------------------------------------------------------------------------
# Preparing one envelope (outside any transaction: no lock is held while samples are extracted)


class _Prepared(t.NamedTuple):
    host: str
    survey: str
    status: str
    engine: str
    started: str
    finished: str
    parameters_hash: str
    parameters: str
    fsname: str | None
    lustre_version: str | None
    collection_version: str | None
    problems: str
    content_hash: str
    series: list              # per sample: (survey, kind, id, test, metric, unit, direction, point json)
    samples: list             # per sample: (series index, iteration, value, status or None)
    components: dict          # (kind, id) -> target name
    fill: list                # identity.Fill


def _prepare(envelope: dict, nid_owners: t.Mapping | None, collection_version: str | None) -> _Prepared:
    samples, problems = envelope_samples(envelope)
    namer = identity.ComponentNamer(envelope, nid_owners)
    series_keys: list = []
    index_of: dict = {}
    rows = []
    components: dict = {}
    for sample in samples:
        kind, component_id = namer.component(sample.target)
        if sample.target is not None:
            components.setdefault((kind, component_id), sample.target)
        key = (sample.survey, kind, component_id, sample.test, sample.metric, sample.unit,
               metric_direction(sample.unit), identity.point_json(sample.point))
        index = index_of.get(key)
        if index is None:
            index = index_of[key] = len(series_keys)
            series_keys.append(key)
        rows.append((index, sample.iteration, sample.value, None if sample.status == STATUS_OK else sample.status))
    parameters = envelope.get('parameters') if isinstance(envelope.get('parameters'), dict) else {}
    fsnames = identity.envelope_fsnames(envelope, [component_id for _kind, component_id in components])
    content = identity.canonical_json(envelope)
    return _Prepared(
        host=envelope['host'], survey=envelope['survey'], status=envelope['status'], engine=envelope['engine'],
        started=envelope['started'], finished=envelope['finished'],
        parameters_hash=identity.parameters_hash(parameters),
        parameters=identity.canonical_json(identity.hashed_parameters(parameters)),
        fsname=','.join(fsnames) or None, lustre_version=identity.envelope_lustre_version(envelope),
        collection_version=identity.envelope_collection_version(envelope) or collection_version,
        problems=json.dumps(problems), content_hash=hashlib.sha256(content.encode('utf-8')).hexdigest(),
        series=series_keys, samples=rows, components=components, fill=identity.envelope_fill(envelope))


def _batches(prepared: list[_Prepared], size: int = BATCH_SAMPLES) -> t.Iterator[list[_Prepared]]:
    batch, count = [], 0
    for item in prepared:
        batch.append(item)
        count += len(item.samples)
        if count >= size:
            yield batch
            batch, count = [], 0
    if batch:
        yield batch


def kept_results(results_dir: str, run_id: str) -> str:
    """What a failed recording says of the run's results: where they stay, and how to record them later."""
    return ('Run %s is not fully recorded in the history; its results stay in %s: record them later with '
            'ansible-playbook playbooks/history.yml -e history_action=import -e history_from=%s'
            % (run_id, os.path.join(results_dir, run_id), results_dir))


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')


def time_text(value: t.Any) -> str | None:
    """A time bound as the history compares it: ISO-8601 UTC text; a datetime (naive means UTC) or such a text."""
    if value is None:
        return None
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return value.strftime('%Y-%m-%dT%H:%M:%SZ')
    if isinstance(value, datetime.date):
        return value.strftime('%Y-%m-%dT00:00:00Z')
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise ValueError('a time bound must be a datetime or ISO-8601 UTC text, got %r' % (value,))


def parse_tags(tags: TagsArg) -> dict[str, str]:
    """``{key: value}`` from a mapping or from ``key=value`` strings; ValueError naming a bad one."""
    if tags is None:
        return {}
    if isinstance(tags, str):
        tags = [part for part in tags.split(',') if part.strip()]
    items = tags.items() if isinstance(tags, t.Mapping) else [_split_tag(text) for text in tags]
    parsed = {}
    for key, value in items:
        key = str(key).strip()
        if not key or '=' in key or ',' in key or len(key) > 64:
            raise ValueError('tag key %r: must be 1 to 64 characters, without = or ,' % (key,))
        if value is None or isinstance(value, (dict, list)):
            raise ValueError('tag %s: the value must be text, got %r' % (key, value))
        parsed[key] = str(value)
    return parsed


def _split_tag(text: t.Any) -> tuple[str, str]:
    if not isinstance(text, str) or '=' not in text:
        raise ValueError('tag %r: give key=value (quarter=2026Q3)' % (text,))
    key, value = text.split('=', 1)
    return key.strip(), value.strip()


def _joined(values: t.Iterable[str | None]) -> str | None:
    distinct = set()
    for value in values:
        distinct.update(part for part in (value or '').split(',') if part)
    return ','.join(sorted(distinct)) or None


# --------------------------------------------------------------------------
# The history


class History:
    """One open history database.  Open it with ``History.open(dsn)`` (a context manager); not shared by threads."""

    def __init__(self, dsn: str | Dsn, timeout_s: float = DEFAULT_TIMEOUT_S,
                 migrations: t.Sequence[Migration] = MIGRATIONS):
        """Connect to ``dsn`` and bring its schema to the latest version (``migrations``, for the tests' steps).

        Raises HistoryLocationError for a SQLite file on Lustre, HistoryUnavailable when the database cannot be
        opened or stays locked past ``timeout_s``, HistorySchemaError when it is newer than this collection.
        """
        self.dsn = dsn if isinstance(dsn, Dsn) else parse_dsn(dsn)
        check_placement(self.dsn)
        self.timeout_s = timeout_s
        self._backend: Backend = open_backend(self.dsn, timeout_s)
        try:
            self._migrate(migrations)
        except BaseException:
            self.close()
            raise

    @classmethod
    def open(cls, dsn: str | Dsn, timeout_s: float = DEFAULT_TIMEOUT_S) -> 'History':
        return cls(dsn, timeout_s)

    def __enter__(self) -> 'History':
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        if getattr(self, '_backend', None) is not None:
            self._backend.close()

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._backend.dialect

    # -- schema ---------------------------------------------------------------------

    def schema_version(self) -> int:
        """The version of the database's schema (0 for an empty database)."""
        return self._backend.run_read(self._read_version)

    def _read_version(self) -> int:
        if not self._backend.table_exists('schema_migrations'):
            return 0
        return self._backend.query('SELECT MAX(version) FROM schema_migrations')[0][0] or 0

    def _migrate(self, migrations: t.Sequence[Migration]) -> None:
        check_sequence(migrations)
        latest = latest_version(migrations)
        current = self.schema_version()
        if current > latest:
            raise HistorySchemaError(
                'history database %s: its schema is version %d, newer than this collection knows (%d); upgrade '
                'lustre.iokit on the controller, or give another database' % (self.dsn.shown, current, latest),
                self.dsn.shown)
        if current == latest:
            return

        def apply():
            self._backend.lock_schema()
            self._backend.execute(MIGRATIONS_TABLE)
            # Another writer may have migrated while this one waited for the lock.
            for migration in migrations[self._read_version():]:
                for step in statements(migration, self.dialect):
                    if callable(step):
                        step(self._backend, self.dialect)
                    else:
                        self._backend.execute(step)
                self._backend.execute('INSERT INTO schema_migrations (version, description, applied) VALUES (?, ?, ?)',
                                      (migration.version, migration.description, _now()))

        try:
            self._backend.run_write(apply)
        except HistoryError as exc:
            raise HistorySchemaError('%s; the schema stays at version %d: is this a database of its own for the '
                                     'history?' % (exc, current), self.dsn.shown) from exc

    # -- recording ----------------------------------------------------------------------

    def record_run(self, results_dir: str, run_id: str, tags: TagsArg = None, hosts: t.Iterable[str] | None = None,
                   surveys: t.Iterable[str] | None = None, nid_owners: t.Mapping[str, str] | None = None,
                   collection_version: str | None = None) -> RecordOutcome:
        """Record the stored results of ``run_id`` (``<results_dir>/<run_id>/<host>/<survey>.json``).

        ``hosts`` and ``surveys`` limit it to some results (an AWX slice records its own hosts); ``tags`` (a mapping
        or ``key=value`` strings) are added to the run's, a tag given again taking the new value; ``nid_owners``
        (``{nid: host}``) names the node of each NID where its result does not; ``collection_version`` is the
        collection that measured, where the results do not say (the action that records right after the store
        gives its own; an import gives none).

        Idempotent: a result whose content is unchanged is not written again.  The results store is only read.
        Raises ValueError for an invalid run id or a run that is not stored, HistoryError (naming the database and
        that the run's files are kept) when the database fails; what was recorded before the failure stays, and
        recording again completes it.
        """
        validate_run_id(run_id)
        run_dir = os.path.join(results_dir, run_id)
        if not os.path.isdir(run_dir):
            raise ValueError('no run %s in %s: %s is not a directory' % (run_id, results_dir, run_dir))
        tag_values = parse_tags(tags)
        host_filter = None if hosts is None else set(hosts)
        survey_filter = None if surveys is None else set(surveys)
        unreadable = []
        prepared = []
        for path, found in list_envelopes(results_dir, run_id):
            if isinstance(found, EnvelopeError):
                unreadable.append((path, str(found)))
            elif (host_filter is None or found['host'] in host_filter) and \
                    (survey_filter is None or found['survey'] in survey_filter):
                prepared.append(_prepare(found, nid_owners, collection_version))
        counts = {'run_new': False, 'new': 0, 'changed': 0, 'unchanged': 0, 'added': 0, 'removed': 0}
        try:
            for batch in _batches(prepared):
                self._backend.run_write(lambda batch=batch: self._record_batch(run_id, batch, counts))
            if counts['run_new'] or counts['new'] or counts['changed'] or tag_values:
                self._backend.run_write(lambda: self._update_run(run_id, tag_values, counts))
        except HistoryError as exc:
            raise type(exc)('%s. %s' % (exc, kept_results(results_dir, run_id)), exc.dsn) from exc
        return RecordOutcome(run_id, counts['run_new'], counts['new'], counts['changed'], counts['unchanged'],
                             counts['added'], counts['removed'], unreadable)

    def import_results(self, results_dir: str, tags: TagsArg = None,
                       nid_owners: t.Mapping[str, str] | None = None) -> ImportOutcome:
        """Record every run stored in ``results_dir`` (each directory whose name is a run id), oldest name first.

        Idempotent as ``record_run``; a directory that is not a run is listed in ``not_runs`` with why.
        """
        if not os.path.isdir(results_dir):
            raise ValueError('%s is not a directory: give the results directory (iokit_results_dir) to import'
                             % results_dir)
        outcomes, not_runs = [], []
        for name in sorted(os.listdir(results_dir)):
            path = os.path.join(results_dir, name)
            if not os.path.isdir(path) or name.startswith('.'):
                continue
            try:
                validate_run_id(name)
            except ValueError as exc:
                not_runs.append((path, str(exc)))
                continue
            outcomes.append(self.record_run(results_dir, name, tags=tags, nid_owners=nid_owners))
        return ImportOutcome(outcomes, not_runs)

    def set_tags(self, run_id: str, tags: TagsArg) -> None:
        """Add ``tags`` to a recorded run (a tag given again takes the new value); KeyError when it is not recorded."""
        tag_values = parse_tags(tags)
        if self.run(run_id) is None:
            raise KeyError('run %s is not in the history %s' % (run_id, self.dsn.shown))
        self._backend.run_write(lambda: self._write_tags(run_id, tag_values))

    def delete_runs(self, run_ids: t.Iterable[str], finished_before: t.Any = None) -> list[str]:
        """Delete the runs (their tags, surveys, results and samples go with them) in one write transaction; the
        ones deleted, sorted.

        Each run is locked as a recording locks it (``lock_run``), so that a writer recording into one of them
        waits, and a run another writer finished meanwhile at or after ``finished_before`` (when given) is kept.
        A series no sample uses any more stays: it is a name, not a measurement.
        """
        wanted = sorted(set(run_ids))
        bound = time_text(finished_before)

        def delete():
            deleted = []
            for run_id in wanted:
                if self._backend.lock_run(run_id, _now()):
                    # Not there (another writer pruned it first): the row lock_run made must not stay.
                    self._backend.execute('DELETE FROM runs WHERE run_id = ?', (run_id,))
                    continue
                if bound is not None:
                    finished = self._backend.query('SELECT finished FROM runs WHERE run_id = ?', (run_id,))[0][0]
                    if finished is None or finished >= bound:
                        continue
                self._backend.execute('DELETE FROM runs WHERE run_id = ?', (run_id,))
                deleted.append(run_id)
            return deleted

        return self._backend.run_write(delete) if wanted else []

    def _record_batch(self, run_id: str, batch: list[_Prepared], counts: dict) -> None:
        backend = self._backend
        if backend.lock_run(run_id, _now()):
            counts['run_new'] = True
        stored = {(host, survey): (envelope_id, content_hash, sample_count)
                  for envelope_id, host, survey, content_hash, sample_count in backend.query(
                      'SELECT id, host, survey, content_hash, sample_count FROM envelopes WHERE run_id = ?', (run_id,))}
        changed = []
        for item in batch:
            before = stored.get((item.host, item.survey))
            if before is not None and before[1] == item.content_hash:
                counts['unchanged'] += 1
                continue
            changed.append((item, before))
        if not changed:
            return
        series_ids = self._series_ids(set(key for item, _before in changed for key in item.series))
        replaced = [before[0] for _item, before in changed if before is not None]
        for chunk in chunks(replaced):
            # The children go with them (ON DELETE CASCADE): a result is written again whole.
            backend.execute('DELETE FROM envelopes WHERE id IN (%s)' % ', '.join('?' * len(chunk)), chunk)
        for item, before in changed:
            if before is not None:
                counts['changed'] += 1
                counts['removed'] += before[2]
            else:
                counts['new'] += 1
            counts['added'] += len(item.samples)
        # One bulk insert per table for the whole batch: a round trip per result would cost more than the rows.
        backend.insert_rows('envelopes', ('run_id', 'host', 'survey', 'status', 'engine', 'started', 'finished',
                                          'parameters_hash', 'parameters', 'fsname', 'lustre_version',
                                          'collection_version', 'sample_count', 'problems', 'content_hash'),
                            [(run_id, item.host, item.survey, item.status, item.engine, item.started, item.finished,
                              item.parameters_hash, item.parameters, item.fsname, item.lustre_version,
                              item.collection_version, len(item.samples), item.problems, item.content_hash)
                             for item, _before in changed])
        envelope_ids = {(host, survey): envelope_id for envelope_id, host, survey in backend.query(
            'SELECT id, host, survey FROM envelopes WHERE run_id = ?', (run_id,))}
        samples, components, fill = [], [], []
        for item, _before in changed:
            envelope_id = envelope_ids[(item.host, item.survey)]
            ids = [series_ids[key[:3] + (key[4], key[7])] for key in item.series]
            samples.extend((envelope_id, seq, ids[index], iteration, value, status)
                           for seq, (index, iteration, value, status) in enumerate(item.samples))
            components.extend((envelope_id, kind, component_id, target)
                              for (kind, component_id), target in sorted(item.components.items()))
            fill.extend((envelope_id,) + tuple(level) for level in item.fill)
        backend.insert_rows('samples', ('envelope_id', 'seq', 'series_id', 'iteration', 'value', 'status'), samples)
        backend.insert_rows('envelope_components', ('envelope_id', 'component_kind', 'component_id', 'target'),
                            components)
        backend.insert_rows('component_fill', ('envelope_id', 'component_kind', 'component_id', 'free_kib',
                                               'total_kib', 'free_inodes', 'total_inodes'), fill)

    def _series_ids(self, keys: set) -> dict:
        """``{(survey, kind, id, metric, point): series id}`` for ``keys`` (full series keys), made where missing.

        New series are inserted in one sorted order, so that two writers making the same ones never deadlock.
        """
        backend = self._backend
        ids: dict = {}
        by_survey: dict = {}
        for key in keys:
            by_survey.setdefault(key[0], set()).add(key[2])

        def look_up(survey, component_ids):
            for chunk in chunks(sorted(component_ids)):
                for series_id, kind, component_id, metric, point in backend.query(
                        'SELECT id, component_kind, component_id, metric, point FROM series WHERE survey = ? AND '
                        'component_id IN (%s)' % ', '.join('?' * len(chunk)), (survey,) + tuple(chunk)):
                    ids[(survey, kind, component_id, metric, point)] = series_id

        for survey, component_ids in by_survey.items():
            look_up(survey, component_ids)
        missing = sorted(key for key in keys if key[:3] + (key[4], key[7]) not in ids)
        if missing:
            backend.insert_new('series', ('survey', 'component_kind', 'component_id', 'test', 'metric', 'unit',
                                          'direction', 'point'),
                               ('survey', 'component_id', 'component_kind', 'metric', 'point'), missing)
            again: dict = {}
            for key in missing:
                again.setdefault(key[0], set()).add(key[2])
            for survey, component_ids in again.items():
                look_up(survey, component_ids)
        return ids

    def _update_run(self, run_id: str, tag_values: dict, counts: dict) -> None:
        """The run's row and its surveys from every result of it recorded so far (by any writer), and its tags."""
        backend = self._backend
        if backend.lock_run(run_id, _now()):
            counts['run_new'] = True
        rows = backend.query(
            'SELECT host, survey, engine, started, finished, parameters_hash, parameters, fsname, lustre_version, '
            'collection_version FROM envelopes WHERE run_id = ? ORDER BY survey, host', (run_id,))
        if rows:
            backend.execute(
                'UPDATE runs SET started = ?, finished = ?, fsname = ?, lustre_version = ?, collection_version = ?, '
                'host_count = ? WHERE run_id = ?',
                (min(row[3] for row in rows), max(row[4] for row in rows), _joined(row[7] for row in rows),
                 _joined(row[8] for row in rows), _joined(row[9] for row in rows), len(set(row[0] for row in rows)),
                 run_id))
        by_survey: dict = {}
        for row in rows:
            by_survey.setdefault(row[1], []).append(row)
        backend.execute('DELETE FROM run_surveys WHERE run_id = ?', (run_id,))
        survey_rows = []
        for survey, survey_envelopes in sorted(by_survey.items()):
            parameters = {row[5]: row[6] for row in survey_envelopes}
            shown = (next(iter(parameters.values())) if len(parameters) == 1
                     else '[%s]' % ','.join(parameters[key] for key in sorted(parameters)))
            survey_rows.append((run_id, survey, identity.combined_hash(parameters), shown,
                                _joined(row[2] for row in survey_envelopes), len(set(row[0] for row in survey_envelopes)),
                                min(row[3] for row in survey_envelopes), max(row[4] for row in survey_envelopes)))
        backend.insert_rows('run_surveys', ('run_id', 'survey', 'parameters_hash', 'parameters', 'engine', 'host_count',
                                            'started', 'finished'), survey_rows)
        self._write_tags(run_id, tag_values)

    def _write_tags(self, run_id: str, tag_values: dict) -> None:
        self._backend.executemany(
            'INSERT INTO run_tags (run_id, tag_key, tag_value) VALUES (?, ?, ?) '
            'ON CONFLICT (run_id, tag_key) DO UPDATE SET tag_value = excluded.tag_value',
            [(run_id, key, value) for key, value in sorted(tag_values.items())])

    # -- reading ------------------------------------------------------------------------

    def runs(self, since: t.Any = None, until: t.Any = None, tags: TagsArg = None,
             run_ids: t.Iterable[str] | None = None, survey: str | None = None) -> list[RunRecord]:
        """The recorded runs, oldest first (by start, then run id).

        ``since`` (included) and ``until`` (excluded) bound the run's start: a datetime (naive means UTC) or ISO-8601
        UTC text such as ``2026-01-01T00:00:00Z``; ``tags`` (a mapping or ``key=value`` strings) must all match;
        ``run_ids`` and ``survey`` keep those runs, those with that survey.  A run recorded with tags only (no result
        yet) has no start and is left out by ``since`` and ``until``.
        """
        where, params = [], []
        if since is not None:
            where.append('r.started >= ?')
            params.append(time_text(since))
        if until is not None:
            where.append('r.started < ?')
            params.append(time_text(until))
        for key, value in sorted(parse_tags(tags).items()):
            where.append('r.run_id IN (SELECT run_id FROM run_tags WHERE tag_key = ? AND tag_value = ?)')
            params.extend((key, value))
        if survey is not None:
            where.append('r.run_id IN (SELECT run_id FROM run_surveys WHERE survey = ?)')
            params.append(survey)
        wanted = None if run_ids is None else sorted(set(run_ids))
        if wanted is not None and not wanted:
            return []

        def read():
            rows = []
            for chunk in (chunks(wanted) if wanted is not None else [None]):
                clauses, values = list(where), list(params)
                if chunk is not None:
                    clauses.append('r.run_id IN (%s)' % ', '.join('?' * len(chunk)))
                    values.extend(chunk)
                rows.extend(self._backend.query(
                    'SELECT r.run_id, r.started, r.finished, r.fsname, r.lustre_version, r.collection_version, '
                    'r.host_count, r.recorded FROM runs r%s' % (' WHERE ' + ' AND '.join(clauses) if clauses else ''),
                    values))
            return self._run_records(rows)

        return self._backend.run_read(read)

    def run(self, run_id: str) -> RunRecord | None:
        """One recorded run, or None."""
        found = self.runs(run_ids=[run_id])
        return found[0] if found else None

    def _run_records(self, rows: list[tuple]) -> list[RunRecord]:
        ids = [row[0] for row in rows]
        tags: dict = {run_id: {} for run_id in ids}
        surveys: dict = {run_id: {} for run_id in ids}
        for chunk in chunks(ids):
            marks = ', '.join('?' * len(chunk))
            for run_id, key, value in self._backend.query(
                    'SELECT run_id, tag_key, tag_value FROM run_tags WHERE run_id IN (%s)' % marks, chunk):
                tags[run_id][key] = value
            for row in self._backend.query(
                    'SELECT run_id, survey, parameters_hash, parameters, engine, host_count, started, finished '
                    'FROM run_surveys WHERE run_id IN (%s)' % marks, chunk):
                surveys[row[0]][row[1]] = RunSurvey(row[1], row[2], json.loads(row[3]), row[4], row[5], row[6], row[7])
        records = [RunRecord(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], tags[row[0]],
                             surveys[row[0]]) for row in rows]
        return sorted(records, key=lambda record: (record.started or '', record.run_id))

    def fill(self, run_id: str) -> list[ComponentFill]:
        """Each OST's and MDT's fill level as the run's surveys read it, by survey, host and component."""
        return self._backend.run_read(lambda: [ComponentFill(*row) for row in self._backend.query(
            'SELECT e.survey, e.host, f.component_kind, f.component_id, f.free_kib, f.total_kib, f.free_inodes, '
            'f.total_inodes FROM component_fill f JOIN envelopes e ON e.id = f.envelope_id WHERE e.run_id = ? '
            'ORDER BY e.survey, e.host, f.component_kind, f.component_id', (run_id,))])

    def samples(self, runs: t.Iterable[str] | None = None, survey: str | None = None,
                component_kind: str | None = None, component_id: str | None = None, metric: str | None = None,
                point: t.Any = None, host: str | None = None, series_of_run: str | None = None) -> list[StoredSample]:
        """The recorded samples that match every filter given, by run (oldest first), survey, host and order.

        ``runs``: run ids; ``point``: a mapping (``{'thr': 8, 'obj': 2}``) or a Sample's point tuple, matched
        whole; ``series_of_run``: only the series (survey, component, metric, point) that this run has, which is
        what a baseline for that run needs from earlier runs.
        """
        where, params = [], []
        for column, value in (('e.survey', survey), ('s.component_kind', component_kind),
                              ('s.component_id', component_id), ('s.metric', metric), ('e.host', host)):
            if value is not None:
                where.append('%s = ?' % column)
                params.append(value)
        if point is not None:
            where.append('s.point = ?')
            params.append(identity.point_json(make_point(dict(point))))

        def read():
            rows = self._sample_rows(runs, where, params)
            if series_of_run is not None:
                # Kept here rather than by a subquery, whose plan a freshly loaded database can get badly wrong.
                series = set(row[0] for row in self._backend.query(
                    'SELECT x.series_id FROM samples x JOIN envelopes e ON e.id = x.envelope_id WHERE e.run_id = ?',
                    (series_of_run,)))
                rows = [row for row in rows if row[17] in series]
            rows.sort(key=lambda row: (row[1] or '', row[0], row[2], row[3], row[15]))
            points: dict = {}
            return [StoredSample(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8], row[9],
                                 row[10], points.setdefault(row[11], make_point(json.loads(row[11]))), row[12],
                                 row[13], row[14] or STATUS_OK)
                    for row in rows]

        return self._backend.run_read(read)

    def _sample_rows(self, runs: t.Iterable[str] | None, where: list, params: list) -> list[tuple]:
        """The raw rows of the samples of ``runs`` (all when None) that match ``where``: ``(run_id, run started,
        survey, host, kind, component id, target, test, metric, unit, direction, point JSON, iteration, value,
        status or None, seq, run finished, series id)``, in no particular order."""
        wanted = None if runs is None else sorted(set(runs))
        if wanted is not None and not wanted:
            return []
        select = ('SELECT e.run_id, r.started, e.survey, e.host, s.component_kind, s.component_id, c.target, s.test, '
                  's.metric, s.unit, s.direction, s.point, x.iteration, x.value, x.status, x.seq, r.finished, '
                  'x.series_id '
                  'FROM samples x JOIN series s ON s.id = x.series_id JOIN envelopes e ON e.id = x.envelope_id '
                  'JOIN runs r ON r.run_id = e.run_id LEFT JOIN envelope_components c ON c.envelope_id = x.envelope_id '
                  'AND c.component_kind = s.component_kind AND c.component_id = s.component_id')
        rows: list = []
        for chunk in (chunks(wanted) if wanted is not None else [None]):
            clauses, values = list(where), list(params)
            if chunk is not None:
                clauses.append('e.run_id IN (%s)' % ', '.join('?' * len(chunk)))
                values.extend(chunk)
            rows.extend(self._backend.query(select + (' WHERE ' + ' AND '.join(clauses) if clauses else ''), values))
        return rows

    def judging_rows(self, run_id: str, limit: int = DEFAULT_COMPARABLE) -> dict:
        """What a judgement of ``run_id`` against its history reads, in report/history_judge.py's row shape::

            {'current': [row, ...], 'earlier': [row, ...], 'other_runs': [{run_id, finished, survey, params_hash}]}

        ``current``: every sample of the run; ``earlier``: the samples of the last ``limit`` comparable earlier runs of
        each of its surveys (``comparable_runs``), of the series the run has only; ``other_runs``: the earlier runs
        passed over for other survey variables, to be named.  A row is ``{run_id, finished, survey, params_hash,
        component_kind, component_id, metric, unit, direction, point, iteration, value, host, target}``, ``point``
        its canonical JSON text, ``params_hash`` its run's survey hash.  KeyError when the run is not recorded.
        """
        comparable = self.comparable_runs(run_id, limit)
        this = self.run(run_id)
        hashes = {this.run_id: {name: survey.parameters_hash for name, survey in this.surveys.items()}}
        for item in comparable.values():
            for run in item.runs + item.differing:
                hashes[run.run_id] = {name: survey.parameters_hash for name, survey in run.surveys.items()}

        def rows_of(raw):
            return [{'run_id': row[0], 'finished': row[16], 'survey': row[2],
                     'params_hash': hashes[row[0]].get(row[2]), 'component_kind': row[4], 'component_id': row[5],
                     'metric': row[8], 'unit': row[9], 'direction': row[10], 'point': row[11], 'iteration': row[12],
                     'value': row[13], 'host': row[3], 'target': row[6]} for row in raw]

        def read():
            raw = self._sample_rows([run_id], [], [])
            # The earlier samples of the run's own series only, kept here rather than by a subquery, whose plan a
            # database that was just bulk-loaded (no statistics yet) can get badly wrong.
            series = set(row[17] for row in raw)
            current = rows_of(raw)
            earlier = []
            for survey, item in sorted(comparable.items()):
                if item.runs:
                    earlier.extend(rows_of(row for row in self._sample_rows(
                        [run.run_id for run in item.runs], ['e.survey = ?'], [survey]) if row[17] in series))
            other = [{'run_id': run.run_id, 'finished': run.finished, 'survey': survey,
                      'params_hash': run.surveys[survey].parameters_hash}
                     for survey, item in sorted(comparable.items()) for run in item.differing]
            return {'current': current, 'earlier': earlier, 'other_runs': other}

        return self._backend.run_read(read)

    def judging_values(self, run_id: str, limit: int = DEFAULT_COMPARABLE) -> dict:
        """What ``judging_rows`` reads, in the compact shape of report/history_judge.py's ``judge_history_values``::

            {'run_id', 'finished', 'hashes': {survey: params_hash},
             'series': {series id: (survey, component_kind, component_id, metric, unit, direction, point JSON,
                                    host, target)},
             'current': {series id: value, or [value, ...] when the run has several (iterations)},
             'earlier': [{'run_id', 'finished', 'survey', 'params_hash', 'values': {series id: value or [...]}}],
             'other_runs': [{run_id, finished, survey, params_hash}]}

        The same samples as ``judging_rows``, but a sample is read as its envelope, series and value only, and what a
        series is about is read once per series rather than once per sample: at a thousand OSS a judgement reads
        about six million samples, and a row of fourteen columns each (and a dict in Python) was most of its cost.
        ``series`` has the series of the run only; ``host`` and ``target`` are those of the first of its results
        that measured it.  KeyError when the run is not recorded.
        """
        comparable = self.comparable_runs(run_id, limit)
        this = self.run(run_id)
        query = self._backend.query

        def envelopes_of(run: str, survey: str | None = None) -> list[tuple]:
            if survey is None:
                return query('SELECT id, survey, host FROM envelopes WHERE run_id = ? ORDER BY id', (run,))
            return query('SELECT id, survey, host FROM envelopes WHERE run_id = ? AND survey = ? ORDER BY id',
                         (run, survey))

        def values_of(envelope_ids: list, wanted: dict) -> dict:
            # series id -> its value, or its values when the run measured it more than once (iterations); only the
            # series in ``wanted``.  Built by dict() in C when every series has one value, as a run's usually does.
            rows: list = []
            for chunk in chunks(envelope_ids):
                rows.extend(query('SELECT series_id, value FROM samples WHERE envelope_id IN (%s)'
                                  % ', '.join('?' * len(chunk)), chunk))
            values = dict(rows)
            if len(values) != len(rows):
                values = {}
                for series_id, value in rows:
                    _add_value(values, series_id, value)
            if not values.keys() <= wanted.keys():
                for series_id in values.keys() - wanted.keys():
                    del values[series_id]
            return values

        def read():
            current_envelopes = envelopes_of(run_id)
            survey_of = {envelope_id: survey for envelope_id, survey, _host in current_envelopes}
            host_of = {envelope_id: host for envelope_id, _survey, host in current_envelopes}
            ids = [envelope_id for envelope_id, _survey, _host in current_envelopes]
            rows = []
            for chunk in chunks(ids):
                rows.extend(query('SELECT series_id, value, envelope_id FROM samples WHERE envelope_id IN (%s) '
                                  'ORDER BY envelope_id, seq' % ', '.join('?' * len(chunk)), chunk))
            series_ids = list(map(_FIRST, rows))
            # series id -> its value, built in C when every series has one (as a run's usually do), in the order of
            # the results and their samples
            current = dict(zip(series_ids, map(_SECOND, rows)))
            if len(current) != len(rows):
                current = {}
                for series_id, value, _envelope_id in rows:
                    _add_value(current, series_id, value)
            # the first result of the run that measured each series: its survey, host and component names
            first = dict(zip(reversed(series_ids), map(_THIRD, reversed(rows))))
            del rows, series_ids
            targets: dict = {}
            for chunk in chunks(ids):
                for envelope_id, kind, component_id, target in query(
                        'SELECT envelope_id, component_kind, component_id, target FROM envelope_components '
                        'WHERE envelope_id IN (%s)' % ', '.join('?' * len(chunk)), chunk):
                    targets[(envelope_id, kind, component_id)] = target
            series: dict = {}
            wanted = sorted(current)
            for chunk in chunks(wanted):
                for series_id, kind, component_id, metric, unit, direction, point in query(
                        'SELECT id, component_kind, component_id, metric, unit, direction, point FROM series '
                        'WHERE id IN (%s)' % ', '.join('?' * len(chunk)), chunk):
                    envelope_id = first[series_id]
                    series[series_id] = (survey_of[envelope_id], kind, component_id, metric, unit, direction, point,
                                         host_of[envelope_id], targets.get((envelope_id, kind, component_id)))
            hashes = {survey: this.surveys[survey].parameters_hash if survey in this.surveys else None
                      for survey in sorted(set(survey_of.values()))}
            earlier = []
            for survey, item in sorted(comparable.items()):
                for run in item.runs:
                    values = values_of([row[0] for row in envelopes_of(run.run_id, survey)], current)
                    if values:
                        earlier.append({'run_id': run.run_id, 'finished': run.finished, 'survey': survey,
                                        'params_hash': run.surveys[survey].parameters_hash, 'values': values})
            other = [{'run_id': run.run_id, 'finished': run.finished, 'survey': survey,
                      'params_hash': run.surveys[survey].parameters_hash}
                     for survey, item in sorted(comparable.items()) for run in item.differing]
            return {'run_id': run_id if current else None, 'finished': this.finished if current else None,
                    'hashes': hashes, 'series': series, 'current': current, 'earlier': earlier, 'other_runs': other}

        return self._backend.run_read(read)

    def comparable_runs(self, run_id: str, limit: int = DEFAULT_COMPARABLE,
                        survey: str | None = None) -> dict[str, Comparable]:
        """For each survey of ``run_id`` (or ``survey`` alone): the last ``limit`` earlier runs comparable with it.

        Returns ``{survey: Comparable(survey, parameters_hash, runs, differing)}``.  ``runs``: the earlier runs (those
        that finished before it, as report/history_judge.py counts them) whose same survey has the same variables'
        hash, newest first, at most ``limit``.  ``differing``: the
        earlier runs of that survey with another hash that were passed over to find them (all of them when fewer
        than ``limit`` comparable runs exist), newest first, so that a judgement can name them instead of mixing
        them in.  Whether two samples are comparable also needs the same sweep point: compare samples of one
        series (``samples(..., series_of_run=run_id)``).  KeyError when ``run_id`` is not recorded.
        """
        if limit < 1:
            raise ValueError('limit must be at least 1, got %r' % (limit,))
        this = self.run(run_id)
        if this is None:
            raise KeyError('run %s is not in the history %s' % (run_id, self.dsn.shown))
        if survey is not None and survey not in this.surveys:
            return {}
        result = {}
        for name in sorted([survey] if survey is not None else this.surveys):
            wanted_hash = this.surveys[name].parameters_hash
            earlier = self._backend.run_read(lambda name=name: self._backend.query(
                'SELECT r.run_id, rs.parameters_hash FROM run_surveys rs JOIN runs r ON r.run_id = rs.run_id '
                'WHERE rs.survey = ? AND r.run_id <> ? AND (r.finished < ? OR (r.finished = ? AND r.run_id < ?)) '
                'ORDER BY r.finished DESC, r.run_id DESC', (name, run_id, this.finished, this.finished, run_id)))
            same, other = [], []
            for earlier_id, earlier_hash in earlier:
                if len(same) == limit:
                    break
                (same if earlier_hash == wanted_hash else other).append(earlier_id)
            records = {record.run_id: record for record in self.runs(run_ids=same + other)}
            result[name] = Comparable(name, wanted_hash, [records[run] for run in same],
                                      [records[run] for run in other])
        return result


_FIRST, _SECOND, _THIRD = operator.itemgetter(0), operator.itemgetter(1), operator.itemgetter(2)


def _add_value(values: dict, series_id: t.Any, value: float) -> bool:
    """Adds a value of a series to ``{series id: value, or [values] from the second on}``; True when it is the first."""
    known = values.get(series_id)
    if known is None:
        values[series_id] = value
        return True
    if known.__class__ is list:
        known.append(value)
    else:
        values[series_id] = [known, value]
    return False
