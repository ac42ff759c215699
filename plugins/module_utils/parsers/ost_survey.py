# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parser for the stdout of ``ost-survey`` (per-OST dd bandwidth from a client).

Two generations of the tool are read:

* the Perl ``ost-survey`` (Lustre 1.6 to today): a header line, ``Number of
  Active OST devices : N``, Worst/Best/Average lines for Read then Write and
  the ``Ost#  Read(MB/s) ...`` table, where an OST that is not ACTIVE shows as
  ``<i>     Inactive ost``;
* the shell ``ost-survey.sh`` of the first I/O kits (2006, quoted by the
  Lustre manual until 2014): ``Average read Speed:``, ``read - Worst OST indx``,
  ``N OST devices found`` and ``Ost index N Read speed ... Write speed ...``
  lines.  It tested every OST, so ``N`` is also the active count.

Both compute bandwidth with 1024*1024-byte megabytes, so every figure is MiB/s.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import (
    NUMBER,
    clean_lines,
    ensure_text,
    to_number,
)

_OPERATIONS = ('read', 'write')

_HEADER_RE = re.compile(
    r'^(?:(?P<program>\S+):\s+)?(?P<date>\d{1,2}/\d{1,2}/\d{2,4})\s+OST speed survey on\s+(?P<mount>\S+)'
    r'(?:\s+from\s+(?P<nid>\S+))?', re.IGNORECASE)
_ACTIVE_RE = re.compile(r'^Number of Active OST devices\s*:\s*(\d+)', re.IGNORECASE)
_NON_ACTIVE_RE = re.compile(r'^Number of non[ -]active o(?:ts|st)(?:\(s\)|s)?\s*:\s*(-?\d+)', re.IGNORECASE)
_EXTREME_RE = re.compile(
    r'^(?P<which>Worst|Best)\s+(?P<op>Read|Write)\s+OST\s+indx\s*:\s*(?P<ost>\d+)\s+speed\s*:\s*(?P<speed>' + NUMBER + r')',
    re.IGNORECASE)
_AVERAGE_RE = re.compile(
    r'^(?P<op>Read|Write)\s+Average\s*:\s*(?P<avg>' + NUMBER + r')\s*\+/-\s*(?P<sd>' + NUMBER + r')', re.IGNORECASE)
_TABLE_HEADER_RE = re.compile(r'^Ost#\s+Read\(MB/s\)', re.IGNORECASE)
_ROW_RE = re.compile(
    r'^(?P<ost>\d+)\s+(?P<read>' + NUMBER + r')\s+(?P<write>' + NUMBER + r')\s+(?P<rtime>' + NUMBER + r')\s+(?P<wtime>' + NUMBER + r')$')
_INACTIVE_ROW_RE = re.compile(r'^(?P<ost>\d+)\s+Inactive\s+ost\b', re.IGNORECASE)
_NONE_ACTIVE_RE = re.compile(r"There is no active OST'?s? found", re.IGNORECASE)

# ost-survey.sh (2006) lines
_LEGACY_AVERAGE_RE = re.compile(r'^Average\s+(?P<op>read|write)\s+Speed\s*:\s*(?P<avg>' + NUMBER + r')', re.IGNORECASE)
_LEGACY_EXTREME_RE = re.compile(
    r'^(?P<op>read|write)\s+-\s+(?P<which>Worst|Best)\s+OST\s+indx\s+(?P<ost>\d+)\s+(?P<speed>' + NUMBER + r')', re.IGNORECASE)
_LEGACY_COUNT_RE = re.compile(r'^(\d+)\s+OST devices found', re.IGNORECASE)
_LEGACY_ROW_RE = re.compile(
    r'^Ost index\s+(?P<ost>\d+)\s+Read\s+(?P<kind>speed|time)\s+(?P<read>' + NUMBER + r')\s+Write\s+(?:speed|time)\s+(?P<write>'
    + NUMBER + r')', re.IGNORECASE)

# A terminal or mail client may break "Worst  Read OST indx: ..." after the
# first word; such a lone word is glued to the line below it.
_LONE_LEAD_WORDS = ('worst', 'best')


def _empty_operation():
    return {'worst': None, 'best': None, 'avg_mib_s': None, 'stddev_mib_s': None}


