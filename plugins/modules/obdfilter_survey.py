#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: obdfilter_survey
short_description: Measure OST object-layer bandwidth through echo_client, as lustre-iokit's obdfilter-survey does
version_added: 0.1.0
description:
  - Runs the obdfilter survey of the Lustre I/O kit (C(case=disk)) on the OSTs of this OSS and returns every
    sweep point as a record of the result envelope C(lustre.iokit/result/v1).
  - The method is the I/O kit's. C(obdecho) is loaded if absent before anything is set up (and unloaded at the
    end only in that case, once every echo client is gone; with O(engine=iokit) the script then finds it loaded
    and leaves it alone); one C(echo_client) named C(<ost>_<tag>_ecc) is set up per OST, where C(<tag>) is six hex digits of the run id
    (with O(engine=iokit), the script's own C(<ost>_ecc)), so that runs never share or remove each other's
    devices; record size O(rszlo) to O(rszhi), objects
    O(nobjlo) to O(nobjhi) and threads O(thrlo) to O(thrhi) per OST double in turn, and a point whose thread
    count is not a multiple of its object count is skipped.
  - At every point, O(nobjlo)..O(nobjhi) objects are created on each OST (they must get consecutive ids),
    then for each test C(osd*.*.force_sync) is set and one C(lctl --threads) per OST runs C(test_brw) on all
    OSTs at once; the objects are destroyed after the point. Echo objects live in their own FID sequence,
    but the test fills O(size_mib) MiB per OST per write test.
  - The aggregate bandwidth is the data moved over all OSTs divided by the wall-clock time; C(min_mib_s) and
    C(max_mib_s) are the slowest and fastest one-second sample of any single OST. A test whose output has an
    error is C(error), one too short for any one-second sample is C(short). Each record also keeps every OST's
    own figures under C(per_ost), so a slow OST is visible.
  - Every echo client, object range, module load and helper process is written to the node state under
    O(workdir) before it is made, so the C(lustre.iokit.iokit_cleanup) module can undo a killed run.
  - Raw output (the I/O kit's C(.summary) and C(.detail) texts) is written under O(workdir)/O(run_id)/.
author:
  - lustre.iokit contributors (@lustre)
requirements:
  - Lustre server utilities (C(lctl)) and the C(obdecho) kernel module on the OSS; C(lsmod), C(modprobe), C(rmmod).
  - For O(engine=iokit), the lustre-iokit package (C(obdfilter-survey)) and gawk.
extends_documentation_fragment:
  - lustre.iokit.attributes
  - lustre.iokit.survey_common
  - lustre.iokit.resume
  - lustre.iokit.sweep
  - lustre.iokit.sweep.adaptive
options:
  plan_ost_mib_s:
    description:
      - The rate, in MiB/s per OST, the plan's C(estimated_duration_s) assumes (the sizes of every point and test
        divided by it); the survey's progress starts its ETA from it until the first point is measured.
      - Omitted, the plan assumes the collection's built-in figure (500 MiB/s per OST) and says so in
        C(estimate_basis).
    type: float
  sweep_start_near_knee:
    description:
      - With O(sweep=adaptive), each thread sweep that begins after one that stopped skips the thread counts below
        half that sweep's knee, so that it starts one doubling below it; the points skipped are listed with the
        reason in C(skipped_points). Safe where the knee moves little between record sizes and object counts, as on
        one OST type (the fast sweep profile sets it).
    type: bool
    default: false
  point_s:
    description:
      - Time-bounded points (O(case=disk) only) - the seconds each test of a point aims at. A point then moves, per
        OST, what that time allows at the rate the survey measured, C(max(floor, min(O(size_mib), point_s x rate))),
        where the rate is the slowest OST's slowest test of the previous point of the same thread sweep (or, for
        the first point of a thread sweep, of an earlier one at the same or the nearest lower thread count); the
        survey's first point, with no rate yet, moves the floor. The amount is whole records for every thread, the
        same on every OST of the host, so that their figures compare; the slowest OST takes the point's time.
      - A point whose floor cannot be moved, at that rate, in the time left before O(timeout) (shared by its tests)
        is not run and named in RV(errors), rather than cut short into a figure below its floor.
      - Unset, every point moves O(size_mib), exactly as the I/O kit (the floor does not apply), so that results stay
        comparable with the I/O kit's.
    type: float
  point_min_mib:
    description:
      - With O(point_s), the least a point moves per OST per test (the floor), so that it measures the OST rather
        than the server's cache; it wins over O(point_s) and over O(size_mib).
      - Unset, the node's C(MemTotal) (C(/proc/meminfo), the page cache an ldiskfs OSD's read or write-through cache
        can fill) over the OSTs surveyed, at least 512 MiB; the plan's C(bounded.floor_reason) says what was read. On
        ZFS, set it to the ARC's maximum (or C(zfs_dirty_data_max) if larger) over the OSTs.
    type: int
  targets:
    description:
      - OSTs to measure (C(obdfilter) device names such as C(testfs-OST0000), optionally C(localhost:name)).
      - Empty means every C(UP) obdfilter device of the node, as the I/O kit does.
      - With O(case=network), the one echo server to measure against, as its IPv4 address, a host name (resolved
        to its address for the NID, and used as is by O(server_shell)) or a NID such as V(192.168.1.5@o2ib).
      - With O(case=netdisk), C([host:]ost) names (the NID is the host's, or that of the client's osc for the
        OST); empty means every C(UP) osc of the mounted client.
    type: list
    elements: str
    default: []
  case:
    description:
      - V(disk) measures the local OSTs through echo_client on the obdfilter layer.
      - V(network) measures LNet and the RPC layer only, as the I/O kit does. On the server named by O(targets),
        reached through O(server_shell), C(obdecho) is loaded if absent and an C(obdecho) device C(echo_srv) is
        set up (with an C(ost) service device C(OSS) if the server has none); on this node an C(osc) C(echotmp)
        connects to it and an echo client C(echotmp_ecc) runs the sweep with C(g) batches. The server stores
        nothing. Everything this run made is undone at the end, on both nodes; a leftover C(echotmp) is refused.
      - V(network) runs only on Lustre 2.15.6 and older; newer Lustre removed the echo client's kernel path it
        needs (LU-10994), so the module fails before touching anything with a message naming the installed
        version. Use the LNet self-test survey (M(lustre.iokit.lst_survey)) there. It also refuses a node with
        a mounted Lustre client (its C(osc) devices), as the I/O kit does.
      - V(netdisk) measures the OSTs from a client through the network. For each OST (O(targets) as
        C([host:]ost), or every C(UP) osc of the mounted client with its NID from C(lctl dl -t)) an C(osc)
        C(<ost>_osc) of its own is connected through C(add_uuid host_<i>_UUID <nid>) and an echo client
        C(<ost>_osc_ecc) runs the sweep with C(g) batches on all OSTs at once; objects are created on the OSTs.
        It runs on Lustre 2.15.5 and older only, as the I/O kit dropped it in 2.15.6 (and the kernel path in
        2.15.7, LU-10994), so newer versions are refused before anything is touched, naming the version.
    type: str
    choices: [disk, network, netdisk]
    default: disk
  size_mib:
    description:
      - MiB per OST per test (the I/O kit's C(size)); must be a multiple of every record size of the sweep.
    type: int
    default: 16384
  nobjlo:
    description: Smallest number of objects per OST (the I/O kit's C(nobjlo)).
    type: int
    default: 1
  nobjhi:
    description: Largest number of objects per OST (the I/O kit's C(nobjhi)).
    type: int
    default: 16
  thrhi:
    description: Largest number of threads per OST (the I/O kit's C(thrhi)); at most 4096.
    type: int
    default: 16
  tests:
    description:
      - Tests run at every point, in this order (the I/O kit's C(tests_str)). The first must be V(write).
    type: list
    elements: str
    choices: [write, rewrite, read, reread, rewrite_again]
    default: [write, rewrite, read]
  verify:
    description: Write a data pattern and check it on read (the I/O kit's C(verify=1)); slower.
    type: bool
    default: false
  iokit_script:
    description: The C(obdfilter-survey) script run by O(engine=iokit); a name is looked up in C(PATH).
    type: str
    default: obdfilter-survey
  nettype:
    description:
      - O(case=network) and O(case=netdisk). The LNet network type of a NID made from an address or host name
        in O(targets) (the I/O kit's C(NETTYPE)).
    type: str
    default: tcp
  server_shell:
    description:
      - O(case=network) only. The command, before the server's host name, that runs a command on the echo
        server (the I/O kit uses C(ssh)). The remote command is quoted for the remote shell. It must not
        prompt; key-based login to the server is needed, as for the I/O kit.
      - An empty list runs the server's commands on this node (client and echo server on one node).
    type: list
    elements: str
    default: [ssh, -o, BatchMode=yes, -o, ConnectTimeout=10]
notes:
  - Only one obdfilter survey runs on a node at a time (per O(workdir)) - a second start fails at once, naming the
    run id, host, pid and start time of the one running. A run that was killed is cleaned up before the next
    starts, unless one of its processes still runs.
  - The I/O kit's exit status is not trusted with O(engine=iokit) (it exits 0 after most failures); the result
    is judged from its summary.
  - The data written goes to new echo objects, never to existing file objects, but it needs free space on the
    OSTs (C(per_ost) in RV(plan)); the Lustre documentation still calls the test potentially destructive and
    advises running it before the file system holds production data.
seealso:
  - name: lustre-iokit obdfilter-survey
    description: The I/O kit script this module reproduces.
    link: https://github.com/lustre/lustre-release/tree/master/lustre-iokit/obdfilter-survey
'''

EXAMPLES = r'''
- name: Survey every OST of the OSS, stopping after 50 minutes
  lustre.iokit.obdfilter_survey:
    size_mib: 4096
    nobjhi: 4
    thrhi: 32
    timeout: 3000
    run_id: "{{ iokit_run_id }}"
  async: 3600
  poll: 0
  register: obdfilter_job

- name: Wait for the survey
  ansible.builtin.async_status:
    jid: "{{ obdfilter_job.ansible_job_id }}"
  register: obdfilter_result
  until: obdfilter_result.finished
  retries: 400
  delay: 10

- name: Two OSTs, write and read only, 4 MiB records
  lustre.iokit.obdfilter_survey:
    targets: [testfs-OST0000, testfs-OST0001]
    tests: [write, read]
    rszlo: 4096
    rszhi: 4096
    size_mib: 1024

- name: Network and RPC only, against an echo server on oss01 (Lustre 2.15.6 or older; key-based ssh to oss01)
  lustre.iokit.obdfilter_survey:
    case: network
    targets: [10.10.0.21]
    server_shell: [ssh, -o, BatchMode=yes, -l, root]
    size_mib: 1024
    thrhi: 8
    nobjhi: 2

- name: Show the plan only
  lustre.iokit.obdfilter_survey:
    size_mib: 1024
  check_mode: true
  register: obdfilter_plan
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
  description: Always V(obdfilter).
  returned: always
  type: str
engine:
  description: The engine that ran, V(native) or V(iokit).
  returned: always
  type: str
status:
  description:
    - V(ok) every point measured; V(partial) some measured, then an error, a timeout or a signal; V(failed)
      nothing measured (the module then fails, still returning the envelope); V(skipped) in check mode.
  returned: always
  type: str
parameters:
  description: The survey's options.
  returned: always
  type: dict
envelope:
  description:
    - The complete result envelope C(lustre.iokit/result/v1), ready to store; the other keys of this result
      repeat its fields at the top level, except C(started) and C(finished) (UTC times), which Ansible
      reserves for async jobs and which are therefore only here.
  returned: always
  type: dict
duration_s:
  description: Seconds the module ran.
  returned: always
  type: float
records:
  description:
    - One record per measured point, in the shape of the C(parse_obdfilter_survey) filter. C(ost) is the
      number of OSTs; C(size_kib), C(obj) and C(thr) are totals over the OSTs, as the I/O kit prints them;
      C(obj_per_ost), C(thr_per_ost), C(count) (I/Os per thread) and C(pages) give the per-OST values.
    - Under C(tests), each test has C(mib_s) (aggregate over wall-clock time), C(min_mib_s)/C(max_mib_s)
      (slowest/fastest one-second sample of a single OST, null unless C(status) is V(ok)), C(status)
      (V(ok), V(short), V(error), or V(incomplete) when stopped) and C(elapsed_s); with O(engine=native) also
      C(start_time) and C(end_time), when the test's C(lctl test_brw) runs on all OSTs were started and when the
      last one ended, in epoch seconds (UTC, to the millisecond) of the node's clock (absent with
      O(engine=iokit)).
    - Under C(per_ost), each OST name maps each test to its own C(mib_s) (its data over its own wall-clock
      time), C(lctl_mib_s) (lctl's final rate), C(min_mib_s), C(max_mib_s), C(samples), C(status),
      C(elapsed_s) and C(error) (the first error line). With O(engine=iokit) they are read from the script's
      C(.detail) file, without C(mib_s) and C(elapsed_s) (the script times all OSTs together).
    - With O(point_s), each record also has C(bounded) (true), C(point_s), C(moved_mib_per_ost) (what each OST
      moved per test), C(elapsed_s) (the seconds its tests took together), C(point_limit) (what set the amount,
      V(time budget), V(floor), V(floor, no rate yet) or V(full size)) and C(sized_from_mib_s) (the rate per OST it
      was sized from, null for the first point); C(size_kib) and C(count) are what it moved.
  returned: always
  type: list
  elements: dict
errors:
  description: Errors, each with the C(point) it belongs to (or null) and a C(message).
  returned: always
  type: list
  elements: dict
environment:
  description:
    - Facts at run time. C(lustre_version), C(kernel), C(page_kib), C(targets), C(obdecho_loaded_by_us) and
      C(reused_echo_clients) (leftover echo clients that were reused, then torn down).
    - With O(case=disk), C(free_kib) and C(total_kib), each OST's C(kbytesavail) and C(kbytestotal) before the
      sweep (null where not read), which the results history keeps as the OST's fill level.
  returned: always
  type: dict
raw_output:
  description: Path on the node of the summary file; the detail file is beside it (RV(raw_files)).
  returned: always
  type: str
sweep:
  description:
    - How the thread sweep went (O(engine=native)). C(mode) (V(full) or V(adaptive)), C(min_gain_pct),
      C(patience), C(axis) (V(thr)), C(points_run) and C(points_full) (the points of the full grid the I/O kit
      would run), and C(stops), one entry per C(rsz_kib)/C(nobj) combination whose thread sweep stopped early,
      with the C(thr) it stopped after and the C(reason).
  returned: when the survey ran with O(engine=native)
  type: dict
skipped_points:
  description:
    - "Every point of the full grid an adaptive sweep did not run, as C(point) (C(rsz_kib), C(nobj), C(thr) per
      OST) and C(reason), for example V(saturated at thr 32: +1.4 % < 3 %). Empty for a full sweep."
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
    - The sweep, computed before anything is made. C(points) lists every point with C(rsz_kib),
      C(actual_rsz_kib), C(nobj), C(thr) (per OST), C(count), C(pages), C(size_kib_per_ost) and C(skip) (the
      reason, or null when it runs).
    - C(per_ost) maps each OST to C(bytes_written), C(bytes_read), C(objects_created), C(max_objects_at_once)
      and C(max_bytes_at_once); C(skipped_points) lists the skipped points; C(estimated_duration_s) is the
      time the sweep takes if every OST moves O(plan_ost_mib_s) (or the built-in figure), and C(estimate_basis)
      says so.
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
      floor came from), C(target_duration_s) (every test of every runnable point lasting O(point_s)),
      C(worst_case_kib_per_ost) (every point moving the larger of its full size and the floor, the most a bounded
      sweep moves) and C(full_kib_per_ost) (what the I/O kit's sweep moves). The plan's C(points) and the estimate
      still show the full sizes.
    - With O(case=network), C(per_ost) is keyed by the server (C(stored_on_server) is false, obdecho keeps
      nothing), and C(setup) lists the commands run on the C(server) and on this C(client) before the sweep;
      with O(case=netdisk), C(setup) lists this C(client)'s commands.
  returned: always
  type: dict
'''

import os
import re
import socket

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.lustre.iokit.plugins.module_utils import payload
from ansible_collections.lustre.iokit.plugins.module_utils import adaptive
from ansible_collections.lustre.iokit.plugins.module_utils import progress as progress_utils
from ansible_collections.lustre.iokit.plugins.module_utils import lctl as lctl_utils
from ansible_collections.lustre.iokit.plugins.module_utils.engines import obdfilter
from ansible_collections.lustre.iokit.plugins.module_utils.engines import obdfilter_iokit
from ansible_collections.lustre.iokit.plugins.module_utils.engines import obdfilter_network
from ansible_collections.lustre.iokit.plugins.module_utils.engines.contract import EngineContext
from ansible_collections.lustre.iokit.plugins.module_utils.engines.errors import EngineError
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import run_tag
from ansible_collections.lustre.iokit.plugins.module_utils.option_problem import OptionProblem
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.lctl_dl import parse_lctl_dl
from ansible_collections.lustre.iokit.plugins.module_utils.runner import ProcessRecordingRunner, Runner
from ansible_collections.lustre.iokit.plugins.module_utils.survey_args import (
    common_option_problems,
    survey_common_argument_spec,
    sweep_argument_spec,
)
from ansible_collections.lustre.iokit.plugins.module_utils import point_budget
from ansible_collections.lustre.iokit.plugins.module_utils import survey_module

SURVEY = 'obdfilter'
PARAMETER_NAMES = ('targets', 'case', 'size_mib', 'rszlo', 'rszhi', 'nobjlo', 'nobjhi', 'thrlo', 'thrhi', 'tests',
                   'verify', 'engine', 'timeout', 'nettype', 'server_shell', 'sweep', 'sweep_min_gain_pct',
                   'sweep_patience', 'sweep_start_near_knee', 'point_s', 'point_min_mib')
TEST_CHOICES = ['write', 'rewrite', 'read', 'reread', 'rewrite_again']


def argument_spec():
    spec = survey_common_argument_spec()
    spec.update(sweep_argument_spec())
    spec.update(adaptive.adaptive_sweep_argument_spec())
    spec.update(progress_utils.resume_argument_spec())
    spec.update(
        targets=dict(type='list', elements='str', default=[]),
        plan_ost_mib_s=dict(type='float'),
        sweep_start_near_knee=dict(type='bool', default=False),
        point_s=dict(type='float'),
        point_min_mib=dict(type='int'),
        case=dict(type='str', choices=list(obdfilter.CASES), default=obdfilter.CASE_DISK),
        size_mib=dict(type='int', default=16384),
        nobjlo=dict(type='int', default=1),
        nobjhi=dict(type='int', default=16),
        thrhi=dict(type='int', default=16),
        tests=dict(type='list', elements='str', choices=TEST_CHOICES, default=list(obdfilter.DEFAULT_TESTS)),
        verify=dict(type='bool', default=False),
        iokit_script=dict(type='str', default='obdfilter-survey'),
        nettype=dict(type='str', default=obdfilter_network.DEFAULT_NETTYPE),
        server_shell=dict(type='list', elements='str', default=['ssh', '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=10']),
    )
    return spec


def option_problems(params):
    """Invalid option values that need no look at the node, each an OptionProblem."""
    problems = []
    problems.extend(common_option_problems(params))
    problems.extend(adaptive.option_problems(params))
    if params['case'] == obdfilter.CASE_NETWORK and len(params['targets']) != 1:
        problems.append(OptionProblem('targets', 'case=network takes exactly one server (host name or IP address), '
                                      'got %d' % len(params['targets'])))
    if params['point_s'] is not None and params['engine'] == 'iokit':
        problems.append(OptionProblem('point_s', 'the installed obdfilter-survey moves its fixed size at every point; '
                                      'time-bounded points need {engine} native', mentions='engine'))
    if not re.match(r'^[a-z0-9]+$', params['nettype'] or ''):
        problems.append(OptionProblem('nettype', '%r is not an LNet network type such as tcp, tcp1 or o2ib'
                                      % params['nettype']))
    # The engine's checks of its own settings, on an engine built only to be asked: no runner, no targets (the
    # node resolves them) and the smallest page, since a larger one only adds problems, which the module's check of
    # the engine built on the node names.
    unattached = obdfilter.ObdfilterSurvey(EngineContext(None), [], params['size_mib'], case=params['case'],
                                           point_s=params['point_s'], point_min_mib=params['point_min_mib'],
                                           **sweep_settings(params, obdfilter.DEFAULT_PAGE_KIB))
    problems.extend(unattached.problems())
    return problems


def sweep_settings(params, page_size_kib):
    """The engine's sweep settings from the module's options, as every case's engine takes them."""
    return dict(rszlo=params['rszlo'], rszhi=params['rszhi'], nobjlo=params['nobjlo'], nobjhi=params['nobjhi'],
                thrlo=params['thrlo'], thrhi=params['thrhi'], tests=params['tests'], verify=params['verify'],
                page_kib=page_size_kib)


def record_point(record):
    """A record's sweep point as the plan names it."""
    return {'actual_rsz_kib': record['rsz_kib'], 'nobj': record['obj_per_ost'], 'thr': record['thr_per_ost']}


def mem_total_mib(path='/proc/meminfo'):
    """The node's MemTotal in MiB, or None when it cannot be read."""
    try:
        with open(path) as handle:
            for line in handle:
                words = line.split()
                if words[:1] == ['MemTotal:'] and len(words) > 1 and words[1].isdigit():
                    return int(words[1]) // 1024
    except (IOError, OSError):
        return None
    return None


def bounded_settings(params, targets, read_mem_total=mem_total_mib):
    """The engine's time-bounded point settings: ``point_s``, and the floor with where it came from (the option,
    else ``point_budget.default_floor`` from the node's MemTotal over the OSTs surveyed).

    The floor is found without ``point_s`` too, so that the plan can show what the fast sweep profile would take;
    only a bounded run needs it (ValueError when the node does not say), an unbounded one goes without.
    """
    if params['point_min_mib'] is not None:
        return dict(point_s=params['point_s'], point_min_mib=params['point_min_mib'],
                    floor_reason='point_min_mib %d MiB per OST' % params['point_min_mib'])
    try:
        floor, reason = point_budget.default_floor('obdfilter', len(targets), mem_total_mib=read_mem_total())
    except ValueError:
        if params['point_s'] is None:
            return {}
        raise
    return dict(point_s=params['point_s'], point_min_mib=floor, floor_reason=reason)


def page_kib():
    try:
        return max(1, os.sysconf('SC_PAGE_SIZE') // 1024)
    except (ValueError, OSError):
        return obdfilter.DEFAULT_PAGE_KIB


def network_survey(start, sweep_options, devices):
    """The case=network survey against the one server of ``targets``; EngineError (naming the option) when it cannot
    run here."""
    params = start.module.params
    server = params['targets'][0]
    mounted = obdfilter_network.mounted_client_oscs(devices)
    if mounted:
        raise EngineError(
            'case: network needs a node without a mounted Lustre client (the I/O kit says "The existing setup '
            'must be cleaned"); this node has the osc devices %s' % ', '.join(mounted))
    host, nid = obdfilter_network.network_peer(server, params['nettype'])
    server_runner = obdfilter_network.RemoteRunner(start.control_runner, params['server_shell'], host)
    survey = obdfilter_network.NetworkSurvey(start.context, server, nid, params['size_mib'],
                                             server_runner=server_runner, **sweep_options)
    start.builder.set_environment(server=survey.server, server_nid=survey.nid)
    return survey, list(params['targets'])


def netdisk_survey(start, sweep_options, unused_devices):
    """The case=netdisk survey of the OSTs ``targets`` names, through their servers' NIDs."""
    params = start.module.params
    try:
        with_nids = parse_lctl_dl(start.lctl.run(['dl', '-t']).stdout)
    except lctl_utils.LctlError as exc:
        start.module.fail_json(msg='cannot list the Lustre devices with their NIDs (lctl dl -t): %s' % exc)
    peers = obdfilter_network.netdisk_targets(with_nids, params['targets'], params['nettype'])
    survey = obdfilter_network.NetdiskSurvey(start.context, peers, params['size_mib'], **sweep_options)
    start.builder.set_environment(netdisk_nids=dict(peers))
    return survey, survey.targets


def disk_survey(start, sweep_options, devices):
    """The case=disk survey of this node's OSTs (``targets``, else every one)."""
    params = start.module.params
    targets = obdfilter.select_targets(devices, params['targets'],
                                       local_names=('localhost', start.host, socket.gethostname()))
    # The run's tag in the echo client names (the installed script names them itself).
    name_tag = run_tag(start.run_id) if params['engine'] == 'native' else None
    try:
        bounded = bounded_settings(params, targets) if params['engine'] == 'native' else {}
    except ValueError as exc:
        raise EngineError('point_min_mib: %s; set point_min_mib' % exc)
    survey = obdfilter.ObdfilterSurvey(start.context, targets, params['size_mib'], case=params['case'],
                                       name_tag=name_tag, **dict(sweep_options, **bounded))
    return survey, targets


# Each case's engine: ``builder(start, sweep_options, devices)`` -> ``(survey, targets)``.
CASE_BUILDERS = {
    obdfilter.CASE_DISK: disk_survey,
    obdfilter.CASE_NETWORK: network_survey,
    obdfilter.CASE_NETDISK: netdisk_survey,
}


class ObdfilterSpec(survey_module.ServerSurveySpec):
    """The obdfilter survey for survey_module.run_server_survey."""

    survey = SURVEY
    what = 'obdfilter survey'
    parameter_names = PARAMETER_NAMES
    exclusive = True
    # Loaded before the engine's setup and unloaded after its teardown (or after the I/O-kit script, which then
    # finds it loaded and leaves it alone).
    kernel_module = lctl_utils.ECHO_MODULE
    kernel_module_fact = 'obdecho_loaded_by_us'
    resume_keys = ('actual_rsz_kib', 'nobj', 'thr')
    estimate_option = 'plan_ost_mib_s'
    raw_name = 'obdfilter_survey'
    option_problems = staticmethod(option_problems)
    record_point = staticmethod(record_point)

    def __init__(self):
        self.targets = None

    def build(self, start):
        params, builder, lctl = start.module.params, start.builder, start.lctl
        lustre_version = lctl.version()
        builder.set_environment(lustre_version=lustre_version, kernel=os.uname()[2], page_kib=page_kib())
        problem = obdfilter.case_problem(params['case'], lustre_version)
        if problem:
            start.module.fail_json(msg=problem)
        try:
            devices = lctl.devices()
        except lctl_utils.LctlError as exc:
            start.module.fail_json(msg='cannot list the Lustre devices: %s' % exc)
        survey, self.targets = CASE_BUILDERS[params['case']](start, sweep_settings(params, page_kib()), devices)
        builder.set_environment(targets=self.targets)
        survey.inner_sweeps = adaptive.InnerSweeps(params['sweep'], params['sweep_min_gain_pct'],
                                                   params['sweep_patience'],
                                                   start_near_knee=params['sweep_start_near_knee'])
        return survey

    def check(self, start, survey):
        module = start.module
        params = module.params
        survey_module.fail_on_problems(module, survey.problems())
        if params['case'] == obdfilter.CASE_DISK:
            space_problems, free_kib = survey.free_space_problems()
            start.builder.set_environment(free_kib=free_kib, total_kib=survey.total_kib)
            survey_module.fail_on_problems(module, space_problems)
        if params['engine'] == 'iokit':
            script = survey_module.iokit_script_path(module)
            if os.sep in params['iokit_script'] and not os.access(script, os.R_OK):
                module.fail_json(msg='iokit_script: %s does not exist or cannot be read' % script)

    def plan_lines(self, params, plan):
        lines = ['skipped points: %d; per OST: %s' % (len(plan['skipped_points']), plan['per_ost'])]
        bounded = plan.get('bounded')
        if bounded:
            lines.append('time-bounded points: %g s per test, floor %s; about %d s if every test lasts its time; '
                         'at worst %d MiB per OST (every point at the larger of its full size and the floor), '
                         'against %d MiB for the full sizes'
                         % (bounded['point_s'], bounded['floor_reason'], bounded['target_duration_s'],
                            bounded['worst_case_kib_per_ost'] // 1024, bounded['full_kib_per_ost'] // 1024))
        return lines

    def planned(self, survey, plan):
        # A point's time is its size over its rate, so the ETA weighs points by size; a time-bounded point lasts
        # about its point_s per test whatever it moves, so they weigh the same.
        weight_key = None if plan.get('bounded') else 'size_kib'
        return progress_utils.planned_points(plan['points'], self.resume_keys, weight_key)

    def run_native(self, start, survey, run_dir):
        result = super(ObdfilterSpec, self).run_native(start, survey, run_dir)
        start.builder.set_environment(reused_echo_clients=survey.reused_echo_clients)
        if survey.case == obdfilter.CASE_NETWORK:
            start.builder.set_environment(server_lustre_version=survey.server_version,
                                          server_devices_reused=survey.server_reused)
        return result

    def run_iokit(self, start, survey, run_dir):
        """Run the installed obdfilter-survey, then undo whatever it left (its own trap is not trusted)."""
        params, runner = start.module.params, start.runner
        node_state, run_id, builder = start.node_state, start.run_id, start.builder
        script = survey_module.iokit_script_path(start.module)
        rslt = os.path.join(run_dir, 'obdfilter_survey')
        names = [obdfilter.echo_client_name(target) for target in self.targets] if params['case'] == 'disk' else []
        for target, name in zip(self.targets, names):
            node_state.record('echo_clients', run_id, name=name, target=target, objects=[])
        records, errors, unused_result = obdfilter_iokit.run_iokit(
            runner, script, rslt, targets=self.targets, case=params['case'], size_mib=params['size_mib'],
            rszlo=params['rszlo'], rszhi=params['rszhi'], nobjlo=params['nobjlo'], nobjhi=params['nobjhi'],
            thrlo=params['thrlo'], thrhi=params['thrhi'], tests=params['tests'], verify=params['verify'])
        survey_module.add_iokit_outcome(builder, records, errors, runner)
        start.remove_leftover_echo_clients('obdfilter-survey', names)
        return bool(records), [rslt + '.summary', rslt + '.detail']


def main():
    # First: a module killed later still leaves a payload directory the cleanup knows is stale.
    payload.claim()
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    survey_module.run_server_survey(module, ObdfilterSpec(), Runner, ProcessRecordingRunner)


if __name__ == '__main__':
    main()
