# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: parse_mdtest
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Parse the summary of an mdtest run into JSON
description:
  - Reads mdtest output (mdtest 1.8/1.9 C(SUMMARY:), 3.x and 4.x C(SUMMARY rate:) / C(SUMMARY time:) tables,
    the launch banner) and returns the rate of every metadata operation.
  - MPI launcher noise, shell prompts, warnings and verbose per-iteration lines are skipped.
  - Output as people paste it is read too. A rate table whose C(SUMMARY rate:) title is missing or damaged is
    recognised by its C(Operation  Max  Min  Mean  Std Dev) titles followed by their rule (then
    RV(_value.iterations) is null). Tabs, blanks collapsed to one, banners with single dashes and an indented
    or prefixed launch line are accepted; C(N tasks, M files) gives the task count when there is no launch banner.
  - Figures with a decimal comma (C(22,523) is 22.523) are read when every figure of the row has exactly three
    digits after its comma, as mdtest prints them; other commas make the line no row.
  - A row a mail client wrapped (its last figures alone on the next line, such as each row's Std Dev, also with
    decimal commas) is joined, and so are column titles it wrapped (C(Std Dev) alone under
    C(Operation  Max  Min  Mean)); a row cut short by a truncated paste is dropped, never half-read; free-text notes between rows are skipped; of two rows of
    one operation the first is kept. A table ends at a banner, a C(SUMMARY) title, a task count or the next run.
  - A failed run prints no summary table; its result still has the version, nodes and task count (from the
    C(N tasks, M files) line) with an empty RV(_value.summary) - no figure is made up. When no run in the text has
    a table, the first such run is described.
  - Text in another format gives the empty object (null fields, empty RV(_value.summary)).
  - When the text holds several runs (a task sweep with C(-f)/C(-l)/C(-s), or several invocations in one log),
    the result describes the first and lists all of them in RV(_value.runs).
options:
  _input:
    description: The mdtest output text.
    type: string
    required: true
'''

EXAMPLES = r'''
- name: Parse a saved mdtest log
  ansible.builtin.set_fact:
    md: "{{ lookup('file', 'results/client1/mdtest.out') | lustre.iokit.parse_mdtest }}"

- name: Mean file creation rate
  ansible.builtin.debug:
    msg: "{{ md.summary['file creation'].mean }} {{ md.unit }} with {{ md.tasks }} tasks"

- name: Fail when file stat is slower than the acceptance threshold
  ansible.builtin.assert:
    that: md.summary['file stat'].mean >= 50000
    fail_msg: "file stat at {{ md.summary['file stat'].mean }} ops/s"
'''

RETURN = r'''
_value:
  description: The parsed mdtest summary of the first run in the text.
  type: dict
  contains:
    version:
      description: mdtest version from the launch banner (C(1.9.3), C(3.4.0+dev), C(4.0.0)), or null.
      type: str
    tasks:
      description:
        - Number of MPI tasks (the C(N tasks, M files) line of the run - also C(N tasks, M directories),
          C(N tasks, M files/directories), C(N tasks, 1 file) - else the launch banner), or null.
        - Given also for a failed run that printed no summary table.
      type: int
    nodes:
      description: Number of nodes from the launch banner, or null.
      type: int
    iterations:
      description: Number of iterations the summary covers (C(of N iterations)), or null (also when the title is lost).
      type: int
    unit:
      description: Unit of every figure in RV(_value.summary); always C(ops/sec).
      type: str
    summary:
      description:
        - The rate table, keyed by operation name in lower case with whitespace collapsed (C(directory creation),
          C(directory stat), C(directory rename), C(directory removal), C(file creation), C(file create (stonewall)),
          C(file stat), C(file read), C(file removal), C(tree creation), C(tree removal)).
        - Each value holds C(max), C(min), C(mean) and C(stddev) in operations per second; a figure the text does not
          give (C(NA), a missing Std Dev column, C(nan)) is null.
        - With per-rank statistics (C(-P)) the per-iteration figures are used and the per-rank ones are under C(per_rank).
        - Empty when the run printed no table (a failed run); figures are never filled in.
      type: dict
    summary_time:
      description: Present when the text has a C(SUMMARY time) table - the same shape as RV(_value.summary),
        figures in seconds.
      type: dict
    summary_time_unit:
      description: Present with RV(_value.summary_time); always C(sec).
      type: str
    runs:
      description: Present only when the text holds more than one run - each run's object with the fields above.
      type: list
      elements: dict
'''

from ansible_collections.lustre.iokit.plugins.module_utils.parsers.mdtest import parse_mdtest
from ansible_collections.lustre.iokit.plugins.plugin_utils.parser_filters import make_parser_filter


class FilterModule(object):
    def filters(self):
        return {'parse_mdtest': make_parser_filter('parse_mdtest', parse_mdtest)}
