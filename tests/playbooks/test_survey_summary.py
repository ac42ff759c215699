# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The generic survey summary (roles/survey_common/templates/summary.md.j2), the one a survey without a template of
its own gets, rendered by ansible-playbook from a store of three OSSs' obdfilter envelopes with one slow OST.

    .venv/bin/python -m pytest tests/playbooks/test_survey_summary.py -q -p no:cacheprovider
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from conftest import ANSIBLE_PLAYBOOK, COLLECTIONS, ROOT, localhost_inventory

from ansible_collections.lustre.iokit.plugins.plugin_utils.report.samples import as_samples
from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import write_envelope
from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.report.helpers import (
    RUN_ID, envelope, per_ost_obdfilter)

pytestmark = pytest.mark.skipif(not os.access(ANSIBLE_PLAYBOOK, os.X_OK), reason='needs the checkout venv (make setup)')

HOSTS = ('oss1', 'oss2', 'oss3')
SLOW_HOST, SLOW_OST = 'oss2', 'testfs-OST0003'

# The steps of roles/survey_common/tasks/summary.yml, with the generic template named instead of chosen, since every
# survey of the collection has a template of its own.
PLAYBOOK = '''
- name: Render the generic summary of the run's obdfilter envelopes
  hosts: localhost
  gather_facts: false
  vars:
    survey_common_name: obdfilter
  tasks:
    - name: Read the run's results of the survey
      ansible.builtin.import_role:
        name: lustre.iokit.survey_common
        tasks_from: read_results
        rolespec_validate: false

    - name: Render the generic summary
      ansible.builtin.template:
        src: {template}
        dest: "{{{{ survey_common_run.run_dir }}}}/summary-generic.md"
        mode: "0644"
'''


def _collection_root():
    for path in COLLECTIONS.split(os.pathsep):
        candidate = os.path.join(path, 'ansible_collections', 'lustre', 'iokit')
        if os.path.isdir(candidate):
            return candidate
    raise AssertionError('lustre.iokit is not in %s' % COLLECTIONS)


def _fleet():
    """Two OSTs per OSS, all at the same rate but SLOW_OST of SLOW_HOST, at a third of it; every host's aggregate the
    same, so that the OST is the one slow component."""
    envelopes = []
    for index, host in enumerate(HOSTS):
        osts = {'testfs-OST%04d' % (2 * index + number): 1.0 for number in (0, 1)}
        aggregate = 1.0
        if host == SLOW_HOST:
            osts[SLOW_OST] = 0.3
            aggregate = 2 / 1.3
        envelopes.append(envelope(host, 'obdfilter', per_ost_obdfilter(host, osts, aggregate=aggregate)))
    return envelopes


class Store:
    """The run's obdfilter envelopes in a results store, and the playbook that renders their generic summary."""

    def __init__(self, base):
        self.base = base
        self.results = os.path.join(base, 'results')
        self.envelopes = _fleet()
        for stored in self.envelopes:
            write_envelope(self.results, stored)
        self.inventory = os.path.join(base, 'inventory.yml')
        with open(self.inventory, 'w', encoding='utf-8') as handle:
            handle.write(localhost_inventory(sys.executable))
        self.playbook = os.path.join(base, 'summary.yml')
        with open(self.playbook, 'w', encoding='utf-8') as handle:
            handle.write(PLAYBOOK.format(template=os.path.join(_collection_root(), 'roles', 'survey_common',
                                                               'templates', 'summary.md.j2')))

    def summary(self, **extra):
        """The generic summary rendered with ``extra`` variables."""
        extra['iokit_run'] = {'results_dir': self.results, 'run_id': RUN_ID}
        run = subprocess.run([ANSIBLE_PLAYBOOK, '-i', self.inventory, self.playbook, '-e', json.dumps(extra)],
                             cwd=ROOT, env=dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_NOCOLOR='1'),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
        assert run.returncode == 0, run.stdout[-6000:]
        with open(os.path.join(self.results, RUN_ID, 'summary-generic.md'), encoding='utf-8') as handle:
            return handle.read()


@pytest.fixture(scope='module')
def store(tmp_path_factory):
    return Store(str(tmp_path_factory.mktemp('survey-summary')))


@pytest.fixture(scope='module')
def summary(store):
    return store.summary()


def _section(text, host):
    """The part of the summary under ``## <host>``, up to the next host."""
    match = re.search(r'^## %s — .*?(?=^## |\Z)' % re.escape(host), text, re.M | re.S)
    assert match, 'no section for %s in:\n%s' % (host, text)
    return match.group(0)


def _table(section, header):
    """The data rows of the table of ``section`` whose header row starts with ``header``."""
    lines = section.splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith('|'):
            break
        rows.append(line)
    return rows


def test_each_host_has_its_status_time_span_and_every_measured_value(store, summary):
    assert summary.startswith('# obdfilter survey — run %s' % RUN_ID)
    for stored in store.envelopes:
        section = _section(summary, stored['host'])
        assert section.startswith('## %s — ok' % stored['host'])
        assert '%s to %s' % (stored['started'], stored['finished']) in section
        assert len(_table(section, '| target |')) == len(as_samples([stored]))
    # oss1's first OST, write at thr 4 per OST: 500 MiB/s, under its point's label.
    assert '| `testfs-OST0000` | write | rsz 1024K obj 1 thr 4 | 1 | 500.00 | MiB/s |' in _section(summary, 'oss1')


def test_the_slow_ost_is_named_under_its_host_alone(summary):
    slow_rows = _table(_section(summary, SLOW_HOST), '| metric |')
    assert slow_rows and all('`%s`' % SLOW_OST in row and '**slow**' in row for row in slow_rows)
    assert {'obdfilter_write_mib_s', 'obdfilter_read_mib_s'} == {row.split(' | ')[0].strip('| ') for row in slow_rows}
    for host in HOSTS:
        if host != SLOW_HOST:
            assert '**slow**' not in _section(summary, host)


def test_a_survey_s_own_slow_share_is_the_findings_criterion(store):
    # The slow OST is at 30 % of its peers' median: not slow for a survey that calls slow only what is below 25 %.
    text = store.summary(obdfilter_slow_share=0.25)
    assert '**slow**' not in _section(text, SLOW_HOST)
