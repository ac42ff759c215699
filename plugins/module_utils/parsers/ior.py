# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parser for what IOR prints (IOR 2.10 to 4.x, text, JSON and CSV summaries).

Forms handled (from hpc/ior ``src/C/IOR.c`` at 2.10.3 and ``src/ior-output.c``
at 3.2.1, 3.3.0, 4.0.0 and main, and published outputs):

- Banner ``IOR-3.3.0: MPI Coordinated Test of Parallel I/O``; 2.x prints
  ``Command line used:`` and a ``Summary:`` block of ``key = value`` lines
  (``clients = 64 (16 per node)``), 3.x/4.x an ``Options:`` block of
  ``key : value`` lines.
- Per-iteration rows under ``access bw(MiB/s) ...``: IOR 3.3 added ``IOPS``
  and ``Latency(s)``; 2.x rows end in ``XXCEL``. Columns are taken from the
  header, so a version that adds one is still read.
- ``Max Write: X MiB/sec (Y MB/sec)`` (the second figure is decimal MB/s).
- ``Summary of all tests:`` with ``Operation Max(MiB) ...``: 2.x spells
  ``Max (MiB)`` and ``Std Dev`` and ends rows in ``EXCEL``; 3.0/3.1 have no
  OPs columns and print ``aggsize`` in bytes; 4.x adds ``Stonewall(s)``.
- ``-O summaryFormat=JSON`` (``tests[].Results[][]``, ``summary[]``) and
  ``-O summaryFormat=CSV`` (``access,bw(MiB/s),...,numTasks,iter`` rows).
- Per-task timer lines at verbosity 3 (``-v -v -v``), every task's six
  wall-clock stamps of a phase (``Test 0: Iter=0, Task=2, Time=1438735040.49,
  write open start`` ... ``write close stop``), the same since IOR 2.10. They
  go to ``task_timings`` (a key only present when such lines were read), one
  record per iteration, phase and task; a stamp cut off by a truncated paste
  is left null.

The parser works line by line with anchored patterns, so its cost grows with
the size of the text, however long a line is.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import math
import re

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import (
    NUMBER,
    clean_lines,
    ensure_text,
    finite_float,
    finite_number,
    join_backslash_continuations,
    read_size,
)

_MIB = 1048576.0
_BANNER_RE = re.compile(r'\bIOR-(?P<version>\d[0-9A-Za-z.+_~-]*):\s*MPI Coordinated Test')
_COMMAND_RE = re.compile(r'^Command line(?: used)?\s*:\s*(?P<command>.*)$')
_TEST_ID_RE = re.compile(r'^TestID\s*:\s*(?P<id>\d+)\s*$')
# Options block keys (3.x/4.x ``key : value``, 2.x ``key = value``).
_OPTION_RE = re.compile(
    r'^(?P<key>api|access|nodes|tasks|clients per node|clients|repetitions|segments|xfersize|blocksize'
    r'|Participating tasks|pattern)\s*[:=]\s*(?P<value>.*)$')
_CLIENTS_2X_RE = re.compile(r'^(?P<tasks>\d+)\s*\(\s*(?P<per_node>\d+)\s+per node\s*\)')
_SEGMENTS_2X_RE = re.compile(r'\((?P<segments>\d+)\s+segments?\)')
_RESULTS_HEADER_RE = re.compile(r'^access\s+bw\(MiB/s\)')
_RESULT_ROW_RE = re.compile(r'^(?P<access>write|read|remove)\s+\S')
_DASHES_RE = re.compile(r'^-{2,}(?:\s+-{2,})*$')
_MAX_RE = re.compile(r'^Max\s+(?P<op>Write|Read)\s*:\s*(?P<mib>\S+)\s+MiB/sec(?:\s*\(\s*(?P<mb>\S+)\s+MB/sec\s*\))?')
_SUMMARY_TITLE_RE = re.compile(r'^Summary of all tests\s*:')
_SUMMARY_HEADER_RE = re.compile(r'^Operation\s+Max\s*\(MiB\)')
_SUMMARY_ROW_RE = re.compile(r'^(?P<operation>write|read)\s+\S')
_FINISHED_RE = re.compile(r'^(?:Run\s+)?[Ff]inished\s*:')
_ERROR_RE = re.compile(r'^(?:\[[^\]]*\]\s*)?(?:ior\s+)?ERROR\b')
_FAILED_RE = re.compile(r'\bFAILED\b')
_ABORT_RE = re.compile(r'MPI_ABORT was invoked on rank|application called MPI_Abort\(')
_CSV_HEADER_RE = re.compile(r'^access,bw\(MiB/s\),')
_TASK_TIME_RE = re.compile(
    r'^Test\s+(?P<test>\d+):\s*Iter=(?P<iter>\d+),\s*Task=(?P<task>\d+),\s*Time=(?P<time>' + NUMBER + r'),\s*'
    r'(?P<access>write|read)\s+(?P<timer>open start|open stop|start|stop|close start|close stop)\s*$')
