# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The obdfilter survey through the network: case=network and case=netdisk.

case=network measures LNet and the RPC path to an ``obdecho`` server on another node (Lustre 2.15.6 and
older); case=netdisk the real OSTs from a client through oscs of its own (Lustre 2.15.5 and older).  Both
run the sweep of ``ObdfilterSurvey`` (``obdfilter.py``) over echo clients stacked on an osc, with test_brw's
``g`` batches.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import socket

try:
    from shlex import quote as shell_quote
except ImportError:  # Python 2 targets
    from pipes import quote as shell_quote

from ansible_collections.lustre.iokit.plugins.module_utils import lctl as lctl_utils
from ansible_collections.lustre.iokit.plugins.module_utils.engines.obdfilter import (
    CASE_NETDISK, CASE_NETWORK, EngineError, ObdfilterSurvey)
from ansible_collections.lustre.iokit.plugins.module_utils.lctl import ECHO_MODULE

_IPV4_RE = re.compile(r'^\d{1,3}(?:\.\d{1,3}){3}$')

# case=network: the I/O kit's device names (docs/iokit-notes.md, 4.3), kept so that its leftover patterns
# (echotmp*, *_ecc) and playbooks/cleanup.yml recognise what a killed run left.
NETWORK_SERVER_DEVICE = 'echo_srv'
NETWORK_SERVER_UUID = 'echo_srv_UUID'
NETWORK_OSS_DEVICE = 'OSS'
NETWORK_OSC = 'echotmp'
NETWORK_ECHO_CLIENT = 'echotmp_ecc'
NETWORK_PEER_UUID = 'echo_UUID'
DEFAULT_NETTYPE = 'tcp'
# test_brw's batching through an osc: the kbrw path.
BATCH_NETWORK = 'g'


def network_peer(server, nettype=DEFAULT_NETTYPE, resolve=socket.gethostbyname):
    """``(host, nid)`` for the one server of case=network.

    ``server`` is an IPv4 address, a host name (resolved, since a NID needs
    an address) or a NID such as ``192.168.1.5@o2ib``.  ``host`` is what the
    remote shell connects to.  Raises EngineError naming ``targets``.
    """
    if '@' in server:
        host = server.split('@', 1)[0]
        if not host:
            raise EngineError('targets: %r is not a NID (address@network)' % server)
        return host, server
    if _IPV4_RE.match(server):
        return server, '%s@%s' % (server, nettype)
    try:
        address = resolve(server)
    except (socket.error, UnicodeError) as exc:
        raise EngineError('targets: the server %s does not resolve to an IPv4 address (%s); give its address '
                          'or its NID' % (server, exc))
    return server, '%s@%s' % (address, nettype)


def mounted_client_oscs(devices):
    """The UP osc devices of a mounted client (not the MDT's): the I/O kit refuses case=network beside them."""
    return [device['name'] for device in devices
            if device['type'] == 'osc' and device['status'] == 'UP' and 'mdt' not in device['name'].lower()]


class RemoteRunner:
    """Runs commands on the echo server through a remote shell, as the I/O kit's ``ssh <server> ...``.

    ``shell`` is the argument list before the host (``['ssh', '-o', 'BatchMode=yes']``); the remote
    command is the only place an argument list becomes a string, every word quoted for the remote shell.
    An empty ``shell`` runs the commands here (the server is this node).
    """

    def __init__(self, runner, shell, host):
        self.runner = runner
        self.shell = list(shell or [])
        self.host = host

    def argv(self, argv):
        if not self.shell:
            return list(argv)
        command = ' '.join(shell_quote(word) for word in ['env', 'LANG=C', 'LC_ALL=C'] + list(argv))
        return self.shell + [self.host, command]

    def run(self, argv, env=None, cwd=None):
        return self.runner.run(self.argv(argv))


