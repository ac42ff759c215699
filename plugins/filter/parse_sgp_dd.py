# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: parse_sgp_dd
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Parse the stderr of sgp_dd or sg_dd (sg3_utils) into JSON
description:
  - Reads what C(sgp_dd) or C(sg_dd) print on stderr when run with C(time=1) and returns the transfer
    time, the throughput, the record counts and the error lines.
  - Understands the timing line of sg3_utils 1.47 and older (C(time to transfer data was 18.786448 secs, 57.16 MB/sec))
    and of 1.48 and later (C(time to copy data), a colon, then C(18.786448 secs at 57.16 MB/sec), or
    C(at 812.4 kB/sec) below 1 MB/sec). When only progress reports (C(time to copy data so far)) are present, the last one is used.
  - sg3_utils' MB is 10^6 bytes, so the rate is RV(_value.mb_s), not MiB/s.
  - The last C(<full>+<partial> records in) and C(records out) lines give the record counts.
  - Text that is not the output of sg3_utils' dd variants gives the object with null fields and no errors.
options:
  _input:
    description: The stderr text of one C(sgp_dd) or C(sg_dd) run.
    type: string
    required: true
'''

EXAMPLES = r'''
- name: Time a raw read of the first GiB of a LUN
  ansible.builtin.command: sgp_dd if=/dev/sg3 of=/dev/null bs=512 bpt=2048 thr=4 count=2m time=1
  register: sgp_dd_run
  changed_when: false

- name: Throughput in decimal MB/s
  ansible.builtin.debug:
    msg: "{{ (sgp_dd_run.stderr | lustre.iokit.parse_sgp_dd).mb_s }}"

- name: Parse a saved stderr file and check it for errors
  ansible.builtin.assert:
    that: (lookup('file', 'results/oss1/sgp_dd_0_0.err') | lustre.iokit.parse_sgp_dd).errors | length == 0
'''

RETURN = r'''
_value:
  description: The parsed run.
  type: dict
  contains:
    time_s:
      description: Transfer time in seconds from the timing line, or null when there is none.
      type: float
    mb_s:
      description: Throughput in decimal MB/s (10^6 bytes per second; C(kB/sec) values divided by 1000), or null.
      type: float
    records_in:
      description: Records read, or null when the text has no C(records in) line.
      type: dict
      contains:
        full:
          description: Full blocks (the number before C(+)).
          type: int
        partial:
          description: Partial blocks (the number after C(+)).
          type: int
    records_out:
      description: Records written (C(0+0) when the output is /dev/null), or null; same keys as RV(_value.records_in).
      type: dict
    errors:
      description: Every line that mentions an error, as printed (empty list when none).
      type: list
      elements: str
    dio_incomplete:
      description: Count from C(>> Direct IO requested but incomplete N times), or null.
      type: int
    remaining_blocks:
      description: Blocks not copied, from C(remaining blocks=N) or C(remaining block count=N), or null.
      type: int
'''

from ansible_collections.lustre.iokit.plugins.module_utils.parsers.sgp_dd import parse_sgp_dd
from ansible_collections.lustre.iokit.plugins.plugin_utils.parser_filters import make_parser_filter


class FilterModule(object):
    def filters(self):
        return {'parse_sgp_dd': make_parser_filter('parse_sgp_dd', parse_sgp_dd)}
