# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The results history on the controller (docs/history.md): every stored run recorded in a database.

- ``dsn``: ``iokit_history_dsn`` parsed (SQLite file or PostgreSQL URI), masked for messages, kept off Lustre;
- ``schema``: the tables and the list of migrations;
- ``identity``: component identities that survive a reboot and a re-cabling, the survey variables' hash;
- ``backends``: what differs between SQLite and PostgreSQL (transactions, locks, bulk inserts, errors);
- ``store``: the ``History`` API (record, import, runs, samples, comparable runs);
- ``errors``: what it raises.
"""
