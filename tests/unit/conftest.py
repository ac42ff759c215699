# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The simulated Lustre node (lustre-sim) for every unit test that drives real commands: the ``sim`` fixture."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import lctl as lctl_utils
from ansible_collections.lustre.iokit.plugins.module_utils import node_state
from ansible_collections.lustre.iokit.plugins.module_utils.runner import Runner


def find_lustre_sim():
    found = shutil.which('lustre-sim')
    if found:
        return found
    # The checkout's virtualenv, seen from the checkout or from its staged copy under .build/.
    directory = os.path.dirname(os.path.abspath(__file__))
    while directory != os.path.dirname(directory):
        candidate = os.path.join(directory, '.venv', 'bin', 'lustre-sim')
        if os.access(candidate, os.X_OK):
            return candidate
        directory = os.path.dirname(directory)
    return None


LUSTRE_SIM = find_lustre_sim()


class Sim:
    """A node made by lustre-sim under ``root``, its lctl, lfs, lst, lsmod... first on PATH."""

    def __init__(self, root):
        self.root = root

    def cli(self, *args):
        return subprocess.run([LUSTRE_SIM] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, check=True).stdout

    def fault(self, *args):
        self.cli('fault', '--root', self.root, 'add', *args)

    def lctl(self, *args, check=True):
        result = subprocess.run(['lctl'] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                universal_newlines=True, check=False)
        if check and result.returncode != 0:
            raise AssertionError('lctl %s: %s' % (' '.join(args), result.stderr))
        return result

    def device_names(self):
        return [device['name'] for device in lctl_utils.parse_lctl_dl(self.lctl('dl').stdout)]

    def modules(self):
        return lctl_utils.loaded_modules(Runner())

    def echo_objects(self, target):
        return sorted(glob.glob(os.path.join(self.root, 'targets', target, 'O', 'echo', '*', '*')))


@pytest.fixture(autouse=True)
def node_lock_dir(tmp_path, monkeypatch):
    """Every test is a node of its own: the node-wide survey locks (node_state.node_lock_dir) under its tmp_path,
    never the machine's /run, which parallel tests and real runs share."""
    directory = str(tmp_path / 'node-run-locks')
    monkeypatch.setattr(node_state, 'node_lock_dir', lambda: directory)
    return directory


@pytest.fixture
def sim_init_args():
    """The node's shape (``lustre-sim init`` options); a test file overrides this fixture for another."""
    return ['--osts', '2', '--mdts', '1', '--ost-size-mib', '32']


@pytest.fixture
def sim(tmp_path, monkeypatch, sim_init_args):
    """A fresh simulated node for one test, destroyed after it; skips the test where lustre-sim is missing."""
    if LUSTRE_SIM is None:
        pytest.skip('lustre-sim (simulator/) is not installed')
    root = str(tmp_path / 'node')
    subprocess.run([LUSTRE_SIM, 'init', '--root', root] + list(sim_init_args) + ['--force'],
                   stdout=subprocess.DEVNULL, check=True)
    monkeypatch.setenv('PATH', os.path.join(root, 'bin') + os.pathsep + os.environ['PATH'])
    monkeypatch.setenv('LUSTRE_SIM_ROOT', root)
    yield Sim(root)
    # a fault such as host_dead would stand in the way of the teardown
    subprocess.run([LUSTRE_SIM, 'fault', '--root', root, 'clear', '--all'], stdout=subprocess.DEVNULL, check=False)
    subprocess.run([LUSTRE_SIM, 'destroy', '--root', root], stdout=subprocess.DEVNULL, check=False)
