# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Chart geometry for the HTML report: every coordinate computed here, so that the template only draws.

Two kinds of chart, both plain inline SVG:

- line charts, the I/O kit's plots: bandwidth (MiB/s) or rate (ops/s)
  against threads on a log2 axis, one series per crg, object count or
  directory count.  For a fleet the series are the median over subjects with
  a min-max band; per-host charts are drawn only up to a configured number of
  hosts, so that 1000 OSS give a handful of charts, not 8000 series.
- bar charts: one bar per subject at the fleet's reference point (where the
  median peaks), outliers marked; a large fleet shows its lowest subjects and
  every outlier up to a configured number of bars.
- history charts: one value of a component (or the fleet's median peak) over
  the earlier runs it was judged against, one step per run labelled with its
  date, the band of the judgment shaded and the run judged marked
  (history_judge.py).

Controller-side code, no Ansible imports.
"""

from __future__ import annotations

import math
import statistics
import typing as t

from ansible_collections.lustre.iokit.plugins.module_utils.sample_extraction import point_label
from ansible_collections.lustre.iokit.plugins.plugin_utils.report import analysis, findings, history_judge

PALETTE = ('#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22',
           '#17becf')
OUTLIER_COLOR = '#d62728'
BAR_COLOR = '#4e79a7'
WITHIN_COLOR = '#2e7d32'
BAND_COLOR = '#4e79a7'

WIDTH, HEIGHT = 660, 330
LEFT, RIGHT, TOP, BOTTOM = 72, 150, 34, 52

# History charts are small multiples: many of them side by side, each one value over a handful of runs.
HISTORY_WIDTH, HISTORY_HEIGHT = 380, 230
HISTORY_LEFT, HISTORY_RIGHT, HISTORY_TOP, HISTORY_BOTTOM = 64, 16, 40, 46
# Components with a regression get a chart each up to this many, worst first; every series is in analysis.json.
HISTORY_CHARTS_MAX = 24

X_LABELS = {'thr': 'threads', 'tasks': 'MPI tasks', 'mode': 'mode', 'nodes': 'client nodes'}
# The x axis of a survey's line charts where it is not the thread count: IOR scales over client nodes, one curve per
# access pattern, tasks per node and transfer size.
SURVEY_X_KEYS = {'ior': 'nodes'}


def survey_x_key(survey: str, x_key: str = 'thr') -> str:
    """The sweep parameter a survey's line charts put on the x axis (``x_key`` unless the survey has its own)."""
    return SURVEY_X_KEYS.get(survey, x_key)


def y_label(unit: str) -> str:
    return 'bandwidth (%s)' % unit if unit == 'MiB/s' else 'rate (%s)' % unit


def nice_ceiling(value: float) -> tuple[float, float]:
    """An axis maximum at or above ``value`` and a round tick step (1, 2, 2.5 or 5 times a power of ten)."""
    if value <= 0 or not math.isfinite(value):
        return 1.0, 0.2
    raw_step = value / 5
    magnitude = 10 ** math.floor(math.log10(raw_step))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw_step)
    return step * math.ceil(value / step - 1e-9), step


def _tick_label(value: float) -> str:
    return ('%d' % value) if float(value).is_integer() else ('%g' % value)


def _y_axis(top_value: float, plot_top: float, plot_bottom: float) -> tuple[t.Callable[[float], float], list[dict]]:
    y_max, step = nice_ceiling(top_value)

    def scale(value: float) -> float:
        return round(plot_bottom - (plot_bottom - plot_top) * value / y_max, 1)

    ticks = [{'y': scale(i * step), 'label': _tick_label(round(i * step, 6))} for i in range(int(round(y_max / step)) + 1)]
    return scale, ticks


