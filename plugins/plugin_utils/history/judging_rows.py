# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the report's judgement against history (report/history_judge.py) reads from the history database.

The report action imports this module only when it is asked to judge (``history_compare``), so that a report
without it needs neither the database nor its driver.
"""

from __future__ import annotations

from ansible_collections.lustre.iokit.plugins.plugin_utils.history.dsn import parse_dsn, resolve_dsn
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.store import DEFAULT_TIMEOUT_S, History


def load_history_values(dsn: str | None, run_id: str, runs: int, results_dir: str | None = None,
                        timeout_s: float = DEFAULT_TIMEOUT_S) -> dict:
    """``History.judging_values(run_id, runs)`` from the database ``dsn``: what ``load_history_rows`` reads, in the
    compact shape of history_judge.judge_history_values (what the report action judges by); the same arguments and
    errors as ``load_history_rows``."""
    return _read(dsn, run_id, results_dir, timeout_s, lambda history: history.judging_values(run_id, runs))


def load_history_rows(dsn: str | None, run_id: str, runs: int, results_dir: str | None = None,
                      timeout_s: float = DEFAULT_TIMEOUT_S) -> dict:
    """``History.judging_rows(run_id, runs)`` from the database ``dsn``: ``{'current', 'earlier', 'other_runs'}``.

    ``dsn`` None or empty means the default beside ``results_dir`` (``iokit_history_dsn``'s default), which is then
    required.  KeyError (saying how to record it) when the run is not in the history; the history's errors
    (HistoryError, naming the database) when it cannot be read.
    """
    return _read(dsn, run_id, results_dir, timeout_s, lambda history: history.judging_rows(run_id, runs))


def _read(dsn: str | None, run_id: str, results_dir: str | None, timeout_s: float, read) -> dict:
    if dsn:
        parsed = parse_dsn(dsn)
    elif results_dir:
        parsed = resolve_dsn(None, results_dir)
    else:
        raise ValueError('no history database: give iokit_history_dsn, or the results directory beside which the '
                         'default one is')
    with History(parsed, timeout_s=timeout_s) as history:
        if history.run(run_id) is None:
            raise KeyError('run %s is not in the history %s: record it first (iokit_history=true when it runs, or '
                           'ansible-playbook playbooks/history.yml -e history_action=import)' % (run_id, parsed.shown))
        return read(history)
