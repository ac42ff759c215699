# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""acceptance.yml on simulated nodes with one fault per layer: each weak component is one finding of analysis.json's
``components``, diagnosed by its rule of diagnosis.RULES (docs/diagnosis.md) from what the report role gathered
itself (each target's mount device, each host's NID).  Two ansible-playbook runs, each with the faults that do not
mask each other:

* servers (sgpdd and obdfilter on one OSS, five OSTs each mounted from its own loop device): the LUN under
  OST0004 is held to 1 MiB/s by a block-I/O cgroup and OST0004 inherits its LUN's rate (``device_mib_s``): one
  finding, the LUN (rule ``lun-under-target``) with the OST folded into it; OST0001 is slow on a fine LUN (its own
  ``mib_s``): rule ``target-backend``;
* clients (LNet self-test and IOR from three clients, each its own simulated node with its own NID): client2's NIC
  carries a tenth of the others' (the console's LNet model): rule ``nid``, named with client2, which owns that NID
  (``lctl list_nids``); client3 is capped for IOR alone (``ior: client_mib_s``) while everything below it is fine:
  rule ``client``.  A slow server NIC would make every client's rule ``client-servers`` instead, so the slow NIC is
  a client's.

Every limit is far below what a busy machine gives: the weak components are slow by construction.

    .venv/bin/python -m pytest tests/playbooks/test_diagnosis_layers.py -q -p no:cacheprovider -n 2 --dist loadgroup
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
import yaml

from conftest import ANSIBLE_PLAYBOOK, LUSTRE_SIM, ROOT, WAIT_POLL_S, SimulatedNode, simulated_local_host
from test_acceptance import ONLY_OBDFILTER
from test_findings_components import loop_luns
from test_survey_playbooks import INVENTORY, SURVEY_VARS, pytestmark as survey_mark

pytestmark = [survey_mark, pytest.mark.skipif(os.geteuid() != 0 or not shutil.which('losetup')
                                              or not shutil.which('sgp_dd'),
                                              reason='needs root, losetup and sgp_dd (sg3-utils)')]

OSTS = 5
# 4 MiB per OST at 0.5 MiB/s: 8 s, so that the simulated lctl's start-up stays a small part of each OST's time.
OST_MIB_S = 0.5
SLOW_MIB_S = 0.15
LUN_UNDER_OST = 4   # OST0004 sits on the slow LUN and inherits its rate
SLOW_OST = 1        # OST0001 is slow on a fine LUN

NIDS = {'client1': '192.0.2.21@tcp', 'client2': '192.0.2.22@tcp', 'client3': '192.0.2.23@tcp'}
SERVER_NIDS = ['10.0.0.1@tcp', '10.0.0.2@tcp', '10.0.0.3@tcp']  # simulated by the console's LNet model alone
SLOW_NIC = 'client2'
SLOW_CLIENT = 'client3'


class Run(SimulatedNode):
    def run_file(self, name):
        with open(os.path.join(self.results, self.run_id, name), encoding='utf-8') as handle:
            return handle.read()

    def acceptance(self, run_id, python_inventory, extra_vars):
        with open(self.inventory, 'w', encoding='utf-8') as handle:
            handle.write(python_inventory)
        with open(self.extra_vars, 'w', encoding='utf-8') as handle:
            json.dump(dict(SURVEY_VARS, **extra_vars, iokit_results_dir=self.results, iokit_run_id=run_id,
                           fail_on_verdict=False), handle)
        self.run_id = run_id
        self.result = subprocess.run([ANSIBLE_PLAYBOOK, '-i', self.inventory, '-e', '@' + self.extra_vars,
                                      os.path.join(ROOT, 'playbooks', 'acceptance.yml')], cwd=ROOT, env=self.env(),
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                                     check=False)
        assert self.result.returncode == 0, self.result.stdout[-8000:]
        self.analysis = json.loads(self.run_file('analysis.json'))
        self.verdict = json.loads(self.run_file('verdict.json'))
        return self

    def component(self, kind, name):
        found = [c for c in self.analysis['components'] if (c['kind'], c['name']) == (kind, name)]
        assert len(found) == 1, self.explained(json.dumps(self.analysis['components'], indent=1)[:3000])
        return found[0]

    def explained(self, what):
        """``what`` with the run's stages, each survey's stored status and errors, and the lines of its output that
        name sgpdd or the target devices: a LUN or a link missing under load says there which layer lost it."""
        stored = {}
        for host in sorted(os.listdir(os.path.join(self.results, self.run_id))):
            host_dir = os.path.join(self.results, self.run_id, host)
            for name in sorted(os.listdir(host_dir)) if os.path.isdir(host_dir) else ():
                if name.endswith('.json'):
                    with open(os.path.join(host_dir, name), encoding='utf-8') as handle:
                        envelope = json.load(handle)
                    stored['%s/%s' % (host, name)] = (envelope.get('status'), envelope.get('errors'))
        lines = [line for line in self.result.stdout.splitlines()
                 if 'sgpdd' in line or 'target_devices' in line or 'mount device' in line.lower()]
        return '%s\nstored: %s\noutput:\n%s' % (what, json.dumps(stored)[:3000], '\n'.join(lines[-60:]))


