# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Edge cases of parse_lctl_dl beyond the captured fixtures."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import ParserError
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.lctl_dl import parse_lctl_dl

OST_LINE = '  3 UP obdfilter testfs-OST0000 testfs-OST0000_UUID 5'


def _only(text):
    records = parse_lctl_dl(text)
    assert len(records) == 1, records
    return records[0]


@pytest.mark.parametrize('status', ['UP', 'AT', 'ST', 'IN', '--'])
def test_every_status_value(status):
    assert _only('%3d %s echo_client e_ecc e_ecc_UUID 1' % (7, status))['status'] == status


@pytest.mark.parametrize('line', [
    OST_LINE,                                  # padded lctl dl
    OST_LINE.strip(),                          # get_param -n devices
    '\t' + OST_LINE + '   ',                   # tabs and trailing blanks
    '# ' + OST_LINE,                           # quoted in a comment
    OST_LINE + '\r',                           # CRLF capture
])
def test_plain_forms(line):
    assert _only(line) == {'index': 3, 'status': 'UP', 'type': 'obdfilter', 'name': 'testfs-OST0000',
                           'uuid': 'testfs-OST0000_UUID', 'refcount': 5, 'nid': None, 'host': None}


def test_dash_t_nid_on_osc_line():
    record = _only('  4 UP osc testfs-OST0000-osc-ffff88 3c0e 5 192.168.1.10@o2ib')
    assert record['nid'] == '192.168.1.10@o2ib'
    assert record['refcount'] == 5


def test_backslash_wrapped_line():
    record = _only('  4 UP osc testfs-OST0000-osc-ffff88 \\\n   3c0e 5 10.0.0.2@tcp')
    assert (record['uuid'], record['refcount'], record['nid']) == ('3c0e', 5, '10.0.0.2@tcp')


def test_pdsh_prefix_keeps_host_per_line():
    text = 'oss01:   0 UP obdfilter a a_UUID 3\noss02:   1 UP obdfilter b b_UUID 3\n  2 UP ost OSS OSS_uuid 2'
    assert [r['host'] for r in parse_lctl_dl(text)] == ['oss01', 'oss02', None]


def test_dshbak_header_sets_host():
    text = '----------------\noss7\n----------------\n' + OST_LINE
    assert _only(text)['host'] == 'oss7'


def test_yaml_form_with_noise_and_two_items():
    text = ('[root@mds ~]# lctl dl -y\ndevices:\n- index: 0\n  status: UP\n  type: osd-ldiskfs\n  name: MGS-osd\n'
            '  uuid: MGS-osd_UUID\n  refcount: 4\n- index: 1\n  status: AT\n  type: mgs\n  name: MGS\n  uuid: MGS\n'
            '  refcount: 1\n[root@mds ~]# ')
    records = parse_lctl_dl(text)
    assert [(r['index'], r['status'], r['refcount']) for r in records] == [(0, 'UP', 4), (1, 'AT', 1)]


def test_yaml_from_pdsh_keeps_host():
    text = 'mds1: devices:\nmds1: - index: 0\nmds1:   status: UP\nmds1:   type: mgs\nmds1:   name: MGS\nmds1:   uuid: MGS\nmds1:   refcount: 7'
    assert _only(text) == {'index': 0, 'status': 'UP', 'type': 'mgs', 'name': 'MGS', 'uuid': 'MGS',
                           'refcount': 7, 'nid': None, 'host': 'mds1'}


def test_get_param_header_then_plain_lines():
    assert _only('devices=\n' + OST_LINE)['name'] == 'testfs-OST0000'


def test_glued_refcount_is_split_only_for_a_uuid():
    record = _only('1 UP mgc MGC1@tcp 1f45bb57-d9be-2ddb-c0b0-5431a49226705')
    assert (record['uuid'], record['refcount']) == ('1f45bb57-d9be-2ddb-c0b0-5431a4922670', 5)
    assert parse_lctl_dl('1 UP mgc MGC1@tcp not-a-uuid5') == []


@pytest.mark.parametrize('text', [
    '',
    'lctl > dl',
    'Number of Active OST devices : 4',
    '[LNet Rates of servers]\n[R] Avg: 1 RPC/s Min: 1 RPC/s Max: 1 RPC/s',
    '3 UP obdfilter',                       # too few fields
    '3 OK obdfilter a a_UUID 3',            # unknown status
    'x UP obdfilter a a_UUID 3',            # index not a number
    'status: UP\nname: lone',               # YAML keys without devices:
])
def test_other_text_gives_nothing(text):
    assert parse_lctl_dl(text) == []


def test_bytes_are_decoded():
    assert _only(OST_LINE.encode('utf-8'))['name'] == 'testfs-OST0000'


@pytest.mark.parametrize('value', [42, ['0 UP a b c 1'], {'a': 1}, b'\x00\x01\x02\x03' * 8])
def test_non_text_raises_parser_error(value):
    with pytest.raises(ParserError):
        parse_lctl_dl(value)


TOKENS = st.sampled_from(['  0 UP', 'osc', 'a_UUID', '3', 'devices:', '- index: 1', 'status: UP', 'oss1:', '\\',
                          '----', ' ', '--', '7e3c2a41-5e0b-4f63-8d5c-2b9f7a6c0d1199'])
LINES = st.lists(TOKENS | st.text(st.characters(blacklist_categories=('Cc', 'Cs')), max_size=10), max_size=8).map(' '.join)


@settings(max_examples=300, deadline=None)
@given(st.lists(LINES, max_size=20).map('\n'.join))
def test_any_text_gives_a_list_of_complete_records(text):
    for record in parse_lctl_dl(text):
        assert set(record) == {'index', 'status', 'type', 'name', 'uuid', 'refcount', 'nid', 'host'}
        assert isinstance(record['index'], int)
