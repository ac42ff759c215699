# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Read and set the request-queue settings of whole block devices (``/sys/class/block/NAME/queue``).

The ``block_queue`` module is a thin front end to ``manage_block_queue``. The wanted settings are either worked
out from preferences (a scheduler the device offers, ``max_sectors_kb`` capped by ``max_hw_sectors_kb``) or given
exactly (``settings``, to put saved values back). Writes follow ``SETTINGS``' order: a scheduler change resets
``nr_requests``, so the queue is read again after it. A write the kernel refuses undoes what the call already
wrote before the module fails.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

# Where sysfs is mounted; a unit test points it at a fake tree.
SYSFS_ROOT = '/sys'

# The settings the module writes, in the order it writes them (nr_requests after the scheduler that resets it).
SETTINGS = ('scheduler', 'nr_requests', 'max_sectors_kb', 'read_ahead_kb')
NUMERIC = ('nr_requests', 'max_sectors_kb', 'read_ahead_kb', 'max_hw_sectors_kb')


class QueueError(Exception):
    """A device or value the module cannot work with; the message names it."""


def argument_spec():
    return dict(
        devices=dict(type='list', elements='path', default=[]),
        scheduler=dict(type='list', elements='str', default=[]),
        nr_requests=dict(type='int'),
        max_sectors_kb=dict(type='raw'),
        read_ahead_kb=dict(type='int'),
        settings=dict(type='dict'),
    )


def queue_dir(name):
    return os.path.join(SYSFS_ROOT, 'class', 'block', name, 'queue')


def read_attribute(name, attribute):
    with open(os.path.join(queue_dir(name), attribute)) as handle:
        return handle.read().strip()


def write_attribute(name, attribute, value):
    """One write of ``value`` to the queue attribute; the kernel's refusal comes back as IOError/OSError."""
    with open(os.path.join(queue_dir(name), attribute), 'w') as handle:
        handle.write(str(value))


def parse_scheduler(text):
    """(active, offered) from a scheduler file such as ``mq-deadline kyber [none]``."""
    offered = [word.strip('[]') for word in text.split()]
    active = [word[1:-1] for word in text.split() if word.startswith('[') and word.endswith(']')]
    return (active[0] if active else 'none'), offered


def read_queue(name):
    """Every setting the module knows of the device's queue: numbers as ints, the active scheduler and the
    schedulers offered."""
    queue = {}
    try:
        queue['scheduler'], queue['schedulers_offered'] = parse_scheduler(read_attribute(name, 'scheduler'))
        for attribute in NUMERIC:
            queue[attribute] = int(read_attribute(name, attribute))
    except (IOError, OSError, ValueError) as error:
        raise QueueError('cannot read the queue settings of %s: %s' % (name, error))
    return queue


def resolve(device):
    """The kernel name of a whole block device given by path (links resolved); a partition or anything else
    without a request queue is refused."""
    real = os.path.realpath(device)
    if not os.path.exists(real):
        raise QueueError('%s does not exist' % device)
    name = os.path.basename(real)
    if not os.path.isdir(queue_dir(name)):
        raise QueueError('%s (%s) has no request queue (a partition or not a block device); give the whole disk'
                         % (device, name))
    return name


def _whole_number(value):
    """``value`` as an int when it is a whole number >= 0 (an int or its text, never a bool), else None."""
    text = str(value).strip()
    return None if isinstance(value, bool) or not text.isdigit() else int(text)


def check_max_sectors_kb(value):
    """None, 'max' or a positive int."""
    if value is None or value == 'max':
        return value
    number = _whole_number(value)
    if not number:
        raise QueueError('max_sectors_kb: must be max or a positive number, got %s' % (value,))
    return number


def wanted_from_preferences(queue, scheduler, nr_requests, max_sectors_kb, read_ahead_kb):
    """(wanted settings, True when none of ``scheduler`` is offered)."""
    wanted = {}
    offered = [name for name in scheduler if name in queue['schedulers_offered']]
    if offered:
        wanted['scheduler'] = offered[0]
    if nr_requests is not None:
        wanted['nr_requests'] = nr_requests
    if max_sectors_kb == 'max':
        wanted['max_sectors_kb'] = queue['max_hw_sectors_kb']
    elif max_sectors_kb is not None:
        wanted['max_sectors_kb'] = min(max_sectors_kb, queue['max_hw_sectors_kb'])
    if read_ahead_kb is not None:
        wanted['read_ahead_kb'] = read_ahead_kb
    return wanted, bool(scheduler) and not offered


