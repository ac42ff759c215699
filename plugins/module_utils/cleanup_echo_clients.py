# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The echo clients part of the cleanup: the ones surveys recorded, with what they left on their targets, and
the I/O kit's leftover echo devices.

An echo client recorded in the node state is torn down by name after the objects it created are destroyed (an
obdfilter survey's) or the test files and directories it made are removed (an mds survey's,
``engines/mds_tree_removal.py``); when its device is gone while they remain, one is attached again to remove
them.  ``EchoClientCleanup`` is a part of ``cleanup.Cleanup``, which gives it the node state, lctl and the report.

Target-side code: standard library only, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

from ansible_collections.lustre.iokit.plugins.module_utils import lctl as lctl_utils
from ansible_collections.lustre.iokit.plugins.module_utils import process_match
from ansible_collections.lustre.iokit.plugins.module_utils.engines import mds_tree_removal
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import process_start_time

_POLL_INTERVAL_S = 0.05

# osc and obdecho leftovers of the network case are set up under their echo client: remove them last.
_LEFTOVER_TYPE_ORDER = {'echo_client': 0, 'osc': 1, 'obdecho': 2}


def unknown_count(objects):
    """How many objects an entry's ``objects`` count in ranges whose ids are not known (``first`` null): those
    of an ``lctl create`` that was running when the survey was killed."""
    return sum(int(item.get('count') or 0) for item in objects or []
               if isinstance(item, dict) and item.get('first') is None)


def _read_text(path):
    try:
        with open(path, 'rb') as handle:
            return handle.read().decode('utf-8', 'replace')
    except (IOError, OSError):
        return None


def _remove_quietly(path):
    if path:
        try:
            os.unlink(path)
        except OSError:
            pass


def object_ranges(objects):
    """(first, count) ranges from an entry's ``objects``.

    The form the engines record is ``[[first_id, count], ...]`` (ranges as
    ``lctl create`` hands them out); single ids and ``{'first', 'count'}``
    dicts are read too.
    """
    ranges = []
    ids = []
    for item in objects or []:
        if isinstance(item, dict):
            if item.get('first') is not None:
                ranges.append((int(item['first']), int(item.get('count') or 1)))
        elif isinstance(item, (list, tuple)):
            if len(item) == 2:
                ranges.append((int(item[0]), int(item[1])))
        else:
            ids.append(int(item))
    for object_id in sorted(set(ids)):
        if ranges and ranges[-1][0] + ranges[-1][1] == object_id:
            ranges[-1] = (ranges[-1][0], ranges[-1][1] + 1)
        else:
            ranges.append((object_id, 1))
    return [(first, count) for first, count in ranges if first > 0 and count > 0]


