#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: sgpdd_survey
short_description: Measure raw block-device bandwidth with sgp_dd, as lustre-iokit's sgpdd-survey does
version_added: 0.1.0
description:
  - Runs the sgpdd survey of the Lustre I/O kit on the node's devices, below any file system, and returns
    every sweep point as a record of the result envelope C(lustre.iokit/result/v1).
  - The sweep is the I/O kit's. Record size O(rszlo) to O(rszhi), concurrent regions O(crglo) to O(crghi)
    and threads O(thrlo) to O(thrhi) double in turn; points with fewer threads than regions or more than
    O(max_threads_per_region) threads per region are skipped; points that would need more memory than
    C(MemTotal) are recorded as ENOMEM and not run.
  - A SCSI disk is driven through its sg node (found through sysfs); a device without one (NVMe, virtio,
    loop, device mapper) is driven as a block device with O_DIRECT. Each record says which in RV(records[].path_measured).
  - The V(write) action destroys the data on the devices. It needs O(destroy_data=true), and before any I/O
    every device is checked; a device that is mounted, used as swap, has holders (device mapper, MD, LVM)
    or carries a file-system, RAID or partition-table signature is refused and no device is touched.
  - Raw output (the I/O kit's summary lines and every sgp_dd instance's stderr, like its C(.detail) file)
    is written under O(workdir)/O(run_id)/.
author:
  - lustre.iokit contributors (@lustre)
requirements:
  - sg3_utils (C(sgp_dd), C(sg_readcap)) and util-linux (C(blkid), C(wipefs)) on the node.
  - The C(sg) kernel module for SCSI devices to be measured through their sg node.
  - For O(engine=iokit), the lustre-iokit package (C(sgpdd-survey)).
extends_documentation_fragment:
  - lustre.iokit.attributes
  - lustre.iokit.survey_common
  - lustre.iokit.resume
  - lustre.iokit.sweep
  - lustre.iokit.sweep.adaptive
