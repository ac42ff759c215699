# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# Documentation only: the work is done on the controller by plugins/action/results_location.py.

from __future__ import annotations

DOCUMENTATION = r'''
module: results_location
author:
  - lustre.iokit contributors (@lustre)
version_added: 0.2.0
short_description: Fix a run's results directory and run id on the controller, before any node is touched
description:
  - Resolves the results directory to an absolute path once, relative to the directory C(ansible-playbook) was
    started from (its working directory, not the playbook's directory), so that every later step (storing the
    envelopes, the summaries, the report) uses the same path whatever directory a task runs in.
  - Checks that the results can be written there before any survey starts, with a probe file that is created and
    removed in the results directory (created if missing) and in the run's directory when it exists. A file, a
    read-only directory or file system, or an empty value fails here, naming the variable, instead of after a
    survey whose measurement would then be lost.
  - Outside check mode, also checks that the results directory has room for what the run stores (4 MiB per host of
    the play, for an envelope and its raw output), and that neither the run's directory nor a host directory in it is a
    symbolic link leading out of the results directory, which the store would refuse once the surveys had run.
  - Validates the run id, or makes one (UTC time to the second and a random suffix) when none is given. A number,
    null or an unsafe name is refused naming the variable.
  - Register the result as C(iokit_run); a later call in the same playbook run without a run id reuses the run id
    registered there, so that every role of one playbook run stores into one run. The collection's playbooks call
    it first (in the preflight of each role).
  - Runs on the controller only; never contacts the node.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
  - lustre.iokit.attributes.controller_action
attributes:
  check_mode:
    support: full
    details: Creates nothing; the nearest existing directory of the results directory must be writable.
options:
  results_dir:
    description:
      - The results directory; relative to the working directory of C(ansible-playbook), C(~) expanded.
      - Defaults to the variable C(iokit_results_dir), else C(./iokit-results).
    type: raw
  run_id:
    description:
      - The run id, a string of letters, digits, C(.), C(_) and C(-), at most 64 characters, starting with a letter
        or digit.
      - Defaults to the variable C(iokit_run_id), else the run id of an earlier result registered as C(iokit_run),
        else a new one (see O(new_run_id)).
      - A new run id is C(awx-wf<awx_workflow_job_id>) in a job that an AWX workflow started, and in every slice of a
        sliced AWX job (which AWX runs as a workflow job), so that the slices make one run; outside AWX, a UTC time
        and a random suffix.
    type: raw
  new_run_id:
    description: Make a run id when none is given. V(false) fails instead (a report needs a stored run).
    type: bool
    default: true
  check_history:
    description:
      - Also check the results history's settings, before any node is touched - C(iokit_history) (default
        V(true)) must be a boolean, and C(iokit_history_dsn) a valid DSN whose SQLite file would not be on a Lustre
        file system (see M(lustre.iokit.history_record)) - and return them as RV(history). The database is not
        opened.
      - The survey roles' preflight sets it.
    type: bool
    default: false
seealso:
  - module: lustre.iokit.store_result
  - module: lustre.iokit.stored_result
  - module: lustre.iokit.history_record
'''

EXAMPLES = r'''
- name: Fix the results directory and the run id before any node is touched
  lustre.iokit.results_location:
  register: iokit_run
  run_once: true

- name: Store the survey's envelope there
  lustre.iokit.store_result:
    envelope: "{{ survey_job }}"
    results_dir: "{{ iokit_run.results_dir }}"

- name: A report needs a run that exists
  lustre.iokit.results_location:
    new_run_id: false
  register: iokit_run
  run_once: true
'''

RETURN = r'''
results_dir:
  description: The results directory, absolute.
  returned: success
  type: str
  sample: /home/admin/iokit-results
run_id:
  description: The run id, given or made.
  returned: success
  type: str
  sample: 20261122T101500Z-3f2a
run_dir:
  description: The run's directory, C(<results_dir>/<run_id>) (not created here).
  returned: success
  type: str
  sample: /home/admin/iokit-results/20261122T101500Z-3f2a
run_id_generated:
  description: Whether the run id was made by this call.
  returned: success
  type: bool
  sample: true
launch_id:
  description:
    - This start of the run (one per C(ansible-playbook) run; a later call of the same playbook run returns the same).
    - The survey roles give it to their module and the cleanup of a survey play undoes only what it recorded, so
      that a second start of the same run id (an AWX job launched twice), refused while the first runs, never undoes
      what the first made on the node.
  returned: success
  type: str
  sample: 3f2a9c01
history:
  description:
    - Whether the surveys record each stored result in the results history (C(enabled), from C(iokit_history)) and
      in which database (C(dsn), the password masked; null when not enabled).
  returned: with O(check_history=true)
  type: dict
  sample: {"enabled": true, "dsn": "sqlite:///home/admin/iokit-results/history.sqlite"}
'''
