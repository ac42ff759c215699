# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The tests' one wait: the condition's value once it holds, the deadline or the process's end named when not."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ansible_collections.lustre.iokit.tests.unit.waiting import wait_for


def test_the_first_true_value_is_returned():
    answers = iter([None, [], ['oss1']])
    assert wait_for('a host', lambda: next(answers), 60) == ['oss1']


def test_a_condition_that_never_holds_fails_naming_what_and_the_deadline():
    with pytest.raises(AssertionError, match=r'^timed out after 0 s waiting for the sampler$'):
        wait_for('the sampler', lambda: False, 0)


def test_a_process_that_ends_first_fails_at_once_with_its_status_and_output():
    process = subprocess.Popen([sys.executable, '-c', 'print("no lock taken"); raise SystemExit(3)'],
                               stdout=subprocess.PIPE, universal_newlines=True)
    with pytest.raises(AssertionError) as failure:
        wait_for('the lock', lambda: False, 600, process)
    assert str(failure.value).startswith('the lock: python')
    assert 'ended first (rc 3):\nno lock taken' in str(failure.value)


def test_a_condition_met_as_the_process_ends_still_counts():
    process = subprocess.Popen([sys.executable, '-c', 'pass'])
    process.wait()
    answers = iter([None, 'done'])
    assert wait_for('the last point', lambda: next(answers), 600, process) == 'done'
