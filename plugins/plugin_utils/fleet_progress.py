# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fleet's progress in one line, and a row per host: the one wording of the callback and of the summary task.

Input: a mapping of host name to that host's survey progress, as ``lustre.iokit.async_result`` returns it in
``progress`` (None while the survey is still setting up and has written none).
"""

from __future__ import annotations

import time


def _fraction(progress):
    """Share of the host's plan done (0..1); a survey that ended is whole even when an adaptive sweep stopped early."""
    if not progress:
        return 0.0
    if progress.get('state') not in (None, 'running'):
        return 1.0
    total = progress.get('total') or 0
    return min(1.0, progress.get('done', 0) / total) if total else 0.0


def _counts(progress):
    """(done, total) points of one host; an ended survey's total is what it ran."""
    if not progress:
        return 0, 0
    done = progress.get('done', 0) or 0
    if progress.get('state') not in (None, 'running'):
        return done, done
    return done, max(done, progress.get('total') or 0)


def duration_text(seconds):
    """``41 min``, ``2 h 05 min``, ``< 1 min``."""
    minutes = int(round(seconds / 60.0))
    if minutes < 1:
        return '< 1 min'
    if minutes < 60:
        return '%d min' % minutes
    return '%d h %02d min' % (minutes // 60, minutes % 60)


def fleet_eta_s(progresses):
    """Seconds until the last host ends: the largest ETA of the hosts still running (None if none is known)."""
    known = [progress['eta_s'] for progress in progresses.values()
             if progress and progress.get('state') == 'running' and isinstance(progress.get('eta_s'), (int, float))]
    return max(known) if known else None


def fleet_line(survey, progresses, now=None, unpolled=0):
    """``obdfilter: 16 hosts, 212/400 points (53 %), slowest oss7 31 %, ETA 14:32 (41 min)``.

    ``progresses`` maps each host to its progress (or None). The ETA clock time is the controller's local time.
    ``unpolled`` counts the hosts whose survey was started but whose wait has not polled yet: with fewer forks than
    hosts, a host's wait holds a fork until its survey ends, so the hosts past the fork count are polled only as
    forks free up. They are counted in the fleet (``128 hosts, 108 started not polled yet, ...``); their points are
    not known yet, so the points, the slowest host and the ETA are those of the hosts polled.
    """
    now = time.time() if now is None else now
    hosts = sorted(progresses)
    done = total = 0
    for host in hosts:
        host_done, host_total = _counts(progresses[host])
        done += host_done
        total += host_total
    count = len(hosts) + unpolled
    parts = ['%d host%s' % (count, '' if count == 1 else 's')]
    if unpolled:
        parts.append('%d started not polled yet' % unpolled)
    if total:
        parts.append('%d/%d points (%d %%)' % (done, total, int(100.0 * done / total)))
    else:
        parts.append('%d points' % done)
    running = [host for host in hosts if not progresses[host] or progresses[host].get('state') == 'running']
    shares = set(_fraction(progresses[host]) for host in hosts)
    if running and len(shares) > 1:
        # Named only when one lags: hosts level with each other have no slowest.
        slowest = min(running, key=lambda host: (_fraction(progresses[host]), host))
        parts.append('slowest %s %d %%' % (slowest, int(100 * _fraction(progresses[slowest]))))
    eta = fleet_eta_s(progresses)
    if not running and not unpolled:
        parts.append('done')
    elif eta is None:
        parts.append('ETA unknown')
    else:
        parts.append('ETA %s (%s)' % (time.strftime('%H:%M', time.localtime(now + eta)), duration_text(eta)))
    return '%s: %s' % (survey, ', '.join(parts))


def _point_text(point):
    return ' '.join('%s=%s' % (key, point[key]) for key in sorted(point)) if point else '-'


def host_rows(progresses):
    """One row per host, slowest first: points, share, the point running, the last figure, elapsed and ETA."""
    rows = []
    for host in sorted(progresses, key=lambda name: (_fraction(progresses[name]), name)):
        progress = progresses[host]
        if not progress:
            rows.append('  %s: setting up' % host)
            continue
        done, total = _counts(progress)
        last = progress.get('last') or {}
        text = '  %s: %d/%d points (%d %%)' % (host, done, total, int(100 * _fraction(progress)))
        if progress.get('state') == 'running':
            text += ', now %s' % _point_text(progress.get('current'))
        else:
            text += ', %s' % progress.get('state')
        if last.get('figure'):
            text += ', last %s' % last['figure']
        text += ', elapsed %s' % duration_text(progress.get('elapsed_s') or 0)
        if progress.get('state') == 'running' and isinstance(progress.get('eta_s'), (int, float)):
            text += ', ETA %s' % duration_text(progress['eta_s'])
        rows.append(text)
    return rows


def progress_of(value):
    """A host's progress from what the poll returned (an async_result result, or the progress itself)."""
    if isinstance(value, dict) and 'progress' in value:
        return value['progress']
    if isinstance(value, dict) and 'done' in value:
        return value
    return None


def survey_of(progresses, default='survey'):
    """The survey named by the hosts' progress."""
    for progress in progresses.values():
        if progress and progress.get('survey'):
            return progress['survey']
    return default
