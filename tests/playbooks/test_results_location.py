# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The results directory: resolved once on the controller, checked before any node is touched.

The node's Python is a wrapper that logs every module run on the node: an empty log proves that no node was
touched, and the working run shows that the log does fill when one is.

    .venv/bin/python -m pytest tests/playbooks/test_results_location.py -q -p no:cacheprovider
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import (ANSIBLE_PLAYBOOK, COLLECTIONS, LUSTRE_SIM, ROOT, VENV_BIN, WAIT_POLL_S, localhost_inventory,
                      small_tmpfs)

from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import envelope_path, read_envelope

pytestmark = pytest.mark.skipif(LUSTRE_SIM is None or not os.access(ANSIBLE_PLAYBOOK, os.X_OK),
                                reason='needs the checkout venv (make setup) with lustre-sim')

SPY = '''#!/bin/sh
echo "$$ $*" >> {log}
exec {python} "$@"
'''

VARS = {'iokit_timeout_s': 600, 'obdfilter_size_mib': 4, 'obdfilter_nobjhi': 1, 'obdfilter_thrhi': 1,
        'obdfilter_tests': ['write', 'read'], 'obdfilter_poll_interval_s': WAIT_POLL_S, 'obdfilter_async_margin_s': 30}


class Node:
    def __init__(self, base):
        self.base = base
        self.root = os.path.join(base, 'node')
        self.workdir = os.path.join(base, 'work')
        self.spy_log = os.path.join(base, 'node-python.log')
        self.inventory = os.path.join(base, 'inventory.yml')
        self.vars = os.path.join(base, 'vars.json')

    def sim(self, *args):
        return subprocess.run([LUSTRE_SIM] + list(args), check=True, stdout=subprocess.PIPE,
                              universal_newlines=True).stdout

    def touched(self):
        """The module runs logged on the node since the last call (and forget them)."""
        if not os.path.exists(self.spy_log):
            return []
        with open(self.spy_log, encoding='utf-8') as handle:
            lines = handle.read().splitlines()
        os.unlink(self.spy_log)
        return lines

    def playbook(self, playbook, cwd, **extra):
        # The checkout's ansible.cfg by name: the working directory is what is under test, not the configuration.
        env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'),
                   ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_NOCOLOR='1',
                   ANSIBLE_FORCE_COLOR='0', LUSTRE_SIM_ROOT=self.root,
                   PATH=os.path.join(self.root, 'bin') + os.pathsep + VENV_BIN + os.pathsep + os.environ['PATH'])
        argv = [ANSIBLE_PLAYBOOK, '-i', self.inventory, '-e', '@' + self.vars, '-e', json.dumps(extra),
                os.path.join(ROOT, 'playbooks', playbook)]
        return subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, check=False)


@pytest.fixture(scope='module')
def node(tmp_path_factory):
    made = Node(str(tmp_path_factory.mktemp('results-location')))
    made.sim('init', '--root', made.root, '--osts', '2', '--mdts', '1', '--ost-size-mib', '64', '--force')
    try:
        spy = os.path.join(made.base, 'node-python')
        with open(spy, 'w', encoding='utf-8') as handle:
            handle.write(SPY.format(log=made.spy_log, python=sys.executable))
        os.chmod(spy, 0o755)
        with open(made.inventory, 'w', encoding='utf-8') as handle:
            handle.write(localhost_inventory(spy, ['oss']))
        with open(made.vars, 'w', encoding='utf-8') as handle:
            json.dump(dict(VARS, iokit_workdir=made.workdir), handle)
        yield made
    finally:
        subprocess.run([LUSTRE_SIM, 'destroy', '--root', made.root], check=False, stdout=subprocess.DEVNULL)


def test_a_relative_results_dir_is_taken_from_the_working_directory(node):
    elsewhere = os.path.join(node.base, 'elsewhere')
    os.makedirs(elsewhere)
    node.touched()
    run = node.playbook('survey-obdfilter.yml', elsewhere, iokit_results_dir='rel/results', iokit_run_id='rel-1',
                        iokit_report=True)
    assert run.returncode == 0, run.stdout[-6000:]
    assert node.touched(), 'the node Python wrapper logged nothing: the spy does not see module runs'
    results = os.path.join(elsewhere, 'rel', 'results')
    envelope = read_envelope(envelope_path(results, 'rel-1', 'localhost', 'obdfilter'))
    assert envelope['status'] == 'ok'
    for name in ('summary-obdfilter.md', 'report.html', 'summary.md', 'results.csv'):
        assert os.path.isfile(os.path.join(results, 'rel-1', name)), name
    # Nothing where the playbooks or the checkout are.
    assert not os.path.exists(os.path.join(ROOT, 'rel'))
    assert not os.path.exists(os.path.join(ROOT, 'playbooks', 'rel'))

    # The report of the stored run, from the same working directory with the same relative path.
    os.unlink(os.path.join(results, 'rel-1', 'report.html'))
    report = node.playbook('report.yml', elsewhere, iokit_results_dir='rel/results', iokit_run_id='rel-1')
    assert report.returncode == 0, report.stdout[-6000:]
    assert os.path.isfile(os.path.join(results, 'rel-1', 'report.html'))


