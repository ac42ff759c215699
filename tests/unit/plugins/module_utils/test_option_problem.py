# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""OptionProblem: a module's message as text, the same problem under other names as data."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils.option_problem import OptionProblem

ROLE_NAMES = {'thrlo': 'obdfilter_thrlo', 'thrhi': 'obdfilter_thrhi', 'size_mib': 'obdfilter_size_mib',
              'items': 'mdtest_items', 'items_per_dir': 'mdtest_items_per_dir'}


def role_name(option):
    return ROLE_NAMES.get(option, option)


@pytest.mark.parametrize('problem, message', [
    (OptionProblem('thrlo', '5 is greater than {thrhi} (3)', mentions='thrhi'), 'thrlo: 5 is greater than thrhi (3)'),
    (OptionProblem('size_mib', 'must be at least 1', got='0'), 'size_mib: must be at least 1, got 0'),
    (OptionProblem('size_mib', 'must be at least 1', got=0), 'size_mib: must be at least 1, got 0'),
    (OptionProblem(('items', 'items_per_dir'), 'give one of them (mdtest -n or -I), not both'),
     'items, items_per_dir: give one of them (mdtest -n or -I), not both'),
    (OptionProblem((), 'run_id must not be empty'), 'run_id must not be empty'),
])
def test_the_text_is_the_modules_message(problem, message):
    assert str(problem) == message == problem.render()


def test_render_names_every_option_the_problem_is_about_and_mentions():
    problem = OptionProblem('size_mib', '3 MiB per OST is too little for 2 threads; raise {size_mib} or lower {thrhi}',
                            mentions=('size_mib', 'thrhi'))
    assert problem.render(role_name) == ('obdfilter_size_mib: 3 MiB per OST is too little for 2 threads; raise '
                                         'obdfilter_size_mib or lower obdfilter_thrhi')
    assert OptionProblem(('items', 'items_per_dir'), 'give one of them').render(role_name) == (
        'mdtest_items, mdtest_items_per_dir: give one of them')


def test_only_mentioned_options_are_replaced_and_values_with_braces_stay_intact():
    # a user's value in the rule may hold braces, even an option's placeholder: only the mentions are replaced
    problem = OptionProblem('thrlo', "'{x}' and '{}' and '{size_mib}' are not {thrhi}", mentions='thrhi')
    assert str(problem) == "thrlo: '{x}' and '{}' and '{size_mib}' are not thrhi"
    assert problem.render(role_name) == "obdfilter_thrlo: '{x}' and '{}' and '{size_mib}' are not obdfilter_thrhi"
    assert OptionProblem('nettype', "'{0}%s' is not a network type").render(role_name) == (
        "nettype: '{0}%s' is not a network type")


def test_the_value_given_can_be_left_out_where_it_is_shown_already():
    problem = OptionProblem('thrhi', 'lctl --threads allows at most 4096 threads', got='8192')
    assert problem.text() == 'lctl --threads allows at most 4096 threads, got 8192'
    assert problem.text(role_name, got=False) == 'lctl --threads allows at most 4096 threads'
    assert OptionProblem('sweep', 'must be full or adaptive').text(got=False) == 'must be full or adaptive'


def test_a_mention_the_rule_does_not_write_is_refused():
    with pytest.raises(ValueError, match='thrhi'):
        OptionProblem('thrlo', '5 is greater than thrhi (3)', mentions='thrhi')


def test_problems_are_equal_by_their_data():
    one = OptionProblem('thrlo', '5 is greater than {thrhi} (3)', mentions=['thrhi'])
    assert one == OptionProblem(['thrlo'], '5 is greater than {thrhi} (3)', mentions='thrhi')
    assert len(set([one, OptionProblem('thrlo', '5 is greater than {thrhi} (3)', mentions='thrhi')])) == 1
    assert one != OptionProblem('thrlo', '5 is greater than {thrhi} (3)', got='5', mentions='thrhi')
    assert one != str(one)
    assert repr(one) == "OptionProblem(('thrlo',), '5 is greater than {thrhi} (3)', got=None, mentions=('thrhi',))"
