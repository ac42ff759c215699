#!/usr/bin/env python3
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/survey-obdfilter.yml on 1 to 128 SSH hosts: controller overhead and the ansible.cfg settings.

The hosts are network namespaces with sshd and one simulated OSS each (tests/tools/nethosts.py), reached over
real SSH.  Every run is the whole playbook (preflight, survey under async, polling, storing the envelopes,
cleanup, summary) with a tiny sweep, timed from the controller, and compared with what the hosts say:

* ``wall s``: the ansible-playbook process, start to exit;
* ``slowest s``: the largest ``duration_s`` of the hosts' envelopes (the survey module's own run time);
* ``span s``: earliest envelope ``started`` to latest ``finished`` (1 s resolution): the surveys' fleet window;
* ``wall/slow``: their ratio; ``over s``: wall minus slowest; ``ctl cpu/host``: CPU seconds the controller
  (ansible-playbook, its workers and ssh) spent per host;
* ``spread s``: latest envelope ``started`` minus the earliest; ``peak MiB``: the controller's peak PSS
  (ansible-playbook, its workers, ssh and the run's control masters); ``stdout/h``: stdout bytes per host;
* ``target s``: 1.25 x slowest + the start-up of the same profile and sweep on one host (``wall - slowest``
  there); ``ok`` says whether wall stayed within it.  This is the strictest reading of the target: it charges
  every per-host cost of a larger fleet (on this machine the simulated hosts' own CPU too) to the surveys' 25 %.

With two sweep sizes or more (``--size-mib 64,256``), a second table fits, per host count and profile,
``wall = slope x slowest + start-up`` over the sizes (least squares): the target "wall time within 1.25 x the
slowest host's survey time plus a fixed start-up" holds when the slope is at most 1.25 and the start-up is a
constant, i.e. the fit leaves small residuals.  Waiting that costs more the longer a survey runs (polling), or
surveys that do not run at the same time (forks below the host count, serial execution), give a slope above 1.

Profiles: ``shipped`` is inventories/example/ansible.cfg as is; the others change one thing against it
(``forks5``, ``no-pipelining``, ``no-persist``: ControlMaster off), and ``ansible-defaults`` is Ansible's
own defaults (forks 5, no pipelining, ControlPersist=60s).  Each run gets a fresh SSH control-socket
directory, so no run reuses another's connections.

With ``--callbacks on,off`` every run is made with the collection's stdout callback (``on``:
``lustre.iokit.survey_progress``, the shipped configuration's) and with Ansible's default one (``off``), alternately
(``--repeat`` times each), and a last table compares the controller's CPU of the two: per host, and per host and
poll of the wait (the whole run's CPU over the polls each host made: the fleet lines of ``on``, the
``FAILED - RETRYING`` lines of ``off``), and the callback's share of it.

Needs root (namespaces, mounts) and the fleet base image (tests/tools/fleet_images.py).  Everything it brings up
is torn down when it ends, also on Ctrl-C or SIGTERM.  The run ends with one ``fleet:`` line for the largest
fleet (the profile with the fewest forks).

    .venv/bin/python bench/fleet_bench.py                          # 1, 16, 64, 128 hosts, shipped and forks20
    .venv/bin/python bench/fleet_bench.py --hosts 16 --profiles shipped,forks5
    .venv/bin/python bench/fleet_bench.py --hosts 1,16 --profiles shipped --size-mib 64,256   # with the fit
    .venv/bin/python bench/fleet_bench.py --hosts 16 --profiles shipped --poll-s 1 --callbacks on,off --repeat 2
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import glob
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'tools'))

from nethosts import NetHosts  # noqa: E402  (a test tool, not a package)

