#!/usr/bin/env python3
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Time the fleet report on synthetic runs and print a table.

Each size is a run of N OSS with 8 OSTs and 8 LUNs each, the full default
sweep of obdfilter (obj 1-16, thr 1-64, write/rewrite/read) and sgpdd (crg
1-16, thr 1-16, write/read) as the native engines store them (one record per
point with the host's aggregate and every OST's / LUN's own figures), two MDS
with an mds-survey sweep, one client's ost-survey over every OST and an LNet self-test of every OSS's NID
against 16 clients (each NID's own figures, one NIC slow).  The diagnosis is given which LUN backs each OST
(ost_luns) and which host owns each NID (nid_owners).  A few
OSTs are made slow so that findings exist; the verdict uses the default
criteria, so every OST and LUN is judged among its peers.  Every size runs in its own
process, so that its peak memory (max RSS) is its own.

    .venv/bin/python bench/report_bench.py                 # 10, 100 and 1000 OSS
    .venv/bin/python bench/report_bench.py --oss 100 --keep /tmp/run100

Numbers are measured and printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# IOKIT_COLLECTIONS_PATH (':'-separated) benches another copy of the collection, as in tests/playbooks/conftest.py.
COLLECTIONS = os.environ.get('IOKIT_COLLECTIONS_PATH') or os.path.join(ROOT, '.venv', 'collections')
TEMPLATES = os.path.join(ROOT, 'roles', 'report', 'templates')
RUN_ID = '20261122T101500Z-bench'
OSTS_PER_OSS = 8


def _import_collection():
    # The checkout is linked as .venv/collections/ansible_collections/lustre/iokit by `make setup`.
    for path in reversed(COLLECTIONS.split(os.pathsep)):
        if path not in sys.path:
            sys.path.insert(0, path)
    from ansible_collections.lustre.iokit.plugins.module_utils import results
    from ansible_collections.lustre.iokit.plugins.plugin_utils import results_store
    from ansible_collections.lustre.iokit.plugins.plugin_utils.report import run
    return results, results_store, run


def _doubling(low: int, high: int) -> list[int]:
    values = []
    while low <= high:
        values.append(low)
        low *= 2
    return values


def _curve(peak: float, threads: int, knee: float, rng: random.Random) -> float:
    return round(peak * (1 - math.exp(-threads / knee)) * rng.uniform(0.97, 1.03), 2)


def _envelope(results, host: str, survey: str, parameters: dict, records: list) -> dict:
    builder = results.EnvelopeBuilder(RUN_ID, host, survey, 'native', parameters, now=1795342501)
    builder.set_environment(lustre_version='2.15.5')
    for record in records:
        builder.add_record(record)
    return builder.finish(now=1795343504)


def ost_luns(oss_count: int) -> dict:
    """Each OST of the synthetic run on its own LUN (what the diagnosis reads the LUN layer of an OST from)."""
    return {'testfs-OST%04x' % (index * OSTS_PER_OSS + ost): [['oss%04d' % (index + 1), '/dev/sd%s' % chr(ord('b') + ost)]]
            for index in range(oss_count) for ost in range(OSTS_PER_OSS)}


CLIENTS = 16


def _nid(number: int) -> str:
    return '10.%d.%d.%d@o2ib' % (number >> 16 & 255, number >> 8 & 255, number & 255)


def nid_owners(oss_count: int) -> dict:
    """Each OSS's and client's NID with its host, as the report role gathers them from the lnet role."""
    owners = {_nid(index + 1): 'oss%04d' % (index + 1) for index in range(oss_count)}
    owners.update({_nid(100000 + index): 'client%02d' % (index + 1) for index in range(CLIENTS)})
    return owners


def _lnet_records(oss_count: int, rng: random.Random) -> list:
    """LNet self-test of every OSS against the clients: each NID's own figures (lst stat per NID), one NIC slow."""
    slow = _nid(rng.randrange(oss_count) + 1)
    records = []
    for mode in ('read', 'write'):
        nodes = [{'nid': _nid(index + 1), 'role': 'server',
                  'read_mib_s': round(rng.uniform(1100, 1150) * (0.1 if _nid(index + 1) == slow else 1), 2),
                  'write_mib_s': round(rng.uniform(1100, 1150) * (0.1 if _nid(index + 1) == slow else 1), 2)}
                 for index in range(oss_count)]
        nodes += [{'nid': _nid(100000 + index), 'role': 'client', 'read_mib_s': round(rng.uniform(2000, 2100), 2),
                   'write_mib_s': round(rng.uniform(2000, 2100), 2)} for index in range(CLIENTS)]
        records.append({'mode': mode, 'split': 'all', 'complete': True, 'read_mib_s': 1000.0, 'write_mib_s': 1000.0,
                        'nodes': nodes})
    return records


def make_run(results_dir: str, oss_count: int, seed: int = 1) -> int:
    """Write a synthetic run; return the number of records."""
    results, results_store, _run = _import_collection()
    rng = random.Random(seed)
    records_total = 0
    slow = {(rng.randrange(oss_count), rng.randrange(OSTS_PER_OSS)) for _ in range(max(1, oss_count // 50))}
    all_osts = []
    for index in range(oss_count):
        host = 'oss%04d' % (index + 1)
        obdfilter, sgpdd = [], []
        targets = ['testfs-OST%04x' % (index * OSTS_PER_OSS + ost) for ost in range(OSTS_PER_OSS)]
        devices = ['/dev/sd%s' % chr(ord('b') + ost) for ost in range(OSTS_PER_OSS)]
        all_osts.extend(targets)
        factors = [0.55 if (index, ost) in slow else 1.0 for ost in range(OSTS_PER_OSS)]
        # As the native engines store them: one record per sweep point with the host's aggregate and each
        # OST's (per_ost) or LUN's (devices) own figures, so the report judges every OST and every LUN.
        for obj in _doubling(1, 16):
            for thr in _doubling(1, 64):
                if thr < obj:
                    continue
                per_ost = {target: {test: {'mib_s': _curve(peak * factor, thr, 6, rng), 'status': 'ok'}
                                    for test, peak in (('write', 1700), ('rewrite', 1650), ('read', 2100))}
                           for target, factor in zip(targets, factors)}
                obdfilter.append({'ost': OSTS_PER_OSS, 'size_kib': 8388608 * OSTS_PER_OSS, 'rsz_kib': 1024,
                                  'obj': obj * OSTS_PER_OSS, 'thr': thr * OSTS_PER_OSS, 'obj_per_ost': obj,
                                  'thr_per_ost': thr, 'case': 'disk', 'host': host, 'targets': targets,
                                  'skipped': False, 'error': None, 'per_ost': per_ost,
                                  'tests': {test: {'mib_s': round(sum(figures[test]['mib_s'] for figures in per_ost.values()), 2),
                                                   'min_mib_s': None, 'max_mib_s': None, 'status': 'ok'}
                                            for test in ('write', 'rewrite', 'read')}})
        for crg in _doubling(1, 16):
            for thr in _doubling(1, 16):
                if thr < crg:
                    continue
                tests = {}
                for test, peak in (('write', 1900), ('read', 2300)):
                    rates = [_curve(peak, thr, 3, rng) for _device in devices]
                    tests[test] = {'mib_s': round(sum(rates), 2), 'min_mib_s': None, 'max_mib_s': None, 'failed': 0,
                                   'status': 'ok',
                                   'devices': [{'device': device, 'failed': 0, 'min_mib_s': rate / crg,
                                                'max_mib_s': rate / crg} for device, rate in zip(devices, rates)]}
                sgpdd.append({'dev': OSTS_PER_OSS, 'size_kib': 8388608, 'rsz_kib': 1024, 'crg': crg * OSTS_PER_OSS,
                              'thr': thr * OSTS_PER_OSS, 'crg_per_dev': crg, 'thr_per_dev': thr, 'host': host,
                              'devices': devices, 'enomem': False, 'tests': tests})
        for survey, records in (('obdfilter', obdfilter), ('sgpdd', sgpdd)):
            results_store.write_envelope(results_dir, _envelope(results, host, survey, {'default_sweep': True}, records))
            records_total += len(records)
    for mds in ('mds01', 'mds02'):
        records = [{'mdt': 1, 'file': 100000, 'dir': d, 'thr': thr,
                    'tests': {test: {'ops_s': _curve(peak, thr, 8, rng), 'min_ops_s': None, 'max_ops_s': None,
                                     'status': 'ok'} for test, peak in (('create', 52000), ('lookup', 310000),
                                                                        ('md_getattr', 240000), ('destroy', 61000))}}
                   for d in _doubling(1, 4) for thr in _doubling(1, 64)]
        results_store.write_envelope(results_dir, _envelope(results, mds, 'mds', {}, records))
        records_total += len(records)
    osts = [{'ost': number, 'read_mib_s': round(rng.uniform(900, 1000), 3), 'write_mib_s': round(rng.uniform(700, 800), 3),
             'read_time_s': 1.0, 'write_time_s': 1.3, 'active': True} for number in range(len(all_osts))]
    results_store.write_envelope(results_dir, _envelope(results, 'client01', 'ost', {'fsname': 'testfs'},
                                                        [{'active_osts': len(osts), 'osts': osts}]))
    results_store.write_envelope(results_dir, _envelope(results, 'client01', 'lnet', {}, _lnet_records(oss_count, rng)))
    return records_total + 3


def child(oss_count: int, keep: str | None) -> dict:
    _results, _store, run = _import_collection()
    workdir = keep or tempfile.mkdtemp(prefix='report-bench-')
    try:
        started = time.monotonic()
        records = make_run(workdir, oss_count)
        generated_s = time.monotonic() - started
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        cpu_started = time.process_time()
        # The built-in criteria (every OST, LUN, MDT and host judged among its peers, completeness of every
        # host, layer efficiency) plus a floor.
        expected = {'obdfilter': ['oss%04d' % (index + 1) for index in range(oss_count)],
                    'sgpdd': ['oss%04d' % (index + 1) for index in range(oss_count)]}
        summary = run.generate(workdir, RUN_ID, TEMPLATES, acceptance_criteria={
            'floors': [{'metric': 'obdfilter_write_mib_s', 'min': 1200}]},
            default_criteria=True, expected=expected, make_baseline=True, ost_luns=ost_luns(oss_count),
            nid_owners=nid_owners(oss_count))
        cpu_s = time.process_time() - cpu_started
        run_dir = os.path.join(workdir, RUN_ID)
        sizes = {kind: os.path.getsize(path) for kind, path in summary['files'].items()}
        return {'oss': oss_count, 'records': records, 'samples': summary['samples'], 'generate_s': generated_s,
                'timings': summary['timings'], 'cpu_s': cpu_s, 'max_rss_mib': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                'rss_before_mib': rss_before / 1024, 'html_mib': sizes['html'] / 2 ** 20,
                'json_mib': sizes['samples'] / 2 ** 20, 'verdict': summary['verdict'], 'tests': summary['counts']['tests'],
                'findings': len(summary['findings']), 'components': _components(run_dir),
                'run_dir': run_dir}
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)


def _components(run_dir: str) -> int:
    # Read after the timing: the diagnosed components are in analysis.json only.
    with open(os.path.join(run_dir, 'analysis.json'), encoding='utf-8') as handle:
        return len(json.load(handle)['components'])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--oss', type=int, nargs='*', default=[10, 100, 1000], help='fleet sizes (OSS count)')
    parser.add_argument('--keep', help='keep the synthetic run in this directory (one size only)')
    parser.add_argument('--child', type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.keep)))
        return 0
    if args.keep and len(args.oss) != 1:
        parser.error('--keep needs exactly one --oss size')
    rows = []
    for size in args.oss:
        command = [sys.executable, os.path.abspath(__file__), '--child', str(size)]
        if args.keep:
            command += ['--keep', args.keep]
        completed = subprocess.run(command, check=True, capture_output=True, text=True)
        rows.append(json.loads(completed.stdout.strip().splitlines()[-1]))
    print('%6s %6s %8s %7s %8s %8s %8s %7s %10s %9s %9s %8s %7s %8s %10s' % (
        'OSS', 'OSTs', 'samples', 'load s', 'analyse', 'write s', 'total s', 'cpu s', 'cpu us/smp', 'peak MiB',
        'html MiB', 'json MiB', 'cases', 'findings', 'components'))
    for row in rows:
        timings = row['timings']
        print('%6d %6d %8d %7.2f %8.2f %8.2f %8.2f %7.2f %10.1f %9.0f %9.1f %8.1f %7d %8d %10d' % (
            row['oss'], row['oss'] * OSTS_PER_OSS, row['samples'], timings['load_s'], timings['analyse_s'],
            timings['write_s'], timings['total_s'], row['cpu_s'], 1e6 * row['cpu_s'] / max(row['samples'], 1),
            row['max_rss_mib'], row['html_mib'], row['json_mib'], row['tests'], row['findings'], row['components']))
    print('seconds are wall-clock (load/analyse/write/total) and CPU time of the report; cpu us/smp is CPU time per '
          'sample (flat when the cost grows linearly); peak MiB is the max RSS of the process, which also '
          'generated the synthetic run.')
    return 0


if __name__ == '__main__':
    sys.exit(main())
