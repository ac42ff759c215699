#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: iokit_cleanup
short_description: Remove what Lustre surveys left on a node, ours and the I/O kit's
version_added: 0.1.0
description:
  - Undoes what the surveys of this collection recorded in the node state (O(workdir)/C(node-state.json)) before
    they acted, and removes the echo devices that aborted lustre-iokit runs leave behind.
  - Order of work, so that each step can succeed; helper processes we started are stopped (SIGTERM to their
    process group, SIGKILL after O(kill_grace_s)); a process whose pid now belongs to another process (its start
    time differs) is never signalled.
  - The async watchdog of a survey module that has finished (Ansible's async wrapper notices the end of its job
    only at its next poll, every 5 seconds) is first given that interval plus O(kill_grace_s) to end by itself,
    removing the job's temporary files, and is stopped only past it; the node is clean when the cleanup returns.
  - Echo clients we attached are removed by name; objects we created through them are destroyed first while the
    device is still there; then C(lctl --device NAME cleanup) and C(lctl --device NAME detach). A device left
    half-made (status C(AT)) is only detached.
  - Recorded objects, and the test directories and files of an mds survey, outlive their echo client. When the
    device is gone (or half made), the echo client is attached again on its recorded target to destroy them, then
    removed; the files of an interrupted mds survey are found from its record with C(test_lookup) probes. When it
    cannot be attached, RV(kept) names what is left and the C(lctl) commands that remove it.
  - Objects an C(lctl create) was making when its survey was killed are found from the file in the run's directory
    the create prints their ids to (recorded with its echo client before it started); a create still writing it is
    given O(kill_grace_s) to end, then stopped. Objects of a create whose ids cannot all be read there are named in
    RV(kept).
  - An mds test tree on an MDT that fails (C(Input/output error), C(Read-only file system)) cannot be removed or
    even probed; that is the survey's finding, not the cleanup's failure. Its echo client is removed, its record
    stays so that the next cleanup removes the tree once the MDT is repaired, and RV(kept) names what may remain,
    the failing command and how to remove it.
  - With O(include_iokit_leftovers=true), devices in C(lctl dl) whose names match the I/O kit's (C(*_ecc),
    C(echotmp*), C(ECHO_*)) and whose type is C(echo_client), C(osc) or C(obdecho) are removed too, echo
    clients first.
  - LNet self-test sessions we opened are ended with C(lst end_session) when C(lst) is installed and the session
    is still the one recorded.
  - Slurm jobs that an ior or mdtest survey submitted (C(salloc) or C(sbatch --wait)) and did not see end are
    cancelled with C(scancel), by the job id when it was recorded, else by the run's unique job name and the user;
    the job's output file (in the survey's marked tree) and its script (under O(workdir)) are removed.
  - Scratch paths we recorded are removed, only when they are under O(workdir).
  - Kernel modules are unloaded only when this collection loaded them (C(obdecho), for instance) and nothing uses
    them any more; a module still in use is kept (RV(kept)) and stays recorded for a later cleanup.
  - Whatever is already gone is crossed off the node state and listed in RV(forgotten); it never fails the task.
    A second run therefore reports C(changed=false).
  - Roles record in the same node state, before they start anything, with O(state=recorded) (the survey module
    itself and its helpers by command line, scratch paths, kernel modules, loop devices); O(state=absent) then
    stops those processes first (SIGTERM lets a survey module tear down what it made), detaches the loop devices
    while they are still backed by the recorded file and removes that file, and removes the paths wherever they
    were recorded.
  - Once nothing is left to undo, the node state file is removed, and so is O(workdir) when a recording created
    it and it is empty.
author:
  - lustre.iokit contributors (@lustre)
requirements:
  - C(lctl) and C(lsmod)/C(rmmod) of a Lustre node (nothing to do without them).
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
    details:
      - Nothing is changed, the node state included; RV(removed) lists what would be removed, RV(recorded) what
        would be recorded.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