# IOKIT_COLLECTIONS_PATH (':'-separated) benches another copy of the collection, such as a git worktree's
# (docs/testing.md); it must hold this checkout as lustre.iokit, which is checked before anything is brought up.
COLLECTIONS = os.environ.get('IOKIT_COLLECTIONS_PATH') or os.path.join(ROOT, '.venv', 'collections')
PLAYBOOK = os.path.join(ROOT, 'playbooks', 'survey-obdfilter.yml')
SHIPPED_CFG = os.path.join(ROOT, 'inventories', 'example', 'ansible.cfg')
ANSIBLE_PLAYBOOK = os.path.join(ROOT, '.venv', 'bin', 'ansible-playbook')
DEFAULT_SSH_ARGS = '-C -o ControlMaster=auto -o ControlPersist=60s'
# The stdout callback of a run: the collection's fleet line per poll (the shipped ansible.cfg's), or Ansible's default.
CALLBACKS = {'on': 'lustre.iokit.survey_progress', 'off': 'ansible.builtin.default'}
CALLBACK_RUNS = ['on']  # the callbacks this invocation compares (--callbacks)
FLEET_LINE = re.compile(r'^obdfilter: \d+ hosts?, ')
# the default callback names the task with its role: ``[oss1]: lustre.iokit.obdfilter : Wait for the survey (...)``
RETRY_LINE = re.compile(r'^FAILED - RETRYING: \[[^]]+\]: (\S+ : )?Wait for the survey ')
PROFILES = {
    'shipped': {},
    'forks5': {'ANSIBLE_FORKS': '5'},
    # fewer forks than hosts at 64 and 128 hosts: the root ansible.cfg's count
    'forks20': {'ANSIBLE_FORKS': '20'},
    'no-pipelining': {'ANSIBLE_PIPELINING': 'false'},
    'no-persist': {'ANSIBLE_SSH_ARGS': '-o ControlMaster=no'},
    'ansible-defaults': {'ANSIBLE_FORKS': '5', 'ANSIBLE_PIPELINING': 'false', 'ANSIBLE_SSH_ARGS': DEFAULT_SSH_ARGS},
}


def sweep_vars(args) -> dict:
    """The survey variables of every run but the sweep size, which each run adds."""
    # iokit_timeout_s bounds a run whose survey process is killed from outside (see README): the wait ends
    # after timeout + margin instead of the default hour; 600 s leaves room for 128 hosts' surveys on two cores.
    settings = {'iokit_timeout_s': 600, 'obdfilter_async_margin_s': 60, 'obdfilter_rszlo': 1024,
                'obdfilter_rszhi': 1024,
                'obdfilter_nobjlo': 1, 'obdfilter_nobjhi': 1, 'obdfilter_thrlo': 1, 'obdfilter_thrhi': args.thrhi,
                'obdfilter_tests': ['write', 'read']}
    if args.poll_s is not None:
        settings['obdfilter_poll_interval_s'] = args.poll_s
    return settings


def parse_time(text: str) -> float:
    return datetime.datetime.strptime(text, '%Y-%m-%dT%H:%M:%SZ').replace(tzinfo=datetime.timezone.utc).timestamp()


def close_control_sockets(directory: str) -> None:
    """End the ControlPersist masters of a run (they would otherwise linger until their idle timeout)."""
    for socket_path in glob.glob(os.path.join(directory, '*')):
        subprocess.run(['ssh', '-o', 'ControlPath=' + socket_path, '-O', 'exit', 'unused'],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def check_collections() -> None:
    """Refuse a collections path whose lustre.iokit is not this checkout: the numbers would be another copy's."""
    for path in COLLECTIONS.split(os.pathsep):
        found = os.path.join(path, 'ansible_collections', 'lustre', 'iokit')
        if os.path.isdir(found):
            if os.path.realpath(found) != os.path.realpath(ROOT):
                break
            return
    sys.exit('%s does not hold this checkout (%s) as lustre.iokit first: run `make setup`, or in a git worktree set '
             'IOKIT_COLLECTIONS_PATH (docs/testing.md)' % (COLLECTIONS, ROOT))


class MemorySampler:
    """Peak memory of the controller: the proportional set size (PSS) of ansible-playbook, every process below it
    and the SSH control masters of the run (they leave the process tree), summed, sampled every ``interval`` s.

    PSS shares a page among the processes that map it, so forked workers are not counted as whole copies.
    """

    def __init__(self, pid: int, control_dir: str, interval: float = 1.0):
        self.pid = pid
        self.control_dir = control_dir
        self.interval = interval
        self.peak_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *unused):
        self._stop.set()
        self._thread.join()

    def _loop(self):
        while not self._stop.is_set():
            self.peak_kib = max(self.peak_kib, self.sample())
            self._stop.wait(self.interval)

    def sample(self) -> int:
        parents = {}
        masters = set()
        for entry in os.listdir('/proc'):
            if not entry.isdigit():
                continue
            try:
                with open('/proc/%s/stat' % entry, encoding='utf-8', errors='replace') as handle:
                    stat = handle.read()
                parents[int(entry)] = int(stat[stat.rindex(')') + 2:].split()[1])
                with open('/proc/%s/cmdline' % entry, 'rb') as handle:
                    if self.control_dir.encode() in handle.read():
                        masters.add(int(entry))
            except (OSError, ValueError):
                continue
        tree = {self.pid} | masters
        grew = True
        while grew:
            below = set(pid for pid, parent in parents.items() if parent in tree) - tree
            grew = bool(below)
            tree |= below
        total = 0
        for pid in tree:
            try:
                with open('/proc/%d/smaps_rollup' % pid, encoding='utf-8') as handle:
                    for line in handle:
                        if line.startswith('Pss:'):
                            total += int(line.split()[1])
                            break
            except OSError:
                continue
        return total


