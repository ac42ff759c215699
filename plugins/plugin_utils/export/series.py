# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a monitoring export publishes of a stored run: one value per series, in base units (docs/monitoring.md).

Both writers (``prometheus.py``, ``influx.py``) take their figures from here, so that a dashboard reading either
shows the same numbers::

    exported = run_series(results_dir, run_id, survey='obdfilter')
    for one in exported.series:   # Series(survey, test, host, component, target, point, value, unit)
        ...

The samples come from the report's extraction (``report/samples.py``); a series is one (host, component, target,
test, sweep point) of a survey, its value the median over the iterations of that point whose status is usable.
Controller-side code, no Ansible imports.
"""

from __future__ import annotations

import calendar
import statistics
import time
import typing as t

from ansible_collections.lustre.iokit.plugins.module_utils import survey_catalog
from ansible_collections.lustre.iokit.plugins.module_utils.results import EnvelopeError
from ansible_collections.lustre.iokit.plugins.module_utils.sample_extraction import (
    UNIT_MIB_S, UNIT_OPS_S, USABLE_STATUSES)
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.samples import envelope_samples
from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import (
    check_results_dir, list_envelopes, resolve_results_dir)

# The samples' units and what they become: (base unit suffix, factor from the sample's unit).
BASE_UNITS = {
    UNIT_MIB_S: ('bytes_per_second', 1048576.0),
    UNIT_OPS_S: ('operations_per_second', 1.0),
}

# Sweep-point keys (sample_extraction.POINT_KEYS) as label or tag names. Each key takes the few values one sweep
# plan lists, so these stay bounded; the run id is never one of them (it would make every run a new series).
POINT_LABELS = {
    'case': 'case', 'mode': 'mode', 'access': 'access', 'role': 'role',
    'dev': 'devices', 'ost': 'osts', 'mdt': 'mdts',
    'size_kib': 'size_kib', 'rsz_kib': 'record_size_kib', 'crg': 'regions', 'obj': 'objects',
    'file': 'files', 'dir': 'dirs', 'stripe': 'stripe_count', 'nodes': 'nodes', 'tasks_per_node': 'tasks_per_node',
    'tasks': 'tasks', 'transfer_kib': 'transfer_kib', 'thr': 'threads',
}


class Series(t.NamedTuple):
    """One exported value: a survey's test at one sweep point of one component, in base units."""

    survey: str
    test: str
    host: str
    component: str
    target: str | None
    point: tuple  # ((label name, value as text), ...) in POINT_LABELS order
    value: float
    unit: str  # a BASE_UNITS suffix


class RunExport(t.NamedTuple):
    """What one survey of one run exports."""

    run_id: str
    survey: str
    finished: int | None  # epoch seconds of the latest envelope's end; None when no envelope says
    durations: dict  # host -> seconds the survey ran there
    series: list
    problems: list  # sentences: unreadable envelopes, unusable records


def component_of(survey: str) -> str:
    """The ``component`` label of a survey's samples, as the Lustre exporters spell it (``ost``, ``mdt``, ...)."""
    return survey_catalog.CATALOG[survey].component.lower()


def metric_suffix(test: str) -> str:
    """A test name as a metric or field name part: lower case letters, digits and ``_``."""
    cleaned = ''.join(char if char.isalnum() else '_' for char in test.lower())
    return '_'.join(part for part in cleaned.split('_') if part) or 'value'


def epoch_seconds(text) -> int | None:
    """``2026-11-22T10:31:44Z`` (the envelopes' UTC times) as epoch seconds; None for anything else."""
    if not isinstance(text, str):
        return None
    try:
        return calendar.timegm(time.strptime(text, '%Y-%m-%dT%H:%M:%SZ'))
    except ValueError:
        return None


def point_labels(point: tuple) -> tuple:
    return tuple((POINT_LABELS[key], str(value)) for key, value in point if key in POINT_LABELS)


def samples_series(survey: str, samples: t.Iterable) -> list[Series]:
    """The series of ``samples`` (one survey's): the median of each point's usable iterations, in base units."""
    groups: dict = {}
    for sample in samples:
        if sample.survey != survey or sample.status not in USABLE_STATUSES or sample.unit not in BASE_UNITS:
            continue
        key = (sample.host, sample.target, sample.test, sample.unit, point_labels(sample.point))
        groups.setdefault(key, []).append(sample.value)
    component = component_of(survey)
    series = []
    for (host, target, test, unit, labels), values in sorted(groups.items(), key=lambda item: repr(item[0])):
        suffix, factor = BASE_UNITS[unit]
        series.append(Series(survey, test, host, component, target, labels, statistics.median(values) * factor,
                             suffix))
    return series


def run_series(results_dir: str, run_id: str, survey: str) -> RunExport:
    """What ``survey`` of the stored run ``run_id`` exports (ValueError when the run has no envelope of it)."""
    if survey not in survey_catalog.MEASURING:
        raise ValueError('survey: %r is not a survey that measures (one of %s)'
                         % (survey, ', '.join(survey_catalog.MEASURING)))
    samples, problems, finished, durations, found = [], [], [], {}, False
    for path, envelope in list_envelopes(results_dir, run_id):
        if isinstance(envelope, EnvelopeError):
            problems.append(str(envelope))
            continue
        if envelope.get('survey') != survey:
            continue
        found = True
        extracted, record_problems = envelope_samples(envelope)
        samples.extend(extracted)
        problems.extend('%s: %s' % (path, problem) for problem in record_problems)
        end = epoch_seconds(envelope.get('finished'))
        if end is not None:
            finished.append(end)
        if isinstance(envelope.get('duration_s'), (int, float)) and not isinstance(envelope['duration_s'], bool):
            durations[envelope['host']] = float(envelope['duration_s'])
    if not found:
        raise ValueError('run %s has no stored %s result in %s' % (run_id, survey, results_dir))
    return RunExport(run_id, survey, max(finished) if finished else None, durations,
                     samples_series(survey, samples), problems)


def stored_surveys(results_dir: str, run_id: str) -> list[str]:
    """The measuring surveys of which the run has a readable envelope, in catalogue order."""
    present = {envelope.get('survey') for _path, envelope in list_envelopes(results_dir, run_id)
               if not isinstance(envelope, EnvelopeError)}
    return [survey for survey in survey_catalog.MEASURING if survey in present]


def checked_directory(value, variable: str, create: bool = True) -> str | None:
    """The absolute export directory ``value`` after checking it can be written (None when empty: export off).

    ValueError naming ``variable`` for anything else than a string, or a directory that cannot be made or written;
    the preflight calls this before any node is touched.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    path = resolve_results_dir(value, variable)
    return check_results_dir(path, variable, create=create)
