# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Comparing runs and baselines."""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.lustre.iokit.plugins.plugin_utils.report import compare
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.samples import as_samples

from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.report.helpers import envelope, obdfilter_sweep


def _run(run_id, factors):
    return as_samples([envelope(host, 'obdfilter', obdfilter_sweep(factor), run_id=run_id)
                       for host, factor in factors.items()])


def test_delta_and_status_per_subject():
    before = _run('run-a', {'oss1': 1.0, 'oss2': 1.0, 'oss3': 1.0, 'gone': 1.0})
    after = _run('run-b', {'oss1': 1.03, 'oss2': 0.8, 'oss3': 1.2, 'added': 1.0})
    rows = {(r['subject'], r['metric']): r for r in compare.compare_runs(after, before, tolerance_pct=5)}
    assert rows[('oss1', 'obdfilter_write_mib_s')]['status'] == 'within'
    assert rows[('oss1', 'obdfilter_write_mib_s')]['delta_pct'] == pytest.approx(3.0)
    assert rows[('oss2', 'obdfilter_write_mib_s')]['status'] == 'regression'
    assert rows[('oss2', 'obdfilter_write_mib_s')]['delta_pct'] == pytest.approx(-20.0)
    assert rows[('oss3', 'obdfilter_read_mib_s')]['status'] == 'improvement'
    assert rows[('gone', 'obdfilter_write_mib_s')]['status'] == 'missing'
    assert rows[('added', 'obdfilter_write_mib_s')]['status'] == 'new'
    assert {r['current_run_id'] for r in rows.values()} == {'run-b'}
    assert {r['reference_run_id'] for r in rows.values()} == {'run-a'}


def test_a_hand_edited_baseline_yaml_compares_like_the_run():
    before = _run('run-a', {'oss1': 1.0, 'oss2': 1.0})
    baseline = compare.make_baseline(before, created='2026-11-23T08:00:00Z')
    text = compare.baseline_yaml(baseline, '# edited by hand\n')
    loaded = yaml.safe_load(text)
    assert loaded == baseline
    assert compare.compare_runs(before, loaded) == compare.compare_runs(before, before)
    # Lower one value by hand: that subject is now an improvement of 25%.
    for entry in loaded['values']:
        if entry['host'] == 'oss2' and entry['metric'] == 'obdfilter_write_mib_s':
            entry['value'] = 800.0
    rows = {(r['subject'], r['metric']): r for r in compare.compare_runs(before, loaded)}
    assert rows[('oss2', 'obdfilter_write_mib_s')]['delta_pct'] == pytest.approx(25.0)
    assert rows[('oss2', 'obdfilter_write_mib_s')]['reference_run_id'] == 'run-a'


@pytest.mark.parametrize('baseline, message', [
    ({'values': 'x'}, 'values'),
    ({'schema': 'other/v9', 'values': []}, 'schema'),
    ({'values': [{'survey': 'obdfilter', 'metric': 'm', 'host': 'h'}]}, r'values\[0\] lacks value'),
    ({'values': [{'survey': 'obdfilter', 'metric': 'm', 'host': 'h', 'value': 'fast'}]}, 'must be a number'),
    ({'values': ['x']}, 'mapping'),
])
def test_bad_baselines_are_named(baseline, message):
    with pytest.raises(compare.BaselineError, match=message):
        compare.compare_runs([], baseline)


def test_negative_tolerance_is_refused():
    with pytest.raises(ValueError, match='tolerance'):
        compare.compare_runs([], [], tolerance_pct=-1)
