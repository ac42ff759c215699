#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: block_queue
short_description: Read and set the request-queue settings of whole block devices
version_added: 0.1.0
description:
  - Reads the queue settings of whole block devices in C(/sys/class/block/NAME/queue) - the active C(scheduler) and
    the schedulers the device offers, C(nr_requests), C(max_sectors_kb), C(max_hw_sectors_kb), C(read_ahead_kb) -
    and sets the ones asked for, as the Lustre manual's I/O kit chapter ("Tuning Linux storage devices") advises.
  - With O(devices), the wanted settings are worked out per device. O(scheduler) is a preference list, the first
    one the device offers is set (none offered leaves the scheduler as it is, with a warning); O(max_sectors_kb) is
    capped by the device's C(max_hw_sectors_kb).
  - With O(settings), the values given are written exactly, to put back values read before (RV(devices[].before)).
  - A value is written only when it differs from the current one; the module reports a change only when a value read
    afterwards differs from the one read before. The scheduler is written first, as changing it resets
    C(nr_requests).
  - A write the kernel refuses fails the module naming the device, the setting and the value, after putting back
    what the same call wrote before (on every device), so that nothing is left half-done.
author:
  - lustre.iokit contributors (@lustre)
extends_documentation_fragment:
  - lustre.iokit.attributes.node_setting
attributes:
  check_mode:
    details:
      - Reads the settings and returns what would be written in RV(devices[].after); nothing is written. After a
        scheduler change the kernel may reset C(nr_requests), which check mode cannot foresee.
options:
  devices:
    description:
      - Whole block devices (C(/dev/sdb), C(/dev/disk/by-id/...)); links are resolved. A partition or a path
        without a request queue fails the module, naming it.
      - Mutually exclusive with O(settings).
    type: list
    elements: path
    default: []
  scheduler:
    description: I/O schedulers in order of preference; the first one a device offers is set. V([]) leaves it.
    type: list
    elements: str
    default: []
  nr_requests:
    description: Request queue depth to set (a positive number); unset leaves it.
    type: int
  max_sectors_kb:
    description:
      - V(max) for the device's C(max_hw_sectors_kb), or a positive number of KiB, capped by C(max_hw_sectors_kb);
        unset leaves it.
    type: raw
  read_ahead_kb:
    description: Read-ahead in KiB to set; unset leaves it.
    type: int
  settings:
    description:
      - Values to write exactly, by device - a kernel name (V(sdb)) or a path - each a dict of C(scheduler),
        C(nr_requests), C(max_sectors_kb), C(read_ahead_kb) (any of them). Used to put back values saved before.
      - A device given by kernel name that no longer exists is skipped with a warning and listed in RV(gone).
      - Mutually exclusive with O(devices); O(scheduler), O(nr_requests), O(max_sectors_kb) and O(read_ahead_kb)
        are not used with it.
    type: dict
notes:
  - The settings last until the device goes away or the node reboots; the C(lustre.iokit.node_prep) role keeps
    them with a udev rule and saves the values found before, which it puts back with O(settings).
seealso:
  - module: lustre.iokit.kernel_module
    description: Loads the C(sg) module that the node_prep role prepares beside these queue settings.
'''

EXAMPLES = r'''
- name: Tune the disks of the sgpdd survey
  lustre.iokit.block_queue:
    devices: [/dev/sdb, /dev/disk/by-id/wwn-0x5000c500a1b2c3d4]
    scheduler: [mq-deadline, deadline]
    max_sectors_kb: max
    nr_requests: 64
  register: tuned

- name: Put back what the disks had before
  lustre.iokit.block_queue:
    settings: "{{ dict(tuned.devices | map(attribute='name') | zip(tuned.devices | map(attribute='before'))) }}"
'''

RETURN = r'''
devices:
  description: One entry per device, in the order given (a device given twice appears once).
  returned: always
  type: list
  elements: dict
  contains:
    device:
      description: The device as given (a path, or with O(settings) the key).
      type: str
      sample: /dev/disk/by-id/wwn-0x5000c500a1b2c3d4
    name:
      description: The device's kernel name.
      type: str
      sample: sdb
    wanted:
      description: The settings the module aimed at (only those asked for; C(max_sectors_kb) after capping).
      type: dict
      sample: {scheduler: mq-deadline, nr_requests: 64, max_sectors_kb: 1280}
    before:
      description:
        - The settings read before any change - C(scheduler) (the active one), C(schedulers_offered),
          C(nr_requests), C(max_sectors_kb), C(max_hw_sectors_kb), C(read_ahead_kb).
      type: dict
      sample: {scheduler: none, schedulers_offered: [mq-deadline, kyber, none], nr_requests: 256,
               max_sectors_kb: 512, max_hw_sectors_kb: 1280, read_ahead_kb: 128}
    after:
      description: The same settings read afterwards (in check mode, as they would be).
      type: dict
      sample: {scheduler: mq-deadline, schedulers_offered: [mq-deadline, kyber, none], nr_requests: 64,
               max_sectors_kb: 1280, max_hw_sectors_kb: 1280, read_ahead_kb: 128}
    changed:
      description: Whether a setting of this device changed (in check mode, would change).
      type: bool
gone:
  description: Devices of O(settings), given by kernel name, that no longer exist (nothing written to them).
  returned: always
  type: list
  elements: str
  sample: [sdc]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.lustre.iokit.plugins.module_utils import payload
from ansible_collections.lustre.iokit.plugins.module_utils.block_queue import argument_spec, manage_block_queue


def main():
    # First: a module killed later still leaves a payload directory the cleanup knows is stale.
    payload.claim()
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    manage_block_queue(module)


if __name__ == '__main__':
    main()
