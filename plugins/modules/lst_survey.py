#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: lst_survey
short_description: Measure LNet between server and client NIDs with LNet self-test, as lustre-iokit's lst-survey does
version_added: 0.1.0
description:
  - Runs the lnet survey of the Lustre I/O kit from one console node and returns one record per group pair and
    test in the result envelope C(lustre.iokit/result/v1).
  - The O(servers) and O(clients) are split into groups (O(split)) - every client against every server, each server
    alone against all clients, or each client alone against all servers. For every group pair the O(modes) run
    in order, a bulk mode once per size of O(sizes) (C(read_4k), C(read_1m), C(write_4k), C(write_1m)) and
    C(ping) once, as C(lst-survey) does.
  - Each test is an C(lst) batch - C(add_batch), C(add_test --concurrency --distribute --from clients --to servers),
    C(run), C(stat --bw --rate --count --delay), C(stop) and C(show_error). C(--distribute) is the client and server
    group sizes, so that every client of a pair talks to every server of it, as lst-survey passes it.
  - A record's figures are those of the O(stat_group) - lst's per-node average, averaged over the O(stat_count)
    samples. lst-survey's C(Read) is what the group received and C(Write) what it sent, so for a C(read) test the
    servers' write figures carry the bulk data. Every bandwidth is MiB/s (lst-survey never passes C(--mbs)).
  - Added to lst-survey's figures so that one bad NIC stands out - the slowest and fastest node of the group (lst's
    Min and Max), each node's own figures (C(lst stat <nid>), with O(per_node_stats)) and each node's LNet errors
    during the test (the change of C(lst show_error)'s session counters).
  - One console session (C(LST_SESSION) is the module's process id) carries the survey. It is written to the node
    state under O(workdir) before C(lst new_session) and ended at the end, after an error, a timeout or a SIGTERM
    too; after a SIGKILL M(lustre.iokit.iokit_cleanup) ends it. A session an earlier run of this collection left
    open is ended first; another console's session is reported and left alone unless O(force_session).
  - C(lnet_selftest) is loaded on this node when it is missing (recorded in the node state) and unloaded at the end.
    Every server and client node needs it too; the C(lustre.iokit.lnet) role loads it on all of them.
  - LNet self-test does not touch storage, but it loads the network; do not run it on a file system in production use.
author:
  - lustre.iokit contributors (@lustre)
requirements:
  - Lustre's C(lst) and the C(lnet_selftest) module on this node, and C(lnet_selftest) loaded on every node tested.
  - For O(engine=iokit), lustre-iokit 2.16 or later (C(lst-survey), C(lst.sh)) and C(bc).
extends_documentation_fragment:
  - lustre.iokit.attributes
  - lustre.iokit.survey_common
  - lustre.iokit.resume
options:
  servers:
    description:
      - NIDs of the server group (C(lst-survey -t)), such as C(10.0.0.1@tcp); a range such as C(10.0.0.[1-4]@o2ib)
        counts as one entry. The C(lustre.iokit.lnet) role reads them on each host with C(lctl list_nids).
    type: list
    elements: str
    required: true
  clients:
    description: NIDs of the client group (C(lst-survey -f)).
    type: list
    elements: str
    required: true
  modes:
    description:
      - Tests per group pair, in this order (C(lst-survey -m)); V(rw) runs a read and a write in the same batch.
    type: list
    elements: str
    choices: [read, write, rw, ping]
    default: [read, write, ping]
  sizes:
    description: Bulk sizes of the read, write and rw tests (C(lst-survey -s)), bytes or with C(k)/C(m), at most C(1m).
    type: list
    elements: str
    default: [4k, 1m]
  concurrency:
    description: RPCs each client keeps in flight (C(lst-survey -c)), 1 to 1024.
    type: int
    default: 64
  stat_count:
    description: C(lst stat) samples per test (C(lst-survey -n)).
    type: int
    default: 3
  stat_delay_s:
    description: Seconds between two samples (C(lst-survey -D)); a test takes about O(stat_count) x O(stat_delay_s).
    type: int
    default: 3
  stat_group:
    description: The group whose figures a record reports (C(lst-survey -g)); both groups are in C(groups).
    type: str
    choices: [servers, clients]
    default: servers
  split:
    description:
      - How the NIDs are grouped, each entry in turn - V(all) every client against every server; V(each_server) each
        server alone against all clients (C(lst-survey -N 1)); V(each_client) each client alone against all servers
        (C(lst-survey -M 1)).
    type: list
    elements: str
    choices: [all, each_server, each_client]
    default: [all]
  distribute:
    description:
      - C(lst add_test --distribute S:D). Default is the client and server group sizes, as lst-survey passes them.
    type: str
  per_node_stats:
    description: Also sample every node alone, in the same C(lst stat) run, so that each node's figures are recorded.
    type: bool
    default: true
  session_timeout:
    description: Seconds the console session outlives a killed survey before the kernel ends it (C(new_session --timeout)).
    type: int
    default: 300
  force_session:
    description:
      - Replace a session of another console or user (C(lst new_session --force)). It interrupts that session's
        tests; by default the module fails and names the session.
    type: bool
    default: false
  iokit_script:
    description: The C(lst-survey) script run by O(engine=iokit); a name is looked up in C(PATH).
    type: str
    default: lst-survey
  nid_owners:
    description:
      - The inventory host that owns each NID (C(192.168.1.10@tcp) to C(oss1)). The C(lustre.iokit.lnet) role passes each server's
        and client's NID as it read it there with C(lctl list_nids), and C(lnet_nid_owners) (NIDs given as
        C(lnet_server_nids) or C(lnet_client_nids) have no host the role knows).
      - Each NID of O(servers) and O(clients) that it names is recorded with its host in C(nid_owners) of
        RV(environment), so that the history keys the NID by its node (C(oss1/192.168.1.10@tcp)); NIDs outside the
        groups are left out. Not a survey parameter - it changes nothing measured.
    type: dict
notes:
  - O(engine=iokit) runs the installed lst-survey once per O(split) entry and parses its CSV; it refuses to run on a
    node older than Lustre 2.16, which has no lst-survey. Its figures are integers (lst-survey truncates them), it
    prints no per-node figures, and its error counts add up over the modes of a group pair.
  - The native engine's error counts are per test - the nodes whose session counters changed during it.
seealso:
  - name: lustre-iokit lst-survey
    description: The I/O kit script this module reproduces.
    link: https://github.com/lustre/lustre-release/tree/master/lustre-iokit/lst-survey
  - module: lustre.iokit.kernel_module
    description: Loads C(lnet_selftest) on the servers and clients of the test, with O(lustre.iokit.kernel_module#module:name=lnet_selftest).
  - module: lustre.iokit.iokit_cleanup
'''

EXAMPLES = r'''
- name: Measure every client against every server, then each server alone
  lustre.iokit.lst_survey:
    servers: [10.0.0.1@o2ib, 10.0.0.2@o2ib]
    clients: [10.0.0.11@o2ib, 10.0.0.12@o2ib]
    split: [all, each_server]
    timeout: 1200
    run_id: "{{ iokit_run_id }}"
  async: 1500
  poll: 0
  register: lnet_job

- name: Show the plan only
  lustre.iokit.lst_survey:
    servers: [10.0.0.1@o2ib]
    clients: ['10.0.0.[11-14]@o2ib']
  check_mode: true
  register: lnet_plan
'''

RETURN = r'''
schema:
  description: Envelope schema identifier.
  returned: always
  type: str
  sample: lustre.iokit/result/v1
run_id:
  description: The run identifier.
  returned: always
  type: str
host:
  description: Short host name of the console node.
  returned: always
  type: str
survey:
  description: Always V(lnet).
  returned: always
  type: str
engine:
  description: The engine that ran, V(native) or V(iokit).
  returned: always
  type: str
status:
  description:
    - V(ok) every test measured without error; V(partial) some measured, then an error (LNet errors on a node
      included), a timeout or a signal; V(failed) nothing measured (the module then fails, still returning the
      envelope); V(skipped) in check mode.
  returned: always
  type: str
parameters:
  description: The survey's options.
  returned: always
  type: dict
envelope:
  description:
    - The complete result envelope C(lustre.iokit/result/v1), ready to store; the other keys repeat its fields at
      the top level, except C(started) and C(finished), which Ansible reserves for async jobs.
  returned: always
  type: dict
duration_s:
  description: Seconds the module ran.
  returned: always
  type: float
records:
  description:
    - One record per group pair and test, in the shape of the C(parse_lst_survey) filter - C(servers), C(clients),
      C(mode), C(read_mib_s), C(read_rpc_s), C(write_mib_s), C(write_rpc_s), C(server_errors), C(client_errors),
      C(complete) and C(error).
    - Added by this module - C(split), C(server_group), C(client_group), C(stat_group), C(concurrency),
      C(distribute), C(size), C(samples), C(delay_s), the reported group's Min/Max over its nodes
      (C(read_min_mib_s), C(read_max_mib_s), C(write_min_mib_s), C(write_max_mib_s) and the same in C(_rpc_s)),
      C(failed_nodes), C(groups) (both groups' C(bandwidth) and C(rates), C(read)/C(write) C(avg), C(min),
      C(max)) and C(nodes), one per NID with its C(role), its own C(read_mib_s), C(write_mib_s), C(read_rpc_s),
      C(write_rpc_s) and its C(errors) during the test (C(brw), C(ping), C(rpc), C(dropped), C(expired), or
      C(failure)), null when it had none.
  returned: always
  type: list
  elements: dict
  sample:
    - servers: [172.18.2.5@tcp, 172.18.2.6@tcp]
      clients: [172.18.2.7@tcp, 172.18.2.8@tcp]
      mode: read_4k
      read_mib_s: 22.1
      read_rpc_s: 149981
      write_mib_s: 608.2
      write_rpc_s: 299961
      server_errors: 0
      client_errors: 0
errors:
  description: Errors, each with the C(point) (C(split), C(servers), C(clients), C(mode)) it belongs to, or null, and a C(message).
  returned: always
  type: list
  elements: dict
environment:
  description:
    - Facts at run time - C(lustre_version), C(kernel), C(session), C(lnet_selftest_loaded_by_us), C(notes).
    - C(nid_owners) - each NID of O(servers) and O(clients) that O(nid_owners) names, with the inventory host that
      owns it (C(192.168.1.10@tcp) to C(oss1)); empty when none is known. The history keys such a NID as C(<host>/<NID>).
  returned: always
  type: dict
raw_output:
  description: Path on the node of the results in lst-survey's CSV format; the lst commands and output are beside it.
  returned: always
  type: str
raw_files:
  description: Paths on the node of the raw output files.
  returned: when the survey ran
  type: list
  elements: str
plan:
  description:
    - The group C(pairs) (C(split), C(server_group), C(servers), C(client_group), C(clients), C(distribute)), the
      C(tests), the number of C(points), the C(session) name and C(overlap) (NIDs in both lists).
    - C(estimate) - the plan's C(points) to run, C(bytes_written), C(bytes_read), its C(work) (C(amount) in
      C(unit)), the C(rate) in C(rate_unit), C(estimated_duration_s) and C(estimate_basis), which says where the
      rate comes from (here always assumed; the survey role replaces it with a stored earlier run's when the
      results store has one). C(estimated_duration_s) and C(estimate_basis) are repeated at the top of the plan.
    - C(lines), in check mode - the plan in a few lines, as the survey playbooks show it.
  returned: always
  type: dict
'''

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.lustre.iokit.plugins.module_utils import payload
from ansible_collections.lustre.iokit.plugins.module_utils import progress as progress_utils
from ansible_collections.lustre.iokit.plugins.module_utils.engines import lnet
from ansible_collections.lustre.iokit.plugins.module_utils.runner import ProcessRecordingRunner, Runner
from ansible_collections.lustre.iokit.plugins.module_utils.survey_args import common_option_problems, survey_common_argument_spec
from ansible_collections.lustre.iokit.plugins.module_utils import survey_module

SURVEY = 'lnet'
PARAMETER_NAMES = ('servers', 'clients', 'modes', 'sizes', 'concurrency', 'stat_count', 'stat_delay_s', 'stat_group',
                   'split', 'distribute', 'per_node_stats', 'engine', 'timeout')


def argument_spec():
    spec = survey_common_argument_spec()
    spec.update(
        servers=dict(type='list', elements='str', required=True),
        clients=dict(type='list', elements='str', required=True),
        modes=dict(type='list', elements='str', choices=list(lnet.MODES), default=list(lnet.DEFAULT_MODES)),
        sizes=dict(type='list', elements='str', default=list(lnet.DEFAULT_SIZES)),
        concurrency=dict(type='int', default=lnet.DEFAULT_CONCURRENCY),
        stat_count=dict(type='int', default=lnet.DEFAULT_STAT_COUNT),
        stat_delay_s=dict(type='int', default=lnet.DEFAULT_STAT_DELAY_S),
        stat_group=dict(type='str', choices=list(lnet.STAT_GROUPS), default='servers'),
        split=dict(type='list', elements='str', choices=list(lnet.SPLITS), default=['all']),
        distribute=dict(type='str'),
        per_node_stats=dict(type='bool', default=True),
        session_timeout=dict(type='int', default=lnet.DEFAULT_SESSION_TIMEOUT_S),
        force_session=dict(type='bool', default=False),
        iokit_script=dict(type='str', default='lst-survey'),
        nid_owners=dict(type='dict'),
    )
    spec.update(progress_utils.resume_argument_spec())
    return spec


def option_problems(params):
    """Invalid option values that need no look at the node, each an OptionProblem."""
    problems = list(common_option_problems(params))
    problems.extend(lnet.option_problems(params['servers'], params['clients'], params['modes'], params['sizes'],
                                         params['concurrency'], params['stat_count'], params['stat_delay_s'],
                                         params['stat_group'], params['split'], params['distribute'],
                                         params['session_timeout']))
    problems.extend(lnet.nid_owner_problems(params['nid_owners']))
    return problems


def record_point(record):
    """A record's test as the progress plan names it: its group pair and mode."""
    return {'servers': record['server_group'], 'clients': record['client_group'], 'mode': record['mode']}


class LstSpec(survey_module.ServerSurveySpec):
    """The lnet survey for survey_module.run_server_survey. The session's end and the module's unloading run on the
    control runner: they still run after a timeout."""

    survey = SURVEY
    what = 'lnet survey'
    parameter_names = PARAMETER_NAMES
    kernel_module = lnet.SELFTEST_MODULE
    kernel_module_fact = 'lnet_selftest_loaded_by_us'
    resume_keys = ('servers', 'clients', 'mode')
    # The CSV first: it is what parse_lst_survey reads, and what raw_output points at.
    raw_name = 'lst_survey'
    option_problems = staticmethod(option_problems)
    record_point = staticmethod(record_point)

    def build(self, start):
        module = start.module
        params = module.params
        version = start.lctl.version()
        if params['engine'] == 'iokit':
            problem = lnet.iokit_version_problem(version)
            if problem:
                module.fail_json(msg=problem)
        survey = lnet.LstSurvey(
            start.context, params['servers'], params['clients'],
            modes=params['modes'], sizes=params['sizes'], concurrency=params['concurrency'],
            stat_count=params['stat_count'], stat_delay_s=params['stat_delay_s'], stat_group=params['stat_group'],
            split=params['split'], distribute=params['distribute'], per_node_stats=params['per_node_stats'],
            session_timeout=params['session_timeout'], force_session=params['force_session'])
        # Which host owns each NID of the groups: the history keys a NID by it (<host>/<NID>).
        start.builder.set_environment(lustre_version=version, kernel=os.uname()[2], session=survey.session,
                                      nid_owners=lnet.group_nid_owners(params['servers'], params['clients'],
                                                                       params['nid_owners']))
        return survey

    def check(self, start, survey):
        """The engine's settings were checked with the options (option_problems)."""

    def before_run(self, start, survey, plan):
        if start.module.params['engine'] == 'native' and start.module.get_bin_path('lst') is None:
            start.module.fail_json(msg='lst is not installed on this node (Lustre client or server utilities); the '
                                       'native engine drives it', plan=plan)

    def plan_lines(self, params, plan):
        return ['servers: %s; clients: %s' % (params['servers'], params['clients']),
                'group pairs: %s; tests: %s' % ([pair['split'] for pair in plan['pairs']], plan['tests'])]

    def planned(self, survey, plan):
        # The progress counts the tests of every group pair, each sampled for the same time.
        return [{'servers': pair['server_group'], 'clients': pair['client_group'], 'mode': mode}
                for pair in plan['pairs'] for mode in plan['tests']]

    def run_iokit(self, start, survey, run_dir):
        params, runner = start.module.params, start.runner
        script = survey_module.iokit_script_path(start.module)
        records, errors, files = lnet.run_iokit(
            runner, script, run_dir, params['split'], servers=params['servers'], clients=params['clients'],
            modes=params['modes'], sizes=params['sizes'], concurrency=params['concurrency'],
            stat_count=params['stat_count'], stat_delay_s=params['stat_delay_s'], stat_group=params['stat_group'])
        survey_module.add_iokit_outcome(start.builder, records, errors, runner)
        csv_files = [path for path in files if path.endswith('.csv')]
        return bool(records), csv_files + [path for path in files if path not in csv_files]

    def after_run(self, start, survey):
        start.builder.set_environment(notes=survey.notes)


def main():
    # First: a module killed later still leaves a payload directory the cleanup knows is stale.
    payload.claim()
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    survey_module.run_server_survey(module, LstSpec(), Runner, ProcessRecordingRunner)


if __name__ == '__main__':
    main()
