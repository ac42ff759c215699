# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: parse_obdfilter_survey
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Parse obdfilter-survey results into JSON records
description:
  - Reads the C(.summary) file or the captured stdout of C(obdfilter-survey) and returns one record
    per result line (one combination of OSTs, objects, threads and record size).
  - Understands every printed form - the pre-2.9 bracket C([%7.2f,%7.2f]) and the current C([%7.2f, %7.2f]),
    overflowing widths (C([1380.00,)), C(rsz 1024) without C(K) (oldest scripts), C(ERROR) and C(SHORT)
    after the aggregate, C(Too much buffer space) (Lustre 2.7 and older) and
    C(created object ... not contiguous).
  - A header line C(<date> Obdfilter-survey for case=<case> from <host>) sets RV(_value[].case) and
    RV(_value[].host) on the records that follow; a C(pdsh) host prefix (C(oss01:) before the line) sets RV(_value[].host) when
    there is no header.
  - Records wrapped over several lines (terminal, mail client, trailing C(\)) are joined; shell prompts,
    C(using LCTL=...), C(done!) and other lines are skipped.
  - Every C(MB/s) the survey prints is MiB/s (2^20 bytes per second).
  - Text without any result line gives an empty list.
options:
  _input:
    description: The text of an obdfilter-survey summary file or stdout.
    type: string
    required: true
'''

EXAMPLES = r'''
- name: Parse a summary fetched from an OSS
  ansible.builtin.set_fact:
    obdfilter_records: "{{ lookup('file', 'results/oss1/obdfilter_survey.summary') | lustre.iokit.parse_obdfilter_survey }}"

- name: Best write bandwidth of the sweep, in MiB/s
  ansible.builtin.debug:
    msg: "{{ obdfilter_records | map(attribute='tests.write.mib_s') | select('number') | max }}"

- name: Fail when a test reported ERROR or SHORT
  ansible.builtin.assert:
    that:
      - obdfilter_records | map(attribute='tests') | map('dict2items') | flatten
        | map(attribute='value.status') | reject('equalto', 'ok') | list | length == 0
    fail_msg: obdfilter-survey reported ERROR/SHORT results, see the .detail file

- name: Parse the stdout of a run started by hand
  ansible.builtin.command: obdfilter-survey
  environment:
    case: disk
    size: "1024"
    thrhi: "16"
  register: survey
  changed_when: true

- name: Keep the records
  ansible.builtin.set_fact:
    obdfilter_records: "{{ survey.stdout | lustre.iokit.parse_obdfilter_survey }}"
'''

RETURN = r'''
_value:
  description: One record per result line, in the order printed.
  type: list
  elements: dict
  contains:
    ost:
      description: Number of OSTs tested together (C(ost)).
      type: int
    size_kib:
      description: Total data written or read per test over all OSTs, in KiB (C(sz)).
      type: int
    rsz_kib:
      description: Record size of each echo_client I/O, in KiB (C(rsz)).
      type: int
    obj:
      description: Total number of objects over all OSTs (C(obj)).
      type: int
    thr:
      description: Total number of threads over all OSTs (C(thr)).
      type: int
    case:
      description: C(disk), C(network) or C(netdisk) from the header line, or null without a header.
      type: str
    host:
      description: Host named by the header line (or by a C(pdsh) prefix), or null.
      type: str
    skipped:
      description: True when the combination printed C(Too much buffer space) and was not run (Lustre 2.7 and older).
      type: bool
    error:
      description: The C(created object ... not contiguous) message when object creation failed (the run stopped), else null.
      type: str
    tests:
      description: One entry per test name as printed (C(write), C(rewrite), C(read), ...); empty when skipped or failed early.
      type: dict
      contains:
        mib_s:
          description: Aggregate bandwidth over all OSTs in MiB/s (total data / wall-clock time); kept on C(ERROR)/C(SHORT).
          type: float
        min_mib_s:
          description: Lowest per-second bandwidth seen on a single OST, in MiB/s; null unless status is C(ok).
          type: float
        max_mib_s:
          description: Highest per-second bandwidth seen on a single OST, in MiB/s; null unless status is C(ok).
          type: float
        status:
          description:
            - C(ok) (bracket printed), C(short) (C(SHORT) - no per-second samples, test ran under about 2 s),
              C(error) (C(ERROR) - an OST's lctl output had an error),
              C(incomplete) (nothing after the aggregate - the run or the file was cut short).
          type: str
'''

from ansible_collections.lustre.iokit.plugins.module_utils.parsers.obdfilter_survey import parse_obdfilter_survey
from ansible_collections.lustre.iokit.plugins.plugin_utils.parser_filters import make_parser_filter


class FilterModule(object):
    def filters(self):
        return {'parse_obdfilter_survey': make_parser_filter('parse_obdfilter_survey', parse_obdfilter_survey)}
