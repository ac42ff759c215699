# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``lctl`` and the Lustre kernel modules, as the survey engines and the cleanup need them.

Rules from the Lustre sources (docs/iokit-notes.md, 3):

* config commands (``setup``, ``cleanup``, ``detach``) need the device *name*:
  ``lctl --device <number> cleanup`` is refused, and device numbers are reused
  after a detach, so nothing here ever addresses a device by number except
  the ioctl commands an engine chooses to send;
* a device that is ``UP`` must be cleaned up before it can be detached; one
  left ``AT`` (attached, never set up) by an aborted run only needs a detach;
* ``obdecho`` is unloaded only when this collection loaded it (recorded in
  the node state *before* ``modprobe``), and only once nothing uses it.

Every command goes through the Runner (argument lists, ``LANG=C``, deadline).

Target-side code: standard library only, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import os
import re

from ansible_collections.lustre.iokit.plugins.module_utils.parsers.lctl_dl import parse_lctl_dl

# Device names the I/O kit's scripts create: obdfilter-survey and mds-survey
# name an echo client <target>_ecc; the network case adds an osc "echotmp"
# with its echo client "echotmp_ecc" here and an obdecho device "echo_srv" on
# the server; case=netdisk adds an osc <ost>_osc per OST (a real client's oscs
# are named <ost>-osc-<instance>, never with the underscore); older test
# scripts use ECHO_<host>.
LEFTOVER_PATTERNS = ('*_ecc', 'echotmp*', 'ECHO_*', '*_osc', 'echo_srv')
# Device types that only an echo test creates; a leftover name of another
# type (a real osc called echotmp by a site, say) is reported, never removed.
ECHO_DEVICE_TYPES = ('echo_client', 'osc', 'obdecho')
ECHO_MODULE = 'obdecho'
# Every module the kernel knows, loadable and built in alike, has a directory here (named as lsmod names it).
SYS_MODULE_DIR = '/sys/module'

_VERSION_RE = re.compile(r'^(?:lustre:\s*|Lustre version:\s*)?v?(?P<version>\d+\.\d+(?:\.\d+)*(?:[-_.][\w.\-]+)?)\s*$')
# ``create: #1 is object id 0x2``, also after a prefix (``lctl create: ...``, a device name).
_OBJECT_ID_RE = re.compile(r'(?:create|destroy): #\d+ is object id (?P<id>0x[0-9a-fA-F]+|\d+)\s*$')
_MODULE_IN_USE_RE = re.compile(r'\bin use\b')


class LctlError(Exception):
    """A command failed: carries its argument list, exit status and stderr (for an envelope's ``errors``)."""

    def __init__(self, argv, stderr, rc=None, message=None):
        self.argv = list(argv)
        self.command = ' '.join(self.argv)
        self.stderr = (stderr or '').strip()
        self.rc = rc
        detail = message or self.stderr or 'exit status %s' % rc
        super(LctlError, self).__init__('%s: %s' % (self.command, detail))

    def as_dict(self):
        return {'command': self.command, 'rc': self.rc, 'stderr': self.stderr, 'message': str(self)}


# Lustre keeps a device's UUID in 40 bytes with its NUL (struct obd_uuid): attach refuses a longer one.
UUID_MAX = 40


def echo_client_name(target, tag=None):
    """The echo client name of ``target``: the I/O kit's ``<target>_ecc``, or ``<target>_<tag>_ecc`` for a run.

    With the run's ``tag`` (node_state.run_tag) in its name, a device is one run's: a cleanup of another run
    never takes it for its own, and two runs never share one.  Either form ends in ``_ecc``, so the leftover
    patterns find both.
    """
    return '%s_%s_ecc' % (target, tag) if tag else '%s_ecc' % target


def echo_uuid(name):
    """The UUID the echo client ``name`` is attached with."""
    return '%s_UUID' % name


def name_problem(name):
    """Why lctl would refuse to attach a device ``name`` (its UUID too long), or None."""
    if len(echo_uuid(name)) >= UUID_MAX:
        return ('the device name %s is too long: its UUID %s must be under %d bytes; use a shorter target name'
                % (name, echo_uuid(name), UUID_MAX))
    return None


def is_leftover_name(name):
    """True when ``name`` matches one of LEFTOVER_PATTERNS."""
    return any(fnmatch.fnmatchcase(name or '', pattern) for pattern in LEFTOVER_PATTERNS)


