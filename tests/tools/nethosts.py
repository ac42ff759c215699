# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Light SSH hosts for fleet-scale tests and benchmarks: network namespaces, sshd, one lustre-sim node each.

Every host is a network namespace on a bridge of its own (198.18.1.0/24, inside the reserved benchmarking
range, leaving 198.18.0.0/24 to hosts set up by hand on the same machine), with its own pid, mount and UTS namespace, a
private overlay of one shared Debian root file system, and ``sshd -D`` as its PID 1.  Before sshd starts,
the host's own simulated Lustre node is created (``lustre-sim init``, ``install-shims``), so an SSH session
finds ``lctl`` and friends on PATH exactly as on the molecule fleet.

The shared root file system is copied once from the fleet's base image (``localhost/iokit-bookworm``, built
by ``tests/tools/fleet_images.py``) and gets the simulator installed into ``/opt/lustre-sim`` the way
``roles/lustre_sim`` does it (a system-site-packages venv, the wheel installed by the image's own pip wheel,
no package index).  It is rebuilt when the simulator's sources or the base image change.

Command line (root only)::

    python tests/tools/nethosts.py prepare                   # the shared root file system (once)
    python tests/tools/nethosts.py up 16 --inventory /tmp/h.yml   # oss1..oss16, inventory written
    python tests/tools/nethosts.py down                      # whatever this tool brought up

From Python, ``with NetHosts(16) as hosts: ...`` brings the hosts up and always tears everything down (netns,
veth, bridge, mounts, sshd) when the block ends, also on Ctrl-C or SIGTERM.  ``down`` also finds hosts of an
earlier process that was SIGKILLed: they are listed in the state directory and carry the name prefix.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIMULATOR_DIR = os.path.join(ROOT, 'simulator')
BASE_IMAGE = 'localhost/iokit-bookworm:latest'
CONTAINERS_CONF = os.path.join(ROOT, 'molecule', 'containers.conf')
DEFAULT_CACHE = '/var/tmp/iokit-nethosts'
DEFAULT_STATE = '/run/iokit-nethosts'
PREFIX = 'ionh'
BRIDGE = PREFIX + 'br0'
SUBNET = '198.18.1.'
GATEWAY = SUBNET + '1'
SIM_VENV = '/opt/lustre-sim'
SIM_ROOT = '/var/lib/lustre-sim/node'
SSHD_CONFIG = """\
Port 22
HostKey {state}/hostkey
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
UseDNS no
AuthorizedKeysFile {state}/authorized_keys
StrictModes no
MaxStartups 100:30:200
Subsystem sftp internal-sftp
"""


def log(message: str) -> None:
    print('nethosts: %s' % message, file=sys.stderr, flush=True)


def run(argv: list[str], check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(argv, check=check, **kwargs)


def quiet(argv: list[str]) -> int:
    """Run a teardown step whose failure only means there was nothing to undo."""
    return subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False).returncode


def address(index: int) -> str:
    return SUBNET + str(10 + index)


# --------------------------------------------------------------------------
# The shared root file system


def source_fingerprint(image_id: str) -> str:
    digest = hashlib.sha256(image_id.encode())
    for top, dirs, files in os.walk(SIMULATOR_DIR):
        dirs[:] = sorted(d for d in dirs if d not in ('__pycache__', 'build', 'tests') and not d.endswith('.egg-info'))
        for name in sorted(files):
            if name.endswith('.pyc'):
                continue
            path = os.path.join(top, name)
            digest.update(os.path.relpath(path, SIMULATOR_DIR).encode())
            with open(path, 'rb') as handle:
                digest.update(handle.read())
    return digest.hexdigest()


