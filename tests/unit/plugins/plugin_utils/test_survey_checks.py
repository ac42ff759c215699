# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every problem a survey module's checks find names real options, so the preflight can always show the role
variable: the options a problem is about and those its rule mentions are options of the module's argument spec,
and each one a role passes has a role variable."""

from __future__ import annotations

import random

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import client_launch, survey_catalog
from ansible_collections.lustre.iokit.plugins.module_utils.option_problem import OptionProblem
from ansible_collections.lustre.iokit.plugins.plugin_utils import survey_checks

# What a module needs besides its defaults to have no problem (the options it requires, and sgpdd's consent).
REQUIRED = {
    'sgpdd': {'devices': ['/dev/sdb'], 'destroy_data': True},
    'ost': {'mount_point': '/mnt/testfs'},
    'lnet': {'servers': ['10.0.0.1@tcp'], 'clients': ['10.0.0.2@tcp']},
    'ior': {'mount_point': '/mnt/testfs', 'hosts': ['client1', 'client2'], 'client_memory_mib': 4096},
    'mdtest': {'mount_point': '/mnt/testfs', 'hosts': ['client1', 'client2']},
    'stats_collect': {'state': 'started', 'run_id': 'run-1'},
}
# Pairs of changes tried per survey besides every single change (some rules need two settings to break).
PAIRS = 1000


def valid_params(survey):
    spec = survey_checks._module(survey).argument_spec()
    params = dict((option, option_spec.get('default')) for option, option_spec in spec.items())
    params.update(survey_checks.SURVEYS[survey].get('fixed', {}))
    params.update(REQUIRED.get(survey, {}))
    return params


def wrong_values(option_spec):
    """Values of the option's type that break, or with another setting may break, the module's rules."""
    kind, choices = option_spec.get('type', 'str'), option_spec.get('choices')
    if kind == 'int':
        values = [-1, 0, 5, 10 ** 6]
    elif kind == 'float':
        values = [-1.0, 0.0, 150.0]
    elif kind == 'bool':
        values = [True, False]
    elif kind == 'list' and option_spec.get('elements') == 'int':
        values = [[], [0], [2, 1], [1, 1], [10 ** 6]]
    elif kind == 'list' and choices:
        values = [[], [choices[0], choices[0]], [choices[-1]], list(reversed(choices))]
    elif kind == 'list':
        values = [[], ['x{y}', 'x{y}'], ['rel']]
    elif choices:
        values = list(choices)
    elif kind in ('str', 'path'):
        values = ['', 'x{y}', '../x', '/abs']
    else:
        values = []
    return values + ([None] if option_spec.get('default') is None and not option_spec.get('required') else [])


def changes(survey):
    """Every single change of an option, then random pairs of them."""
    spec = survey_checks._module(survey).argument_spec()
    singles = [{option: value} for option in sorted(spec) for value in wrong_values(spec[option])]
    pick = random.Random(survey)
    return singles + [dict(pick.choice(singles), **pick.choice(singles)) for unused in range(PAIRS)]


def found_problems(survey, params):
    """The module's problems as the preflight finds them, and a client module's refusal to launch as root."""
    problems = list(survey_checks._module(survey).option_problems(params))
    if survey_catalog.CATALOG[survey].kind == survey_catalog.CLIENT:
        problems.extend(client_launch.run_as_root_problems(params, euid=0))
    return problems


@pytest.mark.parametrize('survey', survey_checks.survey_names())
def test_valid_params_have_no_problem(survey):
    module = survey_checks._module(survey)
    assert module.option_problems(valid_params(survey)) == []


@pytest.mark.parametrize('survey', survey_checks.survey_names())
def test_every_problem_names_options_of_the_module_each_with_a_role_variable(survey):
    spec = survey_checks._module(survey).argument_spec()
    mapping = survey_checks.option_variables(survey)
    # options the role does not take from its variables: the run's own, and those it always passes the same
    not_from_role = set(survey_checks.RUN_OPTIONS) | set(survey_checks.SURVEYS[survey].get('fixed', {}))
    seen = set()
    for change in changes(survey):
        for problem in found_problems(survey, dict(valid_params(survey), **change)):
            assert isinstance(problem, OptionProblem), (change, problem)
            named = set(problem.options) | set(problem.mentions)
            assert named <= set(spec), (change, problem)
            assert named <= set(mapping) | not_from_role, (change, problem)
            unwritten = [option for option in spec if '{%s}' % option in str(problem)]
            assert not unwritten, ('a placeholder without its mention', change, problem)
            seen.add(problem.rule)
    assert seen, 'no change of %s broke a rule' % survey


@pytest.mark.parametrize('survey', survey_checks.survey_names())
def test_a_role_variable_left_empty_is_named_never_a_traceback(survey):
    """``obdfilter_thrhi:`` with nothing after it is null in YAML; the module would get None instead of its default."""
    spec = survey_checks._module(survey).argument_spec()
    mapping = survey_checks.option_variables(survey)
    settings = dict((mapping[option][0], value) for option, value in valid_params(survey).items() if option in mapping)
    for option, (variable, shown) in sorted(mapping.items()):
        lines = survey_checks.problems(survey, dict(settings, **{variable: None}))
        if spec[option].get('default') is not None and option not in ('timeout', 'workdir'):
            named = shown or variable
            assert any(line.startswith(named + ' (unset): must have a value') for line in lines), (named, lines)