def polls_per_host(log_path: str, callback: str, count: int) -> float:
    """The polls of the wait that found the survey still running, per host, from the run's output."""
    with open(log_path, encoding='utf-8') as handle:
        lines = handle.read().splitlines()
    if callback == 'on':
        # one fleet line per poll round, and one more once every host has ended
        return float(sum(1 for line in lines if FLEET_LINE.match(line) and not line.endswith(', done')))
    return sum(1 for line in lines if RETRY_LINE.match(line)) / float(count)


def run_playbook(profile: str, inventory: str, work: str, count: int, size_mib: int, args, callback: str = 'on') -> dict:
    """One measured run; a run some host did not finish is run again (up to twice), and counted in ``retries``."""
    failures = []
    for attempt in range(3):
        row = run_playbook_once(profile, inventory, work, count, size_mib, args, callback)
        if isinstance(row, dict):
            row['retries'] = attempt
            return row
        failures.append(row)
        print('.. %s' % row, file=sys.stderr, flush=True)
    sys.exit('%s on %d hosts failed three times: %s' % (profile, count, '; '.join(failures)))


def run_playbook_once(profile: str, inventory: str, work: str, count: int, size_mib: int, args,
                      callback: str = 'on') -> dict | str:
    run_id = 'bench-%d-%s-%s-%d-%s' % (count, profile, callback, size_mib, time.strftime('%H%M%S'))
    results_dir = os.path.join(work, 'results')
    control_dir = tempfile.mkdtemp(prefix='cp-', dir=work)
    env = dict(os.environ, ANSIBLE_CONFIG=SHIPPED_CFG, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS,
               ANSIBLE_SSH_CONTROL_PATH_DIR=control_dir, ANSIBLE_NOCOLOR='1')
    env.update(PROFILES[profile])
    env['ANSIBLE_STDOUT_CALLBACK'] = CALLBACKS[callback]
    extra = dict(sweep_vars(args), obdfilter_size_mib=size_mib, iokit_run_id=run_id, iokit_results_dir=results_dir)
    argv = [ANSIBLE_PLAYBOOK, PLAYBOOK, '-i', inventory, '-e', json.dumps(extra)]
    load = os.getloadavg()[0]
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    # stdout alone is what a container log (AWX) keeps of the run: its bytes are counted; stderr goes beside it.
    log_path = os.path.join(work, run_id + '.log')
    with open(log_path, 'w', encoding='utf-8') as log, open(log_path + '.stderr', 'w', encoding='utf-8') as errors:
        process = subprocess.Popen(argv, env=env, cwd=ROOT, stdout=log, stderr=errors)
        with MemorySampler(process.pid, control_dir) as memory:
            try:
                process.wait(timeout=900)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                close_control_sockets(control_dir)
                return 'ansible-playbook still running after 900 s; see %s' % log_path
            except BaseException:
                # Ctrl-C or SIGTERM (NetHosts turns it into KeyboardInterrupt): no playbook outlives the hosts
                process.kill()
                process.wait()
                close_control_sockets(control_dir)
                raise
    completed = process
    wall = time.monotonic() - started
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    close_control_sockets(control_dir)
    envelopes = []
    for path in glob.glob(os.path.join(results_dir, run_id, '*', 'obdfilter.json')):
        with open(path, encoding='utf-8') as handle:
            envelopes.append(json.load(handle))
    if completed.returncode or len(envelopes) != count:
        return ('%s on %d hosts: ansible-playbook rc %d, %d envelopes; see %s'
                % (profile, count, completed.returncode, len(envelopes), os.path.join(work, run_id + '.log')))
    spoiled = [envelope['host'] for envelope in envelopes if envelope['status'] != 'ok']
    if spoiled:
        return '%s on %d hosts: not ok on %s; see %s' % (profile, count, ', '.join(spoiled),
                                                          os.path.join(work, run_id + '.log'))
    stdout_bytes = os.path.getsize(log_path)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    slowest = max(envelope['duration_s'] for envelope in envelopes)
    span = max(parse_time(e['finished']) for e in envelopes) - min(parse_time(e['started']) for e in envelopes)
    # When the hosts' surveys began: the envelopes' ``started`` (whole seconds, the node's clock; the simulated hosts
    # share the controller's).
    starts = [parse_time(e['started']) for e in envelopes]
    return {'hosts': count, 'profile': profile, 'size_mib': size_mib, 'wall': wall, 'slowest': slowest, 'span': span,
            'cpu_per_host': cpu / count, 'load': load,
            'start_spread': max(starts) - min(starts), 'peak_mib': memory.peak_kib / 1024.0,
            'stdout_per_host': stdout_bytes / float(count), 'stdout_bytes': stdout_bytes, 'callback': callback,
            'polls': polls_per_host(os.path.join(work, run_id + '.log'), callback, count),
            'ok_hosts': sum(1 for envelope in envelopes if envelope['status'] == 'ok')}


