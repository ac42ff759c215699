# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# Documentation only: the work is done on the controller by plugins/action/stored_result.py.

from __future__ import annotations

DOCUMENTATION = r'''
module: stored_result
author:
  - lustre.iokit contributors (@lustre)
version_added: 0.1.0
short_description: Read survey results from the controller's results store
description:
  - Answers whether a host's survey is already stored as C(ok) in a run, so that a rerun with the same run id
    can skip it (RV(skip)).
  - With O(all_hosts=true), returns every stored envelope of one survey in a run, for reports, and names every
    file that is corrupt or stored in the wrong place instead of dropping it silently.
  - Reads files on the controller only; never contacts the node. Works for every survey of the collection.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
  - lustre.iokit.attributes.controller_action
attributes:
  check_mode:
    support: full
    details: Only reads; behaves the same in check mode.
options:
  results_dir:
    description: The results store on the controller (usually C(iokit_results_dir)).
    type: path
    required: true
  run_id:
    description: The run to look in.
    type: str
    required: true
  survey:
    description: The survey.
    type: str
    required: true
    choices: [sgpdd, obdfilter, ost, mds, lnet, mdtest, ior, stats_collect]
  host:
    description: The host to look up. Defaults to the inventory name of the host the task runs for.
    type: str
  all_hosts:
    description: Return the envelopes of every host of the run (RV(envelopes), RV(invalid)) instead of one host's state.
    type: bool
    default: false
  force:
    description: The user asked to rerun everything (C(iokit_force_rerun)); RV(skip) is then always false.
    type: bool
    default: false
seealso:
  - module: lustre.iokit.store_result
'''

EXAMPLES = r'''
- name: Is this host's sgpdd survey already ok in this run?
  lustre.iokit.stored_result:
    results_dir: "{{ iokit_results_dir }}"
    run_id: "{{ iokit_run_id }}"
    survey: sgpdd
    force: "{{ iokit_force_rerun }}"
  register: sgpdd_stored

- name: Every host's sgpdd envelope of the run, for a report
  lustre.iokit.stored_result:
    results_dir: "{{ iokit_results_dir }}"
    run_id: "{{ iokit_run_id }}"
    survey: sgpdd
    all_hosts: true
  register: sgpdd_run
  run_once: true
'''

RETURN = r'''
skip:
  description: True when a valid C(ok) envelope of this host and survey is stored in its own place and O(force) is false.
  returned: when O(all_hosts=false)
  type: bool
  sample: false
msg:
  description: Why the host is skipped, also printed in the play's output.
  returned: when RV(skip) is true
  type: str
  sample: sgpdd on oss1 is already ok in run 20261122T101500Z-3f2a (./iokit-results/20261122T101500Z-3f2a/oss1/sgpdd.json); iokit_force_rerun=true runs it again
exists:
  description: Whether the envelope file exists.
  returned: when O(all_hosts=false)
  type: bool
  sample: true
status:
  description: The stored envelope's status, or null when there is none or it is invalid.
  returned: when O(all_hosts=false)
  type: str
  sample: partial
path:
  description: The envelope file on the controller.
  returned: when O(all_hosts=false)
  type: str
  sample: ./iokit-results/20261122T101500Z-3f2a/oss1/sgpdd.json
problems:
  description: Why an existing envelope file is not valid (empty when it is valid or missing).
  returned: when O(all_hosts=false)
  type: list
  elements: str
  sample: []
envelopes:
  description: Every valid envelope of the survey in the run, sorted by host.
  returned: when O(all_hosts=true)
  type: list
  elements: dict
invalid:
  description: Envelope files of the survey that are unreadable, invalid or misplaced, each with its problems.
  returned: when O(all_hosts=true)
  type: list
  elements: dict
  contains:
    path:
      description: The file.
      type: str
    problems:
      description: What is wrong with it.
      type: list
      elements: str
run_dir:
  description: The run's directory in the store.
  returned: when O(all_hosts=true)
  type: str
  sample: ./iokit-results/20261122T101500Z-3f2a
'''
