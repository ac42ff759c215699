# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""survey_problems and survey_variables: a survey role's variables checked by the survey's own module and engine."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible.errors import AnsibleFilterError
from ansible.utils.display import Display

from ansible_collections.lustre.iokit.plugins.filter.survey_problems import FilterModule as ProblemsFilters
from ansible_collections.lustre.iokit.plugins.filter.survey_problems import survey_problems
from ansible_collections.lustre.iokit.plugins.filter.survey_variables import FilterModule as VariablesFilters
from ansible_collections.lustre.iokit.plugins.filter.survey_variables import survey_variables
from ansible_collections.lustre.iokit.plugins.module_utils import survey_catalog
from ansible_collections.lustre.iokit.plugins.plugin_utils import survey_call, survey_checks

# What a role's defaults resolve to for the settings every survey role shares (vars/main.yml reads iokit_* into
# the internal __<prefix>timeout_s and __<prefix>workdir).
SHARED = {'timeout_s': '3600', 'workdir': '/tmp/lustre-iokit', 'async_margin_s': 120, 'poll_interval_s': 10,
          'slow_share': 0.85, 'slowest_count': 3}

# survey: settings that are fine (with the shared ones under the survey's prefix)
VALID = {
    'sgpdd': {'sgpdd_devices': ['/dev/sdb', '/dev/sdc'], 'sgpdd_destroy_data': True, 'sgpdd_size_mib': 8192,
              'sgpdd_thrlo': 1, 'sgpdd_thrhi': 16, 'sgpdd_iterations': '1', '__sgpdd_engine': 'native'},
    'obdfilter': {'obdfilter_size_mib': 16384, 'obdfilter_rszlo': 1024, 'obdfilter_rszhi': 1024,
                  'obdfilter_tests': ['write', 'rewrite', 'read'], 'obdfilter_case': 'disk', 'obdfilter_targets': [],
                  'obdfilter_sweep': 'adaptive', '__obdfilter_engine': 'native', 'obdfilter_iterations': 2},
    'mds': {'mds_thrlo': '4', 'mds_thrhi': '32', 'mds_file_count': 100000,
            'mds_dir_count': None, 'mds_tests': ['create', 'lookup', 'destroy'],
            'mds_iterations': 1},
    'ost': {'ost_mount_point': '/mnt/testfs', 'ost_size_mib': 30, 'ost_min_free_factor': 2,
            'ost_iterations': 1},
    'lnet': {'lnet_server_hosts': ['oss1'], 'lnet_client_hosts': ['client1'], 'lnet_console_host': 'client1',
             '__lnet_selftest_hosts': ['oss1', 'client1'], 'lnet_server_nids': [], 'lnet_client_nids': [],
             'lnet_network': '', 'lnet_sizes': ['4k', 1048576], 'lnet_modes': ['read', 'write', 'ping'],
             'lnet_distribute': None, 'lnet_session_timeout_s': 300, 'lnet_expected_servers': 1,
             'lnet_expected_clients': 0},
    'ior': {'ior_mount_point': '/mnt/testfs', '__ior_mpi_hosts': ['client1', 'client2'], 'ior_nodes': [],
            'ior_tasks_per_node': [1, 2], 'ior_repetitions': 1, 'ior_client_memory_mib': 0, 'ior_partition': '',
            'ior_account': '', 'ior_stripe_count': '', 'ior_stripe_size_kib': '', 'ior_launcher': 'mpirun',
            'ior_expected_clients': 2},
    'mdtest': {'mdtest_mount_point': '/mnt/testfs', '__mdtest_mpi_hosts': ['client1'], 'mdtest_nodes': [],
               'mdtest_items': 1000, 'mdtest_items_per_dir': 0, 'mdtest_launcher': 'srun', 'mdtest_partition': 'batch',
               'mdtest_account': '', 'mdtest_environment_modules': ['gcc', 'openmpi/4.1']},
    'stats_collect': {'stats_collect_action': 'start', 'stats_collect_label': 'obdfilter',
                      'stats_collect_collectors': ['vmstat', 'brw'], 'stats_collect_vmstat_interval': '1',
                      'stats_collect_brw_interval': 0, 'stats_collect_max_duration_s': 21600},
}
PREFIX = {'sgpdd': 'sgpdd_', 'obdfilter': 'obdfilter_', 'mds': 'mds_', 'ost': 'ost_', 'lnet': 'lnet_',
          'ior': 'ior_', 'mdtest': 'mdtest_', 'stats_collect': 'stats_collect_'}
