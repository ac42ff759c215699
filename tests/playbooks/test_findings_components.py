# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""acceptance.yml with the default criteria finds one weak component among its peers, beyond OSTs:

* sgpdd: three loop devices, one throttled to 1 MiB/s each way and the others to 3 MiB/s by a block-I/O cgroup that
  the play's interpreter joins: the failure names that LUN;
* mds: a simulated MDS with three MDTs, one booked at 30 operations/s (a per-MDT curve), the others not limited:
  the failure names that MDT.

The limits are far below what a busy machine gives, so the weak component is slow by construction.

    .venv/bin/python -m pytest tests/playbooks/test_findings_components.py -q -p no:cacheprovider
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from xml.etree import ElementTree

import pytest
import yaml

from conftest import WAIT_POLL_S, throttled_loop_devices
from test_acceptance import ONLY_OBDFILTER, AcceptanceCluster
from test_survey_playbooks import INVENTORY, LUSTRE_SIM, SURVEY_VARS, pytestmark as survey_mark

pytestmark = [survey_mark, pytest.mark.skipif(os.geteuid() != 0 or not shutil.which('losetup')
                                              or not shutil.which('sgp_dd'),
                                              reason='needs root, losetup and sgp_dd (sg3-utils)')]

ONLY = dict(ONLY_OBDFILTER, acceptance_run_obdfilter=False)
SLOW_LUN_MIB_S = 1
# Every other loop-device LUN of a test (loop_luns): equal by construction, three times the slow one.  At 6 MiB/s
# a fine LUN measured 69 % of its peers once, on a machine at a load average of 20 to 25 (two cores): its sgp_dd
# could not keep up with its limit; at 3 MiB/s it needs a third of that CPU.
FINE_LUN_MIB_S = 3
SLOW_MDT = 'testfs-MDT0002'


def _acceptance(made, run_id, python, extra_vars):
    """acceptance.yml on the node ``made`` (already initialised), no criteria given; ``made.result`` is the run."""
    with open(made.inventory, 'w', encoding='utf-8') as handle:
        handle.write(INVENTORY.format(python=python))
    with open(made.extra_vars, 'w', encoding='utf-8') as handle:
        json.dump(dict(SURVEY_VARS, **extra_vars, iokit_results_dir=made.results, iokit_workdir=made.workdir),
                  handle)
    made.run_id = run_id
    made.result = made.playbook('acceptance.yml', extra={'iokit_run_id': run_id})
    return made


def _read(made, name):
    with open(made.run_file(made.run_id, name), encoding='utf-8') as handle:
        return handle.read()


def _assert_failed_naming(made, survey, component):
    """The verdict fails on outliers of ``component`` alone; JUnit, report.html and summary.md name it."""
    output = made.result.stdout
    assert made.result.returncode != 0, output[-8000:]
    verdict = json.loads(_read(made, 'verdict.json'))
    assert verdict['verdict'] == 'failed', verdict
    failed = [case for case in verdict['cases'] if case['status'] == 'failed']
    assert failed and all(case['kind'] == 'outliers' and case['subject'] == 'localhost/' + component
                          for case in failed), failed
    junit = ElementTree.parse(made.run_file(made.run_id, 'junit.xml')).getroot()
    messages = [failure.get('message') for failure in junit.iter('failure')]
    assert messages and all(m.startswith(survey + ' ') and component in m and 'peer median' in m
                            and ' % of it' in m for m in messages), messages
    html = _read(made, 'report.html')
    first = html[html.index('<h2'):]
    assert first.startswith('<h2 id="findings">Findings</h2>')
    findings = first.split('<h2', 2)[1]
    assert component in findings and survey in findings, findings
    summary = _read(made, 'summary.md')
    first = summary[summary.index('\n## '):]
    assert first.startswith('\n## Findings')
    # One row per weak component, its evidence (a row per survey and metric) beneath it.
    findings = first.split('\n## ', 2)[1]
    components = [line for line in findings.splitlines() if line.startswith('| 1 | ')]
    assert len(components) == 1 and '**%s**' % component in components[0], findings
    rows = [line for line in findings.splitlines() if line.startswith('| | ↳ %s ' % survey)]
    assert rows and all('localhost/' + component in row for row in rows), first
    return verdict


