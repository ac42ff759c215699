# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Baselines and the comparison of two runs.

A run is compared subject by subject on its peaks: for each survey, metric,
host and target, the best value of the sweep.  A baseline is the same table
written as YAML so that it can be kept in git and edited by hand::

    schema: lustre.iokit/baseline/v1
    run_id: 20261122T101500Z-3f2a        # the accepted run it came from
    created: '2026-11-23T08:00:00Z'
    values:
      - {survey: obdfilter, metric: obdfilter_write_mib_s, host: oss1, target: null,
         value: 1843.2, unit: MiB/s, point: 'obj 8 thr 32'}

Deleting an entry stops comparing that subject; lowering a value accepts a
slower subject.  Controller-side code, no Ansible imports.
"""

from __future__ import annotations

import json
import typing as t

from ansible_collections.lustre.iokit.plugins.plugin_utils.report import analysis
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.samples import as_samples

BASELINE_SCHEMA = 'lustre.iokit/baseline/v1'
DEFAULT_TOLERANCE_PCT = 5.0


class BaselineError(ValueError):
    """A baseline that cannot be used; the message names the entry."""


def make_baseline(samples: t.Any, run_id: str | None = None, created: str | None = None) -> dict:
    """The baseline of a run: one entry per survey, metric and subject with its peak value."""
    table = samples if isinstance(samples, analysis.PointTable) else analysis.PointTable(as_samples(samples))
    if run_id is None:
        run_id = ','.join(sorted(table.run_ids)) or None
    return baseline_from_peaks(analysis.peaks(table), run_id, created)


def baseline_from_peaks(peaks: list[dict], run_id: str | None, created: str | None = None) -> dict:
    """A baseline from ``analysis.peaks`` rows (what the report has already computed)."""
    return {'schema': BASELINE_SCHEMA, 'run_id': run_id, 'created': created,
            'values': [{'survey': row['survey'], 'metric': row['metric'], 'host': row['host'], 'target': row['target'],
                        'value': round(row['value'], 3), 'unit': row['unit'], 'point': row['point_label']}
                       for row in peaks]}


def baseline_yaml(baseline: dict, comment: str = '') -> str:
    """A baseline as YAML with one flow mapping per line, so that a person can find and edit an entry.

    Strings are written as JSON strings, which YAML reads as double-quoted scalars; this is much faster
    than a YAML emitter for 10^4 entries and keeps one entry per line.
    """
    def scalar(value: t.Any) -> str:
        return 'null' if value is None else json.dumps(value)

    lines = [comment.rstrip('\n')] if comment else []
    lines += ['schema: %s' % scalar(baseline['schema']), 'run_id: %s' % scalar(baseline.get('run_id')),
              'created: %s' % scalar(baseline.get('created')), 'values:']
    keys = ('survey', 'metric', 'host', 'target', 'value', 'unit', 'point')
    lines += ['  - {%s}' % ', '.join('%s: %s' % (key, scalar(entry.get(key))) for key in keys)
              for entry in baseline['values']]
    return '\n'.join(lines) + '\n'


def baseline_table(baseline: dict) -> tuple[dict, str | None]:
    """``{(survey, metric, host, target): (value, unit)}`` and the run id of a baseline; BaselineError if malformed."""
    if not isinstance(baseline, dict) or not isinstance(baseline.get('values'), list):
        raise BaselineError('a baseline is a mapping with a "values" list (schema %s)' % BASELINE_SCHEMA)
    if baseline.get('schema', BASELINE_SCHEMA) != BASELINE_SCHEMA:
        raise BaselineError('baseline schema must be %s, got %r' % (BASELINE_SCHEMA, baseline.get('schema')))
    table = {}
    for index, entry in enumerate(baseline['values']):
        if not isinstance(entry, dict):
            raise BaselineError('baseline values[%d] must be a mapping, got %r' % (index, entry))
        missing = [key for key in ('survey', 'metric', 'host', 'value') if entry.get(key) is None]
        if missing:
            raise BaselineError('baseline values[%d] lacks %s' % (index, ', '.join(missing)))
        value = entry['value']
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise BaselineError('baseline values[%d].value must be a number, got %r' % (index, value))
        target = entry.get('target')
        table[(entry['survey'], entry['metric'], str(entry['host']), None if target is None else str(target))] = (
            float(value), entry.get('unit') or '')
    run_id = baseline.get('run_id')
    return table, None if run_id is None else str(run_id)


def _peak_table(source: t.Any) -> tuple[dict, str | None]:
    if isinstance(source, dict) and 'values' in source:
        return baseline_table(source)
    table = source if isinstance(source, analysis.PointTable) else analysis.PointTable(as_samples(source))
    values = {(row['survey'], row['metric'], row['host'], row['target']): (row['value'], row['unit'])
              for row in analysis.peaks(table)}
    return values, ','.join(sorted(table.run_ids)) or None


def compare_runs(current: t.Any, reference: t.Any, tolerance_pct: float = DEFAULT_TOLERANCE_PCT) -> list[dict]:
    """Per survey, metric and subject: the change of the peak from ``reference`` to ``current`` in percent.

    Each side is a list of samples (or envelopes) or a baseline mapping.
    ``status`` is ``regression`` (below ``-tolerance_pct``), ``improvement``
    (above ``+tolerance_pct``), ``within``, ``missing`` (in the reference, not
    measured now) or ``new`` (measured now, not in the reference).
    """
    if tolerance_pct < 0:
        raise ValueError('tolerance_pct must not be negative, got %r' % (tolerance_pct,))
    now, now_run = _peak_table(current)
    before, before_run = _peak_table(reference)
    rows = []
    for key in sorted(set(now) | set(before), key=lambda k: (k[0], k[1], k[2], k[3] or '')):
        survey, metric, host, target = key
        current_value, unit = now.get(key, (None, None))
        reference_value, reference_unit = before.get(key, (None, None))
        delta_pct = None
        if current_value is None:
            status = 'missing'
        elif reference_value is None:
            status = 'new'
        else:
            delta_pct = 100.0 * (current_value - reference_value) / reference_value if reference_value else None
            if delta_pct is None:
                status = 'within' if current_value == reference_value else 'improvement'
            elif delta_pct < -tolerance_pct:
                status = 'regression'
            elif delta_pct > tolerance_pct:
                status = 'improvement'
            else:
                status = 'within'
        rows.append({'survey': survey, 'metric': metric, 'unit': unit or reference_unit, 'host': host, 'target': target,
                     'subject': analysis.subject_label(host, target), 'current': current_value,
                     'reference': reference_value, 'delta_pct': delta_pct, 'tolerance_pct': tolerance_pct,
                     'status': status, 'current_run_id': now_run, 'reference_run_id': before_run})
    return rows
