#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: lustre_targets_info
short_description: Lustre version, targets, echo clients and echo modules of a node
version_added: 0.1.0
description:
  - Reads C(lctl dl), C(lctl get_param -n version) and C(lsmod) and returns what the surveys need to know about
    the node - its Lustre version, its OSTs and MDTs with their status, the echo clients that exist (ours, from
    the node state, and I/O-kit leftovers) and whether the echo module is loaded, and by whom.
  - Says which block device each OST and MDT is mounted from - its C(lustre) mount in C(/proc/mounts) (the one
    whose C(svname=) option names it), else C(lctl get_param osd-*.*.mntdev) - so that a report can link a target
    with the LUN that sgpdd surveyed beneath it.
  - Never changes anything, in check mode or not.
author:
  - lustre.iokit contributors (@lustre)
requirements:
  - C(lctl) of a Lustre node. Without it the module returns RV(lctl_found=false) and empty lists.
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
    details:
      - The module only reads; check mode returns the same information.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: N/A
    details:
      - The module never changes anything.
options:
  workdir:
    description:
      - Scratch directory of the surveys, whose node state says which echo clients and modules are ours.
    type: path
    default: /tmp/lustre-iokit
notes:
  - I/O-kit leftovers are C(echo_client), C(osc) and C(obdecho) devices named like the I/O kit names them
    (C(*_ecc), C(echotmp*), C(ECHO_*)) that the node state does not list. M(lustre.iokit.iokit_cleanup)
    removes them.
seealso:
  - module: lustre.iokit.iokit_cleanup
'''

EXAMPLES = r'''
- name: Find the node's targets
  lustre.iokit.lustre_targets_info:
  register: lustre

- name: Survey every OST that is up
  lustre.iokit.obdfilter_survey:
    targets: "{{ lustre.osts | selectattr('status', 'equalto', 'UP') | map(attribute='name') | list }}"
  when: lustre.osts | length > 0

- name: Refuse to start while an aborted run's echo clients are there
  ansible.builtin.assert:
    that: lustre.leftovers | length == 0
    fail_msg: "Leftover echo clients: {{ lustre.leftovers | map(attribute='name') | join(', ') }}"
'''

RETURN = r'''
lctl_found:
  description: Whether C(lctl) is installed; without it every list is empty and RV(lustre_version) is null.
  returned: always
  type: bool
lustre_version:
  description: The Lustre version, from C(lctl get_param -n version) (the bare C(2.15.5) and the C(lustre:) prefixed forms).
  returned: always
  type: str
  sample: 2.15.5
osts:
  description:
    - Object storage targets served by this node (C(obdfilter) devices), each with C(name), C(fsname),
      C(target_index) (the OST index), C(device_index) (its number in C(lctl dl), which can change),
      C(status) (V(UP), V(AT), V(ST), V(IN)), C(uuid) and C(refcount).
    - C(mount_device) is the block device the target is mounted from (V(/dev/sdc), V(/dev/mapper/ost3)), from
      the target's C(lustre) mount in C(/proc/mounts) (its C(svname=) option), else from its C(osd-*.mntdev)
      parameter; null when neither names a device under C(/dev) (a ZFS dataset, or a target not mounted here).
      C(mount_point) is where it is mounted, null when not known from C(/proc/mounts).
  returned: always
  type: list
  elements: dict
  sample: [{name: testfs-OST0000, fsname: testfs, target_index: 0, device_index: 14, status: UP,
            uuid: testfs-OST0000_UUID, refcount: 5, mount_device: /dev/sdc, mount_point: /lustre/testfs/ost0}]
mdts:
  description: Metadata targets served by this node (C(mdt) devices), with the same keys as RV(osts).
  returned: always
  type: list
  elements: dict
