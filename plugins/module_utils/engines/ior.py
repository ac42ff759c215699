# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The IOR engine: client bandwidth through the Lustre client, launched with ``mpirun`` or ``srun`` from one client.

The sweep is every combination of access pattern (``fpp`` file per process,
``ssf`` single shared file), node count, tasks per node and transfer size, in
that nesting order. Every point runs one IOR invocation that writes and then
reads (``-w -r``) with

- ``-C``: each task reads what a task on the next node wrote, so no client
  reads back its own page cache (with one node there is no other node and
  the read is marked ``read_from_own_cache``);
- ``-e``: fsync at the end of the write phase, so the write time includes
  getting the data to the servers;
- ``-i <iterations>``; optional stonewalling (``-D`` with wear-out, so every
  task moves the same amount and the read covers what was written).

The cache rule: with ``memory_factor`` F > 0 a point moves at least F times
the memory of the clients it uses, ``tasks x block x segments >= F x nodes x
client memory``; IOR's segment count is raised to the smallest that meets
it (the block per task stays as given). F = 0 turns the rule off for small
tests.

The launcher gets exactly P tasks on each of N nodes: ``mpirun --hostfile``
(the first N clients, ``slots=P``, ``-np N*P``) or ``srun -N N -n N*P
--ntasks-per-node P`` (with partition and account when given). With
environment modules the launch runs in a shell that first does ``module load
...``, so the tools are found in that shell.

The test tree is ``<mount>/<parent>/ior_<run_id>`` with one directory per
point, striped with ``lfs setstripe -c/-S`` when asked, marked and recorded
exactly as mdtest's (a standalone cleanup removes it after a kill only while
the marker names the run).

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import os
import shutil

try:
    from shlex import quote as shell_quote
except ImportError:  # pragma: no cover - Python 2 only
    from pipes import quote as shell_quote

from ansible_collections.lustre.iokit.plugins.module_utils.engines.mdtest import (
    _positive_list_problem,
    default_node_counts,
    hostfile_text,
    launch_argv,
)
from ansible_collections.lustre.iokit.plugins.module_utils.engines.ost import mount_fstype, parse_getname
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.ior import parse_ior

MARKER = '.lustre-iokit-ior'
TREE_PREFIX = 'ior_'
ACCESS = ('fpp', 'ssf')
LAUNCHERS = ('mpirun', 'srun')
MIB = 1024 * 1024

DEFAULTS = {
    'access': list(ACCESS),
    'block_size_mib': 1024,
    'transfer_sizes_kib': [1024],
    'tasks_per_node': [1],
    'nodes': None,
    'iterations': 1,
    'memory_factor': 2.0,
    'client_memory_mib': None,
    'stonewall_s': 0,
    'stripe_count': None,
    'stripe_size_kib': None,
    'launcher': 'mpirun',
    'partition': None,
    'account': None,
    'environment_modules': [],
}


def read_marker(tree):
    try:
        with open(os.path.join(tree, MARKER)) as handle:
            return handle.read().strip()
    except (IOError, OSError):
        return None


class EngineError(Exception):
    """A refusal before anything is created (not Lustre, a tree that is not ours, a bad parent)."""


def with_defaults(options):
    merged = dict(DEFAULTS)
    merged.update(dict((key, value) for key, value in (options or {}).items() if value is not None))
    return merged


