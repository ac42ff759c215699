# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Edge cases of parse_brw_stats beyond the captured fixtures."""

from __future__ import annotations

import json

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import ParserError
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.brw_stats import parse_brw_stats

HEADER = (
    '                           read      |     write\n'
    'pages per bulk r/w     rpcs  % cum % |  rpcs        % cum %\n'
)
ROW_256 = '256:\t\t         3  60  60   |    1 100 100\n'
ROW_1K = '1K:\t\t         2  40 100   |    0   0 100\n'
EMPTY = {'target': None, 'snapshot_time': None, 'start_time': None, 'elapsed_time': None, 'histograms': {}, 'units': {}}


def _pages(result):
    return result['histograms']['pages per bulk r/w']


@pytest.mark.parametrize('line,expected', [
    ('snapshot_time:         1497969560.269408 (secs.usecs)', 1497969560.269408),
    # Before 2.10 the microseconds were printed without zero padding (%lu.%lu).
    ('snapshot_time:         1497969560.2694 (secs.usecs)', 1497969560.002694),
    ('snapshot_time:         1535148988.364041639 (secs.nsecs)', 1535148988.364041639),
    ('snapshot_time:            1709305846.695197922 secs.nsecs', 1709305846.695197922),
    ('snapshot_time 1709305846', 1709305846),
])
def test_snapshot_time_forms(line, expected):
    result = parse_brw_stats(line + '\n\n' + HEADER + ROW_256)
    assert result['snapshot_time'] == pytest.approx(expected, abs=1e-6)
    assert _pages(result)[0]['read'] == {'count': 3, 'pct': 60, 'cum_pct': 60}


def test_start_and_elapsed_time():
    text = ('snapshot_time:            1684867636.682465202 secs.nsecs\n'
            'start_time:               1684865295.727058577 secs.nsecs\n'
            'elapsed_time:             2340.955406625 secs.nsecs\n\n' + HEADER)
    result = parse_brw_stats(text)
    assert result['start_time'] == pytest.approx(1684865295.727058577)
    assert result['elapsed_time'] == pytest.approx(2340.955406625)
    assert result['histograms'] == {'pages per bulk r/w': []}
    assert result['units'] == {'pages per bulk r/w': 'rpcs'}


@pytest.mark.parametrize('first_line,target', [
    ('osd-ldiskfs.testfs-OST0000.brw_stats=', 'testfs-OST0000'),
    ('obdfilter.lustre-OST0001.brw_stats=', 'lustre-OST0001'),
    ('osd-zfs.fs-MDT0000.brw_stats=', 'fs-MDT0000'),
    ('==> /proc/fs/lustre/obdfilter/scratch-OST0002/brw_stats <==', 'scratch-OST0002'),
])
def test_param_or_path_line_sets_target(first_line, target):
    assert parse_brw_stats(first_line + '\nsnapshot_time: 1.5 (secs.nsecs)\n' + HEADER + ROW_256)['target'] == target


def test_value_on_the_param_line_is_kept():
    result = parse_brw_stats('osd-ldiskfs.fs-OST0000.brw_stats=snapshot_time: 12.5 secs.nsecs\n' + HEADER + ROW_256)
    assert result['target'] == 'fs-OST0000'
    assert result['snapshot_time'] == 12.5


def test_several_targets_listed_and_first_returned():
    text = ''.join(
        'osd-ldiskfs.fs-OST000%d.brw_stats=\nsnapshot_time: %d.5 secs.nsecs\n%s%s' % (index, index, HEADER, ROW_256)
        for index in range(3))
    result = parse_brw_stats(text)
    assert result['target'] == 'fs-OST0000'
    assert [item['target'] for item in result['targets']] == ['fs-OST0000', 'fs-OST0001', 'fs-OST0002']
    assert 'targets' not in result['targets'][0]


