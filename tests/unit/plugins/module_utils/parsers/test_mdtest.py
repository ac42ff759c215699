# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Edge cases of parse_mdtest beyond the captured fixtures."""

from __future__ import annotations

import json

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import ParserError
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.mdtest import parse_mdtest

BANNER = 'mdtest-3.3.0 was launched with 4 total task(s) on 1 node(s)\n'
TABLE_HEAD = ('   Operation                      Max            Min           Mean        Std Dev\n'
              '   ---------                      ---            ---           ----        -------\n')
EMPTY = {'version': None, 'tasks': None, 'nodes': None, 'iterations': None, 'summary': {}, 'unit': 'ops/sec'}


def _row(max_, min_, mean, std):
    return {'max': max_, 'min': min_, 'mean': mean, 'stddev': std}


@pytest.mark.parametrize('title', [
    'SUMMARY: (of 5 iterations)',
    'SUMMARY rate: (of 5 iterations)',
    'SUMMARY rate (in ops/sec): (of 5 iterations)',
])
@pytest.mark.parametrize('name', ['Directory creation:', 'Directory creation        :', 'Directory creation   '])
def test_title_and_name_forms(title, name):
    text = BANNER + '\n' + title + '\n' + TABLE_HEAD + '   %s  20981.4  17411.2  19380.1  1358.9\n' % name
    result = parse_mdtest(text)
    assert result['version'] == '3.3.0'
    assert (result['tasks'], result['nodes'], result['iterations']) == (4, 1, 5)
    assert result['summary'] == {'directory creation': _row(20981.4, 17411.2, 19380.1, 1358.9)}


def test_rate_and_time_tables():
    text = (BANNER + 'SUMMARY rate: (of 2 iterations)\n' + TABLE_HEAD
            + '   File creation             :       1066.1        950.3       1010.8         42.3\n'
            + '\nSUMMARY time: (of 2 iterations)\n' + TABLE_HEAD
            + '   File creation             :          1.2          0.9          1.0          0.1\n'
            + '-- finished at 05/27/2018 04:07:15 --\n')
    result = parse_mdtest(text)
    assert result['summary'] == {'file creation': _row(1066.1, 950.3, 1010.8, 42.3)}
    assert result['summary_time'] == {'file creation': _row(1.2, 0.9, 1.0, 0.1)}
    assert result['summary_time_unit'] == 'sec'
    assert 'runs' not in result


def test_missing_std_dev_column_and_na_figures():
    text = ('SUMMARY rate: (of 1 iterations)\n   Operation        Max     Min    Mean\n'
            '   Tree creation     :   558.539   558.539   558.539\n'
            '   File create (stonewall)   :             NA             NA       1234.500             NA\n')
    result = parse_mdtest(text)
    assert result['summary']['tree creation'] == _row(558.539, 558.539, 558.539, None)
    assert result['summary']['file create (stonewall)'] == _row(None, None, 1234.5, None)


def test_empty_file_read_row_of_1_9():
    text = ('SUMMARY: (of 1 iterations)\n' + TABLE_HEAD + '   File stat         :   7435.913   7435.913   7435.913   0.000\n'
            '   File read         :\n   File removal      :   1009.574   1009.574   1009.574   0.000\n')
    result = parse_mdtest(text)
    assert result['summary']['file read'] == _row(None, None, None, None)
    assert result['summary']['file removal'] == _row(1009.574, 1009.574, 1009.574, 0.0)


def test_per_rank_layout_of_4_0():
    text = ('SUMMARY rate: (of 3 iterations)\n'
            '   Operation     per Rank: Max            Min           Mean      per Iteration: '
            'Max            Min           Mean        Std Dev\n'
            '   File creation         10.0   5.0   7.5       30.0   20.0   25.0   4.0\n')
    row = parse_mdtest(text)['summary']['file creation']
    assert row == dict(_row(30.0, 20.0, 25.0, 4.0), per_rank={'max': 10.0, 'min': 5.0, 'mean': 7.5})


def test_per_rank_layout_of_2020_development_builds():
    # Header and row shape from hpc/ior issue #300 (December 2020).
    text = ('SUMMARY rate: (of 3 iterations)\n'
            '   Operation         per Rank:      Max            Min           Mean          Std Dev     '
            'per Iteration: Max            Min           Mean\n'
            '   Directory creation        :     133349.335      15240.973      63062.865      35579.914'
            '          45577.003      15240.973      34399.616\n')
    row = parse_mdtest(text)['summary']['directory creation']
    assert row == dict(_row(45577.003, 15240.973, 34399.616, None),
                       per_rank={'max': 133349.335, 'min': 15240.973, 'mean': 63062.865, 'stddev': 35579.914})