class NetworkSurvey(ObdfilterSurvey):
    """case=network: echo_client over an osc to an ``obdecho`` server on another node (LNet and RPC only).

    As the I/O kit does it (docs/iokit-notes.md, 4.3): on the server, obdecho is
    loaded if absent and an ``obdecho`` device ``echo_srv`` set up (plus an
    ``ost`` service device ``OSS`` when the node has none); here, the
    server's NID gets the UUID ``echo_UUID``, an ``osc`` ``echotmp`` connects
    to ``echo_srv_UUID`` through it, and the echo client ``echotmp_ecc`` on
    top runs the same sweep with ``g`` batches.  Only what this run made is
    undone: the server devices only when we attached them, the OSS service
    only when we created it (the script tears down an existing one too).

    ``server_runner`` runs the server's commands (a RemoteRunner).  Needs a
    node whose echo_client still has the kbrw path (Lustre 2.15.6 and older,
    see ``case_problem``).  obdecho on this node is the driver's to load and
    unload, as for case=disk; only the server's is loaded here.
    """

    def __init__(self, context, server, nid, size_mib, server_runner=None, **options):
        options['case'] = CASE_NETWORK
        ObdfilterSurvey.__init__(self, context, [server], size_mib, **options)
        self.server = server
        self.nid = nid
        self.batch = BATCH_NETWORK
        self.server_runner = server_runner or self.control_runner
        self.server_lctl = lctl_utils.Lctl(self.server_runner)
        self.server_made = []
        self.server_loaded_obdecho = False
        self.server_reused = []
        self.client_made = []
        self.server_version = None

    def setup_commands(self):
        """What setup runs, for the check-mode plan: ``{'server': [argv...], 'client': [argv...]}``."""
        return {
            'server': [self.server_runner.argv(['modprobe', ECHO_MODULE]) + ['(if not loaded)'],
                       self.server_runner.argv(['lctl', 'attach', 'obdecho', NETWORK_SERVER_DEVICE,
                                                NETWORK_SERVER_UUID]),
                       self.server_runner.argv(['lctl', '--device', NETWORK_SERVER_DEVICE, 'setup']),
                       self.server_runner.argv(['lctl', 'attach', 'ost', NETWORK_OSS_DEVICE,
                                                NETWORK_OSS_DEVICE + '_UUID']) + ['(if no ost device)'],
                       self.server_runner.argv(['lctl', '--device', NETWORK_OSS_DEVICE, 'setup'])
                       + ['(if no ost device)']],
            'client': [['modprobe', ECHO_MODULE, '(if not loaded)'],
                       ['lctl', 'add_uuid', NETWORK_PEER_UUID, self.nid],
                       ['lctl', 'attach', 'osc', NETWORK_OSC, NETWORK_OSC + '_UUID'],
                       ['lctl', '--device', NETWORK_OSC, 'setup', NETWORK_SERVER_UUID, NETWORK_PEER_UUID],
                       ['lctl', 'attach', 'echo_client', NETWORK_ECHO_CLIENT, NETWORK_ECHO_CLIENT + '_UUID'],
                       ['lctl', '--device', NETWORK_ECHO_CLIENT, 'setup', NETWORK_OSC]],
        }

    def totals_per_ost(self):
        """Bytes sent to and read from the echo server (which stores nothing), keyed by the server."""
        totals = ObdfilterSurvey.totals_per_ost(self)
        for figures in totals.values():
            figures['stored_on_server'] = False
        return totals

    def _fail(self, message):
        self.errors.append({'point': None, 'message': message})
        return False

    def _setup_server(self):
        try:
            modules = lctl_utils.loaded_modules(self.server_runner)
        except lctl_utils.LctlError as exc:
            return self._fail('cannot reach the echo server %s: %s' % (self.server, exc))
        # The driver's load runs on this node and its record is this node's state, which neither reaches
        # nor undoes anything on the server: the server's obdecho is loaded and unloaded here, through
        # the remote shell.  With the server on this node (no server_shell) the driver has loaded it.
        if ECHO_MODULE not in modules:
            result = self.server_runner.run(['modprobe', ECHO_MODULE])
            if result.rc != 0 or result.timed_out:
                return self._fail('cannot load %s on the server %s: %s'
                                  % (ECHO_MODULE, self.server, (result.stderr or result.stdout).strip()))
            self.server_loaded_obdecho = True
        try:
            self.server_version = self.server_lctl.version()
            devices = self.server_lctl.devices()
            existing = self.server_lctl.find(NETWORK_SERVER_DEVICE, devices)
            if existing is not None and existing['type'] != 'obdecho':
                return self._fail('the server %s has a %s device named %s; refusing to touch it'
                                  % (self.server, existing['type'], NETWORK_SERVER_DEVICE))
            if existing is not None and existing['status'] == 'UP':
                # another client's network survey may be using it: use it too, leave it to its owner
                self.server_reused.append(NETWORK_SERVER_DEVICE)
            else:
                if existing is not None:
                    self.server_lctl.teardown(NETWORK_SERVER_DEVICE, devices)
                self.server_made.append(NETWORK_SERVER_DEVICE)
                self.server_lctl.run(['attach', 'obdecho', NETWORK_SERVER_DEVICE, NETWORK_SERVER_UUID])
                self.server_lctl.run(['--device', NETWORK_SERVER_DEVICE, 'setup'])
            if not any(device['type'] == 'ost' and device['status'] == 'UP' for device in devices):
                self.server_made.append(NETWORK_OSS_DEVICE)
                self.server_lctl.run(['attach', 'ost', NETWORK_OSS_DEVICE, NETWORK_OSS_DEVICE + '_UUID'])
                self.server_lctl.run(['--device', NETWORK_OSS_DEVICE, 'setup'])
            devices = self.server_lctl.devices()
        except lctl_utils.LctlError as exc:
            return self._fail('cannot set up the echo server on %s: %s' % (self.server, exc))
        types = set(device['type'] for device in devices if device['status'] == 'UP')
        for needed, what in (('obdecho', 'obdecho'), ('ost', 'ost')):
            if needed not in types:
                return self._fail('%s not set up on the server %s (lctl dl there shows no UP %s device)'
                                  % (what, self.server, needed))
        return True

    def make_devices(self):
        """Set up the echo server, then the osc and echo client here; False (and ``errors``) when it fails."""
        try:
            leftover = self.lctl.find(NETWORK_OSC)
        except lctl_utils.LctlError as exc:
            return self._fail('cannot list the Lustre devices: %s' % exc)
        if leftover is not None:
            return self._fail('a %s device %s already exists on this node: another network survey is running, or '
                              'an earlier one was killed (playbooks/cleanup.yml removes its leftovers)'
                              % (leftover['type'], NETWORK_OSC))
        if not self._setup_server():
            return False
        try:
            self.client_made.append('uuid')
            self.lctl.run(['add_uuid', NETWORK_PEER_UUID, self.nid])
            self.client_made.append(NETWORK_OSC)
            self.lctl.run(['attach', 'osc', NETWORK_OSC, NETWORK_OSC + '_UUID'])
            self.lctl.run(['--device', NETWORK_OSC, 'setup', NETWORK_SERVER_UUID, NETWORK_PEER_UUID])
        except lctl_utils.LctlError as exc:
            return self._fail('cannot connect an osc to the echo server %s (%s): %s' % (self.server, self.nid, exc))
        target = self.server
        self.echo_clients[target] = NETWORK_ECHO_CLIENT
        # written down first: if we are killed half-way, the cleanup still finds it
        self._remember_echo_client(target)
        try:
            self.lctl.attach_echo_client(NETWORK_ECHO_CLIENT, NETWORK_OSC)
        except lctl_utils.LctlError as exc:
            return self._fail("can't set up echo-client %s on %s: %s" % (NETWORK_ECHO_CLIENT, NETWORK_OSC, exc))
        return True

    def teardown(self, control_runner=None):
        """The echo client and objects (as case=disk), then the osc and UUID here, then the server's devices."""
        problems = ObdfilterSurvey.teardown(self, control_runner)
        more = []
        if self.echo_clients:
            more.append('%s is still set up (see the errors above); %s and the server devices are left for the '
                        'cleanup' % (NETWORK_ECHO_CLIENT, NETWORK_OSC))
        else:
            if NETWORK_OSC in self.client_made:
                try:
                    self.lctl.teardown(NETWORK_OSC)
                    self.client_made.remove(NETWORK_OSC)
                except lctl_utils.LctlError as exc:
                    more.append('tear down osc %s: %s' % (NETWORK_OSC, exc))
            if 'uuid' in self.client_made and NETWORK_OSC not in self.client_made:
                result = self.lctl.run(['del_uuid', NETWORK_PEER_UUID], check=False)
                if result.rc != 0:
                    more.append('del_uuid %s: %s' % (NETWORK_PEER_UUID, (result.stderr or result.stdout).strip()))
                self.client_made.remove('uuid')
            if not self.client_made:
                for name in reversed(list(self.server_made)):
                    try:
                        self.server_lctl.teardown(name)
                        self.server_made.remove(name)
                    except lctl_utils.LctlError as exc:
                        more.append('tear down %s on the server %s: %s' % (name, self.server, exc))
        if self.server_loaded_obdecho and not self.server_made:
            result = self.server_runner.run(['rmmod', ECHO_MODULE])
            if result.rc == 0:
                self.server_loaded_obdecho = False
            else:
                more.append('unload %s on the server %s: %s' % (ECHO_MODULE, self.server,
                                                                (result.stderr or result.stdout).strip()))
        return problems + more


