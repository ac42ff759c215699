# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Checks that a device may be overwritten by a survey (docs/architecture.md section 8).

A device is refused when it

* does not exist or is not a block or character device (``sgp_dd of=/dev/sg0``
  with no such node silently creates a regular file),
* or one of its partitions is mounted or used as swap,
* or it or one of its partitions has holders (device mapper, MD RAID, LVM),
* carries a file-system, RAID or partition-table signature found by
  ``blkid -p`` or ``wipefs -n -J`` (only this check is waived by
  ``allow_signatures``),
* is listed twice (two surveys of one device would overlap).

A character device (an sg node) is checked through the block device that
sysfs shows behind it.  Every refusal names the device, the reason and what
to do.  Signature probes run through the runner (the test seam); sysfs and
``/proc`` are read from configurable roots so tests can give a fake tree.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import stat

BLOCK = 'block'
CHAR = 'char'


class DeviceRefused(Exception):
    """One or more devices failed the safety checks; ``refusals`` maps each device to its reasons."""

    def __init__(self, refusals):
        self.refusals = dict(refusals)
        lines = []
        for device, reasons in sorted(self.refusals.items()):
            lines.append('refusing %s: %s' % (device, '; '.join(reasons)))
        super(DeviceRefused, self).__init__('\n'.join(lines))


def _read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except (IOError, OSError):
        return None


def _listdir(path):
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def _unescape_mount_field(field):
    # mountinfo escapes space, tab, newline and backslash as \ooo
    out, index = [], 0
    while index < len(field):
        octal = field[index + 1:index + 4]
        if field[index] == '\\' and len(octal) == 3 and octal.isdigit():
            out.append(chr(int(octal, 8)))
            index += 4
        else:
            out.append(field[index])
            index += 1
    return ''.join(out)


def parse_mountinfo(text):
    """``/proc/self/mountinfo`` as a list of ``{'majmin', 'mountpoint', 'fstype', 'source'}``."""
    mounts = []
    for line in (text or '').splitlines():
        fields = line.split()
        if '-' not in fields or len(fields) < 5:
            continue
        separator = fields.index('-')
        tail = fields[separator + 1:]
        mounts.append({
            'majmin': fields[2],
            'mountpoint': _unescape_mount_field(fields[4]),
            'fstype': tail[0] if tail else None,
            'source': _unescape_mount_field(tail[1]) if len(tail) > 1 else None,
        })
    return mounts


def parse_blkid_export(text):
    """``blkid -p -o export`` output as a dict (``TYPE``, ``PTTYPE``, ``USAGE``, ...)."""
    values = {}
    for line in (text or '').splitlines():
        key, sep, value = line.partition('=')
        if sep and key.strip():
            values[key.strip()] = value.strip()
    return values


def parse_wipefs_json(text):
    """``wipefs -n -J`` output as a list of ``{'offset', 'type'}``; empty output means none."""
    if not (text or '').strip():
        return []
    data = json.loads(text)
    return [{'offset': item.get('offset'), 'type': item.get('type')}
            for item in data.get('signatures', []) if isinstance(item, dict)]