CONTEXT = {'lnet': {'play_hosts': ['oss1', 'client1']}, 'ior': {'memory_mib': 4096}}

# survey: (changed settings, the problem lines expected, exactly and in order)
INVALID = [
    ('sgpdd', {'sgpdd_thrlo': 4, 'sgpdd_thrhi': 2, 'sgpdd_boundary': -1},
     ['sgpdd_boundary (-1): must not be negative', 'sgpdd_thrlo (4): 4 is greater than sgpdd_thrhi (2)']),
    ('sgpdd', {'sgpdd_devices': ['sdb'], 'sgpdd_destroy_data': False, 'sgpdd_actions': ['write', 'write']},
     ['sgpdd_actions ([\'write\', \'write\']): each action may appear once',
      'sgpdd_destroy_data (False): must be true to run the write action, which overwrites the data on sdb',
      "sgpdd_devices (['sdb']): not absolute paths: sdb"]),
    ('sgpdd', {'sgpdd_sweep': 'adaptive', '__sgpdd_engine': 'iokit', 'sgpdd_iterations': '1.5'},
     ['sgpdd_sweep (adaptive): adaptive needs iokit_engine native (the installed I/O-kit script always runs the full '
      'grid)',
      'sgpdd_iterations (1.5, default iokit_iterations): must be a whole number >= 1: how many times the sgpdd survey '
      'runs on each host']),
    ('sgpdd', {'sgpdd_point_s': 0, 'sgpdd_point_min_mib': 0, 'sgpdd_controller_cache_mib': -1,
               'sgpdd_sweep_start_near_knee': 'maybe'},
     ['sgpdd_sweep_start_near_knee (maybe): must be true or false',
      'sgpdd_controller_cache_mib (-1): must not be negative (0: no write-back cache)',
      'sgpdd_point_s (0): must be more than 0 seconds', 'sgpdd_point_min_mib (0): must be at least 1']),
    ('sgpdd', {'sgpdd_point_s': 20, '__sgpdd_engine': 'iokit'},
     ['sgpdd_point_s (20): the installed sgpdd-survey moves its fixed size at every point; time-bounded points need '
      'iokit_engine native']),
    ('obdfilter', {'obdfilter_size_mib': 3, 'obdfilter_rszlo': 2048, 'obdfilter_rszhi': 2048},
     ['obdfilter_size_mib (3): 3 MiB is not a multiple of the 2048 KiB record',
      'obdfilter_size_mib (3): 3 MiB per OST is less than one 2048 KiB record for each of 2 threads; raise '
      'obdfilter_size_mib or lower obdfilter_thrhi']),
    ('obdfilter', {'obdfilter_thrlo': 4, 'obdfilter_thrhi': 2, 'obdfilter_tests': ['read']},
     ['obdfilter_thrlo (4): 4 is greater than obdfilter_thrhi (2)',
      "obdfilter_tests (['read']): the first test must be 'write' (the objects are empty until written), got 'read'"]),
    ('obdfilter', {'__obdfilter_sweep_profile': 'quick', 'obdfilter_sweep': 'fastest'},
     ['obdfilter_sweep (fastest): must be full or adaptive', 'iokit_sweep_profile (quick): must be one of fast, full']),
    ('obdfilter', {'obdfilter_case': 'tape', 'obdfilter_thrhi': 'many', 'obdfilter_slow_share': 0},
     ['obdfilter_case (tape): must be disk, network or netdisk', 'obdfilter_thrhi (many): must be a whole number',
      'obdfilter_slow_share (0): must be in (0, 1]']),
    ('mds', {'mds_file_count': 2, 'mds_thrhi': 8, 'mds_async_margin_s': 5},
     ['mds_file_count (2): 2 is less than 8 threads, so a thread would get no file (lctl rejects -n 0); raise '
      'mds_file_count or lower mds_thrhi', 'mds_async_margin_s (5): must be >= 30']),
    ('mds', {'mds_tests': ['lookup'], 'mds_thrhi': 8192},
     ['mds_thrhi (8192): lctl --threads allows at most 4096 threads',
      "mds_tests (['lookup']): the first test must be 'create' and the last 'destroy'"]),
    ('mds', {'mds_dir_count': 64, '__mds_workdir': 'tmp'},
     ['mds_dir_count (64): 64 is greater than every thread count from mds_thrlo 4 to mds_thrhi '
      '32, so every thread count would be skipped', 'iokit_workdir (tmp): must be an absolute path other than /']),
    ('mds', {'mds_thrlo': 0, 'mds_dir_count': None},
     ['mds_thrlo (0): must be at least 1']),
    ('mds', {'mds_point_s': 0, 'mds_point_min_items': 0, 'mds_sweep_start_near_knee': 'maybe'},
     ['mds_sweep_start_near_knee (maybe): must be true or false', 'mds_point_s (0): must be more than 0 seconds',
      'mds_point_min_items (0): must be at least 1']),
    ('mds', {'mds_point_s': 20, '__mds_engine': 'iokit'},
     ['mds_point_s (20): the installed mds-survey creates its fixed file_count at every point; time-bounded points '
      'need iokit_engine native']),
    ('ost', {'ost_point_s': 20},
     ["ost_point_min_mib (unset): time-bounded points (ost_point_s) need the floor per OST, and this client cannot "
      "read the OSS's memory: give the largest OSS's MemTotal in MiB (its page cache), or on ZFS its ARC maximum, "
      "at least 512"]),
    ('ost', {'ost_size_mib': 0, 'ost_slow_share': 2},
     ['ost_size_mib (0): must be at least 1', 'ost_slow_share (2): must be in (0, 1]']),
    ('ost', {'ost_min_free_factor': 0.5, '__ost_timeout_s': '0', 'ost_slowest_count': -1},
     ['ost_min_free_factor (0.5): must be at least 1 (the file itself)', 'iokit_timeout_s (0): must be >= 1',
      'ost_slowest_count (-1): must be >= 0']),
    ('lnet', {'lnet_concurrency': 0, 'lnet_network': 'Bad!'},
     ['lnet_concurrency (0): must be from 1 to 1024',
      'lnet_network (Bad!): must be empty or a network name such as tcp or o2ib1']),
    ('lnet', {'lnet_server_nids': ['x', 'x'], 'lnet_sizes': ['2m'], 'lnet_console_host': ''},
     ["lnet_server_nids (['x', 'x']): not a NID (address@network, such as 10.0.0.1@tcp or 10.0.0.[1-4]@o2ib): x, x",
      "lnet_server_nids (['x', 'x']): each NID may appear once",
      "lnet_sizes (['2m']): 2m is above the LNet MTU (1m), which lst refuses",
      'lnet_console_host (): must name a host']),
    ('lnet', {'lnet_client_hosts': [], '__lnet_selftest_hosts': ['oss1', 'client9'], 'lnet_poll_interval_s': 0},
     ['lnet_client_hosts ([]): or lnet_client_nids must not be empty (default: the clients group)',
      'iokit_lnet_hosts (oss1,client1): must include every host of the test; not in the play: client9',
      'lnet_poll_interval_s (0): must be >= 1']),
    ('ior', {'ior_access': ['fpp', 'both'], 'ior_nodes': [1, 3], 'ior_partition': 'batch'},
     ["ior_access (['fpp', 'both']): each must be fpp or ssf", 'ior_nodes ([1, 3]): 3 nodes asked but hosts lists '
      'only 2', 'ior_partition, ior_account: Slurm settings need launcher srun']),
    ('ior', {'ior_transfer_sizes_kib': [3], 'ior_block_size_mib': 1, 'ior_repetitions': 0},
     ['ior_transfer_sizes_kib ([3]): IOR needs the block (ior_block_size_mib 1 = 1024 KiB) to be a multiple of every '
      'transfer size; 3 KiB is not', 'ior_repetitions (0): must be at least 1']),
    ('ior', {'ior_environment_modules': ['gcc'], 'ior_module_shell': []},
     ['ior_module_shell ([]): must name the shell that runs module load, such as [/bin/bash, -l, -c]']),
    ('mdtest', {'mdtest_depth': -1, 'mdtest_read_bytes': 10},
     ['mdtest_depth (-1): must be 0 or more',
      'mdtest_read_bytes (10): cannot read 10 bytes from files written with mdtest_write_bytes 0']),
    ('mdtest', {'mdtest_launcher': 'pbs', 'mdtest_account': 'proj1',
                'mdtest_environment_modules': ['gcc', 'openmpi mdtest']},
     ['mdtest_launcher (pbs): must be mpirun or srun',
      'mdtest_partition, mdtest_account: Slurm settings need launcher srun',
      "mdtest_environment_modules (['gcc', 'openmpi mdtest']): module names are single words of letters, digits and "
      "._+/@:,=~%-, got 'openmpi mdtest'"]),
    # A slice of the fleet (AWX job slicing, a --limit) is named, never measured as if it were the whole test.
    ('lnet', {'lnet_expected_servers': 3, 'lnet_expected_clients': 1},
     ['lnet_expected_servers (3): the test has 1 servers (oss1), 2 missing: the inventory or the play holds fewer '
      'than expected (a sliced job, a --limit, a host left out of lnet_server_hosts (default: the oss group) or '
      'lnet_server_nids); this survey needs every one of them in one run and cannot be sliced']),
    ('lnet', {'lnet_server_hosts': [], 'lnet_server_nids': ['10.0.0.1@tcp', '10.0.0.2@tcp'],
              'lnet_expected_servers': 2, 'lnet_expected_clients': '-1'},
     ['lnet_expected_clients (-1): must be 0 (not checked) or more']),
    ('mdtest', {'mdtest_expected_clients': 4},
     ['mdtest_expected_clients (4): the test has 1 clients (client1), 3 missing: the inventory or the play holds '
      'fewer than expected (a sliced job, a --limit, a host left out of mdtest_hosts or the mdtest_client_group '
      'group); this survey needs every one of them in one run and cannot be sliced']),
    ('ior', {'ior_expected_clients': 'all'},
     ['ior_expected_clients (all): must be a whole number (0: not checked)']),
    ('stats_collect', {'stats_collect_vmstat_interval': 0, 'stats_collect_brw_interval': -2},
     ['stats_collect_vmstat_interval (0): vmstat samples every N >= 1 seconds',
      'stats_collect_brw_interval (-2): 0 (a snapshot at start and at stop) or N >= 1 seconds']),
    ('stats_collect', {'stats_collect_action': 'go', 'stats_collect_label': ' ', 'stats_collect_collectors': ['top'],
                       'stats_collect_max_duration_s': 0},
     ["stats_collect_collectors (['top']): each must be vmstat, brw, service, iostat or client",
      'stats_collect_max_duration_s (0): must be at least 1 second',
      'stats_collect_label ( ): must not be empty (the survey the statistics are for, or stats)',
      'stats_collect_action (go): must be start, stop or collect']),
]

