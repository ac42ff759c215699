# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reassemble the one-line-per-point summaries of the bash surveys.

sgpdd-survey, obdfilter-survey and mds-survey all print one result line per
sweep point after a header line, and real copies of that output come
wrapped by terminals and mail clients, interleaved by pdsh (``oss01: ...``)
and mixed with other messages.  The three parsers differ only in their
regular expressions and in how a record is built, so the line bookkeeping
lives here once.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import NUMBER

# "oss01: <text>" as written by pdsh/clush; the name must look like a host.
PDSH_RE = re.compile(r'^(?P<host>[A-Za-z0-9][A-Za-z0-9_.\-]*):\s+(?P<rest>\S.*)$')
# A rate as printed by the surveys' printf("%7.2f"): a number, or what glibc prints for nan/inf.
RATE = r'(?:' + NUMBER + r'|[-+]?(?:nan|inf))'


# A terminal may also break a record inside an open "[min, max]" bracket.
_BRACKET_TAIL_RE = re.compile(r'^(?:' + NUMBER + r'\s*[,\]]|[,\]])')


class _Pending(object):
    """A record whose lines are still being collected.

    The lines are kept as a list and joined once when the record ends, and
    the bracket balance is counted per line: growing one string and counting
    over all of it for every continuation line would cost the square of the
    record's length.
    """

    __slots__ = ('slot', 'parts', 'open_brackets')

    def __init__(self, slot, text):
        self.slot = slot
        self.parts = []
        self.open_brackets = 0
        self.add(text)

    def add(self, text):
        self.parts.append(text)
        self.open_brackets += text.count('[') - text.count(']')

    def continued_by(self, line, continuation_re):
        if continuation_re.match(line):
            return True
        return self.open_brackets > 0 and bool(_BRACKET_TAIL_RE.match(line))


def assemble_survey_records(lines, prefix_re, find_header, continuation_re, build_record,
                            pdsh_context, clean_line=None):
    """Return the records found in ``lines``, in the order their lines started.

    ``prefix_re`` finds the start of a result line (``ost 8 sz ...``),
    ``find_header(text)`` returns the context (host, ...) that the survey's
    header line sets, or None for any other line; a line matching
    ``continuation_re`` (or the rest of a "[min, max]" bracket left open)
    carries on the record above it.  Each finished record text is turned
    into a record by ``build_record(text, context)``, where the context comes
    from the header above it or, for pdsh-prefixed output without a header,
    from ``pdsh_context(host)``.  ``clean_line`` may rewrite a
    line first; returning None drops it.

    Everything is tracked per pdsh source (None = unprefixed), so that the
    interleaved output of several servers is reassembled correctly.
    """
    contexts = {}
    pending = {}
    records = []

    def flush(source):
        if source in pending:
            record = pending.pop(source)
            records[record.slot] = build_record(' '.join(record.parts), contexts.get(source, {}))

    for line in lines:
        if clean_line is not None:
            line = clean_line(line)
            if line is None:
                continue
        if not line:
            # wrapping never leaves an empty line inside a record
            flush(None)
            continue
        source, body = None, line
        prefixed = PDSH_RE.match(line)
        if prefixed:
            rest, host = prefixed.group('rest'), prefixed.group('host')
            if prefix_re.match(rest) or find_header(rest) is not None or \
                    (host in pending and pending[host].continued_by(rest, continuation_re)):
                source, body = host, rest
        header = find_header(body)
        start = prefix_re.search(body)
        if header is not None and not start:
            flush(source)
            contexts[source] = header
        elif start:
            flush(source)
            pending[source] = _Pending(len(records), body[start.start():])
            records.append(None)
            if source is not None and source not in contexts:
                contexts[source] = pdsh_context(source)
        elif source in pending and pending[source].continued_by(body, continuation_re):
            pending[source].add(body)
        else:
            # any other line ends the record it follows
            flush(source)
    for source in list(pending):
        flush(source)
    return records
