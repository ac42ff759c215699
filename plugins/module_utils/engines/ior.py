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
- ``-i <repetitions>``; optional stonewalling (``-D`` with wear-out, so every
  task moves the same amount and the read covers what was written);
- ``-v -v -v`` when ``per_task_timings`` is on (the default): every task
  prints the stamps of its phases, and each record gets ``per_client``, the
  write and read rate of each client node (see ``per_client_rates``).

Which client ran a task: the launch places ranks in blocks, ``mpirun`` with a
hostfile of ``slots=P`` lines fills the first host's P slots before the next,
``srun --ntasks-per-node P`` (block distribution) the same over the
allocation's nodes; so rank r ran on node ``r // P`` of the point's hosts.

The cache rule: with ``memory_factor`` F > 0 a point moves at least F times
the memory of the clients it uses, ``tasks x block x segments >= F x nodes x
client memory``; IOR's segment count is raised to the smallest that meets
it (the block per task stays as given). F = 0 turns the rule off for small
tests.

The launch (``mpirun`` with a hostfile or ``srun``, exactly P tasks on each
of N nodes, environment modules loaded first) and the marked test tree
``<mount>/<parent>/ior_<run_id>`` are the client-launch layer's
(module_utils/client_launch.py), shared with mdtest; here one directory per
point, striped with ``lfs setstripe -c/-S`` when asked.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import os
import shutil

from ansible_collections.lustre.iokit.plugins.module_utils import client_launch
from ansible_collections.lustre.iokit.plugins.module_utils import sample_extraction as extraction
from ansible_collections.lustre.iokit.plugins.module_utils.option_problem import OptionProblem
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.ior import parse_ior

# a refusal before anything is made (the client-launch layer's)
MARKER = '.lustre-iokit-ior'
TREE_PREFIX = 'ior_'
ACCESS = ('fpp', 'ssf')
MIB = 1024 * 1024

DEFAULTS = dict(client_launch.LAUNCH_DEFAULTS, **{
    'access': list(ACCESS),
    'block_size_mib': 1024,
    'transfer_sizes_kib': [1024],
    'tasks_per_node': [1],
    'nodes': None,
    'repetitions': 1,
    'memory_factor': 2.0,
    'client_memory_mib': None,
    'stonewall_s': 0,
    'stripe_count': None,
    'stripe_size_kib': None,
    'per_task_timings': True,
})
# How ranks map to client nodes, recorded with each point's per-client figures.
PLACEMENT_RULE = 'block: rank r on node r // tasks_per_node of the hosts, in launch order'


def with_defaults(options):
    return client_launch.merge_defaults(DEFAULTS, options)


def option_problems(options, host_count):
    """Invalid option values and combinations, each an OptionProblem (IOR's own, then the launch's)."""
    opts = with_defaults(options)
    problems = []
    unknown = [access for access in opts['access'] if access not in ACCESS]
    if not opts['access'] or unknown:
        problems.append(OptionProblem(
            'access', 'give one or both of fpp (file per process) and ssf (single shared file)',
            got=', '.join(str(a) for a in opts['access']) or 'nothing'))
    if opts['block_size_mib'] < 1:
        problems.append(OptionProblem('block_size_mib', 'must be at least 1 (MiB per task)',
                                      got=opts['block_size_mib']))
    problem = client_launch.positive_list_problem('transfer_sizes_kib', opts['transfer_sizes_kib'])
    if problem:
        problems.append(problem)
    else:
        uneven = [size for size in opts['transfer_sizes_kib'] if (opts['block_size_mib'] * 1024) % size]
        if uneven:
            problems.append(OptionProblem(
                'transfer_sizes_kib', 'IOR needs the block ({block_size_mib} %d = %d KiB) to be a multiple of every '
                'transfer size; %s KiB is not' % (opts['block_size_mib'], opts['block_size_mib'] * 1024,
                                                  ', '.join(str(size) for size in uneven)),
                mentions='block_size_mib'))
    if opts['memory_factor'] < 0:
        problems.append(OptionProblem('memory_factor', 'must be 0 (no cache rule) or more',
                                      got=opts['memory_factor']))
    elif opts['memory_factor'] > 0 and not opts['client_memory_mib']:
        problems.append(OptionProblem(
            'client_memory_mib', 'the cache rule ({memory_factor} %s) needs the memory of a client; give it, or set '
            '{memory_factor} 0' % opts['memory_factor'], mentions='memory_factor'))
    if opts['stonewall_s'] < 0:
        problems.append(OptionProblem('stonewall_s', 'must be 0 (off) or more seconds', got='%d' % opts['stonewall_s']))
    if opts['stripe_size_kib'] is not None and (opts['stripe_size_kib'] < 64 or opts['stripe_size_kib'] % 64):
        problems.append(OptionProblem('stripe_size_kib', 'must be a multiple of 64 KiB',
                                      got='%d' % opts['stripe_size_kib']))
    return problems + client_launch.launch_option_problems(opts, host_count)


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
             '-s', str(point['segments']), '-i', str(opts['repetitions'])]
    if opts['stonewall_s']:
        argv += ['-D', str(opts['stonewall_s']), '-O', 'stoneWallingWearOut=1']
    if opts['per_task_timings']:
        # verbosity 3: each task's phase stamps (the flag counts; IOR 2.x to 4.x)
        argv += ['-v', '-v', '-v']
    return argv + ['-o', test_file]


