# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# Documentation only: the work is done on the controller by plugins/action/history_record.py.

from __future__ import annotations

DOCUMENTATION = r'''
module: history_record
author:
  - lustre.iokit contributors (@lustre)
version_added: 1.0.0
short_description: Record stored survey results in the results history database
description:
  - Reads the result envelopes of a run from the controller's results store
    (C(<results_dir>/<run_id>/<host>/<survey>.json)) and records them in the results history, a database named by
    O(dsn) - a SQLite file on the controller or a PostgreSQL server. Without O(run_id), records every run stored in
    O(results_dir) (an import).
  - Each result becomes the report's samples (the same extraction as C(report.json)), keyed by components that
    survive a reboot and a re-cabling - an OST or MDT by its target name, a LUN by the stable id the sgpdd survey
    recorded (WWID, device-mapper UUID, C(/dev/disk/by-id) name, a loop device's backing file), a NID with the node
    that owns it, a client by its host name - and one record per run - its start and end, file system, Lustre and
    collection versions, each survey's variables' hash, each OST's and MDT's fill level, the host count, the tags.
  - Idempotent - a result recorded before with the same content is not written again; one stored again with other
    content replaces its samples. Several tasks may record at once, into one run (AWX slices, each with its hosts)
    or into different runs.
  - Never writes in the results store. A database that is locked past O(timeout_s) or cannot be reached fails the
    task with a message naming it (the password masked) and saying where the run's results stay and how to record
    them later; a SQLite file on a Lustre file system is refused.
  - The survey playbooks record each host's result right after storing it, unless C(iokit_history=false);
    C(playbooks/history.yml -e history_action=import) records what is already stored. See the collection's
    C(docs/history.md).
  - Runs on the controller only.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
  - lustre.iokit.attributes.controller_action
attributes:
  check_mode:
    support: full
    details: Checks O(dsn) and where its file would be; opens no database and records nothing.
options:
  results_dir:
    description: The results store on the controller (usually C(iokit_results_dir)), which is only read.
    type: path
    required: true
  run_id:
    description:
      - The run to record. Without it, every run in O(results_dir) is (each directory whose name is a run id).
    type: str
  dsn:
    description:
      - The history database. V(sqlite:///<absolute path>) (V(sqlite:///~/...) from the home directory) or a
        PostgreSQL URI, V(postgresql://user:password@host:port/database) (psycopg 3 must be installed on the
        controller; the collection's execution environment has it).
      - Defaults to the variable C(iokit_history_dsn); empty or unset means
        V(sqlite:///<results_dir>/history.sqlite), beside the results it indexes.
      - A SQLite file must not be on a Lustre file system (type C(lustre), or the simulator's C(fuse.lustre-sim)).
    type: str
  hosts:
    description: Record only these hosts' results (an AWX slice records its own). Default every host of the run.
    type: list
    elements: str
  surveys:
    description: Record only these surveys' results. Default every survey of the run.
    type: list
    elements: str
  tags:
    description:
      - Free-form tags added to each run recorded, as a mapping or a list of C(key=value) strings (C(quarter=2026Q3));
        a tag the run has already takes the new value.
      - Defaults to the variable C(iokit_history_tags).
    type: raw
  nid_owners:
    description:
      - The node that owns each NID (a mapping of NID to host name), for a NID's identity where the results do not
        say. Added to what the task finds itself - each inventory host's C(lnet_host_nid), which the role
        C(lustre.iokit.lnet) sets while it prepares a run - and winning over it.
    type: dict
  timeout_s:
    description:
      - Seconds to wait for another writer holding the database (SQLite's busy timeout, PostgreSQL's lock and
        connect timeouts) before failing.
    type: float
    default: 60
seealso:
  - module: lustre.iokit.store_result
  - module: lustre.iokit.iokit_report
'''

EXAMPLES = r'''
- name: Record one host's stored result of the run (what the survey playbooks do after storing it)
  lustre.iokit.history_record:
    results_dir: "{{ iokit_run.results_dir }}"
    run_id: "{{ iokit_run.run_id }}"
    hosts: ["{{ inventory_hostname }}"]
    surveys: [obdfilter]

- name: Record every run stored in a results directory, in a PostgreSQL history
  lustre.iokit.history_record:
    results_dir: /var/lib/lustre-iokit/results
    dsn: "postgresql://iokit:{{ vault_history_password }}@db.example.org/iokit"
    tags:
      site: lab
  run_once: true
'''

RETURN = r'''
dsn:
  description: The database recorded into, with any password masked.
  returned: always
  type: str
  sample: sqlite:///home/admin/iokit-results/history.sqlite
runs:
  description:
    - One entry per run recorded - C(run_id), C(run_new) (the run was not in the history before),
      C(envelopes_new), C(envelopes_changed) (recorded before with another content - their samples were replaced),
      C(envelopes_unchanged), C(samples_added), C(samples_removed), and C(unreadable) (result files the store could
      not use, each with its C(path) and C(error); not recorded).
  returned: unless in check mode
  type: list
  elements: dict
runs_new:
  description: How many runs were not in the history before.
  returned: unless in check mode
  type: int
  sample: 1
envelopes_new:
  description: How many results were written (new or changed).
  returned: unless in check mode
  type: int
  sample: 4
samples_added:
  description: How many samples were written.
  returned: unless in check mode
  type: int
  sample: 5120
unreadable:
  description: Every result file that could not be used, with its C(path) and C(error).
  returned: unless in check mode
  type: list
  elements: dict
not_runs:
  description: Directories of O(results_dir) that are not runs (an import only), each with its C(path) and C(why).
  returned: unless in check mode
  type: list
  elements: dict
'''
