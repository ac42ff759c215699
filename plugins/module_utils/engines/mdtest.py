# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The mdtest engine: metadata rates through the Lustre client, launched with ``mpirun`` or ``srun`` from one client.

The methodology is a sweep, one factor at a time:

1. tasks per node (1, 2, 4, ...) on one node;
2. nodes (1, 2, 4, ... up to the client count) at the tasks per node that
   gave the best mean rate of one operation (``best_by``, ``file creation``
   by default; a tie goes to the fewer tasks).  The one-node point of this
   step is the best point of step 1, so it is not run twice.

Every point runs ``mdtest -i <repetitions>``, whose summary gives max, min,
mean and standard deviation over the iterations.  With ``drop_caches`` the
phases (create, stat, read, remove) run as separate mdtest invocations, one
iteration each, with the client caches dropped on every node of the point
before each phase after create; the statistics over the iterations are then
computed here (sample standard deviation, 0 for one iteration).

The launch (``mpirun`` with a hostfile of the point's first N clients,
``slots=P``, or ``srun -N N --ntasks-per-node P``: exactly P tasks on each
node; environment modules loaded first) and the marked test tree
``<mount>/<parent>/mdtest_<run_id>`` (refused unless ``lfs getname`` answers
for the mount, recorded before it is made, removed at the end, after a
failure or a timeout too, and by a standalone cleanup after a kill only while
its marker names the run) are the client-launch layer's
(module_utils/client_launch.py), shared with IOR. Here: one directory per
point (``nodes<N>-ppn<P>``), made with ``lfs mkdir -c/-i`` when asked to
spread over MDTs, and given a default file layout with ``lfs setstripe -c``
when asked. The cache drops run through the same launcher, one task per node.

With ``sweep: adaptive`` each step stops early once the mean rate of ``best_by``
no longer gains (module_utils/adaptive.py, the rule every survey shares):
step 1 stops doubling the tasks per node, step 2 adding nodes; every point
passed over is listed with the reason (``skipped_points``).  The other
operations are measured at every point run but do not hold a step back.

A resumed run (``done_points``, the points its earlier attempts finished) measures only the missing points, and
chooses the best tasks per node from every tasks-per-node point, the earlier attempts' included.  When a point
an earlier attempt did not finish (it failed, or was not reached) wins now, the best changes, and the nodes step
an earlier attempt measured at the former best belongs to another sweep: those records are ``withdrawn`` (the
envelope lists them under ``withdrawn_points``, with the reason) and the nodes step is measured again at the new
best, so that the envelope ends with one sweep, every point once.

There is no ``engine: iokit``: lustre-iokit has no mdtest script, mdtest is
the tool itself.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import os

from ansible_collections.lustre.iokit.plugins.module_utils import adaptive, client_launch
from ansible_collections.lustre.iokit.plugins.module_utils import sample_extraction as extraction
from ansible_collections.lustre.iokit.plugins.module_utils.option_problem import OptionProblem
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.mdtest import parse_mdtest

# a refusal before anything is made (the client-launch layer's)

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

DEFAULTS = dict(client_launch.LAUNCH_DEFAULTS, **{
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
    'repetitions': 3,
    'stonewall_s': 0,
    'tasks_per_node': list(DEFAULT_TASKS_PER_NODE),
    'nodes': None,
    'best_by': DEFAULT_BEST_BY,
    'stripe_count': None,
    'mdt_count': None,
    'mdt_index': None,
    'drop_caches': False,
    'drop_caches_command': list(DEFAULT_DROP_CACHES_COMMAND),
    'sweep': 'full',
    'sweep_min_gain_pct': adaptive.DEFAULT_MIN_GAIN_PCT,
    'sweep_patience': adaptive.DEFAULT_PATIENCE,
})


# --------------------------------------------------------------------------
# Options


def with_defaults(options):
    return client_launch.merge_defaults(DEFAULTS, options)


def _phase_problems(phases):
    """``phases``: known names, at least one, create among them."""
    unknown = [phase for phase in phases if phase not in PHASES]
    if unknown:
        return [OptionProblem('phases', 'unknown %s; choose among %s' % (', '.join(unknown), ', '.join(PHASES)))]
    if not phases:
        return [OptionProblem('phases', 'give at least one of %s' % ', '.join(PHASES))]
    if 'create' not in phases:
        return [OptionProblem('phases', 'every point starts from an empty directory, so the phases must include create')]
    return []


