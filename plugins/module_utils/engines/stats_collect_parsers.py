# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The files stats_collect writes on a node, read back: sample files, vmstat, iostat, Lustre counters.

A Lustre sample (snapshot or sampled series) is a marker line ``@@lustre.iokit sample <epoch> rc=<rc>
took=<s>``, the ``lctl get_param`` text, then ``@@lustre.iokit end``; a sample cut short by a kill has no end
line and is ignored.  The deltas between a start and an end snapshot (``brw_delta``, ``counters_delta``)
and the brw histograms sample by sample (``brw_series``) are what the engine stores.

Pure functions, standard library only, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
import math
import re

from ansible_collections.lustre.iokit.plugins.module_utils.parsers.brw_stats import parse_brw_stats

# The brw_stats histograms kept sample by sample (``series`` of a brw record) when brw is sampled: the
# report cuts the disk I/O size per survey phase; every histogram every second would weigh tens of MB.
BRW_SERIES_HISTOGRAMS = ('disk I/O size', 'pages per bulk r/w')

SAMPLE_MARK = '@@lustre.iokit sample'
SAMPLE_END = '@@lustre.iokit end'

# ``took``: seconds the command ran after the stamp (absent from files of older samplers).
_SAMPLE_RE = re.compile(r'^@@lustre\.iokit sample (?P<time>\d+(?:\.\d+)?) rc=(?P<rc>-?\d+)'
                        r'(?: took=(?P<took>\d+(?:\.\d+)?))?$')
_PARAM_LINE_RE = re.compile(r'^(?P<name>[A-Za-z0-9_-]+(?:\.[^\s=]+)+)=(?P<value>.*)$')
_COUNTER_RE = re.compile(
    r'^(?P<name>[A-Za-z_][\w.-]*)\s+(?P<count>\d+)\s+samples\s+\[(?P<unit>[^\]]+)\]'
    r'(?:\s+(?P<min>-?\d+)\s+(?P<max>-?\d+)\s+(?P<sum>-?\d+)(?:\s+(?P<sumsq>\d+))?)?\s*$')
_TIME_FIELD_RE = re.compile(r'^(?P<field>snapshot_time|start_time|elapsed_time):?\s+(?P<value>\d+(?:\.\d+)?)')
# Every number column of procps vmstat (-a prints inact/active instead of buff/cache; 4.x adds gu).
VMSTAT_COLUMNS = frozenset(('r', 'b', 'swpd', 'free', 'buff', 'cache', 'inact', 'active', 'si', 'so', 'bi', 'bo',
                            'in', 'cs', 'us', 'sy', 'id', 'wa', 'st', 'gu'))
_VMSTAT_STAMP_RE = re.compile(r'^(\d{4})-(\d{2})-(\d{2})$')
_ISO_STAMP_RE = re.compile(r'^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:[+-]\d{4}|Z)?$')


def split_samples(text, with_took=False):
    """``[(epoch, rc, body)]`` of the complete samples in a sampler or snapshot file.

    ``with_took``: ``(epoch, rc, body, took)`` where ``took`` is how long the command ran after ``epoch``
    (None when the file does not say): what it read was read somewhen in between.
    """
    samples = []
    current = None
    for line in text.splitlines():
        mark = _SAMPLE_RE.match(line)
        if mark:
            took = float(mark.group('took')) if mark.group('took') is not None else None
            current = (float(mark.group('time')), int(mark.group('rc')), [], took)
            continue
        if line == SAMPLE_END:
            if current is not None:
                sample = (current[0], current[1], '\n'.join(current[2]) + '\n')
                samples.append(sample + (current[3],) if with_took else sample)
            current = None
            continue
        if current is not None:
            current[2].append(line)
    return samples


def parse_counters(text):
    """lprocfs ``stats`` text of one or more parameters: ``{param: {'start_time', 'counters': {...}}}``.

    Each counter has ``count``, ``unit`` and, when printed, ``min``, ``max``, ``sum`` and ``sumsq``.
    Text without parameter names (``get_param -n``) is kept under the name ``''``.
    """
    params = {}
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        param = _PARAM_LINE_RE.match(line)
        if param and not _TIME_FIELD_RE.match(line):
            current = params.setdefault(param.group('name'), {'start_time': None, 'counters': {}})
            continue
        if current is None:
            current = params.setdefault('', {'start_time': None, 'counters': {}})
        timing = _TIME_FIELD_RE.match(line)
        if timing:
            if timing.group('field') == 'start_time':
                current['start_time'] = float(timing.group('value'))
            continue
        counter = _COUNTER_RE.match(line)
        if counter:
            entry = {'count': int(counter.group('count')), 'unit': counter.group('unit')}
            for key in ('min', 'max', 'sum', 'sumsq'):
                value = counter.group(key)
                entry[key] = int(value) if value is not None else None
            current['counters'][counter.group('name')] = entry
    return params