# Timer names as IOR prints them after the access word -> record keys (wall-clock seconds).
_TASK_TIMERS = {
    'open start': 'open_start', 'open stop': 'open_stop', 'start': 'start', 'stop': 'stop',
    'close start': 'close_start', 'close stop': 'close_stop',
}
_TASK_TIMER_KEYS = ('open_start', 'open_stop', 'start', 'stop', 'close_start', 'close_stop')

# Per-iteration columns by the header name IOR prints.
_RESULT_COLUMNS = {
    'access': 'access', 'bw(MiB/s)': 'bw_mib_s', 'bw(MiB)': 'bw_mib_s', 'IOPS': 'iops',
    'Latency(s)': 'latency_s', 'Latency': 'latency_s', 'block(KiB)': 'block_kib', 'xfer(KiB)': 'xfer_kib',
    'open(s)': 'open_s', 'wr/rd(s)': 'wrrd_s', 'close(s)': 'close_s', 'total(s)': 'total_s',
    'iter': 'iter', 'numTasks': 'tasks',
}
_RESULT_KEYS = ('access', 'bw_mib_s', 'iops', 'latency_s', 'block_kib', 'xfer_kib',
                'open_s', 'wrrd_s', 'close_s', 'total_s', 'iter')
# Rows printed without a header (a paste that starts below it): 3.3+ or older layout by count.
_DEFAULT_RESULT_HEADERS = {
    11: ['access', 'bw(MiB/s)', 'IOPS', 'Latency(s)', 'block(KiB)', 'xfer(KiB)', 'open(s)', 'wr/rd(s)',
         'close(s)', 'total(s)', 'iter'],
    9: ['access', 'bw(MiB/s)', 'block(KiB)', 'xfer(KiB)', 'open(s)', 'wr/rd(s)', 'close(s)', 'total(s)', 'iter'],
}

# Summary columns by header name; StdDev is named by the column before it.
_SUMMARY_COLUMNS = {
    'Operation': 'operation', 'Max(MiB)': 'max_mib_s', 'Min(MiB)': 'min_mib_s', 'Mean(MiB)': 'mean_mib_s',
    'Max(OPs)': 'max_ops', 'Min(OPs)': 'min_ops', 'Mean(OPs)': 'mean_ops', 'Mean(s)': 'mean_s',
    'Stonewall(s)': 'stonewall_s', 'Stonewall(MiB)': 'stonewall_mib_s', 'Test#': 'test', '#Tasks': 'tasks',
    'tPN': 'tasks_per_node', 'reps': 'repetitions', 'fPP': 'file_per_process', 'reord': 'reorder_tasks',
    'reordoff': 'reorder_offset', 'reordrand': 'reorder_random', 'seed': 'reorder_seed', 'segcnt': 'segments',
    'blksiz': 'block_size_bytes', 'xsize': 'transfer_size_bytes', 'aggs(MiB)': 'aggregate_mib',
    'aggsize': 'aggregate_bytes', 'API': 'api', 'RefNum': 'ref_num',
}
_SUMMARY_KEYS = ('operation', 'max_mib_s', 'min_mib_s', 'mean_mib_s', 'stddev_mib_s', 'max_ops', 'min_ops',
                 'mean_ops', 'stddev_ops', 'mean_s', 'stonewall_s', 'stonewall_mib_s', 'test', 'tasks',
                 'tasks_per_node', 'repetitions', 'file_per_process', 'segments', 'block_size_bytes',
                 'transfer_size_bytes', 'aggregate_mib', 'api')
_SUMMARY_INTS = ('test', 'tasks', 'tasks_per_node', 'repetitions', 'segments', 'block_size_bytes',
                 'transfer_size_bytes')
