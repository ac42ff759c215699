# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Acceptance criteria, the verdict, and its JUnit XML.

``acceptance_criteria`` (docs/acceptance-criteria.md) is a mapping of lists,
one list per kind of check::

    floors:      [{metric: obdfilter_write_mib_s, subjects: 'oss*', min: 1500}]
    ratios:      [{numerator: obdfilter_write_mib_s, denominator: sgpdd_write_mib_s, min: 0.85}]
    outliers:    [{metric: '*_mib_s', max: 0, direction: low}]
    regressions: [{metric: '*', max_pct: 10}]
    variation:   [{metric: '*', max_cv_pct: 5}]

Patterns are shell globs (fnmatch).  Every criterion is checked per subject
(host, or host/target) and gives one test case; a criterion that matches no
measured subject fails (``required: false`` makes it skipped) so that a
missing survey cannot pass silently.

With a history judgment (history_judge.judge_history, report option
``history_compare``), every component, survey and metric judged against its
own earlier runs is a ``history`` case: failed when it regressed, naming the
value, the baseline, the change and the runs the baseline came from.

Without criteria of the user's (or with them, unless
``acceptance_default_criteria: false``), the verdict checks DEFAULT_CRITERIA:
completeness (every expected host has a usable result), no low outlier among
peers for every metric measured (findings.py's rule), and obdfilter / sgpdd >=
0.85 per host where both ran.  A verdict that made no check (nothing passed,
nothing failed) is ``no verdict``, never ``passed``.  Controller-side code, no
Ansible imports.
"""

from __future__ import annotations

import fnmatch
import typing as t
import xml.etree.ElementTree as ET

from ansible_collections.lustre.iokit.plugins.plugin_utils.report import analysis, compare, history_judge
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.samples import as_samples

KINDS = ('floors', 'ratios', 'outliers', 'regressions', 'variation')

PASSED, FAILED, NO_VERDICT = 'passed', 'failed', 'no verdict'

# The built-in criteria (docs/acceptance-criteria.md); completeness is always checked when hosts are expected.
DEFAULT_CRITERIA = {
    'outliers': [{'name': 'no low outlier among peers', 'metric': '*', 'direction': 'low', 'max': 0,
                  'required': False}],
    'ratios': [{'name': 'layer efficiency obdfilter / sgpdd %s >= 0.85' % test,
                'numerator': 'obdfilter_%s_mib_s' % test, 'denominator': 'sgpdd_%s_mib_s' % test, 'min': 0.85,
                'required': False} for test in ('write', 'read')],
}


def effective_criteria(criteria: t.Any, use_defaults: bool) -> dict | None:
    """The criteria the verdict checks: the user's, plus DEFAULT_CRITERIA when ``use_defaults``; None: no verdict."""
    if criteria is None and not use_defaults:
        return None
    user = validate_criteria(criteria)
    if not use_defaults:
        return user
    return {kind: [dict(entry) for entry in DEFAULT_CRITERIA.get(kind, [])] + user[kind] for kind in KINDS}


# Keys each kind accepts: (required, optional).
_SCHEMA = {
    'floors': (('metric', 'min'), ('name', 'subjects', 'required')),
    'ratios': (('numerator', 'denominator', 'min'), ('name', 'hosts', 'required', 'max')),
    'outliers': ((), ('name', 'metric', 'subjects', 'max', 'direction', 'required')),
    'regressions': (('max_pct',), ('name', 'metric', 'subjects', 'required')),
    'variation': (('max_cv_pct',), ('name', 'metric', 'subjects', 'required')),
}
_NUMBER_KEYS = ('min', 'max', 'max_pct', 'max_cv_pct')


class CriteriaError(ValueError):
    """Criteria that cannot be checked; the message names the entry and the key."""


def validate_criteria(criteria: t.Any) -> dict:
    """Return the criteria with every kind present (empty lists), or raise CriteriaError listing every problem."""
    if criteria is None:
        criteria = {}
    if not isinstance(criteria, dict):
        raise CriteriaError('acceptance_criteria must be a mapping of %s, got %r' % (', '.join(KINDS), criteria))
    problems = ['acceptance_criteria: unknown kind %r (expected one of %s)' % (kind, ', '.join(KINDS))
                for kind in criteria if kind not in KINDS]
    result = {}
    for kind in KINDS:
        entries = criteria.get(kind)
        if entries is None:
            entries = []
        if not isinstance(entries, list):
            problems.append('acceptance_criteria.%s must be a list, got %r' % (kind, entries))
            continue
        required, optional = _SCHEMA[kind]
        for index, entry in enumerate(entries):
            where = 'acceptance_criteria.%s[%d]' % (kind, index)
            if not isinstance(entry, dict):
                problems.append('%s must be a mapping, got %r' % (where, entry))
                continue
            problems.extend('%s: missing %s' % (where, key) for key in required if entry.get(key) is None)
            problems.extend('%s: unknown key %s (allowed: %s)' % (where, key, ', '.join(required + optional))
                            for key in entry if key not in required + optional)
            problems.extend('%s.%s must be a number, got %r' % (where, key, entry[key]) for key in _NUMBER_KEYS
                            if entry.get(key) is not None and (isinstance(entry[key], bool)
                                                               or not isinstance(entry[key], (int, float))))
            if entry.get('direction', 'low') not in ('low', 'high', 'both'):
                problems.append('%s.direction must be low, high or both, got %r' % (where, entry['direction']))
        result[kind] = entries
    if problems:
        raise CriteriaError('; '.join(problems))
    return result


def _fmt(value: t.Any) -> str:
    if value is None:
        return 'none'
    if isinstance(value, float):
        return '%.2f' % value
    return str(value)


def _runs(context: dict) -> str:
    text = 'run %s' % (context.get('run_id') or 'unknown')
    if context.get('baseline_run_id'):
        text += ', baseline run %s' % context['baseline_run_id']
    return text


def _case(kind: str, name: str, subject: str, metric: str, passed: bool | None, value: t.Any, limit: t.Any,
          unit: str, message: str) -> dict:
    return {'kind': kind, 'criterion': name, 'subject': subject, 'metric': metric, 'value': value, 'limit': limit,
            'unit': unit, 'status': 'skipped' if passed is None else ('passed' if passed else 'failed'),
            'message': message}


def _match(pattern: str | None, text: str) -> bool:
    return fnmatch.fnmatchcase(text, pattern or '*')


def _no_match(kind: str, name: str, entry: dict, metric: str, context: dict) -> dict:
    required = entry.get('required', True)
    message = '%s: no measured subject matches metric %s%s (%s)' % (
        name, metric, ' and subjects %s' % entry['subjects'] if entry.get('subjects') else '', _runs(context))
    return _case(kind, name, '-', metric, None if not required else False, None, None, '', message)


def _check_floors(entry: dict, index: int, peaks: list[dict], context: dict) -> list[dict]:
    name = entry.get('name') or 'floor %s >= %s' % (entry['metric'], entry['min'])
    cases = []
    for row in peaks:
        if not (_match(entry['metric'], row['metric']) and _match(entry.get('subjects'), row['subject'])):
            continue
        passed = row['value'] >= entry['min']
        message = '%s on %s: %s %s at %s is %s the floor %s %s (%s)' % (
            row['metric'], row['subject'], _fmt(row['value']), row['unit'], row['point_label'],
            'at or above' if passed else 'below', _fmt(entry['min']), row['unit'], _runs(context))
        cases.append(_case('floors', name, row['subject'], row['metric'], passed, row['value'], entry['min'],
                           row['unit'], message))
    return cases or [_no_match('floors', name, entry, entry['metric'], context)]


def _check_ratios(entry: dict, index: int, table: analysis.PointTable, context: dict) -> list[dict]:
    numerator, denominator = entry['numerator'], entry['denominator']
    name = entry.get('name') or 'ratio %s / %s >= %s' % (numerator, denominator, entry['min'])
    upper = analysis.host_best(table, numerator.split('_', 1)[0], numerator)
    lower = analysis.host_best(table, denominator.split('_', 1)[0], denominator)
    cases = []
    for host in sorted(set(upper) | set(lower)):
        if not _match(entry.get('hosts'), host):
            continue
        if host not in upper or host not in lower:
            absent = numerator if host not in upper else denominator
            message = '%s / %s on %s: %s was not measured (%s)' % (numerator, denominator, host, absent, _runs(context))
            # not required: judged only where both were measured
            cases.append(_case('ratios', name, host, numerator, None if not entry.get('required', True) else False,
                               None, entry['min'], '', message))
            continue
        ratio = upper[host][0] / lower[host][0] if lower[host][0] else None
        passed = ratio is not None and ratio >= entry['min'] and (entry.get('max') is None or ratio <= entry['max'])
        limit = entry['min'] if entry.get('max') is None else '%s..%s' % (entry['min'], entry['max'])
        message = '%s / %s on %s: %s (%s / %s MiB/s) is %s the limit %s (%s)' % (
            numerator, denominator, host, _fmt(ratio), _fmt(upper[host][0]), _fmt(lower[host][0]),
            'within' if passed else 'outside', limit, _runs(context))
        cases.append(_case('ratios', name, host, numerator, passed, ratio, limit, 'ratio', message))
    return cases or [_no_match('ratios', name, entry, '%s / %s' % (numerator, denominator), context)]


def _check_outliers(entry: dict, index: int, peaks: list[dict], found: list[dict], judged: dict,
                    context: dict) -> list[dict]:
    metric, limit, direction = entry.get('metric') or '*', entry.get('max', 0), entry.get('direction', 'low')
    name = entry.get('name') or 'outliers %s (%s) <= %s' % (metric, direction, limit)
    per_subject: dict = {}
    for row in found:
        if direction in ('both', row['direction']):
            per_subject.setdefault((row['metric'], row['subject']), []).append(row)
    cases = []
    for row in peaks:
        if not (_match(metric, row['metric']) and _match(entry.get('subjects'), row['subject'])):
            continue
        points = per_subject.get((row['metric'], row['subject']), [])
        checked = judged.get((row['survey'], row['metric'], row['host'], row['target']), 0)
        if not checked:
            cases.append(_case('outliers', name, row['subject'], row['metric'], None, 0, limit, 'points',
                               '%s %s on %s: fewer than the minimum of peers at every sweep point, not judged (%s)'
                               % (row['survey'], row['metric'], row['subject'], _runs(context))))
            continue
        passed = len(points) <= limit
        if points:
            worst = min(points, key=lambda p: p['value'] - p['median'] if p['direction'] == 'low'
                        else p['median'] - p['value'])
            share = '-' if worst['share'] is None else '%.0f %%' % (100.0 * worst['share'])
            message = ('%s %s on %s: %s %s against a peer median of %s %s (%s of it, %d peers) at %s; %s at %d of %d '
                       'sweep points, limit %s (%s)' % (
                           row['survey'], row['metric'], row['subject'], _fmt(worst['value']), worst['unit'],
                           _fmt(worst['median']), worst['unit'], share, worst['peers'], worst['point_label'],
                           direction if direction != 'both' else 'outlier', len(points), checked, limit,
                           _runs(context)))
        else:
            message = '%s %s on %s: within its peers at all %d sweep points judged, limit %s (%s)' % (
                row['survey'], row['metric'], row['subject'], checked, limit, _runs(context))
        cases.append(_case('outliers', name, row['subject'], row['metric'], passed, len(points), limit, 'points',
                           message))
    return cases or [_no_match('outliers', name, entry, metric, context)]


def _check_regressions(entry: dict, index: int, comparison: list[dict] | None, context: dict) -> list[dict]:
    metric = entry.get('metric') or '*'
    name = entry.get('name') or 'regression %s <= %s%%' % (metric, entry['max_pct'])
    if comparison is None:
        return [_case('regressions', name, '-', metric, None if not entry.get('required', True) else False, None,
                      entry['max_pct'], '%', '%s: no baseline was given, nothing to compare with (%s)'
                      % (name, _runs(context)))]
    cases = []
    for row in comparison:
        if row['status'] == 'new' or not (_match(metric, row['metric']) and _match(entry.get('subjects'), row['subject'])):
            continue
        if row['status'] == 'missing':
            cases.append(_case('regressions', name, row['subject'], row['metric'], False, None, entry['max_pct'], '%',
                               '%s on %s: in the baseline (%s %s) but not measured (%s)' % (
                                   row['metric'], row['subject'], _fmt(row['reference']), row['unit'], _runs(context))))
            continue
        delta = row['delta_pct'] if row['delta_pct'] is not None else 0.0
        passed = delta >= -entry['max_pct']
        message = '%s on %s: %s %s against baseline %s %s, %+.1f%% (limit -%s%%) (%s)' % (
            row['metric'], row['subject'], _fmt(row['current']), row['unit'], _fmt(row['reference']), row['unit'],
            delta, entry['max_pct'], _runs(context))
        cases.append(_case('regressions', name, row['subject'], row['metric'], passed, round(delta, 3),
                           -entry['max_pct'], '%', message))
    return cases or [_no_match('regressions', name, entry, metric, context)]


def _check_variation(entry: dict, index: int, repeats: list[dict], context: dict) -> list[dict]:
    metric = entry.get('metric') or '*'
    name = entry.get('name') or 'variation %s cv <= %s%%' % (metric, entry['max_cv_pct'])
    worst: dict = {}
    for row in repeats:
        if row['cv_pct'] is None or not (_match(metric, row['metric']) and _match(entry.get('subjects'), row['subject'])):
            continue
        key = (row['metric'], row['subject'])
        if key not in worst or row['cv_pct'] > worst[key]['cv_pct']:
            worst[key] = row
    cases = []
    for (metric_name, subject), row in sorted(worst.items()):
        passed = row['cv_pct'] <= entry['max_cv_pct']
        message = '%s on %s: coefficient of variation %.1f%% over %d iterations at %s (mean %s %s, stddev %s), ' \
                  'limit %s%% (%s)' % (metric_name, subject, row['cv_pct'], row['n'], row['point_label'],
                                       _fmt(row['mean']), row['unit'], _fmt(row['stddev']), entry['max_cv_pct'],
                                       _runs(context))
        cases.append(_case('variation', name, subject, metric_name, passed, round(row['cv_pct'], 3),
                           entry['max_cv_pct'], '%', message))
    if not cases:
        entry = dict(entry)
        entry.setdefault('required', True)
        case = _no_match('variation', name, entry, metric, context)
        case['message'] += ' - variation needs iokit_iterations > 1'
        return [case]
    return cases


def completeness_cases(missing: t.Iterable[dict], context: dict, present: t.Iterable[dict] = ()) -> list[dict]:
    """A failing case per expected host and survey without a usable result (``{host, survey, reason}``), and a
    passing one per expected host and survey that has one (``{host, survey}``)."""
    cases = [_case('completeness', '%s results present' % item['survey'], item['host'], item['survey'], False, None,
                   None, '', '%s on %s: %s (%s)' % (item['survey'], item['host'], item['reason'], _runs(context)))
             for item in missing]
    cases.extend(_case('completeness', '%s results present' % item['survey'], item['host'], item['survey'], True,
                       None, None, '', '%s on %s: usable result (%s)' % (item['survey'], item['host'], _runs(context)))
                 for item in present)
    return cases


HISTORY_CHECK = 'no regression against history'


def history_cases(judgment: dict, context: dict) -> list[dict]:
    """One case per component, survey and metric judged against its history (history_judge.judge_history):
    failed when it regressed at one sweep point or more, with the worst of them; one skipped case per survey whose
    values had no comparable earlier run, or one for the run when nothing could be judged."""
    regressed = {(entry['component_kind'], entry['component_id'], entry['survey'], entry['metric']): entry
                 for finding in judgment['findings'] for entry in finding['regressed']}
    limit = -judgment['settings']['min_change_pct']
    cases = []
    for row in judgment['judged']:
        entry = regressed.get((row['component_kind'], row['component_id'], row['survey'], row['metric']))
        subject = row['component_id']
        if entry is None:
            message = '%s %s on %s %s: within its history at all %d sweep points judged, against run(s) %s (%s)' % (
                row['survey'], row['metric'], row['component_kind'], subject, row['points'], ', '.join(row['runs']),
                _runs(context))
            cases.append(_case('history', HISTORY_CHECK, subject, row['metric'], True, None, limit, '%', message))
            continue
        change = entry['change_pct']
        cases.append(_case('history', HISTORY_CHECK, subject, row['metric'], False,
                           None if change is None else round(change, 3), limit, '%',
                           '%s (%s)' % (history_judge.finding_text(entry), _runs(context))))
    for item in judgment['not_judged']:
        cases.append(_case('history', HISTORY_CHECK, '-', item['survey'], None, None, limit, '%',
                           '%s: %d value(s) without a comparable earlier run in the history, not judged (%s)' % (
                               item['survey'], item['values'], _runs(context))))
    if not cases:
        # Asked for and not done: failed, as a criterion that matches nothing, so that it cannot pass unnoticed.
        cases.append(_case('history', HISTORY_CHECK, '-', '-', False, None, limit, '%',
                           'the history database has no sample of this run: nothing was judged against its history '
                           '(record the run, then report again) (%s)' % _runs(context)))
    return cases


def evaluate(samples: t.Any, criteria: t.Any, baseline: dict | None = None, missing: t.Iterable[dict] = (),
             run_id: str | None = None, outlier_options: dict | None = None, comparison: list[dict] | None = None,
             tolerance_pct: float = compare.DEFAULT_TOLERANCE_PCT, present: t.Iterable[dict] = (),
             judged_points: tuple | None = None, history: dict | None = None) -> dict:
    """The verdict of a run: every criterion checked per subject, each check a test case.

    ``missing`` lists expected results that are absent or failed (each a
    failing ``completeness`` case), ``present`` the expected ones that are
    usable (each a passing one).  ``comparison`` may pass a ready
    ``compare_runs`` result against ``baseline``, and ``judged_points`` a
    ready ``analysis.judge_points`` result, to avoid computing them twice.
    ``history`` is a history judgment (history_judge.judge_history): its
    cases (history_cases) come first after completeness.
    """
    criteria = validate_criteria(criteria)
    table = samples if isinstance(samples, analysis.PointTable) else analysis.PointTable(
        as_samples(samples))
    run_id = run_id or ','.join(sorted(table.run_ids)) or None
    baseline_run_id = None
    if baseline is not None and comparison is None:
        comparison = compare.compare_runs(table, baseline, tolerance_pct)
    if comparison:
        baseline_run_id = comparison[0]['reference_run_id']
    elif baseline is not None:
        baseline_run_id = compare.baseline_table(baseline)[1]
    context = {'run_id': run_id, 'baseline_run_id': baseline_run_id}
    peaks = analysis.peaks(table)
    cases = completeness_cases(missing, context, present)
    if history is not None:
        cases.extend(history_cases(history, context))
    if not criteria['outliers']:
        found, judged = [], {}
    else:
        found, judged = judged_points or analysis.judge_points(table, **(outlier_options or {}))
    repeats = analysis.repeat_stats(table) if criteria['variation'] else []
    for index, entry in enumerate(criteria['floors']):
        cases.extend(_check_floors(entry, index, peaks, context))
    for index, entry in enumerate(criteria['ratios']):
        cases.extend(_check_ratios(entry, index, table, context))
    for index, entry in enumerate(criteria['outliers']):
        cases.extend(_check_outliers(entry, index, peaks, found, judged, context))
    for index, entry in enumerate(criteria['regressions']):
        cases.extend(_check_regressions(entry, index, comparison if baseline is not None else None, context))
    for index, entry in enumerate(criteria['variation']):
        cases.extend(_check_variation(entry, index, repeats, context))
    counts = {'tests': len(cases), 'passed': 0, 'failed': 0, 'skipped': 0}
    for case in cases:
        counts[case['status']] += 1
    verdict = FAILED if counts['failed'] else (PASSED if counts['passed'] else NO_VERDICT)
    return {'verdict': verdict, 'run_id': run_id, 'baseline_run_id': baseline_run_id,
            'counts': counts, 'cases': cases, 'failures': [case['message'] for case in cases if case['status'] == 'failed']}


def add_diagnoses(verdict: dict, diagnoses: t.Mapping[tuple, str]) -> dict:
    """Give each failed case the diagnosis of the weak component it is about, as its ``diagnosis``.

    ``diagnoses`` maps ``(metric, subject)`` to a text (diagnosis.case_diagnoses).
    The case's name and message are unchanged; junit_xml adds the diagnosis to
    the failure message.  Returns the verdict, changed in place.
    """
    for case in verdict['cases']:
        text = diagnoses.get((case['metric'], case['subject'])) if case['status'] == FAILED else None
        if text:
            case['diagnosis'] = text
    return verdict


def failure_message(case: dict) -> str:
    """A failed case's message, followed by the diagnosis of its component when it has one."""
    return '%s - %s' % (case['message'], case['diagnosis']) if case.get('diagnosis') else case['message']


def junit_xml(verdict: dict, suite_name: str = 'lustre.iokit acceptance') -> str:
    """The verdict as JUnit XML (testsuites/testsuite/testcase/failure|skipped), one testsuite per kind of check.

    One test case per case of the verdict, named as the case (criterion and
    subject, class by kind and metric); a failure's message ends with the
    component's diagnosis when add_diagnoses gave it one.
    """
    no_verdict = verdict['verdict'] == NO_VERDICT
    root = ET.Element('testsuites', name=suite_name, tests=str(verdict['counts']['tests'] + no_verdict),
                      failures=str(verdict['counts']['failed']), skipped=str(verdict['counts']['skipped']),
                      errors=str(int(no_verdict)))
    run_id = verdict.get('run_id') or 'unknown'
    if no_verdict:
        # No check was made: an error, so that a pipeline gating on this file does not pass a fleet nobody judged.
        suite = ET.SubElement(root, 'testsuite', name='%s.verdict' % suite_name, tests='1', failures='0',
                              skipped='0', errors='1')
        message = 'no verdict: no check could be made on run %s (%d skipped)' % (run_id, verdict['counts']['skipped'])
        case = ET.SubElement(suite, 'testcase', classname='lustre.iokit.verdict', name='verdict')
        ET.SubElement(case, 'error', message=message, type='no verdict').text = message
    by_kind: dict = {}
    for case in verdict['cases']:
        by_kind.setdefault(case['kind'], []).append(case)
    for kind, cases in by_kind.items():
        suite = ET.SubElement(root, 'testsuite', name='%s.%s' % (suite_name, kind), tests=str(len(cases)),
                              failures=str(sum(c['status'] == 'failed' for c in cases)),
                              skipped=str(sum(c['status'] == 'skipped' for c in cases)), errors='0')
        properties = ET.SubElement(suite, 'properties')
        ET.SubElement(properties, 'property', name='run_id', value=run_id)
        if verdict.get('baseline_run_id'):
            ET.SubElement(properties, 'property', name='baseline_run_id', value=verdict['baseline_run_id'])
        for case in cases:
            element = ET.SubElement(suite, 'testcase', classname='lustre.iokit.%s.%s' % (kind, case['metric']),
                                    name='%s [%s]' % (case['criterion'], case['subject']))
            if case['status'] == 'failed':
                message = failure_message(case)
                failure = ET.SubElement(element, 'failure', message=message, type=kind)
                failure.text = message
            elif case['status'] == 'skipped':
                ET.SubElement(element, 'skipped', message=case['message'])
            else:
                ET.SubElement(element, 'system-out').text = case['message']
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding='unicode') + '\n'
