# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: survey_variables
author: lustre.iokit contributors
version_added: 1.0.0
short_description: The role variables that the check of a survey reads
description:
  - Out of the variable names given (a preflight gives those with the role's prefix, with or without the two
    leading underscores of the role's internal variables, from P(ansible.builtin.varnames#lookup)), the ones that
    P(lustre.iokit.survey_problems#filter) checks for the survey - one for each option of the survey module
    (C(<prefix><option>); the internal C(__<prefix>timeout_s), C(__<prefix>workdir) and C(__<prefix>engine) that the
    role reads from the C(iokit_*) settings for C(timeout), C(workdir) and C(engine)) and the settings every survey
    role shares (C(<prefix>async_margin_s), C(<prefix>poll_interval_s), C(<prefix>slow_share),
    C(<prefix>slowest_count), C(<prefix>iterations)).
  - Only these are then read with P(ansible.builtin.vars#lookup), so that a derived variable of the role (the async
    limit, the poll count) is never computed from a wrong setting before the preflight has named it.
options:
  _input:
    description: The names of the variables defined; the names returned are among them.
    type: list
    elements: str
    required: true
  survey:
    description: The survey whose role the variables are of.
    type: str
    required: true
    choices: [sgpdd, obdfilter, mds, ost, lnet, ior, mdtest, stats_collect]
seealso:
  - plugin: lustre.iokit.survey_problems
    plugin_type: filter
'''

EXAMPLES = r'''
- name: The mds survey variables its preflight checks
  ansible.builtin.debug:
    msg: "{{ query('ansible.builtin.varnames', '^(__)?mds_') | lustre.iokit.survey_variables('mds') }}"
'''

RETURN = r'''
_value:
  description: The names, sorted.
  type: list
  elements: str
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.lustre.iokit.plugins.plugin_utils import survey_checks


def survey_variables(defined, survey):
    if not isinstance(defined, (list, tuple)):
        raise AnsibleFilterError('survey_variables: the input must be a list of variable names, got %s'
                                 % type(defined).__name__)
    try:
        return survey_checks.variables(str(survey), [str(name) for name in defined])
    except survey_checks.UnknownSurvey as exc:
        raise AnsibleFilterError('survey_variables: %s' % exc)


class FilterModule(object):
    def filters(self):
        return {'survey_variables': survey_variables}