def loop_luns(base, count, slow, mib_s=SLOW_LUN_MIB_S):
    """``count`` loop devices on sparse 16 MiB files under ``base`` and ``base/slow-python``, the wrapper that limits
    the one at index ``slow`` to ``mib_s`` MiB/s each way and the others to FINE_LUN_MIB_S (conftest's
    throttled_loop_devices).  The others are limited too: unlimited, they measure what the machine gives, and on a
    loaded machine one of them can fall below its peers; limited far below what any machine gives, they measure the
    same."""
    rates = [FINE_LUN_MIB_S] * count
    rates[slow] = mib_s
    return throttled_loop_devices(base, rates, 16)


@pytest.fixture(scope='module')
def slow_lun(tmp_path_factory):
    made = AcceptanceCluster(str(tmp_path_factory.mktemp('slow-lun')))
    made.sim('init', '--root', made.root, '--osts', '1', '--mdts', '1', '--client-mount', made.mount, '--force')
    try:
        # Every module of the play runs in the group, which limits only the last loop device.
        with loop_luns(made.base, 3, -1) as loops:
            made.loops = loops
            yield _acceptance(made, 'pbtest-slow-lun', os.path.join(made.base, 'slow-python'), dict(
                ONLY, acceptance_run_sgpdd=True, sgpdd_devices=loops, sgpdd_destroy_data=True, sgpdd_size_mib=8,
                sgpdd_crghi=1, sgpdd_thrhi=2, sgpdd_poll_interval_s=WAIT_POLL_S))
    finally:
        subprocess.run([LUSTRE_SIM, 'destroy', '--root', made.root], check=False, stdout=subprocess.DEVNULL)


@pytest.fixture(scope='module')
def slow_mdt(tmp_path_factory):
    made = AcceptanceCluster(str(tmp_path_factory.mktemp('slow-mdt')))
    config = os.path.join(made.base, 'node.yml')
    slow_index = int(SLOW_MDT[-4:], 16)
    with open(config, 'w', encoding='utf-8') as handle:
        yaml.safe_dump({'fsname': 'testfs', 'osts': 1, 'client_mount': made.mount, 'mdts': [
            {'index': 0}, {'index': 1},
            # flat at 30 operations/s from one thread on: a rate any machine exceeds without a limit
            {'index': slow_index, 'curve': {'peak_ops_s': 30, 'knee_threads': 1}}]}, handle)
    made.sim('init', '--root', made.root, '--config', config, '--force')
    try:
        yield _acceptance(made, 'pbtest-slow-mdt', sys.executable, dict(
            ONLY, acceptance_run_mds=True, mds_file_count=60))
    finally:
        subprocess.run([LUSTRE_SIM, 'destroy', '--root', made.root], check=False, stdout=subprocess.DEVNULL)


def test_without_criteria_a_slow_lun_fails_the_verdict_by_name(slow_lun):
    slow = os.path.basename(slow_lun.loops[-1])
    verdict = _assert_failed_naming(slow_lun, 'sgpdd', slow)
    # each LUN is a subject of its own (peers at the same sweep point), so the slow one had two peers
    subjects = set(case['subject'] for case in verdict['cases'] if case['kind'] == 'outliers')
    assert {'localhost/' + os.path.basename(loop) for loop in slow_lun.loops} <= subjects, subjects


def test_without_criteria_a_slow_mdt_fails_the_verdict_by_name(slow_mdt):
    envelope = slow_mdt.envelope('mds', slow_mdt.run_id)
    assert envelope['status'] == 'ok', envelope['errors']
    assert all(len(record['per_mdt']) == 3 for record in envelope['records']), envelope['records']
    verdict = _assert_failed_naming(slow_mdt, 'mds', SLOW_MDT)
    subjects = set(case['subject'] for case in verdict['cases'] if case['kind'] == 'outliers')
    assert {'localhost/testfs-MDT000%d' % index for index in range(3)} <= subjects, subjects
