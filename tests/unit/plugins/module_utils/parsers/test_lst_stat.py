# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Edge cases of parse_lst_stat beyond the captured fixtures."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import ParserError
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.lst_stat import parse_lst_stat

# Control characters make ensure_text reject the input as binary, which is tested apart.
TEXT_CHARS = st.characters(blacklist_categories=('Cc', 'Cs')) | st.just('\n')

CURRENT_BW = ('[LNet Bandwidth of servers]\n'
              '[R] Avg: 22.41    MiB/s Min: 22.30    MiB/s Max: 22.52    MiB/s \n'
              '[W] Avg: 608.12   MiB/s Min: 605.00   MiB/s Max: 611.24   MiB/s \n')
RATES = ('[LNet Rates of servers]\n'
         '[R] Avg: 149981   RPC/s Min: 149500   RPC/s Max: 150462   RPC/s\n'
         '[W] Avg: 299961   RPC/s Min: 299001   RPC/s Max: 300921   RPC/s\n')


def _triples(records):
    return [(r['group'], r['metric'], r['direction'], r['sample']) for r in records]


@pytest.mark.parametrize('label,printed', [('MiB/s ', 'MiB/s'), ('MB/s  ', 'MB/s'), ('MB/s ', 'MB/s')])
def test_bandwidth_unit_is_mib_s_and_label_is_kept(label, printed):
    text = '[LNet Bandwidth of g]\n[R] Avg: 1.50     %sMin: 1.00     %sMax: 2.00     %s' % (label, label, label)
    (record,) = parse_lst_stat(text)
    assert (record['unit'], record['printed_unit']) == ('MiB/s', printed)
    assert (record['avg'], record['min'], record['max']) == (1.5, 1.0, 2.0)


def test_rates_are_ints_and_unit_rpc_s():
    records = parse_lst_stat(RATES)
    assert [r['avg'] for r in records] == [149981, 299961]
    assert all(isinstance(r['avg'], int) and r['unit'] == 'RPC/s' for r in records)


def test_old_order_write_before_read_is_kept_as_printed():
    text = '[LNet Rates of clients]\n[W] Avg: 1108 RPC/s Min: 1060 RPC/s Max: 1155 RPC/s\n[R] Avg: 2215 RPC/s Min: 2121 RPC/s Max: 2310 RPC/s'
    assert [r['direction'] for r in parse_lst_stat(text)] == ['write', 'read']


def test_samples_are_numbered_in_order():
    text = (RATES + CURRENT_BW) * 3
    records = parse_lst_stat(text)
    assert [r['sample'] for r in records] == [0] * 4 + [1] * 4 + [2] * 4


def test_two_groups_in_one_sample():
    text = (CURRENT_BW + CURRENT_BW.replace('servers', 'clients')) * 2
    assert _triples(parse_lst_stat(text)) == [
        ('servers', 'bandwidth', 'read', 0), ('servers', 'bandwidth', 'write', 0),
        ('clients', 'bandwidth', 'read', 0), ('clients', 'bandwidth', 'write', 0),
        ('servers', 'bandwidth', 'read', 1), ('servers', 'bandwidth', 'write', 1),
        ('clients', 'bandwidth', 'read', 1), ('clients', 'bandwidth', 'write', 1)]


def test_failed_nodes_apply_to_the_following_group_of_that_sample_only():
    text = ('Failed to stat on 2 nodes\n' + RATES + CURRENT_BW + CURRENT_BW.replace('servers', 'clients')
            + RATES + CURRENT_BW)
    records = parse_lst_stat(text)
    assert [(r['group'], r['sample'], r['failed_nodes']) for r in records] == (
        [('servers', 0, 2)] * 4 + [('clients', 0, 0)] * 2 + [('servers', 1, 0)] * 4)


@pytest.mark.parametrize('option_line,expected', [
    ('[R] Avg: 5.00     MiB/s ', (5.0, None, None)),
    ('[R] Min: 1.00     MiB/s Max: 9.00     MiB/s ', (None, 1.0, 9.0)),
    ('[R] Max: 9.00     MiB/s ', (None, None, 9.0)),
])
def test_avg_min_max_options_leave_nulls(option_line, expected):
    (record,) = parse_lst_stat('[LNet Bandwidth of s]\n' + option_line)
    assert (record['avg'], record['min'], record['max']) == expected


def test_wrapped_line_continues_the_record():
    text = '[LNet Bandwidth of s]\n[R] Avg: 5.00     MiB/s Min: 4.00     MiB/s\nMax: 6.00     MiB/s\n[W] Avg: 1.00 MiB/s'
    records = parse_lst_stat(text)
    assert [(r['direction'], r['max']) for r in records] == [('read', 6.0), ('write', None)]


def test_lst_sh_noise_is_skipped():
    text = ('Start LST read - Wed Oct 19 13:27:17 MDT 2022\nLST_SESSION=41853\n'
            'SESSION: lnet_session FEATURES: 1 TIMEOUT: 300 FORCE: No\nTest: --batch brw_read brw read size=4k\n'
            'Stat: --count 1 --delay 3 --bw servers\nbrw_read is running now\n' + CURRENT_BW +
            'servers:\nTotal 0 error nodes in servers\nBatch is stopped\nsession is ended\n')
    assert len(parse_lst_stat(text)) == 2


def test_direction_line_without_header_is_ignored():
    assert parse_lst_stat('[R] Avg: 1 RPC/s Min: 1 RPC/s Max: 1 RPC/s') == []


@pytest.mark.parametrize('text', ['', 'Number of Active OST devices : 4', '  0 UP mgs MGS MGS 5',
                                  'Servers,Clients,Mode,Read_BW,Read_Rate,Write_BW,Write_Rate,Server_Errors,Client_Errors'])
def test_other_text_gives_nothing(text):
    assert parse_lst_stat(text) == []


def test_bytes_are_decoded():
    assert len(parse_lst_stat(CURRENT_BW.encode('utf-8'))) == 2


@pytest.mark.parametrize('value', [3.5, [CURRENT_BW], b'\x01\x02\x03\x04' * 10])
def test_non_text_raises_parser_error(value):
    with pytest.raises(ParserError):
        parse_lst_stat(value)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(['[LNet Rates of a]', '[LNet Bandwidth of b]', '[R]', '[W]', 'Avg:', 'Min:', 'Max:',
                                 '1.5', 'MiB/s', 'RPC/s', 'Failed to stat on 3 nodes', '\n', '']) | st.text(TEXT_CHARS, max_size=20),
                max_size=40).map(lambda parts: ' '.join(p if isinstance(p, str) else ' '.join(p) for p in parts)))
def test_any_text_never_raises(text):
    for record in parse_lst_stat(text):
        assert record['metric'] in ('rates', 'bandwidth') and record['direction'] in ('read', 'write')
