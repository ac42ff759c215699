# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The plan of a run in words: per host, for the fleet of one survey, and summed over the stages of a run.

The numbers come from ``module_utils/plan_estimate.py`` (one estimate per host and survey, which the survey
roles register as ``<survey>_plan_estimate``); this is only their wording, for the ``fleet_plan`` filter.
Hosts of one survey run side by side (the fleet takes as long as its slowest host); the stages of a run, one
after the other (their durations add up).  Beside the full grid's time, a survey with time-bounded points shows the
fast sweep profile's worst case (``iokit_sweep_profile=fast``: every point run, each test at its time or floor), and
a run the fast profile's total, in which a stage without bounded points counts its full time.
"""

from __future__ import annotations

from ansible_collections.lustre.iokit.plugins.module_utils.plan_estimate import fast_duration, fleet_totals
from ansible_collections.lustre.iokit.plugins.module_utils.units import GIB, MIB
from ansible_collections.lustre.iokit.plugins.plugin_utils.fleet_progress import duration_text


def bytes_text(count):
    """``3.0 GiB``, ``48 MiB``, ``0 B``."""
    if not count:
        return '0 B'
    if count >= GIB:
        return '%.1f GiB' % (count / GIB)
    return '%d MiB' % max(1, round(count / MIB))


def _duration(seconds, unknown=0):
    if seconds is None:
        return 'duration unknown'
    text = 'about %s' % duration_text(seconds)
    if unknown:
        text = 'at least ' + text[len('about '):]
    return text


def host_line(host, estimate):
    """``oss1: 12 points, 3.0 GiB written, about 6 min (assumed 500 MiB/s per OST (built-in guess))``, then for
    an adaptive sweep what it may take (``adaptive_text``)."""
    line = '%s: %d points, %s written, %s (%s)' % (
        host, estimate.get('points') or 0, bytes_text(estimate.get('bytes_written')),
        _duration(estimate.get('estimated_duration_s')), estimate.get('estimate_basis') or 'no basis given')
    adaptive = adaptive_text(estimate.get('adaptive'))
    if adaptive:
        line = '%s; %s' % (line, adaptive)
    fast = estimate.get('fast_profile')
    if isinstance(fast, dict) and fast.get('estimated_duration_most_s') is not None:
        line += '; %s (%g s per test, floor %g per target: %s)' % (
            fast_text(fast['estimated_duration_most_s'], estimate.get('estimated_duration_s')), fast['point_s'],
            fast['floor'], fast.get('floor_reason') or 'given')
    return line


def fast_text(fast_s, full_s):
    """``fast profile at most 12 min (60 % less than the full grid)``."""
    text = 'fast profile at most %s' % duration_text(fast_s)
    if full_s:
        change = 100.0 * (1 - fast_s / float(full_s))
        text += ' (%d %% %s than the full grid)' % (round(abs(change)), 'less' if change >= 0 else 'more')
    return text


def adaptive_text(bounds):
    """``adaptive sweep: up to the full grid (12 points, about 6 min), as few as 4 points (about 2 min) ...``."""
    if not isinstance(bounds, dict):
        return ''
    fewest = bounds.get('points_fewest')
    text = 'adaptive sweep: up to the full grid (%s points, %s) if every curve keeps gaining' % (
        bounds.get('points_most'), _duration(bounds.get('estimated_duration_most_s')))
    if fewest is not None:
        text += ', as few as %d points (%s) if every curve is flat from its first doubling' % (
            fewest, _duration(bounds.get('estimated_duration_fewest_s')))
    return text


def _totals_text(totals, what):
    return '%s, %d points, %s written, %s' % (
        what, totals['points'], bytes_text(totals['bytes_written']),
        _duration(totals['estimated_duration_s'], totals['unknown_hosts']))


def survey_lines(survey, estimates):
    """The fleet line of one survey, then a line per host (``estimates``: host name to its estimate)."""
    hosts = sorted(estimates)
    totals = fleet_totals([estimates[host] for host in hosts])
    line = '%s plan: %s' % (survey, _totals_text(totals, '%d host%s' % (len(hosts), '' if len(hosts) == 1 else 's')))
    known = [host for host in hosts if estimates[host].get('estimated_duration_s') is not None]
    if len(known) > 1:
        slowest = max(known, key=lambda host: estimates[host]['estimated_duration_s'])
        line += ' (hosts side by side, the longest %s)' % slowest
    if totals['fast_duration_most_s'] is not None:
        line += '; ' + fast_text(totals['fast_duration_most_s'], totals['estimated_duration_s'])
    return [line] + ['  ' + host_line(host, estimates[host]) for host in hosts]


def _fast_total(stages):
    """The fast profile's worst case of stages one after another (``stages``: (its fast seconds or None, its full
    seconds) each): a stage without bounded points counts its full time; None when no stage has bounded points or
    a duration is unknown."""
    if all(fast is None for fast, unused in stages):
        return None
    durations = [full if fast is None else fast for fast, full in stages]
    return None if None in durations else sum(durations)


def run_lines(entries):
    """The plan of a whole run: per host (its stages added up), then the total of the stages one after another.

    ``entries``: ``{'survey', 'host', 'estimate'}`` each (a host's plan of one survey; the newest of a host and
    survey counts).
    """
    latest = {}
    for entry in entries:
        latest[(entry['survey'], entry['host'])] = entry['estimate']
    surveys = []
    for survey, unused_host in latest:
        if survey not in surveys:
            surveys.append(survey)
    hosts = sorted(set(host for unused_survey, host in latest))
    lines = []
    for host in hosts:
        mine = [(survey, latest[(survey, host)]) for survey in surveys if (survey, host) in latest]
        durations = [estimate.get('estimated_duration_s') for unused_survey, estimate in mine]
        known = [value for value in durations if value is not None]
        totals = {'points': sum(estimate.get('points') or 0 for unused_survey, estimate in mine),
                  'bytes_written': sum(estimate.get('bytes_written') or 0 for unused_survey, estimate in mine),
                  'estimated_duration_s': sum(known) if known else None,
                  'unknown_hosts': len(durations) - len(known)}
        line = '%s: %s' % (host, _totals_text(totals, ', '.join(survey for survey, unused in mine)))
        fast = _fast_total([(fast_duration(estimate), estimate.get('estimated_duration_s')) for unused, estimate in mine])
        lines.append(line + ('; ' + fast_text(fast, totals['estimated_duration_s']) if fast is not None else ''))
    stage_totals = [fleet_totals([latest[key] for key in latest if key[0] == survey]) for survey in surveys]
    known = [totals['estimated_duration_s'] for totals in stage_totals if totals['estimated_duration_s'] is not None]
    total = {'points': sum(totals['points'] for totals in stage_totals),
             'bytes_written': sum(totals['bytes_written'] for totals in stage_totals),
             'estimated_duration_s': sum(known) if known else None,
             'unknown_hosts': sum(1 for totals in stage_totals
                                  if totals['unknown_hosts'] or totals['estimated_duration_s'] is None)}
    head = 'run plan: %s' % _totals_text(total, '%d survey%s on %d host%s' % (
        len(surveys), '' if len(surveys) == 1 else 's', len(hosts), '' if len(hosts) == 1 else 's'))
    if len(surveys) > 1:
        head += ' (surveys one after another: %s)' % ', '.join(
            '%s %s' % (survey, _duration(totals['estimated_duration_s'], totals['unknown_hosts']))
            for survey, totals in zip(surveys, stage_totals))
    fast = _fast_total([(totals['fast_duration_most_s'], totals['estimated_duration_s']) for totals in stage_totals])
    if fast is not None:
        head += '; ' + fast_text(fast, total['estimated_duration_s'])
    return [head] + ['  ' + line for line in lines]
