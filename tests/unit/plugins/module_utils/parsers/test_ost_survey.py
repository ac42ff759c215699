# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Edge cases of parse_ost_survey beyond the captured fixtures."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import ParserError
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.ost_survey import empty_result, parse_ost_survey

SUMMARY = """Number of Active OST devices : 2
Worst  Read OST indx: 1 speed: 401.226312
Best   Read OST indx: 0 speed: 455.390120
Read Average: 428.308216 +/- 27.081904 MB/s
Worst  Write OST indx: 1 speed: 288.504911
Best   Write OST indx: 0 speed: 301.118204
Write Average: 294.811558 +/- 6.306647 MB/s
Ost#  Read(MB/s)  Write(MB/s)  Read-time  Write-time
----------------------------------------------------
0     455.390       301.118        0.066      0.100
1     401.226       288.505        0.075      0.104
"""
TEXT_CHARS = st.characters(blacklist_categories=('Cc', 'Cs')) | st.just('\n')


def test_summary_fields():
    result = parse_ost_survey(SUMMARY)
    assert result['active_osts'] == 2 and result['inactive_osts'] == 0
    assert result['read'] == {'worst': {'ost': 1, 'mib_s': 401.226312}, 'best': {'ost': 0, 'mib_s': 455.39012},
                              'avg_mib_s': 428.308216, 'stddev_mib_s': 27.081904}
    assert result['osts'][1] == {'ost': 1, 'read_mib_s': 401.226, 'write_mib_s': 288.505, 'read_time_s': 0.075,
                                 'write_time_s': 0.104, 'active': True}


def test_header_line():
    result = parse_ost_survey('/usr/bin/ost-survey: 10/19/22 OST speed survey on /mnt/lustre from 10.0.0.9@tcp\n' + SUMMARY)
    assert (result['date'], result['mount_point'], result['client_nid']) == ('10/19/22', '/mnt/lustre', '10.0.0.9@tcp')


@pytest.mark.parametrize('decorate', [
    lambda line: '    ' + line,             # indented in a mail
    lambda line: '# ' + line,               # quoted as a comment
    lambda line: line + '   \r',            # trailing blanks, CRLF
])
def test_noise_around_lines_is_ignored(decorate):
    text = '[root@client ~]# ost-survey /mnt/lustre\n' + '\n'.join(decorate(line) for line in SUMMARY.splitlines())
    assert parse_ost_survey(text) == parse_ost_survey(SUMMARY)


def test_word_broken_off_by_wrapping_is_joined():
    text = SUMMARY.replace('Best   Read OST', 'Best\nRead OST')
    assert parse_ost_survey(text)['read']['best'] == {'ost': 0, 'mib_s': 455.39012}


def test_inactive_row_has_null_figures():
    text = SUMMARY + '2     Inactive ost\n'
    expected = {'ost': 2, 'read_mib_s': None, 'write_mib_s': None, 'read_time_s': None, 'write_time_s': None, 'active': False}
    assert parse_ost_survey(text)['osts'][2] == expected


def test_single_ost_without_statistics_lines():
    text = 'Number of Active OST devices : 1\nOst#  Read(MB/s)  Write(MB/s)  Read-time  Write-time\n0     10.000       20.000        3.000      1.500\n'
    result = parse_ost_survey(text)
    assert result['read'] == {'worst': None, 'best': None, 'avg_mib_s': None, 'stddev_mib_s': None}
    assert result['osts'][0]['write_mib_s'] == 20.0


def test_no_active_ost():
    result = parse_ost_survey("Number of Active OST devices : 0\nNumber of non active ots(s): 3\nThere is no active OST's found\n")
    assert (result['no_active_osts'], result['active_osts'], result['inactive_osts'], result['osts']) == (True, 0, 3, [])


def test_table_rows_need_a_survey_context():
    assert parse_ost_survey('0     455.390       301.118        0.066      0.100') == empty_result()


@pytest.mark.parametrize('text', ['', '  0 UP mgs MGS MGS 5', 'dev 1 sz 1K rsz 1K crg 1 thr 1 write 1.00 [ 1.00, 1.00]',
                                  '[LNet Rates of servers]\n[R] Avg: 1 RPC/s Min: 1 RPC/s Max: 1 RPC/s'])
def test_other_text_gives_the_empty_object(text):
    assert parse_ost_survey(text) == empty_result()


def test_bytes_are_decoded():
    assert parse_ost_survey(SUMMARY.encode('utf-8'))['active_osts'] == 2


@pytest.mark.parametrize('value', [1, [SUMMARY], b'\x02\x03' * 30])
def test_non_text_raises_parser_error(value):
    with pytest.raises(ParserError):
        parse_ost_survey(value)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(SUMMARY.splitlines() + ['2     Inactive ost', 'Worst', 'Best', "There is no active OST's found",
                                                        'Average read Speed: 1.0', 'Ost index 0 Read speed 1 Write speed 2'])
                | st.text(TEXT_CHARS, max_size=30), max_size=25).map('\n'.join))
def test_any_text_keeps_the_shape(text):
    result = parse_ost_survey(text)
    assert set(result) == set(empty_result())
    assert [entry['ost'] for entry in result['osts']] == sorted({entry['ost'] for entry in result['osts']})
