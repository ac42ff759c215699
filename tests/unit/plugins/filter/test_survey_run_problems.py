# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The verdict of every survey playbook: which hosts failed the run, and why."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.lustre.iokit.plugins.filter.survey_run_problems import survey_run_problems

HOSTS = ['oss1', 'oss2', 'oss3', 'oss4']


def stored(*hosts_and_status):
    return {'envelopes': [{'host': host, 'status': status} for host, status in hosts_and_status], 'invalid': []}


def test_every_host_ok_passes():
    run = stored(('oss1', 'ok'), ('oss2', 'partial'), ('oss3', 'ok'), ('oss4', 'ok'))
    assert survey_run_problems(run, 'obdfilter', {}, HOSTS, HOSTS) == []


def test_each_host_is_named_with_why_in_the_order_users_read():
    run = stored(('oss1', 'ok'), ('oss2', 'failed'))
    hostvars = {'oss3': {'survey_common_failures': {'obdfilter': 'Wait for the survey: Timeout exceeded'}},
                'oss4': {}}
    play_hosts = ['oss1', 'oss2', 'oss3']  # oss4 was unreachable
    assert survey_run_problems(run, 'obdfilter', hostvars, HOSTS, play_hosts) == [
        'oss2 measured nothing',
        'oss3 has no result (Wait for the survey: Timeout exceeded)',
        'oss4 has no result (unreachable, or failed before its survey started)',
    ]


def test_a_host_still_in_the_play_that_stored_nothing_says_so():
    assert survey_run_problems(stored(('oss1', 'ok')), 'obdfilter', {}, ['oss1', 'oss2'], ['oss1', 'oss2']) == [
        'oss2 has no result (none was stored)']


def test_a_host_that_failed_after_storing_its_result_fails_the_run_and_keeps_it():
    hostvars = {'oss2': {'survey_common_failures': {
        'obdfilter': 'Record the stored result in the results history: history database sqlite:///h.sqlite: locked'}}}
    assert survey_run_problems(stored(('oss1', 'ok'), ('oss2', 'ok')), 'obdfilter', hostvars, ['oss1', 'oss2'],
                               ['oss1', 'oss2']) == [
        'oss2 failed (Record the stored result in the results history: history database sqlite:///h.sqlite: '
        'locked); its stored result is kept']


def test_another_surveys_failure_is_not_this_ones():
    hostvars = {'oss2': {'survey_common_failures': {'sgpdd': 'Run the survey: boom', 'obdfilter': ''}}}
    assert survey_run_problems(stored(('oss1', 'ok')), 'obdfilter', hostvars, ['oss1', 'oss2'], ['oss1', 'oss2']) == [
        'oss2 has no result (none was stored)']


def test_one_producer_survey_names_the_producer_and_every_other_failed_host():
    # LNet: the console stores the one envelope; a server that failed or was lost fails the run too.
    hosts = ['client1', 'oss1', 'oss2', 'oss3']
    hostvars = {'oss1': {'survey_common_failures': {'lnet': 'Load lnet_selftest: no such module'}}}
    assert survey_run_problems(stored(('client1', 'ok')), 'lnet', hostvars, hosts, ['client1', 'oss1', 'oss2'],
                               expected_hosts=['client1']) == [
        'oss1 failed (Load lnet_selftest: no such module)',
        'oss3 failed (unreachable, or failed before its survey started)',
    ]
    assert survey_run_problems(stored(), 'lnet', {}, hosts, hosts, expected_hosts=['client1']) == [
        'client1 has no result (none was stored)']


def test_input_that_is_not_a_stored_run_is_refused():
    with pytest.raises(AnsibleFilterError, match='stored results'):
        survey_run_problems(['oss1'], 'obdfilter', {}, HOSTS, HOSTS)