def print_table(rows: list[dict]) -> None:
    startup = dict(((row['profile'], row['size_mib']), row['wall'] - row['slowest']) for row in rows if row['hosts'] == 1)
    header = '%5s %5s  %-16s %7s %9s %7s %9s %7s %12s %8s %3s %8s %8s %9s %6s %6s %7s' % (
        'size', 'hosts', 'profile', 'wall s', 'slowest s', 'span s', 'wall/slow', 'over s', 'ctl cpu/host', 'target s',
        'ok', 'spread s', 'peak MiB', 'stdout/h', 'load1', 'status', 'retries')
    print(header)
    for row in rows:
        target = '-'
        verdict = '-'
        if (row['profile'], row['size_mib']) in startup:
            limit = 1.25 * row['slowest'] + startup[(row['profile'], row['size_mib'])]
            target = '%.1f' % limit
            verdict = 'yes' if row['wall'] <= limit else 'NO'
        print('%5d %5d  %-16s %7.1f %9.1f %7.0f %9.2f %7.1f %12.2f %8s %3s %8.0f %8.0f %9.0f %6.1f %3d/%-2d %7d' % (
            row['size_mib'], row['hosts'], row['profile'] + ('/cb-' + row['callback'] if len(CALLBACK_RUNS) > 1 else ''),
            row['wall'], row['slowest'], row['span'],
            row['wall'] / row['slowest'], row['wall'] - row['slowest'], row['cpu_per_host'], target, verdict,
            row['start_spread'], row['peak_mib'], row['stdout_per_host'], row['load'], row['ok_hosts'], row['hosts'],
            row['retries']))
    sys.stdout.flush()


