# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: parse_lst_stat
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Parse LNet self-test statistics (lst stat) into records
description:
  - Reads the C([LNet Rates of <group>]) and C([LNet Bandwidth of <group>]) blocks that C(lst stat) prints,
    in the current format (C(%-8) padding, C(MiB/s), C([R]) first) and the old one (C([W]) first, C(MB/s)).
  - Every sample is kept, in order, with its index in RV(_value[].sample); a sample ends when a group and
    metric repeat. C(Failed to stat on N nodes) is kept in RV(_value[].failed_nodes) of the group that follows it.
  - The lines that C(lst.sh) and C(lst) print around the statistics (C(Start LST), C(LST_SESSION=), C(Test:),
    C(lst show_error) totals, prompts) are skipped; text without statistics gives an empty list.
  - Input that is not text raises an error naming the filter.
options:
  _input:
    description: The text printed by C(lst stat) or C(lst.sh), as one string.
    type: string
    required: true
'''

EXAMPLES = r'''
- name: Parse the lst.sh output kept by lst-survey
  ansible.builtin.set_fact:
    lst_samples: "{{ lookup('file', 'lst_survey.1666207637/lst.1666207637.out') | lustre.iokit.parse_lst_stat }}"

- name: Average received bandwidth of the servers over all samples
  ansible.builtin.debug:
    msg: >-
      {{ lst_samples | selectattr('group', 'equalto', 'servers')
         | selectattr('metric', 'equalto', 'bandwidth')
         | selectattr('direction', 'equalto', 'read')
         | map(attribute='avg') | sum / ([1, lst_samples | length] | max) }}

- name: Fail when a node did not answer a stat request
  ansible.builtin.assert:
    that: lst_samples | map(attribute='failed_nodes') | max == 0
'''

RETURN = r'''
_value:
  description: One record per C([R]) or C([W]) line, in the order printed. A value the text does not give is null.
  type: list
  elements: dict
  contains:
    group:
      description: Group name (or NID list) from the block header.
      type: str
    metric:
      description: C(rates) (LNet messages per second) or C(bandwidth).
      type: str
    direction:
      description: C(read) for C([R]) (received by the group's nodes) or C(write) for C([W]) (sent by them).
      type: str
    avg:
      description: Mean per node across the group (not the group aggregate), in RV(_value[].unit).
      type: float
    min:
      description: Lowest node value, in RV(_value[].unit).
      type: float
    max:
      description: Highest node value, in RV(_value[].unit).
      type: float
    unit:
      description: C(RPC/s) for rates, C(MiB/s) for bandwidth whatever label was printed.
      type: str
    printed_unit:
      description:
        - The unit label as printed (C(RPC/s), C(MiB/s) or C(MB/s)).
        - C(MB/s) printed by lst 2.9 or later means the C(--mbs) option, that is 10^6 bytes per second;
          before 2.9 lst always printed C(MB/s) for MiB/s.
      type: str
    sample:
      description: Index of the sample, counted from 0.
      type: int
    failed_nodes:
      description: Nodes of this group that did not answer in this sample (C(Failed to stat on N nodes)), 0 when none.
      type: int
'''

from ansible_collections.lustre.iokit.plugins.module_utils.parsers.lst_stat import parse_lst_stat
from ansible_collections.lustre.iokit.plugins.plugin_utils.parser_filters import make_parser_filter


class FilterModule(object):
    def filters(self):
        return {'parse_lst_stat': make_parser_filter('parse_lst_stat', parse_lst_stat)}
