# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: history_select
author: lustre.iokit contributors
version_added: 1.0.0
short_description: The runs of the results history that a selection names
description:
  - Opens the results history named by the input (a DSN, as C(iokit_history_dsn)) on the controller and returns
    the runs that O(selection) names, oldest first, as C(playbooks/history.yml -e history_action=list) lists them.
  - A selection is a run id; a period C(<start>:<end>), each end C(%Y%m%d[T%H%M[%S]]) or C(now) (UTC) followed by
    shifts such as C(-90d), C(+2h), C(-1w) or C(+30m) - the runs that started in it, the end excluded; or tags
    C(key=value[,key=value]).
  - See the collection's C(docs/history.md), "Asking the history".
options:
  _input:
    description: The history database, V(sqlite:///<absolute path>) or V(postgresql://user:password@host/database).
    type: str
    required: true
  selection:
    description: A run id, a period or tags.
    type: str
    default: now-90d:now
  tags:
    description: Keep only the runs with all these tags, a mapping or C(key=value) strings.
    type: raw
'''

EXAMPLES = r'''
- name: The runs of this quarter
  ansible.builtin.debug:
    msg: "{{ iokit_history_dsn | lustre.iokit.history_select('quarter=2026Q3') | map(attribute='run_id') }}"

- name: The runs of the last two weeks on one site
  ansible.builtin.debug:
    msg: "{{ iokit_history_dsn | lustre.iokit.history_select('now-2w:now', tags={'site': 'north'}) }}"
'''

RETURN = r'''
_value:
  description: One entry per run, oldest first.
  type: list
  elements: dict
  contains:
    run_id:
      description: The run.
      type: str
    started:
      description: The earliest start of its results, ISO-8601 UTC.
      type: str
    finished:
      description: The latest end of its results, ISO-8601 UTC.
      type: str
    fsname:
      description: The file systems its results name.
      type: str
    hosts:
      description: How many hosts stored a result.
      type: int
    surveys:
      description: Its surveys, sorted.
      type: list
      elements: str
    tags:
      description: Its tags.
      type: dict
'''

from ansible_collections.lustre.iokit.plugins.plugin_utils.history import queries
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.filters import make_report_filter


def history_select(dsn, selection=queries.DEFAULT_PERIOD, tags=None):
    wanted = queries.parse_selection(selection, 'selection')
    return queries.with_history(dsn, lambda history: queries.run_rows(queries.select_runs(history, wanted, tags)))


class FilterModule(object):
    def filters(self):
        return {'history_select': make_report_filter('history_select', history_select)}