# The statistics role has none of the survey roles' async and poll settings: only its workdir is shared.
STATS_SHARED = ('workdir',)


def settings(survey, **changed):
    shared = STATS_SHARED if survey == 'stats_collect' else SHARED
    given = dict((survey_checks.role_variable(PREFIX[survey], name), SHARED[name]) for name in shared)
    given.update(VALID[survey])
    given.update(changed)
    return given


def test_the_filters_are_registered():
    assert ProblemsFilters().filters() == {'survey_problems': survey_problems}
    assert VariablesFilters().filters() == {'survey_variables': survey_variables}


@pytest.mark.parametrize('survey', sorted(VALID))
def test_valid_settings_have_no_problem(survey):
    assert survey_problems(settings(survey), survey, **CONTEXT.get(survey, {})) == []


@pytest.mark.parametrize('survey, changed, expected', INVALID)
def test_each_problem_is_one_line_naming_the_role_variable_and_its_value(survey, changed, expected):
    assert survey_problems(settings(survey, **changed), survey, **CONTEXT.get(survey, {})) == expected


ROLES = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', 'roles')
ROLE_OF = {'sgpdd': 'sgpdd', 'obdfilter': 'obdfilter', 'mds': 'mds', 'ost': 'ost', 'lnet': 'lnet', 'ior': 'ior',
           'mdtest': 'mdtest', 'stats_collect': 'stats_collect'}
