# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The history from the playbooks: playbooks/history.yml imports what is stored, a survey playbook records what it
stores (into PostgreSQL here), a database that fails fails the store step with the results kept, and a SQLite file on
the simulator's Lustre client mount is refused before any node is touched."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from history_env import ANSIBLE_PLAYBOOK, COLLECTIONS, LUSTRE_SIM, PASSWORD, ROOT, VENV_BIN, PostgresDatabase

from ansible_collections.lustre.iokit.plugins.plugin_utils.history.identity import collection_version
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.store import History
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.samples import envelope_samples
from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import envelope_path, read_envelope
from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.history.helpers import store_run, tree_digest

RUN_1, RUN_2 = '20261122T110000Z-run1', '20261122T120000Z-run2'
SURVEY_RUN = 'histtest-1'

pytestmark = pytest.mark.skipif(not os.access(ANSIBLE_PLAYBOOK, os.X_OK), reason='needs the checkout venv (make setup)')


def playbook(name, extra, cwd=ROOT, inventory=None, env=None):
    argv = [ANSIBLE_PLAYBOOK] + (['-i', inventory] if inventory else [])
    argv += ['-e', json.dumps(extra), os.path.join(ROOT, 'playbooks', name)]
    environment = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_NOCOLOR='1', ANSIBLE_FORCE_COLOR='0',
                       ANSIBLE_LOCALHOST_WARNING='0', **(env or {}))
    return subprocess.run(argv, cwd=cwd, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False)


# -- playbooks/history.yml -e history_action=import ------------------------------------------------------------------


def test_import_records_every_stored_run_once_and_says_what_was_new(database, results_dir):
    stored = store_run(results_dir, RUN_1) + store_run(results_dir, RUN_2, number=1)
    samples = sum(len(envelope_samples(item)[0]) for item in stored)
    before = tree_digest(results_dir)
    extra = {'history_action': 'import', 'history_from': results_dir, 'history_tags': {'site': 'lab'}}
    if database.kind == 'postgresql':
        extra['iokit_history_dsn'] = database.new_dsn()
        dsn = extra['iokit_history_dsn']
    else:
        # Without a DSN: history.sqlite beside the results imported.
        dsn = 'sqlite://%s/history.sqlite' % results_dir
    first = playbook('history.yml', extra)
    assert first.returncode == 0, first.stdout[-6000:]
    shown = dsn.replace(PASSWORD, '***')
    assert 'History %s: 2 run(s) in %s, 2 new; %d result(s) and %d sample(s) new' % (
        shown, results_dir, len(stored), samples) in first.stdout, first.stdout[-6000:]
    assert PASSWORD not in first.stdout
    again = playbook('history.yml', extra)
    assert again.returncode == 0, again.stdout[-6000:]
    assert 'History %s: 2 run(s) in %s, 0 new; 0 result(s) and 0 sample(s) new' % (shown, results_dir) \
        in again.stdout, again.stdout[-6000:]
    # The results directory is only read (the default database is beside it, not in it).
    after = tree_digest(results_dir)
    assert {path: digest for path, digest in after.items() if not path.startswith('history.sqlite')} == before
    with History(dsn) as history:
        assert [(run.run_id, run.tags) for run in history.runs()] == [
            (RUN_1, {'site': 'lab'}), (RUN_2, {'site': 'lab'})]
        assert len(history.samples()) == samples


@pytest.mark.parametrize('extra, message', [
    # The role's argument specs list the actions it knows.
    ({'history_action': 'forecast'},
     'value of history_action must be one of: import, list, show, compare, trend, prune, export, got: forecast'),
    ({'history_action': 'import', 'history_from': '/nonexistent/results'},
     'history_from: /nonexistent/results is not a directory'),
])
def test_import_refuses_what_it_cannot_do(extra, message):
    completed = playbook('history.yml', extra)
    assert completed.returncode != 0 and message in completed.stdout, completed.stdout[-6000:]


# -- a survey playbook records what it stores ---------------------------------------------------------------------

INVENTORY = '''
all:
  hosts:
    localhost:
      ansible_connection: local
      ansible_python_interpreter: {python}
  children:
    mgs: {{hosts: {{localhost: }}}}
    mds: {{hosts: {{localhost: }}}}
    oss: {{hosts: {{localhost: }}}}
    clients: {{hosts: {{localhost: }}}}
'''
SURVEY_VARS = {'iokit_timeout_s': 600, 'obdfilter_size_mib': 1, 'obdfilter_nobjhi': 1, 'obdfilter_thrhi': 1,
               'obdfilter_tests': ['write', 'read'], 'obdfilter_poll_interval_s': 5, 'obdfilter_async_margin_s': 30}


