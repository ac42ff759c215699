# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# Documentation only: the work is done on the controller by plugins/action/survey_plan.py.

from __future__ import annotations

DOCUMENTATION = r'''
module: survey_plan
author:
  - lustre.iokit contributors (@lustre)
version_added: 1.0.0
short_description: Estimate how long a survey's plan takes on a host, from its last stored run when there is one
description:
  - Takes the plan a survey module returned (in check mode, or with its run) and answers the points to run, the
    bytes written and read and the estimated duration on this host (RV(estimate)).
  - The rate comes from this host's newest earlier run of the same survey in the controller's results store whose
    status is C(ok) (the C(estimate_basis) of RV(estimate) then reads C(from run <id> of <date> (<rate> measured))); without
    one, from the module's assumed rate (C(assumed <rate> (<where>))).
  - The survey roles register its answer as C(<survey>_plan_estimate), where the P(lustre.iokit.fleet_plan#filter)
    filter finds it in the hosts' variables to make a fleet's or a whole run's plan.
  - Reads files on the controller only; never contacts the node.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
  - lustre.iokit.attributes.controller_action
attributes:
  check_mode:
    support: full
    details: Only reads; behaves the same in check mode.
options:
  survey:
    description: The survey whose plan it is.
    type: str
    required: true
    choices: [sgpdd, obdfilter, ost, mds, lnet, mdtest, ior]
  plan:
    description: The plan the survey module returned (its C(plan)).
    type: dict
    required: true
  results_dir:
    description: The results store on the controller (usually C(iokit_results_dir)); no earlier run is looked for without it.
    type: path
  run_id:
    description: The run being planned, which is never its own estimate's source.
    type: str
  host:
    description: The host whose earlier runs are looked up. Defaults to the inventory name of the host the task runs for.
    type: str
seealso:
  - module: lustre.iokit.stored_result
'''

EXAMPLES = r'''
- name: Estimate the plan from this host's last obdfilter run
  lustre.iokit.survey_plan:
    survey: obdfilter
    plan: "{{ obdfilter_job.plan }}"
    results_dir: "{{ iokit_results_dir }}"
    run_id: "{{ iokit_run_id }}"
  register: obdfilter_plan_estimate

- name: Show the fleet's plan
  ansible.builtin.debug:
    msg: "{{ ansible_play_hosts | map('extract', hostvars) | lustre.iokit.fleet_plan(survey='obdfilter') }}"
  run_once: true
'''

RETURN = r'''
estimate:
  description:
    - The plan's C(points) to run, C(bytes_written), C(bytes_read), its C(work) (C(amount) in C(unit)), the
      C(rate) in C(rate_unit), C(estimated_duration_s) (null when no rate is known), C(estimate_basis) (where the
      rate comes from), C(source) (V(assumed) or V(stored run)) and, for a stored run, C(measured_run) (its
      C(run_id) and C(finished)).
  returned: always
  type: dict
  sample:
    points: 12
    bytes_written: 3221225472
    bytes_read: 1610612736
    work: {amount: 1536.0, unit: MiB per OST}
    rate: 412.5
    rate_unit: MiB/s per OST
    estimated_duration_s: 3.7
    estimate_basis: from run 20261122T101500Z-3f2a of 2026-11-22 (412 MiB/s per OST measured)
    source: stored run
    measured_run: {run_id: 20261122T101500Z-3f2a, finished: '2026-11-22T11:02:13Z'}
msg:
  description: The host's plan in one line.
  returned: always
  type: str
  sample: "oss1: 12 points, 3.0 GiB written, about 1 min (assumed 500 MiB/s per OST (obdfilter_plan_ost_mib_s))"
entry:
  description: The plan entry of this host and survey (C(survey), C(host), C(estimate)), as P(lustre.iokit.fleet_plan#filter) takes it.
  returned: always
  type: dict
'''
