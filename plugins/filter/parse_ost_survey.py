# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: parse_ost_survey
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Parse the output of ost-survey into per-OST bandwidth figures
description:
  - Reads the stdout of the I/O kit's C(ost-survey) (the Perl script of Lustre 1.6 and later) and of the
    2006 shell C(ost-survey.sh), and returns one object with the worst, best and average read and write
    bandwidth and one entry per OST.
  - Every bandwidth is MiB/s (the tool divides by 1024*1024 although it prints C(MB/s)).
  - Lines that are not part of the output (shell prompts, blank lines, C(# ) prefixes) are skipped.
  - Text that holds no ost-survey output gives the object with null fields and an empty RV(_value.osts).
  - Input that is not text raises an error naming the filter.
options:
  _input:
    description: The text printed by C(ost-survey), as one string.
    type: string
    required: true
'''

EXAMPLES = r'''
- name: Parse a saved ost-survey log
  ansible.builtin.set_fact:
    ost_result: "{{ lookup('file', 'ost-survey-client01.log') | lustre.iokit.parse_ost_survey }}"

- name: Fail when an OST writes at less than half the average
  ansible.builtin.assert:
    that:
      - item.write_mib_s >= ost_result.write.avg_mib_s / 2
    fail_msg: "OST {{ item.ost }} writes at {{ item.write_mib_s }} MiB/s"
  loop: "{{ ost_result.osts | selectattr('active') }}"

- name: Run ost-survey and parse its stdout
  ansible.builtin.command: ost-survey -s 1024 /mnt/testfs
  register: ost_run
  changed_when: false

- name: Show the slowest OST for reads
  ansible.builtin.debug:
    msg: "{{ (ost_run.stdout | lustre.iokit.parse_ost_survey).read.worst }}"
'''

RETURN = r'''
_value:
  description: The survey summary and one entry per OST. A value the text does not give is null.
  type: dict
  contains:
    active_osts:
      description: Number of active OSTs (C(Number of Active OST devices)); for the 2006 script, the number of OSTs found and tested.
      type: int
    inactive_osts:
      description: Number of OSTs that are not active (C(Number of non active ots(s))), 0 when the count line is printed without it.
      type: int
    date:
      description: Date of the run as printed in the header (C(MM/DD/YY)).
      type: str
    mount_point:
      description: Lustre mount point surveyed.
      type: str
    client_nid:
      description: First NID of the client that ran the survey.
      type: str
    no_active_osts:
      description: True when the tool printed C(There is no active OST's found).
      type: bool
    read:
      description: Read statistics across OSTs.
      type: dict
      contains:
        worst:
          description: Slowest OST as a dict with C(ost) (index) and C(mib_s) (bandwidth in MiB/s).
          type: dict
        best:
          description: Fastest OST as a dict with C(ost) (index) and C(mib_s) (bandwidth in MiB/s).
          type: dict
        avg_mib_s:
          description: Average bandwidth in MiB/s (the tool divides by all OSTs, inactive ones included).
          type: float
        stddev_mib_s:
          description: Population standard deviation in MiB/s (null for the 2006 script).
          type: float
    write:
      description: Write statistics across OSTs, same keys as RV(_value.read).
      type: dict
    osts:
      description: One entry per OST row of the table, in index order.
      type: list
      elements: dict
      contains:
        ost:
          description: OST index (position in the client's target list).
          type: int
        read_mib_s:
          description: Read bandwidth in MiB/s (null for an inactive OST).
          type: float
        write_mib_s:
          description: Write bandwidth in MiB/s (null for an inactive OST).
          type: float
        read_time_s:
          description: Time of the read pass in seconds, two syncs included.
          type: float
        write_time_s:
          description: Time of the write pass in seconds, two syncs included.
          type: float
        active:
          description: False for an C(Inactive ost) row.
          type: bool
'''

from ansible_collections.lustre.iokit.plugins.module_utils.parsers.ost_survey import parse_ost_survey
from ansible_collections.lustre.iokit.plugins.plugin_utils.parser_filters import make_parser_filter


class FilterModule(object):
    def filters(self):
        return {'parse_ost_survey': make_parser_filter('parse_ost_survey', parse_ost_survey)}
