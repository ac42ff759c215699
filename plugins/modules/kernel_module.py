#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: kernel_module
short_description: Load or unload a kernel module the surveys need, remembering whether this collection loaded it
version_added: 0.1.0
description:
  - Loads one of the kernel modules the surveys need, or unloads it again. C(obdecho) gives the obdfilter and mds
    surveys their echo clients; C(lnet_selftest) is needed on every node of an LNet self-test (the console, the
    servers and the clients of M(lustre.iokit.lst_survey)); C(sg) gives the sgpdd survey the SCSI generic nodes of
    its disks.
  - With O(state=present) the module is loaded only when it is not loaded yet; the node state
    (O(workdir)/C(node-state.json)) records that this collection loaded it, before C(modprobe) runs, so that
    M(lustre.iokit.iokit_cleanup) can unload it even after the play was killed.
  - With O(state=absent) the module is unloaded only when the node state says this collection loaded it and
    nothing uses it any more (C(lsmod) counts no users). A module loaded by someone else is never touched
    (RV(action=not_ours)); one still in use stays loaded and recorded, for a later cleanup (RV(action=in_use)).
  - A module built into the kernel (C(/sys/module/NAME) exists but C(lsmod) does not list it) is always loaded and
    never ours; it is never unloaded (RV(builtin=true)).
author:
  - lustre.iokit contributors (@lustre)
requirements:
  - C(lsmod), C(modprobe) and C(rmmod), and the module itself (C(obdecho) and C(lnet_selftest) come with the
    node's Lustre, C(sg) with its kernel).
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
    details:
      - Reads C(lsmod), C(/sys/module) and the node state and returns what would be done; nothing is loaded,
        unloaded or recorded.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
options:
  name:
    description:
      - The kernel module.
      - The list is closed on purpose. The collection loads only modules whose users it knows, so that it can judge
        when unloading one is safe (the echo clients of C(obdecho), the self-test sessions of C(lnet_selftest), the
        C(sgp_dd) processes on C(sg) nodes); it is no general way to load or unload anything on a node.
    type: str
    required: true
    choices: [obdecho, lnet_selftest, sg]
  state:
    description:
      - V(present) loads the module if it is not loaded; V(absent) unloads it if this collection loaded it and
        nothing uses it.
    type: str
    choices: [present, absent]
    default: present
  workdir:
    description:
      - Directory on the node that holds the node state; the surveys and M(lustre.iokit.iokit_cleanup) use the
        same value, so that the cleanup unloads what was loaded here.
    type: path
    default: /tmp/lustre-iokit
  run_id:
    description:
      - The run the load is recorded for (letters, digits, C(.), C(_) and C(-), at most 64 characters), so that
        M(lustre.iokit.iokit_cleanup) with the same C(run_id) unloads it.
      - Default is a fresh UTC timestamp with a random suffix. Not used with O(state=absent).
    type: str
notes:
  - The obdfilter, mds and lnet surveys load C(obdecho) or C(lnet_selftest) themselves where they run when it is
    missing, and unload it at their end; load it beforehand with this module to keep it loaded across several
    surveys, then unload it with O(state=absent). The C(lustre.iokit.lnet) role loads C(lnet_selftest) with this
    module on every node of the test; the C(lustre.iokit.sgpdd) and C(lustre.iokit.node_prep) roles load C(sg).
  - Unloading C(lnet_selftest) ends any LNet self-test session of the node, as the kernel console does.
  - With O(state=absent), a record crossed off that was the last entry of the node state removes the empty
    C(node-state.json).
seealso:
  - module: lustre.iokit.iokit_cleanup
  - module: lustre.iokit.lst_survey
'''

EXAMPLES = r'''
- name: Keep obdecho loaded for the whole run
  lustre.iokit.kernel_module:
    name: obdecho
    state: present
    run_id: "{{ iokit_run_id }}"

- name: Load lnet_selftest on every node of the test
  lustre.iokit.kernel_module:
    name: lnet_selftest
    run_id: "{{ iokit_run_id }}"

- name: Unload obdecho again, only if we loaded it
  lustre.iokit.kernel_module:
    name: obdecho
    state: absent
  register: obdecho_unload

- name: Say why it stayed loaded
  ansible.builtin.debug:
    msg: "obdecho stays loaded: {{ obdecho_unload.action }}"
  when: obdecho_unload.loaded
'''

RETURN = r'''
action:
  description:
    - What was done (in check mode, what would be done).
    - V(loaded) (it was not loaded; now it is, recorded as ours), V(already_loaded) (nothing to do; also for a
      module built into the kernel), V(unloaded) (ours and unused; now gone, crossed off the node state),
      V(not_loaded) (nothing to unload; a stale record is crossed off), V(not_ours) (loaded by someone else, or
      built into the kernel; left alone), V(in_use) (ours but used; left loaded and recorded).
  returned: always
  type: str
  sample: loaded
loaded:
  description: Whether the module is loaded when the module returns (in check mode, would be).
  returned: always
  type: bool
ours:
  description: Whether the node state says this collection loaded it (in check mode, would say).
  returned: always
  type: bool
builtin:
  description: Whether the module is built into the kernel (in C(/sys/module) but not listed by C(lsmod)).
  returned: always
  type: bool
use_count:
  description: Users of the module according to C(lsmod) before any change; 0 when it is not loaded or built in.
  returned: always
  type: int
run_id:
  description: The run the load is recorded for; null with O(state=absent).
  returned: always
  type: str
  sample: 20261122T101500Z-3f2a
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.lustre.iokit.plugins.module_utils import payload
from ansible_collections.lustre.iokit.plugins.module_utils.kernel_module import argument_spec, manage_kernel_module


def main():
    # First: a module killed later still leaves a payload directory the cleanup knows is stale.
    payload.claim()
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    manage_kernel_module(module)


if __name__ == '__main__':
    main()
