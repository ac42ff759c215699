# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The adaptive sweep's stop rule."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import adaptive


def series(*values, **spreads):
    """Points at thr 1, 2, 4 ... with the given figures; spread_pct by position as s<index>=..."""
    points = []
    for index, value in enumerate(values):
        point = {'x': 2 ** index, 'value': value}
        if 's%d' % index in spreads:
            point['spread_pct'] = spreads['s%d' % index]
        points.append(point)
    return points


def first_stop(values, **options):
    """The thread count after which the sweep stops (None: it runs to the end), and the reason."""
    points = series(*values)
    for count in range(1, len(points) + 1):
        decision = adaptive.decide(points[:count], **options)
        if decision['stop']:
            return points[count - 1]['x'], decision['reason']
    return None, None


def test_one_point_never_stops():
    assert adaptive.decide(series(100.0)) == {'stop': False, 'reason': None, 'best': {'x': 1, 'value': 100.0}}
    assert adaptive.decide([]) == {'stop': False, 'reason': None, 'best': None}


def test_flat_stops_at_the_second_point():
    assert first_stop([100.0, 101.4, 101.0]) == (2, 'saturated at thr 2: +1.4 % < 3 %')


def test_rising_runs_to_the_end():
    assert first_stop([10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 640.0]) == (None, None)


def test_knee_stops_one_point_past_it():
    # linear to a knee at 8 threads: 8 still gains 100 %, 16 gains nothing
    assert first_stop([15.0, 30.0, 60.0, 120.0, 120.0, 120.0, 120.0]) == (16, 'saturated at thr 16: +0.0 % < 3 %')


def test_patience_needs_that_many_flat_points_in_a_row():
    values = [50.0, 100.0, 101.0, 110.0, 111.0, 112.0, 112.5]
    assert first_stop(values, patience=2) == (32, 'saturated at thr 32: +0.9 %, +0.9 % < 3 % for 2 points')
    assert first_stop(values, patience=1)[0] == 4


def test_decline_stops_at_once_beyond_the_margin():
    stop, reason = first_stop([100.0, 150.0, 140.0], patience=3)
    assert stop == 4
    assert reason == 'declined at thr 4: -6.7 % < -3 % from the best (thr 2)'


def test_small_decline_within_the_margin_is_flat():
    assert first_stop([100.0, 150.0, 148.0])[1] == 'saturated at thr 4: -1.3 % < 3 %'


def test_noisy_point_does_not_stop_and_breaks_a_flat_run():
    noisy = series(100.0, 101.0, 90.0, 130.0, 131.0, s1=5.0, s2=4.0)
    for count in (2, 3):
        assert not adaptive.decide(noisy[:count])['stop']
    assert adaptive.decide(noisy[:4])['best'] == {'x': 8, 'value': 130.0}
    assert adaptive.decide(noisy)['reason'] == 'saturated at thr 16: +0.8 % < 3 %'
    # a spread within the gain is not noise
    quiet = series(100.0, 101.0, s1=2.5)
    assert adaptive.decide(quiet)['stop']
    broken = series(100.0, 101.0, 101.5, 101.7, s2=9.0)
    assert adaptive.decide(broken[:3], patience=2)['stop'] is False
    assert adaptive.decide(broken, patience=2)['stop'] is False


def test_failed_points_tell_nothing():
    assert not adaptive.decide(series(100.0, None))['stop']
    assert adaptive.decide(series(None, 100.0, 100.5))['reason'] == 'saturated at thr 4: +0.5 % < 3 %'


def test_min_gain_is_tunable_and_printed_as_given():
    assert first_stop([100.0, 107.0, 112.0], min_gain_pct=10) == (2, 'saturated at thr 2: +7.0 % < 10 %')
    assert first_stop([100.0, 101.0], min_gain_pct=0.5) == (None, None)
    assert first_stop([100.0, 100.2], min_gain_pct=0.5) == (2, 'saturated at thr 2: +0.2 % < 0.5 %')


def test_every_test_must_stop_and_each_reason_is_named():
    write = series(100.0, 101.0)
    read = series(100.0, 150.0)
    assert adaptive.decide_all({'write': write, 'read': read}) == {'stop': False, 'reason': None, 'knee': None}
    both = adaptive.decide_all({'write': write, 'read': series(100.0, 99.0)})
    # the knee is the lowest thread count where a test had its best: read's best was at thr 1
    assert both == {'stop': True, 'knee': 1, 'reason': 'read saturated at thr 2: -1.0 % < 3 %; '
                                                       'write saturated at thr 2: +1.0 % < 3 %'}
    assert adaptive.decide_all({'write': write})['reason'] == 'saturated at thr 2: +1.0 % < 3 %'
    assert adaptive.decide_all({}) == {'stop': False, 'reason': None, 'knee': None}


