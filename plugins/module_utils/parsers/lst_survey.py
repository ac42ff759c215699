# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parser for ``lst-survey`` results: its CSV file or its stdout table.

CSV (``results.<epoch>.csv``)::

    Servers,Clients,Mode,Read_BW,Read_Rate,Write_BW,Write_Rate,Server_Errors,Client_Errors
    172.18.2.5@tcp 172.18.2.6@tcp,172.18.2.7@tcp 172.18.2.8@tcp,read_4k,22,149981,608,299961,0,0

The separator is whatever ``-S`` chose; it is read from the header.  Group
fields hold space-separated NIDs, unquoted.  When lst-survey cannot collect
all samples it prints ``Error: Failed to get all samples`` and exits,
leaving a row with only the two groups and no newline; that row becomes a
record with ``complete: false``.

Stdout: one block per server/client group pair::

    Commence lst-survey - <date>
    Server Group: 172.18.2.5@tcp 172.18.2.6@tcp
    Client Group: 172.18.2.7@tcp 172.18.2.8@tcp

              Mode       Read MB/s       Read RPC/s      Write MB/S      Write RPC/s
           read 4k              22           149981             608           299961

The columns are taken from the header line, so a table with only some of
them (e.g. ``Mode  Write MB/S  Write RPC/s``) fills the others with null.
The ``Server Errors:`` / ``Client Errors:`` lines that ``-e`` adds after a
block are cumulative over the block, like the CSV columns, so they are
stored on the block's last row; other rows keep null.

Every "MB/s" here is MiB/s: lst-survey never passes ``--mbs`` to lst.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import (
    NUMBER,
    clean_lines,
    ensure_text,
    to_int,
    to_number,
)

_CSV_COLUMNS = ('Servers', 'Clients', 'Mode', 'Read_BW', 'Read_Rate', 'Write_BW', 'Write_Rate',
                'Server_Errors', 'Client_Errors')
_CSV_HEADER_RE = re.compile(r'Servers(?P<sep>.{1,3}?)Clients(?P=sep)Mode(?P=sep)Read_BW')
_MODE_RE = re.compile(r'^(?P<kind>read|write|rw)[ _](?P<size>\d+[kKmMgG]?)$|^(?P<ping>ping)$', re.IGNORECASE)
_NUMBER_RE = re.compile(r'^' + NUMBER + r'$')

_COMMENCE_RE = re.compile(r'^Commence lst-survey\b', re.IGNORECASE)
_FINISHED_RE = re.compile(r'^Finished lst-survey\b', re.IGNORECASE)
_GROUP_RE = re.compile(r'^(?P<role>Server|Client) Group\s*:\s*(?P<nids>.*)$', re.IGNORECASE)
_TABLE_HEADER_RE = re.compile(r'^Mode\s+(?P<columns>(?:Read|Write)\s+(?:MB/s|MiB/s|RPC/s).*)$', re.IGNORECASE)
_COLUMN_RE = re.compile(r'(?P<direction>Read|Write)\s+(?P<unit>MB/s|MiB/s|RPC/s)', re.IGNORECASE)
_TABLE_ROW_RE = re.compile(r'^(?P<mode>(?:read|write|rw)[ _]\d+[kKmMgG]?|ping)\s+(?P<values>' + NUMBER + r'(?:\s+' + NUMBER + r')*)$',
                           re.IGNORECASE)
_ERRORS_RE = re.compile(r'^(?P<role>Server|Client) Errors\s*:\s*(?P<count>\d+)', re.IGNORECASE)
_FAILED_SAMPLES_RE = re.compile(r'Error: Failed to get all samples.*$', re.IGNORECASE)


def normalise_mode(label):
    """``read 4k`` / ``read_4k`` / ``READ_4K`` -> ``read_4k``; ``ping`` -> ``ping``; anything else -> None."""
    match = _MODE_RE.match(label.strip())
    if not match:
        return None
    if match.group('ping'):
        return 'ping'
    return '%s_%s' % (match.group('kind').lower(), match.group('size').lower())


def _nids(field):
    nids = field.split()
    return nids or None


def _record(servers, clients, mode):
    return {
        'servers': servers,
        'clients': clients,
        'mode': mode,
        'read_mib_s': None,
        'read_rpc_s': None,
        'write_mib_s': None,
        'write_rpc_s': None,
        'server_errors': None,
        'client_errors': None,
        'complete': mode is not None,
        'error': None,
    }


