# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: parse_lctl_dl
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Parse the Lustre device list (lctl dl) into device records
description:
  - Reads the output of C(lctl dl) / C(lctl device_list), C(lctl dl -t) (peer NID of osc/mdc devices),
    C(lctl get_param -n devices) (no index padding) and the YAML of C(lctl dl -y) / C(lctl get_param -y devices).
  - "Output gathered with pdsh (C(oss01:   0 UP ...)) or grouped by C(dshbak -c) keeps the host name in RV(_value[].host)."
  - A line wrapped with a trailing backslash continues on the next line. Prompts, C(lctl >) commands,
    C(...) and other lines are skipped; text without any device line gives an empty list.
  - Input that is not text raises an error naming the filter.
options:
  _input:
    description: The device list text, as one string.
    type: string
    required: true
'''

EXAMPLES = r'''
- name: List the devices of an OSS
  ansible.builtin.command: lctl dl
  register: lctl_dl
  changed_when: false

- name: Names of the OSTs that are set up on this server
  ansible.builtin.set_fact:
    ost_names: >-
      {{ lctl_dl.stdout | lustre.iokit.parse_lctl_dl
         | selectattr('type', 'equalto', 'obdfilter')
         | selectattr('status', 'equalto', 'UP')
         | map(attribute='name') | list }}

- name: Refuse to start when an echo_client is left over from an aborted survey
  ansible.builtin.assert:
    that:
      - lctl_dl.stdout | lustre.iokit.parse_lctl_dl | selectattr('type', 'equalto', 'echo_client') | list | length == 0

- name: Parse a pdsh capture saved earlier
  ansible.builtin.debug:
    msg: "{{ lookup('file', 'pdsh-lctl-dl.txt') | lustre.iokit.parse_lctl_dl | groupby('host') }}"
'''

RETURN = r'''
_value:
  description: One record per device line, in the order printed. A value the text does not give is null.
  type: list
  elements: dict
  contains:
    index:
      description: Device number (reused after detach; do not cache it across runs).
      type: int
    status:
      description: C(UP) (set up), C(AT) (attached only), C(ST) (stopping), C(IN) (inactive) or C(--).
      type: str
    type:
      description: Device type, for example C(obdfilter), C(osc), C(mdt), C(echo_client).
      type: str
    name:
      description: Device name, for example C(testfs-OST0000).
      type: str
    uuid:
      description: Device UUID.
      type: str
    refcount:
      description: Reference count of the device.
      type: int
    nid:
      description: Peer NID appended by C(lctl dl -t) to osc/mdc lines, null otherwise.
      type: str
    host:
      description: Host name from a pdsh C(host:) prefix or a C(dshbak -c) header, null otherwise.
      type: str
'''

from ansible_collections.lustre.iokit.plugins.module_utils.parsers.lctl_dl import parse_lctl_dl
from ansible_collections.lustre.iokit.plugins.plugin_utils.parser_filters import make_parser_filter


class FilterModule(object):
    def filters(self):
        return {'parse_lctl_dl': make_parser_filter('parse_lctl_dl', parse_lctl_dl)}
