# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""ansible-playbook SIGKILLed halfway through an obdfilter sweep, cleanup.yml, then the same run id again.

    .venv/bin/python -m pytest tests/playbooks/test_survey_resume.py -q -p no:cacheprovider

The node's OST moves 2 MiB/s: each of the four points takes seconds, so the kill lands between points by
waiting for a condition (two points in obdfilter.points.jsonl), not for a time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from conftest import LUSTRE_SIM, ROOT, VENV_BIN, set_every_ost_rate, wait_for

from ansible_collections.lustre.iokit.plugins.module_utils.progress import finished_record
from ansible_collections.lustre.iokit.plugins.module_utils.results import utc_timestamp
from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import envelope_path, read_envelope

from test_concurrent_runs import DEADLINE_S
from test_survey_playbooks import ANSIBLE_PLAYBOOK
from test_survey_progress import SURVEY_VARS

pytestmark = pytest.mark.skipif(LUSTRE_SIM is None or not os.access(ANSIBLE_PLAYBOOK, os.X_OK),
                                reason='needs the checkout venv (make setup) with lustre-sim')

RUN_ID = 'resume-1'


def points(workdir):
    try:
        with open(os.path.join(workdir, RUN_ID, 'obdfilter.points.jsonl'), encoding='utf-8') as handle:
            return [json.loads(line) for line in handle if line.endswith('\n')]
    except FileNotFoundError:
        return []


def test_a_killed_run_keeps_its_points_and_the_rerun_measures_only_the_others(tmp_path):
    root, workdir, results = str(tmp_path / 'node'), str(tmp_path / 'work'), str(tmp_path / 'results')
    subprocess.run([LUSTRE_SIM, 'init', '--root', root, '--osts', '1', '--mdts', '1', '--ost-size-mib', '64',
                    '--ost-mib-s', '2', '--no-mount', '--force'], check=True, stdout=subprocess.DEVNULL)
    inventory = str(tmp_path / 'inventory.json')
    with open(inventory, 'w', encoding='utf-8') as handle:
        json.dump({'all': {'children': {'oss': {'hosts': {'oss1': {'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable}}}}}}, handle)
    extra = str(tmp_path / 'vars.json')
    with open(extra, 'w', encoding='utf-8') as handle:
        json.dump(dict(SURVEY_VARS, iokit_run_id=RUN_ID, iokit_workdir=workdir, iokit_results_dir=results), handle)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, '.venv', 'collections'), ANSIBLE_NOCOLOR='1',
               LUSTRE_SIM_ROOT=root, PATH=os.path.join(root, 'bin') + os.pathsep + VENV_BIN + os.pathsep
               + os.environ['PATH'])

    def playbook(name, *more):
        return [ANSIBLE_PLAYBOOK, '-i', inventory, '-e', '@' + extra] + list(more) + [
            os.path.join(ROOT, 'playbooks', name)]

    try:
        first = subprocess.Popen(playbook('survey-obdfilter.yml'), cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, universal_newlines=True, start_new_session=True)
        wait_for('two finished points', lambda: len(points(workdir)) >= 2, DEADLINE_S, first)
        # The points started from here take 16 s each, so that the survey does not end before the cleanup stops it
        # on a loaded machine (a completed run's points are not kept for a rerun): the simulator reads the rate at
        # each command.
        set_every_ost_rate(root, 0.25)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        cleanup = subprocess.run(playbook('cleanup.yml', '-e', 'cleanup_run_id=%s' % RUN_ID), cwd=ROOT, env=env, check=False,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        assert cleanup.returncode == 0, cleanup.stdout[-4000:]
        kept = points(workdir)
        cleaned_at = utc_timestamp()
        # The survey module outlives its controller until the cleanup stops it: at least the two points.
        assert len(kept) >= 2, kept
        set_every_ost_rate(root, 2)

        rerun = subprocess.run(playbook('survey-obdfilter.yml', '-e', 'iokit_report=true'), cwd=ROOT, env=env, check=False,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        assert rerun.returncode == 0, rerun.stdout[-6000:]
        envelope = read_envelope(envelope_path(results, RUN_ID, 'oss1', 'obdfilter'))
        assert envelope['status'] == 'ok'
        # Every point once, the kept ones from the first attempt.
        assert sorted(record['thr_per_ost'] for record in envelope['records']) == [1, 2, 4, 8]
        first_attempt = [record['thr_per_ost'] for record in envelope['records'] if record['attempt'] == 1]
        assert sorted(first_attempt) == sorted(line['record']['thr_per_ost'] for line in kept
                                               if finished_record(line['record']))
        assert [item['attempt'] for item in envelope['attempts']] == [1, 2]
        second = envelope['attempts'][1]
        assert second['finished'] is not None
        # Only the missing points ran in the second attempt, which began after the cleanup.
        measured = [record for record in envelope['records'] if record['attempt'] == 2]
        assert len(measured) == 4 - len(first_attempt)
        assert second['started'] >= cleaned_at
        # A run that ended ok leaves nothing to resume on the node.
        assert points(workdir) == []
        assert os.path.exists(os.path.join(results, RUN_ID, 'report.html'))
    finally:
        subprocess.run([LUSTRE_SIM, 'destroy', '--root', root], check=False, stdout=subprocess.DEVNULL)
