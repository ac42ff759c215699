# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# Documentation only: the work is done on the controller by plugins/action/iokit_report.py.

from __future__ import annotations

DOCUMENTATION = r'''
module: iokit_report
author:
  - lustre.iokit contributors (@lustre)
version_added: 1.0.0
short_description: Write the report, verdict and baseline of a run from its stored results
description:
  - Reads every result envelope of a run from the controller's results store
    (C(<results_dir>/<run_id>/<host>/<survey>.json)) and writes, in C(<results_dir>/<run_id>/),
    C(report.json) (one sample per line), C(results.csv), C(analysis.json), C(summary.md) and a self-contained
    C(report.html) with inline SVG charts and sortable tables.
  - With O(criteria), checks every acceptance criterion per subject and writes C(verdict.json) and C(junit.xml);
    with O(baseline) or O(compare_run_id), compares each subject's peak with the reference;
    with O(make_baseline=true), writes C(baseline.yml).
  - With O(history_compare=true), judges every component, metric and sweep point against the same component's
    last comparable runs in the history database (regressions against history, see the collection's
    C(docs/acceptance-criteria.md)); a regression fails the verdict.
  - A corrupt or misplaced result file is named in the report and in RV(unreadable), never skipped silently;
    a C(partial) or C(failed) survey, an expected host without a result and a survey the report cannot chart
    are all shown.
  - Every bandwidth is in MiB/s, every metadata rate in ops/s.
  - Runs on the controller only. The role C(lustre.iokit.report) wraps it; use that in playbooks.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
  - lustre.iokit.attributes.controller_action
attributes:
  check_mode:
    support: none
    details: Writes the report files in check mode too; they are derived from the stored results only.
options:
  results_dir:
    description: The results store on the controller (usually C(iokit_results_dir)).
    type: path
    required: true
  run_id:
    description: The run to report on.
    type: str
    required: true
  templates_dir:
    description:
      - Directory holding C(report.html.j2) and C(summary.md.j2).
      - Defaults to the templates of the role C(lustre.iokit.report).
    type: path
  criteria:
    description:
      - Acceptance criteria (C(floors), C(ratios), C(outliers), C(regressions), C(variation)), as described in
        the collection's C(docs/acceptance-criteria.md). Null means no verdict, unless O(default_criteria).
    type: dict
  default_criteria:
    description:
      - Also check the built-in criteria (completeness, no low outlier among peers for every metric, layer
        efficiency obdfilter / sgpdd >= 0.85 per host where both ran), with or without O(criteria).
      - A verdict that could make no check is C(no verdict), never C(passed).
    type: bool
    default: false
  baseline:
    description:
      - A baseline file (C(baseline.yml) of an accepted run, or another run's C(report.json)) to compare with.
    type: path
  compare_run_id:
    description: Another run of the same store to compare with (used when O(baseline) is not given).
    type: str
  expected:
    description:
      - Hosts expected per survey, a mapping from a survey name to a list of host names. An expected host
        without a usable result is reported as missing and fails the verdict.
    type: dict
    default: {}
  make_baseline:
    description: Also write C(baseline.yml) from this run's peaks.
    type: bool
    default: false
  baseline_path:
    description: Where to write the baseline; defaults to C(<results_dir>/<run_id>/baseline.yml).
    type: path
  options:
    description:
      - Analysis and layout settings; unset keys keep their defaults.
      - C(outlier_threshold) (3.5), C(outlier_min_peers) (3), C(outlier_min_deviation_pct) (5.0),
        C(outlier_slow_share) (0.8),
        C(saturation_share) (0.9), C(efficiency_expected) ([0.85, 0.90]), C(tolerance_pct) (5.0),
        C(host_charts_max_hosts) (8), C(bar_chart_max_bars) (48), C(table_max_rows) (500).
    type: dict
    default: {}
  nid_owners:
    description:
      - The host that owns each LNet NID, a mapping such as C(192.0.2.12@tcp) to C(oss2). It attributes a slow NID to
        its node in the weak components diagnosed across the layers (key C(components) of C(analysis.json) and
        C(verdict.json)).
      - The module reads every inventory host's C(lnet_host_nid) itself (the role C(lustre.iokit.lnet) sets it from
        the node's C(lctl list_nids)); a NID given here wins over what it read.
      - A NID whose owner is known from neither is reported as not known, never as the console that ran the LNet test.
    type: dict
  ost_luns:
    description:
      - The LUNs each OST (or MDT) is mounted from, a mapping of each target name to a list of C([host, device])
        pairs, such as C(testfs-OST0003) to C([[oss2, /dev/sdc]]), from the target's mount device on its server. It lets the
        diagnosis tell a slow device (sgpdd) from a slow OST (obdfilter).
      - Added to what the module reads from the hosts of O(target_device_hosts); a target given here wins.
      - Without either an OST's LUNs are reported as not known (or not surveyed, where sgpdd measured none on its
        server), and no LUN is blamed for it. See the collection's C(docs/diagnosis.md).
    type: dict
  target_device_hosts:
    description:
      - The servers whose C(report_target_devices) fact (registered by the role C(lustre.iokit.report)'s
        C(target_devices) entry point from their mounted targets) gives each target's mount device, read into
        O(ost_luns).
      - A host without that fact adds nothing.
    type: list
    elements: str
    default: []
  history_compare:
    description:
      - Judge every component (OST, LUN, MDT, NID, client, host), metric and sweep point of the run against its own
        earlier runs in the history database O(history_dsn).
      - The baseline of a value is the median of the last O(history_runs) comparable runs (same survey, survey
        variables and sweep point; runs with other survey variables are named, never mixed in). A value beyond
        O(history_mad_k) x 1.4826 x MAD of those runs and at least O(history_min_change_pct) percent worse (lower
        for a rate) is a regression.
      - Each component, survey and metric judged is a C(history) case of the verdict, failed when it regressed;
        with this option the report always gives a verdict, even without O(criteria).
      - The regressions open C(report.html) and C(summary.md), with a trend chart per regressed component and per
        fleet peak, and the per-subject tables gain a C(vs history) column.
    type: bool
    default: false
  history_dsn:
    description:
      - The history database, C(sqlite:///<path>) or C(postgresql://...) (the role passes C(iokit_history_dsn)).
      - Empty means the history database's default, V(sqlite:///<results_dir>/history.sqlite), where the survey
        playbooks record (M(lustre.iokit.history_record)).
    type: str
    default: ""
  history_runs:
    description: How many of the newest comparable earlier runs make a value's baseline (fewer are used when
      there are fewer; one is enough).
    type: int
    default: 5
  history_mad_k:
    description: Half the width of the band around the baseline, in robust standard deviations (1.4826 x MAD of the
      earlier runs' values).
    type: float
    default: 3.0
  history_min_change_pct:
    description: Smallest change against the baseline, in percent, that can be a regression, whatever the band.
    type: float
    default: 10.0
seealso:
  - module: lustre.iokit.stored_result
'''

