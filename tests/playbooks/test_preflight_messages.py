# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every role's preflight names what is wrong one problem per line, the wrong variable and its value first.

The survey and statistics roles' lines are those of their module's and engine's own checks (the
lustre.iokit.survey_problems filter), with the role's variable names.

One ansible-playbook run, one play per role, each given bad values; the preflights touch no node.

    .venv/bin/python -m pytest tests/playbooks/test_preflight_messages.py -q -p no:cacheprovider
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from conftest import ANSIBLE_PLAYBOOK, COLLECTIONS, ROOT, localhost_inventory

pytestmark = pytest.mark.skipif(not os.access(ANSIBLE_PLAYBOOK, os.X_OK), reason='needs the checkout venv (make setup)')

# role: (its bad variables, the problem lines expected, each a whole line of the message)
CASES = {
    'sgpdd': ({'sgpdd_devices': ['/dev/loop99'], 'sgpdd_thrlo': 4, 'sgpdd_thrhi': 2, 'sgpdd_boundary': -1},
              ['sgpdd_thrlo (4): 4 is greater than sgpdd_thrhi (2)', 'sgpdd_boundary (-1): must not be negative']),
    'ost': ({'ost_mount_point': '/mnt/testfs', 'ost_size_mib': 0, 'ost_slow_share': 2},
            ['ost_size_mib (0): must be at least 1', 'ost_slow_share (2): must be in (0, 1]']),
    'mds': ({'mds_file_count': 2, 'mds_thrhi': 8, 'mds_async_margin_s': 5},
            ['mds_file_count (2): 2 is less than 8 threads, so a thread would get no file (lctl rejects -n 0); '
             'raise mds_file_count or lower mds_thrhi',
             'mds_async_margin_s (5): must be >= 30']),
    'mdtest': ({'mdtest_mount_point': '/mnt/testfs', 'mdtest_depth': -1, 'mdtest_read_bytes': 10,
                'mdtest_expected_clients': 2},
               ['mdtest_depth (-1): must be 0 or more',
                'mdtest_read_bytes (10): cannot read 10 bytes from files written with mdtest_write_bytes 0',
                'mdtest_expected_clients (2): the test has 1 clients (localhost), 1 missing: the inventory or the play '
                'holds fewer than expected (a sliced job, a --limit, a host left out of mdtest_hosts or the '
                'mdtest_client_group group); this survey needs every one of them in one run and cannot be sliced']),
    'lnet': ({'lnet_concurrency': 0, 'lnet_network': 'Bad!'},
             ['lnet_concurrency (0): must be from 1 to 1024',
              'lnet_network (Bad!): must be empty or a network name such as tcp or o2ib1']),
    'stats_collect': ({'stats_collect_vmstat_interval': 0, 'stats_collect_brw_interval': -2},
                      ['stats_collect_vmstat_interval (0): vmstat samples every N >= 1 seconds',
                       'stats_collect_brw_interval (-2): 0 (a snapshot at start and at stop) or N >= 1 seconds']),
    'cleanup': ({'cleanup_stop_grace_s': -1}, ['cleanup_stop_grace_s (-1): must be >= 0']),
    'node_prep': ({'node_prep_nr_requests': 0, 'node_prep_read_ahead_kb': 'lots'},
                  ['node_prep_nr_requests (0): must be a positive number or null',
                   'node_prep_read_ahead_kb (lots): must be a number or null']),
}


def message_lines(output):
    """The lines of the failure messages, whether printed as they are or inside JSON with escaped newlines."""
    text = output.replace('\\n', '\n').replace('"msg": "', '\n').replace('"}', '\n')
    return set(line.strip() for line in text.splitlines())


@pytest.fixture(scope='module')
def output(tmp_path_factory):
    base = str(tmp_path_factory.mktemp('preflight-messages'))
    inventory = os.path.join(base, 'inventory.yml')
    with open(inventory, 'w', encoding='utf-8') as handle:
        handle.write(localhost_inventory(sys.executable, ['oss', 'clients']))
    plays = []
    for role, (variables, unused) in sorted(CASES.items()):
        plays.append({'name': 'Preflight of %s' % role, 'hosts': 'localhost', 'gather_facts': False,
                      'vars': variables,
                      'tasks': [{'ansible.builtin.import_role': {'name': 'lustre.iokit.' + role,
                                                                 'tasks_from': 'preflight'},
                                 'ignore_errors': True}]})
    playbook = os.path.join(base, 'preflights.yml')
    with open(playbook, 'w', encoding='utf-8') as handle:
        yaml.safe_dump(plays, handle)
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'),
               ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_NOCOLOR='1')
    run = subprocess.run([ANSIBLE_PLAYBOOK, '-i', inventory, '-e', json.dumps({
        'iokit_results_dir': os.path.join(base, 'results'), 'iokit_workdir': os.path.join(base, 'work')}), playbook],
        cwd=base, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    return run.stdout


@pytest.mark.parametrize('role', sorted(CASES))
def test_each_problem_is_a_line_naming_its_variable_first(output, role):
    lines = message_lines(output)
    for expected in CASES[role][1]:
        assert expected in lines, (expected, output[-5000:])


def test_no_message_lists_every_rule(output):
    # The old style: one sentence listing every variable's rule, whatever was wrong.
    for old in ('must be >= 1 with lo <= hi', 'iokit_run_id (', 'letters, digits, ".", "_", "-"'):
        assert old not in output
