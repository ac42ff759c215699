# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parser for the Lustre ``brw_stats`` file of an OST/MDT back end.

The text is what ``lctl get_param osd-*.*.brw_stats`` (or the older
``obdfilter.*.brw_stats``, or ``cat /proc/fs/lustre/.../brw_stats``) prints:

    osd-ldiskfs.testfs-OST0000.brw_stats=
    snapshot_time:            1688603042.553884916 secs.nsecs
    start_time:               1688526475.260499452 secs.nsecs
    elapsed_time:             76567.293385464 secs.nsecs

                               read      |     write
    pages per bulk r/w     rpcs  % cum % |  rpcs        % cum %
    32:             0   0   0   |    1   0   0
    1K:             0   0   0   | 25000  99 100

Versions differ in the time header (``1234.5678 (secs.usecs)`` up to Lustre
2.9, ``(secs.nsecs)`` until 2.14, ``secs.nsecs`` plus ``start_time`` and
``elapsed_time`` since 2.15), in which histograms exist (osd-zfs prints fewer;
``block maps msec`` appeared in 2.16) and in the I/O time title
(``I/O time (1/1000s)``; 1.8 printed ``1/HZ``).  A histogram with no samples
prints only its header.

One object is returned for the first target.  When the text holds several
targets (``lctl get_param osd-*.*.brw_stats`` on a server with many OSTs),
the object also carries ``targets``: the per-target objects in order.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import (
    clean_lines,
    ensure_text,
)

# `lctl get_param` names the parameter on its own line; any other parameter
# line (`obdfilter.X.stats=`, `osd-ldiskfs.X.kbytesfree=123`) ends the section.
# (one dot then any non-blank run: the same names as dot-separated parts, without
# the nested repeat that backtracks exponentially on a long dotted word with no '=')
_PARAM_RE = re.compile(r'^(?P<name>[A-Za-z0-9_-]+\.[^\s=]+)=(?P<value>.*)$')
_BRW_PARAM_RE = re.compile(r'^[A-Za-z0-9_-]+\.(?P<target>[^\s=]+)\.brw_stats$')
# `tail`/`head` banners and `grep -H` style file names carry the target in the path.
_PATH_RE = re.compile(r'(?:^|[\s/])(?P<target>[^\s/]+)/brw_stats\b')
_TIME_RE = re.compile(
    r'^(?P<field>snapshot_time|start_time|elapsed_time):?\s+'
    r'(?P<secs>\d+)(?:\.(?P<frac>\d+))?\s*(?P<units>\(?secs\.[nu]secs\)?)?\s*$')
_RW_HEADER_RE = re.compile(r'^read\s*\|\s*write$')
_TITLE_RE = re.compile(
    r'^(?P<title>\S.*?)\s+(?P<unit>[A-Za-z]+)\s+%\s*cum\s*%\s*\|\s*(?P<unit2>[A-Za-z]+)\s+%\s*cum\s*%$')
_ROW_RE = re.compile(
    r'^(?P<bucket>\d+[KMG]?):\s*'
    r'(?P<rc>\d+)\s+(?P<rp>\d+)\s+(?P<rcum>\d+)\s*\|\s*'
    r'(?P<wc>\d+)\s+(?P<wp>\d+)\s+(?P<wcum>\d+)$')
# A row broken after the read half (terminal or mail wrapping).
_ROW_LEFT_RE = re.compile(r'^\d+[KMG]?:\s*\d+\s+\d+\s+\d+\s*\|?$')
_ROW_RIGHT_RE = re.compile(r'^\|?\s*\d+\s+\d+\s+\d+$')


def _new_target(name):
    return {
        'target': name,
        'snapshot_time': None,
        'start_time': None,
        'elapsed_time': None,
        'histograms': {},
        'units': {},
    }


def _has_content(target):
    return (target['snapshot_time'] is not None or target['start_time'] is not None
            or target['elapsed_time'] is not None or bool(target['histograms']))