def per_client_rates(run, hosts, tasks_per_node, bytes_per_task):
    """Each client node's write and read rate (MiB/s, mean over iterations) from IOR's per-task stamps.

    A client's rate in one phase of one iteration is the bytes its tasks moved
    (``tasks_per_node x bytes_per_task``) over its own span, the earliest open
    start to the latest close stop of those tasks (IOR's total time, for one
    node). A phase where one of its tasks' stamps is missing gives no value.
    Returns a list in host order, or None when the output has no per-task lines.
    """
    timings = run.get('task_timings') if run else None
    if not timings or tasks_per_node < 1:
        return None
    spans = {}
    for row in timings:
        node = row['task'] // tasks_per_node
        if node >= len(hosts):
            continue
        key = (node, row['access'], row['iter'])
        entry = spans.setdefault(key, {'tasks': set(), 'first': None, 'last': None, 'complete': True})
        entry['tasks'].add(row['task'])
        if row['open_start'] is None or row['close_stop'] is None:
            entry['complete'] = False
            continue
        entry['first'] = row['open_start'] if entry['first'] is None else min(entry['first'], row['open_start'])
        entry['last'] = row['close_stop'] if entry['last'] is None else max(entry['last'], row['close_stop'])
    clients = []
    for node, host in enumerate(hosts):
        client = {'host': host, 'node': node,
                  'tasks': list(range(node * tasks_per_node, (node + 1) * tasks_per_node))}
        for access in ('write', 'read'):
            rates = []
            iterations = sorted(key[2] for key in spans if key[0] == node and key[1] == access)
            for iteration in iterations:
                entry = spans[(node, access, iteration)]
                seconds = (entry['last'] - entry['first']) if entry['complete'] and entry['first'] is not None else 0
                if len(entry['tasks']) != tasks_per_node or seconds <= 0:
                    rates = None
                    break
                rates.append(tasks_per_node * bytes_per_task / seconds / MIB)
            client['ior_%s_mib_s' % access] = round(sum(rates) / len(rates), 2) if rates else None
        clients.append(client)
    return clients


def point_name(point):
    return '%s-nodes%d-ppn%d-xfer%dk' % (point['access'], point['nodes'], point['tasks_per_node'],
                                         point['transfer_kib'])


