# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Edge cases of parse_sgp_dd beyond the captured fixtures."""

from __future__ import annotations

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import ParserError
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.sgp_dd import parse_sgp_dd

EMPTY = {'time_s': None, 'mb_s': None, 'records_in': None, 'records_out': None, 'errors': [],
         'dio_incomplete': None, 'remaining_blocks': None}
RECORDS = '2097152+0 records in\n2097152+0 records out\n'


@pytest.mark.parametrize('line,time_s,mb_s', [
    # sg3_utils <= 1.47
    ('time to transfer data was 18.786448 secs, 57.16 MB/sec', 18.786448, 57.16),
    ('time to transfer data was 0.000004 secs', 0.000004, None),
    # sg3_utils >= 1.48
    ('time to copy data: 18.786448 secs at 57.16 MB/sec', 18.786448, 57.16),
    ('time to copy data: 6.403215 secs at 812.4 kB/sec', 6.403215, 0.8124),
    ('time to copy data: 0.000004 secs', 0.000004, None),
])
def test_timing_line_of_every_version(line, time_s, mb_s):
    result = parse_sgp_dd(line + '\n' + RECORDS)
    assert result['time_s'] == time_s
    assert result['mb_s'] == (pytest.approx(mb_s) if mb_s is not None else None)
    assert result['records_in'] == {'full': 2097152, 'partial': 0}


def test_final_report_wins_over_progress_reports():
    text = ('time to copy data so far: 5.000123 secs at 81.20 MB/sec (delta 80.10 MB/sec)\n'
            '  405504+0 records in\n  0+0 records out\n'
            'time to copy data: 12.884203 secs at 83.33 MB/sec\n'
            '2097152+0 records in\n0+0 records out\n')
    result = parse_sgp_dd(text)
    assert (result['time_s'], result['mb_s']) == (12.884203, 83.33)
    assert result['records_in'] == {'full': 2097152, 'partial': 0}
    assert result['records_out'] == {'full': 0, 'partial': 0}


def test_progress_report_alone_is_used():
    result = parse_sgp_dd('time to copy data so far: 5.000123 secs at 81.20 MB/sec (delta 80.10 MB/sec)\n')
    assert (result['time_s'], result['mb_s']) == (5.000123, 81.2)


def test_partial_records_errors_dio_and_remaining_blocks():
    text = '\n'.join([
        'sgp_dd: error processing sense data',
        'Medium Error: Unrecovered read error',
        'time to transfer data was 6.403215 secs, 0.82 MB/sec',
        '>>>> Some error occurred, remaining blocks=10112',
        '10240+0 records in',
        '128+3 records out',
        '>> Direct IO requested but incomplete 7 times',
    ])
    result = parse_sgp_dd(text)
    assert result['records_out'] == {'full': 128, 'partial': 3}
    assert result['errors'] == ['sgp_dd: error processing sense data', 'Medium Error: Unrecovered read error',
                                '>>>> Some error occurred, remaining blocks=10112']
    assert result['dio_incomplete'] == 7
    assert result['remaining_blocks'] == 10112


def test_verbose_and_shell_lines_are_ignored():
    text = '\n'.join([
        '[root@oss1 ~]# sgp_dd if=/dev/sg2 of=/dev/null bs=512 bpt=2048 thr=4 count=2097152 time=1 verbose=1',
        'Reducing read to 64 blocks per loop',
        'sgp_dd: open input, flags=0x2',
        '    # time to transfer data was 18.786448 secs, 57.16 MB/sec',
        RECORDS,
        'real    0m18.799s',
    ])
    result = parse_sgp_dd(text)
    assert result == dict(EMPTY, time_s=18.786448, mb_s=57.16, records_in={'full': 2097152, 'partial': 0},
                          records_out={'full': 2097152, 'partial': 0})


def test_no_timing_line_gives_null_time():
    result = parse_sgp_dd(RECORDS)
    assert result['time_s'] is None and result['mb_s'] is None
    assert result['records_out'] == {'full': 2097152, 'partial': 0}


def test_tool_error_without_timing_is_kept():
    result = parse_sgp_dd('sgp_dd: could not open /dev/sg9 for sg reading: No such file or directory\n')
    assert result == EMPTY  # no line mentions an error, so there is nothing to collect
    result = parse_sgp_dd('sgp_dd: SG_SET_RESERVED_SIZE error: Invalid argument\n')
    assert result['errors'] == ['sgp_dd: SG_SET_RESERVED_SIZE error: Invalid argument']


@pytest.mark.parametrize('text', [
    '',
    'ost 8 sz 67108864K rsz 1024K obj    8 thr    8 write  613.54             ERROR',
    'error: test_brw-1: #1 - Cannot allocate memory on write',
    'dev  1 sz  8388608K rsz 1024K crg     1 thr     1 write 1 failed',
    '1+0 records',
])
def test_other_text_gives_empty_object(text):
    assert parse_sgp_dd(text) == EMPTY


def test_bytes_and_none():
    assert parse_sgp_dd(b'time to transfer data was 1.5 secs, 2.00 MB/sec\n')['mb_s'] == 2.0
    assert parse_sgp_dd(None) == EMPTY


@pytest.mark.parametrize('value', [0, ['time to copy data: 1 secs'], {'mb_s': 1}, b'\x00\x01' * 20])
def test_non_text_raises_parser_error(value):
    with pytest.raises(ParserError):
        parse_sgp_dd(value)