EXAMPLES = r'''
- name: Report on a run, with a verdict against a baseline
  lustre.iokit.iokit_report:
    results_dir: "{{ iokit_results_dir }}"
    run_id: "{{ iokit_run_id }}"
    criteria:
      floors:
        - metric: obdfilter_write_mib_s
          min: 1500
      regressions:
        - metric: "*_mib_s"
          max_pct: 10
    baseline: "{{ playbook_dir }}/baseline.yml"
    expected:
      obdfilter: "{{ groups['oss'] }}"
  register: report
  run_once: true
  delegate_to: localhost

- name: Say where the report is
  ansible.builtin.debug:
    msg: "{{ report.files.html }}: {{ report.verdict }}"
'''

RETURN = r'''
files:
  description: The files written, by kind (C(samples), C(csv), C(analysis), C(markdown), C(html), and C(verdict),
    C(junit), C(baseline) when produced).
  returned: success
  type: dict
  sample: {html: ./iokit-results/20261122T101500Z-3f2a/report.html}
run_dir:
  description: The run's directory.
  returned: success
  type: str
verdict:
  description:
    - C(passed) or C(failed) when O(criteria) or O(default_criteria) was given, C(no verdict) when no check could
      be made, else null.
  returned: success
  type: str
counts:
  description: Test cases of the verdict (C(tests), C(passed), C(failed), C(skipped)), or null without criteria.
  returned: success
  type: dict
findings:
  description:
    - One line per weak component, weakest first, as the findings table of C(report.html) lists them (key
      C(components) of C(analysis.json)); each names the component, the node that owns it, the diagnosis across the
      layers and what it points at, where it was low with its share of the peer median, and the host aggregates it
      explains (C(oss2 is low because testfs-OST0003 is)).
    - One line per component, not one per survey and metric any more; those are in RV(metric_findings).
  returned: success
  type: list
  elements: str
  sample:
    - >-
      testfs-OST0003 (oss2): slow at the OST object layer (obdfilter), its LUNs are fine -> backend file system or
      OST configuration; low in obdfilter write 40 %, ost write 40 %; oss2 is low because testfs-OST0003 is
      (obdfilter write 70 %)
metric_findings:
  description:
    - One sentence per component, survey and metric that was low among its peers at one sweep point or more (its
      weakest point, value against the peer median), weakest first; the key C(findings) of C(analysis.json).
  returned: success
  type: list
  elements: str
failures:
  description:
    - The failure message of every failed case (metric, subject, value, limit, run ids).
    - In C(junit.xml) each failure's message also gives the diagnosis of the weak component the case is about.
  returned: success
  type: list
  elements: str
samples:
  description: Number of samples in C(report.json).
  returned: success
  type: int
envelopes:
  description: Number of valid result files read.
  returned: success
  type: int
hosts:
  description: Hosts with at least one valid result file.
  returned: success
  type: list
  elements: str
surveys:
  description: Surveys present in the run.
  returned: success
  type: list
  elements: str
unreadable:
  description: Result files that could not be used, each with its C(path), C(host), C(survey) and C(problems).
  returned: success
  type: list
  elements: dict
missing:
  description: Expected results that are absent, failed or unusable, each with C(host), C(survey), C(kind), C(reason).
  returned: success
  type: list
  elements: dict
partial:
  description: Surveys whose status is not C(ok) (C(partial), C(failed), C(skipped)), with C(host) and C(status).
  returned: success
  type: list
  elements: dict
outliers:
  description: Number of outlier points found.
  returned: success
  type: int
regressions:
  description: Number of subjects that regressed beyond the tolerance or are missing against the reference.
  returned: success
  type: int
baseline_run_id:
  description: Run id of the reference compared with, or null.
  returned: success
  type: str
history:
  description:
    - With O(history_compare=true), the judgment against history, else null.
    - C(regressions) (component metrics that regressed), C(components) (components with a regression), C(judged)
      (component metrics judged), C(findings) (one sentence per regressed component, worst first, naming its worst
      metric, value, baseline, change and the runs the baseline came from), C(incomparable_runs) (each with
      C(run_id), C(survey), C(params_hash) and the C(reason) it was not compared), C(settings).
  returned: success
  type: dict
timings:
  description: Seconds spent loading, analysing and writing (C(load_s), C(analyse_s), C(write_s), C(total_s)).
  returned: success
  type: dict
'''
