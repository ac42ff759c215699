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
    C(read_from_own_cache)), and C(-e), so the write time includes the fsync to the servers; C(-i) O(iterations);
    with O(stonewall_s) also C(-D) and C(stoneWallingWearOut=1).
  - "The cache rule: with O(memory_factor) F above 0 each point moves at least F times the memory of the clients it
    uses (tasks x block x segments >= F x nodes x O(client_memory_mib)); IOR's segment count C(-s) is raised to the
    smallest that meets it, the block per task O(block_size_mib) stays. F = 0 turns the rule off for small tests."
  - O(launcher=mpirun) gets a hostfile of the first N O(hosts) with C(slots=P) and C(-np N*P);
    O(launcher=srun) runs C(srun -N N -n N*P --ntasks-per-node P) (with O(partition) and O(account)), inside the
    allocation it runs in or in one it makes. With O(environment_modules) the launch runs in a login shell that
    first does C(module load ...).
  - The test tree is C(<mount_point>/<directory>/ior_<run_id>), one directory per point, striped with
    C(lfs setstripe -c/-S) when O(stripe_count) or O(stripe_size_kib) is set. It carries the marker file
    C(.lustre-iokit-ior), is written to the node state before it is created, and is removed at the end, after a
    failure, a timeout or a SIGTERM too; M(lustre.iokit.iokit_cleanup) removes a tree a killed run left, only
    while the marker names the recorded run.
author:
  - lustre.iokit contributors (@lustre)
requirements:
  - A mounted Lustre client with C(lfs); C(ior) from hpc/ior (3.x or 4.x) on every node in O(hosts), the same path
    on each; C(mpirun) (Open MPI 4 command line) or Slurm's C(srun).
extends_documentation_fragment:
  - lustre.iokit.attributes
  - lustre.iokit.survey_common
options:
  mount_point:
    description: The Lustre client mount, the same path on every node in O(hosts).
    type: path
    required: true
  directory:
    description: An existing directory below O(mount_point), relative to it, in which the test tree is made.
    type: str
  hosts:
    description: The client nodes' names as the launcher reaches them, in order; a point of N nodes uses the first N.
    type: list
    elements: str
    default: [localhost]
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
  iterations:
    description: IOR's C(-i).
    type: int
    default: 1
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
  launcher:
    description: How the tasks are started.
    type: str
    choices: [mpirun, srun]
    default: mpirun
  partition:
    description: Slurm partition (C(srun -p)); O(launcher=srun) only.
    type: str
  account:
    description: Slurm account (C(srun -A)); O(launcher=srun) only.
    type: str
  environment_modules:
    description: Modules loaded (C(module load)) in the shell that starts the launcher.
    type: list
    elements: str
    default: []
  module_shell:
    description: The shell, with its options, that runs C(module load) and the launcher.
    type: list
    elements: str
    default: [/bin/bash, -l, -c]
  mpirun:
    description: The C(mpirun) to use.
    type: str
    default: mpirun
  srun:
    description: The C(srun) to use.
    type: str
    default: srun
  ior_path:
    description: The C(ior) program, the same on every node.
    type: str
    default: ior
  launcher_extra_args:
    description: Extra launcher arguments, placed before the program.
    type: list
    elements: str
    default: []
  allow_run_as_root:
    description: Pass C(--allow-run-as-root) to C(mpirun); needed when the module runs as root with mpirun.
    type: bool
    default: false
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
      C(parse_ior) returns it).
  returned: when something was measured
  type: list
  elements: dict
errors:
  description: Errors, each with the C(point) it belongs to (its directory name) or null, and a C(message).
  returned: always
  type: list
  elements: dict
environment:
  description: Facts at run time - C(lustre_version), C(kernel), C(fsname), C(mount_fstype), C(launcher), C(ior).
  returned: always
  type: dict
raw_output:
  description: Path on the launcher of IOR's output of every invocation.
  returned: always
  type: str
plan:
  description:
    - C(mount_point), C(fsname), C(tree), C(marker), C(hosts), C(launcher), C(environment_modules), C(points) (each
      with its C(segments) and C(bytes_per_phase)), C(bytes_written) and C(bytes_read) over the whole sweep,
      C(cache_rule), C(first_command) and C(layout).
  returned: always
  type: dict
