# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A run directory in, the report files out: what the ``iokit_report`` action (and the benchmark) call.

``load_run`` reads ``<results_dir>/<run_id>/<host>/<survey>.json`` through the
results store (``results_store.list_envelopes``), keeps every envelope's status and
errors, and names every file that could not be used.  ``build_report`` runs
the analysis and the criteria; ``write_report`` writes into the run directory:

- ``report.json``: the samples, one JSON object per line;
- ``results.csv``: the same samples, one row each, sweep point in columns;
- ``analysis.json``: peaks, outliers, findings, the weak components diagnosed
  across the layers (``components``, diagnosis.py), saturation, layer
  efficiency, repeats, comparison, problems;
- ``summary.md`` and ``report.html``: rendered from the role's Jinja templates,
  opening with the regressions against history when it was judged
  (``history``, history_judge.py), then one row per weak component
  (``finding_rows``, diagnosis.py);
- ``verdict.json`` (with the same ``components``, and each failed case's
  ``diagnosis``) and ``junit.xml`` (its failures' messages ending with it) when
  criteria were given;
- ``baseline.yml`` on request.

Controller-side code, no Ansible imports.
"""

from __future__ import annotations

import csv
import json
import os
import statistics
import tempfile
import time
import typing as t

from ansible_collections.lustre.iokit.plugins.module_utils import results
from ansible_collections.lustre.iokit.plugins.module_utils.sample_extraction import POINT_KEYS
from ansible_collections.lustre.iokit.plugins.plugin_utils import results_store
from ansible_collections.lustre.iokit.plugins.plugin_utils.report import (
    analysis, charts, compare, criteria, diagnosis, findings, history_judge)
from ansible_collections.lustre.iokit.plugins.plugin_utils.report import stats as stats_section
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.samples import EXTRACTORS, Sample, envelope_samples

REPORT_FILES = {'samples': 'report.json', 'csv': 'results.csv', 'analysis': 'analysis.json', 'markdown': 'summary.md',
                'html': 'report.html', 'verdict': 'verdict.json', 'junit': 'junit.xml', 'baseline': 'baseline.yml'}

DEFAULT_OPTIONS = {
    'outlier_threshold': analysis.DEFAULT_OUTLIER_THRESHOLD,
    'outlier_min_peers': analysis.DEFAULT_OUTLIER_MIN_PEERS,
    'outlier_min_deviation_pct': analysis.DEFAULT_OUTLIER_MIN_DEVIATION_PCT,
    'outlier_slow_share': analysis.DEFAULT_OUTLIER_SLOW_SHARE,
    'saturation_share': analysis.DEFAULT_SATURATION_SHARE,
    'efficiency_expected': list(analysis.DEFAULT_EFFICIENCY_EXPECTED),
    'tolerance_pct': compare.DEFAULT_TOLERANCE_PCT,
    'host_charts_max_hosts': 8,
    'bar_chart_max_bars': 48,
    'table_max_rows': 500,
}


class RunData(t.NamedTuple):
    run_id: str
    run_dir: str
    samples: list[Sample]
    envelopes: list[dict]   # one summary per valid envelope: host, survey, status, records, samples, errors, problems
    unreadable: list[dict]  # {path, host, survey, problems}


def load_run(results_dir: str, run_id: str) -> RunData:
    """Every envelope of a run as samples, plus what was wrong with each file; never skips a file silently."""
    run_dir = os.path.join(results_dir, results.validate_run_id(run_id))
    samples: list[Sample] = []
    envelopes = []
    unreadable = []
    entries = results_store.list_envelopes(results_dir, run_id)
    for index, (path, envelope) in enumerate(entries):
        relative = os.path.relpath(path, run_dir)
        host = os.path.basename(os.path.dirname(path))
        survey = os.path.basename(path)[:-len('.json')]
        if isinstance(envelope, results.EnvelopeError):
            unreadable.append({'path': relative, 'host': host, 'survey': survey, 'problems': envelope.problems})
            continue
        found, problems = envelope_samples(envelope)
        samples.extend(found)
        envelopes.append({'path': relative, 'host': envelope['host'], 'survey': envelope['survey'],
                          'status': envelope['status'], 'engine': envelope['engine'],
                          'records': len(envelope['records']), 'samples': len(found),
                          'started': envelope['started'], 'finished': envelope['finished'],
                          'duration_s': envelope['duration_s'], 'supported': envelope['survey'] in EXTRACTORS,
                          'errors': [_error_text(error) for error in envelope['errors']], 'problems': problems,
                          'lustre_version': envelope['environment'].get('lustre_version'),
                          'sweep': _sweep_summary(envelope)})
        # The parsed envelope is no longer needed; dropping it keeps the peak memory to one copy of the records.
        entries[index] = (path, None)
    return RunData(run_id, run_dir, samples, envelopes, unreadable)


def _error_text(error: t.Any) -> str:
    if isinstance(error, dict):
        point = error.get('point')
        where = ' at %s' % ' '.join('%s %s' % item for item in point.items()) if isinstance(point, dict) else ''
        return '%s%s' % (error.get('message'), where)
    return str(error)


def present_results(run: RunData, expected: dict[str, list[str]] | None) -> list[dict]:
    """Expected host/survey pairs with a usable (not failed) result: ``{host, survey}``."""
    usable = {(item['host'], item['survey']) for item in run.envelopes if item['status'] != results.STATUS_FAILED}
    return [{'host': host, 'survey': survey} for survey, hosts in sorted((expected or {}).items())
            for host in hosts if (host, survey) in usable]


def missing_results(run: RunData, expected: dict[str, list[str]] | None) -> list[dict]:
    """Expected host/survey pairs without a usable result, and every unreadable file: ``{host, survey, reason}``."""
    found = {(item['host'], item['survey']): item for item in run.envelopes}
    missing = [{'host': item['host'], 'survey': item['survey'], 'kind': 'unreadable',
                'reason': 'result file %s is unusable: %s' % (item['path'], '; '.join(item['problems']))}
               for item in run.unreadable]
    for survey, hosts in sorted((expected or {}).items()):
        for host in hosts or ():
            item = found.get((host, survey))
            if item is None:
                if not any(bad['host'] == host and bad['survey'] == survey for bad in run.unreadable):
                    missing.append({'host': host, 'survey': survey, 'kind': 'absent',
                                    'reason': 'no result in the run directory'})
            elif item['status'] == results.STATUS_FAILED:
                missing.append({'host': host, 'survey': survey, 'kind': 'failed',
                                'reason': 'survey failed: %s' % '; '.join(item['errors'] or ['no reason given'])})
    return missing


def build_report(run: RunData, options: dict | None = None, acceptance_criteria: dict | None = None,
                 baseline: dict | None = None, expected: dict | None = None, generated: str | None = None,
                 nid_owners: dict | None = None, ost_luns: dict | None = None, history: dict | None = None) -> dict:
    """Everything the templates show, computed once.

    ``baseline`` is a baseline mapping (compare.make_baseline) or None;
    ``acceptance_criteria`` are the criteria to check (criteria.effective_criteria), None for no verdict;
    ``nid_owners`` and ``ost_luns`` link the layers of the diagnosis (diagnosis.diagnose_components);
    ``history`` is ``{'current': rows, 'earlier': rows, 'settings': {runs, mad_k, min_change_pct}}`` (rows in
    history_judge's shape; optionally ``other_runs``), or History.judging_values' mapping with ``settings``, to
    judge every component against its own earlier runs, or None.  A judged history always gives a verdict: a regression must be able to fail the run.
    """
    opts = dict(DEFAULT_OPTIONS, **{k: v for k, v in (options or {}).items() if v is not None})
    table = analysis.PointTable(run.samples)
    outlier_options = {'threshold': opts['outlier_threshold'], 'min_peers': opts['outlier_min_peers'],
                       'min_deviation_pct': opts['outlier_min_deviation_pct'], 'slow_share': opts['outlier_slow_share']}
    peaks = analysis.peaks(table)
    outliers, judged = analysis.judge_points(table, **outlier_options)
    weak = findings.findings(outliers, judged)
    components = diagnosis.diagnose_components(table, outliers, judged, nid_owners=nid_owners, ost_luns=ost_luns)
    saturation = analysis.saturation(table, opts['saturation_share'])
    sweeps = _sweeps(run)
    efficiency = analysis.layer_efficiency(table, tuple(opts['efficiency_expected']))
    repeats = analysis.repeat_stats(table)
    comparison = compare.compare_runs(table, baseline, opts['tolerance_pct']) if baseline is not None else None
    missing = missing_results(run, expected)
    judgment = judge_history(history)
    if judgment is not None and acceptance_criteria is None:
        acceptance_criteria = criteria.validate_criteria({})
    verdict = None
    if acceptance_criteria is not None:
        verdict = criteria.evaluate(table, acceptance_criteria, baseline=baseline, missing=missing, run_id=run.run_id,
                                    outlier_options=outlier_options, comparison=comparison,
                                    tolerance_pct=opts['tolerance_pct'], present=present_results(run, expected),
                                    judged_points=(outliers, judged), history=judgment)
        criteria.add_diagnoses(verdict, diagnosis.case_diagnoses(components))
    surveys = sorted({item['survey'] for item in run.envelopes})
    return {
        'run_id': run.run_id,
        'generated': generated or results.utc_timestamp(),
        'options': opts,
        'hosts': sorted({item['host'] for item in run.envelopes}),
        'surveys': surveys,
        'sample_count': len(run.samples),
        'envelopes': run.envelopes,
        'unreadable': run.unreadable,
        'missing': missing,
        'partial': [item for item in run.envelopes if item['status'] != results.STATUS_OK],
        'unsupported': sorted({item['survey'] for item in run.envelopes
                               if not item['supported'] and item['survey'] != stats_section.SURVEY}),
        'stats': stats_section.stats_section(run.run_dir, run.envelopes, opts['host_charts_max_hosts']),
        'peaks': peaks,
        'subject_tables': _subject_tables(peaks, outliers, judgment),
        'metric_summary': _metric_summary(peaks),
        'outliers': outliers,
        'findings': weak,
        'components': components,
        'finding_rows': diagnosis.finding_rows(components),
        'component_levels': _component_levels(run),
        'saturation': saturation,
        'sweeps': sweeps,
        'efficiency': efficiency,
        'repeats': repeats,
        'comparison': comparison,
        'regressions': [row for row in comparison or () if row['status'] in ('regression', 'missing')],
        'baseline_run_id': (comparison[0]['reference_run_id'] if comparison else
                            (baseline or {}).get('run_id')),
        'verdict': verdict,
        'history': judgment,
        'charts': {
            'fleet': charts.fleet_line_charts(table),
            'hosts': charts.host_line_charts(table, opts['host_charts_max_hosts'], stops=_stop_marks(sweeps)),
            'bars': charts.subject_bar_charts(table, outliers, opts['bar_chart_max_bars']),
            'history': charts.history_charts(judgment) if judgment is not None else None,
        },
    }


def judge_history(history: dict | None) -> dict | None:
    """The history judgment of ``build_report``'s ``history`` argument (None: not judged), with each finding's
    sentence as ``text``."""
    if history is None:
        return None
    # Two shapes: history rows (a dict per sample), or the compact values History.judging_values reads (a
    # thousand OSS against five runs in seconds rather than minutes); the same judgment either way.
    compact = isinstance(history, dict) and isinstance(history.get('series'), dict)
    if not isinstance(history, dict) or not (compact and isinstance(history.get('current'), dict)) and not (
            isinstance(history.get('current'), list) and isinstance(history.get('earlier'), list)):
        raise ValueError('history must be a mapping with the lists current and earlier (history rows), or '
                         'History.judging_values\' series, current and earlier, got %r' % (type(history).__name__,))
    settings = history.get('settings') or {}
    unknown = sorted(set(settings) - set(history_judge.Settings._fields))
    if unknown:
        raise ValueError('history settings: unknown key(s) %s (allowed: %s)'
                         % (', '.join(unknown), ', '.join(history_judge.Settings._fields)))
    if compact:
        judgment = history_judge.judge_history_values(history, **settings)
    else:
        judgment = history_judge.judge_history(history['current'], history['earlier'],
                                               other_runs=history.get('other_runs') or (), **settings)
    for finding in judgment['findings']:
        finding['text'] = history_judge.finding_text(finding)
    return judgment


def _sweep_summary(envelope: dict) -> dict | None:
    """How much of its full grid an envelope's sweep ran and where it stopped (adaptive sweeps), or None."""
    sweep = envelope.get('sweep')
    if not isinstance(sweep, dict) or not isinstance(sweep.get('points_full'), int):
        return None
    axis = sweep.get('axis') or 'thr'
    stops = []
    for stop in sweep.get('stops') or ():
        if isinstance(stop, dict):
            # a sweep of two steps (mdtest: tasks per node, then nodes) names each stop's axis
            stop_axis = stop.get('axis') or axis
            outer = ', '.join('%s %s' % (key, value) for key, value in sorted(stop.items())
                              if key not in (stop_axis, 'reason', 'axis'))
            stops.append({'curve': outer or '-', 'x': stop.get(stop_axis), 'reason': str(stop.get('reason') or '')})
    run, full = sweep.get('points_run'), sweep['points_full']
    skipped = envelope.get('skipped_points')
    return {'mode': str(sweep.get('mode') or 'full'), 'axis': axis, 'points_run': run, 'points_full': full,
            'share_pct': round(100.0 * run / full, 1) if isinstance(run, int) and full else None,
            'skipped': len(skipped) if isinstance(skipped, list) else 0, 'stops': stops}


def _sweeps(run: RunData) -> list[dict]:
    """Per host and survey with a sweep summary: the fraction of the full grid run, the stops and their reasons."""
    return [dict(item['sweep'], host=item['host'], survey=item['survey'])
            for item in sorted(run.envelopes, key=lambda item: (item['survey'], item['host'])) if item.get('sweep')]


def _stop_marks(sweeps: list[dict]) -> dict:
    """``{(survey, host): [(x, title)]}``: where each adaptive sweep stopped, for the per-host charts."""
    marks: dict = {}
    for sweep in sweeps:
        for stop in sweep['stops']:
            if isinstance(stop['x'], (int, float)):
                marks.setdefault((sweep['survey'], sweep['host']), []).append(
                    (stop['x'], 'stopped after %s %s (%s): %s' % (sweep['axis'], stop['x'], stop['curve'], stop['reason'])))
    return marks


def _component_levels(run: RunData) -> list[dict]:
    """Per survey: which kinds of subject its samples judge (the host only when the engine gave no per-component figures)."""
    levels: dict = {}
    for sample in run.samples:
        levels.setdefault(sample.survey, set()).add(findings.component_kind(sample.survey, sample.target))
    return [{'survey': survey, 'kinds': sorted(kinds), 'host_only': kinds == {findings.HOST}}
            for survey, kinds in sorted(levels.items())]


def _metric_summary(peaks: list[dict]) -> list[dict]:
    """Per survey and metric: how many subjects, and the lowest, median and highest of their peaks."""
    grouped: dict = {}
    for row in peaks:
        grouped.setdefault((row['survey'], row['metric']), []).append(row)
    summary = []
    for (survey, metric), rows in grouped.items():
        low, high = min(rows, key=lambda r: r['value']), max(rows, key=lambda r: r['value'])
        summary.append({'survey': survey, 'metric': metric, 'unit': rows[0]['unit'], 'subjects': len(rows),
                        'min': low['value'], 'min_subject': low['subject'], 'max': high['value'],
                        'max_subject': high['subject'], 'median': statistics.median(r['value'] for r in rows)})
    return summary


def _history_lookup(judgment: dict | None) -> t.Callable[[str, str, str, str | None], dict | None]:
    """``(survey, metric, host, target) -> "vs history" row`` (history_judge's ``components``) or None.

    A row that names the sample's host and target is found by them; one that does not, by its component id being
    the target (an OST, an MDT) or, without a target, the host (a host aggregate, a client).
    """
    exact: dict = {}
    named: dict = {}
    for row in (judgment or {}).get('components') or ():
        if row['host'] is not None:
            exact[(row['survey'], row['metric'], row['host'], row['target'])] = row
        named[(row['survey'], row['metric'], row['component_id'])] = row

    def lookup(survey: str, metric: str, host: str, target: str | None) -> dict | None:
        row = exact.get((survey, metric, host, target))
        return row if row is not None else named.get((survey, metric, host if target is None else target))
    return lookup


def _subject_tables(peaks: list[dict], outliers: list[dict], judgment: dict | None = None) -> list[dict]:
    """Per survey: one row per subject, one column per metric (peak of the sweep), outlier points counted, and
    with a history judgment each peak's change against its history (``history_cells``, None where not judged)."""
    vs_history = _history_lookup(judgment)
    outlier_count: dict = {}
    for row in outliers:
        key = (row['survey'], row['subject'])
        outlier_count[key] = outlier_count.get(key, 0) + 1
    tables: dict = {}
    for row in peaks:
        table = tables.setdefault(row['survey'], {'survey': row['survey'], 'metrics': {}, 'rows': {}})
        table['metrics'][row['metric']] = row['unit']
        line = table['rows'].setdefault(row['subject'], {'host': row['host'], 'target': row['target'] or '',
                                                         'values': {},
                                                         'outliers': outlier_count.get((row['survey'], row['subject']), 0)})
        line['values'][row['metric']] = row
    return [{'survey': table['survey'], 'columns': [{'metric': m, 'unit': u} for m, u in table['metrics'].items()],
             'rows': [dict(line, cells=[line['values'].get(m) for m in table['metrics']],
                           history_cells=[vs_history(table['survey'], m, line['host'], line['target'] or None)
                                          for m in table['metrics']] if judgment is not None else [])
                      for _subject, line in sorted(table['rows'].items())]}
            for table in tables.values()]


# --------------------------------------------------------------------------
# Writing


def _atomic_write(path: str, write: t.Callable[[t.TextIO], None]) -> str:
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=directory, prefix='.%s.' % os.path.basename(path), suffix='.tmp')
    try:
        with os.fdopen(fd, 'w', encoding='utf-8', newline='') as handle:
            write(handle)
        os.chmod(temp, 0o644)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    return path


def _write_samples_json_lines(handle: t.TextIO, samples: list[Sample]) -> None:
    dumps = json.JSONEncoder(allow_nan=False, separators=(', ', ': ')).encode
    points: dict = {}
    for sample in samples:
        point = points.get(sample.point)
        if point is None:
            point = points[sample.point] = dumps(dict(sample.point))
        handle.write('{"run_id": %s, "survey": "%s", "test": %s, "metric": %s, "value": %r, "unit": "%s", '
                     '"host": %s, "target": %s, "point": %s, "iteration": %d, "status": "%s"}\n' % (
                         dumps(sample.run_id), sample.survey, dumps(sample.test), dumps(sample.metric), sample.value,
                         sample.unit, dumps(sample.host), dumps(sample.target), point, sample.iteration,
                         sample.status))


def _write_csv(handle: t.TextIO, samples: list[Sample]) -> None:
    points = {sample.point for sample in samples}
    used = [key for key in POINT_KEYS if any(key in dict(point) for point in points)]
    columns = {point: [dict(point).get(key, '') for key in used] for point in points}
    writer = csv.writer(handle, lineterminator='\n')
    writer.writerow(['run_id', 'survey', 'host', 'target', 'test', 'metric', 'value', 'unit', 'iteration', 'status']
                    + used)
    columns = {point: [csv_cell(value) for value in values] for point, values in columns.items()}
    # Few distinct names (hosts, targets, tests): each is made safe once.
    cells: dict = {}

    def cell(value: str) -> str:
        safe = cells.get(value)
        if safe is None:
            safe = cells[value] = csv_cell(value)
        return safe

    writer.writerows([sample.run_id, sample.survey, cell(sample.host), cell(sample.target or ''), cell(sample.test),
                      cell(sample.metric), repr(sample.value), sample.unit, sample.iteration, sample.status]
                     + columns[sample.point] for sample in samples)


# A spreadsheet reads a cell starting with one of these as a formula (CSV injection).
_FORMULA_STARTS = ('=', '+', '-', '@', '\t', '\r')


def csv_cell(value: t.Any) -> t.Any:
    """A text cell that a spreadsheet shows as text: a leading formula character is prefixed with ``'``."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def template_environment(templates_dir: str):
    """The Jinja environment the report templates render in (HTML autoescaped, undefined names are errors)."""
    import jinja2  # ansible-core's own dependency; imported here so that pure analysis code does not need it

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(templates_dir), undefined=jinja2.StrictUndefined,
                             autoescape=jinja2.select_autoescape(['html', 'html.j2']), trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(number=format_number, md=markdown_cell, signed_pct=signed_percent)
    return env


def format_number(value: t.Any, digits: int = 1) -> str:
    """``12,345.6``; ``-`` for a missing value."""
    if value is None:
        return '-'
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return '{:,.{digits}f}'.format(value, digits=digits)


def signed_percent(value: t.Any) -> str:
    return '-' if value is None else '%+.1f%%' % value


def markdown_cell(value: t.Any) -> str:
    """Text safe inside a Markdown table cell, and never raw HTML (a host named ``<script>`` stays text)."""
    return (str('' if value is None else value).replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;')
            .replace('|', '\\|').replace('\n', ' '))


def write_report(run: RunData, model: dict, templates_dir: str, out_dir: str | None = None,
                 make_baseline: bool = False, baseline_path: str | None = None) -> dict[str, str]:
    """Write every report file; return ``{kind: path}``."""
    out_dir = out_dir or run.run_dir
    written = {}

    def path(kind: str) -> str:
        written[kind] = os.path.join(out_dir, REPORT_FILES[kind])
        return written[kind]

    _atomic_write(path('samples'), lambda handle: _write_samples_json_lines(handle, run.samples))
    _atomic_write(path('csv'), lambda handle: _write_csv(handle, run.samples))
    analysis_keys = ('run_id', 'generated', 'options', 'hosts', 'surveys', 'sample_count', 'envelopes', 'unreadable',
                     'missing', 'unsupported', 'peaks', 'findings', 'components', 'outliers', 'saturation', 'efficiency',
                     'repeats', 'comparison', 'baseline_run_id', 'history')
    # json.dumps without indent, not json.dump: only that form runs the C encoder, several times faster.
    kept = {key: model[key] for key in analysis_keys}
    # The statistics tables (per sweep point, per phase) without their charts' drawing geometry.
    kept['stats'] = {key: value for key, value in model['stats'].items() if key != 'charts'}
    text = json.dumps(kept, sort_keys=True, allow_nan=False)
    del kept
    _atomic_write(path('analysis'), lambda handle: handle.write(text))
    del text
    env = template_environment(templates_dir)
    for kind, template in (('markdown', 'summary.md.j2'), ('html', 'report.html.j2')):
        text = env.get_template(template).render(report=model)
        _atomic_write(path(kind), lambda handle, text=text: handle.write(text))
    if model['verdict'] is not None:
        text = json.dumps(dict(model['verdict'], components=model['components']), allow_nan=False)
        _atomic_write(path('verdict'), lambda handle: handle.write(text))
        xml = criteria.junit_xml(model['verdict'])
        _atomic_write(path('junit'), lambda handle: handle.write(xml))
    if make_baseline:
        baseline = compare.baseline_from_peaks(model['peaks'], run.run_id, model['generated'])
        header = ('# Baseline of run %s, made %s by lustre.iokit (playbooks/report.yml -e make_baseline=true).\n'
                  '# Edit freely: delete an entry to stop comparing it, lower a value to accept a slower subject.\n'
                  % (run.run_id, model['generated']))
        target = baseline_path or path('baseline')
        written['baseline'] = target
        text = compare.baseline_yaml(baseline, header)
        _atomic_write(target, lambda handle: handle.write(text))
    return written


def load_baseline(path: str) -> dict:
    """A baseline file (YAML or JSON), or the report.json samples of another run; BaselineError when unusable."""
    import yaml

    try:
        with open(path, encoding='utf-8') as handle:
            text = handle.read()
    except OSError as exc:
        raise compare.BaselineError('cannot read baseline %s (%s)' % (path, exc)) from exc
    if os.path.basename(path) == REPORT_FILES['samples']:
        samples = [json.loads(line) for line in text.splitlines() if line.strip()]
        return compare.make_baseline(samples)
    try:
        data = yaml.load(text, Loader=getattr(yaml, 'CSafeLoader', yaml.SafeLoader))  # libyaml when present: 10x faster
    except yaml.YAMLError as exc:
        raise compare.BaselineError('baseline %s is not valid YAML (%s)' % (path, exc)) from exc
    compare.baseline_table(data)
    return data


def generate(results_dir: str, run_id: str, templates_dir: str, options: dict | None = None,
             acceptance_criteria: dict | None = None, baseline_file: str | None = None, compare_run_id: str | None = None,
             expected: dict | None = None, make_baseline: bool = False, baseline_path: str | None = None,
             default_criteria: bool = False, nid_owners: dict | None = None, ost_luns: dict | None = None,
             history: dict | None = None) -> dict:
    """Load, analyse, write: the whole report of one run.  Returns paths, verdict and counts, and timings in s.

    ``default_criteria`` adds the built-in criteria (criteria.DEFAULT_CRITERIA) to ``acceptance_criteria``, and
    gives a verdict without them.  ``nid_owners`` (NID -> host) and ``ost_luns`` (OST -> [(host, device)]) are
    passed to the diagnosis of the weak components (docs/diagnosis.md); ``history`` (rows from the history
    database and the settings, see build_report) judges every component against its own earlier runs.
    """
    timings = {}
    started = time.monotonic()
    run = load_run(results_dir, run_id)
    timings['load_s'] = time.monotonic() - started
    acceptance_criteria = criteria.effective_criteria(acceptance_criteria, default_criteria)
    baseline = None
    if baseline_file:
        baseline = load_baseline(baseline_file)
    elif compare_run_id:
        other = load_run(results_dir, compare_run_id)
        if not other.samples:
            raise compare.BaselineError('run %s has no samples to compare with' % compare_run_id)
        baseline = compare.make_baseline(other.samples, compare_run_id)
    mark = time.monotonic()
    model = build_report(run, options, acceptance_criteria, baseline, expected, nid_owners=nid_owners,
                         ost_luns=ost_luns, history=history)
    timings['analyse_s'] = time.monotonic() - mark
    mark = time.monotonic()
    files = write_report(run, model, templates_dir, make_baseline=make_baseline, baseline_path=baseline_path)
    timings['write_s'] = time.monotonic() - mark
    timings['total_s'] = time.monotonic() - started
    verdict = model['verdict']
    return {
        'run_id': run_id, 'run_dir': run.run_dir, 'files': files, 'timings': timings,
        'hosts': model['hosts'], 'surveys': model['surveys'], 'samples': model['sample_count'],
        'envelopes': len(run.envelopes), 'unreadable': run.unreadable, 'missing': model['missing'],
        'partial': [{'host': item['host'], 'survey': item['survey'], 'status': item['status']} for item in model['partial']],
        'outliers': len(model['outliers']),
        'findings': [item['text'] for item in model['components']],
        'metric_findings': [findings.finding_text(item) for item in model['findings']],
        'regressions': len(model['regressions']),
        'verdict': verdict['verdict'] if verdict else None,
        'counts': verdict['counts'] if verdict else None,
        'failures': verdict['failures'] if verdict else [],
        'baseline_run_id': model['baseline_run_id'],
        'history': _history_summary(model['history']),
    }


def _history_summary(judgment: dict | None) -> dict | None:
    """What the play is told of a history judgment: counts, one sentence per regressed component (worst first),
    and the runs not compared with their reason."""
    if judgment is None:
        return None
    return {'regressions': judgment['regressions'], 'components': len(judgment['findings']),
            'judged': len(judgment['judged']), 'findings': [finding['text'] for finding in judgment['findings']],
            'incomparable_runs': judgment['incomparable_runs'], 'settings': judgment['settings']}