def _best_by_problems(opts):
    """``best_by``: a known operation that the points measure (files_only and dirs_only leave some out)."""
    best_by = opts['best_by']
    if best_by not in OPERATIONS:
        return [OptionProblem('best_by', 'unknown operation %r; choose among %s' % (best_by, ', '.join(OPERATIONS)))]
    if best_by.startswith('file') and opts['dirs_only']:
        return [OptionProblem('best_by', '%s is not measured with {dirs_only}; choose a directory operation' % best_by,
                              mentions='dirs_only')]
    if best_by.startswith('directory') and opts['files_only']:
        return [OptionProblem('best_by', '%s is not measured with {files_only}; choose a file operation' % best_by,
                              mentions='files_only')]
    return []


def option_problems(options, host_count):
    """Invalid option values and combinations, each an OptionProblem (mdtest's own, then the launch's)."""
    opts = with_defaults(options)
    problems = []
    for name in ('depth', 'stride', 'stonewall_s', 'write_bytes', 'read_bytes'):
        if opts[name] < 0:
            problems.append(OptionProblem(name, 'must be 0 or more', got='%d' % opts[name]))
    if opts['items_per_dir'] is not None:
        if opts['items_per_dir'] < 1:
            problems.append(OptionProblem('items_per_dir', 'must be at least 1', got='%d' % opts['items_per_dir']))
        if options.get('items') is not None:
            problems.append(OptionProblem(('items', 'items_per_dir'), 'give one of them (mdtest -n or -I), not both'))
    elif opts['items'] < 1:
        problems.append(OptionProblem('items', 'must be at least 1', got='%d' % opts['items']))
    if opts['branching'] < 1:
        problems.append(OptionProblem('branching', 'must be at least 1', got='%d' % opts['branching']))
    if opts['files_only'] and opts['dirs_only']:
        problems.append(OptionProblem(('files_only', 'dirs_only'),
                                      'mdtest -F and -D exclude each other; set at most one'))
    if opts['dirs_only'] and (opts['write_bytes'] or opts['read_bytes']):
        problems.append(OptionProblem(('write_bytes', 'read_bytes'),
                                      'directories hold no data; leave them 0 with {dirs_only}', mentions='dirs_only'))
    if opts['read_bytes'] > opts['write_bytes']:
        problems.append(OptionProblem('read_bytes', 'cannot read %d bytes from files written with {write_bytes} %d'
                                      % (opts['read_bytes'], opts['write_bytes']), mentions='write_bytes'))
    if opts['stonewall_s'] and opts['branching'] > 1:
        problems.append(OptionProblem('stonewall_s', 'mdtest -W works only with a branching factor of 1, got '
                                      'branching %d' % opts['branching']))
    problems.extend(_phase_problems(opts['phases']))
    problems.extend(_best_by_problems(opts))
    if opts['mdt_count'] is not None and (opts['mdt_count'] < -1 or opts['mdt_count'] == 0):
        problems.append(OptionProblem('mdt_count', 'must be -1 (every MDT) or at least 1', got='%d' % opts['mdt_count']))
    if opts['mdt_index'] is not None and opts['mdt_index'] < 0:
        problems.append(OptionProblem('mdt_index', 'must be 0 or more', got='%d' % opts['mdt_index']))
    if opts['drop_caches'] and not opts['drop_caches_command']:
        problems.append(OptionProblem('drop_caches_command', 'give the command that drops the client caches'))
    if opts['sweep'] not in adaptive.SWEEP_MODES:
        problems.append(OptionProblem('sweep', 'must be %s' % ' or '.join(adaptive.SWEEP_MODES), got=opts['sweep']))
    problems.extend(adaptive.option_problems(opts))
    return problems + client_launch.launch_option_problems(opts, host_count)


# --------------------------------------------------------------------------
# Commands


def mdtest_argv(opts, directory, mdtest='mdtest', phase=None, repetitions=None):
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
    argv += ['-i', str(opts['repetitions'] if repetitions is None else repetitions)]
    if phase is not None:
        argv.append(PHASE_FLAGS[phase])
    elif sorted(opts['phases']) != sorted(PHASES):
        argv += [PHASE_FLAGS[name] for name in PHASES if name in opts['phases']]
    argv += ['-d', directory]
    return argv


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


def sweep_figure(record, operation):
    """The stop rule's view of a point: the mean rate of ``operation`` and its spread over the iterations."""
    stats = (record or {}).get('summary', {}).get(operation) or {}
    value = best_rate(record, operation) if record else None
    return {operation: {'value': value, 'spread_pct': adaptive.spread_pct(value, stats.get('min'), stats.get('max'))}}


