# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: fleet_plan
author: lustre.iokit contributors
version_added: 1.0.0
short_description: The plan of one survey across the fleet, or of a whole run summed over its surveys
description:
  - Turns the hosts' plans into lines of text. The input is the hosts' variables (C(hostvars) of each host), in
    which the survey roles registered M(lustre.iokit.survey_plan)'s answer as C(<survey>_plan_estimate), or a list
    of plan entries (its RV(lustre.iokit.survey_plan#module:entry)).
  - With O(survey), the fleet line of that survey - hosts, points, bytes written, and the duration of the longest
    host (hosts run side by side) - then a line per host with the basis of its estimate.
  - Without it, the run's plan - every survey's fleet duration added up (surveys run one after another) - then
    a line per host with its surveys added up.
  - A duration that is not known for some host makes the total read C(at least).
options:
  _input:
    description:
      - Each host's variables, or plan entries (C(survey), C(host), C(estimate)); the last entry of a host and
        survey counts.
    type: list
    elements: dict
    required: true
  survey:
    description: Only this survey's entries, as a fleet; omitted, every survey, summed as one run.
    type: str
'''

EXAMPLES = r'''
- name: Show the plan of the whole run
  ansible.builtin.debug:
    msg: "{{ groups['all'] | map('extract', hostvars) | lustre.iokit.fleet_plan }}"
'''

RETURN = r'''
_value:
  description:
    - "The fleet line (C(obdfilter plan: 2 hosts, 24 points, 6.0 GiB written, about 6 min ...)) or the run's line
      (C(run plan: 3 surveys on 2 hosts, ...)), then one line per host."
  type: list
  elements: str
'''

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.lustre.iokit.plugins.module_utils.results import SURVEYS
from ansible_collections.lustre.iokit.plugins.plugin_utils.fleet_plan import run_lines, survey_lines

# What the survey roles register survey_plan's answer as, in the order a run's surveys are listed.
REGISTERED = '%s_plan_estimate'


def _is_entry(value):
    return (isinstance(value, Mapping) and isinstance(value.get('estimate'), Mapping) and bool(value.get('host'))
            and bool(value.get('survey')))


def plan_entries(items):
    """The plan entries of ``items``: entries as they are, and those registered in each host's variables."""
    entries = []
    for item in items:
        if _is_entry(item):
            entries.append(dict(item))
        elif isinstance(item, Mapping):
            for survey in SURVEYS:
                registered = item.get(REGISTERED % survey)
                if isinstance(registered, Mapping) and _is_entry(registered.get('entry')):
                    entries.append(dict(registered['entry']))
        else:
            raise AnsibleFilterError('fleet_plan: expects hosts\' variables or plan entries (survey, host, estimate), '
                                     'got %r' % (item,))
    return entries


def fleet_plan(items, survey=None):
    if not isinstance(items, (list, tuple)):
        raise AnsibleFilterError('fleet_plan: expects a list of hosts\' variables or plan entries, got %s'
                                 % type(items).__name__)
    entries = plan_entries(items)
    if survey is not None:
        latest = dict((entry['host'], entry['estimate']) for entry in entries if entry['survey'] == survey)
        return survey_lines(survey, latest)
    return run_lines(entries)


class FilterModule(object):
    def filters(self):
        return {'fleet_plan': fleet_plan}