def test_axis_names_the_dimension():
    assert adaptive.decide(series(10.0, 10.0), axis='crg')['reason'] == 'saturated at crg 2: +0.0 % < 3 %'


@pytest.mark.parametrize('figure, low, high, scale, expected', [
    (100.0, 90.0, 110.0, 1, 10.0),
    (400.0, 90.0, 110.0, 4, 10.0),
    (100.0, None, 110.0, 1, None),
    (0.0, 0.0, 0.0, 1, None),
])
def test_spread_is_half_the_range_against_the_figure(figure, low, high, scale, expected):
    assert adaptive.spread_pct(figure, low, high, scale) == expected


@pytest.mark.parametrize('params, problems', [
    ({'sweep_min_gain_pct': 3.0, 'sweep_patience': 1}, []),
    ({'sweep_min_gain_pct': 0.0, 'sweep_patience': 1},
     ['sweep_min_gain_pct: must be above 0 and below 100 (percent), got 0.0']),
    ({'sweep_min_gain_pct': 3.0, 'sweep_patience': 0}, ['sweep_patience: must be at least 1 point, got 0']),
    ({'sweep': 'adaptive', 'engine': 'iokit'},
     ['sweep: adaptive needs engine native (the installed I/O-kit script always runs the full grid)']),
    ({'sweep': 'full', 'engine': 'iokit'}, []),
])
def test_option_problems_name_the_option(params, problems):
    assert [str(problem) for problem in adaptive.option_problems(params)] == problems


def test_inner_sweeps_skip_after_a_stop_and_count_what_ran():
    sweeps = adaptive.InnerSweeps('adaptive')
    outer = {'nobj': 1}
    for thr, value in ((1, 50.0), (2, 100.0), (4, 101.0)):
        assert sweeps.stopped(outer, thr) is None
        sweeps.measured(outer, thr, {'write': {'value': value}})
    assert sweeps.stopped(outer, 8) == 'saturated at thr 4: +1.0 % < 3 %'
    sweeps.skip(dict(outer, thr=8), sweeps.stopped(outer, 8))
    # the next object count starts again from the bottom
    assert sweeps.stopped({'nobj': 2}, 2) is None
    summary = sweeps.summary(points_full=5)
    assert (summary['points_run'], summary['points_full']) == (3, 5)
    assert summary['stops'] == [{'nobj': 1, 'thr': 4, 'reason': 'saturated at thr 4: +1.0 % < 3 %'}]
    assert sweeps.skipped_points == [{'point': {'nobj': 1, 'thr': 8}, 'reason': 'saturated at thr 4: +1.0 % < 3 %'}]


def test_full_mode_never_stops():
    sweeps = adaptive.InnerSweeps('full')
    for thr in (1, 2, 4):
        sweeps.measured({'nobj': 1}, thr, {'write': {'value': 100.0}})
    assert sweeps.stopped({'nobj': 1}, 8) is None
    assert sweeps.summary(3)['stops'] == []


def test_start_near_the_previous_knee():
    sweeps = adaptive.InnerSweeps('adaptive', start_near_knee=True)
    for thr, value in ((1, 10.0), (2, 20.0), (4, 40.0), (8, 80.0), (16, 80.5)):
        sweeps.measured({'nobj': 1}, thr, {'write': {'value': value}})
    reason = sweeps.stopped({'nobj': 2}, 2)
    assert reason == 'started near the previous knee (thr 8 at nobj 1): thr 2 is below thr 4'
    assert sweeps.stopped({'nobj': 2}, 4) is None
    # without the option every sweep starts at the bottom
    plain = adaptive.InnerSweeps('adaptive')
    for thr, value in ((1, 10.0), (2, 20.0), (4, 20.1)):
        plain.measured({'nobj': 1}, thr, {'write': {'value': value}})
    assert plain.stopped({'nobj': 2}, 1) is None


