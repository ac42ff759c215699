# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run from the checkout: the collection is importable through .venv/collections (linked by `make setup`)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# IOKIT_COLLECTIONS_PATH (a collections path, ':'-separated) runs another copy of the collection, such as a git
# worktree's whose .venv is a link to the main checkout's (whose .venv/collections holds the main checkout's).
COLLECTIONS = os.environ.get('IOKIT_COLLECTIONS_PATH') or os.path.join(ROOT, '.venv', 'collections')
# The ansible-core matrix (tests/tools/core_matrix.py) runs these tests with an older line's ansible-playbook
# and the oldest node Python that line supports; by default the checkout's own.
ANSIBLE_BIN = os.environ.get('IOKIT_ANSIBLE_BIN') or os.path.join(ROOT, '.venv', 'bin')
NODE_PYTHON = os.environ.get('IOKIT_NODE_PYTHON') or sys.executable
for _path in reversed(COLLECTIONS.split(os.pathsep)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

# The tests here wait the way the unit tests do, with the same helper: ``from conftest import wait_for``.
from ansible_collections.lustre.iokit.tests.unit.waiting import wait_for  # noqa: E402 pylint: disable=wrong-import-position,unused-import
from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import (  # noqa: E402 pylint: disable=wrong-import-position
    envelope_path, read_envelope)

VENV_BIN = os.path.join(ROOT, '.venv', 'bin')

# Every ansible-playbook these tests start, and the modules it runs on this machine's Python, load the compiled code
# of a module payload from a cache instead of compiling it in each run (tests/tools/module_code_cache: about a third
# of the CPU a module run costs, and these tests run thousands).  IOKIT_MODULE_CODE_CACHE='' turns it off.
MODULE_CODE_CACHE_HOOK = os.path.join(ROOT, 'tests', 'tools', 'module_code_cache')
if os.environ.setdefault('IOKIT_MODULE_CODE_CACHE', os.path.join(ROOT, '.build', 'module-code-cache')):
    os.environ['PYTHONPATH'] = os.pathsep.join(
        [MODULE_CODE_CACHE_HOOK] + [path for path in os.environ.get('PYTHONPATH', '').split(os.pathsep) if path])
# The surveys' <survey>_poll_interval_s in these tests: how long each wait task blocks on the node before the
# controller looks again.  The wait returns as soon as the survey ends, so a long interval costs no time, while a
# one-second one ran a whole task every second of a throttled survey (four such tests side by side kept both
# cores busy).  The tests of the per-poll progress line and of a lost controller poll every second on purpose.
WAIT_POLL_S = 15
ANSIBLE_PLAYBOOK = os.path.join(VENV_BIN, 'ansible-playbook')
LUSTRE_SIM = shutil.which('lustre-sim', path=VENV_BIN + os.pathsep + os.environ.get('PATH', ''))
# Makes a block device slow by construction for the processes of one interpreter (docs/testing.md).
SLOW_DEVICE = os.path.join(ROOT, 'tests', 'integration', 'targets', 'setup_slow_device', 'files', 'slow_device.py')


def localhost_inventory(python, groups=()):
    """An inventory of localhost alone (local connection, run by ``python``), a member of each of ``groups``."""
    lines = ['all:', '  hosts:', '    localhost:', '      ansible_connection: local',
             '      ansible_python_interpreter: %s' % python]
    if groups:
        lines.append('  children:')
        lines.extend('    %s: {hosts: {localhost: }}' % group for group in groups)
    return '\n'.join(lines) + '\n'


def simulated_local_host(base, name, *init_args):
    """A lustre-sim node ``<base>/<name>`` (``lustre-sim init`` with ``init_args``) and the inventory variables of
    a local-connection host that is that node: a Python wrapper puts the node's tools on PATH, and its own workdir."""
    root = os.path.join(base, name)
    subprocess.run([LUSTRE_SIM, 'init', '--root', root] + list(init_args) + ['--no-mount', '--force'], check=True,
                   stdout=subprocess.DEVNULL)
    python = os.path.join(base, name + '-python')
    with open(python, 'w', encoding='utf-8') as handle:
        handle.write('#!/bin/sh\nPATH="%s/bin:$PATH" LUSTRE_SIM_ROOT="%s" exec "%s" "$@"\n' % (root, root, sys.executable))
    os.chmod(python, stat.S_IRWXU)
    return {'ansible_connection': 'local', 'ansible_python_interpreter': python,
            'iokit_workdir': os.path.join(base, name + '-work')}


class SimulatedNode:
    """A lustre-sim node on this machine that the playbooks run against from localhost (local connection): its
    root, client mount, results, workdir, inventory and extra-vars files under ``base``, and the environment that
    puts the node's tools first on the PATH ansible-playbook hands to the modules."""

    def __init__(self, base):
        self.base = base
        self.root = os.path.join(base, 'node')
        self.mount = os.path.join(base, 'mnt')
        self.results = os.path.join(base, 'results')
        self.workdir = os.path.join(base, 'work')
        self.inventory = os.path.join(base, 'inventory.yml')
        self.extra_vars = os.path.join(base, 'vars.json')

    def sim(self, *args):
        return subprocess.run([LUSTRE_SIM] + list(args), check=True, stdout=subprocess.PIPE,
                              universal_newlines=True).stdout

    def status(self):
        return json.loads(self.sim('status', '--root', self.root))

    def env(self):
        return dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_PIPELINING='1', ANSIBLE_NOCOLOR='1',
                    ANSIBLE_FORCE_COLOR='0', LUSTRE_SIM_ROOT=self.root,
                    PATH=os.path.join(self.root, 'bin') + os.pathsep + VENV_BIN + os.pathsep + os.environ['PATH'])

    def argv(self, name, *options, extra=None):
        argv = [ANSIBLE_PLAYBOOK, '-i', self.inventory, '-e', '@' + self.extra_vars] + list(options)
        if extra:
            argv += ['-e', json.dumps(extra)]
        return argv + [os.path.join(ROOT, 'playbooks', name)]

    def playbook(self, name, *options, extra=None):
        return subprocess.run(self.argv(name, *options, extra=extra), cwd=ROOT, env=self.env(),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)


