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

Which records a survey contributes is decided by one extractor per survey in
EXTRACTORS; a survey without one (``stats_collect``) contributes no samples and
the report says so.  Controller-side code, no Ansible imports.
"""

from __future__ import annotations

import math
import typing as t

from ansible_collections.lustre.iokit.plugins.module_utils.units import is_number

UNIT_MIB_S = 'MiB/s'
UNIT_OPS_S = 'ops/s'

# Sweep-point keys in the order they are shown; "thr" last because it is the x axis.
POINT_KEYS = ('case', 'mode', 'access', 'role', 'dev', 'ost', 'mdt', 'size_kib', 'rsz_kib', 'crg', 'obj', 'file', 'dir',
              'stripe', 'nodes', 'tasks_per_node', 'tasks', 'transfer_kib', 'thr')
_POINT_ORDER = {key: index for index, key in enumerate(POINT_KEYS)}


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


def _is_number(value: t.Any) -> bool:
    """A finite number (units.is_number, neither NaN nor infinite)."""
    return is_number(value) and math.isfinite(value)


_POINT_CACHE: dict = {}


def make_point(values: dict) -> tuple:
    """The canonical (hashable, shared) sweep point of a mapping; null and unknown keys are dropped."""
    items = tuple(sorted(((key, value) for key, value in values.items() if key in _POINT_ORDER and value is not None),
                         key=lambda item: _POINT_ORDER[item[0]]))
    return _POINT_CACHE.setdefault(items, items)


# What a label shows of a point: the swept parameters.  The rest (case, size, OST/LUN count) stays in
# the point itself, in report.json and results.csv, where it is not repeated on every line of a table.
_LABEL_FORMATS = {'mode': 'mode %s', 'role': '%s', 'rsz_kib': 'rsz %sK', 'crg': 'crg %s', 'obj': 'obj %s', 'dir': 'dir %s',
                  'stripe': 'stripe %s', 'nodes': 'nodes %s', 'tasks_per_node': 'ppn %s', 'tasks': 'tasks %s',
                  'thr': 'thr %s', 'access': '%s', 'transfer_kib': 'xfer %sK'}


def point_label(point: tuple) -> str:
    """``rsz 1024K obj 8 thr 16``: the swept parameters of a point, as the I/O kit prints them."""
    return ' '.join(_LABEL_FORMATS[key] % value for key, value in point if key in _LABEL_FORMATS) or 'single point'


def metric_name(survey: str, test: str, unit: str) -> str:
    suffix = 'mib_s' if unit == UNIT_MIB_S else 'ops_s'
    return '%s_%s_%s' % (survey, test.replace(' ', '_'), suffix)


def _single_name(record: dict, *keys: str) -> str | None:
    """A target named by ``record[key]`` (a string) or by a one-element list under ``key``."""
    for key in keys:
        value = record.get(key)
        if isinstance(value, str) and value:
            return value.rsplit('/', 1)[-1]
        if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str) and value[0]:
            return value[0].rsplit('/', 1)[-1]
    return None


# Test statuses whose number is a measurement (obdfilter SHORT still prints a valid aggregate).
_USABLE_STATUSES = frozenset(('ok', 'short'))


_FIELDS_POINT_CACHE: dict = {}


def _record_point(record: dict, point_fields: tuple) -> tuple:
    # Records of a sweep share few distinct points: look them up by their raw values, sort only once each.
    values = tuple(record.get(key) for key in point_fields)
    cache_key = (point_fields, values)
    point = _FIELDS_POINT_CACHE.get(cache_key)
    if point is None:
        point = _FIELDS_POINT_CACHE[cache_key] = make_point(dict(zip(point_fields, values)))
    return point


def _tests_samples(record: dict, unit_field: str, unit: str, point_fields: tuple, target_keys: tuple,
                   ctx: dict) -> t.Iterator[tuple]:
    point = _record_point(record, point_fields)
    target = _single_name(record, *target_keys)
    tests = record.get('tests') if isinstance(record.get('tests'), dict) else {}
    for test, result in tests.items():
        if not isinstance(result, dict):
            continue
        value = result.get(unit_field)
        status = result.get('status') or 'ok'
        if status in _USABLE_STATUSES and _is_number(value):
            yield test, unit, target, point, float(value), status, record.get('iteration')
        else:
            ctx['problems'].append('%s at %s%s: %s (%s)' % (
                test, point_label(point), ' on %s' % target if target else '', status,
                'no value' if value is None else value))


def _extract_sgpdd(record: dict, ctx: dict) -> t.Iterator[tuple]:
    if record.get('enomem'):
        ctx['problems'].append('ENOMEM at %s' % point_label(make_point(record)))
        return
    devices = record.get('devices') if isinstance(record.get('devices'), list) else []
    per_lun = len(devices) > 1 and _is_number(record.get('crg_per_dev'))
    yield from _tests_samples(record, 'mib_s', UNIT_MIB_S, ('dev', 'size_kib', 'rsz_kib', 'crg', 'thr'),
                              () if per_lun else ('target', 'devices'), ctx)
    if not per_lun:
        return
    # Per LUN (native engine): the slowest of its regions' sgp_dd rates times the regions, a lower bound of the
    # LUN's bandwidth that is exact with one region, compared at the per-LUN sweep point.
    regions = record['crg_per_dev']
    point = make_point({'size_kib': record.get('size_kib'), 'rsz_kib': record.get('rsz_kib'), 'crg': regions,
                        'thr': record.get('thr_per_dev')})
    tests = record.get('tests') if isinstance(record.get('tests'), dict) else {}
    for test, result in tests.items():
        if not isinstance(result, dict) or result.get('status') != 'ok':
            continue
        for device in result.get('devices') or ():
            if isinstance(device, dict) and not device.get('failed') and _is_number(device.get('min_mib_s')):
                yield from _component_samples({test: {'mib_s': device['min_mib_s'] * regions, 'status': 'ok'}},
                                              'mib_s', UNIT_MIB_S, str(device.get('device')), point, record)


def _extract_obdfilter(record: dict, ctx: dict) -> t.Iterator[tuple]:
    if record.get('error'):
        ctx['problems'].append(str(record['error']))
    if record.get('skipped'):
        ctx['problems'].append('not run (too much buffer space) at %s' % point_label(make_point(record)))
        return
    per_ost = record.get('per_ost') if isinstance(record.get('per_ost'), dict) else None
    # With per-OST figures (native engine) the record's own rates are the host's aggregate, not one OST's.
    yield from _tests_samples(record, 'mib_s', UNIT_MIB_S, ('case', 'ost', 'size_kib', 'rsz_kib', 'obj', 'thr'),
                              () if per_ost else ('target', 'targets'), ctx)
    if per_ost:
        point = make_point({'case': record.get('case'), 'rsz_kib': record.get('rsz_kib'),
                            'obj': record.get('obj_per_ost'), 'thr': record.get('thr_per_ost')})
        for name, tests in per_ost.items():
            yield from _component_samples(tests, 'mib_s', UNIT_MIB_S, name, point, record)


def _component_samples(tests: t.Any, unit_field: str, unit: str, target: str, point: tuple,
                       record: dict) -> t.Iterator[tuple]:
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
        if status in _USABLE_STATUSES and type(value) in (float, int) and math.isfinite(value):
            yield test, unit, target, point, float(value), status, iteration


def _extract_mds(record: dict, ctx: dict) -> t.Iterator[tuple]:
    per_mdt = record.get('per_mdt') if isinstance(record.get('per_mdt'), list) else None
    yield from _tests_samples(record, 'ops_s', UNIT_OPS_S, ('mdt', 'file', 'dir', 'stripe', 'thr'),
                              () if per_mdt else ('target', 'targets'), ctx)
    if per_mdt:
        # each MDT ran the same files per thread at the same thread count: peers of every MDT of the run
        point = make_point({'file': record.get('file'), 'dir': record.get('dir'), 'stripe': record.get('stripe'),
                            'thr': record.get('thr')})
        for entry in per_mdt:
            if isinstance(entry, dict):
                yield from _component_samples(entry.get('tests'), 'ops_s', UNIT_OPS_S, entry.get('target'), point,
                                              record)


def _ost_name(index: t.Any, fsname: str | None) -> str:
    # Lustre names targets by their hexadecimal index: testfs-OST000a.
    name = 'OST%04x' % index if isinstance(index, int) and not isinstance(index, bool) else 'OST%s' % index
    return '%s-%s' % (fsname, name) if fsname else name


def _extract_ost(record: dict, ctx: dict) -> t.Iterator[tuple]:
    # Either the whole parse_ost_survey object (one per client) or one record per OST.
    rows = record.get('osts') if isinstance(record.get('osts'), list) else [record]
    # The ost_survey module puts the file system's name in its record; older envelopes had it in the parameters.
    fsname = next((value for value in (record.get('fsname'), ctx['parameters'].get('fsname'))
                   if isinstance(value, str) and value), None)
    for row in rows:
        if not isinstance(row, dict) or 'ost' not in row:
            continue
        target = row.get('target') if isinstance(row.get('target'), str) else _ost_name(row.get('ost'), fsname)
        if row.get('active') is False:
            ctx['problems'].append('%s inactive' % target)
            continue
        for test in ('write', 'read'):
            value = row.get('%s_mib_s' % test)
            if _is_number(value):
                yield test, UNIT_MIB_S, target, make_point({}), float(value), 'ok', record.get('iteration')
            else:
                ctx['problems'].append('%s on %s: no value' % (test, target))


def _extract_lnet(record: dict, ctx: dict) -> t.Iterator[tuple]:
    mode = record.get('mode')
    point = make_point({'mode': mode})
    # A record of a split (each server or client alone) is about that node, not the whole fleet: the same mode
    # of another pair is another subject, not a repeat.
    target = None
    if record.get('split') == 'each_server':
        target = _single_name(record, 'servers')
    elif record.get('split') == 'each_client':
        target = _single_name(record, 'clients')
    if record.get('complete') is False:
        ctx['problems'].append('%s%s: %s' % (mode, ' on %s' % target if target else '', record.get('error') or 'incomplete'))
        return
    for test in ('read', 'write'):
        value = record.get('%s_mib_s' % test)
        if _is_number(value):
            yield test, UNIT_MIB_S, target, point, float(value), 'ok', record.get('iteration')
    # Each node's own bandwidth (lst stat per NID): a server is a peer of the servers of the same mode, a client
    # of the clients; a node tested alone (each_server, each_client) of the others tested alone.
    for node in record.get('nodes') or ():
        if not isinstance(node, dict) or not isinstance(node.get('nid'), str):
            continue
        role = node.get('role')
        alone = record.get('split') == 'each_%s' % role
        node_point = make_point({'mode': mode, 'role': '%s alone' % role if alone else role})
        for test in ('read', 'write'):
            value = node.get('%s_mib_s' % test)
            if _is_number(value):
                yield test, UNIT_MIB_S, node['nid'], node_point, float(value), 'ok', record.get('iteration')
    for role, key in (('server', 'server_errors'), ('client', 'client_errors')):
        if _is_number(record.get(key)) and record[key] > 0:
            ctx['problems'].append('%s%s: %d %s node(s) with LNet errors' % (
                mode, ' on %s' % target if target else '', record[key], role))


def _extract_mdtest(record: dict, ctx: dict) -> t.Iterator[tuple]:
    # the sweep point of the mdtest module (nodes x tasks per node); a parsed mdtest text alone has only tasks
    point = make_point({'nodes': record.get('nodes'), 'tasks_per_node': record.get('tasks_per_node'),
                        'tasks': record.get('tasks')})
    summary = record.get('summary') if isinstance(record.get('summary'), dict) else {}
    for operation, stats in summary.items():
        value = stats.get('mean') if isinstance(stats, dict) else None
        if _is_number(value):
            yield operation, UNIT_OPS_S, None, point, float(value), 'ok', record.get('iteration')


def _extract_ior(record: dict, ctx: dict) -> t.Iterator[tuple]:
    # one point of the ior module's sweep: access pattern x nodes x tasks per node x transfer size
    point = make_point({'access': record.get('access'), 'nodes': record.get('nodes'),
                        'tasks_per_node': record.get('tasks_per_node'), 'transfer_kib': record.get('transfer_kib')})
    measured = False
    for test in ('write', 'read'):
        value = record.get('ior_%s_mib_s' % test)
        if _is_number(value):
            measured = True
            yield test, UNIT_MIB_S, None, point, float(value), 'ok', record.get('iteration')
    if not measured:
        ctx['problems'].append('%s on %s node(s): no bandwidth' % (record.get('access'), record.get('nodes')))
    # Each client node's own rate from IOR's per-task stamps (per_task_timings), as ior_client_write_mib_s and
    # ior_client_read_mib_s: the clients of one launch are peers at that point, so a slow one is named, and a
    # floor on the aggregate (ior_write_mib_s) is never held against one client's share. One client alone has no
    # peer and its figure is the aggregate again: none then.
    clients = record.get('per_client') if isinstance(record.get('per_client'), list) else []
    for client in clients if len(clients) > 1 else ():
        if not isinstance(client, dict) or not isinstance(client.get('host'), str):
            continue
        for test in ('write', 'read'):
            value = client.get('ior_%s_mib_s' % test)
            if _is_number(value):
                yield 'client ' + test, UNIT_MIB_S, client['host'], point, float(value), 'ok', record.get('iteration')


# One extractor per survey; a later survey plugs in here and every report section follows.
EXTRACTORS: dict[str, t.Callable[[dict, dict], t.Iterator[tuple]]] = {
    'sgpdd': _extract_sgpdd,
    'obdfilter': _extract_obdfilter,
    'mds': _extract_mds,
    'ost': _extract_ost,
    'lnet': _extract_lnet,
    'mdtest': _extract_mdtest,
    'ior': _extract_ior,
}


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
    if not _is_number(data['value']):
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
