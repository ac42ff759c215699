#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: mdtest
short_description: Measure metadata rates through the Lustre client with mdtest under MPI or Slurm, as a sweep
version_added: 0.1.0
description:
  - Launches mdtest from this client (the launcher) over the client nodes named in O(hosts) and returns the
    result envelope C(lustre.iokit/result/v1) with one record per sweep point, each in the shape of the
    C(parse_mdtest) filter plus the sweep point.
  - "The sweep changes one factor at a time, as the metadata best practice asks: first the tasks per node
    (O(tasks_per_node), such as 1, 2, 4, 8) on one node, then the nodes (O(nodes), by default 1, 2, 4, ... up to
    the number of O(hosts)) at the tasks per node that gave the best mean rate of O(best_by). The one-node point
    of the second step is the best point of the first, not run again."
  - "With O(sweep=adaptive) each step stops early once the mean rate of O(best_by) gains too little: step 1 stops
    doubling the tasks per node, step 2 adding nodes (the rule of O(sweep), O(sweep_min_gain_pct) and
    O(sweep_patience); a point's spread is half its min..max range over the iterations). O(best_by) decides
    because it is the figure that picks the tasks per node of step 2: the other operations are recorded at every
    point run but do not hold a step back, and their own peaks may lie past where the sweep stopped. Every point
    passed over is listed with the reason in RV(skipped_points); RV(sweep) says how many of the full sweep's
    points ran."
  - Every point runs C(mdtest -i) O(repetitions); its summary gives max, min, mean and standard deviation over the
    iterations. With O(drop_caches) each phase runs as its own mdtest invocation, with the client caches dropped on
    every node of the point before each phase after create, and the statistics over the iterations are computed
    by the module (sample standard deviation).
  - For a point of N nodes and P tasks per node, O(launcher=mpirun) gets a hostfile of the first N O(hosts) with
    C(slots=P) and C(-np N*P), so that by-slot placement puts P tasks on each node; O(launcher=srun) runs
    C(srun -N N -n N*P --ntasks-per-node P) with O(partition) and O(account), in the allocation the module runs
    in or, with O(slurm_allocation=salloc) or V(sbatch), in a Slurm job of its own per launch (C(salloc) or
    C(sbatch --wait) for the point's nodes and tasks per node; a stopped run cancels its job). With
    O(environment_modules) the launch runs in a login shell that first does C(module load ...). The cache drops
    of O(drop_caches) run through the same launcher and shell, one task per node.
  - The test tree is C(<mount_point>/<directory>/mdtest_<run_id>), one directory per point
    (C(nodes<N>-ppn<P>)), made with C(lfs mkdir -c/-i) when O(mdt_count) or O(mdt_index) is set, with a default
    file layout from C(lfs setstripe -c) when O(stripe_count) is set. The tree carries the marker file
    C(.lustre-iokit-mdtest) naming the run, is written to the node state under O(workdir) before it is created,
    and is removed at the end, after a failure, a timeout or a SIGTERM too. M(lustre.iokit.iokit_cleanup) removes
    a tree that a killed run left, only while the marker names the recorded run.
  - Refuses a O(mount_point) that is not a Lustre client mount (C(lfs getname) fails), and an existing tree of
    this O(run_id) that does not carry its marker.
author:
  - lustre.iokit contributors (@lustre)
requirements:
  - A mounted Lustre client with C(lfs); C(mdtest) from hpc/ior (3.3 or 4.0) on every node in O(hosts), the same
    path on each; MPI (C(mpirun), Open MPI 4 command line) or Slurm's C(srun) able to start tasks on them (with
    C(salloc) or C(sbatch), and C(scancel), for O(slurm_allocation=salloc) or V(sbatch)).
extends_documentation_fragment:
  - lustre.iokit.attributes
  - lustre.iokit.survey_common
  - lustre.iokit.client_launch
  - lustre.iokit.resume
  - lustre.iokit.sweep.adaptive
options:
  engine:
    description:
      - Only V(native) - lustre-iokit has no mdtest script, mdtest is the tool itself.
    choices: [native]
  tasks_per_node:
    description: The tasks per node of the first step, on one node, in increasing order.
    type: list
    elements: int
    default: [1, 2, 4, 8]
  nodes:
    description:
      - The node counts of the second step, in increasing order, at most the number of O(hosts). Default 1, 2, 4, ...
        below the number of O(hosts), then that number.
    type: list
    elements: int
  best_by:
    description: The operation whose mean rate chooses the tasks per node of the second step.
    type: str
    default: file creation
    choices: [directory creation, directory stat, directory rename, directory removal, file creation, file stat,
              file read, file removal, tree creation, tree removal]
  items:
    description:
      - Files and/or directories per task (mdtest C(-n)); 1000 when neither this nor O(items_per_dir) is set.
        Cannot be set together with O(items_per_dir).
    type: int
  items_per_dir:
    description: Items per directory of the tree instead of per task (mdtest C(-I)); replaces O(items).
    type: int
  depth:
    description: Depth of the directory tree below each task's top directory (mdtest C(-z)).
    type: int
    default: 0
  branching:
    description: Subdirectories per directory of the tree (mdtest C(-b)).
    type: int
    default: 1
  unique_dir_per_task:
    description: A directory tree per task (mdtest C(-u)) instead of one shared tree.
    type: bool
    default: true
  files_only:
    description: Only files (mdtest C(-F)); excludes O(dirs_only).
    type: bool
    default: false
  dirs_only:
    description: Only directories (mdtest C(-D)); excludes O(files_only).
    type: bool
    default: false
  leaf_only:
    description: Items only in the leaf directories of the tree (mdtest C(-L)).
    type: bool
    default: false
  write_bytes:
    description: Bytes written to each file after it is created (mdtest C(-w)).
    type: int
    default: 0
  read_bytes:
    description: Bytes read from each file in the read phase (mdtest C(-e)), at most O(write_bytes).
    type: int
    default: 0
  phases:
    description:
      - The phases to run (mdtest C(-C), C(-T), C(-E), C(-r)); all four by default (no flag passed). Must include
        V(create), since every point starts from an empty directory. Without V(remove) the items stay until the
        tree is removed at the end.
    type: list
    elements: str
    choices: [create, stat, read, remove]
    default: [create, stat, read, remove]
  stride:
    description:
      - Rank stride for stat, read and remove (mdtest C(-N)), so that a task works on another node's items; 1
        defeats the client cache on several nodes, since mdtest multiplies the stride by the tasks per node when
        ranks are placed in blocks per node, as the hostfile and srun's default block distribution place them.
        0 disables it.
    type: int
    default: 0
  repetitions:
    description:
      - How many times mdtest repeats each point (mdtest C(-i)); mean and standard deviation are over them.
      - The alias O(iterations) is deprecated and will be removed in version 0.3.0 of lustre.iokit; in a survey
        role, C(<survey>_iterations) runs the whole survey that many times.
    type: int
    default: 3
    aliases: [iterations]
  stonewall_s:
    description:
      - Stonewall timer in seconds (mdtest C(-W)) - creation stops after this time and every task then catches up to
        the largest count. Only with O(branching=1). 0 disables it.
    type: int
    default: 0
  stripe_count:
    description: The default file stripe count set on each point's directory (C(lfs setstripe -c)); -1 every OST.
    type: int
  mdt_count:
    description: Make each point's directory striped over this many MDTs (C(lfs mkdir -c)); -1 every MDT.
    type: int
  mdt_index:
    description: The MDT index of each point's directory (C(lfs mkdir -i)), or the first of its stripes.
    type: int
  drop_caches:
    description: Run each phase alone and drop the client caches on every node of the point before each phase after create.
    type: bool
    default: false
  drop_caches_command:
    description:
      - The command, run once per node through O(launcher), that drops the caches. The default clears the Lustre client's
        lock LRU, which drops its cached inodes, attributes and pages.
    type: list
    elements: str
    default: [lctl, set_param, -n, ldlm.namespaces.*.lru_size=clear]
  mdtest_path:
    description: mdtest; a name is looked up in C(PATH) on the launcher and the path found is used on every node.
    type: str
    default: mdtest
notes:
  - mdtest's own output of every invocation is kept in RV(raw_output), each preceded by the command line.
  - O(sweep_min_gain_pct) applies to rates averaged over O(repetitions); with O(repetitions=1) no spread is known
    and a single noisy point can stop a step - keep 2 or more repetitions for an adaptive sweep.
  - The directories below mdtest's C(test-dir) follow the file system's default directory layout (C(lfs
    setdirstripe -D)); O(mdt_count) stripes each point's directory itself.
seealso:
  - name: mdtest (hpc/ior)
    description: The benchmark this module runs.
    link: https://github.com/hpc/ior
'''

EXAMPLES = r'''
- name: Sweep 1-8 tasks on one client, then 1, 2, 4 clients at the best count
  lustre.iokit.mdtest:
    mount_point: /mnt/testfs
    hosts: [client1, client2, client3, client4]
    items: 2000
    repetitions: 3
    stride: 1
    timeout: 3600
    run_id: "{{ iokit_run_id }}"
  async: 3900
  poll: 0
  register: mdtest_job

- name: Through Slurm with environment modules, inside the allocation the play runs in (or one srun makes)
  lustre.iokit.mdtest:
    mount_point: /mnt/testfs
    hosts: [client1, client2]
    launcher: srun
    partition: batch
    account: proj1
    environment_modules: [gcc, openmpi, mdtest]

- name: Each launch in an allocation of its own (salloc) of the debug partition
  lustre.iokit.mdtest:
    mount_point: /mnt/testfs
    hosts: [client1, client2]
    launcher: srun
    slurm_allocation: salloc
    partition: debug

- name: Files only, 4 KiB written and read back, a directory per point striped over every MDT
  lustre.iokit.mdtest:
    mount_point: /mnt/testfs
    directory: scratch
    files_only: true
    write_bytes: 4096
    read_bytes: 4096
    mdt_count: -1
    drop_caches: true
    allow_run_as_root: true

- name: Stop each step once the file creation rate gains less than 5 %, two points in a row
  lustre.iokit.mdtest:
    mount_point: /mnt/testfs
    hosts: [client1, client2, client3, client4]
    tasks_per_node: [1, 2, 4, 8, 16, 32]
    sweep: adaptive
    sweep_min_gain_pct: 5
    sweep_patience: 2

- name: Show the plan only
  lustre.iokit.mdtest:
    mount_point: /mnt/testfs
    hosts: [client1, client2]
  check_mode: true
  register: mdtest_plan
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
  description: Short host name of the launcher.
  returned: always
  type: str
survey:
  description: Always V(mdtest).
  returned: always
  type: str
engine:
  description: Always V(native).
  returned: always
  type: str
status:
  description:
    - V(ok) every point measured; V(partial) some measured, then an error, a timeout or a signal; V(failed) nothing
      measured (the module then fails, still returning the envelope); V(skipped) in check mode.
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
    - One record per measured point, in sweep order - the object C(parse_mdtest) returns (C(version), C(iterations),
      C(summary) with C(max), C(min), C(mean), C(stddev) per operation, C(unit) ops/sec, C(summary_time) where
      printed) with C(tasks) and C(nodes) set to the sweep point.
    - Added by this module - C(step) (V(tasks_per_node) or V(nodes)), C(tasks_per_node), C(hosts), C(directory),
      C(caches_dropped), C(best_tasks_per_node) (true on the point that chose the second step's tasks per node),
      C(mdtest_tasks) and C(mdtest_nodes) (what mdtest itself printed).
  returned: when something was measured
  type: list
  elements: dict
errors:
  description: Errors, each with the C(point) (C(nodes), C(tasks_per_node)) it belongs to, or null, and a C(message).
  returned: always
  type: list
  elements: dict
environment:
  description:
    - Facts at run time - C(lustre_version), C(kernel), C(fsname), C(mount_fstype), C(launcher), C(mdtest), and
      C(slurm_allocation) (the C(salloc) or C(sbatch) used) when O(slurm_allocation) makes the allocations.
  returned: always
  type: dict
raw_output:
  description: Path on the launcher of mdtest's output of every invocation.
  returned: always
  type: str
plan:
  description:
    - C(mount_point), C(fsname), C(tree), C(marker), C(hosts), C(launcher), C(slurm_allocation), C(environment_modules), C(points)
      (each with C(step), C(nodes), C(tasks_per_node) and C(tasks), null for the second step until the first has
      chosen, and C(hosts)), C(best_by), C(mdtest_invocations_per_point), C(first_command) (the first point's
      whole command, the launcher's or the module shell's argument list),
      C(layout), C(estimated_duration_s) (null unless a stored run gives a rate), C(estimate) and C(sweep).
    - C(lines), in check mode - the plan in a few lines, as the survey playbooks show it.
    - C(sweep) has C(mode), C(min_gain_pct), C(patience) and C(points_full), the points of the full sweep (the
      nodes step's one-node point is not counted, it is not run again); with O(sweep=adaptive) also
      C(points_most) (the worst case, the full sweep again - a curve that keeps gaining never stops) and
      C(points_fewest) (both steps flat from their first doubling). C(estimate.adaptive) gives their durations
      when the estimate has a rate.
  returned: always
  type: dict
sweep:
  description:
    - How the sweep went. C(mode), C(min_gain_pct), C(patience), C(axis) (V(tasks_per_node)), C(points_run) and
      C(points_full) (both steps together) and C(stops), each with its C(axis) (V(tasks_per_node) or V(nodes)),
      the step's other coordinate, the point it stopped after and the C(reason). A full sweep never stops.
  returned: when the sweep ran
  type: dict
skipped_points:
  description:
    - "Every point an adaptive sweep did not run: C(point) (C(step), C(nodes), C(tasks_per_node)) and C(reason),
      such as C(saturated at tasks_per_node 8: +1.2 % < 3 %). Empty for a full sweep."
  returned: when the sweep ran
  type: list
  elements: dict
withdrawn_points:
  description:
    - "A resumed run whose best tasks per node changed (a tasks-per-node point an earlier attempt did not finish
      is measured now and wins): the nodes-step points an earlier attempt measured at the former best, taken out
      of RV(records) because the nodes step is measured again at the new best, so that the records are one sweep,
      every point once. Each has C(point) (C(step), C(nodes), C(tasks_per_node)), C(attempt) (the attempt that
      measured it) and C(reason), such as C(measured at 4 tasks per node, the best of the tasks-per-node step when
      attempt 1 ran; the best is now 2 tasks per node (measured by attempt 2, file creation 1900.0 ops/s), so the
      nodes step is measured again at 2). The run's points file on the launcher keeps their records."
  returned: when a resumed run withdrew points
  type: list
  elements: dict
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.lustre.iokit.plugins.module_utils import payload
from ansible_collections.lustre.iokit.plugins.module_utils import adaptive, client_launch
from ansible_collections.lustre.iokit.plugins.module_utils.engines import mdtest
from ansible_collections.lustre.iokit.plugins.module_utils.runner import ProcessRecordingRunner, Runner
from ansible_collections.lustre.iokit.plugins.module_utils.survey_args import survey_common_argument_spec

# the options that shape what mdtest measures (the envelope's parameters)
SWEEP_OPTIONS = ('items', 'items_per_dir', 'depth', 'branching', 'unique_dir_per_task', 'files_only', 'dirs_only',
                 'leaf_only', 'write_bytes', 'read_bytes', 'phases', 'stride', 'repetitions', 'stonewall_s',
                 'tasks_per_node', 'nodes', 'best_by', 'stripe_count', 'mdt_count', 'mdt_index', 'drop_caches',
                 'drop_caches_command', 'sweep', 'sweep_min_gain_pct', 'sweep_patience')
ENGINE_OPTIONS = SWEEP_OPTIONS + client_launch.LAUNCH_PARAMETERS
PARAMETER_NAMES = ('mount_point', 'directory', 'hosts') + ENGINE_OPTIONS + ('engine', 'timeout')


def argument_spec():
    spec = survey_common_argument_spec(engines=('native',))
    spec.update(client_launch.launch_argument_spec())
    spec.update(adaptive.adaptive_sweep_argument_spec())
    spec.update(
        tasks_per_node=dict(type='list', elements='int', default=list(mdtest.DEFAULT_TASKS_PER_NODE)),
        nodes=dict(type='list', elements='int'),
        best_by=dict(type='str', default=mdtest.DEFAULT_BEST_BY, choices=list(mdtest.OPERATIONS)),
        items=dict(type='int'),
        items_per_dir=dict(type='int'),
        depth=dict(type='int', default=0),
        branching=dict(type='int', default=1),
        unique_dir_per_task=dict(type='bool', default=True),
        files_only=dict(type='bool', default=False),
        dirs_only=dict(type='bool', default=False),
        leaf_only=dict(type='bool', default=False),
        write_bytes=dict(type='int', default=0),
        read_bytes=dict(type='int', default=0),
        phases=dict(type='list', elements='str', choices=list(mdtest.PHASES), default=list(mdtest.PHASES)),
        stride=dict(type='int', default=0),
        repetitions=dict(type='int', default=mdtest.DEFAULTS['repetitions'], aliases=['iterations'],
                         deprecated_aliases=[dict(name='iterations', version='0.3.0', collection_name='lustre.iokit')]),
        stonewall_s=dict(type='int', default=0),
        stripe_count=dict(type='int'),
        mdt_count=dict(type='int'),
        mdt_index=dict(type='int'),
        drop_caches=dict(type='bool', default=False),
        drop_caches_command=dict(type='list', elements='str', default=list(mdtest.DEFAULT_DROP_CACHES_COMMAND)),
        mdtest_path=dict(type='str', default='mdtest'),
    )
    return spec


def option_problems(params):
    """Invalid option values that need no look at the node, each an OptionProblem."""
    problems = mdtest.option_problems(client_launch.engine_options(params, ENGINE_OPTIONS), len(params['hosts']))
    return client_launch.module_option_problems(params, problems)


def plan_lines(params, plan):
    """The plan in a few lines for people (check mode); an adaptive sweep's points range from the full grid, when
    every step keeps gaining, to its fewest, when both steps are flat from their first doubling."""
    sweep = plan['sweep']
    if sweep['mode'] == 'adaptive':
        points = ('%s points in the worst case (the full sweep, when every step keeps gaining), as few as %s when both'
                  ' steps are flat from their first doubling' % (sweep['points_full'], sweep['points_fewest']))
    else:
        points = '%s points' % sweep['points_full']
    return ['tree: %s; hosts: %s; launcher: %s' % (plan['tree'], ', '.join(plan['hosts']), plan['launcher']),
            'points (nodes x tasks per node): %s' % ', '.join(
                '%sx%s' % (point['nodes'], point['tasks_per_node'] or 'best') for point in plan['points']),
            'first command: %s' % ' '.join(plan['first_command']),
            '%s sweep: %s' % (sweep['mode'], points)]


def main():
    # First: a module killed later still leaves a payload directory the cleanup knows is stale.
    payload.claim()
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    client_launch.run_module(module, option_problems(module.params), mdtest.MdtestSurvey, 'mdtest_path', PARAMETER_NAMES,
                             ENGINE_OPTIONS, Runner, ProcessRecordingRunner, plan_lines)


if __name__ == '__main__':
    main()
