# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: survey_run
author:
  - lustre.iokit contributors (@lustre)
version_added: 0.2.0
short_description: What a survey's run takes from its role's variables on this host
description:
  - The values the collection's C(survey_common) role reads around a survey's module on the host the task runs for,
    from the survey role's variables and the C(iokit_*) settings, the same way M(lustre.iokit.survey_start) reads
    them for the module's arguments.
options:
  _terms:
    description: The survey (one name).
    type: list
    elements: str
    required: true
'''

EXAMPLES = r'''
- name: How many times obdfilter runs on this host
  ansible.builtin.debug:
    msg: "{{ lookup('lustre.iokit.survey_run', 'obdfilter').iterations }}"
'''

RETURN = r'''
_raw:
  description: One dict for the survey.
  type: list
  elements: dict
  contains:
    iterations:
      description: How many times the survey runs on the host (C(<survey>_iterations); 1 for ior and mdtest).
      type: int
    prepare:
      description: Whether the role's C(tasks/prepare.yml) runs before the iterations (sgpdd, lnet).
      type: bool
    result_host:
      description: The one host that runs the module and stores the result (lnet's C(lnet_console_host)); none when every host does.
      type: str
    here:
      description: Whether this host runs the module.
      type: bool
    estimate:
      description: Whether check mode estimates the plan's duration (not for mdtest).
      type: bool
    fleet_plan:
      description: Whether check mode adds the hosts' plans up (the server surveys).
      type: bool
    timeout_s:
      description: The module's timeout, C(iokit_timeout_s) (default V(3600)).
      type: int
    workdir:
      description: The module's working directory on the node, C(iokit_workdir) (default V(/tmp/lustre-iokit)).
      type: str
    computed:
      description:
        - The role's internal values (C(__<survey>_timeout_s), C(__<survey>_workdir), C(__<survey>_engine), the
          hostfile C(__ior_mpi_hosts) or C(__mdtest_mpi_hosts), lnet's C(__lnet_selftest_hosts)), by name, for the
          preflight's P(lustre.iokit.survey_problems#filter).
      type: dict
'''

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.lustre.iokit.plugins.plugin_utils import survey_call, survey_checks


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        if len(terms) != 1:
            raise AnsibleLookupError('survey_run: give one survey, got %d' % len(terms))
        try:
            return [survey_call.run_values(str(terms[0]), survey_call.Variables(variables, self._templar.template))]
        except survey_checks.UnknownSurvey as exc:
            raise AnsibleLookupError('survey_run: %s' % exc)
