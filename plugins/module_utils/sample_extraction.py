# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What every survey's ``record_samples(record, ctx)`` is written with: the sweep point, its label, the units and
the reading of per-test rates.

Each measuring survey's engine module (``engines/<survey>.py``, the survey's name in ``survey_catalog.CATALOG``) has
a ``record_samples(record, ctx)`` beside the code that makes its records; the report
(``plugin_utils/report/samples.py``) turns what it yields into samples.  It yields
``(test, unit, target, point, value, status, iteration)``: ``target`` the OST, MDT, LUN, NID or client the value is
about (None for the host's aggregate), ``point`` a ``make_point()`` tuple, ``iteration`` the record's or None (the
report then numbers repeats of a point in order).  ``ctx`` holds ``problems``, a list the extractor appends a
sentence to for each value it cannot use, and ``parameters``, the envelope's.

Node-side code (the engines import it): Python 3.6 and newer, no Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math

from ansible_collections.lustre.iokit.plugins.module_utils.units import is_number

UNIT_MIB_S = 'MiB/s'
UNIT_OPS_S = 'ops/s'

# Sweep-point keys in the order they are shown; "thr" last because it is the x axis.
POINT_KEYS = ('case', 'mode', 'access', 'role', 'dev', 'ost', 'mdt', 'size_kib', 'rsz_kib', 'crg', 'obj', 'file', 'dir',
              'stripe', 'nodes', 'tasks_per_node', 'tasks', 'transfer_kib', 'thr')
_POINT_ORDER = dict((key, index) for index, key in enumerate(POINT_KEYS))

# Test statuses whose number is a measurement (obdfilter SHORT still prints a valid aggregate).
USABLE_STATUSES = frozenset(('ok', 'short'))


def is_finite_number(value):
    """A finite number (units.is_number, neither NaN nor infinite)."""
    return is_number(value) and math.isfinite(value)


_POINT_CACHE = {}


def make_point(values):
    """The canonical (hashable, shared) sweep point of a mapping; null and unknown keys are dropped."""
    items = tuple(sorted(((key, value) for key, value in values.items() if key in _POINT_ORDER and value is not None),
                         key=lambda item: _POINT_ORDER[item[0]]))
    return _POINT_CACHE.setdefault(items, items)


# What a label shows of a point: the swept parameters.  The rest (case, size, OST/LUN count) stays in
# the point itself, in report.json and results.csv, where it is not repeated on every line of a table.
_LABEL_FORMATS = {'mode': 'mode %s', 'role': '%s', 'rsz_kib': 'rsz %sK', 'crg': 'crg %s', 'obj': 'obj %s',
                  'dir': 'dir %s', 'stripe': 'stripe %s', 'nodes': 'nodes %s', 'tasks_per_node': 'ppn %s',
                  'tasks': 'tasks %s', 'thr': 'thr %s', 'access': '%s', 'transfer_kib': 'xfer %sK'}


def point_label(point):
    """``rsz 1024K obj 8 thr 16``: the swept parameters of a point, as the I/O kit prints them."""
    return ' '.join(_LABEL_FORMATS[key] % value for key, value in point if key in _LABEL_FORMATS) or 'single point'


def single_name(record, *keys):
    """A target named by ``record[key]`` (a string) or by a one-element list under ``key``."""
    for key in keys:
        value = record.get(key)
        if isinstance(value, str) and value:
            return value.rsplit('/', 1)[-1]
        if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str) and value[0]:
            return value[0].rsplit('/', 1)[-1]
    return None


_FIELDS_POINT_CACHE = {}


def _record_point(record, point_fields):
    # Records of a sweep share few distinct points: look them up by their raw values, sort only once each.
    values = tuple(record.get(key) for key in point_fields)
    cache_key = (point_fields, values)
    point = _FIELDS_POINT_CACHE.get(cache_key)
    if point is None:
        point = _FIELDS_POINT_CACHE[cache_key] = make_point(dict(zip(point_fields, values)))
    return point


def tests_samples(record, unit_field, unit, point_fields, target_keys, ctx):
    """The samples of a record's ``tests`` (``{test: {<unit_field>: rate, 'status': ...}}``) at the point of its
    ``point_fields``, about the target its ``target_keys`` name; a test without a usable rate is a problem."""
    point = _record_point(record, point_fields)
    target = single_name(record, *target_keys)
    tests = record.get('tests') if isinstance(record.get('tests'), dict) else {}
    for test, result in tests.items():
        if not isinstance(result, dict):
            continue
        value = result.get(unit_field)
        status = result.get('status') or 'ok'
        if status in USABLE_STATUSES and is_finite_number(value):
            yield test, unit, target, point, float(value), status, record.get('iteration')
        else:
            ctx['problems'].append('%s at %s%s: %s (%s)' % (
                test, point_label(point), ' on %s' % target if target else '', status,
                'no value' if value is None else value))


def component_samples(tests, unit_field, unit, target, point, record):
    """One component's own rates (``{test: {rate, status}}``); its failures are already the record's problems."""
    if not isinstance(tests, dict) or not isinstance(target, str):
        return
    target = target.rsplit('/', 1)[-1]
    iteration = record.get('iteration')
    for test, result in tests.items():
        if not isinstance(result, dict):
            continue
        value, status = result.get(unit_field), result.get('status') or 'ok'
        # type() rather than isinstance(numbers.Real): this runs once per component, test and sweep point
        if status in USABLE_STATUSES and type(value) in (float, int) and math.isfinite(value):
            yield test, unit, target, point, float(value), status, iteration
