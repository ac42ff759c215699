# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# Documentation only: the work is done by plugins/action/survey_start.py, which runs the survey's module on the node.

from __future__ import annotations

DOCUMENTATION = r'''
module: survey_start
author:
  - lustre.iokit contributors (@lustre)
version_added: 0.2.0
short_description: Start a survey's module with the arguments its role's variables give
description:
  - Runs the module of O(survey) (M(lustre.iokit.sgpdd_survey), M(lustre.iokit.obdfilter_survey),
    M(lustre.iokit.mds_survey), M(lustre.iokit.ost_survey), M(lustre.iokit.lst_survey), M(lustre.iokit.ior) or
    M(lustre.iokit.mdtest)) on the host, with its options taken from the survey role's variables, as the
    P(lustre.iokit.survey_problems#filter) preflight checks them - option C(<o>) from C(<survey>_<o>), except
    C(lnet_servers) and C(lnet_clients) (made by the lnet role's prepare step from C(lnet_server_nids) and
    C(lnet_client_nids), which the preflight checks, or from the hosts' NIDs), C(lnet_session_timeout_s),
    C(ior_binary) and C(mdtest_binary), and the deprecated C(ior_iterations) and C(mdtest_iterations), which win over C(ior_repetitions) and
    C(mdtest_repetitions) while they are set.
  - An option without a module default whose variable is empty (none, an empty string or list) is left out, as are
    C(mdtest_items_per_dir) and C(ior_client_memory_mib) when 0; C(mdtest_items) is left out when
    C(mdtest_items_per_dir) is given, and C(ior_client_memory_mib) 0 passes the gathered C(ansible_memtotal_mb) when
    there is one.
  - The module's C(engine), C(timeout) and C(workdir) are C(iokit_engine) (default V(native); always V(native) for
    ior and mdtest), C(iokit_timeout_s) (default V(3600)) and C(iokit_workdir) (default V(/tmp/lustre-iokit)).
    The MPI hostfile of ior and mdtest (C(hosts)) is C(<survey>_hosts) when it is not empty, else the hosts of
    C(<survey>_client_group), this host first, each named by its C(<survey>_mpi_hostname) or its inventory name.
  - Used by the collection's C(survey_common) role under C(async) with C(poll) 0; the survey's role variables must
    be visible to the task (its defaults are, once the role's preflight has been imported).
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
attributes:
  action:
    support: full
  async:
    support: full
  bypass_host_loop:
    support: none
  check_mode:
    support: full
    details: The survey's module only returns its plan.
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  survey:
    description: The survey whose module runs.
    type: str
    required: true
    choices: [sgpdd, obdfilter, mds, ost, lnet, ior, mdtest]
  run_id:
    description: The run the module's result belongs to (the survey module's C(run_id)).
    type: str
    required: true
  launch_id:
    description: This start of the run (the survey module's C(launch_id)), for the cleanup of what it made.
    type: str
    required: true
  force_rerun:
    description: Measure every point again, also those an earlier attempt of the run finished (the survey module's C(force_rerun)).
    type: bool
    default: false
  start_together:
    description:
      - Under C(async), start the survey module with a start signal of its own (its C(start_signal), a new file in
        the run's directory on the node), returned as RV(start_signal). The module takes its lock, records itself
        for the cleanup, then waits for that file before it measures. A later task creates the file on every host
        at once (the survey roles use one C(raw) command per host), so that the fleet's surveys begin together
        however long the launches took.
      - Without C(async) (check mode) there is nothing to wait for and no signal.
    type: bool
    default: false
seealso:
  - plugin: lustre.iokit.survey_problems
    plugin_type: filter
  - module: lustre.iokit.async_result
'''

EXAMPLES = r'''
- name: Start the obdfilter survey with the obdfilter role's variables
  lustre.iokit.survey_start:
    survey: obdfilter
    run_id: "{{ iokit_run.run_id }}"
    launch_id: "{{ iokit_run.launch_id }}"
  async: 7200
  poll: 0
  register: survey_job

- name: Wait for it
  lustre.iokit.async_result:
    results_file: "{{ survey_job.results_file }}"
    wait_s: 30
  register: survey_wait
  until: survey_wait.finished
  retries: 250
  delay: 0
'''

RETURN = r'''
plan:
  description:
    - The survey module's plan (in check mode), with C(lines), the plan in a few lines for people.
  returned: check mode
  type: dict
results_file:
  description: The async job's results file on the node.
  returned: under async
  type: str
ansible_job_id:
  description: The async job's id.
  returned: under async
  type: str
start_signal:
  description: The file on the node whose creation starts the survey's measurement.
  returned: under async with O(start_together)
  type: str
'''