@pytest.fixture(scope='module')
def servers(tmp_path_factory):
    """One OSS (localhost): five OSTs, each mounted from its own loop device, sgpdd then obdfilter."""
    made = Run(str(tmp_path_factory.mktemp('layers-servers')))
    try:
        # Every module of the play runs in the group, which limits only the LUN under OST0004.
        with loop_luns(made.base, OSTS, LUN_UNDER_OST) as loops:
            made.loops = loops
            osts = [{'index': index, 'device': loop} for index, loop in enumerate(loops)]
            osts[LUN_UNDER_OST]['device_mib_s'] = SLOW_MIB_S
            osts[SLOW_OST]['mib_s'] = SLOW_MIB_S
            config = os.path.join(made.base, 'node.yml')
            with open(config, 'w', encoding='utf-8') as handle:
                yaml.safe_dump({'fsname': 'testfs', 'mdts': 1, 'ost_size_mib': 32, 'ost_mib_s': OST_MIB_S,
                                'osts': osts}, handle)
            made.sim('init', '--root', made.root, '--config', config, '--no-mount', '--force')
            yield made.acceptance('pbtest-layers-servers', INVENTORY.format(
                python=os.path.join(made.base, 'slow-python')), dict(
                    ONLY_OBDFILTER, acceptance_run_sgpdd=True, sgpdd_devices=loops, sgpdd_destroy_data=True,
                    sgpdd_size_mib=8, sgpdd_crghi=1, sgpdd_thrhi=2, sgpdd_poll_interval_s=WAIT_POLL_S,
                    iokit_workdir=made.workdir))
    finally:
        subprocess.run([LUSTRE_SIM, 'destroy', '--root', made.root], check=False, stdout=subprocess.DEVNULL)