def summary_line(rows: list[dict]) -> str | None:
    """The issue's one line, for the largest fleet, from the profile with the fewest forks that ran at every size
    (forks below the host count is the case to prove), its smallest sweep size; ctl cpu/host also at 16 hosts."""
    largest = max(row['hosts'] for row in rows)
    candidates = [row for row in rows if row['hosts'] == largest]
    if not candidates:
        return None

    def forks(profile):
        return int(PROFILES[profile].get('ANSIBLE_FORKS', 64))
    row = min(candidates, key=lambda row: (forks(row['profile']), row['size_mib']))
    at16 = [other for other in rows if other['hosts'] == 16 and other['profile'] == row['profile']
            and other['size_mib'] == row['size_mib'] and other['callback'] == row['callback']]
    return ('fleet: %d hosts, wall/slowest %.2f, start spread %.0f s, ctl cpu/host %.0f ms (16 hosts: %s ms), '
            'stdout %.0f bytes/host' % (row['hosts'], row['wall'] / row['slowest'], row['start_spread'],
                                        1000 * row['cpu_per_host'],
                                        '%.0f' % (1000 * at16[0]['cpu_per_host']) if at16 else '-',
                                        row['stdout_per_host']))


def fit_startup(rows: list[dict]) -> list[dict]:
    """Per host count and profile run at two sweep sizes or more: wall = slope x slowest + start-up, least squares."""
    fits = []
    groups = {}
    for row in rows:
        groups.setdefault((row['hosts'], row['profile']), []).append(row)
    for (hosts, profile), group in sorted(groups.items()):
        # repeated runs of one size are not a fit
        if len(set(row['size_mib'] for row in group)) < 2 or len(set(row['slowest'] for row in group)) < 2:
            continue
        mean_x = sum(row['slowest'] for row in group) / len(group)
        mean_y = sum(row['wall'] for row in group) / len(group)
        slope = (sum((row['slowest'] - mean_x) * (row['wall'] - mean_y) for row in group)
                 / sum((row['slowest'] - mean_x) ** 2 for row in group))
        startup = mean_y - slope * mean_x
        residual = max(abs(row['wall'] - (slope * row['slowest'] + startup)) for row in group)
        fits.append({'hosts': hosts, 'profile': profile, 'sizes': sorted(row['size_mib'] for row in group),
                     'slope': slope, 'startup': startup, 'residual': residual})
    return fits


def print_fits(fits: list[dict]) -> None:
    if not fits:
        return
    print()
    print('%5s  %-16s %-12s %7s %10s %10s %3s' % ('hosts', 'profile', 'sizes MiB', 'slope', 'start-up s', 'max resid',
                                                 'ok'))
    for fit in fits:
        print('%5d  %-16s %-12s %7.2f %10.1f %10.1f %3s' % (
            fit['hosts'], fit['profile'], ','.join(str(size) for size in fit['sizes']), fit['slope'], fit['startup'],
            fit['residual'], 'yes' if fit['slope'] <= 1.25 else 'NO'))
    sys.stdout.flush()


def print_callbacks(rows: list[dict]) -> None:
    """Callback on against off, per host count, profile and size: controller CPU per host, and per host and poll."""
    groups = {}
    for row in rows:
        groups.setdefault((row['hosts'], row['profile'], row['size_mib']), {}).setdefault(row['callback'], []).append(row)
    compared = [(key, group) for key, group in sorted(groups.items()) if len(group) == 2]
    if not compared:
        return
    print()
    print('%5s %5s  %-16s %-8s %4s %12s %10s %15s %7s' % ('size', 'hosts', 'profile', 'callback', 'runs',
                                                         'ctl cpu/host', 'polls/host', 'ctl ms/host/poll', 'wall s'))
    for (hosts, profile, size_mib), group in compared:
        means = {}
        for callback in ('off', 'on'):
            runs = group[callback]
            cpu = sum(row['cpu_per_host'] for row in runs) / len(runs)
            polls = sum(row['polls'] for row in runs) / len(runs)
            means[callback] = cpu
            print('%5d %5d  %-16s %-8s %4d %12.3f %10.1f %15.1f %7.1f' % (
                size_mib, hosts, profile, callback, len(runs), cpu, polls, 1000.0 * cpu / polls if polls else 0.0,
                sum(row['wall'] for row in runs) / len(runs)))
        added = 100.0 * (means['on'] - means['off']) / means['off']
        spread = max(abs(row['cpu_per_host'] - means[row['callback']]) / means[row['callback']] * 100.0
                     for runs in group.values() for row in runs)
        print('       callback on vs off: %+.1f %% controller CPU (runs within %.1f %% of their mean); below 10 %%: %s'
              % (added, spread, 'yes' if added < 10.0 else 'NO'))
    sys.stdout.flush()


