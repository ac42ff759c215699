#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: lnet_selftest
short_description: Load or unload Lustre's LNet self-test module, remembering whether this collection loaded it
version_added: 0.1.0
description:
  - Loads the C(lnet_selftest) kernel module, which every node of an LNet self-test (the console, the servers and
    the clients of M(lustre.iokit.lst_survey)) needs, or unloads it again.
  - With O(state=present) the module is loaded only when it is not loaded yet; the node state
    (O(workdir)/C(node-state.json)) records that this collection loaded it, before C(modprobe) runs, so that
    M(lustre.iokit.iokit_cleanup) can unload it even after the play was killed.
  - With O(state=absent) the module is unloaded only when the node state says this collection loaded it and
    nothing uses it any more. A module loaded by someone else is never touched (RV(action=not_ours)); one still
    in use stays loaded and recorded, for a later cleanup (RV(action=in_use)).
author:
  - lustre.iokit contributors (@lustre)
requirements:
  - C(lsmod), C(modprobe) and C(rmmod), and the C(lnet_selftest) module of the node's Lustre.
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
    details:
      - Reads C(lsmod) and the node state and returns what would be done; nothing is loaded, unloaded or recorded.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
options:
  state:
    description:
      - V(present) loads C(lnet_selftest) if it is not loaded; V(absent) unloads it if this collection loaded it and
        nothing uses it.
    type: str
    choices: [present, absent]
    default: present
  workdir:
    description:
      - Scratch directory on the node that holds the node state; the same value the surveys and
        M(lustre.iokit.iokit_cleanup) use.
    type: path
    default: /tmp/lustre-iokit
  run_id:
    description:
      - The run the load is recorded for (letters, digits, C(.), C(_) and C(-), at most 64 characters), so that
        M(lustre.iokit.iokit_cleanup) with the same C(run_id) unloads it.
      - Default is a fresh UTC timestamp with a random suffix. Not used with O(state=absent).
    type: str
notes:
  - M(lustre.iokit.lst_survey) loads C(lnet_selftest) on its console node itself; the servers and clients it
    tests need this module (the C(lustre.iokit.lnet) role runs it on every node involved).
  - Unloading C(lnet_selftest) ends any LNet self-test session of the node, as the kernel console does.
seealso:
  - module: lustre.iokit.iokit_cleanup
  - module: lustre.iokit.lst_survey
'''

EXAMPLES = r'''
- name: Load lnet_selftest on every node of the test
  lustre.iokit.lnet_selftest:
    state: present
    run_id: "{{ iokit_run_id }}"

- name: Unload it again, only if we loaded it
  lustre.iokit.lnet_selftest:
    state: absent
  register: lnet_selftest_unload

- name: Say why it stayed loaded
  ansible.builtin.debug:
    msg: "lnet_selftest stays loaded: {{ lnet_selftest_unload.action }}"
  when: lnet_selftest_unload.loaded
'''

RETURN = r'''
action:
  description:
    - What was done (in check mode, what would be done).
    - V(loaded) (it was not loaded; now it is, recorded as ours), V(already_loaded) (nothing to do),
      V(unloaded) (ours and unused; now gone, crossed off the node state), V(not_loaded) (nothing to unload;
      a stale record is crossed off), V(not_ours) (loaded by someone else; left alone), V(in_use) (ours but
      used; left loaded and recorded).
  returned: always
  type: str
  sample: loaded
loaded:
  description: Whether C(lnet_selftest) is loaded when the module returns (in check mode, would be).
  returned: always
  type: bool
ours:
  description: Whether the node state says this collection loaded it (in check mode, would say).
  returned: always
  type: bool
use_count:
  description: Users of the module according to C(lsmod) before any change; 0 when it is not loaded.
  returned: always
  type: int
run_id:
  description: The run the load is recorded for; null with O(state=absent).
  returned: always
  type: str
  sample: 20261122T101500Z-3f2a
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.lustre.iokit.plugins.module_utils.kernel_module import argument_spec, manage_kernel_module

MODULE = 'lnet_selftest'


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    manage_kernel_module(module, MODULE)


if __name__ == '__main__':
    main()
