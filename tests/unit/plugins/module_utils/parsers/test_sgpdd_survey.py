# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Edge cases of parse_sgpdd_survey beyond the captured fixtures."""

from __future__ import annotations

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import ParserError
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.sgpdd_survey import parse_sgpdd_survey

PREFIX = 'dev  1 sz  8388608K rsz 1024K crg     1 thr     1 '
CURRENT = PREFIX + 'write  190.12  [  190.12,  190.12]  read  205.88  [  205.88,  205.88]  '
WRITE = {'mib_s': 190.12, 'min_mib_s': 190.12, 'max_mib_s': 190.12, 'failed': 0, 'status': 'ok'}
READ = {'mib_s': 205.88, 'min_mib_s': 205.88, 'max_mib_s': 205.88, 'failed': 0, 'status': 'ok'}


def _only(text):
    records = parse_sgpdd_survey(text)
    assert len(records) == 1
    return records[0]


def test_current_record():
    assert _only(CURRENT) == {'dev': 1, 'size_kib': 8388608, 'rsz_kib': 1024, 'crg': 1, 'thr': 1, 'host': None,
                              'devices': None, 'enomem': False, 'tests': {'write': WRITE, 'read': READ}}


@pytest.mark.parametrize('bracket,low,high', [
    ('[  100.69,  106.49]', 100.69, 106.49),
    ('[ 1234.56, 2345.67]', 1234.56, 2345.67),
    ('[12345.67,23456.78]', 12345.67, 23456.78),   # both widths overflow
])
def test_bracket_widths(bracket, low, high):
    assert _only(PREFIX + 'read 6720.94  ' + bracket)['tests']['read'] == {
        'mib_s': 6720.94, 'min_mib_s': low, 'max_mib_s': high, 'failed': 0, 'status': 'ok'}


def test_enomem_has_no_tests():
    record = _only(PREFIX.replace('crg     1 thr     1', 'crg   256 thr  4096') + 'ENOMEM')
    assert record['enomem'] is True and record['tests'] == {} and record['thr'] == 4096


def test_failed_instances():
    tests = _only('dev  2 sz 16777216K rsz 1024K crg     8 thr    16 write 2 failed read 16 failed ')['tests']
    assert tests == {'write': {'mib_s': None, 'min_mib_s': None, 'max_mib_s': None, 'failed': 2, 'status': 'failed'},
                     'read': {'mib_s': None, 'min_mib_s': None, 'max_mib_s': None, 'failed': 16, 'status': 'failed'}}


def test_error_found_messages_inside_the_record_are_removed():
    text = ('dev  2 sz 16777216K rsz 1024K crg     8 thr    16 write Error found in /tmp/x.detail_tmp_0_3_local\n'
            'Error found in /tmp/x.detail_tmp_1_3_local\n'
            '2 failed read  205.88  [  205.88,  205.88]  \n')
    tests = _only(text)['tests']
    assert tests['write']['failed'] == 2 and tests['write']['status'] == 'failed'
    assert tests['read']['status'] == 'ok'


@pytest.mark.parametrize('line,expected', [
    # Lustre 2.4: dev prefix, per-action "MB/s N x slowest = product MB/s"
    (PREFIX + 'write  180.45 MB/s     1 x 180.50 =  180.50 MB/s read  190.00 MB/s     1 x 190.10 =  190.10 MB/s ',
     {'dev': 1, 'crg': 1, 'thr': 1, 'tests': {
         'write': {'mib_s': 180.45, 'min_mib_s': None, 'max_mib_s': None, 'failed': 0, 'status': 'ok',
                   'instances': 1, 'slowest_instance_mib_s': 180.5},
         'read': {'mib_s': 190.0, 'min_mib_s': None, 'max_mib_s': None, 'failed': 0, 'status': 'ok',
                  'instances': 1, 'slowest_instance_mib_s': 190.1}}}),
    # 2004-2012: total_size, crg before thr, actions named
    ('total_size 16777216K rsz 1024 crg     4 thr     8 write  300.00 MB/s     8 x  37.20 =  297.60 MB/s ',
     {'dev': 8, 'crg': 4, 'thr': 8, 'tests': {
         'write': {'mib_s': 300.0, 'min_mib_s': None, 'max_mib_s': None, 'failed': 0, 'status': 'ok',
                   'instances': 8, 'slowest_instance_mib_s': 37.2}}}),
    # the oldest line: thr before crg, no action name -> "total"
    ('total_size  8388608K rsz 1024 thr     1 crg   1  180.45 MB/s   1 x  180.50 =  180.50 MB/s',
     {'dev': 1, 'crg': 1, 'thr': 1, 'tests': {
         'total': {'mib_s': 180.45, 'min_mib_s': None, 'max_mib_s': None, 'failed': 0, 'status': 'ok',
                   'instances': 1, 'slowest_instance_mib_s': 180.5}}}),
    # the oldest failure form "failed N"
    ('total_size  8388608K rsz 1024 thr     4 crg   2 failed 2',
     {'dev': None, 'crg': 2, 'thr': 4, 'tests': {
         'total': {'mib_s': None, 'min_mib_s': None, 'max_mib_s': None, 'failed': 2, 'status': 'failed'}}}),
])
def test_legacy_forms(line, expected):
    record = _only(line)
    assert {key: record[key] for key in expected} == expected