def empty_result():
    """The result for text that holds no ost-survey output."""
    return {
        'active_osts': None,
        'inactive_osts': None,
        'date': None,
        'mount_point': None,
        'client_nid': None,
        'no_active_osts': False,
        'read': _empty_operation(),
        'write': _empty_operation(),
        'osts': [],
    }


def _join_wrapped(lines):
    out = []
    pending = None
    for line in lines:
        if pending is not None:
            line = (pending + ' ' + line) if line else pending
            pending = None
        if line.lower() in _LONE_LEAD_WORDS:
            pending = line
            continue
        out.append(line)
    if pending is not None:
        out.append(pending)
    return out


def _ost_entry(osts, index):
    """The entry of OST ``index`` in ``osts`` (a dict by index), made on first use."""
    entry = osts.get(index)
    if entry is None:
        entry = {'ost': index, 'read_mib_s': None, 'write_mib_s': None,
                 'read_time_s': None, 'write_time_s': None, 'active': True}
        osts[index] = entry
    return entry


def parse_ost_survey(text):
    """Parse ost-survey stdout into one object (fields: RETURN of plugins/filter/parse_ost_survey.py)."""
    text = ensure_text(text, 'parse_ost_survey')
    result = empty_result()
    seen = False
    active_line_seen = False
    osts = {}
    for line in _join_wrapped(clean_lines(text)):
        if not line:
            continue
        match = _HEADER_RE.search(line)
        if match:
            result['date'] = match.group('date')
            result['mount_point'] = match.group('mount')
            result['client_nid'] = match.group('nid')
            seen = True
            continue
        match = _ACTIVE_RE.match(line)
        if match:
            result['active_osts'] = int(match.group(1))
            active_line_seen = True
            seen = True
            continue
        match = _NON_ACTIVE_RE.match(line)
        if match:
            result['inactive_osts'] = int(match.group(1))
            seen = True
            continue
        match = _EXTREME_RE.match(line) or _LEGACY_EXTREME_RE.match(line)
        if match:
            operation = result[match.group('op').lower()]
            operation[match.group('which').lower()] = {
                'ost': int(match.group('ost')), 'mib_s': to_number(match.group('speed'))}
            seen = True
            continue
        match = _AVERAGE_RE.match(line)
        if match:
            operation = result[match.group('op').lower()]
            operation['avg_mib_s'] = to_number(match.group('avg'))
            operation['stddev_mib_s'] = to_number(match.group('sd'))
            seen = True
            continue
        match = _LEGACY_AVERAGE_RE.match(line)
        if match:
            result[match.group('op').lower()]['avg_mib_s'] = to_number(match.group('avg'))
            seen = True
            continue
        match = _LEGACY_COUNT_RE.match(line)
        if match:
            result['active_osts'] = int(match.group(1))
            seen = True
            continue
        if _TABLE_HEADER_RE.match(line):
            seen = True
            continue
        match = _ROW_RE.match(line)
        if match and seen:
            entry = _ost_entry(osts, int(match.group('ost')))
            entry['read_mib_s'] = to_number(match.group('read'))
            entry['write_mib_s'] = to_number(match.group('write'))
            entry['read_time_s'] = to_number(match.group('rtime'))
            entry['write_time_s'] = to_number(match.group('wtime'))
            entry['active'] = True
            continue
        match = _INACTIVE_ROW_RE.match(line)
        if match and seen:
            entry = _ost_entry(osts, int(match.group('ost')))
            entry['active'] = False
            continue
        match = _LEGACY_ROW_RE.match(line)
        if match:
            entry = _ost_entry(osts, int(match.group('ost')))
            if match.group('kind').lower() == 'speed':
                entry['read_mib_s'] = to_number(match.group('read'))
                entry['write_mib_s'] = to_number(match.group('write'))
            else:
                entry['read_time_s'] = to_number(match.group('read'))
                entry['write_time_s'] = to_number(match.group('write'))
            seen = True
            continue
        if _NONE_ACTIVE_RE.search(line):
            result['no_active_osts'] = True
            seen = True
            continue
    if not seen:
        return empty_result()
    # ost-survey prints the non-active count only when it is not zero.
    if active_line_seen and result['inactive_osts'] is None:
        result['inactive_osts'] = 0
    result['osts'] = [osts[index] for index in sorted(osts)]
    return result
