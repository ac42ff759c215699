#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: ost_survey
short_description: Measure per-OST write and read bandwidth from a Lustre client, as lustre-iokit's ost-survey does
version_added: 0.1.0
description:
  - Runs the ost survey of the Lustre I/O kit on a client and returns the result envelope
    C(lustre.iokit/result/v1) with one record, in the shape of the C(parse_ost_survey) filter.
  - For every ACTIVE OST in turn a single-stripe file (C(lfs setstripe -S 0 -i <idx> -c 1)) is written with
    C(dd) in 1 MiB blocks, then every file is read back. Each timing includes a C(sync) before and after, as
    in the I/O kit; rates are MiB/s. Worst, best, average and population standard deviation are computed as the
    I/O kit does, dividing by the total number of OSTs, inactive ones included.
  - The client cache (C(llite.*.max_cached_mb)) is lowered to 256 pages during the survey and restored after.
  - The survey refuses to start when O(mount_point) is not a Lustre client mount (C(lfs getname) fails) or when
    an active OST has less free space (C(lfs df)) than O(size_mib) times O(min_free_factor).
  - Everything changed (the old C(max_cached_mb), the scratch directory C(<mount_point>/ost_survey_<run_id>) and
    each file) is written to the node state under O(workdir) first and undone at the end, after a timeout or a
    SIGTERM too.
  - A point of this survey, for O(force_rerun), is one OST written and read. Each OST's row is kept on the node as
    soon as its read ends; a rerun of the run id after a kill writes and reads only the OSTs left (never an OST
    written in one attempt and read in another), and the one record holds every OST's row, each with the
    C(attempt) that measured it.
author:
  - lustre.iokit contributors (@lustre)
requirements:
  - A mounted Lustre client with C(lfs) and C(lctl); C(dd) and C(sync).
  - For O(engine=iokit), the lustre-iokit package (C(ost-survey)) and perl with C(Time::HiRes).
extends_documentation_fragment:
  - lustre.iokit.attributes
  - lustre.iokit.survey_common
  - lustre.iokit.resume
options:
  mount_point:
    description:
      - The Lustre client mount to survey.
      - It counts as Lustre when C(lfs getname) answers for it; the file-system type in C(/proc/self/mountinfo)
        is only reported (C(mount_fstype) in RV(environment)), so that a test client (the simulator's FUSE mount) is
        accepted exactly when Lustre's own tool accepts it.
    type: path
    required: true
  size_mib:
    description:
      - MiB written to and read from each OST (the I/O kit's C(-s)). The block size is fixed at 1 MiB, as in the
        I/O kit. The I/O kit's default of 30 is dominated by C(sync) latency; use a few GiB on real hardware.
    type: int
    default: 30
  min_free_factor:
    description:
      - Every active OST must have at least O(size_mib) times this much space available, else the survey
        refuses to start.
    type: float
    default: 2.0
  iokit_script:
    description: The C(ost-survey) script run by O(engine=iokit); a name is looked up in C(PATH).
    type: str
    default: ost-survey
  point_s:
    description:
      - Time-bounded points (O(engine=native) only) - the seconds each test of an OST (its write, its read) aims
        at. Each OST's file is then C(max(O(point_min_mib), min(O(size_mib), point_s x rate))) MiB, whole 1 MiB
        blocks, where the rate is the write rate of the OST written before it; the first OST, with no rate yet,
        moves the floor. The OSTs are measured one after another, so each is sized from the one before rather
        than all from the slowest, and the size is fixed when the file is written (its read reads it back).
      - An OST whose floor cannot be written and read, at that rate, in the time left before O(timeout) (less the
        reads still to come of the OSTs already written) is not written and named in RV(errors), rather than cut
        short; the survey goes on with the next OST.
      - Needs O(point_min_mib). Unset, every OST moves O(size_mib), exactly as the I/O kit, so that results stay
        comparable with the I/O kit's.
    type: float
  point_min_mib:
    description:
      - With O(point_s), the least an OST's file may be (the floor), so that it measures the OST rather than the
        OSS's cache; it wins over O(point_s) and over O(size_mib). Required with O(point_s).
      - The floor is the OSS's cache (a file the OSS can hold whole is read back from its memory), one OST at a
        time - C(MemTotal) in MiB of the largest OSS for ldiskfs, the ARC's maximum on ZFS, at least 512. This
        client cannot read the OSS's memory, so the module does not guess it.
    type: int
notes:
  - Differences from the I/O kit, on purpose - the OST index printed by C(target_obd) is used (the I/O kit uses
    the line position, which breaks on sparse indices); parameters are read for this mount's instance only (two
    mounts of one file system do not confuse it); a C(dd) that fails leaves that OST's figures null and is
    reported in RV(errors).
  - O(engine=iokit) runs the installed script; it uses C(<mount_point>/ost_survey_tmp), so the module refuses when
    that exists, and restores C(max_cached_mb) and removes the directory if the script did not.
seealso:
  - name: lustre-iokit ost-survey
    description: The I/O kit script this module reproduces.
    link: https://github.com/lustre/lustre-release/tree/master/lustre-iokit/ost-survey
'''

EXAMPLES = r'''
- name: Survey every OST from one client, 4 GiB each, stopping after 30 minutes
  lustre.iokit.ost_survey:
    mount_point: /mnt/testfs
    size_mib: 4096
    timeout: 1800
    run_id: "{{ iokit_run_id }}"
  async: 2100
  poll: 0
  register: ost_job

- name: Wait for the survey
  ansible.builtin.async_status:
    jid: "{{ ost_job.ansible_job_id }}"
  register: ost_result
  until: ost_result.finished
  retries: 300
  delay: 10

- name: Show the plan only
  lustre.iokit.ost_survey:
    mount_point: /mnt/testfs
  check_mode: true
  register: ost_plan

- name: Time-bounded points - each OST's write and read aim at 20 s, at least 64 GiB (the OSSs' memory)
  lustre.iokit.ost_survey:
    mount_point: /mnt/testfs
    size_mib: 262144
    point_s: 20
    point_min_mib: 65536
    timeout: 3600
    run_id: "{{ iokit_run_id }}"
  async: 3900
  poll: 0
  register: ost_bounded_job
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
  description: Always V(ost).
  returned: always
  type: str
