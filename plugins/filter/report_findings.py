# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: report_findings
author: lustre.iokit contributors
version_added: 1.0.0
short_description: The weak components of a run, judged among their peers
description:
  - Judges every component (OST, LUN, MDT, LNet NID, client, or host aggregate) against its peers, the components
    of the same kind measured by the same survey and metric at the same sweep point across the whole fleet.
  - A value is low when it is at least O(min_deviation_pct) percent below the peers' median and either below
    O(slow_share) of the median or its robust z-score C((value - median\) / (1.4826 x MAD\)) is below
    -O(threshold). Points with fewer than O(min_peers) components are not judged.
  - Returns one finding per component and metric that was low at one sweep point or more, weakest first. The
    report, the verdict and the survey summaries all use this rule.
options:
  _input:
    description: The samples, or result envelopes, or a mix of both.
    type: list
    elements: dict
    required: true
  slow_share:
    description: A value below this share of the peers' median (between 0 and 1) is low.
    type: float
    default: 0.8
  threshold:
    description: Robust z-score below whose negative a value is low as well.
    type: float
    default: 3.5
  min_peers:
    description: Fewest components at a sweep point for it to be judged.
    type: int
    default: 3
  min_deviation_pct:
    description: A value within this percentage of the median is never low.
    type: float
    default: 5.0
'''

EXAMPLES = r'''
- name: Name the slow OSTs of a run
  ansible.builtin.debug:
    msg: "{{ envelopes | lustre.iokit.report_findings | selectattr('kind', 'equalto', 'OST')
             | map(attribute='subject') | unique }}"
'''

RETURN = r'''
_value:
  description: One entry per weak component and metric, weakest (lowest share of the median) first.
  type: list
  elements: dict
  contains:
    survey:
      description: The survey.
      type: str
    metric:
      description: The metric, such as C(obdfilter_write_mib_s).
      type: str
    unit:
      description: C(MiB/s) or C(ops/s).
      type: str
    kind:
      description: C(OST), C(LUN), C(MDT), C(NID), C(client), or C(host) for a host's aggregate.
      type: str
    host:
      description: The host.
      type: str
    target:
      description: The component, or null for a host's aggregate.
      type: str
    subject:
      description: C(host) or C(host/target).
      type: str
    value:
      description: The component's value at its weakest point.
      type: float
    median:
      description: The peers' median at that point.
      type: float
    share:
      description: The value over the median.
      type: float
    share_pct:
      description: The share in percent.
      type: float
    peers:
      description: How many components were compared at that point.
      type: int
    point:
      description: The weakest sweep point.
      type: dict
    point_label:
      description: Its swept parameters, such as C(rsz 1024K obj 1 thr 4).
      type: str
    low_points:
      description: At how many sweep points the component was low.
      type: int
    points:
      description: At how many sweep points it was judged.
      type: int
    next:
      description: What to look at next for this kind of component.
      type: str
'''

from ansible_collections.lustre.iokit.plugins.plugin_utils.report.analysis import weak_components
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.filters import make_report_filter, samples_argument


def report_findings(samples, slow_share=0.8, threshold=3.5, min_peers=3, min_deviation_pct=5.0):
    return weak_components(samples_argument('report_findings', samples), threshold=float(threshold),
                           min_peers=int(min_peers), min_deviation_pct=float(min_deviation_pct),
                           slow_share=float(slow_share))


class FilterModule(object):
    def filters(self):
        return {'report_findings': make_report_filter('report_findings', report_findings)}
