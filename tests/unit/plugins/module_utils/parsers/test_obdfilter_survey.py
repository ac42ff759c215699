# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Edge cases of parse_obdfilter_survey beyond the captured fixtures."""

from __future__ import annotations

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import ParserError
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.obdfilter_survey import parse_obdfilter_survey

PREFIX = 'ost  1 sz  1048576K rsz 1024K obj    1 thr    2 '
CURRENT = PREFIX + 'write  812.45 [ 380.00,  452.00] read 1015.33 [ 480.00,  530.00] '
OK_WRITE = {'mib_s': 812.45, 'min_mib_s': 380.0, 'max_mib_s': 452.0, 'status': 'ok'}
OK_READ = {'mib_s': 1015.33, 'min_mib_s': 480.0, 'max_mib_s': 530.0, 'status': 'ok'}


def _tests(text):
    records = parse_obdfilter_survey(text)
    assert len(records) == 1
    return records[0]['tests']


def test_record_fields_and_types():
    record = parse_obdfilter_survey(CURRENT)[0]
    assert record == {'ost': 1, 'size_kib': 1048576, 'rsz_kib': 1024, 'obj': 1, 'thr': 2, 'case': None,
                      'host': None, 'skipped': False, 'error': None, 'tests': {'write': OK_WRITE, 'read': OK_READ}}
    assert isinstance(record['size_kib'], int) and isinstance(record['tests']['write']['min_mib_s'], float)


@pytest.mark.parametrize('bracket,low,high', [
    ('[ 64.00, 82.00]', 64.0, 82.0),          # pre-2.9 with narrow numbers
    ('[ 601.97,2912.91]', 601.97, 2912.91),   # pre-2.9 [%7.2f,%7.2f], second value fills the width
    ('[1160.92,3450.85]', 1160.92, 3450.85),
    ('[ 380.00,  452.00]', 380.0, 452.0),     # 2.9+ [%7.2f, %7.2f]
    ('[1380.00, 4452.00]', 1380.0, 4452.0),   # 2.9+ overflow: "[1380.00," is one token
    ('[12345.67, 23456.78]', 12345.67, 23456.78),
])
def test_bracket_spacing_of_every_version(bracket, low, high):
    assert _tests(PREFIX + 'write 613.54 ' + bracket)['write'] == {
        'mib_s': 613.54, 'min_mib_s': low, 'max_mib_s': high, 'status': 'ok'}


@pytest.mark.parametrize('token,status', [('ERROR', 'error'), ('SHORT', 'short')])
def test_error_and_short_keep_the_aggregate(token, status):
    tests = _tests(PREFIX + 'write  120.50             %s read 401.77 [ 190.00,  215.00] ' % token)
    assert tests['write'] == {'mib_s': 120.5, 'min_mib_s': None, 'max_mib_s': None, 'status': status}
    assert tests['read']['status'] == 'ok'


def test_too_much_buffer_space_is_skipped():
    record = parse_obdfilter_survey(PREFIX + 'Too much buffer space')[0]
    assert record['skipped'] is True and record['tests'] == {}


def test_not_contiguous_objects_is_an_error():
    record = parse_obdfilter_survey(PREFIX + 'created object #s on oss1:testfs-OST0000_ecc not contiguous')[0]
    assert record['error'] == 'created object #s on oss1:testfs-OST0000_ecc not contiguous'
    assert record['tests'] == {}


def test_rsz_without_k_of_the_oldest_scripts():
    assert parse_obdfilter_survey('ost 8 sz 67108864K rsz 1024 obj 8 thr 8 write 613.54 [ 64.00, 82.00]')[0]['rsz_kib'] == 1024


def test_header_sets_case_and_host_for_following_records():
    text = ('Fri Sep 25 11:14:03 EDT 2015 Obdfilter-survey for case=network from oss2\n' + CURRENT + '\n'
            'Fri Sep 25 12:00:00 EDT 2015 Obdfilter-survey for case=disk from oss3\n' + CURRENT + '\n')
    records = parse_obdfilter_survey(text)
    assert [(r['case'], r['host']) for r in records] == [('network', 'oss2'), ('disk', 'oss3')]


