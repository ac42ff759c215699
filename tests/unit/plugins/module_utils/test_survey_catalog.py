# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The survey catalogue is the one list of surveys: every list Ansible needs literal agrees with it, every table
built from it has every survey, and every survey has its module, role, playbook and AWX form.  A failure names the
file that disagrees and what it lacks or has too many."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import pytest
import yaml

from ansible_collections.lustre.iokit.plugins.module_utils import plan_estimate, results, survey_catalog
from ansible_collections.lustre.iokit.plugins.module_utils.survey_catalog import ALL, CATALOG, MEASURING

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))


def _text(relative):
    with open(os.path.join(ROOT, relative)) as handle:
        return handle.read()


def _yaml(relative):
    return yaml.safe_load(_text(relative))


def _documentation(relative):
    """The DOCUMENTATION block of a module or filter plugin, parsed."""
    match = re.search(r"^DOCUMENTATION = r?(['\"]{3})\n(.*?)\1", _text(relative), re.S | re.M)
    assert match, '%s has no DOCUMENTATION block' % relative
    return yaml.safe_load(match.group(2))


def _argument_spec_option(relative, entry_point, option):
    return _yaml(relative)['argument_specs'][entry_point]['options'][option]


def _disagreement(relative, where, listed, expected):
    listed = list(listed)
    missing = [name for name in expected if name not in listed]
    extra = sorted(set(listed) - set(expected))
    return '%s (%s) disagrees with the survey catalogue: missing %s, not a survey %s' % (
        relative, where, missing or 'none', extra or 'none')


# Every list of survey names that must stay literal, where it is, and which surveys it must hold.
LITERAL_LISTS = [
    ('plugins/modules/stored_result.py', 'DOCUMENTATION options.survey.choices',
     lambda path: _documentation(path)['options']['survey']['choices'], ALL),
    ('plugins/modules/survey_plan.py', 'DOCUMENTATION options.survey.choices',
     lambda path: _documentation(path)['options']['survey']['choices'], MEASURING),
    ('plugins/modules/survey_start.py', 'DOCUMENTATION options.survey.choices',
     lambda path: _documentation(path)['options']['survey']['choices'], MEASURING),
    ('plugins/filter/survey_variables.py', 'DOCUMENTATION options.survey.choices',
     lambda path: _documentation(path)['options']['survey']['choices'], ALL),
    ('plugins/filter/survey_problems.py', 'DOCUMENTATION options.survey.choices',
     lambda path: _documentation(path)['options']['survey']['choices'], ALL),
    ('roles/cleanup/defaults/main.yml', 'cleanup_surveys', lambda path: _yaml(path)['cleanup_surveys'], ALL),
    ('roles/cleanup/meta/argument_specs.yml', 'main: cleanup_surveys choices',
     lambda path: _argument_spec_option(path, 'main', 'cleanup_surveys')['choices'], ALL),
    ('roles/cleanup/meta/argument_specs.yml', 'main: cleanup_surveys default',
     lambda path: _argument_spec_option(path, 'main', 'cleanup_surveys')['default'], ALL),
    ('awx/surveys/cleanup.yml', 'cleanup_surveys choices',
     lambda path: [question for question in _yaml(path)['survey_spec']['spec']
                   if question['variable'] == 'cleanup_surveys'][0]['choices'], ALL),
    ('roles/stats_collect/tasks/start.yml', 'the surveys whose stored result the samplers look up',
     lambda path: re.search(r"stats_collect_label in \[([^]]*)\]", _text(path))
     .group(1).replace("'", '').replace(' ', '').split(','), MEASURING),
]


@pytest.mark.parametrize('relative, where, read, expected', LITERAL_LISTS,
                         ids=['%s %s' % (entry[0], entry[1]) for entry in LITERAL_LISTS])
def test_a_literal_list_of_surveys_agrees_with_the_catalogue(relative, where, read, expected):
    listed = read(relative)
    assert sorted(listed) == sorted(expected), _disagreement(relative, where, listed, expected)


