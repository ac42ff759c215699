# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""survey_plan: a plan added up per host, timed from the host's last ok run in the store, else from the assumed rate."""

from __future__ import annotations

import pytest

MIB = 1024 * 1024
RUN_ID = '20261124T080000Z-0001'

# An obdfilter plan on two OSTs: three points to run and one the module skips; the OSTs run side by side.
PLAN = {
    'points': [{'obj': 1, 'thr': 1, 'skip': None}, {'obj': 1, 'thr': 2, 'skip': None},
               {'obj': 1, 'thr': 4, 'skip': None}, {'obj': 1, 'thr': 8, 'skip': 'above thrhi'}],
    'per_ost': {'testfs-OST0000': {'bytes_written': 10000 * MIB, 'bytes_read': 5000 * MIB},
                'testfs-OST0001': {'bytes_written': 6000 * MIB, 'bytes_read': 0}},
}


def plan_for(run_action, args, host='oss1'):
    return run_action('survey_plan', dict({'survey': 'obdfilter', 'plan': PLAN}, **args),
                      task_vars={'inventory_hostname': host})


def test_a_plan_is_added_up_and_timed_by_its_busiest_ost_at_the_assumed_rate(run_action):
    result = plan_for(run_action, {})
    estimate = result['estimate']
    assert (estimate['points'], estimate['bytes_written'], estimate['bytes_read']) == (3, 16000 * MIB, 5000 * MIB)
    # 15000 MiB on OST0000 at the built-in 500 MiB/s per OST
    assert estimate['estimated_duration_s'] == 30.0
    assert estimate['estimate_basis'] == 'assumed 500 MiB/s per OST (built-in guess)'
    assert result['entry'] == {'survey': 'obdfilter', 'host': 'oss1', 'estimate': estimate}
    assert result['msg'].startswith('oss1: 3 points, 15.6 GiB written, ')
    assert result['msg'].endswith('(assumed 500 MiB/s per OST (built-in guess))')
    assert result['changed'] is False


def test_the_modules_own_estimate_is_kept_when_nothing_was_measured(tmp_path, run_action):
    own = {'points': 3, 'bytes_written': 1, 'bytes_read': 0, 'estimated_duration_s': 7.0,
           'estimate_basis': 'assumed 50 MiB/s per OST (plan_ost_mib_s)'}
    result = run_action('survey_plan', {'survey': 'obdfilter', 'plan': dict(PLAN, estimate=own),
                                        'results_dir': str(tmp_path / 'empty-store'), 'run_id': RUN_ID},
                        task_vars={'inventory_hostname': 'oss1'})
    assert result['estimate'] == own


@pytest.fixture
def stored_run(tmp_path, run_action, make_envelope):
    """``store(run_id, host, status)``: an earlier obdfilter run of 3000 MiB per OST in 60 s, stored by store_result."""
    store = tmp_path / 'store'

    def put(run_id, host='oss1', status='ok'):
        envelope = make_envelope(run_id=run_id, host=host, status=status,
                                 plan_work={'points': 3, 'amount': 3000.0, 'unit': 'MiB per OST'})
        run_action('store_result', {'envelope': envelope, 'results_dir': str(store), 'fetch_raw_output': False},
                   task_vars={'inventory_hostname': host})
        return store
    return put


def test_the_hosts_last_ok_run_in_the_store_gives_the_rate(stored_run, run_action):
    store = stored_run('20261122T101500Z-3f2a')
    estimate = plan_for(run_action, {'results_dir': str(store), 'run_id': RUN_ID})['estimate']
    # the stored run: 3000 MiB per OST in its 60 s, 50 MiB/s; this plan's 15000 MiB then take 300 s
    assert estimate['source'] == 'stored run' and estimate['rate'] == 50.0
    assert estimate['estimated_duration_s'] == 300.0
    assert estimate['estimate_basis'] == 'from run 20261122T101500Z-3f2a of 2026-11-23 (50 MiB/s per OST measured)'
    assert estimate['measured_run']['run_id'] == '20261122T101500Z-3f2a'


def test_another_hosts_run_a_partial_run_and_the_run_being_planned_are_not_measured_from(stored_run, run_action):
    stored_run('20261122T101500Z-3f2a', host='oss2')
    stored_run('20261123T101500Z-aaaa', status='partial')
    store = stored_run(RUN_ID)
    estimate = plan_for(run_action, {'results_dir': str(store), 'run_id': RUN_ID})['estimate']
    assert estimate['source'] == 'assumed' and estimate['estimated_duration_s'] == 30.0
    # the host option names whose runs count
    named = plan_for(run_action, {'results_dir': str(store), 'run_id': RUN_ID, 'host': 'oss2'})
    assert named['estimate']['source'] == 'stored run' and named['entry']['host'] == 'oss2'


def test_without_a_host_it_fails(action_fails):
    message = action_fails('survey_plan', {'survey': 'obdfilter', 'plan': PLAN})
    assert message == 'host: no host given and no inventory_hostname'


def test_an_unknown_survey_is_refused_with_the_choices(action_fails):
    message = action_fails('survey_plan', {'survey': 'iozone', 'plan': PLAN}, task_vars={'inventory_hostname': 'oss1'})
    assert 'iozone' in message and 'obdfilter' in message