def is_echo_leftover(device):
    """True for a device in ``lctl dl`` that an I/O-kit echo test (or an aborted survey) left behind."""
    return device.get('type') in ECHO_DEVICE_TYPES and is_leftover_name(device.get('name'))


def parse_version(text):
    """The Lustre version in ``lctl get_param -n version`` / ``lctl lustre_build_version`` output.

    Accepts ``2.15.5``, ``lustre: 2.15.5`` (followed by kernel/build lines on
    older releases) and ``Lustre version: 2.15.5``; None when none is found.
    """
    for line in (text or '').splitlines():
        match = _VERSION_RE.match(line.strip())
        if match:
            return match.group('version')
    return None


def parse_object_ids(text):
    """Object ids (ints) printed by ``lctl create`` / ``destroy`` with verbose output, in the order printed.

    The one reader of that output (obdfilter.parse_created_objects checks what it returns).
    """
    ids = []
    for line in (text or '').splitlines():
        match = _OBJECT_ID_RE.search(line.strip())
        if match:
            ids.append(int(match.group('id'), 0))
    return ids


def parse_lsmod(text):
    """``lsmod`` output as {module: {'size': int, 'use_count': int, 'used_by': [names]}}."""
    modules = {}
    for line in (text or '').splitlines()[1:]:
        fields = line.split()
        if len(fields) < 3 or not fields[1].isdigit():
            continue
        try:
            use_count = int(fields[2])
        except ValueError:
            continue
        used_by = [user for user in fields[3].split(',') if user] if len(fields) > 3 else []
        modules[canonical_module(fields[0])] = {'size': int(fields[1]), 'use_count': use_count,
                                                'used_by': used_by}
    return modules


def canonical_module(name):
    """Kernel module names treat ``-`` and ``_`` alike; lsmod prints ``_``."""
    return name.replace('-', '_')


def _checked(result, message=None):
    if result.rc != 0 or result.timed_out:
        detail = message
        if result.timed_out:
            detail = 'stopped before it finished (%s)' % (result.stderr.strip() or 'deadline')
        raise LctlError(result.argv, result.stderr, result.rc, detail)
    return result


class Lctl:
    """``lctl`` through a Runner.  Names, never device numbers, for config commands."""

    def __init__(self, runner, lctl='lctl'):
        self.runner = runner
        self.lctl = lctl

    def run(self, args, check=True):
        """Run ``lctl <args>``; raises LctlError on failure when ``check``."""
        result = self.runner.run([self.lctl] + list(args))
        return _checked(result) if check else result

    # -- reading ---------------------------------------------------------------------

    def devices(self):
        """The parsed ``lctl dl`` (records of parse_lctl_dl)."""
        return parse_lctl_dl(self.run(['dl']).stdout)

    def find(self, name, devices=None):
        """The device called ``name``, or None."""
        for device in self.devices() if devices is None else devices:
            if device['name'] == name:
                return device
        return None

    def devno(self, name):
        """The current device number of ``name`` (for ioctl commands only), or None when absent."""
        device = self.find(name)
        return None if device is None else device['index']

    def version(self):
        """The Lustre version of this node (``2.15.5``), or None when lctl does not say."""
        result = self.run(['get_param', '-n', 'version'], check=False)
        version = parse_version(result.stdout) if result.rc == 0 else None
        if version is None:
            # Very old releases and some builds without /proc/fs/lustre/version.
            fallback = self.run(['lustre_build_version'], check=False)
            if fallback.rc == 0:
                version = parse_version(fallback.stdout)
        return version

    # -- echo clients -------------------------------------------------------------------

    def attach_echo_client(self, name, target, layer=None):
        """Make ``name`` an UP echo_client on ``target`` (``layer='mdd'`` for an MDT).

        An UP echo_client of that name is reused (an aborted run's, or a
        concurrent survey's); a half-made one (``AT``) is detached first, so
        the attach never fails with ``File exists``.  When setup fails the
        device just attached is detached again before LctlError is raised.
        Returns the device record with ``reused`` (bool) added.
        """
        existing = self.find(name)
        if existing is not None:
            if existing['type'] != 'echo_client':
                raise LctlError([self.lctl, 'attach', 'echo_client', name], '',
                                message='a %s device named %s already exists; refusing to touch it'
                                % (existing['type'], name))
            if existing['status'] == 'UP':
                reused = dict(existing)
                reused['reused'] = True
                return reused
            self.teardown(name)
        self.run(['attach', 'echo_client', name, echo_uuid(name)])
        setup = [target] + ([layer] if layer else [])
        try:
            self.run(['--device', name, 'setup'] + setup)
        except LctlError:
            self.teardown(name)
            raise
        device = self.find(name)
        if device is None or device['status'] != 'UP':
            raise LctlError([self.lctl, '--device', name, 'setup'] + setup, '',
                            message='%s is not UP after setup' % name)
        created = dict(device)
        created['reused'] = False
        return created

    def teardown(self, name, devices=None):
        """Remove device ``name``: ``cleanup`` if UP, then ``detach``.

        Returns the steps taken (``['cleanup', 'detach']``, ``['detach']``, or
        ``[]`` when the device is already gone).  A device that vanishes
        between the steps (a concurrent cleanup) is not an error.
        """
        device = self.find(name, devices)
        if device is None:
            return []
        steps = []
        if device['status'] == 'UP':
            result = self.run(['--device', name, 'cleanup'], check=False)
            if result.rc != 0 and self.find(name) is not None:
                _checked(result)
            steps.append('cleanup')
        result = self.run(['--device', name, 'detach'], check=False)
        if result.rc != 0:
            if self.find(name) is not None:
                _checked(result)
        else:
            steps.append('detach')
        return steps

    # -- objects ------------------------------------------------------------------------

    def create_objects(self, name, count):
        """Create ``count`` objects through echo client ``name``; returns their ids."""
        result = self.run(['--device', name, 'create', str(int(count))])
        ids = parse_object_ids(result.stdout)
        if len(ids) != int(count):
            raise LctlError(result.argv, result.stderr, result.rc,
                            'created %d of %d objects' % (len(ids), int(count)))
        return ids

    def destroy_objects(self, name, first_id, count=1):
        """Destroy ``count`` objects from ``first_id`` through echo client ``name``; returns the ids destroyed."""
        result = self.run(['--device', name, 'destroy', str(int(first_id)), str(int(count))])
        return parse_object_ids(result.stdout)


