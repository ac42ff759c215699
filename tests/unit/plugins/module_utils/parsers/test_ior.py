# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Edge cases of parse_ior beyond the captured fixtures.

The 2.x text, JSON and CSV inputs below are laid out exactly as IOR's printf
formats write them (hpc/ior src/C/IOR.c at 2.10.3, src/ior-output.c at 4.0.0).
"""

from __future__ import annotations

import json

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import ParserError, read_size
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.ior import parse_ior

from ansible_collections.lustre.iokit.tests.unit.plugins.module_utils.parsers.test_parsers_linear import (
    FULL, _fill, _lines, _nonlinear,
)

RESULTS_HEAD = ('access    bw(MiB/s)  IOPS       Latency(s)  block(KiB) xfer(KiB)  open(s)    wr/rd(s)   close(s)   '
                'total(s)   iter\n'
                '------    ---------  ----       ----------  ---------- ---------  --------   --------   --------   '
                '--------   ----\n')
SUMMARY_HEAD = ('Operation   Max(MiB)   Min(MiB)  Mean(MiB)     StdDev   Max(OPs)   Min(OPs)  Mean(OPs)     StdDev    '
                'Mean(s) Stonewall(s) Stonewall(MiB) Test# #Tasks tPN reps fPP reord reordoff reordrand seed segcnt   '
                'blksiz    xsize aggs(MiB)   API RefNum\n')

IOR_2_10 = """IOR-2.10.3: MPI Coordinated Test of Parallel I/O

Run began: Tue Aug  4 20:37:20 2015
Command line used: /opt/IOR/src/C/IOR -a POSIX -i 2 -N 4 -b 2g -t 2m -s 1 -v -F
Machine: Linux node-001

Summary:
\tapi                = POSIX
\ttest filename      = /mnt/lustre/ior
\taccess             = file-per-process
\tpattern            = segmented (1 segment)
\tordering in a file = sequential offsets
\tordering inter file= no tasks offsets
\tclients            = 4 (1 per node)
\trepetitions        = 2
\txfersize           = 2 MiB
\tblocksize          = 2 GiB
\taggregate filesize = 8 GiB

access    bw(MiB/s)  block(KiB) xfer(KiB)  open(s)    wr/rd(s)   close(s) total(s)  iter
------    ---------  ---------- ---------  --------   --------   --------  --------   ----
write     812.45     2097152    2048.00    0.001232   10.08      0.003355   10.08      0    XXCEL
read      1490.11    2097152    2048.00    0.000421   5.50       0.000312   5.50       0    XXCEL
write     799.10     2097152    2048.00    0.001301   10.25      0.003101   10.25      1    XXCEL
read      1502.87    2097152    2048.00    0.000399   5.45       0.000330   5.45       1    XXCEL

Max Write: 812.45 MiB/sec (851.91 MB/sec)
Max Read:  1502.87 MiB/sec (1575.87 MB/sec)

Summary of all tests:
Operation  Max (MiB)  Min (MiB)  Mean (MiB)   Std Dev  Max (OPs)  Min (OPs)  Mean (OPs)   Std Dev  Mean (s)  \
Op grep #Tasks tPN reps  fPP reord reordoff reordrand seed segcnt blksiz xsize aggsize

---------  ---------  ---------  ----------   -------  ---------  ---------  ----------   -------  --------
write         812.45     799.10      805.78      6.68     406.23     399.55      402.89      3.34  10.16500   \
4 1 2 1 0 1 0 0 1 2147483648 2097152 8589934592 0 POSIX EXCEL
read         1502.87    1490.11     1496.49      6.38     751.44     745.06      748.25      3.19   5.47500   \
4 1 2 1 0 1 0 0 1 2147483648 2097152 8589934592 0 POSIX EXCEL