def option_problems(options, host_count):
    """Invalid option values and combinations, each message naming the option."""
    opts = with_defaults(options)
    problems = []
    unknown = [access for access in opts['access'] if access not in ACCESS]
    if not opts['access'] or unknown:
        problems.append('access: give one or both of fpp (file per process) and ssf (single shared file), got %s'
                        % (', '.join(str(a) for a in opts['access']) or 'nothing'))
    if opts['block_size_mib'] < 1:
        problems.append('block_size_mib: must be at least 1 (MiB per task), got %s' % opts['block_size_mib'])
    problem = _positive_list_problem('transfer_sizes_kib', opts['transfer_sizes_kib'])
    if problem:
        problems.append(problem)
    else:
        uneven = [size for size in opts['transfer_sizes_kib'] if (opts['block_size_mib'] * 1024) % size]
        if uneven:
            problems.append('transfer_sizes_kib: IOR needs the block (block_size_mib %d = %d KiB) to be a multiple '
                            'of every transfer size; %s KiB is not' % (
                                opts['block_size_mib'], opts['block_size_mib'] * 1024,
                                ', '.join(str(size) for size in uneven)))
    problem = _positive_list_problem('tasks_per_node', opts['tasks_per_node'])
    if problem:
        problems.append(problem)
    if host_count < 1:
        problems.append('hosts: give at least one client host')
    if opts['nodes'] is not None:
        problem = _positive_list_problem('nodes', opts['nodes'])
        if problem:
            problems.append(problem)
        elif host_count >= 1 and opts['nodes'][-1] > host_count:
            problems.append('nodes: %d nodes asked but hosts lists only %d' % (opts['nodes'][-1], host_count))
    if opts['iterations'] < 1:
        problems.append('iterations: must be at least 1, got %d' % opts['iterations'])
    if opts['memory_factor'] < 0:
        problems.append('memory_factor: must be 0 (no cache rule) or more, got %s' % opts['memory_factor'])
    elif opts['memory_factor'] > 0 and not opts['client_memory_mib']:
        problems.append('client_memory_mib: the cache rule (memory_factor %s) needs the memory of a client; '
                        'give it, or set memory_factor 0' % opts['memory_factor'])
    if opts['stonewall_s'] < 0:
        problems.append('stonewall_s: must be 0 (off) or more seconds, got %d' % opts['stonewall_s'])
    if opts['stripe_count'] is not None and (opts['stripe_count'] < -1 or opts['stripe_count'] == 0):
        problems.append('stripe_count: must be -1 (every OST) or at least 1, got %d' % opts['stripe_count'])
    if opts['stripe_size_kib'] is not None and (opts['stripe_size_kib'] < 64 or opts['stripe_size_kib'] % 64):
        problems.append('stripe_size_kib: must be a multiple of 64 KiB, got %d' % opts['stripe_size_kib'])
    if opts['launcher'] not in LAUNCHERS:
        problems.append('launcher: must be mpirun or srun, got %r' % (opts['launcher'],))
    elif opts['launcher'] == 'mpirun' and (opts['partition'] or opts['account']):
        problems.append('partition, account: Slurm settings need launcher srun')
    bad_modules = [name for name in opts['environment_modules']
                   if not name or any(char.isspace() or char in ';&|$`\'"<>()' for char in str(name))]
    if bad_modules:
        problems.append('environment_modules: module names are single words, got %s'
                        % ', '.join(repr(name) for name in bad_modules))
    return problems


def segments_for(opts, nodes, tasks):
    """IOR's segment count so the point moves at least memory_factor x the memory of its clients (1 when off)."""
    if not opts['memory_factor'] or not opts['client_memory_mib']:
        return 1
    needed_mib = opts['memory_factor'] * nodes * opts['client_memory_mib']
    return max(1, int(math.ceil(needed_mib / float(tasks * opts['block_size_mib']))))


def ior_argv(opts, point, test_file, ior='ior'):
    argv = [ior, '-a', 'POSIX', '-w', '-r', '-C', '-e']
    if point['access'] == 'fpp':
        argv.append('-F')
    argv += ['-t', '%dk' % point['transfer_kib'], '-b', '%dm' % opts['block_size_mib'],
             '-s', str(point['segments']), '-i', str(opts['iterations'])]
    if opts['stonewall_s']:
        argv += ['-D', str(opts['stonewall_s']), '-O', 'stoneWallingWearOut=1']
    return argv + ['-o', test_file]


def srun_argv(srun, nodes, tasks_per_node, program, partition=None, account=None):
    argv = [srun, '-N', str(nodes), '-n', str(nodes * tasks_per_node), '--ntasks-per-node', str(tasks_per_node)]
    if partition:
        argv += ['-p', partition]
    if account:
        argv += ['-A', account]
    return argv + list(program)


DEFAULT_SHELL = ('/bin/bash', '-l', '-c')


def with_modules(argv, modules, shell=DEFAULT_SHELL):
    """Run ``argv`` in a shell that loads the environment modules first.

    ``module`` is a shell function that Lmod and Environment Modules define in
    login shells, so the default shell is ``bash -l -c``; a site whose
    non-login shells have it can pass another.
    """
    if not modules:
        return list(argv)
    names = ' '.join(shell_quote(str(name)) for name in modules)
    script = 'module load %s && exec %s' % (names, ' '.join(shell_quote(word) for word in argv))
    return list(shell) + [script]


def point_name(point):
    return '%s-nodes%d-ppn%d-xfer%dk' % (point['access'], point['nodes'], point['tasks_per_node'],
                                         point['transfer_kib'])


