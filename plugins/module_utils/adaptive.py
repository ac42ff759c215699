# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Adaptive sweeps: when to stop doubling the concurrency because the device saturated.

A survey sweeps an inner axis that doubles (threads) inside outer ones
(record size, objects, regions).  ``full`` runs every point as the I/O kit
does; ``adaptive`` asks ``decide()`` after each inner point whether the
points still to come can tell anything new:

* a point whose figure improves on the best so far by less than
  ``min_gain_pct`` is flat; ``patience`` flat points in a row stop the sweep;
* a point that falls below the best so far by more than ``min_gain_pct``
  stops it at once (past the knee the device loses ground);
* a noisy point, whose own spread (half its min..max range, as a percentage
  of its figure) is wider than ``min_gain_pct``, cannot show either: it
  breaks a run of flat points and never stops the sweep.

Each test's curve is judged apart, and with figures per component (OST,
device, MDT) each component's curve apart (``figures``): the sweep stops
when all of them say so.

The outer axes carry on whatever the inner one decided.  docs/adaptive-sweeps.md
is the user's description.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.lustre.iokit.plugins.module_utils.option_problem import OptionProblem

SWEEP_MODES = ('full', 'adaptive')
DEFAULT_MIN_GAIN_PCT = 3.0
DEFAULT_PATIENCE = 1


def adaptive_sweep_argument_spec():
    """The options of the doc fragment ``lustre.iokit.sweep.ADAPTIVE``."""
    return dict(
        sweep=dict(type='str', choices=list(SWEEP_MODES), default='full'),
        sweep_min_gain_pct=dict(type='float', default=DEFAULT_MIN_GAIN_PCT),
        sweep_patience=dict(type='int', default=DEFAULT_PATIENCE),
    )


def option_problems(params):
    """Invalid values of the adaptive options, each an OptionProblem."""
    problems = []
    gain = params.get('sweep_min_gain_pct')
    if gain is not None and not 0 < gain < 100:
        problems.append(OptionProblem('sweep_min_gain_pct', 'must be above 0 and below 100 (percent)', got=gain))
    patience = params.get('sweep_patience')
    if patience is not None and patience < 1:
        problems.append(OptionProblem('sweep_patience', 'must be at least 1 point', got='%d' % patience))
    if params.get('sweep') == 'adaptive' and params.get('engine') == 'iokit':
        problems.append(OptionProblem(
            'sweep', 'adaptive needs {engine} native (the installed I/O-kit script always runs the full grid)',
            mentions='engine'))
    return problems


def envelope_fields(inner_sweeps, plan):
    """The envelope's ``sweep`` and ``skipped_points`` after a native run; ``plan``: the survey's planned points,
    of which those with no ``skip`` make the full grid."""
    points_full = len([point for point in plan if not point.get('skip')])
    return {'sweep': inner_sweeps.summary(points_full), 'skipped_points': list(inner_sweeps.skipped_points)}


def inner_sweep_sizes(points, axis, outer_keys):
    """How many runnable points (``skip`` unset) each inner sweep of a plan has, in plan order: the points that
    share the values of ``outer_keys`` make one sweep along ``axis``."""
    sizes = []
    index = {}
    for point in points:
        if point.get('skip') or axis not in point:
            continue
        key = tuple(point.get(name) for name in outer_keys)
        if key not in index:
            index[key] = len(sizes)
            sizes.append(0)
        sizes[index[key]] += 1
    return sizes


def plan_fields(mode, min_gain_pct, patience, inner_sizes, started=()):
    """The plan's ``sweep``: the mode and settings, and the points an adaptive sweep can run.

    ``inner_sizes``: the runnable points of each inner sweep (``inner_sweep_sizes``); ``started``: for each, how
    many points it starts from that are already measured (mdtest's nodes step starts from the best tasks-per-node
    point), 0 when not given.  ``points_full`` is the full grid; ``points_most`` the adaptive worst case, also
    the full grid (a curve that gains at least ``min_gain_pct`` at every point never stops);
    ``points_fewest`` the least the stop rule can run: each inner sweep's first point then ``patience`` flat
    points (a curve flat from its first doubling). A fall of more than ``min_gain_pct`` at the second point stops
    a sweep after two points, fewer only with a patience above 1.
    """
    started = list(started) + [0] * (len(inner_sizes) - len(started))
    full = sum(inner_sizes)
    fewest = sum(min(size, max(0, 1 + patience - seen)) for size, seen in zip(inner_sizes, started))
    fields = {'mode': mode, 'min_gain_pct': min_gain_pct, 'patience': patience, 'points_full': full}
    if mode == 'adaptive':
        fields.update(points_most=full, points_fewest=fewest)
    return fields


