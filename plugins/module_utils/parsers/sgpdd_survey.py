# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parser for the summary that sgpdd-survey prints (stdout or ``.summary``).

Current format (Lustre 2.5 and later), one record per result line::

    dev  1 sz  8388608K rsz 1024K crg     1 thr     1 write  190.12  [  190.12,  190.12]  read ...

Legacy formats (docs/iokit-notes.md, 2.4 and 9):

* 2.4: ``dev ... write  180.45 MB/s     1 x  180.50 =  180.50 MB/s read ...``
* up to 2.3: ``total_size  8388608K rsz 1024 crg     1 thr     1 write ...``
  with the same ``MB/s ... x ... =`` figures, and the oldest form
  ``total_size ... thr 1 crg 1  180.45 MB/s   1 x  180.50 =  180.50 MB/s``
  which names no action; its figure goes under the test name ``total``.

``ENOMEM`` right after the parameters, ``<N> failed`` (``failed <N>`` in the
oldest script) and the header ``<date> sgpdd-survey on <devices> from <host>``
are understood; records may be wrapped and carry ``pdsh`` prefixes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._survey_records import (
    PDSH_RE,
    RATE,
    assemble_survey_records,
)
from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import (
    NUMBER,
    clean_lines,
    ensure_text,
    finite_float,
    finite_number,
    join_backslash_continuations,
    to_int,
)

_DEV_PREFIX = (r'\bdev\s+(?P<dev>\d+)\s+sz\s+(?P<size>\d+)K?\s+rsz\s+(?P<rsz>\d+)K?'
               r'\s+crg\s+(?P<crg>\d+)\s+thr\s+(?P<thr>\d+)')
_TOTAL_PREFIX = (r'\btotal_size\s+(?P<tsize>\d+)K?\s+rsz\s+(?P<trsz>\d+)K?'
                 r'\s+(?:crg\s+(?P<crg_first>\d+)\s+thr\s+(?P<thr_second>\d+)'
                 r'|thr\s+(?P<thr_first>\d+)\s+crg\s+(?P<crg_second>\d+))')
_PREFIX_RE = re.compile(r'(?:' + _DEV_PREFIX + r'|' + _TOTAL_PREFIX + r')(?=\s|$)')
_HEADER_START_RE = re.compile(r'\bsgpdd-survey\s+on\s+')
_HEADER_END_RE = re.compile(r'\bfrom\s+(?P<host>\S+)\s*$')
_NAME = r'(?<![^\s\]])(?!(?:dev|sz|rsz|crg|thr|total_size)\s|failed\b|ENOMEM\b|MB\b)[A-Za-z_]\w*'
_CONTINUATION_RE = re.compile(
    r'^(?:' + _NAME + r'\s+(?:' + RATE + r'(?=\s|\[|$)|\d+\s+failed\b)'
    r'|failed\s+\d+'
    r'|\d+\s+failed\b'
    r'|\[\s*' + NUMBER +
    r'|=(?![=>])'
    r'|(?:\d+\s+)?x\s+' + NUMBER +
    r'|(?:' + NUMBER + r'\s*)?MB/s'
    r'|ENOMEM\b)')
_TEST_RE = re.compile(
    r'(?P<fname>' + _NAME + r')\s+(?P<failed>\d+)\s+failed\b'
    r'|(?:(?P<oname>' + _NAME + r')\s+)?\bfailed\s+(?P<old_failed>\d+)'
    r'|(?:(?P<lname>' + _NAME + r')\s+)?(?P<lrate>' + RATE + r')\s*MB/s\s+(?P<instances>\d+)\s*x\s*'
    r'(?P<slowest>' + NUMBER + r')\s*=\s*' + NUMBER + r'\s*MB/s'
    r'|(?P<name>' + _NAME + r')(?:\s+(?P<rate>' + RATE + r'))?'
    r'(?:\s*\[\s*(?P<min>' + NUMBER + r')\s*,\s*(?P<max>' + NUMBER + r')\s*\])?',
    re.IGNORECASE)
_ENOMEM_RE = re.compile(r'^\s*ENOMEM\b')
# The script echoes this to stdout (only) while the result line is still
# open, so it lands in the middle of a record: "write Error found in <file>".
# (starting only where a blank run starts: \s* tried from inside a long run would rescan it)
_ERROR_FOUND_RE = re.compile(r'(?<!\s)\s*Error found in \S+')