echo_clients:
  description:
    - Every echo device (C(echo_client) devices, and C(osc)/C(obdecho) devices named like an I/O-kit
      leftover), each with C(name), C(type), C(status), C(device_index), C(ours) (listed in the node state),
      C(run_id) and C(target) (from the node state, null when not ours) and C(leftover) (named like the
      I/O kit's and not ours).
  returned: always
  type: list
  elements: dict
leftovers:
  description: The entries of RV(echo_clients) with C(leftover=true).
  returned: always
  type: list
  elements: dict
modules:
  description:
    - The echo module C(obdecho) with C(name), C(loaded), C(use_count), C(used_by) and C(ours) (loaded by
      this collection, according to the node state).
  returned: always
  type: list
  elements: dict
  sample: [{name: obdecho, loaded: true, use_count: 1, used_by: [], ours: true}]
devices:
  description: The whole C(lctl dl), as the C(parse_lctl_dl) filter returns it.
  returned: always
  type: list
  elements: dict
warnings_node_state:
  description: Why the node state could not be read (ownership is then unknown and every RV(echo_clients) is not ours).
  returned: when the node state file is unreadable
  type: str
'''

import re

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.lustre.iokit.plugins.module_utils import payload
from ansible_collections.lustre.iokit.plugins.module_utils import lctl as lctl_utils
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.proc_mounts import parse_proc_mounts
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState, NodeStateError
from ansible_collections.lustre.iokit.plugins.module_utils.runner import Runner

TARGET_TYPES = {'obdfilter': 'osts', 'mdt': 'mdts'}
ECHO_MODULES = (lctl_utils.ECHO_MODULE,)
_TARGET_NAME_RE = re.compile(r'^(?P<fsname>.+)-(?:OST|MDT)(?P<index>[0-9a-fA-F]{4,})$')
PROC_MOUNTS = '/proc/mounts'
# osd-ldiskfs.testfs-OST0000.mntdev=/dev/sdc (osd-zfs gives a dataset, pool/ost0, which is not a block device)
_MNTDEV_RE = re.compile(r'^osd-[^.]+\.(?P<target>.+)\.mntdev=(?P<device>.*)$')


def _block_device(device):
    return device if device and device.startswith('/dev/') else None


def server_mounts(text):
    """``{target: (device, mount_point)}`` of the Lustre server mounts in a mount table (``svname=`` names the target)."""
    mounts = {}
    for mount in parse_proc_mounts(text):
        if mount['type'] != 'lustre':
            continue
        for option in mount['options']:
            if option.startswith('svname='):
                mounts[option[len('svname='):]] = (mount['device'], mount['mount_point'])
    return mounts


def parse_mntdev(text):
    """``{target: device}`` from C(lctl get_param osd-*.*.mntdev)."""
    devices = {}
    for line in text.splitlines():
        match = _MNTDEV_RE.match(line.strip())
        if match:
            devices[match.group('target')] = match.group('device').strip()
    return devices


def add_mount_devices(targets, mounts, mntdevs):
    """Give each target its ``mount_device`` (a block device or None) and ``mount_point``: /proc/mounts first."""
    for target in targets:
        device, mount_point = mounts.get(target['name'], (None, None))
        target['mount_device'] = _block_device(device) or _block_device(mntdevs.get(target['name']))
        target['mount_point'] = mount_point
    return targets


def read_mount_table(path=PROC_MOUNTS):
    try:
        with open(path, 'rb') as handle:
            return handle.read()
    except (IOError, OSError):
        return b''


def describe_target(device):
    match = _TARGET_NAME_RE.match(device['name'])
    return {
        'name': device['name'],
        'fsname': match.group('fsname') if match else None,
        'target_index': int(match.group('index'), 16) if match else None,
        'device_index': device['index'],
        'status': device['status'],
        'uuid': device['uuid'],
        'refcount': device['refcount'],
    }


def describe_echo_devices(devices, recorded):
    echo = []
    for device in devices:
        if device['type'] != 'echo_client' and not lctl_utils.is_echo_leftover(device):
            continue
        entry = recorded.get(device['name'])
        echo.append({
            'name': device['name'],
            'type': device['type'],
            'status': device['status'],
            'device_index': device['index'],
            'ours': entry is not None,
            'run_id': entry.get('run_id') if entry else None,
            'target': entry.get('target') if entry else None,
            'leftover': entry is None and lctl_utils.is_echo_leftover(device),
        })
    return echo


def describe_modules(loaded, our_modules):
    described = []
    for name in ECHO_MODULES:
        module = loaded.get(name)
        described.append({
            'name': name,
            'loaded': module is not None,
            'use_count': module['use_count'] if module else 0,
            'used_by': module['used_by'] if module else [],
            'ours': name in our_modules,
        })
    return described


def main():
    # First: a module killed later still leaves a payload directory the cleanup knows is stale.
    payload.claim()
    module = AnsibleModule(argument_spec=dict(workdir=dict(type='path', default='/tmp/lustre-iokit')),
                           supports_check_mode=True)
    result = {'changed': False, 'lctl_found': False, 'lustre_version': None, 'osts': [], 'mdts': [],
              'echo_clients': [], 'leftovers': [], 'modules': [], 'devices': []}
    lctl_path = module.get_bin_path('lctl')
    recorded = {}
    our_modules = set()
    try:
        state = NodeState(module.params['workdir']).read()
        recorded = dict((entry['name'], entry) for entry in state['echo_clients'])
        our_modules = set(lctl_utils.canonical_module(entry['name']) for entry in state['modules'])
    except NodeStateError as exc:
        result['warnings_node_state'] = str(exc)
        module.warn(str(exc))
    runner = Runner()
    try:
        loaded = lctl_utils.loaded_modules(runner)
    except lctl_utils.LctlError as exc:
        module.warn('lsmod: %s' % exc)
        loaded = {}
    result['modules'] = describe_modules(loaded, our_modules)
    if lctl_path is None:
        module.exit_json(**result)
    lctl = lctl_utils.Lctl(runner, lctl_path)
    result['lctl_found'] = True
    try:
        devices = lctl.devices()
        result['lustre_version'] = lctl.version()
    except lctl_utils.LctlError as exc:
        module.fail_json(msg=str(exc), command=exc.command, stderr=exc.stderr, rc=exc.rc)
    result['devices'] = devices
    for device in devices:
        kind = TARGET_TYPES.get(device['type'])
        if kind:
            result[kind].append(describe_target(device))
    if result['osts'] or result['mdts']:
        mntdev = lctl.run(['get_param', 'osd-*.*.mntdev'], check=False)
        add_mount_devices(result['osts'] + result['mdts'], server_mounts(read_mount_table()),
                          parse_mntdev(mntdev.stdout) if mntdev.rc == 0 else {})
    result['echo_clients'] = describe_echo_devices(devices, recorded)
    result['leftovers'] = [echo for echo in result['echo_clients'] if echo['leftover']]
    module.exit_json(**result)


if __name__ == '__main__':
    main()