# -- kernel modules ---------------------------------------------------------------------


def loaded_modules(runner):
    """What ``lsmod`` says is loaded (see parse_lsmod)."""
    return parse_lsmod(_checked(runner.run(['lsmod'])).stdout)


def is_builtin(name, loaded):
    """True when ``name`` is built into the kernel: /sys/module has it but lsmod (``loaded``) does not list it.

    A built-in module is always there; it is never ours and never unloaded.
    """
    module = canonical_module(name)
    return module not in loaded and os.path.isdir(os.path.join(SYS_MODULE_DIR, module))


def load_module(runner, node_state, name, run_id):
    """Load ``name`` unless it is loaded or built in; returns True only when we loaded it (and recorded so).

    The record is written before ``modprobe``, so that a kill between the
    two still lets the cleanup unload it; a failed modprobe crosses it off.
    """
    module = canonical_module(name)
    loaded = loaded_modules(runner)
    if module in loaded or is_builtin(module, loaded):
        return False
    node_state.record('modules', run_id, name=module)
    result = runner.run(['modprobe', module])
    if result.rc != 0 or result.timed_out:
        node_state.forget('modules', module)
        _checked(result)
    return True


def module_is_ours(node_state, name):
    """True when the node state says this collection loaded ``name``."""
    module = canonical_module(name)
    return any(canonical_module(entry.get('name', '')) == module for entry in node_state.entries('modules'))


def unload_module_if_ours(runner, node_state, name):
    """Unload ``name`` when we loaded it and nothing uses it.  Returns what happened:

    ``unloaded``; ``not_ours`` (loaded by someone else, or never recorded —
    left alone); ``not_loaded`` (recorded but already gone: the record is
    crossed off); ``in_use`` (users remain, or rmmod says so: the record is
    kept for a later cleanup).  Other rmmod failures raise LctlError.
    """
    module = canonical_module(name)
    if not module_is_ours(node_state, module):
        return 'not_ours'
    loaded = loaded_modules(runner)
    if module not in loaded:
        node_state.forget('modules', module)
        return 'not_loaded'
    if loaded[module]['use_count'] > 0:
        return 'in_use'
    result = runner.run(['rmmod', module])
    if result.rc != 0:
        if _MODULE_IN_USE_RE.search(result.stderr):
            return 'in_use'
        if module not in loaded_modules(runner):
            node_state.forget('modules', module)
            return 'not_loaded'
        _checked(result)
    node_state.forget('modules', module)
    return 'unloaded'
