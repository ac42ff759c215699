# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Edge cases of parse_lst_survey beyond the captured fixtures."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import ParserError
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.lst_survey import normalise_mode, parse_lst_survey

HEADER = 'Servers,Clients,Mode,Read_BW,Read_Rate,Write_BW,Write_Rate,Server_Errors,Client_Errors'
ROW = '10.0.0.1@tcp 10.0.0.2@tcp,10.0.0.3@tcp,read_4k,22,149981,608,299961,0,1'
TABLE_HEAD = '          Mode       Read MB/s       Read RPC/s      Write MB/S      Write RPC/s'
TEXT_CHARS = st.characters(blacklist_categories=('Cc', 'Cs')) | st.just('\n')


@pytest.mark.parametrize('label,mode', [
    ('read 4k', 'read_4k'), ('read_4k', 'read_4k'), ('WRITE_1M', 'write_1m'), ('rw 1m', 'rw_1m'),
    ('write 1024', 'write_1024'), ('ping', 'ping'), ('bogus', None), ('read', None),
])
def test_mode_normalisation(label, mode):
    assert normalise_mode(label) == mode


def test_csv_row_fields():
    (record,) = parse_lst_survey(HEADER + '\n' + ROW + '\n')
    assert record == {'servers': ['10.0.0.1@tcp', '10.0.0.2@tcp'], 'clients': ['10.0.0.3@tcp'], 'mode': 'read_4k',
                      'read_mib_s': 22, 'read_rpc_s': 149981, 'write_mib_s': 608, 'write_rpc_s': 299961,
                      'server_errors': 0, 'client_errors': 1, 'complete': True, 'error': None}


@pytest.mark.parametrize('separator', [';', '|', '\t', ', '])
def test_csv_separator_is_read_from_the_header(separator):
    text = HEADER.replace(',', separator) + '\n' + ROW.replace(',', separator)
    (record,) = parse_lst_survey(text)
    assert (record['mode'], record['client_errors']) == ('read_4k', 1)


def test_csv_rows_without_header_use_comma():
    assert [r['mode'] for r in parse_lst_survey(ROW + '\n' + ROW.replace('read_4k', 'ping'))] == ['read_4k', 'ping']


def test_csv_partial_row_at_end_without_newline():
    records = parse_lst_survey(HEADER + '\n' + ROW + '\n10.0.0.1@tcp,10.0.0.3@tcp')
    assert [r['complete'] for r in records] == [True, False]
    assert records[1]['mode'] is None and records[1]['servers'] == ['10.0.0.1@tcp']


def test_csv_partial_row_glued_to_the_next_header():
    records = parse_lst_survey(HEADER + '\n10.0.0.1@tcp,10.0.0.3@tcp' + HEADER + '\n' + ROW)
    assert [r['complete'] for r in records] == [False, True]


def test_two_field_line_without_header_is_not_a_partial_row():
    assert parse_lst_survey('hello,world') == []


@pytest.mark.parametrize('bad_row', [
    ROW.replace('read_4k', 'fly_4k'),
    ROW.replace(',22,', ',x,'),
    ROW + ',7',
])
def test_csv_rows_that_do_not_fit_are_skipped(bad_row):
    assert parse_lst_survey(HEADER + '\n' + bad_row) == []


def test_table_without_group_lines_has_null_groups():
    (record,) = parse_lst_survey(TABLE_HEAD + '\n       read 4k              22           149981             608           299961')
    assert (record['servers'], record['clients'], record['server_errors']) == (None, None, None)
    assert record['write_rpc_s'] == 299961


def test_table_columns_follow_the_header():
    text = '          Mode       Write MB/S      Write RPC/s\n      write_4k       563.24           132341'
    (record,) = parse_lst_survey(text)
    assert (record['read_mib_s'], record['write_mib_s'], record['write_rpc_s']) == (None, 563.24, 132341)


def test_table_row_with_wrong_number_of_values_is_skipped():
    assert parse_lst_survey(TABLE_HEAD + '\n       read 4k              22           149981') == []


def test_error_counts_go_on_the_last_row_of_the_block():
    text = ('Commence lst-survey - now\nServer Group: a@tcp\nClient Group: b@tcp\n' + TABLE_HEAD +
            '\n read_4k 1 2 3 4\n ping 5 6 7 8\nServer Errors: 3\nClient Errors: 1\nFinished lst-survey - later\n'
            'Commence lst-survey - now\nServer Group: c@tcp\nClient Group: b@tcp\n' + TABLE_HEAD + '\n ping 1 1 1 1\n')
    records = parse_lst_survey(text)
    assert [(r['servers'], r['server_errors'], r['client_errors']) for r in records] == [
        (['a@tcp'], None, None), (['a@tcp'], 3, 1), (['c@tcp'], None, None)]


def test_failed_samples_in_stdout_gives_an_incomplete_record():
    text = ('Commence lst-survey - now\nServer Group: a@tcp\nClient Group: b@tcp\n' + TABLE_HEAD +
            '\n\nError: Failed to get all samples. Expect 14, found 2\n')
    (record,) = parse_lst_survey(text)
    assert record['complete'] is False and record['error'].startswith('Error: Failed to get all samples')


@pytest.mark.parametrize('text', ['', 'Number of Active OST devices : 4', '  0 UP mgs MGS MGS 5',
                                  '[LNet Rates of servers]\n[R] Avg: 1 RPC/s Min: 1 RPC/s Max: 1 RPC/s',
                                  ' read_4k 1 2 3 4'])
def test_other_text_gives_nothing(text):
    assert parse_lst_survey(text) == []


def test_bytes_are_decoded():
    assert len(parse_lst_survey((HEADER + '\n' + ROW).encode('utf-8'))) == 1


@pytest.mark.parametrize('value', [7, (ROW,), b'\x00' * 40])
def test_non_text_raises_parser_error(value):
    with pytest.raises(ParserError):
        parse_lst_survey(value)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([HEADER, ROW, TABLE_HEAD, ' read 4k 1 2 3 4', 'Server Group: a', 'Commence lst-survey',
                                 'Server Errors: 1', 'Error: Failed to get all samples', ',', ';', 'a@tcp,b@tcp'])
                | st.text(TEXT_CHARS, max_size=30), max_size=25).map('\n'.join))
def test_any_text_never_raises(text):
    for record in parse_lst_survey(text):
        assert record['complete'] is (record['mode'] is not None)
