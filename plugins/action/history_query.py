# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Ask the results history, on the controller (documentation in ``plugins/modules/history_query.py``; the queries
are ``plugins/plugin_utils/history/queries.py``)."""

from __future__ import annotations

import datetime
import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.lustre.iokit.plugins.plugin_utils.history import queries
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.dsn import check_placement, resolve_dsn
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.errors import HistoryError
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.store import DEFAULT_TIMEOUT_S, History

ARGUMENT_SPEC = {
    'action': {'type': 'str', 'required': True, 'choices': list(queries.ACTIONS)},
    'results_dir': {'type': 'path', 'required': True},
    'dsn': {'type': 'str', 'no_log': True},
    'dest': {'type': 'path'},
    'period': {'type': 'str'},
    'tags': {'type': 'raw'},
    'run_id': {'type': 'str'},
    'lhs': {'type': 'str'},
    'rhs': {'type': 'str'},
    'selection': {'type': 'str'},
    'component': {'type': 'str'},
    'metric': {'type': 'str'},
    'point': {'type': 'dict'},
    'before': {'type': 'str'},
    'keep_runs': {'type': 'list', 'elements': 'str', 'default': []},
    'timeout_s': {'type': 'float', 'default': DEFAULT_TIMEOUT_S},
}
DSN_VARIABLE = 'iokit_history_dsn'


class ActionModule(ActionBase):

    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        params = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)[1]
        # Relative to the directory ansible-playbook was started from, as iokit_results_dir; absolute in messages.
        results_dir = os.path.abspath(params['results_dir'])
        dest = os.path.abspath(params['dest']) if params['dest'] else results_dir
        given_dsn = params['dsn']
        name = 'dsn'
        if given_dsn is None and DSN_VARIABLE in task_vars:
            given_dsn, name = self._templar.template(task_vars[DSN_VARIABLE]), DSN_VARIABLE
        try:
            dsn = resolve_dsn(given_dsn, results_dir, name)
            check_placement(dsn, name)
            os.makedirs(dest, exist_ok=True)
            stamp = datetime.datetime.now(datetime.timezone.utc).strftime('%Y%m%dT%H%M%SZ')
            with History(dsn, timeout_s=params['timeout_s']) as history:
                asked = queries.ask(history, params['action'], params, dest, stamp, check=self._task.check_mode)
        except (ValueError, KeyError, OSError, HistoryError) as exc:
            message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
            raise AnsibleActionFail(message)
        result.update(asked, dsn=dsn.shown)
        return result