def test_envelope_fields_count_the_runnable_points_of_the_plan():
    sweeps = adaptive.InnerSweeps('adaptive')
    sweeps.measured({'nobj': 1}, 1, {'write': {'value': 1.0}})
    sweeps.skip({'nobj': 1, 'thr': 2}, 'saturated')
    fields = adaptive.envelope_fields(sweeps, [{'thr': 1, 'skip': None}, {'thr': 2, 'skip': None},
                                               {'thr': 1, 'skip': 'thr < nobj'}])
    assert fields['skipped_points'] == [{'point': {'nobj': 1, 'thr': 2}, 'reason': 'saturated'}]
    assert (fields['sweep']['points_run'], fields['sweep']['points_full']) == (1, 2)


def test_a_point_seen_before_starts_the_curve_without_counting_as_run():
    sweeps = adaptive.InnerSweeps('adaptive', axis='nodes')
    assert sweeps.seen({'tasks_per_node': 4}, 1, {'create': {'value': 1000.0}}) is None
    assert sweeps.measured({'tasks_per_node': 4}, 2, {'create': {'value': 1010.0}}) == 'saturated at nodes 2: +1.0 % < 3 %'
    assert sweeps.points_run == 1 and sweeps.stopped({'tasks_per_node': 4}) is not None


def test_inner_sweep_sizes_group_the_runnable_points_by_their_outer_values():
    points = [{'rsz_kib': 1024, 'nobj': 1, 'thr': 1, 'skip': None}, {'rsz_kib': 1024, 'nobj': 1, 'thr': 2, 'skip': None},
              {'rsz_kib': 1024, 'nobj': 2, 'thr': 1, 'skip': 'thr < nobj'},
              {'rsz_kib': 1024, 'nobj': 2, 'thr': 2, 'skip': None}, {'rsz_kib': 1024, 'nobj': 2, 'thr': 4, 'skip': None},
              {'rsz_kib': 1024, 'nobj': 2, 'thr': 8, 'skip': None}]
    assert adaptive.inner_sweep_sizes(points, 'thr', ('rsz_kib', 'nobj')) == [2, 3]
    assert adaptive.inner_sweep_sizes(points, 'thr', ()) == [5]


def test_plan_fields_worst_case_is_the_full_grid_and_the_fewest_a_flat_start():
    # two thread sweeps of 5 and 1 points: a flat start runs 2 (patience 1) or 3 (patience 2) of the 5, and the 1
    assert adaptive.plan_fields('adaptive', 3.0, 1, [5, 1]) == {
        'mode': 'adaptive', 'min_gain_pct': 3.0, 'patience': 1, 'points_full': 6, 'points_most': 6, 'points_fewest': 3}
    assert adaptive.plan_fields('adaptive', 3.0, 2, [5, 1])['points_fewest'] == 4
    # a sweep that starts from a point measured before needs only its patience's points
    assert adaptive.plan_fields('adaptive', 3.0, 1, [4, 3], started=[0, 1])['points_fewest'] == 3
    assert adaptive.plan_fields('full', 3.0, 1, [5, 1]) == {'mode': 'full', 'min_gain_pct': 3.0, 'patience': 1,
                                                            'points_full': 6}


# --------------------------------------------------------------------------
# one curve per component (OST, device, MDT)

OSTS = ('OST0000', 'OST0001', 'OST0002', 'OST0003')


def host_point(rates, spreads=None, tests=('write', 'read')):
    """One obdfilter-like record of a host: each OST's figure ``rates[i]`` and its own one-second samples
    ``spreads[i]`` (a fraction) either way; the host's min/max span every OST's samples, as the survey prints."""
    spreads = spreads or [0.01] * len(rates)
    per_ost = {}
    for name, rate, spread in zip(OSTS, rates, spreads):
        per_ost[name] = dict((test, {'status': 'ok', 'mib_s': rate, 'min_mib_s': rate * (1 - spread),
                                     'max_mib_s': rate * (1 + spread)}) for test in tests)
    low = min(test['min_mib_s'] for ost in per_ost.values() for test in ost.values())
    high = max(test['max_mib_s'] for ost in per_ost.values() for test in ost.values())
    aggregate = dict((test, {'status': 'ok', 'mib_s': sum(rates), 'min_mib_s': low, 'max_mib_s': high})
                     for test in tests)
    return aggregate, per_ost