options:
  devices:
    description:
      - Devices to measure, such as C(/dev/sdb), C(/dev/disk/by-id/...) or C(/dev/sg2). Symbolic links are
        resolved. There is no default, no device is ever chosen for you.
    type: list
    elements: path
    required: true
  size_mib:
    description:
      - MiB per device over all regions (the I/O kit's C(size)). O(boundary) blocks plus O(size_mib) must fit
        on every device.
    type: int
    default: 8192
  crglo:
    description: Smallest number of concurrent regions per device (the I/O kit's C(crglo)).
    type: int
    default: 1
  crghi:
    description: Largest number of concurrent regions per device (the I/O kit's C(crghi)).
    type: int
    default: 256
  thrhi:
    description: Largest number of threads per device (the I/O kit's C(thrhi)).
    type: int
    default: 4096
  actions:
    description:
      - Tests to run at every point, in this order. Only V(read) is non-destructive.
    type: list
    elements: str
    choices: [write, read]
    default: [write, read]
  destroy_data:
    description:
      - Must be V(true) when O(actions) contains V(write), which overwrites the devices.
    type: bool
    default: false
  allow_signatures:
    description:
      - Write even to devices that carry a file-system, RAID or partition-table signature.
      - Only the signature check is waived; mounted devices and devices with holders are always refused.
    type: bool
    default: false
  boundary:
    description: Blocks (of the device's block size) left untouched at the start of every device.
    type: int
    default: 1024
  max_threads_per_region:
    description:
      - Points with more threads per region (O(thrhi) / regions) are skipped. 16 is the I/O kit's
        C(SG_MAX_QUEUE); sg3_utils 1.45 and later accept up to 1024.
    type: int
    default: 16
  iokit_script:
    description: The C(sgpdd-survey) script run by O(engine=iokit); a name is looked up in C(PATH).
    type: str
    default: sgpdd-survey
  sweep_start_near_knee:
    description:
      - With O(sweep=adaptive), a thread sweep that begins after one that stopped skips the thread counts below
        half that sweep's knee (the lowest thread count within O(sweep_min_gain_pct) of its best), so that it
        starts one doubling below it; each point passed over is listed in RV(skipped_points) with the reason.
      - Safe only when the curves saturate rather than decline past their knee, and when the rising side of each
        curve is not needed in the report (docs/adaptive-sweeps.md, "Starting the next inner sweep near the
        previous knee").
      - Unset (the default), every thread sweep starts at O(thrlo), as with V(false).
    type: bool
  point_s:
    description:
      - Time-bounded points (O(engine=native) only) - the seconds each action of a point aims at. A point then
        moves, per device, what that time allows at the rate the survey measured,
        C(max(floor, min(O(size_mib), point_s x rate))), where the rate is that of the slowest device in the
        slowest action of the previous point of the same thread sweep (or, for the first point of a thread sweep,
        of an earlier one at the same or the nearest lower thread count); the survey's first point, with no rate
        yet, moves the floor. The amount is a whole record for every thread of every region, the same bytes on
        every device of the host, so that their figures compare; the slowest device takes the point's time.
      - A point whose floor cannot be moved, at that rate, in the time left before O(timeout) (shared by its
        actions) is not run and named in RV(errors), rather than cut short into a figure below its floor.
      - Unset, every point moves O(size_mib), exactly as the I/O kit (the floor does not apply), so that results stay
        comparable with the I/O kit's.
    type: float
  point_min_mib:
    description:
      - With O(point_s), the least a point moves per device per action (the floor), so that it measures the
        devices rather than the RAID controller's write-back cache; it wins over O(point_s) and over O(size_mib).
        O(boundary) blocks plus the floor must fit on every device.
      - Unset, the controller's cache (O(controller_cache_mib), else 8192 MiB) over the devices surveyed, at least
        512 MiB; the plan's C(bounded.floor_reason) says which.
    type: int
  controller_cache_mib:
    description:
      - The write-back cache, in MiB, of the RAID controller (or controllers) in front of this host's devices, which
        the node cannot report; V(0) for a host bus adapter without one. Only the default of O(point_min_mib) uses
        it.
      - Unset, 8192 MiB is assumed (current controllers carry 2 to 8 GiB).
    type: int
notes:
  - O(engine=iokit) runs the installed script, which needs SCSI devices listed by C(sg_map); with sg3_utils 1.48
    or later the script counts every instance as failed, and the result says so in RV(errors).
seealso:
  - name: lustre-iokit sgpdd-survey
    description: The I/O kit script this module reproduces.
    link: https://github.com/lustre/lustre-release/tree/master/lustre-iokit/sgpdd-survey
'''

EXAMPLES = r'''
- name: Survey two empty LUNs (destroys their data), stopping after 50 minutes
  lustre.iokit.sgpdd_survey:
    devices:
      - /dev/disk/by-id/wwn-0x5000c500a1b2c3d4
      - /dev/disk/by-id/wwn-0x5000c500a1b2c3d5
    size_mib: 8192
    crghi: 16
    thrhi: 32
    destroy_data: true
    timeout: 3000
    run_id: "{{ iokit_run_id }}"
  async: 3600
  poll: 0
  register: sgpdd_job

- name: Wait for the survey
  ansible.builtin.async_status:
    jid: "{{ sgpdd_job.ansible_job_id }}"
  register: sgpdd_result
  until: sgpdd_result.finished
  retries: 400
  delay: 10

- name: Read-only survey of a device that holds data
  lustre.iokit.sgpdd_survey:
    devices: [/dev/sdc]
    actions: [read]
    size_mib: 1024

- name: Show the plan only
  lustre.iokit.sgpdd_survey:
    devices: [/dev/sdb]
    destroy_data: true
  check_mode: true
  register: sgpdd_plan
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
  sample: 20261122T101500Z-3f2a
host:
  description: Short host name of the node.
  returned: always
  type: str
survey:
  description: Always V(sgpdd).
  returned: always
  type: str
engine:
  description: The engine that ran, V(native) or V(iokit).
  returned: always
  type: str
status:
  description:
    - V(ok) every point measured; V(partial) some measured, then an error or a timeout; V(failed) nothing
      measured (the module then fails, still returning the envelope); V(skipped) in check mode.
  returned: always
  type: str
parameters:
  description: The survey's options.
  returned: always
  type: dict
envelope:
  description:
    - The complete result envelope C(lustre.iokit/result/v1)
      (R(the results guide, ansible_collections.lustre.iokit.docsite.results_schema)), ready to store; the other
      keys of this result repeat its fields at the top level, except C(started) and C(finished) (UTC times),
      which Ansible reserves for async jobs and which are therefore only here.
  returned: always
  type: dict
duration_s:
  description: Seconds the module ran.
  returned: always
  type: float
records:
  description:
    - One record per measured or ENOMEM point, in the shape of the C(parse_sgpdd_survey) filter.
    - C(crg) and C(thr) are totals over all devices, as the I/O kit prints them; C(crg_per_dev),
      C(thr_per_dev) and C(thr_per_region) give the per-device values.
    - Under C(tests), each action has C(mib_s) (aggregate over wall-clock time), C(min_mib_s)/C(max_mib_s)
      (slowest/fastest sgp_dd instance), C(failed), C(status), C(elapsed_s) and per-device figures in C(devices),
      each device's C(mib_s) (the sum of its sgp_dd instances' rates, null when one failed; with O(engine=native)),
      C(min_mib_s)/C(max_mib_s) (its slowest/fastest instance) and C(failed).
      With O(engine=native), C(start_time) and C(end_time) are when the action's sgp_dd instances were started
      and when the last one ended, in epoch seconds (UTC, to the millisecond) of the node's clock, so that
      statistics collected on the node can be cut per test; they are absent with O(engine=iokit).
    - With O(point_s), each record also has C(bounded) (true), C(point_s), C(moved_mib_per_device) (what each
      device moved per action), C(elapsed_s) (the seconds its actions took together), C(point_limit) (what set the
      amount - V(time budget), V(floor), V(floor, no rate yet) or V(full size)) and C(sized_from_mib_s) (the rate
      per device it was sized from, null for the first point); C(size_kib) is what it moved.
  returned: always
  type: list
  elements: dict
  contains:
    path_measured:
      description: V(sg) (through the sg node), V(block) (block device with O_DIRECT) or V(mixed).
      type: str
      returned: always
errors:
  description: Errors, each with the C(point) it belongs to (or null) and a C(message).
  returned: always
  type: list
  elements: dict
environment:
  description:
    - Facts at run time. C(sg3_utils) (package version), C(sgp_dd_version), C(kernel), C(mem_total_kib), and
      C(devices) with each device's sg or block path, block size, capacity, vendor, model and queue settings,
      C(slaves) (the member devices of an MD array or device-mapper target, else empty), C(md_level)
      (V(raid1) etc. for an MD array, else null) and C(stable_id), an id that survives a reboot and a re-cabling
      (V(wwid:<WWID>), V(dm-uuid:<UUID>), V(by-id:<name in /dev/disk/by-id>), or V(loop:<backing file>) for a loop
      device; null when the device has none), which the results history keys the LUN by.
  returned: always
  type: dict
raw_output:
  description: Path on the node of the summary file; the detail file is beside it (RV(raw_files)).
  returned: always
  type: str
sweep:
  description:
    - How the thread sweep went (O(engine=native)), as for C(lustre.iokit.obdfilter_survey); C(stops) name the
      C(rsz_kib) and C(crg) (per device) of each thread sweep that stopped early.
  returned: when the survey ran with O(engine=native)
  type: dict
skipped_points:
  description:
    - "Every point of the full grid an adaptive sweep did not run: C(point) (C(rsz_kib), C(crg), C(thr) per
      device) and C(reason). Empty for a full sweep."
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
    - The sweep, every point with C(rsz_kib), C(crg), C(thr) (per device), C(skip) (the reason, or null when it
      runs), C(enomem), C(instances) and C(memory_kib); plus C(bytes_written_per_device),
      C(bytes_read_per_device) and C(skipped_points).
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
    - C(bounded), with O(point_s) - C(point_s), C(point_min_mib) (the floor used), C(floor_reason) (where the
      floor came from), C(target_duration_s) (every action of every runnable point lasting O(point_s)),
      C(worst_case_kib_per_device) (every point moving the larger of its full size and its floor, the most a
      bounded sweep moves) and C(full_kib_per_device) (what the I/O kit's sweep moves). The plan's C(points),
      C(bytes_written_per_device) and the estimate still show the full sizes.
  returned: always
  type: dict
'''

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.lustre.iokit.plugins.module_utils import payload
from ansible_collections.lustre.iokit.plugins.module_utils import adaptive
from ansible_collections.lustre.iokit.plugins.module_utils import point_budget
from ansible_collections.lustre.iokit.plugins.module_utils import progress as progress_utils
from ansible_collections.lustre.iokit.plugins.module_utils.engines import sgpdd
from ansible_collections.lustre.iokit.plugins.module_utils.engines.contract import EngineContext
from ansible_collections.lustre.iokit.plugins.module_utils.option_problem import OptionProblem
from ansible_collections.lustre.iokit.plugins.module_utils.runner import Runner
from ansible_collections.lustre.iokit.plugins.module_utils.safety import DeviceRefused, DeviceSafety
from ansible_collections.lustre.iokit.plugins.module_utils.survey_args import (
    common_option_problems,
    survey_common_argument_spec,
    sweep_argument_spec,
)
from ansible_collections.lustre.iokit.plugins.module_utils import survey_module

SURVEY = 'sgpdd'
PARAMETER_NAMES = ('devices', 'size_mib', 'crglo', 'crghi', 'thrlo', 'thrhi', 'rszlo', 'rszhi', 'actions',
                   'boundary', 'max_threads_per_region', 'destroy_data', 'allow_signatures', 'engine', 'timeout',
                   'sweep', 'sweep_min_gain_pct', 'sweep_patience', 'sweep_start_near_knee', 'point_s',
                   'point_min_mib', 'controller_cache_mib')


def argument_spec():
    spec = survey_common_argument_spec()
    spec.update(sweep_argument_spec())
    spec.update(adaptive.adaptive_sweep_argument_spec())
    spec.update(progress_utils.resume_argument_spec())
    spec.update(
        devices=dict(type='list', elements='path', required=True),
        size_mib=dict(type='int', default=8192),
        crglo=dict(type='int', default=1),
        crghi=dict(type='int', default=256),
        thrhi=dict(type='int', default=4096),
        actions=dict(type='list', elements='str', choices=['write', 'read'], default=['write', 'read']),
        destroy_data=dict(type='bool', default=False),
        allow_signatures=dict(type='bool', default=False),
        boundary=dict(type='int', default=sgpdd.DEFAULT_BOUNDARY_BLOCKS),
        max_threads_per_region=dict(type='int', default=sgpdd.SG_MAX_QUEUE),
        iokit_script=dict(type='str', default='sgpdd-survey'),
        sweep_start_near_knee=dict(type='bool'),
        point_s=dict(type='float'),
        point_min_mib=dict(type='int'),
        controller_cache_mib=dict(type='int'),
    )
    return spec


def record_point(record):
    """A record's sweep point as the plan names it (regions and threads per device)."""
    return {'rsz_kib': record['rsz_kib'], 'crg': record['crg_per_dev'], 'thr': record['thr_per_dev']}


def option_problems(params):
    """Every invalid option value, each an OptionProblem."""
    problems = []
    if not params['devices']:
        problems.append(OptionProblem('devices', 'give at least one device; there is no default'))
    for name in ('size_mib', 'crglo', 'crghi', 'thrlo', 'thrhi', 'rszlo', 'rszhi', 'max_threads_per_region'):
        if params[name] < 1:
            problems.append(OptionProblem(name, 'must be at least 1', got='%d' % params[name]))
    if params['boundary'] < 0:
        problems.append(OptionProblem('boundary', 'must not be negative', got='%d' % params['boundary']))
    problems.extend(common_option_problems(params))
    problems.extend(adaptive.option_problems(params))
    for low, high in (('crglo', 'crghi'), ('thrlo', 'thrhi'), ('rszlo', 'rszhi')):
        if params[low] > params[high]:
            problems.append(OptionProblem(low, '%d is greater than {%s} (%d)' % (params[low], high, params[high]),
                                          mentions=high))
    if not params['actions']:
        problems.append(OptionProblem('actions', 'give write, read or both'))
    elif len(set(params['actions'])) != len(params['actions']):
        problems.append(OptionProblem('actions', 'each action may appear once', got=', '.join(params['actions'])))
    if 'write' in params['actions'] and not params['destroy_data']:
        problems.append(OptionProblem('destroy_data', 'must be true to run the write action, which overwrites the '
                                      'data on %s' % (', '.join(params['devices'] or []) or 'the devices')))
    if params['point_s'] is not None and params['engine'] == 'iokit':
        problems.append(OptionProblem('point_s', 'the installed sgpdd-survey moves its fixed size at every point; '
                                      'time-bounded points need {engine} native', mentions='engine'))
    if params['controller_cache_mib'] is not None and params['controller_cache_mib'] < 0:
        problems.append(OptionProblem('controller_cache_mib', 'must not be negative (0: no write-back cache)',
                                      got='%d' % params['controller_cache_mib']))
    # The engine's own checks that need no device (those of the devices' sizes are the node's to make).
    unattached = sgpdd.SgpddSurvey(EngineContext(None), [], params['size_mib'], point_s=params['point_s'],
                                   point_min_mib=params['point_min_mib'])
    problems.extend(unattached.problems())
    return problems


def bounded_settings(params):
    """The engine's time-bounded point settings: ``point_s``, and the floor with where it came from (the option,
    else ``point_budget.default_floor`` from the controller's cache over the devices surveyed).  The floor is given
    without ``point_s`` too: the plan then shows what the fast sweep profile would take (``point_sizing``)."""
    if params['point_min_mib'] is not None:
        return dict(point_s=params['point_s'], point_min_mib=params['point_min_mib'],
                    floor_reason='point_min_mib %d MiB per device' % params['point_min_mib'])
    floor, reason = point_budget.default_floor('sgpdd', len(params['devices']),
                                               controller_cache_mib=params['controller_cache_mib'])
    return dict(point_s=params['point_s'], point_min_mib=floor, floor_reason=reason)


class SgpddSpec(survey_module.ServerSurveySpec):
    """The sgpdd survey for survey_module.run_server_survey: sgp_dd works on devices only, so there is nothing in
    the node state for the cleanup and no control runner."""

    survey = SURVEY
    what = 'sgpdd survey'
    parameter_names = PARAMETER_NAMES
    keeps_node_state = False
    resume_keys = ('rsz_kib', 'crg', 'thr')
    raw_name = 'sgpdd_survey'
    option_problems = staticmethod(option_problems)
    record_point = staticmethod(record_point)

    def __init__(self):
        self.identities = self.environment = None

    def build(self, start):
        params, runner = start.module.params, start.runner
        try:
            self.identities = DeviceSafety(runner).check_all(params['devices'], params['allow_signatures'],
                                                             'write' in params['actions'])
        except DeviceRefused as exc:
            start.module.fail_json(msg=str(exc), refusals=exc.refusals)
        targets = [sgpdd.resolve_target(identity, runner) for identity in self.identities]
        self.environment = sgpdd.collect_environment(runner, targets)
        start.builder.set_environment(self.environment)
        survey = sgpdd.SgpddSurvey(
            start.context, targets, params['size_mib'], actions=params['actions'], rszlo=params['rszlo'],
            rszhi=params['rszhi'], crglo=params['crglo'], crghi=params['crghi'], thrlo=params['thrlo'],
            thrhi=params['thrhi'], boundary=params['boundary'], max_threads_per_region=params['max_threads_per_region'],
            mem_total_kib=self.environment['mem_total_kib'], **bounded_settings(params))
        survey.inner_sweeps = adaptive.InnerSweeps(params['sweep'], params['sweep_min_gain_pct'],
                                                   params['sweep_patience'],
                                                   start_near_knee=bool(params['sweep_start_near_knee']))
        return survey

    def changed_in_check_mode(self, start, survey, plan):
        if not any(point['skip'] is None for point in plan['points']):
            start.builder.mark_nothing_to_do()
        return 'write' in start.module.params['actions']

    def plan_lines(self, params, plan):
        lines = ['skipped points: %d; bytes written per device: %s'
                 % (len(plan['skipped_points']), plan['bytes_written_per_device'])]
        bounded = plan.get('bounded')
        if bounded:
            lines.append('time-bounded points: %g s per action, floor %s; about %d s if every action lasts its time; '
                         'at worst %d MiB per device (every point at the larger of its full size and the floor), '
                         'against %d MiB for the full sizes'
                         % (bounded['point_s'], bounded['floor_reason'], bounded['target_duration_s'],
                            bounded['worst_case_kib_per_device'] // 1024, bounded['full_kib_per_device'] // 1024))
        return lines

    def planned(self, survey, plan):
        # A point's time is its size over its rate, so the ETA weighs points by size; a time-bounded point lasts
        # about its point_s per action whatever it moves, so they weigh the same.
        weight_key = None if plan.get('bounded') else 'size_kib'
        return progress_utils.planned_points(plan['points'], self.resume_keys, weight_key)

    def run_native(self, start, survey, run_dir):
        # sgp_dd keeps no state on the node: the engine has nothing to set up or tear down
        records, raw_files = survey_module.run_native(start.builder, survey, start.control_runner,
                                                      os.path.join(run_dir, self.raw_name))
        return any('write' in record['tests'] for record in records), raw_files

    def run_iokit(self, start, survey, run_dir):
        params, runner = start.module.params, start.runner
        script = survey_module.iokit_script_path(start.module)
        rslt = os.path.join(run_dir, 'sgpdd_survey')
        records, errors, unused_result = sgpdd.run_iokit(
            runner, script, [identity['path'] for identity in self.identities], rslt,
            sg3_utils_version=self.environment['sg3_utils'], size_mib=params['size_mib'], actions=params['actions'],
            rszlo=params['rszlo'], rszhi=params['rszhi'], crglo=params['crglo'], crghi=params['crghi'],
            thrlo=params['thrlo'], thrhi=params['thrhi'], boundary=params['boundary'])
        survey_module.add_iokit_outcome(start.builder, records, errors, runner)
        return 'write' in params['actions'], [rslt + '.summary', rslt + '.detail']


def main():
    # First: a module killed later still leaves a payload directory the cleanup knows is stale.
    payload.claim()
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    survey_module.run_server_survey(module, SgpddSpec(), Runner)


if __name__ == '__main__':
    main()