engine:
  description: The engine that ran, V(native) or V(iokit).
  returned: always
  type: str
status:
  description:
    - V(ok) every active OST written and read; V(partial) some measured, then an error, a timeout or a signal;
      V(failed) nothing measured (the module then fails, still returning the envelope); V(skipped) in check mode.
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
    - Exactly one record, the object C(parse_ost_survey) returns - C(active_osts), C(inactive_osts),
      C(mount_point), C(client_nid), C(date), C(no_active_osts), C(read) and C(write) (each with C(worst) and
      C(best) as C(ost) and C(mib_s), C(avg_mib_s), C(stddev_mib_s)) and C(osts), the per-OST table (C(ost),
      C(read_mib_s), C(write_mib_s), C(read_time_s), C(write_time_s), C(active)).
    - Added by this module - C(fsname), C(host), C(size_mib), C(complete) (false when stopped early; the
      statistics of a pass that did not finish are null), and C(uuid), C(write_start_time), C(write_end_time),
      C(read_start_time) and C(read_end_time) in every C(osts) entry - epoch seconds (UTC, to the millisecond) of
      the client's clock around that OST's sync, dd and sync, null for an OST or pass not measured (absent with
      O(engine=iokit)).
    - C(attempt) - on the record, the attempt of the run id that made it; on an C(osts) entry written and read
      whole, the attempt that measured that OST (an earlier one after a resume, see O(force_rerun)).
    - With O(point_s), the record also has C(bounded) (true) and C(point_s), and every C(osts) entry written has
      C(moved_mib) (its file, written then read), C(point_limit) (what set it - V(time budget), V(floor),
      V(floor, no rate yet) or V(full size)), C(sized_from_mib_s) (the write rate of the OST it was sized from,
      null for the first) and, once read, C(elapsed_s) (its write and read times together); its rates are
      C(moved_mib) over its times.
  returned: when something was measured
  type: list
  elements: dict
errors:
  description: Errors, each with the C(point) (C(ost) and C(operation)) it belongs to, or null, and a C(message).
  returned: always
  type: list
  elements: dict
environment:
  description:
    - Facts at run time - C(lustre_version), C(kernel), C(fsname), C(mount_fstype), C(client_nid).
    - C(free_kib) and C(total_kib) - each active OST's Available and 1K-blocks (KiB) from C(lfs df) on
      O(mount_point), read before the survey writes, keyed by the OST's name (C(testfs-OST0000)); an OST C(lfs df)
      shows no figures for is left out. The history keeps them as the OST's fill level when it was measured, as
      it does obdfilter's.
  returned: always
  type: dict
