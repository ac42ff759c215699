# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Flat samples from result envelopes: one measured number with everything that names it.

A sample is what the report, the analysis and the acceptance criteria work on,
in the spirit of PerfKit Benchmarker's samples::

    {"run_id": "20261122T101500Z-3f2a", "survey": "obdfilter", "test": "write",
     "metric": "obdfilter_write_mib_s", "value": 613.54, "unit": "MiB/s",
     "host": "oss1", "target": null, "point": {"obj": 8, "rsz_kib": 1024, "thr": 8},
     "iteration": 1, "status": "ok"}

- ``metric`` is ``<survey>_<test>_<unit suffix>``; every bandwidth is MiB/s,
  every metadata rate ops/s.
- ``target`` names an OST, MDT or LUN when the record was measured on one
  (a record's ``target``, a one-element ``targets``/``devices`` list, or an OST
  of ost-survey), else null: the value is the host's aggregate.
- ``point`` is the sweep point (threads, objects, crg, ...); ``iteration``
  numbers the repeats of one point (a record's ``iteration``, else the order
  in which the same point appears in the envelope).

Which records a survey contributes, and as what, is decided by its engine's
``record_samples(record, ctx)`` (``module_utils/engines/<survey>.py``, beside the code
that makes the records; the point, the units and the shared reading of per-test
rates are ``module_utils/sample_extraction.py``'s).  ``EXTRACTORS`` holds them for
every survey of ``survey_catalog.CATALOG`` that measures; a sampler
(``stats_collect``) contributes no samples and the report says so.
Controller-side code, no Ansible imports.
"""

from __future__ import annotations

import importlib
import importlib.util
import typing as t

from ansible_collections.lustre.iokit.plugins.module_utils import survey_catalog
from ansible_collections.lustre.iokit.plugins.module_utils.sample_extraction import (
    UNIT_MIB_S, UNIT_OPS_S, is_finite_number, make_point)

# Which way is better for a sample's unit, said in one place: the history stores it with every sample and a judgement
# against the history reads it there.  Every sample is a rate today, and a higher rate is better; a unit added
# without a direction here is refused by metric_direction() rather than judged the wrong way round.
HIGHER = 'higher'
LOWER = 'lower'
UNIT_DIRECTIONS = {UNIT_MIB_S: HIGHER, UNIT_OPS_S: HIGHER}


class Sample(t.NamedTuple):
    """One measured value (a tuple, so that a million of them stay small)."""

    run_id: str
    survey: str
    test: str
    metric: str
    value: float
    unit: str
    host: str
    target: str | None
    point: tuple  # ((key, value), ...) in POINT_KEYS order
    iteration: int
    status: str

    @property
    def subject(self) -> str:
        """``host`` or ``host/target``: what a value is about."""
        return self.host if self.target is None else '%s/%s' % (self.host, self.target)

    def point_dict(self) -> dict:
        return dict(self.point)

    def to_dict(self) -> dict:
        return {'run_id': self.run_id, 'survey': self.survey, 'test': self.test, 'metric': self.metric,
                'value': self.value, 'unit': self.unit, 'host': self.host, 'target': self.target,
                'point': dict(self.point), 'iteration': self.iteration, 'status': self.status}


def metric_name(survey: str, test: str, unit: str) -> str:
    suffix = 'mib_s' if unit == UNIT_MIB_S else 'ops_s'
    return '%s_%s_%s' % (survey, test.replace(' ', '_'), suffix)


def metric_direction(unit: str) -> str:
    """``higher`` or ``lower``: which way a value in ``unit`` is better; ValueError for a unit without one."""
    try:
        return UNIT_DIRECTIONS[unit]
    except KeyError:
        raise ValueError('no direction is known for the unit %r: add it to UNIT_DIRECTIONS in %s'
                         % (unit, __name__)) from None


ENGINES_PACKAGE = 'ansible_collections.lustre.iokit.plugins.module_utils.engines'


def _extractors() -> dict[str, t.Callable[[dict, dict], t.Iterator[tuple]]]:
    """survey -> its engine's ``record_samples``, for every survey of the catalogue that measures and has one."""
    extractors = {}
    for name in survey_catalog.MEASURING:
        module_name = '%s.%s' % (ENGINES_PACKAGE, name)
        # A survey whose engine is not written yet has no samples; an engine that fails to import is a bug to see.
        if importlib.util.find_spec(module_name) is None:
            continue
        extractor = getattr(importlib.import_module(module_name), 'record_samples', None)
        if extractor is not None:
            extractors[name] = extractor
    return extractors


EXTRACTORS = _extractors()


def envelope_samples(envelope: dict) -> tuple[list[Sample], list[str]]:
    """The samples of one valid envelope and the problems found in its records (sentences)."""
    survey = envelope.get('survey')
    extractor = EXTRACTORS.get(survey)
    parameters = envelope.get('parameters') if isinstance(envelope.get('parameters'), dict) else {}
    ctx: dict = {'problems': [], 'parameters': parameters}
    if extractor is None:
        return [], []
    run_id, host = envelope.get('run_id'), envelope.get('host')
    seen: dict = {}
    samples = []
    for record in envelope.get('records') or ():
        if not isinstance(record, dict):
            continue
        for test, unit, target, point, value, status, iteration in extractor(record, ctx):
            metric = metric_name(survey, test, unit)
            key = (metric, target, point)
            seen[key] = seen.get(key, 0) + 1
            if not isinstance(iteration, int) or isinstance(iteration, bool):
                iteration = seen[key]
            samples.append(Sample(run_id, survey, test, metric, value, unit, host, target, point, iteration, status))
    return samples, ctx['problems']


def sample_from_dict(data: dict) -> Sample:
    """A Sample from its JSON form (a line of report.json); raises ValueError naming what is wrong."""
    if not isinstance(data, dict):
        raise ValueError('a sample must be a mapping, got %r' % (data,))
    missing = [key for key in ('survey', 'metric', 'value', 'host') if key not in data]
    if missing:
        raise ValueError('sample lacks %s: %r' % (', '.join(missing), data))
    if not is_finite_number(data['value']):
        raise ValueError('sample value must be a finite number: %r' % (data,))
    point = data.get('point') or {}
    if not isinstance(point, dict):
        raise ValueError('sample point must be a mapping: %r' % (data,))
    test = data.get('test') or data['metric']
    return Sample(data.get('run_id') or '', data['survey'], test, data['metric'], float(data['value']),
                  data.get('unit') or '', data['host'], data.get('target'), make_point(point),
                  int(data.get('iteration') or 1), data.get('status') or 'ok')


def as_samples(items: t.Iterable) -> list[Sample]:
    """Accept Samples, sample dicts or envelopes (mixed) and return Samples: what every filter takes."""
    result: list[Sample] = []
    for item in items or ():
        if isinstance(item, Sample):
            result.append(item)
        elif isinstance(item, dict) and 'records' in item and 'survey' in item:
            result.extend(envelope_samples(item)[0])
        else:
            result.append(sample_from_dict(item))
    return result
