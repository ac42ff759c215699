#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: stats_collect
short_description: Gather vmstat, iostat and Lustre statistics on a node while a survey runs, as lustre-iokit's stats-collect does
version_added: 0.1.0
description:
  - Starts, stops and collects the statistics samplers of one run on this node, the way the I/O kit's
    C(iokit-gather-stats start|stop) and C(iokit-lstats) do, and returns what they measured as a result envelope
    C(lustre.iokit/result/v1) with survey C(stats_collect).
  - "Collectors and their interval options keep the I/O kit's names and meaning (C(VMSTAT_INTERVAL),
    C(IO_INTERVAL), C(BRW_INTERVAL), C(SERVICE_INTERVAL), C(CLIENT_INTERVAL)): V(vmstat) runs C(vmstat) every
    O(vmstat_interval) seconds; V(iostat) runs C(iostat -d -x) every O(iostat_interval) seconds when sysstat is
    installed; V(brw) reads C(osd-*.*.brw_stats) (C(obdfilter.*.brw_stats) on servers without them); V(service)
    reads the server counters C(obdfilter.*.stats), C(ost.OSS.*.stats), C(mdt.*.md_stats), C(mds.MDS.*.stats)
    and C(ldlm.services.*.stats); V(client) reads C(osc.*.stats), C(llite.*.stats) and C(mdc.*.md_stats)."
  - A Lustre collector with interval 0 takes a snapshot with C(lctl get_param) at start and at stop; with N it
    also samples every N seconds. Collectors whose tool or parameters the node lacks are skipped (RV(skipped_collectors)),
    so one task serves OSS, MDS and client nodes alike.
  - Unlike the I/O kit, no statistics are reset; every figure is the difference between the start and the end
    snapshot, so the disk I/O size histogram of C(brw_stats) is that of exactly what ran in between. A count
    that went down (somebody reset the statistics meanwhile) makes the record's C(reset) true and its end values
    the delta.
  - Each sampler runs detached in a process group of its own under O(workdir)/O(run_id)/C(stats/), is written
    to the node state (pid and kernel start time) as soon as it exists, and stops by itself after
    O(max_duration_s). Stopping signals exactly those processes (SIGTERM to the group, SIGKILL after
    O(stop_grace_s)), never a process that reused a pid, so the C(lustre.iokit.iokit_cleanup) module can also
    stop them after a lost controller.
author:
  - lustre.iokit contributors (@lustre)
requirements:
  - C(vmstat) (procps) for V(vmstat); C(iostat) (sysstat) for V(iostat); C(lctl) for the Lustre collectors.
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
    details:
      - With O(state=started) the collectors are discovered (read-only C(lctl list_param)) and the plan returned;
        nothing starts. With O(state=stopped) or O(state=collected) nothing is stopped or read; RV(samplers) lists
        what would be stopped.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
