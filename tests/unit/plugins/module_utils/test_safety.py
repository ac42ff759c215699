# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Device safety checks against a fake sysfs tree, fake /proc files and a fake runner."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import safety
from ansible_collections.lustre.iokit.plugins.module_utils.runner import CommandResult

EXT4_BLKID = 'LABEL=ost0\nUUID=1234\nVERSION=1.0\nBLOCK_SIZE=4096\nTYPE=ext4\nUSAGE=filesystem\n'
EXT4_WIPEFS = '{"signatures":[{"device":"loop1","offset":"0x438","type":"ext4","uuid":"1234","label":"ost0"}]}'


class ProbeRunner:
    """blkid/wipefs answers per device path; records every command."""

    def __init__(self, blkid=None, wipefs=None):
        self.blkid = blkid or {}
        self.wipefs = wipefs or {}
        self.commands = []

    def run(self, argv, env=None, cwd=None):
        self.commands.append(list(argv))
        path = argv[-1]
        if argv[0] == 'blkid':
            rc, out = self.blkid.get(path, (2, ''))
        else:
            rc, out = self.wipefs.get(path, (0, ''))
        return CommandResult(argv, rc, out, 'probe failed' if rc not in (0, 2) else '', 0.01)


class Node:
    """A fake node: device nodes (by path -> (kind, major, minor)), sysfs, mountinfo, swaps."""

    def __init__(self, root):
        self.root = root
        self.sysfs = root / 'sys'
        self.devices = {}
        self.mountinfo = root / 'mountinfo'
        self.swaps = root / 'swaps'
        self.mountinfo.write_text('22 1 0:21 / /proc rw - proc proc rw\n')
        self.swaps.write_text('Filename\tType\tSize\tUsed\tPriority\n')

    def block(self, name, major, minor, parent=None):
        base = self.sysfs / 'class' / 'block' / (parent or name)
        if parent:
            base = base / name
            (base / 'partition').parent.mkdir(parents=True, exist_ok=True)
            (base / 'partition').write_text('1\n')
            (self.sysfs / 'class' / 'block' / name).parent.mkdir(parents=True, exist_ok=True)
            os.symlink(str(base), str(self.sysfs / 'class' / 'block' / name))
        (base / 'holders').mkdir(parents=True, exist_ok=True)
        (base / 'dev').write_text('%d:%d\n' % (major, minor))
        link = self.sysfs / 'dev' / 'block' / ('%d:%d' % (major, minor))
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(str(base), str(link))
        self.devices['/dev/' + name] = (stat.S_IFBLK, major, minor)

    def sg(self, name, major, minor, block):
        base = self.sysfs / 'class' / 'scsi_generic' / name
        (base / 'device' / 'block' / block).mkdir(parents=True)
        link = self.sysfs / 'dev' / 'char' / ('%d:%d' % (major, minor))
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(str(base), str(link))
        self.devices['/dev/' + name] = (stat.S_IFCHR, major, minor)

    def stat(self, path):
        if path not in self.devices:
            if path in ('/dev/sg0-regular',):
                return os.stat_result((stat.S_IFREG | 0o644, 0, 0, 1, 0, 0, 51200, 0, 0, 0))
            raise OSError(2, 'No such file or directory', path)
        kind, major, minor = self.devices[path]
        result = os.stat_result((kind | 0o660, 0, 0, 1, 0, 0, 0, 0, 0, 0))

        class Stat:
            st_mode = result.st_mode
            st_rdev = os.makedev(major, minor)
        return Stat

    def safety(self, runner):
        return safety.DeviceSafety(runner, sysfs_root=str(self.sysfs), mountinfo_path=str(self.mountinfo),
                                   swaps_path=str(self.swaps), stat_func=self.stat)


@pytest.fixture
def node(tmp_path):
    fake = Node(tmp_path)
    fake.block('loop0', 7, 0)
    fake.block('sdb', 8, 16)
    fake.block('sdb1', 8, 17, parent='sdb')
    fake.sg('sg1', 21, 1, 'sdb')
    return fake


def refusal(node, runner, device, **kwargs):
    with pytest.raises(safety.DeviceRefused) as info:
        node.safety(runner).check(device, **kwargs)
    return info.value.refusals[device]


def test_clean_device_passes_with_both_probes(node):
    runner = ProbeRunner()
    identity = node.safety(runner).check('/dev/loop0')
    assert (identity['kind'], identity['name'], identity['block'], identity['signatures']) == ('block', 'loop0', 'loop0', [])
    assert runner.commands == [['blkid', '-p', '-o', 'export', '/dev/loop0'], ['wipefs', '--no-act', '--json', '/dev/loop0']]


def test_missing_device_and_regular_file_are_refused(node):
    reasons = refusal(node, ProbeRunner(), '/dev/sg0')
    assert 'does not exist' in reasons[0] and 'regular file' in reasons[0]
    reasons = refusal(node, ProbeRunner(), '/dev/sg0-regular')
    assert 'not a block or character device' in reasons[0]