class DeviceSafety:
    """Runs the checks against one node: sysfs under ``sysfs_root``, mounts from ``mountinfo_path``."""

    def __init__(self, runner, sysfs_root='/sys', mountinfo_path='/proc/self/mountinfo',
                 swaps_path='/proc/swaps', dev_root='/dev', stat_func=os.stat):
        self.runner = runner
        self.sysfs_root = sysfs_root
        self.mountinfo_path = mountinfo_path
        self.swaps_path = swaps_path
        self.dev_root = dev_root
        self.stat_func = stat_func

    # -- identification ------------------------------------------------------

    def identify(self, device):
        """Resolve ``device`` (symlinks followed) to ``{'device', 'path', 'kind', 'name', 'majmin'}``.

        Raises DeviceRefused when it does not exist or is not a device node.
        """
        path = os.path.realpath(device)
        try:
            info = self.stat_func(path)
        except OSError:
            raise DeviceRefused({device: ['it does not exist (resolved to %s); check the device list '
                                          '(sgp_dd would create a regular file there)' % path]})
        if stat.S_ISBLK(info.st_mode):
            kind = BLOCK
        elif stat.S_ISCHR(info.st_mode):
            kind = CHAR
        else:
            raise DeviceRefused({device: ['%s is not a block or character device; give a device such as '
                                          '/dev/sdb or /dev/sg2' % path]})
        majmin = '%d:%d' % (os.major(info.st_rdev), os.minor(info.st_rdev))
        link = os.path.join(self.sysfs_root, 'dev', kind, majmin)
        name = os.path.basename(os.path.realpath(link)) if os.path.exists(link) else os.path.basename(path)
        return {'device': device, 'path': path, 'kind': kind, 'name': name, 'majmin': majmin}

    def block_behind(self, identity):
        """The block device name that a character (sg) device drives, or None."""
        if identity['kind'] == BLOCK:
            return identity['name']
        names = _listdir(os.path.join(self.sysfs_root, 'class', 'scsi_generic', identity['name'], 'device', 'block'))
        return names[0] if names else None

    def partitions(self, name):
        """Partition names of block device ``name`` (sysfs subdirectories with a ``partition`` file)."""
        base = os.path.join(self.sysfs_root, 'class', 'block', name)
        return [entry for entry in _listdir(base)
                if os.path.isfile(os.path.join(base, entry, 'partition'))]

    def _majmin(self, name):
        value = _read(os.path.join(self.sysfs_root, 'class', 'block', name, 'dev'))
        return value.strip() if value else None

    # -- checks ------------------------------------------------------------------

    def usage_reasons(self, name, path):
        """Reasons why block device ``name`` (or a partition of it) is in use: mounts, swap, holders."""
        reasons = []
        names = [name] + self.partitions(name)
        majmins = {}
        for each in names:
            majmin = self._majmin(each)
            if majmin:
                majmins[majmin] = each
        dev_paths = {os.path.join(self.dev_root, each): each for each in names}
        dev_paths[path] = name
        for mount in parse_mountinfo(_read(self.mountinfo_path)):
            source = mount['source']
            source_path = os.path.realpath(source) if source and source.startswith('/') else source
            holder = majmins.get(mount['majmin']) or dev_paths.get(source_path)
            if holder:
                reasons.append('%s is mounted at %s (%s); unmount it first' % (
                    '/dev/' + holder if holder != name else path, mount['mountpoint'], mount['fstype']))
        for line in (_read(self.swaps_path) or '').splitlines()[1:]:
            fields = line.split()
            if fields and dev_paths.get(os.path.realpath(fields[0])):
                reasons.append('%s is in use as swap; swapoff it first' % fields[0])
        for each in names:
            holders = _listdir(os.path.join(self.sysfs_root, 'class', 'block', each, 'holders'))
            if holders:
                reasons.append('%s is held by %s (device mapper, MD RAID or LVM); remove those first' % (
                    '/dev/' + each if each != name else path, ', '.join(holders)))
        return reasons

    def signatures(self, path):
        """Signatures found on ``path``: ``(list of descriptions, probe problem or None)``."""
        found = []
        blkid = self.runner.run(['blkid', '-p', '-o', 'export', path])
        if blkid.rc == 0:
            values = parse_blkid_export(blkid.stdout)
            for key in ('TYPE', 'PTTYPE'):
                if values.get(key):
                    found.append('%s %s (blkid)' % ('partition table' if key == 'PTTYPE' else 'signature', values[key]))
            if not found:
                found.append('blkid found: %s' % ' '.join(sorted('%s=%s' % item for item in values.items())))
        elif blkid.rc != 2:
            return found, 'blkid -p %s failed (rc %s): %s' % (path, blkid.rc, blkid.stderr.strip())
        wipefs = self.runner.run(['wipefs', '--no-act', '--json', path])
        if wipefs.rc != 0:
            return found, 'wipefs -n -J %s failed (rc %s): %s' % (path, wipefs.rc, wipefs.stderr.strip())
        try:
            items = parse_wipefs_json(wipefs.stdout)
        except ValueError:
            return found, 'wipefs -n -J %s printed no JSON' % path
        for item in items:
            found.append('signature %s at offset %s (wipefs)' % (item['type'], item['offset']))
        return found, None

    def check(self, device, allow_signatures=False, destructive=True):
        """Check one device; return its identity (plus ``block``, ``signatures``) or raise DeviceRefused.

        ``destructive=False`` (a read-only survey) only checks that the device
        exists and is a device node: reading a mounted device harms nothing.
        """
        identity = self.identify(device)
        reasons = []
        block = self.block_behind(identity)
        identity['block'] = block
        identity['signatures'] = []
        if not destructive:
            return identity
        block_path = identity['path'] if identity['kind'] == BLOCK else (
            os.path.join(self.dev_root, block) if block else None)
        if block is None:
            if not allow_signatures:
                reasons.append('no block device found behind %s in sysfs, so it cannot be checked for mounts, '
                               'holders or signatures; give the block device instead' % identity['path'])
        else:
            reasons.extend(self.usage_reasons(block, block_path))
            signatures, problem = self.signatures(block_path)
            identity['signatures'] = signatures
            if not allow_signatures:
                if problem:
                    reasons.append('cannot probe for signatures (%s); install util-linux (blkid, wipefs) '
                                   'or set allow_signatures after checking the device by hand' % problem)
                if signatures:
                    reasons.append('it carries data: %s; if this data may be destroyed, wipe it (wipefs -a) '
                                   'or set allow_signatures' % ', '.join(signatures))
        if reasons:
            raise DeviceRefused({device: reasons})
        return identity

    def check_all(self, devices, allow_signatures=False, destructive=True):
        """Check every device before any I/O; raise one DeviceRefused naming every refused device."""
        refusals = {}
        identities = []
        seen = {}
        for device in devices:
            try:
                identity = self.check(device, allow_signatures, destructive)
            except DeviceRefused as exc:
                refusals.update(exc.refusals)
                continue
            key = identity['block'] or identity['path']
            if key in seen:
                refusals[device] = ['it is the same device as %s; list each device once' % seen[key]]
                continue
            seen[key] = device
            identities.append(identity)
        if refusals:
            raise DeviceRefused(refusals)
        return identities
