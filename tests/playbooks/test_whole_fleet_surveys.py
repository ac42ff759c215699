# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A survey that needs the whole fleet in one play, given part of it: survey-lnet.yml on the inventory a job slice
would get (one server and one client of a fleet expected to have two of each) refuses in its preflight, naming what
is missing and the variable, before any node is touched. Check mode: nothing runs on a node either way.

    .venv/bin/python -m pytest tests/playbooks/test_whole_fleet_surveys.py -q -p no:cacheprovider
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import ANSIBLE_PLAYBOOK, COLLECTIONS, ROOT, localhost_inventory

pytestmark = pytest.mark.skipif(not os.access(ANSIBLE_PLAYBOOK, os.X_OK), reason='needs the checkout venv (make setup)')


def test_lnet_on_a_slice_of_the_fleet_names_the_missing_servers_and_clients(tmp_path):
    inventory = tmp_path / 'inventory.yml'
    # What AWX gives a slice: an inventory holding only the slice's hosts, groups included.
    inventory.write_text(localhost_inventory(sys.executable, ['oss', 'clients']), encoding='utf-8')
    results = tmp_path / 'results'
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_NOCOLOR='1')
    run = subprocess.run([ANSIBLE_PLAYBOOK, '--check', '-i', str(inventory), '-e', json.dumps({
        'iokit_results_dir': str(results), 'iokit_workdir': str(tmp_path / 'work'), 'iokit_run_id': 'slice-1',
        'lnet_expected_servers': 2, 'lnet_expected_clients': 3}), os.path.join(ROOT, 'playbooks', 'survey-lnet.yml')],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    output = run.stdout.replace('\\n', '\n')
    assert run.returncode != 0, output[-3000:]
    assert ('lnet_expected_servers (2): the test has 1 servers (localhost), 1 missing: the inventory or the play holds '
            'fewer than expected (a sliced job, a --limit, a host left out of lnet_server_hosts (default: the oss '
            'group) or lnet_server_nids); this survey needs every one of them in one run and cannot be sliced'
            in output), output[-3000:]
    assert 'lnet_expected_clients (3): the test has 1 clients (localhost), 2 missing' in output, output[-3000:]
    # Refused before anything was started: no run was made in the results store.
    assert not (results / 'slice-1').exists()
