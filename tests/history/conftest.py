# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fixtures of the results history's tests: the PostgreSQL server of the session (history_env.py) and the
``database`` every test of test_databases.py takes, once on SQLite and once on that server."""

from __future__ import annotations

import shutil
import tempfile

import pytest

# First: it puts the collection on sys.path.
from history_env import PostgresDatabase, PostgresServer

from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.history.helpers import SqliteDatabase


@pytest.fixture(scope='session')
def postgres_server():
    """One server for the session, stopped and removed at its end even when a test failed."""
    # A short path: a Unix socket's path must stay under 108 bytes.
    directory = tempfile.mkdtemp(prefix='iokit-pg-')
    server = None
    try:
        server = PostgresServer(directory)
        server.start()
        yield server
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(params=['sqlite', 'postgresql'])
def database(request, tmp_path):
    if request.param == 'sqlite':
        return SqliteDatabase(tmp_path / 'databases')
    return PostgresDatabase(request.getfixturevalue('postgres_server'))


@pytest.fixture
def results_dir(tmp_path):
    path = tmp_path / 'results'
    path.mkdir()
    return str(path)
