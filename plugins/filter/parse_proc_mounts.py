# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: parse_proc_mounts
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Parse the mount table (/proc/mounts) and mark the Lustre client mounts
description:
  - Reads C(/proc/mounts) (or C(/proc/self/mounts), C(/etc/mtab)), one mount per line with its device, mount
    point, type and options. Octal escapes (a space is C(\040)) in the device and the mount point are decoded.
  - A mount of type C(lustre) is a Lustre client mount; its file-system name is the part of the device after
    C(:/). The simulator's client mount (type C(fuse.lustre-sim), device C(lustre-sim:/<fsname>)) is one too.
  - Input that is not text raises an error naming the filter.
options:
  _input:
    description: The mount table, as one string.
    type: string
    required: true
'''

EXAMPLES = r'''
- name: Read the client's mount table
  ansible.builtin.slurp:
    src: /proc/mounts
  register: mounts

- name: The Lustre client mounts of this host
  ansible.builtin.debug:
    msg: "{{ mounts.content | b64decode | lustre.iokit.parse_proc_mounts | selectattr('lustre') | map(attribute='mount_point') }}"
'''

RETURN = r'''
_value:
  description: One record per mount, in the order of the table.
  type: list
  elements: dict
  contains:
    device:
      description: The mounted device, for Lustre C(<MGS NIDs>:/<fsname>).
      type: str
    mount_point:
      description: Where it is mounted.
      type: str
    type:
      description: The file-system type, such as C(lustre).
      type: str
    options:
      description: The mount options.
      type: list
      elements: str
    lustre:
      description: Whether this is a Lustre client mount (type C(lustre), or the simulator's C(fuse.lustre-sim)).
      type: bool
    fsname:
      description: The Lustre file-system name from the device, null when not given.
      type: str
'''

from ansible_collections.lustre.iokit.plugins.module_utils.parsers.proc_mounts import parse_proc_mounts
from ansible_collections.lustre.iokit.plugins.plugin_utils.parser_filters import make_parser_filter


class FilterModule(object):
    def filters(self):
        return {'parse_proc_mounts': make_parser_filter('parse_proc_mounts', parse_proc_mounts)}