raw_output:
  description: Path on the node of the survey's text, in the I/O kit's format.
  returned: always
  type: str
plan:
  description:
    - C(mount_point), C(fsname), C(directory), C(osts) (each with C(ost), C(uuid), C(active), C(file) and
      C(available_kib)), C(bytes_written_per_ost), C(bytes_read_per_ost), C(max_cached_mb) (the value set during
      the survey).
    - C(estimate) - the plan's C(points) to run, C(bytes_written), C(bytes_read), its C(work) (C(amount) in
      C(unit)), the C(rate) in C(rate_unit), C(estimated_duration_s) and C(estimate_basis), which says where the
      rate comes from (here always assumed; the survey role replaces it with a stored earlier run's when the
      results store has one). C(estimated_duration_s) and C(estimate_basis) are repeated at the top of the plan.
    - C(lines), in check mode - the plan in a few lines, as the survey playbooks show it.
    - C(bounded), with O(point_s) - C(point_s), C(point_min_mib), C(floor_reason), C(target_duration_s) (every
      test of every active OST lasting O(point_s)), C(worst_case_mib_per_ost) (the larger of O(size_mib) and the
      floor, written and read) and C(full_mib_per_ost) (what the I/O kit moves). C(bytes_written_per_ost) and the
      estimate still show O(size_mib).
  returned: always
  type: dict
