# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Resolve a run's results directory and run id once, on the controller, before any node is touched.

Documentation in ``plugins/modules/results_location.py``.
"""

from __future__ import annotations

import os

from ansible.errors import AnsibleActionFail
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase

from ansible_collections.lustre.iokit.plugins.module_utils.results import (
    checked_run_id,
    new_launch_id,
    new_run_id,
)
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.dsn import check_placement, resolve_dsn
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.errors import HistoryError
from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import (
    DEFAULT_RESULTS_DIR,
    check_free_space,
    check_results_dir,
    resolve_results_dir,
)

ARGUMENT_SPEC = {
    'results_dir': {'type': 'raw'},
    'run_id': {'type': 'raw'},
    'new_run_id': {'type': 'bool', 'default': True},
    'check_history': {'type': 'bool', 'default': False},
}

# The variable a playbook registers this action's result in; a later call of the same playbook run reuses its
# run id (the roles call it again in their preflight, for when they are used without the collection's playbooks).
REGISTERED = 'iokit_run'


class ActionModule(ActionBase):

    TRANSFERS_FILES = False

    def _variable(self, task_vars, name):
        """(True, templated value) when ``name`` is defined for the task, else (False, None)."""
        if name not in task_vars:
            return False, None
        return True, self._templar.template(task_vars[name])

    def _given(self, option, variable, task_vars):
        """(defined, value, name for messages): the task's option if given, else the collection's variable."""
        if option in self._task.args:
            return True, self._task.args[option], option
        defined, value = self._variable(task_vars, variable)
        return defined, value, variable

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        params = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)[1]

        defined, value, name = self._given('results_dir', 'iokit_results_dir', task_vars)
        try:
            results_dir = resolve_results_dir(value if defined else DEFAULT_RESULTS_DIR, name)
        except ValueError as exc:
            raise AnsibleActionFail(str(exc))

        defined, value, name = self._given('run_id', 'iokit_run_id', task_vars)
        previous = self._variable(task_vars, REGISTERED)[1]
        generated = False
        if defined:
            try:
                run_id = checked_run_id(value, name)
            except ValueError as exc:
                raise AnsibleActionFail(str(exc))
        elif isinstance(previous, dict) and isinstance(previous.get('run_id'), str):
            run_id = previous['run_id']
        elif params['new_run_id'] and self._variable(task_vars, 'awx_workflow_job_id')[0]:
            # An AWX job started by a workflow, and every slice of a sliced job (AWX runs the slices as a workflow
            # job), gets that workflow job's id; no variable tells a slice that it is one. Deriving the run id from it,
            # as the acceptance workflow's plan node does, puts every slice of one launch into the same run.
            try:
                run_id = checked_run_id('awx-wf%s' % self._variable(task_vars, 'awx_workflow_job_id')[1],
                                        'awx_workflow_job_id')
            except ValueError as exc:
                raise AnsibleActionFail(str(exc))
            generated = True
        elif params['new_run_id']:
            run_id = new_run_id()
            generated = True
        else:
            raise AnsibleActionFail('iokit_run_id: give the run to use (-e iokit_run_id=<id>, a directory in %s)'
                                    % results_dir)

        try:
            check_results_dir(results_dir, 'iokit_results_dir' if 'results_dir' not in self._task.args else 'results_dir',
                              run_id=run_id, create=not self._task.check_mode)
            if not self._task.check_mode:
                check_free_space(results_dir, len(task_vars.get('ansible_play_hosts_all') or []),
                                 'iokit_results_dir' if 'results_dir' not in self._task.args else 'results_dir')
        except ValueError as exc:
            raise AnsibleActionFail('%s; nothing was started' % exc)
        # One launch id per ansible-playbook run, like the run id: every survey play of it scopes its cleanup by it.
        launch_id = previous.get('launch_id') if isinstance(previous, dict) else None
        if not isinstance(launch_id, str) or not launch_id:
            launch_id = new_launch_id()
        result.update(changed=False, results_dir=results_dir, run_id=run_id,
                      run_dir=os.path.join(results_dir, run_id), run_id_generated=generated, launch_id=launch_id)
        if params['check_history']:
            result['history'] = self._history(task_vars, results_dir)
        return result

    def _history(self, task_vars, results_dir):
        """Whether the surveys record their results in the history (iokit_history) and where (iokit_history_dsn,
        checked now, before any node is touched; the database itself is opened when a result is stored)."""
        value = self._variable(task_vars, 'iokit_history')[1] if 'iokit_history' in task_vars else True
        try:
            enabled = boolean(value, strict=True)
        except TypeError:
            raise AnsibleActionFail('iokit_history: must be true or false, got %r; nothing was started' % (value,))
        if not enabled:
            return {'enabled': False, 'dsn': None}
        try:
            dsn = resolve_dsn(self._variable(task_vars, 'iokit_history_dsn')[1], results_dir)
            check_placement(dsn)
        except (ValueError, HistoryError) as exc:
            raise AnsibleActionFail('%s; nothing was started (iokit_history=false records no history)' % exc)
        return {'enabled': True, 'dsn': dsn.shown}
