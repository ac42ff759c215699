# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The two databases behind the history, and everything that differs between them.

The SQL of ``store.py`` is written once, with ``?`` placeholders; a backend runs it on its database and turns the
driver's failures into the history's errors (``errors.py``), each naming the DSN (password masked) and what to do.

- SQLite (Python's ``sqlite3``): a write transaction is ``BEGIN IMMEDIATE``, which takes the one writer's lock at
  once, waiting up to the timeout (``busy_timeout``) for another writer to finish; readers are not blocked.  The
  rollback journal is kept (not WAL), because WAL needs shared memory that a network file system does not give.
- PostgreSQL (psycopg 3, imported only when a DSN asks for it): transactions at READ COMMITTED; writers of one run
  queue on its ``runs`` row (``lock_run``), writers of different runs do not wait for each other; ``lock_timeout``
  bounds any wait for a lock.  A deadlock or a serialization failure is retried (``TRANSIENT_ATTEMPTS``).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
import typing as t

from ansible_collections.lustre.iokit.plugins.plugin_utils.history.dsn import POSTGRESQL, SQLITE, Dsn
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.errors import HistoryError, HistoryUnavailable

# How often a write transaction that PostgreSQL aborted as a deadlock or a serialization failure is tried.
TRANSIENT_ATTEMPTS = 3
# Rows per statement when a list of keys is sent as IN (...): well below SQLite's 32766 host parameters.
IN_CHUNK = 500


def chunks(items: t.Sequence, size: int = IN_CHUNK) -> t.Iterator[t.Sequence]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


class Backend:
    """A connection to one history database (subclasses: SqliteBackend, PostgresBackend)."""

    dialect = ''

    def __init__(self, dsn: Dsn, timeout_s: float):
        self.dsn = dsn
        self.timeout_s = timeout_s
        self.connection: t.Any = None

    # -- errors ----------------------------------------------------------------

    def unavailable(self, what: str, detail: t.Any, advice: str) -> HistoryUnavailable:
        return HistoryUnavailable('history database %s: %s (%s); %s' % (self.dsn.shown, what, _one_line(detail), advice),
                                  self.dsn.shown)

    def translate(self, exc: Exception) -> HistoryError:
        """The history's error for a driver exception raised while using the database."""
        raise NotImplementedError

    # -- statements --------------------------------------------------------------

    def sql(self, text: str) -> str:
        return text

    def execute(self, text: str, params: t.Sequence = ()) -> t.Any:
        return self.connection.execute(self.sql(text), tuple(params))

    def query(self, text: str, params: t.Sequence = ()) -> list[tuple]:
        return list(self.execute(text, params).fetchall())

    def executemany(self, text: str, rows: t.Iterable[t.Sequence]) -> None:
        rows = [tuple(row) for row in rows]
        if rows:
            cursor = self.connection.cursor()
            cursor.executemany(self.sql(text), rows)

    def insert_rows(self, table: str, columns: t.Sequence[str], rows: t.Sequence[t.Sequence]) -> None:
        """Insert many rows at once (PostgreSQL: COPY)."""
        self.executemany('INSERT INTO %s (%s) VALUES (%s)' % (table, ', '.join(columns), ', '.join('?' * len(columns))),
                         rows)

    def insert_new(self, table: str, columns: t.Sequence[str], key: t.Sequence[str],
                   rows: t.Sequence[t.Sequence]) -> None:
        """Insert the ``rows`` whose ``key`` columns are not in ``table`` yet, in the order given; the others, and
        those another writer inserts meanwhile, are left alone (``ON CONFLICT DO NOTHING``)."""
        self.executemany('INSERT INTO %s (%s) VALUES (%s) ON CONFLICT (%s) DO NOTHING'
                         % (table, ', '.join(columns), ', '.join('?' * len(columns)), ', '.join(key)), rows)

    def table_exists(self, name: str) -> bool:
        raise NotImplementedError

    def lock_run(self, run_id: str, now: str) -> bool:
        """Make sure ``runs`` has the run's row and hold it until the transaction ends; True when it was new."""
        cursor = self.execute('INSERT INTO runs (run_id, recorded, host_count) VALUES (?, ?, 0) '
                              'ON CONFLICT (run_id) DO NOTHING', (run_id, now))
        return cursor.rowcount == 1

    def lock_schema(self) -> None:
        """Hold the schema for the transaction, so that two first writers do not both create the tables."""

    def write(self) -> t.ContextManager[None]:
        """A write transaction (a context manager): committed at the end of the block, rolled back on any
        exception."""
        raise NotImplementedError

    def run_write(self, work: t.Callable[[], t.Any]) -> t.Any:
        """``work()`` inside a write transaction (tried again after a transient abort); the history's error else."""
        return self._guarded(lambda: self._in_write(work))

    def _in_write(self, work):
        with self.write():
            return work()

    def run_read(self, work: t.Callable[[], t.Any]) -> t.Any:
        """``work()`` reading the database; a driver failure becomes the history's error."""
        return self._guarded(work)

    def _guarded(self, work):
        try:
            return work()
        except HistoryError:
            raise
        except Exception as exc:  # pylint: disable=broad-except
            error = self.translate(exc)
            if error is None:
                raise
            raise error from exc

    def close(self) -> None:
        if self.connection is not None:
            try:
                self.connection.close()
            finally:
                self.connection = None


def _one_line(detail: t.Any) -> str:
    return ' '.join(str(detail).split()) or type(detail).__name__


class SqliteBackend(Backend):

    dialect = SQLITE

    def __init__(self, dsn: Dsn, timeout_s: float):
        super().__init__(dsn, timeout_s)
        directory = os.path.dirname(dsn.target)
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as exc:
            raise self.unavailable('cannot create its directory', exc.strerror or exc,
                                   'check that the controller user can write in %s' % directory) from exc
        try:
            # isolation_level=None: no implicit transactions; write() opens BEGIN IMMEDIATE itself.
            self.connection = sqlite3.connect(dsn.target, timeout=timeout_s, isolation_level=None)
            self.connection.execute('PRAGMA foreign_keys = ON')
            # Reading the schema reads the file: a file that is not a database fails here, not mid-record.
            self.connection.execute('SELECT COUNT(*) FROM sqlite_master').fetchall()
        except sqlite3.Error as exc:
            self.close()
            raise self.translate(exc) from exc

    def translate(self, exc: Exception) -> HistoryError | None:
        if not isinstance(exc, sqlite3.Error):
            return None
        text = str(exc)
        if 'locked' in text or 'busy' in text:
            return self.unavailable('locked by another writer for more than %g s' % self.timeout_s, exc,
                                    'try again once the other job that records into it has ended')
        if 'not a database' in text or 'malformed' in text:
            return self.unavailable('is not a usable SQLite database', exc,
                                    'give another file, or move this one aside (it is not deleted)')
        if 'readonly' in text or 'unable to open' in text or 'disk I/O' in text:
            return self.unavailable('cannot be opened for writing', exc,
                                    'check that %s can be written by the controller user and its disk is not full'
                                    % self.dsn.target)
        return self.unavailable('failed', exc, 'see the message')

    def table_exists(self, name: str) -> bool:
        return bool(self.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)))

    @contextlib.contextmanager
    def write(self) -> t.Iterator[None]:
        self.connection.execute('BEGIN IMMEDIATE')
        try:
            yield
        except BaseException:
            self.connection.execute('ROLLBACK')
            raise
        self.connection.execute('COMMIT')


