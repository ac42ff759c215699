# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: report_outliers
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Find subjects that stand out from their peers at the same sweep point
description:
  - Groups the samples by survey, metric and sweep point. Within each group (the peers, every host, OST or
    LUN measured at that point) it computes the median and the median absolute deviation (MAD).
  - Peers are components of one kind (OSTs with OSTs, LUNs with LUNs, host aggregates with host aggregates).
  - A value is an outlier when it is at least O(min_deviation_pct) percent away from the median and either below
    O(slow_share) of it (above its inverse) or its robust z-score C((value - median\) / (1.4826 x MAD\)) exceeds
    O(threshold) in absolute value. This is the rule of P(lustre.iokit.report_findings#filter).
  - Repeats of a point are averaged first. Groups with fewer than O(min_peers) subjects are not judged.
options:
  _input:
    description:
      - The samples (lines of C(report.json), or the output of P(lustre.iokit.report_samples#filter)), or result
        envelopes, or a mix of both.
    type: list
    elements: dict
    required: true
  threshold:
    description: Robust z-score beyond which a value is an outlier (3.5 is the usual choice).
    type: float
    default: 3.5
  min_peers:
    description: Fewest subjects at a sweep point for it to be judged.
    type: int
    default: 3
  min_deviation_pct:
    description: Smallest distance from the median, in percent, that can make an outlier.
    type: float
    default: 5.0
  slow_share:
    description: A value below this share of the median (or above its inverse) is an outlier.
    type: float
    default: 0.8
'''

EXAMPLES = r'''
- name: OSTs slower than their peers
  ansible.builtin.debug:
    msg: "{{ samples | lustre.iokit.report_outliers(threshold=3.0) | selectattr('direction', 'equalto', 'low')
             | map(attribute='subject') | unique }}"
'''

RETURN = r'''
_value:
  description: One entry per outlier value, sorted by survey, metric, subject and point.
  type: list
  elements: dict
  contains:
    survey:
      description: The survey.
      type: str
    metric:
      description: The metric.
      type: str
    unit:
      description: C(MiB/s) or C(ops/s).
      type: str
    host:
      description: The host.
      type: str
    target:
      description: The target, or null.
      type: str
    subject:
      description: C(host) or C(host/target).
      type: str
    point:
      description: The sweep point.
      type: dict
    point_label:
      description: The swept parameters of the point, such as C(rsz 1024K obj 8 thr 16).
      type: str
    value:
      description: The subject's value (mean of repeats).
      type: float
    median:
      description: The peers' median.
      type: float
    mad:
      description: The peers' median absolute deviation.
      type: float
    peers:
      description: Number of subjects at the point.
      type: int
    kind:
      description: The kind of component (C(OST), C(LUN), C(MDT), C(NID), C(client), or C(host)).
      type: str
    share:
      description: The value over the median.
      type: float
    robust_z:
      description: The robust z-score, or null when the MAD is 0.
      type: float
    deviation_pct:
      description: Distance from the median in percent (negative below it).
      type: float
    direction:
      description: C(low) or C(high).
      type: str
'''

from ansible_collections.lustre.iokit.plugins.plugin_utils.report.analysis import outliers
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.filters import make_report_filter, samples_argument


def report_outliers(samples, threshold=3.5, min_peers=3, min_deviation_pct=5.0, slow_share=0.8):
    return outliers(samples_argument('report_outliers', samples), float(threshold), int(min_peers), float(min_deviation_pct),
                    float(slow_share))


class FilterModule(object):
    def filters(self):
        return {'report_outliers': make_report_filter('report_outliers', report_outliers)}