_TRAILING_MARKERS = ('EXCEL', 'XXCEL')
_JSON_ATTEMPTS = 32


def _empty_run():
    return {
        'version': None, 'command': None, 'api': None, 'access': None, 'tasks': None, 'nodes': None,
        'tasks_per_node': None, 'repetitions': None, 'segments': None,
        'transfer_size_bytes': None, 'block_size_bytes': None,
        'results': [], 'summary': [], 'max': {}, 'errors': [],
    }


def _int_or_none(value):
    number = finite_number(value)
    if number is None:
        return None
    return int(number) if float(number) == int(number) else None


def _value(token):
    # IOR prints '-' for a figure it has none of, NA for stonewall columns it did not measure.
    if token in ('-', 'NA'):
        return None
    return finite_float(token)


def _strip_marker(tokens):
    if tokens and tokens[-1] in _TRAILING_MARKERS:
        return tokens[:-1]
    return tokens


class _Parser(object):
    """Line-by-line state: the runs found so far and the one being read."""

    def __init__(self):
        self.runs = []
        self.run = _empty_run()
        self.by_test_id = {}
        self.result_columns = None
        self.summary_columns = None
        self.in_summary = False
        self.task_records = {}

    # -- run boundaries -------------------------------------------------------------
    def _has_content(self, run=None):
        run = run or self.run
        return bool(run['results'] or run['summary'] or run['max'] or run['errors'] or run.get('task_timings'))

    def _is_run(self, run):
        return bool(run['version'] or self._has_content(run))

    def finish(self, keep=()):
        previous = self.run
        if self._is_run(previous):
            _fill_from_summary(previous)
            self.runs.append(previous)
        self.run = _empty_run()
        for key in keep:
            self.run[key] = previous[key]
        self.result_columns = None
        self.in_summary = False
        self.task_records = {}
        if not keep:
            self.by_test_id = {}
        return previous

    # -- lines ----------------------------------------------------------------------
    def feed(self, line):
        if not line:
            return
        banner = _BANNER_RE.search(line)
        if banner:
            if self._is_run(self.run) or self.run['command']:
                self.finish()
            self.run['version'] = banner.group('version')
            return
        if _FINISHED_RE.match(line):
            self.finish()
            return
        if self._error(line):
            return
        if self.in_summary and self._summary_line(line):
            return
        if _SUMMARY_TITLE_RE.match(line):
            self.in_summary = True
            self.summary_columns = None
            return
        if _SUMMARY_HEADER_RE.match(line):
            self.in_summary = True
            self.summary_columns = _summary_header(line)
            return
        self._result_or_option(line)

    def _error(self, line):
        if line.startswith('WARNING'):
            return False
        if _ERROR_RE.match(line) or _FAILED_RE.search(line) or _ABORT_RE.search(line):
            self.run['errors'].append(line)
            return True
        return False

    def _summary_line(self, line):
        if _SUMMARY_HEADER_RE.match(line):
            self.summary_columns = _summary_header(line)
            return True
        if _DASHES_RE.match(line):
            return True
        row = _SUMMARY_ROW_RE.match(line)
        if not row or self.summary_columns is None:
            return False
        record = _summary_row(line.split(), self.summary_columns)
        if record is not None:
            target = self.by_test_id.get(record['test'], self.run)
            target['summary'].append(record)
        return True

    def _task_time(self, match):
        # Every task prints its own six stamps; mpirun may interleave lines of different tasks.
        key = (int(match.group('iter')), match.group('access'), int(match.group('task')))
        record = self.task_records.get(key)
        if record is None:
            record = {'test': int(match.group('test')), 'iter': key[0], 'access': key[1], 'task': key[2]}
            for name in _TASK_TIMER_KEYS:
                record[name] = None
            for name in ('open_s', 'wrrd_s', 'close_s', 'total_s'):
                record[name] = None
            self.task_records[key] = record
            self.run.setdefault('task_timings', []).append(record)
        record[_TASK_TIMERS[match.group('timer')]] = finite_float(match.group('time'))
        _task_durations(record)

    def _result_or_option(self, line):
        task_time = _TASK_TIME_RE.match(line)
        if task_time:
            self._task_time(task_time)
            return
        if _RESULTS_HEADER_RE.match(line):
            if self.run['results']:
                # The same table again with no banner between: the next run of a pasted series.
                self.finish(keep=('version', 'command') if self.run['version'] else ())
            self.result_columns = [_RESULT_COLUMNS.get(name) for name in line.split()]
            return
        if _DASHES_RE.match(line):
            return
        row = _RESULT_ROW_RE.match(line)
        if row:
            self._result_row(line.split())
            return
        maximum = _MAX_RE.match(line)
        if maximum:
            self._max(maximum)
            return
        test_id = _TEST_ID_RE.match(line)
        if test_id:
            self._test_id(int(test_id.group('id')))
            return
        command = _COMMAND_RE.match(line)
        if command:
            if self.run['command'] is None:
                self.run['command'] = command.group('command').strip()
            return
        option = _OPTION_RE.match(line)
        if option:
            _set_option(self.run, option.group('key'), option.group('value').strip())

    def _result_row(self, tokens):
        tokens = _strip_marker(tokens)
        columns = self.result_columns
        if columns is None or len(columns) != len(tokens):
            header = _DEFAULT_RESULT_HEADERS.get(len(tokens))
            if columns is not None or header is None:
                # A row cut short by a truncated paste, or one that matches no layout.
                return
            columns = [_RESULT_COLUMNS.get(name) for name in header]
        record = dict((key, None) for key in _RESULT_KEYS)
        for key, token in zip(columns, tokens):
            if key is None or key == 'tasks':
                continue
            if key == 'access':
                record[key] = token
            elif key == 'iter':
                record[key] = _int_or_none(token)
            else:
                record[key] = _value(token)
        self.run['results'].append(record)

    def _max(self, match):
        operation = match.group('op').lower()
        if operation in self.run['max']:
            # Two "Max Write:" lines with no banner between: two runs (before/after a patch, say).
            self.finish()
        self.run['max'][operation] = {'mib_s': finite_float(match.group('mib')),
                                      'mb_s': finite_float(match.group('mb'))}

    def _test_id(self, test_id):
        if self._has_content():
            # Several tests in one invocation (-f script): each test is a run of its own.
            self.finish(keep=('version', 'command'))
        self.by_test_id[test_id] = self.run


