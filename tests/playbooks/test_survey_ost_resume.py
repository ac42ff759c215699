# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/survey-ost.yml killed halfway and run again with the same run id, on a simulated Lustre client.

    .venv/bin/python -m pytest tests/playbooks/test_survey_ost_resume.py -q -p no:cacheprovider

Three OSTs throttled to 0.5 MiB/s, 3 MiB each: every write and every read lasts 6 s by construction. As soon as
the first OST is written and read (its row kept on the node), the survey module is SIGKILLed, then ansible-playbook;
the reads of the other two OSTs were still to do. cleanup.yml undoes what the module left. The rerun writes and
reads only the OSTs the killed attempt did not finish, and the one record holds every OST once, each with the
attempt that measured it.
"""

from __future__ import annotations

import json
import os
import signal

import pytest

from conftest import WAIT_POLL_S, SimulatedClient

from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState

from test_survey_playbooks import pytestmark as survey_mark

DEADLINE_S = 240

pytestmark = survey_mark

INVENTORY = '''
all:
  hosts:
    localhost:
      ansible_connection: local
      ansible_python_interpreter: {python}
  children:
    clients:
      hosts:
        localhost:
'''

SIM_CONFIG = '''osts: 3
mdts: 1
ost_size_mib: 64
ost_mib_s: 0.5
client_mount: {mount}
'''

RUN_ID = 'pbtest-ost-resumed'


@pytest.fixture(scope='module')
def client(tmp_path_factory):
    made = SimulatedClient('ost', str(tmp_path_factory.mktemp('survey-ost-resume')))
    survey_vars = {'iokit_timeout_s': 300, 'ost_size_mib': 3, 'ost_poll_interval_s': WAIT_POLL_S,
                   'ost_async_margin_s': 60}
    try:
        yield made.start(SIM_CONFIG, INVENTORY, survey_vars)
    finally:
        made.destroy()


def kept_rows(client):
    """The OST rows the run's points file holds (each OST written and read whole), in the order they ended."""
    path = os.path.join(client.workdir, RUN_ID, 'ost.points.jsonl')
    if not os.path.exists(path):
        return []
    rows = []
    with open(path, encoding='utf-8') as handle:
        for line in handle:
            try:
                record = json.loads(line)['record']
            except ValueError:
                continue  # a line being written
            if 'osts' not in record:
                rows.append(record)
    return rows


def module_killed_once_an_ost_is_kept(client):
    """True (the survey module SIGKILLed first) once the points file holds an OST's row."""
    if not kept_rows(client):
        return False
    for entry in NodeState(client.workdir).read()['processes']:
        if entry.get('module') and entry.get('survey') == 'ost':
            try:
                os.kill(entry['pid'], signal.SIGKILL)
            except ProcessLookupError:
                pass
    return True


def test_a_rerun_of_a_killed_run_writes_and_reads_only_the_osts_it_left(client):
    client.kill_the_playbook_once(RUN_ID, 'the first OST written and read',
                                  lambda: module_killed_once_an_ost_is_kept(client), DEADLINE_S)
    cleanup = client.playbook('cleanup.yml', '--limit', 'localhost', extra={'cleanup_run_id': RUN_ID})
    assert cleanup.returncode == 0, cleanup.stdout[-6000:]
    assert client.trees() == []
    # the cleanup keeps what the killed attempt finished
    kept = dict((row['ost'], row) for row in kept_rows(client))
    assert kept and len(kept) < 3, kept
    assert all(row['attempt'] == 1 and row['write_mib_s'] and row['read_mib_s'] for row in kept.values())

    rerun = client.playbook('survey-ost.yml', extra={'iokit_run_id': RUN_ID})
    assert rerun.returncode == 0, rerun.stdout[-6000:]
    envelope = client.envelope(RUN_ID)
    assert (envelope['status'], envelope['errors']) == ('ok', [])
    [record] = envelope['records']
    assert (record['active_osts'], record['complete'], record['attempt']) == (3, True, 2)
    rows = dict((row['ost'], row) for row in record['osts'])
    assert sorted(rows) == [0, 1, 2]
    # every OST once: the kept ones as the first attempt measured them, the others written and read by the rerun
    for index, row in rows.items():
        if index in kept:
            assert (row['attempt'], row['write_start_time'], row['read_end_time']) == (
                1, kept[index]['write_start_time'], kept[index]['read_end_time'])
        else:
            assert row['attempt'] == 2 and row['write_mib_s'] and row['read_mib_s'], row
            assert row['write_start_time'] >= max(kept_row['read_end_time'] for kept_row in kept.values())
    first, second = envelope['attempts']
    assert (first['attempt'], second['attempt']) == (1, 2) and second['finished'] is not None
    assert first['finished'] is None or second['started'] >= first['finished']
    assert client.trees() == []
    # the report renders the resumed run
    report = client.playbook('report.yml', extra={'iokit_run_id': RUN_ID})
    assert report.returncode == 0, report.stdout[-6000:]
    assert os.path.exists(os.path.join(client.results, RUN_ID, 'report.html'))