class EchoClientCleanup:
    """Removing echo clients and what they left: the methods of ``Cleanup`` for the ``echo_clients`` kind."""

    def remove_recorded_echo_clients(self):
        """Tear down the echo clients of the node state; returns the names handled."""
        handled = set()
        for entry in self._entries('echo_clients'):
            name = entry['name']
            handled.add(name)
            devices = self._device_list()
            if devices is None:
                self._keep('echo_clients', name, 'lctl dl failed; cannot tell whether it is still there')
                continue
            entry = self._with_created_ids(entry)
            device = self.lctl.find(name, devices)
            left = _left_on_target(entry)
            if device is None and not left:
                self._forget('echo_clients', name, 'no such device in lctl dl')
                if not self.check_mode:
                    _remove_quietly(entry.get('create_output'))
                continue
            if device is not None and device['type'] != 'echo_client':
                self._keep('echo_clients', name, 'a %s device now has this name; it is not ours' % device['type'])
                continue
            summary = {'name': name, 'source': 'node_state', 'run_id': entry.get('run_id'),
                       'target': entry.get('target'), 'status': device['status'] if device else None,
                       'objects_destroyed': []}
            if left and (device is None or device['status'] != 'UP'):
                # What it made on the target outlives the device: attach one again to remove it.
                device = self._reattach(entry, device, left, summary)
                if device is None:
                    continue
            if device['status'] == 'UP':
                summary['objects_destroyed'] = self._destroy_objects(name, entry.get('objects'))
                if entry.get('layer') == 'mdd':
                    removed = self._remove_md_tree(entry, summary)
                    if removed is None:
                        # The MDT fails: its client goes, the record stays for a cleanup after the repair.
                        self._teardown(name, device, summary)
                    if not removed:
                        continue
            if self._teardown(name, device, summary):
                self.removed['echo_clients'].append(summary)
                if not self.check_mode:
                    self.node_state.forget('echo_clients', name)
                    _remove_quietly(entry.get('create_output'))
        return handled

    def _with_created_ids(self, entry):
        """``entry`` with the ids of the objects its ``lctl create`` made while the survey was killed.

        Such a range has ``first`` null: the ids were printed after it was recorded.  The create wrote them to
        the file recorded with it (``create_output``): a create still writing it (it outlives the survey in its
        own session) is first given ``kill_grace_s`` to end, then stopped; the ids it printed are then read
        from the file.  Objects of a create whose ids cannot all be read are named in ``kept``; no file left
        means the create never started, and made nothing.
        """
        unknown = unknown_count(entry.get('objects'))
        if not unknown:
            return entry
        path = entry.get('create_output')
        text = None
        if path:
            self._stop_create_writers(path)
            text = _read_text(path)
        ids = lctl_utils.parse_object_ids(text)
        if (text is not None or not path) and len(ids) < unknown:
            self._keep('objects', entry['name'], (
                'lctl create was making %d objects on %s when its survey was killed, and %s; %s may remain there '
                'with no id to destroy them by (an lctl create stopped before it wrote what it printed loses it)'
                % (unknown, entry.get('target'),
                   'its output %s names %d' % (path, len(ids)) if path else 'their ids were never recorded',
                   'the other %d' % (unknown - len(ids)) if ids else 'they')))
        known = [item for item in entry.get('objects') or []
                 if not (isinstance(item, dict) and item.get('first') is None)]
        resolved = dict(entry)
        # single ids: object_ranges makes ranges of them
        resolved['objects'] = known + ids
        return resolved

    def _stop_create_writers(self, path):
        """Let the processes writing ``path`` (an ``lctl create``) end, within ``kill_grace_s``, else stop them."""
        writers = process_match.holding_file(path)
        if not writers or self.check_mode:
            return
        deadline = time.monotonic() + self.kill_grace_s
        while writers and time.monotonic() < deadline:
            time.sleep(_POLL_INTERVAL_S)
            writers = process_match.holding_file(path)
        stopping = []
        for pid in writers:
            group = process_match.leader_of_own_group(pid)
            summary = {'pid': pid, 'command': process_match.command_lines().get(pid, (None, None))[1],
                       'create_output': path}
            stopping.append(({'pid': pid, 'start_time': process_start_time(pid)}, summary, group))
        if stopping:
            self._stop(stopping)

    def _reattach(self, entry, device, left, summary):
        """Attach the echo client of ``entry`` again (its device gone or half made); None, and the entry kept
        with what is left and how to remove it by hand, when that cannot be done."""
        name = entry['name']
        summary['steps_before'] = ['reattach']
        if self.check_mode:
            return {'name': name, 'type': 'echo_client', 'status': 'UP'}
        try:
            if device is not None:
                self.lctl.teardown(name)
            if lctl_utils.load_module(self.runner, self.node_state, lctl_utils.ECHO_MODULE, entry.get('run_id')):
                # loaded for this: unloaded again with the modules we loaded, at the end of this pass
                self._state['modules'].append({'name': lctl_utils.ECHO_MODULE, 'run_id': entry.get('run_id')})
            attached = self.lctl.attach_echo_client(name, entry['target'], layer=entry.get('layer'))
        except lctl_utils.LctlError as exc:
            self._keep('echo_clients', name, '%s remain on %s, and its echo client cannot be attached again (%s); '
                       'remove them by hand: %s' % (left, entry['target'], exc, _by_hand(entry)))
            return None
        finally:
            self._devices = None
        return attached

    def _remove_md_tree(self, entry, summary):
        """The files and test directories an mds survey left on its MDT: True when removed, False (an error) when
        some remain, None when the MDT fails every operation (kept with its record, to remove once repaired)."""
        name = entry['name']
        if self.check_mode:
            summary['directories_removed'] = list(entry.get('directories') or [])
            return True
        problems = []

        def remember(files):
            entry['files'] = files
            self.node_state.record('echo_clients', entry.get('run_id'), **dict(
                (key, value) for key, value in entry.items() if key not in ('run_id', 'recorded')))
        if entry.get('files'):
            problems = mds_tree_removal.destroy_files(self.runner.run, self.lctl.lctl, name, entry['files'],
                                                      remember)
        if not problems:
            problems = mds_tree_removal.remove_directories(self.runner.run, self.lctl.lctl, name,
                                                           entry.get('directories') or [])
        if problems and all(mds_tree_removal.target_fails(problem) for problem in problems):
            self._keep('echo_clients', name, '%s may remain on %s, which fails (%s); recorded for the next cleanup: '
                       'once the MDT is repaired, run playbooks/cleanup.yml -e cleanup_run_id=%s, or remove them by '
                       'hand: %s' % (_left_on_target(entry), entry['target'], '; '.join(problems),
                                     entry.get('run_id'), _by_hand(entry)))
            return None
        if problems:
            self._error('echo_clients', name, '; '.join(problems))
            return False
        summary['directories_removed'] = list(entry.get('directories') or [])
        return True

    def _destroy_objects(self, name, objects):
        destroyed = []
        for first, count in object_ranges(objects):
            if self.check_mode:
                destroyed.extend(range(first, first + count))
                continue
            start, end = first, first + count
            while start < end:
                result = self.lctl.run(['--device', name, 'destroy', str(start), str(end - start)], check=False)
                ids = lctl_utils.parse_object_ids(result.stdout)
                destroyed.extend(ids)
                if result.rc == 0:
                    break
                # lctl stops at the first object it cannot destroy (one the survey already destroyed, say):
                # note it and go on with the next one.
                failed = start + len(ids)
                self._keep('objects', '%s:%d' % (name, failed),
                           result.stderr.strip() or 'destroy exit status %s' % result.rc)
                start = failed + 1
        return destroyed

    def _teardown(self, name, device, summary):
        if self.check_mode:
            summary['steps'] = ['cleanup', 'detach'] if device['status'] == 'UP' else ['detach']
            return True
        try:
            summary['steps'] = self.lctl.teardown(name)
        except lctl_utils.LctlError as exc:
            self._error('echo_clients', name, exc)
            return False
        finally:
            self._devices = None
        return bool(summary['steps'])

    def remove_leftover_devices(self, handled):
        # Another run's (or launch's) recorded echo client is in use by it, not left over.
        others = set(entry['name'] for entry in self._state['echo_clients'] if not self._selected(entry)) - handled
        leftovers = [device for device in self._device_list() or []
                     if lctl_utils.is_echo_leftover(device) and device['name'] not in handled | others]
        leftovers.sort(key=lambda device: (_LEFTOVER_TYPE_ORDER.get(device['type'], 9), device['index']))
        for device in leftovers:
            summary = {'name': device['name'], 'source': 'iokit_leftover', 'type': device['type'],
                       'status': device['status'], 'objects_destroyed': []}
            if self._teardown(device['name'], device, summary):
                self.removed['echo_clients'].append(summary)
        for name in sorted(others):
            if self.lctl.find(name, self._device_list() or []) is not None:
                self._keep('echo_clients', name, 'recorded by another run; clean it up with that run_id or none')


