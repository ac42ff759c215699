# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Time-bounded points: how much one sweep point moves when its time, not its size, is bounded.

The I/O kit moves a fixed amount at every point of a sweep (obdfilter ``size`` MiB per OST per test, sgpdd
``size`` MiB per device, mds ``file_count`` items per MDT), so a point's time is that amount over its rate and the
slow low-concurrency points cost the most.  A bounded point is given a time, ``point_s`` (seconds for each test of
the point: write, rewrite and read each get it), and moves what that time allows at the rate the survey is
finding, within two limits:

* never less than the **floor**, the least a point may move and still measure the device rather than a cache in
  front of it (``default_floor`` derives it from what the node reports); the floor wins over the time;
* never more than the **full size**, what the I/O kit would move: a fast point is never made longer than the
  I/O kit's own.  Where the floor is above the full size (a node whose cache is larger than the I/O kit's size
  per target), the floor still wins: a figure below the floor is a cache's figure.

So, ``amount = max(floor, min(full, point_s x rate))``, the rule ``size_point`` applies:

* ``point_s`` unset: the full size, exactly as the I/O kit (no floor either, so results stay comparable with
  the I/O kit's);
* no rate yet (the survey's first point): the floor, the least honest point, whose measured rate sizes the next;
* the rate a point sizes from is chosen by ``SizingRates``: the previous point of the same inner sweep, else the
  same (or the nearest lower) axis value of an earlier inner sweep, else none.  On the rising side of a curve a
  point's rate is at least the previous one's, so it lasts at most ``point_s``; on a declining curve a little more.
* a point whose floor alone cannot be moved, at that rate, in the time the survey has left before its timeout is
  refused (``PointSize.refused``, an ``OptionProblem`` naming the floor option and the timeout) instead of being
  cut short into a partial, cache-sized figure; when the floor fits, the time left bounds the budget as
  ``point_s`` does.

The amount is per target (OST, device, MDT): every target of a host moves the same amount, so the engine passes
the rate of the slowest target and the slowest test of the previous point, and all targets finish together.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import math

from ansible_collections.lustre.iokit.plugins.module_utils.option_problem import OptionProblem

# The time for each test of a point in the fast profile (``iokit_sweep_profile: fast``): 20 one-second samples, so
# that a point's min..max spread, which the adaptive stop rule reads, rests on more than a handful of samples; the
# I/O kit's own points last about as long at the peak of a 400 MiB/s OST (16 GiB in 41 s) and far longer below it.
FAST_POINT_S = 20

# The least any bounded data point moves per target, whatever the caches: below this a test's few seconds are
# mostly its start (threads, object creation) and the one-second samples that give a point its spread are too few.
MIN_FLOOR_MIB = 512
# mds-survey acts on the files the same point created, which any MDS keeps cached whatever the count the survey
# uses (100,000 files are about 100 MiB of inodes): no item count defeats that cache, so the floor only keeps a
# point well past its threads' start.
MDS_FLOOR_ITEMS = 10000
# sgp_dd bypasses the page cache; what is left in front of the disks is the RAID controller's write-back cache,
# which the node cannot report.  Current controllers carry 2 to 8 GiB; assume the large end unless told.
ASSUMED_CONTROLLER_CACHE_MIB = 8192

# The floor option of each survey that has time-bounded points (mds counts items, the others MiB).
FLOOR_OPTIONS = {'obdfilter': 'point_min_mib', 'sgpdd': 'point_min_mib', 'ost': 'point_min_mib',
                 'mds': 'point_min_items'}
UNITS = {'obdfilter': 'MiB', 'sgpdd': 'MiB', 'ost': 'MiB', 'mds': 'items'}

# How much one bounded point moves:
#   amount     - per target, in the survey's unit (MiB, or items for mds);
#   limit      - what set it: 'full size', 'time budget', 'floor' or 'floor, no rate yet';
#   expected_s - the amount over the rate it was sized from (None without a rate);
#   refused    - None, or an OptionProblem when the floor cannot be moved before the survey's timeout.
PointSize = collections.namedtuple('PointSize', ['amount', 'limit', 'expected_s', 'refused'])

FULL = 'full size'
BUDGET = 'time budget'
FLOOR = 'floor'
FLOOR_NO_RATE = 'floor, no rate yet'


def _round_up(amount, granule):
    if not granule:
        return amount
    return math.ceil(amount / float(granule)) * granule


def size_point(survey, full, floor, point_s=None, rate=None, time_left_s=None, granule=None):
    """How much the next point of ``survey`` moves per target: a ``PointSize``.

    ``full``: what the I/O kit would move (``size_mib``, or ``file_count`` for mds); ``floor``: the least a bounded
    point moves (``point_min_mib`` / ``point_min_items``); ``point_s``: the time for each test of the point, None
    for the I/O kit's fixed size; ``rate``: per target, in the survey's unit per second, from ``SizingRates``
    (None before the first measured point); ``time_left_s``: the time left before the survey's timeout, None when
    it has none (it bounds the time budget too); ``granule``: the engine's unit of work (a record times the
    threads), a bounded amount is rounded up to a multiple of it so that rounding never takes it below the floor.
    """
    if point_s is None:
        return PointSize(full, FULL, full / rate if rate else None, None)
    if not rate or rate <= 0:
        return PointSize(_round_up(floor, granule), FLOOR_NO_RATE, None, None)
    # a point never plans past the survey's timeout when its floor fits before it
    budget = min(point_s, time_left_s if time_left_s is not None else point_s) * rate
    if floor >= min(budget, full):
        amount, limit = _round_up(floor, granule), FLOOR
    elif budget >= full:
        amount, limit = full, FULL
    else:
        amount, limit = min(_round_up(budget, granule), full), BUDGET
    return PointSize(amount, limit, amount / rate, floor_refusal(survey, floor, rate, time_left_s))


def point_sizing(full, floor, floor_reason, point_s=None):
    """A plan's ``point_sizing``: what one point moves per target at full size, its floor and why, and ``point_s``
    (None when unbounded), so that an estimate can time the fast profile beside the full grid
    (``plan_estimate.fast_profile_bound``)."""
    return {'full': full, 'floor': floor, 'floor_reason': floor_reason, 'point_s': point_s}


def floor_refusal(survey, floor, rate, time_left_s):
    """An OptionProblem when moving ``floor`` at ``rate`` takes longer than ``time_left_s``, else None.

    A point cut short by the timeout would report a figure of less than its floor, the cache-inflated kind the floor
    is there to prevent, so it is refused before it runs; the message names the floor option and the timeout.
    """
    if time_left_s is None or not rate or rate <= 0:
        return None
    needed_s = floor / float(rate)
    if needed_s <= time_left_s:
        return None
    unit = UNITS.get(survey, 'MiB')
    return OptionProblem(
        FLOOR_OPTIONS.get(survey, 'point_min_mib'),
        'every %s point must move at least %g %s per target, about %d s at the %.1f %s/s measured so far, more than '
        'the %d s left before {timeout}; lower the floor (it guards against cache-inflated figures) only if this '
        'node has less cache, or raise {timeout}' % (survey, floor, unit, math.ceil(needed_s), rate, unit,
                                                     int(time_left_s)),
        got='%g' % floor, mentions='timeout')


def _outer_key(outer):
    return tuple(sorted(outer.items()))


class SizingRates(object):
    """Which measured rate a bounded point is sized from.

    ``rate_for(outer, x)``: the rate of the previous point of the same inner sweep (``outer``: its outer
    coordinates, ``x``: the axis value, threads); for the first point of an inner sweep, the rate an earlier inner
    sweep measured at the same ``x``, else at the nearest lower one (a lower concurrency is no faster on the rising
    side, so the point does not overrun its time); None when nothing fits (the survey's first point).  The last
    point of the previous inner sweep, often at the highest concurrency, would size a low-concurrency start many
    times too large.  ``measured(outer, x, rate)`` records a point's rate: per target, its slowest test.
    """

    def __init__(self):
        self._previous = {}
        self._at_x = {}

    def rate_for(self, outer, x):
        previous = self._previous.get(_outer_key(outer))
        if previous is not None:
            return previous
        if x in self._at_x:
            return self._at_x[x]
        lower = [value for value in self._at_x if value < x]
        return self._at_x[max(lower)] if lower else None

    def measured(self, outer, x, rate):
        if rate is None or rate <= 0:
            return
        self._previous[_outer_key(outer)] = rate
        self._at_x[x] = rate


def default_floor(survey, targets, mem_total_mib=None, osd_read_cache=True, zfs_arc_max_mib=None,
                  zfs_dirty_data_max_mib=None, controller_cache_mib=None):
    """The default floor of ``survey`` per target from what the node reports: ``(floor, reason)``.

    The targets of a host run side by side, so a point's data on the host is the floor times ``targets``; a cache
    that holds less than that serves none of a sequential read (the oldest pages go first), so the floor is the
    cache over the targets:

    * obdfilter (``targets``: the OSTs of the host): on ZFS (``zfs_arc_max_mib`` given, the ARC's ``c_max``) the
      larger of the ARC, which serves the read test, and ``zfs_dirty_data_max_mib``, which absorbs the write
      test until a transaction group commits; on ldiskfs the page cache, which can grow to ``mem_total_mib``
      when the OSD's read or write-through cache is on (``osd_read_cache``; the OSD writes to the device itself,
      so writes are not absorbed), and nothing when both are off;
    * ost (one OST at a time from a client; ``mem_total_mib``: the OSS's): the OSS's page cache or ARC, as
      obdfilter, over one target;
    * sgpdd (``targets``: the devices of the host): sgp_dd bypasses the page cache; the controller's write-back
      cache, ``controller_cache_mib`` for the host (0 for none), or ``ASSUMED_CONTROLLER_CACHE_MIB`` when not
      reported;
    * mds: ``MDS_FLOOR_ITEMS`` items per MDT (the files a point creates stay cached at any count; see above).

    A data floor is never below ``MIN_FLOOR_MIB``.
    """
    if survey == 'mds':
        return MDS_FLOOR_ITEMS, ('%d items per MDT: metadata caches hold any item count the survey uses, the floor '
                                 'keeps a point past its threads\' start' % MDS_FLOOR_ITEMS)
    targets = max(int(targets or 1), 1)
    what = {'obdfilter': 'OST', 'ost': 'OST', 'sgpdd': 'device'}.get(survey)
    if what is None:
        raise ValueError('no time-bounded points for survey %r' % survey)
    if survey == 'ost':
        targets = 1
    if survey == 'sgpdd':
        # 0 is a statement too: a host bus adapter without a write-back cache
        cache = controller_cache_mib
        source = 'controller cache %d MiB' % cache if cache is not None else \
            'controller cache assumed %d MiB (not reported)' % ASSUMED_CONTROLLER_CACHE_MIB
        cache = ASSUMED_CONTROLLER_CACHE_MIB if cache is None else cache
    elif zfs_arc_max_mib:
        cache = max(zfs_arc_max_mib, zfs_dirty_data_max_mib or 0)
        source = 'ZFS ARC max %d MiB' % zfs_arc_max_mib if cache == zfs_arc_max_mib else \
            'ZFS dirty data max %d MiB' % zfs_dirty_data_max_mib
    elif osd_read_cache:
        if not mem_total_mib:
            raise ValueError('%s: the default floor needs the server\'s memory (MemTotal)' % survey)
        cache = mem_total_mib
        source = 'page cache up to MemTotal %d MiB' % mem_total_mib
    else:
        cache = 0
        source = 'OSD read and write-through caches off'
    floor = max(int(math.ceil(cache / float(targets))), MIN_FLOOR_MIB)
    reason = '%d MiB per %s: %s over %d %s%s' % (floor, what, source, targets, what + ('s' if targets > 1 else ''),
                                                 ' (at least %d MiB)' % MIN_FLOOR_MIB if floor == MIN_FLOOR_MIB
                                                 else '')
    return floor, reason
