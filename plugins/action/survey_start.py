# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Starts a survey's module with the arguments its role's variables give (plugin_utils/survey_call.py)."""

from __future__ import annotations

import os
import uuid

from ansible import constants as C
from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.lustre.iokit.plugins.action.async_result import PROGRESS_CALLBACKS, note_started
from ansible_collections.lustre.iokit.plugins.module_utils import survey_args, survey_catalog
from ansible_collections.lustre.iokit.plugins.plugin_utils import survey_call, survey_checks

display = Display()

ARGUMENT_SPEC = {
    'survey': {'type': 'str', 'required': True, 'choices': list(survey_catalog.MEASURING)},
    'run_id': {'type': 'str', 'required': True},
    'launch_id': {'type': 'str', 'required': True},
    'force_rerun': {'type': 'bool', 'default': False},
    'start_together': {'type': 'bool', 'default': False},
}


def start_signal_path(module_args, survey):
    """The file this host's survey waits for before it measures (the module's ``start_signal``): in the run's
    directory on the node, and new for every start, so that no earlier start's file can start this one."""
    run_dir = os.path.join(module_args.get('workdir') or survey_args.DEFAULT_WORKDIR, module_args['run_id'])
    return os.path.join(run_dir, '%s.start-%s' % (survey, uuid.uuid4().hex[:16]))


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _supports_async = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        params = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)[1]
        survey = params.pop('survey')
        start_together = params.pop('start_together')
        variables = survey_call.Variables(task_vars, self._templar.template)
        try:
            module_args = survey_call.module_args(survey, variables, params)
        except survey_checks.UnknownSurvey as exc:
            raise AnsibleActionFail(str(exc))
        wrap_async = self._task.async_val
        if start_together and wrap_async:
            module_args['start_signal'] = start_signal_path(module_args, survey)
        result.update(self._execute_module(module_name='lustre.iokit.%s' % survey_catalog.CATALOG[survey].module,
                                           module_args=module_args, task_vars=task_vars, wrap_async=wrap_async))
        if (wrap_async and result.get('ansible_job_id')
                and C.config.get_config_value('DEFAULT_STDOUT_CALLBACK') not in PROGRESS_CALLBACKS):
            # The wait's fleet line (printed by the wait where the stdout callback is not the collection's) counts
            # the hosts started but not polled yet; the collection's callback reads the start task's results.
            try:
                note_started(params['run_id'], survey, self._task._uuid, task_vars.get('inventory_hostname', 'host'))
            except (IOError, OSError) as exc:
                display.vvv('fleet progress: cannot note the start of %s: %s' % (survey, exc))
        if module_args.get('start_signal'):
            result['start_signal'] = module_args['start_signal']
        # An async job's wrapper still needs the remote tmp directory; it removes it when the job ends.
        if not wrap_async:
            self._remove_tmp_path(self._connection._shell.tmpdir)
        return result