# What a user must give where the role has no default (sgpdd never chooses a device).
MUST_GIVE = {'sgpdd': {'sgpdd_devices': ['/dev/sdb'], 'sgpdd_destroy_data': True}}


@pytest.mark.parametrize('survey', sorted(ROLE_OF))
def test_each_roles_defaults_pass_its_modules_checks(survey):
    with open(os.path.join(ROLES, ROLE_OF[survey], 'defaults', 'main.yml'), encoding='utf-8') as handle:
        defaults = yaml.safe_load(handle)
    # the templated ones (iokit_* and the inventory's groups) are resolved by Ansible, not here
    given = dict((name, value) for name, value in defaults.items() if '{{' not in str(value))
    given.update(MUST_GIVE.get(survey, {}))
    if survey in survey_catalog.MEASURING:
        # as the preflight does: what the sweep profile fills in over the role's unset variables (the other computed
        # values are the inventory's, such as an MPI hostfile, which a role's defaults alone do not have)
        given.update((name, value) for name, value in survey_call.computed_values(
            survey, survey_call.Variables(given)).items() if not name.startswith('__'))
    assert survey_problems(given, survey, memory_mib=4096) == []


def test_variables_left_out_keep_the_module_defaults():
    assert survey_problems({}, 'obdfilter') == []
    assert survey_problems({'sgpdd_devices': ['/dev/sdb'], 'sgpdd_actions': ['read']}, 'sgpdd') == []