# The oldest script printed one figure without naming the action.
UNNAMED_TEST = 'total'


def _test(rate=None, low=None, high=None, failed=0, status='ok'):
    return {'mib_s': rate, 'min_mib_s': low, 'max_mib_s': high, 'failed': failed, 'status': status}


def _parse_tests(rest):
    """Return (tests, instance count of the first legacy figure) for one record."""
    tests = {}
    first_instances = None
    # where the record's text ends: asking per word whether anything follows
    # it must not copy the rest of a long line every time
    text_end = len(rest.rstrip())
    for match in _TEST_RE.finditer(rest):
        if match.group('fname'):
            tests[match.group('fname')] = _test(failed=to_int(match.group('failed')), status='failed')
        elif match.group('old_failed'):
            tests[match.group('oname') or UNNAMED_TEST] = _test(failed=to_int(match.group('old_failed')), status='failed')
        elif match.group('lrate'):
            instances = to_int(match.group('instances'))
            if first_instances is None:
                first_instances = instances
            entry = _test(rate=finite_number(match.group('lrate')))
            # the legacy check figure: instance count x slowest instance (MiB/s)
            entry['instances'] = instances
            entry['slowest_instance_mib_s'] = finite_float(match.group('slowest'))
            tests[match.group('lname') or UNNAMED_TEST] = entry
        elif match.group('min') is not None:
            tests[match.group('name')] = _test(rate=finite_number(match.group('rate')), low=finite_float(match.group('min')),
                                               high=finite_float(match.group('max')))
        elif match.group('rate') is None and match.end() < text_end:
            # a bare word inside the line is not an action; only the last
            # one, printed just before the run stopped, is
            continue
        else:
            # an action cut short (aborted run, truncated file) has no figures after it
            tests[match.group('name')] = _test(rate=finite_number(match.group('rate')), failed=None, status='incomplete')
    return tests, first_instances


def _record(text, context):
    match = _PREFIX_RE.search(text)
    rest = text[match.end():]
    legacy = match.group('dev') is None
    record = {
        'dev': to_int(match.group('dev')),
        'size_kib': to_int(match.group('size') or match.group('tsize')),
        'rsz_kib': to_int(match.group('rsz') or match.group('trsz')),
        'crg': to_int(match.group('crg') or match.group('crg_first') or match.group('crg_second')),
        'thr': to_int(match.group('thr') or match.group('thr_second') or match.group('thr_first')),
        'host': context.get('host'),
        'devices': context.get('devices'),
        'enomem': False,
        'tests': {},
    }
    if _ENOMEM_RE.match(rest):
        record['enomem'] = True
        return record
    record['tests'], first_instances = _parse_tests(rest)
    if legacy:
        # "total_size" lines do not print the device count; the contract
        # takes the instance count of the "N x slowest" check instead.
        record['dev'] = first_instances
    return record


def _header(text):
    """The context of a ``<date> sgpdd-survey on <devices> from <host>`` line, or None.

    The end is found first and the start once before it: one pattern with
    the devices in between would scan to the end of the line again from
    every "sgpdd-survey on" of a line that has no "from <host>".
    """
    end = _HEADER_END_RE.search(text)
    if not end:
        return None
    start = _HEADER_START_RE.search(text, 0, end.start())
    if not start:
        return None
    return {'host': end.group('host'), 'devices': text[start.end():end.start()].split() or None}


def _without_error_found(line):
    """Drop the "Error found in <file>" messages the script prints in the middle of a result line."""
    if 'Error found in' not in line or not _ERROR_FOUND_RE.search(line):
        return line
    line = _ERROR_FOUND_RE.sub('', line).strip()
    if not line or PDSH_RE.match(line + ' x') and line.endswith(':'):
        return None
    return line


def parse_sgpdd_survey(data):
    """Parse sgpdd-survey summary text into a list of records.

    Text without any result line gives ``[]``.  Raises ParserError only for
    input that is not text.
    """
    text = ensure_text(data, 'parse_sgpdd_survey')
    lines = join_backslash_continuations(clean_lines(text))
    return assemble_survey_records(
        lines, _PREFIX_RE, _header, _CONTINUATION_RE, _record,
        pdsh_context=lambda host: {'host': host, 'devices': None},
        clean_line=_without_error_found)
