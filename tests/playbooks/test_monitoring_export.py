# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The monitoring export through the obdfilter survey playbook, against a simulated OSS with two OSTs: a survey with
iokit_export_prometheus_dir writes its textfile and backfill file, a second run replaces the survey's series in its
one textfile, and an export directory that cannot be one fails the preflight before any node is touched."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from conftest import ANSIBLE_PLAYBOOK, LUSTRE_SIM, NODE_PYTHON, WAIT_POLL_S, SimulatedNode, localhost_inventory

from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import envelope_path

try:
    from lustre_sim.node import Node
except ImportError:  # without the simulator the module is skipped below
    Node = None

pytestmark = pytest.mark.skipif(LUSTRE_SIM is None or Node is None or not os.access(ANSIBLE_PLAYBOOK, os.X_OK),
                                reason='needs the checkout venv (make setup) with lustre-sim')

SURVEY_VARS = {
    'iokit_timeout_s': 300, 'obdfilter_size_mib': 4, 'obdfilter_nobjhi': 1, 'obdfilter_thrhi': 1,
    'obdfilter_tests': ['write', 'read'], 'obdfilter_poll_interval_s': WAIT_POLL_S,
}
TEXTFILE = 'lustre_iokit_obdfilter.prom'


def _run_info(path):
    with open(path, encoding='utf-8') as handle:
        return re.findall(r'^lustre_iokit_run_info\{run_id="([^"]+)",survey="obdfilter"\} 1$', handle.read(), re.M)


@pytest.fixture(scope='module')
def oss(tmp_path_factory):
    node = SimulatedNode(str(tmp_path_factory.mktemp('monitoring-export')))
    node.sim('init', '--root', node.root, '--mdts', '1', '--osts', '2', '--ost-size-mib', '128', '--no-mount', '--force')
    node.textfiles = os.path.join(node.base, 'textfiles')
    try:
        with open(node.inventory, 'w', encoding='utf-8') as handle:
            handle.write(localhost_inventory(NODE_PYTHON, ('oss',)))
        with open(node.extra_vars, 'w', encoding='utf-8') as handle:
            json.dump(dict(SURVEY_VARS, iokit_results_dir=node.results, iokit_workdir=node.workdir,
                           iokit_export_prometheus_dir=node.textfiles), handle)
        yield node
    finally:
        subprocess.run([LUSTRE_SIM, 'destroy', '--root', node.root], check=False, stdout=subprocess.DEVNULL)


def test_a_survey_exports_and_a_second_run_replaces_its_series(oss):
    first = oss.playbook('survey-obdfilter.yml', extra={'iokit_run_id': 'export-1'})
    assert first.returncode == 0, first.stdout[-4000:]
    textfile = os.path.join(oss.textfiles, TEXTFILE)
    assert _run_info(textfile) == ['export-1']
    with open(textfile, encoding='utf-8') as handle:
        text = handle.read()
    assert re.search(r'^lustre_iokit_obdfilter_write_bytes_per_second\{component="ost",target="testfs-OST0000",'
                     r'host="localhost",[^}]*threads="1"\} [0-9.e+]+$', text, re.M), text[:3000]
    assert 'target="testfs-OST0001"' in text

    second = oss.playbook('survey-obdfilter.yml', extra={'iokit_run_id': 'export-2'})
    assert second.returncode == 0, second.stdout[-4000:]
    assert _run_info(textfile) == ['export-2']
    # One textfile for the survey, no temporary file left; one backfill file per run.
    assert sorted(os.listdir(oss.textfiles)) == ['lustre_iokit_obdfilter.export-1.om',
                                                 'lustre_iokit_obdfilter.export-2.om', TEXTFILE]


def test_a_bad_export_directory_fails_before_any_node_is_touched(oss, tmp_path):
    blocker = tmp_path / 'not-a-directory'
    blocker.write_text('a file where the textfile directory should be\n')
    before = oss.status()
    run = oss.playbook('survey-obdfilter.yml', extra={'iokit_run_id': 'export-bad',
                                                      'iokit_export_prometheus_dir': str(blocker)})
    assert run.returncode != 0
    assert 'iokit_export_prometheus_dir: %s is not a directory; nothing was started' % blocker in run.stdout
    assert 'Run the survey' not in run.stdout
    assert not os.path.exists(envelope_path(oss.results, 'export-bad', 'localhost', 'obdfilter'))
    assert oss.status() == before
    touched = [os.path.join(directory, name) for top in (oss.root, oss.workdir) if os.path.isdir(top)
               for directory, subdirectories, files in os.walk(top) for name in subdirectories + files
               if 'export-bad' in name]
    assert not touched


def test_the_report_playbook_exports_the_stored_run(oss):
    if not os.path.exists(envelope_path(oss.results, 'export-2', 'localhost', 'obdfilter')):
        pytest.skip('the survey test did not store run export-2')
    line_file = os.path.join(oss.base, 'influx', 'run.lp')
    run = oss.playbook('report.yml', extra={'iokit_run_id': 'export-2', 'iokit_export_influx_file': line_file})
    assert run.returncode == 0, run.stdout[-4000:]
    assert 'Exported to the monitoring stack: ' in run.stdout
    with open(line_file, encoding='utf-8') as handle:
        lines = handle.read().splitlines()
    assert lines and all(line.startswith('lustre_iokit_obdfilter,') for line in lines)
    # Each OST's lines carry its name; the host's aggregate over them has none.
    names = {name for line in lines for name in re.findall(r',name=([^, ]+)', line)}
    assert names == {'testfs-OST0000', 'testfs-OST0001'}
    assert all(line.split(' ')[1].endswith(',run_id="export-2"') for line in lines)