def line_chart(chart_id: str, title: str, unit: str, curves: dict[str, list[tuple[float, float, float, float]]],
               x_key: str = 'thr', subtitle: str = '', stops: t.Sequence[tuple[float, str]] = ()) -> dict:
    """A line chart model; ``curves`` maps a series label to ``(x, y, low, high)`` points (low/high: the band);
    ``stops``: ``(x, title)`` where a sweep stopped early, drawn as a dashed vertical line."""
    plot = {'left': LEFT, 'right': WIDTH - RIGHT, 'top': TOP, 'bottom': HEIGHT - BOTTOM}
    xs = sorted({point[0] for points in curves.values() for point in points})
    top_value = max((max(point[1], point[3]) for points in curves.values() for point in points), default=1.0)
    y_scale, y_ticks = _y_axis(top_value, plot['top'], plot['bottom'])
    positive = all(x > 0 for x in xs)
    low, high = (math.log2(xs[0]), math.log2(xs[-1])) if xs and positive else ((xs[0], xs[-1]) if xs else (0, 1))
    span = (high - low) or 1.0

    def x_scale(x: float) -> float:
        value = math.log2(x) if positive else x
        if len(xs) == 1:
            return round((plot['left'] + plot['right']) / 2, 1)
        return round(plot['left'] + (plot['right'] - plot['left']) * (value - low) / span, 1)

    series = []
    for index, (label, points) in enumerate(curves.items()):
        points = sorted(points)
        color = PALETTE[index % len(PALETTE)]
        coords = [(x_scale(x), y_scale(y)) for x, y, _lo, _hi in points]
        band = None
        if any(lo != hi for _x, _y, lo, hi in points):
            upper = ['%s,%s' % (x_scale(x), y_scale(hi)) for x, _y, _lo, hi in points]
            lower = ['%s,%s' % (x_scale(x), y_scale(lo)) for x, _y, lo, _hi in reversed(points)]
            band = ' '.join(upper + lower)
        series.append({'label': label, 'color': color, 'band': band,
                       'path': ' '.join('%s,%s' % coord for coord in coords),
                       'markers': [{'x': cx, 'y': cy, 'title': '%s: %s %s at %s %s' % (
                           label, _value_text(y), unit, _tick_label(x), X_LABELS.get(x_key, x_key))}
                           for (cx, cy), (x, y, _lo, _hi) in zip(coords, points)],
                       'legend_y': plot['top'] + 14 * index + 6})
    stop_lines: dict = {}
    for x, stop_title in stops:
        if x in xs:
            stop_lines.setdefault(x_scale(x), []).append(stop_title)
    return {'id': chart_id, 'kind': 'line', 'title': title, 'subtitle': subtitle, 'width': WIDTH, 'height': HEIGHT,
            'stops': [{'x': x, 'title': '; '.join(titles)} for x, titles in sorted(stop_lines.items())],
            'plot': plot, 'x_label': '%s (log2 scale)' % X_LABELS.get(x_key, x_key) if positive and len(xs) > 1
            else X_LABELS.get(x_key, x_key), 'y_label': y_label(unit),
            'x_ticks': [{'x': x_scale(x), 'label': _tick_label(x)} for x in xs], 'y_ticks': y_ticks,
            'series': series, 'legend_x': plot['right'] + 12}


def _value_text(value: float) -> str:
    return '%.1f' % value if value < 1000 else '{:,.0f}'.format(value)


def bar_chart(chart_id: str, title: str, unit: str, bars: list[dict], subtitle: str = '',
              median: float | None = None) -> dict:
    """A bar chart model; ``bars`` are ``{label, value, outlier}`` in drawing order."""
    plot = {'left': LEFT, 'right': WIDTH - 20, 'top': TOP, 'bottom': HEIGHT - 90}
    top_value = max((entry['value'] for entry in bars), default=1.0)
    y_scale, y_ticks = _y_axis(top_value, plot['top'], plot['bottom'])
    slot = (plot['right'] - plot['left']) / max(len(bars), 1)
    width = max(round(slot * 0.8, 1), 1.0)
    drawn = []
    for index, entry in enumerate(bars):
        x = round(plot['left'] + slot * index + (slot - width) / 2, 1)
        y = y_scale(entry['value'])
        drawn.append({'x': x, 'y': y, 'width': width, 'height': round(plot['bottom'] - y, 1),
                      'color': OUTLIER_COLOR if entry.get('outlier') else BAR_COLOR, 'outlier': bool(entry.get('outlier')),
                      'label': entry['label'], 'label_x': round(x + width / 2, 1), 'label_y': plot['bottom'] + 8,
                      'title': '%s: %s %s%s' % (entry['label'], _value_text(entry['value']), unit,
                                                ' - outlier (%s)' % entry['outlier'] if entry.get('outlier') else '')})
    return {'id': chart_id, 'kind': 'bar', 'title': title, 'subtitle': subtitle, 'width': WIDTH, 'height': HEIGHT,
            'plot': plot, 'y_label': y_label(unit), 'y_ticks': y_ticks, 'bars': drawn,
            'show_labels': len(bars) <= 64, 'median_y': y_scale(median) if median is not None else None,
            'median_label': 'median %s %s' % (_value_text(median), unit) if median is not None else None}


