# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Removing the files and test directories an mds survey created on an MDT, from their node-state record.

Used by the survey itself (after its destroy test and in its teardown) and by ``iokit_cleanup`` after a
survey was killed: ``destroy_files`` and ``remove_directories`` need only the record, the lctl binary, the
echo client's device and a runner.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# The files of a create are removed by the survey, its teardown and the cleanup of a killed run.
#
# lctl has no readdir for the echo tree, and ``test_destroy`` stops at the first missing child, so the files
# are found by their ids.  Thread t of a ``create`` makes ids base_t, base_t+1 ... (base_t = start_number +
# (t-1) * (0xffffffff // threads)) in its directory, in order, and a ``destroy`` removes them in the same order:
# what is left of each thread's range is always one run of consecutive ids.  Recorded before each step is which
# end of that run is known: before a create, it starts at base_t (its end is found by probing); before a
# destroy, its end is recorded (its start is found by probing).  So every moment of a survey leaves a record
# from which its files can be found and removed.

MAX_CHILD_BASE = 0xffffffff


def thread_ranges(files):
    """``[[directory, first_id, end_id], ...]``: each thread's ids of the recorded ``files`` (a create's layout)."""
    threads = int(files['threads'])
    per_thread = int(files['files_per_thread'])
    dir_count = int(files['dir_count'])
    ranges = []
    for thread in range(1, threads + 1):
        number = (thread - 1) % dir_count
        directory = files['basedir'] + (str(number) if number else '')
        first = int(files['start_number']) + (thread - 1) * (MAX_CHILD_BASE // threads)
        ranges.append([directory, first, first + per_thread])
    return ranges


# What lctl says when the MDT itself fails rather than a child being missing: until the device is repaired, what
# is on it can be neither found nor removed.
TARGET_FAILURES = ('Input/output error', 'Read-only file system')


def target_fails(text):
    return any(failure in text for failure in TARGET_FAILURES)


class TargetFailure(Exception):
    """A probe the failing MDT answered with an error (a missing child must not be concluded from it)."""


def _exists(run, lctl, device, directory, child):
    result = run([lctl, '--device', str(device), 'test_lookup', '-d', directory, '-b', str(child), '-n', '1'])
    output = result.stdout + result.stderr
    if result.rc != 0 and target_fails(output):
        raise TargetFailure('test_lookup of %s in %s failed: %s' % (child, directory, output.strip()))
    return result.rc == 0 and 'error' not in output


def _first_true(low, high, predicate):
    """The least x in [low, high) with predicate(x) true, for a predicate false then true; high if none."""
    while low < high:
        middle = (low + high) // 2
        if predicate(middle):
            high = middle
        else:
            low = middle + 1
    return low


def remaining_ranges(run, lctl, device, files):
    """The ids still there of each thread's range, found by probing with ``test_lookup`` (see above)."""
    if files.get('created') and not files.get('destroying'):
        return thread_ranges(files)  # the create finished: every range is whole
    found = []
    for directory, first, end in files.get('ranges') or thread_ranges(files):
        def exists(child, directory=directory):
            return _exists(run, lctl, device, directory, child)
        if files.get('destroying'):
            # a destroy went up from first: what is left ends at end
            found.append([directory, _first_true(first, end, exists), end])
        else:
            # a create went up from first: what was made starts there
            found.append([directory, first, _first_true(first, end, lambda child: not exists(child))])
    return found


def _destroyed(result):
    return result.rc == 0 and not result.timed_out and 'error' not in result.stdout + result.stderr


def _only_missing(result):
    """Whether a failed ``test_destroy`` stopped at children already gone, and at nothing else."""
    output = result.stdout + result.stderr
    errors = [line for line in output.splitlines() if 'error' in line]
    return (not result.timed_out and bool(errors) and not target_fails(output)
            and all('No such file' in line for line in errors))


def _destroy_range(run, lctl, device, directory, first, end):
    """Destroy what is left of ids [first, end) in ``directory``; returns a problem or None.

    ``test_destroy`` stops at the first child already gone, having removed those before it: what is left
    beyond it (a suffix of the range, as a destroy goes up) is found by probing and destroyed in turn, so a
    file already removed is no error, while any other failure of the MDT still is.
    """
    while first < end:
        result = run([lctl, '--device', str(device), 'test_destroy', '-d', directory, '-b', str(first),
                      '-n', str(end - first)])
        if _destroyed(result):
            return None
        if not _only_missing(result):
            return 'test_destroy of %d files from %d in %s failed (rc %s): %s' % (
                end - first, first, directory, result.rc, (result.stderr or result.stdout).strip())
        try:
            # every id up to the missing one is gone now, first among them: the search moves on
            first = _first_true(first, end, lambda child: _exists(run, lctl, device, directory, child))
        except TargetFailure as exc:
            return str(exc)
    return None


def destroy_files(run, lctl, device, files, remember):
    """Remove what is left of ``files`` through echo client ``device``; returns the problems (none: all gone).

    ``remember(files_or_none)`` writes the entry's new ``files`` before each step: the ranges found and
    ``destroying`` before any destroy, None once every file is gone.
    """
    try:
        ranges = remaining_ranges(run, lctl, device, files)
    except TargetFailure as exc:
        return [str(exc)]
    remember(dict(files, ranges=ranges, destroying=True))
    problems = []
    if files.get('created') and not files.get('destroying'):
        # whole ranges: one destroy with the create's own threads, as the I/O kit's destroy test runs
        result = run([lctl, '--threads', str(files['threads']), '-1', str(device), 'test_destroy', '-d',
                      files['basedir'], '-D', str(files['dir_count']), '-b', str(files['start_number']),
                      '-n', str(files['files_per_thread'])])
        if _destroyed(result):
            ranges = []
        elif not _only_missing(result):
            ranges = []
            problems.append('test_destroy of the %d threads\' files in %s failed (rc %s): %s' % (
                files['threads'], files['basedir'], result.rc, (result.stderr or result.stdout).strip()))
        # else: some files were already gone (a teardown got there first); the rest are found range by range
    for directory, first, end in ranges:
        problem = _destroy_range(run, lctl, device, directory, first, end)
        if problem:
            problems.append(problem)
    if not problems:
        remember(None)
    return problems


def remove_directories(run, lctl, device, directories):
    """``test_rmdir`` every directory (one already gone is fine); returns the problems."""
    problems = []
    for directory in directories:
        result = run([lctl, '--device', str(device), 'test_rmdir', directory])
        output = result.stdout + result.stderr
        if (result.rc != 0 or 'error' in output) and 'No such file' not in output:
            problems.append('test_rmdir %s failed: %s' % (directory, output.strip()))
    return problems
