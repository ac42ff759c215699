#!/usr/bin/env python3
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What statistics collection costs a survey: the target is an overhead under 3% of survey throughput.

One simulated OSS (lustre-sim), one obdfilter survey sweep, run again and again in three ways:

* **bare**: ``obdfilter_survey`` alone;
* **stats**: ``stats_collect`` started as the survey playbooks start it (``stats_collect_enabled``: the
  role's defaults, vmstat, brw_stats and, when sysstat is installed, iostat every second; service and
  client counters snapshotted at start and stop), the same survey, then ``stats_collect`` collected;
* **stats-1s**: as ``stats`` but every Lustre collector also sampled every second (``brw_interval``,
  ``service_interval``, ``client_interval`` 1), the heaviest setting a user would pick.

Every module runs as Ansible runs it: a fresh Python process reading its arguments from a file.  The
throughput of a run is the mean over its sweep points and tests of the aggregate MiB/s the survey
reports.  The three ways run interleaved within each repetition, their order rotated from one
repetition to the next, so that drift of a shared machine hits all alike; the ratio stats/bare is
formed per repetition (paired) and reported as mean, standard deviation and a 95% confidence interval,
next to the MiB/s means.  Overhead is 1 - ratio.

The OSTs are throttled by default (``--ost-mib-s 10``), as a disk-bound OSS is, which keeps the
throughput steady enough on a shared machine to see a few percent; ``--ost-mib-s 0`` leaves the
simulator's I/O bound by CPU, where samplers compete with the survey the most (and where a loaded
machine's noise is far larger than 3%).

    .venv/bin/python bench/stats_bench.py                          # 6 repetitions, OSTs at 10 MiB/s
    .venv/bin/python bench/stats_bench.py --repetitions 4 --size-mib 32   # quicker look
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_BIN = os.path.join(ROOT, '.venv', 'bin')
MODULES = os.path.join(ROOT, 'plugins', 'modules')
MODES = ('bare', 'stats', 'stats-1s')
# Student's t for a two-sided 95% interval, by degrees of freedom (more than 30: the normal value).
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23, 12: 2.18,
       15: 2.13, 20: 2.09, 30: 2.04}


def collections_root():
    """A directory holding ansible_collections/lustre/iokit that points at this checkout."""
    for candidate in (os.path.join(ROOT, '.venv', 'collections'), os.path.dirname(os.path.dirname(os.path.dirname(ROOT)))):
        if os.path.realpath(os.path.join(candidate, 'ansible_collections', 'lustre', 'iokit')) == os.path.realpath(ROOT):
            return candidate
    sys.exit('cannot import the collection: run `make setup` (links it into .venv/collections)')


def t95(degrees):
    return next((T95[key] for key in sorted(T95) if key >= degrees), 1.96)


def load_average():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float('nan')


class Node:
    def __init__(self, base, args):
        self.base = base
        self.args = args
        self.root = os.path.join(base, 'node')
        self.workdir = os.path.join(base, 'work')
        sim = shutil.which('lustre-sim', path=VENV_BIN + os.pathsep + os.environ.get('PATH', ''))
        if sim is None:
            sys.exit('lustre-sim is not installed in .venv (make setup)')
        command = [sim, 'init', '--root', self.root, '--osts', str(args.osts), '--ost-size-mib',
                   str(args.size_mib * 4 + 64), '--force']
        if args.ost_mib_s:
            command += ['--ost-mib-s', str(args.ost_mib_s)]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        self.sim = sim
        self.env = dict(os.environ, PYTHONPATH=collections_root(), LUSTRE_SIM_ROOT=self.root,
                        PATH=os.path.join(self.root, 'bin') + os.pathsep + os.environ['PATH'])
        self.counter = 0
        self.child = None

    def module(self, name, arguments):
        self.counter += 1
        args_file = os.path.join(self.base, 'args-%d.json' % self.counter)
        with open(args_file, 'w', encoding='utf-8') as handle:
            json.dump({'ANSIBLE_MODULE_ARGS': arguments}, handle)
        self.child = subprocess.Popen([sys.executable, os.path.join(MODULES, name + '.py'), args_file],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env)
        stdout, stderr = self.child.communicate()
        try:
            result = json.loads(stdout)
        except ValueError:
            sys.exit('%s did not return JSON: %s %s' % (name, stdout[-2000:], stderr[-2000:]))
        if result.get('failed'):
            sys.exit('%s failed: %s' % (name, result.get('msg')))
        return result

    def survey(self, run_id):
        result = self.module('obdfilter_survey', {
            'size_mib': self.args.size_mib, 'nobjlo': 1, 'nobjhi': 1, 'thrlo': 1, 'thrhi': self.args.thrhi,
            'tests': ['write', 'read'], 'workdir': self.workdir, 'run_id': run_id, 'timeout': 3600})
        # A test too short for one-second samples is `short`, its aggregate MiB/s still measured.
        rates = [test['mib_s'] for record in result['records'] for test in record['tests'].values()
                 if test.get('status') in ('ok', 'short') and test.get('mib_s') is not None]
        if result['status'] != 'ok' or not rates:
            sys.exit('the survey was not ok: %s %s' % (result['status'], result['errors']))
        return statistics.mean(rates)

    def run(self, mode, run_id):
        """One survey in ``mode``; returns (MiB/s, seconds the statistics added outside the survey)."""
        if mode == 'bare':
            return self.survey(run_id), 0.0
        options = {'run_id': run_id, 'workdir': self.workdir}
        # roles/stats_collect's defaults, what every survey playbook collects with (the module's own brw default
        # is the I/O kit's 0: snapshots at start and stop only).
        options.update(vmstat_interval=1, iostat_interval=1, brw_interval=1, service_interval=0, client_interval=0)
        if mode == 'stats-1s':
            options.update(service_interval=1, client_interval=1)
        started = time.monotonic()
        self.module('stats_collect', dict(options, state='started'))
        start_s = time.monotonic() - started
        rate = self.survey(run_id)
        started = time.monotonic()
        collected = self.module('stats_collect', {'state': 'collected', 'run_id': run_id, 'workdir': self.workdir})
        collect_s = time.monotonic() - started
        if collected['status'] != 'ok' or not collected['records']:
            sys.exit('stats_collect did not collect: %s %s' % (collected['status'], collected['errors']))
        brw = [record for record in collected['records'] if record['collector'] == 'brw']
        if not any(record['histograms'].get('disk I/O size') for record in brw):
            sys.exit('stats_collect saw no disk I/O during the survey')
        # Each run gets a fresh run directory: drop it, so that the disk does not fill over many repetitions.
        shutil.rmtree(os.path.join(self.workdir, run_id), ignore_errors=True)
        return rate, start_s + collect_s

    def close(self):
        # Stopped half-way (a signal): the module running now finishes what it started (its samplers are then
        # recorded), and the collection's own cleanup stops every sampler recorded in the node state.
        if self.child is not None and self.child.poll() is None:
            self.child.wait()
        self.child = None
        self.module('iokit_cleanup', {'workdir': self.workdir})
        subprocess.run([self.sim, 'destroy', '--root', self.root], check=False, stdout=subprocess.DEVNULL)