def _curve_label(curve: tuple) -> str:
    return point_label(curve) if curve else 'all'


def fleet_line_charts(table: analysis.PointTable, x_key: str = 'thr') -> list[dict]:
    """Per survey, metric and kind of subject: median over subjects at each point, with the min-max band."""
    charts = []
    for (survey, metric, kind), by_point in _group_points(table).items():
        curves: dict[str, list] = {}
        subjects = set()
        survey_x = survey_x_key(survey, x_key)
        for point, peers in by_point.items():
            curve, x = analysis.split_point(point, survey_x)
            if not isinstance(x, (int, float)):
                continue
            values = list(peers.values())
            subjects.update(peers)
            curves.setdefault(_curve_label(curve), []).append(
                (x, statistics.median(values), min(values), max(values)))
        if curves:
            label = '%d %s%s' % (len(subjects), _kind_noun(kind), '' if len(subjects) == 1 else 's')
            charts.append(line_chart(_chart_id('fleet', metric, kind), '%s - %s%s' % (survey, metric, _per(kind)),
                                     table.units[metric], _sorted_curves(curves), survey_x,
                                     subtitle='median over %s, band: min to max' % label if len(subjects) > 1
                                     else label))
    return charts


def _kind_noun(kind: str) -> str:
    return 'subject' if kind == findings.HOST else kind


def _per(kind: str) -> str:
    return '' if kind == findings.HOST else ' per %s' % kind


def _chart_id(prefix: str, metric: str, kind: str) -> str:
    return '%s-%s' % (prefix, metric) if kind == findings.HOST else '%s-%s-%s' % (prefix, metric, kind.lower())


def _sorted_curves(curves: dict) -> dict:
    def order(label: str) -> list:
        return [float(part) if part.replace('.', '', 1).isdigit() else 0.0 for part in label.split()[1::2]]
    return {label: curves[label] for label in sorted(curves, key=order)}


def _group_points(table: analysis.PointTable) -> dict:
    """(survey, metric, kind of subject) -> point -> peers: OSTs are charted with OSTs, hosts with hosts."""
    grouped = table.cache.get('chart_groups')
    if grouped is not None:
        return grouped
    grouped = {}
    for (survey, metric, point), peers in sorted(table.by_point().items(), key=lambda item: item[0][:2]):
        for (host, target), value in peers.items():
            kind = findings.component_kind(survey, target)
            grouped.setdefault((survey, metric, kind), {}).setdefault(point, {})[(host, target)] = value
    table.cache['chart_groups'] = grouped  # every chart section reads the same grouping
    return grouped


def host_line_charts(table: analysis.PointTable, max_hosts: int, x_key: str = 'thr', stops: dict | None = None) -> list[dict]:
    """The I/O kit's per-host plots (host aggregate over its targets), when the run has at most ``max_hosts`` hosts;
    ``stops``: ``{(survey, host): [(x, title)]}`` where that host's adaptive sweep stopped."""
    hosts = sorted({key[2] for key in table.values})
    if len(hosts) > max_hosts:
        return []
    totals: dict = {}
    for survey, metric in sorted({key[:2] for key in table.values}):
        survey_x = survey_x_key(survey, x_key)
        for host, by_point in analysis.host_totals(table, survey, metric).items():
            totals[(survey, metric, host)] = {point: value for point, value in by_point.items()
                                              if isinstance(analysis.split_point(point, survey_x)[1], (int, float))}
    charts = []
    for (survey, metric, host) in sorted(totals):
        if not totals[(survey, metric, host)]:
            continue
        survey_x = survey_x_key(survey, x_key)
        curves: dict[str, list] = {}
        for point, value in totals[(survey, metric, host)].items():
            curves.setdefault(_curve_label(analysis.series_key(point, survey_x)), []).append(
                (dict(point)[survey_x], value, value, value))
        charts.append(line_chart('host-%s-%s' % (host, metric), '%s - %s on %s' % (survey, metric, host),
                                 table.units[metric], _sorted_curves(curves), survey_x,
                                 subtitle='aggregate of %s' % host, stops=(stops or {}).get((survey, host), ())))
    return charts


