# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Time-bounded obdfilter points through the survey playbook, against a simulated OSS with a throttled OST.

OST0001 moves at most THROTTLE_MIB_S (the simulator books every MiB it moves on the OST's time line), OST0000 is
unthrottled.  The first point moves the floor; the second is sized from the rate the first measured on the slowest
OST, which the throttle caps, so it moves at most POINT_S x THROTTLE_MIB_S, rounded up to whole records for its
threads, and at least the floor.  Every bound below is set by the throttle and the granule, never by the machine.
"""

from __future__ import annotations

import os

import pytest

import conftest
from conftest import ANSIBLE_PLAYBOOK, LUSTRE_SIM, WAIT_POLL_S

from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import envelope_path, read_envelope

try:
    from lustre_sim.node import Node
except ImportError:  # without the simulator the module is skipped below
    Node = None

RUN_ID = 'bounded-1'
SLOW_OST = 'testfs-OST0001'
THROTTLE_MIB_S = 1.0
POINT_S = 6.0
FLOOR_MIB = 2
# thr 2 of 1 MiB records: a point moves a multiple of 2 MiB per OST
GRANULE_MIB = 2
# The throttle is a floor on each transfer's time; the margin is for the rounding of the printed rates.
CEILING_MIB_S = THROTTLE_MIB_S * 1.05
# lctl's own rate over its samples leaves out the start of its process, and the simulator books a run's I/O on the
# OST's time line with the run's own pauses between I/Os caught up (up to a second each), so a loaded machine does not
# pull it below the throttle until one 1 MiB record takes longer to move than the throttle allows it (a second);
# half the throttle leaves the first booking and the rounding a wide margin.
LCTL_FLOOR_MIB_S = THROTTLE_MIB_S * 0.5

pytestmark = pytest.mark.skipif(LUSTRE_SIM is None or Node is None or not os.access(ANSIBLE_PLAYBOOK, os.X_OK),
                                reason='needs the checkout venv (make setup) with lustre-sim')

SURVEY_VARS = {
    'iokit_timeout_s': 600, 'iokit_run_id': RUN_ID,
    'obdfilter_size_mib': 64, 'obdfilter_nobjhi': 1, 'obdfilter_thrhi': 2, 'obdfilter_tests': ['write', 'read'],
    'obdfilter_point_s': POINT_S, 'obdfilter_point_min_mib': FLOOR_MIB,
    'obdfilter_poll_interval_s': WAIT_POLL_S, 'obdfilter_async_margin_s': 30,
}


def oss_node(base, *init_args):
    """A simulated OSS (one MDT, 256 MiB OSTs, ``init_args``) with SURVEY_VARS, destroyed on the way out."""
    return conftest.oss_node(base, SURVEY_VARS, '--mdts', '1', '--ost-size-mib', '256', *init_args)


@pytest.fixture(scope='module')
def bounded_run(tmp_path_factory):
    with oss_node(str(tmp_path_factory.mktemp('obdfilter-bounded')), '--osts', '2',
                  '--ost-mib-s-override', SLOW_OST.split('-')[1] + '=%g' % THROTTLE_MIB_S) as node:
        node.run = node.playbook('survey-obdfilter.yml')
        yield node


@pytest.mark.xdist_group('obdfilter_bounded')
def test_a_bounded_point_on_a_throttled_ost_moves_its_time_at_the_throttled_rate(bounded_run):
    assert bounded_run.run.returncode == 0, bounded_run.run.stdout[-6000:]
    envelope = read_envelope(envelope_path(bounded_run.results, RUN_ID, 'localhost', 'obdfilter'))
    assert envelope['status'] == 'ok' and envelope['errors'] == []
    assert envelope['parameters']['point_s'] == POINT_S
    first, second = envelope['records']
    assert all(record['bounded'] is True for record in (first, second))
    # the first point has no rate yet: it moves the floor
    assert (first['thr_per_ost'], first['moved_mib_per_ost'], first['point_limit']) == (
        1, FLOOR_MIB, 'floor, no rate yet')
    # the second is sized from the slowest OST's rate, which the throttle caps
    assert second['thr_per_ost'] == 2 and second['sized_from_mib_s'] <= CEILING_MIB_S
    assert FLOOR_MIB <= second['moved_mib_per_ost'] <= POINT_S * THROTTLE_MIB_S
    assert second['moved_mib_per_ost'] % GRANULE_MIB == 0
    # both OSTs moved the same; the throttled one reports the throttled rate and took at least what it sets
    for test in ('write', 'read'):
        slow = second['per_ost'][SLOW_OST][test]
        assert slow['mib_s'] <= CEILING_MIB_S and LCTL_FLOOR_MIB_S <= slow['lctl_mib_s'] <= CEILING_MIB_S, slow
        assert slow['elapsed_s'] >= second['moved_mib_per_ost'] / CEILING_MIB_S, slow
    assert second['size_kib'] == 2 * second['moved_mib_per_ost'] * 1024


# -- the floor against the server's read cache ------------------------------------------------------------------
# One OST of CACHE_THROTTLE_MIB_S behind a node read cache of CACHE_MIB (the simulator's model of an OSD's page cache:
# a read of bytes still cached is booked at four times the OST's rate). A bounded point moves its floor first; a
# floor below the cache reads back what it just wrote from the cache, one that covers the cache over the host's OSTs
# (the default floor's rule) reads from the OST. The simulator counts the bytes reads found in its cache, so what
# served each read is known exactly, whatever the machine's speed.
CACHE_MIB = 32
CACHE_THROTTLE_MIB_S = 20.0
BELOW_CACHE_MIB = 8
COVERING_FLOOR_MIB = 48


def _cache_run(node, run_id, floor_mib):
    """Run the bounded survey whose floor is ``floor_mib``: (its only record, the bytes its reads found cached)."""
    hits = Node(node.root).read_cache.read_hit_bytes()
    run = node.playbook('survey-obdfilter.yml', extra={
        'iokit_run_id': run_id, 'obdfilter_point_min_mib': floor_mib, 'obdfilter_point_s': 1.0,
        'obdfilter_thrhi': 1, 'obdfilter_size_mib': 128})
    assert run.returncode == 0, run.stdout[-6000:]
    records = read_envelope(envelope_path(node.results, run_id, 'localhost', 'obdfilter'))['records']
    assert len(records) == 1, records
    return records[0], Node(node.root).read_cache.read_hit_bytes() - hits


@pytest.fixture(scope='module')
def cached_node(tmp_path_factory):
    with oss_node(str(tmp_path_factory.mktemp('obdfilter-cache')), '--osts', '1',
                  '--ost-mib-s', '%g' % CACHE_THROTTLE_MIB_S, '--read-cache-mib', str(CACHE_MIB)) as node:
        node.below = _cache_run(node, 'cache-below', BELOW_CACHE_MIB)
        node.covering = _cache_run(node, 'cache-floor', COVERING_FLOOR_MIB)
        yield node


@pytest.mark.xdist_group('obdfilter_cache')
def test_a_floor_below_the_cache_reads_from_the_cache_and_one_covering_it_from_the_ost(cached_node):
    below, below_hits = cached_node.below
    covering, covering_hits = cached_node.covering
    assert (below['moved_mib_per_ost'], below['point_limit']) == (BELOW_CACHE_MIB, 'floor, no rate yet')
    assert (covering['moved_mib_per_ost'], covering['point_limit']) == (COVERING_FLOOR_MIB, 'floor, no rate yet')
    # below the cache, every byte read back was the cache's: the figure is the cache's, not the OST's
    assert below_hits == BELOW_CACHE_MIB * 1048576
    read = next(iter(below['per_ost'].values()))['read']
    assert read['mib_s'] <= CACHE_THROTTLE_MIB_S * 4 * 1.05, read
    # a floor that covers the cache: each record was evicted before it was read again, so the OST served all of it
    assert covering_hits == 0
    read = next(iter(covering['per_ost'].values()))['read']
    assert read['mib_s'] <= CACHE_THROTTLE_MIB_S * 1.05, read