def test_mounted_partition_refuses_the_disk(node):
    node.mountinfo.write_text('40 1 8:17 / /mnt/ost0 rw,relatime - ext4 /dev/sdb1 rw\n')
    reasons = refusal(node, ProbeRunner(), '/dev/sdb')
    assert reasons == ['/dev/sdb1 is mounted at /mnt/ost0 (ext4); unmount it first']


def test_mount_found_by_source_path_with_escaped_mountpoint(node):
    node.mountinfo.write_text('40 1 253:3 / /mnt/my\\040disk rw - xfs /dev/loop0 rw\n')
    reasons = refusal(node, ProbeRunner(), '/dev/loop0', allow_signatures=True)
    assert reasons == ['/dev/loop0 is mounted at /mnt/my disk (xfs); unmount it first']


def test_holders_and_swap_refuse_even_with_allow_signatures(node):
    (node.sysfs / 'class' / 'block' / 'loop0' / 'holders' / 'dm-0').mkdir()
    node.swaps.write_text('Filename\tType\tSize\tUsed\tPriority\n/dev/loop0 partition 1024 0 -2\n')
    reasons = refusal(node, ProbeRunner(), '/dev/loop0', allow_signatures=True)
    assert reasons == ['/dev/loop0 is in use as swap; swapoff it first',
                       '/dev/loop0 is held by dm-0 (device mapper, MD RAID or LVM); remove those first']


def test_signature_refuses_unless_allowed(node):
    runner = ProbeRunner(blkid={'/dev/loop0': (0, EXT4_BLKID)}, wipefs={'/dev/loop0': (0, EXT4_WIPEFS)})
    reasons = refusal(node, runner, '/dev/loop0')
    assert reasons == ['it carries data: signature ext4 (blkid), signature ext4 at offset 0x438 (wipefs); if this '
                       'data may be destroyed, wipe it (wipefs -a) or set allow_signatures']
    identity = node.safety(runner).check('/dev/loop0', allow_signatures=True)
    assert identity['signatures'][0] == 'signature ext4 (blkid)'


def test_partition_table_and_wipefs_only_signatures(node):
    runner = ProbeRunner(blkid={'/dev/loop0': (0, 'PTUUID=ab\nPTTYPE=gpt\n')})
    assert 'partition table gpt (blkid)' in refusal(node, runner, '/dev/loop0')[0]
    runner = ProbeRunner(wipefs={'/dev/loop0': (0, '{"signatures":[{"offset":"0x1000","type":"linux_raid_member"}]}')})
    assert 'linux_raid_member at offset 0x1000' in refusal(node, runner, '/dev/loop0')[0]


def test_probe_failure_fails_closed(node):
    runner = ProbeRunner(blkid={'/dev/loop0': (4, '')})
    reasons = refusal(node, runner, '/dev/loop0')
    assert reasons[0].startswith('cannot probe for signatures (blkid -p /dev/loop0 failed (rc 4)')


def test_sg_node_is_checked_through_its_block_device(node):
    node.mountinfo.write_text('40 1 8:16 / /srv rw - ext4 /dev/sdb rw\n')
    runner = ProbeRunner()
    reasons = refusal(node, runner, '/dev/sg1')
    assert reasons == ['/dev/sdb is mounted at /srv (ext4); unmount it first']
    assert ['blkid', '-p', '-o', 'export', '/dev/sdb'] in runner.commands


def test_read_only_survey_only_needs_a_device_node(node):
    node.mountinfo.write_text('40 1 7:0 / /mnt rw - ext4 /dev/loop0 rw\n')
    runner = ProbeRunner()
    identity = node.safety(runner).check('/dev/loop0', destructive=False)
    assert identity['path'] == '/dev/loop0' and runner.commands == []


def test_check_all_names_every_refused_device_and_duplicates(node):
    node.mountinfo.write_text('40 1 8:17 / /mnt/ost0 rw - ext4 /dev/sdb1 rw\n')
    runner = ProbeRunner()
    with pytest.raises(safety.DeviceRefused) as info:
        node.safety(runner).check_all(['/dev/loop0', '/dev/sdb', '/dev/missing', '/dev/loop0'])
    message = str(info.value)
    assert 'refusing /dev/sdb: /dev/sdb1 is mounted at /mnt/ost0' in message
    assert 'refusing /dev/missing: it does not exist' in message
    assert info.value.refusals['/dev/loop0'] == ['it is the same device as /dev/loop0; list each device once']


def test_parsers_of_probe_output():
    assert safety.parse_blkid_export(EXT4_BLKID)['TYPE'] == 'ext4'
    assert safety.parse_wipefs_json('') == []
    assert safety.parse_wipefs_json(EXT4_WIPEFS) == [{'offset': '0x438', 'type': 'ext4'}]
    assert safety.parse_mountinfo('36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw')[0] == {
        'majmin': '98:0', 'mountpoint': '/mnt2', 'fstype': 'ext3', 'source': '/dev/root'}
