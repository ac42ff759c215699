# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Asking the history: which runs, one run, two selections compared, a trend, pruning and exporting.

Used by the ``history_query`` action (``playbooks/history.yml``) and the ``history_*`` filters, on the controller::

    with History.open(dsn) as history:
        left = select_runs(history, parse_selection('20260512T080000Z-aa01', 'history_lhs'))
        right = select_runs(history, parse_selection('now-90d:now', 'history_rhs'))
        rows, incomparable = compare(history, left, right)

A selection (ReFrame's syntax for its performance log) is one of

- a run id: that run;
- a period ``<start>:<end>``, each end ``%Y%m%d[T%H%M[%S]]`` or ``now`` (UTC), followed by shifts ``+Nw``, ``-Nd``,
  ``-Nh``, ``+Nm`` (weeks, days, hours, minutes): the runs that started in it, the start included, the end excluded;
- tags ``key=value[,key=value]``: the runs that carry all of them.

Values are reduced as report/history_judge.py reduces them: a run's value is the median of its iterations, a
selection's the median of its runs' values; the change and its verdict are ``history_judge.judge_value``'s.
"""

from __future__ import annotations

import csv
import datetime
import json
import os
import re
import statistics
import typing as t

from ansible_collections.lustre.iokit.plugins.module_utils.results import validate_run_id
from ansible_collections.lustre.iokit.plugins.module_utils.sample_extraction import make_point, point_label
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.errors import HistoryError
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.store import History, RunRecord, parse_tags
from ansible_collections.lustre.iokit.plugins.plugin_utils.report import history_judge

# What list shows without a period: a quarter, the usual spacing of acceptance surveys, and a little more.
DEFAULT_PERIOD = 'now-90d:now'
RUN, PERIOD, TAGS = 'run', 'period', 'tags'
EXPORT_COLUMNS = ('run_id', 'run_started', 'run_finished', 'tags', 'survey', 'parameters_hash', 'host',
                  'component_kind', 'component_id', 'target', 'test', 'metric', 'unit', 'direction', 'point',
                  'iteration', 'value', 'status')

_TIME = re.compile(r'^(?P<base>now|\d{8}(?:T\d{4}(?:\d{2})?)?)(?P<shifts>(?:[+-]\d+[wdhm])*)$')
_SHIFT = re.compile(r'([+-])(\d+)([wdhm])')
_SHIFT_UNITS = {'w': 'weeks', 'd': 'days', 'h': 'hours', 'm': 'minutes'}
_BASE_FORMATS = {8: '%Y%m%d', 13: '%Y%m%dT%H%M', 15: '%Y%m%dT%H%M%S'}


class Selection(t.NamedTuple):
    """What a selection text asks for: one of run_id, the period (since included, until excluded), tags."""

    kind: str                              # RUN, PERIOD or TAGS
    text: str
    run_id: str | None = None
    since: datetime.datetime | None = None
    until: datetime.datetime | None = None
    tags: dict | None = None


def _utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc).replace(second=0, microsecond=0, tzinfo=None)


def parse_time(text: str, variable: str, now: datetime.datetime | None = None) -> datetime.datetime:
    """One end of a period as a naive UTC datetime; ValueError naming ``variable`` when unreadable."""
    match = _TIME.match(text.strip())
    if match is None:
        raise ValueError('%s: %r is not a time; give now or %%Y%%m%%d[T%%H%%M[%%S]] (UTC), optionally shifted by '
                         '+-N followed by w, d, h or m (now-90d, 20260101T0800+2h)' % (variable, text))
    base = match.group('base')
    try:
        moment = (now or _utcnow()) if base == 'now' else datetime.datetime.strptime(base, _BASE_FORMATS[len(base)])
    except ValueError as exc:
        raise ValueError('%s: %r is not a date: %s' % (variable, text, exc)) from exc
    for sign, amount, unit in _SHIFT.findall(match.group('shifts')):
        shift = datetime.timedelta(**{_SHIFT_UNITS[unit]: int(amount)})
        moment = moment + shift if sign == '+' else moment - shift
    return moment


def parse_selection(text: t.Any, variable: str, now: datetime.datetime | None = None) -> Selection:
    """A selection text (see the module's description) read; ValueError naming ``variable`` when it is unusable.

    ``now``: the time ``now`` means (naive UTC), for the tests; the current minute otherwise.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError('%s: give a run id, a period such as now-90d:now or 20260101:20260301, or tags such as '
                         'quarter=2026Q3; got %r' % (variable, text))
    text = text.strip()
    if '=' in text:
        try:
            return Selection(TAGS, text, tags=parse_tags(text))
        except ValueError as exc:
            raise ValueError('%s: %s' % (variable, exc)) from exc
    if ':' in text:
        start, _sep, end = text.partition(':')
        since, until = parse_time(start, variable, now), parse_time(end, variable, now)
        if since >= until:
            raise ValueError('%s: the period %r ends before it starts' % (variable, text))
        return Selection(PERIOD, text, since=since, until=until)
    try:
        return Selection(RUN, text, run_id=validate_run_id(text))
    except ValueError as exc:
        raise ValueError('%s: %r is neither a run id, a period (start:end) nor tags (key=value): %s'
                         % (variable, text, exc)) from exc


def select_runs(history: History, selection: Selection, tags: t.Any = None) -> list[RunRecord]:
    """The recorded runs a selection names, oldest first; ``tags`` narrow it further.  A run id that is not
    recorded is an error (KeyError), a period or tags that match nothing an empty list."""
    if selection.kind == RUN:
        runs = history.runs(run_ids=[selection.run_id], tags=tags)
        if not runs:
            narrowed = ' with those tags' if tags else ''
            raise KeyError('run %s is not in the history %s%s' % (selection.run_id, history.dsn.shown, narrowed))
        return runs
    if selection.kind == PERIOD:
        return history.runs(since=selection.since, until=selection.until, tags=tags)
    wanted = dict(parse_tags(tags), **selection.tags)
    return history.runs(tags=wanted)


# --------------------------------------------------------------------------
# list and show


def run_rows(runs: t.Iterable[RunRecord]) -> list[dict]:
    """One row per run for list: when, which surveys on how many hosts, the tags."""
    return [{'run_id': run.run_id, 'started': run.started, 'finished': run.finished, 'fsname': run.fsname,
             'hosts': run.host_count, 'surveys': sorted(run.surveys),
             'tags': dict(sorted(run.tags.items()))} for run in runs]


def show_run(history: History, run_id: str) -> dict:
    """One run: its record, each survey's variables' hash, fill levels, and how many samples each survey has."""
    run = history.run(run_id)
    if run is None:
        raise KeyError('run %s is not in the history %s' % (run_id, history.dsn.shown))
    counts: dict = {}
    for sample in history.samples(runs=[run_id]):
        counts[sample.survey] = counts.get(sample.survey, 0) + 1
    return {
        'run_id': run.run_id, 'started': run.started, 'finished': run.finished, 'fsname': run.fsname,
        'lustre_version': run.lustre_version, 'collection_version': run.collection_version,
        'hosts': run.host_count, 'recorded': run.recorded, 'tags': dict(sorted(run.tags.items())),
        'surveys': [{'survey': name, 'parameters_hash': survey.parameters_hash, 'engine': survey.engine,
                     'hosts': survey.host_count, 'started': survey.started, 'finished': survey.finished,
                     'samples': counts.get(name, 0)} for name, survey in sorted(run.surveys.items())],
        'fill': [{'survey': fill.survey, 'host': fill.host, 'component_kind': fill.component_kind,
                  'component_id': fill.component_id, 'used_pct': fill.used_pct} for fill in history.fill(run_id)],
    }


# --------------------------------------------------------------------------
# compare and trend


def _run_medians(history: History, runs: list[RunRecord], **filters) -> dict:
    """``{(survey, hash, kind, component, metric, point): {run_id: median of its iterations}}`` and the
    descriptions ``{key: (unit, direction)}``."""
    hashes = {run.run_id: {name: survey.parameters_hash for name, survey in run.surveys.items()} for run in runs}
    values: dict = {}
    describe: dict = {}
    for sample in history.samples(runs=list(hashes), **filters):
        key = (sample.survey, hashes[sample.run_id].get(sample.survey), sample.component_kind, sample.component_id,
               sample.metric, sample.point)
        values.setdefault(key, {}).setdefault(sample.run_id, []).append(sample.value)
        describe.setdefault(key, (sample.unit, sample.direction))
    medians = {key: {run_id: statistics.median(found) for run_id, found in by_run.items()}
               for key, by_run in values.items()}
    return medians, describe


def compare(history: History, left: list[RunRecord], right: list[RunRecord],
            settings: history_judge.Settings | None = None) -> tuple[list[dict], list[dict]]:
    """Every series the two selections both have, left against right: ``(rows, incomparable)``.

    A row is ``{survey, component_kind, component_id, metric, unit, point, left, right, pdiff, verdict}``:
    ``left``/``right`` the median over the selection's runs, ``pdiff`` = 100 (left - right) / right, ``verdict``
    the judge's word (regression, improvement or within) with the right side as the baseline.  Only series with
    the same survey variables' hash on both sides are compared; ``incomparable`` names each (run, survey) whose
    variables no run on the other side shares.
    """
    settings = settings or history_judge.Settings()
    left_values, describe = _run_medians(history, left)
    right_values, right_describe = _run_medians(history, right)
    describe.update((key, value) for key, value in right_describe.items() if key not in describe)
    rows = []
    for key in sorted(set(left_values) & set(right_values), key=lambda item: (item[:5], point_label(item[5]))):
        unit, direction = describe[key]
        lhs = statistics.median(left_values[key].values())
        rhs = statistics.median(right_values[key].values())
        judged = history_judge.judge_value(lhs, [rhs], direction, settings)
        rows.append({'survey': key[0], 'component_kind': key[2], 'component_id': key[3], 'metric': key[4],
                     'unit': unit, 'point': dict(key[5]), 'left': lhs, 'right': rhs,
                     'pdiff': judged['change_pct'], 'verdict': judged['status']})
    left_hashes = {(name, survey.parameters_hash) for run in left for name, survey in run.surveys.items()}
    right_hashes = {(name, survey.parameters_hash) for run in right for name, survey in run.surveys.items()}
    incomparable = []
    for side, runs, other in (('left', left, right_hashes), ('right', right, left_hashes)):
        for run in runs:
            for name, survey in sorted(run.surveys.items()):
                if (name, survey.parameters_hash) not in other:
                    incomparable.append({'side': side, 'run_id': run.run_id, 'survey': name,
                                         'parameters_hash': survey.parameters_hash})
    return rows, incomparable


def trend(history: History, component: str, metric: str, point: t.Any = None,
          runs: list[RunRecord] | None = None) -> list[dict]:
    """One component's metric over the runs (all, or ``runs``), oldest first: ``{started, run_id, survey,
    parameters_hash, point, value}``, a run's value the median of its iterations.  Without ``point``, every
    point of the metric has its rows."""
    chosen = runs if runs is not None else history.runs()
    started = {run.run_id: run.started for run in chosen}
    medians, describe = _run_medians(history, chosen, component_id=component, metric=metric, point=point)
    rows = [{'started': started[run_id], 'run_id': run_id, 'survey': key[0], 'parameters_hash': key[1],
             'point': dict(key[5]), 'value': value, 'unit': describe[key][0]}
            for key, by_run in medians.items() for run_id, value in by_run.items()]
    return sorted(rows, key=lambda row: (point_text(row['point']), row['started'] or '', row['run_id']))


# --------------------------------------------------------------------------
# prune and export


def prune(history: History, before: t.Any, keep_runs: t.Iterable[str] = (), check: bool = False) -> dict:
    """Delete the runs that finished before ``before`` (a time as parse_time reads it, or a datetime), except
    ``keep_runs`` (the runs a named baseline uses).  ``{'deleted': [...], 'kept': [...]}`` (run ids);
    with ``check``, ``deleted`` is what would go and nothing is deleted."""
    if before is None or (isinstance(before, str) and not before.strip()):
        raise ValueError('history_before: give the date before which finished runs are deleted (20260101, now-365d)')
    bound = before if isinstance(before, datetime.datetime) else parse_time(str(before), 'history_before')
    keep = set(keep_runs or ())
    bound_text = bound.strftime('%Y-%m-%dT%H:%M:%SZ')
    old = [run for run in history.runs() if run.finished is not None and run.finished < bound_text]
    kept = sorted(run.run_id for run in old if run.run_id in keep)
    going = sorted(run.run_id for run in old if run.run_id not in keep)
    if check:
        return {'deleted': going, 'kept': kept}
    return {'deleted': history.delete_runs(going, finished_before=bound), 'kept': kept}


def export_rows(history: History, runs: list[RunRecord]) -> t.Iterator[dict]:
    """Every sample of ``runs`` with its run's metadata, as EXPORT_COLUMNS."""
    records = {run.run_id: run for run in runs}
    for sample in history.samples(runs=list(records)):
        run = records[sample.run_id]
        survey = run.surveys.get(sample.survey)
        yield {'run_id': sample.run_id, 'run_started': run.started, 'run_finished': run.finished,
               'tags': ','.join('%s=%s' % item for item in sorted(run.tags.items())), 'survey': sample.survey,
               'parameters_hash': survey.parameters_hash if survey else None, 'host': sample.host,
               'component_kind': sample.component_kind, 'component_id': sample.component_id,
               'target': sample.target, 'test': sample.test, 'metric': sample.metric, 'unit': sample.unit,
               'direction': sample.direction, 'point': dict(sample.point), 'iteration': sample.iteration,
               'value': sample.value, 'status': sample.status}


def export(history: History, runs: list[RunRecord], csv_path: str, jsonl_path: str) -> int:
    """Write the samples of ``runs`` as CSV (the point as JSON text) and JSON Lines; the number of samples."""
    count = 0
    with open(csv_path, 'w', newline='', encoding='utf-8') as csv_file, \
            open(jsonl_path, 'w', encoding='utf-8') as jsonl_file:
        writer = csv.DictWriter(csv_file, fieldnames=EXPORT_COLUMNS)
        writer.writeheader()
        for row in export_rows(history, runs):
            writer.writerow(dict(row, point=json.dumps(row['point'], sort_keys=True)))
            jsonl_file.write(json.dumps(row, sort_keys=True) + '\n')
            count += 1
    return count


# --------------------------------------------------------------------------
# Tables for the console and the text file


def table(headers: t.Sequence[str], rows: t.Iterable[t.Sequence]) -> list[str]:
    """Plain text columns, each as wide as its widest cell."""
    cells = [[_cell(value) for value in row] for row in rows]
    widths = [max([len(header)] + [len(row[index]) for row in cells]) for index, header in enumerate(headers)]
    line = '  '.join('%-*s' % (width, header) for width, header in zip(widths, headers)).rstrip()
    return [line, '-' * len(line)] + ['  '.join('%-*s' % (width, cell) for width, cell in zip(widths, row)).rstrip()
                                      for row in cells]


def _cell(value: t.Any) -> str:
    if value is None:
        return '-'
    if isinstance(value, float):
        return '%.4g' % value
    if isinstance(value, dict):
        return ','.join('%s=%s' % item for item in sorted(value.items())) or '-'
    if isinstance(value, (list, tuple)):
        return ','.join(str(item) for item in value) or '-'
    return str(value)


def point_text(point: dict) -> str:
    """A point as the I/O kit prints it (``rsz 1024K obj 8 thr 16``)."""
    return point_label(make_point(point)) if point else '-'


# --------------------------------------------------------------------------
# One action of playbooks/history.yml: the rows, the console's lines, the files


ACTIONS = ('list', 'show', 'compare', 'trend', 'prune', 'export')


def ask(history: History, action: str, params: t.Mapping, dest_dir: str, stamp: str, check: bool = False,
        now: datetime.datetime | None = None) -> dict:
    """Run one action (ACTIONS) with the role's variables (``params``: period, tags, run_id, lhs, rhs, component,
    metric, point, before, keep_runs, selection) and write its files in ``dest_dir`` as
    ``history-<action>-<stamp>.txt`` (and ``.csv``, ``.jsonl`` for export).

    Returns ``{'rows', 'lines', 'files', 'changed'}`` plus what the action adds (``incomparable`` for compare,
    ``deleted`` and ``kept`` for prune, ``samples`` for export).  ValueError naming the variable at fault,
    KeyError for a run that is not recorded.
    """
    tags = parse_tags(params.get('tags'))
    result: dict = {'changed': False, 'files': []}
    if action == 'list':
        selection = parse_selection(params.get('period') or DEFAULT_PERIOD, 'history_period', now)
        rows = run_rows(select_runs(history, selection, tags))
        lines = ['Runs of %s in %s%s: %d' % (history.dsn.shown, selection.text,
                                             ' tagged ' + _cell(tags) if tags else '', len(rows))]
        lines += table(('run', 'started', 'finished', 'hosts', 'surveys', 'tags'),
                       [(row['run_id'], row['started'], row['finished'], row['hosts'], row['surveys'], row['tags'])
                        for row in rows])
    elif action == 'show':
        run_id = params.get('run_id')
        if not run_id:
            raise ValueError('history_run_id: give the run to show')
        shown = show_run(history, run_id)
        rows = [shown]
        lines = ['Run %s: started %s, finished %s, file system %s, Lustre %s, collection %s, %s host(s), tags %s'
                 % tuple(_cell(shown[key]) for key in ('run_id', 'started', 'finished', 'fsname', 'lustre_version',
                                                       'collection_version', 'hosts', 'tags'))]
        lines += table(('survey', 'variables hash', 'engine', 'hosts', 'samples', 'started', 'finished'),
                       [(item['survey'], item['parameters_hash'], item['engine'], item['hosts'], item['samples'],
                         item['started'], item['finished']) for item in shown['surveys']])
        if shown['fill']:
            lines += [''] + table(('survey', 'host', 'kind', 'component', 'used %'),
                                  [(item['survey'], item['host'], item['component_kind'], item['component_id'],
                                    item['used_pct']) for item in shown['fill']])
    elif action == 'compare':
        # Both read before either is looked up: a typo on the right is named before a missing run on the left.
        lhs = parse_selection(params.get('lhs'), 'history_lhs', now)
        rhs = parse_selection(params.get('rhs'), 'history_rhs', now)
        left, right = select_runs(history, lhs, tags), select_runs(history, rhs, tags)
        rows, incomparable = compare(history, left, right)
        result['incomparable'] = incomparable
        lines = ['%s (%d run(s)) against %s (%d run(s)): %d series, %d regression(s), %d improvement(s)'
                 % (params.get('lhs'), len(left), params.get('rhs'), len(right), len(rows),
                    sum(1 for row in rows if row['verdict'] == history_judge.REGRESSION),
                    sum(1 for row in rows if row['verdict'] == history_judge.IMPROVEMENT))]
        lines += table(('survey', 'component', 'metric', 'point', 'left', 'right', 'unit', 'change %', 'verdict'),
                       [(row['survey'], row['component_id'], row['metric'], point_text(row['point']), row['left'],
                         row['right'], row['unit'], row['pdiff'], row['verdict']) for row in rows])
        lines += ['Not comparable (no run on the other side has these survey variables): %s %s %s (%s)'
                  % (item['side'], item['run_id'], item['survey'], item['parameters_hash'][:12])
                  for item in incomparable]
    elif action == 'trend':
        component, metric = params.get('component'), params.get('metric')
        if not component or not metric:
            raise ValueError('history_component and history_metric: give the component (testfs-OST0003) and its '
                             'metric (obdfilter_write_mib_s)')
        period = params.get('period')
        runs = None
        if period:
            runs = select_runs(history, parse_selection(period, 'history_period', now), tags)
        elif tags:
            runs = history.runs(tags=tags)
        rows = trend(history, component, metric, params.get('point') or None, runs)
        lines = ['%s %s over %d run(s)' % (component, metric, len({row['run_id'] for row in rows}))]
        lines += table(('started', 'run', 'point', 'value', 'unit'),
                       [(row['started'], row['run_id'], point_text(row['point']), row['value'], row['unit'])
                        for row in rows])
    elif action == 'prune':
        outcome = prune(history, params.get('before'), params.get('keep_runs') or (), check)
        result.update(outcome, changed=bool(outcome['deleted']))
        rows = [{'run_id': run_id, 'deleted': not check} for run_id in outcome['deleted']]
        named = ': ' + ', '.join(outcome['deleted']) if outcome['deleted'] else ''
        verb = 'Would delete' if check else 'Deleted'
        lines = ['%s %d run(s) finished before %s%s' % (verb, len(outcome['deleted']), params.get('before'), named)]
        if outcome['kept']:
            lines.append('Kept for a baseline (history_keep_runs): %s' % ', '.join(outcome['kept']))
    elif action == 'export':
        selection = parse_selection(params.get('selection') or params.get('period') or DEFAULT_PERIOD,
                                    'history_selection', now)
        runs = select_runs(history, selection, tags)
        base = os.path.join(dest_dir, 'history-export-%s' % stamp)
        result['samples'] = export(history, runs, base + '.csv', base + '.jsonl')
        result['files'] += [base + '.csv', base + '.jsonl']
        rows = run_rows(runs)
        lines = ['Exported %d sample(s) of %d run(s) (%s) to %s.csv and .jsonl'
                 % (result['samples'], len(runs), selection.text, base)]
    else:
        raise ValueError('history_action: give one of %s, got %r' % (', '.join(ACTIONS), action))
    text_path = os.path.join(dest_dir, 'history-%s-%s.txt' % (action, stamp))
    with open(text_path, 'w', encoding='utf-8') as handle:
        handle.write('\n'.join(lines) + '\n')
    result.update(rows=rows, lines=lines)
    result['files'].insert(0, text_path)
    return result


# --------------------------------------------------------------------------
# The filters (plugins/filter/history_*.py): one database opened per call


def with_history(dsn: t.Any, work: t.Callable[[History], t.Any]) -> t.Any:
    """``work(history)`` on the database ``dsn`` opened for this call only; a database that cannot be opened or read
    becomes a ValueError, which the filters report as their error."""
    if not isinstance(dsn, str) or not dsn.strip():
        raise ValueError('give the history database as the input, such as '
                         "'sqlite:///var/lib/lustre-iokit/history.sqlite' (iokit_history_dsn)")
    try:
        with History(dsn) as history:
            return work(history)
    except HistoryError as exc:
        raise ValueError(str(exc)) from exc
