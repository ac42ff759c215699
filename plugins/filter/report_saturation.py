# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: report_saturation
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Find the fewest threads that reach a share of the peak bandwidth or rate
description:
  - For every subject, metric and curve (the sweep with every parameter but the threads fixed, such as one
    C(crg) of sgpdd, one object count of obdfilter or one directory count of mds), returns the peak and the
    fewest threads whose value reaches O(share) of it.
  - Repeats of a point are averaged first. Samples without a thread count (ost-survey) give no entry.
options:
  _input:
    description:
      - The samples (lines of C(report.json), or the output of P(lustre.iokit.report_samples#filter)), or result
        envelopes, or a mix of both.
    type: list
    elements: dict
    required: true
  share:
    description: Share of the peak, between 0 (excluded) and 1, that counts as saturated.
    type: float
    default: 0.9
'''

EXAMPLES = r'''
- name: Threads needed for 90% of each OST's obdfilter write peak
  ansible.builtin.debug:
    msg: "{{ samples | lustre.iokit.report_saturation(share=0.9) | selectattr('metric', 'equalto', 'obdfilter_write_mib_s')
             | items2dict(key_name='subject', value_name='saturation_thr') }}"
'''

RETURN = r'''
_value:
  description: One entry per subject, metric and curve.
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
    series:
      description: The fixed parameters of the curve.
      type: dict
    series_label:
      description: The curve as text, such as C(rsz 1024K obj 4).
      type: str
    peak:
      description: The curve's highest value.
      type: float
    peak_thr:
      description: Threads at the peak.
      type: int
    saturation_thr:
      description: Fewest threads reaching O(share) of the peak.
      type: int
    saturation_value:
      description: The value at RV(_value[].saturation_thr).
      type: float
    share:
      description: The O(share) used.
      type: float
    saturated:
      description: True when the curve reached the share before its largest thread count.
      type: bool
'''

from ansible_collections.lustre.iokit.plugins.plugin_utils.report.analysis import saturation
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.filters import make_report_filter, samples_argument


def report_saturation(samples, share=0.9):
    return saturation(samples_argument('report_saturation', samples), float(share))


class FilterModule(object):
    def filters(self):
        return {'report_saturation': make_report_filter('report_saturation', report_saturation)}