def spread_pct(figure, low, high, scale=1):
    """Half the min..max range of a point as a percentage of its figure (None when not printed).

    ``scale`` divides ``figure`` first when min and max describe one part of it
    (obdfilter's min/max are single-OST rates, its figure the sum over the OSTs).
    """
    if figure is None or low is None or high is None or figure <= 0 or scale <= 0:
        return None
    return (high - low) / 2.0 / (figure / float(scale)) * 100.0


def _test_figures(tests, scale, value_key):
    result = {}
    for test, outcome in tests.items():
        value = outcome.get(value_key) if outcome.get('status') in ('ok', 'short') else None
        result[test] = {'value': value, 'spread_pct': spread_pct(value, outcome.get('min_' + value_key),
                                                                 outcome.get('max_' + value_key), scale)}
    return result


def figures(tests, scale=1, value_key='mib_s', components=None, component_scale=1):
    """The stop rule's view of one record: the curves it judges, each with its figure and spread at this point.

    ``tests``: the record's ``tests``, each test's figure (None unless ok or short) and spread. ``value_key``
    names the figure (``mib_s``, ``ops_s``); min and max are ``min_<key>`` and ``max_<key>``, of one of
    ``scale`` parts of the figure (see ``spread_pct``).

    ``components``: each component's (OST's, device's, MDT's) own ``tests`` in the same shape, when the record
    has them; min and max are then that component's own, of one of ``component_scale`` parts of its figure.
    With two or more, each component's curve of each test is judged on its own, labelled ``<test> <component>``,
    so a sweep stops when every component is flat within its own noise. Judged as one curve, a component slower
    than its peers would widen every point's min..max beyond the gain and no point would ever stop the sweep;
    judged apart, the slow component is a flat curve of its own. Without them (one component, or a record
    written before they were kept) the tests' own figures are the curves.
    """
    if not components or len(components) < 2:
        return _test_figures(tests, scale, value_key)
    result = {}
    for name in sorted(components):
        own = _test_figures(components[name] or {}, component_scale, value_key)
        for test in tests:
            # a test the component has no figure for is a failed point of its curve: it tells nothing
            result['%s %s' % (test, name)] = own.get(test, {'value': None, 'spread_pct': None})
    return result


def _pct(value):
    return '%+.1f %%' % value


def _gain_text(min_gain_pct):
    return ('%.1f' % min_gain_pct).rstrip('0').rstrip('.')


def decide(points, min_gain_pct=DEFAULT_MIN_GAIN_PCT, patience=DEFAULT_PATIENCE, axis='thr'):
    """Whether the inner sweep should stop after the last of ``points``.

    ``points`` are the inner points measured so far, in sweep order, each a
    dict with ``x`` (the axis value), ``value`` (the figure; None when the
    point failed, which tells nothing) and optionally ``spread_pct``.
    Returns ``{'stop': bool, 'reason': str or None, 'best': {'x', 'value'} or None}``;
    the reason names the point and the figures behind a stop.
    """
    best = None
    flat = []
    for point in points:
        value = point.get('value')
        if value is None:
            continue
        if best is None or best['value'] <= 0:
            best = {'x': point['x'], 'value': value}
            flat = []
            continue
        gain = (value - best['value']) / best['value'] * 100.0
        spread = point.get('spread_pct')
        noisy = spread is not None and spread > min_gain_pct
        if value > best['value']:
            best = {'x': point['x'], 'value': value}
        if noisy:
            flat = []
        elif gain < -min_gain_pct:
            return {'stop': True, 'best': best,
                    'reason': 'declined at %s %s: %s < -%s %% from the best (%s %s)'
                              % (axis, point['x'], _pct(gain), _gain_text(min_gain_pct), axis, best['x'])}
        elif gain < min_gain_pct:
            flat.append(gain)
            if len(flat) >= patience:
                gains = ', '.join(_pct(one) for one in flat)
                suffix = '' if patience == 1 else ' for %d points' % patience
                return {'stop': True, 'best': best,
                        'reason': 'saturated at %s %s: %s < %s %%%s'
                                  % (axis, point['x'], gains, _gain_text(min_gain_pct), suffix)}
        else:
            flat = []
    return {'stop': False, 'reason': None, 'best': best}


def _knee(points, best, min_gain_pct):
    floor = best * (1 - min_gain_pct / 100.0)
    return min(point['x'] for point in points if point.get('value') is not None and point['value'] >= floor)


