# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""After converge ran playbooks/survey-ior.yml from client1 over the clients group: the sweep's envelope (both access
patterns, every tasks-per-node count) is stored on the controller, and no host keeps an IOR test tree on the client
mount, an ior/mpirun process or a node-state entry of the survey."""

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


def test_no_ior_or_mpirun_process_left(host):
    # the simulator's tools run as python -m lustre_sim.tools.<name> or through the shims named after them
    running = host.run('pgrep -af "(^|/| )(ior|mpirun)( |$)|lustre_sim[.]tools[.](ior|mpirun)"')
    assert running.rc == 1, running.stdout


def test_no_test_tree_left_on_the_client_mount(host, hostname):
    if not hostname.startswith('client'):
        pytest.skip('servers have no client mount')
    mount = _group_vars('clients')['lustre_sim_client_mount']
    listing = host.check_output('ls -A %s', mount).split()
    assert [name for name in listing if name.startswith('ior_')] == []


def test_node_state_holds_no_ior_entry(host):
    state_file = host.file('/tmp/lustre-iokit/node-state.json')
    if not state_file.exists:
        return
    state = json.loads(state_file.content_string)
    leftovers = [entry for kind in ('paths', 'processes') for entry in state.get(kind, [])
                 if entry.get('survey') == 'ior' or 'ior' in (entry.get('command') or [])]
    assert leftovers == []


def test_the_sweep_envelope_is_stored_on_the_controller():
    ephemeral = os.environ.get('MOLECULE_EPHEMERAL_DIRECTORY')
    if not ephemeral:
        pytest.skip('not run by molecule verify')
    settings = _group_vars('all')
    with open(os.path.join(ephemeral, 'iokit-results', settings['iokit_run_id'], 'client1', 'ior.json'),
              encoding='utf-8') as handle:
        envelope = json.load(handle)
    assert envelope['status'] == 'ok', envelope['errors']
    # one client in the clients group: every point on one node
    assert envelope['parameters']['hosts'] == ['client1']
    assert [(r['access'], r['nodes'], r['tasks_per_node'], r['transfer_kib']) for r in envelope['records']] == [
        (access, 1, ppn, size) for access in settings['ior_access'] for ppn in settings['ior_tasks_per_node']
        for size in settings['ior_transfer_sizes_kib']]
    assert all(r['ior_write_mib_s'] > 0 and r['ior_read_mib_s'] > 0 for r in envelope['records'])
