#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: ior
short_description: Measure client bandwidth through the Lustre client with IOR under MPI or Slurm, as a sweep
version_added: 1.0.0
description:
  - Launches IOR from this client (the launcher) over the client nodes named in O(hosts) and returns the result
    envelope C(lustre.iokit/result/v1) with one record per sweep point, each holding the run as the
    C(parse_ior) filter returns it and the point's C(ior_write_mib_s) and C(ior_read_mib_s).
  - The sweep is every combination of O(access) (V(fpp) file per process, V(ssf) single shared file), O(nodes),
    O(tasks_per_node) and O(transfer_sizes_kib), in that nesting order.
  - Every point writes then reads (C(-w -r)) with C(-C), so each task reads what a task on the next node wrote
    and no client reads its own page cache (a one-node point cannot avoid it; its record says
    C(read_from_own_cache)), and C(-e), so the write time includes the fsync to the servers; C(-i) O(repetitions);
    with O(stonewall_s) also C(-D) and C(stoneWallingWearOut=1).
  - "The cache rule: with O(memory_factor) F above 0 each point moves at least F times the memory of the clients it
    uses (tasks x block x segments >= F x nodes x O(client_memory_mib)); IOR's segment count C(-s) is raised to the
    smallest that meets it, the block per task O(block_size_mib) stays. F = 0 turns the rule off for small tests."
  - The tasks are started by O(launcher) (C(mpirun) with a hostfile, or Slurm's C(srun)); with
    O(environment_modules) the launch runs in a login shell that first does C(module load ...). With
    O(slurm_allocation=salloc) or V(sbatch) every point's srun runs in a Slurm job of its own, C(salloc) or
    C(sbatch --wait), for the point's nodes and tasks per node; a stopped run cancels its job.
  - The test tree is C(<mount_point>/<directory>/ior_<run_id>), one directory per point, striped with
    C(lfs setstripe -c/-S) when O(stripe_count) or O(stripe_size_kib) is set. It carries the marker file
    C(.lustre-iokit-ior), is written to the node state before it is created, and is removed at the end, after a
    failure, a timeout or a SIGTERM too; M(lustre.iokit.iokit_cleanup) removes a tree a killed run left, only
    while the marker names the recorded run.
author:
  - lustre.iokit contributors (@lustre)
requirements:
  - A mounted Lustre client with C(lfs); C(ior) from hpc/ior (3.x or 4.x) on every node in O(hosts), the same path
    on each; C(mpirun) (Open MPI 4 command line) or Slurm's C(srun) (with C(salloc) or C(sbatch), and
    C(scancel), for O(slurm_allocation=salloc) or V(sbatch)).
extends_documentation_fragment:
  - lustre.iokit.attributes
  - lustre.iokit.survey_common
  - lustre.iokit.client_launch
  - lustre.iokit.resume