class PostgresBackend(Backend):

    dialect = POSTGRESQL

    def __init__(self, dsn: Dsn, timeout_s: float):
        super().__init__(dsn, timeout_s)
        try:
            import psycopg  # pylint: disable=import-outside-toplevel
        except ImportError as exc:
            raise HistoryUnavailable(
                'history database %s: the PostgreSQL driver psycopg 3 is not installed on the controller (%s); '
                "install it (pip install 'psycopg[binary]'; the execution environment has it) or use a "
                'sqlite:/// DSN' % (dsn.shown, exc), dsn.shown) from exc
        self.psycopg = psycopg
        try:
            self.connection = psycopg.connect(dsn.target, autocommit=True, connect_timeout=max(1, int(timeout_s)),
                                              application_name='lustre.iokit history')
            self.connection.execute("SET lock_timeout = '%dms'" % int(timeout_s * 1000))
        except psycopg.Error as exc:
            self.close()
            raise self.unavailable('cannot be reached', exc,
                                   'check that the server runs and accepts this user from the controller, and the '
                                   'DSN (iokit_history_dsn)') from exc

    def sql(self, text: str) -> str:
        return text.replace('?', '%s')

    def translate(self, exc: Exception) -> HistoryError | None:
        errors = self.psycopg.errors
        if isinstance(exc, (errors.LockNotAvailable, errors.QueryCanceled)):
            # Its first line says why; the next ones quote the statement.
            return self.unavailable('locked by another writer for more than %g s' % self.timeout_s,
                                    (str(exc).splitlines() or [''])[0],
                                    'try again once the other job that records into it has ended')
        if isinstance(exc, self.psycopg.OperationalError):
            return self.unavailable('cannot be reached', exc, 'check that the server runs and the network to it')
        if isinstance(exc, self.psycopg.Error):
            return self.unavailable('failed', exc, 'see the message')
        return None

    def insert_rows(self, table: str, columns: t.Sequence[str], rows: t.Sequence[t.Sequence]) -> None:
        if not rows:
            return
        with self.connection.cursor() as cursor:
            with cursor.copy('COPY %s (%s) FROM STDIN' % (table, ', '.join(columns))) as copy:
                for row in rows:
                    copy.write_row(row)

    def insert_new(self, table: str, columns: t.Sequence[str], key: t.Sequence[str],
                   rows: t.Sequence[t.Sequence]) -> None:
        # One statement per row costs a round trip each; COPY into a scratch table, then one INSERT ... SELECT in
        # the order given (the rows' order is what keeps two writers of the same new rows from deadlocking).
        if not rows:
            return
        scratch = 'new_%s' % table
        self.execute('CREATE TEMPORARY TABLE IF NOT EXISTS %s ON COMMIT DELETE ROWS AS SELECT 0::BIGINT AS ordinal, '
                     '%s FROM %s WITH NO DATA' % (scratch, ', '.join(columns), table))
        self.insert_rows(scratch, ('ordinal',) + tuple(columns),
                         [(ordinal,) + tuple(row) for ordinal, row in enumerate(rows)])
        self.execute('INSERT INTO %s (%s) SELECT %s FROM %s ORDER BY ordinal ON CONFLICT (%s) DO NOTHING'
                     % (table, ', '.join(columns), ', '.join(columns), scratch, ', '.join(key)))
        self.execute('DELETE FROM %s' % scratch)

    def table_exists(self, name: str) -> bool:
        return self.query('SELECT to_regclass(?)', (name,))[0][0] is not None

    def lock_run(self, run_id: str, now: str) -> bool:
        new = super().lock_run(run_id, now)
        # The row lock queues the other writers of this run (slices recording their hosts) behind this one.
        self.execute('SELECT 1 FROM runs WHERE run_id = ? FOR UPDATE', (run_id,))
        return new

    def lock_schema(self) -> None:
        # Any constant: the key of this collection's schema lock ('IOKT').
        self.execute('SELECT pg_advisory_xact_lock(1229935444)')

    @contextlib.contextmanager
    def write(self) -> t.Iterator[None]:
        with self.connection.transaction():
            yield

    def _in_write(self, work):
        transient = (self.psycopg.errors.DeadlockDetected, self.psycopg.errors.SerializationFailure)
        for attempt in range(1, TRANSIENT_ATTEMPTS + 1):
            try:
                with self.write():
                    return work()
            except transient:
                if attempt == TRANSIENT_ATTEMPTS:
                    raise
                time.sleep(0.05 * attempt)
        return None  # not reached


def open_backend(dsn: Dsn, timeout_s: float) -> Backend:
    """A connected backend for ``dsn``; HistoryUnavailable naming it when it cannot be opened."""
    if dsn.kind == SQLITE:
        return SqliteBackend(dsn, timeout_s)
    if dsn.kind == POSTGRESQL:
        return PostgresBackend(dsn, timeout_s)
    raise ValueError('unknown history database kind %r' % (dsn.kind,))