def _left_on_target(entry):
    """What an echo client entry says its run left on the target (objects, an mds tree), as a phrase; '' if none."""
    ranges = object_ranges(entry.get('objects'))
    if ranges:
        return 'objects %s' % ', '.join('%s (%d)' % (hex(first), count) for first, count in ranges)
    if entry.get('files') or entry.get('directories'):
        return 'test directories %s%s' % (', '.join(entry.get('directories') or []),
                                          ' with files' if entry.get('files') else '')
    return ''


def _by_hand(entry):
    """The lctl commands that attach the echo client of ``entry``, remove what it left and detach it."""
    name = entry['name']
    setup = ' '.join([entry['target']] + ([entry['layer']] if entry.get('layer') else []))
    return ('lctl attach echo_client %s %s_UUID; lctl --device %s setup %s; then %s; then lctl --device %s cleanup; '
            'lctl --device %s detach' % (name, name, name, setup, _removal_hint(entry), name, name))


def _removal_hint(entry):
    if entry.get('layer') == 'mdd':
        return ('lctl --device %s test_destroy -d <dir> -b <first id> -n <count> for the files, and test_rmdir '
                '<dir> for each of %s' % (entry['name'], ', '.join(entry.get('directories') or [])))
    return ' and '.join('lctl --device %s destroy %s %d' % (entry['name'], hex(first), count)
                        for first, count in object_ranges(entry.get('objects')))
