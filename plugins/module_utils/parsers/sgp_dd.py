# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parser for the stderr of ``sgp_dd`` / ``sg_dd`` (sg3_utils) run with ``time=1``.

Both timing lines are understood (docs/iokit-notes.md, 2.5):

* sg3_utils <= 1.47: ``time to transfer data was 18.786448 secs, 57.16 MB/sec``
* sg3_utils >= 1.48: ``time to copy data: 18.786448 secs at 57.16 MB/sec``,
  below 1 MB/sec ``at 812.4 kB/sec``; progress reports say
  ``time to copy data so far: ...`` and may add ``(delta ... MB/sec)``.

sg3_utils' MB is 10^6 bytes, so the rate is stored as ``mb_s``.  The last
``<full>+<partial> records in/out`` lines give the record counts (interim
reports print them indented too), every line mentioning an error is kept in
``errors``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import (
    NUMBER,
    clean_lines,
    ensure_text,
    finite_float,
    to_int,
)

_OLD_TIMING_RE = re.compile(
    r'time to transfer data was\s+(?P<secs>' + NUMBER + r')\s*secs'
    r'(?:\s*,\s*(?P<rate>' + NUMBER + r')\s*(?P<unit>[kKM])B/sec)?')
_NEW_TIMING_RE = re.compile(
    r'time to copy data(?P<so_far>\s+so far)?\s*:\s*(?P<secs>' + NUMBER + r')\s*secs'
    r'(?:\s+at\s+(?P<rate>' + NUMBER + r')\s*(?P<unit>[kKM])B/sec)?')
_RECORDS_RE = re.compile(r'^(?P<full>\d+)\+(?P<partial>\d+)\s+records\s+(?P<direction>in|out)\b')
_DIO_RE = re.compile(r'Direct IO requested but incomplete\s+(?P<count>\d+)\s+times')
_REMAINING_RE = re.compile(r'remaining block(?:s| count)\s*=\s*(?P<count>-?\d+)')
_ERROR_RE = re.compile(r'error', re.IGNORECASE)
# Lines that only sg3_utils' dd variants print: used to tell their output
# from another tool's text that merely mentions an error.
_TOOL_RE = re.compile(r'\bsg[pm]?_dd\b|\bsg (?:in|out) command\b|\bsg device\b|Some error occurred')


def _empty():
    return {
        'time_s': None,
        'mb_s': None,
        'records_in': None,
        'records_out': None,
        'errors': [],
        'dio_incomplete': None,
        'remaining_blocks': None,
    }


def _mb_per_s(match):
    rate = finite_float(match.group('rate'))
    if rate is not None and match.group('unit') in ('k', 'K'):
        rate = rate / 1000.0
    return rate


def parse_sgp_dd(data):
    """Parse sgp_dd/sg_dd stderr into one object.

    Text that is not the output of sg3_utils' dd variants gives the object
    with every field ``null`` (and no errors).  Raises ParserError only for
    input that is not text.
    """
    text = ensure_text(data, 'parse_sgp_dd')
    result = _empty()
    recognised = False
    final_timing = progress_timing = None
    errors = []
    for line in clean_lines(text):
        if not line:
            continue
        timing = _OLD_TIMING_RE.search(line) or _NEW_TIMING_RE.search(line)
        if timing:
            recognised = True
            if 'so_far' in timing.groupdict() and timing.group('so_far'):
                progress_timing = timing
            else:
                final_timing = timing
            continue
        records = _RECORDS_RE.match(line)
        if records:
            recognised = True
            result['records_' + records.group('direction')] = {
                'full': to_int(records.group('full')), 'partial': to_int(records.group('partial'))}
            continue
        dio = _DIO_RE.search(line)
        if dio:
            recognised = True
            result['dio_incomplete'] = to_int(dio.group('count'))
        remaining = _REMAINING_RE.search(line)
        if remaining:
            result['remaining_blocks'] = to_int(remaining.group('count'))
        if _TOOL_RE.search(line):
            recognised = True
        if _ERROR_RE.search(line):
            errors.append(line)
    if not recognised:
        return _empty()
    # the final report wins; a run killed early only left progress reports
    timing = final_timing or progress_timing
    if timing:
        result['time_s'] = finite_float(timing.group('secs'))
        result['mb_s'] = _mb_per_s(timing)
    result['errors'] = errors
    return result