'''

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.lustre.iokit.plugins.module_utils import payload
from ansible_collections.lustre.iokit.plugins.module_utils import progress as progress_utils
from ansible_collections.lustre.iokit.plugins.module_utils.engines import ost
from ansible_collections.lustre.iokit.plugins.module_utils.engines.errors import EngineError
from ansible_collections.lustre.iokit.plugins.module_utils.option_problem import OptionProblem
from ansible_collections.lustre.iokit.plugins.module_utils.runner import ProcessRecordingRunner, Runner
from ansible_collections.lustre.iokit.plugins.module_utils.survey_args import common_option_problems, survey_common_argument_spec
from ansible_collections.lustre.iokit.plugins.module_utils import survey_module

SURVEY = 'ost'
PARAMETER_NAMES = ('mount_point', 'size_mib', 'min_free_factor', 'engine', 'timeout', 'point_s', 'point_min_mib')


def argument_spec():
    spec = survey_common_argument_spec()
    spec.update(
        mount_point=dict(type='path', required=True),
        size_mib=dict(type='int', default=ost.DEFAULT_SIZE_MIB),
        min_free_factor=dict(type='float', default=ost.DEFAULT_MIN_FREE_FACTOR),
        iokit_script=dict(type='str', default='ost-survey'),
        point_s=dict(type='float'),
        point_min_mib=dict(type='int'),
    )
    spec.update(progress_utils.resume_argument_spec())
    return spec


def option_problems(params):
    """Invalid option values that need no look at the node, each an OptionProblem."""
    problems = []
    if params['size_mib'] < 1:
        problems.append(OptionProblem('size_mib', 'must be at least 1', got='%d' % params['size_mib']))
    if params['min_free_factor'] < 1:
        problems.append(OptionProblem('min_free_factor', 'must be at least 1 (the file itself)',
                                      got='%g' % params['min_free_factor']))
    problems.extend(common_option_problems(params))
    problems.extend(ost.bounded_problems(params['point_s'], params['point_min_mib']))
    if params['point_s'] is not None and params['engine'] == 'iokit':
        problems.append(OptionProblem('point_s', 'the installed ost-survey moves its fixed size at every OST; '
                                      'time-bounded points need {engine} native', mentions='engine'))
    return problems


def bounded_settings(params):
    """The engine's time-bounded point settings: ``point_s`` and the floor (``point_min_mib``, which the option
    checks require with it: the client cannot derive it from the OSS's memory).  A floor given without ``point_s``
    still goes to the engine: the plan then shows what the fast sweep profile would take (``point_sizing``)."""
    if params['point_min_mib'] is None:
        return {}
    return dict(point_s=params['point_s'], point_min_mib=params['point_min_mib'],
                floor_reason='point_min_mib %d MiB per OST' % params['point_min_mib'])


class OstSpec(survey_module.ServerSurveySpec):
    """The ost survey for survey_module.run_server_survey.

    The progress counts the OSTs written, then read: the record of the whole survey comes at its end. Each OST
    written and read is kept on the node as it ends, so a rerun after a kill measures only the OSTs left.
    """

    survey = SURVEY
    what = 'ost survey'
    parameter_names = PARAMETER_NAMES
    resume_keys = ('ost',)
    resume_parts = True
    returns_raw_files = False
    option_problems = staticmethod(option_problems)

    def __init__(self):
        self.engine = None

    def build(self, start):
        params = start.module.params
        # Checks, the cache change and its undoing run on the control runner: the restore still runs after a
        # timeout.
        bounded = bounded_settings(params) if params['engine'] == 'native' else {}
        survey = self.engine = ost.OstSurvey(
            start.context, params['mount_point'], size_mib=params['size_mib'],
            min_free_factor=params['min_free_factor'], workdir=params['workdir'], **bounded)
        survey.inspect()
        return survey

    def check(self, start, survey):
        survey_module.fail_on_problems(start.module, survey.space_problems())
        # How full each OST was before the survey wrote (lfs df), as obdfilter records it: the history keeps it.
        free_kib, total_kib = survey.fill()
        start.builder.set_environment(lustre_version=start.lctl.version(), kernel=os.uname()[2],
                                      fsname=survey.fsname, mount_fstype=survey.fstype, client_nid=survey.client_nid,
                                      free_kib=free_kib, total_kib=total_kib)

    def plan(self, start, survey):
        plan = survey.plan()
        if not survey.active_osts():
            start.builder.add_error("no active OST in lctl get_param -n %s" % survey.lov_param)
        return plan

    def changed_in_check_mode(self, start, survey, plan):
        return bool(survey.active_osts())

    def plan_lines(self, params, plan):
        lines = ['OSTs: %s in %s' % ([ost['ost'] for ost in plan['osts']], plan['directory'])]
        bounded = plan.get('bounded')
        if bounded:
            lines.append('time-bounded points: %g s per test, floor %s; about %d s if every test lasts its time; '
                         'at worst %d MiB per OST (every OST at the larger of its full size and the floor, written '
                         'and read), against %d MiB for the full size'
                         % (bounded['point_s'], bounded['floor_reason'], bounded['target_duration_s'],
                            bounded['worst_case_mib_per_ost'], bounded['full_mib_per_ost']))
        return lines

    def planned(self, survey, plan):
        # Every OST moves the same size_mib, or a bounded OST lasts about its point_s per test: the steps weigh alike.
        return survey.steps()

    def record_point(self, record):
        return self.engine.part_point(record)

    def run_native(self, start, survey, run_dir):
        raw_path = os.path.join(run_dir, 'ost_survey.out')
        records = []
        if survey.active_osts():
            # measurements (sync, dd, setstripe) run under the deadline; the rest on the control runner
            survey.runner = start.runner
            if start.progress is not None:
                survey.on_step = start.progress.step_done
                survey.on_ost_done = start.progress.point_done
            records, unused_raw_files = survey_module.run_native(start.builder, survey, start.control_runner)
            for record in records:
                # the I/O kit's text of the survey, for the user to read
                with open(raw_path, 'w') as handle:
                    handle.write(ost.report_text(record))
        return bool(records), [raw_path] if os.path.exists(raw_path) else []

    def run_iokit(self, start, survey, run_dir):
        raw_path = os.path.join(run_dir, 'ost_survey.out')
        record = None
        if survey.active_osts():
            script = survey_module.iokit_script_path(start.module)
            try:
                record, errors, unused_result = ost.run_iokit_guarded(survey, start.runner, start.control_runner,
                                                                      script, raw_path)
            except EngineError as exc:
                start.module.fail_json(msg=str(exc))
            survey_module.add_iokit_outcome(start.builder, [record] if record is not None else [], errors,
                                            start.runner)
        return record is not None, [raw_path] if os.path.exists(raw_path) else []


def main():
    # First: a module killed later still leaves a payload directory the cleanup knows is stale.
    payload.claim()
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    survey_module.run_server_survey(module, OstSpec(), Runner, ProcessRecordingRunner)


if __name__ == '__main__':
    main()