def _csv_record(fields, allow_partial):
    """A record from one split CSV row, or None when the row is not one."""
    if len(fields) == 2 and allow_partial:
        record = _record(_nids(fields[0]), _nids(fields[1]), None)
        record['error'] = 'partial row: lst-survey did not get all samples'
        return record if (record['servers'] or record['clients']) else None
    if len(fields) != len(_CSV_COLUMNS):
        return None
    mode = normalise_mode(fields[2])
    numbers = [field.strip() for field in fields[3:]]
    if mode is None or not all(_NUMBER_RE.match(number) for number in numbers):
        return None
    record = _record(_nids(fields[0]), _nids(fields[1]), mode)
    record['read_mib_s'] = to_number(numbers[0])
    record['read_rpc_s'] = to_number(numbers[1])
    record['write_mib_s'] = to_number(numbers[2])
    record['write_rpc_s'] = to_number(numbers[3])
    record['server_errors'] = to_int(numbers[4])
    record['client_errors'] = to_int(numbers[5])
    return record


def _split_glued_header(line, separator):
    """Split ``<partial row>Servers,Clients,...`` (a partial row has no newline)."""
    marker = 'Servers' + separator + 'Clients' + separator
    position = line.find(marker)
    if position > 0:
        return line[:position], line[position:]
    return line, None


def _parse_csv(lines, separator, allow_partial):
    records = []
    for whole in lines:
        if not whole:
            continue
        head, rest = _split_glued_header(whole, separator)
        for line in (head, rest):
            if line is None or _CSV_HEADER_RE.search(line):
                continue
            record = _csv_record(line.split(separator), allow_partial)
            if record is not None:
                records.append(record)
    return records


def _table_columns(header):
    columns = []
    for match in _COLUMN_RE.finditer(header):
        direction = match.group('direction').lower()
        unit = 'rpc_s' if match.group('unit').lower() == 'rpc/s' else 'mib_s'
        columns.append('%s_%s' % (direction, unit))
    return columns


def _parse_table(lines):
    records = []
    servers = None
    clients = None
    columns = None
    block_records = []
    for line in lines:
        if not line:
            continue
        if _COMMENCE_RE.match(line):
            servers = clients = columns = None
            block_records = []
            continue
        if _FINISHED_RE.match(line):
            columns = None
            continue
        group = _GROUP_RE.match(line)
        if group:
            if group.group('role').lower() == 'server':
                servers = _nids(group.group('nids'))
            else:
                clients = _nids(group.group('nids'))
            continue
        header = _TABLE_HEADER_RE.match(line)
        if header:
            columns = _table_columns(header.group('columns'))
            continue
        row = _TABLE_ROW_RE.match(line)
        if row and columns:
            values = row.group('values').split()
            if len(values) != len(columns):
                continue
            record = _record(servers, clients, normalise_mode(row.group('mode')))
            for column, value in zip(columns, values):
                record[column] = to_number(value)
            records.append(record)
            block_records.append(record)
            continue
        errors = _ERRORS_RE.match(line)
        if errors and block_records:
            key = 'server_errors' if errors.group('role').lower() == 'server' else 'client_errors'
            block_records[-1][key] = int(errors.group('count'))
            continue
        failed = _FAILED_SAMPLES_RE.search(line)
        if failed and (servers or clients):
            record = _record(servers, clients, None)
            record['error'] = failed.group(0).strip()
            records.append(record)
            block_records.append(record)
    return records


def parse_lst_survey(text):
    """Parse lst-survey CSV or stdout into a list of records (fields: RETURN of plugins/filter/parse_lst_survey.py)."""
    text = ensure_text(text, 'parse_lst_survey')
    lines = clean_lines(text)
    for line in lines:
        header = _CSV_HEADER_RE.search(line)
        if header:
            return _parse_csv(lines, header.group('sep'), True)
    if any(_TABLE_HEADER_RE.match(line) for line in lines):
        return _parse_table(lines)
    # CSV rows without their header line: lst-survey's default separator;
    # a two-field line is too common in other text to be taken as a partial row.
    return _parse_csv(lines, ',', False)
