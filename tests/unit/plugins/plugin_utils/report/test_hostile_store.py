# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Things planted in the results store: a FIFO named like an envelope, a host directory linked out of the store.

The report goes on with the good results and names the planted ones as unusable; it never blocks on a FIFO and
never reads through the link.
"""

from __future__ import annotations

import os
import threading

from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import write_envelope
from ansible_collections.lustre.iokit.plugins.plugin_utils.report import run

from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.report.helpers import (
    REPORT_TEMPLATES, RUN_ID, envelope, obdfilter_sweep)

# Only a guard for a report that blocks: a working one ends long before.
HANG_GUARD_S = 120


def _generate_in_a_thread(store):
    outcome = {}

    def work():
        outcome['summary'] = run.generate(store, RUN_ID, REPORT_TEMPLATES, expected={'obdfilter': ['oss1', 'oss2']})

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(HANG_GUARD_S)
    assert not thread.is_alive(), 'the report blocked'
    return outcome['summary']


def _good_store(tmp_path):
    store = str(tmp_path / 'results')
    write_envelope(store, envelope('oss1', 'obdfilter', obdfilter_sweep()))
    return store


def test_a_fifo_in_the_store_is_named_unusable_without_blocking(tmp_path):
    store = _good_store(tmp_path)
    fifo = os.path.join(store, RUN_ID, 'oss2', 'obdfilter.json')
    os.makedirs(os.path.dirname(fifo))
    os.mkfifo(fifo)
    summary = _generate_in_a_thread(store)
    assert summary['hosts'] == ['oss1']
    assert [item['path'] for item in summary['unreadable']] == [os.path.join('oss2', 'obdfilter.json')]
    assert 'a FIFO' in ' '.join(summary['unreadable'][0]['problems'])


def test_a_host_directory_linked_out_of_the_store_is_not_read(tmp_path):
    store = _good_store(tmp_path)
    outside = str(tmp_path / 'outside')
    write_envelope(outside, envelope('oss2', 'obdfilter', obdfilter_sweep()))
    os.symlink(os.path.join(outside, RUN_ID, 'oss2'), os.path.join(store, RUN_ID, 'oss2'))
    summary = _generate_in_a_thread(store)
    assert summary['hosts'] == ['oss1']
    assert [item['path'] for item in summary['unreadable']] == ['oss2']
    assert 'leads out of the results directory' in ' '.join(summary['unreadable'][0]['problems'])