def decide_all(series, min_gain_pct=DEFAULT_MIN_GAIN_PCT, patience=DEFAULT_PATIENCE, axis='thr'):
    """Stop only when every figure measured at the points stops (write, read ... each its own curve).

    ``series`` maps a label (the test) to its points as for ``decide``; the
    reason lists each label's reason.  ``knee`` (None unless stopping) is the
    lowest axis value at which any test came within ``min_gain_pct`` of its best.
    """
    decisions = [(label, decide(points, min_gain_pct, patience, axis)) for label, points in sorted(series.items())]
    if not decisions or not all(decision['stop'] for label, decision in decisions):
        return {'stop': False, 'reason': None, 'knee': None}
    knee = min(_knee(series[label], decision['best']['value'], min_gain_pct) for label, decision in decisions)
    if len(decisions) == 1:
        return {'stop': True, 'reason': decisions[0][1]['reason'], 'knee': knee}
    return {'stop': True, 'knee': knee,
            'reason': '; '.join('%s %s' % (label, decision['reason']) for label, decision in decisions)}


def _outer_key(outer):
    return tuple(sorted(outer.items()))


class InnerSweeps(object):
    """One survey's adaptive bookkeeping: which inner sweeps stopped, and every point skipped and why.

    The engine asks ``stopped(outer)`` before a point (``outer``: the outer
    coordinates, e.g. ``{'rsz_kib': 1024, 'nobj': 2}``), calls ``skip()`` for
    a point it passes over and ``measured()`` after each point it ran.  In
    ``full`` mode nothing ever stops; the counts are kept all the same.

    ``start_near_knee``: an inner sweep that begins after one that stopped
    skips the axis values below half that sweep's knee (its first point is
    one doubling below the knee); docs/adaptive-sweeps.md says when that is safe.
    """

    def __init__(self, mode='full', min_gain_pct=DEFAULT_MIN_GAIN_PCT, patience=DEFAULT_PATIENCE, axis='thr',
                 start_near_knee=False):
        self.mode = mode
        self.min_gain_pct = min_gain_pct
        self.patience = patience
        self.axis = axis
        self.start_near_knee = start_near_knee
        self._last_knee = None
        self._starts = {}
        self.skipped_points = []
        self.stops = []
        self.points_run = 0
        self._series = {}
        # Told of each point passed over, as the run's plan names it (the progress log's ``point_skipped``)
        self.on_skip = None
        self._stopped = {}

    @property
    def adaptive(self):
        return self.mode == 'adaptive'

    def stopped(self, outer, x=None):
        """Why the point ``x`` of the inner sweep at ``outer`` is not run: its sweep stopped, or (starting near
        the previous knee) ``x`` lies below the start; None when it runs."""
        key = _outer_key(outer)
        if key in self._stopped:
            return self._stopped[key]
        if not (self.adaptive and self.start_near_knee) or x is None:
            return None
        if key not in self._starts:
            self._starts[key] = self._last_knee
        start = self._starts[key]
        if start is not None and x < start['knee'] / 2.0:
            return 'started near the previous knee (%s %s at %s): %s %s is below %s %s' % (
                self.axis, start['knee'], ', '.join('%s %s' % item for item in start['outer']), self.axis, x,
                self.axis, start['knee'] // 2)
        return None

    def skip(self, point, reason, planned=None):
        """``point`` is passed over for ``reason``; ``planned``: the point as the run's plan names it, when the
        plan's keys differ from the envelope's (default ``point``)."""
        self.skipped_points.append({'point': dict(point), 'reason': reason})
        if self.on_skip is not None:
            self.on_skip(dict(planned if planned is not None else point))

    def measured(self, outer, x, figures):
        """A point ran; ``figures`` maps each test to ``{'value', 'spread_pct'}``. Returns the stop reason or None."""
        self.points_run += 1
        return self.seen(outer, x, figures)

    def seen(self, outer, x, figures):
        """As ``measured`` for a point the inner sweep starts from but does not run again (mdtest's nodes step
        starts from the best point of its tasks-per-node step): it joins the curve, it is not counted as run."""
        if not self.adaptive:
            return None
        series = self._series.setdefault(_outer_key(outer), {})
        for label, figure in figures.items():
            series.setdefault(label, []).append(dict(figure, x=x))
        decision = decide_all(series, self.min_gain_pct, self.patience, self.axis)
        if not decision['stop']:
            return None
        self._stopped[_outer_key(outer)] = decision['reason']
        self._last_knee = {'knee': decision['knee'], 'outer': _outer_key(outer)}
        stop = dict(outer)
        stop.update({self.axis: x, 'reason': decision['reason']})
        self.stops.append(stop)
        return decision['reason']

    def summary(self, points_full):
        """The envelope's ``sweep``: the mode and settings, how many of the full grid's points ran, the stops."""
        return {'mode': self.mode, 'min_gain_pct': self.min_gain_pct, 'patience': self.patience,
                'axis': self.axis, 'start_near_knee': self.start_near_knee, 'points_run': self.points_run, 'points_full': points_full,
                'stops': [dict(stop) for stop in self.stops]}
