# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The command lines of the client-launch layer (client_launch.py): mpirun with a hostfile, srun, salloc and
sbatch --wait around it, scancel, and the shell that loads environment modules first; Slurm's job ids as it
prints them.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import pwd
import re

try:
    from shlex import quote as shell_quote
except ImportError:  # pragma: no cover - Python 2 only
    from pipes import quote as shell_quote

# The first line of a job script (the module shell runs inside it when environment modules are set).
JOB_SCRIPT_SHELL = '/bin/sh'
# A login shell: where Lmod and Environment Modules define the ``module`` shell function.
DEFAULT_SHELL = ('/bin/bash', '-l', '-c')


def hostfile_text(hosts, slots):
    return ''.join('%s slots=%d\n' % (host, slots) for host in hosts)


def mpirun_argv(mpirun, hostfile, tasks, program, allow_run_as_root=False, extra_args=()):
    argv = [mpirun, '--hostfile', hostfile, '-np', str(tasks)]
    if allow_run_as_root:
        argv.append('--allow-run-as-root')
    return argv + list(extra_args) + list(program)


def srun_argv(srun, nodes, tasks_per_node, program, partition=None, account=None, extra_args=()):
    argv = [srun, '-N', str(nodes), '-n', str(nodes * tasks_per_node), '--ntasks-per-node', str(tasks_per_node)]
    if partition:
        argv += ['-p', partition]
    if account:
        argv += ['-A', account]
    return argv + list(extra_args) + list(program)


def salloc_argv(salloc, nodes, tasks_per_node, job_name, command, partition=None, account=None):
    """``salloc`` of ``nodes`` nodes with ``tasks_per_node`` tasks each, running ``command`` (the srun, or the
    module shell around it) on this host once the allocation is granted."""
    argv = [salloc, '-N', str(nodes), '--ntasks-per-node', str(tasks_per_node), '-J', job_name]
    if partition:
        argv += ['-p', partition]
    if account:
        argv += ['-A', account]
    return argv + list(command)


def sbatch_argv(sbatch, nodes, tasks_per_node, job_name, output, script, partition=None, account=None):
    """``sbatch --wait`` of ``script`` on ``nodes`` nodes with ``tasks_per_node`` tasks each: returns once the job
    ended, with its exit code; ``--parsable`` prints the job id first; the job's stdout and stderr go to
    ``output``."""
    argv = [sbatch, '--wait', '--parsable', '-N', str(nodes), '--ntasks-per-node', str(tasks_per_node),
            '-J', job_name, '-o', output]
    if partition:
        argv += ['-p', partition]
    if account:
        argv += ['-A', account]
    return argv + [script]


def job_script_text(command):
    """The batch script that runs ``command`` (the srun, or the module shell around it), replacing the script's
    shell so that cancelling the job stops it."""
    return '#!%s\n# lustre.iokit: one launch of a client survey, submitted with sbatch --wait\nexec %s\n' % (
        JOB_SCRIPT_SHELL, ' '.join(shell_quote(str(word)) for word in command))


# sbatch --parsable prints "<id>" or "<id>;<cluster>"; salloc says "Granted job allocation <id>" (or "Pending ...")
_PARSABLE_JOB_ID = re.compile(r'^\s*(\d+)(?:;\S*)?\s*$', re.M)
_ALLOCATION_JOB_ID = re.compile(r'(?:job allocation|batch job)\s+(\d+)')


def parse_job_id(stdout, stderr, allocation):
    """The Slurm job id that ``sbatch --parsable`` or ``salloc`` printed, or None."""
    if allocation == 'sbatch':
        found = _PARSABLE_JOB_ID.search(stdout or '')
        if found:
            return found.group(1)
    found = _ALLOCATION_JOB_ID.search('%s\n%s' % (stderr or '', stdout or ''))
    return found.group(1) if found else None


def scancel_argv(scancel, job_id=None, name=None, user=None):
    """``scancel`` of one job: by its id when known, else by its (unique) name, limited to ``user``."""
    if job_id:
        return [scancel, str(job_id)]
    argv = [scancel, '--name', name]
    if user:
        argv += ['--user', user]
    return argv


def job_already_gone(result):
    """True when scancel failed only because the job has ended or is unknown (nothing left to cancel)."""
    text = '%s %s' % (result.stderr or '', result.stdout or '')
    return 'already completing or completed' in text or 'Invalid job id' in text


def current_user():
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return None


def with_modules(argv, modules, shell=DEFAULT_SHELL):
    """Run ``argv`` in a shell that loads the environment modules first (``argv`` itself without modules).

    ``module`` is a shell function that Lmod and Environment Modules define in
    login shells, so the default shell is ``bash -l -c``; a site whose
    non-login shells have it can pass another. The launcher replaces the
    shell (``exec``), so that stopping the launch stops the launcher.
    """
    if not modules:
        return list(argv)
    names = ' '.join(shell_quote(str(name)) for name in modules)
    script = 'module load %s && exec %s' % (names, ' '.join(shell_quote(str(word)) for word in argv))
    return list(shell) + [script]


def default_node_counts(host_count):
    """1, 2, 4, ... below ``host_count``, then ``host_count`` itself."""
    counts = []
    count = 1
    while count < host_count:
        counts.append(count)
        count *= 2
    if host_count >= 1:
        counts.append(host_count)
    return counts
