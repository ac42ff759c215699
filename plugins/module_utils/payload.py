# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The module payloads Ansible extracts on a node, and those a killed module left.

Ansible unpacks each module into ``<tmp>/ansible_<fqcn>_payload_<random>`` and removes that directory when the module
ends, unless the module is SIGKILLed (the async limit, a killed wait, a lost node session).  Nothing in the directory
says which process it belongs to, and a running module keeps no file of it open, so each of this collection's modules
writes its pid and kernel start time into its own payload directory as it starts (``claim``): a cleanup then removes
the directories whose owner is gone (``stale_payloads``), and never one a live module still runs from.

Target-side code: standard library only, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import stat
import tempfile

from ansible_collections.lustre.iokit.plugins.module_utils.node_state import (
    has_exited,
    is_same_process,
    process_start_time,
)

PREFIX = 'ansible_lustre.iokit.'
OWNER_FILE = 'lustre-iokit-owner.json'


def payload_dir(module_file=None):
    """The payload directory this code runs from (None outside an Ansible payload, as in unit tests)."""
    path = module_file or __file__
    marker = '_payload.zip' + os.sep
    if marker not in path:
        return None
    directory = os.path.dirname(path.split(marker, 1)[0])
    return directory if os.path.basename(directory).startswith(PREFIX) else None


def claim(module_file=None, pid=None):
    """Write this process's identity into its payload directory; quietly nothing when there is none.

    Called first in every module's ``main()``, so that only a module killed in its first instants leaves an
    unclaimed directory (which the cleanup leaves alone: it cannot tell that its owner is gone).
    """
    directory = payload_dir(module_file)
    if directory is None:
        return None
    pid = os.getpid() if pid is None else pid
    owner = {'pid': pid, 'start_time': process_start_time(pid)}
    try:
        fd, temporary = tempfile.mkstemp(dir=directory, prefix='.owner.')
        with os.fdopen(fd, 'w') as handle:
            json.dump(owner, handle)
        os.rename(temporary, os.path.join(directory, OWNER_FILE))
    except (IOError, OSError):
        return None  # a payload we cannot mark is only one the cleanup will not remove
    return directory


def _owner(directory):
    try:
        with open(os.path.join(directory, OWNER_FILE)) as handle:
            owner = json.load(handle)
    except (IOError, OSError, ValueError):
        return None
    return owner if isinstance(owner, dict) and isinstance(owner.get('pid'), int) else None


def stale_payloads(directories=None):
    """The payload directories of this collection's modules whose owner process is gone: ``[(path, owner)]``.

    Only directories of this user (a cleanup run as root never removes what another user's module left, and a
    planted symbolic link is not a directory here), and only claimed ones.
    """
    found = []
    for parent in directories or [tempfile.gettempdir()]:
        try:
            names = sorted(os.listdir(parent))
        except OSError:
            continue
        for name in names:
            if not name.startswith(PREFIX) or '_payload_' not in name:
                continue
            path = os.path.join(parent, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
                continue
            owner = _owner(path)
            # A killed module that its parent has not reaped yet (a zombie) is gone all the same: left for a later
            # cleanup, its payload would make that one report a change.
            if owner is None or (is_same_process(owner) and not has_exited(owner['pid'])):
                continue
            found.append((path, owner))
    return found


def remove_stale_payloads(directories=None, check_mode=False):
    """Remove the payloads ``stale_payloads`` finds: ``(removed, errors)``, ``{path, pid}`` dicts and ``(path, message)``."""
    removed, errors = [], []
    for path, owner in stale_payloads(directories):
        if not check_mode:
            try:
                shutil.rmtree(path)
            except OSError as exc:
                errors.append((path, 'its module (pid %s) is gone, but it cannot be removed: %s'
                               % (owner.get('pid'), exc)))
                continue
        removed.append({'path': path, 'pid': owner.get('pid')})
    return removed, errors