def summary(values):
    mean = statistics.mean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    half = t95(len(values) - 1) * sd / len(values) ** 0.5 if len(values) > 1 else float('nan')
    return mean, sd, half


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--repetitions', type=int, default=6)
    parser.add_argument('--size-mib', type=int, default=32, help='MiB per OST per test')
    parser.add_argument('--osts', type=int, default=2)
    parser.add_argument('--thrhi', type=int, default=2, help='threads per OST, doubling from 1')
    parser.add_argument('--ost-mib-s', type=int, default=10, help='throttle every OST (0: unthrottled)')
    args = parser.parse_args()

    # A SIGTERM (timeout, Ctrl-C from a wrapper) still runs the finally below: the simulated node goes away.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit('stopped by signal %d' % signum))
    base = tempfile.mkdtemp(prefix='stats-bench-')
    node = None
    rates = dict((mode, []) for mode in MODES)
    extra_s = dict((mode, []) for mode in MODES)
    ratios = dict((mode, []) for mode in MODES[1:])
    loads = []
    try:
        node = Node(base, args)
        node.survey('warm-up')
        for repetition in range(args.repetitions):
            order = MODES[repetition % len(MODES):] + MODES[:repetition % len(MODES)]
            measured = {}
            for mode in order:
                loads.append(load_average())
                measured[mode] = node.run(mode, 'bench-%d-%s' % (repetition, mode))
                rates[mode].append(measured[mode][0])
                extra_s[mode].append(measured[mode][1])
            for mode in MODES[1:]:
                ratios[mode].append(measured[mode][0] / measured['bare'][0])
            print('repetition %d: %s' % (repetition + 1, ', '.join(
                '%s %.1f MiB/s' % (mode, measured[mode][0]) for mode in MODES)), file=sys.stderr)
    finally:
        if node is not None:
            node.close()
        shutil.rmtree(base, ignore_errors=True)

    print('obdfilter survey on lustre-sim: %d OSTs x %d MiB per test, threads 1-%d, write+read, %s; %d repetitions,'
          ' load average %.1f-%.1f' % (args.osts, args.size_mib, args.thrhi,
                                       'OSTs at %d MiB/s' % args.ost_mib_s if args.ost_mib_s else 'unthrottled',
                                       args.repetitions, min(loads), max(loads)))
    print('%-9s %12s %10s %16s %18s %14s' % ('mode', 'MiB/s mean', 'MiB/s sd', 'ratio to bare', 'ratio 95% CI',
                                               'start+collect s'))
    for mode in MODES:
        mean, sd, unused_half = summary(rates[mode])
        if mode == 'bare':
            print('%-9s %12.1f %10.1f %16s %18s %14s' % (mode, mean, sd, '1', '-', '-'))
            continue
        ratio, ratio_sd, half = summary(ratios[mode])
        print('%-9s %12.1f %10.1f %9.4f ± %.4f %8.4f - %.4f %14.2f' % (
            mode, mean, sd, ratio, ratio_sd, ratio - half, ratio + half, statistics.mean(extra_s[mode])))
    for mode in MODES[1:]:
        ratio, unused_sd, half = summary(ratios[mode])
        verdict = ('met' if ratio - half >= 0.97 else 'not met' if ratio + half < 0.97
                   else 'not decided at this noise (the interval spans 3%)')
        print('%s: overhead %.2f%% of survey throughput (95%% CI %.2f%% to %.2f%%); target < 3%%: %s'
              % (mode, (1 - ratio) * 100, (1 - ratio - half) * 100, (1 - ratio + half) * 100, verdict))


if __name__ == '__main__':
    main()
