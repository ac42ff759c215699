# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""history_judge: each component against the median of its own comparable earlier runs, a band of k robust deviations
and a minimum change, the right way round for each metric, never mixing runs of other survey variables."""

from __future__ import annotations

import decimal
import json

import pytest

from ansible_collections.lustre.iokit.plugins.plugin_utils.report import history_judge
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.history_judge import judge_history

POINT = {'rsz_kib': 1024, 'obj': 2, 'thr': 8}


def row(run_id, day, value, component='testfs-OST0000', metric='obdfilter_write_mib_s', point=None, iteration=1,
        params_hash='vars-1', direction='higher', kind='OST', survey='obdfilter', unit='MiB/s'):
    return {'run_id': run_id, 'finished': '2026-%02d-01T08:00:00Z' % day, 'survey': survey, 'params_hash': params_hash,
            'component_kind': kind, 'component_id': component, 'metric': metric, 'unit': unit,
            'direction': direction, 'point': dict(point or POINT), 'iteration': iteration, 'value': value}


def earlier_runs(values, **kwargs):
    """One row per earlier run, run ``r1`` first (January), ``r2`` a month later, ..."""
    return [row('r%d' % index, index, value, **kwargs) for index, value in enumerate(values, start=1)]


def now(value, **kwargs):
    return [row('now', 12, value, **kwargs)]


def test_the_baseline_is_the_median_of_the_earlier_runs_and_the_band_k_robust_deviations():
    # median 500, absolute deviations 40, 20, 0, 20, 40 -> MAD 20, sigma 29.652; 3 sigma is 88.956 (more than 10 %)
    result = judge_history(now(400.0), earlier_runs([460.0, 480.0, 500.0, 520.0, 540.0]))
    finding, = result['findings']
    assert finding['baseline'] == 500.0
    assert finding['sigma'] == pytest.approx(1.4826 * 20)
    assert (finding['band_low'], finding['band_high']) == (pytest.approx(500 - 3 * 29.652), pytest.approx(500 + 3 * 29.652))
    assert finding['change_pct'] == pytest.approx(-20.0)
    assert finding['kind'] == 'regression' and finding['status'] == 'regression'
    # the newest run first: the baseline's runs as the history gave them, newest to oldest
    assert finding['runs'] == ['r5', 'r4', 'r3', 'r2', 'r1']
    # inside the band, although more than the minimum change below the baseline: not a regression
    assert judge_history(now(440.0), earlier_runs([460.0, 480.0, 500.0, 520.0, 540.0]))['findings'] == []


def test_a_wide_band_is_narrowed_by_nothing_and_a_narrow_one_widened_to_the_minimum_change():
    noisy = earlier_runs([300.0, 400.0, 500.0, 600.0, 700.0])  # MAD 100: 3 sigma is 445
    assert judge_history(now(100.0), noisy)['findings'] == []
    steady = earlier_runs([500.0, 500.0, 500.0, 500.0, 500.0])  # MAD 0: the minimum change alone
    assert judge_history(now(460.0), steady)['findings'] == []  # -8 %
    regressed = judge_history(now(440.0), steady)['findings']  # -12 %
    assert [item['change_pct'] for item in regressed] == [pytest.approx(-12.0)]
    assert (regressed[0]['band_low'], regressed[0]['band_high']) == (450.0, 550.0)
    # at least the minimum change: exactly 10 % below is a regression, with a setting of 10
    assert len(judge_history(now(450.0), steady)['findings']) == 1
    assert judge_history(now(440.0), steady, min_change_pct=15.0)['findings'] == []


def test_direction_lower_is_better_is_the_mirror_image():
    history = earlier_runs([2.0, 2.0, 2.1, 1.9, 2.0], metric='open_latency_ms', direction='lower', unit='ms')
    slower = judge_history(now(3.0, metric='open_latency_ms', direction='lower', unit='ms'), history)
    finding, = slower['findings']
    assert finding['change_pct'] == pytest.approx(50.0) and finding['direction'] == 'lower'
    assert 'lower is better' in history_judge.finding_text(finding)
    faster = judge_history(now(1.0, metric='open_latency_ms', direction='lower', unit='ms'), history)
    assert faster['findings'] == [] and faster['components'][0]['status'] == 'improvement'
    # and a rate that doubled is an improvement, never a regression
    rate = judge_history(now(1000.0), earlier_runs([500.0, 500.0]))
    assert rate['findings'] == [] and rate['components'][0]['status'] == 'improvement'


def test_iterations_of_one_run_are_reduced_to_their_median_first():
    # Run r1's three iterations (100, 500, 510) count as 500, once: with a mean (370) or as three values the
    # baseline would move.
    earlier = [row('r1', 1, value, iteration=index) for index, value in enumerate((100.0, 500.0, 510.0), start=1)]
    earlier += earlier_runs([500.0, 500.0])[1:]
    current = [row('now', 12, value, iteration=index) for index, value in enumerate((300.0, 420.0, 900.0), start=1)]
    result = judge_history(current, earlier)
    finding, = result['findings']
    assert (finding['value'], finding['baseline']) == (420.0, 500.0)
    assert finding['runs'] == ['r2', 'r1']


def test_runs_of_other_survey_variables_are_named_not_mixed():
    earlier = earlier_runs([500.0, 500.0, 500.0])
    earlier += [row('r9', 11, 100.0, params_hash='vars-2')]  # newest, and much slower: other variables
    result = judge_history(now(480.0), earlier)
    assert result['findings'] == []
    assert result['components'][0]['history_peak'] == 500.0
    named, = result['incomparable_runs']
    assert (named['run_id'], named['survey'], named['params_hash']) == ('r9', 'obdfilter', 'vars-2')
    assert 'other obdfilter survey variables (params_hash vars-2, this run vars-1)' in named['reason']
    # a run the database sent no samples of is named as well
    others = [{'run_id': 'r0', 'finished': '2025-12-01T00:00:00Z', 'survey': 'obdfilter', 'params_hash': 'vars-0'},
              {'run_id': 'r3', 'finished': '2026-03-01T08:00:00Z', 'survey': 'obdfilter', 'params_hash': 'vars-1'}]
    named = judge_history(now(480.0), earlier, other_runs=others)['incomparable_runs']
    assert [item['run_id'] for item in named] == ['r0', 'r9']


def test_a_different_sweep_point_is_not_compared():
    result = judge_history(now(100.0), earlier_runs([500.0, 500.0], point={'rsz_kib': 1024, 'obj': 2, 'thr': 16}))
    assert result['findings'] == [] and result['judged'] == []
    assert result['not_judged'] == [{'survey': 'obdfilter', 'values': 1}]


def test_only_the_newest_runs_make_the_baseline_and_fewer_are_enough():
    # r1 and r2 were fast, the three newest slow: with runs=3 today's slow value is the norm.
    history = earlier_runs([1000.0, 1000.0, 500.0, 500.0, 500.0])
    assert judge_history(now(500.0), history, runs=3)['findings'] == []
    assert judge_history(now(500.0), history, runs=3)['judged'][0]['runs'] == ['r3', 'r4', 'r5']
    # fewer comparable runs than asked for: the baseline is made of those there are, and one is enough
    assert judge_history(now(250.0), history[:2], runs=5)['findings'][0]['runs'] == ['r2', 'r1']
    single = judge_history(now(450.0), history[:1])['findings']
    assert [(item['baseline'], item['runs']) for item in single] == [(1000.0, ['r1'])]


def test_without_history_there_is_no_finding():
    result = judge_history(now(10.0), [])
    assert (result['findings'], result['judged'], result['series'], result['fleet_series']) == ([], [], [], [])
    assert result['not_judged'] == [{'survey': 'obdfilter', 'values': 1}]
    empty = judge_history([], [])
    assert (empty['run_id'], empty['findings'], empty['not_judged']) == (None, [], [])


def test_runs_not_earlier_than_the_one_judged_never_make_its_baseline():
    later = [row('r13', 12, 100.0), row('now', 12, 100.0)]
    later[0]['finished'] = '2026-12-02T00:00:00Z'
    result = judge_history(now(500.0), earlier_runs([500.0]) + later)
    assert result['findings'] == [] and result['judged'][0]['runs'] == ['r1']
    assert {item['run_id']: item['reason'] for item in result['incomparable_runs']} == {
        'r13': 'finished at or after the run being judged', 'now': 'is the run being judged'}


def test_one_finding_per_component_its_worst_metric_first_every_regressed_metric_listed():
    before = {'obdfilter_write_mib_s': 500.0, 'obdfilter_read_mib_s': 600.0, 'obdfilter_rewrite_mib_s': 500.0}
    after = {'testfs-OST0000': {'obdfilter_write_mib_s': 400.0, 'obdfilter_read_mib_s': 300.0,   # -20 %, -50 %
                                'obdfilter_rewrite_mib_s': 495.0},                              # -1 %
             'testfs-OST0001': {'obdfilter_write_mib_s': 425.0, 'obdfilter_read_mib_s': 840.0,   # -15 %, +40 %
                                'obdfilter_rewrite_mib_s': 500.0}}
    earlier, current = [], []
    for component, values in after.items():
        for metric, value in values.items():
            earlier += earlier_runs([before[metric]] * 3, metric=metric, component=component)
            current += now(value, metric=metric, component=component)
    # a second sweep point at which OST0000's write lost less
    earlier += earlier_runs([500.0] * 3, point={'rsz_kib': 1024, 'obj': 2, 'thr': 16})
    current += now(440.0, point={'rsz_kib': 1024, 'obj': 2, 'thr': 16})
    result = judge_history(current, earlier)
    first, second = result['findings']
    assert (first['component_id'], first['metric'], first['change_pct']) == (
        'testfs-OST0000', 'obdfilter_read_mib_s', pytest.approx(-50.0))
    assert [(item['metric'], item['regressed_points'], item['judged_points']) for item in first['regressed']] == [
        ('obdfilter_read_mib_s', 1, 1), ('obdfilter_write_mib_s', 2, 2)]
    assert first['regressed'][1]['point_label'] == 'rsz 1024K obj 2 thr 8'  # the worse of its two points
    assert (second['component_id'], [item['metric'] for item in second['regressed']]) == (
        'testfs-OST0001', ['obdfilter_write_mib_s'])
    assert result['regressions'] == 3
    # "vs history": per component, survey and metric, its peak against the peak of its baselines
    vs = {(item['component_id'], item['metric']): item for item in result['components']}
    assert (vs[('testfs-OST0000', 'obdfilter_write_mib_s')]['peak'],
            vs[('testfs-OST0000', 'obdfilter_write_mib_s')]['history_peak']) == (440.0, 500.0)
    assert vs[('testfs-OST0000', 'obdfilter_write_mib_s')]['change_pct'] == pytest.approx(-12.0)
    assert vs[('testfs-OST0000', 'obdfilter_write_mib_s')]['status'] == 'regression'
    assert vs[('testfs-OST0001', 'obdfilter_read_mib_s')]['status'] == 'improvement'
    assert vs[('testfs-OST0000', 'obdfilter_rewrite_mib_s')]['status'] == 'within'


def test_series_for_the_trend_charts():
    history = earlier_runs([500.0, 510.0, 490.0], component='testfs-OST0000')
    history += earlier_runs([500.0, 500.0, 500.0], component='testfs-OST0001')
    current = now(250.0, component='testfs-OST0000') + now(505.0, component='testfs-OST0001')
    result = judge_history(current, history)
    series, = result['series']
    assert series['component_id'] == 'testfs-OST0000'
    assert [(point['run_id'], point['finished'], point['value']) for point in series['points']] == [
        ('r1', '2026-01-01T08:00:00Z', 500.0), ('r2', '2026-02-01T08:00:00Z', 510.0),
        ('r3', '2026-03-01T08:00:00Z', 490.0)]
    assert {(point['band_low'], point['band_high']) for point in series['points']} == {(450.0, 550.0)}
    assert series['current'] == {'run_id': 'now', 'finished': '2026-12-01T08:00:00Z', 'value': 250.0,
                                 'status': 'regression', 'baseline': 500.0, 'change_pct': -50.0, 'band_low': 450.0,
                                 'band_high': 550.0}
    fleet, = result['fleet_series']
    assert (fleet['component_kind'], fleet['metric'], fleet['components']) == ('OST', 'obdfilter_write_mib_s', 2)
    # the median of the two OSTs' peaks in each run
    assert [point['value'] for point in fleet['points']] == [500.0, 505.0, 495.0]
    assert fleet['current']['value'] == pytest.approx(377.5) and fleet['current']['status'] == 'regression'


@pytest.mark.parametrize('settings, words', [
    ({'runs': 0}, 'history runs must be a whole number of at least 1'),
    ({'runs': 2.5}, 'history runs must be a whole number'),
    ({'mad_k': -1}, 'history mad_k must be a number of at least 0'),
    ({'min_change_pct': float('nan')}, 'history min_change_pct must be a number of at least 0'),
])
def test_bad_settings_are_refused_by_name(settings, words):
    with pytest.raises(ValueError, match=words):
        judge_history(now(1.0), [], **settings)


@pytest.mark.parametrize('change, words', [
    ({'value': None}, 'value is not a finite number'),
    ({'direction': 'up'}, 'direction must be higher or lower'),
    ({'point': None}, 'unusable history row'),
])
def test_an_unusable_row_is_refused_naming_it(change, words):
    bad = dict(now(1.0)[0], **change)
    with pytest.raises(ValueError, match=words):
        judge_history([bad], [])
    missing = dict(now(1.0)[0])
    del missing['params_hash']
    with pytest.raises(ValueError, match="unusable history row .*'params_hash'"):
        judge_history([], [missing])


def test_the_current_rows_are_one_run():
    with pytest.raises(ValueError, match='must be of one run, got runs now, r1'):
        judge_history(now(1.0) + earlier_runs([1.0]), [])


def test_a_point_as_json_text_and_a_numeric_value_are_read_as_the_database_may_give_them():
    # keys in another order, as text, and a Decimal from a NUMERIC column: the same point, the same number
    earlier = earlier_runs([500.0, 500.0, 500.0])
    for item in earlier:
        item['point'] = json.dumps({'thr': 8, 'obj': 2, 'rsz_kib': 1024})
        item['value'] = decimal.Decimal('500.0')
    finding, = judge_history(now(250), earlier)['findings']
    assert (finding['value'], finding['baseline'], finding['point']) == (250.0, 500.0, POINT)


# -- the compact shape (History.judging_values) -----------------------------------------------------------------


def compact(current, earlier, other_runs=()):
    """Rows in History.judging_values' shape: a series per survey, component, metric and point of the current run,
    one value per run (a list when it has several), only the series of the current run read from the earlier ones."""
    series, values = {}, {}
    for item in current:
        name = (item['survey'], item['component_kind'], item['component_id'], item['metric'],
                json.dumps(item['point'], sort_keys=True))
        series.setdefault(name, (item['survey'], item['component_kind'], item['component_id'], item['metric'],
                                 item['unit'], item['direction'], name[4], item.get('host'), item.get('target')))
        values.setdefault(name, []).append(item['value'])
    by_run = {}
    for item in earlier:
        name = (item['survey'], item['component_kind'], item['component_id'], item['metric'],
                json.dumps(item['point'], sort_keys=True))
        if name in series:
            run = by_run.setdefault((item['run_id'], item['survey'], item['params_hash']), {
                'run_id': item['run_id'], 'finished': item['finished'], 'survey': item['survey'],
                'params_hash': item['params_hash'], 'values': {}})
            run['values'].setdefault(name, []).append(item['value'])

    def single(by_series):
        return {name: found[0] if len(found) == 1 else found for name, found in by_series.items()}

    for run in by_run.values():
        run['values'] = single(run['values'])
    return {'run_id': current[0]['run_id'] if current else None, 'finished': current[0]['finished'] if current else None,
            'hashes': {item['survey']: item['params_hash'] for item in current}, 'series': series,
            'current': single(values), 'earlier': list(by_run.values()), 'other_runs': list(other_runs)}


def fleet_history(seed):
    """Twelve components (OSTs and hosts) with a rate and a latency at three points over eight earlier runs: random
    values, a few missing, some measured three times, one run with other survey variables, then a run between half
    and 1.3 times its history."""
    import random  # pylint: disable=import-outside-toplevel
    rng = random.Random(seed)
    components = [('OST', 'testfs-OST%04d' % number) for number in range(8)] + [('host', 'oss%d' % n) for n in (1, 2, 3, 4)]
    metrics = [('obdfilter_write_mib_s', 'higher', 'MiB/s'), ('open_latency_ms', 'lower', 'ms')]
    points = [{'rsz_kib': 1024, 'obj': 2, 'thr': thr} for thr in (4, 8, 16)]
    earlier, current = [], []
    for kind, component in components:
        for metric, direction, unit in metrics:
            for point in points:
                level = rng.uniform(100.0, 1000.0)
                for day in range(1, 9):
                    if rng.random() < 0.1:
                        continue
                    for iteration in range(1, 4 if rng.random() < 0.2 else 2):
                        earlier.append(row('r%d' % day, day, level * rng.uniform(0.9, 1.1), component, metric, point,
                                           iteration, 'vars-2' if day == 7 else 'vars-1', direction, kind,
                                           unit=unit))
                current.append(dict(row('now', 12, level * rng.uniform(0.5, 1.3), component, metric, point,
                                        direction=direction, kind=kind, unit=unit), host='oss1', target=component))
    return current, earlier


@pytest.mark.parametrize('seed', [1, 2, 3])
def test_the_compact_shape_gives_the_judgment_of_the_rows(seed):
    current, earlier = fleet_history(seed)
    others = [{'run_id': 'r0', 'finished': '2025-12-01T08:00:00Z', 'survey': 'obdfilter', 'params_hash': 'vars-0'}]
    by_rows = judge_history(current, earlier, runs=5, other_runs=others)
    assert history_judge.judge_history_values(compact(current, earlier, others), runs=5) == by_rows
    assert by_rows['findings'] and by_rows['regressions'] > 0
    # and each point as judge_value judges it alone against the medians of its newest five comparable runs
    expected = {}
    for item in current:
        runs = {}
        for before in earlier:
            if (before['component_id'], before['metric'], before['point']) == (
                    item['component_id'], item['metric'], item['point']) and before['params_hash'] == 'vars-1':
                runs.setdefault(before['run_id'], []).append(before['value'])
        newest = sorted(runs, key=lambda run_id: int(run_id[1:]), reverse=True)[:5]
        verdict = history_judge.judge_value(item['value'], [sorted(runs[run_id])[len(runs[run_id]) // 2]
                                                            for run_id in newest],
                                            item['direction'], history_judge.Settings())
        key = (item['component_id'], item['metric'])
        expected[key] = expected.get(key, 0) + (verdict['status'] == 'regression')
    assert {(item['component_id'], item['metric']): item['regressed_points'] for item in by_rows['judged']} == expected


@pytest.mark.parametrize('seed', [4, 5])
@pytest.mark.parametrize('runs', [1, 2, 5])
def test_gaps_reach_back_to_older_runs_and_a_component_without_history_is_not_judged(seed, runs):
    """The judgment works run by run (a column of values per run): a value the newest runs lack is judged against
    the newest runs that have it, a component no earlier run measured is counted as not judged; each point, its
    component's peaks and the fleet's as judge_value and the medians give them one by one."""
    current, earlier = fleet_history(seed)
    earlier = [item for item in earlier if item['component_id'] != 'testfs-OST0001'
               and not (item['run_id'] in ('r8', 'r6') and item['metric'] == 'open_latency_ms')]
    by_rows = judge_history(current, earlier, runs=runs)
    assert history_judge.judge_history_values(compact(current, earlier), runs=runs) == by_rows
    assert by_rows['not_judged'] == [{'survey': 'obdfilter', 'values': 6}]
    assert 'testfs-OST0001' not in {item['component_id'] for item in by_rows['judged']}
    settings = history_judge.Settings(runs=runs)
    regressed, peaks, used = {}, {}, {}
    for item in current:
        values = {}
        for before in earlier:
            if (before['component_id'], before['metric'], before['point']) == (
                    item['component_id'], item['metric'], item['point']) and before['params_hash'] == 'vars-1':
                values.setdefault(before['run_id'], []).append(before['value'])
        newest = sorted(values, key=lambda run_id: int(run_id[1:]), reverse=True)[:runs]
        if not newest:
            continue
        medians = [history_judge.judge_value(0.0, found, 'higher', settings)['baseline']
                   for found in (values[run_id] for run_id in newest)]
        verdict = history_judge.judge_value(item['value'], medians, item['direction'], settings)
        key = (item['component_id'], item['metric'])
        regressed[key] = regressed.get(key, 0) + (verdict['status'] == 'regression')
        best = min if item['direction'] == 'lower' else max
        peak, history_peak = peaks.get(key, (item['value'], verdict['baseline']))
        peaks[key] = (best(peak, item['value']), best(history_peak, verdict['baseline']))
        used.setdefault(key, set()).update(newest)
    assert {(item['component_id'], item['metric']): item['regressed_points'] for item in by_rows['judged']} == regressed
    assert {(item['component_id'], item['metric']): sorted(item['runs']) for item in by_rows['judged']} == \
        {key: sorted(found) for key, found in used.items()}
    assert {(item['component_id'], item['metric']): (item['peak'], item['history_peak'])
            for item in by_rows['components']} == peaks
    # the latency's newest comparable runs lack it (r8, r6; r7 has other survey variables): older ones stand in
    latency_runs = {run_id for item in by_rows['judged'] if item['metric'] == 'open_latency_ms' for run_id in item['runs']}
    assert latency_runs and not latency_runs & {'r6', 'r7', 'r8'}


def test_the_compact_shape_refuses_what_the_rows_refuse():
    current = now(1.0)
    earlier = earlier_runs([float('nan')])
    with pytest.raises(ValueError, match='finite'):
        history_judge.judge_history_values(compact(current, earlier))
    with pytest.raises(ValueError, match='direction'):
        history_judge.judge_history_values(compact(now(1.0, direction='sideways'), []))
    assert history_judge.judge_history_values(compact([], [])) == judge_history([], [])