def subject_bar_charts(table: analysis.PointTable, outliers: list[dict], max_bars: int) -> list[dict]:
    """Per survey and metric with several subjects: each subject at the reference point, outliers in red."""
    flagged = {(row['metric'], row['subject'], row['point_label']): row for row in outliers}
    charts = []
    for (survey, metric, kind), by_point in _group_points(table).items():
        # The reference point is where the fleet's median is highest: all bars then compare like with like.
        point, peers = max(by_point.items(), key=lambda item: (len(item[1]), statistics.median(item[1].values())))
        if len(peers) < 2:
            continue
        label = point_label(point)
        bars = []
        for (host, target), value in peers.items():
            subject = analysis.subject_label(host, target)
            outlier = flagged.get((metric, subject, label))
            bars.append({'label': subject, 'value': value,
                         'outlier': None if outlier is None else '%s, %+.1f%% from median' % (
                             outlier['direction'], outlier['deviation_pct'] or 0.0)})
        total = len(bars)
        if total > max_bars:
            marked = sorted((entry for entry in bars if entry['outlier']), key=lambda entry: entry['value'])[:max_bars]
            lowest = [entry for entry in sorted(bars, key=lambda entry: entry['value']) if not entry['outlier']]
            bars = sorted(marked + lowest[:max_bars - len(marked)], key=lambda entry: entry['value'])
            subtitle = 'at %s: the %d lowest of %d subjects and the outliers' % (label, len(bars), total)
        else:
            bars.sort(key=lambda entry: entry['label'])
            subtitle = 'at %s, %d subjects' % (label, total)
        charts.append(bar_chart(_chart_id('bars', metric, kind), '%s - %s per %s' % (survey, metric, _kind_noun(kind)),
                                table.units[metric],
                                bars, subtitle, statistics.median(peers.values())))
    return charts


def history_chart(chart_id: str, title: str, subtitle: str, series: dict) -> dict:
    """A trend chart model from a series of history_judge (``points`` oldest first, then ``current``).

    One step per run on the x axis, labelled with the day it finished (the full time and the run id are in each
    marker's title); the band the run was judged against is shaded, its baseline dashed, and the run judged is
    the last, larger marker, red when it regressed.
    """
    plot = {'left': HISTORY_LEFT, 'right': HISTORY_WIDTH - HISTORY_RIGHT, 'top': HISTORY_TOP,
            'bottom': HISTORY_HEIGHT - HISTORY_BOTTOM}
    unit, current = series['unit'], series['current']
    steps = [dict(point, current=False) for point in series['points']]
    steps.append({'run_id': current.get('run_id') or 'this run', 'finished': current['finished'], 'value': current['value'],
                  'band_low': current['band_low'], 'band_high': current['band_high'], 'current': True})
    top_value = max(max(step['value'], step['band_high']) for step in steps)
    y_scale, y_ticks = _y_axis(top_value, plot['top'], plot['bottom'])
    slot = (plot['right'] - plot['left']) / len(steps)

    def x_at(index: int) -> float:
        return round(plot['left'] + slot * (index + 0.5), 1)

    moments = [history_judge.parse_time(step['finished']) for step in steps]
    years = sorted({moment.year for moment in moments if moment is not None})
    markers = []
    for index, (step, moment) in enumerate(zip(steps, moments)):
        when = moment.strftime('%Y-%m-%d %H:%M UTC') if moment else 'time not known'
        regressed = step['current'] and current['status'] == history_judge.REGRESSION
        markers.append({'x': x_at(index), 'y': y_scale(step['value']), 'current': step['current'],
                        'color': OUTLIER_COLOR if regressed else (WITHIN_COLOR if step['current'] else BAR_COLOR),
                        'title': '%s, %s: %s %s%s' % (step['run_id'], when, _value_text(step['value']), unit,
                                                      ' (%s, %s)' % (current['status'], _change_text(current))
                                                      if step['current'] else '')})
    # The y axis starts at 0: a band reaching below it (a wide spread of small values) is drawn down to 0.
    lows = [(x_at(index), y_scale(max(step['band_low'], 0.0))) for index, step in enumerate(steps)]
    highs = [(x_at(index), y_scale(step['band_high'])) for index, step in enumerate(steps)]
    # The band runs from the left edge to the right one, so that a single earlier run still shows it.
    edge_highs = [(plot['left'], highs[0][1])] + highs + [(plot['right'], highs[-1][1])]
    edge_lows = [(plot['left'], lows[0][1])] + lows + [(plot['right'], lows[-1][1])]
    band = ' '.join('%s,%s' % point for point in edge_highs + list(reversed(edge_lows)))
    return {'id': chart_id, 'kind': 'history', 'title': title, 'subtitle': subtitle, 'width': HISTORY_WIDTH,
            'height': HISTORY_HEIGHT, 'plot': plot, 'y_label': y_label(unit), 'y_ticks': y_ticks,
            'x_label': 'run, by the day it finished' + _years_text(years),
            # A label is some 32 px wide: with many runs only every so many steps is labelled (the last always).
            'x_ticks': [{'x': x_at(index), 'label': moment.strftime('%m-%d') if moment else '?'}
                        for index, moment in enumerate(moments)
                        if (len(moments) - 1 - index) % max(math.ceil(32 / slot), 1) == 0],
            'band': band, 'band_color': BAND_COLOR, 'band_title': 'band %s to %s %s: within it, no change' % (
                _value_text(current['band_low']), _value_text(current['band_high']), unit),
            'baseline_y': y_scale(current['baseline']),
            'baseline_label': 'baseline %s %s' % (_value_text(current['baseline']), unit),
            'path': ' '.join('%s,%s' % (marker['x'], marker['y']) for marker in markers), 'markers': markers,
            'status': current['status']}