def _seconds(match):
    """The time value in seconds.

    Before Lustre 2.10 the kernel printed ``%lu.%lu (secs.usecs)``: the
    microseconds were not zero-padded, so ``12.5`` there means 12.000005 s.
    """
    secs = match.group('secs')
    frac = match.group('frac')
    units = match.group('units') or ''
    if frac is None:
        return int(secs)
    if 'usecs' in units and len(frac) < 6:
        frac = frac.rjust(6, '0')
    return float(secs + '.' + frac)


def _join_wrapped_rows(lines):
    out = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if (_ROW_LEFT_RE.match(line) and index + 1 < len(lines)
                and _ROW_RIGHT_RE.match(lines[index + 1])):
            left = line.rstrip('|').rstrip()
            out.append(left + ' | ' + lines[index + 1].lstrip('|').strip())
            index += 2
            continue
        out.append(line)
        index += 1
    return out


def _row(match):
    def side(count, pct, cum):
        return {'count': int(match.group(count)), 'pct': int(match.group(pct)), 'cum_pct': int(match.group(cum))}

    return {
        'bucket': match.group('bucket'),
        'read': side('rc', 'rp', 'rcum'),
        'write': side('wc', 'wp', 'wcum'),
    }


def _strip_prompt(line):
    """Drop a shell prompt in front of a command (`[root@oss1 ~]# lctl ...`)."""
    return re.sub(r'^\[[^\]]*\][#$]\s*', '', line)


def parse_brw_stats(text):
    """Parse brw_stats text into one object (fields: RETURN of plugins/filter/parse_brw_stats.py)."""
    text = ensure_text(text, 'parse_brw_stats')
    lines = []
    for line in clean_lines(text):
        line = _strip_prompt(line)
        param = _PARAM_RE.match(line)
        if param and param.group('value').strip() and _BRW_PARAM_RE.match(param.group('name')):
            # A single-line capture (`...brw_stats=snapshot_time: ...`) keeps its first line.
            lines.append(param.group('name') + '=')
            line = param.group('value').strip()
        lines.append(line)
    lines = _join_wrapped_rows(lines)

    targets = []
    current = _new_target(None)
    # Outside a brw_stats section (another parameter of a multi-parameter
    # get_param), lines are ignored until the next brw_stats section starts.
    inside = True
    histogram = None

    def start(name):
        if _has_content(current) or current['target'] is not None:
            targets.append(current)
        return _new_target(name)

    for line in lines:
        if not line:
            continue
        param = _PARAM_RE.match(line)
        if param and not _TIME_RE.match(line):
            brw = _BRW_PARAM_RE.match(param.group('name'))
            if brw:
                current = start(brw.group('target'))
                inside = True
            else:
                inside = False
            histogram = None
            continue
        if '/brw_stats' in line and not _ROW_RE.match(line):
            path = _PATH_RE.search(line)
            if path:
                current = start(path.group('target'))
                inside = True
                histogram = None
                continue
        if not inside:
            continue
        timing = _TIME_RE.match(line)
        if timing:
            field = timing.group('field')
            if field == 'snapshot_time' and (current['snapshot_time'] is not None or current['histograms']):
                # `lctl get_param -n` prints no names: a new snapshot starts the next target.
                current = start(None)
                histogram = None
            current[field] = _seconds(timing)
            continue
        if _RW_HEADER_RE.match(line):
            continue
        title = _TITLE_RE.match(line)
        if title:
            name = ' '.join(title.group('title').split())
            histogram = current['histograms'].setdefault(name, [])
            current['units'][name] = title.group('unit')
            continue
        row = _ROW_RE.match(line)
        if row and histogram is not None:
            histogram.append(_row(row))
            continue
        # Anything else (prompts, `lctl` errors, other files) is noise.

    if _has_content(current) or current['target'] is not None:
        targets.append(current)
    targets = [target for target in targets if _has_content(target) or target['target'] is not None]

    if not targets:
        return _new_target(None)
    result = dict(targets[0])
    if len(targets) > 1:
        result['targets'] = [dict(target) for target in targets]
    return result
