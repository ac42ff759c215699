# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""block_queue in this process against a fake sysfs tree (real files in tmp_path) and a fake kernel around the
real writes: it keeps the scheduler file's ``[active]`` format, resets nr_requests on a scheduler change and refuses
what a kernel refuses."""

from __future__ import annotations

import errno
import json
import os

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import block_queue as block_queue_utils
from ansible_collections.lustre.iokit.plugins.modules import block_queue

OFFERED = ['mq-deadline', 'kyber', 'none']
DEFAULT_NR_REQUESTS = 256


class FakeKernel:
    def __init__(self, root):
        self.root = root
        self.devices = {}
        self.refused = set()  # (name, setting, str(value)) the kernel refuses
        self.writes = []

    def disk(self, name, scheduler='none', offered=None, nr_requests=DEFAULT_NR_REQUESTS, max_sectors_kb=512,
             max_hw_sectors_kb=1280, read_ahead_kb=128):
        offered = list(OFFERED if offered is None else offered)
        self.devices[name] = offered
        queue = os.path.join(self.root, 'sys', 'class', 'block', name, 'queue')
        os.makedirs(queue)
        self.scheduler_file(name, scheduler)
        for attribute, value in (('nr_requests', nr_requests), ('max_sectors_kb', max_sectors_kb),
                                 ('max_hw_sectors_kb', max_hw_sectors_kb), ('read_ahead_kb', read_ahead_kb)):
            self.put(name, attribute, value)
        return self.dev(name)

    def dev(self, name):
        path = os.path.join(self.root, 'dev', name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not os.path.exists(path):
            open(path, 'w', encoding='utf-8').close()
        return path

    def partition(self, name):
        os.makedirs(os.path.join(self.root, 'sys', 'class', 'block', name))
        return self.dev(name)

    def path(self, name, attribute):
        return os.path.join(self.root, 'sys', 'class', 'block', name, 'queue', attribute)

    def put(self, name, attribute, value):
        with open(self.path(name, attribute), 'w', encoding='utf-8') as handle:
            handle.write('%s\n' % value)

    def get(self, name, attribute):
        with open(self.path(name, attribute), encoding='utf-8') as handle:
            return handle.read().strip()

    def scheduler_file(self, name, active):
        self.put(name, 'scheduler', ' '.join('[%s]' % s if s == active else s for s in self.devices[name]))

    def settings(self, name):
        return tuple(self.get(name, attribute) for attribute in ('scheduler', 'nr_requests', 'max_sectors_kb',
                                                                 'read_ahead_kb'))

    def write(self, name, attribute, value):
        """What the kernel does with a write to a queue attribute."""
        self.writes.append((name, attribute, str(value)))
        if (name, attribute, str(value)) in self.refused:
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
        if attribute == 'scheduler':
            if value not in self.devices[name]:
                raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
            self.scheduler_file(name, value)
            self.put(name, 'nr_requests', DEFAULT_NR_REQUESTS)
            return
        if attribute == 'max_sectors_kb' and int(value) > int(self.get(name, 'max_hw_sectors_kb')):
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
        real_write(name, attribute, value)


real_write = block_queue_utils.write_attribute


@pytest.fixture
def kernel(tmp_path, monkeypatch):
    fake = FakeKernel(str(tmp_path))
    monkeypatch.setattr(block_queue_utils, 'SYSFS_ROOT', os.path.join(str(tmp_path), 'sys'))
    monkeypatch.setattr(block_queue_utils, 'write_attribute', fake.write)
    return fake


def warnings(result):
    """The result's warnings as one text (their form differs between ansible-core versions)."""
    return json.dumps(result.get('warnings', []))


@pytest.fixture
def run(run_in_process):
    def run_module(check_mode=False, **args):
        return run_in_process(block_queue, args, check_mode=check_mode)
    return run_module


def test_first_offered_scheduler_capped_max_sectors_and_the_rest(kernel, run):
    disk = kernel.disk('sdb')
    result = run(devices=[disk], scheduler=['deadline', 'kyber', 'mq-deadline'], nr_requests=64,
                 max_sectors_kb=4096, read_ahead_kb=256)
    assert result['changed'] is True
    entry, = result['devices']
    assert (entry['device'], entry['name'], entry['changed']) == (disk, 'sdb', True)
    assert entry['wanted'] == {'scheduler': 'kyber', 'nr_requests': 64, 'max_sectors_kb': 1280, 'read_ahead_kb': 256}
    assert entry['before'] == {'scheduler': 'none', 'schedulers_offered': OFFERED, 'nr_requests': 256,
                               'max_sectors_kb': 512, 'max_hw_sectors_kb': 1280, 'read_ahead_kb': 128}
    assert entry['after'] == dict(entry['before'], scheduler='kyber', nr_requests=64, max_sectors_kb=1280,
                                  read_ahead_kb=256)
    # nr_requests after the scheduler change that resets it
    assert kernel.settings('sdb') == ('mq-deadline [kyber] none', '64', '1280', '256')
    assert [write[1] for write in kernel.writes] == ['scheduler', 'nr_requests', 'max_sectors_kb', 'read_ahead_kb']


def test_max_is_max_hw_sectors_kb_and_a_link_is_resolved(kernel, run, tmp_path):
    disk = kernel.disk('sdc', max_hw_sectors_kb=2048)
    link = str(tmp_path / 'wwn-0x5000')
    os.symlink(disk, link)
    result = run(devices=[link], max_sectors_kb='max')
    assert (result['devices'][0]['name'], result['devices'][0]['after']['max_sectors_kb']) == ('sdc', 2048)
    assert kernel.get('sdc', 'max_sectors_kb') == '2048'


