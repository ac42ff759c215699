# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The unit tests of the history's queries that read or delete in a database, each run here on SQLite and on the
PostgreSQL server of conftest.py (the selection parser's tests need no database and stay in the unit tests)."""

from __future__ import annotations

from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.history.test_queries import (  # noqa: F401 pylint: disable=unused-import
    test_compare_halved_rates_are_regressions_and_other_variables_are_named,
    test_compare_of_equal_selections_is_within,
    test_delete_runs_checks_the_end_again_under_its_lock,
    test_export_writes_every_sample_with_its_run,
    test_prune_keeps_the_named_runs_and_check_mode_deletes_nothing,
    test_selections_find_their_runs,
    test_the_filters_ask_the_same_queries,
    test_trend_is_one_value_per_run_oldest_first,
)
