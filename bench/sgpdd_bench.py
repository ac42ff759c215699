#!/usr/bin/env python3
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""sgpdd_survey module vs one plain sgp_dd vs fio, on one loop device, several repetitions.

Every repetition runs, in turn: the module (one sweep point: one region, ``--threads`` threads, write then
read), the same two ``sgp_dd`` commands the module runs, and ``fio`` (direct I/O, same block size, iodepth
= threads).  Prints MiB/s per tool and action with ratios, and the module's own overhead: its wall time
(process start to result written) minus the time its ``sgp_dd`` children ran, as a share of that time.

Needs root, sg3-utils and fio.  Creates a sparse file and a loop device in a temporary directory and
removes both on exit, whatever happens.

    sudo .venv/bin/python bench/sgpdd_bench.py --size-mib 1024 --repetitions 5
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE = os.path.join(ROOT, 'plugins', 'modules', 'sgpdd_survey.py')
BLOCK_SIZE = 512
BOUNDARY_BLOCKS = 1024


def collections_root():
    """A directory holding ansible_collections/lustre/iokit that points at this checkout."""
    for candidate in (os.path.join(ROOT, '.venv', 'collections'), os.path.dirname(os.path.dirname(os.path.dirname(ROOT)))):
        if os.path.realpath(os.path.join(candidate, 'ansible_collections', 'lustre', 'iokit')) == os.path.realpath(ROOT):
            return candidate
    sys.exit('cannot import the collection: run `make setup` (links it into .venv/collections)')


def run_module(device, size_mib, threads, rsz_kib, workdir, run_id):
    args = {'ANSIBLE_MODULE_ARGS': {
        'devices': [device], 'size_mib': size_mib, 'crglo': 1, 'crghi': 1, 'thrlo': threads, 'thrhi': threads,
        'rszlo': rsz_kib, 'rszhi': rsz_kib, 'actions': ['write', 'read'], 'destroy_data': True,
        'run_id': run_id, 'workdir': workdir}}
    args_file = os.path.join(workdir, 'args.json')
    with open(args_file, 'w', encoding='utf-8') as handle:
        json.dump(args, handle)
    env = dict(os.environ, PYTHONPATH=collections_root())
    started = time.monotonic()
    completed = subprocess.run([sys.executable, MODULE, args_file], capture_output=True, text=True, env=env, check=False)
    wall = time.monotonic() - started
    result = json.loads(completed.stdout)
    if result.get('failed') or result['status'] != 'ok':
        sys.exit('module failed: %s' % (result.get('msg') or result['errors']))
    # What the envelope says, stored as a playbook would store it.
    with open(os.path.join(workdir, run_id, 'envelope.json'), 'w', encoding='utf-8') as handle:
        json.dump(result['envelope'], handle)
    record = result['records'][0]
    children = sum(test['elapsed_s'] for test in record['tests'].values())
    return {action: record['tests'][action]['mib_s'] for action in ('write', 'read')}, wall, children


