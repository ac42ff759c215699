# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Record stored results in the results history, on the controller (documentation in
``plugins/modules/history_record.py``; the history itself is ``plugins/plugin_utils/history``)."""

from __future__ import annotations

import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.lustre.iokit.plugins.plugin_utils import lnet_facts
from ansible_collections.lustre.iokit.plugins.plugin_utils.history import identity
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.dsn import check_placement, resolve_dsn
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.errors import HistoryError
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.store import (
    DEFAULT_TIMEOUT_S, History, kept_results, parse_tags)

ARGUMENT_SPEC = {
    'results_dir': {'type': 'path', 'required': True},
    'run_id': {'type': 'str'},
    'dsn': {'type': 'str', 'no_log': True},
    'hosts': {'type': 'list', 'elements': 'str'},
    'surveys': {'type': 'list', 'elements': 'str'},
    'tags': {'type': 'raw'},
    'nid_owners': {'type': 'dict'},
    'timeout_s': {'type': 'float', 'default': DEFAULT_TIMEOUT_S},
}
DSN_VARIABLE = 'iokit_history_dsn'
TAGS_VARIABLE = 'iokit_history_tags'


def outcome_dict(outcome) -> dict:
    """One run's RecordOutcome as the task returns it."""
    return {'run_id': outcome.run_id, 'run_new': outcome.run_new, 'envelopes_new': outcome.envelopes_new,
            'envelopes_changed': outcome.envelopes_changed, 'envelopes_unchanged': outcome.envelopes_unchanged,
            'samples_added': outcome.samples_added, 'samples_removed': outcome.samples_removed,
            'unreadable': [{'path': path, 'error': message} for path, message in outcome.unreadable]}


class ActionModule(ActionBase):

    TRANSFERS_FILES = False

    def _variable(self, task_vars, name):
        return self._templar.template(task_vars[name]) if name in task_vars else None

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        params = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)[1]
        # Relative to the directory ansible-playbook was started from, as iokit_results_dir; absolute in messages.
        results_dir = os.path.abspath(params['results_dir'])
        run_id = params['run_id']
        given_dsn = params['dsn'] if params['dsn'] is not None else self._variable(task_vars, DSN_VARIABLE)
        name = 'dsn' if params['dsn'] is not None else DSN_VARIABLE
        try:
            dsn = resolve_dsn(given_dsn, results_dir, name)
            check_placement(dsn, name)
            tags = parse_tags(params['tags'] if params['tags'] is not None
                              else self._variable(task_vars, TAGS_VARIABLE))
        except (ValueError, HistoryError) as exc:
            raise AnsibleActionFail(str(exc))
        result.update(changed=False, dsn=dsn.shown)
        if self._task.check_mode:
            result['msg'] = 'check mode: nothing recorded in %s' % dsn.shown
            return result
        hostvars = task_vars.get('hostvars') or {}
        all_hosts = (task_vars.get('groups') or {}).get('all') or []
        owners = lnet_facts.nid_owners(hostvars, all_hosts, params['nid_owners'])
        try:
            with History(dsn, timeout_s=params['timeout_s']) as history:
                if run_id is None:
                    imported = history.import_results(results_dir, tags=tags, nid_owners=owners)
                    outcomes, not_runs = imported.runs, imported.not_runs
                else:
                    # The collection recording right after the store is the one that measured.
                    outcomes = [history.record_run(results_dir, run_id, tags=tags, hosts=params['hosts'],
                                                   surveys=params['surveys'], nid_owners=owners,
                                                   collection_version=identity.collection_version())]
                    not_runs = []
        except HistoryError as exc:
            message = str(exc)
            if run_id is not None and 'is not fully recorded' not in message:
                message = '%s. %s' % (message, kept_results(results_dir, run_id))
            raise AnsibleActionFail(message)
        except ValueError as exc:
            raise AnsibleActionFail(str(exc))
        result.update(
            changed=any(outcome.changed for outcome in outcomes),
            runs=[outcome_dict(outcome) for outcome in outcomes],
            runs_new=sum(1 for outcome in outcomes if outcome.run_new),
            envelopes_new=sum(outcome.envelopes_new + outcome.envelopes_changed for outcome in outcomes),
            samples_added=sum(outcome.samples_added for outcome in outcomes),
            unreadable=[item for outcome in outcomes for item in outcome_dict(outcome)['unreadable']],
            not_runs=[{'path': path, 'why': why} for path, why in not_runs])
        return result
