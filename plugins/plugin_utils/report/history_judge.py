# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every component judged against its own past: the regressions of a run against the history of comparable runs.

findings.py compares a component with its peers in the same run; this module
compares it with itself in earlier runs, so that a fleet that became slower as
a whole (every OST at half its spring rate, none low among its peers) is still
caught.  It works on plain rows, one per sample, as the history database hands
them over (docs/acceptance-criteria.md, "Judging against history")::

    {'run_id': '20260512T080000Z-aa01', 'finished': '2026-05-12T09:41:07Z', 'survey': 'obdfilter',
     'params_hash': '3f9c...', 'component_kind': 'OST', 'component_id': 'testfs-OST0003',
     'metric': 'obdfilter_write_mib_s', 'unit': 'MiB/s', 'direction': 'higher',
     'point': {'rsz_kib': 1024, 'obj': 2, 'thr': 8}, 'iteration': 1, 'value': 512.3}

with, optionally, the sample's own ``host`` and ``target`` (what the report's
per-subject tables are keyed by).  ``point`` may also be its JSON text (read
once per distinct text, the cheaper form for millions of rows) and ``value`` an
int or a Decimal.  Iterations may come in any order, runs in any order.

The rule, per component, metric and sweep point of the run being judged:

- a run's value is the median of its iterations at that point;
- the comparable earlier runs are those with the same survey, survey variables
  (``params_hash``) and sweep point, finished before this run; the newest
  ``runs`` of them that measured the component there give the baseline, the
  median of their values (fewer runs are used when there are fewer; none
  means not judged);
- the band is the baseline +- ``mad_k`` x 1.4826 x MAD of those values (a
  robust standard deviation, findings.MAD_TO_SIGMA), widened to at least
  ``min_change_pct`` percent of the baseline on each side: timing noise of a
  few identical runs can make the MAD tiny or 0;
- a **regression** is a value beyond the band on the bad side: for a rate
  (``direction: higher``) below baseline - k x sigma and at least
  ``min_change_pct`` below the baseline; for a time or a latency
  (``direction: lower``) the mirror image.

Runs of a survey with other survey variables are never mixed into a baseline:
they are named in ``incomparable_runs`` with the reason.

