# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Build the container images of the molecule fleet scenario, offline and idempotently.

Two local images, no registry involved (none is reachable from the build machines):

* ``localhost/iokit-bookworm:latest``: a Debian 12 root file system made by
  debootstrap from the apt mirror this machine already uses, imported into
  podman.  It carries what the simulated Lustre hosts need: systemd (PID 1),
  sshd, Python with venv and PyYAML (lustre-sim), kmod (the real module tools
  the simulator's wrappers pass other modules to), gawk/perl/bc (the I/O-kit
  scripts), sudo.
* ``localhost/iokit-bookworm-ssh:latest``: the same plus a throwaway public key
  in root's authorized_keys, so that molecule reaches the hosts over real SSH.
  The key pair is generated into ``molecule/.ssh/`` (git-ignored by
  ``molecule/.gitignore``); a private key is never committed.

Each image is labelled with what it was built from (package list, public key
fingerprint, base image id).  A re-run with matching labels does nothing (about
a second); a changed package list, a regenerated key or a rebuilt base image
rebuilds what depends on it.

podman, runc and debootstrap are installed with apt when missing (root only).
podman needs ``CONTAINERS_CONF`` pointing at ``molecule/containers.conf`` on
this kind of machine (see that file); this script sets it for its own calls.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MOLECULE_DIR = os.path.join(ROOT, 'molecule')
DEFAULT_CONTAINERS_CONF = os.path.join(MOLECULE_DIR, 'containers.conf')
DEFAULT_KEY = os.path.join(MOLECULE_DIR, '.ssh', 'id_ed25519')
BASE_IMAGE = 'localhost/iokit-bookworm:latest'
SSH_IMAGE = 'localhost/iokit-bookworm-ssh:latest'
SUITE = 'bookworm'
LABEL_PACKAGES = 'org.lustre-iokit.packages'
LABEL_KEY = 'org.lustre-iokit.ssh-key'
LABEL_BASE = 'org.lustre-iokit.base-image'
# Controller-side tools: podman (with runc as its OCI runtime) and debootstrap for the base image.
HOST_PACKAGES = {'podman': 'podman', 'runc': 'runc', 'debootstrap': 'debootstrap', 'ssh-keygen': 'openssh-client'}
IMAGE_PACKAGES = (
    'python3', 'python3-venv', 'python3-yaml',
    'systemd', 'systemd-sysv', 'dbus', 'openssh-server', 'sudo',
    'iproute2', 'procps', 'util-linux', 'kmod', 'psmisc',
    'gawk', 'perl', 'bc', 'sg3-utils',
)
SSHD_CONFIG = """\
# lustre.iokit fleet test hosts: key-only root login, no reverse DNS (it only slows logins down)
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UseDNS no
"""


def log(message: str) -> None:
    print('fleet_images: %s' % message, flush=True)


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, **kwargs)


def ensure_host_tools(install: bool) -> None:
    missing = sorted({package for command, package in HOST_PACKAGES.items() if shutil.which(command) is None})
    if not missing:
        return
    if not install:
        raise SystemExit('fleet_images: missing %s; install them (apt-get install %s) or drop --no-install'
                         % (', '.join(missing), ' '.join(missing)))
    if os.geteuid() != 0:
        raise SystemExit('fleet_images: %s missing and not root; run: sudo apt-get install %s'
                         % (', '.join(missing), ' '.join(missing)))
    log('installing %s with apt' % ' '.join(missing))
    env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
    run(['apt-get', 'update', '-qq'], env=env)
    run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends'] + missing, env=env)


def apt_mirror() -> str:
    """The Debian mirror this machine's apt already uses (deb822 or one-line sources)."""
    for path in ('/etc/apt/sources.list.d/debian.sources', '/etc/apt/sources.list'):
        try:
            with open(path, encoding='utf-8') as handle:
                lines = handle.read().splitlines()
        except OSError:
            continue
        for line in lines:
            words = line.split()
            if line.startswith('URIs:') and len(words) > 1 and 'security' not in words[1]:
                return words[1]
            if words[:1] == ['deb'] and len(words) > 2 and 'security' not in line:
                return next(w for w in words[1:] if '://' in w)
    return 'http://deb.debian.org/debian'


def image_label(image: str, label: str) -> str | None:
    """The label's value, '' when the image has no such label, None when there is no image."""
    if subprocess.run(['podman', 'image', 'exists', image], check=False).returncode != 0:
        return None
    inspected = subprocess.run(['podman', 'image', 'inspect', '--format', '{{ index .Labels "%s" }}' % label, image],
                               check=True, capture_output=True, text=True).stdout.strip()
    return '' if inspected == '<no value>' else inspected


def image_id(image: str) -> str:
    return run(['podman', 'image', 'inspect', '--format', '{{ .Id }}', image], capture_output=True, text=True).stdout.strip()


def packages_fingerprint() -> str:
    return hashlib.sha256(('%s\n%s\n%s' % (SUITE, ' '.join(IMAGE_PACKAGES), SSHD_CONFIG)).encode()).hexdigest()[:16]