# --------------------------------------------------------------------------
# case=netdisk (Lustre 2.15.5 and older)


def netdisk_osc_name(ost):
    return '%s_osc' % ost


def netdisk_targets(devices, requested, nettype=DEFAULT_NETTYPE, resolve=socket.gethostbyname):
    """``[(ost, nid)]`` for case=netdisk, as the I/O kit finds them.

    Without ``requested``: every UP osc of the mounted client (``lctl dl -t``; the OST is the name before
    ``-osc-``, the NID the connection's).  Otherwise ``[host:]ost`` items: ``host`` gives the NID, a bare
    OST name takes it from the client's osc.  Raises EngineError naming ``targets``.
    """
    oscs = {}
    for device in devices:
        if device['type'] == 'osc' and device['status'] == 'UP' and '-osc-' in device['name'] \
                and 'mdt' not in device['name'].lower():
            oscs.setdefault(device['name'].split('-osc-')[0], device.get('nid'))
    if not requested:
        if not oscs:
            raise EngineError('targets: case=netdisk found no UP osc device here (lctl dl -t); run it on a client '
                              'with the file system mounted, or name the OSTs as host:ost')
        missing = sorted(ost for ost, nid in oscs.items() if not nid)
        if missing:
            raise EngineError('targets: lctl dl -t shows no NID for the osc of %s; name them as host:ost'
                              % ', '.join(missing))
        return sorted(oscs.items())
    chosen = []
    problems = []
    for item in requested:
        host, separator, ost = item.rpartition(':')
        if not ost or ost in [name for name, unused in chosen]:
            problems.append('targets: %r is empty or listed twice' % item)
        elif separator:
            try:
                chosen.append((ost, network_peer(host, nettype, resolve)[1]))
            except EngineError as exc:
                problems.append(str(exc))
        elif oscs.get(ost):
            chosen.append((ost, oscs[ost]))
        else:
            problems.append('targets: %s has no UP osc with a NID on this node (lctl dl -t lists %s); name it as '
                            'host:%s' % (ost, ', '.join(sorted(oscs)) or 'none', ost))
    if problems:
        raise EngineError('; '.join(problems))
    return chosen