def podman(argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.setdefault('CONTAINERS_CONF', CONTAINERS_CONF)
    return run(['podman'] + argv, env=env, **kwargs)


def prepare(cache: str = DEFAULT_CACHE, key: str | None = None) -> dict:
    """The shared root file system with the simulator installed, and the controller's SSH key; rebuilt on change.

    Returns ``{'rootfs', 'key'}``.
    """
    os.makedirs(cache, exist_ok=True)
    key = key or os.path.join(cache, 'id_ed25519')
    if not os.path.exists(key):
        run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'lustre.iokit nethosts', '-f', key])
    try:
        image_id = podman(['image', 'inspect', '--format', '{{.Id}}', BASE_IMAGE], capture_output=True,
                          text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        sys.exit('nethosts: the base image %s is missing; build it with tests/tools/fleet_images.py' % BASE_IMAGE)
    fingerprint = source_fingerprint(image_id)
    rootfs = os.path.join(cache, 'rootfs')
    stamp = os.path.join(cache, 'rootfs.stamp')
    if os.path.exists(stamp) and open(stamp, encoding='utf-8').read() == fingerprint:
        return {'rootfs': rootfs, 'key': key}
    started = time.monotonic()
    log('building the shared root file system in %s' % rootfs)
    if os.path.exists(stamp):
        os.unlink(stamp)
    shutil.rmtree(rootfs, ignore_errors=True)
    # A container's export, not a mount of the image: the copy must not pin the image other tools rebuild.
    container = podman(['create', '--pull=never', BASE_IMAGE, '/bin/true'], capture_output=True,
                       text=True).stdout.strip()
    try:
        os.makedirs(rootfs)
        export = subprocess.Popen(['podman', 'export', container], stdout=subprocess.PIPE,
                                  env=dict(os.environ, CONTAINERS_CONF=os.environ.get('CONTAINERS_CONF',
                                                                                      CONTAINERS_CONF)))
        run(['tar', '-C', rootfs, '-x', '--numeric-owner'], stdin=export.stdout)
        export.stdout.close()
        if export.wait():
            raise RuntimeError('podman export failed')
    finally:
        quiet(['podman', 'rm', '-f', container])
    with tempfile.TemporaryDirectory(prefix='nethosts-wheel-') as wheels:
        # as roles/lustre_sim: without setuptools at hand, pip builds in isolation (fetching setuptools)
        isolation = [] if quiet([sys.executable, '-c', 'import setuptools']) else ['--no-build-isolation']
        run([sys.executable, '-m', 'pip', 'wheel', '--quiet', '--disable-pip-version-check', '--no-deps',
             '--wheel-dir', wheels] + isolation + [SIMULATOR_DIR],
            env=dict(os.environ, SOURCE_DATE_EPOCH='315532800'))
        wheel = [name for name in os.listdir(wheels) if name.endswith('.whl')][0]
        shutil.copy(os.path.join(wheels, wheel), os.path.join(rootfs, 'tmp', wheel))
    # The same installation as roles/lustre_sim: no pip in the venv, pip run straight from its wheel.
    run(['chroot', rootfs, 'python3', '-m', 'venv', '--system-site-packages', '--without-pip', SIM_VENV])
    pip_wheel = run(['chroot', rootfs, 'python3', '-c',
                     'import glob; print(sorted(glob.glob("/usr/share/python-wheels/pip-*.whl"))[-1])'],
                    capture_output=True, text=True).stdout.strip()
    run(['chroot', rootfs, SIM_VENV + '/bin/python', pip_wheel + '/pip', 'install', '--quiet', '--no-index',
         '--no-deps', '--disable-pip-version-check', '/tmp/' + wheel])
    os.unlink(os.path.join(rootfs, 'tmp', wheel))
    os.symlink(SIM_VENV + '/bin/lustre-sim', os.path.join(rootfs, 'usr', 'local', 'bin', 'lustre-sim'))
    with open(stamp, 'w', encoding='utf-8') as handle:
        handle.write(fingerprint)
    log('root file system ready in %.1f s' % (time.monotonic() - started))
    return {'rootfs': rootfs, 'key': key}


# --------------------------------------------------------------------------
# Hosts


def node_config(name: str, index: int, osts_per_host: int, ost_mib_s: float, lustre_version: str,
                ost_size_mib: int) -> str:
    first = (index - 1) * osts_per_host
    lines = ['fsname: testfs', 'hostname: %s' % name, 'nid: "%s@tcp"' % address(index),
             'lustre_version: "%s"' % lustre_version, 'ost_size_mib: %d' % ost_size_mib, 'mdts: []', 'osts:']
    lines += ['  - index: %d' % ost for ost in range(first, first + osts_per_host)]
    if ost_mib_s:
        lines.append('ost_mib_s: %s' % ost_mib_s)
    lines.append('faults: []')
    return '\n'.join(lines) + '\n'


class NetHosts:
    """``count`` SSH hosts ``oss1``.. at 198.18.1.11.., each with its own simulated OSS; always torn down.

    Use as a context manager; ``inventory()`` gives an Ansible inventory (YAML text) for them.
    """

    def __init__(self, count: int, cache: str = DEFAULT_CACHE, state: str = DEFAULT_STATE, osts_per_host: int = 1,
                 ost_mib_s: float = 0, lustre_version: str = '2.15.5', ost_size_mib: int = 1024,
                 name_format: str = 'oss%d', wait_s: float = 60):
        if not 1 <= count <= 200:
            raise ValueError('count: 1 to 200 hosts, got %d' % count)
        self.count = count
        self.cache = cache
        self.state = state
        self.osts_per_host = osts_per_host
        self.ost_mib_s = ost_mib_s
        self.lustre_version = lustre_version
        self.ost_size_mib = ost_size_mib
        self.name_format = name_format
        self.wait_s = wait_s
        self.names = [name_format % index for index in range(1, count + 1)]
        self.prepared: dict = {}
        self._old_handlers: dict = {}

    # -- context manager: teardown on every way out -------------------------------------------

    def __enter__(self) -> NetHosts:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            self._old_handlers[signum] = signal.signal(signum, self._interrupted)
        try:
            self.up()
        except BaseException:
            self.down()
            self._restore_signals()
            raise
        return self

    def __exit__(self, *exc_info) -> None:
        try:
            self.down()
        finally:
            self._restore_signals()

    @staticmethod
    def _interrupted(signum, frame):
        raise KeyboardInterrupt('signal %d' % signum)

    def _restore_signals(self) -> None:
        for signum, handler in self._old_handlers.items():
            signal.signal(signum, handler)
        self._old_handlers = {}

    # -- bring-up -------------------------------------------------------------------------------

    def up(self) -> None:
        if os.geteuid() != 0:
            sys.exit('nethosts: needs root (network namespaces, mounts)')
        started = time.monotonic()
        self.prepared = prepare(self.cache)
        down(self.state)  # leftovers of an earlier, killed run
        os.makedirs(self.state, exist_ok=True)
        with open(os.path.join(self.state, 'hosts.json'), 'w', encoding='utf-8') as handle:
            json.dump({'count': self.count, 'pid': os.getpid()}, handle)
        run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', os.path.join(self.state, 'hostkey')])
        shutil.copy(self.prepared['key'] + '.pub', os.path.join(self.state, 'authorized_keys'))
        with open(os.path.join(self.state, 'sshd_config'), 'w', encoding='utf-8') as handle:
            handle.write(SSHD_CONFIG.format(state=self.state))
        run(['ip', 'link', 'add', BRIDGE, 'type', 'bridge'])
        run(['ip', 'addr', 'add', GATEWAY + '/24', 'dev', BRIDGE])
        run(['ip', 'link', 'set', BRIDGE, 'up'])
        for index, name in enumerate(self.names, start=1):
            self._start_host(index, name)
        self._wait_ready()
        log('%d hosts up in %.1f s' % (self.count, time.monotonic() - started))

    def _start_host(self, index: int, name: str) -> None:
        netns, veth = '%s%d' % (PREFIX, index), '%sv%d' % (PREFIX, index)
        base = os.path.join(self.state, netns)
        root = os.path.join(base, 'root')
        for sub in ('upper', 'work', 'root'):
            os.makedirs(os.path.join(base, sub), exist_ok=True)
        run(['ip', 'netns', 'add', netns])
        run(['ip', 'link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns])
        run(['ip', 'link', 'set', veth, 'master', BRIDGE, 'up'])
        run(['ip', '-n', netns, 'addr', 'add', address(index) + '/24', 'dev', 'eth0'])
        run(['ip', '-n', netns, 'link', 'set', 'eth0', 'up'])
        run(['ip', '-n', netns, 'link', 'set', 'lo', 'up'])
        run(['mount', '-t', 'overlay', 'overlay', '-o', 'lowerdir=%s,upperdir=%s/upper,workdir=%s/work'
             % (self.prepared['rootfs'], base, base), root])
        for sub in ('run/sshd', self.state.lstrip('/'), 'var/lib/lustre-sim', 'dev', 'sys'):
            os.makedirs(os.path.join(root, sub), exist_ok=True)
        run(['mount', '--bind', self.state, root + self.state])
        run(['mount', '-t', 'tmpfs', '-o', 'mode=755,size=64m', 'tmpfs', os.path.join(root, 'dev')])
        for device in ('null', 'zero', 'urandom', 'random', 'tty'):
            target = os.path.join(root, 'dev', device)
            open(target, 'w').close()
            run(['mount', '--bind', '/dev/' + device, target])
        for sub in ('pts', 'shm'):
            os.makedirs(os.path.join(root, 'dev', sub), exist_ok=True)
        run(['mount', '-t', 'devpts', '-o', 'newinstance,ptmxmode=0666', 'devpts', os.path.join(root, 'dev', 'pts')])
        os.symlink('pts/ptmx', os.path.join(root, 'dev', 'ptmx'))
        config = node_config(name, index, self.osts_per_host, self.ost_mib_s, self.lustre_version,
                             self.ost_size_mib)
        with open(os.path.join(root, 'var', 'lib', 'lustre-sim', 'node.yml'), 'w', encoding='utf-8') as handle:
            handle.write(config)
        sim = SIM_VENV + '/bin/lustre-sim'
        # Inside the new namespaces: the node is created with /proc of its own pid namespace mounted, then sshd
        # replaces the shell as PID 1 (a daemonising sshd would take the namespace down with it).
        inner = ('hostname {name} && chroot {root} {sim} init --root {node} --config {node}.yml --force >/dev/null'
                 ' && chroot {root} {sim} install-shims --root {node} >/dev/null'
                 ' && touch {root}/run/nethosts-ready'
                 ' && exec chroot {root} /usr/sbin/sshd -D -e -f {state}/sshd_config -o PidFile=/run/sshd.pid'
                 ).format(name=name, root=root, sim=sim, node=SIM_ROOT, state=self.state)
        with open(os.path.join(self.state, netns + '.log'), 'w', encoding='utf-8') as logfile:
            subprocess.Popen(['ip', 'netns', 'exec', netns, 'unshare', '--mount', '--uts', '--pid', '--fork',
                              '--mount-proc=%s/proc' % root, 'sh', '-c', inner],
                             stdin=subprocess.DEVNULL, stdout=logfile, stderr=subprocess.STDOUT,
                             start_new_session=True)

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.wait_s
        pending = set(range(1, self.count + 1))
        while pending:
            for index in sorted(pending):
                marker = os.path.join(self.state, '%s%d' % (PREFIX, index), 'root', 'run', 'nethosts-ready')
                if not os.path.exists(marker):
                    continue
                with contextlib.suppress(OSError), socket.create_connection((address(index), 22), timeout=1) as conn:
                    if conn.recv(4).startswith(b'SSH'):
                        pending.discard(index)
            if not pending:
                return
            if time.monotonic() > deadline:
                logs = []
                for index in sorted(pending)[:3]:
                    log_path = os.path.join(self.state, '%s%d.log' % (PREFIX, index))
                    with contextlib.suppress(OSError), open(log_path, encoding='utf-8') as handle:
                        logs.append('%s%d: %s' % (PREFIX, index, handle.read().strip()[-500:]))
                raise RuntimeError('hosts not answering SSH after %.0f s: %s; %s'
                                   % (self.wait_s, ', '.join(self.names[i - 1] for i in sorted(pending)),
                                      ' | '.join(logs)))
            time.sleep(0.1)

    def down(self) -> None:
        down(self.state)

    # -- for the playbooks ---------------------------------------------------------------------

    def inventory(self, group: str = 'oss') -> str:
        """YAML inventory: the hosts in ``group``, reached as root over SSH with the throwaway key."""
        lines = ['all:', '  vars:', '    ansible_user: root',
                 '    ansible_ssh_private_key_file: %s' % self.prepared['key'],
                 '    ansible_ssh_common_args: -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'
                 ' -o LogLevel=ERROR',
                 '    ansible_python_interpreter: /usr/bin/python3',
                 '  children:', '    %s:' % group, '      hosts:']
        for index, name in enumerate(self.names, start=1):
            lines.append('        %s: {ansible_host: %s}' % (name, address(index)))
        return '\n'.join(lines) + '\n'


def _netns_list() -> list[str]:
    listed = subprocess.run(['ip', 'netns', 'list'], capture_output=True, text=True, check=False).stdout
    return [line.split()[0] for line in listed.splitlines() if line.split() and line.split()[0].startswith(PREFIX)]


def down(state: str = DEFAULT_STATE) -> list[str]:
    """Tear down every host of this tool (processes, mounts, veth, netns), the bridge and the state directory.

    Idempotent; returns the namespaces removed.
    """
    namespaces = set(_netns_list())
    if os.path.isdir(state):
        namespaces.update(entry for entry in os.listdir(state)
                          if entry.startswith(PREFIX) and os.path.isdir(os.path.join(state, entry)))
    for netns in sorted(namespaces):
        pids = subprocess.run(['ip', 'netns', 'pids', netns], capture_output=True, text=True,
                              check=False).stdout.split()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
        root = os.path.join(state, netns, 'root')
        if os.path.ismount(root) or subprocess.run(['mountpoint', '-q', root], check=False).returncode == 0:
            # lazily: a process that is still dying may hold the mount for a moment
            quiet(['umount', '-R', root]) and quiet(['umount', '-R', '-l', root])
        quiet(['ip', 'link', 'del', netns.replace(PREFIX, PREFIX + 'v', 1)])
        quiet(['ip', 'netns', 'del', netns])
    quiet(['ip', 'link', 'del', BRIDGE])
    if os.path.isdir(state):
        still_mounted = [line.split()[1] for line in open('/proc/mounts', encoding='utf-8')
                         if line.split()[1].startswith(state + '/')]
        if still_mounted:
            log('not removing %s: still mounted: %s' % (state, ', '.join(still_mounted)))
        else:
            shutil.rmtree(state, ignore_errors=True)
    return sorted(namespaces)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    commands = parser.add_subparsers(dest='command', required=True)
    commands.add_parser('prepare', help='build the shared root file system (idempotent)')
    up_parser = commands.add_parser('up', help='bring N hosts up and leave them running (down removes them)')
    up_parser.add_argument('count', type=int)
    up_parser.add_argument('--inventory', help='write an Ansible inventory for the hosts here')
    up_parser.add_argument('--osts-per-host', type=int, default=1)
    up_parser.add_argument('--ost-mib-s', type=float, default=0, help='throttle every simulated OST')
    up_parser.add_argument('--lustre-version', default='2.15.5')
    commands.add_parser('down', help='remove every host, the bridge and the state')
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit('nethosts: needs root (network namespaces, mounts)')
    if args.command == 'prepare':
        print(json.dumps(prepare()))
    elif args.command == 'up':
        hosts = NetHosts(args.count, osts_per_host=args.osts_per_host, ost_mib_s=args.ost_mib_s,
                         lustre_version=args.lustre_version)
        try:
            hosts.up()
        except BaseException:
            hosts.down()
            raise
        if args.inventory:
            with open(args.inventory, 'w', encoding='utf-8') as handle:
                handle.write(hosts.inventory())
        print('\n'.join('%s %s' % (name, address(index)) for index, name in enumerate(hosts.names, start=1)))
    else:
        removed = down()
        print('removed: %s' % (' '.join(removed) or 'nothing'))
    return 0


if __name__ == '__main__':
    sys.exit(main())