@pytest.mark.parametrize('noise', [
    '--------------------------------------------------------------------------\n'
    'WARNING: There was an error initializing an OpenFabrics device.\n'
    '--------------------------------------------------------------------------\n',
    '[node01:12345] 3 more processes have sent help message help-mpi-btl-openib.txt\n',
    '[root@client1 ~]# mpirun -np 4 mdtest -n 1000 -i 5\n',
    'V-1: Entering create_remove_items_helper...\n',
])
def test_mpi_and_shell_noise_is_skipped(noise):
    text = (noise + BANNER + noise + 'SUMMARY rate: (of 5 iterations)\n' + TABLE_HEAD
            + '   File stat                 :  100.0  90.0  95.0  3.0\n')
    result = parse_mdtest(text)
    assert result['tasks'] == 4
    assert result['summary'] == {'file stat': _row(100.0, 90.0, 95.0, 3.0)}


def test_mpi_noise_inside_the_table_does_not_end_it():
    text = ('SUMMARY rate: (of 1 iterations)\n' + TABLE_HEAD + '   File stat   :  1.0  1.0  1.0  0.0\n'
            '[node01:12345] 1 more process has sent help message help-mpi-btl-openib.txt\n'
            '   File removal   :  2.0  2.0  2.0  0.0\n')
    assert list(parse_mdtest(text)['summary']) == ['file stat', 'file removal']


@pytest.mark.parametrize('decorate', [
    lambda text: '\n'.join('\t' + line for line in text.split('\n')),
    lambda text: '\n'.join('# ' + line for line in text.split('\n')),
    lambda text: text.replace('\n', '\r\n'),
], ids=['tab-indented', 'comment-prefixed', 'crlf'])
def test_input_rules(decorate):
    text = BANNER + 'SUMMARY rate: (of 5 iterations)\n' + TABLE_HEAD + '   Tree removal      :   96.927   84.924   91.069   4.904\n'
    result = parse_mdtest(decorate(text))
    assert result['summary'] == {'tree removal': _row(96.927, 84.924, 91.069, 4.904)}


def test_row_wrapped_after_its_name():
    text = 'SUMMARY rate: (of 1 iterations)\n' + TABLE_HEAD + '   Directory stat            :\n  435.898  435.898  435.898  0.000\n'
    assert parse_mdtest(text)['summary']['directory stat'] == _row(435.898, 435.898, 435.898, 0.0)


def test_task_sweep_gives_runs():
    text = BANNER
    for tasks in (1, 2):
        text += ('%d tasks, %d files\n\nSUMMARY rate: (of 1 iterations)\n' % (tasks, tasks * 10) + TABLE_HEAD
                 + '   File creation   :  %d.0  %d.0  %d.0  0.0\n' % (tasks, tasks, tasks))
    result = parse_mdtest(text)
    assert result['tasks'] == 1
    assert [(run['tasks'], run['version'], run['summary']['file creation']['mean']) for run in result['runs']] == [
        (1, '3.3.0', 1.0), (2, '3.3.0', 2.0)]


def test_verbose_per_iteration_lines_before_summary_are_ignored():
    text = (BANNER + '   Operation               Duration              Rate\n'
            '   Directory creation: 1.5 sec, 1000.0 ops/sec\n'
            'SUMMARY rate: (of 1 iterations)\n' + TABLE_HEAD + '   Directory creation   :  1.0  1.0  1.0  0.0\n')
    assert parse_mdtest(text)['summary'] == {'directory creation': _row(1.0, 1.0, 1.0, 0.0)}


@pytest.mark.parametrize('text', [
    '',
    'snapshot_time: 1.5 secs.nsecs\npages per bulk r/w     rpcs  % cum % |  rpcs  % cum %\n',
    'Summary of all tests:\nOperation   Max(MiB)   Min(MiB)  Mean(MiB)     StdDev\nwrite  3842.11  3595.90  3695.92  101.02\n',
    'File creation : 1 2 3 4',  # a row with no SUMMARY title
])
def test_wrong_format_gives_empty_object(text):
    assert parse_mdtest(text) == EMPTY


