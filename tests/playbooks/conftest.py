# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run from the checkout: the collection is importable through .venv/collections (linked by `make setup`)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLECTIONS = os.path.join(ROOT, '.venv', 'collections')
# The ansible-core matrix (tests/tools/core_matrix.py) runs these tests with an older line's ansible-playbook
# and the oldest node Python that line supports; by default the checkout's own.
ANSIBLE_BIN = os.environ.get('IOKIT_ANSIBLE_BIN') or os.path.join(ROOT, '.venv', 'bin')
NODE_PYTHON = os.environ.get('IOKIT_NODE_PYTHON') or sys.executable
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)

# The tests here wait the way the unit tests do, with the same helper: ``from conftest import wait_for``.
from ansible_collections.lustre.iokit.tests.unit.waiting import wait_for  # noqa: E402 pylint: disable=wrong-import-position,unused-import

VENV_BIN = os.path.join(ROOT, '.venv', 'bin')
ANSIBLE_PLAYBOOK = os.path.join(VENV_BIN, 'ansible-playbook')
LUSTRE_SIM = shutil.which('lustre-sim', path=VENV_BIN + os.pathsep + os.environ.get('PATH', ''))


def localhost_inventory(python, groups=()):
    """An inventory of localhost alone (local connection, run by ``python``), a member of each of ``groups``."""
    lines = ['all:', '  hosts:', '    localhost:', '      ansible_connection: local',
             '      ansible_python_interpreter: %s' % python]
    if groups:
        lines.append('  children:')
        lines.extend('    %s: {hosts: {localhost: }}' % group for group in groups)
    return '\n'.join(lines) + '\n'


def simulated_local_host(base, name, *init_args):
    """A lustre-sim node ``<base>/<name>`` (``lustre-sim init`` with ``init_args``) and the inventory variables of
    a local-connection host that is that node: a Python wrapper puts the node's tools on PATH, and its own workdir."""
    root = os.path.join(base, name)
    subprocess.run([LUSTRE_SIM, 'init', '--root', root] + list(init_args) + ['--no-mount', '--force'], check=True,
                   stdout=subprocess.DEVNULL)
    python = os.path.join(base, name + '-python')
    with open(python, 'w', encoding='utf-8') as handle:
        handle.write('#!/bin/sh\nPATH="%s/bin:$PATH" LUSTRE_SIM_ROOT="%s" exec "%s" "$@"\n' % (root, root, sys.executable))
    os.chmod(python, stat.S_IRWXU)
    return {'ansible_connection': 'local', 'ansible_python_interpreter': python,
            'iokit_workdir': os.path.join(base, name + '-work')}
