# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The computations behind the report: peaks, outliers, saturation, layer efficiency, repeat statistics.

Every function takes Samples (see samples.py) and returns plain dicts and
lists, ready for JSON, templates and the acceptance criteria.  Repeats of one
sweep point (``iokit_iterations`` > 1) are averaged before anything else is
computed, so that a point counts once whatever the number of iterations.
Every value compared here is a rate (MiB/s or ops/s): higher is better.
Controller-side code, no Ansible imports.
"""

from __future__ import annotations

import functools
import math
import operator
import statistics
import typing as t

from ansible_collections.lustre.iokit.plugins.module_utils.sample_extraction import point_label
from ansible_collections.lustre.iokit.plugins.plugin_utils.report import findings
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.samples import Sample

DEFAULT_OUTLIER_THRESHOLD = findings.DEFAULT_THRESHOLD
DEFAULT_OUTLIER_MIN_PEERS = findings.DEFAULT_MIN_PEERS
DEFAULT_OUTLIER_MIN_DEVIATION_PCT = findings.DEFAULT_MIN_DEVIATION_PCT
DEFAULT_OUTLIER_SLOW_SHARE = findings.DEFAULT_SLOW_SHARE
DEFAULT_SATURATION_SHARE = 0.9
DEFAULT_EFFICIENCY_EXPECTED = (0.85, 0.90)

SubjectKey = t.Tuple[str, str, str, t.Optional[str]]  # survey, metric, host, target


def subject_label(host: str, target: str | None) -> str:
    return host if target is None else '%s/%s' % (host, target)


class PointTable:
    """Samples indexed as subject -> sweep point -> values (repeats kept in order)."""

    def __init__(self, samples: t.Iterable[Sample]):
        self.units: dict[str, str] = {}
        self.values: dict[SubjectKey, dict[tuple, list[float]]] = {}
        self.run_ids: set[str] = set()
        for sample in samples:
            key = (sample.survey, sample.metric, sample.host, sample.target)
            self.values.setdefault(key, {}).setdefault(sample.point, []).append(sample.value)
            self.units[sample.metric] = sample.unit
            self.run_ids.add(sample.run_id)

        # Computed once on first use: every section of the report reads them (the table is not changed after).
        self._means: dict[SubjectKey, dict[tuple, float]] = {}
        self._by_point: dict | None = None
        # Groupings that other modules derive from the table once (charts).
        self.cache: dict = {}

    def means(self, key: SubjectKey) -> dict[tuple, float]:
        """Sweep point -> mean of its repeats, for one subject and metric."""
        means = self._means.get(key)
        if means is None:
            means = self._means[key] = {point: (values[0] if len(values) == 1 else math.fsum(values) / len(values))
                                        for point, values in self.values[key].items()}
        return means

    def by_point(self) -> dict[tuple[str, str, tuple], dict[tuple[str, str | None], float]]:
        """(survey, metric, point) -> {(host, target): mean value}: the peers at each sweep point."""
        if self._by_point is None:
            peers: dict = {}
            for key in self.values:
                survey, metric, host, target = key
                for point, value in self.means(key).items():
                    peers.setdefault((survey, metric, point), {})[(host, target)] = value
            self._by_point = peers
        return self._by_point


def _table(samples: t.Any) -> PointTable:
    return samples if isinstance(samples, PointTable) else PointTable(samples)


def peaks(samples: t.Any) -> list[dict]:
    """Per subject and metric: the best value over the sweep (mean of repeats) and the point where it was reached."""
    table = _table(samples)
    rows = []
    for key in sorted(table.values, key=_sort_key):
        survey, metric, host, target = key
        means = table.means(key)
        # The first point reaching the best value (sweeps are stored in ascending order).
        point, value = max(means.items(), key=operator.itemgetter(1))
        rows.append({'survey': survey, 'metric': metric, 'unit': table.units[metric], 'host': host, 'target': target,
                     'subject': subject_label(host, target), 'value': value, 'point': dict(point),
                     'point_label': point_label(point), 'points': len(means)})
    return rows


def _sort_key(key: SubjectKey) -> tuple:
    survey, metric, host, target = key
    return (survey, metric, host, target or '')


def judge_points(samples: t.Any, threshold: float = DEFAULT_OUTLIER_THRESHOLD,
                 min_peers: int = DEFAULT_OUTLIER_MIN_PEERS, min_deviation_pct: float = DEFAULT_OUTLIER_MIN_DEVIATION_PCT,
                 slow_share: float = DEFAULT_OUTLIER_SLOW_SHARE) -> tuple[list[dict], dict[SubjectKey, int]]:
    """Every value judged against its peers (findings.py has the rule): ``(outliers, judged points per subject)``.

    Peers are the components of one kind (all OSTs, all LUNs, ... or all host
    aggregates) measured with the same survey, metric and sweep point.
    """
    rule = findings.Rule.make(threshold, min_peers, min_deviation_pct, slow_share)
    table = _table(samples)
    found = []
    judged: dict[SubjectKey, int] = {}
    for (survey, metric, point), subjects in table.by_point().items():
        by_kind: dict[str, dict] = {}
        for (host, target), value in subjects.items():
            by_kind.setdefault(findings.component_kind(survey, target), {})[(host, target)] = value
        for kind, peers in by_kind.items():
            if len(peers) < rule.min_peers:
                continue
            stats = findings.peer_stats(list(peers.values()))
            for (host, target), value in peers.items():
                key = (survey, metric, host, target)
                judged[key] = judged.get(key, 0) + 1
                verdict = findings.judge(value, stats, rule)
                if verdict is None:
                    continue
                found.append(dict(verdict, survey=survey, metric=metric, unit=table.units[metric], kind=kind,
                                  host=host, target=target, subject=subject_label(host, target), point=dict(point),
                                  point_label=point_label(point), value=value, median=stats.median, mad=stats.mad,
                                  peers=stats.count))
    found.sort(key=lambda row: (row['survey'], row['metric'], row['subject'], row['point_label']))
    return found, judged


def outliers(samples: t.Any, threshold: float = DEFAULT_OUTLIER_THRESHOLD, min_peers: int = DEFAULT_OUTLIER_MIN_PEERS,
             min_deviation_pct: float = DEFAULT_OUTLIER_MIN_DEVIATION_PCT,
             slow_share: float = DEFAULT_OUTLIER_SLOW_SHARE) -> list[dict]:
    """The values that stand out from their peers at the same sweep point (low and high), by survey and subject."""
    return judge_points(samples, threshold, min_peers, min_deviation_pct, slow_share)[0]


def weak_components(samples: t.Any, **rule: t.Any) -> list[dict]:
    """The findings: one row per component and metric that was low among its peers, weakest first."""
    found, judged = judge_points(samples, **rule)
    return findings.findings(found, judged)


@functools.lru_cache(maxsize=65536)
def split_point(point: tuple, x_key: str = 'thr') -> tuple[tuple, t.Any]:
    """``(series key, x)``: the sweep point without its x coordinate, and the x coordinate (None if absent)."""
    return tuple(item for item in point if item[0] != x_key), next((v for k, v in point if k == x_key), None)


def series_key(point: tuple, x_key: str = 'thr') -> tuple:
    """The sweep point without its x coordinate: what one curve of an I/O-kit plot holds constant."""
    return split_point(point, x_key)[0]


def saturation(samples: t.Any, share: float = DEFAULT_SATURATION_SHARE, x_key: str = 'thr') -> list[dict]:
    """Per subject, metric and curve: the fewest threads that reach ``share`` of the curve's peak.

    A curve is the sweep with every parameter but ``x_key`` fixed (one crg of
    sgpdd, one object count of obdfilter, one directory count of mds).  Curves
    without ``x_key`` (ost-survey) are not included.
    """
    if not 0 < share <= 1:
        raise ValueError('saturation share must be in (0, 1], got %r' % (share,))
    table = _table(samples)
    rows = []
    for key in sorted(table.values, key=_sort_key):
        survey, metric, host, target = key
        curves: dict[tuple, list[tuple[float, float]]] = {}
        for point, value in table.means(key).items():
            curve, x = split_point(point, x_key)
            if isinstance(x, (int, float)):
                curves.setdefault(curve, []).append((x, value))
        for curve, xy in sorted(curves.items(), key=lambda item: point_label(item[0])):
            xy.sort()
            peak_x, peak = max(xy, key=lambda item: (item[1], -item[0]))
            reach_x, reach = next((x, y) for x, y in xy if y >= share * peak)
            rows.append({'survey': survey, 'metric': metric, 'unit': table.units[metric], 'host': host, 'target': target,
                         'subject': subject_label(host, target), 'series': dict(curve), 'series_label': point_label(curve),
                         'peak': peak, 'peak_' + x_key: peak_x, 'saturation_' + x_key: reach_x, 'saturation_value': reach,
                         'share': share, 'saturated': reach_x < xy[-1][0]})
    return rows


def host_totals(table: PointTable, survey: str, metric: str) -> dict[str, dict[tuple, float]]:
    """Per host and sweep point: the host's aggregate.

    A host's own (target-less) samples are its aggregate when it has them;
    otherwise its targets measured at the same point ran together (that is how
    obdfilter-survey and sgpdd-survey drive several OSTs or LUNs), so their
    values add up to the host's bandwidth at that point.
    """
    own: dict[str, dict[tuple, float]] = {}
    summed: dict[str, dict[tuple, float]] = {}
    for key in table.values:
        if key[0] != survey or key[1] != metric:
            continue
        totals = (own if key[3] is None else summed).setdefault(key[2], {})
        for point, value in table.means(key).items():
            totals[point] = totals.get(point, 0.0) + value
    return dict(summed, **own)


def host_best(table: PointTable, survey: str, metric: str) -> dict[str, tuple[float, tuple]]:
    """Per host: the best value over the sweep of the host's aggregate (host_totals) at each point."""
    return {host: max(((value, point) for point, value in totals.items()), key=lambda item: item[0])
            for host, totals in host_totals(table, survey, metric).items()}