Controller-side code, no Ansible imports, no database.
"""

from __future__ import annotations

import datetime
import decimal
import json
import math
import operator
import typing as t

from ansible_collections.lustre.iokit.plugins.module_utils.sample_extraction import make_point, point_label
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.findings import MAD_TO_SIGMA

# Five runs: a median of five survives two odd runs (a run during a rebuild, one after a firmware update), and a
# quarterly survey reaches back a little over a year.
DEFAULT_RUNS = 5
# Three robust standard deviations: a run of a stable fleet lands outside on the slow side about once in 700 values.
DEFAULT_MAD_K = 3.0
# Ten percent: what storage benchmarks commonly vary between runs on the same hardware (fill level, background
# scrubs, the time of day on shared networks), twice the peer rule's noise floor (findings.DEFAULT_MIN_DEVIATION_PCT)
# because runs weeks apart differ in more than neighbours measured together do.  It also holds when a handful of
# nearly identical runs makes the MAD close to 0.
DEFAULT_MIN_CHANGE_PCT = 10.0

HIGHER, LOWER = 'higher', 'lower'
REGRESSION, IMPROVEMENT, WITHIN = 'regression', 'improvement', 'within'

ROW_KEYS = ('run_id', 'finished', 'survey', 'params_hash', 'component_kind', 'component_id', 'metric', 'unit',
            'direction', 'point', 'iteration', 'value')

# (survey, params_hash, component_kind, component_id, metric, the point's number in a _Points)
Key = t.Tuple[str, str, str, str, str, int]


class Settings(t.NamedTuple):
    """The knobs of the judgment (report role: ``report_history_runs``, ``_mad_k``, ``_min_change_pct``)."""

    runs: int = DEFAULT_RUNS
    mad_k: float = DEFAULT_MAD_K
    min_change_pct: float = DEFAULT_MIN_CHANGE_PCT

    @classmethod
    def make(cls, runs: t.Any = None, mad_k: t.Any = None, min_change_pct: t.Any = None) -> 'Settings':
        """Settings with None meaning the default; ValueError naming a value that cannot be used."""
        runs = DEFAULT_RUNS if runs is None else runs
        mad_k = DEFAULT_MAD_K if mad_k is None else mad_k
        min_change_pct = DEFAULT_MIN_CHANGE_PCT if min_change_pct is None else min_change_pct
        if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
            raise ValueError('history runs must be a whole number of at least 1, got %r' % (runs,))
        for name, value in (('mad_k', mad_k), ('min_change_pct', min_change_pct)):
            # NaN compares false both ways: the check is written so that it refuses NaN too.
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0 or math.isinf(value):
                raise ValueError('history %s must be a number of at least 0, got %r' % (name, value))
        return cls(runs, float(mad_k), float(min_change_pct))


class _Points:
    """Every distinct sweep point numbered once: keys of millions of rows hash a small int, not a nested tuple.

    Points are equal when every parameter is (whatever their order); a point may come as a mapping or as its
    JSON text (one parse per distinct text).
    """

    def __init__(self) -> None:
        self.numbers: dict = {}    # sorted items -> number
        self.by_items: dict = {}   # items in the row's order -> number
        self.by_text: dict = {}    # JSON text -> number
        self.points: list = []     # number -> the point as a mapping

    def number(self, point: t.Any) -> int:
        if point.__class__ is str:
            number = self.by_text.get(point)
            if number is None:
                parsed = json.loads(point)
                if not isinstance(parsed, dict):
                    raise ValueError('point is not a mapping')
                number = self.by_text[point] = self.number(parsed)
            return number
        items = tuple(point.items())
        number = self.by_items.get(items)
        if number is None:
            canonical = tuple(sorted(items))
            number = self.numbers.get(canonical)
            if number is None:
                number = self.numbers[canonical] = len(self.points)
                self.points.append(dict(canonical))
            self.by_items[items] = number
        return number


def parse_time(text: t.Any) -> datetime.datetime | None:
    """An ISO 8601 time (``Z`` or an offset; UTC when naive) as an aware datetime, None when absent or unreadable."""
    if isinstance(text, datetime.datetime):
        moment = text
    elif isinstance(text, str) and text:
        try:
            moment = datetime.datetime.fromisoformat(text[:-1] + '+00:00' if text.endswith('Z') else text)
        except ValueError:
            return None
    else:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=datetime.timezone.utc)


def loss_pct(change_pct: float | None, direction: str) -> float:
    """How much worse, in percent (positive is worse): a rate's drop, a time's rise."""
    if change_pct is None:
        return 0.0
    return change_pct if direction == LOWER else -change_pct


def _reduce(rows: t.Iterable[dict], points: _Points, keep: t.Container | None = None) -> tuple[dict, dict, dict]:
    """``({run_id: {Key: median}}, runs, descriptions)``: only the keys in ``keep`` when given (and then without
    descriptions, those are the current run's); ``runs`` has every run of the rows, kept or not, as
    ``{run_id: {'finished', 'hashes': {survey: {params_hash}}}}``.

    Written for millions of rows (a 1000-OSS fleet times five runs): a point is numbered once per distinct point
    (``points``), and a run is looked up once per stretch of rows of one run, survey and survey variables.
    """
    collected: dict = {}
    runs: dict = {}
    describe: dict = {}
    number, by_text, by_items = points.number, points.by_text, points.by_items
    run_values: dict = {}
    last: tuple = (_NO_RUN,)
    row = None
    try:
        for row in rows:
            run_id, survey, params_hash = row['run_id'], row['survey'], row['params_hash']
            if (run_id, survey, params_hash) != last:
                last = (run_id, survey, params_hash)
                run = runs.get(run_id)
                if run is None:
                    run = runs[run_id] = {'finished': row['finished'], 'hashes': {}}
                    collected[run_id] = {}
                run['hashes'].setdefault(survey, set()).add(params_hash)
                run_values = collected[run_id]
            point = row['point']
            # the lookup of number(), inlined: it runs once per row
            point_number = by_text.get(point) if point.__class__ is str else by_items.get(tuple(point.items()))
            if point_number is None:
                point_number = number(point)
            key = (survey, params_hash, row['component_kind'], row['component_id'], row['metric'], point_number)
            if keep is not None and key not in keep:
                continue
            value = row['value']
            if value.__class__ is not float:
                value = _as_float(value)
            if not math.isfinite(value):
                raise ValueError('value is not a finite number')
            values = run_values.get(key)
            if values is not None:
                values.append(value)
                continue
            run_values[key] = [value]
            if keep is None and key not in describe:
                if row['direction'] not in (HIGHER, LOWER):
                    raise ValueError('direction must be %s or %s' % (HIGHER, LOWER))
                describe[key] = {'unit': row['unit'], 'direction': row['direction'], 'point': points.points[key[5]],
                                 'host': row.get('host'), 'target': row.get('target')}
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ValueError('unusable history row %r: %s (a row has %s)' % (row, exc, ', '.join(ROW_KEYS))) from exc
    reduced = {run_id: {key: (values[0] if len(values) == 1 else _median(values))
                        for key, values in by_key.items()}
               for run_id, by_key in collected.items()}
    return reduced, runs, describe


_NO_RUN = object()


def _as_float(value: t.Any) -> float:
    """A value that is not a float: an int, or a Decimal as a NUMERIC column gives it; never a bool or a text."""
    if isinstance(value, (int, decimal.Decimal)) and not isinstance(value, bool):
        return float(value)
    raise ValueError('value is not a finite number')


def _band(values: list[float], settings: Settings) -> tuple[float, float, float, float]:
    """``(baseline, sigma, band_low, band_high)`` of the earlier runs' values (newest first)."""
    baseline = _median(values)
    sigma = MAD_TO_SIGMA * _median([abs(value - baseline) for value in values])
    margin = abs(baseline) * settings.min_change_pct / 100.0
    spread = settings.mad_k * sigma
    return baseline, sigma, baseline - max(spread, margin), baseline + max(spread, margin)


def judge_value(value: float, earlier: list[float], direction: str, settings: Settings) -> dict:
    """One value against the values of the earlier runs (newest first): baseline, band, change and status."""
    baseline, sigma, band_low, band_high = _band(earlier, settings)
    change_pct = 100.0 * (value - baseline) / baseline if baseline else None
    spread = settings.mad_k * sigma
    status = WITHIN
    if change_pct is not None:
        worse = loss_pct(change_pct, direction)
        # Beyond the MAD band and by at least the minimum change, on the bad side or the good side.
        if worse >= settings.min_change_pct and abs(value - baseline) > spread:
            status = REGRESSION
        elif -worse >= settings.min_change_pct and abs(value - baseline) > spread:
            status = IMPROVEMENT
    return {'value': value, 'baseline': baseline, 'sigma': sigma, 'band_low': band_low, 'band_high': band_high,
            'change_pct': change_pct, 'status': status}


def _name_runs(current_run: str | None, current_end: datetime.datetime | None, current_hashes: dict,
               earlier: dict) -> tuple[set, list[dict]]:
    """The earlier runs that may give a baseline, and every other run named with the reason.

    ``earlier`` maps a run id to ``{'finished', 'hashes': {survey: {params_hash}}}`` (surveys of this run only).
    """
    usable = set()
    named = []
    for run_id, run in sorted(earlier.items(), key=lambda item: (_sort_time(item[1]['finished']), str(item[0]))):
        moment = parse_time(run['finished'])
        if run_id == current_run:
            named.append({'run_id': run_id, 'finished': run['finished'], 'survey': None, 'params_hash': None,
                          'reason': 'is the run being judged'})
            continue
        if current_end is not None and moment is not None and moment >= current_end:
            named.append({'run_id': run_id, 'finished': run['finished'], 'survey': None, 'params_hash': None,
                          'reason': 'finished at or after the run being judged'})
            continue
        usable.add(run_id)
        for survey, hashes in sorted(run['hashes'].items()):
            for params_hash in sorted(hashes - current_hashes[survey], key=str):
                named.append({'run_id': run_id, 'finished': run['finished'], 'survey': survey,
                              'params_hash': params_hash,
                              'reason': 'other %s survey variables (params_hash %s, this run %s): not mixed into the '
                                        'baseline' % (survey, params_hash, ', '.join(sorted(current_hashes[survey])))})
    return usable, named


def _sort_time(finished: t.Any) -> datetime.datetime:
    return parse_time(finished) or _EPOCH


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def judge_history(current_rows: t.Iterable[dict], earlier_rows: t.Iterable[dict], runs: int = DEFAULT_RUNS,
                  mad_k: float = DEFAULT_MAD_K, min_change_pct: float = DEFAULT_MIN_CHANGE_PCT,
                  other_runs: t.Iterable[dict] = ()) -> dict:
    """The run of ``current_rows`` judged against ``earlier_rows`` (both in the history row shape).

    ``other_runs`` may name runs the database sent no samples of (``{run_id, finished, survey, params_hash}``):
    those with other survey variables are named in ``incomparable_runs`` too.  Returns::

        {'run_id', 'finished', 'settings', 'findings', 'components', 'series', 'fleet_series',
         'incomparable_runs', 'judged', 'not_judged', 'regressions'}

    - ``findings``: one per component with a regression, worst first (largest loss in percent); its headline is
      its worst metric and sweep point, ``regressed`` lists every metric that regressed (its worst point first,
      at how many of the points judged);
    - ``components``: per component, survey and metric judged, its peak against the peak of its baselines at the
      same points ("vs history");
    - ``series``: per finding, its headline value in each earlier run it was judged against and the band;
      ``fleet_series``: per survey, metric and kind of component, the median component peak of each run with
      its own band;
    - ``judged``: per component, survey and metric, the points judged and regressed, and the runs used;
      ``not_judged``: per survey, how many values had no comparable earlier run.
    """
    settings = Settings.make(runs, mad_k, min_change_pct)
    points = _Points()
    now_by_run, now_runs, describe = _reduce(current_rows, points)
    if len(now_by_run) > 1:
        raise ValueError('the current history rows must be of one run, got runs %s' % ', '.join(sorted(now_by_run)))
    current_run = next(iter(now_by_run), None)
    now = now_by_run.get(current_run, {})
    current_finished = now_runs[current_run]['finished'] if now_runs else None
    current_hashes = now_runs[current_run]['hashes'] if now_runs else {}

    before_by_run, earlier, _nothing = _reduce(earlier_rows, points, keep=now)
    keys = list(now)
    columns = {run_id: list(map(values.get, keys)) for run_id, values in before_by_run.items()}
    return _judge(settings, current_run, current_finished, current_hashes, keys, list(now.values()),
                  [describe[key]['direction'] for key in keys], describe, columns, earlier, other_runs)


def judge_history_values(data: dict, runs: int = DEFAULT_RUNS, mad_k: float = DEFAULT_MAD_K,
                         min_change_pct: float = DEFAULT_MIN_CHANGE_PCT) -> dict:
    """``judge_history`` of the compact shape the history database reads fastest (``History.judging_values``)::

        {'run_id', 'finished', 'hashes': {survey: params_hash},
         'series': {series id: (survey, component_kind, component_id, metric, unit, direction, point, host, target)},
         'current': {series id: value, or a list of values when the run has several (iterations)},
         'earlier': [{'run_id', 'finished', 'survey', 'params_hash', 'values': {series id: value or [value, ...]}}],
         'other_runs': [{run_id, finished, survey, params_hash}]}

    The same judgment as ``judge_history`` of the same samples as rows: a series (one component, metric and sweep
    point of one survey) is made into its key once, not once per sample and run, which is what makes a judgment of a
    thousand OSS against five runs take seconds rather than minutes.  A series id is any hashable name.
    """
    settings = Settings.make(runs, mad_k, min_change_pct)
    points = _Points()
    hashes = data.get('hashes') or {}
    series = data['series']
    try:
        # Column by column (zip, map, in C) rather than series by series: a thousand OSS make a million series.
        about = list(series.values())
        if set(map(len, about)) - {9}:
            raise ValueError('a series is (survey, component_kind, component_id, metric, unit, direction, point, '
                             'host, target)')
        surveys, kinds, component_ids, metrics, _units, directions, point_list, _hosts, _targets = \
            zip(*about) if about else ((),) * 9
        if set(directions) - {HIGHER, LOWER}:
            raise ValueError('direction must be %s or %s' % (HIGHER, LOWER))
        if set(map(type, point_list)) <= {str}:
            # JSON texts, as the database gives them: each distinct one read once
            for text in dict.fromkeys(point_list):
                points.number(text)
            numbers = map(points.by_text.__getitem__, point_list)
        else:
            numbers = map(points.number, point_list)
        all_keys = list(zip(surveys, map(hashes.get, surveys), kinds, component_ids, metrics, numbers))
    except (TypeError, ValueError) as exc:
        raise ValueError('unusable history series: %s' % exc) from exc
    key_of = dict(zip(series, all_keys))
    # what a key is about: its first series, made into describe()'s mapping when the judgment asks for it
    describe = _Described(dict(zip(reversed(all_keys), reversed(about))), points)
    current_run = data.get('run_id')
    current_values = data.get('current') or {}
    # only the series the run measured are judged, and only they are read from the earlier runs
    series_ids = [series_id for series_id in current_values if series_id in key_of]
    keys = list(map(key_of.__getitem__, series_ids))
    by_run: dict = {}
    earlier: dict = {}
    for item in data.get('earlier') or ():
        run_id, survey, params_hash = item['run_id'], item['survey'], item['params_hash']
        run = earlier.get(run_id)
        if run is None:
            run = earlier[run_id] = {'finished': item['finished'], 'hashes': {}}
        run['hashes'].setdefault(survey, set()).add(params_hash)
        # a series of an earlier run counts only under the survey variables of this run (as judge_history's keys)
        merged = by_run.setdefault(run_id, {})
        if hashes.get(survey) == params_hash:
            merged.update(item['values'])
    if len(set(keys)) == len(keys):
        # The common case, a series per key: each run's values are one column in the order of ``keys``, looked up
        # by series id in C, its iterations reduced to their median where it has several.
        values = _column(current_values, series_ids)
        columns = {run_id: _column(merged, series_ids) for run_id, merged in by_run.items()}
    else:
        key_of = {series_id: key_of[series_id] for series_id in series_ids}
        now = _series_medians(current_values, key_of, False)
        keys, values = list(now), list(now.values())
        columns = {run_id: list(map(_series_medians(merged, key_of, False).get, keys))
                   for run_id, merged in by_run.items()}
    current_hashes: dict = {}
    for key in keys:
        current_hashes.setdefault(key[0], set()).add(key[1])
    directions = list(map(_DIRECTION, map(describe.about.__getitem__, keys)))
    return _judge(settings, current_run, data.get('finished') if keys else None, current_hashes, keys, values,
                  directions, describe, columns, earlier, data.get('other_runs'))


_DIRECTION = operator.itemgetter(5)


class _Described(dict):
    """describe() of judge_history_values: ``{Key: {'unit', 'direction', 'point', 'host', 'target'}}`` made of
    ``about`` ({Key: its series' tuple}) for the keys asked for only (a headline, a peak), not for every series."""

    def __init__(self, about: dict, points: _Points) -> None:
        super().__init__()
        self.about = about
        self.points = points

    def __missing__(self, key: Key) -> dict:
        _survey, _kind, _component_id, _metric, unit, direction, _point, host, target = self.about[key]
        described = self[key] = {'unit': unit, 'direction': direction, 'point': self.points.points[key[5]],
                                 'host': host, 'target': target}
        return described


def _column(values_by_series: dict, series_ids: list) -> list:
    """The values of ``series_ids`` in one run, in that order: a value, the median of its values when it has
    several, or None when the run has none; ValueError when a value is not a finite number."""
    try:
        column = list(map(values_by_series.get, series_ids))
        if set(map(type, column)) - _PLAIN:
            column = [value if value.__class__ is float or value is None else
                      _checked_median(value) if value.__class__ is list else _as_float(value) for value in column]
        # None and 0.0 left out: only whether a NaN or an infinity is there matters
        if not math.isfinite(sum(filter(None, column))):
            # a NaN or an infinity, or only finite values whose sum overflows
            for value in column:
                if value is not None and not math.isfinite(value):
                    raise ValueError('value is not a finite number')
        return column
    except (TypeError, ValueError) as exc:
        raise ValueError('unusable history value: %s' % exc) from exc


_PLAIN = {float, type(None)}


def _series_medians(values_by_series: dict, key_of: dict, one_key_per_series: bool) -> dict:
    """``{Key: median of the values}`` of one run's series in ``key_of`` (values merged when two series make one
    key); ValueError when a value is not a finite number."""
    try:
        if not one_key_per_series:
            merged: dict = {}
            for series_id, values in values_by_series.items():
                key = key_of.get(series_id)
                if key is not None:
                    merged[key] = merged.get(key, []) + (values if values.__class__ is list else [values])
            return {key: _checked_median(values) for key, values in merged.items()}
        # A series has one value per run but for repeated iterations: one comprehension, then the values checked
        # in bulk (a type set and a sum) rather than one by one.
        result = {key_of[series_id]: _checked_median(values) if values.__class__ is list else values
                  for series_id, values in values_by_series.items() if series_id in key_of}
        if set(map(type, result.values())) - {float}:
            result = {key: value if value.__class__ is float else _as_float(value) for key, value in result.items()}
        if not math.isfinite(sum(result.values())):
            # a NaN or an infinity, or only finite values whose sum overflows
            for value in result.values():
                if not math.isfinite(value):
                    raise ValueError('value is not a finite number')
        return result
    except (TypeError, ValueError) as exc:
        raise ValueError('unusable history value: %s' % exc) from exc


def _checked_median(values: t.Sequence) -> float:
    values = [value if value.__class__ is float else _as_float(value) for value in values]
    if not values or not all(map(math.isfinite, values)):
        raise ValueError('value is not a finite number')
    return _median(values)


def _median(values: list) -> float:
    """statistics.median's result (the same arithmetic: the middle value, or the mean of the two middle ones) for a
    non-empty list of floats, without its generality: it runs once per series and run."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def _judge(settings: Settings, current_run: t.Any, current_finished: t.Any, current_hashes: dict, keys: list,
           values: list, directions: list, describe: dict, columns: dict, earlier: dict,
           other_runs: t.Iterable[dict] | None) -> dict:
    """The judgment of the values of the run (``values``, one per key of ``keys``, whose ``directions`` describe()
    says) against the earlier runs' (``columns``: {run_id: [its value of each key, or None]}), whose runs
    ``earlier`` describes ({run_id: {'finished', 'hashes': {survey: {params_hash}}}})."""
    for run in other_runs or ():
        if isinstance(run, dict):
            known = earlier.setdefault(run.get('run_id'), {'finished': run.get('finished'), 'hashes': {}})
            known['hashes'].setdefault(run.get('survey'), set()).add(run.get('params_hash'))
    for run in earlier.values():
        run['hashes'] = {survey: hashes for survey, hashes in run['hashes'].items() if survey in current_hashes}
    before_finished = {run_id: run['finished'] for run_id, run in earlier.items()}
    usable, incomparable = _name_runs(current_run, parse_time(current_finished), current_hashes, earlier)
    # Newest first: the baseline of a value is made of the newest comparable runs that measured it.
    # how many values each run lacks, counted once: a run without any is left out, one without gaps is the fast case
    missing = {run_id: column.count(None) for run_id, column in columns.items() if run_id in usable}
    order = sorted((run_id for run_id, column in columns.items() if run_id in usable and missing[run_id] < len(column)),
                   key=lambda run_id: (_sort_time(before_finished[run_id]), str(run_id)), reverse=True)
    ordered = [columns[run_id] for run_id in order]
    gapped = [missing[run_id] > 0 for run_id in order]
    members = _members(keys)
    regressed, groups, not_judged = _judge_values(keys, values, directions, ordered, gapped, order, members, settings)
    findings = _findings(regressed, groups, describe)
    return {
        'run_id': current_run,
        'finished': current_finished,
        'settings': settings._asdict(),
        'findings': [finding for finding, _key in findings],
        'components': _vs_history(groups, describe),
        'series': [_series(finding, regressed[key]['history'], before_finished, current_run, current_finished)
                   for finding, key in findings],
        'fleet_series': _fleet_series(keys, values, directions, ordered, gapped, order, members, describe,
                                      before_finished, current_run, current_finished, settings),
        'incomparable_runs': incomparable,
        'judged': _judged_components(groups),
        'not_judged': [{'survey': survey, 'values': count} for survey, count in sorted(not_judged.items())],
        'regressions': sum(len(finding['regressed']) for finding, _key in findings),
    }


# (survey, params_hash, component_kind, component_id, metric) of a Key: one component's metric in one survey
_MEMBER = operator.itemgetter(slice(0, 5))


def _members(keys: list) -> dict:
    """``{(survey, params_hash, kind, component id, metric): [the positions of its keys in keys, in order]}``."""
    members: dict = {}
    get = members.get
    for position, member in enumerate(map(_MEMBER, keys)):
        found = get(member)
        if found is None:
            members[member] = [position]
        else:
            found.append(position)
    return members


def _take(values: t.Sequence, positions: list) -> tuple:
    """The items of ``values`` at ``positions``, in that order, picked in C."""
    return operator.itemgetter(*positions)(values) if len(positions) > 1 else (values[positions[0]],)


class _Group:
    """What the judgment keeps of one component, survey and metric (``_metric_key``) over its judged points: enough
    for its "vs history" line, its JUnit case and its finding, without a record per point (a thousand OSS make a
    million points)."""

    __slots__ = ('lower', 'peak_key', 'peak', 'history_peak', 'statuses', 'runs', 'points', 'regressed', 'worst',
                 'worst_key', 'used')

    def __init__(self, key: Key, direction: str) -> None:
        # The group's direction is its first point's, as its first point's describe() says.
        self.lower = direction == LOWER
        self.peak_key = key
        self.peak = None
        self.history_peak = None
        self.statuses: set = set()
        self.runs = 0
        self.points = 0
        self.regressed = 0
        self.worst = None
        self.worst_key = None
        self.used: set = set()  # tuples of the run ids each point was judged against


def _judge_values(keys: list, values: list, directions: list, columns: list, gapped: list, order: list,
                  members: dict, settings: Settings) -> tuple[dict, dict, dict]:
    """Every value of the run against its newest comparable earlier values (``columns``, one per run of ``order``,
    newest first): ``({Key: judge_value's item with 'history'} of the regressions, {metric key: _Group},
    {survey: values not judged})``.

    Column by column rather than point by point: the baselines of the points whose newest ``runs`` runs all measured
    them (the common case) are the middles of their sorted values, picked in C; a point is judged by judge_value's
    very arithmetic, its MAD only computed when its change is large enough for the band to matter; a component's
    peaks come from its points' values at once.
    """
    limit, mad_k, min_change = settings.runs, settings.mad_k, settings.min_change_pct
    head = columns[:limit]
    width = len(head)
    newest = tuple(order[:limit])
    # positions whose newest runs lack a value: their history reaches back to older runs, one by one
    gaps: set = set()
    for column, gap in zip(head, gapped):
        if gap:
            gaps.update(position for position, value in enumerate(column) if value is None)
    if not width:
        gaps = set(range(len(keys)))
    rows = list(zip(*head)) if width else []
    filler = (0.0,) * width
    for position in gaps:
        if rows:
            rows[position] = filler  # its baseline is made below, of the values it has
    middle = width // 2
    if width % 2:
        baselines = list(map(operator.itemgetter(middle), map(sorted, rows)))
    else:
        baselines = [(ordered[middle - 1] + ordered[middle]) / 2 for ordered in map(sorted, rows)]
    # position -> (earlier values, the runs they are of, [(run, value)]) where the newest runs do not all have one
    gap_history: dict = {}
    not_judged: dict = {}
    for position in sorted(gaps):
        history = [(run_id, column[position]) for run_id, column in zip(order, columns)
                   if column[position] is not None][:limit]
        if not history:
            not_judged[keys[position][0]] = not_judged.get(keys[position][0], 0) + 1
            if baselines:
                baselines[position] = None
            continue
        earlier = [value for _run, value in history]
        gap_history[position] = (earlier, tuple(run_id for run_id, _value in history), history)
        if baselines:
            baselines[position] = _median(earlier)
    if not baselines:
        baselines = [None] * len(keys)
        for position, (earlier, _used, _history) in gap_history.items():
            baselines[position] = _median(earlier)
    # Only a change of at least min_change_pct either way can be a regression or an improvement (the test of
    # judge_value, worse >= min_change or -worse >= min_change, as one abs()): the band is computed for those only.
    statuses: dict = {}
    for position in [position for position, value, baseline in zip(range(len(keys)), values, baselines)
                     if baseline and abs(100.0 * (value - baseline) / baseline) >= min_change]:
        value, baseline = values[position], baselines[position]
        earlier = gap_history[position][0] if position in gap_history else rows[position]
        change_pct = 100.0 * (value - baseline) / baseline
        worse = change_pct if directions[position] == LOWER else -change_pct
        spread = mad_k * (MAD_TO_SIGMA * _median([abs(item - baseline) for item in earlier]))
        if abs(value - baseline) > spread:
            statuses[position] = REGRESSION if worse >= min_change else IMPROVEMENT
    groups: dict = {}
    group_positions: dict = {}
    for member, positions in members.items():
        if gaps:
            positions = [position for position in positions if baselines[position] is not None]
            if not positions:
                continue
        metric_key = (member[2], member[3], member[0], member[4])
        known = group_positions.get(metric_key)
        if known is None:
            group_positions[metric_key] = positions
            groups[metric_key] = _Group(keys[positions[0]], directions[positions[0]])
        else:
            # another params_hash of the same survey and metric: one group, its points in the run's order
            group_positions[metric_key] = sorted(known + positions)
            first = group_positions[metric_key][0]
            groups[metric_key] = _Group(keys[first], directions[first])
    for metric_key, group in groups.items():
        positions = group_positions[metric_key]
        points = _take(values, positions)
        peak = min(points) if group.lower else max(points)
        group.peak, group.peak_key = peak, keys[positions[points.index(peak)]]
        history_peaks = _take(baselines, positions)
        group.history_peak = min(history_peaks) if group.lower else max(history_peaks)
        group.points = len(positions)
        if gap_history and any(position in gap_history for position in positions):
            for position in positions:
                earlier, used, _history = gap_history.get(position) or (None, newest, None)
                group.used.add(used)
                group.runs = max(group.runs, width if earlier is None else len(earlier))
        else:
            group.used.add(newest)
            group.runs = width
    # the statuses other than within, in the run's order: a group's worst regression is its first largest loss
    departed: dict = {}
    regressed: dict = {}
    for position, status in sorted(statuses.items()):
        key = keys[position]
        metric_key = (key[2], key[3], key[0], key[4])
        group = groups[metric_key]
        group.statuses.add(status)
        departed[metric_key] = departed.get(metric_key, 0) + 1
        if status != REGRESSION:
            continue
        direction = directions[position]
        if position in gap_history:
            earlier, _used, history = gap_history[position]
        else:
            earlier = list(rows[position])
            history = list(zip(newest, earlier))
        item = judge_value(values[position], earlier, direction, settings)
        item['history'] = history
        regressed[key] = item
        group.regressed += 1
        loss = loss_pct(item['change_pct'], direction)
        if group.worst is None or loss > group.worst:
            group.worst, group.worst_key = loss, key
    for metric_key, group in groups.items():
        if departed.get(metric_key, 0) < group.points:
            group.statuses.add(WITHIN)
    return regressed, groups, not_judged


def _entry(key: Key, item: dict, describe: dict) -> dict:
    survey, params_hash, kind, component_id, metric, _point = key
    about = describe[key]
    return {'survey': survey, 'params_hash': params_hash, 'component_kind': kind, 'component_id': component_id,
            'metric': metric, 'unit': about['unit'], 'direction': about['direction'], 'point': about['point'],
            'point_label': point_label(make_point(about['point'])), 'host': about['host'], 'target': about['target'],
            'value': item['value'], 'baseline': item['baseline'], 'sigma': item['sigma'],
            'band_low': item['band_low'], 'band_high': item['band_high'], 'change_pct': item['change_pct'],
            'status': item['status'], 'runs': [run_id for run_id, _value in item['history']]}


def _metric_key(key: Key) -> tuple:
    """(component kind, component id, survey, metric): what one line of "vs history" and one JUnit case are about."""
    return (key[2], key[3], key[0], key[4])


def _findings(regressed: dict, groups: dict, describe: dict) -> list[tuple[dict, Key]]:
    """One finding per component that regressed, worst first, each with the key of its headline.

    A component is its kind and id, whatever survey measured it: an OST slower in obdfilter and in ost-survey is
    one finding.  Its headline is the metric and point it lost most at; ``regressed`` has one entry per survey and
    metric that regressed (the worst point of each), worst first.
    """
    by_component: dict = {}
    for metric_key, group in groups.items():
        if group.worst_key is None:
            continue
        key = group.worst_key
        entry = _entry(key, regressed[key], describe)
        entry['regressed_points'], entry['judged_points'] = group.regressed, group.points
        entry['loss_pct'] = group.worst
        by_component.setdefault(metric_key[:2], []).append((entry, key))
    result = []
    for found in by_component.values():
        found.sort(key=lambda pair: (-pair[0]['loss_pct'], pair[0]['survey'], pair[0]['metric']))
        headline, key = found[0]
        result.append((dict(headline, kind=REGRESSION, regressed=[entry for entry, _key in found]), key))
    result.sort(key=lambda pair: (-pair[0]['loss_pct'], pair[0]['component_kind'], pair[0]['component_id']))
    return result


def finding_text(entry: dict) -> str:
    """One sentence: component, metric, value against its history baseline, change, band, and the runs it came from."""
    unit = entry['unit']
    change = '-' if entry['change_pct'] is None else '%+.1f%%' % entry['change_pct']
    runs = entry['runs']
    return ('%s %s on %s %s: %.2f %s at %s against a history baseline of %.2f %s, %s (band %.2f to %.2f %s%s; '
            'regressed at %d of %d sweep points); baseline: the median of run%s %s' % (
                entry['survey'], entry['metric'], entry['component_kind'], entry['component_id'], entry['value'],
                unit, entry['point_label'], entry['baseline'], unit, change, entry['band_low'], entry['band_high'],
                unit, ', lower is better' if entry['direction'] == LOWER else '', entry.get('regressed_points', 1),
                entry.get('judged_points', 1), 's' if len(runs) > 1 else '', ', '.join(runs)))


def _vs_history(groups: dict, describe: dict) -> list[dict]:
    """Per component, survey and metric: its best value against the best of its baselines, at the points judged."""
    rows = []
    for (kind, component_id, survey, metric), group in sorted(groups.items(), key=lambda pair: str(pair[0])):
        history_peak = group.history_peak
        change_pct = 100.0 * (group.peak - history_peak) / history_peak if history_peak else None
        about = describe[group.peak_key]
        statuses = group.statuses
        rows.append({'component_kind': kind, 'component_id': component_id, 'survey': survey, 'metric': metric,
                     'unit': about['unit'], 'direction': LOWER if group.lower else HIGHER, 'host': about['host'],
                     'target': about['target'], 'peak': group.peak, 'history_peak': history_peak,
                     'change_pct': change_pct, 'runs': group.runs,
                     'status': REGRESSION if REGRESSION in statuses else (
                         IMPROVEMENT if IMPROVEMENT in statuses else WITHIN)})
    return rows


def _judged_components(groups: dict) -> list[dict]:
    """Per component, survey and metric judged: how many points, how many regressed, and the runs used."""
    return [{'component_kind': kind, 'component_id': component_id, 'survey': survey, 'metric': metric,
             'points': group.points, 'regressed_points': group.regressed,
             'runs': sorted({run_id for used in group.used for run_id in used}, key=str)}
            for (kind, component_id, survey, metric), group in sorted(groups.items(), key=lambda pair: str(pair[0]))]


def _series(about: dict, history: list, before_finished: dict, current_run: t.Any, current_finished: t.Any) -> dict:
    """A trend: the earlier runs' values oldest first, each with the band the run judged was judged against."""
    return {'component_kind': about['component_kind'], 'component_id': about.get('component_id'),
            'survey': about['survey'], 'metric': about['metric'], 'unit': about['unit'],
            'direction': about['direction'], 'point_label': about.get('point_label'),
            'points': [{'run_id': run_id, 'finished': before_finished.get(run_id), 'value': value,
                        'band_low': about['band_low'], 'band_high': about['band_high']}
                       for run_id, value in reversed(history)],
            'current': {'run_id': current_run, 'finished': current_finished, 'value': about['value'], 'status': about['status'],
                        'baseline': about['baseline'], 'change_pct': about['change_pct'],
                        'band_low': about['band_low'], 'band_high': about['band_high']}}


def _fleet_series(keys: list, values: list, directions: list, columns: list, gapped: list, order: list, members: dict,
                  describe: dict, before_finished: dict, current_run: t.Any, current_finished: t.Any,
                  settings: Settings) -> list[dict]:
    """Per survey, metric and kind of component (and survey variables): the median of the components' peaks in each
    run, at the sweep points of this run, judged by the same rule as one component's value."""
    # (survey, metric, kind, params_hash) -> [(component id, its points' positions, an itemgetter of them)]
    fleets: dict = {}
    last: dict = {}
    for (survey, params_hash, kind, component_id, metric), positions in members.items():
        group = (survey, metric, kind, params_hash)
        # two positions at least, so that the getter gives a tuple
        getter = operator.itemgetter(*positions) if len(positions) > 1 else operator.itemgetter(*positions * 2)
        fleets.setdefault(group, []).append((component_id, positions, getter))
        last[group] = max(last.get(group, -1), positions[-1])
    lower = {group for group, found in fleets.items()
             if any(LOWER in _take(directions, positions) for _component, positions, _getter in found)}
    # every component's getter, group after group: a run's component peaks are one map() in C
    spans = []
    getters: list = []
    for group, found in fleets.items():
        spans.append((group, len(getters), len(getters) + len(found)))
        getters.extend(getter for _component, _positions, getter in found)

    def fleet_peaks(column: list, gaps: bool) -> dict:
        # group -> the median of the best value of each of its components at the points of this run
        # operator.call is Python 3.11's; the controller also runs on ansible-core lines with older Pythons
        picked = [getter(column) for getter in getters]
        peaks: dict = {}
        for group, start, end in spans:
            best_of = min if group in lower else max
            if gaps:
                found = [[value for value in values if value is not None] for values in picked[start:end]]
                best = [best_of(values) for values in found if values]
            else:
                best = list(map(best_of, picked[start:end]))
            if best:
                peaks[group] = _median(best)
        return peaks

    now_peaks = fleet_peaks(values, False)
    before_peaks = [(run_id, fleet_peaks(column, gap)) for run_id, column, gap in zip(order, columns, gapped)]
    # what a fleet series says of its unit and direction: the run's last point of the group, as the run lists them
    about = {group: describe[keys[position]] for group, position in last.items()}
    series = []
    for group in sorted(now_peaks, key=str):
        survey, metric, kind, params_hash = group
        history = [(run_id, peaks[group]) for run_id, peaks in before_peaks if group in peaks][:settings.runs]
        if not history:
            continue
        direction = about[group]['direction']
        item = judge_value(now_peaks[group], [value for _run, value in history], direction, settings)
        fleet = dict(item, survey=survey, metric=metric, component_kind=kind, unit=about[group]['unit'],
                     direction=direction)
        trend = _series(fleet, history, before_finished, current_run, current_finished)
        components = {component for component, _positions, _getter in fleets[group]}
        trend.update(params_hash=params_hash, components=len(components), component_id=None)
        series.append(trend)
    return series
