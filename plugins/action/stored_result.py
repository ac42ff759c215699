# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Read the controller's results store: one host's envelope, or every host's envelopes of a run.

Runs on the controller only (documentation in ``plugins/modules/stored_result.py``).
"""

from __future__ import annotations

import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.lustre.iokit.plugins.module_utils.results import (
    SURVEYS,
    EnvelopeError,
    validate_host,
    validate_run_id,
)
from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import (
    envelope_path,
    list_envelopes,
    read_envelope,
    should_skip,
)

ARGUMENT_SPEC = {
    'results_dir': {'type': 'path', 'required': True},
    'run_id': {'type': 'str', 'required': True},
    'survey': {'type': 'str', 'required': True, 'choices': list(SURVEYS)},
    'host': {'type': 'str'},
    'all_hosts': {'type': 'bool', 'default': False},
    'force': {'type': 'bool', 'default': False},
}


class ActionModule(ActionBase):

    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        params = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)[1]
        try:
            run_id = validate_run_id(params['run_id'])
        except ValueError as exc:
            raise AnsibleActionFail(str(exc))
        result['changed'] = False
        if params['all_hosts']:
            result.update(self._whole_run(params['results_dir'], run_id, params['survey']))
            return result
        host = params['host'] or task_vars.get('inventory_hostname')
        try:
            validate_host(host)
        except ValueError as exc:
            raise AnsibleActionFail('host: %s' % exc)
        result.update(self._one_host(params['results_dir'], run_id, host, params['survey'], params['force']))
        if result['skip']:
            # Said here rather than by a task of its own: one task less per host in every survey play.
            result['msg'] = ('%s on %s is already ok in run %s (%s); iokit_force_rerun=true runs it again'
                             % (params['survey'], host, run_id, result['path']))
            self._display.display(result['msg'])
        return result

    @staticmethod
    def _one_host(results_dir, run_id, host, survey, force):
        path = envelope_path(results_dir, run_id, host, survey)
        answer = {'path': path, 'exists': os.path.isfile(path), 'status': None, 'problems': [],
                  'skip': should_skip(results_dir, run_id, host, survey, force=force)}
        if answer['exists']:
            try:
                answer['status'] = read_envelope(path)['status']
            except EnvelopeError as exc:
                answer['problems'] = list(exc.problems)
        return answer

    @staticmethod
    def _whole_run(results_dir, run_id, survey):
        envelopes = []
        invalid = []
        suffix = os.sep + survey + '.json'
        for path, found in list_envelopes(results_dir, run_id):
            if not path.endswith(suffix):
                continue
            if isinstance(found, EnvelopeError):
                invalid.append({'path': path, 'problems': list(found.problems)})
            else:
                envelopes.append(found)
        return {'envelopes': envelopes, 'invalid': invalid, 'run_dir': os.path.join(results_dir, run_id)}
