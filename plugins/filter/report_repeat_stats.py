# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: report_repeat_stats
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Mean, standard deviation and coefficient of variation of repeated sweep points
description:
  - For every subject, metric and sweep point measured more than once (C(iokit_iterations) > 1), returns the
    number of repeats, their mean, sample standard deviation, minimum, maximum and coefficient of variation in percent.
options:
  _input:
    description:
      - The samples (lines of C(report.json), or the output of P(lustre.iokit.report_samples#filter)), or result
        envelopes, or a mix of both.
    type: list
    elements: dict
    required: true
'''

EXAMPLES = r'''
- name: Points whose repeats vary by more than 5%
  ansible.builtin.debug:
    msg: "{{ samples | lustre.iokit.report_repeat_stats | selectattr('cv_pct', 'gt', 5) | list }}"
'''

RETURN = r'''
_value:
  description: One entry per subject, metric and repeated point.
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
      description: The swept parameters of the point.
      type: str
    n:
      description: Number of repeats.
      type: int
    mean:
      description: Mean of the repeats.
      type: float
    stddev:
      description: Sample standard deviation (n - 1).
      type: float
    min:
      description: Lowest repeat.
      type: float
    max:
      description: Highest repeat.
      type: float
    cv_pct:
      description: RV(_value[].stddev) / RV(_value[].mean) in percent, or null when the mean is 0.
      type: float
'''

from ansible_collections.lustre.iokit.plugins.plugin_utils.report.analysis import repeat_stats
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.filters import make_report_filter, samples_argument


def report_repeat_stats(samples):
    return repeat_stats(samples_argument('report_repeat_stats', samples))


class FilterModule(object):
    def filters(self):
        return {'report_repeat_stats': make_report_filter('report_repeat_stats', report_repeat_stats)}