def _attempt_text(record):
    """Which attempt measured ``record``: ``attempt N``, or ``this attempt`` before the progress log numbered it."""
    return 'attempt %s' % record['attempt'] if record.get('attempt') is not None else 'this attempt'


def _rate_text(value):
    return 'not measured' if value is None else '%.1f ops/s' % value


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


class MdtestSurvey(client_launch.ClientTreeSurvey):
    """Checks, plans, runs and cleans up one mdtest sweep launched from this client (``mdtest``: the program)."""

    SURVEY = 'mdtest'
    MARKER = MARKER
    TREE_PREFIX = TREE_PREFIX
    DEFAULTS = DEFAULTS

    def __init__(self, context, mount_point, hosts, options=None,
                 mdtest='mdtest', **kwargs):
        client_launch.ClientTreeSurvey.__init__(self, context, mount_point, hosts, options, **kwargs)
        self.mdtest = mdtest
        self.best = None
        # one inner sweep per step: tasks per node on one node, then nodes at the best tasks per node
        self.sweeps = dict((axis, adaptive.InnerSweeps(self.opts['sweep'], self.opts['sweep_min_gain_pct'],
                                                       self.opts['sweep_patience'], axis=axis))
                           for axis in (STEP_TASKS, STEP_NODES))

    def point_key(self, point):
        return {'nodes': point['nodes'], 'tasks_per_node': point['tasks_per_node']}

    def resume_key(self, point):
        """A point's step, nodes and tasks per node: a nodes-step point is known by the tasks per node it ran at."""
        return (point['step'], point['nodes'], point['tasks_per_node'])

    def record_point(self, record):
        """The planned point a record measured, as ``progress_points`` names it (a nodes-step point names no tasks
        per node: the plan does not know it yet)."""
        point = {'step': record['step'], 'nodes': record['nodes']}
        if record['step'] == STEP_TASKS:
            point['tasks_per_node'] = record['tasks_per_node']
        return point

    # -- plan ------------------------------------------------------------------------------

    def tasks_points(self):
        return [{'step': STEP_TASKS, 'nodes': 1, 'tasks_per_node': count, 'tasks': count}
                for count in self.opts['tasks_per_node']]

    def plan(self):
        """The sweep as it will run; the nodes step's tasks per node is only known after the first step."""
        nodes_points = [{'step': STEP_NODES, 'nodes': count, 'tasks_per_node': None, 'tasks': None,
                         'hosts': self.hosts[:count], 'reuses_best_tasks_point': count == 1}
                        for count in self.node_counts()]
        first = self.tasks_points()[0]
        plan = self.plan_common()
        plan.update({
            'points': [dict(point, hosts=self.hosts[:1]) for point in self.tasks_points()] + nodes_points,
            'best_by': self.opts['best_by'],
            'mdtest_invocations_per_point': (len(self.opts['phases']) * self.opts['repetitions']
                                             if self.opts['drop_caches'] else 1),
            'first_command': self.launch_command(1, first['tasks_per_node'], self.point_program(
                self.point_directory(1, first['tasks_per_node']))),
            'layout': {'stripe_count': self.opts['stripe_count'], 'mdt_count': self.opts['mdt_count'],
                       'mdt_index': self.opts['mdt_index']},
            'estimated_duration_s': None,
        })
        plan['sweep'] = self.plan_sweep()
        return plan

    def progress_points(self, plan):
        """The points the sweep runs, as the progress log counts them: every point of step 1, then step 2's but its
        one-node point (step 1's best); step 2's tasks per node is not known yet, so its points name none."""
        return [dict((key, point[key]) for key in ('step', 'nodes', 'tasks_per_node') if point[key] is not None)
                for point in plan['points'] if not point.get('reuses_best_tasks_point')]

    def plan_sweep(self):
        """The plan's ``sweep`` (adaptive.plan_fields): step 1, then step 2 from the best point of step 1."""
        counts = self.node_counts()
        reused = 1 if 1 in counts else 0
        return adaptive.plan_fields(self.opts['sweep'], self.opts['sweep_min_gain_pct'], self.opts['sweep_patience'],
                                    [len(self.opts['tasks_per_node']), len(counts) - reused], started=[0, reused])

    def envelope_fields(self):
        """The envelope's ``sweep`` (both steps together; each stop names its ``axis``) and ``skipped_points``."""
        tasks, nodes = self.sweeps[STEP_TASKS], self.sweeps[STEP_NODES]
        summary = tasks.summary(self.plan_sweep()['points_full'])
        summary['points_run'] = tasks.points_run + nodes.points_run
        summary['stops'] = ([dict(stop, axis=STEP_TASKS) for stop in tasks.stops]
                            + [dict(stop, axis=STEP_NODES) for stop in nodes.stops])
        return {'sweep': summary, 'skipped_points': tasks.skipped_points + nodes.skipped_points}

    def point_directory(self, nodes, tasks_per_node):
        return os.path.join(self.tree, 'nodes%d-ppn%d' % (nodes, tasks_per_node))

    def point_program(self, directory, phase=None, repetitions=None):
        return mdtest_argv(self.opts, directory, self.mdtest, phase=phase, repetitions=repetitions)

    # -- setup -----------------------------------------------------------------------------

    def make_point_directory(self, point):
        """``lfs mkdir -c/-i`` (or mkdir), then ``lfs setstripe -c``; False with an error when a command fails."""
        directory = self.point_directory(point['nodes'], point['tasks_per_node'])
        if self.opts['mdt_count'] is not None or self.opts['mdt_index'] is not None:
            argv = [self.lfs, 'mkdir']
            if self.opts['mdt_count'] is not None:
                argv += ['-c', str(self.opts['mdt_count'])]
            if self.opts['mdt_index'] is not None:
                argv += ['-i', str(self.opts['mdt_index'])]
            if not self.layout_command(argv + [directory], point):
                return None
        else:
            os.mkdir(directory)
        if self.opts['stripe_count'] is not None:
            if not self.layout_command([self.lfs, 'setstripe', '-c', str(self.opts['stripe_count']), directory],
                                       point):
                return None
        return directory

    # -- running ---------------------------------------------------------------------------

    def run(self):
        """Both steps of the sweep, yielding a record as each point is measured (also kept in ``records``).

        A point an earlier attempt of the run finished (``done_points``) is not measured again: its record takes
        part in the choice of the best tasks per node and its figure in the adaptive stop rule of its step. An
        earlier nodes-step point at another tasks per node than the best is withdrawn (``withdraw_other_sweeps``).
        """
        tasks_records = []
        sweep = self.sweeps[STEP_TASKS]
        for point in self.tasks_points():
            if self._take_done(sweep, point, {'nodes': 1}, point['tasks_per_node'], tasks_records):
                continue
            if self._skipped(sweep, point, {'nodes': 1}, point['tasks_per_node']):
                continue
            record = self._measure_point(point)
            if record is not None:
                yield record
            if self.aborted:
                return
            if record is not None:
                tasks_records.append(record)
            sweep.measured({'nodes': 1}, point['tasks_per_node'], sweep_figure(record, self.opts['best_by']))
        self.best = choose_best(tasks_records, self.opts['best_by'])
        if self.best is None:
            self.error(None, 'no tasks-per-node point measured %s; the nodes step did not run' % self.opts['best_by'])
            return
        for record in tasks_records:
            record['best_tasks_per_node'] = record is self.best
        self.withdraw_other_sweeps()
        sweep = self.sweeps[STEP_NODES]
        outer = {'tasks_per_node': self.best['tasks_per_node']}
        for count in self.node_counts():
            if count == 1:
                # the best point of step 1 is this step's one-node point: the curve starts from it
                sweep.seen(outer, 1, sweep_figure(self.best, self.opts['best_by']))
                continue
            point = {'step': STEP_NODES, 'nodes': count, 'tasks_per_node': self.best['tasks_per_node'],
                     'tasks': count * self.best['tasks_per_node']}
            if self._take_done(sweep, point, outer, count):
                continue
            if self._skipped(sweep, point, outer, count):
                continue
            record = self._measure_point(point)
            if record is not None:
                yield record
            if self.aborted:
                break
            sweep.measured(outer, count, sweep_figure(record, self.opts['best_by']))

    def withdraw_other_sweeps(self):
        """List in ``withdrawn`` every nodes-step record of an earlier attempt measured at another tasks per node
        than ``best``: it was the best when that attempt ran, a tasks-per-node point measured since has beaten
        it, and the nodes step is measured again at the new best."""
        best = self.best['tasks_per_node']
        for record in self.done_points.values():
            if record['step'] != STEP_NODES or record['tasks_per_node'] == best:
                continue
            reason = ('measured at %d tasks per node, the best of the tasks-per-node step when %s ran; the best is '
                      'now %d tasks per node (measured by %s, %s %s), so the nodes step is measured again at %d'
                      % (record['tasks_per_node'], _attempt_text(record), best, _attempt_text(self.best),
                         self.opts['best_by'], _rate_text(best_rate(self.best, self.opts['best_by'])), best))
            self.withdrawn.append({'record': record, 'reason': reason,
                                   'point': dict((key, record[key]) for key in ('step', 'nodes', 'tasks_per_node'))})

    def _take_done(self, sweep, point, outer, x, kept=None):
        """True when an earlier attempt finished ``point``: its figure feeds the step's stop rule (while the step
        runs), its record joins ``kept``."""
        record = self.done_points.get(self.resume_key(point))
        if record is None:
            return False
        if sweep.stopped(outer, x) is None:
            sweep.measured(outer, x, sweep_figure(record, self.opts['best_by']))
        if kept is not None:
            kept.append(record)
        return True

    def _skipped(self, sweep, point, outer, x):
        """True when the adaptive sweep of its step has stopped: the point is listed with the reason, and the
        sweep's ``on_skip`` (wired by the module to the progress log) takes it out of the total."""
        reason = sweep.stopped(outer, x)
        if reason is None:
            return False
        sweep.skip(dict((key, point[key]) for key in ('step', 'nodes', 'tasks_per_node')), reason)
        return True

    def _launch(self, point, program):
        result = self.launch(point, point['nodes'], point['tasks_per_node'], program)
        if result is None:
            return None
        parsed = parse_mdtest(result.stdout)
        if result.rc != 0 or not parsed['summary']:
            self.launch_failed(point, result)
            return None
        return parsed

    def _measure_point(self, point):
        if self.runner.expired():
            self.stop(point, 'not run')
            return None
        directory = self.prepare_point(point)
        if directory is None:
            return None
        if self.opts['drop_caches']:
            parsed = self._measure_phases(point, directory)
        else:
            parsed = self._launch(point, self.point_program(directory))
        if parsed is None:
            return None
        record = dict(parsed)
        record.update(step=point['step'], nodes=point['nodes'], tasks_per_node=point['tasks_per_node'],
                      tasks=point['tasks'], mdtest_nodes=parsed.get('nodes'), mdtest_tasks=parsed.get('tasks'),
                      hosts=self.hosts[:point['nodes']], directory=directory, caches_dropped=self.opts['drop_caches'],
                      best_tasks_per_node=False)
        record['iterations'] = parsed.get('iterations') or self.opts['repetitions']
        self.record_done(record)
        return record

    def _drop_caches(self, point):
        """The cache-drop command once on every node of the point, through the same launcher."""
        result = self.launch(point, point['nodes'], 1, self.opts['drop_caches_command'], what='cache drop')
        if result is None:
            return False
        if result.rc != 0:
            self.error(point, 'cache drop failed (rc %s): %s' % (result.rc, (result.stderr or result.stdout).strip()))
            return False
        return True

    def _measure_phases(self, point, directory):
        """Each phase alone, caches dropped before each phase but the first, per iteration; statistics here."""
        rates = {}
        first = None
        for iteration in range(self.opts['repetitions']):
            iteration_directory = os.path.join(directory, 'iteration%d' % iteration)
            for phase in PHASES:
                if phase not in self.opts['phases']:
                    continue
                if phase != 'create' and not self._drop_caches(point):
                    return None
                parsed = self._launch(point, self.point_program(iteration_directory, phase=phase, repetitions=1))
                if parsed is None:
                    return None
                first = first or parsed
                for operation, stats in parsed['summary'].items():
                    # mdtest may print rows of the phases it did not run (zeros); keep this phase's own
                    if PHASE_WORDS[phase] in operation:
                        rates.setdefault(operation, []).append(stats.get('mean'))
        summary = dict((operation, iteration_statistics(values)) for operation, values in rates.items())
        return {'version': first['version'], 'tasks': first['tasks'], 'nodes': first['nodes'],
                'iterations': self.opts['repetitions'], 'summary': summary, 'unit': 'ops/sec'}


# --------------------------------------------------------------------------
# The report's samples


def record_samples(record, unused_ctx):
    """One record's samples for the report (``sample_extraction``): each operation's mean rate at its point."""
    # the sweep point of the mdtest module (nodes x tasks per node); a parsed mdtest text alone has only tasks
    point = extraction.make_point({'nodes': record.get('nodes'), 'tasks_per_node': record.get('tasks_per_node'),
                                   'tasks': record.get('tasks')})
    summary = record.get('summary') if isinstance(record.get('summary'), dict) else {}
    for operation, stats in summary.items():
        value = stats.get('mean') if isinstance(stats, dict) else None
        if extraction.is_finite_number(value):
            yield operation, extraction.UNIT_OPS_S, None, point, float(value), 'ok', record.get('iteration')