@pytest.mark.parametrize('text', [
    # wrapped before each test name (commit message of LU-12168)
    PREFIX.rstrip() + '\nwrite  812.45 [ 380.00,  452.00]\nread 1015.33 [ 480.00,  530.00]\n',
    # trailing backslash
    PREFIX + 'write  812.45 [ 380.00,  452.00] \\\n   read 1015.33 [ 480.00,  530.00]\n',
    # a terminal breaking inside the bracket
    PREFIX + 'write  812.45 [ 380.00,\n452.00] read 1015.33 [ 480.00,  530.00]\n',
    # the bracket moved to the next line
    PREFIX + 'write  812.45\n[ 380.00,  452.00] read 1015.33 [ 480.00,  530.00]\n',
    # CRLF line ends, indentation, "# " quoting
    '    # ' + PREFIX + 'write  812.45 [ 380.00,  452.00]\r\n    # read 1015.33 [ 480.00,  530.00]\r\n',
])
def test_wrapped_records_are_joined(text):
    assert _tests(text) == {'write': OK_WRITE, 'read': OK_READ}


def test_wrapped_error_token_joins_its_test():
    assert _tests(PREFIX + 'write  120.50\n            ERROR\n')['write']['status'] == 'error'


def test_noise_lines_are_skipped_and_end_a_record():
    text = '\n'.join([
        '[root@oss1 ~]# case=disk obdfilter-survey',
        "using LCTL='/usr/sbin/lctl' lustre_root='' LUSTRE=''",
        CURRENT,
        'ERROR: 1 != 0',
        'done!',
        '...',
        '[node01:12345] 3 more processes have sent help message help-mpi-btl-openib.txt',
        'write 1.00 [ 1.00, 1.00]',
    ])
    assert _tests(text) == {'write': OK_WRITE, 'read': OK_READ}


def test_explanation_after_a_record_is_not_a_continuation():
    text = CURRENT + '\nost 8          is the total number of OSTs under test.\n'
    assert list(_tests(text)) == ['write', 'read']


def test_pdsh_prefixes_interleaved_from_two_servers():
    text = '\n'.join([
        'oss01: ' + PREFIX.rstrip(),
        'oss02: ' + PREFIX + 'write  10.00 [ 5.00,  5.00]',
        'oss01: write  812.45 [ 380.00,  452.00]',
        'oss02: read  20.00 [ 10.00,  10.00]',
        'oss01: read 1015.33 [ 480.00,  530.00]',
    ])
    records = parse_obdfilter_survey(text)
    assert [r['host'] for r in records] == ['oss01', 'oss02']
    assert records[0]['tests'] == {'write': OK_WRITE, 'read': OK_READ}
    assert sorted(records[1]['tests']) == ['read', 'write']


def test_truncated_test_is_incomplete():
    tests = _tests(PREFIX + 'write  812.45 [ 380.00,  452.00] read 1015.33')
    assert tests['read'] == {'mib_s': 1015.33, 'min_mib_s': None, 'max_mib_s': None, 'status': 'incomplete'}
    assert _tests(PREFIX + 'write')['write']['status'] == 'incomplete'


def test_awk_nan_rate_is_null():
    assert _tests(PREFIX + 'write -nan [ 1.00, 2.00]')['write']['mib_s'] is None


@pytest.mark.parametrize('text', [
    '',
    'dev 30 sz 125829120K rsz 1024K crg    60 thr   120 write 6036.79  [  100.69,  106.49]',
    'mdt 1 file  100000 dir    4 thr    4 create 5652.05 [ 999.01,46940.48]',
    '  0 UP osd-ldiskfs testfs-OST0000-osd testfs-OST0000-osd_UUID 4',
    'time to transfer data was 18.786448 secs, 57.16 MB/sec',
    'write 613.54 [ 64.00, 82.00]',
])
def test_other_text_gives_empty_list(text):
    assert parse_obdfilter_survey(text) == []


def test_bytes_and_none():
    assert parse_obdfilter_survey(CURRENT.encode('utf-8'))[0]['tests']['write'] == OK_WRITE
    assert parse_obdfilter_survey(None) == []


@pytest.mark.parametrize('value', [42, ['ost 1'], {'a': 1}, 1.5, b'\x00\x01\x02\x03' * 10])
def test_non_text_raises_parser_error(value):
    with pytest.raises(ParserError):
        parse_obdfilter_survey(value)
