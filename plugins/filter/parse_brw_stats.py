# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: parse_brw_stats
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Parse a Lustre brw_stats histogram file into JSON
description:
  - Reads the text of C(lctl get_param osd-*.*.brw_stats) (or the older C(obdfilter.*.brw_stats),
    or a copy of C(/proc/fs/lustre/.../brw_stats)) and returns the time header and every histogram.
  - Handles every header form Lustre has printed - C(snapshot_time) in C(secs.usecs) (up to 2.9,
    with the unpadded microseconds corrected), in C(secs.nsecs), and the 2.15+ C(start_time)/C(elapsed_time) lines.
  - Shell prompts, other parameters of the same C(lctl get_param) call and unrelated lines are skipped.
  - Text in another format gives the empty object (null times, no histograms).
  - When the text holds several targets, the result describes the first one and lists all of them in RV(_value.targets).
options:
  _input:
    description: The brw_stats text (one or several targets).
    type: string
    required: true
'''

EXAMPLES = r'''
- name: Parse a saved brw_stats capture
  ansible.builtin.set_fact:
    ost_brw: "{{ lookup('file', 'results/oss1/brw_stats.txt') | lustre.iokit.parse_brw_stats }}"

- name: Share of 1 MiB (256-page) bulk writes on the first OST
  ansible.builtin.debug:
    msg: >-
      {{ (ost_brw.histograms['pages per bulk r/w']
          | selectattr('bucket', 'equalto', '256') | first).write.pct }} %

- name: Read brw_stats of every OST of this server and parse them
  ansible.builtin.command: lctl get_param osd-*.*.brw_stats
  register: brw_raw
  changed_when: false

- name: One record per target
  ansible.builtin.set_fact:
    brw_per_target: "{{ (brw_raw.stdout | lustre.iokit.parse_brw_stats).targets | default([brw_raw.stdout | lustre.iokit.parse_brw_stats]) }}"
'''

RETURN = r'''
_value:
  description: The parsed brw_stats of the first target in the text.
  type: dict
  contains:
    target:
      description: Target name from the C(param=) line (C(testfs-OST0000)), or null when the text has none.
      type: str
    snapshot_time:
      description: Time the file was read, in seconds since the epoch (float), or null.
      type: float
    start_time:
      description: Time the counters were last cleared, in seconds since the epoch (Lustre 2.15+), or null.
      type: float
    elapsed_time:
      description: Seconds between RV(_value.start_time) and RV(_value.snapshot_time) (Lustre 2.15+), or null.
      type: float
    histograms:
      description:
        - One entry per histogram, keyed by its title as printed with whitespace collapsed
          (C(pages per bulk r/w), C(discontiguous pages), C(discontiguous blocks), C(disk fragmented I/Os),
          C(disk I/Os in flight), C(I/O time (1/1000s)), C(disk I/O size), C(block maps msec)).
        - Each is a list of rows; a histogram with no samples is an empty list.
      type: dict
      contains:
        bucket:
          description: The bucket label before the colon as printed (C(1), C(16), C(4K), C(1M)); its unit is the histogram's
            (pages, I/O size in bytes, milliseconds, count).
          type: str
        read:
          description: Read side of the row.
          type: dict
          contains:
            count:
              description: Number of RPCs, I/Os or block maps (see RV(_value.units)) in this bucket.
              type: int
            pct:
              description: Percent of all reads in this bucket (integer, rounded down by the kernel).
              type: int
            cum_pct:
              description: Cumulative percent up to and including this bucket.
              type: int
        write:
          description: Write side of the row, same fields as RV(_value.histograms.read).
          type: dict
    units:
      description: What each histogram counts, keyed like RV(_value.histograms) (C(rpcs), C(ios), C(maps)).
      type: dict
    targets:
      description: Present only when the text holds more than one target - every target's object, in order,
        each with the fields above.
      type: list
      elements: dict
'''

from ansible_collections.lustre.iokit.plugins.module_utils.parsers.brw_stats import parse_brw_stats
from ansible_collections.lustre.iokit.plugins.plugin_utils.parser_filters import make_parser_filter


class FilterModule(object):
    def filters(self):
        return {'parse_brw_stats': make_parser_filter('parse_brw_stats', parse_brw_stats)}
