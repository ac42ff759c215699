# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What must hold on every fleet host after converge: the simulator is in place as the inventory
describes it, and nothing of a survey is left behind (no echo_client, no obdecho, no helper process,
no lst session)."""

from __future__ import annotations

import json
import os

import pytest
import yaml

INVENTORY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'inventory')
SIM_ROOT = '/var/lib/lustre-sim/node'
PATH_TOOLS = ('lctl', 'lfs', 'lst', 'mdtest', 'mpirun')
MODULE_TOOLS = ('modprobe', 'rmmod', 'lsmod')
# The FUSE daemon of a client mount is a registered helper that must stay while the client is mounted.
CLIENT_MOUNT_HELPER = 'lustre-sim client mount '


def _vars(kind: str, name: str) -> dict:
    path = os.path.join(INVENTORY, kind, name + '.yml')
    if not os.path.exists(path):
        return {}
    with open(path, encoding='utf-8') as handle:
        return yaml.safe_load(handle) or {}


def _expected_targets(hostname: str) -> list[str]:
    fsname = _vars('group_vars', 'all')['lustre_sim_fsname']
    if hostname.startswith('client'):
        # A client node models the whole fleet (group_vars/clients.yml).
        servers = sorted(n[:-4] for n in os.listdir(os.path.join(INVENTORY, 'host_vars')) if not n.startswith('client'))
        mdts = [i for s in servers for i in _vars('host_vars', s).get('lustre_sim_mdt_indices', [])]
        osts = [i for s in servers for i in _vars('host_vars', s).get('lustre_sim_ost_indices', [])]
    else:
        own = _vars('host_vars', hostname)
        mdts, osts = own.get('lustre_sim_mdt_indices', []), own.get('lustre_sim_ost_indices', [])
    return sorted(['%s-MDT%04x' % (fsname, i) for i in mdts] + ['%s-OST%04x' % (fsname, i) for i in osts])


@pytest.fixture
def status(host):
    return json.loads(host.check_output('lustre-sim status --root %s', SIM_ROOT))


@pytest.fixture
def hostname(host):
    return host.backend.get_hostname()


def test_targets_are_the_inventorys(status, hostname):
    assert sorted(t['name'] for t in status['targets']) == _expected_targets(hostname)


def test_one_file_system_and_version_across_the_fleet(status):
    group_all = _vars('group_vars', 'all')
    assert status['fsname'] == group_all['lustre_sim_fsname']
    assert status['lustre_version'] == group_all['lustre_sim_lustre_version']


def test_throttles_are_the_inventorys(status, hostname):
    if hostname.startswith('client'):
        pytest.skip('a client models the servers\' throttles; checked on the servers')
    own = _vars('host_vars', hostname)
    for target in (t for t in status['targets'] if t['kind'] == 'ost'):
        label = target['name'].rsplit('-', 1)[1]
        wanted = own.get('lustre_sim_ost_mib_s_override', {}).get(label, own.get('lustre_sim_ost_mib_s'))
        assert target['mib_s'] == wanted, target['name']


def test_no_echo_client_device_left(status):
    assert [d['name'] for d in status['devices'] if d['type'] in ('echo_client', 'obdecho')] == []


def test_obdecho_not_loaded(host, status):
    assert 'obdecho' not in status['modules']
    # The same answer through the path the I/O-kit scripts use.
    assert not [line for line in host.check_output('/sbin/lsmod').splitlines() if line.split()[:1] == ['obdecho']]


def test_no_simulator_helper_left(status):
    assert [h for h in status['helpers'] if not h['command'].startswith(CLIENT_MOUNT_HELPER)] == []


def test_no_lst_session_left(status):
    assert status['lst']['session'] is None


def test_no_simulated_tool_still_running(host):
    running = host.run('pgrep -af "lustre_sim[.]tools"')
    assert running.rc == 1, running.stdout


def test_tools_on_path_are_the_simulators(host):
    # Resolved with the system PATH, as a survey module's command is in a non-interactive SSH session.
    # One shell per host: each podman exec costs about as much as the check itself.
    found = host.check_output('PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin; '
                              'for t in ' + ' '.join(PATH_TOOLS + MODULE_TOOLS) + '; '
                              'do p=$(command -v $t) && grep -q "lustre-sim shim" "$p" && echo "$p"; done').split()
    assert [os.path.basename(p) for p in found] == list(PATH_TOOLS + MODULE_TOOLS)
    assert all(p.startswith('/usr/local/') for p in found), found


def test_module_tools_by_absolute_path_are_diverted_to_the_simulators(host):
    # The system's tools are diverted, not lost: the symlinks to kmod stay symlinks.
    listing = host.check_output('for t in ' + ' '.join(MODULE_TOOLS) + '; '
                                'do grep -q "lustre-sim shim" /sbin/$t && readlink -f /sbin/$t.lustre-sim-orig; done').split()
    assert listing == ['/usr/bin/kmod'] * len(MODULE_TOOLS)


def test_module_tools_hand_other_modules_to_kmod(host):
    # No Lustre module named: the wrapper runs the real modprobe (kmod).
    assert host.check_output('/sbin/modprobe --version').startswith('kmod version')


def test_client_mount_is_fuse(status, hostname):
    if not hostname.startswith('client'):
        pytest.skip('servers have no client mount')
    assert status['client']['kind'] == 'fuse'
    assert status['client']['mountpoint'] == _vars('group_vars', 'clients')['lustre_sim_client_mount']