@contextlib.contextmanager
def oss_node(base, survey_vars, *init_args):
    """A simulated OSS under ``base`` made with ``lustre-sim init`` and ``init_args`` (no client mount), the inventory
    (localhost in the oss group) and ``survey_vars`` with the node's results and workdir written beside it; destroyed
    on the way out, whatever happened."""
    node = SimulatedNode(base)
    node.sim('init', '--root', node.root, *init_args, '--no-mount', '--force')
    try:
        with open(node.inventory, 'w', encoding='utf-8') as handle:
            handle.write(localhost_inventory(NODE_PYTHON, ('oss',)))
        with open(node.extra_vars, 'w', encoding='utf-8') as handle:
            json.dump(dict(survey_vars, iokit_results_dir=node.results, iokit_workdir=node.workdir), handle)
        yield node
    finally:
        subprocess.run([LUSTRE_SIM, 'destroy', '--root', node.root], check=False, stdout=subprocess.DEVNULL)


def set_every_ost_rate(root, mib_s):
    """Every OST of the simulated node at ``root`` at ``mib_s`` from the next command on: the simulator reads its
    config.yaml at each command, so a survey's later points take the new rate."""
    path = os.path.join(root, 'config.yaml')
    with open(path, encoding='utf-8') as handle:
        config = yaml.safe_load(handle)
    for ost in config['osts']:
        ost['mib_s'] = mib_s
    with open(path, 'w', encoding='utf-8') as handle:
        yaml.safe_dump(config, handle, sort_keys=False)


@contextlib.contextmanager
def small_tmpfs(path, size):
    """A tmpfs of ``size`` (such as ``8m``) mounted at ``path`` (made if missing) while the block runs: a file system
    a test can fill, of its own; skips the test when not root."""
    if os.geteuid() != 0:
        pytest.skip('mounting a small file system needs root')
    os.makedirs(path, exist_ok=True)
    subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=%s' % size, 'tmpfs', path], check=True)
    try:
        yield path
    finally:
        subprocess.run(['umount', path], check=False)