def _epoch_utc(year, month, day, hour, minute, second):
    return float(calendar.timegm((int(year), int(month), int(day), int(hour), int(minute), int(second), 0, 0, 0)))


def parse_vmstat(text):
    """vmstat output (``-n``, with or without ``-t`` in UTC): ``[{column: number, 'time': epoch or None}]``.

    The first row is vmstat's average since boot and is dropped: it says nothing about the survey.
    """
    columns = None
    rows = []
    seen_first = False
    for line in text.splitlines():
        tokens = line.split()
        if not tokens:
            continue
        if tokens[:2] == ['r', 'b']:
            # -t adds a time-zone name over the date and time columns: not a number column.
            columns = [token for token in tokens if token in VMSTAT_COLUMNS]
            continue
        if columns is None or not tokens[0].isdigit():
            continue
        values = tokens[:len(columns)]
        if len(values) < len(columns) or not all(value.lstrip('-').isdigit() for value in values):
            continue
        stamp = None
        extra = tokens[len(columns):]
        if len(extra) >= 2:
            date = _VMSTAT_STAMP_RE.match(extra[0])
            clock = extra[1].split(':')
            if date and len(clock) == 3:
                stamp = _epoch_utc(date.group(1), date.group(2), date.group(3), clock[0], clock[1], clock[2])
        if not seen_first:
            seen_first = True
            continue
        row = dict((name, int(value)) for name, value in zip(columns, values))
        row['time'] = stamp
        rows.append(row)
    return rows


def parse_iostat(text):
    """``iostat -d -x -t`` output with ISO times: ``[{'time': epoch or None, 'devices': {dev: {column: number}}}]``."""
    reports = []
    current = None
    columns = None
    for line in text.splitlines():
        tokens = line.split()
        if not tokens:
            columns = None
            continue
        stamp = _ISO_STAMP_RE.match(tokens[0]) if len(tokens) == 1 else None
        if stamp:
            current = {'time': _epoch_utc(*stamp.groups()), 'devices': {}}
            reports.append(current)
            continue
        if tokens[0].rstrip(':') == 'Device':
            columns = tokens[1:]
            if current is None:
                current = {'time': None, 'devices': {}}
                reports.append(current)
            continue
        if columns is None or current is None:
            continue
        values = {}
        for name, value in zip(columns, tokens[1:]):
            try:
                values[name] = float(value.replace(',', '.'))
            except ValueError:
                values = None
                break
        if values:
            current['devices'][tokens[0]] = values
    return [report for report in reports if report['devices']]


# -- deltas -----------------------------------------------------------------------------------------------


def _percentages(rows):
    """Integer percentages and cumulative percentages per side, as Lustre prints them."""
    totals = {'read': sum(row['read']['count'] for row in rows), 'write': sum(row['write']['count'] for row in rows)}
    running = {'read': 0, 'write': 0}
    for row in rows:
        for side in ('read', 'write'):
            running[side] += row[side]['count']
            whole = totals[side]
            row[side]['pct'] = row[side]['count'] * 100 // whole if whole else 0
            row[side]['cum_pct'] = running[side] * 100 // whole if whole else 0
    return rows


def brw_targets(parsed):
    targets = parsed.get('targets') or [parsed]
    return dict((target.get('target') or '', target) for target in targets if target.get('histograms')
                or target.get('target'))


def brw_delta(start, end):
    """The histograms of ``end`` minus those of ``start`` (parsed brw_stats of one target).

    Returns ``(histograms, reset)``: rows that did not change are left out; when any count went down
    (somebody reset the statistics during the survey) the end counts are the delta and ``reset`` is True.
    """
    start_hists = (start or {}).get('histograms', {})
    counted = any(row['read']['count'] or row['write']['count'] for rows in start_hists.values() for row in rows)
    # A new start_time means a reset, but only counts taken before it can spoil the delta (and some
    # servers move start_time until the first I/O).
    reset = bool(start is None or (counted and start.get('start_time') is not None
                                   and end.get('start_time') is not None and end['start_time'] != start['start_time']))
    if not reset:
        for title, rows in end.get('histograms', {}).items():
            before = dict((row['bucket'], row) for row in start_hists.get(title, []))
            for row in rows:
                old = before.get(row['bucket'])
                if old and (row['read']['count'] < old['read']['count'] or row['write']['count'] < old['write']['count']):
                    reset = True
    histograms = {}
    for title, rows in end.get('histograms', {}).items():
        before = {} if reset else dict((row['bucket'], row) for row in start_hists.get(title, []))
        delta_rows = []
        for row in rows:
            old = before.get(row['bucket'])
            read = row['read']['count'] - (old['read']['count'] if old else 0)
            write = row['write']['count'] - (old['write']['count'] if old else 0)
            if read or write:
                delta_rows.append({'bucket': row['bucket'], 'read': {'count': read}, 'write': {'count': write}})
        histograms[title] = _percentages(delta_rows)
    return histograms, reset