@pytest.mark.parametrize('text', [
    # the Lustre manual: trailing backslash, continuation starting with "="
    'total_size 8388608K rsz 1024 thr 1 crg 1 180.45 MB/s 1 x 180.50 \\\n        = 180.50 MB/s\n',
    # a mail client wrapping before "=" without a backslash
    'total_size 8388608K rsz 1024 thr 1 crg 1 180.45 MB/s 1 x 180.50\n= 180.50 MB/s\n',
])
def test_wrapped_legacy_record(text):
    assert _only(text)['tests']['total']['slowest_instance_mib_s'] == 180.5


@pytest.mark.parametrize('text', [
    PREFIX.rstrip() + '\nwrite  190.12  [  190.12,  190.12]\nread  205.88  [  205.88,  205.88]\n',
    PREFIX + 'write  190.12  [  190.12,\n190.12]  read  205.88  [  205.88,  205.88]\n',
    '\t# ' + CURRENT + '\r\n',
])
def test_wrapped_current_record(text):
    assert _only(text)['tests'] == {'write': WRITE, 'read': READ}


def test_header_gives_host_and_devices():
    text = 'Wed May  1 13:45:02 UTC 2024 sgpdd-survey on oss1:/dev/sdb oss2:/dev/sdc from mgmt1\n' + CURRENT
    record = _only(text)
    assert record['host'] == 'mgmt1' and record['devices'] == ['oss1:/dev/sdb', 'oss2:/dev/sdc']


def test_noise_and_detail_markers_are_not_records():
    text = '\n'.join([
        '[root@oss1 ~]# scsidevs=/dev/sdb sgpdd-survey',
        'loading the sg kernel module on oss1',
        'Can\'t find SG device for oss1:/dev/sdb1, testing for partition',
        CURRENT,
        '==============> ' + PREFIX,
        '=====> write',
        'time to transfer data was 44.086533 secs, 190.25 MB/sec',
    ])
    records = parse_sgpdd_survey(text)
    assert records[0]['tests'] == {'write': WRITE, 'read': READ}
    # the detail file's "=====> write" marker never becomes a test
    assert all(record['tests'] == {} for record in records[1:])


def test_pdsh_prefixes():
    text = 'oss1: ' + PREFIX.rstrip() + '\noss2: ' + CURRENT + '\noss1: write  190.12  [  190.12,  190.12]\n'
    records = parse_sgpdd_survey(text)
    assert [r['host'] for r in records] == ['oss1', 'oss2']
    assert records[0]['tests'] == {'write': WRITE}


def test_truncated_action_is_incomplete():
    tests = _only(PREFIX + 'write  190.12  [  190.12,  190.12]  read ')['tests']
    assert tests['read'] == {'mib_s': None, 'min_mib_s': None, 'max_mib_s': None, 'failed': None, 'status': 'incomplete'}


@pytest.mark.parametrize('text', [
    '',
    'ost 8 sz 67108864K rsz 1024K obj    8 thr    8 write  613.54 [ 64.00, 82.00]',
    'mdt 1 file  100000 dir    4 thr    4 create 5652.05 [ 999.01,46940.48]',
    'time to transfer data was 18.786448 secs, 57.16 MB/sec\n2097152+0 records in\n',
    'write 6036.79  [  100.69,  106.49]',
])
def test_other_text_gives_empty_list(text):
    assert parse_sgpdd_survey(text) == []


def test_bytes_and_none():
    assert _only(CURRENT.encode('utf-8'))['tests']['read'] == READ
    assert parse_sgpdd_survey(None) == []


@pytest.mark.parametrize('value', [3, [CURRENT], {'dev': 1}, b'\x00\x02\x03\x04' * 5])
def test_non_text_raises_parser_error(value):
    with pytest.raises(ParserError):
        parse_sgpdd_survey(value)