def print_summary(rows: list[dict]) -> None:
    line = summary_line(rows)
    if line:
        print()
        print(line)
        sys.stdout.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    parser.add_argument('--hosts', default='1,16,64,128', help='host counts, comma-separated (default %(default)s)')
    parser.add_argument('--profiles', default='shipped,forks20',
                        help='comma-separated, from %s (default %%(default)s)' % ', '.join(PROFILES))
    parser.add_argument('--size-mib', default='64',
                        help='obdfilter_size_mib, comma-separated; two or more also fit the start-up (default %(default)s)')
    parser.add_argument('--thrhi', type=int, default=2, help='obdfilter_thrhi; threads 1..thrhi (default %(default)s)')
    parser.add_argument('--ost-mib-s', type=float, default=16, help='throttle of every simulated OST')
    parser.add_argument('--poll-s', type=int, default=None,
                        help="obdfilter_poll_interval_s: how long each wait task blocks on the node (default: the "
                             "role's)")
    parser.add_argument('--callbacks', default='on',
                        help='stdout callbacks, comma-separated: on (lustre.iokit.survey_progress, the shipped '
                             "configuration's), off (ansible.builtin.default); default %(default)s")
    parser.add_argument('--repeat', type=int, default=1, help='runs of each profile and callback (default %(default)s)')
    parser.add_argument('--keep', help='keep logs and results in this directory')
    args = parser.parse_args()
    callbacks = args.callbacks.split(',')
    CALLBACK_RUNS[:] = callbacks
    if set(callbacks) - set(CALLBACKS):
        parser.error('--callbacks: choose from %s' % ', '.join(CALLBACKS))
    profiles = args.profiles.split(',')
    unknown = set(profiles) - set(PROFILES)
    if unknown:
        parser.error('--profiles: unknown %s; choose from %s' % (', '.join(sorted(unknown)), ', '.join(PROFILES)))
    counts = [int(value) for value in args.hosts.split(',')]
    sizes = [int(value) for value in args.size_mib.split(',')]
    check_collections()
    rows = []
    with contextlib.ExitStack() as stack:
        work = args.keep or stack.enter_context(tempfile.TemporaryDirectory(prefix='fleet-bench-'))
        os.makedirs(work, exist_ok=True)
        print('sweep: %s, obdfilter_size_mib %s; simulated OSTs throttled to %s MiB/s; %d CPUs'
              % (json.dumps(sweep_vars(args)), ','.join(str(size) for size in sizes), args.ost_mib_s, os.cpu_count()),
              flush=True)
        try:
            for count in counts:
                with NetHosts(count, ost_mib_s=args.ost_mib_s) as hosts:
                    inventory = os.path.join(work, 'hosts-%d.yml' % count)
                    with open(inventory, 'w', encoding='utf-8') as handle:
                        handle.write(hosts.inventory())
                    for size_mib in sizes:
                        for unused_round in range(args.repeat):
                            for profile in profiles:
                                for callback in callbacks:
                                    rows.append(run_playbook(profile, inventory, work, count, size_mib, args,
                                                             callback))
                                    print('.. %(hosts)d hosts, %(profile)s, callback %(callback)s, %(size_mib)d MiB: '
                                          'wall %(wall).1f s, slowest %(slowest).1f s, ctl cpu/host %(cpu_per_host).2f '
                                          's, start spread %(start_spread).0f s, peak %(peak_mib).0f MiB, stdout %(stdout_per_host).0f B/host, '
                                          '%(polls).1f polls/host' % rows[-1], file=sys.stderr, flush=True)
        except KeyboardInterrupt:
            print('interrupted; hosts torn down', file=sys.stderr)
            if rows:
                print_table(rows)
                print_fits(fit_startup(rows))
                print_callbacks(rows)
                print_summary(rows)
            return 130
    print_table(rows)
    print_fits(fit_startup(rows))
    print_callbacks(rows)
    print_summary(rows)
    return 0


if __name__ == '__main__':
    sys.exit(main())