def check_exact_settings(name, settings):
    """The settings to write exactly to device ``name``: known names only, numbers as ints."""
    if not isinstance(settings, dict):
        raise QueueError('settings of %s: must be a dict of setting: value, got %s' % (name, settings))
    wanted = {}
    for setting, value in settings.items():
        if setting not in SETTINGS:
            raise QueueError('settings of %s: unknown setting %s (known: %s)' % (name, setting, ', '.join(SETTINGS)))
        if setting == 'scheduler':
            wanted[setting] = str(value)
            continue
        wanted[setting] = _whole_number(value)
        if wanted[setting] is None:
            raise QueueError('settings of %s: %s must be a number, got %s' % (name, setting, value))
    return wanted


class Writer(object):
    """Writes settings and keeps the list of what this call wrote, so that a refusal undoes all of it."""

    def __init__(self, check_mode):
        self.check_mode = check_mode
        self.touched = []  # (entry, set of settings written), in order

    def apply(self, entry):
        """Bring ``entry['name']`` to ``entry['wanted']``; sets ``entry['after']`` and ``entry['changed']``."""
        name, wanted = entry['name'], entry['wanted']
        current = dict(entry['before'])
        written = set()
        self.touched.append((entry, written))
        for setting in SETTINGS:
            if setting not in wanted or current[setting] == wanted[setting]:
                continue
            if self.check_mode:
                current[setting] = wanted[setting]
                continue
            try:
                write_attribute(name, setting, wanted[setting])
            except (IOError, OSError) as error:
                raise QueueError('%s (%s): the kernel refused %s = %s: %s'
                                 % (entry['device'], name, setting, wanted[setting], error))
            written.add(setting)
            current = read_queue(name)
        entry['after'] = current
        entry['changed'] = any(current[setting] != entry['before'][setting] for setting in SETTINGS)

    def undo(self):
        """Put back the values found before on every device written; a list of what could not be put back."""
        problems = []
        for entry, written in reversed(self.touched):
            restore = set(written)
            if 'scheduler' in written:
                restore.add('nr_requests')  # reset by the scheduler change
            for setting in SETTINGS:
                if setting not in restore:
                    continue
                value = entry['before'][setting]
                try:
                    if read_queue(entry['name'])[setting] != value:
                        write_attribute(entry['name'], setting, value)
                except (IOError, OSError, QueueError) as error:
                    problems.append('%s %s = %s: %s' % (entry['name'], setting, value, error))
        return problems


def plan(params):
    """(entries, gone, warnings): one entry per device (device, name, before, wanted) in the order given."""
    entries, gone, warnings, seen = [], [], [], set()
    if params['settings'] is not None:
        for key, settings in params['settings'].items():
            if '/' in key:
                name = resolve(key)
            elif os.path.isdir(queue_dir(key)):
                name = key
            else:
                gone.append(key)
                warnings.append('%s no longer exists; nothing to restore on it' % key)
                continue
            entries.append(dict(device=key, name=name, before=read_queue(name),
                                wanted=check_exact_settings(key, settings)))
        return entries, gone, warnings
    max_sectors_kb = check_max_sectors_kb(params['max_sectors_kb'])
    for setting in ('nr_requests', 'read_ahead_kb'):
        value = params[setting]
        if value is not None and (value < 0 or (setting == 'nr_requests' and value == 0)):
            raise QueueError('%s: must be a %s number, got %s'
                             % (setting, 'positive' if setting == 'nr_requests' else 'non-negative', value))
    for device in params['devices']:
        name = resolve(device)
        if name in seen:
            continue
        seen.add(name)
        before = read_queue(name)
        wanted, none_offered = wanted_from_preferences(before, params['scheduler'], params['nr_requests'],
                                                       max_sectors_kb, params['read_ahead_kb'])
        if none_offered:
            warnings.append('%s offers none of %s (%s); scheduler left as it is'
                            % (device, ', '.join(params['scheduler']), ', '.join(before['schedulers_offered'])))
        entries.append(dict(device=device, name=name, before=before, wanted=wanted))
    return entries, gone, warnings


def manage_block_queue(module):
    """Read, work out and write the queue settings of ``module.params`` and exit the AnsibleModule."""
    if module.params['settings'] is not None and module.params['devices']:
        module.fail_json(msg='devices and settings are mutually exclusive: settings names its own devices')
    try:
        entries, gone, warnings = plan(module.params)
    except QueueError as error:
        module.fail_json(msg=str(error))
    writer = Writer(module.check_mode)
    try:
        for entry in entries:
            writer.apply(entry)
    except QueueError as error:
        problems = writer.undo()
        msg = str(error) + '; what this call wrote before is put back'
        if problems:
            msg = str(error) + '; these could not be put back: ' + '; '.join(problems)
        module.fail_json(msg=msg)
    for warning in warnings:
        module.warn(warning)
    module.exit_json(changed=any(entry['changed'] for entry in entries), devices=entries, gone=gone)