@contextlib.contextmanager
def throttled_loop_devices(base, rates_mib_s, size_mib):
    """One loop device (direct I/O) per rate of ``rates_mib_s``, each on a sparse file of ``size_mib`` MiB under
    ``base``, and ``base/slow-python``: a wrapper of this Python that joins a block-I/O cgroup limiting each device to
    its rate each way (give it as ansible_python_interpreter: the modules run through it and their ``sgp_dd`` are
    limited, nothing else).  Yields the devices; releases the cgroup, detaches the devices and removes the files
    whatever happens."""
    loops, images, group = [], [], None
    wrapper = os.path.join(base, 'slow-python')
    try:
        for number in range(len(rates_mib_s)):
            image = os.path.join(base, 'lun%d.img' % number)
            images.append(image)
            subprocess.run(['truncate', '--size', '%dM' % size_mib, image], check=True)
            loops.append(subprocess.run(['losetup', '--find', '--show', '--direct-io=on', image], check=True,
                                        stdout=subprocess.PIPE, universal_newlines=True).stdout.strip())
        limits = ['%s=%s' % (loop, rate) for loop, rate in zip(loops, rates_mib_s)]
        group = subprocess.run([sys.executable, SLOW_DEVICE, 'throttle', str(rates_mib_s[0]), wrapper, sys.executable]
                               + limits, check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()
        yield loops
    finally:
        if group:
            # before losetup -d: a later loop device with the same numbers must not inherit the limit
            subprocess.run([sys.executable, SLOW_DEVICE, 'release', group], check=False)
        for loop in loops:
            subprocess.run(['losetup', '--detach', loop], check=False)
        for path in images + [wrapper]:
            if os.path.exists(path):
                os.unlink(path)


class SimulatedClient(SimulatedNode):
    """A lustre-sim client node that a client survey's playbook (survey-ior.yml, survey-mdtest.yml, survey-ost.yml)
    runs against. ``start()`` makes the node from a simulator config and writes the inventory and the variables,
    the mount point under the survey role's prefix (its name, as every survey role's)."""

    def __init__(self, survey, base):
        SimulatedNode.__init__(self, base)
        self.survey = survey

    def start(self, sim_config, inventory, survey_vars):
        """``sim_config`` and ``inventory`` are formats (``{mount}``, ``{python}``); ``survey_vars`` the variables."""
        config = os.path.join(self.base, 'sim.yaml')
        with open(config, 'w', encoding='utf-8') as handle:
            handle.write(sim_config.format(mount=self.mount))
        self.sim('init', '--root', self.root, '--config', config, '--force')
        with open(self.inventory, 'w', encoding='utf-8') as handle:
            handle.write(inventory.format(python=sys.executable))
        with open(self.extra_vars, 'w', encoding='utf-8') as handle:
            json.dump(dict(survey_vars, iokit_results_dir=self.results, iokit_workdir=self.workdir,
                           **{'%s_mount_point' % self.survey: self.mount}), handle)
        return self

    def destroy(self):
        subprocess.run([LUSTRE_SIM, 'fault', '--root', self.root, 'clear', '--all'], check=False,
                       stdout=subprocess.DEVNULL)
        subprocess.run([LUSTRE_SIM, 'destroy', '--root', self.root], check=False, stdout=subprocess.DEVNULL)

    def envelope(self, run_id):
        return read_envelope(envelope_path(self.results, run_id, 'localhost', self.survey))

    def trees(self):
        return sorted(name for name in os.listdir(self.mount) if name.startswith(self.survey + '_'))

    def slurm_jobs(self):
        return self.state('slurm').get('jobs', [])

    def hanging(self):
        """The survey's commands hanging on a fault now (the simulator's record of its hangs, live processes only)."""
        return [hang['command'] for hang in self.state('hangs').get('hangs', [])
                if hang['command'].startswith(self.survey + ' ') and os.path.exists('/proc/%d' % hang['pid'])]

    def state(self, name):
        """The simulator's state file ``name`` (``slurm``, ``hangs``), {} before it exists."""
        path = os.path.join(self.root, 'state', name + '.json')
        if not os.path.exists(path):
            return {}
        with open(path, encoding='utf-8') as handle:
            return json.load(handle)

    def kill_at_a_hang_and_clean_up(self, run_id, hang_command, what, deadline_s):
        """Run the survey's playbook under ``run_id`` with ``hang_command`` hanging (a simulator fault), SIGKILL
        ansible-playbook once it hangs there, and run cleanup.yml for the run; the fault is cleared whatever
        happens."""
        self.sim('fault', '--root', self.root, 'add', 'hang', '--command', hang_command)
        try:
            self.kill_the_playbook_once(run_id, what, self.hanging, deadline_s)
            cleanup = self.playbook('cleanup.yml', '--limit', 'localhost', extra={'cleanup_run_id': run_id})
            assert cleanup.returncode == 0, cleanup.stdout[-6000:]
        finally:
            self.sim('fault', '--root', self.root, 'clear', '--all')

    def kill_the_playbook_once(self, run_id, what, condition, deadline_s, extra=None):
        """Run the survey's playbook under ``run_id`` (and ``extra`` variables) and SIGKILL ansible-playbook's whole
        process group as soon as ``condition`` holds (the module, started with async, goes on running on the node)."""
        with open(os.path.join(self.base, run_id + '.log'), 'w', encoding='utf-8') as handle:
            controller = subprocess.Popen(self.argv('survey-%s.yml' % self.survey,
                                                    extra=dict(extra or {}, iokit_run_id=run_id)),
                                          cwd=ROOT, env=self.env(), stdout=handle, stderr=subprocess.STDOUT,
                                          start_new_session=True)
        try:
            wait_for(what, condition, deadline_s, controller)
            os.killpg(controller.pid, signal.SIGKILL)
            controller.wait(timeout=30)
        finally:
            if controller.poll() is None:
                os.killpg(controller.pid, signal.SIGKILL)
                controller.wait(timeout=30)


# Test files whose shared fixture runs a whole demo, acceptance or repeated survey (minutes, not seconds): their
# tests are handed to the parallel workers first, so that no worker starts one of them last while the others idle.
LONGEST_FIRST = ('test_demo.py', 'test_acceptance.py', 'test_iterations.py', 'test_survey_playbooks.py',
                 'test_stats_collect.py', 'test_survey_lnet.py', 'test_history_regression.py')


# First: pytest-xdist reads the groups in a hook of its own, which must come after this one.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist's ``--dist loadgroup`` (tests/tools/run_test_suite.py), the tests that share a module- or
    class-scoped fixture go to one worker, so that its playbook runs once; every other test goes wherever a worker
    is free.  Tests are grouped through every such fixture they use, so a test of two fixtures joins both groups."""
    del config
    parent = {}

    def find(key):
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    shared = {}
    for item in items:
        info = getattr(item, '_fixtureinfo', None)
        keys = sorted('%s::%s' % (defs[-1].baseid, name) for name, defs in (info.name2fixturedefs if info else {}).items()
                      if defs and defs[-1].scope in ('module', 'class'))
        shared[item.nodeid] = keys
        for key in keys[1:]:
            parent[find(key)] = find(keys[0])
    for item in items:
        keys = shared[item.nodeid]
        if keys:
            item.add_marker(pytest.mark.xdist_group(find(keys[0])))

    def rank(item):
        name = item.path.name
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)


def pytest_collection_finish(session):
    """A worker whose grouped tests kept their plain node ids would run every shared fixture once per worker (a
    pytest that xdist's grouping does not work with): stop before anything runs."""
    if not getattr(session.config.option, 'loadgroup', False):
        return
    lost = [item.nodeid for item in session.items if item.get_closest_marker('xdist_group') and '@' not in item.nodeid]
    if lost:
        raise pytest.UsageError('pytest-xdist did not group %d tests by their shared fixture (e.g. %s): use the pytest '
                                'of requirements-dev.txt' % (len(lost), lost[0]))


# CPU of each test, fixtures included: what its ansible-playbook runs and the other processes it waited for used
# (RUSAGE_CHILDREN of the worker process, before and after).  The suite is bound by CPU on two cores, so this, not
# the wall time, says which test costs the most; the summary lists the test files by their CPU.
def _children_cpu_s():
    import resource  # pylint: disable=import-outside-toplevel
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


_CPU_BEFORE = pytest.StashKey()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    del nextitem
    item.stash[_CPU_BEFORE] = _children_cpu_s()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if call.when == 'teardown' and _CPU_BEFORE in item.stash:
        # a report's user_properties reach the controller of pytest-xdist's workers
        outcome.get_result().user_properties.append(('cpu_s', round(_children_cpu_s() - item.stash[_CPU_BEFORE], 1)))


_CPU_BY_FILE = {}
_CPU_BY_TEST = {}


def pytest_runtest_logreport(report):
    if report.when == 'teardown':
        cpu = dict(report.user_properties).get('cpu_s')
        if cpu is not None:
            name = report.nodeid.split('::')[0]
            total, count = _CPU_BY_FILE.get(name, (0.0, 0))
            _CPU_BY_FILE[name] = (total + cpu, count + 1)
            _CPU_BY_TEST[report.nodeid] = cpu


def pytest_terminal_summary(terminalreporter):
    if not _CPU_BY_FILE:
        return
    terminalreporter.write_sep('=', 'CPU seconds of the processes each test file waited for')
    for name, (total, count) in sorted(_CPU_BY_FILE.items(), key=lambda entry: -entry[1][0]):
        terminalreporter.write_line('%8.1f  %3d tests  %s' % (total, count, name))
    totals = list(_CPU_BY_FILE.values())
    terminalreporter.write_line('%8.1f  %3d tests  all' % (sum(total for total, unused in totals),
                                                           sum(count for unused, count in totals)))
    terminalreporter.write_line('the costliest tests (a test that starts a shared fixture carries its CPU):')
    for nodeid, cpu in sorted(_CPU_BY_TEST.items(), key=lambda entry: -entry[1])[:15]:
        terminalreporter.write_line('%8.1f  %s' % (cpu, nodeid))
