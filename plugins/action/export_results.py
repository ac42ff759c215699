# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Publish a stored run's survey results to the monitoring stack, on the controller (Prometheus textfiles and
OpenMetrics backfill, InfluxDB line protocol to a file or over HTTP).

Documentation in ``plugins/modules/export_results.py``; the formats are ``plugins/plugin_utils/export/``.
"""

from __future__ import annotations

import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.lustre.iokit.plugins.module_utils import survey_catalog
from ansible_collections.lustre.iokit.plugins.plugin_utils.export import influx, prometheus
from ansible_collections.lustre.iokit.plugins.plugin_utils.export.series import (
    checked_directory, run_series, stored_surveys)
from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import resolve_results_dir

ARGUMENT_SPEC = {
    'results_dir': {'type': 'path'},
    'run_id': {'type': 'str'},
    'surveys': {'type': 'list', 'elements': 'str'},
    'check_only': {'type': 'bool', 'default': False},
    'prometheus_dir': {'type': 'raw'},
    'influx_file': {'type': 'raw'},
    'influx_url': {'type': 'raw'},
    'influx_token': {'type': 'raw', 'no_log': True},
    'influx_bucket': {'type': 'raw'},
    'influx_org': {'type': 'raw'},
}

# Each destination option and the collection variable it defaults to (the name every message uses).
VARIABLES = {
    'prometheus_dir': 'iokit_export_prometheus_dir',
    'influx_file': 'iokit_export_influx_file',
    'influx_url': 'iokit_export_influx_url',
    'influx_token': 'iokit_export_influx_token',
    'influx_bucket': 'iokit_export_influx_bucket',
    'influx_org': 'iokit_export_influx_org',
}


def _text(value, name):
    """A destination setting as a stripped string ('' when unset); ValueError naming ``name`` for a non-string."""
    if value is None:
        return ''
    if not isinstance(value, str):
        raise ValueError('%s: must be a string, got %s' % (name, type(value).__name__))
    return value.strip()


def destinations(settings, create):
    """The checked destinations of ``settings`` ({option: (value, name for messages)}); ValueError naming a variable.

    Returns ``{'prometheus_dir': path or None, 'influx_file': path or None, 'influx': (url, token, bucket, org) or
    None}``; nothing here contacts InfluxDB.
    """
    values = dict((option, _text(value, name)) for option, (value, name) in settings.items())
    names = dict((option, name) for option, (_value, name) in settings.items())
    checked = {'prometheus_dir': checked_directory(values['prometheus_dir'], names['prometheus_dir'], create=create),
               'influx_file': None, 'influx': None}
    if values['influx_file']:
        path = resolve_results_dir(values['influx_file'], names['influx_file'])
        if os.path.isdir(path):
            raise ValueError('%s: %s is a directory; give the file to write the line protocol to'
                             % (names['influx_file'], path))
        checked_directory(os.path.dirname(path), names['influx_file'], create=create)
        checked['influx_file'] = path
    if values['influx_url']:
        missing = [names[option] for option in ('influx_token', 'influx_bucket') if not values[option]]
        if missing:
            raise ValueError('%s is set: give %s too' % (names['influx_url'], ' and '.join(missing)))
        influx.write_url(values['influx_url'], values['influx_bucket'], values['influx_org'] or None)
        checked['influx'] = (values['influx_url'], values['influx_token'], values['influx_bucket'],
                             values['influx_org'] or None)
    return checked


class ActionModule(ActionBase):

    TRANSFERS_FILES = False

    def _settings(self, task_vars):
        settings = {}
        for option, variable in VARIABLES.items():
            if self._task.args.get(option) is not None:
                settings[option] = (self._task.args[option], option)
            else:
                settings[option] = (self._templar.template(task_vars.get(variable)), variable)
        return settings

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        params = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)[1]
        check_only = params['check_only'] or self._task.check_mode
        try:
            checked = destinations(self._settings(task_vars), create=not self._task.check_mode)
        except ValueError as exc:
            raise AnsibleActionFail('%s; nothing was %s' % (exc, 'started' if params['check_only'] else 'exported'))
        enabled = [name for name in ('prometheus_dir', 'influx_file', 'influx') if checked[name]]
        result.update(changed=False, enabled=bool(enabled), files=[], influx_lines=0, influx_written=0,
                      surveys=[], missing=[], problems=[], prometheus_dir=checked['prometheus_dir'] or '',
                      influx_file=checked['influx_file'] or '')
        if check_only or not enabled:
            return result

        if not params['results_dir'] or not params['run_id']:
            raise AnsibleActionFail('results_dir and run_id: give the stored run to export')
        unknown = [name for name in params['surveys'] or () if name not in survey_catalog.MEASURING]
        if unknown:
            raise AnsibleActionFail('surveys: %s not a survey that measures (one of %s)'
                                    % (', '.join(unknown), ', '.join(survey_catalog.MEASURING)))
        results_dir, run_id = params['results_dir'], params['run_id']
        stored = stored_surveys(results_dir, run_id)
        surveys = [name for name in params['surveys'] or stored if name in stored]
        try:
            exports = dict((name, run_series(results_dir, run_id, name)) for name in surveys)
            # The InfluxDB file is the whole run: rewritten with every survey stored so far.
            file_exports = exports if params['surveys'] is None else dict(
                (name, run_series(results_dir, run_id, name)) for name in stored)
            lines = [line for export in exports.values() for line in influx.run_lines(export)] \
                if checked['influx'] else []
            file_lines = [line for export in file_exports.values() for line in influx.run_lines(export)] \
                if checked['influx_file'] else []
        except ValueError as exc:
            raise AnsibleActionFail('run %s: %s' % (run_id, exc))
        result['surveys'] = surveys
        result['missing'] = [name for name in params['surveys'] or () if name not in stored]
        result['problems'] = [problem for export in exports.values() for problem in export.problems]

        try:
            if checked['prometheus_dir']:
                for export in exports.values():
                    result['files'].extend(prometheus.write_run(checked['prometheus_dir'], export))
            if checked['influx_file']:
                result['files'].append(influx.write_file(checked['influx_file'], file_lines))
        except OSError as exc:
            raise AnsibleActionFail('cannot write the export of run %s: %s' % (run_id, exc))
        result['changed'] = bool(result['files'])
        if checked['influx']:
            url, token, bucket, org = checked['influx']
            result['influx_lines'] = len(lines)
            try:
                result['influx_written'] = influx.write_http(url, token, bucket, lines, org=org)
            except influx.InfluxWriteError as exc:
                result['influx_written'] = exc.sent
                raise AnsibleActionFail('%s: %s' % (VARIABLES['influx_url'], exc), result=result)
            result['changed'] = True
        return result