'''

import os
import socket

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.lustre.iokit.plugins.module_utils.engines import ior
from ansible_collections.lustre.iokit.plugins.module_utils.runner import ProcessRecordingRunner, Runner
from ansible_collections.lustre.iokit.plugins.module_utils.survey_args import common_option_problems, survey_common_argument_spec
from ansible_collections.lustre.iokit.plugins.module_utils import survey_module

SURVEY = 'ior'
SWEEP_OPTIONS = ('access', 'block_size_mib', 'transfer_sizes_kib', 'tasks_per_node', 'nodes', 'iterations',
                 'memory_factor', 'client_memory_mib', 'stonewall_s', 'stripe_count', 'stripe_size_kib', 'launcher',
                 'partition', 'account', 'environment_modules')
PARAMETER_NAMES = ('mount_point', 'directory', 'hosts') + SWEEP_OPTIONS + ('engine', 'timeout')


def argument_spec():
    spec = survey_common_argument_spec()
    spec.update(
        mount_point=dict(type='path', required=True),
        directory=dict(type='str'),
        hosts=dict(type='list', elements='str', default=['localhost']),
        access=dict(type='list', elements='str', choices=list(ior.ACCESS), default=list(ior.ACCESS)),
        block_size_mib=dict(type='int', default=ior.DEFAULTS['block_size_mib']),
        transfer_sizes_kib=dict(type='list', elements='int', default=list(ior.DEFAULTS['transfer_sizes_kib'])),
        tasks_per_node=dict(type='list', elements='int', default=list(ior.DEFAULTS['tasks_per_node'])),
        nodes=dict(type='list', elements='int'),
        iterations=dict(type='int', default=ior.DEFAULTS['iterations']),
        memory_factor=dict(type='float', default=ior.DEFAULTS['memory_factor']),
        client_memory_mib=dict(type='int'),
        stonewall_s=dict(type='int', default=0),
        stripe_count=dict(type='int'),
        stripe_size_kib=dict(type='int'),
        launcher=dict(type='str', choices=list(ior.LAUNCHERS), default='mpirun'),
        partition=dict(type='str'),
        account=dict(type='str'),
        environment_modules=dict(type='list', elements='str', default=[]),
        module_shell=dict(type='list', elements='str', default=list(ior.DEFAULT_SHELL)),
        mpirun=dict(type='str', default='mpirun'),
        srun=dict(type='str', default='srun'),
        ior_path=dict(type='str', default='ior'),
        launcher_extra_args=dict(type='list', elements='str', default=[]),
        allow_run_as_root=dict(type='bool', default=False),
    )
    return spec


def engine_options(params):
    return dict((name, params[name]) for name in SWEEP_OPTIONS)


def option_problems(params, euid=None):
    """Invalid option values that need no look at the node, each message naming the option."""
    problems = []
    if params['engine'] == 'iokit':
        problems.append('engine: the I/O kit\'s ior-survey cannot drive an MPI run across clients; use engine=native')
    problems.extend(ior.option_problems(engine_options(params), len(params['hosts'])))
    directory = params['directory']
    if directory and (os.path.isabs(directory) or '..' in directory.split('/')):
        problems.append('directory: give a path relative to mount_point without "..", got %s' % directory)
    euid = os.geteuid() if euid is None else euid
    if euid == 0 and params['launcher'] == 'mpirun' and not params['allow_run_as_root']:
        problems.append('allow_run_as_root: the module runs as root and Open MPI refuses root without '
                        '--allow-run-as-root; set allow_run_as_root=true or run as another user')
    problems.extend(common_option_problems(params))
    return problems


def resolve(module, name, option, required=True):
    """The program's path; a program found only after ``module load`` is left to the shell when modules are set."""
    if os.sep in name:
        if not os.access(name, os.X_OK):
            module.fail_json(msg='%s: %s is not an executable file' % (option, name))
        return name
    path = module.get_bin_path(name)
    if path is None:
        if not required:
            return name
        module.fail_json(msg='%s: %s is not in PATH on %s' % (option, name, socket.gethostname()))
    return path


def run_survey(survey, builder, raw_path):
    try:
        survey.setup()
        survey.run()
    except (ior.EngineError, OSError) as exc:
        builder.add_error(str(exc))
    finally:
        for problem in survey.teardown():
            builder.add_error('cleanup: %s' % problem)
        if survey.raw_chunks:
            with open(raw_path, 'w') as handle:
                handle.write(survey.raw_text())
    for record in survey.records:
        builder.add_record(record)
    survey_module.add_survey_outcome(builder, survey)
    return bool(survey.records)


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    params = module.params
    survey_module.fail_on_problems(module, option_problems(params))
    # With environment modules the tools may exist only after "module load": the shell finds them then.
    required = not params['environment_modules']
    launcher = resolve(module, params[params['launcher']], params['launcher'], required)
    ior_program = resolve(module, params['ior_path'], 'ior_path', required)
    start = survey_module.start_survey(module, SURVEY, PARAMETER_NAMES, Runner, ProcessRecordingRunner)
    builder = start.builder

    survey = ior.IorSurvey(start.runner, start.control_runner, start.node_state, start.run_id,
                           params['mount_point'], params['hosts'], engine_options(params),
                           parent=params['directory'], workdir=params['workdir'],
                           mpirun=launcher if params['launcher'] == 'mpirun' else params['mpirun'],
                           srun=launcher if params['launcher'] == 'srun' else params['srun'],
                           ior=ior_program, allow_run_as_root=params['allow_run_as_root'],
                           launcher_extra_args=params['launcher_extra_args'], shell=params['module_shell'])
    try:
        survey.inspect()
    except ior.EngineError as exc:
        module.fail_json(msg=str(exc))
    builder.set_environment(lustre_version=start.lctl.version(), kernel=os.uname()[2], fsname=survey.fsname,
                            mount_fstype=survey.fstype, launcher=launcher, ior=ior_program)
    plan = survey.plan()
    if module.check_mode:
        survey_module.exit_with_envelope(module, builder, 'ior', True, plan=plan)

    raw_path = os.path.join(start.make_run_dir(), 'ior.out')
    changed = run_survey(survey, builder, raw_path)
    builder.set_raw_output(raw_path if os.path.exists(raw_path) else None)
    survey_module.exit_with_envelope(module, builder, 'ior', changed, plan=plan)


if __name__ == '__main__':
    main()
