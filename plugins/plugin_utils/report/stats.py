# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The statistics section of the report: what ``stats_collect`` measured on each host during the run.

- the disk I/O size histogram of every target (``brw_stats`` deltas between
  the start and the stop of the statistics, so only the I/O of the run);
- CPU busy and iowait from vmstat, over the whole collection and within the
  time window of each survey stored for the same host;
- CPU busy and iowait per sweep point and test, from the ``start_time`` and
  ``end_time`` that the native survey engines stamp on each test (the
  ``iokit`` engine, which parses the I/O kit's output, has none);
- the disk I/O size histogram of each OST per obdfilter test phase, summed
  from the brw ``series`` (brw_stats sampled every ``brw_interval`` seconds)
  between the samples that bracket the phase;
- a CPU/iowait time line per host, for the first few hosts.

Times of a survey and of the statistics are compared only on one host: both
come from that node's clock.

The stats envelopes are read here from the run directory rather than kept
by ``run.load_run``, which drops every envelope once its samples are out.

Controller-side code, no Ansible imports.
"""

from __future__ import annotations

import bisect
import os
import typing as t

from ansible_collections.lustre.iokit.plugins.module_utils import results
from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import read_size
from ansible_collections.lustre.iokit.plugins.module_utils.sample_extraction import make_point, point_label
from ansible_collections.lustre.iokit.plugins.module_utils.units import is_number
from ansible_collections.lustre.iokit.plugins.plugin_utils import results_store
from ansible_collections.lustre.iokit.plugins.plugin_utils.report import charts

SURVEY = 'stats_collect'
IO_SIZE_HISTOGRAM = 'disk I/O size'
# A time line with more points than this is drawn without a marker per point.
MARKER_LIMIT = 60
# Which column of brw_stats a test phase moves; phases of other tests are not cut.
PHASE_COLUMNS = {'write': 'write', 'rewrite': 'write', 'read': 'read'}
# Surveys whose tests run on the node that holds the brw_stats (sgpdd writes the raw disks under the OSTs,
# ost-survey runs on a client): only obdfilter's phases are cut per OST.
PHASE_SURVEYS = ('obdfilter',)
# The sweep keys that name a point of each survey with per-test times.
POINT_FIELDS = {'obdfilter': ('case', 'ost', 'size_kib', 'rsz_kib', 'obj', 'thr'),
                'sgpdd': ('dev', 'size_kib', 'rsz_kib', 'crg', 'thr'),
                'mds': ('mdt', 'file', 'dir', 'stripe', 'thr')}


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
            envelopes.append(results_store.read_envelope(path))
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


def _timed(item: dict, start_key: str = 'start_time', end_key: str = 'end_time') -> tuple | None:
    start, end = item.get(start_key), item.get(end_key)
    if is_number(start) and is_number(end) and end >= start:
        return float(start), float(end)
    return None


def timed_tests(envelope: dict) -> list[dict]:
    """Every timed test of a survey envelope: ``{point, label, iteration, test, start, end, targets}``, in run order.

    obdfilter, sgpdd and mds time ``record['tests'][test]``; ost-survey times each OST's row
    (``write_start_time`` ...), so its point is the OST index.  The iteration is the record's, else the
    order in which the same point comes back in the envelope (as the samples count repeats).
    """
    survey = envelope.get('survey')
    windows = []
    seen: dict = {}
    for record in envelope.get('records') or ():
        if not isinstance(record, dict):
            continue
        if survey == 'ost':
            for row in record.get('osts') or ():
                if not isinstance(row, dict):
                    continue
                for test in ('write', 'read'):
                    span = _timed(row, test + '_start_time', test + '_end_time')
                    if span:
                        windows.append({'point': {'ost': row.get('ost')}, 'label': 'OST index %s' % row.get('ost'),
                                        'iteration': record.get('iteration') or 1, 'test': test,
                                        'start': span[0], 'end': span[1], 'targets': None})
            continue
        fields = POINT_FIELDS.get(survey)
        tests = record.get('tests')
        if fields is None or not isinstance(tests, dict):
            continue
        point = make_point({key: record.get(key) for key in fields})
        seen[point] = seen.get(point, 0) + 1
        iteration = record.get('iteration')
        if not isinstance(iteration, int) or isinstance(iteration, bool):
            iteration = seen[point]
        targets = record.get('targets') if isinstance(record.get('targets'), list) else None
        for test, result in tests.items():
            span = _timed(result) if isinstance(result, dict) else None
            if span:
                windows.append({'point': dict(point), 'label': point_label(point), 'iteration': iteration,
                                'test': test, 'start': span[0], 'end': span[1], 'targets': targets})
    # A stored envelope's keys are sorted (read before write): the times give back the run order.
    windows.sort(key=lambda window: window['start'])
    return windows


def cpu_in(samples: list[dict], start: float, end: float, interval: float,
           stamps: list[float] | None = None) -> dict | None:
    """CPU/iowait of the vmstat reports (sorted by time) whose interval overlaps ``[start, end]``.

    A report stamped T covers the ``interval`` seconds before it; its stamp is a whole second cut down
    (``vmstat -t``), so it may stand for any moment up to T + 1: a report counts when
    ``start - 1 < T < end + interval``.  A test shorter than the interval still gets the report(s) that saw it.
    ``stamps``: the samples' times, when the caller cuts many windows from the same samples.
    """
    stamps = stamps if stamps is not None else [sample['time'] for sample in samples]
    low = bisect.bisect_right(stamps, start - 1)
    high = bisect.bisect_left(stamps, end + interval)
    return cpu_summary(samples[low:high])


def _vmstat_interval(envelope: dict) -> float:
    intervals = [record.get('interval_s') for record in envelope['records']
                 if record.get('collector') == 'vmstat' and is_number(record.get('interval_s'))]
    return float(max(intervals)) if intervals else 1.0


def _survey_envelopes(run_dir: str, envelopes: list[dict], hosts: set) -> list[dict]:
    """The stored survey envelopes of ``hosts`` (``envelopes`` are run.load_run's summaries, records dropped)."""
    found = []
    for item in sorted(envelopes, key=lambda entry: str(entry.get('started'))):
        if item.get('host') not in hosts or item.get('survey') == SURVEY or not item.get('path'):
            continue
        try:
            found.append(results_store.read_envelope(os.path.join(run_dir, item['path'])))
        except (results.EnvelopeError, OSError):
            # load_run read it a moment ago; a file gone since is already named there.
            continue
    return found


def point_cpu_rows(host: str, samples: list[dict], interval: float, surveys: list[dict]) -> tuple[list, list]:
    """CPU/iowait per (sweep point, test) of each survey of ``host``; and one note per survey without times."""
    rows = []
    notes = []
    stamps = [sample['time'] for sample in samples]
    for envelope in surveys:
        windows = timed_tests(envelope)
        if not windows:
            # lnet and mdtest run across nodes and time no test: nothing to say about them here.
            if envelope.get('records') and (envelope['survey'] in POINT_FIELDS or envelope['survey'] == 'ost'):
                notes.append('%s %s (engine %s): its records carry no test times, so no CPU per sweep point'
                             % (host, envelope['survey'], envelope.get('engine')))
            continue
        for window in windows:
            summary = cpu_in(samples, window['start'], window['end'], interval, stamps)
            row = {'host': host, 'survey': envelope['survey'], 'point': window['point'], 'label': window['label'],
                   'iteration': window['iteration'], 'test': window['test'], 'start': window['start'],
                   'end': window['end'], 'seconds': round(window['end'] - window['start'], 3)}
            row.update(summary or {'samples': 0, 'busy_mean': None, 'busy_max': None, 'iowait_mean': None,
                                   'iowait_max': None})
            rows.append(row)
    return rows, notes


def _brw_series_records(envelope: dict) -> list[dict]:
    return [record for record in envelope['records'] if record.get('collector') == 'brw'
            and isinstance(record.get('series'), dict) and is_number(record.get('start_time'))]


def _covering(records: list[dict], target: str, start: float, end: float, label: str) -> dict | None:
    # A host's file may hold several collections (one per survey): the one labelled with the survey first.
    spans = [record for record in records if record.get('target') == target
             and record['start_time'] <= start and (record.get('end_time') or 0) >= end]
    spans.sort(key=lambda record: record.get('label') != label)
    return spans[0] if spans else None


def _bucket_order(label: str) -> tuple:
    # brw_stats prints buckets smallest first (4K ... 1M, or 1 ... 256 pages); a series lists them as they moved.
    size = read_size(label)
    return (0, size, label) if size is not None else (1, 0, label)


class BrwSeries:
    """One brw record's series, indexed once for cutting many phases (bisect on times and delta rows)."""

    def __init__(self, record: dict, title: str = IO_SIZE_HISTOGRAM):
        series = record['series']
        # times[0] is the start snapshot; delta row ``sample`` is the change up to times[sample + 1].
        self.times = [float(record['start_time'])] + [float(stamp) for stamp in series.get('times') or ()]
        self.read_s = float(series['read_s']) if is_number(series.get('read_s')) else 0.0
        kept = (series.get('histograms') or {}).get(title) or {}
        self.buckets = list(kept.get('buckets') or ())
        self.deltas = sorted(tuple(row) for row in kept.get('deltas') or ())
        self.delta_samples = [row[0] for row in self.deltas]
        self.resets = sorted(series.get('resets') or ())

    def cut(self, start: float, end: float, column: str) -> dict:
        """``column`` counts moved between the samples that bracket ``[start, end]``.

        The base is the last sample read entirely before ``start`` (its time plus ``read_s``, how long a
        read may take; the collection's start snapshot at worst), the end the first sample taken at or after
        ``end``: the counts may include I/O up to ``before_s`` seconds before the phase and ``after_s``
        after it.  Returns ``{buckets: [(bucket, ios)], before_s, after_s, reset}``.
        """
        base = max(bisect.bisect_right(self.times, start - self.read_s) - 1, 0)
        last = min(bisect.bisect_left(self.times, end), len(self.times) - 1)
        # Delta rows ``base <= sample < last`` are the changes from times[base] to times[last].
        low = bisect.bisect_left(self.delta_samples, base)
        high = bisect.bisect_left(self.delta_samples, last)
        offset = 2 if column == 'read' else 3
        counts: dict = {}
        for row in self.deltas[low:high]:
            counts[row[1]] = counts.get(row[1], 0) + row[offset]
        moved = [(self.buckets[bucket], ios) for bucket, ios in counts.items() if ios]
        reset = bisect.bisect_left(self.resets, base) < bisect.bisect_left(self.resets, last)
        return {'buckets': sorted(moved, key=lambda item: _bucket_order(item[0])),
                'before_s': round(start - self.times[base], 3), 'after_s': round(self.times[last] - end, 3),
                'reset': reset}


def phase_histogram(record: dict, start: float, end: float, column: str,
                    title: str = IO_SIZE_HISTOGRAM) -> dict:
    """``column`` counts of ``title`` moved between the samples of a brw record that bracket ``[start, end]``.

    See ``BrwSeries.cut``; a report cutting many phases builds the BrwSeries once.
    """
    return BrwSeries(record, title).cut(start, end, column)


def phase_io_rows(stats_envelope: dict, surveys: list[dict]) -> tuple[list, list]:
    """The disk I/O size histogram of each OST per obdfilter test phase on this host; notes where it cannot be cut."""
    host = stats_envelope['host']
    brw = [record for record in stats_envelope['records'] if record.get('collector') == 'brw']
    sampled = _brw_series_records(stats_envelope)
    indexed_series: dict = {}
    rows = []
    notes = []
    for envelope in surveys:
        if envelope.get('survey') not in PHASE_SURVEYS or not envelope.get('records'):
            continue
        windows = [window for window in timed_tests(envelope) if window['test'] in PHASE_COLUMNS]
        if not windows:
            notes.append('%s %s (engine %s): its records carry no test times, so no disk I/O size per phase'
                         % (host, envelope['survey'], envelope.get('engine')))
            continue
        if not sampled:
            notes.append('%s %s: brw_stats were not sampled during the survey (stats_collect_brw_interval 0), '
                         'so only the histogram of the whole collection' % (host, envelope['survey']) if brw else
                         '%s %s: no brw_stats were collected on this host' % (host, envelope['survey']))
            continue
        # One phase per point, iteration and test: from its earliest start to its latest end on this host.
        phases: dict = {}
        for window in windows:
            key = (window['label'], window['iteration'], window['test'])
            phase = phases.setdefault(key, dict(window, targets=set()))
            phase['start'] = min(phase['start'], window['start'])
            phase['end'] = max(phase['end'], window['end'])
            phase['targets'].update(window['targets'] or ())
        targets = sorted({record['target'] for record in sampled if record.get('target')})
        outside = 0
        unknown = set()
        for phase in sorted(phases.values(), key=lambda item: item['start']):
            column = PHASE_COLUMNS[phase['test']]
            for target in sorted(phase['targets']) or [name for name in targets if '-OST' in name]:
                if target not in targets:
                    # case=network names its server, not an OST; a target served by another node.
                    unknown.add(target)
                    continue
                record = _covering(sampled, target, phase['start'], phase['end'], envelope['survey'])
                if record is None:
                    outside += 1
                    continue
                indexed = indexed_series.get(id(record))
                if indexed is None:
                    indexed = indexed_series[id(record)] = BrwSeries(record)
                cut = indexed.cut(phase['start'], phase['end'], column)
                total = sum(ios for unused, ios in cut['buckets'])
                common = {'host': host, 'survey': envelope['survey'], 'point': phase['point'], 'label': phase['label'],
                          'iteration': phase['iteration'], 'test': phase['test'], 'column': column, 'target': target,
                          'start': phase['start'], 'end': phase['end'], 'before_s': cut['before_s'],
                          'after_s': cut['after_s'], 'reset': cut['reset']}
                if not cut['buckets']:
                    rows.append(dict(common, bucket=None, ios=0, pct=None))
                for bucket, ios in cut['buckets']:
                    rows.append(dict(common, bucket=bucket, ios=ios, pct=round(100.0 * ios / total, 1)))
        if unknown:
            notes.append('%s %s: no brw_stats of %s on this host' % (host, envelope['survey'], ', '.join(sorted(unknown))))
        if outside:
            notes.append('%s %s: %d phase(s) of an OST fall outside every sampled brw_stats collection'
                         % (host, envelope['survey'], outside))
    return rows, notes


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
    point_cpu = []
    point_cpu_notes = []
    phase_io = []
    phase_io_notes = []
    surveys = _survey_envelopes(run_dir, envelopes, {envelope['host'] for envelope in stats_envelopes})
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
        own = [survey for survey in surveys if survey['host'] == host]
        if samples:
            # Without vmstat reports there is nothing to cut: the CPU table's own line says so.
            found, notes = point_cpu_rows(host, samples, _vmstat_interval(envelope), own)
            point_cpu.extend(found)
            point_cpu_notes.extend(notes)
        found, notes = phase_io_rows(envelope, own)
        phase_io.extend(found)
        phase_io_notes.extend(notes)
        if len(cpu_charts) < max_charts:
            chart = cpu_chart(host, samples)
            if chart:
                cpu_charts.append(chart)
    return {'hosts': hosts, 'io_sizes': io_rows, 'cpu': cpu, 'charts': cpu_charts, 'unusable': unusable,
            'charted_hosts': len(cpu_charts), 'point_cpu': point_cpu, 'point_cpu_notes': point_cpu_notes,
            'phase_io_sizes': phase_io, 'phase_io_notes': phase_io_notes}
