# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Peaks, outliers, saturation, layer efficiency and repeat statistics on known numbers."""

from __future__ import annotations

import statistics

import pytest

from ansible_collections.lustre.iokit.plugins.plugin_utils.report import analysis
from ansible_collections.lustre.iokit.plugins.module_utils.sample_extraction import make_point
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.samples import Sample, as_samples

from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.report.helpers import (
    envelope, obdfilter_sweep, sgpdd_sweep)


def _sample(host, value, thr=8, target=None, metric='obdfilter_write_mib_s', survey='obdfilter', iteration=1, obj=1):
    return Sample('run1', survey, metric.split('_')[1], metric, float(value), 'MiB/s', host, target,
                  make_point({'obj': obj, 'thr': thr}), iteration, 'ok')


def test_outlier_is_the_slow_host_with_median_and_mad(fleet_envelopes):
    found = analysis.outliers(as_samples(fleet_envelopes))
    subjects = {(row['subject'], row['metric']) for row in found}
    # oss3 runs at half speed; in the manual's ost-survey output OST0003 writes at 17.7 MiB/s against ~120.
    assert subjects == {('oss3', 'obdfilter_write_mib_s'), ('oss3', 'obdfilter_read_mib_s'),
                        ('client1/testfs-OST0003', 'ost_write_mib_s')}
    row = next(r for r in found if r['metric'] == 'obdfilter_write_mib_s' and r['point_label'] == 'rsz 1024K obj 1 thr 8')
    assert row['value'] == 500.0
    assert row['median'] == statistics.median([1000.0, 1020.0, 500.0, 980.0])
    assert row['mad'] == statistics.median([abs(v - 990.0) for v in (1000.0, 1020.0, 500.0, 980.0)])
    assert row['direction'] == 'low' and row['deviation_pct'] == pytest.approx(100 * (500 - 990) / 990)
    assert row['robust_z'] == pytest.approx((500 - 990) / (1.4826 * 20))


def test_outlier_threshold_min_peers_and_min_deviation():
    # twelve peers: enough for the robust z-score, which flags d at 90 % of the median (above the slow share)
    samples = [_sample(h + str(i), v) for i in range(4) for h, v in (('a', 100), ('b', 101), ('c', 99))]
    samples.append(_sample('d', 90))
    assert [r['subject'] for r in analysis.outliers(samples)] == ['d']
    assert analysis.outliers(samples, threshold=50) == []
    assert analysis.outliers(samples, min_peers=14) == []
    assert analysis.outliers(samples, min_deviation_pct=15) == []
    with pytest.raises(ValueError, match='threshold'):
        analysis.outliers(samples, threshold=0)


def test_identical_peers_flag_any_value_far_enough_from_them():
    samples = [_sample(h, 100) for h in 'abcd'] + [_sample('e', 79), _sample('f', 97)]
    found = analysis.outliers(samples)
    assert [(r['subject'], r['robust_z']) for r in found] == [('e', None)]


def test_outliers_compare_only_the_same_sweep_point():
    samples = [_sample(h, 100, thr=1) for h in 'abc'] + [_sample(h, 400, thr=8) for h in 'abc']
    assert analysis.outliers(samples) == []


def test_peaks_take_the_mean_of_repeats():
    samples = [_sample('a', 100, thr=1), _sample('a', 300, thr=8, iteration=1), _sample('a', 100, thr=8, iteration=2)]
    (row,) = analysis.peaks(samples)
    assert row['value'] == 200.0 and row['point'] == {'obj': 1, 'thr': 8} and row['points'] == 2


def test_saturation_finds_the_fewest_threads_reaching_the_share():
    values = {1: 100, 2: 190, 4: 350, 8: 390, 16: 400}
    samples = [_sample('a', v, thr=t) for t, v in values.items()]
    (row,) = analysis.saturation(samples, share=0.85)
    assert (row['peak'], row['peak_thr'], row['saturation_thr'], row['saturation_value']) == (400, 16, 4, 350)
    assert row['saturated'] is True and row['series'] == {'obj': 1}
    (row,) = analysis.saturation(samples, share=1.0)
    assert row['saturation_thr'] == 16 and row['saturated'] is False
    with pytest.raises(ValueError, match='share'):
        analysis.saturation(samples, share=0)


def test_saturation_has_one_row_per_curve():
    samples = [_sample('a', 10 * t * o, thr=t, obj=o) for o in (1, 2) for t in (2, 4)]
    assert [row['series_label'] for row in analysis.saturation(samples)] == ['obj 1', 'obj 2']


def test_layer_efficiency_adds_the_targets_of_a_host_at_each_point():
    records = obdfilter_sweep(0.45, targets=['testfs-OST0000', 'testfs-OST0001'])
    samples = as_samples([envelope('oss1', 'obdfilter', records), envelope('oss1', 'sgpdd', sgpdd_sweep(1000, 1000))])
    rows = {row['test']: row for row in analysis.layer_efficiency(samples)}
    # Two OSTs at 450 MiB/s write together: 900 MiB/s against 1000 MiB/s of raw device.
    assert rows['write']['upper_mib_s'] == pytest.approx(900.0)
    assert rows['write']['lower_mib_s'] == 1000.0
    assert rows['write']['ratio'] == pytest.approx(0.9) and rows['write']['status'] == 'ok'
    assert rows['read']['ratio'] == pytest.approx(1.08) and rows['read']['status'] == 'ok'
    low = analysis.layer_efficiency(samples, expected=(0.95, 1.0))
    assert {row['test']: row['status'] for row in low} == {'write': 'low', 'read': 'ok'}


def test_layer_efficiency_needs_both_surveys_on_the_host():
    samples = as_samples([envelope('oss1', 'obdfilter', obdfilter_sweep()), envelope('oss2', 'sgpdd', sgpdd_sweep())])
    assert analysis.layer_efficiency(samples) == []


def test_repeat_statistics():
    samples = [_sample('a', v, iteration=i) for i, v in enumerate((90, 100, 110), start=1)] + [_sample('a', 5, thr=1)]
    (row,) = analysis.repeat_stats(samples)
    assert (row['n'], row['mean'], row['min'], row['max']) == (3, 100.0, 90.0, 110.0)
    assert row['stddev'] == pytest.approx(10.0) and row['cv_pct'] == pytest.approx(10.0)