class SimulatedServer:
    """A lustre-sim node with two OSTs and a client mount that survey-obdfilter.yml runs against from localhost."""

    def __init__(self, base):
        self.base = base
        self.root = os.path.join(base, 'node')
        self.mount = os.path.join(base, 'mnt')
        self.results = os.path.join(base, 'results')
        self.inventory = os.path.join(base, 'inventory.yml')
        subprocess.run([LUSTRE_SIM, 'init', '--root', self.root, '--osts', '2', '--mdts', '1', '--ost-size-mib', '64',
                        '--client-mount', self.mount, '--force'], check=True, stdout=subprocess.DEVNULL)
        with open(self.inventory, 'w', encoding='utf-8') as handle:
            handle.write(INVENTORY.format(python=sys.executable))

    def survey(self, **extra):
        variables = dict(SURVEY_VARS, iokit_results_dir=self.results, iokit_workdir=os.path.join(self.base, 'work'),
                         iokit_run_id=SURVEY_RUN)
        variables.update(extra)
        return playbook('survey-obdfilter.yml', variables, inventory=self.inventory,
                        env={'LUSTRE_SIM_ROOT': self.root, 'ANSIBLE_PIPELINING': '1',
                             'PATH': os.path.join(self.root, 'bin') + os.pathsep + VENV_BIN + os.pathsep
                             + os.environ['PATH']})

    def mount_kind(self):
        status = json.loads(subprocess.run([LUSTRE_SIM, 'status', '--root', self.root], check=True,
                                           stdout=subprocess.PIPE, universal_newlines=True).stdout)
        return (status.get('client') or {}).get('kind')

    def destroy(self):
        subprocess.run([LUSTRE_SIM, 'destroy', '--root', self.root], check=False, stdout=subprocess.DEVNULL)


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    if LUSTRE_SIM is None:
        pytest.skip('needs lustre-sim in the checkout venv (make setup)')
    made = SimulatedServer(str(tmp_path_factory.mktemp('history-survey')))
    try:
        yield made
    finally:
        made.destroy()


def test_a_survey_records_what_it_stores_and_a_failing_database_keeps_the_results(server, postgres_server):
    dsn = PostgresDatabase(postgres_server).new_dsn()
    first = server.survey(iokit_history_dsn=dsn, iokit_history_tags={'quarter': '2026Q3'})
    assert first.returncode == 0, first.stdout[-6000:]
    assert PASSWORD not in first.stdout
    stored = read_envelope(envelope_path(server.results, SURVEY_RUN, 'localhost', 'obdfilter'))
    with History(dsn) as history:
        run = history.run(SURVEY_RUN)
        assert (run.host_count, run.fsname, run.tags, sorted(run.surveys)) == (1, 'testfs', {'quarter': '2026Q3'},
                                                                               ['obdfilter'])
        assert run.collection_version == collection_version()
        recorded = sorted((sample.to_sample() for sample in history.samples(runs=[SURVEY_RUN])), key=repr)
        assert recorded == sorted(envelope_samples(stored)[0], key=repr) and recorded
        assert {sample.component_id for sample in history.samples(component_kind='OST')} == {
            'testfs-OST0000', 'testfs-OST0001'}
        fill = history.fill(SURVEY_RUN)
        assert [item.component_id for item in fill] == ['testfs-OST0000', 'testfs-OST0001']
        assert all(item.used_pct is not None and 0 <= item.used_pct < 100 for item in fill), fill
    # The same run again with a database that cannot be reached: the host is skipped (its result is ok), its
    # recording fails naming the database, the run fails, and the stored result stays as it was.
    before = tree_digest(os.path.join(server.results, SURVEY_RUN))
    unreachable = 'postgresql://postgres:%s@/nowhere?host=%s' % (PASSWORD, os.path.join(server.base, 'no-server'))
    second = server.survey(iokit_history_dsn=unreachable)
    assert second.returncode != 0
    assert 'history database postgresql://postgres:***@/nowhere' in second.stdout, second.stdout[-6000:]
    assert 'cannot be reached' in second.stdout and 'its results stay in %s' % os.path.join(
        server.results, SURVEY_RUN) in second.stdout
    assert 'localhost failed (Record the stored result in the results history' in second.stdout
    assert 'its stored result is kept' in second.stdout
    assert PASSWORD not in second.stdout
    after = tree_digest(os.path.join(server.results, SURVEY_RUN))
    assert {path: digest for path, digest in after.items() if not path.startswith('summary-')} == \
        {path: digest for path, digest in before.items() if not path.startswith('summary-')}


def test_a_history_on_the_lustre_client_mount_is_refused_before_any_node_is_touched(server):
    if server.mount_kind() != 'fuse':
        pytest.skip('the simulator mounted its client as %s, not FUSE (no /dev/fuse or not root)'
                    % server.mount_kind())
    dsn = 'sqlite://%s/history/history.sqlite' % server.mount
    refused = server.survey(iokit_history_dsn=dsn, iokit_run_id='histtest-refused')
    assert refused.returncode != 0
    assert 'iokit_history_dsn: %s is on a Lustre file system (%s, type fuse.lustre-sim)' % (dsn, server.mount) \
        in refused.stdout, refused.stdout[-6000:]
    assert 'nothing was started' in refused.stdout
    assert 'Start the survey' not in refused.stdout and not os.path.exists(os.path.join(server.mount, 'history'))
    assert not os.path.exists(os.path.join(server.results, 'histtest-refused', 'localhost'))