class IorSurvey(client_launch.ClientTreeSurvey):
    """Checks, plans, runs and cleans up one IOR sweep launched from this client (``ior``: the program)."""

    SURVEY = 'ior'
    MARKER = MARKER
    TREE_PREFIX = TREE_PREFIX
    DEFAULTS = DEFAULTS
    # The progress log shows a point by these keys and weighs it by the bytes it writes (and reads again).
    PROGRESS_KEYS = ('access', 'nodes', 'tasks_per_node', 'transfer_kib')
    PROGRESS_WEIGHT = 'bytes_per_phase'

    def __init__(self, context, mount_point, hosts, options=None, ior='ior',
                 **kwargs):
        client_launch.ClientTreeSurvey.__init__(self, context, mount_point, hosts, options, **kwargs)
        self.ior = ior

    def point_key(self, point):
        """The point as its error names it in the envelope (a dict of its sweep coordinates)."""
        return dict((key, point[key]) for key in self.PROGRESS_KEYS)

    # -- plan ------------------------------------------------------------------------------

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

    def bytes_per_phase(self, points):
        """Bytes the sweep of ``points`` writes (and reads again), every iteration."""
        return sum(point['bytes_per_phase'] for point in points) * self.opts['repetitions']

    def plan(self):
        points = self.points()
        first = points[0] if points else None
        total = self.bytes_per_phase(points)
        plan = self.plan_common()
        plan.update({
            'points': [dict(point, hosts=self.hosts[:point['nodes']]) for point in points],
            'bytes_written': total,
            'bytes_read': total,
            'cache_rule': {'memory_factor': self.opts['memory_factor'],
                           'client_memory_mib': self.opts['client_memory_mib']},
            'first_command': self.point_command(first) if first else None,
            'layout': {'stripe_count': self.opts['stripe_count'], 'stripe_size_kib': self.opts['stripe_size_kib']},
        })
        return plan

    def point_directory(self, point):
        return os.path.join(self.tree, point_name(point))

    def point_program(self, point):
        return ior_argv(self.opts, point, os.path.join(self.point_directory(point), 'ior.dat'), self.ior)

    def point_command(self, point):
        return self.launch_command(point['nodes'], point['tasks_per_node'], self.point_program(point))

    def make_point_directory(self, point):
        directory = self.point_directory(point)
        os.mkdir(directory)
        argv = [self.lfs, 'setstripe']
        if self.opts['stripe_count'] is not None:
            argv += ['-c', str(self.opts['stripe_count'])]
        if self.opts['stripe_size_kib'] is not None:
            argv += ['-S', '%dk' % self.opts['stripe_size_kib']]
        if len(argv) > 2 and not self.layout_command(argv + [directory], point):
            return None
        return directory

    # -- running ---------------------------------------------------------------------------

    def run(self):
        """Every point in turn but those an earlier attempt of the run finished (``done_points``), yielding a
        record as each is measured (also kept in ``records``)."""
        for point in self.points():
            if self.resume_key(point) in self.done_points:
                continue
            if self.runner.expired():
                self.stop(point, 'not run')
                break
            record = self._measure_point(point)
            if record is not None:
                yield record
            if self.aborted:
                break

    def _measure_point(self, point):
        directory = self.prepare_point(point)
        if directory is None:
            return None
        result = self.launch(point, point['nodes'], point['tasks_per_node'], self.point_program(point))
        if result is None:
            return None
        runs = parse_ior(result.stdout)
        run = runs[-1] if runs else None
        if result.rc != 0 or run is None or not run['summary']:
            self.launch_failed(point, result, '; '.join(run['errors']) if run and run['errors'] else None)
            return None
        record = dict(point, hosts=self.hosts[:point['nodes']], directory=directory, ior=run,
                      read_from_own_cache=point['nodes'] == 1)
        for operation in ('write', 'read'):
            row = _summary_row(run, operation)
            record['ior_%s_mib_s' % operation] = row['mean_mib_s'] if row else None
            record['ior_%s_max_mib_s' % operation] = row['max_mib_s'] if row else None
        if self.opts['per_task_timings']:
            record['per_client'] = per_client_rates(run, record['hosts'], point['tasks_per_node'],
                                                    point['bytes_per_phase'] // point['tasks'])
            record['placement'] = PLACEMENT_RULE
            # the records keep the figures, not every task's stamps
            run.pop('task_timings', None)
        self.record_done(record)
        # IOR removed its files; drop the empty point directory now so the tree stays small.
        shutil.rmtree(directory, ignore_errors=True)
        return record


def _summary_row(run, operation):
    for row in run['summary']:
        if row['operation'] == operation:
            return row
    return None


# --------------------------------------------------------------------------
# The report's samples


def record_samples(record, ctx):
    """One record's samples for the report (``sample_extraction``): the clients' aggregate write and read rates at
    the point, and with several clients each one's own."""
    # one point of the ior module's sweep: access pattern x nodes x tasks per node x transfer size
    point = extraction.make_point({'access': record.get('access'), 'nodes': record.get('nodes'),
                                   'tasks_per_node': record.get('tasks_per_node'),
                                   'transfer_kib': record.get('transfer_kib')})
    measured = False
    for test in ('write', 'read'):
        value = record.get('ior_%s_mib_s' % test)
        if extraction.is_finite_number(value):
            measured = True
            yield test, extraction.UNIT_MIB_S, None, point, float(value), 'ok', record.get('iteration')
    if not measured:
        ctx['problems'].append('%s on %s node(s): no bandwidth' % (record.get('access'), record.get('nodes')))
    # Each client node's own rate from IOR's per-task stamps (per_task_timings), as ior_client_write_mib_s and
    # ior_client_read_mib_s: the clients of one launch are peers at that point, so a slow one is named, and a
    # floor on the aggregate (ior_write_mib_s) is never held against one client's share. One client alone has no
    # peer and its figure is the aggregate again: none then.
    clients = record.get('per_client') if isinstance(record.get('per_client'), list) else []
    for client in clients if len(clients) > 1 else ():
        if not isinstance(client, dict) or not isinstance(client.get('host'), str):
            continue
        for test in ('write', 'read'):
            value = client.get('ior_%s_mib_s' % test)
            if extraction.is_finite_number(value):
                yield ('client ' + test, extraction.UNIT_MIB_S, client['host'], point, float(value), 'ok',
                       record.get('iteration'))
