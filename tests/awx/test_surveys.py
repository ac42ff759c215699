# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every AWX survey question sets a variable the playbook really reads, with a type, choices and default
that the variable's role accepts (meta/argument_specs.yml), so a form filled in with its defaults runs
what the command line runs with none."""

from __future__ import annotations

import functools
import glob
import os
import re

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SURVEYS = sorted(glob.glob(os.path.join(ROOT, 'awx', 'surveys', '*.yml')))
AWX_TYPES = {'text', 'textarea', 'password', 'integer', 'float', 'multiplechoice', 'multiselect'}
# Surveys whose playbook runs a survey on every server of a group, each server on its own.
PER_SERVER = {'sgpdd', 'obdfilter', 'mds'}
# One lst session or one MPI job spans every node of the test.
NOT_SLICEABLE = {'lnet', 'ior', 'mdtest'}


def _load(path: str):
    with open(path, encoding='utf-8') as handle:
        return yaml.safe_load(handle)


def _template(form: dict) -> dict:
    return form.get('job_template') or form['workflow_job_template']


@functools.lru_cache(maxsize=None)
def _role_options(role: str) -> dict:
    specs = _load(os.path.join(ROOT, 'roles', role, 'meta', 'argument_specs.yml'))
    return specs['argument_specs']['main'].get('options', {})


def _questions():
    for path in SURVEYS:
        form = _load(path)
        for question in form['survey_spec']['spec']:
            yield pytest.param(form, question, id='%s:%s' % (os.path.basename(path), question.get('variable')))


def _survey_default(question: dict):
    """The default as the playbook receives it."""
    kind, value = question['type'], question['default']
    if kind == 'multiselect':
        return [line for line in str(value).split('\n') if line]
    if kind == 'integer':
        return int(value)
    if kind == 'float':
        return float(value)
    return value


def _as_bool(text) -> bool:
    assert text in ('true', 'false'), 'a yes/no answer must be "true" or "false", not %r' % (text,)
    return text == 'true'


def test_every_survey_playbook_has_a_form():
    playbooks = {_template(_load(p))['playbook'] for p in SURVEYS}
    wanted = {os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, 'playbooks', 'survey-*.yml'))}
    wanted |= {'playbooks/%s.yml' % name for name in ('acceptance', 'cleanup', 'prepare', 'report', 'stats-collect')}
    assert sorted(wanted - playbooks) == []


@pytest.mark.parametrize('path', SURVEYS, ids=os.path.basename)
def test_form_is_complete(path):
    form = _load(path)
    template = _template(form)
    assert os.path.isfile(os.path.join(ROOT, template['playbook'])), template['playbook']
    for role in form['argument_specs']:
        assert os.path.isfile(os.path.join(ROOT, 'roles', role, 'meta', 'argument_specs.yml')), role
    spec = form['survey_spec']
    assert spec['name'] and spec['description'] and spec['spec']
    variables = [q['variable'] for q in spec['spec']]
    assert len(variables) == len(set(variables)), 'a variable is asked twice'
    for question in spec['spec']:
        assert question['type'] in AWX_TYPES
        assert question['question_name'].strip()
        assert isinstance(question['required'], bool)
    if 'job_template' in form:
        slicing = template['job_slicing']
        assert isinstance(slicing['sliceable'], bool) and len(slicing['reason']) > 20


def test_required_role_variables_are_asked():
    for path in SURVEYS:
        form = _load(path)
        asked = {q['variable'] for q in form['survey_spec']['spec']}
        for role in form['argument_specs']:
            for name, option in _role_options(role).items():
                if option.get('required'):
                    assert name in asked, '%s: %s is required by roles/%s' % (os.path.basename(path), name, role)


@pytest.mark.parametrize('survey', sorted(PER_SERVER | NOT_SLICEABLE))
def test_job_slicing(survey):
    path = os.path.join(ROOT, 'awx', 'surveys', 'survey-%s.yml' % survey)
    if not os.path.exists(path):
        pytest.fail('no survey form for %s' % survey)
    assert _load(path)['job_template']['job_slicing']['sliceable'] is (survey in PER_SERVER)


@pytest.mark.parametrize('form, question', list(_questions()))
def test_question_maps_to_a_variable(form, question):
    variable = question['variable']
    options = {}
    for role in form['argument_specs']:
        options.update(_role_options(role))
    playbook_vars = form.get('playbook_variables') or {}
    if variable in playbook_vars:
        _check_playbook_variable(_template(form)['playbook'], variable, playbook_vars[variable], question)
        return
    assert variable in options, '%s is neither an option of roles %s nor a declared playbook variable' % (
        variable, ', '.join(form['argument_specs']))
    _check_against_option(question, options[variable])


def _check_limits(question: dict, value) -> None:
    measured = len(value) if isinstance(value, str) else value
    if 'min' in question and question['type'] in ('integer', 'float', 'text', 'textarea', 'password'):
        assert measured >= question['min'], '%s: default %r below min' % (question['variable'], value)
    if 'max' in question and question['type'] in ('integer', 'float', 'text', 'textarea', 'password'):
        assert measured <= question['max'], '%s: default %r above max' % (question['variable'], value)


def _check_against_option(question: dict, option: dict) -> None:
    kind, role_type = question['type'], option.get('type', 'str')
    name = question['variable']
    choices = question.get('choices')
    if kind in ('text', 'textarea', 'password'):
        assert role_type in ('str', 'path', 'raw'), '%s: a text answer for a %s' % (name, role_type)
    elif kind == 'integer':
        assert role_type == 'int', '%s: an integer answer for a %s' % (name, role_type)
    elif kind == 'float':
        assert role_type == 'float', '%s: a float answer for a %s' % (name, role_type)
    elif kind == 'multiplechoice' and role_type == 'bool':
        assert sorted(choices) == ['false', 'true'], '%s: a yes/no question offers exactly true and false' % name
    elif kind == 'multiplechoice':
        assert role_type == 'str', '%s: one choice for a %s' % (name, role_type)
        if option.get('choices'):
            assert set(choices) <= set(option['choices']), '%s: %s not accepted by the role' % (
                name, sorted(set(choices) - set(option['choices'])))
    elif kind == 'multiselect':
        assert role_type == 'list' and option.get('elements', 'str') == 'str', '%s: several choices for a %s' % (
            name, role_type)
        assert option.get('choices'), '%s: the role has no fixed choices to offer' % name
        assert set(choices) <= set(option['choices']), '%s: %s not accepted by the role' % (
            name, sorted(set(choices) - set(option['choices'])))
    if 'default' not in question:
        # No default in the form: the role's default applies when the question is left empty, or the
        # operator must answer (required) a variable the role has no usable default for.
        assert question['required'] or 'default' in option or not option.get('required'), name
        return
    value = _survey_default(question)
    _check_limits(question, value)
    if choices is not None:
        for item in (value if isinstance(value, list) else [value]):
            assert item in choices, '%s: default %r is not one of the choices' % (name, item)
    if role_type == 'bool':
        value = _as_bool(value)
    assert value == option.get('default'), '%s: the form defaults to %r, the role to %r' % (
        name, value, option.get('default'))


def _check_playbook_variable(playbook: str, variable: str, declared: dict, question: dict) -> None:
    with open(os.path.join(ROOT, playbook), encoding='utf-8') as handle:
        text = handle.read()
    # The playbook's own fallback, e.g. `iokit_sgpdd_hosts | default('oss')`, is the default it runs with.
    fallbacks = re.findall(r'\b%s\s*\|\s*default\(([^()]*)\)' % re.escape(variable), text)
    assert fallbacks, '%s does not read %s with a default' % (playbook, variable)
    literals = {yaml.safe_load(f.replace("'", '"')) if f.startswith("'") else yaml.safe_load(f) for f in fallbacks}
    assert literals == {declared['default']}, '%s: %s falls back to %s, the form declares %r' % (
        playbook, variable, sorted(map(str, literals)), declared['default'])
    kind = question['type']
    if declared['type'] == 'bool':
        assert kind == 'multiplechoice' and sorted(question['choices']) == ['false', 'true'], variable
        if 'default' in question:
            assert _as_bool(question['default']) is declared['default'], variable
        assert re.search(r'\b%s\s*\|\s*default\([^()]*\)\s*\|\s*bool\b' % re.escape(variable), text), (
            '%s: a "true"/"false" answer needs `| bool` where %s is read' % (playbook, variable))
    else:
        assert declared['type'] == 'str' and kind in ('text', 'multiplechoice'), variable
        if 'default' in question:
            assert question['default'] == declared['default'], variable
            _check_limits(question, question['default'])