def test_every_survey_common_entry_point_takes_exactly_the_measuring_surveys():
    relative = 'roles/survey_common/meta/argument_specs.yml'
    specs = _yaml(relative)['argument_specs']
    naming = [(entry, option) for entry, spec in specs.items() for option, details in spec['options'].items()
              if option == 'survey_common_name']
    assert naming, '%s has no survey_common_name option' % relative
    for entry, option in naming:
        listed = specs[entry]['options'][option]['choices']
        assert sorted(listed) == sorted(MEASURING), _disagreement(relative, '%s: %s choices' % (entry, option),
                                                                  listed, MEASURING)


def test_the_tables_built_from_the_catalogue_have_every_survey():
    assert results.SURVEYS == ALL
    assert set(plan_estimate.WORK_UNITS) == set(MEASURING)
    # every survey measures but the statistics samplers, which have no plan, summary or findings of their own
    assert set(ALL) - set(MEASURING) == {'stats_collect'}


@pytest.mark.parametrize('name', ALL)
def test_every_survey_has_its_module_role_playbook_and_form(name):
    survey = CATALOG[name]
    assert survey.kind in (survey_catalog.SERVER, survey_catalog.CLIENT, survey_catalog.SAMPLER)
    assert os.path.isfile(os.path.join(ROOT, 'plugins', 'modules', survey.module + '.py')), (
        'the catalogue names module %s for %s, which plugins/modules/ lacks' % (survey.module, name))
    assert os.path.isdir(os.path.join(ROOT, 'roles', name)), 'roles/%s is missing' % name
    playbook = 'stats-collect.yml' if survey.kind == survey_catalog.SAMPLER else 'survey-%s.yml' % name
    for directory in ('playbooks', os.path.join('awx', 'surveys')):
        assert os.path.isfile(os.path.join(ROOT, directory, playbook)), '%s/%s is missing' % (directory, playbook)
    if survey.kind == survey_catalog.SAMPLER:
        assert survey.component is None and survey.work is None
    else:
        assert survey.component in ('LUN', 'OST', 'MDT', 'NID', 'client')
        assert len(survey.work) == 4


def test_a_survey_missing_from_a_literal_list_is_named_with_the_file():
    message = _disagreement('roles/cleanup/defaults/main.yml', 'cleanup_surveys', ['sgpdd', 'foo'], ('sgpdd', 'ost'))
    assert message == ("roles/cleanup/defaults/main.yml (cleanup_surveys) disagrees with the survey catalogue: "
                       "missing ['ost'], not a survey ['foo']")


def _acceptance_plays():
    return _yaml('playbooks/acceptance.yml')


def test_acceptance_checks_runs_and_reports_every_measuring_survey():
    """acceptance.yml stays literal (an imported playbook cannot be looped): each survey needs its preflight import,
    its stage and its result hosts there, and this names the one that lacks them."""
    relative = 'playbooks/acceptance.yml'
    plays = _acceptance_plays()
    checked = [play['vars']['acceptance_survey'] for play in plays
               if str(play.get('ansible.builtin.import_playbook', '')).strip() == 'acceptance/preflight.yml']
    assert sorted(checked) == sorted(MEASURING), _disagreement(relative, 'the acceptance/preflight.yml imports',
                                                               checked, MEASURING)
    staged = [play['vars']['acceptance_stage'] for play in plays
              if 'survey-' in str(play.get('ansible.builtin.import_playbook', ''))]
    assert sorted(staged) == sorted(MEASURING), _disagreement(relative, 'the survey-<name>.yml stages', staged, MEASURING)
    for name in staged:
        play = [entry for entry in plays if entry.get('vars', {}).get('acceptance_stage') == name
                and 'survey-' in str(entry.get('ansible.builtin.import_playbook', ''))][0]
        assert "'survey-%s.yml'" % name in play['ansible.builtin.import_playbook'], (
            '%s: the stage %s imports another survey\'s playbook' % (relative, name))
        assert 'acceptance_run_%s' % name in play['ansible.builtin.import_playbook'], (
            '%s: the stage %s is not switched by acceptance_run_%s' % (relative, name, name))
    result_hosts = [play['vars']['acceptance_result_hosts'] for play in plays
                    if 'acceptance_result_hosts' in play.get('vars', {})]
    assert result_hosts, '%s has no acceptance_result_hosts' % relative
    assert sorted(result_hosts[0]) == sorted(MEASURING), _disagreement(relative, 'acceptance_result_hosts',
                                                                       result_hosts[0], MEASURING)
