# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one definition of a weak component ("slow"), and the findings built from it.

Peers are every component of the same kind (every OST of the run, every LUN,
every MDT, every LNet server NID, every client, or every host for host
aggregates) measured by the same survey and metric at the same sweep point,
across the whole fleet.  A value is judged against the median of its peers
(itself included) when there are at least ``min_peers`` of them:

- it is never an outlier when it is within ``min_deviation_pct`` percent of
  the median (noise);
- otherwise it is **low** when it is below ``slow_share`` of the median, or
  -- among at least Z_MIN_PEERS peers -- when its robust z-score
  ``(value - median) / (1.4826 x MAD)`` is below ``-threshold``; **high** is
  the mirror image (above ``median / slow_share``, or z above ``threshold``).

The share test catches one bad component among very few peers (an OST at 29 %
of two healthy ones); the z-score catches a component that is modestly but
clearly off in a large, uniform fleet.  It is not used with fewer peers: the
MAD of three or five values is one healthy value's spread, so an OST 8 % below
two nearly equal ones would get a huge z-score from timing noise.  Every
report section, the verdict's outlier checks and the survey summaries call
this module; nothing else computes a median to call something slow.

Controller-side code, no Ansible imports.
"""

from __future__ import annotations

import math
import statistics
import typing as t

from ansible_collections.lustre.iokit.plugins.module_utils import survey_catalog

# Consistency constant of the MAD for normally distributed data: 1.4826 * MAD estimates the
# standard deviation, so a robust z of 3.5 means what a z of 3.5 means (Iglewicz and Hoaglin).
MAD_TO_SIGMA = 1.4826

DEFAULT_THRESHOLD = 3.5
DEFAULT_MIN_PEERS = 3
DEFAULT_MIN_DEVIATION_PCT = 5.0
DEFAULT_SLOW_SHARE = 0.8
# Fewest peers for the robust z-score to be used (below it, only the share judges).
Z_MIN_PEERS = 10

# What one component of each survey is, when a sample names a target; a sample without one is the host's aggregate.
COMPONENT_KINDS = {name: survey.component for name, survey in survey_catalog.CATALOG.items() if survey.component}
HOST = 'host'

# Where to look next when a component of a kind is weak.
NEXT_STEPS = {
    'OST': "the OST's brw_stats (disk I/O size, I/Os in flight, I/O time) and the disk errors in the statistics "
           "section when stats_collect ran; then its LUNs in sgpdd",
    'LUN': "the device's kernel log (SCSI/medium errors, resets), its multipath and RAID state, and its queue "
           "settings (max_sectors_kb, scheduler)",
    'MDT': "the MDT's md_stats and its backing device (sgpdd), and the MDS's CPU and memory in the statistics",
    'NID': "lst show_error counts for the node (lnet summary), the NIC's link speed and error counters, and "
           "its LNet credits (lnetctl net show -v)",
    'client': "the client's mount options, its CPU and memory in the statistics, and its LNet route",
    HOST: "the host's own components (OSTs, LUNs, MDTs) and its CPU, memory and network in the statistics",
}


def component_kind(survey: str, target: t.Optional[str]) -> str:
    """The kind of component a sample is about: ``OST``, ``LUN``, ``MDT``, ``NID``, ``client``, or ``host``."""
    if target is None:
        return HOST
    return COMPONENT_KINDS.get(survey, 'target')


class Rule(t.NamedTuple):
    """The knobs of the rule (report options ``outlier_*``)."""

    threshold: float = DEFAULT_THRESHOLD
    min_peers: int = DEFAULT_MIN_PEERS
    min_deviation_pct: float = DEFAULT_MIN_DEVIATION_PCT
    slow_share: float = DEFAULT_SLOW_SHARE

    @classmethod
    def make(cls, threshold: float = DEFAULT_THRESHOLD, min_peers: int = DEFAULT_MIN_PEERS,
             min_deviation_pct: float = DEFAULT_MIN_DEVIATION_PCT, slow_share: float = DEFAULT_SLOW_SHARE) -> 'Rule':
        # NaN compares false both ways: it is named, so that `<= 0` can say what is meant.
        if math.isnan(threshold) or threshold <= 0:
            raise ValueError('outlier threshold must be positive, got %r' % (threshold,))
        if not 0 < slow_share < 1:
            raise ValueError('outlier slow share must be in (0, 1), got %r' % (slow_share,))
        if min_deviation_pct < 0:
            raise ValueError('outlier min deviation must not be negative, got %r' % (min_deviation_pct,))
        return cls(float(threshold), max(int(min_peers), 2), float(min_deviation_pct), float(slow_share))


class Peers(t.NamedTuple):
    """The statistics of one group of peers."""

    count: int
    median: float
    mad: float


def peer_stats(values: t.Sequence[float]) -> Peers:
    median = statistics.median(values)
    return Peers(len(values), median, statistics.median([abs(value - median) for value in values]))


def judge(value: float, peers: Peers, rule: Rule) -> t.Optional[dict]:
    """``None`` when ``value`` is normal among ``peers``; else ``{direction, share, deviation_pct, robust_z}``."""
    if peers.count < rule.min_peers:
        return None
    median = peers.median
    deviation = value - median
    if median > 0:
        deviation_pct = 100.0 * deviation / median
    else:
        deviation_pct = math.inf if deviation > 0 else (-math.inf if deviation < 0 else 0.0)
    if abs(deviation_pct) < rule.min_deviation_pct or deviation == 0:
        return None
    sigma = MAD_TO_SIGMA * peers.mad
    robust_z = deviation / sigma if sigma else math.copysign(math.inf, deviation)
    share = value / median if median > 0 else None
    far = peers.count >= Z_MIN_PEERS and abs(robust_z) > rule.threshold
    if deviation < 0:
        weak = (share is not None and share < rule.slow_share) or far
    else:
        weak = share is None or share > 1.0 / rule.slow_share or far
    if not weak:
        return None
    return {'direction': 'low' if deviation < 0 else 'high', 'share': share,
            'deviation_pct': _finite(deviation_pct), 'robust_z': _finite(robust_z)}


def _finite(value: float) -> t.Optional[float]:
    # JSON has no infinity; a MAD of 0 makes the z-score unbounded, shown as null.
    return value if math.isfinite(value) else None


def findings(outliers: t.Iterable[dict], judged: t.Mapping[tuple, int]) -> list[dict]:
    """One finding per component and metric that was low at one point or more, weakest first.

    ``outliers`` are the per-point rows of ``analysis.outliers``; ``judged``
    counts, per ``(survey, metric, host, target)``, the sweep points at which
    the component had enough peers to be judged.
    """
    worst: dict = {}
    low_points: dict = {}
    for row in outliers:
        if row['direction'] != 'low':
            continue
        key = (row['survey'], row['metric'], row['host'], row['target'])
        low_points[key] = low_points.get(key, 0) + 1
        if key not in worst or _share_key(row) < _share_key(worst[key]):
            worst[key] = row
    result = []
    for key, row in worst.items():
        kind = row['kind']
        result.append({'survey': row['survey'], 'metric': row['metric'], 'unit': row['unit'], 'kind': kind,
                       'host': row['host'], 'target': row['target'], 'subject': row['subject'],
                       'value': row['value'], 'median': row['median'], 'share': row['share'],
                       'share_pct': None if row['share'] is None else 100.0 * row['share'],
                       'peers': row['peers'], 'point': row['point'], 'point_label': row['point_label'],
                       'low_points': low_points[key], 'points': judged.get(key, low_points[key]),
                       'next': NEXT_STEPS.get(kind, NEXT_STEPS[HOST])})
    result.sort(key=lambda item: (_share_key(item), item['survey'], item['metric'], item['subject']))
    return result


def _share_key(row: dict) -> float:
    return -1.0 if row['share'] is None else row['share']


def finding_text(finding: dict) -> str:
    """One sentence: survey, metric, component, value against the peer median, share, where, how often."""
    share = '-' if finding['share_pct'] is None else '%.0f %%' % finding['share_pct']
    return ('%s %s on %s %s: %.2f %s against a peer median of %.2f %s (%s of it, %d peers) at %s; '
            'low at %d of %d sweep points' % (
                finding['survey'], finding['metric'], finding['kind'], finding['subject'], finding['value'],
                finding['unit'], finding['median'], finding['unit'], share, finding['peers'], finding['point_label'],
                finding['low_points'], finding['points']))