def test_get_param_without_names_splits_on_snapshot_time():
    block = 'snapshot_time: 10.5 secs.nsecs\n' + HEADER + ROW_256
    result = parse_brw_stats(block + block.replace('10.5', '11.5'))
    assert [item['snapshot_time'] for item in result['targets']] == [10.5, 11.5]


def test_other_parameters_are_not_mixed_in():
    text = ('obdfilter.fs-OST0000.stats=\nsnapshot_time             1.0 secs.nsecs\nwrite_bytes  9 samples [bytes] 1 2 3\n'
            'obdfilter.fs-OST0000.brw_stats=\nsnapshot_time:         2.5 (secs.nsecs)\n' + HEADER + ROW_256
            + 'obdfilter.fs-OST0000.filesfree=327382\n' + HEADER + ROW_1K)
    result = parse_brw_stats(text)
    assert result['target'] == 'fs-OST0000'
    assert result['snapshot_time'] == 2.5
    assert [row['bucket'] for row in _pages(result)] == ['256']
    assert 'targets' not in result


@pytest.mark.parametrize('decorate', [
    lambda text: text,
    lambda text: '\n'.join('    ' + line for line in text.split('\n')),
    lambda text: '\n'.join('# ' + line for line in text.split('\n')),
    lambda text: text.replace('\n', '\r\n'),
    lambda text: '[root@oss1 ~]# lctl get_param osd-ldiskfs.*.brw_stats\n' + text + '[root@oss1 ~]# \n',
    # A terminal wrapped the row after the read half.
    lambda text: text.replace('60   |    1', '60   |\n    1'),
], ids=['plain', 'indented', 'comment-prefixed', 'crlf', 'prompts', 'wrapped-row'])
def test_input_rules(decorate):
    text = 'osd-ldiskfs.fs-OST0000.brw_stats=\nsnapshot_time: 3.25 secs.nsecs\n\n' + HEADER + ROW_256 + ROW_1K
    result = parse_brw_stats(decorate(text))
    assert result['target'] == 'fs-OST0000'
    assert result['snapshot_time'] == 3.25
    assert [row['bucket'] for row in _pages(result)] == ['256', '1K']
    assert _pages(result)[0]['write'] == {'count': 1, 'pct': 100, 'cum_pct': 100}


def test_old_io_time_title_and_titles_collapsed():
    text = ('                           read      |     write\n'
            'I/O time (1/250s)      ios   % cum % |  ios   % cum %\n'
            '1:\t\t         5 100 100   |    0   0   0\n')
    assert list(parse_brw_stats(text)['histograms']) == ['I/O time (1/250s)']


@pytest.mark.parametrize('text', [
    '',
    'dev 30 sz 125829120K rsz 1024K crg 60 thr 120 write 6036.79 [ 100.69, 106.49]',
    'SUMMARY rate: (of 1 iterations)\n   File creation   :  1.0 1.0 1.0 0.0',
    '  0 UP osd-ldiskfs MGS-osd MGS-osd_UUID 4',
    '256:\t\t 3 60 60 | 1 100 100',  # a row without any histogram title
])
def test_wrong_format_gives_empty_object(text):
    assert parse_brw_stats(text) == EMPTY


def test_bytes_are_decoded():
    result = parse_brw_stats(('snapshot_time: 7.5 secs.nsecs\n' + HEADER + ROW_256).encode('utf-8'))
    assert result['snapshot_time'] == 7.5


@pytest.mark.parametrize('data', [42, ['snapshot_time: 1'], {'a': 1}, b'\x00\x01\x02\x03' * 10])
def test_non_text_raises_parser_error(data):
    with pytest.raises(ParserError):
        parse_brw_stats(data)


def test_result_is_plain_json():
    result = parse_brw_stats('snapshot_time: 7.5 secs.nsecs\n' + HEADER + ROW_256 + ROW_1K)
    assert json.loads(json.dumps(result, allow_nan=False)) == result
