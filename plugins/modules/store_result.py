# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# Documentation only: the work is done on the controller by plugins/action/store_result.py.

from __future__ import annotations

DOCUMENTATION = r'''
module: store_result
author:
  - lustre.iokit contributors (@lustre)
version_added: 0.1.0
short_description: Store a survey's result envelope in the controller's results store
description:
  - Validates one result envelope (schema C(lustre.iokit/result/v1)) and writes it on the controller as
    C(<results_dir>/<run_id>/<host>/<survey>.json), atomically (temp file, fsync, rename).
  - Fetches the survey's raw output files from the node (O(raw_files)) and stores each beside the envelope under
    its own base name, atomically and before the envelope, so that a stored envelope always has its raw output
    next to it.
  - Works for every survey of the collection; the survey is taken from the envelope.
  - Accepts the registered result of a survey module, its C(job) as returned by M(lustre.iokit.async_result), the
    result of C(ansible.builtin.async_status) polling one, or the envelope itself. C(async_status) replaces the
    module's C(started)/C(finished) timestamps with booleans; from such a result the envelope is read back from
    the node's async job file, which must not be cleaned up first.
  - Nothing is written when the stored files already hold the same content (the task then reports no change).
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
  - lustre.iokit.attributes.controller_action
attributes:
  check_mode:
    support: full
    details: Validates the envelope, fetches nothing and writes nothing; reports whether it would change the store.
options:
  envelope:
    description:
      - The result envelope, or a registered module or C(async_status) result that carries its keys at the top
        level or under C(envelope).
      - Keys that are not envelope keys (C(changed), C(invocation), C(ansible_job_id), ...) are dropped.
    type: dict
    required: true
  results_dir:
    description: The results store on the controller (usually C(iokit_results_dir)); created when missing.
    type: path
    required: true
  host:
    description:
      - The host directory to store under. Defaults to the inventory name of the host the task runs for.
      - When the envelope names another host (the node's own host name), the envelope is stored with this name
        and the node's name is kept as C(environment.node_hostname).
    type: str
  fetch_raw_output:
    description:
      - Fetch the node's raw output files and store them beside the envelope.
      - A raw output file that cannot be read is a warning, not a failure; the envelope is still stored.
    type: bool
    default: true
  raw_files:
    description:
      - Paths on the node of the raw output files to fetch.
      - Defaults to the C(raw_files) of the registered result given in O(envelope), else to the envelope's
        C(raw_output).
      - A file whose base name ends in C(.json) is stored with C(.raw) appended, so that it is never taken for an
        envelope.
    type: list
    elements: str
  raw_contents:
    description:
      - The raw output itself, as M(lustre.iokit.async_result) returns it in its C(raw_contents) (each a C(name)
        and a gzip-compressed, base64-encoded C(content)); stored under each C(name) without reading the node.
      - Mutually exclusive with O(raw_files).
    type: list
    elements: dict
notes:
  - A rerun with the same run id overwrites the host's files; use M(lustre.iokit.stored_result) first to skip
    host/survey pairs that are already C(ok).
seealso:
  - module: lustre.iokit.stored_result
  - module: lustre.iokit.async_result
'''

EXAMPLES = r'''
- name: Run the survey in the background
  lustre.iokit.sgpdd_survey:
    devices: [/dev/sdb]
    actions: [read]
    run_id: "{{ iokit_run_id }}"
    timeout: 3500
  async: 3600
  poll: 0
  register: survey_job

- name: Wait for the survey on the node
  lustre.iokit.async_result:
    results_file: "{{ survey_job.results_file }}"
    wait_s: 60
  register: survey_wait
  until: survey_wait.finished
  retries: 62
  delay: 0
  # A survey that measured nothing fails but still returns its envelope, which is worth storing.
  failed_when: not survey_wait.finished or survey_wait.job.envelope is not defined

- name: Store the envelope and the raw output on the controller
  lustre.iokit.store_result:
    envelope: "{{ survey_wait.job }}"
    raw_contents: "{{ survey_wait.raw_contents }}"
    results_dir: "{{ iokit_results_dir }}"
'''

RETURN = r'''
path:
  description: The envelope file on the controller.
  returned: success
  type: str
  sample: ./iokit-results/20261122T101500Z-3f2a/oss1/sgpdd.json
raw_output_paths:
  description: The raw output files stored on the controller (empty when none was fetched).
  returned: success
  type: list
  elements: str
  sample: [./iokit-results/20261122T101500Z-3f2a/oss1/sgpdd_survey.summary]
status:
  description: The envelope's status (C(ok), C(partial), C(failed) or C(skipped)).
  returned: success
  type: str
  sample: ok
run_id:
  description: The envelope's run id.
  returned: success
  type: str
  sample: 20261122T101500Z-3f2a
survey:
  description: The envelope's survey.
  returned: success
  type: str
  sample: sgpdd
'''