def test_a_smaller_max_sectors_kb_is_kept(kernel, run):
    disk = kernel.disk('sdb')
    assert run(devices=[disk], max_sectors_kb=256)['devices'][0]['after']['max_sectors_kb'] == 256


def test_no_scheduler_offered_warns_and_leaves_it(kernel, run):
    disk = kernel.disk('sdb', scheduler='none', offered=['none'])
    result = run(devices=[disk], scheduler=['mq-deadline', 'deadline'])
    assert result['changed'] is False and result['devices'][0]['wanted'] == {}
    assert '%s offers none of mq-deadline, deadline (none); scheduler left as it is' % disk in warnings(result)
    assert kernel.writes == []


def test_check_mode_predicts_and_writes_nothing(kernel, run):
    disk = kernel.disk('sdb')
    before = kernel.settings('sdb')
    result = run(check_mode=True, devices=[disk], scheduler=['mq-deadline'], max_sectors_kb='max', read_ahead_kb=512)
    assert result['changed'] is True
    assert result['devices'][0]['after'] == dict(result['devices'][0]['before'], scheduler='mq-deadline',
                                                 max_sectors_kb=1280, read_ahead_kb=512)
    assert kernel.writes == [] and kernel.settings('sdb') == before


def test_values_already_set_are_not_written(kernel, run):
    disk = kernel.disk('sdb', scheduler='mq-deadline', max_sectors_kb=1280, nr_requests=64)
    result = run(devices=[disk, disk], scheduler=['mq-deadline'], max_sectors_kb='max', nr_requests=64)
    assert result['changed'] is False and len(result['devices']) == 1
    assert result['devices'][0]['before'] == result['devices'][0]['after']
    assert kernel.writes == []


def test_a_write_the_kernel_rounds_back_is_no_change(kernel, run, monkeypatch):
    disk = kernel.disk('sdb', read_ahead_kb=128)

    def rounding(name, attribute, value):
        kernel.writes.append((name, attribute, str(value)))
        real_write(name, attribute, 128)  # the kernel keeps whole pages
    monkeypatch.setattr(block_queue_utils, 'write_attribute', rounding)
    result = run(devices=[disk], read_ahead_kb=130)
    assert result['changed'] is False and kernel.writes == [('sdb', 'read_ahead_kb', '130')]


def test_a_refused_write_puts_back_what_the_call_wrote(kernel, run):
    first = kernel.disk('sdb')
    second = kernel.disk('sdc', scheduler='kyber', nr_requests=32)
    before = (kernel.settings('sdb'), kernel.settings('sdc'))
    kernel.refused.add(('sdc', 'read_ahead_kb', '512'))
    result = run(devices=[first, second], scheduler=['mq-deadline'], nr_requests=64, read_ahead_kb=512)
    assert result['failed'] is True
    assert result['msg'].startswith('%s (sdc): the kernel refused read_ahead_kb = 512: ' % second)
    assert 'what this call wrote before is put back' in result['msg']
    # both devices as found: the scheduler first, then the nr_requests its change had reset
    assert (kernel.settings('sdb'), kernel.settings('sdc')) == before


def test_a_partition_or_a_missing_device_is_refused(kernel, run, tmp_path):
    disk = kernel.disk('sdb')
    partition = kernel.partition('sdb1')
    result = run(devices=[disk, partition], read_ahead_kb=512)
    assert result['failed'] is True
    assert result['msg'] == ('%s (sdb1) has no request queue (a partition or not a block device); give the whole disk'
                             % partition)
    assert kernel.writes == []
    missing = str(tmp_path / 'dev' / 'sdz')
    assert run(devices=[missing])['msg'] == '%s does not exist' % missing


@pytest.mark.parametrize('args, message', [
    ({'max_sectors_kb': 'lots'}, 'max_sectors_kb: must be max or a positive number, got lots'),
    ({'nr_requests': 0}, 'nr_requests: must be a positive number, got 0'),
    ({'settings': {'sdb': {'rotational': 0}}}, 'settings of sdb: unknown setting rotational'),
    ({'settings': {'sdb': {'nr_requests': 'many'}}}, 'settings of sdb: nr_requests must be a number, got many'),
])
def test_wrong_values_fail_before_any_write(kernel, run, args, message):
    kernel.disk('sdb')
    if 'settings' not in args:
        args = dict(args, devices=[kernel.dev('sdb')])
    result = run(**args)
    assert result['failed'] is True and result['msg'].startswith(message) and kernel.writes == []


def test_settings_put_back_the_values_read_before(kernel, run):
    disk = kernel.disk('sdb', scheduler='kyber', nr_requests=32)
    found = kernel.settings('sdb')
    tuned = run(devices=[disk], scheduler=['mq-deadline'], max_sectors_kb='max', read_ahead_kb=1024)
    assert tuned['changed'] is True and kernel.settings('sdb') != found
    saved = {entry['name']: {key: entry['before'][key] for key in block_queue_utils.SETTINGS}
             for entry in tuned['devices']}
    saved['sdx'] = {'nr_requests': 64}  # gone since
    restored = run(settings=saved)
    assert restored['changed'] is True and restored['gone'] == ['sdx']
    assert 'sdx no longer exists; nothing to restore on it' in warnings(restored)
    assert kernel.settings('sdb') == found
    assert restored['devices'][0]['after'] == tuned['devices'][0]['before']
    # saved by an earlier node_prep as strings: the same
    again = run(settings={'sdb': {'scheduler': 'kyber', 'nr_requests': '32', 'max_sectors_kb': '512'}})
    assert again['changed'] is False


def test_devices_and_settings_exclude_each_other(kernel, run):
    disk = kernel.disk('sdb')
    assert 'mutually exclusive' in run(devices=[disk], settings={'sdb': {}})['msg']
