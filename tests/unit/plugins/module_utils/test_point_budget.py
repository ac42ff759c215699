# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The time-bounded point: how much a point moves, when it is refused, and the default floors."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import point_budget
from ansible_collections.lustre.iokit.plugins.module_utils.point_budget import size_point


def test_unbounded_point_moves_the_full_size_whatever_the_floor():
    size = size_point('obdfilter', full=16384, floor=32768, rate=10.0)
    assert (size.amount, size.limit, size.refused) == (16384, 'full size', None)


def test_budget_cuts_a_slow_point():
    # 30 s at 100 MiB/s: 3000 MiB instead of the I/O kit's 16 GiB, above the 1 GiB floor
    size = size_point('obdfilter', full=16384, floor=1024, point_s=30, rate=100.0)
    assert (size.amount, size.limit, size.expected_s) == (3000.0, 'time budget', 30.0)


def test_floor_wins_over_the_time_budget():
    # 30 s at 10 MiB/s would be 300 MiB, below the 8 GiB the cache needs
    size = size_point('obdfilter', full=16384, floor=8192, point_s=30, rate=10.0)
    assert (size.amount, size.limit, size.expected_s) == (8192, 'floor', 819.2)


def test_floor_wins_over_the_full_size_of_a_bounded_point():
    size = size_point('sgpdd', full=1024, floor=4096, point_s=30, rate=1000.0)
    assert (size.amount, size.limit) == (4096, 'floor')


def test_fast_point_never_moves_more_than_the_full_size():
    size = size_point('sgpdd', full=8192, floor=1024, point_s=30, rate=1200.0)
    assert (size.amount, size.limit) == (8192, 'full size')


def test_first_point_without_a_rate_moves_the_floor():
    size = size_point('mds', full=100000, floor=10000, point_s=30)
    assert (size.amount, size.limit, size.expected_s, size.refused) == (10000, 'floor, no rate yet', None, None)


def test_rounding_to_the_engine_unit_never_goes_below_the_floor():
    assert size_point('obdfilter', full=16384, floor=1000, point_s=1, rate=10.0, granule=64).amount == 1024
    assert size_point('obdfilter', full=16384, floor=512, point_s=10, rate=100.0, granule=64).amount == 1024


def test_point_that_cannot_reach_its_floor_before_the_timeout_is_refused_naming_the_options():
    size = size_point('obdfilter', full=16384, floor=8192, point_s=30, rate=4.0, time_left_s=1800)
    problem = size.refused
    assert problem is not None and problem.options == ('point_min_mib',)
    text = problem.render({'point_min_mib': 'obdfilter_point_min_mib', 'timeout': 'iokit_timeout_s'}.get)
    assert text.startswith('obdfilter_point_min_mib: every obdfilter point must move at least 8192 MiB per target')
    assert 'about 2048 s at the 4.0 MiB/s measured so far' in text
    assert 'the 1800 s left before iokit_timeout_s' in text and text.endswith(', got 8192')
    assert str(size_point('mds', full=100000, floor=10000, point_s=30, rate=2.0, time_left_s=60).refused) \
        .startswith('point_min_items: every mds point must move at least 10000 items')


def test_point_whose_floor_fits_the_time_left_is_not_refused():
    assert size_point('obdfilter', full=16384, floor=8192, point_s=30, rate=10.0, time_left_s=900).refused is None


def test_time_left_before_the_timeout_cuts_the_budget_not_the_floor():
    size = size_point('sgpdd', full=8192, floor=1024, point_s=60, rate=100.0, time_left_s=20)
    assert (size.amount, size.limit, size.refused) == (2000.0, 'time budget', None)
    size = size_point('sgpdd', full=8192, floor=1024, point_s=60, rate=100.0, time_left_s=8)
    assert (size.amount, size.limit) == (1024, 'floor') and size.refused.options == ('point_min_mib',)


def test_sizing_rates_previous_point_of_the_sweep_then_same_threads_of_an_earlier_sweep():
    rates = point_budget.SizingRates()
    first, second = {'nobj': 1}, {'nobj': 2}
    assert rates.rate_for(first, 1) is None
    rates.measured(first, 1, 10.0)
    rates.measured(first, 2, 20.0)
    rates.measured(first, 64, 400.0)
    assert rates.rate_for(first, 128) == 400.0
    # a new inner sweep starting at 2 threads: what 2 threads gave, not the 64-thread rate just before
    assert rates.rate_for(second, 2) == 20.0
    assert rates.rate_for(second, 8) == 20.0
    assert rates.rate_for({'nobj': 4}, 0.5) is None
    rates.measured(second, 2, None)
    assert rates.rate_for(second, 4) == 20.0


@pytest.mark.parametrize('survey, targets, figures, floor, reason', [
    ('obdfilter', 8, {'mem_total_mib': 65536}, 8192,
     '8192 MiB per OST: page cache up to MemTotal 65536 MiB over 8 OSTs'),
    ('obdfilter', 4, {'mem_total_mib': 262144, 'zfs_arc_max_mib': 131072, 'zfs_dirty_data_max_mib': 4096}, 32768,
     '32768 MiB per OST: ZFS ARC max 131072 MiB over 4 OSTs'),
    ('obdfilter', 64, {'mem_total_mib': 262144, 'zfs_arc_max_mib': 1024, 'zfs_dirty_data_max_mib': 40960}, 640,
     '640 MiB per OST: ZFS dirty data max 40960 MiB over 64 OSTs'),
    ('obdfilter', 8, {'mem_total_mib': 65536, 'osd_read_cache': False}, 512,
     '512 MiB per OST: OSD read and write-through caches off over 8 OSTs (at least 512 MiB)'),
    ('ost', 8, {'mem_total_mib': 65536}, 65536, '65536 MiB per OST: page cache up to MemTotal 65536 MiB over 1 OST'),
    ('sgpdd', 8, {}, 1024, '1024 MiB per device: controller cache assumed 8192 MiB (not reported) over 8 devices'),
    ('sgpdd', 2, {'controller_cache_mib': 4096}, 2048,
     '2048 MiB per device: controller cache 4096 MiB over 2 devices'),
    ('sgpdd', 4, {'controller_cache_mib': 0}, 512,
     '512 MiB per device: controller cache 0 MiB over 4 devices (at least 512 MiB)'),
])
def test_default_floor_from_node_figures(survey, targets, figures, floor, reason):
    assert point_budget.default_floor(survey, targets, **figures) == (floor, reason)


def test_default_mds_floor_counts_items():
    floor, reason = point_budget.default_floor('mds', 1)
    assert floor == point_budget.MDS_FLOOR_ITEMS and reason.startswith('10000 items per MDT')


def test_default_floor_needs_the_memory_of_an_ldiskfs_server():
    with pytest.raises(ValueError, match='MemTotal'):
        point_budget.default_floor('obdfilter', 8)
