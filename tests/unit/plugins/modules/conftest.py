# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the module tests share: a module run in this process or as Ansible runs it (a child process), and fake
runners on a fake node. The simulated node (the ``sim`` fixture) is in tests/unit/conftest.py."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import lctl as lctl_utils

try:
    from ansible.module_utils.testing import patch_module_args
except ImportError:  # ansible-core before 2.19 has no helper: a module reads its arguments from basic._ANSIBLE_ARGS
    @contextlib.contextmanager
    def patch_module_args(args):
        from ansible.module_utils import basic  # pylint: disable=import-outside-toplevel
        saved = basic._ANSIBLE_ARGS  # pylint: disable=protected-access
        basic._ANSIBLE_ARGS = json.dumps({'ANSIBLE_MODULE_ARGS': args}).encode('utf-8')  # pylint: disable=protected-access
        try:
            yield
        finally:
            basic._ANSIBLE_ARGS = saved  # pylint: disable=protected-access


try:
    from ansible.module_utils import _internal as module_utils_internal
except ImportError:  # before ansible-core 2.19 module_utils do not know whether they run in the controller
    module_utils_internal = None

# The folder that holds ansible_collections/, for a module run as a child process.
COLLECTION_PARENT = os.path.abspath(os.path.join(os.path.dirname(lctl_utils.__file__), *(['..'] * 5)))


# -- running a module ----------------------------------------------------------------------------------------


@pytest.fixture
def run_in_process(capsys, monkeypatch):
    """``run(module, args, check_mode=False)``: the module's main() in this process, so that its runners can be
    replaced; returns the module's JSON result (a failure included)."""
    if module_utils_internal is not None:
        # Once any test of this process has imported controller code (an action plugin's test), ansible-core sends
        # module warnings to the controller's display instead of the result; the module here runs as on a node.
        monkeypatch.setattr(module_utils_internal, 'is_controller', False)

    def run(module, args, check_mode=False):
        if check_mode:
            args = dict(args, _ansible_check_mode=True)
        with patch_module_args(args):
            with pytest.raises(SystemExit):
                module.main()
        return json.loads(capsys.readouterr().out)
    return run


@pytest.fixture
def run_as_ansible(tmp_path):
    """``run(name, args, check_mode=False, path=None)``: the module ``name`` in a child process reading its
    arguments from a file, as Ansible runs it, with real commands (``path`` replaces PATH); returns its JSON."""
    def run(name, args, check_mode=False, path=None):
        args_file = str(tmp_path / (name + '-args.json'))
        with open(args_file, 'w') as handle:
            json.dump({'ANSIBLE_MODULE_ARGS': dict(args, _ansible_check_mode=check_mode)}, handle)
        env = dict(os.environ, PYTHONPATH=COLLECTION_PARENT + os.pathsep + os.environ.get('PYTHONPATH', ''))
        if path is not None:
            env['PATH'] = path
        completed = subprocess.run(
            [sys.executable, '-m', 'ansible_collections.lustre.iokit.plugins.modules.' + name, args_file],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env, check=False)
        return json.loads(completed.stdout)
    return run


# -- fake runners --------------------------------------------------------------------------------------------


class FakeNodeRunner:
    """A Runner whose commands a fake node answers; the node's expiry and stop reason are the runner's."""

    def __init__(self, node, deadline=None):
        self.node = node
        self.deadline = deadline
        self.stop_reason = None

    def install_sigterm_handler(self):
        return None

    def expired(self):
        expired = getattr(self.node, 'expired', None)
        return expired() if expired is not None else False

    def remaining_s(self):
        # the deadline is on the real clock, the node's time on its fake one: the node says what is left, if anything
        remaining = getattr(self.node, 'remaining_s', None)
        return remaining() if remaining is not None else None

    def run(self, argv, env=None, cwd=None):
        return self.run_many([argv], env=env)[0]

    def run_many(self, argvs, env=None, cwd=None):
        if hasattr(self.node, 'run_many'):
            answers = self.node.run_many(argvs, env=env)
        else:
            answers = [self.node.run(argv, env=env) for argv in argvs]
        self.stop_reason = getattr(self.node, 'stop_reason', None)
        return answers


@pytest.fixture
def fake_runners(monkeypatch):
    """``install(module, node)``: the module's Runner and ProcessRecordingRunner make runners on ``node``.

    Returns the list of the runners the module makes, in the order it makes them (each with its ``deadline``).
    """
    made = []

    def install(module, node):
        def make(*unused_args, **kwargs):
            runner = FakeNodeRunner(node, deadline=kwargs.get('deadline'))
            made.append(runner)
            return runner
        for name in ('Runner', 'ProcessRecordingRunner'):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, make)
        return made
    return install
