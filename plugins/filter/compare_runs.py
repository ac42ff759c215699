# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: compare_runs
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Compare two runs, or a run and a baseline, subject by subject
description:
  - For every survey, metric and subject (host or host/target), compares the peak of the sweep in the current run
    with the reference and returns the change in percent, flagged against O(tolerance_pct).
  - Each side is a list of samples or envelopes, or a baseline mapping (the content of C(baseline.yml), schema
    C(lustre.iokit/baseline/v1)).
options:
  _input:
    description: The current run (samples or envelopes) or a baseline mapping.
    type: raw
    required: true
  reference:
    description: The reference run (samples or envelopes) or a baseline mapping.
    type: raw
    required: true
  tolerance_pct:
    description: Change in percent beyond which a subject is a C(regression) or an C(improvement).
    type: float
    default: 5.0
'''

EXAMPLES = r'''
- name: Regressions of more than 10% against the accepted baseline
  ansible.builtin.debug:
    msg: "{{ samples | lustre.iokit.compare_runs(lookup('ansible.builtin.file', 'baseline.yml') | from_yaml, tolerance_pct=10)
             | selectattr('status', 'equalto', 'regression') | list }}"
'''

RETURN = r'''
_value:
  description: One entry per survey, metric and subject present on either side.
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
    current:
      description: Peak in the current run, or null when not measured.
      type: float
    reference:
      description: Peak in the reference, or null when absent there.
      type: float
    delta_pct:
      description: (current - reference) / reference in percent, or null.
      type: float
    tolerance_pct:
      description: The O(tolerance_pct) used.
      type: float
    status:
      description: C(regression), C(improvement), C(within), C(missing) (not measured now) or C(new) (not in the reference).
      type: str
    current_run_id:
      description: Run id(s) of the current side.
      type: str
    reference_run_id:
      description: Run id(s) of the reference side.
      type: str
'''

from ansible_collections.lustre.iokit.plugins.plugin_utils.report.compare import compare_runs as _compare_runs
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.filters import make_report_filter, samples_argument


def _side(name, data):
    if isinstance(data, dict) and 'values' in data:
        return data
    return samples_argument(name, data)


def compare_runs(current, reference, tolerance_pct=5.0):
    return _compare_runs(_side('compare_runs', current), _side('compare_runs', reference), float(tolerance_pct))


class FilterModule(object):
    def filters(self):
        return {'compare_runs': make_report_filter('compare_runs', compare_runs)}
