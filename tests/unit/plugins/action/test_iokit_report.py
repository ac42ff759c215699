# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""iokit_report: the report files of a stored run, a verdict that fails for what is missing or too slow, bad settings
refused by name."""

from __future__ import annotations

import json
import os
import sys
import types

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils.parsers.catalog import PARSERS
from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.report.helpers import history_rows, lnet_nodes

RUN_ID = '20261122T101500Z-3f2a'
FIXTURE = os.path.join(os.path.dirname(__file__), '..', 'module_utils', 'parsers', 'fixtures', 'obdfilter_survey',
                       'manual_example_output.txt')
REPORT_FILES = ('report.json', 'results.csv', 'analysis.json', 'summary.md', 'report.html')


def example_records():
    """The obdfilter-survey manual's example, as the parser reads it: write 10982.73 MiB/s at its one point."""
    with open(FIXTURE, encoding='utf-8') as handle:
        return PARSERS['obdfilter_survey'](handle.read())


@pytest.fixture
def store(tmp_path, run_action, make_envelope):
    """A run of obdfilter on oss1 and oss2, stored by store_result."""
    directory = tmp_path / 'store'
    for host in ('oss1', 'oss2'):
        run_action('store_result', {'envelope': make_envelope(host=host, records=example_records()),
                                    'results_dir': str(directory), 'fetch_raw_output': False},
                   task_vars={'inventory_hostname': host})
    return directory


def report(run_action, store, **args):
    return run_action('iokit_report', dict({'results_dir': str(store), 'run_id': RUN_ID}, **args))


def test_the_report_files_are_written_in_the_runs_directory(store, run_action):
    result = report(run_action, store)
    run_dir = store / RUN_ID
    assert result['changed'] is True and result['run_dir'] == str(run_dir)
    assert (result['hosts'], result['surveys'], result['envelopes']) == (['oss1', 'oss2'], ['obdfilter'], 2)
    for name in REPORT_FILES:
        assert (run_dir / name).is_file() and (run_dir / name).stat().st_size > 0
    assert sorted(result['files'].values()) == sorted(str(run_dir / name) for name in REPORT_FILES)
    # No criteria: no verdict, and no verdict file that could be read as one.
    assert result['verdict'] is None and not (run_dir / 'verdict.json').exists()
    assert 'oss2' in (run_dir / 'report.html').read_text()


def test_an_expected_host_without_a_result_fails_the_verdict_by_name(store, run_action):
    complete = report(run_action, store, default_criteria=True, expected={'obdfilter': ['oss1', 'oss2']})
    assert complete['verdict'] == 'passed' and complete['failures'] == []
    missing = report(run_action, store, default_criteria=True, expected={'obdfilter': ['oss1', 'oss2', 'oss3']})
    assert missing['verdict'] == 'failed'
    assert missing['failures'] == ['obdfilter on oss3: no result in the run directory (run %s)' % RUN_ID]
    with open(missing['files']['verdict'], encoding='utf-8') as handle:
        assert json.load(handle)['verdict'] == 'failed'


def test_a_floor_passes_below_the_measured_rate_and_fails_above_it(store, run_action):
    below = report(run_action, store, criteria={'floors': [{'metric': 'obdfilter_write_mib_s', 'min': 10000}]})
    assert below['verdict'] == 'passed'
    above = report(run_action, store, criteria={'floors': [{'metric': 'obdfilter_write_mib_s', 'min': 11000}]})
    assert above['verdict'] == 'failed' and len(above['failures']) == 2
    assert all('obdfilter_write_mib_s' in failure for failure in above['failures'])


def test_a_corrupt_result_file_is_named_not_skipped(store, run_action):
    (store / RUN_ID / 'oss3').mkdir()
    (store / RUN_ID / 'oss3' / 'obdfilter.json').write_text('{"half": ')
    result = report(run_action, store)
    assert result['envelopes'] == 2
    # named relative to the run's directory, with what is wrong
    assert [item['path'] for item in result['unreadable']] == ['oss3/obdfilter.json']
    assert result['unreadable'][0]['problems'][0].startswith('not valid JSON')


def test_a_run_that_was_never_stored_is_refused(tmp_path, action_fails):
    message = action_fails('iokit_report', {'results_dir': str(tmp_path), 'run_id': RUN_ID})
    assert message == ('run directory %s does not exist: no result of run %s is stored in %s'
                       % (tmp_path / RUN_ID, RUN_ID, tmp_path))


