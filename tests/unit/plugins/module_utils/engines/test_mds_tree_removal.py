# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Finding and removing what an interrupted mds survey left of its files, from the record alone."""

from __future__ import annotations

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils.engines import mds_tree_removal


class Result:
    def __init__(self, rc, stdout='', stderr=''):
        self.rc, self.stdout, self.stderr, self.timed_out = rc, stdout, stderr, False


class Tree:
    """The MDT's echo children as a set of (directory, id), answering lctl's md commands as the kernel does."""

    def __init__(self, children):
        self.children = set(children)
        self.calls = []

    def run(self, argv):
        if argv[1] == '--threads':
            return self.run_threads(argv)
        self.calls.append(argv[3:])
        command = argv[3]
        if command == 'test_lookup':
            child = (argv[5], int(argv[7]))
            return Result(0) if child in self.children else Result(2, '', 'error: test_lookup: No such file\n')
        if command == 'test_destroy':
            directory, first, count = argv[5], int(argv[7]), int(argv[9])
            for child in range(first, first + count):
                if (directory, child) not in self.children:
                    return Result(2, '', 'error: test_destroy: No such file or directory\n')
                self.children.discard((directory, child))
            return Result(0)
        raise AssertionError(argv)

    def run_threads(self, argv):
        # lctl --threads N -1 dev test_destroy -d base -D dirs -b start -n count: each thread its own range
        self.calls.append(argv[5:])
        assert argv[5] == 'test_destroy', argv
        record = dict(FILES, threads=int(argv[2]), basedir=argv[7], dir_count=int(argv[9]),
                      start_number=int(argv[11]), files_per_thread=int(argv[13]))
        errors = []
        for thread, (directory, first, end) in enumerate(mds_tree_removal.thread_ranges(record), 1):
            if self.run(['lctl', '--device', 'dev', 'test_destroy', '-d', directory, '-b', str(first),
                         '-n', str(end - first)]).rc:
                errors.append('error: test_destroy-%d: No such file or directory\n' % thread)
        return Result(2 if errors else 0, '', ''.join(errors))


FILES = {'threads': 2, 'files_per_thread': 100, 'start_number': 2, 'dir_count': 2, 'basedir': '/MDT0000-ab12cd-tests'}
STEP = mds_tree_removal.MAX_CHILD_BASE // 2


def children(directory, first, end):
    return [(directory, child) for child in range(first, end)]


def test_thread_ranges_follow_lctl_layout():
    assert mds_tree_removal.thread_ranges(FILES) == [['/MDT0000-ab12cd-tests', 2, 102],
                                                     ['/MDT0000-ab12cd-tests1', 2 + STEP, 102 + STEP]]


@pytest.mark.parametrize('record, left', [
    # killed mid-create: each thread made a prefix of its range
    (FILES, children('/MDT0000-ab12cd-tests', 2, 39) + children('/MDT0000-ab12cd-tests1', 2 + STEP, 90 + STEP)),
    # killed mid-create before any file
    (FILES, []),
    # killed mid-destroy after a whole create: each thread removed a prefix, a suffix is left
    (dict(FILES, ranges=mds_tree_removal.thread_ranges(FILES), destroying=True),
     children('/MDT0000-ab12cd-tests', 70, 102) + children('/MDT0000-ab12cd-tests1', 101 + STEP, 102 + STEP)),
    # killed mid-destroy after a partial create whose end had been found: what is left ends there
    (dict(FILES, ranges=[['/MDT0000-ab12cd-tests', 2, 50], ['/MDT0000-ab12cd-tests1', 2 + STEP, 2 + STEP]],
          destroying=True), children('/MDT0000-ab12cd-tests', 20, 50)),
], ids=['mid-create', 'before-any-file', 'mid-destroy', 'mid-destroy-after-partial-create'])
def test_what_is_left_is_found_and_removed(record, left):
    tree = Tree(left)
    written = []
    problems = mds_tree_removal.destroy_files(tree.run, 'lctl', 'dev', record, written.append)
    assert problems == [] and tree.children == set()
    # Before any destroy, the ranges found are recorded as being destroyed; once all is gone, nothing.
    assert written[0]['destroying'] is True and written[-1] is None
    # Probing costs a logarithm of the range per thread, not a call per file.
    assert len([call for call in tree.calls if call[0] == 'test_lookup']) <= 2 * 8


def test_a_failed_destroy_keeps_the_record():
    tree = Tree(children('/MDT0000-ab12cd-tests', 2, 10))
    written = []

    def failing(argv):
        if argv[3] == 'test_destroy':
            return Result(5, '', 'error: test_destroy: Input/output error\n')
        return tree.run(argv)
    problems = mds_tree_removal.destroy_files(failing, 'lctl', 'dev', FILES, written.append)
    assert problems and 'Input/output error' in problems[0]
    assert written[-1] is not None and written[-1]['ranges'][0] == ['/MDT0000-ab12cd-tests', 2, 10]


def test_a_failing_mdt_is_not_taken_for_an_empty_one():
    # Probes answered with EIO say nothing about which files exist: the record stays whole and the problem is named.
    written = []

    def failing(argv):
        return Result(5, '', 'error: %s: Input/output error\n' % argv[3])
    problems = mds_tree_removal.destroy_files(failing, 'lctl', 'dev', FILES, written.append)
    assert written == [] and len(problems) == 1
    assert 'test_lookup' in problems[0] and mds_tree_removal.target_fails(problems[0])
    assert mds_tree_removal.remove_directories(failing, 'lctl', 'dev', ['/MDT0000-ab12cd-tests']) == [
        'test_rmdir /MDT0000-ab12cd-tests failed: error: test_rmdir: Input/output error']


@pytest.mark.parametrize('left', [
    [],
    children('/MDT0000-ab12cd-tests', 60, 102) + children('/MDT0000-ab12cd-tests1', 2 + STEP, 102 + STEP),
], ids=['all-gone', 'one-thread-half-gone'])
def test_files_already_gone_are_no_error(left):
    # The record says the create finished, but a teardown got there first: a cleanup removes exactly what is left.
    tree = Tree(left)
    written = []
    problems = mds_tree_removal.destroy_files(tree.run, 'lctl', 'dev', dict(FILES, created=True), written.append)
    assert problems == [] and tree.children == set() and written[-1] is None


def test_an_io_error_after_a_missing_file_is_still_one():
    # Ids 2..49 already gone, then the MDT fails: the gone ones are passed over, the failure is reported.
    tree = Tree(children('/MDT0000-ab12cd-tests', 50, 102))
    written = []

    def failing_beyond_50(argv):
        if argv[3] == 'test_destroy' and argv[5] == '/MDT0000-ab12cd-tests' and int(argv[7]) >= 50:
            return Result(5, '', 'error: test_destroy: Input/output error\n')
        return tree.run(argv)
    problems = mds_tree_removal.destroy_files(failing_beyond_50, 'lctl', 'dev', dict(FILES, created=True), written.append)
    assert len(problems) == 1 and mds_tree_removal.target_fails(problems[0]) and written[-1] is not None
