# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: parse_sgpdd_survey
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Parse sgpdd-survey results into JSON records
description:
  - Reads the C(.summary) file or the captured stdout of C(sgpdd-survey) and returns one record
    per result line (one combination of record size, concurrent regions and threads).
  - Understands the current format (Lustre 2.5 and later, C(write 6036.79 [ 100.69, 106.49])) and the
    legacy ones - C(write 180.45 MB/s 1 x 180.50 = 180.50 MB/s) after a C(dev ...) prefix (2.4) or a
    C(total_size ...) prefix (2.3 and older), including the oldest line that names no action, whose figure
    is stored under the test name C(total).
  - C(ENOMEM) right after the parameters, C(<N> failed) (and the oldest C(failed <N>)) are understood; the
    C(Error found in <file>) messages that the script prints in the middle of a result line are removed.
  - A header line C(<date> sgpdd-survey on <devices> from <host>) sets RV(_value[].host) and RV(_value[].devices)
    on the records that follow; a C(pdsh) host prefix (C(oss01:) before the line) sets RV(_value[].host) when
    there is no header.
  - Records wrapped over several lines (terminal, mail client, trailing C(\)) are joined; shell prompts and
    other lines are skipped.
  - Every C(MB/s) the survey prints is MiB/s (2^20 bytes per second).
  - Text without any result line gives an empty list.
  - With sg3_utils 1.48 or later, C(sgpdd-survey) does not recognise the new C(sgp_dd) timing line and
    reports every action as C(<N> failed); see P(lustre.iokit.parse_sgp_dd#filter) for the raw timing lines.
options:
  _input:
    description: The text of an sgpdd-survey summary file or stdout.
    type: string
    required: true
'''

EXAMPLES = r'''
- name: Parse a summary fetched from an OSS
  ansible.builtin.set_fact:
    sgpdd_records: "{{ lookup('file', 'results/oss1/sgpdd_survey.summary') | lustre.iokit.parse_sgpdd_survey }}"

- name: Read bandwidth per thread count for one concurrent-region count, in MiB/s
  ansible.builtin.debug:
    msg: "{{ sgpdd_records | selectattr('crg', 'equalto', 4) | map(attribute='tests.read.mib_s') | list }}"

- name: Combinations skipped for lack of memory
  ansible.builtin.debug:
    msg: "{{ sgpdd_records | selectattr('enomem') | map(attribute='thr') | list }}"
'''

RETURN = r'''
_value:
  description: One record per result line, in the order printed.
  type: list
  elements: dict
  contains:
    dev:
      description:
        - Number of devices tested together (C(dev)).
        - For the legacy C(total_size) lines, which do not print it, the instance count before C(x) of the first action.
      type: int
    size_kib:
      description: Total data written or read per action over all devices, in KiB (C(sz) / C(total_size)).
      type: int
    rsz_kib:
      description: Record size of each C(sgp_dd) transfer, in KiB (C(rsz)).
      type: int
    crg:
      description: Concurrent regions over all devices (C(crg)).
      type: int
    thr:
      description: Threads over all devices (C(thr)).
      type: int
    host:
      description: Host named by the header line (or by a C(pdsh) prefix), or null.
      type: str
    devices:
      description: Devices listed by the header line (C(/dev/sdb), C(oss1:/dev/sdc)), or null.
      type: list
      elements: str
    enomem:
      description: True when the memory guard tripped (C(ENOMEM)) and no action ran for this combination.
      type: bool
    tests:
      description: One entry per action as printed (C(write), C(read)), or C(total) for the oldest legacy line; empty on ENOMEM.
      type: dict
      contains:
        mib_s:
          description: Aggregate bandwidth over all devices in MiB/s (total data / wall-clock time), or null.
          type: float
        min_mib_s:
          description: Slowest single C(sgp_dd) instance in MiB/s (current format only), or null.
          type: float
        max_mib_s:
          description: Fastest single C(sgp_dd) instance in MiB/s (current format only), or null.
          type: float
        failed:
          description: Number of C(sgp_dd) instances without a timing line or with an error (C(<N> failed)); 0 when all
            succeeded; null when the action was cut short.
          type: int
        status:
          description: C(ok), C(failed), or C(incomplete) (nothing after the action name - the run or the file was cut short).
          type: str
        instances:
          description: Legacy lines only - the number of C(sgp_dd) instances in the C(N x slowest) check.
          type: int
        slowest_instance_mib_s:
          description: Legacy lines only - bandwidth of the slowest instance in the C(N x slowest) check, in MiB/s.
          type: float
'''

from ansible_collections.lustre.iokit.plugins.module_utils.parsers.sgpdd_survey import parse_sgpdd_survey
from ansible_collections.lustre.iokit.plugins.plugin_utils.parser_filters import make_parser_filter


class FilterModule(object):
    def filters(self):
        return {'parse_sgpdd_survey': make_parser_filter('parse_sgpdd_survey', parse_sgpdd_survey)}
