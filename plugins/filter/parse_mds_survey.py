# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: parse_mds_survey
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Parse mds-survey results into JSON records
description:
  - Reads the C(.summary) file or the captured stdout of C(mds-survey) and returns one record per
    result line (one thread count on a set of MDTs), with operation rates per test.
  - Understands the current format (C(create 5652.05 [ 999.01, 46940.48]), C(ERROR) in place of the rate)
    and the Lustre 2.2-2.4 one (C([%7.2f,%7.2f]) without a space, the rate followed by C(ERROR) or C(SHORT)),
    widths that overflow (a C(file) count of 8 digits or more, rates of 7 digits) and a min of C(0.00).
  - A header line C(<date> <path>/mds-survey from <host>) sets RV(_value[].host) on the records that follow;
    a C(pdsh) host prefix (C(mds01:) before the line) sets it when there is no header.
  - Records wrapped over several lines (terminal, mail client, trailing C(\)) are joined; shell prompts and
    other lines are skipped.
  - Text without any result line gives an empty list.
options:
  _input:
    description: The text of an mds-survey summary file or stdout.
    type: string
    required: true
'''

EXAMPLES = r'''
- name: Parse a summary fetched from an MDS
  ansible.builtin.set_fact:
    mds_records: "{{ lookup('file', 'results/mds1/mds_survey.summary') | lustre.iokit.parse_mds_survey }}"

- name: Create rate per thread count, in operations per second
  ansible.builtin.debug:
    msg: "{{ mds_records | map(attribute='thr') | zip(mds_records | map(attribute='tests.create.ops_s')) | list }}"

- name: Tests that reported ERROR
  ansible.builtin.debug:
    msg: "{{ mds_records | map(attribute='tests') | map('dict2items') | flatten
             | selectattr('value.status', 'equalto', 'error') | map(attribute='key') | unique | list }}"
'''

RETURN = r'''
_value:
  description: One record per result line, in the order printed.
  type: list
  elements: dict
  contains:
    mdt:
      description: Number of MDTs tested together (C(mdt)).
      type: int
    file:
      description: Files per MDT for this thread count (C(file); the script's C(file_count)).
      type: int
    dir:
      description: Directories per MDT (C(dir)).
      type: int
    thr:
      description: Threads per MDT (C(thr)).
      type: int
    host:
      description: Host named by the header line (or by a C(pdsh) prefix), or null.
      type: str
    tests:
      description: One entry per test as printed (C(create), C(lookup), C(md_getattr), C(setxattr), C(destroy), ...).
      type: dict
      contains:
        ops_s:
          description: Average rate in operations per second (mean of the per-MDT averages); null when not printed (C(ERROR)).
          type: float
        min_ops_s:
          description: Lowest per-second rate seen on one MDT, in operations per second (may be 0.0); null unless status is C(ok).
          type: float
        max_ops_s:
          description: Highest per-second rate seen on one MDT, in operations per second; null unless status is C(ok).
          type: float
        status:
          description: C(ok), C(error) (C(ERROR)), C(short) (C(SHORT), Lustre 2.2-2.4 only), or C(incomplete)
            (nothing after the rate - the run or the file was cut short).
          type: str
'''

from ansible_collections.lustre.iokit.plugins.module_utils.parsers.mds_survey import parse_mds_survey
from ansible_collections.lustre.iokit.plugins.plugin_utils.parser_filters import make_parser_filter


class FilterModule(object):
    def filters(self):
        return {'parse_mds_survey': make_parser_filter('parse_mds_survey', parse_mds_survey)}
