# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Time `make test` the way CI runs it: a fresh clone of this checkout's HEAD, `.ci/run` with CI=true.

Prints every stage's wall time (the suite's own table), the set-up before the first stage, the CPU time of the
whole run and the load average it met, then one summary line:

    make test: 27.4 min wall (set-up 5.1 min), 41.0 min CPU, quiet, 17 stages passed, 0 failed

``--load N`` keeps N busy loops running beside it under ``nice -n 10`` (the loaded target: both cores busy);
the CPU time is read from a cgroup v1 cpuacct group when the machine has one (else from the run's children).
The suite's targets are 30 minutes quiet and 60 minutes loaded on the 2-core machine (docs/testing.md).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPUACCT = '/sys/fs/cgroup/cpuacct'
STAGE_ROW = re.compile(r'^(\S+)\s+(ok|FAILED)\s+([\d.]+)\s+([\d.]+)$')


def _load_average_sampler(samples: list[float], stop: threading.Event) -> None:
    while not stop.wait(30):
        with open('/proc/loadavg', encoding='utf-8') as handle:
            samples.append(float(handle.read().split()[0]))


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--load', type=int, default=0, help='busy loops under nice -n 10 beside the run (default 0)')
    parser.add_argument('--dest', help='where to clone (default: a new directory beside this checkout)')
    parser.add_argument('--ref', default='HEAD', help='what to clone (default: HEAD)')
    args = parser.parse_args()

    dest = args.dest or tempfile.mkdtemp(prefix='suite-bench-', dir=os.path.dirname(ROOT))
    subprocess.run(['git', 'clone', '-q', ROOT, dest], check=True)
    subprocess.run(['git', 'checkout', '-q', args.ref], cwd=dest, check=True)
    log_path = os.path.join(dest, 'make-test.log')
    group = None
    if os.path.isdir(CPUACCT) and os.access(CPUACCT, os.W_OK):
        group = os.path.join(CPUACCT, 'iokit-suite-bench-%d' % os.getpid())
        os.mkdir(group)
    # A `kill` of the bench ends it through the finally below, which stops the busy loops (they would otherwise load
    # the machine until someone finds them).
    signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))
    loops = [subprocess.Popen(['nice', '-n', '10', sys.executable, '-c', 'while True: pass'])
             for _ in range(args.load)]
    samples: list[float] = []
    stop = threading.Event()
    sampler = threading.Thread(target=_load_average_sampler, args=(samples, stop), daemon=True)
    sampler.start()
    started = time.monotonic()
    first_stage = None
    try:
        def join_group() -> None:
            if group:
                with open(os.path.join(group, 'cgroup.procs'), 'w', encoding='utf-8') as handle:
                    handle.write(str(os.getpid()))

        with open(log_path, 'w', encoding='utf-8') as log:
            run = subprocess.Popen(['bash', '.ci/run'], cwd=dest, env=dict(os.environ, CI='true'), stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors='replace',
                                   preexec_fn=join_group)  # pylint: disable=subprocess-popen-preexec-fn
            for line in run.stdout:
                log.write(line)
                if first_stage is None and line.startswith('==== stage '):
                    first_stage = time.monotonic()
            rc = run.wait()
    finally:
        wall = time.monotonic() - started
        stop.set()
        for loop in loops:
            loop.kill()
            loop.wait()
    if group:
        with open(os.path.join(group, 'cpuacct.usage'), encoding='utf-8') as handle:
            cpu = int(handle.read()) / 1e9
        os.rmdir(group)
    else:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = usage.ru_utime + usage.ru_stime

    with open(log_path, encoding='utf-8', errors='replace') as handle:
        text = handle.read()
    tail = text[text.rfind('\nstage '):] if '\nstage ' in text else ''
    rows = [STAGE_ROW.match(line) for line in tail.splitlines()]
    rows = [row for row in rows if row]
    print('%-16s %-6s %8s %8s' % ('stage', 'result', 'seconds', 'cpu s'))
    for row in rows:
        print('%-16s %-6s %8s %8s' % row.groups())
    setup = (first_stage - started) if first_stage else wall
    print('%-16s %-6s %8.1f' % ('set-up', '', setup))
    print('%-16s %-6s %8.1f' % ('wall', '', wall))
    print('%-16s %-6s %8.1f' % ('cpu', '', cpu))
    print('load average (1 min, every 30 s): p10 %.2f, median %.2f, p90 %.2f, peak %.2f; log %s' % (
        _percentile(samples, 0.1), _percentile(samples, 0.5), _percentile(samples, 0.9), max(samples or [0.0]),
        log_path))
    passed = sum(1 for row in rows if row.group(2) == 'ok')
    print('make test: %.1f min wall (set-up %.1f min), %.1f min CPU, %s, %d stages passed, %d failed' % (
        wall / 60, setup / 60, cpu / 60, 'loaded with %d nice busy loops' % args.load if args.load else 'quiet',
        passed, len(rows) - passed))
    return rc


if __name__ == '__main__':
    sys.exit(main())
