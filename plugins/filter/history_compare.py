# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: history_compare
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Compare two selections of the results history, series by series
description:
  - Opens the results history named by the input (a DSN, as C(iokit_history_dsn)) on the controller and compares
    the runs O(lhs) names with those O(rhs) names, as C(playbooks/history.yml -e history_action=compare) does.
  - A selection is a run id, a period C(<start>:<end>) (C(now-90d:now), C(20260101:20260301)) or tags
    C(key=value[,key=value]); see M(lustre.iokit.history_query).
  - Per survey, component, metric and sweep point, each side's value is the median over its runs of each run's
    median over its iterations. Only series whose survey variables' hash is the same on both sides are compared;
    a run whose survey no run of the other side shares is named in C(incomparable).
  - The verdict is the history judgment's, with the right side as the baseline and its default minimum change of
    10 percent, by the metric's direction (a rate that fell, a time that rose is a C(regression)).
options:
  _input:
    description: The history database, V(sqlite:///<absolute path>) or V(postgresql://user:password@host/database).
    type: str
    required: true
  lhs:
    description: The left side, the one judged.
    type: str
    required: true
  rhs:
    description: The right side, the baseline.
    type: str
    required: true
  tags:
    description: Keep only the runs with all these tags on both sides.
    type: raw
'''

EXAMPLES = r'''
- name: Fail on any regression of the last run against this quarter's others
  ansible.builtin.assert:
    that: compared.rows | selectattr('verdict', 'equalto', 'regression') | list | length == 0
  vars:
    compared: "{{ iokit_history_dsn | lustre.iokit.history_compare(iokit_run.run_id, 'quarter=2026Q3') }}"
'''

RETURN = r'''
_value:
  description: The compared series and the runs left out.
  type: dict
  contains:
    rows:
      description:
        - One entry per series of both sides - C(survey), C(component_kind), C(component_id), C(metric), C(unit),
          C(point), C(left), C(right), C(pdiff) (100 (left - right) / right, null when right is 0) and C(verdict)
          (C(regression), C(improvement) or C(within)).
      type: list
      elements: dict
    incomparable:
      description: Each C(side), C(run_id), C(survey) and C(parameters_hash) that no run of the other side shares.
      type: list
      elements: dict
'''

from ansible_collections.lustre.iokit.plugins.plugin_utils.history import queries
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.filters import make_report_filter


def history_compare(dsn, lhs, rhs, tags=None):
    left_selection = queries.parse_selection(lhs, 'lhs')
    right_selection = queries.parse_selection(rhs, 'rhs')

    def work(history):
        rows, incomparable = queries.compare(history, queries.select_runs(history, left_selection, tags),
                                             queries.select_runs(history, right_selection, tags))
        return {'rows': rows, 'incomparable': incomparable}

    return queries.with_history(dsn, work)


class FilterModule(object):
    def filters(self):
        return {'history_compare': make_report_filter('history_compare', history_compare)}
