# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parser for the Lustre device list: ``lctl dl`` and its relatives.

Reads, in any mix:

* ``lctl dl`` / ``lctl device_list`` / ``cat .../lustre/devices``: one device
  per line, ``%3d %s %s %s %s %d`` (index, status, type, name, uuid,
  refcount); ``lctl get_param -n devices`` prints the same without padding;
* ``lctl dl -t``: a peer NID appended to osc/mdc lines;
* ``lctl dl -y`` / ``lctl get_param -y devices``: YAML, ``devices:`` then
  items with the keys index, status, type, name, uuid, refcount;
* output gathered with pdsh (``oss01:   0 UP ...``) or grouped by
  ``dshbak -c`` (a dashed box around the host name): the host is kept.

A line wrapped with a trailing backslash continues on the next line.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import (
    clean_lines,
    ensure_text,
    join_backslash_continuations,
    to_int,
)

STATUSES = ('UP', 'AT', 'ST', 'IN', '--')

_DEVICE_RE = re.compile(
    r'^(?P<index>\d+)\s+(?P<status>UP|AT|ST|IN|--)\s+(?P<type>\S+)\s+(?P<name>\S+)\s+(?P<uuid>\S+)'
    r'(?:\s+(?P<refcount>\d+)(?:\s+(?P<nid>\S+))?)?$')
# pdsh puts "host: " in front of each line of a remote command's output.
_PDSH_PREFIX_RE = re.compile(r'^(?P<host>[A-Za-z0-9][A-Za-z0-9_.\-]*):\s+(?P<rest>\S.*)$')
# A client UUID is 36 characters; copies of the list (the Lustre manual among
# them) sometimes lose the space before the refcount, gluing it on the UUID.
_GLUED_UUID_RE = re.compile(
    r'^(?P<uuid>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?P<refcount>\d{1,4})$')
_DSHBAK_RULE_RE = re.compile(r'^-{4,}$')
_HOSTNAME_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.\-]*$')

_YAML_START_RE = re.compile(r'^devices\s*[:=]\s*$')
_YAML_ITEM_RE = re.compile(r'^-\s+(?P<key>[a-z_]+)\s*:\s*(?P<value>.*)$')
_YAML_KEY_RE = re.compile(r'^(?P<key>[a-z_]+)\s*:\s*(?P<value>.*)$')
_YAML_KEYS = ('index', 'status', 'type', 'name', 'uuid', 'refcount', 'nid')


def _record(index, status, device_type, name, uuid, refcount, nid, host):
    return {
        'index': index,
        'status': status,
        'type': device_type,
        'name': name,
        'uuid': uuid,
        'refcount': refcount,
        'nid': nid,
        'host': host,
    }


def _parse_device_line(line, host):
    match = _DEVICE_RE.match(line)
    if not match:
        return None
    uuid = match.group('uuid')
    refcount = to_int(match.group('refcount'))
    if refcount is None:
        glued = _GLUED_UUID_RE.match(uuid)
        if not glued:
            return None
        uuid = glued.group('uuid')
        refcount = int(glued.group('refcount'))
    return _record(int(match.group('index')), match.group('status'), match.group('type'),
                   match.group('name'), uuid, refcount, match.group('nid'), host)


def _split_pdsh_prefix(line):
    """Return (host, rest) when ``line`` is a pdsh-prefixed device or YAML line."""
    prefixed = _PDSH_PREFIX_RE.match(line)
    if not prefixed:
        return None, line
    rest = prefixed.group('rest').strip()
    if _DEVICE_RE.match(rest) or _YAML_START_RE.match(rest) or _YAML_ITEM_RE.match(rest) or _YAML_KEY_RE.match(rest):
        return prefixed.group('host'), rest
    return None, line


def _yaml_value(key, value):
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in '\'"':
        value = value[1:-1]
    if key in ('index', 'refcount'):
        return to_int(value)
    return value if value not in ('', '~', 'null') else None


def _finish_yaml_item(item, devices):
    if item is None:
        return
    if item.get('index') is None or item.get('status') is None:
        return
    devices.append(_record(item.get('index'), item.get('status'), item.get('type'), item.get('name'),
                           item.get('uuid'), item.get('refcount'), item.get('nid'), item.get('host')))


def parse_lctl_dl(text):
    """Parse a Lustre device list into a list of device records."""
    text = ensure_text(text, 'parse_lctl_dl')
    lines = join_backslash_continuations(clean_lines(text))
    devices = []
    host = None
    in_yaml = False
    yaml_item = None
    position = 0
    while position < len(lines):
        line_host, line = _split_pdsh_prefix(lines[position])
        position += 1
        line_host = line_host if line_host is not None else host
        # dshbak -c: ---- / host / ---- announces the host of the lines below.
        if (_DSHBAK_RULE_RE.match(line) and position + 1 < len(lines)
                and _HOSTNAME_RE.match(lines[position]) and _DSHBAK_RULE_RE.match(lines[position + 1])):
            _finish_yaml_item(yaml_item, devices)
            yaml_item = None
            in_yaml = False
            host = lines[position]
            position += 2
            continue
        if _YAML_START_RE.match(line):
            _finish_yaml_item(yaml_item, devices)
            yaml_item = None
            in_yaml = True
            continue
        if in_yaml:
            item = _YAML_ITEM_RE.match(line)
            if item:
                _finish_yaml_item(yaml_item, devices)
                yaml_item = {'host': line_host}
                if item.group('key') in _YAML_KEYS:
                    yaml_item[item.group('key')] = _yaml_value(item.group('key'), item.group('value'))
                continue
            key = _YAML_KEY_RE.match(line)
            if key and yaml_item is not None and key.group('key') in _YAML_KEYS:
                yaml_item[key.group('key')] = _yaml_value(key.group('key'), key.group('value'))
                continue
            _finish_yaml_item(yaml_item, devices)
            yaml_item = None
            in_yaml = False
        if not line:
            continue
        device = _parse_device_line(line, line_host)
        if device is not None:
            devices.append(device)
    _finish_yaml_item(yaml_item, devices)
    return devices
