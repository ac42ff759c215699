# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the action plugin tests share: an action run as a task runs it, on a node that is this machine.

``run_action(name, args, task_vars=None, check_mode=False)`` builds the collection's real ``ActionModule``
``name`` with a task of those arguments and calls its ``run()``: the validation, the store on the controller and
every file are real. Only the connection is stood in for: a module the action runs on the node
(``_execute_module``: ``ansible.legacy.slurp``, ``lustre.iokit.async_result``) runs here as Ansible runs it, a
child process reading its arguments from a file, and each call is recorded in ``node.calls``.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import uuid

import pytest

from ansible.errors import AnsibleActionFail
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

from ansible_collections.lustre.iokit.plugins.module_utils import results

# The folder that holds ansible_collections/, for a module run as a child process.
COLLECTION_PARENT = os.path.abspath(os.path.join(os.path.dirname(results.__file__), *(['..'] * 5)))

# How the node finds a module the action names.
MODULE_PACKAGES = {'ansible.legacy.': 'ansible.modules.', 'ansible.builtin.': 'ansible.modules.',
                   'lustre.iokit.': 'ansible_collections.lustre.iokit.plugins.modules.'}


class FakeTask:
    """The attributes of a task that ActionBase and the collection's actions read."""

    def __init__(self, action, args, check_mode=False):
        self.action = action
        self.args = dict(args)
        self.check_mode = check_mode
        self.async_val = 0
        self.delegate_to = None
        self.delegate_facts = False
        self.no_log = False
        self.diff = False
        self.environment = []
        self.collections = []
        self._uuid = uuid.uuid4().hex


class FakeShell:
    """The connection's shell: no remote temporary directory, and the options the test gives."""

    def __init__(self, options=None):
        self.tmpdir = None
        self.options = dict(options or {})

    def get_option(self, name, hostvars=None):
        return self.options[name]


class FakeConnection:
    def __init__(self, shell_options=None):
        self._shell = FakeShell(shell_options)
        self.become = None


class LocalNode:
    """A node that is this machine: runs each module the action asks for as Ansible runs it, and records the call."""

    def __init__(self, tmp_path):
        self.tmp_path = tmp_path
        self.calls = []

    def execute(self, module_name, module_args, check_mode=False):
        self.calls.append((module_name, dict(module_args)))
        for prefix, package in MODULE_PACKAGES.items():
            if module_name.startswith(prefix):
                module = package + module_name[len(prefix):]
                break
        else:
            raise AssertionError('the test node has no module %s' % module_name)
        args_file = str(self.tmp_path / ('node-args-%d.json' % len(self.calls)))
        with open(args_file, 'w') as handle:
            json.dump({'ANSIBLE_MODULE_ARGS': dict(module_args, _ansible_check_mode=check_mode)}, handle)
        env = dict(os.environ, PYTHONPATH=COLLECTION_PARENT + os.pathsep + os.environ.get('PYTHONPATH', ''))
        completed = subprocess.run([sys.executable, '-m', module, args_file], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, universal_newlines=True, env=env, check=False)
        try:
            return json.loads(completed.stdout)
        except ValueError:
            raise AssertionError('%s printed no JSON: %s %s' % (module, completed.stdout, completed.stderr))


def make_action(name, args, node, check_mode=False, shell_options=None, task_vars=None, task_uuid=None):
    """The collection's ActionModule ``name`` for a task with ``args``, whose node is ``node``; its templar sees
    ``task_vars``. Hosts of one task share its ``task_uuid``."""
    action_class = importlib.import_module('ansible_collections.lustre.iokit.plugins.action.' + name).ActionModule

    class OnNode(action_class):  # pylint: disable=too-few-public-methods
        def _execute_module(self, module_name=None, module_args=None, task_vars=None, **unused):
            return node.execute(module_name, module_args, check_mode=self._task.check_mode)

    loader = DataLoader()
    task = FakeTask('lustre.iokit.' + name, args, check_mode=check_mode)
    task._uuid = task_uuid or task._uuid  # pylint: disable=protected-access
    action = OnNode(task, FakeConnection(shell_options), None, loader, Templar(loader=loader, variables=task_vars or {}),
                    None)
    action._load_name = 'lustre.iokit.' + name  # pylint: disable=protected-access,attribute-defined-outside-init
    return action


@pytest.fixture
def node(tmp_path):
    return LocalNode(tmp_path)


@pytest.fixture
def action_for(node):
    """``action_for(name, args, **settings)``: the action object (make_action's settings), to run later."""
    def make(name, args, **settings):
        return make_action(name, args, node, **settings)
    return make


@pytest.fixture
def run_action(node):
    """``run(name, args, task_vars=None, check_mode=False, shell_options=None, task_uuid=None)``: the action's result."""
    def run(name, args, task_vars=None, **settings):
        action = make_action(name, args, node, task_vars=task_vars, **settings)
        return action.run(task_vars=dict(task_vars or {}))
    return run


@pytest.fixture
def action_fails(run_action):
    """``fails(name, args, ...)``: the message of the AnsibleActionFail the action raises (the test fails if none)."""
    def fails(*args, **kwargs):
        with pytest.raises(AnsibleActionFail) as raised:
            run_action(*args, **kwargs)
        return str(raised.value.message)
    return fails


def _envelope(run_id='20261122T101500Z-3f2a', host='oss1', survey='obdfilter', status='ok', records=None,
              errors=None, raw_output=None, **extra):
    """A valid envelope of ``status``, built as a survey module builds it."""
    builder = results.EnvelopeBuilder(run_id, host, survey, 'native', {'size_mib': 64}, raw_output=raw_output,
                                      now=1795428000.0)
    measured = status in ('ok', 'partial')
    for record in ([{'thr': 1, 'write_mib_s': 100.0}] if records is None and measured else records or []):
        builder.add_record(record)
    for message in errors or (['timeout after 60 s'] if status == 'partial' else []):
        builder.add_error(message)
    if status == 'skipped':
        builder.mark_nothing_to_do()
    builder.extra_fields.update(extra)
    return builder.finish(now=1795428060.0)


@pytest.fixture
def make_envelope():
    """``make(run_id=..., host='oss1', survey='obdfilter', status='ok', records=None, errors=None, ...)``: a valid
    envelope, built as a survey module builds it (extra keyword arguments are optional envelope fields)."""
    return _envelope


try:
    from ansible.template import trust_as_template
except ImportError:  # ansible-core before 2.19 templates every string
    def trust_as_template(value):
        return value


@pytest.fixture
def template():
    """``template(text)``: ``text`` as a template in a variable (trusted, as a variable from an inventory is)."""
    return trust_as_template