def sweep_host(curves, spreads=None, **options):
    """Run an inner sweep over thr 1..16 of a host whose OST ``i`` measures ``curves[i][k]`` at thr 2**k; the
    thread counts that ran, and the stop reason (None: the sweep ran to the end)."""
    inner = adaptive.InnerSweeps('adaptive', **options)
    ran = []
    for index, thr in enumerate((1, 2, 4, 8, 16)):
        if inner.stopped({'nobj': 1}):
            break
        tests, per_ost = host_point([curve[index] for curve in curves], spreads)
        ran.append(thr)
        inner.measured({'nobj': 1}, thr, adaptive.figures(tests, len(curves), components=per_ost))
    return ran, (inner.stops[0]['reason'] if inner.stops else None)


KNEE_4 = (8.0, 16.0, 32.0, 32.0, 32.0)


def test_a_host_with_one_slow_ost_stops_at_its_plateau():
    # OST0003 at 60 % of its peers: the host's min..max spans 19-32 MiB/s, 40 % of the figure per OST, which
    # judged as one curve made every point noisy; each OST's own curve is flat from thr 8
    slow = tuple(rate * 0.6 for rate in KNEE_4)
    ran, reason = sweep_host([KNEE_4, KNEE_4, KNEE_4, slow])
    assert ran == [1, 2, 4, 8]
    assert reason.startswith('read OST0000 saturated at thr 8: +0.0 % < 3 %; read OST0001 saturated')
    assert 'write OST0003 saturated at thr 8: +0.0 % < 3 %' in reason


def test_a_component_still_rising_keeps_the_sweep_going():
    # the slow OST is slow because it saturates later: it still gains at thr 8 and 16
    rising = (2.0, 4.0, 8.0, 16.0, 32.0)
    ran, reason = sweep_host([KNEE_4, KNEE_4, KNEE_4, rising])
    assert (ran, reason) == ([1, 2, 4, 8, 16], None)


def test_a_component_noisy_in_its_own_samples_does_not_stop_the_sweep():
    # every OST flat from thr 4, but OST0002's own one-second samples spread 10 % either way
    ran, reason = sweep_host([KNEE_4] * 4, spreads=[0.01, 0.01, 0.1, 0.01])
    assert (ran, reason) == ([1, 2, 4, 8, 16], None)
    # a gain wider than that noise lets it act again
    ran, reason = sweep_host([KNEE_4] * 4, spreads=[0.01, 0.01, 0.1, 0.01], min_gain_pct=15.0)
    assert ran == [1, 2, 4, 8]


def test_a_declining_component_stops_the_sweep_once_every_other_is_flat():
    declining = (8.0, 16.0, 32.0, 24.0, 18.0)
    ran, reason = sweep_host([KNEE_4, KNEE_4, KNEE_4, declining])
    assert ran == [1, 2, 4, 8]
    assert 'write OST0003 declined at thr 8: -25.0 % < -3 % from the best (thr 4)' in reason


def test_figures_per_component_and_without_them():
    tests, per_ost = host_point([10.0, 6.0], tests=('write',))
    assert adaptive.figures(tests, 2, components=per_ost) == {
        'write OST0000': {'value': 10.0, 'spread_pct': pytest.approx(1.0)},
        'write OST0001': {'value': 6.0, 'spread_pct': pytest.approx(1.0)}}
    # one component, or none recorded: the host's figure and its spread per component, as before
    host = {'write': {'value': 16.0, 'spread_pct': pytest.approx((10.1 - 5.94) / 2 / 8.0 * 100)}}
    assert adaptive.figures(tests, 2) == host
    assert adaptive.figures(tests, 2, components={'OST0000': per_ost['OST0000']}) == host
    # a component without a figure for a test, or a failed one, tells nothing at that point
    per_ost['OST0001'] = {'write': {'status': 'error', 'mib_s': None}}
    assert adaptive.figures(tests, 2, components=per_ost)['write OST0001'] == {'value': None, 'spread_pct': None}
    assert adaptive.figures(tests, 2, components={'OST0000': per_ost['OST0000'], 'OST0001': {}})[
        'write OST0001'] == {'value': None, 'spread_pct': None}
    # min/max of one of several parts of a component's figure (sgpdd: one sgp_dd instance of its regions)
    two_regions = {'a': {'write': {'status': 'ok', 'mib_s': 20.0, 'min_mib_s': 9.0, 'max_mib_s': 11.0}},
                   'b': {'write': {'status': 'ok', 'mib_s': 20.0, 'min_mib_s': 10.0, 'max_mib_s': 10.0}}}
    assert adaptive.figures(tests, 4, components=two_regions, component_scale=2)['write a'] == {
        'value': 20.0, 'spread_pct': pytest.approx(10.0)}
