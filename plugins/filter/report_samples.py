# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: report_samples
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Flatten result envelopes into samples (one measured value each)
description:
  - Turns result envelopes (C(lustre.iokit/result/v1)) into flat samples, the form C(report.json) stores one per
    line and every other report filter accepts.
  - The metric is C(<survey>_<test>_mib_s) for bandwidth (MiB/s) and C(<survey>_<test>_ops_s) for metadata rates
    (ops/s), for example C(obdfilter_write_mib_s), C(sgpdd_read_mib_s), C(mds_create_ops_s), C(ost_write_mib_s).
  - Tests that gave no value (C(ERROR), C(failed), ENOMEM, skipped points, inactive OSTs) give no sample.
  - Repeats of one sweep point are numbered in RV(_value[].iteration).
options:
  _input:
    description: One envelope or a list of envelopes (surveys C(sgpdd), C(obdfilter), C(mds), C(ost), C(lnet), C(mdtest)).
    type: raw
    required: true
'''

EXAMPLES = r'''
- name: Samples of one stored envelope
  ansible.builtin.set_fact:
    obdfilter_samples: "{{ lookup('ansible.builtin.file', 'iokit-results/RUN/oss1/obdfilter.json') | from_json
                           | lustre.iokit.report_samples }}"

- name: Best write bandwidth of the host, in MiB/s
  ansible.builtin.debug:
    msg: "{{ obdfilter_samples | selectattr('metric', 'equalto', 'obdfilter_write_mib_s') | map(attribute='value') | max }}"
'''

RETURN = r'''
_value:
  description: One sample per measured value.
  type: list
  elements: dict
  contains:
    run_id:
      description: The run.
      type: str
    survey:
      description: The survey.
      type: str
    test:
      description: The test as the survey names it (C(write), C(read), C(create), ...).
      type: str
    metric:
      description: C(<survey>_<test>_mib_s) or C(<survey>_<test>_ops_s).
      type: str
    value:
      description: The measured value, in RV(_value[].unit).
      type: float
    unit:
      description: C(MiB/s) or C(ops/s).
      type: str
    host:
      description: The host the envelope belongs to.
      type: str
    target:
      description: The OST, MDT or LUN the value is about, or null for the host's aggregate.
      type: str
    point:
      description: The sweep point (C(thr), C(obj), C(crg), C(rsz_kib), C(dir), ...).
      type: dict
    point_label:
      description: The point's swept parameters as the I/O kit prints them, such as C(rsz 1024K obj 1 thr 4).
      type: str
    iteration:
      description: Which repeat of the point this is, from 1.
      type: int
    status:
      description: The test status (C(ok), or C(short) for obdfilter's SHORT).
      type: str
'''

from ansible_collections.lustre.iokit.plugins.module_utils.sample_extraction import point_label
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.filters import make_report_filter, samples_argument


def report_samples(envelopes):
    # The label is for readers (the generic survey summary's tables); the other report filters take these dicts
    # back and read only the point itself.
    return [dict(sample.to_dict(), point_label=point_label(sample.point))
            for sample in samples_argument('report_samples', envelopes)]


class FilterModule(object):
    def filters(self):
        return {'report_samples': make_report_filter('report_samples', report_samples)}