def _years_text(years: list[int]) -> str:
    if not years:
        return ''
    return ' (%d)' % years[0] if len(years) == 1 else ' (%d-%d)' % (years[0], years[-1])


def _change_text(current: dict) -> str:
    change = current.get('change_pct')
    return 'no change figure' if change is None else '%+.1f%% against the baseline' % change


def _fleet_noun(kind: str) -> str:
    # Host aggregates are judged among hosts: in a history chart they are hosts, not subjects.
    return 'host' if kind == findings.HOST else kind


def _history_id(*parts: str) -> str:
    return '-'.join(['history'] + [''.join(char if char.isalnum() or char in '._-' else '_' for char in str(part))
                                   for part in parts if part])


def history_charts(judgment: dict, max_components: int = HISTORY_CHARTS_MAX) -> dict:
    """``{'components': [...], 'fleet': [...], 'components_total': n}``: a chart per component with a regression
    (worst first, up to ``max_components``) and per fleet series of a history judgment (history_judge.judge_history)."""
    components = []
    for series in judgment['series'][:max_components]:
        components.append(history_chart(
            _history_id(series['component_kind'].lower(), series['component_id'], series['metric']),
            '%s %s - %s' % (series['component_kind'], series['component_id'], series['metric']),
            '%s at %s; band: the last %d run(s)' % (series['survey'], series['point_label'], len(series['points'])),
            series))
    hashes: dict = {}
    for series in judgment['fleet_series']:
        hashes.setdefault((series['survey'], series['metric'], series['component_kind']), set()).add(
            series['params_hash'])
    fleet = []
    for series in judgment['fleet_series']:
        kind = series['component_kind']
        several = len(hashes[(series['survey'], series['metric'], kind)]) > 1
        fleet.append(history_chart(
            _history_id('fleet', series['metric'], kind.lower(), str(series['params_hash'])[:12] if several else ''),
            '%s, median %s peak' % (series['metric'], _fleet_noun(kind)),
            '%s: %d %s%s now; band: the last %d run(s)' % (
                series['survey'], series['components'], _fleet_noun(kind), '' if series['components'] == 1 else 's',
                len(series['points'])),
            series))
    return {'components': components, 'fleet': fleet, 'components_total': len(judgment['series'])}
