# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One QEMU guest with real SCSI disks for the whole session, and ansible-playbook over real SSH into it.

The guest (tests/tools/qemu_guest.py) has /dev/vda as its root (virtio, no sg node) and three
64 MiB ``scsi-hd`` data disks on virtio-scsi, /dev/sda../dev/sdc with sg nodes once ``sg`` is
loaded.  sg is blacklisted for udev in the guest so that each test decides who loads it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'tools'))

import qemu_guest  # noqa: E402

VENV_BIN = os.path.join(ROOT, '.venv', 'bin')
ANSIBLE_PLAYBOOK = os.path.join(VENV_BIN, 'ansible-playbook')
COLLECTIONS = os.path.join(ROOT, '.venv', 'collections')
RECAP = re.compile(r'^guest\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)', re.M)


def _can_run() -> str | None:
    if not os.access(ANSIBLE_PLAYBOOK, os.X_OK):
        return 'needs the checkout venv (make setup)'
    if shutil.which('qemu-system-x86_64') is None and os.geteuid() != 0:
        return 'needs qemu-system-x86 (or root to install it)'
    if os.geteuid() != 0 and not os.path.isdir(qemu_guest.GUEST_BUILD):
        return 'building the guest image needs root (debootstrap)'
    return None


class PlaybookRun:
    def __init__(self, completed: subprocess.CompletedProcess, results: dict):
        self.rc = completed.returncode
        self.output = completed.stdout + completed.stderr
        match = RECAP.search(completed.stdout)
        self.changed = int(match.group(2)) if match else None
        self.failed = int(match.group(4)) if match else None
        self.results = results

    def __repr__(self) -> str:
        return 'PlaybookRun(rc=%s, changed=%s)\n%s' % (self.rc, self.changed, self.output[-6000:])


class Controller:
    """Writes playbooks into a scratch directory and runs them against the guest."""

    def __init__(self, guest: qemu_guest.Guest, base: str):
        self.guest = guest
        self.base = base
        self.inventory = guest.inventory(os.path.join(base, 'inventory.ini'))
        self.count = 0

    def playbook(self, tasks: str, *args: str, extra_vars: dict | None = None, check: bool = False,
                 timeout: float = 900) -> PlaybookRun:
        """Run ``tasks`` (YAML of a task list, indented 4) on the guest; tasks may save results with the
        ``save`` variable: ``lustre.iokit`` modules' registered results are written to results.json
        by the last task when they are listed in ``save_vars``."""
        self.count += 1
        name = 'play%02d' % self.count
        results_path = os.path.join(self.base, name + '.results.json')
        path = os.path.join(self.base, name + '.yml')
        with open(path, 'w', encoding='utf-8') as handle:
            handle.write('---\n- name: Guest test %s\n  hosts: guest\n  gather_facts: false\n  tasks:\n%s\n' % (name, tasks))
        return self.run([path], *args, extra_vars=extra_vars, check=check, timeout=timeout, results_path=results_path)

    def run(self, playbooks: list[str], *args: str, extra_vars: dict | None = None, check: bool = False,
            timeout: float = 900, results_path: str | None = None) -> PlaybookRun:
        results_path = results_path or os.path.join(self.base, 'run%02d.results.json' % self.count)
        variables = dict(extra_vars or {}, results_file=results_path)
        cmd = [ANSIBLE_PLAYBOOK, '-i', self.inventory, '-e', json.dumps(variables)] + list(args) + playbooks
        if check:
            cmd.append('--check')
        env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_PIPELINING='1', ANSIBLE_NOCOLOR='1',
                   ANSIBLE_FORCE_COLOR='0', ANSIBLE_HOST_KEY_CHECKING='False', ANSIBLE_RETRY_FILES_ENABLED='0',
                   ANSIBLE_TIMEOUT='120',
                   PATH=VENV_BIN + os.pathsep + os.environ.get('PATH', ''))
        completed = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False)
        results = {}
        if os.path.exists(results_path):
            with open(results_path, encoding='utf-8') as handle:
                results = json.load(handle)
            os.unlink(results_path)
        return PlaybookRun(completed, results)


# A task that copies registered variables to the controller (results_file), for assertions.
def save_results(*names: str) -> str:
    content = '{' + ', '.join("'%s': %s | default(None)" % (name, name) for name in names) + '}'
    return '''
    - name: Save the results on the controller
      ansible.builtin.copy:
        content: "{{ %s | to_json }}"
        dest: "{{ results_file }}"
        mode: "0600"
      delegate_to: localhost
      check_mode: false
      vars:
        ansible_connection: local
        ansible_python_interpreter: "{{ ansible_playbook_python }}"
''' % content


@pytest.fixture(scope='session')
def guest():
    reason = _can_run()
    if reason:
        pytest.skip(reason)
    attach = os.environ.get('IOKIT_GUEST_PORT')
    if attach:
        # A guest left running by `qemu_guest.py up`: saves a boot while
        # writing tests; the tests expect it as they leave it (sg unloaded, no md array, node_prep absent).
        yield qemu_guest.Guest.attached(int(attach))
        return
    with qemu_guest.Guest(data_disks=3, disk_size='64M') as running:
        yield running


@pytest.fixture(scope='session')
def controller(guest):
    base = tempfile.mkdtemp(prefix='iokit-guest-test-')
    try:
        yield Controller(guest, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def sh(guest: qemu_guest.Guest, script: str, check: bool = True) -> str:
    """Run a shell snippet in the guest (test-side inspection only) and return its stdout."""
    result = guest.ssh(['sh', '-c', script], check=False)
    if check and result.returncode != 0:
        raise AssertionError('guest: %s failed (rc %d): %s%s' % (script, result.returncode, result.stdout, result.stderr))
    return result.stdout.strip()


def sg_loaded(guest: qemu_guest.Guest) -> bool:
    return guest.ssh(['test', '-d', '/sys/module/sg'], check=False).returncode == 0


def checksum(guest: qemu_guest.Guest, device: str) -> str:
    # O_DIRECT: sg writes bypass the page cache, so a cached read could hide them.
    return sh(guest, 'dd if=%s iflag=direct bs=1M status=none | sha256sum' % device).split()[0]
