# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write a run's report, verdict and baseline on the controller.

Runs on the controller only (documentation in ``plugins/modules/iokit_report.py``).
The samples of a large fleet (hundreds of thousands) never pass through
Ansible variables: they are read, analysed and written here, and only the
summary comes back to the play.
"""

from __future__ import annotations

import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.lustre.iokit.plugins.module_utils.results import validate_run_id
from ansible_collections.lustre.iokit.plugins.plugin_utils import lnet_facts
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.compare import BaselineError
from ansible_collections.lustre.iokit.plugins.plugin_utils.report import history_judge
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.criteria import CriteriaError
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.run import generate

# plugins/action -> the collection root -> the report role's templates.
DEFAULT_TEMPLATES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                 'roles', 'report', 'templates')

ARGUMENT_SPEC = {
    'results_dir': {'type': 'path', 'required': True},
    'run_id': {'type': 'str', 'required': True},
    'templates_dir': {'type': 'path'},
    'criteria': {'type': 'dict'},
    'default_criteria': {'type': 'bool', 'default': False},
    'baseline': {'type': 'path'},
    'compare_run_id': {'type': 'str'},
    'expected': {'type': 'dict', 'default': {}},
    'make_baseline': {'type': 'bool', 'default': False},
    'baseline_path': {'type': 'path'},
    'options': {'type': 'dict', 'default': {}},
    'nid_owners': {'type': 'dict'},
    'ost_luns': {'type': 'dict'},
    'target_device_hosts': {'type': 'list', 'elements': 'str', 'default': []},
    'history_compare': {'type': 'bool', 'default': False},
    'history_dsn': {'type': 'str', 'default': ''},
    'history_runs': {'type': 'int', 'default': history_judge.DEFAULT_RUNS},
    'history_mad_k': {'type': 'float', 'default': history_judge.DEFAULT_MAD_K},
    'history_min_change_pct': {'type': 'float', 'default': history_judge.DEFAULT_MIN_CHANGE_PCT},
}

OPTION_TYPES = {'outlier_threshold': float, 'outlier_min_peers': int, 'outlier_min_deviation_pct': float,
                'outlier_slow_share': float,
                'saturation_share': float, 'efficiency_expected': list, 'tolerance_pct': float,
                'host_charts_max_hosts': int, 'bar_chart_max_bars': int, 'table_max_rows': int}


def _options(raw):
    unknown = sorted(set(raw) - set(OPTION_TYPES))
    if unknown:
        raise AnsibleActionFail('options: unknown key(s) %s (allowed: %s)' % (', '.join(unknown), ', '.join(sorted(OPTION_TYPES))))
    options = {}
    for key, value in raw.items():
        if value is None:
            continue
        try:
            if OPTION_TYPES[key] is list:
                options[key] = [float(item) for item in value]
                if len(options[key]) != 2:
                    raise ValueError('two numbers expected')
            else:
                options[key] = OPTION_TYPES[key](value)
        except (TypeError, ValueError) as exc:
            raise AnsibleActionFail('options.%s: %r is not valid (%s)' % (key, value, exc))
    return options


def _target_luns(hostvars, hosts, given):
    """Each target with the ``[host, device]`` pairs it is mounted from, as each of ``hosts`` registered them in
    ``report_target_devices`` (the report role's target_devices entry point), then the ``ost_luns`` given, which
    win per target."""
    luns = {}
    for host in hosts:
        read = (hostvars[host].get('report_target_devices') if host in hostvars else None) or {}
        for target in list(read.get('osts') or []) + list(read.get('mdts') or []):
            if target.get('mount_device'):
                luns.setdefault(target['name'], []).append([host, target['mount_device']])
    luns.update(given or {})
    return luns


def _history(params, run_id):
    """``{'current', 'earlier', 'settings'}`` for the report from the history database, or None when not asked for.

    The history package is imported only here, only when asked for: a report without ``history_compare`` never
    needs it, nor the database driver behind it.
    """
    if not params['history_compare']:
        return None
    try:
        settings = history_judge.Settings.make(params['history_runs'], params['history_mad_k'],
                                               params['history_min_change_pct'])._asdict()
    except ValueError as exc:
        raise AnsibleActionFail(str(exc))
    try:
        from ansible_collections.lustre.iokit.plugins.plugin_utils.history.judging_rows import load_history_values
    except ImportError as exc:
        raise AnsibleActionFail('history_compare: the history database cannot be read by this installation (%s)'
                                % exc)
    where = params['history_dsn'] or 'the default history database'
    try:
        # Without a DSN, the history's default database: beside the results directory (docs/history.md).
        rows = load_history_values(params['history_dsn'] or None, run_id, settings['runs'],
                                   results_dir=params['results_dir'])
    # Whatever the driver raises (a locked SQLite file, a PostgreSQL server not reachable) ends the task naming
    # the database; the run's result files are untouched and the report can be written again once it is back.
    except Exception as exc:  # pylint: disable=broad-exception-caught
        raise AnsibleActionFail('history_compare: cannot read the history of run %s from %s: %s' % (run_id, where, exc))
    if not isinstance(rows, dict) or not isinstance(rows.get('current'), (list, dict)) \
            or not isinstance(rows.get('earlier'), list):
        raise AnsibleActionFail('history_compare: the history database gave no current and earlier rows for run %s'
                                % run_id)
    return dict(rows, other_runs=rows.get('other_runs') or [], settings=settings)


class ActionModule(ActionBase):

    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        params = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)[1]
        try:
            run_id = validate_run_id(params['run_id'])
        except ValueError as exc:
            raise AnsibleActionFail(str(exc))
        run_dir = os.path.join(params['results_dir'], run_id)
        if not os.path.isdir(run_dir):
            raise AnsibleActionFail('run directory %s does not exist: no result of run %s is stored in %s'
                                    % (run_dir, run_id, params['results_dir']))
        expected = {}
        for survey, hosts in (params['expected'] or {}).items():
            if not isinstance(hosts, list) or not all(isinstance(host, str) for host in hosts):
                raise AnsibleActionFail('expected.%s must be a list of host names, got %r' % (survey, hosts))
            expected[survey] = hosts
        templates_dir = params['templates_dir'] or DEFAULT_TEMPLATES
        hostvars = (task_vars or {}).get('hostvars') or {}
        all_hosts = ((task_vars or {}).get('groups') or {}).get('all') or []
        nid_owners = lnet_facts.nid_owners(hostvars, all_hosts, params['nid_owners'])
        ost_luns = _target_luns(hostvars, params['target_device_hosts'], params['ost_luns'])
        history = _history(params, run_id)
        try:
            summary = generate(params['results_dir'], run_id, templates_dir, options=_options(params['options'] or {}),
                               acceptance_criteria=params['criteria'], baseline_file=params['baseline'],
                               compare_run_id=params['compare_run_id'], expected=expected,
                               make_baseline=params['make_baseline'], baseline_path=params['baseline_path'],
                               default_criteria=params['default_criteria'], nid_owners=nid_owners or None,
                               ost_luns=ost_luns or None, history=history)
        except (CriteriaError, BaselineError, ValueError) as exc:
            raise AnsibleActionFail(str(exc))
        except OSError as exc:
            raise AnsibleActionFail('cannot write the report of run %s: %s' % (run_id, exc))
        result.update(summary)
        result['changed'] = True
        return result