def _series_view(parsed, titles):
    # Only what brw_delta reads, for the histograms the series keeps: the others are not diffed per sample.
    histograms = parsed.get('histograms', {})
    return {'start_time': parsed.get('start_time'),
            'histograms': dict((title, histograms[title]) for title in titles if title in histograms)}


def brw_series(samples, titles=BRW_SERIES_HISTOGRAMS):
    """Per target, what moved between each brw_stats sample and the one before: ``{target: series}``.

    ``samples`` are ``(epoch, rc, text[, took])`` in time order (start snapshot, sampler output, end snapshot).
    A series is ``{'times': [...], 'resets': [...], 'histograms': {title: {'buckets': [...], 'deltas': [...]}}}``
    and ``read_s`` when the samples say how long each read took (the longest, rounded up to the millisecond:
    a sample holds what was counted somewhen between its time and ``read_s`` later):
    ``times`` holds the epoch of every sample after the first (the record's ``start_time``); a delta row is
    ``[sample, bucket, read, write]``, indices into ``times`` and ``buckets``, only for buckets that moved, so
    an idle sample costs one time and nothing else.  ``resets`` lists the samples whose counts went down (or
    whose target was new): their deltas count from zero, as ``brw_delta`` does.
    """
    times = []
    previous = {}
    series = {}
    tooks = [sample[3] for sample in samples if len(sample) > 3 and sample[3] is not None]
    for position, sample in enumerate(samples):
        stamp, text = sample[0], sample[2]
        current = brw_targets(parse_brw_stats(text))
        if position == 0:
            previous = dict((target, _series_view(parsed, titles)) for target, parsed in current.items())
            continue
        index = len(times)
        times.append(round(stamp, 3))
        for target, parsed in current.items():
            view = _series_view(parsed, titles)
            histograms, reset = brw_delta(previous.get(target), view)
            entry = series.setdefault(target, {'resets': [], 'histograms': {}})
            if reset:
                entry['resets'].append(index)
            for title, rows in histograms.items():
                if not rows:
                    continue
                kept = entry['histograms'].setdefault(title, {'buckets': [], 'deltas': []})
                for row in rows:
                    if row['bucket'] not in kept['buckets']:
                        kept['buckets'].append(row['bucket'])
                    kept['deltas'].append([index, kept['buckets'].index(row['bucket']), row['read']['count'],
                                           row['write']['count']])
            # A target missing from a sample keeps its last counts as the base of its next delta.
            previous[target] = view
    for entry in series.values():
        entry['times'] = times
        if tooks:
            entry['read_s'] = math.ceil(max(tooks) * 1000) / 1000.0
    return series


def counters_delta(start, end):
    """Counter deltas of one parameter: ``(counters, reset)``; ``start`` None means counted from zero."""
    before = {} if start is None else start['counters']
    counted = any(counter['count'] for counter in before.values())
    reset = start is None or (counted and start.get('start_time') is not None and end.get('start_time') is not None
                              and end['start_time'] != start['start_time'])
    if not reset:
        for name, counter in end['counters'].items():
            old = before.get(name)
            if old and counter['count'] < old['count']:
                reset = True
    counters = {}
    for name, counter in sorted(end['counters'].items()):
        old = None if reset else before.get(name)
        count = counter['count'] - (old['count'] if old else 0)
        if count <= 0:
            continue
        total = None
        if counter['sum'] is not None:
            total = counter['sum'] - (old['sum'] if old and old['sum'] is not None else 0)
        counters[name] = {'count': count, 'sum': total, 'unit': counter['unit']}
    return counters, bool(reset and start is not None)


def vmstat_summary(rows):
    """Mean and peak of CPU busy (us+sy, plus st/gu when printed) and iowait over the samples."""
    if not rows:
        return {'samples': 0, 'cpu_busy_pct': None, 'iowait_pct': None}
    busy = [row.get('us', 0) + row.get('sy', 0) for row in rows]
    wait = [row.get('wa', 0) for row in rows]
    return {
        'samples': len(rows),
        'cpu_busy_pct': {'mean': round(sum(busy) / float(len(busy)), 2), 'max': max(busy)},
        'iowait_pct': {'mean': round(sum(wait) / float(len(wait)), 2), 'max': max(wait)},
    }
