# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The unit tests of the history on a database (schema and migrations, recording twice, writers at once, import, a
locked or unreachable database), each run here on SQLite and on the PostgreSQL server of conftest.py."""

from __future__ import annotations

from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.history.test_databases import *  # noqa: F401,F403 pylint: disable=wildcard-import,unused-wildcard-import
