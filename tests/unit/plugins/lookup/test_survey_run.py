# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""survey_run: what survey_common takes from a survey's role on one host, with the variables templated."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleLookupError
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.lustre.iokit.plugins.lookup.survey_run import LookupModule


def survey_run(survey, **variables):
    loader = DataLoader()
    lookup = LookupModule(loader=loader, templar=Templar(loader=loader, variables=variables))
    return lookup.run([survey], variables)[0]


def test_a_server_survey_runs_its_iterations_on_every_host_with_the_shared_settings():
    run = survey_run('obdfilter', inventory_hostname='oss1', obdfilter_iterations='3', iokit_timeout_s=60)
    assert (run['iterations'], run['here'], run['result_host'], run['prepare']) == (3, True, None, False)
    assert (run['estimate'], run['fleet_plan']) == (True, True)
    assert (run['timeout_s'], run['workdir']) == (60, '/tmp/lustre-iokit')
    assert run['computed'] == {'__obdfilter_engine': 'native', '__obdfilter_timeout_s': 60,
                               '__obdfilter_workdir': '/tmp/lustre-iokit', '__obdfilter_sweep_profile': 'full',
                               'obdfilter_sweep': 'full', 'obdfilter_sweep_start_near_knee': False,
                               'obdfilter_point_s': None}


def test_the_fast_profile_fills_only_what_the_user_left_unset():
    fast = survey_run('obdfilter', inventory_hostname='oss1', iokit_sweep_profile='fast', obdfilter_sweep=None,
                      obdfilter_point_s=45)['computed']
    assert (fast['obdfilter_sweep'], fast['obdfilter_sweep_start_near_knee']) == ('adaptive', True)
    assert 'obdfilter_point_s' not in fast  # the user's 45 s stays
    kept = survey_run('obdfilter', inventory_hostname='oss1', iokit_sweep_profile='fast', obdfilter_sweep='full')
    assert 'obdfilter_sweep' not in kept['computed'] and kept['computed']['obdfilter_point_s'] == 20


def test_the_fast_profile_gives_each_survey_only_what_applies_to_it():
    network = survey_run('obdfilter', inventory_hostname='oss1', iokit_sweep_profile='fast', obdfilter_case='network')
    assert network['computed']['obdfilter_point_s'] is None  # no bounded points through the network
    scripts = survey_run('obdfilter', inventory_hostname='oss1', iokit_sweep_profile='fast', iokit_engine='iokit')
    assert scripts['computed']['obdfilter_sweep'] == 'full'  # the I/O kit's scripts run their own grid
    mdtest = survey_run('mdtest', inventory_hostname='client1', iokit_sweep_profile='fast', mdtest_hosts=['c1'])
    assert mdtest['computed']['mdtest_sweep'] == 'adaptive'
    assert 'mdtest_sweep_start_near_knee' not in mdtest['computed']  # its steps have different axes
    ior = survey_run('ior', inventory_hostname='client1', iokit_sweep_profile='fast', ior_hosts=['c1'])
    assert not [name for name in ior['computed'] if not name.startswith('__')]


def test_the_fast_profile_bounds_mds_points_and_ost_ones_only_with_their_floor():
    mds = survey_run('mds', inventory_hostname='mds1', iokit_sweep_profile='fast')['computed']
    assert (mds['mds_sweep'], mds['mds_sweep_start_near_knee'], mds['mds_point_s']) == ('adaptive', True, 20)
    # the client cannot read the OSS's memory: no floor, no bounded points (the module would refuse them)
    ost = survey_run('ost', inventory_hostname='client1', iokit_sweep_profile='fast')['computed']
    assert ost['ost_point_s'] is None
    given = survey_run('ost', inventory_hostname='client1', iokit_sweep_profile='fast', ost_point_min_mib=65536)
    assert given['computed']['ost_point_s'] == 20


def test_lnet_runs_on_its_console_alone_after_preparing_every_host_of_the_test():
    variables = dict(lnet_console_host='oss1', lnet_server_hosts=['oss1', 'oss2'], lnet_client_hosts=['client1'])
    console = survey_run('lnet', inventory_hostname='oss1', **variables)
    other = survey_run('lnet', inventory_hostname='client1', **variables)
    assert (console['here'], other['here']) == (True, False)
    assert console['result_host'] == other['result_host'] == 'oss1'
    assert console['prepare'] and console['iterations'] == 1
    assert console['computed']['__lnet_selftest_hosts'] == ['oss1', 'oss2', 'client1']


def test_the_client_surveys_run_once_and_show_no_fleet_sum():
    ior = survey_run('ior', inventory_hostname='client1', ior_iterations=4, ior_hosts=['c1', 'c2'])
    mdtest = survey_run('mdtest', inventory_hostname='client1', mdtest_hosts=[], mdtest_client_group='clients',
                        groups={'clients': ['client0', 'client1']}, hostvars={'client0': {}, 'client1': {}})
    assert (ior['iterations'], ior['fleet_plan'], ior['estimate']) == (1, False, True)
    assert (mdtest['iterations'], mdtest['fleet_plan'], mdtest['estimate']) == (1, False, False)
    assert ior['computed']['__ior_mpi_hosts'] == ['c1', 'c2']
    assert mdtest['computed']['__mdtest_mpi_hosts'] == ['client1', 'client0']


def test_a_variable_is_read_templated():
    assert survey_run('mds', inventory_hostname='mds1', iokit_iterations=2,
                      mds_iterations=trust_as_template('{{ iokit_iterations }}'))['iterations'] == 2


def test_an_unknown_survey_is_named():
    with pytest.raises(AnsibleLookupError, match='stats_collect'):
        survey_run('stats_collect')