options:
  state:
    description:
      - V(started) takes the start snapshots and starts the samplers; a run already started is left alone.
      - V(stopped) stops this run's samplers and takes the end snapshots; a run already stopped (or never
        started on this node) is left alone.
      - V(collected) stops the samplers if they still run, then returns the parsed statistics as an envelope.
    type: str
    choices: [started, stopped, collected]
    required: true
  run_id:
    description:
      - The run the statistics belong to; the same value for start, stop and collect, and the survey's run id,
        so that its result and its statistics are stored side by side.
      - Letters, digits, C(.), C(_), C(-); at most 64 characters.
    type: str
    required: true
  workdir:
    description: Scratch directory on the node; statistics go under O(workdir)/O(run_id)/C(stats/).
    type: path
    default: /tmp/lustre-iokit
  collectors:
    description: The collectors to start (only read with O(state=started)).
    type: list
    elements: str
    choices: [vmstat, brw, service, iostat, client]
    default: [vmstat, brw, service, iostat, client]
  vmstat_interval:
    description: Seconds between two C(vmstat) reports (the I/O kit's C(VMSTAT_INTERVAL)); at least 1.
    type: int
    default: 1
  iostat_interval:
    description: Seconds between two C(iostat) reports (the I/O kit's C(IO_INTERVAL)); at least 1.
    type: int
    default: 1
  brw_interval:
    description:
      - C(brw_stats) sampling interval in seconds (the I/O kit's C(BRW_INTERVAL)); 0 reads them at start and at
        stop only, which gives the histogram of the whole collection.
      - A positive interval also keeps, per target, the C(series) of what moved between samples, from which the
        report cuts the disk I/O size histogram per survey phase.
    type: int
    default: 0
  service_interval:
    description: Server counter sampling interval in seconds (the I/O kit's C(SERVICE_INTERVAL)); 0 reads them at start and stop.
    type: int
    default: 0
  client_interval:
    description: Client counter sampling interval in seconds (the I/O kit's C(CLIENT_INTERVAL)); 0 reads them at start and stop.
    type: int
    default: 0
  label:
    description:
      - What the statistics are for, usually the survey they surround (V(obdfilter), V(mdtest), ...); every record
        and error carries it (only read with O(state=started)).
    type: str
    default: stats
  previous:
    description:
      - With O(state=collected), the envelope already stored for this host in this run (for instance by an earlier
        survey of the run on the same host); its records and errors of other labels are kept in the returned
        envelope, whose times then span both, so that one host's statistics file holds every survey of the run.
    type: dict
  max_duration_s:
    description:
      - Every sampler stops by itself after this many seconds, even when nobody stops it; set it above the
        longest survey the statistics should cover.
    type: int
    default: 21600
  stop_grace_s:
    description: Seconds between SIGTERM and SIGKILL when stopping a sampler.
    type: int
    default: 5
notes:
  - The statistics are written to the node's O(workdir); O(state=collected) returns them and
    C(lustre.iokit.store_result) stores the envelope as C(<iokit_results_dir>/<run_id>/<host>/stats_collect.json).
  - C(iostat) reports average since boot first; it runs with C(-y) so that the first report already covers the
    survey. The first C(vmstat) line (average since boot) is dropped for the same reason.
seealso:
  - name: lustre-iokit stats-collect
    description: The I/O kit scripts (iokit-gather-stats, iokit-lstats, iokit-config) whose collectors this module runs.
    link: https://github.com/lustre/lustre-release/tree/master/lustre-iokit/stats-collect
  - module: lustre.iokit.iokit_cleanup
  - module: lustre.iokit.store_result
'''

EXAMPLES = r'''
- name: Start the samplers on every node of the survey
  lustre.iokit.stats_collect:
    state: started
    run_id: "{{ iokit_run_id }}"

- name: Only vmstat and brw_stats, brw_stats sampled every 10 seconds
  lustre.iokit.stats_collect:
    state: started
    run_id: "{{ iokit_run_id }}"
    collectors: [vmstat, brw]
    brw_interval: 10

- name: Stop and collect, keeping what an earlier survey of the run stored for this host
  lustre.iokit.stats_collect:
    state: collected
    run_id: "{{ iokit_run_id }}"
    previous: "{{ lookup('ansible.builtin.file', stats_path) | from_json if stats_path is file else omit }}"
  vars:
    stats_path: "./iokit-results/{{ iokit_run_id }}/{{ inventory_hostname }}/stats_collect.json"
  register: stats

- name: Store the statistics beside the survey's results
  lustre.iokit.store_result:
    envelope: "{{ stats.envelope }}"
    results_dir: ./iokit-results
  when: stats.collected
'''

RETURN = r'''
run_id:
  description: The run identifier.
  returned: always
  type: str
stats_dir:
  description: Directory on the node that holds the manifest, the snapshots and the samplers' output.
  returned: always
  type: str
samplers:
  description:
    - The collectors of the run, each with C(collector), C(interval_s), C(pid) (null for snapshot-only Lustre
      collectors) and C(params) (the Lustre parameters read, if any). In check mode, what would run or be stopped.
  returned: always
  type: list
  elements: dict
skipped_collectors:
  description: Collectors not started, each mapped to the reason (tool not installed, no such parameters).
  returned: always
  type: dict
stopped:
  description: Samplers this call stopped, each with C(collector), C(pid) and the C(signal) that ended it.
  returned: when O(state) is V(stopped) or V(collected)
  type: list
  elements: dict
collected:
  description: True when an envelope was built (the run was started on this node).
  returned: when O(state=collected)
  type: bool
schema:
  description: Envelope schema identifier.
  returned: when RV(collected) is true
  type: str
  sample: lustre.iokit/result/v1
host:
  description: Short host name of the node.
  returned: when RV(collected) is true
  type: str
survey:
  description: Always V(stats_collect).
  returned: when RV(collected) is true
  type: str
engine:
  description: Always V(native).
  returned: when RV(collected) is true
  type: str
status:
  description: V(ok) every started collector gave data; V(partial) with errors (a sampler that ended early, a failed snapshot).
  returned: when RV(collected) is true
  type: str
parameters:
  description: The collectors asked for when the run started (C(collectors)), their C(intervals) and C(max_duration_s).
  returned: when RV(collected) is true
  type: dict
envelope:
  description:
    - The complete result envelope, ready for C(lustre.iokit.store_result); the other keys repeat its fields
      except C(started) and C(finished).
  returned: when RV(collected) is true
  type: dict
duration_s:
  description: Seconds from the start to the stop of the statistics (the envelope's C(started) and C(finished)).
  returned: when RV(collected) is true
  type: float
records:
  description:
    - One record per collector output, each with C(collector) and C(label) (O(label) of its collection).
    - V(brw) records, one per target, have C(target),
      C(histograms) (title to rows of C(bucket) with C(read)/C(write) C(count), C(pct) and C(cum_pct), only
      buckets that changed), C(units), C(reset), C(start_time), C(end_time) (epoch seconds) and C(elapsed_s).
    - With O(brw_interval) above 0, V(brw) records also have C(series), the changes between consecutive samples
      of the C(disk I/O size) and C(pages per bulk r/w) histograms. C(series.times) is the epoch of every sample
      after the first (which is C(start_time)); C(series.histograms) maps a title to C(buckets) (the labels that
      moved) and C(deltas), rows of C([sample, bucket, read, write]) where C(sample) indexes C(times) and
      C(bucket) indexes C(buckets), only for buckets that moved; C(series.resets) lists the samples whose counts
      went down (statistics reset) and are counted from zero; C(series.read_s) is the longest C(lctl get_param)
      of the samples (a sample holds counts read between its time and that many seconds later).
    - V(service) and V(client) records, one per parameter, have C(param) and C(counters) (name to C(count),
      C(sum) and C(unit) deltas). The V(vmstat) record has C(samples) (vmstat's columns plus C(time)) and
      C(summary) (C(cpu_busy_pct) and C(iowait_pct) mean and max). The V(iostat) record has C(samples)
      (C(time) and C(devices), each device mapped to iostat's columns).
  returned: when RV(collected) is true
  type: list
  elements: dict
errors:
  description:
    - Problems met, each with C(point) null and a C(message) that starts with its label; the problems of the start
      and the stop are here too.
  returned: when RV(collected) is true
  type: list
  elements: dict
environment:
  description: C(collectors) (what ran, with pids and parameters), C(skipped_collectors), C(stats_dir) and C(kernel).
  returned: when RV(collected) is true
  type: dict
raw_output:
  description: Path on the node of the run's manifest.
  returned: when RV(collected) is true
  type: str
raw_files:
  description: Paths on the node of the snapshots and samplers' output files, for C(lustre.iokit.store_result) to fetch.
  returned: when RV(collected) is true
  type: list
  elements: str
'''

import os
import socket

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.lustre.iokit.plugins.module_utils import payload
from ansible_collections.lustre.iokit.plugins.module_utils import results
from ansible_collections.lustre.iokit.plugins.module_utils.engines import stats_collect
from ansible_collections.lustre.iokit.plugins.module_utils.engines.errors import EngineError
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState, NodeStateError
from ansible_collections.lustre.iokit.plugins.module_utils.option_problem import OptionProblem
from ansible_collections.lustre.iokit.plugins.module_utils.runner import Runner
from ansible_collections.lustre.iokit.plugins.module_utils.survey_args import DEFAULT_WORKDIR
from ansible_collections.lustre.iokit.plugins.module_utils.survey_module import fail_on_problems, module_result

INTERVAL_OPTIONS = dict((name, name + '_interval') for name in stats_collect.COLLECTORS)


def argument_spec():
    spec = dict(
        state=dict(type='str', choices=['started', 'stopped', 'collected'], required=True),
        run_id=dict(type='str', required=True),
        workdir=dict(type='path', default=DEFAULT_WORKDIR),
        collectors=dict(type='list', elements='str', choices=list(stats_collect.COLLECTORS),
                        default=list(stats_collect.COLLECTORS)),
        label=dict(type='str', default=stats_collect.DEFAULT_LABEL),
        previous=dict(type='dict'),
        max_duration_s=dict(type='int', default=stats_collect.DEFAULT_MAX_DURATION_S),
        stop_grace_s=dict(type='int', default=int(stats_collect.DEFAULT_GRACE_S)),
    )
    for name, option in INTERVAL_OPTIONS.items():
        spec[option] = dict(type='int', default=stats_collect.DEFAULT_INTERVALS[name])
    return spec


def option_problems(params):
    """Every invalid option value, each an OptionProblem."""
    problems = []
    try:
        results.validate_run_id(params['run_id'])
    except ValueError as exc:
        problems.append(OptionProblem('run_id', str(exc)))
    intervals = dict((name, params[option]) for name, option in INTERVAL_OPTIONS.items())
    problems.extend(stats_collect.interval_problems(intervals, params['collectors'], params['max_duration_s']))
    if not params['label'].strip():
        problems.append(OptionProblem('label', 'must not be empty (the survey the statistics are for, or stats)'))
    if params['stop_grace_s'] < 0:
        problems.append(OptionProblem('stop_grace_s', 'must be 0 or more seconds', got='%d' % params['stop_grace_s']))
    return problems


def sampler_list(manifest_collectors):
    return [{'collector': name, 'interval_s': entry.get('interval_s'), 'pid': entry.get('pid'),
             'params': entry.get('params', [])} for name, entry in sorted(manifest_collectors.items())]


def main():
    # First: a module killed later still leaves a payload directory the cleanup knows is stale.
    payload.claim()
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    params = module.params
    fail_on_problems(module, option_problems(params))
    run_id = params['run_id']
    host = socket.gethostname().split('.')[0]
    node_state = NodeState(params['workdir'])
    collection = stats_collect.StatsCollection(Runner(), node_state, run_id, params['workdir'], host=host,
                                               grace_s=float(params['stop_grace_s']))
    base = {'run_id': run_id, 'stats_dir': collection.directory}
    intervals = dict((name, params[option]) for name, option in INTERVAL_OPTIONS.items())
    try:
        manifest = collection.read_manifest()
        if module.check_mode:
            running = manifest is not None and manifest.get('stopped') is None
            if params['state'] == 'started':
                if running:
                    module.exit_json(changed=False, samplers=sampler_list(manifest['collectors']),
                                     skipped_collectors=manifest.get('skipped', {}), **base)
                plan = collection.plan(params['collectors'], intervals, params['max_duration_s'])
                module.exit_json(changed=True, samplers=sampler_list(plan['collectors']),
                                 skipped_collectors=plan['skipped'], **base)
            samplers = sampler_list(manifest['collectors']) if running else []
            module.exit_json(changed=running, samplers=samplers, skipped_collectors={}, stopped=[],
                             collected=False, **base)

        if params['state'] == 'started':
            outcome = collection.start(params['collectors'], intervals, params['max_duration_s'], label=params['label'])
            for problem in outcome['manifest'].get('errors', []):
                module.warn(problem)
            module.exit_json(changed=outcome['changed'], samplers=sampler_list(outcome['manifest']['collectors']),
                             skipped_collectors=outcome['manifest'].get('skipped', {}), **base)

        if params['state'] == 'stopped':
            outcome = collection.stop()
            found = outcome['manifest']
            module.exit_json(changed=outcome['changed'], stopped=outcome['stopped'],
                             samplers=sampler_list(found['collectors']) if found else [],
                             skipped_collectors=found.get('skipped', {}) if found else {}, **base)

        records, errors, info = collection.collect()
    except (EngineError, NodeStateError) as exc:
        module.fail_json(msg=str(exc), **base)
    except (IOError, OSError) as exc:
        module.fail_json(msg='workdir: cannot use %s: %s' % (collection.directory, exc), **base)

    if not info['collected']:
        module.exit_json(changed=False, collected=False, samplers=[], skipped_collectors={}, stopped=[],
                         msg=info['reason'], **base)
    started, stopped = info['started'], max(info['stopped'], info['started'])
    records, errors, started, stopped = stats_collect.merge_previous(params['previous'], info['label'], records,
                                                                     errors, started, stopped)
    manifest = collection.read_manifest()
    # The envelope's times are those of the collection (start to stop), not of this call: the statistics
    # cover that span, and collecting twice gives the same envelope.
    builder = results.EnvelopeBuilder(run_id, host, stats_collect.SURVEY, 'native',
                                      dict(collectors=manifest.get('requested', sorted(manifest['collectors'])),
                                           intervals=dict((name, entry['interval_s'])
                                                          for name, entry in manifest['collectors'].items()),
                                           max_duration_s=manifest['max_duration_s']),
                                      now=started)
    for record in records:
        builder.add_record(record)
    for message in errors:
        builder.add_error(message)
    if not records:
        builder.mark_nothing_to_do()
    builder.set_environment(collectors=info['collectors'], skipped_collectors=info['skipped'],
                            stats_dir=collection.directory, kernel=os.uname()[2])
    builder.set_raw_output(info['manifest'])
    envelope = builder.finish(now=stopped)
    module.exit_json(changed=info['changed'], collected=True, stopped=info['stopped_now'],
                     samplers=sampler_list(info['collectors']), skipped_collectors=info['skipped'],
                     raw_files=info['files'], stats_dir=collection.directory, **module_result(envelope))


if __name__ == '__main__':
    main()
