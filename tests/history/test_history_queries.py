# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Asking the history from playbooks/history.yml: a small results directory imported, then list, compare, trend and
export, each printing its table and writing its file."""

from __future__ import annotations

import glob
import json
import os

import pytest

from history_env import ANSIBLE_PLAYBOOK
from test_history_playbooks import playbook

from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.history.helpers import store_run

RUN_1, RUN_2, RUN_3 = ('20261122T1%d0000Z-run%d' % (number, number) for number in range(1, 4))

pytestmark = pytest.mark.skipif(not os.access(ANSIBLE_PLAYBOOK, os.X_OK), reason='needs the checkout venv (make setup)')


def test_list_compare_trend_and_export_answer_on_the_console_and_in_files(database, results_dir, tmp_path):
    for number, (run_id, factor) in enumerate(((RUN_1, 1.0), (RUN_2, 1.0), (RUN_3, 0.5))):
        store_run(results_dir, run_id, number=number, factor=factor, surveys=('obdfilter',))
    base = {'history_from': results_dir, 'history_dest': str(tmp_path / 'answers')}
    if database.kind == 'postgresql':
        base['iokit_history_dsn'] = database.new_dsn()
    imported = playbook('history.yml', dict(base, history_action='import', history_tags={'quarter': '2026Q4'}))
    assert imported.returncode == 0, imported.stdout[-6000:]

    listed = playbook('history.yml', dict(base, history_action='list', history_period='20261122:20261123',
                                          history_tags={'quarter': '2026Q4'}))
    assert listed.returncode == 0, listed.stdout[-6000:]
    assert 'in 20261122:20261123 tagged quarter=2026Q4: 3' in listed.stdout, listed.stdout[-6000:]
    assert all(run_id in listed.stdout for run_id in (RUN_1, RUN_2, RUN_3))

    compared = playbook('history.yml', dict(base, history_action='compare', history_lhs=RUN_3,
                                            history_rhs='20261122T1000:20261122T1200'))
    assert compared.returncode == 0, compared.stdout[-6000:]
    assert '(1 run(s)) against 20261122T1000:20261122T1200 (2 run(s))' in compared.stdout, compared.stdout[-6000:]
    assert 'regression' in compared.stdout and '-50' in compared.stdout

    trended = playbook('history.yml', dict(base, history_action='trend', history_component='testfs-OST0000',
                                           history_metric='obdfilter_write_mib_s'))
    assert trended.returncode == 0, trended.stdout[-6000:]
    assert 'testfs-OST0000 obdfilter_write_mib_s over 3 run(s)' in trended.stdout, trended.stdout[-6000:]

    exported = playbook('history.yml', dict(base, history_action='export', history_selection='quarter=2026Q4'))
    assert exported.returncode == 0, exported.stdout[-6000:]
    answers = str(tmp_path / 'answers')
    for action in ('list', 'compare', 'trend', 'export'):
        assert len(glob.glob(os.path.join(answers, 'history-%s-*.txt' % action))) == 1, os.listdir(answers)
    (jsonl,) = glob.glob(os.path.join(answers, 'history-export-*.jsonl'))
    with open(jsonl, encoding='utf-8') as handle:
        rows = [json.loads(line) for line in handle]
    assert {row['run_id'] for row in rows} == {RUN_1, RUN_2, RUN_3}
    assert glob.glob(os.path.join(answers, 'history-export-*.csv'))


def test_a_bad_selection_fails_naming_the_variable(results_dir):
    store_run(results_dir, RUN_1, surveys=('obdfilter',))
    failed = playbook('history.yml', {'history_from': results_dir, 'history_action': 'compare',
                                      'history_lhs': RUN_1, 'history_rhs': 'lastweek:now'})
    assert failed.returncode != 0 and "history_rhs: 'lastweek' is not a time" in failed.stdout, failed.stdout[-6000:]