options:
  state:
    description:
      - V(absent) removes what the surveys left (everything below but O(survey) and O(record)).
      - V(recorded) only writes the entries of O(record) into the node state, so that a later V(absent) undoes
        them even when the survey is killed; nothing is removed. Recording the same entries again changes nothing.
    type: str
    choices: [absent, recorded]
    default: absent
  survey:
    description:
      - With O(state=recorded), the survey the entries belong to (such as V(obdfilter)); O(surveys) selects by it.
      - Required with O(state=recorded).
    type: str
  surveys:
    description:
      - With O(state=absent), undo only the entries recorded for these surveys. Entries that the survey modules
        recorded name no survey; O(run_id) alone selects them.
      - Unset undoes the entries of every survey.
    type: list
    elements: str
  record:
    description:
      - With O(state=recorded), what the role is about to start, create or load.
    type: dict
    default: {}
    suboptions:
      processes:
        description:
          - Processes the survey may leave running. A process matches when its command name is C(name) (any name
            when omitted, for a module run by whichever Python the node has) and one of its arguments, or a word
            or the last path component of one, is in C(args_any).
          - Only processes of the cleanup's own PID namespace match (a host does not stop its containers'). With
            O(run_id), a process matched without C(name) must also have its working directory or an open file
            under O(workdir)/RUN_ID, where the survey modules keep their raw output, so that another run's
            module of the same name is left alone.
        type: list
        elements: dict
        default: []
        suboptions:
          name:
            description: The command name, as C(/proc/PID/comm) has it.
            type: str
          args_any:
            description: Arguments of which one must appear.
            type: list
            elements: str
            required: true
      paths:
        description:
          - Files and directories to remove. C(tree) removes one with its content; C(empty_dir) removes a
            directory only when it is empty, after everything else is undone.
        type: list
        elements: dict
        default: []
        suboptions:
          path:
            description: An absolute path.
            type: path
            required: true
          kind:
            description: How to remove it.
            type: str
            choices: [tree, empty_dir]
            default: tree
      modules:
        description: Kernel modules the role loaded (only ones that were not loaded before).
        type: list
        elements: str
        default: []
      loop_devices:
        description: Loop devices made for a test or the demo, detached only while still backed by C(backing_file).
        type: list
        elements: dict
        default: []
        suboptions:
          device:
            description: The loop device, such as C(/dev/loop3).
            type: path
            required: true
          backing_file:
            description: The file behind it, removed after the detach.
            type: path
            required: true
  workdir:
    description:
      - Scratch directory on the node that holds the node state; the same value the surveys used.
      - Recorded paths outside it are never removed.
    type: path
    default: /tmp/lustre-iokit
  run_id:
    description:
      - Undo only what this run recorded (and what was recorded without a run id). Echo clients recorded by other
        runs are then left alone (they may be in use) and listed in RV(kept).
      - With O(state=recorded), the run id written with the entries.
      - Unset undoes every run's records except those of a run still alive on the node (one whose survey module
        holds its survey's lock under O(workdir)), which RV(kept) names with its host, pid and start time; that is
        what C(playbooks/cleanup.yml) does after a cancelled job. Give the run id to stop a live run too.
    type: str
  launch_id:
    description:
      - Undo only what this launch of the survey module recorded (its C(launch_id)), and what was recorded without
        a launch. A survey play's C(always) section sets it, so that a second launch of the same run id, refused
        because the first still runs, never undoes what the first made.
    type: str
  include_iokit_leftovers:
    description:
      - Also remove the echo devices an aborted lustre-iokit run (or a survey killed before it wrote its record)
        left behind, found in C(lctl dl) by name and type.
      - Do not run the cleanup while a lustre-iokit survey started by hand is running on the node; its echo
        clients look like leftovers.
    type: bool
    default: true
  keep_points:
    description:
      - Keep the finished points of a run directory even when its run completed, as for one that did not; the survey
        play sets it when the host's result did not reach the controller's results store (a full results directory),
        so that a rerun of the run id takes them instead of measuring again.
    type: bool
    default: false
  module_payloads:
    description:
      - Also remove the directories Ansible extracted this collection's modules into
        (C(ansible_lustre.iokit.<module>_payload_*) in the node's temporary directory) whose module process is gone;
        Ansible removes them when a module ends, but not when it is killed (SIGKILL by the async limit, a killed
        wait). Only directories of the user the cleanup runs as, and only those a module of this collection marked
        with its pid and start time; a live module's is never touched.
    type: bool
    default: true
  unload_modules:
    description:
      - Unload the kernel modules this collection loaded, once unused. V(false) keeps them loaded for a
        following survey; they stay recorded.
    type: bool
    default: true
  kill_grace_s:
    description: Seconds between SIGTERM and SIGKILL for our helper processes.
    type: float
    default: 5
  fail_on_error:
    description:
      - Fail the task when something that is still there could not be removed (listed in RV(errors)).
      - V(false) returns the errors and lets the play go on. Something already gone is never an error.
    type: bool
    default: true
notes:
  - The survey modules record in the node state before they act, so this module also undoes what a survey
    killed by Ansible's C(async) limit or a cancelled AWX job left behind.
seealso:
  - module: lustre.iokit.lustre_targets_info
'''

EXAMPLES = r'''
- name: Clean up after a survey, in the always section of its block
  lustre.iokit.iokit_cleanup:
    workdir: "{{ iokit_workdir }}"
    run_id: "{{ iokit_run_id }}"

- name: After a cancelled AWX job, remove every record and every I/O-kit leftover
  lustre.iokit.iokit_cleanup:
    workdir: /tmp/lustre-iokit
  register: cleanup

- name: Show what was removed
  ansible.builtin.debug:
    var: cleanup.removed

- name: What would be removed
  lustre.iokit.iokit_cleanup:
  check_mode: true

- name: Before starting a survey, record what cleanup must undo if it is killed
  lustre.iokit.iokit_cleanup:
    state: recorded
    survey: sgpdd
    workdir: "{{ iokit_workdir }}"
    record:
      processes:
        - args_any: [AnsiballZ_sgpdd_survey.py, sgpdd-survey]
        - name: sgp_dd
          args_any: [if=/dev/sg3, of=/dev/sg3]
      paths:
        - path: "{{ iokit_workdir }}/{{ iokit_run_id }}"
      modules: [sg]
'''

RETURN = r'''
removed:
  description:
    - What was removed (in check mode, what would be), by kind.
  returned: when O(state=absent)
  type: dict
  contains:
    echo_clients:
      description:
        - Each device with C(name), C(source) (V(node_state) or V(iokit_leftover)), C(status) before (V(UP) or
          V(AT)), C(steps) (C(cleanup), C(detach)) and C(objects_destroyed) (object ids); recorded ones also have
          C(run_id) and C(target), leftovers C(type).
      type: list
      elements: dict
      sample: [{name: testfs-OST0000_ecc, source: iokit_leftover, type: echo_client, status: UP,
                steps: [cleanup, detach], objects_destroyed: []}]
    modules:
      description: Kernel modules unloaded, each with C(name) and C(run_id).
      type: list
      elements: dict
    processes:
      description:
        - Helper processes stopped, each with C(pid), C(command), C(run_id) and C(signal) (the last one sent;
          null for one that ended with its survey module, which the cleanup stops first and alone);
          C(orphaned_group) is true when only the workers of a killed leader were left. Processes found by a
          recorded command line have C(survey) and C(matched) (the entry's id) instead of C(run_id).
      type: list
      elements: dict
    loop_devices:
      description:
        - Loop devices undone, each with C(device), C(backing_file), C(survey) and C(steps) (C(detach),
          C(remove_backing_file)).
      type: list
      elements: dict
    paths:
      description: Scratch paths removed, each with C(path) and C(run_id).
      type: list
      elements: dict
    module_payloads:
      description: Payload directories of killed modules of this collection removed (O(module_payloads)), each with
        C(path) and C(pid) (the module that ran from it).
      type: list
      elements: dict
    lst_sessions:
      description: LNet self-test sessions ended, each with C(name), C(key) and C(run_id).
      type: list
      elements: dict
    slurm_jobs:
      description:
        - Slurm jobs of a killed ior or mdtest survey (C(launcher=srun) with an allocation made by C(salloc) or
          C(sbatch)) cancelled with C(scancel), each with C(name) (the job name), C(job_id) (when recorded),
          C(run_id), C(survey), C(allocation) and C(files) (the job's output file and script removed).
      type: list
      elements: dict
    params:
      description:
        - Tunables a survey changed and this cleanup set back, each with C(name) (for example
          C(llite.testfs-ffff8881.max_cached_mb)), C(value) (the value restored) and C(run_id).
      type: list
      elements: dict
forgotten:
  description:
    - Records crossed off because the thing was already gone (C(kind), C(id), C(reason)), such as a process
      that has exited or whose pid was reused, or an echo client that no longer exists.
  returned: when O(state=absent)
  type: list
  elements: dict
kept:
  description:
    - Things deliberately left in place (C(kind), C(id), C(reason)), such as C(obdecho) still in use, or loaded
      by someone else after their leftover echo devices were removed, an echo client recorded by another run, a
      path outside O(workdir), an object that could not be destroyed, an mds test tree on a failing MDT, or a
      live run (C(kind) V(runs)) whose records were left alone. A kept item does not fail the module (an error
      does).
  returned: when O(state=absent)
  type: list
  elements: dict
recorded:
  description:
    - With O(state=recorded), the entries written (those not recorded yet), each with C(kind) (V(commands),
      V(paths), V(modules), V(loop_devices)), C(survey) and C(run_id).
  returned: when O(state=recorded)
  type: list
  elements: dict
errors:
  description:
    - Things still there that could not be removed (C(kind), C(id), C(message); for commands also C(command),
      C(rc) and C(stderr)).
  returned: when O(state=absent)
  type: list
  elements: dict
'''

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.lustre.iokit.plugins.module_utils import payload
from ansible_collections.lustre.iokit.plugins.module_utils.cleanup import Cleanup, record_entries
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState, NodeStateError
from ansible_collections.lustre.iokit.plugins.module_utils.runner import Runner


def argument_spec():
    return dict(
        state=dict(type='str', choices=['absent', 'recorded'], default='absent'),
        survey=dict(type='str'),
        surveys=dict(type='list', elements='str'),
        record=dict(type='dict', default={}, options=dict(
            processes=dict(type='list', elements='dict', default=[], options=dict(
                name=dict(type='str'),
                args_any=dict(type='list', elements='str', required=True),
            )),
            paths=dict(type='list', elements='dict', default=[], options=dict(
                path=dict(type='path', required=True),
                kind=dict(type='str', choices=['tree', 'empty_dir'], default='tree'),
            )),
            modules=dict(type='list', elements='str', default=[]),
            loop_devices=dict(type='list', elements='dict', default=[], options=dict(
                device=dict(type='path', required=True),
                backing_file=dict(type='path', required=True),
            )),
        )),
        workdir=dict(type='path', default='/tmp/lustre-iokit'),
        run_id=dict(type='str'),
        launch_id=dict(type='str'),
        include_iokit_leftovers=dict(type='bool', default=True),
        module_payloads=dict(type='bool', default=True),
        keep_points=dict(type='bool', default=False),
        unload_modules=dict(type='bool', default=True),
        kill_grace_s=dict(type='float', default=5.0),
        fail_on_error=dict(type='bool', default=True),
    )


def record_problems(params):
    """What is wrong with a state=recorded call, each naming the option."""
    problems = []
    if not params['survey']:
        problems.append('survey: required with state=recorded (the survey the entries belong to)')
    record = params['record'] or {}
    for index, path in enumerate(record.get('paths') or []):
        if not os.path.isabs(path['path']) or os.path.normpath(path['path']) == os.sep:
            problems.append('record.paths[%d].path: must be an absolute path other than /, got %r' % (index, path['path']))
    for index, process in enumerate(record.get('processes') or []):
        if not [arg for arg in process['args_any'] if arg]:
            problems.append('record.processes[%d].args_any: needs at least one non-empty argument' % index)
    if not os.path.isabs(params['workdir']) or os.path.normpath(params['workdir']) == os.sep:
        problems.append('workdir: must be an absolute path other than /, got %r' % params['workdir'])
    return problems


def record(module):
    params = module.params
    problems = record_problems(params)
    if problems:
        module.fail_json(msg='; '.join(problems))
    entries = params['record'] or {}
    try:
        recorded = record_entries(
            NodeState(params['workdir']), params['survey'], run_id=params['run_id'],
            processes=entries.get('processes') or [], paths=entries.get('paths') or [],
            modules=entries.get('modules') or [], loop_devices=entries.get('loop_devices') or [],
            check_mode=module.check_mode)
    except NodeStateError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=bool(recorded), recorded=recorded)


def main():
    # First: a module killed later still leaves a payload directory the cleanup knows is stale.
    payload.claim()
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    params = module.params
    if params['run_id'] is not None and not params['run_id'].strip():
        module.fail_json(msg='run_id: must not be empty; leave it unset to clean up every run')
    if params['state'] == 'recorded':
        record(module)
        return
    if params['kill_grace_s'] < 0:
        module.fail_json(msg='kill_grace_s: must not be negative, got %s' % params['kill_grace_s'])
    cleanup = Cleanup(
        Runner(), NodeState(params['workdir']), run_id=params['run_id'],
        include_iokit_leftovers=params['include_iokit_leftovers'], unload_modules=params['unload_modules'],
        check_mode=module.check_mode, kill_grace_s=params['kill_grace_s'], lst_path=module.get_bin_path('lst'),
        surveys=params['surveys'], losetup_path=module.get_bin_path('losetup'), launch=params['launch_id'],
        scancel_path=module.get_bin_path('scancel'), module_payloads=params['module_payloads'],
        keep_points=params['keep_points'])
    report = cleanup.run()
    if report['errors'] and params['fail_on_error']:
        module.fail_json(msg='cleanup left things behind: %s' % '; '.join(
            '%s %s: %s' % (error['kind'], error['id'], error['message']) for error in report['errors']), **report)
    module.exit_json(**report)


if __name__ == '__main__':
    main()
