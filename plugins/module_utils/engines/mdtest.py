# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The mdtest engine: metadata rates through the Lustre client, launched with ``mpirun`` from one client.

The methodology is a sweep, one factor at a time:

1. tasks per node (1, 2, 4, ...) on one node;
2. nodes (1, 2, 4, ... up to the client count) at the tasks per node that
   gave the best mean rate of one operation (``best_by``, ``file creation``
   by default; a tie goes to the fewer tasks).  The one-node point of this
   step is the best point of step 1, so it is not run twice.

Every point runs ``mdtest -i <iterations>``, whose summary gives max, min,
mean and standard deviation over the iterations.  With ``drop_caches`` the
phases (create, stat, read, remove) run as separate mdtest invocations, one
iteration each, with the client caches dropped on every node of the point
before each phase after create; the statistics over the iterations are then
computed here (sample standard deviation, 0 for one iteration).

``mpirun`` gets a hostfile of the point's first N clients with ``slots=P``
each and ``-np N*P``, so that by-slot placement puts exactly P tasks on each
node (Open MPI, and the simulator's mpirun).

The test tree is ``<mount>/<parent>/mdtest_<run_id>`` with one directory per
point (``nodes<N>-ppn<P>``), made with ``lfs mkdir -c/-i`` when asked to
spread over MDTs, and given a default file layout with ``lfs setstripe -c``
when asked.  The tree carries a marker file naming the run; it is written to
the node state before it is created and removed at the end, after a failure
or a timeout too; a standalone cleanup removes a tree left by a killed run
only while the marker names that run.

The mount is refused unless ``lfs getname`` answers for it (not Lustre).

There is no ``engine: iokit``: lustre-iokit has no mdtest script, mdtest is
the tool itself.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import os
import shutil

from ansible_collections.lustre.iokit.plugins.module_utils.engines.ost import mount_fstype, parse_getname
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.mdtest import parse_mdtest

PHASES = ('create', 'stat', 'read', 'remove')
PHASE_FLAGS = {'create': '-C', 'stat': '-T', 'read': '-E', 'remove': '-r'}
# the word of each phase in mdtest's operation names ("file creation", "file create (stonewall)", "tree removal")
PHASE_WORDS = {'create': 'creat', 'stat': 'stat', 'read': 'read', 'remove': 'remov'}
MARKER = '.lustre-iokit-mdtest'
TREE_PREFIX = 'mdtest_'
DEFAULT_TASKS_PER_NODE = (1, 2, 4, 8)
DEFAULT_BEST_BY = 'file creation'
# Drops the Lustre client's cached locks, and with them its cached inodes and pages: Lustre's own way.
DEFAULT_DROP_CACHES_COMMAND = ('lctl', 'set_param', '-n', 'ldlm.namespaces.*.lru_size=clear')
STEP_TASKS = 'tasks_per_node'
STEP_NODES = 'nodes'
# mdtest's operation names (parse_mdtest keys) that best_by may name.
OPERATIONS = ('directory creation', 'directory stat', 'directory rename', 'directory removal',
              'file creation', 'file stat', 'file read', 'file removal', 'tree creation', 'tree removal')

DEFAULTS = {
    'items': 1000,
    'items_per_dir': None,
    'depth': 0,
    'branching': 1,
    'unique_dir_per_task': True,
    'files_only': False,
    'dirs_only': False,
    'leaf_only': False,
    'write_bytes': 0,
    'read_bytes': 0,
    'phases': list(PHASES),
    'stride': 0,
    'iterations': 3,
    'stonewall_s': 0,
    'tasks_per_node': list(DEFAULT_TASKS_PER_NODE),
    'nodes': None,
    'best_by': DEFAULT_BEST_BY,
    'stripe_count': None,
    'mdt_count': None,
    'mdt_index': None,
    'drop_caches': False,
    'drop_caches_command': list(DEFAULT_DROP_CACHES_COMMAND),
}


class EngineError(Exception):
    """A refusal before anything is created (not Lustre, a tree that is not ours, a bad parent)."""


# --------------------------------------------------------------------------
# Options


def with_defaults(options):
    merged = dict(DEFAULTS)
    merged.update(dict((key, value) for key, value in (options or {}).items() if value is not None))
    return merged


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


def _positive_list_problem(name, values):
    if not values:
        return '%s: give at least one count' % name
    bad = [value for value in values if not isinstance(value, int) or isinstance(value, bool) or value < 1]
    if bad:
        return '%s: every count must be an integer of at least 1, got %s' % (name, ', '.join(str(v) for v in bad))
    if sorted(set(values)) != list(values):
        return '%s: give the counts in increasing order without repeats, got %s' % (
            name, ', '.join(str(v) for v in values))
    return None


def option_problems(options, host_count):
    """Invalid option values and combinations, each message naming the option (mdtest's own rules first)."""
    opts = with_defaults(options)
    problems = []
    for name in ('depth', 'stride', 'stonewall_s', 'write_bytes', 'read_bytes'):
        if opts[name] < 0:
            problems.append('%s: must be 0 or more, got %d' % (name, opts[name]))
    if opts['items_per_dir'] is not None:
        if opts['items_per_dir'] < 1:
            problems.append('items_per_dir: must be at least 1, got %d' % opts['items_per_dir'])
        if options.get('items') is not None:
            problems.append('items, items_per_dir: give one of them (mdtest -n or -I), not both')
    elif opts['items'] < 1:
        problems.append('items: must be at least 1, got %d' % opts['items'])
    if opts['branching'] < 1:
        problems.append('branching: must be at least 1, got %d' % opts['branching'])
    if opts['iterations'] < 1:
        problems.append('iterations: must be at least 1, got %d' % opts['iterations'])
    if opts['files_only'] and opts['dirs_only']:
        problems.append('files_only, dirs_only: mdtest -F and -D exclude each other; set at most one')
    if opts['dirs_only'] and (opts['write_bytes'] or opts['read_bytes']):
        problems.append('write_bytes, read_bytes: directories hold no data; leave them 0 with dirs_only')
    if opts['read_bytes'] > opts['write_bytes']:
        problems.append('read_bytes: cannot read %d bytes from files written with write_bytes %d'
                        % (opts['read_bytes'], opts['write_bytes']))
    if opts['stonewall_s'] and opts['branching'] > 1:
        problems.append('stonewall_s: mdtest -W works only with a branching factor of 1, got branching %d'
                        % opts['branching'])
    unknown = [phase for phase in opts['phases'] if phase not in PHASES]
    if unknown:
        problems.append('phases: unknown %s; choose among %s' % (', '.join(unknown), ', '.join(PHASES)))
    elif not opts['phases']:
        problems.append('phases: give at least one of %s' % ', '.join(PHASES))
    elif 'create' not in opts['phases']:
        problems.append('phases: every point starts from an empty directory, so the phases must include create')
    problem = _positive_list_problem('tasks_per_node', opts['tasks_per_node'])
    if problem:
        problems.append(problem)
    if host_count < 1:
        problems.append('hosts: give at least one client host name for the hostfile')
    if opts['nodes'] is not None:
        problem = _positive_list_problem('nodes', opts['nodes'])
        if problem:
            problems.append(problem)
        elif host_count >= 1 and opts['nodes'][-1] > host_count:
            problems.append('nodes: %d nodes asked but hosts lists only %d' % (opts['nodes'][-1], host_count))
    if opts['best_by'] not in OPERATIONS:
        problems.append('best_by: unknown operation %r; choose among %s' % (opts['best_by'], ', '.join(OPERATIONS)))
    elif opts['best_by'].startswith('file') and opts['dirs_only']:
        problems.append('best_by: %s is not measured with dirs_only; choose a directory operation' % opts['best_by'])
    elif opts['best_by'].startswith('directory') and opts['files_only']:
        problems.append('best_by: %s is not measured with files_only; choose a file operation' % opts['best_by'])
    if opts['stripe_count'] is not None and (opts['stripe_count'] < -1 or opts['stripe_count'] == 0):
        problems.append('stripe_count: must be -1 (every OST) or at least 1, got %d' % opts['stripe_count'])
    if opts['mdt_count'] is not None and (opts['mdt_count'] < -1 or opts['mdt_count'] == 0):
        problems.append('mdt_count: must be -1 (every MDT) or at least 1, got %d' % opts['mdt_count'])
    if opts['mdt_index'] is not None and opts['mdt_index'] < 0:
        problems.append('mdt_index: must be 0 or more, got %d' % opts['mdt_index'])
    if opts['drop_caches'] and not opts['drop_caches_command']:
        problems.append('drop_caches_command: give the command that drops the client caches')
    return problems


# --------------------------------------------------------------------------
# Commands


def mdtest_argv(opts, directory, mdtest='mdtest', phase=None, iterations=None):
    """The mdtest command of one point (``phase``: one phase alone, for the cache-dropping mode)."""
    argv = [mdtest]
    if opts['items_per_dir'] is not None:
        argv += ['-I', str(opts['items_per_dir'])]
    else:
        argv += ['-n', str(opts['items'])]
    argv += ['-z', str(opts['depth']), '-b', str(opts['branching'])]
    for flag, option in (('-u', 'unique_dir_per_task'), ('-F', 'files_only'), ('-D', 'dirs_only'),
                         ('-L', 'leaf_only')):
        if opts[option]:
            argv.append(flag)
    if opts['write_bytes']:
        argv += ['-w', str(opts['write_bytes'])]
    if opts['read_bytes']:
        argv += ['-e', str(opts['read_bytes'])]
    if opts['stride']:
        argv += ['-N', str(opts['stride'])]
    if opts['stonewall_s']:
        argv += ['-W', str(opts['stonewall_s'])]
    argv += ['-i', str(opts['iterations'] if iterations is None else iterations)]
    if phase is not None:
        argv.append(PHASE_FLAGS[phase])
    elif sorted(opts['phases']) != sorted(PHASES):
        argv += [PHASE_FLAGS[name] for name in PHASES if name in opts['phases']]
    argv += ['-d', directory]
    return argv


def hostfile_text(hosts, slots):
    return ''.join('%s slots=%d\n' % (host, slots) for host in hosts)


def launch_argv(mpirun, hostfile, tasks, program, allow_run_as_root=False, extra_args=()):
    argv = [mpirun, '--hostfile', hostfile, '-np', str(tasks)]
    if allow_run_as_root:
        argv.append('--allow-run-as-root')
    return argv + list(extra_args) + list(program)


# --------------------------------------------------------------------------
# Statistics


def iteration_statistics(values):
    """max, min, mean and sample standard deviation (0 for one value) of per-iteration rates."""
    values = [value for value in values if value is not None]
    if not values:
        return {'max': None, 'min': None, 'mean': None, 'stddev': None}
    mean = sum(values) / len(values)
    stddev = math.sqrt(sum((value - mean) ** 2 for value in values) / (len(values) - 1)) if len(values) > 1 else 0.0
    return {'max': max(values), 'min': min(values), 'mean': mean, 'stddev': stddev}


def best_rate(record, operation):
    stats = (record.get('summary') or {}).get(operation) or {}
    value = stats.get('mean')
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def choose_best(records, operation):
    """The record with the highest mean rate of ``operation`` (the first, fewer tasks, wins a tie), or None."""
    best = None
    for record in records:
        value = best_rate(record, operation)
        if value is not None and (best is None or value > best_rate(best, operation)):
            best = record
    return best


# --------------------------------------------------------------------------
# The survey


def read_marker(tree):
    try:
        with open(os.path.join(tree, MARKER)) as handle:
            return handle.read().strip()
    except (IOError, OSError):
        return None


class MdtestSurvey:
    """Checks, plans, runs and cleans up one mdtest sweep launched from this client.

    ``runner`` runs the measurements (under the deadline); ``control_runner``
    the checks, the layout commands and the cleanup (no deadline).
    """

    def __init__(self, runner, control_runner, node_state, run_id, mount_point, hosts, options=None,
                 parent=None, workdir='/tmp/lustre-iokit', mpirun='mpirun', mdtest='mdtest', lfs='lfs',
                 allow_run_as_root=False, mpirun_extra_args=(), mountinfo_path='/proc/self/mountinfo'):
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
        self.mdtest = mdtest
        self.lfs = lfs
        self.allow_run_as_root = allow_run_as_root
        self.mpirun_extra_args = list(mpirun_extra_args or ())
        self.mountinfo_path = mountinfo_path
        self.tree = os.path.join(self.parent, TREE_PREFIX + run_id)
        self.run_dir = os.path.join(workdir, run_id)
        self.fsname = None
        self.fstype = None
        self.errors = []
        self.aborted = None
        self.records = []
        self.best = None
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

    def tasks_points(self):
        return [{'step': STEP_TASKS, 'nodes': 1, 'tasks_per_node': count, 'tasks': count}
                for count in self.opts['tasks_per_node']]

    def plan(self):
        """The sweep as it will run; the nodes step's tasks per node is only known after the first step."""
        nodes_points = [{'step': STEP_NODES, 'nodes': count, 'tasks_per_node': None, 'tasks': None,
                         'hosts': self.hosts[:count], 'reuses_best_tasks_point': count == 1}
                        for count in self.node_counts()]
        first = self.tasks_points()[0]
        return {
            'mount_point': self.mount_point,
            'fsname': self.fsname,
            'tree': self.tree,
            'marker': os.path.join(self.tree, MARKER),
            'hosts': self.hosts,
            'points': [dict(point, hosts=self.hosts[:1]) for point in self.tasks_points()] + nodes_points,
            'best_by': self.opts['best_by'],
            'mdtest_invocations_per_point': (len(self.opts['phases']) * self.opts['iterations']
                                             if self.opts['drop_caches'] else 1),
            'first_command': launch_argv(self.mpirun, self.hostfile_path(1, first['tasks_per_node']), first['tasks'],
                                         self.point_program(self.point_directory(1, first['tasks_per_node'])),
                                         self.allow_run_as_root, self.mpirun_extra_args),
            'layout': {'stripe_count': self.opts['stripe_count'], 'mdt_count': self.opts['mdt_count'],
                       'mdt_index': self.opts['mdt_index']},
            'estimated_duration_s': None,
        }

    def point_directory(self, nodes, tasks_per_node):
        return os.path.join(self.tree, 'nodes%d-ppn%d' % (nodes, tasks_per_node))

    def point_program(self, directory, phase=None, iterations=None):
        return mdtest_argv(self.opts, directory, self.mdtest, phase=phase, iterations=iterations)

    def hostfile_path(self, nodes, slots):
        return os.path.join(self.run_dir, 'hostfile-%dx%d' % (nodes, slots))

    # -- setup -----------------------------------------------------------------------------

    def setup(self):
        """Create the run directory and the marked tree (written to the node state first)."""
        if not os.path.isdir(self.run_dir):
            os.makedirs(self.run_dir)
        self.node_state.record('paths', self.run_id, path=self.tree, mount_point=self.mount_point, survey='mdtest',
                               marker=MARKER)
        self._tree_made = True
        if os.path.lexists(self.tree):
            # the same run id after an abort: the marker says the tree is ours; start afresh
            shutil.rmtree(self.tree)
        os.mkdir(self.tree)
        with open(os.path.join(self.tree, MARKER), 'w') as handle:
            handle.write(self.run_id + '\n')

    def _write_hostfile(self, nodes, slots):
        path = self.hostfile_path(nodes, slots)
        with open(path, 'w') as handle:
            handle.write(hostfile_text(self.hosts[:nodes], slots))
        self._hostfiles.append(path)
        return path

    def _make_point_directory(self, point):
        """``lfs mkdir -c/-i`` (or mkdir), then ``lfs setstripe -c``; False with an error when a command fails."""
        directory = self.point_directory(point['nodes'], point['tasks_per_node'])
        if self.opts['mdt_count'] is not None or self.opts['mdt_index'] is not None:
            argv = [self.lfs, 'mkdir']
            if self.opts['mdt_count'] is not None:
                argv += ['-c', str(self.opts['mdt_count'])]
            if self.opts['mdt_index'] is not None:
                argv += ['-i', str(self.opts['mdt_index'])]
            if not self._layout_command(argv + [directory], point):
                return None
        else:
            os.mkdir(directory)
        if self.opts['stripe_count'] is not None:
            if not self._layout_command([self.lfs, 'setstripe', '-c', str(self.opts['stripe_count']), directory],
                                        point):
                return None
        return directory

    def _layout_command(self, argv, point):
        result = self.control_runner.run(argv)
        if result.rc != 0:
            detail = (result.stderr or result.stdout).strip()
            self._error(point, '%s failed (rc %s): %s' % (' '.join(argv[:2]), result.rc, detail))
            return False
        return True

    # -- running ---------------------------------------------------------------------------

    def _error(self, point, message):
        self.errors.append({'point': _point_key(point), 'message': message})

    def _stop(self, point, what):
        self.aborted = self.runner.stop_reason or 'stopped'
        self._error(point, '%s: %s' % (what, self.aborted))

    def run(self):
        """Both steps of the sweep; returns the records (one per measured point), also kept in ``records``."""
        tasks_records = []
        for point in self.tasks_points():
            record = self._measure_point(point)
            if self.aborted:
                return self.records
            if record is not None:
                tasks_records.append(record)
        self.best = choose_best(tasks_records, self.opts['best_by'])
        if self.best is None:
            self._error(None, 'no tasks-per-node point measured %s; the nodes step did not run' % self.opts['best_by'])
            return self.records
        self.best['best_tasks_per_node'] = True
        for count in self.node_counts():
            if count == 1:
                continue
            point = {'step': STEP_NODES, 'nodes': count, 'tasks_per_node': self.best['tasks_per_node'],
                     'tasks': count * self.best['tasks_per_node']}
            self._measure_point(point)
            if self.aborted:
                break
        return self.records

    def _launch(self, point, program, hostfile, tasks):
        argv = launch_argv(self.mpirun, hostfile, tasks, program, self.allow_run_as_root, self.mpirun_extra_args)
        result = self.runner.run(argv)
        self.raw_chunks.append('# %s\n%s%s' % (' '.join(argv), result.stdout, result.stderr))
        if result.timed_out or self.runner.expired():
            self._stop(point, 'mdtest interrupted')
            return None
        parsed = parse_mdtest(result.stdout)
        if result.rc != 0 or not parsed['summary']:
            self._error(point, 'mpirun mdtest failed (rc %s): %s' % (
                result.rc, (result.stderr + result.stdout).strip()[-2000:]))
            return None
        return parsed

    def _measure_point(self, point):
        if self.runner.expired():
            self._stop(point, 'not run')
            return None
        try:
            directory = self._make_point_directory(point)
        except OSError as exc:
            self._error(point, 'cannot create the point directory: %s' % exc)
            return None
        if directory is None:
            return None
        hostfile = self._write_hostfile(point['nodes'], point['tasks_per_node'])
        if self.opts['drop_caches']:
            parsed = self._measure_phases(point, directory, hostfile)
        else:
            parsed = self._launch(point, self.point_program(directory), hostfile, point['tasks'])
        if parsed is None:
            return None
        record = dict(parsed)
        record.update(step=point['step'], nodes=point['nodes'], tasks_per_node=point['tasks_per_node'],
                      tasks=point['tasks'], mdtest_nodes=parsed.get('nodes'), mdtest_tasks=parsed.get('tasks'),
                      hosts=self.hosts[:point['nodes']], directory=directory, caches_dropped=self.opts['drop_caches'],
                      best_tasks_per_node=False)
        record['iterations'] = parsed.get('iterations') or self.opts['iterations']
        self.records.append(record)
        return record

    def _drop_caches(self, point):
        hostfile = self._write_hostfile(point['nodes'], 1)
        argv = launch_argv(self.mpirun, hostfile, point['nodes'], self.opts['drop_caches_command'],
                           self.allow_run_as_root, self.mpirun_extra_args)
        result = self.runner.run(argv)
        if result.timed_out or self.runner.expired():
            self._stop(point, 'cache drop interrupted')
            return False
        if result.rc != 0:
            self._error(point, 'cache drop failed (rc %s): %s' % (result.rc, (result.stderr or result.stdout).strip()))
            return False
        return True

    def _measure_phases(self, point, directory, hostfile):
        """Each phase alone, caches dropped before each phase but the first, per iteration; statistics here."""
        rates = {}
        first = None
        for iteration in range(self.opts['iterations']):
            iteration_directory = os.path.join(directory, 'iteration%d' % iteration)
            for phase in PHASES:
                if phase not in self.opts['phases']:
                    continue
                if phase != 'create' and not self._drop_caches(point):
                    return None
                parsed = self._launch(point, self.point_program(iteration_directory, phase=phase, iterations=1),
                                      hostfile, point['tasks'])
                if parsed is None:
                    return None
                first = first or parsed
                for operation, stats in parsed['summary'].items():
                    # mdtest may print rows of the phases it did not run (zeros); keep this phase's own
                    if PHASE_WORDS[phase] in operation:
                        rates.setdefault(operation, []).append(stats.get('mean'))
        summary = dict((operation, iteration_statistics(values)) for operation, values in rates.items())
        return {'version': first['version'], 'tasks': first['tasks'], 'nodes': first['nodes'],
                'iterations': self.opts['iterations'], 'summary': summary, 'unit': 'ops/sec'}

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


def _point_key(point):
    if point is None:
        return None
    return {'nodes': point['nodes'], 'tasks_per_node': point['tasks_per_node']}