@pytest.mark.parametrize('args, words', [
    ({'run_id': '../x'}, ['run_id must not contain ".."']),
    ({'options': {'outlier_treshold': 2}}, ['options: unknown key(s) outlier_treshold', 'outlier_threshold']),
    ({'options': {'outlier_threshold': 'high'}}, ["options.outlier_threshold: 'high' is not valid"]),
    ({'options': {'efficiency_expected': [0.8]}}, ['options.efficiency_expected', 'two numbers expected']),
    ({'expected': {'obdfilter': 'oss1'}}, ["expected.obdfilter must be a list of host names, got 'oss1'"]),
    ({'compare_run_id': '20261101T000000Z-0000'}, ['run 20261101T000000Z-0000 has no samples to compare with']),
    ({'nid_owners': {'192.0.2.12@tcp': ['oss2']}}, ['nid_owners must map each NID to the host that owns it']),
    ({'ost_luns': {'testfs-OST0000': 'oss1:/dev/sdb'}}, ['ost_luns.testfs-OST0000: each LUN must be a [host, device]']),
])
def test_bad_settings_are_refused_by_name_before_anything_is_written(store, args, words, action_fails):
    message = action_fails('iokit_report', dict({'results_dir': str(store), 'run_id': RUN_ID}, **args))
    for word in words:
        assert word in message
    assert not (store / RUN_ID / 'report.html').exists()


def test_bad_criteria_are_refused_with_the_criterions_name(store, action_fails):
    message = action_fails('iokit_report', {'results_dir': str(store), 'run_id': RUN_ID,
                                            'criteria': {'floors': [{'metric': 'obdfilter_write_mib_s'}]}})
    assert 'floors' in message
    assert not (store / RUN_ID / 'report.html').exists()


def store_lnet_run_with_a_slow_server_nid(directory, run_action, make_envelope):
    """An lnet run of client1 in which server NID 192.0.2.12@tcp is slow."""
    servers = {'192.0.2.11@tcp': 1.0, '192.0.2.12@tcp': 0.3, '192.0.2.13@tcp': 1.0}
    records = lnet_nodes(servers, {'192.0.2.21@tcp': 1.0, '192.0.2.22@tcp': 1.0, '192.0.2.23@tcp': 1.0})
    run_action('store_result', {'envelope': make_envelope(host='client1', survey='lnet', records=records),
                                'results_dir': str(directory), 'fetch_raw_output': False},
               task_vars={'inventory_hostname': 'client1'})


def test_the_nid_owners_name_a_slow_nids_node_in_the_diagnosed_components(tmp_path, run_action, make_envelope):
    store_lnet_run_with_a_slow_server_nid(tmp_path, run_action, make_envelope)
    owners = {'192.0.2.11@tcp': 'oss1', '192.0.2.12@tcp': 'oss2', '192.0.2.13@tcp': 'oss3'}
    result = report(run_action, tmp_path, nid_owners=owners, ost_luns={'testfs-OST0000': [['oss1', '/dev/sdb']]})
    components = json.loads((tmp_path / RUN_ID / 'analysis.json').read_text())['components']
    assert [(item['kind'], item['name'], item['node']) for item in components] == [('NID', '192.0.2.12@tcp', 'oss2')]
    # One line per weak component, naming the node that owns the NID; the per-row sentences keep the console's subject.
    assert result['findings'] == [components[0]['text']]
    assert result['findings'][0].startswith('192.0.2.12@tcp (oss2): slow in the LNet self-test -> the NIC or link of oss2')
    assert result['metric_findings'] and all('client1/192.0.2.12@tcp' in line for line in result['metric_findings'])


def test_the_nids_and_luns_registered_on_the_hosts_are_read_and_the_given_ones_win(tmp_path, run_action, make_envelope):
    store_lnet_run_with_a_slow_server_nid(tmp_path, run_action, make_envelope)
    # What the lnet role (lnet_host_nid) and the report role's target_devices entry point leave on each host.
    hostvars = {'oss1': {'lnet_host_nid': '192.0.2.11@tcp',
                         'report_target_devices': {'osts': [{'name': 'testfs-OST0000', 'mount_device': '/dev/sdb'}]}},
                'oss2': {'lnet_host_nid': '192.0.2.12@tcp'},
                'client1': {}}
    task_vars = {'hostvars': hostvars, 'groups': {'all': sorted(hostvars)}, 'inventory_hostname': 'client1'}
    run_action('iokit_report', {'results_dir': str(tmp_path), 'run_id': RUN_ID, 'target_device_hosts': ['oss1']},
               task_vars=task_vars)
    components = json.loads((tmp_path / RUN_ID / 'analysis.json').read_text())['components']
    assert [(item['kind'], item['name'], item['node']) for item in components] == [('NID', '192.0.2.12@tcp', 'oss2')]
    # A NID given by the user wins over the fact.
    run_action('iokit_report', {'results_dir': str(tmp_path), 'run_id': RUN_ID,
                                'nid_owners': {'192.0.2.12@tcp': 'oss9'}}, task_vars=task_vars)
    components = json.loads((tmp_path / RUN_ID / 'analysis.json').read_text())['components']
    assert [(item['kind'], item['name'], item['node']) for item in components] == [('NID', '192.0.2.12@tcp', 'oss9')]