options:
  engine:
    description:
      - Only V(native) - the I/O kit's C(ior-survey) cannot drive an MPI run across clients.
    choices: [native]
  access:
    description: The access patterns to sweep.
    type: list
    elements: str
    choices: [fpp, ssf]
    default: [fpp, ssf]
  block_size_mib:
    description: Block per task (IOR C(-b)) in MiB; a multiple of every transfer size.
    type: int
    default: 1024
  transfer_sizes_kib:
    description: Transfer sizes (IOR C(-t)) in KiB to sweep, increasing.
    type: list
    elements: int
    default: [1024]
  tasks_per_node:
    description: Tasks per node to sweep, increasing.
    type: list
    elements: int
    default: [1]
  nodes:
    description: Node counts to sweep, increasing; default 1, 2, 4, ... up to the number of O(hosts).
    type: list
    elements: int
  repetitions:
    description:
      - How many times IOR repeats each point (IOR's C(-i)); the figures are the mean over the repetitions.
      - The alias O(iterations) is deprecated and will be removed in version 0.3.0 of lustre.iokit; in a survey
        role, C(<survey>_iterations) runs the whole survey that many times.
    type: int
    default: 1
    aliases: [iterations]
  memory_factor:
    description: The cache rule's factor; 0 turns the rule off.
    type: float
    default: 2.0
  client_memory_mib:
    description: Memory of one client in MiB, for the cache rule (the role passes the smallest client's).
    type: int
  stonewall_s:
    description: Stonewalling deadline in seconds (C(-D) with wear-out); 0 off.
    type: int
    default: 0
  stripe_count:
    description: Stripe count of each point's directory (C(lfs setstripe -c)); -1 every OST.
    type: int
  stripe_size_kib:
    description: Stripe size of each point's directory in KiB (C(lfs setstripe -S)), a multiple of 64.
    type: int
  per_task_timings:
    description:
      - Run IOR at verbosity 3 (C(-v -v -v)) so every task prints the stamps of its phases, and give each record
        C(per_client), the write and read rate of each client node, for the report's findings on a weak client.
      - The I/O is untouched (IOR prints the stamps after the timed phase); the output grows by six lines per task,
        phase and iteration, and IOR's rank 0 also prints its environment into the launch's output file.
      - Which node ran a task follows from the launch's placement, in blocks of O(tasks_per_node) ranks per node in
        host order (C(mpirun) with C(slots=P) hostfile lines, C(srun --ntasks-per-node P) with Slurm's default
        block distribution).
    type: bool
    default: true
  ior_path:
    description: The C(ior) program, the same on every node.
    type: str
    default: ior
'''

EXAMPLES = r'''
- name: Client bandwidth, both access patterns, 1 to 4 nodes, through Slurm with environment modules
  lustre.iokit.ior:
    mount_point: /mnt/lustre
    directory: scratch
    hosts: [client1, client2, client3, client4]
    tasks_per_node: [8, 16]
    transfer_sizes_kib: [1024, 4096]
    client_memory_mib: 262144
    launcher: srun
    partition: batch
    environment_modules: [gcc, openmpi, ior]
  register: ior_result

- name: Each point as a batch job of its own (sbatch --wait) in the batch partition, charged to proj1
  lustre.iokit.ior:
    mount_point: /mnt/lustre
    hosts: [client1, client2]
    launcher: srun
    slurm_allocation: sbatch
    partition: batch
    account: proj1
    environment_modules: [gcc, openmpi, ior]

- name: Show the plan only
  lustre.iokit.ior:
    mount_point: /mnt/lustre
    hosts: [client1, client2]
    memory_factor: 0
  check_mode: true
  register: ior_plan
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
  description: Always V(ior).
  returned: always
  type: str
engine:
  description: Always V(native).
  returned: always
  type: str
status:
  description: V(ok), V(partial), V(failed) (nothing measured; the module fails) or V(skipped) in check mode.
  returned: always
  type: str
parameters:
  description: The survey's options.
  returned: always
  type: dict
envelope:
  description: The complete result envelope C(lustre.iokit/result/v1), ready to store.
  returned: always
  type: dict
duration_s:
  description: Seconds the module ran.
  returned: always
  type: float
records:
  description:
    - One record per measured point, in sweep order - C(access) (V(fpp) or V(ssf)), C(nodes), C(tasks_per_node),
      C(tasks), C(transfer_kib), C(segments), C(bytes_per_phase), C(hosts), C(directory),
      C(read_from_own_cache), C(ior_write_mib_s) and C(ior_read_mib_s) (the mean aggregate bandwidth over the
      iterations, MiB/s), C(ior_write_max_mib_s), C(ior_read_max_mib_s), and C(ior) (the run as
      C(parse_ior) returns it, without its C(task_timings)).
    - With O(per_task_timings), also C(per_client) - one entry per client node of the point in host order, with
      C(host), C(node) (its index), C(tasks) (the ranks placed on it), C(ior_write_mib_s) and C(ior_read_mib_s)
      (the bytes its tasks moved over the span from their earliest open start to their latest close stop, mean
      over the iterations, MiB/s; null when a stamp is missing), or null when IOR printed no per-task lines - and
      C(placement), the rule that mapped ranks to nodes.
  returned: when something was measured
  type: list
  elements: dict
errors:
  description: Errors, each with the C(point) it belongs to (its directory name) or null, and a C(message).
  returned: always
  type: list
  elements: dict
environment:
  description:
    - Facts at run time - C(lustre_version), C(kernel), C(fsname), C(mount_fstype), C(launcher), C(ior), and
      C(slurm_allocation) (the C(salloc) or C(sbatch) used) when O(slurm_allocation) makes the allocations.
  returned: always
  type: dict
raw_output:
  description: Path on the launcher of IOR's output of every invocation.
  returned: always
  type: str
plan:
  description:
    - C(mount_point), C(fsname), C(tree), C(marker), C(hosts), C(launcher), C(slurm_allocation), C(environment_modules), C(points) (each
      with its C(segments) and C(bytes_per_phase)), C(bytes_written) and C(bytes_read) over the whole sweep,
      C(cache_rule), C(first_command) and C(layout).
    - C(lines), in check mode - the plan in a few lines, as the survey playbooks show it.
  returned: always
  type: dict
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.lustre.iokit.plugins.module_utils import payload
from ansible_collections.lustre.iokit.plugins.module_utils import client_launch
from ansible_collections.lustre.iokit.plugins.module_utils.engines import ior
from ansible_collections.lustre.iokit.plugins.module_utils.runner import ProcessRecordingRunner, Runner
from ansible_collections.lustre.iokit.plugins.module_utils.survey_args import survey_common_argument_spec

SWEEP_OPTIONS = ('access', 'block_size_mib', 'transfer_sizes_kib', 'tasks_per_node', 'nodes', 'repetitions',
                 'memory_factor', 'client_memory_mib', 'stonewall_s', 'stripe_count', 'stripe_size_kib',
                 'per_task_timings')
ENGINE_OPTIONS = SWEEP_OPTIONS + client_launch.LAUNCH_PARAMETERS
PARAMETER_NAMES = ('mount_point', 'directory', 'hosts') + ENGINE_OPTIONS + ('engine', 'timeout')


def argument_spec():
    spec = survey_common_argument_spec(engines=('native',))
    spec.update(client_launch.launch_argument_spec())
    spec.update(
        access=dict(type='list', elements='str', choices=list(ior.ACCESS), default=list(ior.ACCESS)),
        block_size_mib=dict(type='int', default=ior.DEFAULTS['block_size_mib']),
        transfer_sizes_kib=dict(type='list', elements='int', default=list(ior.DEFAULTS['transfer_sizes_kib'])),
        tasks_per_node=dict(type='list', elements='int', default=list(ior.DEFAULTS['tasks_per_node'])),
        nodes=dict(type='list', elements='int'),
        repetitions=dict(type='int', default=ior.DEFAULTS['repetitions'], aliases=['iterations'],
                         deprecated_aliases=[dict(name='iterations', version='0.3.0', collection_name='lustre.iokit')]),
        memory_factor=dict(type='float', default=ior.DEFAULTS['memory_factor']),
        client_memory_mib=dict(type='int'),
        stonewall_s=dict(type='int', default=0),
        stripe_count=dict(type='int'),
        stripe_size_kib=dict(type='int'),
        per_task_timings=dict(type='bool', default=ior.DEFAULTS['per_task_timings']),
        ior_path=dict(type='str', default='ior'),
    )
    return spec


def option_problems(params):
    """Invalid option values that need no look at the node, each an OptionProblem."""
    problems = ior.option_problems(client_launch.engine_options(params, ENGINE_OPTIONS), len(params['hosts']))
    return client_launch.module_option_problems(params, problems)


def plan_lines(params, plan):
    """The plan in a few lines for people (check mode)."""
    return ['%d points; %s GiB written and read' % (len(plan['points']), round(plan['bytes_written'] / 1073741824.0, 2)),
            'tree: %s; hosts: %s; launcher: %s' % (plan['tree'], ', '.join(plan['hosts']), plan['launcher']),
            'first command: %s' % ' '.join(plan['first_command'])]


def main():
    # First: a module killed later still leaves a payload directory the cleanup knows is stale.
    payload.claim()
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    client_launch.run_module(module, option_problems(module.params), ior.IorSurvey, 'ior_path', PARAMETER_NAMES,
                             ENGINE_OPTIONS, Runner, ProcessRecordingRunner, plan_lines)


if __name__ == '__main__':
    main()