def _refused_before_any_node(node, run, fragment):
    assert run.returncode != 0
    assert fragment in run.stdout, run.stdout[-4000:]
    assert node.touched() == []
    assert 'Start the survey on every host at once' not in run.stdout
    assert [device['name'] for device in json.loads(node.sim('status', '--root', node.root))['devices']
            if device['type'] == 'echo_client'] == []


def test_an_empty_results_dir_is_refused_before_any_node_is_touched(node):
    cwd = os.path.join(node.base, 'empty-cwd')
    os.makedirs(cwd)
    node.touched()
    run = node.playbook('survey-obdfilter.yml', cwd, iokit_results_dir='', iokit_run_id='empty-1')
    _refused_before_any_node(node, run, 'iokit_results_dir: must not be empty')
    assert os.listdir(cwd) == []


def test_a_file_as_results_dir_is_refused_before_any_node_is_touched(node):
    path = os.path.join(node.base, 'a-file')
    with open(path, 'w', encoding='utf-8') as handle:
        handle.write('not a directory\n')
    node.touched()
    run = node.playbook('survey-obdfilter.yml', node.base, iokit_results_dir='a-file', iokit_run_id='file-1')
    _refused_before_any_node(node, run, 'iokit_results_dir: %s is not a directory' % path)


def test_a_host_directory_linked_out_of_the_store_is_refused_before_any_node_is_touched(node):
    results = os.path.join(node.base, 'results-linked-host')
    outside = os.path.join(node.base, 'outside-the-store')
    os.makedirs(os.path.join(results, 'link-1'))
    os.makedirs(outside)
    os.symlink(outside, os.path.join(results, 'link-1', 'localhost'))
    node.touched()
    run = node.playbook('survey-obdfilter.yml', node.base, iokit_results_dir=results, iokit_run_id='link-1')
    _refused_before_any_node(node, run, 'iokit_results_dir/link-1: %s is a symbolic link leading out of the '
                                        'results directory' % os.path.join(results, 'link-1', 'localhost'))
    assert os.listdir(outside) == []


def test_a_results_dir_without_room_is_refused_before_any_node_is_touched(node):
    with small_tmpfs(os.path.join(node.base, 'tiny-results'), '1m') as path:
        node.touched()
        run = node.playbook('survey-obdfilter.yml', node.base, iokit_results_dir=path, iokit_run_id='tiny-1')
        _refused_before_any_node(node, run, 'iokit_results_dir: %s has ' % path)
        assert 'this run stores up to 4 MiB (1 host(s), 4 MiB each)' in run.stdout


@pytest.fixture
def read_only_dir(node):
    path = os.path.join(node.base, 'read-only')
    os.makedirs(path, exist_ok=True)
    mounted = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', path], check=False,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT) if os.geteuid() == 0 else None
    if mounted is None or mounted.returncode != 0:
        # Without root a directory without write permission is read-only too.
        os.chmod(path, 0o555)
        if os.access(path, os.W_OK):
            pytest.skip('cannot make a read-only directory here')
    try:
        yield path
    finally:
        if mounted is not None and mounted.returncode == 0:
            subprocess.run(['umount', path], check=False)
        os.chmod(path, 0o755)


def test_a_read_only_results_dir_is_refused_before_any_node_is_touched(node, read_only_dir):
    node.touched()
    run = node.playbook('survey-obdfilter.yml', node.base, iokit_results_dir=read_only_dir, iokit_run_id='ro-1')
    _refused_before_any_node(node, run, 'iokit_results_dir: cannot')
    assert os.listdir(read_only_dir) == []


@pytest.mark.parametrize('run_id, fragment', [
    (123, 'iokit_run_id: must be a string'),
    (None, 'iokit_run_id: is null'),
    ('../up', 'iokit_run_id: must not contain ".."'),
])
def test_a_bad_run_id_is_named_before_any_node_is_touched(node, run_id, fragment):
    results = os.path.join(node.base, 'results-bad-id')
    node.touched()
    run = node.playbook('survey-obdfilter.yml', node.base, iokit_results_dir=results, iokit_run_id=run_id)
    _refused_before_any_node(node, run, fragment)
    assert 'not iterable' not in run.stdout
