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
  - Echo clients we attached are removed by name; objects we created through them are destroyed first while the
    device is still there; then C(lctl --device NAME cleanup) and C(lctl --device NAME detach). A device left
    half-made (status C(AT)) is only detached.
  - With O(include_iokit_leftovers=true), devices in C(lctl dl) whose names match the I/O kit's (C(*_ecc),
    C(echotmp*), C(ECHO_*)) and whose type is C(echo_client), C(osc) or C(obdecho) are removed too, echo
    clients first.
  - LNet self-test sessions we opened are ended with C(lst end_session) when C(lst) is installed and the session
    is still the one recorded.
  - Scratch paths we recorded are removed, only when they are under O(workdir).
  - Kernel modules are unloaded only when this collection loaded them (C(obdecho), for instance) and nothing uses
    them any more; a module still in use is kept (RV(kept)) and stays recorded for a later cleanup.
  - Whatever is already gone is crossed off the node state and listed in RV(forgotten); it never fails the task.
    A second run therefore reports C(changed=false).
author:
  - lustre.iokit contributors (@lustre)
requirements:
  - C(lctl) and C(lsmod)/C(rmmod) of a Lustre node (nothing to do without them).
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
    details:
      - Nothing is changed, the node state included; RV(removed) lists what would be removed.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
options:
  workdir:
    description:
      - Scratch directory on the node that holds the node state; the same value the surveys used.
      - Recorded paths outside it are never removed.
    type: path
    default: /tmp/lustre-iokit
  run_id:
    description:
      - Undo only what this run recorded. Echo clients recorded by other runs are then left alone (they may be
        in use) and listed in RV(kept).
      - Unset undoes every run's records, which is what C(playbooks/cleanup.yml) does after a cancelled job.
    type: str
  include_iokit_leftovers:
    description:
      - Also remove the echo devices an aborted lustre-iokit run (or a survey killed before it wrote its record)
        left behind, found in C(lctl dl) by name and type.
      - Do not run the cleanup while a lustre-iokit survey started by hand is running on the node; its echo
        clients look like leftovers.
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
'''

RETURN = r'''
removed:
  description:
    - What was removed (in check mode, what would be), by kind.
  returned: always
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
        - Helper processes stopped, each with C(pid), C(command), C(run_id) and C(signal) (the last one sent);
          C(orphaned_group) is true when only the workers of a killed leader were left.
      type: list
      elements: dict
    paths:
      description: Scratch paths removed, each with C(path) and C(run_id).
      type: list
      elements: dict
    lst_sessions:
      description: LNet self-test sessions ended, each with C(name), C(key) and C(run_id).
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
  returned: always
  type: list
  elements: dict
kept:
  description:
    - Things deliberately left in place (C(kind), C(id), C(reason)), such as C(obdecho) still in use, an echo
      client recorded by another run, a path outside O(workdir), or an object that could not be destroyed.
  returned: always
  type: list
  elements: dict
errors:
  description:
    - Things still there that could not be removed (C(kind), C(id), C(message); for commands also C(command),
      C(rc) and C(stderr)).
  returned: always
  type: list
  elements: dict
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.lustre.iokit.plugins.module_utils.cleanup import Cleanup
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState
from ansible_collections.lustre.iokit.plugins.module_utils.runner import Runner


def argument_spec():
    return dict(
        workdir=dict(type='path', default='/tmp/lustre-iokit'),
        run_id=dict(type='str'),
        include_iokit_leftovers=dict(type='bool', default=True),
        unload_modules=dict(type='bool', default=True),
        kill_grace_s=dict(type='float', default=5.0),
        fail_on_error=dict(type='bool', default=True),
    )


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    params = module.params
    if params['kill_grace_s'] < 0:
        module.fail_json(msg='kill_grace_s: must not be negative, got %s' % params['kill_grace_s'])
    if params['run_id'] is not None and not params['run_id'].strip():
        module.fail_json(msg='run_id: must not be empty; leave it unset to clean up every run')
    cleanup = Cleanup(
        Runner(), NodeState(params['workdir']), run_id=params['run_id'],
        include_iokit_leftovers=params['include_iokit_leftovers'], unload_modules=params['unload_modules'],
        check_mode=module.check_mode, kill_grace_s=params['kill_grace_s'], lst_path=module.get_bin_path('lst'))
    report = cleanup.run()
    if report['errors'] and params['fail_on_error']:
        module.fail_json(msg='cleanup left things behind: %s' % '; '.join(
            '%s %s: %s' % (error['kind'], error['id'], error['message']) for error in report['errors']), **report)
    module.exit_json(**report)


if __name__ == '__main__':
    main()
