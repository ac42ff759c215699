# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: report_layer_efficiency
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Compare the obdfilter best point with the sgpdd best point on each OSS
description:
  - For every host measured by both surveys and each of C(write) and C(read), divides the best obdfilter bandwidth
    over the sweep by the best sgpdd bandwidth. The Lustre manual expects the OST object layer to deliver 85 to 90%
    of the raw devices' bandwidth.
  - Targets (OSTs or LUNs) of one host measured at the same sweep point ran together, so their values are added
    to give the host's bandwidth at that point; the best point is then taken. Repeats are averaged first.
options:
  _input:
    description:
      - The samples (lines of C(report.json), or the output of P(lustre.iokit.report_samples#filter)), or result
        envelopes, or a mix of both.
    type: list
    elements: dict
    required: true
  expected:
    description: The expected range of the ratio; below the first value the status is C(low).
    type: list
    elements: float
    default: [0.85, 0.90]
'''

EXAMPLES = r'''
- name: OSS whose object layer loses more than 15% of the raw bandwidth
  ansible.builtin.debug:
    msg: "{{ samples | lustre.iokit.report_layer_efficiency | selectattr('status', 'equalto', 'low') | map(attribute='host') | unique }}"
'''

RETURN = r'''
_value:
  description: One entry per host and test.
  type: list
  elements: dict
  contains:
    host:
      description: The OSS.
      type: str
    test:
      description: C(write) or C(read).
      type: str
    upper_mib_s:
      description: Best obdfilter bandwidth of the host, in MiB/s.
      type: float
    lower_mib_s:
      description: Best sgpdd bandwidth of the host, in MiB/s.
      type: float
    ratio:
      description: RV(_value[].upper_mib_s) / RV(_value[].lower_mib_s), or null when the sgpdd value is 0.
      type: float
    upper_point_label:
      description: Where the obdfilter best was reached.
      type: str
    lower_point_label:
      description: Where the sgpdd best was reached.
      type: str
    expected_min:
      description: Lower end of the expected range.
      type: float
    expected_max:
      description: Upper end of the expected range.
      type: float
    status:
      description: C(ok), C(low) or C(unknown).
      type: str
    upper_survey:
      description: C(obdfilter).
      type: str
    lower_survey:
      description: C(sgpdd).
      type: str
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.lustre.iokit.plugins.plugin_utils.report.analysis import layer_efficiency
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.filters import make_report_filter, samples_argument


def report_layer_efficiency(samples, expected=(0.85, 0.90)):
    if not isinstance(expected, (list, tuple)) or len(expected) != 2:
        raise AnsibleFilterError('report_layer_efficiency: expected must be two numbers, got %r' % (expected,))
    return layer_efficiency(samples_argument('report_layer_efficiency', samples), (float(expected[0]), float(expected[1])))


class FilterModule(object):
    def filters(self):
        return {'report_layer_efficiency': make_report_filter('report_layer_efficiency', report_layer_efficiency)}
