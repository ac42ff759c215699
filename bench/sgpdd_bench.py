#!/usr/bin/env python3
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""sgpdd_survey module vs plain sgp_dd vs fio on one loop device: the two targets below, measured.

Targets: the module's aggregate MiB/s within 5% of plain ``sgp_dd`` run with identical parameters, and
the module's own overhead (process start, imports, safety probes, plan, parse, raw and result files)
under 2% of the survey's time.

Each repetition runs the same sweep (``--crghi``/``--thrhi`` doubling loops, write then read per point)
three ways, on the same loop device:

* **module**: ``plugins/modules/sgpdd_survey.py`` as Ansible runs it (a fresh Python process reading its
  arguments from a file), its envelope written to disk as the playbook's store would;
* **plain**: the very ``sgp_dd`` argument lists the module runs, started at once per point and action,
  timed from the first start to the last exit (what the module divides by);
* **fio**: per point one job per region (``numjobs`` = regions, ``iodepth`` = threads per region,
  ``offset_increment`` = region size), direct I/O, same record size.

Module and plain alternate which goes first (ABBA) so that drift of a shared machine hits both alike.
The ratio module/plain is formed per repetition (paired) and reported as mean ± sd over repetitions,
next to the MiB/s means.  The module's overhead is its wall time minus the time its sgp_dd children
ran (the sum of the points' measured elapsed times), in seconds and as a share of its wall time.

The loop device is backed by a sparse file on tmpfs (``/dev/shm``) by default, so that a disk's own
variance does not drown the differences looked for; ``--backing DIR`` puts the file elsewhere.
Needs root, sg3-utils and fio.  The file and the loop device are removed on exit, whatever happens.

    .venv/bin/python bench/sgpdd_bench.py                      # 2 GiB, crg 1-2, thr 1-8, 5 repetitions
    .venv/bin/python bench/sgpdd_bench.py --size-mib 512 --repetitions 3 --thrhi 4   # quicker look
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
ACTIONS = ('write', 'read')


def collections_root():
    """A directory holding ansible_collections/lustre/iokit that points at this checkout."""
    for candidate in (os.path.join(ROOT, '.venv', 'collections'), os.path.dirname(os.path.dirname(os.path.dirname(ROOT)))):
        if os.path.realpath(os.path.join(candidate, 'ansible_collections', 'lustre', 'iokit')) == os.path.realpath(ROOT):
            return candidate
    sys.exit('cannot import the collection: run `make setup` (links it into .venv/collections)')


sys.path.insert(0, collections_root())
from ansible_collections.lustre.iokit.plugins.module_utils.engines import sgpdd  # noqa: E402


# Runs the module as Ansible would and, at exit, prints the CPU seconds of the module's own process
# (its threads, not its sgp_dd children): an overhead measure that a loaded machine does not inflate.
CPU_REPORTER = '''
import atexit, resource, runpy, sys
def report():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    sys.stderr.write('module-cpu-s=%.4f\\n' % (usage.ru_utime + usage.ru_stime))
atexit.register(report)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name='__main__')
'''


def load_average():
    with open('/proc/loadavg', encoding='ascii') as handle:
        return ' '.join(handle.read().split()[:3])


class Bench:
    def __init__(self, args, device, workdir):
        self.args = args
        self.device = device
        self.workdir = workdir
        sectors = int(open('/sys/class/block/%s/size' % os.path.basename(device), encoding='ascii').read())
        target = sgpdd.Target(device, device, sgpdd.PATH_BLOCK, 512, sectors, os.path.basename(device),
                              os.path.basename(device))
        self.engine = sgpdd.SgpddSurvey(None, [target], args.size_mib, actions=ACTIONS, rszlo=args.rsz_kib,
                                        rszhi=args.rsz_kib, crglo=1, crghi=args.crghi, thrlo=1, thrhi=args.thrhi)
        self.points = [point for point in self.engine.plan() if point['skip'] is None]
        self.sizes_mib = {(point['crg'], point['thr'], action): point['size_kib'] / 1024.0
                          for point in self.points for action in ACTIONS}

    def module(self, run_id):
        """One module run: ({(point, action): MiB/s}, wall s, children s)."""
        args = {'ANSIBLE_MODULE_ARGS': {
            'devices': [self.device], 'size_mib': self.args.size_mib, 'crglo': 1, 'crghi': self.args.crghi,
            'thrlo': 1, 'thrhi': self.args.thrhi, 'rszlo': self.args.rsz_kib, 'rszhi': self.args.rsz_kib,
            'actions': list(ACTIONS), 'destroy_data': True, 'run_id': run_id, 'workdir': self.workdir}}
        args_file = os.path.join(self.workdir, 'args.json')
        with open(args_file, 'w', encoding='utf-8') as handle:
            json.dump(args, handle)
        env = dict(os.environ, PYTHONPATH=collections_root())
        started = time.monotonic()
        completed = subprocess.run([sys.executable, '-c', CPU_REPORTER, MODULE, args_file], capture_output=True,
                                   text=True, env=env, check=False)
        cpu_s = float(completed.stderr.rsplit('module-cpu-s=', 1)[1].split()[0])
        result = json.loads(completed.stdout)
        if result.get('failed') or result['status'] != 'ok':
            sys.exit('module failed: %s' % (result.get('msg') or result['errors']))
        with open(os.path.join(self.workdir, run_id, 'envelope.json'), 'w', encoding='utf-8') as handle:
            json.dump(result['envelope'], handle)
        wall = time.monotonic() - started
        rates, children = {}, 0.0
        for record in result['records']:
            for action, test in record['tests'].items():
                rates[(record['crg_per_dev'], record['thr_per_dev'], action)] = test['mib_s']
                children += test['elapsed_s']
        shutil.rmtree(os.path.join(self.workdir, run_id), ignore_errors=True)
        return rates, wall, children, cpu_s

    def plain(self):
        rates = {}
        for point in self.points:
            for action in ACTIONS:
                argvs = self.engine.commands(action, point)
                started = time.monotonic()
                processes = [subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                             for argv in argvs]
                for process in processes:
                    if process.wait() != 0:
                        sys.exit('sgp_dd failed: %s' % ' '.join(process.args))
                elapsed = time.monotonic() - started
                rates[(point['crg'], point['thr'], action)] = point['size_kib'] / 1024.0 / elapsed
        return rates

    def fio(self):
        rates = {}
        for point in self.points:
            region_mib = self.args.size_mib // point['crg']
            for action in ACTIONS:
                completed = subprocess.run(
                    ['fio', '--name=bench', '--filename=' + self.device, '--rw=' + action,
                     '--bs=%dk' % self.args.rsz_kib, '--ioengine=libaio', '--direct=1',
                     '--iodepth=%d' % (point['thr'] // point['crg']), '--numjobs=%d' % point['crg'],
                     '--size=%dM' % region_mib, '--offset=%d' % (sgpdd.DEFAULT_BOUNDARY_BLOCKS * 512),
                     '--offset_increment=%dM' % region_mib, '--group_reporting', '--output-format=json'],
                    capture_output=True, text=True, check=True)
                job = json.loads(completed.stdout)['jobs'][0][action]
                rates[(point['crg'], point['thr'], action)] = job['bw_bytes'] / 1048576.0
        return rates


def mean_sd(values):
    return statistics.mean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--size-mib', type=int, default=2048, help='MiB per action and point (default 2048)')
    parser.add_argument('--crghi', type=int, default=2, help='regions up to (default 2)')
    parser.add_argument('--thrhi', type=int, default=8, help='threads up to (default 8)')
    parser.add_argument('--rsz-kib', type=int, default=1024, help='record size in KiB (default 1024)')
    parser.add_argument('--repetitions', type=int, default=5)
    parser.add_argument('--backing', default='/dev/shm', help='directory of the loop device\'s file (default /dev/shm)')
    parser.add_argument('--no-fio', action='store_true', help='leave fio out')
    args = parser.parse_args()
    for tool in ('sgp_dd', 'losetup') + (() if args.no_fio else ('fio',)):
        if not shutil.which(tool):
            sys.exit('%s not found (apt-get install sg3-utils fio util-linux)' % tool)

    work = tempfile.mkdtemp(prefix='lustre-iokit-sgpdd-bench.')
    image_dir = tempfile.mkdtemp(prefix='lustre-iokit-sgpdd-bench.', dir=args.backing)
    device = None
    load_before = load_average()
    try:
        image = os.path.join(image_dir, 'disk.img')
        with open(image, 'wb') as handle:
            handle.truncate((args.size_mib + 64) * 1024 * 1024)
        device = subprocess.run(['losetup', '--find', '--show', '--direct-io=on', image], capture_output=True,
                                text=True, check=True).stdout.strip()
        bench = Bench(args, device, work)
        # Fill the file once: the first write to a sparse tmpfs file allocates its pages, later ones do not.
        bench.plain()
        keys = [(point['crg'], point['thr'], action) for point in bench.points for action in ACTIONS]
        measured = {tool: {key: [] for key in keys} for tool in ('module', 'plain', 'fio')}
        ratios = {key: [] for key in keys}
        total_ratios, plain_times = [], []
        overheads_s, overheads_pct, walls, cpus_s = [], [], [], []
        for repetition in range(args.repetitions):
            order = ('module', 'plain') if repetition % 2 == 0 else ('plain', 'module')
            got = {}
            wall = children = cpu_s = 0.0
            for tool in order:
                if tool == 'module':
                    got['module'], wall, children, cpu_s = bench.module('bench-%d' % repetition)
                else:
                    got['plain'] = bench.plain()
            if not args.no_fio:
                got['fio'] = bench.fio()
            for tool, rates in got.items():
                for key in keys:
                    measured[tool][key].append(rates[key])
            for key in keys:
                ratios[key].append(got['module'][key] / got['plain'][key])
            # the whole sweep: total MiB over total time, module vs plain
            plain_times.append(sum(point_mib / got['plain'][key] for key, point_mib in bench.sizes_mib.items()))
            total_ratios.append(sum(1.0 / got['plain'][key] for key in keys) / sum(1.0 / got['module'][key] for key in keys))
            cpus_s.append(cpu_s)
            overheads_s.append(wall - children)
            overheads_pct.append((wall - children) / wall * 100.0)
            walls.append(wall)
            print('repetition %d (%s first): module %.2f s, overhead %.3f s = %.2f%%, sweep module/plain %.3f, load %s'
                  % (repetition + 1, order[0], wall, overheads_s[-1], overheads_pct[-1], total_ratios[-1],
                     load_average()), flush=True)

        print('\n%s on a file in %s, %d MiB per action and point, %d KiB records, crg 1-%d, thr 1-%d, '
              '%d repetitions; mean ± sd' % (device, args.backing, args.size_mib, args.rsz_kib, args.crghi, args.thrhi,
                                             args.repetitions))
        print('load average before %s, after %s (%d CPUs)\n' % (load_before, load_average(), os.cpu_count()))
        print('| crg | thr | action | module MiB/s | plain sgp_dd MiB/s | fio MiB/s | module / plain (paired) |')
        print('|----:|----:|--------|-------------:|-------------------:|----------:|------------------------:|')
        for key in keys:
            module, plain = mean_sd(measured['module'][key]), mean_sd(measured['plain'][key])
            fio = '%.0f ± %.0f' % mean_sd(measured['fio'][key]) if not args.no_fio else '-'
            print('| %d | %d | %s | %.0f ± %.0f | %.0f ± %.0f | %s | %.3f ± %.3f |'
                  % (key[0], key[1], key[2], module[0], module[1], plain[0], plain[1], fio, *mean_sd(ratios[key])))
        print('\nwhole sweep, module / plain sgp_dd (time-weighted, paired): %.3f ± %.3f   (target >= 0.95)'
              % mean_sd(total_ratios))
        print('module wall time %.2f ± %.2f s; its own overhead (start, imports, probes, plan, parse, raw and result '
              'files) %.3f ± %.3f s = %.2f%% ± %.2f%% of it   (target < 2%%)'
              % (*mean_sd(walls), *mean_sd(overheads_s), *mean_sd(overheads_pct)))
        print('module process CPU (its own threads, not sgp_dd): %.3f ± %.3f s = %.2f%% of the plain sweep\'s time'
              % (*mean_sd(cpus_s), statistics.mean(cpus_s) / statistics.mean(plain_times) * 100.0))
    finally:
        if device:
            subprocess.run(['losetup', '--detach', device], check=False)
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(image_dir, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
