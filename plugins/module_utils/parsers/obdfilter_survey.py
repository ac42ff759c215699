# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parser for the summary that obdfilter-survey prints (stdout or ``.summary``).

One record per result line::

    ost  8 sz 67108864K rsz 1024K obj    8 thr    8 write  613.54 [  64.00,   82.00] read ...

Accepted variations (docs/iokit-notes.md, 4.4 and 9):

* the pre-2.9 bracket ``[%7.2f,%7.2f]`` and the current ``[%7.2f, %7.2f]``,
  including overflowing widths (``[1380.00,`` is one token);
* ``rsz 1024`` without the ``K`` of the oldest scripts;
* ``ERROR`` / ``SHORT`` after the aggregate, ``Too much buffer space`` (<= 2.7)
  and ``created object #s ... not contiguous`` in place of the tests;
* the header ``<date> Obdfilter-survey for case=<case> from <host>``;
* records wrapped over several lines and ``pdsh``-style ``host: `` prefixes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._survey_records import (
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

_PREFIX_RE = re.compile(
    r'\bost\s+(?P<ost>\d+)\s+sz\s+(?P<size>\d+)K?\s+rsz\s+(?P<rsz>\d+)K?'
    r'\s+obj\s+(?P<obj>\d+)\s+thr\s+(?P<thr>\d+)(?=\s|$)')
_HEADER_RE = re.compile(r'\bObdfilter-survey\s+for\s+case=(?P<case>\S+)\s+from\s+(?P<host>\S+)', re.IGNORECASE)
# A wrapped record continues on a line that starts with a test name and its
# rate, with a bracket, or with the ERROR/SHORT token of the previous test.
_CONTINUATION_RE = re.compile(
    r'^(?:(?!(?:ost|sz|rsz|obj|thr)\s)[A-Za-z_]\w*\s+' + RATE + r'(?=\s|\[|$)'
    r'|\[\s*' + NUMBER +
    r'|(?:ERROR|SHORT)(?=\s|$)'
    r'|=(?![=>]))', re.IGNORECASE)
_TEST_RE = re.compile(
    r'(?<![^\s\]])(?P<name>[A-Za-z_]\w*)'
    r'(?:\s+(?P<rate>' + RATE + r'))?'
    r'(?:\s*\[\s*(?P<min>' + NUMBER + r')\s*,\s*(?P<max>' + NUMBER + r')\s*\]'
    r'|\s+(?P<flag>ERROR|SHORT)(?=\s|$))?', re.IGNORECASE)
_BUFFER_RE = re.compile(r'^\s*Too\s+much\s+buffer\s+space', re.IGNORECASE)
_CREATED_OBJECTS_RE = re.compile(r'created\s+object\s+#s', re.IGNORECASE)
_NOT_CONTIGUOUS_RE = re.compile(r'not\s+contiguous', re.IGNORECASE)


def _parse_tests(rest):
    """Parse the part of a record after its parameter prefix."""
    tests = {}
    # where the record's text ends: asking per word whether anything follows
    # it must not copy the rest of a long line every time
    text_end = len(rest.rstrip())
    for match in _TEST_RE.finditer(rest):
        name = match.group('name')
        if name.upper() in ('ERROR', 'SHORT'):
            continue
        rate = finite_number(match.group('rate'))
        flag = (match.group('flag') or '').upper()
        if match.group('rate') is None and not flag and match.end() < text_end:
            # a bare word inside the line is not a test; only the last one,
            # printed just before the run stopped, is
            continue
        if match.group('min') is not None:
            status = 'ok'
            low, high = finite_float(match.group('min')), finite_float(match.group('max'))
        else:
            low = high = None
            # a test cut short (aborted run, truncated file) has no bracket
            status = {'ERROR': 'error', 'SHORT': 'short'}.get(flag, 'incomplete')
        tests[name] = {'mib_s': rate, 'min_mib_s': low, 'max_mib_s': high, 'status': status}
    return tests


def _not_contiguous(rest):
    """The "created object #s ... not contiguous" message in ``rest``, or None.

    Found in two steps, from the first "created object #s" to the first "not
    contiguous" after it: one pattern spanning both would scan to the end of
    the line again from every "created object #s" when the second is missing.
    """
    created = _CREATED_OBJECTS_RE.search(rest)
    if not created:
        return None
    end = _NOT_CONTIGUOUS_RE.search(rest, created.end())
    return rest[created.start():end.end()] if end else None


def _record(text, context):
    match = _PREFIX_RE.search(text)
    rest = text[match.end():]
    record = {
        'ost': to_int(match.group('ost')),
        'size_kib': to_int(match.group('size')),
        'rsz_kib': to_int(match.group('rsz')),
        'obj': to_int(match.group('obj')),
        'thr': to_int(match.group('thr')),
        'case': context.get('case'),
        'host': context.get('host'),
        'skipped': False,
        'error': None,
        'tests': {},
    }
    not_contiguous = _not_contiguous(rest)
    if _BUFFER_RE.match(rest):
        record['skipped'] = True
    elif not_contiguous:
        record['error'] = not_contiguous
    else:
        record['tests'] = _parse_tests(rest)
    return record


def _header(text):
    header = _HEADER_RE.search(text)
    return {'case': header.group('case'), 'host': header.group('host')} if header else None


def parse_obdfilter_survey(data):
    """Parse obdfilter-survey summary text into a list of records.

    Text without any result line gives ``[]``.  Raises ParserError only for
    input that is not text.
    """
    text = ensure_text(data, 'parse_obdfilter_survey')
    lines = join_backslash_continuations(clean_lines(text))
    return assemble_survey_records(
        lines, _PREFIX_RE, _header, _CONTINUATION_RE, _record,
        pdsh_context=lambda host: {'case': None, 'host': host})
