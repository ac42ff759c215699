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
      - V(srun) runs C(srun -N N -n N*P --ntasks-per-node P), in the Slurm allocation that O(slurm_allocation)
        says.
    type: str
    choices: [mpirun, srun]
    default: mpirun
  slurm_allocation:
    description:
      - Where the srun of O(launcher=srun) runs.
      - V(existing) - in the allocation the module already runs in (an C(salloc) shell or an C(sbatch) job), or,
        outside one, in the one srun makes itself (with O(partition) and O(account) on the srun).
      - V(salloc) - every launch gets an allocation of its own, C(salloc -N N --ntasks-per-node P -J NAME) with
        O(partition) and O(account), which runs the srun (in O(module_shell) with C(module load) when
        O(environment_modules) are set) on this host and is relinquished when it ends.
      - V(sbatch) - every launch is a batch job, C(sbatch --wait --parsable -N N --ntasks-per-node P -J NAME -o
        OUTPUT) with O(partition) and O(account), whose script runs the same command; sbatch returns when the job
        has ended, with its exit code. The output file is C(<tree>/NAME.out) in the test tree on the Lustre mount
        (the batch host of the job writes it, the launcher reads it), read as the program's output and removed; the
        script stays on this host, under O(workdir).
      - N is the point's node count, P its tasks per node; the job name C(lustre-iokit-<survey>-<run_id>-<n>) is
        unique to the run. Each job is written to the node state before it is submitted. A launch stopped by the
        timeout or a SIGTERM cancels its job (C(scancel) with the job id sbatch or salloc printed, else by the job
        name and user); after a SIGKILL, M(lustre.iokit.iokit_cleanup) cancels it and removes its output file and
        script.
      - V(salloc) and V(sbatch) need O(launcher=srun).
    type: str
    choices: [existing, salloc, sbatch]
    default: existing
  partition:
    description:
      - Slurm partition (C(-p)), on the srun, or on the C(salloc) or C(sbatch) that makes the allocation;
        O(launcher=srun) only.
    type: str
  account:
    description:
      - Slurm account (C(-A)), on the srun, or on the C(salloc) or C(sbatch) that makes the allocation;
        O(launcher=srun) only.
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
  salloc:
    description: The C(salloc) of O(slurm_allocation=salloc); a name is looked up in C(PATH), before any module is loaded.
    type: str
    default: salloc
  sbatch:
    description: The C(sbatch) of O(slurm_allocation=sbatch); a name is looked up in C(PATH), before any module is loaded.
    type: str
    default: sbatch
  scancel:
    description:
      - The C(scancel) that cancels the job of a stopped launch (O(slurm_allocation=salloc) or V(sbatch)); a name is
        looked up in C(PATH).
    type: str
    default: scancel
  launcher_extra_args:
    description:
      - Arguments added to the launcher before the program, such as C(--mca btl ^openib) or C(--oversubscribe) for
        C(mpirun), C(--mpi=pmix) for C(srun) (to the srun also inside an allocation made by C(salloc) or C(sbatch)).
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