def _span(record, first, last):
    if record[first] is None or record[last] is None:
        return None
    # IOR prints the stamps to the microsecond.
    return round(max(0.0, record[last] - record[first]), 6)


def _task_durations(record):
    # The same spans IOR's own table reports, for one task: open, transfer, close, and open start to close stop.
    record['open_s'] = _span(record, 'open_start', 'open_stop')
    record['wrrd_s'] = _span(record, 'start', 'stop')
    record['close_s'] = _span(record, 'close_start', 'close_stop')
    record['total_s'] = _span(record, 'open_start', 'close_stop')


def _set_option(run, key, value):
    if key in ('api', 'access'):
        if value:
            run[key] = value.split(',')[0].strip() if key == 'access' else value
    elif key in ('nodes', 'repetitions', 'segments'):
        run[key] = _int_or_none(value)
    elif key == 'tasks':
        run['tasks'] = _int_or_none(value)
    elif key == 'Participating tasks':
        if run['tasks'] is None:
            run['tasks'] = _int_or_none(value)
    elif key == 'clients per node':
        run['tasks_per_node'] = _int_or_none(value)
    elif key == 'clients':
        clients = _CLIENTS_2X_RE.match(value)
        if clients:
            run['tasks'] = int(clients.group('tasks'))
            run['tasks_per_node'] = int(clients.group('per_node'))
    elif key == 'pattern':
        segments = _SEGMENTS_2X_RE.search(value)
        if segments:
            run['segments'] = int(segments.group('segments'))
    elif key == 'xfersize':
        run['transfer_size_bytes'] = read_size(value)
    elif key == 'blocksize':
        run['block_size_bytes'] = read_size(value)


def _summary_header(line):
    # 2.x: "Max (MiB)", "Std Dev", and an "Op grep" label that heads no column.
    text = re.sub(r'\s+\(', '(', line).replace('Std Dev', 'StdDev').replace('Op grep', ' ')
    columns = []
    for name in text.split():
        if name == 'StdDev':
            previous = columns[-1] if columns else None
            columns.append('stddev_ops' if previous and previous.endswith('_ops') else 'stddev_mib_s')
        else:
            columns.append(_SUMMARY_COLUMNS.get(name))
    return columns


