# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How long a survey's plan takes: the one estimator every survey uses, on the node and on the controller.

A survey's plan (what its module returns in check mode, and with every run) is reduced to its *work*: the points
to run, the bytes written and read on the host, and one amount in the unit the survey's speed is measured in
(MiB per OST for obdfilter, whose OSTs run side by side; operations per MDT for mds; ...).  The duration is that
amount divided by a rate, and the estimate always says where the rate comes from:

- ``assumed <rate> <unit> (<where>)``: a guess, from an option (obdfilter's ``plan_ost_mib_s``) or the built-in
  figure below, when nothing better is known;
- ``from run <id> of <date> (<rate> <unit> measured)``: the same host's last ``ok`` run of the same survey in the
  controller's results store, whose envelope keeps its work (``plan_work``) beside its duration.

Target-side code: pure standard library, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.lustre.iokit.plugins.module_utils import point_budget, results, survey_catalog
from ansible_collections.lustre.iokit.plugins.module_utils.units import MIB

# Per survey that measures: the unit of its work amount, the unit of its rate, and the rate assumed when nothing
# was measured (with where that figure comes from); the catalogue says why each is what it is.
WORK_UNITS = dict((name, survey.work) for name, survey in survey_catalog.CATALOG.items() if survey.work)


def _number(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _runnable(points):
    return [point for point in points or [] if isinstance(point, dict) and point.get('skip') is None]


def work_of(survey, plan):
    """The work of ``survey``'s ``plan``: ``points``, ``bytes_written``, ``bytes_read``, ``amount`` and ``unit``.

    ``amount`` is None when the plan does not say enough (e.g. an ost survey without an active OST).
    """
    plan = plan or {}
    points, written, read, amount = 0, 0, 0, None
    if survey == 'obdfilter':
        points = len(_runnable(plan.get('points')))
        per_ost = [value for value in (plan.get('per_ost') or {}).values() if isinstance(value, dict)]
        written = sum(value.get('bytes_written') or 0 for value in per_ost)
        read = sum(value.get('bytes_read') or 0 for value in per_ost)
        # the OSTs of a host run side by side: the busiest one sets the pace
        amount = max([((value.get('bytes_written') or 0) + (value.get('bytes_read') or 0)) / MIB
                      for value in per_ost] or [0.0])
    elif survey == 'sgpdd':
        points = len(_runnable(plan.get('points')))
        per_device_written = plan.get('bytes_written_per_device') or {}
        per_device_read = plan.get('bytes_read_per_device') or {}
        written = sum(per_device_written.values())
        read = sum(per_device_read.values())
        devices = set(per_device_written) | set(per_device_read)
        amount = max([((per_device_written.get(device) or 0) + (per_device_read.get(device) or 0)) / MIB
                      for device in devices] or [0.0])
    elif survey == 'ost':
        active = [ost for ost in plan.get('osts') or [] if isinstance(ost, dict) and ost.get('active')]
        points = len(active)
        written = (plan.get('bytes_written_per_ost') or 0) * len(active)
        read = (plan.get('bytes_read_per_ost') or 0) * len(active)
        # one OST after another, through the one client
        amount = (written + read) / MIB if active else None
    elif survey == 'mds':
        points = len(_runnable(plan.get('points')))
        files = sum(value for value in (plan.get('files_per_mdt_per_point') or {}).values() if _number(value))
        # the MDTs of a host run side by side; every test touches every file once
        amount = float(files * len(plan.get('tests') or []))
    elif survey == 'lnet':
        points = _number(plan.get('points')) or 0
        amount = _number(plan.get('estimated_duration_s'))
    elif survey == 'ior':
        points = len(plan.get('points') or [])
        written = plan.get('bytes_written') or 0
        read = plan.get('bytes_read') or 0
        amount = (written + read) / MIB
    elif survey == 'mdtest':
        # the nodes step's one-node point is the best point of the first step, not run again
        points = len([point for point in plan.get('points') or []
                      if not (isinstance(point, dict) and point.get('reuses_best_tasks_point'))])
        amount = float(points)
    else:
        raise ValueError('no work is defined for the survey %r' % (survey,))
    return {'points': int(points), 'bytes_written': int(written), 'bytes_read': int(read),
            'amount': None if amount is None else round(float(amount), 3), 'unit': WORK_UNITS[survey][0]}


def assumed_rate(survey, rate=None, where=None):
    """``(rate, basis)`` of a guess: ``rate`` (from ``where``, an option's name) or the survey's built-in figure."""
    rate_unit, default, default_where = WORK_UNITS[survey][1:]
    if _number(rate) and rate > 0:
        return float(rate), 'assumed %s %s (%s)' % (_rate_text(rate), rate_unit, where or 'option')
    if default is None:
        return None, 'no rate assumed: the %s plan has nothing to divide by one; a stored run of it gives one' % survey
    return default, 'assumed %s %s (%s)' % (_rate_text(default), rate_unit, default_where)


def _rate_text(rate):
    return ('%.3g' % rate) if rate < 100 else ('%d' % round(rate))


def estimate(survey, plan, rate=None, where=None, measured=None):
    """The plan's estimate: its work, the rate and the estimated duration, and ``estimate_basis`` saying why.

    ``measured`` (a ``measured_rate`` answer) wins over the assumed ``rate``; ``where`` names the option that gave
    ``rate``.  ``estimated_duration_s`` is None when no rate is known or the plan's work is not.
    """
    work = work_of(survey, plan)
    if measured is not None:
        value, basis, source = measured['rate'], measured['basis'], 'stored run'
    else:
        value, basis = assumed_rate(survey, rate, where)
        source = 'assumed'
    duration = None
    if value and work['amount'] is not None:
        duration = round(work['amount'] / value, 1)
    answer = {'survey': survey, 'points': work['points'], 'bytes_written': work['bytes_written'],
              'bytes_read': work['bytes_read'], 'work': {'amount': work['amount'], 'unit': work['unit']},
              'rate': value, 'rate_unit': WORK_UNITS[survey][1], 'estimated_duration_s': duration,
              'estimate_basis': basis, 'source': source}
    if measured is not None:
        answer['measured_run'] = {'run_id': measured['run_id'], 'finished': measured['finished']}
    bounds = adaptive_bounds((plan or {}).get('sweep'), duration)
    if bounds is not None:
        answer['adaptive'] = bounds
    fast = fast_profile_bound((plan or {}).get('point_sizing'), duration, value)
    if fast is not None:
        answer['fast_profile'] = fast
    return answer


def fast_profile_bound(sizing, duration, rate):
    """The fast sweep profile's worst case beside the full grid's ``duration`` (``sizing``: the plan's
    ``point_sizing``, ``point_budget.point_sizing``; ``rate``: per target, the estimate's), or None when the plan
    has no sizing or the duration is unknown.

    At worst the adaptive sweep never stops and no inner sweep starts near a knee, so every point of the full grid
    runs; each of its tests moves ``max(floor, min(full, point_s x rate))`` instead of ``full`` (the plan's own
    ``point_s`` when it has one, else the profile's), so the full grid's time scales by that over ``full``.  Above 1
    when the floor (the node's cache) is larger than the I/O kit's size: then the fast profile is not faster.
    """
    if not isinstance(sizing, dict) or duration is None or not _number(rate):
        return None
    full, floor = _number(sizing.get('full')), _number(sizing.get('floor'))
    if not full or full <= 0 or floor is None:
        return None
    point_s = _number(sizing.get('point_s')) or point_budget.FAST_POINT_S
    per_point = max(floor, min(full, point_s * rate))
    return {'point_s': point_s, 'floor': floor, 'floor_reason': sizing.get('floor_reason'),
            'estimated_duration_most_s': round(duration * per_point / full, 1)}


def adaptive_bounds(sweep, duration):
    """What an adaptive sweep may take (``sweep``: the plan's, adaptive.plan_fields), or None for a full sweep.

    The worst case is the full grid, points and duration: a curve that gains at least the minimum at every point
    never stops.  The fewest points are those of sweeps flat from their first doubling; their duration is the
    full one's share by points (every point taken as long as the others: a guess on the high side, since the
    points left out are the ones with the most threads).
    """
    if not isinstance(sweep, dict) or sweep.get('mode') != 'adaptive':
        return None
    full, fewest = _number(sweep.get('points_full')), _number(sweep.get('points_fewest'))
    most = _number(sweep.get('points_most'))
    most = full if most is None else most
    fewest_duration = None
    if duration is not None and full and fewest is not None:
        fewest_duration = round(duration * fewest / full, 1)
    return {'points_full': full, 'points_most': most, 'points_fewest': fewest,
            'estimated_duration_most_s': duration if most == full else None,
            'estimated_duration_fewest_s': fewest_duration,
            'min_gain_pct': sweep.get('min_gain_pct'), 'patience': sweep.get('patience')}


def _run_seconds(envelope):
    """Seconds the envelope's points took to measure: its attempts added up, else its own duration."""
    attempts = envelope.get('attempts')
    if isinstance(attempts, list) and attempts:
        total = 0.0
        for attempt in attempts:
            try:
                took = results.parse_timestamp(attempt['finished']) - results.parse_timestamp(attempt['started'])
            except (KeyError, TypeError, ValueError):
                break
            total += took.total_seconds()
        else:
            return total
    return _number(envelope.get('duration_s'))


def measured_rate(survey, envelope):
    """The rate ``envelope`` (an earlier ``ok`` run of ``survey``) measured, as ``estimate`` takes it; else None.

    Its ``plan_work`` (the work its plan had, times its iterations), less the share of points an adaptive sweep
    left out, over the time it ran.  A run with time-bounded points (``point_s`` among its parameters) gives none:
    its points moved less than its plan's full sizes, so that work over its time would be a rate too high.
    """
    if not isinstance(envelope, dict) or envelope.get('survey') != survey:
        return None
    if envelope.get('status') != results.STATUS_OK:
        return None
    if (envelope.get('parameters') or {}).get('point_s') is not None:
        return None
    work = envelope.get('plan_work')
    if not isinstance(work, dict) or work.get('unit') != WORK_UNITS[survey][0]:
        return None
    amount, points = _number(work.get('amount')), _number(work.get('points'))
    seconds = _run_seconds(envelope)
    if not amount or amount <= 0 or not seconds or seconds <= 0:
        return None
    # iterations merged into one envelope: each ran the plan once (its duration is theirs added up).  Only a server
    # survey's role runs it several times; ior's and mdtest's ``iterations`` is the tool's own -i, already inside
    # each point of their plan's work.
    iterations = (envelope.get('parameters') or {}).get('iterations')
    if survey_catalog.CATALOG[survey].kind == survey_catalog.SERVER and _number(iterations) and iterations > 1:
        amount = amount * iterations
    skipped = envelope.get('skipped_points')
    if points and isinstance(skipped, list) and skipped:
        amount = amount * max(0, points - len(skipped)) / points
        if amount <= 0:
            return None
    rate = amount / seconds
    finished = str(envelope.get('finished') or '')
    return {'rate': rate, 'run_id': envelope.get('run_id'), 'finished': finished,
            'basis': 'from run %s of %s (%s %s measured)' % (envelope.get('run_id'), finished[:10] or 'unknown date',
                                                             _rate_text(rate), WORK_UNITS[survey][1])}


def fleet_totals(estimates):
    """Totals of host estimates that run side by side: points and bytes added, the duration of the slowest host.

    ``estimated_duration_s`` is None when no host's duration is known; ``unknown_hosts`` counts those without one.
    """
    durations = [item.get('estimated_duration_s') for item in estimates]
    known = [value for value in durations if _number(value) is not None]
    fast = [fast_duration(item) for item in estimates]
    return {'hosts': len(estimates), 'points': sum(item.get('points') or 0 for item in estimates),
            'bytes_written': sum(item.get('bytes_written') or 0 for item in estimates),
            'bytes_read': sum(item.get('bytes_read') or 0 for item in estimates),
            'estimated_duration_s': max(known) if known else None,
            'unknown_hosts': len(durations) - len(known),
            # the fast profile's worst case, only when every host of the fleet has one
            'fast_duration_most_s': max(fast) if fast and None not in fast else None}


def fast_duration(estimate):
    """The fast profile's worst-case seconds of one host's ``estimate``, None when it has none."""
    fast = estimate.get('fast_profile')
    return _number(fast.get('estimated_duration_most_s')) if isinstance(fast, dict) else None
