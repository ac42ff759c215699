# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: history_trend
author: lustre.iokit contributors
version_added: 1.0.0
short_description: One component's metric over the runs of the results history
description:
  - Opens the results history named by the input (a DSN, as C(iokit_history_dsn)) on the controller and returns
    O(metric) of O(component) in each run, oldest first, as C(playbooks/history.yml -e history_action=trend) does.
    A run's value is the median of its iterations.
options:
  _input:
    description: The history database, V(sqlite:///<absolute path>) or V(postgresql://user:password@host/database).
    type: str
    required: true
  component:
    description: The component as the history names it - C(testfs-OST0003), a LUN's stable id, a NID.
    type: str
    required: true
  metric:
    description: The metric, such as C(obdfilter_write_mib_s).
    type: str
    required: true
  point:
    description: One sweep point, a mapping of its parameters (C(thr), C(obj), C(rsz_kib)). Default every point.
    type: dict
  selection:
    description: Only the runs of this selection (a run id, a period or tags). Default every run.
    type: str
'''

EXAMPLES = r'''
- name: The write rate of one OST at one sweep point, run after run
  ansible.builtin.debug:
    msg: "{{ iokit_history_dsn | lustre.iokit.history_trend('testfs-OST0003', 'obdfilter_write_mib_s',
             point={'rsz_kib': 1024, 'obj': 2, 'thr': 8}, selection='now-365d:now') }}"
'''

RETURN = r'''
_value:
  description: One entry per run and sweep point, by point then oldest run first.
  type: list
  elements: dict
  contains:
    started:
      description: When the run started, ISO-8601 UTC.
      type: str
    run_id:
      description: The run.
      type: str
    survey:
      description: The survey that measured it.
      type: str
    parameters_hash:
      description: The run's survey variables' hash; values with different hashes are not comparable.
      type: str
    point:
      description: The sweep point.
      type: dict
    value:
      description: The median of the run's iterations.
      type: float
    unit:
      description: The metric's unit.
      type: str
'''

from ansible_collections.lustre.iokit.plugins.plugin_utils.history import queries
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.filters import make_report_filter


def history_trend(dsn, component, metric, point=None, selection=None):
    wanted = queries.parse_selection(selection, 'selection') if selection else None

    def work(history):
        runs = queries.select_runs(history, wanted) if wanted is not None else None
        return queries.trend(history, component, metric, point or None, runs)

    return queries.with_history(dsn, work)


class FilterModule(object):
    def filters(self):
        return {'history_trend': make_report_filter('history_trend', history_trend)}
