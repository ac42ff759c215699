# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: acceptance_junit
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Write an acceptance verdict as JUnit XML
description:
  - Turns the result of P(lustre.iokit.acceptance_verdict#filter) into JUnit XML that Jenkins, GitLab and AWX read
    (C(testsuites) / C(testsuite) per kind of criterion / C(testcase) per check, with C(failure) or C(skipped)).
  - Each failure's message names the metric, the subject, the value, the limit and the run ids; the run ids are
    also testsuite properties.
  - A failed case that carries the C(diagnosis) of its weak component (the cases of C(verdict.json) written by
    M(lustre.iokit.iokit_report)) has it appended to its failure message; the test case names are the same with or
    without it.
options:
  _input:
    description: A verdict from P(lustre.iokit.acceptance_verdict#filter).
    type: dict
    required: true
  name:
    description: Name of the C(testsuites) element, prefix of every C(testsuite).
    type: str
    default: lustre.iokit acceptance
'''

EXAMPLES = r'''
- name: Keep the verdict for the CI system
  ansible.builtin.copy:
    content: "{{ verdict | lustre.iokit.acceptance_junit }}"
    dest: "{{ iokit_results_dir }}/{{ iokit_run_id }}/junit.xml"
    mode: "0644"
  delegate_to: localhost
'''

RETURN = r'''
_value:
  description: The JUnit XML document.
  type: str
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.lustre.iokit.plugins.plugin_utils.report.criteria import junit_xml
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.filters import make_report_filter


def acceptance_junit(verdict, name='lustre.iokit acceptance'):
    if not isinstance(verdict, dict) or not isinstance(verdict.get('cases'), list) or 'counts' not in verdict:
        raise AnsibleFilterError('acceptance_junit: expected a verdict from acceptance_verdict, got %r' % (verdict,))
    return junit_xml(verdict, name)


class FilterModule(object):
    def filters(self):
        return {'acceptance_junit': make_report_filter('acceptance_junit', acceptance_junit)}