class NetdiskSurvey(ObdfilterSurvey):
    """case=netdisk: echo clients over oscs of their own to the real OSTs, from a client (Lustre 2.15.5 and older).

    As the I/O kit did it (docs/iokit-notes.md, 4.7): one UUID per server NID (``add_uuid host_<i>_UUID <nid>``),
    per OST an ``osc`` ``<ost>_osc`` set up against ``<ost>_UUID`` through it and an echo client
    ``<ost>_osc_ecc`` on top; the sweep is case=disk's with ``g`` batches, all OSTs at once.  The objects
    are created on the real OSTs, in the echo sequence.  Everything made is undone at the end.
    """

    def __init__(self, context, peers, size_mib, **options):
        options['case'] = CASE_NETDISK
        ObdfilterSurvey.__init__(self, context, [ost for ost, unused in peers], size_mib, **options)
        self.peers = list(peers)
        self.batch = BATCH_NETWORK
        self.uuids = {}
        for nid in [nid for unused, nid in self.peers]:
            if nid not in self.uuids:
                self.uuids[nid] = 'host_%d_UUID' % len(self.uuids)
        self.made_oscs = []
        self.added_uuids = []

    def setup_commands(self):
        """What setup runs here, for the check-mode plan: ``{'client': [argv...]}``."""
        commands = [['modprobe', ECHO_MODULE, '(if not loaded)']]
        commands += [['lctl', 'add_uuid', uuid, nid] for nid, uuid in self.uuids.items()]
        for ost, nid in self.peers:
            osc = netdisk_osc_name(ost)
            commands += [['lctl', 'attach', 'osc', osc, osc + '_UUID'],
                         ['lctl', '--device', osc, 'setup', ost + '_UUID', self.uuids[nid]],
                         ['lctl', 'attach', 'echo_client', osc + '_ecc', osc + '_ecc_UUID'],
                         ['lctl', '--device', osc + '_ecc', 'setup', osc]]
        return {'client': commands}

    def _fail(self, message):
        self.errors.append({'point': None, 'message': message})
        return False

    def make_devices(self):
        """The UUIDs, oscs and echo clients; False (and ``errors``) when it fails."""
        try:
            devices = self.lctl.devices()
        except lctl_utils.LctlError as exc:
            return self._fail('cannot list the Lustre devices: %s' % exc)
        leftovers = [netdisk_osc_name(ost) for ost in self.targets
                     if self.lctl.find(netdisk_osc_name(ost), devices) is not None]
        if leftovers:
            return self._fail('%s already exist on this node: another netdisk survey is running, or an earlier one '
                              'was killed (remove them with lctl --device <name> cleanup, then detach)'
                              % ', '.join(leftovers))
        for ost, nid in self.peers:
            osc = netdisk_osc_name(ost)
            try:
                if nid not in self.added_uuids:
                    self.added_uuids.append(nid)
                    self.lctl.run(['add_uuid', self.uuids[nid], nid])
                self.made_oscs.append(osc)
                self.lctl.run(['attach', 'osc', osc, osc + '_UUID'])
                self.lctl.run(['--device', osc, 'setup', ost + '_UUID', self.uuids[nid]])
            except lctl_utils.LctlError as exc:
                return self._fail('cannot connect an osc to %s (%s): %s' % (ost, nid, exc))
            self.echo_clients[ost] = osc + '_ecc'
            self._remember_echo_client(ost)
            try:
                self.lctl.attach_echo_client(osc + '_ecc', osc)
            except lctl_utils.LctlError as exc:
                return self._fail("can't set up echo-client %s on %s: %s" % (osc + '_ecc', osc, exc))
        return True

    def teardown(self, control_runner=None):
        """The echo clients and objects (as case=disk), then the oscs and UUIDs made."""
        problems = ObdfilterSurvey.teardown(self, control_runner)
        more = []
        for osc in list(self.made_oscs):
            if osc[:-len('_osc')] in self.echo_clients:
                more.append('%s is left for the cleanup: its echo client is still set up' % osc)
                continue
            try:
                self.lctl.teardown(osc)
                self.made_oscs.remove(osc)
            except lctl_utils.LctlError as exc:
                more.append('tear down osc %s: %s' % (osc, exc))
        if not self.made_oscs:
            for nid in list(self.added_uuids):
                result = self.lctl.run(['del_uuid', self.uuids[nid]], check=False)
                if result.rc != 0:
                    more.append('del_uuid %s: %s' % (self.uuids[nid], (result.stderr or result.stdout).strip()))
                self.added_uuids.remove(nid)
        return problems + more