class IorSurvey:
    """Checks, plans, runs and cleans up one IOR sweep launched from this client.

    ``runner`` runs the measurements (under the deadline); ``control_runner``
    the checks, the layout commands and the cleanup (no deadline).
    """

    def __init__(self, runner, control_runner, node_state, run_id, mount_point, hosts, options=None,
                 parent=None, workdir='/tmp/lustre-iokit', mpirun='mpirun', srun='srun', ior='ior', lfs='lfs',
                 allow_run_as_root=False, launcher_extra_args=(), shell=DEFAULT_SHELL,
                 mountinfo_path='/proc/self/mountinfo'):
        self.runner = runner
        self.control_runner = control_runner
        self.node_state = node_state
        self.run_id = run_id
        self.mount_point = mount_point.rstrip('/') or '/'
        self.hosts = list(hosts)
        self.opts = with_defaults(options)
        self.parent = os.path.normpath(os.path.join(self.mount_point, parent)) if parent else self.mount_point
        self.workdir = workdir
        self.mpirun = mpirun
        self.srun = srun
        self.ior = ior
        self.lfs = lfs
        self.allow_run_as_root = allow_run_as_root
        self.launcher_extra_args = list(launcher_extra_args or ())
        self.shell = shell
        self.mountinfo_path = mountinfo_path
        self.tree = os.path.join(self.parent, TREE_PREFIX + run_id)
        self.run_dir = os.path.join(workdir, run_id)
        self.fsname = None
        self.fstype = None
        self.errors = []
        self.aborted = None
        self.records = []
        self.raw_chunks = []
        self._tree_made = False
        self._hostfiles = []

    # -- checks and plan -------------------------------------------------------------------

    def node_counts(self):
        return list(self.opts['nodes']) if self.opts['nodes'] is not None else default_node_counts(len(self.hosts))

    def inspect(self):
        """Check that the mount is Lustre and the tree's place is usable; raise EngineError naming the option."""
        self.fstype = mount_fstype(self.mount_point, self.mountinfo_path)
        result = self.control_runner.run([self.lfs, 'getname', self.mount_point])
        names = parse_getname(result.stdout) if result.rc == 0 else None
        if names is None:
            raise EngineError('mount_point: %s is not a Lustre client mount: lfs getname failed (rc %s): %s'
                              % (self.mount_point, result.rc, (result.stderr or result.stdout).strip()))
        self.fsname = names[0]
        inside = self.parent == self.mount_point or self.parent.startswith(self.mount_point.rstrip('/') + '/')
        if not inside:
            raise EngineError('directory: %s is not below mount_point %s' % (self.parent, self.mount_point))
        if not os.path.isdir(self.parent):
            raise EngineError('directory: %s does not exist on the Lustre mount; create it first' % self.parent)
        if os.path.lexists(self.tree) and read_marker(self.tree) != self.run_id:
            raise EngineError('run_id: %s exists and does not carry the marker of run %s; it is not ours, '
                              'choose another run_id or remove it' % (self.tree, self.run_id))

    def points(self):
        points = []
        for access in self.opts['access']:
            for nodes in self.node_counts():
                for tasks_per_node in self.opts['tasks_per_node']:
                    tasks = nodes * tasks_per_node
                    for transfer_kib in self.opts['transfer_sizes_kib']:
                        segments = segments_for(self.opts, nodes, tasks)
                        points.append({'access': access, 'nodes': nodes, 'tasks_per_node': tasks_per_node,
                                       'tasks': tasks, 'transfer_kib': transfer_kib, 'segments': segments,
                                       'bytes_per_phase': tasks * self.opts['block_size_mib'] * MIB * segments})
        return points

    def plan(self):
        points = self.points()
        first = points[0] if points else None
        total = sum(point['bytes_per_phase'] for point in points) * self.opts['iterations']
        return {
            'mount_point': self.mount_point,
            'fsname': self.fsname,
            'tree': self.tree,
            'marker': os.path.join(self.tree, MARKER),
            'hosts': self.hosts,
            'launcher': self.opts['launcher'],
            'environment_modules': list(self.opts['environment_modules']),
            'points': [dict(point, hosts=self.hosts[:point['nodes']]) for point in points],
            'bytes_written': total,
            'bytes_read': total,
            'cache_rule': {'memory_factor': self.opts['memory_factor'],
                           'client_memory_mib': self.opts['client_memory_mib']},
            'first_command': self.launch_command(first, self.hostfile_path(first)) if first else None,
            'layout': {'stripe_count': self.opts['stripe_count'], 'stripe_size_kib': self.opts['stripe_size_kib']},
        }

    def point_directory(self, point):
        return os.path.join(self.tree, point_name(point))

    def hostfile_path(self, point):
        return os.path.join(self.run_dir, 'hostfile-%dx%d' % (point['nodes'], point['tasks_per_node']))

    def launch_command(self, point, hostfile):
        program = ior_argv(self.opts, point, os.path.join(self.point_directory(point), 'ior.dat'), self.ior)
        if self.opts['launcher'] == 'srun':
            argv = srun_argv(self.srun, point['nodes'], point['tasks_per_node'], self.launcher_extra_args + program,
                             self.opts['partition'], self.opts['account'])
        else:
            argv = launch_argv(self.mpirun, hostfile, point['tasks'], program, self.allow_run_as_root,
                               self.launcher_extra_args)
        return with_modules(argv, self.opts['environment_modules'], self.shell)

    # -- setup -----------------------------------------------------------------------------

    def setup(self):
        """Create the run directory and the marked tree (written to the node state first)."""
        if not os.path.isdir(self.run_dir):
            os.makedirs(self.run_dir)
        self.node_state.record('paths', self.run_id, path=self.tree, mount_point=self.mount_point, survey='ior',
                               marker=MARKER)
        self._tree_made = True
        if os.path.lexists(self.tree):
            shutil.rmtree(self.tree)
        os.mkdir(self.tree)
        with open(os.path.join(self.tree, MARKER), 'w') as handle:
            handle.write(self.run_id + '\n')

    def _make_point_directory(self, point):
        directory = self.point_directory(point)
        os.mkdir(directory)
        argv = [self.lfs, 'setstripe']
        if self.opts['stripe_count'] is not None:
            argv += ['-c', str(self.opts['stripe_count'])]
        if self.opts['stripe_size_kib'] is not None:
            argv += ['-S', '%dk' % self.opts['stripe_size_kib']]
        if len(argv) > 2:
            result = self.control_runner.run(argv + [directory])
            if result.rc != 0:
                self._error(point, 'lfs setstripe failed (rc %s): %s'
                            % (result.rc, (result.stderr or result.stdout).strip()))
                return None
        return directory

    # -- running ---------------------------------------------------------------------------

    def _error(self, point, message):
        self.errors.append({'point': None if point is None else point_name(point), 'message': message})

    def run(self):
        for point in self.points():
            if self.runner.expired():
                self.aborted = self.runner.stop_reason or 'stopped'
                self._error(point, 'not run: %s' % self.aborted)
                break
            self._measure_point(point)
            if self.aborted:
                break
        return self.records

    def _measure_point(self, point):
        try:
            directory = self._make_point_directory(point)
        except OSError as exc:
            self._error(point, 'cannot create the point directory: %s' % exc)
            return None
        if directory is None:
            return None
        hostfile = self.hostfile_path(point)
        if self.opts['launcher'] == 'mpirun':
            with open(hostfile, 'w') as handle:
                handle.write(hostfile_text(self.hosts[:point['nodes']], point['tasks_per_node']))
            self._hostfiles.append(hostfile)
        argv = self.launch_command(point, hostfile)
        result = self.runner.run(argv)
        self.raw_chunks.append('# %s\n%s%s' % (' '.join(argv), result.stdout, result.stderr))
        if result.timed_out or self.runner.expired():
            self.aborted = self.runner.stop_reason or 'stopped'
            self._error(point, 'ior interrupted: %s' % self.aborted)
            return None
        runs = parse_ior(result.stdout)
        run = runs[-1] if runs else None
        if result.rc != 0 or run is None or not run['summary']:
            detail = '; '.join(run['errors']) if run and run['errors'] else (result.stderr + result.stdout).strip()
            self._error(point, '%s ior failed (rc %s): %s' % (self.opts['launcher'], result.rc, detail[-2000:]))
            return None
        record = dict(point, hosts=self.hosts[:point['nodes']], directory=directory, ior=run,
                      read_from_own_cache=point['nodes'] == 1)
        for operation in ('write', 'read'):
            row = _summary_row(run, operation)
            record['ior_%s_mib_s' % operation] = row['mean_mib_s'] if row else None
            record['ior_%s_max_mib_s' % operation] = row['max_mib_s'] if row else None
        self.records.append(record)
        # IOR removed its files; drop the empty point directory now so the tree stays small.
        shutil.rmtree(directory, ignore_errors=True)
        return record

    # -- cleanup ------------------------------------------------------------------------------

    def teardown(self):
        """Remove the tree (only while it carries our marker) and the hostfiles; returns the problems left."""
        problems = []
        for path in self._hostfiles:
            try:
                os.unlink(path)
            except OSError:
                pass
        self._hostfiles = []
        if not self._tree_made:
            return problems
        if os.path.lexists(self.tree):
            if read_marker(self.tree) != self.run_id:
                problems.append('%s no longer carries the marker of run %s; left in place' % (self.tree, self.run_id))
                return problems
            try:
                shutil.rmtree(self.tree)
            except OSError as exc:
                problems.append('cannot remove %s: %s' % (self.tree, exc))
                return problems
        self.node_state.forget('paths', self.tree)
        self._tree_made = False
        return problems

    def raw_text(self):
        return '\n'.join(self.raw_chunks)


def _summary_row(run, operation):
    for row in run['summary']:
        if row['operation'] == operation:
            return row
    return None
