# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""After converge ran playbooks/survey-lnet.yml (console client1, servers oss1 and oss2): no host keeps an lst
session, an lnet_selftest module we loaded, an lst process or a node-state entry of the survey; the envelope is
stored on the controller with each host's NID in its groups."""

from __future__ import annotations

import json
import os

import pytest
import yaml

INVENTORY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'inventory')
SIM_ROOT = '/var/lib/lustre-sim/node'


def _group_vars(name: str) -> dict:
    with open(os.path.join(INVENTORY, 'group_vars', name + '.yml'), encoding='utf-8') as handle:
        return yaml.safe_load(handle) or {}


@pytest.fixture
def status(host):
    return json.loads(host.check_output('lustre-sim status --root %s', SIM_ROOT))


def test_no_lst_session_left(status):
    assert status['lst']['session'] is None


def test_lnet_selftest_not_loaded(host, status):
    # No node of the fleet had it loaded before the survey, so every load was ours and must be undone.
    assert 'lnet_selftest' not in status['modules']
    assert not [line for line in host.check_output('/sbin/lsmod').splitlines() if line.split()[:1] == ['lnet_selftest']]


def test_no_lst_process_left(host):
    running = host.run('pgrep -af "lustre_sim[.]tools[.]lst|(^|/| )lst( |$)"')
    assert running.rc == 1, running.stdout


def test_node_state_holds_no_lnet_entry(host):
    state_file = host.file('/tmp/lustre-iokit/node-state.json')
    if not state_file.exists:
        return
    state = json.loads(state_file.content_string)
    assert state.get('lst_sessions', []) == []
    assert [entry for entry in state.get('modules', []) if entry.get('name') == 'lnet_selftest'] == []
    assert [entry for entry in state.get('processes', []) if 'lst' in ' '.join(entry.get('command') or [])] == []


def test_the_envelope_is_stored_with_every_servers_nid():
    ephemeral = os.environ.get('MOLECULE_EPHEMERAL_DIRECTORY')
    if not ephemeral:
        pytest.skip('not run by molecule verify')
    run_id = _group_vars('all')['iokit_run_id']
    with open(os.path.join(ephemeral, 'iokit-results', run_id, 'client1', 'lnet.json'), encoding='utf-8') as handle:
        envelope = json.load(handle)
    assert envelope['status'] == 'ok', envelope['errors']
    servers = envelope['parameters']['servers']
    assert len(servers) == 2 and len(set(servers)) == 2 and all('@tcp' in nid for nid in servers), servers
    assert len(envelope['parameters']['clients']) == 1
    # all against all, then each server alone (group_vars/all.yml: a 1m read per group pair)
    assert [(record['split'], record['servers'], record['mode']) for record in envelope['records']] == [
        ('all', servers, 'read_1m'), ('each_server', servers[:1], 'read_1m'), ('each_server', servers[1:], 'read_1m')]
    # every node of the test has its own figures
    assert all(node['write_mib_s'] is not None for record in envelope['records'] for node in record['nodes'])
