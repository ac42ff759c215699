# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parser for the mount table: ``/proc/mounts`` (``/proc/self/mounts``, ``/etc/mtab``).

One mount per line, ``device mount_point type options dump pass``, with
spaces, tabs, newlines and backslashes in the first two fields escaped as
octal (``\\040``).  A Lustre client mount has type ``lustre`` and a device
``<MGS NIDs>:/<fsname>``; the simulator's client (lustre-sim) has type
``fuse.lustre-sim`` and a device ``lustre-sim:/<fsname>``.  Each record says whether it is a
Lustre client mount and, when the device gives it, its file-system name.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import ensure_text

LUSTRE_CLIENT_TYPES = ('lustre', 'fuse.lustre-sim')

_OCTAL_RE = re.compile(r'\\([0-7]{3})')


def _unescape(field):
    return _OCTAL_RE.sub(lambda match: chr(int(match.group(1), 8)), field)


def parse_proc_mounts(text):
    """``[{device, mount_point, type, options, lustre, fsname}]`` in the order of the table (the last one is on top)."""
    text = ensure_text(text, 'proc_mounts')
    mounts = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 4 or not fields[1].startswith('/'):
            continue
        device, mount_point, fstype = _unescape(fields[0]), _unescape(fields[1]), fields[2]
        fsname = None
        if fstype in LUSTRE_CLIENT_TYPES and ':/' in device:
            fsname = device.rsplit(':/', 1)[1].strip('/') or None
        mounts.append({'device': device, 'mount_point': mount_point, 'type': fstype,
                       'options': fields[3].split(','), 'lustre': fstype in LUSTRE_CLIENT_TYPES, 'fsname': fsname})
    return mounts
