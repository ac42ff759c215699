# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Edge cases of parse_mds_survey beyond the captured fixtures."""

from __future__ import annotations

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import ParserError
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.mds_survey import parse_mds_survey

PREFIX = 'mdt 1 file  100000 dir    4 thr    4 '
CREATE = {'ops_s': 5652.05, 'min_ops_s': 999.01, 'max_ops_s': 46940.48, 'status': 'ok'}
DESTROY = {'ops_s': 5797.79, 'min_ops_s': 0.0, 'max_ops_s': 52951.55, 'status': 'ok'}
ERROR = {'ops_s': None, 'min_ops_s': None, 'max_ops_s': None, 'status': 'error'}


def _tests(text):
    records = parse_mds_survey(text)
    assert len(records) == 1
    return records[0]['tests']


@pytest.mark.parametrize('line', [
    # README.mds-survey, 2.2-2.4 spacing
    PREFIX + 'create 5652.05 [ 999.01,46940.48] destroy 5797.79 [   0.00,52951.55]',
    # current "%7.2f [ %7.2f, %7.2f] "
    PREFIX + 'create 5652.05 [  999.01, 46940.48] destroy 5797.79 [    0.00, 52951.55] ',
    # spacing collapsed (Lustre manual)
    'mdt 1 file 100000 dir 4 thr 4 create 5652.05 [ 999.01,46940.48] destroy 5797.79 [ 0.00,52951.55] ',
])
def test_every_spacing(line):
    assert _tests(line) == {'create': CREATE, 'destroy': DESTROY}


def test_record_fields_and_min_zero_is_a_number():
    record = parse_mds_survey(PREFIX + 'create 5652.05 [ 999.01,46940.48] destroy 5797.79 [   0.00,52951.55]')[0]
    assert (record['mdt'], record['file'], record['dir'], record['thr'], record['host']) == (1, 100000, 4, 4, None)
    assert record['tests']['destroy']['min_ops_s'] == 0.0 and record['tests']['destroy']['min_ops_s'] is not None


def test_current_error_has_no_rate():
    tests = _tests(PREFIX + 'create 5652.05 [  999.01, 46940.48] md_getattr             ERROR destroy 5797.79 [    0.00, 52951.55] ')
    assert tests == {'create': CREATE, 'md_getattr': ERROR, 'destroy': DESTROY}


@pytest.mark.parametrize('token,status', [('ERROR', 'error'), ('SHORT', 'short')])
def test_legacy_rate_then_token(token, status):
    tests = _tests(PREFIX + 'create 5652.05             %s destroy 5797.79 [   0.00,52951.55]' % token)
    assert tests['create'] == {'ops_s': 5652.05, 'min_ops_s': None, 'max_ops_s': None, 'status': status}
    assert tests['destroy'] == DESTROY


def test_wide_file_field_and_wide_rates():
    record = parse_mds_survey('mdt 4 file 12000000 dir  128 thr 1024 create 123456.78 [12345.67,234567.89] ')[0]
    assert (record['mdt'], record['file'], record['dir'], record['thr']) == (4, 12000000, 128, 1024)
    assert record['tests']['create'] == {'ops_s': 123456.78, 'min_ops_s': 12345.67, 'max_ops_s': 234567.89, 'status': 'ok'}


@pytest.mark.parametrize('text', [
    PREFIX.rstrip() + '\ncreate 5652.05 [ 999.01,46940.48]\ndestroy 5797.79 [   0.00,52951.55]\n',
    PREFIX + 'create 5652.05 [ 999.01,46940.48] \\\n        destroy 5797.79 [   0.00,52951.55]\n',
    PREFIX + 'create 5652.05 [ 999.01,\n46940.48] destroy 5797.79 [   0.00,52951.55]\n',
    '# ' + PREFIX + 'create 5652.05 [ 999.01,46940.48]\r\n# destroy 5797.79 [   0.00,52951.55]\r\n',
])
def test_wrapped_records_are_joined(text):
    assert _tests(text) == {'create': CREATE, 'destroy': DESTROY}


def test_header_sets_host_and_noise_is_skipped():
    text = '\n'.join([
        '[root@mds1 ~]# thrhi=8 mds-survey',
        'Wed May  1 13:45:02 UTC 2024 /usr/bin/mds-survey from mds1',
        PREFIX + 'create 5652.05 [ 999.01,46940.48]',
        'created directories on mds1:testfs-MDT0000_ecc failed',
        'destroy 5797.79 [   0.00,52951.55]',
    ])
    records = parse_mds_survey(text)
    assert records[0]['host'] == 'mds1'
    # the message line ends the record: the destroy line after it is not glued on
    assert list(records[0]['tests']) == ['create']


def test_pdsh_prefixes():
    text = ('mds01: ' + PREFIX + 'create 5652.05 [ 999.01,46940.48]\n'
            'mds02: ' + PREFIX + 'create             ERROR\n'
            'mds01: destroy 5797.79 [   0.00,52951.55]\n')
    records = parse_mds_survey(text)
    assert [r['host'] for r in records] == ['mds01', 'mds02']
    assert records[0]['tests'] == {'create': CREATE, 'destroy': DESTROY}
    assert records[1]['tests'] == {'create': ERROR}


def test_truncated_test_is_incomplete():
    tests = _tests(PREFIX + 'create 5652.05 [ 999.01,46940.48] destroy 5797.79')
    assert tests['destroy'] == {'ops_s': 5797.79, 'min_ops_s': None, 'max_ops_s': None, 'status': 'incomplete'}


@pytest.mark.parametrize('text', [
    '',
    'ost 8 sz 67108864K rsz 1024K obj    8 thr    8 write  613.54 [ 64.00, 82.00]',
    'dev 30 sz 125829120K rsz 1024K crg    60 thr   120 write 6036.79  [  100.69,  106.49]',
    'mdt 1             is the total number of MDTs under test.',
    '-- started at 05/01/2024 13:45:02 --\n   File creation             :       1066.1',
])
def test_other_text_gives_empty_list(text):
    assert parse_mds_survey(text) == []


def test_bytes_and_none():
    assert _tests((PREFIX + 'create 5652.05 [ 999.01,46940.48]').encode('utf-8')) == {'create': CREATE}
    assert parse_mds_survey(None) == []


@pytest.mark.parametrize('value', [7, [PREFIX], {'mdt': 1}, b'\xff\x00\x01\x02' * 8])
def test_non_text_raises_parser_error(value):
    with pytest.raises(ParserError):
        parse_mds_survey(value)
