#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: mds_survey
short_description: Measure MDT metadata rates through an echo client, as lustre-iokit's mds-survey does
version_added: 0.1.0
description:
  - Runs the mds survey of the Lustre I/O kit on an MDS and returns one record per thread count in the result
    envelope C(lustre.iokit/result/v1).
  - An echo client C(<mdt>_<tag>_ecc) is set up on the MDD layer of every target, where C(<tag>) is six hex
    digits of the run id; per MDT the O(dir_count) test directories (C(/MDT0000-<tag>-tests),
    C(/MDT0000-<tag>-tests1), ...) are removed if a killed launch of the run left them, then created. With
    O(engine=iokit) the script's own names (C(<mdt>_ecc), C(/MDT0000-tests)) are used. The thread count doubles
    from O(thrlo) to O(thrhi); a thread count below O(dir_count) is skipped; each thread handles O(file_count) / thread count files.
  - For every thread count the O(tests) run in order on all MDTs at once with C(lctl --threads). Per MDT the
    average is lctl's C(Total:) rate and min/max come from its per-second samples; the reported rate is the
    mean of the per-MDT averages, as the I/O kit prints it, and every MDT's figures are in C(per_mdt) of each record.
  - Everything created (the echo clients, the test directories, the file range of a C(create) not yet
    destroyed, C(obdecho) when this module loads it) is written to the node state under O(workdir) before it
    is created and removed at the end, after a timeout or a SIGTERM too.
  - The data live in the MDT's hidden C(ROOT_ECHO) directory, not in the client namespace; the survey uses
    inodes (O(file_count) per MDT at a time).
author:
  - lustre.iokit contributors (@lustre)
requirements:
  - A Lustre server with the MDTs set up (C(lctl dl) shows them C(UP)) and the C(obdecho) module available.
  - For O(engine=iokit), the lustre-iokit package (C(mds-survey)) and gawk.
extends_documentation_fragment:
  - lustre.iokit.attributes
  - lustre.iokit.survey_common
  - lustre.iokit.resume
  - lustre.iokit.sweep.adaptive