def _summary_row(tokens, columns):
    tokens = _strip_marker(tokens)
    if columns and columns[-1] == 'aggregate_bytes' and len(tokens) == len(columns) + 2:
        # 2.x -v rows carry the test number and API after the byte count the header ends with.
        columns = columns + ['test', 'api']
    if len(tokens) != len(columns):
        return None
    record = dict((key, None) for key in _SUMMARY_KEYS)
    for key, token in zip(columns, tokens):
        if key is None:
            continue
        if key in ('operation', 'api'):
            record[key] = token
        elif key == 'file_per_process':
            flag = _int_or_none(token)
            record[key] = None if flag is None else flag != 0
        elif key == 'aggregate_bytes':
            size = finite_float(token)
            record['aggregate_mib'] = None if size is None else size / _MIB
        elif key in _SUMMARY_INTS:
            record[key] = _int_or_none(token)
        elif key in _SUMMARY_KEYS:
            record[key] = _value(token)
    return record


def _fill_from_summary(run):
    """Fields the options block did not give, from the summary table (never nodes)."""
    if not run['summary']:
        return
    first = run['summary'][0]
    for run_key, summary_key in (('tasks', 'tasks'), ('tasks_per_node', 'tasks_per_node'),
                                 ('repetitions', 'repetitions'), ('segments', 'segments'),
                                 ('transfer_size_bytes', 'transfer_size_bytes'),
                                 ('block_size_bytes', 'block_size_bytes'), ('api', 'api')):
        if run[run_key] is None:
            run[run_key] = first[summary_key]


# -- summaryFormat=JSON ---------------------------------------------------------------

def _json_documents(text):
    """The IOR JSON documents in ``text`` (objects with ``tests`` or ``summary``)."""
    decoder = json.JSONDecoder()
    documents = []
    attempts = 0
    offset = 0
    decoded_to = 0
    for line in text.split('\n'):
        start = offset + len(line) - len(line.lstrip())
        offset += len(line) + 1
        # Only a brace that opens a line can start IOR's document; a few tries bound the cost.
        if start < decoded_to or not line.lstrip().startswith('{') or attempts >= _JSON_ATTEMPTS:
            continue
        attempts += 1
        try:
            document, decoded_to = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            # Not JSON, or nested deeper than Python's decoder goes: not IOR's document either way.
            continue
        if isinstance(document, dict) and ('tests' in document or 'summary' in document):
            documents.append(document)
    return documents


