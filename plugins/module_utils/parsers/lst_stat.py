# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parser for ``lst stat`` output (LNet self-test statistics).

Each sample prints, per group, a block such as::

    [LNet Rates of servers]
    [R] Avg: 149981   RPC/s Min: 149500   RPC/s Max: 150462   RPC/s
    [W] Avg: 299961   RPC/s Min: 299001   RPC/s Max: 300921   RPC/s
    [LNet Bandwidth of servers]
    [R] Avg: 22.41    MiB/s Min: 22.30    MiB/s Max: 22.52    MiB/s
    [W] Avg: 608.12   MiB/s Min: 605.00   MiB/s Max: 611.24   MiB/s

Old versions put ``[W]`` before ``[R]`` and always said ``MB/s``; since 2.9
the label is ``MiB/s`` (or ``MB/s`` with ``--mbs``) and the numbers are padded
with ``%-8``.  ``--avg/--min/--max``, ``--read/--write`` and ``--bw/--rate``
leave parts out; what is not printed is ``null``.

Every block becomes one record per direction, in the order printed.  A
sample ends when a (group, metric) block repeats; ``sample`` counts from 0.
``Failed to stat on N nodes`` precedes the block of the group that lost
nodes and is kept as ``failed_nodes`` on that group's records of the sample
(0 when the line is absent: lst prints it whenever a node failed).
Everything else that lst.sh or lst print around the statistics (``Start
LST``, ``LST_SESSION=``, ``Test:``, ``lst show_error`` totals, ...) is skipped.
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

# The group starts and ends with a non-blank (so no blank run is tried from every
# position of it), and stops at the first ']'.
_HEADER_RE = re.compile(
    r'^\[LNet\s+(?P<metric>Rates|Bandwidth)\s+of\s+(?P<group>[^\]\s](?:[^\]]*[^\]\s])?)\s*\]', re.IGNORECASE)
_DIRECTION_RE = re.compile(r'^\[(?P<direction>R|W)\]\s*(?P<rest>.*)$', re.IGNORECASE)
_VALUE_RE = re.compile(r'\b(?P<kind>Avg|Min|Max)\s*:\s*(?P<value>' + NUMBER + r')\s*(?P<unit>RPC/s|MiB/s|MB/s)?', re.IGNORECASE)
_CONTINUATION_RE = re.compile(r'^(?:Avg|Min|Max)\s*:', re.IGNORECASE)
_FAILED_RE = re.compile(r'Failed to stat on\s+(?P<count>\d+)\s+nodes?', re.IGNORECASE)

_METRICS = {'rates': 'rates', 'bandwidth': 'bandwidth'}
_DIRECTIONS = {'r': 'read', 'w': 'write'}
_UNITS = {'rates': 'RPC/s', 'bandwidth': 'MiB/s'}
_PRINTED_UNITS = {'rpc/s': 'RPC/s', 'mib/s': 'MiB/s', 'mb/s': 'MB/s'}


def _apply_values(record, text):
    found = False
    for match in _VALUE_RE.finditer(text):
        record[match.group('kind').lower()] = to_number(match.group('value'))
        if match.group('unit'):
            record['printed_unit'] = _PRINTED_UNITS[match.group('unit').lower()]
        found = True
    return found


def parse_lst_stat(text):
    """Parse ``lst stat`` output into a list of records, one per group, metric, direction and sample."""
    text = ensure_text(text, 'parse_lst_stat')
    records = []
    sample = 0
    blocks_in_sample = set()
    failed_by_group = {}
    pending_failed = None
    block = None
    last_record = None
    for line in clean_lines(text):
        if not line:
            last_record = None
            continue
        failed = _FAILED_RE.search(line)
        if failed:
            pending_failed = int(failed.group('count'))
            last_record = None
            continue
        header = _HEADER_RE.match(line)
        if header:
            metric = _METRICS[header.group('metric').lower()]
            group = header.group('group')
            if (group, metric) in blocks_in_sample:
                sample += 1
                blocks_in_sample = set()
                failed_by_group = {}
            blocks_in_sample.add((group, metric))
            if pending_failed is not None:
                failed_by_group[group] = pending_failed
                pending_failed = None
            block = {'group': group, 'metric': metric, 'sample': sample,
                     'failed_nodes': failed_by_group.get(group, 0)}
            last_record = None
            continue
        direction = _DIRECTION_RE.match(line)
        if direction and block is not None:
            record = {
                'group': block['group'],
                'metric': block['metric'],
                'direction': _DIRECTIONS[direction.group('direction').lower()],
                'avg': None,
                'min': None,
                'max': None,
                'unit': _UNITS[block['metric']],
                'printed_unit': None,
                'sample': block['sample'],
                'failed_nodes': block['failed_nodes'],
            }
            _apply_values(record, direction.group('rest'))
            records.append(record)
            last_record = record
            continue
        if last_record is not None and _CONTINUATION_RE.match(line):
            # A terminal or mail client broke the [R]/[W] line: the rest
            # of its values continue here.
            _apply_values(last_record, line)
            continue
        last_record = None
        if not direction:
            # Any other line (lst.sh chatter, show_error totals, prompts)
            # ends the current block.
            block = None
    return records