def test_nan_figures_become_null():
    text = 'SUMMARY rate: (of 1 iterations)\n' + TABLE_HEAD + '   File read   :  nan  -nan  inf  0.000\n'
    row = parse_mdtest(text)['summary']['file read']
    assert row == _row(None, None, None, 0.0)
    json.dumps(row, allow_nan=False)


def test_bytes_are_decoded():
    text = 'SUMMARY: (of 1 iterations)\n' + TABLE_HEAD + '   File stat : 1.0 1.0 1.0 0.0\n'
    assert parse_mdtest(text.encode('utf-8'))['summary'] == {'file stat': _row(1.0, 1.0, 1.0, 0.0)}


@pytest.mark.parametrize('data', [3.5, ['SUMMARY'], object(), b'\x01\x02\x03\x04' * 8])
def test_non_text_raises_parser_error(data):
    with pytest.raises(ParserError):
        parse_mdtest(data)


def test_decimal_commas_only_when_every_figure_has_three_decimals():
    text = 'SUMMARY rate: (of 1 iterations)\n' + TABLE_HEAD
    assert parse_mdtest(text + '   File stat : 22,523 21,100 21,800 0,500\n')['summary']['file stat'] == _row(
        22.523, 21.1, 21.8, 0.5)
    # "22,52" is no mdtest figure: the row is not read as one
    assert parse_mdtest(text + '   File stat : 22,523 21,10 21,800 0,500\n')['summary'] == {}


def test_wrapped_std_dev_joins_and_truncated_row_is_dropped():
    text = ('SUMMARY rate: (of 1 iterations)\n' + TABLE_HEAD + '   File stat : 4.0 3.0 3.5\n0.5\n'
            '   File removal : 2.0 1.0\nnot a figure\n   Tree removal : 9.0 8.0\n')
    assert parse_mdtest(text)['summary'] == {'file stat': _row(4.0, 3.0, 3.5, 0.5)}


def test_annotations_between_rows_and_repeated_rows():
    text = ('SUMMARY rate: (of 1 iterations)\n' + TABLE_HEAD + '   File stat : 4.0 3.0 3.5 0.5\n'
            '<-- this one is slow, see below\n   File stat : 1.0 1.0 1.0 0.0\n   File removal : 2.0 2.0 2.0 0.0\n'
            '- finished at 11/01/2019 19:14:57 -\n   File read : 7.0 7.0 7.0 0.0\n')
    assert parse_mdtest(text)['summary'] == {'file stat': _row(4.0, 3.0, 3.5, 0.5), 'file removal': _row(2.0, 2.0, 2.0, 0.0)}


@pytest.mark.parametrize('rule', ['   ---------   ---   ---   ----   -------', '- - - - -'])
def test_table_without_title_needs_its_rule(rule):
    head = '   Operation   Max   Min   Mean   Std Dev\n'
    row = '   File stat   4.0   3.0   3.5   0.5\n'
    assert parse_mdtest('64 tasks, 640 files\n' + head + rule + '\n' + row)['summary'] == {'file stat': _row(4.0, 3.0, 3.5, 0.5)}
    assert parse_mdtest('64 tasks, 640 files\n' + head + row)['summary'] == {}
    # IOR's summary has the same first title but its own columns
    assert parse_mdtest('Operation   Max(MiB)   Min(MiB)  Mean(MiB)\n' + rule + '\n' + row)['summary'] == {}


def test_version_from_an_indented_or_prefixed_launch_line():
    for prefix in ('        ', '\t', '[1,0]<stdout>:'):
        result = parse_mdtest(prefix + BANNER + 'SUMMARY rate: (of 1 iterations)\n' + TABLE_HEAD + '   File stat : 1.0 1.0 1.0 0.0\n')
        assert (result['version'], result['tasks'], result['nodes']) == ('3.3.0', 4, 1)


def test_mail_wrapped_std_dev_with_decimal_commas():
    # A mail client's line limit moved the Std Dev title, the end of the rule
    # and every Std Dev figure to lines of their own; a de_DE locale printed
    # decimal commas.
    text = (BANNER + 'SUMMARY rate: (of 3 iterations)\n'
            '   Operation                      Max            Min           Mean\nStd Dev\n'
            '   ---------                      ---            ---           ----\n-------\n'
            '   File creation     :       1234,567       1100,250       1180,125\n57,313\n'
            '   File stat         :      18211,004      17002,998      17690,500\n   1234,567\n'
            '   File removal      :        449,800        414,304        435,508\n15,293\n')
    assert parse_mdtest(text)['summary'] == {
        'file creation': _row(1234.567, 1100.25, 1180.125, 57.313),
        'file stat': _row(18211.004, 17002.998, 17690.5, 1234.567),
        'file removal': _row(449.8, 414.304, 435.508, 15.293),
    }


