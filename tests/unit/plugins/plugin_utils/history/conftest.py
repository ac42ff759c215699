# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The unit tests record into SQLite only; tests/history runs test_databases.py against PostgreSQL too."""

from __future__ import annotations

import pytest

from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.history.helpers import SqliteDatabase


@pytest.fixture
def database(tmp_path):
    return SqliteDatabase(tmp_path / 'databases')


@pytest.fixture
def results_dir(tmp_path):
    path = tmp_path / 'results'
    path.mkdir()
    return str(path)