options:
  targets:
    description:
      - MDT names on this node, such as C(testfs-MDT0000). Empty means every C(UP) mdt device in C(lctl dl).
      - An unknown name, a device that is not an mdt, or one that is not C(UP) fails before anything is created.
    type: list
    elements: str
    default: []
  thrlo:
    description: Smallest thread count (the I/O kit's C(thrlo)); it doubles up to O(thrhi).
    type: int
    default: 4
  thrhi:
    description: Largest thread count (the I/O kit's C(thrhi)), at most 4096.
    type: int
    default: 32
  file_count:
    description:
      - Files per MDT at every thread count (the I/O kit's C(file_count)); each thread gets O(file_count) /
        thread count files, so it must be at least the largest thread count that runs.
    type: int
    default: 100000
  dir_count:
    description:
      - Directories per MDT (the I/O kit's C(dir_count)). Thread counts below it are skipped.
      - Default is O(thrlo), as in the I/O kit.
    type: int
  stripe_count:
    description:
      - OST objects per created file (the I/O kit's C(stripe_count)); above 0 it needs an C(UP) osc or osp
        device on the node.
    type: int
    default: 0
  tests:
    description:
      - Tests to run at every thread count, in this order; the first must be V(create) and the last V(destroy),
        so that every file created is removed.
    type: list
    elements: str
    choices: [create, lookup, md_getattr, setxattr, destroy]
    default: [create, lookup, md_getattr, setxattr, destroy]
  layer:
    description:
      - Layer the echo client is set up on. Only V(mdd) exists; the kernel's echo_client setup rejects any other
        third word for an MDT with EINVAL, so the option is only there to mirror the I/O kit's C(layer).
    type: str
    choices: [mdd]
    default: mdd
  start_number:
    description: First file number of each thread (the I/O kit's C(start_number), C(-b) of lctl).
    type: int
    default: 2
  iokit_script:
    description: The C(mds-survey) script run by O(engine=iokit); a name is looked up in C(PATH).
    type: str
    default: mds-survey
  point_s:
    description:
      - Time-bounded points (O(engine=native) only) - the seconds each test of a thread count aims at. A point
        then creates, per MDT, what that time allows at the rate the survey measured,
        C(max(floor, min(O(file_count), point_s x rate))), where the rate (items per second) is the slowest MDT's
        slowest test of the previous thread count; the survey's first point, with no rate yet, creates the floor.
        The count is whole files for every thread, the same on every MDT, and every test of the point
        (C(lookup), C(md_getattr), C(setxattr), C(destroy)) acts on the files its C(create) made.
      - A point whose floor cannot be created, at that rate, in the time left before O(timeout) (shared by its
        tests) is not run and named in RV(errors), rather than cut short.
      - Unset, every point creates O(file_count) files per MDT, exactly as the I/O kit (the floor does not
        apply), so that results stay comparable with the I/O kit's.
    type: float
  point_min_items:
    description:
      - With O(point_s), the least a point creates per MDT (the floor); it wins over O(point_s) and over
        O(file_count).
      - Unset, 10000 items. No item count the survey uses outgrows the MDS's caches (the files a point creates
        stay cached whatever their number), so the floor only keeps a point well past its threads' start.
    type: int
  sweep_start_near_knee:
    description:
      - With O(sweep=adaptive), an inner sweep that begins after one that stopped starts one doubling below the
        knee that one found, skipping the thread counts below (C(docs/adaptive-sweeps.md) says when that is safe).
      - mds-survey has a single thread sweep, so there is no earlier knee to start near and this changes nothing
        today; it is accepted so that a profile can set it for every survey alike.
      - Unset, false (the role leaves it out while its variable is null).
    type: bool
notes:
  - Only one mds survey runs on a node at a time (per O(workdir)) - a second start fails at once, naming the
    run id, host, pid and start time of the one running. A run that was killed is cleaned up before the next
    starts, unless one of its processes still runs.
  - O(engine=iokit) runs the installed script with the same parameters and parses its summary; its exit status
    is ignored (it exits 0 on most failures), success is read from the summary. Echo clients the script leaves
    behind are removed afterwards.
  - A worker that exits non-zero or an output without lctl's C(Total:) line makes that MDT's test C(error);
    the I/O kit would print an average of 0 in the second case.
seealso:
  - name: lustre-iokit mds-survey
    description: The I/O kit script this module reproduces.
    link: https://github.com/lustre/lustre-release/tree/master/lustre-iokit/mds-survey
'''

EXAMPLES = r'''
- name: Survey every MDT of the node, 1 to 8 threads, stopping after 20 minutes
  lustre.iokit.mds_survey:
    thrlo: 1
    thrhi: 8
    dir_count: 1
    file_count: 50000
    timeout: 1200
    run_id: "{{ iokit_run_id }}"
  async: 1500
  poll: 0
  register: mds_job

- name: Wait for the survey
  ansible.builtin.async_status:
    jid: "{{ mds_job.ansible_job_id }}"
  register: mds_result
  until: mds_result.finished
  retries: 200
  delay: 10

- name: Show the plan only
  lustre.iokit.mds_survey:
    targets: [testfs-MDT0000]
  check_mode: true
  register: mds_plan

- name: Time-bounded points - each test of a thread count aims at 20 s, at least 10000 files per MDT
  lustre.iokit.mds_survey:
    point_s: 20
    timeout: 1200
    run_id: "{{ iokit_run_id }}"
  async: 1500
  poll: 0
  register: mds_bounded_job
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
  description: Short host name of the node.
  returned: always
  type: str
survey:
  description: Always V(mds).
  returned: always
  type: str
engine:
  description: The engine that ran, V(native) or V(iokit).
  returned: always
  type: str
status:
  description:
    - V(ok) every thread count measured without error; V(partial) some measured, then an ERROR, a timeout or a
      signal; V(failed) nothing measured (the module then fails, still returning the envelope); V(skipped) in
      check mode.
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
    - One record per thread count, in the shape of the C(parse_mds_survey) filter - C(mdt) (number of MDTs),
      C(file), C(dir), C(thr), C(host) and C(tests), where each test has C(ops_s) (mean of the per-MDT
      averages), C(min_ops_s), C(max_ops_s) and C(status) (V(ok), V(error), or V(incomplete) when stopped).
      With O(engine=native) each test also has C(start_time) and C(end_time), when its C(lctl --threads) runs
      on all MDTs were started and when the last one ended, in epoch seconds (UTC, to the millisecond) of the
      node's clock (absent with O(engine=iokit)).
    - Added by this module - C(files_per_thread), C(stripe_count) and C(per_mdt), a list with each MDT's
      C(target), C(index), C(echo_client) and C(tests) (C(ops_s), C(min_ops_s), C(max_ops_s), C(samples),
      C(status), C(message)).
    - With O(point_s), each record also has C(bounded) (true), C(point_s), C(moved_items_per_mdt) (the files
      each MDT created, and every test then acted on), C(elapsed_s) (the seconds its tests took together),
      C(point_limit) (what set the count - V(time budget), V(floor), V(floor, no rate yet) or V(full size)) and
      C(sized_from_ops_s) (the rate per MDT it was sized from, null for the first point); C(file) and
      C(files_per_thread) are the point's count.
  returned: always
  type: list
  elements: dict
  sample:
    - mdt: 1
      file: 100000
      dir: 4
      thr: 4
      tests:
        create: {ops_s: 5652.05, min_ops_s: 999.01, max_ops_s: 46940.48, status: ok}
errors:
  description: Errors, each with the C(point) (C(thr) and C(test)) it belongs to, or null, and a C(message).
  returned: always
  type: list
  elements: dict
environment:
  description:
    - Facts at run time - C(lustre_version), C(kernel), C(targets), C(obdecho_loaded_by_us).
    - C(free_inodes) and C(total_inodes), each MDT's C(filesfree) and C(filestotal) before the sweep (null where
      not read), which the results history keeps as the MDT's fill level.
  returned: always
  type: dict
raw_output:
  description: Path on the node of the summary file, in the I/O kit's format; the detail file is beside it.
  returned: always
  type: str
sweep:
  description:
    - How the thread sweep went (O(engine=native)), as for C(lustre.iokit.obdfilter_survey); C(stops) has at most one
      entry, the C(thr) the sweep stopped after and the C(reason).
  returned: when the survey ran with O(engine=native)
  type: dict
skipped_points:
  description:
    - "Every thread count an adaptive sweep did not run: C(point) (C(thr)) and C(reason). Empty for a full sweep."
  returned: when the survey ran with O(engine=native)
  type: list
  elements: dict
raw_files:
  description: Paths on the node of the raw output files.
  returned: when the survey ran
  type: list
  elements: str
plan:
  description:
    - The sweep - C(points) (C(thr), C(files_per_thread), C(skip)), C(targets), C(echo_clients),
      C(directories) per MDT, C(files_per_mdt_per_point) and C(tests).
    - C(estimate) - the plan's C(points) to run, C(bytes_written), C(bytes_read), its C(work) (C(amount) in
      C(unit)), the C(rate) in C(rate_unit), C(estimated_duration_s) and C(estimate_basis), which says where the
      rate comes from (here always assumed; the survey role replaces it with a stored earlier run's when the
      results store has one). C(estimated_duration_s) and C(estimate_basis) are repeated at the top of the plan.
    - C(lines), in check mode - the plan in a few lines, as the survey playbooks show it.
    - C(sweep) - O(sweep), O(sweep_min_gain_pct), O(sweep_patience) as C(mode), C(min_gain_pct), C(patience), and
      C(points_full), the runnable points of the full grid; with O(sweep=adaptive) also C(points_most), the worst
      case (the full grid again - a thread sweep that keeps gaining never stops), and C(points_fewest), every thread
      sweep flat from its first doubling. C(estimate.adaptive) repeats them with their durations
      (C(estimated_duration_most_s), C(estimated_duration_fewest_s), the latter the full duration's share by points).
    - C(bounded), with O(point_s) - C(point_s), C(point_min_items) (the floor used), C(floor_reason) (where the
      floor came from), C(target_duration_s) (every test of every runnable point lasting O(point_s)),
      C(worst_case_operations_per_mdt) (every point creating the larger of its full count and the floor, times
      the tests) and C(full_operations_per_mdt) (what the I/O kit's sweep does). The plan's C(points) and the
      estimate still show the full counts.
  returned: always
  type: dict
'''

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.lustre.iokit.plugins.module_utils import payload
from ansible_collections.lustre.iokit.plugins.module_utils import adaptive
from ansible_collections.lustre.iokit.plugins.module_utils import lctl as lctl_utils
from ansible_collections.lustre.iokit.plugins.module_utils import point_budget
from ansible_collections.lustre.iokit.plugins.module_utils import progress as progress_utils
from ansible_collections.lustre.iokit.plugins.module_utils.engines import mds
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import run_tag
from ansible_collections.lustre.iokit.plugins.module_utils.option_problem import OptionProblem
from ansible_collections.lustre.iokit.plugins.module_utils.runner import ProcessRecordingRunner, Runner
from ansible_collections.lustre.iokit.plugins.module_utils.survey_args import common_option_problems, survey_common_argument_spec
from ansible_collections.lustre.iokit.plugins.module_utils import survey_module

SURVEY = 'mds'
PARAMETER_NAMES = ('targets', 'thrlo', 'thrhi', 'file_count', 'dir_count', 'stripe_count', 'tests', 'layer',
                   'start_number', 'engine', 'timeout', 'sweep', 'sweep_min_gain_pct', 'sweep_patience',
                   'sweep_start_near_knee', 'point_s', 'point_min_items')


def argument_spec():
    spec = survey_common_argument_spec()
    spec.update(adaptive.adaptive_sweep_argument_spec())
    spec.update(progress_utils.resume_argument_spec())
    spec.update(
        targets=dict(type='list', elements='str', default=[]),
        thrlo=dict(type='int', default=4),
        thrhi=dict(type='int', default=32),
        file_count=dict(type='int', default=100000),
        dir_count=dict(type='int'),
        stripe_count=dict(type='int', default=0),
        tests=dict(type='list', elements='str', choices=list(mds.TESTS), default=list(mds.TESTS)),
        layer=dict(type='str', choices=list(mds.LAYERS), default='mdd'),
        start_number=dict(type='int', default=mds.DEFAULT_START_NUMBER),
        iokit_script=dict(type='str', default='mds-survey'),
        point_s=dict(type='float'),
        point_min_items=dict(type='int'),
        # no default: the role leaves it out while its variable is null, and unset means false
        sweep_start_near_knee=dict(type='bool'),
    )
    return spec


def record_point(record):
    """A record's sweep point as the progress plan names it."""
    return {'thr': record['thr']}


def option_problems(params):
    """Invalid option values that need no look at the node, each an OptionProblem."""
    problems = []
    problems.extend(common_option_problems(params))
    problems.extend(adaptive.option_problems(params))
    dir_count = params['thrlo'] if params['dir_count'] is None else params['dir_count']
    problems.extend(mds.option_problems(params['thrlo'], params['thrhi'], params['file_count'], dir_count,
                                        params['stripe_count'], params['tests'], params['start_number'],
                                        params['layer']))
    problems.extend(mds.bounded_problems(params['point_s'], params['point_min_items']))
    if params['point_s'] is not None and params['engine'] == 'iokit':
        problems.append(OptionProblem('point_s', 'the installed mds-survey creates its fixed file_count at every '
                                      'point; time-bounded points need {engine} native', mentions='engine'))
    return problems


def bounded_settings(params, targets):
    """The engine's time-bounded point settings: ``point_s``, and the floor with where it came from (the option,
    else ``point_budget.default_floor``).  The floor is given without ``point_s`` too: the plan then shows what the
    fast sweep profile would take (``point_sizing``)."""
    if params['point_min_items'] is not None:
        return dict(point_s=params['point_s'], point_min_items=params['point_min_items'],
                    floor_reason='point_min_items %d items per MDT' % params['point_min_items'])
    floor, reason = point_budget.default_floor('mds', len(targets))
    return dict(point_s=params['point_s'], point_min_items=floor, floor_reason=reason)


class MdsSpec(survey_module.ServerSurveySpec):
    """The mds survey for survey_module.run_server_survey."""

    survey = SURVEY
    what = 'mds survey'
    parameter_names = PARAMETER_NAMES
    exclusive = True
    kernel_module = lctl_utils.ECHO_MODULE
    kernel_module_fact = 'obdecho_loaded_by_us'
    resume_keys = ('thr',)
    raw_name = 'mds_survey'
    option_problems = staticmethod(option_problems)
    record_point = staticmethod(record_point)

    def __init__(self):
        self.targets = None

    def prepare(self, params):
        if params['dir_count'] is None:
            params['dir_count'] = params['thrlo']

    def build(self, start):
        module, builder, lctl = start.module, start.builder, start.lctl
        params = module.params
        try:
            devices = lctl.devices()
        except lctl_utils.LctlError as exc:
            module.fail_json(msg='cannot list the Lustre devices: %s' % exc)
        # The run's tag in the echo client and test directory names (the installed script names them itself).
        tag = run_tag(start.run_id) if params['engine'] == 'native' else None
        targets = self.targets = mds.resolve_targets(devices, params['targets'], tag=tag)
        survey_module.fail_on_problems(module, [
            OptionProblem('targets', '%s: %s' % (target.name, lctl_utils.name_problem(target.echo_client)))
            for target in targets if lctl_utils.name_problem(target.echo_client)])
        if params['stripe_count'] > 0 and not mds.has_osc_or_osp(devices):
            module.fail_json(msg='stripe_count: %d needs an UP osc or osp device on this node (lctl dl shows none)'
                             % params['stripe_count'])
        builder.set_environment(lustre_version=lctl.version(), kernel=os.uname()[2],
                                targets=[target.as_dict() for target in targets])
        bounded = bounded_settings(params, targets) if params['engine'] == 'native' else {}
        survey = mds.MdsSurvey(
            start.context, targets, thrlo=params['thrlo'], thrhi=params['thrhi'], file_count=params['file_count'],
            dir_count=params['dir_count'], stripe_count=params['stripe_count'], tests=params['tests'],
            start_number=params['start_number'], layer=params['layer'], **bounded)
        survey.inner_sweeps = adaptive.InnerSweeps(params['sweep'], params['sweep_min_gain_pct'],
                                                   params['sweep_patience'],
                                                   start_near_knee=bool(params['sweep_start_near_knee']))
        return survey

    def check(self, start, survey):
        inode_problems, free_inodes = survey.free_inode_problems()
        start.builder.set_environment(free_inodes=free_inodes, total_inodes=survey.total_inodes)
        survey_module.fail_on_problems(start.module, inode_problems)

    def plan_lines(self, params, plan):
        lines = ['thread counts to run: %s' % [point['thr'] for point in plan['points'] if not point['skip']],
                 'MDTs: %s' % [target['target'] for target in plan['targets']],
                 'files per MDT per point: %s' % plan['files_per_mdt_per_point']]
        bounded = plan.get('bounded')
        if bounded:
            lines.append('time-bounded points: %g s per test, floor %s; about %d s if every test lasts its time; '
                         'at worst %d operations per MDT (every point at the larger of its full count and the '
                         'floor), against %d for the full counts'
                         % (bounded['point_s'], bounded['floor_reason'], bounded['target_duration_s'],
                            bounded['worst_case_operations_per_mdt'], bounded['full_operations_per_mdt']))
        return lines

    def planned(self, survey, plan):
        # The progress counts the thread counts of the plan, each weighed by the files it touches; a time-bounded
        # point lasts about its point_s per test whatever it creates, so they weigh the same.
        if plan.get('bounded'):
            return [dict(thr=point['thr']) for point in plan['points'] if point['skip'] is None]
        return [dict(thr=point['thr'], weight=point['thr'] * point['files_per_thread'])
                for point in plan['points'] if point['skip'] is None]

    def run_iokit(self, start, survey, run_dir):
        """Run the installed mds-survey, then remove the echo clients it left (its own trap is not trusted)."""
        params, targets = start.module.params, self.targets
        script = survey_module.iokit_script_path(start.module)
        rslt = os.path.join(run_dir, 'mds_survey')
        for target in targets:
            start.node_state.record('echo_clients', start.run_id, name=target.echo_client, target=target.name,
                                    layer=params['layer'], directories=target.directories(params['dir_count']))
        records, errors, unused_result = mds.run_iokit(
            start.runner, script, rslt, targets=[target.name for target in targets], thrlo=params['thrlo'],
            thrhi=params['thrhi'], file_count=params['file_count'], dir_count=params['dir_count'],
            stripe_count=params['stripe_count'], tests=params['tests'], start_number=params['start_number'],
            layer=params['layer'])
        survey_module.add_iokit_outcome(start.builder, records, errors, start.runner)
        start.remove_leftover_echo_clients('mds-survey', [target.echo_client for target in targets])
        return bool(records), [rslt + '.summary', rslt + '.detail']


def main():
    # First: a module killed later still leaves a payload directory the cleanup knows is stale.
    payload.claim()
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    survey_module.run_server_survey(module, MdsSpec(), Runner, ProcessRecordingRunner)


if __name__ == '__main__':
    main()