@pytest.mark.parametrize('wrapped', ['Std Dev', 'Std\nDev', 'Dev'])
def test_wrapped_column_titles_without_summary_title(wrapped):
    # "Std" left on the title line and "Dev" wrapped counts the column once.
    head = '   Operation   Max   Min   Mean' + (' Std' if wrapped == 'Dev' else '') + '\n' + wrapped + '\n'
    text = '4 tasks, 4000 files/directories\n' + head + '   ---   ---   ---   ----\n-------\n   File stat   4,000   3,000   3,500\n0,500\n'
    assert parse_mdtest(text)['summary'] == {'file stat': _row(4.0, 3.0, 3.5, 0.5)}


def test_title_words_after_the_rule_are_no_titles():
    # Only the line right after the column titles may continue them.
    text = 'SUMMARY rate: (of 1 iterations)\n   Operation   Max   Min   Mean\n   ---   ---   ---   ----\nStd Dev\n' \
           '   File stat   4.0   3.0   3.5\n0.5\n'
    assert parse_mdtest(text)['summary'] == {'file stat': _row(4.0, 3.0, 3.5, None)}


@pytest.mark.parametrize('line,tasks', [
    ('4 tasks, 4000 files/directories', 4),
    ('4 tasks, 4000 files', 4),
    ('4 tasks, 4000 directories', 4),
    ('16 tasks, 1 file', 16),  # -S: one shared file
])
def test_failed_run_without_summary_keeps_task_count(line, tasks):
    text = ('-- started at 03/19/2026 17:55:06 --\n\n'
            'mdtest-4.0.0 was launched with 16 total task(s) on 2 node(s)\n'
            "Command line used: mdtest '-n' '1000' '-d' '/mnt/lustre/md' '-f' '%d'\n" % tasks
            + line + '\n'
            'ERROR: open64("/mnt/lustre/md/test-dir.0-0/mdtest_tree.0/file.mdtest.3.17", 66, 0664) failed. '
            'Error: No space left on device, (aiori-POSIX.c:569)\n'
            'application called MPI_Abort(MPI_COMM_WORLD, -1) - process 3\n')
    result = parse_mdtest(text)
    assert result == dict(EMPTY, version='4.0.0', tasks=tasks, nodes=2)
    assert 'runs' not in result


def test_failed_run_without_launch_banner():
    text = '4 tasks, 4000 files/directories\n03/19/2026 17:55:08: Process 0: FAILED in main, unable to stat file system /mnt/x\n'
    assert parse_mdtest(text) == dict(EMPTY, tasks=4)


def test_failed_runs_report_the_first_and_a_table_wins():
    failed = ('mdtest-3.3.0 was launched with 8 total task(s) on 2 node(s)\n8 tasks, 800 files\n'
              'ERROR: unable to create file, (mdtest.c:1)\n')
    second = 'mdtest-3.3.0 was launched with 2 total task(s) on 1 node(s)\n2 tasks, 200 files\n'
    assert parse_mdtest(failed + second) == dict(EMPTY, version='3.3.0', tasks=8, nodes=2)
    good = second + 'SUMMARY rate: (of 1 iterations)\n' + TABLE_HEAD + '   File stat : 1.0 1.0 1.0 0.0\n'
    result = parse_mdtest(failed + good)
    assert (result['tasks'], result['nodes'], result['summary']) == (2, 1, {'file stat': _row(1.0, 1.0, 1.0, 0.0)})
    assert 'runs' not in result


def test_per_rank_titles_and_row_wrapped_by_a_mail_client():
    text = ('SUMMARY rate: (of 3 iterations)\n'
            '   Operation     per Rank: Max            Min           Mean      per\nIteration: Max            Min\n'
            'Mean        Std Dev\n'
            '   File creation         10,000   5,000   7,500       30,000   20,000\n25,000   4,000\n')
    row = parse_mdtest(text)['summary']['file creation']
    assert row == dict(_row(30.0, 20.0, 25.0, 4.0), per_rank={'max': 10.0, 'min': 5.0, 'mean': 7.5})
