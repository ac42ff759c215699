# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: survey_run_problems
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Why a survey play failed, one line per host - the verdict of every survey playbook
description:
  - What the last play of a survey playbook (the internal role C(survey_common), C(tasks_from=verdict)) fails the run with,
    unless C(iokit_survey_fail_run=false).
  - One problem per stored envelope whose status is C(failed) (C(<host> measured nothing)); one per host that should
    have stored a result and did not (C(<host> has no result (<why>))); one per host that stored a result and then
    failed - its result could not be recorded in the results history, or a rerun failed beside an earlier launch's
    result (C(<host> failed (<why>); its stored result is kept)); and, when the result comes from fewer hosts
    than the play ran on (the LNet survey stores one envelope, the console's), one per other host of the play that
    failed or was unreachable (C(<host> failed (<why>))).
  - The reason is the failed task and its message, which the survey play noted in the host's C(survey_common_failures)
    fact; a host without one was unreachable or failed before its survey started (it is not among O(play_hosts)),
    or stored nothing.
  - An empty list means the run passes.
options:
  _input:
    description: The run's results of the survey, as P(lustre.iokit.stored_result#module) returns them with C(all_hosts=true).
    type: dict
    required: true
  survey:
    description: The survey, such as C(obdfilter); the key of C(survey_common_failures) read.
    type: str
    required: true
  hostvars:
    description: C(hostvars), from which each host's C(survey_common_failures) is read.
    type: raw
    required: true
  play_hosts_all:
    description: Every host the play was for (C(ansible_play_hosts_all)), the unreachable and failed ones included.
    type: list
    elements: str
    required: true
  play_hosts:
    description: The hosts still in the play (C(ansible_play_hosts)).
    type: list
    elements: str
    required: true
  expected_hosts:
    description:
      - The hosts that must each have stored a result; default O(play_hosts_all).
    type: list
    elements: str
seealso:
  - plugin: lustre.iokit.stored_result
    plugin_type: module
'''

EXAMPLES = r'''
- name: Fail the run when a host has no result or measured nothing
  ansible.builtin.assert:
    that: problems == []
    fail_msg: "obdfilter: {{ problems | join('; ') }}"
  vars:
    problems: >-
      {{ obdfilter_results | lustre.iokit.survey_run_problems('obdfilter', hostvars, ansible_play_hosts_all,
                                                              ansible_play_hosts) }}
  run_once: true
'''

RETURN = r'''
_value:
  description: The problems, in the order above (hosts in the play's order); empty when the run passes.
  type: list
  elements: str
  sample:
    - oss2 measured nothing
    - "oss3 has no result (Wait for the survey: Timeout exceeded)"
    - oss4 has no result (unreachable, or failed before its survey started)
    - "oss5 failed (Record the stored result in the results history: history database sqlite:///... locked ...);
      its stored result is kept"
'''

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

NOT_STARTED = 'unreachable, or failed before its survey started'


def _noted_failure(hostvars, host, survey):
    """The failure the survey play noted for ``host``, or ''."""
    try:
        facts = hostvars[host]
    except KeyError:
        return ''
    failures = facts.get('survey_common_failures') if isinstance(facts, Mapping) else None
    if not isinstance(failures, Mapping):
        return ''
    return str(failures.get(survey) or '')


def survey_run_problems(run, survey, hostvars, play_hosts_all, play_hosts, expected_hosts=None):
    if not isinstance(run, Mapping):
        raise AnsibleFilterError('survey_run_problems: the input must be the stored results of the run, got %s'
                                 % type(run).__name__)
    envelopes = [envelope for envelope in run.get('envelopes') or [] if isinstance(envelope, Mapping)]
    stored = set(str(envelope.get('host')) for envelope in envelopes)
    expected = list(play_hosts_all if expected_hosts is None else expected_hosts)

    def why(host, stored_nothing):
        return _noted_failure(hostvars, host, survey) or (NOT_STARTED if host not in play_hosts else stored_nothing)

    problems = ['%s measured nothing' % envelope.get('host') for envelope in envelopes
                if envelope.get('status') == 'failed']
    problems.extend('%s has no result (%s)' % (host, why(host, 'none was stored'))
                    for host in expected if host not in stored)
    # A host that stored a result and failed after it (its result could not be recorded in the history), or whose
    # rerun failed beside an earlier launch's result: the result stays, the run fails.
    problems.extend('%s failed (%s); its stored result is kept' % (host, _noted_failure(hostvars, host, survey))
                    for host in expected if host in stored and _noted_failure(hostvars, host, survey))
    problems.extend('%s failed (%s)' % (host, why(host, 'failed'))
                    for host in play_hosts_all
                    if host not in expected and (host not in play_hosts or _noted_failure(hostvars, host, survey)))
    return problems


class FilterModule(object):
    def filters(self):
        return {'survey_run_problems': survey_run_problems}