def build_base_image(work: str) -> None:
    rootfs = os.path.join(work, 'rootfs')
    mirror = apt_mirror()
    log('debootstrap %s from %s (about a minute)' % (SUITE, mirror))
    run(['debootstrap', '--variant=minbase', '--include=' + ','.join(IMAGE_PACKAGES), SUITE, rootfs, mirror],
        stdout=subprocess.DEVNULL)
    with open(os.path.join(rootfs, 'etc', 'ssh', 'sshd_config.d', 'iokit-fleet.conf'), 'w', encoding='utf-8') as handle:
        handle.write(SSHD_CONFIG)
    # Every container gets its own identity at boot; a baked-in machine id would be shared by all of them.
    with open(os.path.join(rootfs, 'etc', 'machine-id'), 'w', encoding='utf-8'):
        pass
    for cache in ('var/cache/apt/archives', 'var/lib/apt/lists'):
        for entry in os.listdir(os.path.join(rootfs, cache)):
            path = os.path.join(rootfs, cache, entry)
            if os.path.isfile(path):
                os.unlink(path)
    log('importing the root file system as %s' % BASE_IMAGE)
    tar = subprocess.Popen(['tar', '-C', rootfs, '-c', '.'], stdout=subprocess.PIPE)
    run(['podman', 'import', '--quiet',
         '--change', 'CMD ["/sbin/init"]',
         '--change', 'LABEL %s=%s' % (LABEL_PACKAGES, packages_fingerprint()),
         '-', BASE_IMAGE], stdin=tar.stdout, stdout=subprocess.DEVNULL)
    tar.stdout.close()
    if tar.wait() != 0:
        raise SystemExit('fleet_images: tar of the root file system failed')


def ensure_key(key: str) -> str:
    if not (os.path.exists(key) and os.path.exists(key + '.pub')):
        os.makedirs(os.path.dirname(key), mode=0o700, exist_ok=True)
        for stale in (key, key + '.pub'):
            if os.path.exists(stale):
                os.unlink(stale)
        log('generating the throwaway SSH key %s' % key)
        run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'lustre-iokit-fleet-tests', '-f', key])
    os.chmod(key, 0o600)
    with open(key + '.pub', encoding='utf-8') as handle:
        return handle.read().strip()


def build_ssh_image(public_key: str, key_label: str, base_label: str) -> None:
    with tempfile.TemporaryDirectory(prefix='iokit-ssh-image-') as context:
        with open(os.path.join(context, 'authorized_keys'), 'w', encoding='utf-8') as handle:
            handle.write(public_key + '\n')
        with open(os.path.join(context, 'Containerfile'), 'w', encoding='utf-8') as handle:
            handle.write('FROM %s\n'
                         'COPY authorized_keys /root/.ssh/authorized_keys\n'
                         'RUN chmod 700 /root/.ssh && chmod 600 /root/.ssh/authorized_keys\n'
                         'LABEL %s=%s %s=%s\n'
                         'CMD ["/sbin/init"]\n' % (BASE_IMAGE, LABEL_KEY, key_label, LABEL_BASE, base_label))
        log('building %s' % SSH_IMAGE)
        run(['podman', 'build', '--quiet', '--pull=never', '-t', SSH_IMAGE, context], stdout=subprocess.DEVNULL)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--key', default=DEFAULT_KEY, help='private key path; the public key is KEY.pub (default: %(default)s)')
    parser.add_argument('--containers-conf', default=os.environ.get('CONTAINERS_CONF', DEFAULT_CONTAINERS_CONF),
                        help='podman configuration (default: $CONTAINERS_CONF or %(default)s)')
    parser.add_argument('--rebuild', action='store_true', help='rebuild both images even when they are up to date')
    parser.add_argument('--no-install', action='store_true', help='fail instead of installing missing host tools with apt')
    parser.add_argument('--work-dir', default='/var/tmp', help='where the debootstrap tree is made (~350 MB, removed after)')
    args = parser.parse_args()

    started = time.monotonic()
    os.environ['CONTAINERS_CONF'] = os.path.abspath(args.containers_conf)
    # The fleet and faults stages run side by side and each asks for the images: the second waits for the first
    # build and then finds them up to date.
    lock = open(os.path.join(tempfile.gettempdir(), 'iokit-fleet-images.lock'), 'w', encoding='utf-8')  # pylint: disable=consider-using-with
    fcntl.flock(lock, fcntl.LOCK_EX)
    ensure_host_tools(install=not args.no_install)

    if args.rebuild or image_label(BASE_IMAGE, LABEL_PACKAGES) != packages_fingerprint():
        with tempfile.TemporaryDirectory(prefix='iokit-rootfs-', dir=args.work_dir) as work:
            build_base_image(work)
    else:
        log('%s is up to date' % BASE_IMAGE)

    public_key = ensure_key(os.path.abspath(args.key))
    key_label = hashlib.sha256(public_key.encode()).hexdigest()[:16]
    base_label = image_id(BASE_IMAGE)[:16]
    wanted = '%s %s' % (key_label, base_label)
    existing = image_label(SSH_IMAGE, LABEL_KEY)
    if args.rebuild or existing is None or '%s %s' % (existing, image_label(SSH_IMAGE, LABEL_BASE)) != wanted:
        build_ssh_image(public_key, key_label, base_label)
    else:
        log('%s is up to date' % SSH_IMAGE)
    log('done in %.1f s' % (time.monotonic() - started))
    return 0


if __name__ == '__main__':
    sys.exit(main())
