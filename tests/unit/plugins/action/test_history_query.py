# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""history_query: the history asked as a task asks it - the answer's rows, lines and files; prune's check mode."""

from __future__ import annotations

import os

import pytest
from ansible.errors import AnsibleActionFail

from ansible_collections.lustre.iokit.plugins.plugin_utils.history.store import History
from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.history.helpers import store_run

RUN_1, RUN_2 = '20261122T110000Z-run1', '20261122T120000Z-run2'


@pytest.fixture
def results_dir(tmp_path):
    path = tmp_path / 'results'
    path.mkdir()
    store_run(str(path), RUN_1, surveys=('obdfilter',))
    store_run(str(path), RUN_2, number=1, surveys=('obdfilter',))
    with History('sqlite://%s/history.sqlite' % path) as history:
        history.import_results(str(path))
    return str(path)


def test_show_answers_in_rows_lines_and_a_file_beside_the_results(run_action, results_dir):
    result = run_action('history_query', {'action': 'show', 'results_dir': results_dir, 'run_id': RUN_1})
    assert result['changed'] is False and result['rows'][0]['run_id'] == RUN_1
    assert result['lines'][0].startswith('Run %s: started ' % RUN_1)
    (text,) = result['files']
    assert os.path.dirname(text) == results_dir and os.path.basename(text).startswith('history-show-')
    with open(text, encoding='utf-8') as handle:
        assert handle.read().splitlines() == result['lines']


def test_prune_in_check_mode_deletes_nothing_and_refuses_without_a_date(run_action, results_dir, tmp_path):
    args = {'action': 'prune', 'results_dir': results_dir, 'before': '20261123', 'keep_runs': [RUN_2],
            'dest': str(tmp_path / 'answers')}
    checked = run_action('history_query', args, check_mode=True)
    # changed, as Ansible's check mode says it: this would change the database.
    assert (checked['deleted'], checked['kept'], checked['changed']) == ([RUN_1], [RUN_2], True)
    assert checked['lines'][0] == 'Would delete 1 run(s) finished before 20261123: %s' % RUN_1
    with History('sqlite://%s/history.sqlite' % results_dir) as history:
        assert len(history.runs()) == 2
    done = run_action('history_query', args)
    assert (done['deleted'], done['changed']) == ([RUN_1], True)
    with pytest.raises(AnsibleActionFail, match='history_before: give the date'):
        run_action('history_query', dict(args, before=None))


def test_a_run_that_is_not_recorded_fails_naming_it(run_action, results_dir):
    with pytest.raises(AnsibleActionFail, match='run 20261122T000000Z-none is not in the history'):
        run_action('history_query', {'action': 'compare', 'results_dir': results_dir,
                                     'lhs': '20261122T000000Z-none', 'rhs': RUN_1})
