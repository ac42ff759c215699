# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# Documentation only: the work is done on the controller by plugins/action/history_query.py.

from __future__ import annotations

DOCUMENTATION = r'''
module: history_query
author:
  - lustre.iokit contributors (@lustre)
version_added: 1.0.0
short_description: Ask the results history - list, show, compare, trend, prune, export
description:
  - Asks the results history that M(lustre.iokit.history_record) fills, on the controller, and returns the answer
    as rows, as the lines of a table for the console, and as a file
    C(history-<action>-<timestamp>.txt) in O(dest) (C(.csv) and C(.jsonl) for V(export)).
  - A selection (O(lhs), O(rhs), O(selection)) is a run id; a period C(<start>:<end>), each end
    C(%Y%m%d[T%H%M[%S]]) or C(now) (UTC) followed by shifts such as C(-90d), C(+2h), C(-1w), C(+30m) - the runs
    that started in it, the end excluded; or tags C(key=value[,key=value]) - the runs that carry all of them.
  - Values are reduced as the history judgment reduces them - a run's value is the median of its iterations, a
    selection's the median of its runs' values.
  - V(prune) deletes in the database's write transactions, each run locked as a recording locks it, so that it
    waits for a recording into the same run and the other way round; still, prune when no survey is recording
    (see the collection's C(docs/history.md)).
  - Runs on the controller only.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
  - lustre.iokit.attributes.controller_action
attributes:
  check_mode:
    support: full
    details:
      - V(prune) says which runs would be deleted and deletes none; the other actions only read the database.
      - The answer's files are written in check mode too - they are the answer, not a change of the history.
options:
  action:
    description:
      - V(list) - the runs in O(period) (default the last 90 days) with O(tags), their surveys, hosts and tags.
      - V(show) - one run, O(run_id) - its record, each survey's variables' hash and sample count, fill levels.
      - V(compare) - O(lhs) against O(rhs) per survey, component, metric and sweep point, only series whose survey
        variables' hash is the same on both sides; the runs of other variables are named.
      - V(trend) - O(metric) of O(component) over the runs (those of O(period) and O(tags) when given).
      - V(prune) - delete the runs that finished before O(before), except O(keep_runs).
      - V(export) - every sample of O(selection) (default O(period), default the last 90 days) with its run's
        metadata, as CSV and JSON Lines.
    type: str
    required: true
    choices: [list, show, compare, trend, prune, export]
  results_dir:
    description: The results store on the controller; the default database and O(dest) are there.
    type: path
    required: true
  dsn:
    description:
      - The history database, V(sqlite:///<absolute path>) or V(postgresql://user:password@host/database).
      - Defaults to the variable C(iokit_history_dsn); empty or unset means V(sqlite:///<results_dir>/history.sqlite).
    type: str
  dest:
    description: The directory the files are written in. Default O(results_dir).
    type: path
  period:
    description: A period, C(<start>:<end>), for V(list), V(trend) and V(export).
    type: str
  tags:
    description: Keep only the runs with all these tags, a mapping or C(key=value) strings.
    type: raw
  run_id:
    description: The run V(show) shows.
    type: str
  lhs:
    description: The left side of V(compare), a selection; the one judged.
    type: str
  rhs:
    description: The right side of V(compare), a selection; the baseline the change is counted from.
    type: str
  selection:
    description: What V(export) writes, a selection.
    type: str
  component:
    description: The component of V(trend) as the history names it (C(testfs-OST0003), a LUN's stable id, a NID).
    type: str
  metric:
    description: The metric of V(trend) (C(obdfilter_write_mib_s)).
    type: str
  point:
    description:
      - The sweep point of V(trend), as a mapping of its parameters (C(thr), C(obj), C(rsz_kib)).
      - Default every point.
    type: dict
  before:
    description:
      - V(prune) deletes the runs that finished before this time, C(%Y%m%d[T%H%M[%S]]) or C(now-365d).
      - Required by V(prune) - nothing is deleted without it.
    type: str
  keep_runs:
    description: Runs V(prune) never deletes, such as the runs a named baseline was made of.
    type: list
    elements: str
    default: []
  timeout_s:
    description: Seconds to wait for another writer holding the database before failing.
    type: float
    default: 60
seealso:
  - module: lustre.iokit.history_record
'''

EXAMPLES = r'''
- name: This quarter's runs against last quarter's
  lustre.iokit.history_query:
    action: compare
    results_dir: /var/lib/lustre-iokit/results
    lhs: quarter=2026Q3
    rhs: quarter=2026Q2
  register: compared
  run_once: true

- name: Delete the runs older than a year, except those of the accepted baseline
  lustre.iokit.history_query:
    action: prune
    results_dir: /var/lib/lustre-iokit/results
    before: now-365d
    keep_runs: [20260110T080000Z-a1b2]
  run_once: true
'''

RETURN = r'''
dsn:
  description: The database asked, with any password masked.
  returned: always
  type: str
rows:
  description: The answer, one mapping per run (V(list), V(show), V(export)), per series (V(compare)), per run and
    point (V(trend)) or per run deleted (V(prune)). A V(compare) row has C(survey), C(component_kind),
    C(component_id), C(metric), C(unit), C(point), C(left), C(right), C(pdiff) (100 (left - right) / right) and
    C(verdict) (C(regression), C(improvement) or C(within), by the metric's direction).
  returned: always
  type: list
  elements: dict
lines:
  description: The answer as the lines of a table, for the console.
  returned: always
  type: list
  elements: str
files:
  description: The files written, the table first.
  returned: always
  type: list
  elements: str
incomparable:
  description: For V(compare), each run and survey of one side whose survey variables no run of the other side has.
  returned: when action is compare
  type: list
  elements: dict
deleted:
  description: For V(prune), the runs deleted (in check mode, those that would be).
  returned: when action is prune
  type: list
  elements: str
kept:
  description: For V(prune), the runs old enough to go that O(keep_runs) kept.
  returned: when action is prune
  type: list
  elements: str
samples:
  description: For V(export), how many samples were written.
  returned: when action is export
  type: int
'''