def _json_number(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return finite_number(value)
    return None


def _json_float(value):
    number = _json_number(value)
    return None if number is None else float(number)


def _json_int(value):
    number = _json_number(value)
    if number is None or float(number) != int(number):
        return None
    return int(number)


def _json_run(document):
    run = _empty_run()
    run['version'] = _json_text(document.get('Version'))
    run['command'] = _json_text(document.get('Command line'))
    tests = document.get('tests') if isinstance(document.get('tests'), list) else []
    for test in tests:
        if not isinstance(test, dict):
            continue
        _json_test(run, test)
    summary = document.get('summary') if isinstance(document.get('summary'), list) else []
    for item in summary:
        if isinstance(item, dict):
            run['summary'].append(_json_summary(item))
    _fill_from_summary(run)
    return run


def _json_text(value):
    return value.strip() if isinstance(value, str) else None


def _json_test(run, test):
    options = test.get('Options') if isinstance(test.get('Options'), dict) else {}
    parameters = test.get('Parameters') if isinstance(test.get('Parameters'), dict) else {}
    if run['api'] is None:
        for key, value in options.items():
            if isinstance(value, (str, int, float)) and not isinstance(value, bool):
                _set_option(run, key, str(value).strip())
        if run['transfer_size_bytes'] is None:
            run['transfer_size_bytes'] = _json_int(parameters.get('transferSize'))
        if run['block_size_bytes'] is None:
            run['block_size_bytes'] = _json_int(parameters.get('blockSize'))
        if run['tasks_per_node'] is None:
            run['tasks_per_node'] = _json_int(parameters.get('tasksPerNode'))
    results = test.get('Results') if isinstance(test.get('Results'), list) else []
    for iteration, rows in enumerate(results):
        rows = rows if isinstance(rows, list) else [rows]
        for row in rows:
            if isinstance(row, dict) and isinstance(row.get('access'), str):
                run['results'].append(_json_result(row, iteration))
    maximum = test.get('max') if isinstance(test.get('max'), dict) else {}
    for operation in ('write', 'read'):
        if operation + 'MiB' in maximum:
            run['max'][operation] = {'mib_s': _json_float(maximum.get(operation + 'MiB')),
                                     'mb_s': _json_float(maximum.get(operation + 'MB'))}


def _json_result(row, iteration):
    return {
        'access': row['access'], 'bw_mib_s': _json_float(row.get('bwMiB')), 'iops': _json_float(row.get('iops')),
        'latency_s': _json_float(row.get('latency')), 'block_kib': _json_float(row.get('blockKiB')),
        'xfer_kib': _json_float(row.get('xferKiB')), 'open_s': _json_float(row.get('openTime')),
        'wrrd_s': _json_float(row.get('wrRdTime')), 'close_s': _json_float(row.get('closeTime')),
        'total_s': _json_float(row.get('totalTime')), 'iter': iteration,
    }


def _json_summary(item):
    fpp = _json_int(item.get('filePerProc'))
    return {
        'operation': _json_text(item.get('operation')), 'max_mib_s': _json_float(item.get('bwMaxMIB')),
        'min_mib_s': _json_float(item.get('bwMinMIB')), 'mean_mib_s': _json_float(item.get('bwMeanMIB')),
        'stddev_mib_s': _json_float(item.get('bwStdMIB')), 'max_ops': _json_float(item.get('OPsMax')),
        'min_ops': _json_float(item.get('OPsMin')), 'mean_ops': _json_float(item.get('OPsMean')),
        'stddev_ops': _json_float(item.get('OPsSD')), 'mean_s': _json_float(item.get('MeanTime')),
        'stonewall_s': _json_float(item.get('StoneWallTime')),
        'stonewall_mib_s': _json_float(item.get('StoneWallbwMeanMIB')),
        'test': _json_int(item.get('TestID')), 'tasks': _json_int(item.get('numTasks')),
        'tasks_per_node': _json_int(item.get('tasksPerNode')), 'repetitions': _json_int(item.get('repetitions')),
        'file_per_process': None if fpp is None else fpp != 0, 'segments': _json_int(item.get('segmentCount')),
        'block_size_bytes': _json_int(item.get('blockSize')),
        'transfer_size_bytes': _json_int(item.get('transferSize')),
        'aggregate_mib': _json_float(item.get('xsizeMiB')), 'api': _json_text(item.get('API')),
    }


# -- summaryFormat=CSV ----------------------------------------------------------------

def _csv_runs(lines):
    """Runs from CSV result rows (one run per header line)."""
    runs = []
    run = None
    columns = None
    for line in lines:
        if _CSV_HEADER_RE.match(line):
            run = _empty_run()
            runs.append(run)
            columns = [_RESULT_COLUMNS.get(name.strip()) for name in line.split(',')]
            continue
        if run is None or not _RESULT_ROW_RE.match(line.replace(',', ' ', 1)):
            continue
        tokens = [token.strip() for token in line.rstrip(',').split(',')]
        if len(tokens) != len(columns):
            continue
        record = dict((key, None) for key in _RESULT_KEYS)
        for key, token in zip(columns, tokens):
            if key == 'access':
                record[key] = token
            elif key == 'iter':
                record[key] = _int_or_none(token)
            elif key == 'tasks':
                if run['tasks'] is None:
                    run['tasks'] = _int_or_none(token)
            elif key is not None:
                record[key] = _value(token)
        run['results'].append(record)
    return runs


def parse_ior(text):
    """Parse IOR output into a list of runs (fields: RETURN of plugins/filter/parse_ior.py)."""
    text = ensure_text(text, 'parse_ior')
    lines = join_backslash_continuations(clean_lines(text))
    parser = _Parser()
    csv_seen = False
    for line in lines:
        if _CSV_HEADER_RE.match(line):
            csv_seen = True
            continue
        parser.feed(line)
    parser.finish()
    runs = parser.runs
    if '{' in text:
        runs.extend(_json_run(document) for document in _json_documents(text))
    if csv_seen:
        runs.extend(_csv_runs(lines))
    return runs
