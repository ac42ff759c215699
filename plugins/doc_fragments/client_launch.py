# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# The options of the surveys launched from one client over the clients (ior, mdtest); paired with
# plugins/module_utils/client_launch.py (launch_argument_spec).

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r'''
options:
  mount_point:
    description: The Lustre client mount, the same path on every node in O(hosts).
    type: path
    required: true
  directory:
    description:
      - An existing directory below O(mount_point), relative to it, in which the test tree is made. Default the
        mount's root.
    type: str
  hosts:
    description:
      - The client nodes' names as the launcher reaches them, in order; a point of N nodes uses the first N. The
        module runs on one of them, the launcher.
    type: list
    elements: str
    default: [localhost]
  launcher:
    description:
      - How the tasks are started. V(mpirun) gets a hostfile of the point's first N O(hosts) with C(slots=P) and
        C(-np N*P), so that by-slot placement puts P tasks on each node (Open MPI 4 command line).
      - V(srun) runs C(srun -N N -n N*P --ntasks-per-node P) (with O(partition) and O(account)), inside the Slurm
        allocation the module runs in, or in one srun makes.
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
    description:
      - Modules loaded with C(module load) (Lmod or Environment Modules) in the shell that starts the launcher,
        such as V([gcc, openmpi, ior]). With modules set, a program not found before the C(module load) is left
        to that shell to find.
    type: list
    elements: str
    default: []
  module_shell:
    description:
      - The shell, with its options, that runs C(module load) and then the launcher; a login shell, where C(module)
        is defined. Used only with O(environment_modules).
    type: list
    elements: str
    default: [/bin/bash, -l, -c]
  mpirun:
    description: The C(mpirun) to use; a name is looked up in C(PATH).
    type: str
    default: mpirun
  srun:
    description: The C(srun) to use; a name is looked up in C(PATH).
    type: str
    default: srun
  launcher_extra_args:
    description:
      - Arguments added to the launcher before the program, such as C(--mca btl ^openib) or C(--oversubscribe) for
        C(mpirun), C(--mpi=pmix) for C(srun).
    type: list
    elements: str
    default: []
  allow_run_as_root:
    description:
      - Pass C(--allow-run-as-root) to C(mpirun). Open MPI refuses to run as root without it; the module fails early
        when it runs as root with O(launcher=mpirun) and this is not set.
    type: bool
    default: false
'''
