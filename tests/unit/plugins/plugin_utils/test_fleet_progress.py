# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fleet progress line and host rows (one wording for the callback and the filter)."""

from __future__ import annotations

import time

from ansible_collections.lustre.iokit.plugins.filter.fleet_progress import fleet_progress
from ansible_collections.lustre.iokit.plugins.plugin_utils.fleet_progress import duration_text, fleet_line, host_rows


def running(done, total, eta_s, current=None, figure=None):
    return {'survey': 'obdfilter', 'state': 'running', 'done': done, 'total': total, 'eta_s': eta_s,
            'elapsed_s': 600, 'current': current, 'last': {'figure': figure} if figure else None}


def test_the_line_sums_the_points_names_the_slowest_and_the_last_hosts_eta():
    now = time.mktime((2026, 11, 25, 13, 51, 0, 0, 0, -1))
    fleet = {'oss1': running(30, 40, 600), 'oss7': running(12, 40, 2460), 'oss3': running(40, 40, 0)}
    assert fleet_line('obdfilter', fleet, now=now) == \
        'obdfilter: 3 hosts, 82/120 points (68 %), slowest oss7 30 %, ETA 14:32 (41 min)'


def test_hosts_setting_up_count_as_nothing_done_and_an_ended_fleet_says_done():
    assert fleet_line('sgpdd', {'a': None, 'b': running(1, 4, None)}) == \
        'sgpdd: 2 hosts, 1/4 points (25 %), slowest a 0 %, ETA unknown'
    assert fleet_line('sgpdd', {'a': running(1, 4, 60), 'b': running(1, 4, 60)}, now=0).startswith(
        'sgpdd: 2 hosts, 2/8 points (25 %), ETA ')
    ended = dict(running(3, 5, 0), state='ok')
    assert fleet_line('obdfilter', {'a': ended, 'b': ended}) == 'obdfilter: 2 hosts, 6/6 points (100 %), done'


def test_rows_come_slowest_first_with_the_point_running_and_the_last_figure():
    fleet = {'fast': running(3, 4, 60, figure='write 90.0 MiB/s'), 'slow': running(1, 4, 3700, {'thr': 2})}
    assert host_rows(fleet) == [
        '  slow: 1/4 points (25 %), now thr=2, elapsed 10 min, ETA 1 h 02 min',
        '  fast: 3/4 points (75 %), now -, last write 90.0 MiB/s, elapsed 10 min, ETA 1 min']


def test_the_filter_reads_poll_results_and_gives_the_same_line():
    polls = {'oss1': {'finished': False, 'progress': running(1, 2, 30)}, 'oss2': {'finished': False, 'progress': None}}
    lines = fleet_progress(polls, rows=True)
    assert lines[0].startswith('obdfilter: 2 hosts, 1/2 points (50 %), slowest oss2 0 %, ETA ')
    assert lines[1:] == ['  oss2: setting up', '  oss1: 1/2 points (50 %), now -, elapsed 10 min, ETA < 1 min']
    assert duration_text(59 * 60) == '59 min'