Run finished: Tue Aug  4 20:38:02 2015
"""

JSON_4_0 = """{
  "Version": "4.0.0",
  "Began": "Mon Mar  4 10:00:00 2024",
  "Command line": "ior -a POSIX -w -r -C -e -F -t 1m -b 64m -i 2 -O summaryFormat=JSON",
  "Machine": "Linux client1",
  "tests": [
    {
      "TestID": 0,
      "StartTime": "Mon Mar  4 10:00:00 2024",
      "Parameters": {
        "testID": 0, "refnum": 0, "api": "POSIX", "nodes": 2, "tasksPerNode": 4, "repetitions": 2,
        "filePerProc": 1, "segmentCount": 1, "transferSize": 1048576, "blockSize": 67108864
      },
      "Options": {
        "api": "POSIX", "apiVersion": "", "test filename": "/mnt/lustre/ior/f", "access": "file-per-process",
        "type": "independent", "segments": 1, "ordering in a file": "sequential",
        "ordering inter file": "constant task offset", "task offset": 1, "nodes": 2, "tasks": 8,
        "clients per node": 4, "repetitions": 2, "xfersize": "1 MiB", "blocksize": "64 MiB",
        "aggregate filesize": "512 MiB"
      },
      "Results": [
        [
          {"access": "write", "bwMiB": 901.5, "blockKiB": 65536.0, "xferKiB": 1024.0, "iops": 905.1,
           "latency": 0.0088, "openTime": 0.01, "wrRdTime": 0.56, "closeTime": 0.002, "totalTime": 0.568},
          {"access": "read", "bwMiB": 1700.25, "blockKiB": 65536.0, "xferKiB": 1024.0, "iops": 1710.0,
           "latency": 0.0047, "openTime": 0.003, "wrRdTime": 0.299, "closeTime": 0.001, "totalTime": 0.3011},
          {"access": "remove", "totalTime": 0.02}
        ],
        [
          {"access": "write", "bwMiB": 880.0, "blockKiB": 65536.0, "xferKiB": 1024.0, "iops": 884.0,
           "latency": 0.009, "openTime": 0.01, "wrRdTime": 0.58, "closeTime": 0.002, "totalTime": 0.5818},
          {"access": "read", "bwMiB": "inf", "blockKiB": 65536.0, "xferKiB": 1024.0, "iops": 1690.0,
           "latency": 0.0048, "openTime": 0.003, "wrRdTime": 0.302, "closeTime": 0.001, "totalTime": 0.3029}
        ]
      ],
      "max": {"writeMiB": 901.5, "writeMB": 945.3, "readMiB": 1700.25, "readMB": 1782.84},
      "Finished": "Mon Mar  4 10:00:02 2024"
    }
  ],
  "summary": [
    {"operation": "write", "API": "POSIX", "TestID": 0, "ReferenceNumber": 0, "segmentCount": 1,
     "blockSize": 67108864, "transferSize": 1048576, "numTasks": 8, "tasksPerNode": 4, "repetitions": 2,
     "filePerProc": 1, "reorderTasks": 1, "taskPerNodeOffset": 1, "reorderTasksRandom": 0,
     "reorderTasksRandomSeed": 0, "bwMaxMIB": 901.5, "bwMinMIB": 880.0, "bwMeanMIB": 890.75, "bwStdMIB": 10.75,
     "OPsMax": 901.5, "OPsMin": 880.0, "OPsMean": 890.75, "OPsSD": 10.75, "MeanTime": 0.5749, "xsizeMiB": 512.0}
  ]
}
"""

CSV_4_0 = """access,bw(MiB/s),IOPS,Latency,block(KiB),xfer(KiB),open(s),wr/rd(s),close(s),total(s),numTasks,iter
write,565.6700,566.0000,0.0841,32768.0000,1024.0000,0.0100,2.7100,0.0020,2.7154,48,0
read,1200.5000,1201.0000,0.0400,32768.0000,1024.0000,0.0050,1.2700,0.0010,1.2794,48,0
write,560.0000,561.00
"""


def _run(text):
    runs = parse_ior(text)
    assert len(runs) == 1, runs
    return runs[0]


def test_ior_2_10_text_with_summary_block_and_excel_rows():
    run = _run(IOR_2_10)
    assert run['version'] == '2.10.3'
    assert run['command'].startswith('/opt/IOR/src/C/IOR -a POSIX')
    assert (run['api'], run['access'], run['tasks'], run['tasks_per_node'], run['nodes']) == (
        'POSIX', 'file-per-process', 4, 1, None)
    assert (run['repetitions'], run['segments']) == (2, 1)
    assert (run['transfer_size_bytes'], run['block_size_bytes']) == (2 * 1024 ** 2, 2 * 1024 ** 3)
    assert [(row['access'], row['iter'], row['iops']) for row in run['results']] == [
        ('write', 0, None), ('read', 0, None), ('write', 1, None), ('read', 1, None)]
    assert run['results'][1]['bw_mib_s'] == 1490.11
    assert run['max'] == {'write': {'mib_s': 812.45, 'mb_s': 851.91}, 'read': {'mib_s': 1502.87, 'mb_s': 1575.87}}
    write = run['summary'][0]
    assert (write['operation'], write['max_mib_s'], write['min_mib_s'], write['mean_mib_s'], write['stddev_mib_s']) == (
        'write', 812.45, 799.1, 805.78, 6.68)
    assert (write['max_ops'], write['stddev_ops'], write['mean_s']) == (406.23, 3.34, 10.165)
    assert (write['tasks'], write['tasks_per_node'], write['repetitions'], write['file_per_process']) == (4, 1, 2, True)
    assert write['aggregate_mib'] == 8192.0
    assert (write['test'], write['api']) == (0, 'POSIX')
    assert run['errors'] == []


def test_json_summary_format():
    run = _run(JSON_4_0)
    assert (run['version'], run['api'], run['access'], run['nodes'], run['tasks'], run['tasks_per_node']) == (
        '4.0.0', 'POSIX', 'file-per-process', 2, 8, 4)
    assert (run['transfer_size_bytes'], run['block_size_bytes'], run['repetitions']) == (1048576, 67108864, 2)
    assert [(row['access'], row['iter']) for row in run['results']] == [
        ('write', 0), ('read', 0), ('remove', 0), ('write', 1), ('read', 1)]
    assert run['results'][2]['total_s'] == 0.02 and run['results'][2]['bw_mib_s'] is None
    # IOR writes an infinite bandwidth as the string "inf": no measurement, not a JSON number.
    assert run['results'][4]['bw_mib_s'] is None
    assert run['max']['read'] == {'mib_s': 1700.25, 'mb_s': 1782.84}
    summary = run['summary'][0]
    assert (summary['mean_mib_s'], summary['stddev_ops'], summary['file_per_process'], summary['aggregate_mib']) == (
        890.75, 10.75, True, 512.0)
    assert summary['stonewall_s'] is None


def test_json_after_log_lines_and_broken_json_is_no_run():
    text = 'Commencing write performance test\n' + JSON_4_0
    assert _run(text)['version'] == '4.0.0'
    assert parse_ior('{\n  "tests": [ {"TestID": 0,\n') == []


def test_csv_summary_format_drops_the_cut_row():
    run = _run(CSV_4_0)
    assert run['tasks'] == 48
    assert [(row['access'], row['bw_mib_s'], row['latency_s'], row['iter']) for row in run['results']] == [
        ('write', 565.67, 0.0841, 0), ('read', 1200.5, 0.04, 0)]


def test_failed_run_keeps_errors_and_what_was_printed():
    text = ('IOR-3.3.0: MPI Coordinated Test of Parallel I/O\n'
            'Command line        : ior -w -F -t 1m -b 1g\n'
            'tasks               : 4\n'
            'WARNING: could not open file, retrying.\n'
            'ior ERROR: open64("/mnt/lustre/f.00000001", 66, 0664) failed, errno 28, No space left on device '
            '(aiori-POSIX.c:412)\n'
            '--------------------------------------------------------------------------\n'
            'MPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD\n'
            'with errorcode -1.\n'
            '[client1:01234] 3 more processes have sent help message help-mpi-api.txt / mpi-abort\n')
    run = _run(text)
    assert run['tasks'] == 4 and run['results'] == [] and run['summary'] == [] and run['max'] == {}
    assert run['errors'] == [
        'ior ERROR: open64("/mnt/lustre/f.00000001", 66, 0664) failed, errno 28, No space left on device '
        '(aiori-POSIX.c:412)',
        'MPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD']


def test_truncated_row_is_dropped_never_half_read():
    text = ('IOR-4.0.0: MPI Coordinated Test of Parallel I/O\n' + RESULTS_HEAD
            + 'write     1299.23    1299.84    0.022917    5242880    1024.00    10.79      118.17     0.000377   118.22     0\n'
            + 'read      5429       5431       0.005523    5242880    1024.00    0.0121\n')
    run = _run(text)
    assert [row['access'] for row in run['results']] == ['write']


def test_several_tests_in_one_invocation_split_at_test_id():
    def test_block(test_id, tasks, bandwidth):
        return ('TestID              : %d\n' % test_id
                + 'tasks               : %d\n' % tasks + RESULTS_HEAD
                + 'write     %s     1.0        0.1         1024.00    1024.00    0.1        1.0        0.1        1.1        0\n'
                % bandwidth
                + 'Max Write: %s MiB/sec (1.00 MB/sec)\n' % bandwidth)

    row = ('write        {bw}    {bw}    {bw}       0.00    {bw}    {bw}    {bw}       0.00    1.10000         NA'
           '            NA     {test}     {tasks}   1    1   1     0        1         0    0      1  1048576  1048576'
           '    1024.0 POSIX      0\n')
    text = ('IOR-3.3.0: MPI Coordinated Test of Parallel I/O\nCommand line        : ior -f script\n'
            + test_block(0, 2, '100.00') + test_block(1, 4, '200.00')
            + '\nSummary of all tests:\n' + SUMMARY_HEAD
            + row.format(bw='100.00', test=0, tasks=2) + row.format(bw='200.00', test=1, tasks=4)
            + 'Finished            : Mon Mar  4 10:00:02 2024\n')
    runs = parse_ior(text)
    assert [(run['version'], run['command'], run['tasks']) for run in runs] == [
        ('3.3.0', 'ior -f script', 2), ('3.3.0', 'ior -f script', 4)]
    assert [[row['mean_mib_s'] for row in run['summary']] for run in runs] == [[100.0], [200.0]]
    assert [run['max']['write']['mib_s'] for run in runs] == [100.0, 200.0]


def _task_lines(iteration, access, task, start, seconds):
    # One task's six stamps as IOR's per-task timer printf writes them at verbosity 3.
    stamps = (('open start', start), ('open stop', start + 0.5), ('start', start + 0.5),
              ('stop', start + 0.5 + seconds), ('close start', start + 0.5 + seconds), ('close stop', start + 1 + seconds))
    return ''.join('Test 0: Iter=%d, Task=%d, Time=%f, %s %s\n' % (iteration, task, stamp, access, name)
                   for name, stamp in stamps)


def test_per_task_timings_by_iteration_phase_and_task():
    text = ('IOR-4.0.0: MPI Coordinated Test of Parallel I/O\nCommand line        : ior -v -v -v -w -r -i 2\n'
            + _task_lines(0, 'write', 1, 1000.0, 4.0) + 'task 1 reading /mnt/f\n' + _task_lines(0, 'write', 0, 1000.0, 2.0)
            + RESULTS_HEAD
            + 'write     100.00     100.00     0.1         1024.00    1024.00    0.5        4.0        0.5        5.0        0\n'
            + _task_lines(0, 'read', 0, 1010.0, 1.0) + _task_lines(0, 'read', 1, 1010.0, 1.0)
            + _task_lines(1, 'write', 0, 1020.0, 3.0) + _task_lines(1, 'write', 1, 1020.0, 3.0))
    run = _run(text)
    timings = run['task_timings']
    assert [(row['iter'], row['access'], row['task']) for row in timings] == [
        (0, 'write', 1), (0, 'write', 0), (0, 'read', 0), (0, 'read', 1), (1, 'write', 0), (1, 'write', 1)]
    first = timings[0]
    assert first['test'] == 0 and first['open_start'] == 1000.0 and first['close_stop'] == 1005.0
    assert (first['open_s'], first['wrrd_s'], first['close_s'], first['total_s']) == (0.5, 4.0, 0.5, 5.0)
    assert timings[1]['wrrd_s'] == 2.0
    assert [row['access'] for row in run['results']] == ['write']


def test_per_task_timings_absent_leave_no_key_and_cut_lines_are_ignored():
    text = 'IOR-4.0.0: MPI Coordinated Test of Parallel I/O\n' + RESULTS_HEAD + (
        'write     100.00     100.00     0.1         1024.00    1024.00    0.5        4.0        0.5        5.0        0\n')
    assert 'task_timings' not in _run(text)
    cut = text + 'Test 0: Iter=0, Task=1, Time=1438735066.852707\nTest 0: Iter=0, Task=1, Time=nan, write stop\n'
    assert 'task_timings' not in _run(cut)


def test_stonewall_columns_and_nan_figures():
    text = ('IOR-4.0.0: MPI Coordinated Test of Parallel I/O\nMax Write: -nan MiB/sec (-nan MB/sec)\n'
            '\nSummary of all tests:\n' + SUMMARY_HEAD
            + 'write        1200.00    1100.00    1150.00      50.00    1200.00    1100.00    1150.00      50.00'
              '   30.00000      30.01       1180.55     0      8   4    2   1     1        1         0    0      1'
              ' 1073741824  1048576    8192.0 POSIX      0\n')
    run = _run(text)
    assert run['max'] == {'write': {'mib_s': None, 'mb_s': None}}
    assert (run['summary'][0]['stonewall_s'], run['summary'][0]['stonewall_mib_s']) == (30.01, 1180.55)
    # Filled from the summary where no options block was printed; nodes never is.
    assert (run['tasks'], run['tasks_per_node'], run['nodes'], run['block_size_bytes']) == (8, 4, None, 1073741824)


@pytest.mark.parametrize('text,expected', [
    ('1 MiB', 1048576), ('4096 bytes', 4096), ('2.50 GiB', int(2.5 * 1024 ** 3)), ('1m', 1048576),
    ('16777216', 16777216), ('539 GiB', 539 * 1024 ** 3), ('2.34 TiB', 2.34 * 1024 ** 4), ('1 XiB', None),
    ('', None), ('lots', None), ('1e308 MiB', None), (None, None), ('4 kB', 4096), ('2 PiB', 2 * 1024 ** 5),
])
def test_sizes(text, expected):
    # IOR's printed sizes, read by the parsers' one reader of printed sizes.
    assert read_size(text) == expected


@pytest.mark.parametrize('text', ['', 'hello\nworld\n', 'write read remove\n', 'Max Write:\n', '{}', '[1, 2]'])
def test_other_text_gives_no_run(text):
    assert parse_ior(text) == []


def test_not_text_raises_parser_error():
    with pytest.raises(ParserError):
        parse_ior(['IOR-3.3.0'])


def test_result_is_plain_json_for_every_form():
    for text in (IOR_2_10, JSON_4_0, CSV_4_0):
        json.dumps(parse_ior(text), allow_nan=False)


# Shapes that aim at this parser's own patterns (JSON search, banner, dashes, Max lines); the
# catalog-wide test covers the generic ones. A quarter of its size keeps this quick.
_IOR_SHAPES = (
    ('line of braces', lambda size: _fill('{', size)),
    ('brace lines', lambda size: _lines('{"tests": [', size)),
    ('line of IOR-', lambda size: _fill('IOR-1', size)),
    ('Max Write digits', lambda size: _fill('1', size, 'Max Write: ')),
    ('dashes then x', lambda size: _fill('-', size) + 'x'),
)
_SIZE = FULL // 4


@pytest.mark.parametrize('name,build', _IOR_SHAPES, ids=[shape[0] for shape in _IOR_SHAPES])
def test_cost_grows_linearly_on_ior_shapes(name, build):
    # measured as the catalog-wide test measures (its growth, limit and second look at a suspicious pair)
    slow = _nonlinear(parse_ior, [(name, build, _SIZE)])
    assert not slow, '\n'.join(slow)
