# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: acceptance_verdict
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Check acceptance criteria against a run and return the verdict with reasons
description:
  - Checks every criterion of O(criteria) per subject (host, or host/target) and returns one test case per check;
    the verdict is C(failed) when any case failed, C(passed) when at least one passed, else C(no verdict) (nothing was
    checked).
  - "Kinds of criteria: C(floors) (a metric's peak at or above a minimum), C(ratios) (one survey's best over
    another's on each host, such as obdfilter / sgpdd), C(outliers) (at most so many outlier points per subject),
    C(regressions) (at most so many percent below the O(baseline)) and C(variation) (coefficient of variation of
    repeated points). See C(docs/acceptance-criteria.md) for every key and examples."
  - A criterion that matches no measured subject fails (set C(required=false) in it to make it skipped), so that a
    survey that did not run cannot pass silently.
  - Every failure message names the metric, the subject, the value, the limit and the run ids.
options:
  _input:
    description: The run's samples or envelopes.
    type: list
    elements: dict
    required: true
  criteria:
    description: The acceptance criteria mapping (C(acceptance_criteria)).
    type: dict
    required: true
  baseline:
    description: A baseline mapping (C(baseline.yml)), needed by C(regressions) criteria.
    type: dict
  missing:
    description: Expected results that are absent, each C({host, survey, reason}); each gives a failed case.
    type: list
    elements: dict
    default: []
  run_id:
    description: The run id shown in messages; defaults to the samples' run ids.
    type: str
'''

EXAMPLES = r'''
- name: Judge the run
  ansible.builtin.set_fact:
    verdict: "{{ samples | lustre.iokit.acceptance_verdict(acceptance_criteria, baseline=lookup('ansible.builtin.file', 'baseline.yml') | from_yaml) }}"
  vars:
    acceptance_criteria:
      floors:
        - metric: obdfilter_write_mib_s
          subjects: "oss*"
          min: 1500
      regressions:
        - metric: "*_mib_s"
          max_pct: 10

- name: Fail with the reasons
  ansible.builtin.fail:
    msg: "{{ verdict.failures }}"
  when: verdict.verdict == 'failed'
'''

RETURN = r'''
_value:
  description: The verdict.
  type: dict
  contains:
    verdict:
      description: C(passed), C(failed), or C(no verdict) when no check could be made.
      type: str
    run_id:
      description: The run judged.
      type: str
    baseline_run_id:
      description: The baseline's run id, or null.
      type: str
    counts:
      description: C(tests), C(passed), C(failed), C(skipped).
      type: dict
    failures:
      description: The message of every failed case.
      type: list
      elements: str
    cases:
      description: Every check, with C(kind), C(criterion), C(subject), C(metric), C(value), C(limit), C(unit),
        C(status) (C(passed), C(failed), C(skipped)) and C(message).
      type: list
      elements: dict
'''

from ansible_collections.lustre.iokit.plugins.plugin_utils.report.criteria import evaluate
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.filters import make_report_filter, samples_argument


def acceptance_verdict(samples, criteria, baseline=None, missing=None, run_id=None):
    return evaluate(samples_argument('acceptance_verdict', samples), criteria, baseline=baseline, missing=missing or (),
                    run_id=run_id)


class FilterModule(object):
    def filters(self):
        return {'acceptance_verdict': make_report_filter('acceptance_verdict', acceptance_verdict)}
