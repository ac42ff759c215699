# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a fleet run prints: the stdout budget per host, and the progress line with fewer forks than hosts.

    .venv/bin/python -m pytest tests/playbooks/test_fleet_output.py -q -p no:cacheprovider

Each host is its own simulated node (local connection, a Python wrapper that puts the node's lustre-sim on PATH).
The playbooks run from the checkout root, so with its ansible.cfg: the survey_progress callback at the default
verbosity.

The budget (2 KiB of stdout per host at the default verbosity, so that a 1,000-host run of every survey stays
well under a container log's 10 MiB) is checked on what grows with the hosts: the same playbook on 2 and on 4
hosts, the difference in stdout bytes divided by the 2 hosts added. The part that does not grow with the hosts (the
task headers, the summary path, the verdict) cancels out. The waits poll once every 60 s here and the surveys take
a few seconds, so no poll line is printed: a poll prints one fleet line, not a line per host (the callback's unit
tests), and the count of polls would depend on the machine's speed.
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess

import pytest

from conftest import COLLECTIONS, LUSTRE_SIM, ROOT, VENV_BIN, simulated_local_host

from test_survey_playbooks import ANSIBLE_PLAYBOOK

pytestmark = pytest.mark.skipif(LUSTRE_SIM is None or not os.access(ANSIBLE_PLAYBOOK, os.X_OK),
                                reason='needs the checkout venv (make setup) with lustre-sim')

BUDGET_BYTES_PER_HOST = 2048
NAMES = ['oss%d' % index for index in range(1, 5)]
QUIET_VARS = {'iokit_timeout_s': 600,
              'obdfilter_size_mib': 4, 'obdfilter_nobjhi': 1, 'obdfilter_thrhi': 1, 'obdfilter_tests': ['write', 'read'],
              'obdfilter_poll_interval_s': 60, 'obdfilter_async_margin_s': 60,
              'mds_thrlo': 1, 'mds_thrhi': 1, 'mds_file_count': 100, 'mds_poll_interval_s': 60,
              'mds_async_margin_s': 60}
# forks 2 on 4 hosts: one point of 8 MiB written and read on an OST held to 1 MiB/s, 16 s at least, polled every second.
SLOW_VARS = {'iokit_timeout_s': 600, 'obdfilter_size_mib': 8, 'obdfilter_nobjhi': 1, 'obdfilter_thrhi': 1,
             'obdfilter_tests': ['write', 'read'], 'obdfilter_poll_interval_s': 1, 'obdfilter_async_margin_s': 60}
FLEET_LINE = re.compile(r'^obdfilter: (\d+) hosts?, ')


def write_inventory(base, hosts, name):
    path = os.path.join(base, name)
    with open(path, 'w', encoding='utf-8') as handle:
        json.dump({'all': {'children': {'oss': {'hosts': hosts}, 'mds': {'hosts': hosts}}}}, handle)
    return path


@pytest.fixture(scope='module')
def fleet(tmp_path_factory):
    base = str(tmp_path_factory.mktemp('fleet-output'))
    fast = dict((name, simulated_local_host(base, name, '--osts', '1', '--mdts', '1', '--ost-size-mib', '64'))
                for name in NAMES)
    slow = dict((name, simulated_local_host(base, 'slow-' + name, '--osts', '1', '--mdts', '1', '--ost-size-mib',
                                            '64', '--ost-mib-s', '1')) for name in NAMES)
    yield {'base': base, 'results': os.path.join(base, 'results'),
           'two': write_inventory(base, dict((name, fast[name]) for name in NAMES[:2]), 'two.json'),
           'four': write_inventory(base, fast, 'four.json'),
           'slow': write_inventory(base, slow, 'slow.json')}
    for name in NAMES:
        for node in (name, 'slow-' + name):
            subprocess.run([LUSTRE_SIM, 'destroy', '--root', os.path.join(base, node)], check=False,
                           stdout=subprocess.DEVNULL)


def playbook(fleet, inventory, name, run_id, settings, *options, forks=None):
    """One run at the default verbosity; stdout alone (what a container log keeps), stderr apart."""
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_PIPELINING='1', ANSIBLE_NOCOLOR='1',
               ANSIBLE_FORCE_COLOR='0', PATH=VENV_BIN + os.pathsep + os.environ['PATH'])
    env.pop('ANSIBLE_STDOUT_CALLBACK', None)
    if forks:
        env['ANSIBLE_FORKS'] = str(forks)
    extra = dict(settings, iokit_run_id=run_id, iokit_results_dir=fleet['results'])
    done = subprocess.run([ANSIBLE_PLAYBOOK, '-i', inventory, '-e', json.dumps(extra)] + list(options)
                          + [os.path.join(ROOT, 'playbooks', name)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, check=False)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    return done.stdout


@pytest.mark.parametrize('name,options', [
    ('survey-obdfilter.yml', ()),
    ('survey-mds.yml', ()),
    ('stats-collect.yml', ('-e', 'stats_collect_action=start')),
])
def test_a_survey_prints_at_most_2_kib_per_host(fleet, name, options):
    label = name.split('.')[0]
    sizes = {}
    for count, inventory in ((2, fleet['two']), (4, fleet['four'])):
        run_id = 'quiet-%s-%d' % (label, count)
        output = playbook(fleet, inventory, name, run_id, QUIET_VARS, *options)
        if name == 'stats-collect.yml':
            # the samplers started, then stopped and collected: both halves of the statistics' output
            output += playbook(fleet, inventory, name, run_id, QUIET_VARS, '-e', 'stats_collect_action=collect')
        assert not FLEET_LINE.search(output), output[-6000:]
        sizes[count] = len(output.encode('utf-8'))
    per_host = (sizes[4] - sizes[2]) / 2.0
    assert per_host <= BUDGET_BYTES_PER_HOST, (name, sizes)


def test_with_fewer_forks_than_hosts_every_fleet_line_counts_the_whole_fleet(fleet):
    """forks 2 on 4 hosts: the waits of two hosts hold the forks, the other two surveys run unpolled meanwhile."""
    output = playbook(fleet, fleet['slow'], 'survey-obdfilter.yml', 'forks-2', SLOW_VARS, forks=2)
    counts = [int(match.group(1)) for match in (FLEET_LINE.match(line) for line in output.splitlines()) if match]
    assert counts, output[-6000:]
    assert set(counts) == {4}, output[-6000:]
    # the first polls hear two hosts; the other two are counted as started, not polled yet
    assert re.search(r'^obdfilter: 4 hosts, 2 started not polled yet, \d+/\d+ points', output, re.M), output[-6000:]
    assert re.search(r'^obdfilter: 4 hosts, \d+/\d+ points \(100 %\), done$', output, re.M), output[-6000:]


def test_with_fewer_forks_than_hosts_every_survey_waits_for_its_start_signal(fleet):
    """forks 1 on 4 hosts: the launches go one host after another, and no survey measures before the task after
    the last launch gives each its start signal.

    Each envelope says how long its survey waited (``environment.start_wait_s``); its ``started`` is when it began
    to measure. The first host, launched first, waited for the three launches after it; without the signal it
    would measure at once and record no wait. A host whose module was still starting when its signal came waits
    for nothing (the signal is a file that stays until the module takes it).
    """
    playbook(fleet, fleet['four'], 'survey-obdfilter.yml', 'together', QUIET_VARS, forks=1)
    envelopes = {}
    for name in NAMES:
        with open(os.path.join(fleet['results'], 'together', name, 'obdfilter.json'), encoding='utf-8') as handle:
            envelopes[name] = json.load(handle)
    waits = dict((name, envelope['environment'].get('start_wait_s')) for name, envelope in envelopes.items())
    assert all(envelope['status'] == 'ok' for envelope in envelopes.values()), envelopes
    assert all(isinstance(wait, (int, float)) for wait in waits.values()), waits
    assert waits[NAMES[0]] > 0, waits
    # every start signal was taken: nothing of the barrier is left in the run directories on the nodes
    for name in NAMES:
        leftovers = glob.glob(os.path.join(fleet['base'], name + '-work', '**', 'obdfilter.start-*'), recursive=True)
        assert not leftovers, leftovers
