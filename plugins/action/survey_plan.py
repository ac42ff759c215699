# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Estimate a survey's plan on a host, from its last stored run of the survey when the results store has one.

Runs on the controller only (documentation in ``plugins/modules/survey_plan.py``).
"""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.lustre.iokit.plugins.module_utils import plan_estimate
from ansible_collections.lustre.iokit.plugins.plugin_utils.fleet_plan import host_line
from ansible_collections.lustre.iokit.plugins.plugin_utils import results_store

ARGUMENT_SPEC = {
    'survey': {'type': 'str', 'required': True, 'choices': sorted(plan_estimate.WORK_UNITS)},
    'plan': {'type': 'dict', 'required': True},
    'results_dir': {'type': 'path'},
    'run_id': {'type': 'str'},
    'host': {'type': 'str'},
}


def plan_entry(survey, plan, host, results_dir=None, run_id=None):
    """``{'survey', 'host', 'estimate'}``: the module's assumed estimate, or one from the host's last stored run."""
    measured = results_store.stored_rate(results_dir, host, survey, exclude_run_id=run_id) if results_dir else None
    if measured is not None:
        estimate = plan_estimate.estimate(survey, plan, measured=measured)
    elif isinstance(plan.get('estimate'), dict):
        estimate = plan['estimate']
    else:
        estimate = plan_estimate.estimate(survey, plan)
    return {'survey': survey, 'host': host, 'estimate': estimate}


class ActionModule(ActionBase):

    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        params = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)[1]
        host = params['host'] or task_vars.get('inventory_hostname')
        if not host:
            raise AnsibleActionFail('host: no host given and no inventory_hostname')
        entry = plan_entry(params['survey'], params['plan'], host, params['results_dir'], params['run_id'])
        result.update(changed=False, estimate=entry['estimate'], entry=entry, msg=host_line(host, entry['estimate']))
        return result
