# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The statistics section of the report: what ``stats_collect`` measured on each host during the run.

- the disk I/O size histogram of every target (``brw_stats`` deltas between
  the start and the stop of the statistics, so only the I/O of the run);
- CPU busy and iowait from vmstat, over the whole collection and within the
  time window of each survey stored for the same host (survey records carry
  no per-point times, so a window is a survey, not a sweep point);
- a CPU/iowait time line per host, for the first few hosts.

The stats envelopes are read here from the run directory rather than kept
by ``run.load_run``, which drops every envelope once its samples are out.

Controller-side code, no Ansible imports.
"""

from __future__ import annotations

import os
import typing as t

from ansible_collections.lustre.iokit.plugins.module_utils import results
from ansible_collections.lustre.iokit.plugins.plugin_utils.report import charts

SURVEY = 'stats_collect'
IO_SIZE_HISTOGRAM = 'disk I/O size'
# A time line with more points than this is drawn without a marker per point.
MARKER_LIMIT = 60


def load_stats(run_dir: str) -> tuple[list[dict], list[dict]]:
    """The stats envelopes of a run, by host, and the files that could not be used (``{host, path, problems}``)."""
    envelopes = []
    unusable = []
    if not os.path.isdir(run_dir):
        return envelopes, unusable
    for host in sorted(os.listdir(run_dir)):
        path = os.path.join(run_dir, host, SURVEY + '.json')
        if not os.path.isfile(path):
            continue
        try:
            envelopes.append(results.read_envelope(path))
        except results.EnvelopeError as exc:
            unusable.append({'host': host, 'path': os.path.relpath(path, run_dir), 'problems': exc.problems})
    return envelopes, unusable


def io_size_rows(envelope: dict) -> list[dict]:
    """One row per target and I/O size that moved: host, target, bucket, read/write I/Os and percentages."""
    rows = []
    for record in envelope['records']:
        if record.get('collector') != 'brw':
            continue
        for row in record.get('histograms', {}).get(IO_SIZE_HISTOGRAM, []):
            rows.append({'host': envelope['host'], 'label': record.get('label', 'stats'), 'target': record.get('target'),
                         'bucket': row['bucket'],
                         'read': row['read']['count'], 'read_pct': row['read'].get('pct'),
                         'write': row['write']['count'], 'write_pct': row['write'].get('pct'),
                         'elapsed_s': record.get('elapsed_s'), 'reset': bool(record.get('reset'))})
    return rows


def _vmstat_samples(envelope: dict) -> list[dict]:
    samples = []
    for record in envelope['records']:
        if record.get('collector') == 'vmstat':
            samples.extend(sample for sample in record.get('samples', []) if sample.get('time') is not None)
    return sorted(samples, key=lambda sample: sample['time'])


def cpu_summary(samples: list[dict]) -> dict | None:
    """CPU busy (us+sy) and iowait, mean and max, over ``samples``; None without samples."""
    if not samples:
        return None
    busy = [sample.get('us', 0) + sample.get('sy', 0) for sample in samples]
    wait = [sample.get('wa', 0) for sample in samples]
    return {'samples': len(samples), 'busy_mean': sum(busy) / len(busy), 'busy_max': max(busy),
            'iowait_mean': sum(wait) / len(wait), 'iowait_max': max(wait)}


def _epoch(timestamp: t.Any) -> float | None:
    if not isinstance(timestamp, str):
        return None
    try:
        return results.parse_timestamp(timestamp).timestamp()
    except (ValueError, AttributeError):
        return None


def cpu_windows(host: str, samples: list[dict], envelopes: list[dict]) -> list[dict]:
    """CPU/iowait over the whole collection, then within each survey of ``host`` (from ``run.envelopes``)."""
    windows = []
    whole = cpu_summary(samples)
    if whole:
        windows.append(dict(whole, window='whole collection', host=host))
    for item in sorted(envelopes, key=lambda entry: str(entry.get('started'))):
        if item.get('host') != host or item.get('survey') == SURVEY:
            continue
        start, end = _epoch(item.get('started')), _epoch(item.get('finished'))
        if start is None or end is None:
            continue
        # Envelope times are whole seconds, cut down; vmstat stamps a report at the end of its interval:
        # the report of the survey's last second may carry the next second's stamp.
        inside = [sample for sample in samples if start <= sample['time'] <= end + 1]
        summary = cpu_summary(inside)
        if summary:
            windows.append(dict(summary, window='%s survey' % item['survey'], host=host))
    return windows


def _time_ticks(span: float) -> list[float]:
    unused_top, step = charts.nice_ceiling(span)
    count = int(span // step) + 1
    return [step * index for index in range(count)]


def _points(samples: list[dict], origin: float, value: t.Callable[[dict], float]) -> list[tuple]:
    # (x, y, low, high): no band, low and high are the value itself.
    return [(sample['time'] - origin,) + (float(value(sample)),) * 3 for sample in samples]


def cpu_chart(host: str, samples: list[dict]) -> dict | None:
    """A CPU busy / iowait time line in the report's line chart shape (x: seconds since the first sample)."""
    if len(samples) < 2:
        return None
    origin = samples[0]['time']
    curves = {'CPU busy (us+sy)': _points(samples, origin, lambda sample: sample.get('us', 0) + sample.get('sy', 0)),
              'iowait (wa)': _points(samples, origin, lambda sample: sample.get('wa', 0))}
    chart = charts.line_chart('stats-cpu-%s' % host, '%s: CPU and iowait' % host, '%', curves,
                              x_key='seconds since the first vmstat report',
                              subtitle='vmstat, %d reports' % len(samples))
    span = samples[-1]['time'] - origin
    plot = chart['plot']
    chart['x_ticks'] = [{'x': round(plot['left'] + (plot['right'] - plot['left']) * tick / span, 1),
                         'label': '%g' % tick} for tick in _time_ticks(span)]
    chart['y_label'] = 'share of CPU time (%)'
    if len(samples) > MARKER_LIMIT:
        for series in chart['series']:
            series['markers'] = []
    return chart


def stats_section(run_dir: str, envelopes: list[dict], max_charts: int = 8) -> dict:
    """The model of the report's statistics section (empty lists when the run has no statistics)."""
    stats_envelopes, unusable = load_stats(run_dir)
    io_rows = []
    cpu = []
    cpu_charts = []
    hosts = []
    for envelope in stats_envelopes:
        host = envelope['host']
        hosts.append({'host': host, 'status': envelope['status'], 'started': envelope['started'],
                      'finished': envelope['finished'], 'duration_s': envelope['duration_s'],
                      'skipped': sorted((envelope['environment'].get('skipped_collectors') or {}).items()),
                      'errors': [error.get('message') if isinstance(error, dict) else str(error)
                                 for error in envelope['errors']]})
        io_rows.extend(io_size_rows(envelope))
        samples = _vmstat_samples(envelope)
        cpu.extend(cpu_windows(host, samples, envelopes))
        if len(cpu_charts) < max_charts:
            chart = cpu_chart(host, samples)
            if chart:
                cpu_charts.append(chart)
    return {'hosts': hosts, 'io_sizes': io_rows, 'cpu': cpu, 'charts': cpu_charts, 'unusable': unusable,
            'charted_hosts': len(cpu_charts)}