@pytest.fixture(scope='module')
def clients(tmp_path_factory):
    """Three clients, each its own simulated node with its NID; client1 mounts the file system, runs IOR for the
    three (mpirun's hostfile) and is the LNet console, whose model gives client2's NIC a tenth of the others'."""
    made = Run(str(tmp_path_factory.mktemp('layers-clients')))
    hosts = {}
    try:
        for name, nid in NIDS.items():
            config = os.path.join(made.base, name + '.yml')
            settings = {'fsname': 'testfs', 'hostname': name, 'nid': nid, 'osts': 2, 'mdts': 1, 'ost_size_mib': 64}
            if name == 'client1':
                settings.update(client_mount=made.mount, lnet={'link_mib_s': 1000, 'per_nid': {NIDS[SLOW_NIC]: 100}},
                                ior={'client_mib_s': {SLOW_CLIENT: 1}})
            with open(config, 'w', encoding='utf-8') as handle:
                yaml.safe_dump(settings, handle)
            hosts[name] = simulated_local_host(made.base, name, '--config', config)
        made.sim('mount', '--root', os.path.join(made.base, 'client1'))
        inventory = yaml.safe_dump({'all': {'children': {'clients': {'hosts': hosts}}}})
        yield made.acceptance('pbtest-layers-clients', inventory, dict(
            ONLY_OBDFILTER, acceptance_run_obdfilter=False, acceptance_run_lnet=True, acceptance_run_ior=True,
            lnet_server_nids=SERVER_NIDS, lnet_modes=['read'], lnet_sizes=['1m'], lnet_stat_count=1,
            lnet_stat_delay_s=1, lnet_poll_interval_s=WAIT_POLL_S, lnet_async_margin_s=30,
            ior_mount_point=made.mount, ior_nodes=[3], ior_tasks_per_node=[1], ior_access=['fpp'],
            ior_transfer_sizes_kib=[1024], ior_block_size_mib=4, ior_memory_factor=0, ior_allow_run_as_root=True,
            ior_poll_interval_s=WAIT_POLL_S, ior_async_margin_s=30))
    finally:
        for name in NIDS:
            subprocess.run([LUSTRE_SIM, 'destroy', '--root', os.path.join(made.base, name)], check=False,
                           stdout=subprocess.DEVNULL)


def _folded(finding):
    return sorted((item['kind'], item['name']) for item in finding['folded'])


def test_a_slow_lun_under_its_ost_is_one_finding_of_the_lun(servers):
    lun = os.path.basename(servers.loops[LUN_UNDER_OST])
    finding = servers.component('LUN', lun)
    assert (finding['node'], finding['rule'], finding['layer']) == ('localhost', 'lun-under-target', 'raw LUN (sgpdd)')
    assert 'slow at the raw device' in finding['diagnosis'] and finding['points_at'] == 'the device or its path'
    # the OST on it is not a finding of its own: its rows are evidence of the LUN's, folded because of it
    assert ('OST', 'testfs-OST%04x' % LUN_UNDER_OST) in _folded(finding), finding['folded']
    assert set(e['survey'] for e in finding['evidence']) == {'sgpdd', 'obdfilter'}, finding['evidence']
    assert not [c for c in servers.analysis['components'] if c['name'] == 'testfs-OST%04x' % LUN_UNDER_OST]


def test_an_ost_slow_above_a_fine_lun_points_at_its_backend(servers):
    finding = servers.component('OST', 'testfs-OST%04x' % SLOW_OST)
    assert (finding['node'], finding['rule']) == ('localhost', 'target-backend'), servers.explained(finding)
    assert 'obdfilter' in finding['layer'] and 'its LUNs are fine' in finding['diagnosis'], finding
    assert finding['layers']['LUN'] == 'fine', finding['layers']
    # the two faults and nothing else
    assert sorted((c['kind'], c['name']) for c in servers.analysis['components']) == sorted(
        [('LUN', os.path.basename(servers.loops[LUN_UNDER_OST])), ('OST', 'testfs-OST%04x' % SLOW_OST)])
    assert servers.verdict['components'] == servers.analysis['components']


def test_a_slow_nic_is_named_with_the_node_that_owns_it(clients):
    finding = clients.component('NID', NIDS[SLOW_NIC])
    assert (finding['node'], finding['rule']) == (SLOW_NIC, 'nid'), finding
    assert finding['layer'] == 'network (LNet self-test)' and SLOW_NIC in finding['points_at'], finding
    assert all(e['survey'] == 'lnet' for e in finding['evidence']), finding['evidence']


def test_a_client_slow_in_ior_alone_points_at_the_client(clients):
    finding = clients.component('client', SLOW_CLIENT)
    assert (finding['node'], finding['rule'], finding['layer']) == (
        SLOW_CLIENT, 'client', 'file system from one client (IOR)'), finding
    assert finding['points_at'] == 'the client or striping', finding
    assert finding['layers']['network'] == 'fine' and finding['layers']['servers'] == 'fine', finding['layers']
    assert sorted((c['kind'], c['name']) for c in clients.analysis['components']) == sorted(
        [('NID', NIDS[SLOW_NIC]), ('client', SLOW_CLIENT)])
