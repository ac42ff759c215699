# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: fleet_progress
author: lustre.iokit contributors
version_added: 1.0.0
short_description: One line of a survey's progress across the fleet, and a row per host
description:
  - "Turns each host's poll of a running survey (the result of M(lustre.iokit.async_result) with its
    C(progress_file) option, or its C(progress)) into the line the P(lustre.iokit.survey_progress#callback)
    callback prints, for example C(obdfilter: 16 hosts, 212/400 points (53 %\\), slowest oss7 31 %, ETA 14:32 (41 min\\))."
  - For output where the stdout callback is fixed (AWX), a summary shows the fleet line with it.
options:
  _input:
    description: Host name to that host's poll result (or progress, or null while it has none).
    type: dict
    required: true
  survey:
    description: The survey's name at the start of the line; by default the one the progress names.
    type: str
  rows:
    description: Also return a row per host, slowest first, after the line.
    type: bool
    default: false
'''

EXAMPLES = r'''
- name: Show how far the fleet is
  ansible.builtin.debug:
    msg: "{{ dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, 'survey_common_wait')))
             | lustre.iokit.fleet_progress(rows=true) }}"
'''

RETURN = r'''
_value:
  description: The fleet line, then (with O(rows=true)) one row per host.
  type: list
  elements: str
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.lustre.iokit.plugins.plugin_utils.fleet_progress import (
    fleet_line,
    host_rows,
    progress_of,
    survey_of,
)


def fleet_progress(polls, survey=None, rows=False):
    if not isinstance(polls, dict):
        raise AnsibleFilterError('fleet_progress: expects a dict of host name to poll result, got %s'
                                 % type(polls).__name__)
    progresses = dict((str(host), progress_of(value)) for host, value in polls.items())
    lines = [fleet_line(survey or survey_of(progresses), progresses)]
    if rows:
        lines.extend(host_rows(progresses))
    return lines


class FilterModule(object):
    def filters(self):
        return {'fleet_progress': fleet_progress}
