# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The collection's controller code imported once, in ansible-playbook's own process, before it forks a worker.

ansible-playbook runs every task of every host in a worker process forked for it. A worker imports what the task's
action, filter and lookup plugins need, and Ansible's collection loader compiles each collection module it imports
from source, with no bytecode cache: the report, the checks and the survey catalogue (which brings the engines and
parsers) were compiled again for each host and task that templates one of the collection's filters, about a third
of a second each time. Imported here once, the workers inherit them. The survey_progress callback calls this as
ansible-playbook loads it, before the first play.
"""

from __future__ import annotations

import importlib
import os

PACKAGE = 'ansible_collections.lustre.iokit.plugins.plugin_utils'


def preload_controller_code():
    """Import every module of the collection's plugin_utils (and so the module_utils they use); the names of those
    that failed to import, which are left to fail where a plugin imports them, with Ansible's own message."""
    failed = []
    for name in _module_names(importlib.import_module(PACKAGE)):
        try:
            importlib.import_module(name)
        except Exception:  # pylint: disable=broad-exception-caught
            failed.append(name)
    return failed


def _module_names(package):
    # os.walk, not pkgutil: the collection's packages have no __init__.py, which pkgutil does not walk into
    for top in package.__path__:
        for directory, subdirectories, files in os.walk(top):
            subdirectories[:] = sorted(name for name in subdirectories if name.isidentifier())
            relative = os.path.relpath(directory, top)
            prefix = '.'.join([PACKAGE] + ([] if relative == os.curdir else relative.split(os.sep)))
            for name in sorted(files):
                if name.endswith('.py') and name[:-3].isidentifier():
                    yield prefix + '.' + name[:-3]
