# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""After converge ran the survey playbooks with stats_collect_enabled (group_vars/all.yml): no statistics
sampler is left on any host, none is still recorded in the node state, and every surveyed host's statistics
are stored on the controller, the OSSs' with the disk I/O of the obdfilter survey."""

from __future__ import annotations

import json
import os

import pytest
import yaml

INVENTORY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'inventory')


def _group_vars(name: str) -> dict:
    with open(os.path.join(INVENTORY, 'group_vars', name + '.yml'), encoding='utf-8') as handle:
        return yaml.safe_load(handle) or {}


@pytest.fixture
def hostname(host):
    return host.backend.get_hostname()


def test_no_sampler_is_left(host):
    # vmstat/iostat as the module starts them (-n / -d -x), and the Lustre sampler, whose source carries its marker.
    # The brackets keep the pattern from matching the command line of the shell that runs pgrep.
    running = host.run('pgrep -af "[v]mstat -n|[i]ostat -d -x|lustre[.]iokit sample"')
    assert running.rc == 1, running.stdout


def test_node_state_holds_no_sampler(host):
    state_file = host.file('/tmp/lustre-iokit/node-state.json')
    if not state_file.exists:
        return
    state = json.loads(state_file.content_string)
    assert [entry for entry in state.get('processes', []) if entry.get('sampler')] == []


def test_the_statistics_are_stored_and_show_the_survey_io(hostname):
    ephemeral = os.environ.get('MOLECULE_EPHEMERAL_DIRECTORY')
    if not ephemeral:
        pytest.skip('not run by molecule verify')
    if not _group_vars('all').get('stats_collect_enabled'):
        pytest.skip('stats_collect_enabled is not set in group_vars/all.yml')
    run_id = _group_vars('all')['iokit_run_id']
    with open(os.path.join(ephemeral, 'iokit-results', run_id, hostname, 'stats_collect.json'),
              encoding='utf-8') as handle:
        envelope = json.load(handle)
    assert envelope['status'] == 'ok', envelope['errors']
    vmstat = [record for record in envelope['records'] if record['collector'] == 'vmstat']
    assert vmstat and vmstat[0]['summary']['samples'] > 0
    if hostname.startswith('oss'):
        writes = sum(row['write']['count'] for record in envelope['records'] if record['collector'] == 'brw'
                     for row in record['histograms'].get('disk I/O size', []))
        assert writes > 0