def sgp_dd_argv(action, device, size_mib, threads, rsz_kib):
    count = size_mib * 1024 * 1024 // BLOCK_SIZE
    common = ['thr=%d' % threads, 'count=%d' % count, 'bs=%d' % BLOCK_SIZE, 'bpt=%d' % (rsz_kib * 1024 // BLOCK_SIZE),
              'time=1']
    if action == 'write':
        return ['sgp_dd', 'if=/dev/zero', 'of=' + device, 'seek=%d' % BOUNDARY_BLOCKS] + common + ['oflag=direct']
    return ['sgp_dd', 'if=' + device, 'of=/dev/null', 'skip=%d' % BOUNDARY_BLOCKS] + common + ['iflag=direct']


def run_sgp_dd(device, size_mib, threads, rsz_kib):
    rates = {}
    for action in ('write', 'read'):
        started = time.monotonic()
        subprocess.run(sgp_dd_argv(action, device, size_mib, threads, rsz_kib), capture_output=True, check=True)
        rates[action] = size_mib / (time.monotonic() - started)
    return rates


def run_fio(device, size_mib, threads, rsz_kib):
    rates = {}
    for action in ('write', 'read'):
        completed = subprocess.run(
            ['fio', '--name=bench', '--filename=' + device, '--rw=' + action, '--bs=%dk' % rsz_kib,
             '--iodepth=%d' % threads, '--ioengine=libaio', '--direct=1', '--size=%dM' % size_mib,
             '--offset=%d' % (BOUNDARY_BLOCKS * BLOCK_SIZE), '--output-format=json'],
            capture_output=True, text=True, check=True)
        job = json.loads(completed.stdout)['jobs'][0][action]
        rates[action] = job['bw_bytes'] / 1048576.0
    return rates


def mean_sd(values):
    return statistics.mean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--size-mib', type=int, default=1024, help='MiB written then read per run (default 1024)')
    parser.add_argument('--threads', type=int, default=4, help='sgp_dd threads = fio iodepth (default 4)')
    parser.add_argument('--rsz-kib', type=int, default=1024, help='record (block) size in KiB (default 1024)')
    parser.add_argument('--repetitions', type=int, default=3)
    args = parser.parse_args()
    for tool in ('sgp_dd', 'fio', 'losetup'):
        if not shutil.which(tool):
            sys.exit('%s not found (apt-get install sg3-utils fio util-linux)' % tool)

    work = tempfile.mkdtemp(prefix='lustre-iokit-sgpdd-bench.')
    device = None
    try:
        image = os.path.join(work, 'disk.img')
        with open(image, 'wb') as handle:
            handle.truncate((args.size_mib + 64) * 1024 * 1024)
        device = subprocess.run(['losetup', '--find', '--show', '--direct-io=on', image], capture_output=True,
                                text=True, check=True).stdout.strip()
        measured = {'module': {'write': [], 'read': []}, 'sgp_dd': {'write': [], 'read': []},
                    'fio': {'write': [], 'read': []}}
        overheads = []
        for repetition in range(args.repetitions):
            rates, wall, children = run_module(device, args.size_mib, args.threads, args.rsz_kib, work,
                                               'bench-%d' % repetition)
            overheads.append((wall - children) / wall * 100.0)
            for tool, tool_rates in (('module', rates),
                                     ('sgp_dd', run_sgp_dd(device, args.size_mib, args.threads, args.rsz_kib)),
                                     ('fio', run_fio(device, args.size_mib, args.threads, args.rsz_kib))):
                for action, rate in tool_rates.items():
                    measured[tool][action].append(rate)
            print('repetition %d: module overhead %.2f%% of %.2f s' % (repetition + 1, overheads[-1], wall), flush=True)

        print('\n%s, %d MiB per action, %d KiB records, %d threads, %d repetitions (mean ± sd)\n'
              % (device, args.size_mib, args.rsz_kib, args.threads, args.repetitions))
        print('| action | module MiB/s | plain sgp_dd MiB/s | fio MiB/s | module / sgp_dd | module / fio |')
        print('|--------|-------------:|-------------------:|----------:|----------------:|-------------:|')
        for action in ('write', 'read'):
            module, sgp_dd, fio = (mean_sd(measured[tool][action]) for tool in ('module', 'sgp_dd', 'fio'))
            print('| %s | %.1f ± %.1f | %.1f ± %.1f | %.1f ± %.1f | %.3f | %.3f |'
                  % (action, module[0], module[1], sgp_dd[0], sgp_dd[1], fio[0], fio[1],
                     module[0] / sgp_dd[0], module[0] / fio[0]))
        overhead = mean_sd(overheads)
        print('\nmodule overhead (start, plan, parse, write results; wall time minus sgp_dd time): %.2f%% ± %.2f%%'
              % overhead)
    finally:
        if device:
            subprocess.run(['losetup', '--detach', device], check=False)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
