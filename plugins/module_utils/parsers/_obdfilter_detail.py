# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""obdfilter-survey's per-OST output: one OST's ``lctl --threads test_brw`` text and the ``.detail`` file.

``parse_thread_samples`` judges one OST's samples as the script's awk does (the native engine uses it for
every test it runs); ``parse_obdfilter_detail`` reads the script's ``.detail`` file, which holds that text
for every OST, test and point, so that ``engine: iokit`` gets the per-OST figures the summary leaves out.

Internal (the leading underscore): the engine's own reading, with no filter of its own; its result is keyed by
tuples, not JSON.  Pure functions, standard library only, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.lustre.iokit.plugins.module_utils.units import KIB

STATUS_OK = 'ok'
STATUS_SHORT = 'short'
STATUS_ERROR = 'error'
# a test stopped by the deadline (the engine's; the detail file never shows one)
STATUS_INCOMPLETE = 'incomplete'

_SAMPLE_RE = re.compile(r'^\s*\d+/\d+\s+Total:\s+(?P<rate>[0-9.]+)/second\s*$')
_TOTAL_RE = re.compile(r'^\s*Total:\s+total\s+\d+\s+threads\s+\d+\s+sec\s+[0-9.]+\s+(?P<rate>[0-9.]+)/second')
_SELECTED_RE = re.compile(r'^Selected device \d+$')


def parse_thread_samples(text):
    """One OST's ``lctl --threads`` output, judged as the script's awk judges it.

    Returns ``{'rates', 'count', 'error_line', 'total_rate'}``: ``rates`` are
    the per-second ``n/T Total: R/second`` samples (operations per second),
    ``count`` is their number or -1 when a line contains ``error`` or an
    unexpected line follows the first sample; ``total_rate`` is lctl's own
    final ``Total: total ...`` rate (None if absent).
    """
    rates = []
    count = 0
    error_line = None
    total_rate = None
    for raw in (text or '').splitlines():
        line = raw.strip()
        if not line:
            continue
        if _SELECTED_RE.match(line):
            rates, count = [], 0
            continue
        if 'error' in line:
            error_line = error_line or line
            count = -1
            continue
        total = _TOTAL_RE.match(line)
        if total:
            total_rate = float(total.group('rate'))
            continue
        sample = _SAMPLE_RE.match(line)
        if sample:
            rates.append(float(sample.group('rate')))
            if count >= 0:
                count += 1
            continue
        if count != 0 and error_line is None:
            error_line = line
            count = -1
    return {'rates': rates, 'count': count, 'error_line': error_line, 'total_rate': total_rate}


_DETAIL_POINT_RE = re.compile(r'^=+> ost\s+(\d+)\s+sz\s+(\d+)K\s+rsz\s+(\d+)K\s+obj\s+(\d+)\s+thr\s+(\d+)')
_DETAIL_TEST_RE = re.compile(r'^=+> (?P<test>\w+) (?:[^:\s]+:)?(?P<client>\S+)\s*$')


def _per_ost_figures(text, rsz_kib):
    judged = parse_thread_samples(text)
    rsz_mib = rsz_kib / KIB
    figures = {'mib_s': None, 'min_mib_s': None, 'max_mib_s': None, 'samples': len(judged['rates']),
               'lctl_mib_s': judged['total_rate'] * rsz_mib if judged['total_rate'] is not None else None,
               'error': judged['error_line']}
    if judged['count'] < 0:
        figures['status'] = STATUS_ERROR
    elif judged['count'] == 0:
        figures['status'] = STATUS_SHORT
    else:
        figures.update(status=STATUS_OK, min_mib_s=min(judged['rates']) * rsz_mib,
                       max_mib_s=max(judged['rates']) * rsz_mib)
    return figures


def parse_obdfilter_detail(text):
    """Every OST's figures from obdfilter-survey's ``.detail`` file, judged as the native engine judges them.

    Returns ``{(ost, size_kib, rsz_kib, obj, thr): {<ost name>: {<test>: figures}}}``; ``mib_s`` is null
    (the script times only all OSTs together).
    """
    points = {}
    key = None
    section = None
    lines = []

    def close():
        if key is not None and section is not None:
            test, ost = section
            points[key].setdefault(ost, {})[test] = _per_ost_figures('\n'.join(lines), key[2])

    for line in (text or '').splitlines():
        point = _DETAIL_POINT_RE.match(line)
        header = None if point else _DETAIL_TEST_RE.match(line)
        if point or (header is not None) or line.startswith('====='):
            close()
            section, lines = None, []
        if point:
            key = tuple(int(value) for value in point.groups())
            points.setdefault(key, {})
        elif header is not None and header.group('client').endswith('_ecc') and key is not None:
            section = (header.group('test'), header.group('client')[:-len('_ecc')])
        elif section is not None:
            lines.append(line)
    close()
    return points
