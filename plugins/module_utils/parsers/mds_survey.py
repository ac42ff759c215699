# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parser for the summary that mds-survey prints (stdout or ``.summary``).

One record per result line, rates in operations per second::

    mdt 1 file  100000 dir    4 thr    4 create 5652.05 [  999.01, 46940.48] md_getattr             ERROR ...

Lustre 2.2-2.4 printed the rate, then ``[%7.2f,%7.2f]`` or a right-aligned
``ERROR``/``SHORT``; since LU-3624 (2.5) the bracket is ``[ %7.2f, %7.2f]``
and ``ERROR`` replaces both the rate and the bracket.  Widths overflow
(``file`` grows past 7 digits, rates past 7 characters).  The header
``<date> <path>/mds-survey from <host>`` sets ``host`` on the records that
follow.  Records may be wrapped and carry ``pdsh`` prefixes.
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
    r'\bmdt\s+(?P<mdt>\d+)\s+file\s+(?P<file>\d+)\s+dir\s+(?P<dir>\d+)\s+thr\s+(?P<thr>\d+)(?=\s|$)')
_HEADER_RE = re.compile(r'\bmds-survey\s+from\s+(?P<host>\S+)\s*$')
_NAME = r'(?<![^\s\]])(?!(?:mdt|file|dir|thr)\s|ERROR\b|SHORT\b)[A-Za-z_]\w*'
_CONTINUATION_RE = re.compile(
    r'^(?:' + _NAME + r'\s+(?:' + RATE + r'(?=\s|\[|$)|(?:ERROR|SHORT)(?=\s|$))'
    r'|\[\s*' + NUMBER +
    r'|(?:ERROR|SHORT)(?=\s|$)'
    r'|=(?![=>]))', re.IGNORECASE)
# Current scripts print "ERROR" in place of rate and bracket; 2.2-2.4 printed
# the rate first and then "[min,max]", "ERROR" or "SHORT" as obdfilter does.
_TEST_RE = re.compile(
    r'(?P<name>' + _NAME + r')'
    r'(?:\s+(?P<rate>' + RATE + r'))?'
    r'(?:\s*\[\s*(?P<min>' + NUMBER + r')\s*,\s*(?P<max>' + NUMBER + r')\s*\]'
    r'|\s+(?P<flag>ERROR|SHORT)(?=\s|$))?',
    re.IGNORECASE)


def _parse_tests(rest):
    tests = {}
    # where the record's text ends: asking per word whether anything follows
    # it must not copy the rest of a long line every time
    text_end = len(rest.rstrip())
    for match in _TEST_RE.finditer(rest):
        rate = finite_number(match.group('rate'))
        flag = (match.group('flag') or '').upper()
        if match.group('min') is not None:
            entry = {'ops_s': rate, 'min_ops_s': finite_float(match.group('min')),
                     'max_ops_s': finite_float(match.group('max')), 'status': 'ok'}
        elif flag:
            entry = {'ops_s': rate, 'min_ops_s': None, 'max_ops_s': None, 'status': flag.lower()}
        elif match.group('rate') is None and match.end() < text_end:
            # a bare word inside the line is not a test; only the last one,
            # printed just before the run stopped, is
            continue
        else:
            # a test cut short (aborted run, truncated file) has no bracket
            entry = {'ops_s': rate, 'min_ops_s': None, 'max_ops_s': None, 'status': 'incomplete'}
        tests[match.group('name')] = entry
    return tests


def _record(text, context):
    match = _PREFIX_RE.search(text)
    return {
        'mdt': to_int(match.group('mdt')),
        'file': to_int(match.group('file')),
        'dir': to_int(match.group('dir')),
        'thr': to_int(match.group('thr')),
        'host': context.get('host'),
        'tests': _parse_tests(text[match.end():]),
    }


def _header(text):
    header = _HEADER_RE.search(text)
    return {'host': header.group('host')} if header else None


def parse_mds_survey(data):
    """Parse mds-survey summary text into a list of records.

    Text without any result line gives ``[]``.  Raises ParserError only for
    input that is not text.
    """
    text = ensure_text(data, 'parse_mds_survey')
    lines = join_backslash_continuations(clean_lines(text))
    return assemble_survey_records(
        lines, _PREFIX_RE, _header, _CONTINUATION_RE, _record,
        pdsh_context=lambda host: {'host': host})