def test_each_targets_mount_devices_come_from_the_servers_read_and_a_given_target_wins():
    from ansible_collections.lustre.iokit.plugins.action.iokit_report import _target_luns
    hostvars = {'oss1': {'report_target_devices': {'osts': [{'name': 'testfs-OST0000', 'mount_device': '/dev/sdb'},
                                                            {'name': 'testfs-OST0001', 'mount_device': None}],
                                                   'mdts': [{'name': 'testfs-MDT0000', 'mount_device': '/dev/sdd'}]}},
                'oss2': {'report_target_devices': {'osts': [{'name': 'testfs-OST0000', 'mount_device': '/dev/sdc'}]}},
                'oss3': {}}
    assert _target_luns(hostvars, ['oss1', 'oss2', 'oss3', 'gone'], None) == {
        'testfs-OST0000': [['oss1', '/dev/sdb'], ['oss2', '/dev/sdc']], 'testfs-MDT0000': [['oss1', '/dev/sdd']]}
    assert _target_luns(hostvars, ['oss1'], {'testfs-OST0000': [['oss7', '/dev/sdz']]})['testfs-OST0000'] == [
        ['oss7', '/dev/sdz']]
    assert _target_luns(hostvars, [], None) == {}


HISTORY_PACKAGE = 'ansible_collections.lustre.iokit.plugins.plugin_utils.history'


@pytest.fixture
def history_database(monkeypatch):
    """A stand-in for the history package's ``load_history_rows``: returns ``rows`` and records every call."""
    database = types.SimpleNamespace(rows={'current': [], 'earlier': []}, calls=[], results_dirs=[], error=None)

    def load_history_rows(dsn, run_id, runs, results_dir=None):
        database.calls.append((dsn, run_id, runs))
        database.results_dirs.append(results_dir)
        if database.error:
            raise database.error
        return database.rows

    module = types.ModuleType(HISTORY_PACKAGE + '.judging_rows')
    module.load_history_rows = load_history_rows
    # the action reads the compact shape; the report judges rows as well, and the same
    module.load_history_values = load_history_rows
    monkeypatch.setitem(sys.modules, HISTORY_PACKAGE, types.ModuleType(HISTORY_PACKAGE))
    monkeypatch.setitem(sys.modules, HISTORY_PACKAGE + '.judging_rows', module)
    return database


def test_history_is_read_only_when_asked_for(store, run_action, history_database):
    history_database.error = AssertionError('the history was read without history_compare')
    result = report(run_action, store)
    assert result['history'] is None and history_database.calls == []


def test_a_host_slower_than_its_history_fails_the_verdict(store, run_action, history_database):
    from ansible_collections.lustre.iokit.plugins.plugin_utils.report.run import load_run

    current = history_rows(load_run(str(store), RUN_ID).samples, '2026-11-22T11:00:00Z')
    history_database.rows = {'current': current, 'earlier': [
        dict(row, run_id='20261001T080000Z-%04d' % day, finished='2026-10-%02dT09:00:00Z' % day,
             value=row['value'] * (2.0 if row['host'] == 'oss2' else 1.0))
        for day in (1, 2, 3) for row in current]}
    result = report(run_action, store, history_compare=True, history_dsn='sqlite:////tmp/history.db',
                    history_runs=3)
    assert history_database.calls == [('sqlite:////tmp/history.db', RUN_ID, 3)]
    assert result['verdict'] == 'failed' and result['history']['components'] == 1
    finding, = result['history']['findings']
    assert ' on host oss2: ' in finding and ', -50.0% (band ' in finding
    assert finding.endswith('baseline: the median of runs 20261001T080000Z-0003, 20261001T080000Z-0002, '
                            '20261001T080000Z-0001')
    # one failure per metric of oss2 that regressed, its headline among them
    assert finding + ' (run %s)' % RUN_ID in result['failures']
    assert len(result['failures']) == result['history']['regressions'] > 1
    assert all(' on host oss2: ' in failure for failure in result['failures'])
    # the empty DSN is the history package's default, passed on as None with the results directory it is beside
    report(run_action, store, history_compare=True)
    assert history_database.calls[-1] == (None, RUN_ID, 5) and history_database.results_dirs[-1] == str(store)


def test_an_unreadable_history_fails_naming_the_database(store, action_fails, history_database):
    history_database.error = RuntimeError('database is locked')
    message = action_fails('iokit_report', {'results_dir': str(store), 'run_id': RUN_ID, 'history_compare': True,
                                            'history_dsn': 'sqlite:////srv/history.db'})
    assert message == ('history_compare: cannot read the history of run %s from sqlite:////srv/history.db: '
                       'database is locked' % RUN_ID)
    assert not (store / RUN_ID / 'report.html').exists()
    message = action_fails('iokit_report', {'results_dir': str(store), 'run_id': RUN_ID, 'history_compare': True,
                                            'history_runs': 0})
    assert message == 'history runs must be a whole number of at least 1, got 0'


def test_without_the_history_package_history_compare_says_so(store, action_fails, monkeypatch):
    # None in sys.modules makes the import fail, as it does before the history package is installed
    monkeypatch.setitem(sys.modules, HISTORY_PACKAGE + '.judging_rows', None)
    message = action_fails('iokit_report', {'results_dir': str(store), 'run_id': RUN_ID, 'history_compare': True})
    assert message.startswith('history_compare: the history database cannot be read by this installation')