def layer_efficiency(samples: t.Any, expected: tuple[float, float] = DEFAULT_EFFICIENCY_EXPECTED,
                     upper: str = 'obdfilter', lower: str = 'sgpdd', tests: tuple = ('write', 'read')) -> list[dict]:
    """Per host and test: the best ``upper`` (obdfilter) bandwidth over the best ``lower`` (sgpdd) one.

    The Lustre manual expects the OST object layer to deliver 85-90% of the raw
    devices' bandwidth; ``status`` is ``low`` below ``expected[0]``, ``ok``
    otherwise (above 1.0 usually means caching or a smaller sgpdd sweep).
    """
    table = _table(samples)
    rows = []
    for test in tests:
        upper_best = host_best(table, upper, '%s_%s_mib_s' % (upper, test))
        lower_best = host_best(table, lower, '%s_%s_mib_s' % (lower, test))
        for host in sorted(set(upper_best) & set(lower_best)):
            (upper_value, upper_point), (lower_value, lower_point) = upper_best[host], lower_best[host]
            ratio = upper_value / lower_value if lower_value else None
            rows.append({'host': host, 'test': test, 'upper_survey': upper, 'lower_survey': lower,
                         'upper_mib_s': upper_value, 'lower_mib_s': lower_value, 'ratio': ratio,
                         'upper_point_label': point_label(upper_point), 'lower_point_label': point_label(lower_point),
                         'expected_min': expected[0], 'expected_max': expected[1],
                         'status': 'unknown' if ratio is None else ('low' if ratio < expected[0] else 'ok')})
    return rows


def repeat_stats(samples: t.Any) -> list[dict]:
    """Per subject, metric and sweep point measured more than once: mean, sample stddev and CV (%)."""
    table = _table(samples)
    rows = []
    for key in sorted(table.values, key=_sort_key):
        survey, metric, host, target = key
        for point, values in table.values[key].items():
            if len(values) < 2:
                continue
            mean = math.fsum(values) / len(values)
            stddev = statistics.stdev(values)
            rows.append({'survey': survey, 'metric': metric, 'unit': table.units[metric], 'host': host, 'target': target,
                         'subject': subject_label(host, target), 'point': dict(point), 'point_label': point_label(point),
                         'n': len(values), 'mean': mean, 'stddev': stddev, 'min': min(values), 'max': max(values),
                         'cv_pct': (100.0 * stddev / mean) if mean else None})
    return rows