def test_ior_cache_rule_needs_a_memory_given_or_gathered():
    without = settings('ior')
    assert survey_problems(without, 'ior') == [
        'ior_client_memory_mib (0): the cache rule (ior_memory_factor 2.0) needs the memory of a client; give it, or '
        'set ior_memory_factor 0']
    assert survey_problems(dict(without, ior_client_memory_mib=2048), 'ior') == []
    assert survey_problems(dict(without, ior_memory_factor=0), 'ior') == []


def test_mdtest_items_per_dir_replaces_items_as_the_role_passes_them():
    assert survey_problems(settings('mdtest', mdtest_items_per_dir=10), 'mdtest') == []


def test_ior_and_mdtest_repetitions_are_the_benchmarks_repeats_not_the_roles_iterations():
    assert 'ior_repetitions' in survey_variables(['ior_repetitions'], 'ior')
    assert survey_problems(settings('ior', ior_repetitions=3), 'ior', memory_mib=4096) == []


@pytest.mark.parametrize('survey', ['ior', 'mdtest'])
def test_the_deprecated_iterations_variable_is_checked_as_repetitions_and_warned_about(survey, monkeypatch):
    warned = []
    monkeypatch.setattr(Display, 'deprecated', lambda self, msg, **kwargs: warned.append((msg, kwargs)))
    old, new = survey + '_iterations', survey + '_repetitions'
    assert old in survey_variables([old], survey)
    # the old name's value is what the role passes, so it is what is checked, under the new name
    assert survey_problems(settings(survey, **{old: 0, new: 3}), survey, memory_mib=4096) == [
        '%s (0): must be at least 1' % new]
    assert warned == [('%s is the old name of %s, which it overrides while it is set: set %s instead' % (old, new, new),
                       {'version': '0.3.0', 'collection_name': 'lustre.iokit'})]
    warned.clear()
    assert survey_problems(settings(survey, **{new: 2}), survey, memory_mib=4096) == []
    assert warned == []


def test_survey_variables_are_the_checked_ones_among_those_defined():
    defined = ['obdfilter_size_mib', '__obdfilter_poll_retries', '__obdfilter_async_s', '__obdfilter_timeout_s',
               '__obdfilter_workdir', 'obdfilter_iterations', '__obdfilter_results_dir', '__obdfilter_engine']
    assert survey_variables(defined, 'obdfilter') == [
        '__obdfilter_engine', '__obdfilter_timeout_s', '__obdfilter_workdir', 'obdfilter_iterations',
        'obdfilter_size_mib']
    # the public names of the internal variables are not read: a user's obdfilter_timeout_s is not a setting
    assert survey_variables(['obdfilter_timeout_s', 'obdfilter_workdir', 'obdfilter_engine'], 'obdfilter') == []
    assert 'lnet_server_nids' in survey_variables(['lnet_server_nids', 'lnet_servers'], 'lnet')
    assert survey_variables(['lnet_servers'], 'lnet') == []
    assert survey_variables(['mds_run_id', 'mds_launch_id'], 'mds') == []


@pytest.mark.parametrize('call', [
    lambda: survey_problems({}, 'tape'),
    lambda: survey_problems(['obdfilter_size_mib'], 'obdfilter'),
    lambda: survey_variables([], 'tape'),
    lambda: survey_variables('obdfilter_size_mib', 'obdfilter'),
])
def test_a_wrong_call_is_a_filter_error(call):
    with pytest.raises(AnsibleFilterError):
        call()
