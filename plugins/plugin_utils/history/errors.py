# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the history raises: every message names the database (its DSN, password masked) and what to do."""

from __future__ import annotations


class HistoryError(Exception):
    """The history database cannot be used: ``dsn`` is the DSN as shown (password masked)."""

    def __init__(self, message: str, dsn: str | None = None):
        super().__init__(message)
        self.dsn = dsn


class HistoryLocationError(HistoryError):
    """The database may not live where it was asked to (a SQLite file on Lustre)."""


class HistoryUnavailable(HistoryError):
    """The database is locked by another writer past the timeout, or cannot be reached or opened."""


class HistorySchemaError(HistoryError):
    """The database's schema is newer than this collection knows, or not this collection's."""
