# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A throwaway QEMU (TCG) guest with real SCSI disks, for tests that need /dev/sg*.

The build machines' kernel has neither SCSI nor loadable modules, so the sg
driver, ``sg allow_dio`` and /dev/sgN exist only inside a virtual machine.
This tool builds one, boots it and removes it again:

* **Image** (cached): a Debian 12 tree made by debootstrap from the apt mirror
  this machine uses (the fleet's :func:`fleet_images.apt_mirror`), with a
  distribution kernel, udev, kmod, python3, sg3-utils, mdadm and util-linux,
  root's authorized_keys holding the fleet's throwaway key
  (:func:`fleet_images.ensure_key`), written into a raw ext4 image with
  ``mkfs.ext4 -d`` (no loop mount).  It lives in
  ``.build/guest/<recipe hash>/``; a changed recipe or key builds a new one
  and removes the old ones.
* **Boot**: ``qemu-system-x86_64 -accel tcg`` (KVM aborts on this kind of
  host), the cached image behind a qcow2 overlay so that it stays pristine,
  N sparse data disks as ``scsi-hd`` on a virtio-scsi controller (they become
  /dev/sda.. and /dev/sg0..), SSH forwarded to a free port on 127.0.0.1.
* **Teardown**: ``poweroff`` over SSH, then SIGTERM/SIGKILL of QEMU by its
  pid, and the run directory (overlay, data disks, serial log) is removed.

Use it from Python (``with Guest(data_disks=3) as guest: guest.ssh(...)``) or
from the shell: ``qemu_guest.py build`` (image only) or ``qemu_guest.py
smoke`` (boot, show the SCSI devices, shut down).
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleet_images  # noqa: E402  (shares the fleet's mirror lookup and SSH key)

ROOT = fleet_images.ROOT
GUEST_BUILD = os.path.join(ROOT, '.build', 'guest')
SUITE = 'bookworm'
HOST_PACKAGES = {'qemu-system-x86_64': 'qemu-system-x86', 'qemu-img': 'qemu-utils', 'debootstrap': 'debootstrap',
                 'mkfs.ext4': 'e2fsprogs', 'ssh': 'openssh-client', 'ssh-keygen': 'openssh-client'}
GUEST_PACKAGES = (
    'linux-image-amd64', 'initramfs-tools', 'zstd', 'udev', 'kmod',
    'systemd', 'systemd-sysv', 'dbus', 'openssh-server', 'iproute2', 'procps',
    'python3', 'python3-apt', 'sg3-utils', 'mdadm', 'util-linux', 'e2fsprogs',
)
ROOT_IMAGE_SIZE = '2G'
FILES = {
    'etc/fstab': '/dev/vda / ext4 defaults,noatime 0 1\n',
    'etc/hostname': 'iokit-guest\n',
    'etc/hosts': '127.0.0.1 localhost\n127.0.1.1 iokit-guest\n',
    'etc/resolv.conf': 'nameserver 10.0.2.3\n',
    # A fixed address on QEMU's user network, set by one oneshot unit: far cheaper under TCG than
    # starting systemd-networkd and waiting for DHCP.
    # It waits for eth0 itself: a busy host can take longer than a device unit's 90 s to coldplug it.
    'etc/systemd/system/iokit-net.service': '''[Unit]
Description=lustre.iokit test guest: address on the QEMU user network
After=systemd-udev-trigger.service
Wants=network.target
Before=network.target ssh.service

[Service]
Type=oneshot
RemainAfterExit=yes
TimeoutStartSec=infinity
ExecStart=/bin/sh -c 'until [ -e /sys/class/net/eth0 ]; do sleep 0.5; done; ip link set lo up; ip link set eth0 up; \
ip addr replace 10.0.2.15/24 dev eth0; ip route replace default via 10.0.2.2'

[Install]
WantedBy=multi-user.target
''',
    # Only what finds and mounts the root file system goes into the initramfs: loading every module
    # of MODULES=most costs minutes on an emulated CPU.
    'etc/initramfs-tools/conf.d/iokit-guest.conf': 'MODULES=list\n',
    'etc/initramfs-tools/modules': 'virtio_pci\nvirtio_blk\ncrc32c_generic\next4\n',
    'etc/ssh/sshd_config.d/iokit-guest.conf': fleet_images.SSHD_CONFIG,
    # The tests decide whether sg is loaded (node_prep loads it); nothing may autoload it at boot.
    'etc/modprobe.d/iokit-guest.conf': ('# lustre.iokit test guest: sg is loaded by the tests, not by udev\n'
                                        'blacklist sg\n'),
    # mdadm must not assemble arrays it finds on the data disks of an earlier run at boot.
    'etc/mdadm/mdadm.conf': 'AUTO -all\nARRAY <ignore> UUID=00000000:00000000:00000000:00000000\n',
    # No console login prompts, no periodic jobs: nothing but the tests on the slow emulated CPU.
    'etc/systemd/system/serial-getty@ttyS0.service': '',
    'etc/systemd/system/getty@tty1.service': '',
    'etc/systemd/system/e2scrub_reap.service': '',
    'etc/systemd/system/e2scrub_all.timer': '',
    'etc/systemd/system/apt-daily.timer': '',
    'etc/systemd/system/apt-daily-upgrade.timer': '',
    'etc/systemd/system/fstrim.timer': '',
    'etc/systemd/system/mdmonitor.service': '',
    'etc/systemd/system/mdcheck_start.timer': '',
    'etc/systemd/system/mdcheck_continue.timer': '',
    'etc/systemd/system/mdmonitor-oneshot.timer': '',
}
KERNEL_ARGS = ('root=/dev/vda rw console=ttyS0 net.ifnames=0 mitigations=off loglevel=4 '
               # early, by systemd-modules-load: udev's coldplug of every device takes minutes under TCG
               'modules-load=virtio_net,virtio_scsi,sd_mod')
SSH_OPTIONS = ('-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR',
               '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=60', '-o', 'IdentitiesOnly=yes')


def log(message: str) -> None:
    print('qemu_guest: %s' % message, file=sys.stderr, flush=True)


def ensure_host_tools(install: bool = True) -> None:
    missing = sorted({package for command, package in HOST_PACKAGES.items() if shutil.which(command) is None})
    if not missing:
        return
    if not install or os.geteuid() != 0:
        raise SystemExit('qemu_guest: missing %s; run: apt-get install %s' % (', '.join(missing), ' '.join(missing)))
    log('installing %s with apt' % ' '.join(missing))
    env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
    subprocess.run(['apt-get', 'update', '-qq'], env=env, check=True)
    subprocess.run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends'] + missing, env=env, check=True)


def recipe_hash(public_key: str) -> str:
    """What the image is made of; any change to it means another image."""
    recipe = [SUITE, ' '.join(GUEST_PACKAGES), ROOT_IMAGE_SIZE, public_key]
    recipe += ['%s=%s' % item for item in sorted(FILES.items())]
    return hashlib.sha256('\n'.join(recipe).encode()).hexdigest()[:16]


class Image:
    """The cached guest image: root.img, vmlinuz and initrd.img in one directory."""

    def __init__(self, key: str = fleet_images.DEFAULT_KEY):
        self.key = os.path.abspath(key)
        self.public_key = fleet_images.ensure_key(self.key)
        self.directory = os.path.join(GUEST_BUILD, recipe_hash(self.public_key))
        self.root = os.path.join(self.directory, 'root.img')
        self.kernel = os.path.join(self.directory, 'vmlinuz')
        self.initrd = os.path.join(self.directory, 'initrd.img')

    def ready(self) -> bool:
        return all(os.path.isfile(path) for path in (self.root, self.kernel, self.initrd))

    def ensure(self, rebuild: bool = False) -> None:
        if self.ready() and not rebuild:
            return
        os.makedirs(GUEST_BUILD, exist_ok=True)
        started = time.monotonic()
        # The tree goes next to the image (same file system): /tmp may be a small tmpfs.
        with tempfile.TemporaryDirectory(prefix='build-', dir=GUEST_BUILD) as work:
            self._build(work)
        for stale in glob.glob(os.path.join(GUEST_BUILD, '*', 'root.img')):
            if os.path.dirname(stale) != self.directory:
                shutil.rmtree(os.path.dirname(stale), ignore_errors=True)
        log('image %s built in %.0f s' % (self.directory, time.monotonic() - started))

    def _build(self, work: str) -> None:
        tree = os.path.join(work, 'tree')
        mirror = fleet_images.apt_mirror()
        log('debootstrap %s with a kernel from %s (a few minutes under TCG-free load)' % (SUITE, mirror))
        subprocess.run(['debootstrap', '--variant=minbase', '--include=' + ','.join(GUEST_PACKAGES), SUITE, tree, mirror],
                       check=True, stdout=subprocess.DEVNULL)
        for relative, content in FILES.items():
            path = os.path.join(tree, relative)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if content:
                with open(path, 'w', encoding='utf-8') as handle:
                    handle.write(content)
            else:
                if os.path.lexists(path):
                    os.unlink(path)
                os.symlink('/dev/null', path)
        ssh_dir = os.path.join(tree, 'root', '.ssh')
        os.makedirs(ssh_dir, mode=0o700, exist_ok=True)
        with open(os.path.join(ssh_dir, 'authorized_keys'), 'w', encoding='utf-8') as handle:
            handle.write(self.public_key + '\n')
        os.chmod(os.path.join(ssh_dir, 'authorized_keys'), 0o600)
        wants = os.path.join(tree, 'etc', 'systemd', 'system', 'multi-user.target.wants')
        os.makedirs(wants, exist_ok=True)
        link = os.path.join(wants, 'iokit-net.service')
        if not os.path.lexists(link):
            os.symlink('/etc/systemd/system/iokit-net.service', link)
        # The blacklist must also be in the initramfs, or udev there loads sg before the root is mounted.
        subprocess.run(['chroot', tree, 'update-initramfs', '-u', '-k', 'all'], check=True, stdout=subprocess.DEVNULL,
                       env=dict(os.environ, PATH='/usr/sbin:/usr/bin:/sbin:/bin'))
        for cache in ('var/cache/apt/archives', 'var/lib/apt/lists'):
            for entry in os.listdir(os.path.join(tree, cache)):
                path = os.path.join(tree, cache, entry)
                if os.path.isfile(path):
                    os.unlink(path)
        kernels = sorted(glob.glob(os.path.join(tree, 'boot', 'vmlinuz-*')))
        initrds = sorted(glob.glob(os.path.join(tree, 'boot', 'initrd.img-*')))
        if not kernels or not initrds:
            raise SystemExit('qemu_guest: the tree has no kernel or initrd under /boot')
        partial = os.path.join(work, 'root.img')
        subprocess.run(['truncate', '-s', ROOT_IMAGE_SIZE, partial], check=True)
        subprocess.run(['mkfs.ext4', '-q', '-F', '-L', 'iokit-guest', '-d', tree, partial], check=True)
        os.makedirs(self.directory, exist_ok=True)
        shutil.copyfile(kernels[-1], self.kernel + '.part')
        shutil.copyfile(initrds[-1], self.initrd + '.part')
        # root.img last: its presence is what marks the image complete.
        os.replace(self.kernel + '.part', self.kernel)
        os.replace(self.initrd + '.part', self.initrd)
        os.replace(partial, self.root)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


class Guest:
    """A running guest; use as a context manager so that it is always shut down and removed."""

    def __init__(self, data_disks: int = 3, disk_size: str = '256M', memory_mb: int = 1024, cpus: int = 2,
                 boot_timeout: float = float(os.environ.get('IOKIT_GUEST_BOOT_TIMEOUT', '900')),
                 key: str = fleet_images.DEFAULT_KEY):
        self.image = Image(key)
        self.data_disks = data_disks
        self.disk_size = disk_size
        self.memory_mb = memory_mb
        self.cpus = cpus
        self.boot_timeout = boot_timeout
        self.port = 0
        self.run_dir = ''
        self.pid = 0
        self.boot_seconds = 0.0

    @classmethod
    def attached(cls, port: int) -> Guest:
        """A guest that is already running (started by someone else) on ``port``; stop() leaves it running."""
        guest = cls()
        guest.port = port
        return guest

    @property
    def key(self) -> str:
        return self.image.key

    def __enter__(self) -> Guest:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def start(self) -> None:
        ensure_host_tools()
        self.image.ensure()
        self.run_dir = tempfile.mkdtemp(prefix='run-', dir=GUEST_BUILD)
        overlay = os.path.join(self.run_dir, 'root.qcow2')
        subprocess.run(['qemu-img', 'create', '-q', '-f', 'qcow2', '-b', self.image.root, '-F', 'raw', overlay], check=True)
        self.port = free_port()
        cmd = ['qemu-system-x86_64', '-machine', 'q35', '-accel', 'tcg', '-m', str(self.memory_mb),
               '-smp', str(self.cpus), '-no-reboot', '-nodefaults',
               '-kernel', self.image.kernel, '-initrd', self.image.initrd, '-append', KERNEL_ARGS,
               '-drive', 'file=%s,if=virtio,format=qcow2,cache=unsafe' % overlay,
               '-device', 'virtio-scsi-pci,id=scsi0',
               '-netdev', 'user,id=n0,hostfwd=tcp:127.0.0.1:%d-:22' % self.port,
               '-device', 'virtio-net-pci,netdev=n0',
               '-serial', 'file:%s' % os.path.join(self.run_dir, 'serial.log'),
               '-monitor', 'none', '-display', 'none', '-daemonize',
               '-pidfile', os.path.join(self.run_dir, 'qemu.pid')]
        for index in range(self.data_disks):
            disk = os.path.join(self.run_dir, 'data%d.img' % index)
            subprocess.run(['truncate', '-s', self.disk_size, disk], check=True)
            cmd += ['-drive', 'file=%s,if=none,id=d%d,format=raw,cache=writeback,aio=threads' % (disk, index),
                    '-device', 'scsi-hd,drive=d%d,bus=scsi0.0,serial=iokit-data%d' % (index, index)]
        started = time.monotonic()
        subprocess.run(cmd, check=True)
        with open(os.path.join(self.run_dir, 'qemu.pid'), encoding='ascii') as handle:
            self.pid = int(handle.read().strip())
        self.wait_for_ssh(started)

    def wait_for_ssh(self, started: float) -> None:
        while time.monotonic() - started < self.boot_timeout:
            if not self.alive():
                raise RuntimeError('qemu exited during boot; serial log:\n' + self.serial_tail())
            if self.ssh(['true'], check=False, timeout=90).returncode == 0:
                self.boot_seconds = time.monotonic() - started
                log('guest up on 127.0.0.1:%d after %.1f s' % (self.port, self.boot_seconds))
                return
            time.sleep(2)
        raise RuntimeError('no SSH after %.0f s; serial log:\n%s' % (self.boot_timeout, self.serial_tail()))

    def serial_tail(self, lines: int = 40) -> str:
        try:
            with open(os.path.join(self.run_dir, 'serial.log'), encoding='utf-8', errors='replace') as handle:
                return ''.join(handle.readlines()[-lines:])
        except OSError:
            return '(no serial log)'

    def alive(self) -> bool:
        if not self.pid:
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def ssh_command(self, command: list[str]) -> list[str]:
        return ['ssh', '-p', str(self.port), '-i', self.key, *SSH_OPTIONS, 'root@127.0.0.1', '--', *command]

    def ssh(self, command: list[str], check: bool = True, timeout: float = 300, stdin: str | None = None
            ) -> subprocess.CompletedProcess:
        """Run a command in the guest; each word is quoted for the remote shell."""
        import shlex
        quoted = [shlex.quote(word) for word in command]
        return subprocess.run(self.ssh_command(quoted), check=check, capture_output=True, text=True,
                              timeout=timeout, input=stdin)

    def inventory(self, path: str, group: str = 'oss', name: str = 'guest') -> str:
        """An INI inventory reaching the guest over real SSH as root."""
        with open(path, 'w', encoding='utf-8') as handle:
            handle.write('[%s]\n%s ansible_host=127.0.0.1 ansible_port=%d ansible_user=root '
                         'ansible_ssh_private_key_file=%s ansible_python_interpreter=/usr/bin/python3 '
                         "ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'\n"
                         % (group, name, self.port, self.key))
        return path

    def stop(self) -> None:
        if self.alive():
            try:
                self.ssh(['systemctl', 'poweroff', '--no-block'], check=False, timeout=15)
            except subprocess.TimeoutExpired:
                pass
            deadline = time.monotonic() + 30
            while self.alive() and time.monotonic() < deadline:
                time.sleep(0.5)
            for sig in (signal.SIGTERM, signal.SIGKILL):
                if not self.alive():
                    break
                os.kill(self.pid, sig)
                deadline = time.monotonic() + 5
                while self.alive() and time.monotonic() < deadline:
                    time.sleep(0.2)
        self.pid = 0
        if self.run_dir:
            shutil.rmtree(self.run_dir, ignore_errors=True)
            self.run_dir = ''


def stop_run_dir(run_dir: str) -> None:
    """Stop a guest left running by ``up`` (SIGTERM, then SIGKILL, by the pid in its run directory) and remove it."""
    guest = Guest.__new__(Guest)
    guest.run_dir = os.path.abspath(run_dir)
    guest.port = 0
    try:
        with open(os.path.join(guest.run_dir, 'qemu.pid'), encoding='ascii') as handle:
            guest.pid = int(handle.read().strip())
    except FileNotFoundError:
        guest.pid = 0  # QEMU removes its pid file when it exits (after a poweroff in the guest)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if not guest.alive():
            break
        os.kill(guest.pid, sig)
        time.sleep(3)
    shutil.rmtree(guest.run_dir, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('action', choices=('build', 'smoke', 'up', 'down'),
                        help='build: the cached image only; smoke: boot, list SCSI devices, stop; up: boot and leave '
                             'it running (for IOKIT_GUEST_PORT); down: stop what up started (--run-dir)')
    parser.add_argument('--rebuild', action='store_true', help='build the image even when the cached one matches the recipe')
    parser.add_argument('--data-disks', type=int, default=3)
    parser.add_argument('--run-dir', help='for down: the run directory that up printed')
    args = parser.parse_args()
    if args.action == 'down':
        if not args.run_dir:
            parser.error('down needs --run-dir (printed by up)')
        stop_run_dir(args.run_dir)
        return 0
    ensure_host_tools()
    image = Image()
    image.ensure(rebuild=args.rebuild)
    print(image.directory)
    if args.action == 'up':
        guest = Guest(data_disks=args.data_disks, disk_size='64M')
        try:
            guest.start()
        except BaseException:
            guest.stop()
            raise
        print('IOKIT_GUEST_PORT=%d  (stop with: %s down --run-dir %s)' % (guest.port, sys.argv[0], guest.run_dir))
    elif args.action == 'smoke':
        with Guest(data_disks=args.data_disks) as guest:
            for command in (['uname', '-r'], ['lsblk', '-o', 'NAME,TYPE,SIZE,MODEL'], ['modprobe', 'sg'],
                            ['sg_map', '-i'], ['modprobe', '-r', 'sg']):
                result = guest.ssh(command, check=False)
                print('$ %s (rc %d)\n%s%s' % (' '.join(command), result.returncode, result.stdout, result.stderr))
    return 0


if __name__ == '__main__':
    sys.exit(main())
