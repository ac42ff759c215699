# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every parser's cost grows linearly with its input.

A corrupt or hostile result file (one huge line, megabytes of backslash
continuations, a token repeated a million times) must not hang a report.
Each parser of the catalog, so also one added later, gets every shape below
at a size and GROWTH times that size; the larger must cost less than
GROWTH ** 1.5 times the smaller.  Linear code costs about GROWTH times more
(a little over it once the larger input leaves the CPU caches), quadratic code
GROWTH squared.  Both sizes are measured in this process as CPU time
(time.process_time), a pair over the ratio measured again (best of RUNS, each
run repeating the parse for at least MIN_SAMPLE_S) before it counts.  Nothing
is compared with a wall-clock limit.

The pathological shapes named by the issue (a line that starts like a
result record then runs on for a megabyte, lines ending in a backslash
continuation, ``# `` prefixes) run at the real 1 MB and 4 MB (growth 4: linear
4x, limit 8x, quadratic 16x); every other shape at 64 KB and 512 KB (growth 8:
linear 8x, limit 22.6x, quadratic 64x).  The wider growth of the small inputs
keeps their linear cost far from the limit on a loaded machine, where a 256 KB
input that no longer fits the cache measured 10x its 64 KB one.  The
self-check feeds a deliberately quadratic parser to the same measurement and
expects it flagged.  The whole file costs about 62 CPU seconds (measured
on a busy two-core machine; most of it the 4 MB inputs).
"""

from __future__ import annotations

import gc
import os
import time

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils.parsers.catalog import PARSERS

# Bytes of the smaller input of the named pathological shapes, and of every
# other shape; LINEAR_TEST_SCALE shrinks both to try old code quickly.
_SCALE = float(os.environ.get('LINEAR_TEST_SCALE', '1'))
FULL = int(1024 * 1024 * _SCALE)
REDUCED = int(64 * 1024 * _SCALE)
GROWTH = 4
# The smaller inputs grow more: their costs are a few milliseconds, where a busy machine's cache misses show most.
REDUCED_GROWTH = 8
RUNS = 2
# CPU seconds per megabyte below which a cost is too small to compare.
FLOOR = 0.002
# CPU seconds each run of a pair measured again spends at least (repeating the parse): a parse of a millisecond
# or two is otherwise one scheduling or cache stall of a loaded machine away from looking quadratic.
MIN_SAMPLE_S = 0.05

# How result lines of the formats start: a shape puts one of them in front of
# a repeated unit, so each parser's own regular expressions see the long tail.
HEADS = (
    '',
    'ost 1 sz 1024K rsz 1024K obj 1 thr 1 ',
    'mdt 0 file 100000 dir 4 thr 4 ',
    'dev 1 sz 8388608K rsz 1024K crg 1 thr 1 ',
    'total_size 8388608K rsz 1024 crg 1 thr 1 ',
    'oss01: ',
    'File creation : ',
    'mdtest-3.4.0 ',
    '[LNet Rates of ',
    '[R] Avg: 1 ',
    'read 4k ',
    '0 UP osd-ldiskfs testfs-OST0000-osd ',
    'osd-ldiskfs.testfs-OST0000.brw_stats=',
    '1: ',
    'Worst Read OST indx: ',
    '1 ',
    'time to copy data: ',
)
# Units repeated after every head.
HEAD_UNITS = ('a ', ' ')
# Units repeated on their own to fill a whole line.
LINE_UNITS = (
    'a', '1', '.', '-', '[', ':', '# ', '\t', 'a.', '1,', '--- ', 'na ', 'write 1 ',
    'created object #s ', 'sgpdd-survey on ', 'from a ', 'mdtest-', 'Error found in ',
    'Servers,Clients,', 'a/', 'Avg: 1 ', 'was launched with 1 total task(s) ',
)
# Lines (with {i} for a running number) repeated to fill a multi-line input:
# continuations of every kind, many records, many keys, many blocks.
LINES = (
    'a \\',
    'write 1.00 [ 1.00,',
    'oss01: dev {i} sz 1024K rsz 1024K crg 1 thr 1 write 1 [1, 1]',
    '# # # # # # # # # # # # # # # # # # # # # # # # # # # # # # #',
    '{i} UP osc testfs-OST{i}-osc-ffff uuid-{i} 5\n----\nnode{i}\n----\n- index: {i}',
    'osd-ldiskfs.t{i}.brw_stats=\n{i}: 1 2 3 | 4 5 6\n[LNet Rates of g{i}]\n[R] Avg: 1 RPC/s',
    '{i} 1.0 2.0 3.0 4.0\na{i},b,read_4k,1,2,3,4,0,0\nerror {i}',
    'SUMMARY rate: (of 1 iterations)\nFile stat : 1 2 3\nFile creation : 1 2 3 4\n{i} tasks, 1 files',
)


def _fill(unit, size, head=''):
    count = max(1, (size - len(head)) // len(unit))
    return head + unit * count


def _lines(template, size):
    if '{i}' not in template:
        return _fill(template + '\n', size)
    out = []
    total = 0
    index = 0
    while total < size:
        line = template.replace('{i}', str(index)) + '\n'
        out.append(line)
        total += len(line)
        index += 1
    return ''.join(out)


SHAPES = (
    [('line %r+%r' % (head, unit), lambda size, h=head, u=unit: _fill(u, size, h))
     for head in HEADS for unit in HEAD_UNITS]
    + [('line %r' % unit, lambda size, u=unit: _fill(u, size)) for unit in LINE_UNITS]
    + [('lines %r' % template, lambda size, t=template: _lines(t, size)) for template in LINES]
)
# The shapes the issue names, measured at FULL size; the rest at REDUCED.
PATHOLOGICAL = (
    'line %r+%r' % (HEADS[1], HEAD_UNITS[0]),
    'line %r' % '# ',
    'lines %r' % 'a \\',
)
SIZED_SHAPES = [(name, build, FULL if name in PATHOLOGICAL else REDUCED) for name, build in SHAPES]


def _growth(size):
    return GROWTH if size >= FULL else REDUCED_GROWTH


def _cost(parser, text, runs, min_sample_s=0.0):
    """CPU seconds of one parse of ``text``, the best of ``runs``; each run parses again and again until it has
    spent ``min_sample_s`` and counts the mean, so that a figure of a few milliseconds is not one stall."""
    best = None
    for _run in range(runs):
        # The cycle collector stays off while a parser runs so that its pauses
        # (which grow with everything the test process holds) are not counted;
        # a gc.collect() per run cost more than the small inputs themselves.
        gc.disable()
        try:
            start = time.process_time()
            parses = 0
            while True:
                parser(text)
                parses += 1
                spent = time.process_time() - start
                if spent >= min_sample_s:
                    break
        finally:
            gc.enable()
        best = spent / parses if best is None else min(best, spent / parses)
    return best


def _nonlinear(parser, sized_shapes):
    """One line per shape whose larger input costs growth ** 1.5 times the smaller or more."""
    slow = []
    for name, build, size in sized_shapes:
        floor = FLOOR * size / (1024.0 * 1024.0)
        growth = _growth(size)
        ratio = growth ** 1.5
        small, large = build(size), build(size * growth)
        # One run of each size; only a pair over the ratio is measured again
        # (best of RUNS) before it counts, so a busy moment is not a failure.
        small_cost, large_cost = _cost(parser, small, 1), _cost(parser, large, 1)
        if large_cost >= ratio * max(small_cost, floor):
            small_cost = min(small_cost, _cost(parser, small, RUNS, MIN_SAMPLE_S))
            large_cost = min(large_cost, _cost(parser, large, RUNS, MIN_SAMPLE_S))
        # The ratio of two tiny figures is noise: a shape whose small input
        # costs under FLOOR per megabyte cannot be quadratic at these sizes.
        if large_cost >= ratio * max(small_cost, floor):
            slow.append('%s: %d bytes cost %.4f s, %d bytes %.4f s (x%.1f)' % (
                name, len(small), small_cost, len(large), large_cost, large_cost / max(small_cost, floor)))
    return slow


def test_pathological_shapes_are_in_the_catalog():
    assert set(PATHOLOGICAL) <= set(name for name, _build in SHAPES)


def _quadratic_parser(text):
    # Rescans the text before every 64th character: the mistake this file guards against.
    return sum(text.count('a', 0, end) for end in range(0, len(text), 64))


def test_measurement_flags_a_quadratic_parser():
    shape = [entry for entry in SIZED_SHAPES if entry[0] == 'line %r' % 'a']
    assert _nonlinear(_quadratic_parser, shape), 'a quadratic parser passed the linearity check'


@pytest.mark.parametrize('fmt', sorted(PARSERS))
def test_parser_cost_grows_linearly(fmt):
    slow = _nonlinear(PARSERS[fmt], SIZED_SHAPES)
    assert not slow, 'parse_%s is not linear in its input:\n%s' % (fmt, '\n'.join(slow))
