# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: survey_problems
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Every problem of a survey role's variables, checked by the survey's own module and engine code
description:
  - What a survey role's preflight runs on the controller before any node is touched. The role's variables
    (C(<prefix><option>), such as C(obdfilter_size_mib)) become the options the role passes to the survey module,
    converted as the module's argument spec converts them; then the module's own checks and the engine checks that
    need no look at the node run on them, so the preflight and the module refuse the same settings with the same
    words.
  - Added to them, the checks every survey role shares, in one place for all of them - C(iokit_timeout_s) (at least
    1), C(<prefix>async_margin_s) (at least 30), C(<prefix>poll_interval_s) (at least 1), C(<prefix>slow_share) (above
    0, at most 1), C(<prefix>slowest_count) (0 or more), C(iokit_workdir) (an absolute path other than C(/)) and
    C(<prefix>iterations) (a whole number, at least 1; not for V(ior) and V(mdtest)).
  - A deprecated role variable that is set (C(ior_iterations), C(mdtest_iterations), the old names of
    C(ior_repetitions) and C(mdtest_repetitions)) is checked as the variable that replaces it, and a deprecation
    warning names both.
  - Each problem is one line that starts with the variable to change and its value in parentheses, then the rule
    it breaks, in the module's words (see the examples). Options
    that users set through the C(iokit_*) settings are named so - C(iokit_timeout_s), C(iokit_workdir),
    C(iokit_engine).
  - The prefixes are C(sgpdd_), C(obdfilter_), C(mds_), C(ost_), C(lnet_), C(ior_) and C(mdtest_), and
    C(stats_collect_) for the statistics that any survey can collect (V(stats_collect), with the
    P(lustre.iokit.stats_collect#module) module's checks).
    Where a role's module call departs from C(<prefix><option>), the check follows it - C(lnet_server_nids) and
    C(lnet_client_nids) (V(servers), V(clients); NIDs left empty are found on C(lnet_server_hosts) and
    C(lnet_client_hosts) later), C(lnet_session_timeout_s), C(__ior_mpi_hosts) and C(__mdtest_mpi_hosts) (V(hosts),
    the hostfile), C(ior_binary) and C(mdtest_binary), and the options a role leaves out when their variable is empty.
  - The values computed for a role (the C(computed) values of the P(lustre.iokit.survey_run#lookup) lookup, which a
    preflight adds to the role's variables) are internal and start with two underscores before the
    prefix - C(__<prefix>timeout_s), C(__<prefix>workdir) and C(__<prefix>engine) (the C(iokit_*) settings),
    C(__ior_mpi_hosts), C(__mdtest_mpi_hosts) and C(__lnet_selftest_hosts); a problem of one names the setting
    users give instead (C(iokit_workdir), C(ior_hosts), ...).
  - Whether the node runs the module as root (which Open MPI refuses without C(allow_run_as_root)), the devices,
    targets, free space and the node's Lustre version are checked by the module on the node, not here.
  - Role checks that the module cannot make are here too - each of C(sgpdd_devices) an absolute path; an
    C(lnet_console_host), servers and clients (hosts or NIDs), every host of the LNet test in the play, and an
    C(lnet_network) name; C(ior_module_shell) and C(mdtest_module_shell) given with environment modules; a
    C(stats_collect_action) of V(start), V(stop) or V(collect).
  - P(lustre.iokit.survey_variables#filter) names the variables a survey's check reads, so that a preflight passes
    exactly those.
options:
  _input:
    description:
      - The role's variables by name. A variable left out keeps the module's default.
    type: dict
    required: true
  survey:
    description: The survey whose role the variables are of.
    type: str
    required: true
    choices: [sgpdd, obdfilter, mds, ost, lnet, ior, mdtest, stats_collect]
  play_hosts:
    description:
      - The hosts of the play (C(ansible_play_hosts_all)); for V(lnet), every host of the test (console, servers,
        clients) must be among them.
    type: list
    elements: str
  memory_mib:
    description:
      - For V(ior), the launching client's memory in MiB (C(ansible_memtotal_mb)), which the cache rule
        (C(ior_memory_factor)) uses when C(ior_client_memory_mib) is 0.
    type: int
seealso:
  - plugin: lustre.iokit.survey_variables
    plugin_type: filter
'''

EXAMPLES = r'''
- name: Fail when an obdfilter variable is wrong (skipped when none is)
  vars:
    __obdfilter_variables: "{{ query('ansible.builtin.varnames', '^(__)?obdfilter_') | lustre.iokit.survey_variables('obdfilter') }}"
    __obdfilter_problems: >-
      {{ dict(__obdfilter_variables | zip(query('ansible.builtin.vars', *__obdfilter_variables)))
         | combine(lookup('lustre.iokit.survey_run', 'obdfilter').computed)
         | lustre.iokit.survey_problems('obdfilter') }}
  ansible.builtin.fail:
    msg: "{{ __obdfilter_problems | join('\n') }}"
  when: __obdfilter_problems | length > 0

- name: The problems of given settings
  ansible.builtin.debug:
    msg: "{{ {'sgpdd_thrlo': 4, 'sgpdd_thrhi': 2, 'sgpdd_devices': ['/dev/sdb']} | lustre.iokit.survey_problems('sgpdd') }}"
  # - sgpdd_thrlo (4): 4 is greater than sgpdd_thrhi (2)
  # - sgpdd_destroy_data (False): must be true to run the write action, which overwrites the data on /dev/sdb
'''

RETURN = r'''
_value:
  description:
    - One line per problem, the variable to change and its value first; empty when every variable is fine.
  type: list
  elements: str
'''

from ansible.errors import AnsibleFilterError
from ansible.utils.display import Display

from ansible_collections.lustre.iokit.plugins.plugin_utils import survey_checks


def survey_problems(settings, survey, play_hosts=None, memory_mib=None):
    if not isinstance(settings, dict):
        raise AnsibleFilterError('survey_problems: the input must be a dict of role variables, got %s'
                                 % type(settings).__name__)
    try:
        # 0.3.0 drops the deprecated role variables (survey_catalog's ``renamed``), as the modules' aliases.
        for old, new in survey_checks.renamed_settings(str(survey), settings):
            Display().deprecated('%s is the old name of %s, which it overrides while it is set: set %s instead'
                                 % (old, new, new), version='0.3.0', collection_name='lustre.iokit')
        return survey_checks.problems(str(survey), settings, play_hosts=play_hosts, memory_mib=memory_mib)
    except survey_checks.UnknownSurvey as exc:
        raise AnsibleFilterError('survey_problems: %s' % exc)


class FilterModule(object):
    def filters(self):
        return {'survey_problems': survey_problems}
