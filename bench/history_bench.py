#!/usr/bin/env python3
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Time the results history on many runs of report_bench.py's synthetic fleet, in SQLite and in PostgreSQL.

Each run is report_bench.make_run's fleet (N OSS with 8 OSTs and 8 LUNs, the full default obdfilter and sgpdd sweeps,
two MDS, ost-survey and LNet), under its own run id, finished a day after the previous one.  Measured per database:
recording one run (History.record_run, the mean and the slowest over the runs), the history judgment of the last
run against the 5 before it (History.judging_values + judge_history_values; with --compare-rows also as before,
judging_rows + judge_history), one OST's trend over every run (History.samples of one
component and metric), and the database's size per run.  PostgreSQL is a private server made as tests/history
makes it (initdb in a temporary directory, a Unix socket only, fsync off), stopped at the end, also when the bench
is ended by SIGTERM or SIGINT.

    .venv/bin/python bench/history_bench.py              # 100 runs of 1000 OSS (long)
    .venv/bin/python bench/history_bench.py --quick      # 10 runs of 200 OSS
    .venv/bin/python bench/history_bench.py --runs 3 --oss 1000 --databases sqlite
    .venv/bin/python bench/history_bench.py --runs 6 --oss 1000 --fill-to 100 --results /tmp/runs1000

``--fill-to N`` fills each database up to N runs after the timed ones by copying the last recorded run's rows under
new run ids, a day apart, in SQL (filled, not recorded: the output says so), so that the trend over N runs and the
size per run are measured at full size without recording N runs.  ``--results DIR`` writes the runs there and keeps
them, or uses the runs already there (a directory per run id), so that several benches share one writing.

Numbers are measured and printed, never asserted.
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
sys.path.insert(0, os.path.join(ROOT, 'tests', 'history'))

import report_bench  # noqa: E402  pylint: disable=wrong-import-position

FIRST_FINISH = 1795342501
DAY_S = 86400
TREND_COMPONENT = 'testfs-OST0000'
TREND_METRIC = 'obdfilter_write_mib_s'
JUDGED_RUNS = 5


def run_id_of(number: int) -> str:
    return 'hbench-%04d' % number


def write_runs(results_dir: str, runs: int, oss_count: int) -> float:
    """report_bench's fleet ``runs`` times, each under its own run id and a day later; returns the seconds taken."""
    started = time.monotonic()
    original = report_bench._envelope  # pylint: disable=protected-access

    for number in range(1, runs + 1):
        finish = FIRST_FINISH + number * DAY_S

        def dated_envelope(results, host, survey, parameters, records, finish=finish):
            builder = results.EnvelopeBuilder(report_bench.RUN_ID, host, survey, 'native', parameters,
                                              now=finish - 1000)
            builder.set_environment(lustre_version='2.15.5')
            for record in records:
                builder.add_record(record)
            return builder.finish(now=finish)

        report_bench.RUN_ID = run_id_of(number)
        report_bench._envelope = dated_envelope  # pylint: disable=protected-access
        try:
            report_bench.make_run(results_dir, oss_count, seed=number)
        finally:
            report_bench._envelope = original  # pylint: disable=protected-access
    return time.monotonic() - started


def bench_database(kind: str, dsn: str, results_dir: str, runs: int, size_of, compare_rows: bool = False,
                   fill_to: int = 0, fill_budget_s: float | None = None) -> dict:
    from ansible_collections.lustre.iokit.plugins.plugin_utils.history.store import History
    from ansible_collections.lustre.iokit.plugins.plugin_utils.report.history_judge import (
        judge_history, judge_history_values)

    record_s, record_cpu_s = [], []
    samples = 0
    with History(dsn) as history:
        for number in range(1, runs + 1):
            started, started_cpu = time.monotonic(), time.process_time()
            outcome = history.record_run(results_dir, run_id_of(number))
            record_s.append(time.monotonic() - started)
            record_cpu_s.append(time.process_time() - started_cpu)
            samples += outcome.samples_added
            print('  %s: run %d of %d recorded in %.1f s (%.1f CPU s in this process)'
                  % (kind, number, runs, record_s[-1], record_cpu_s[-1]), flush=True)
        started, started_cpu = time.monotonic(), time.process_time()
        values = history.judging_values(run_id_of(runs), JUDGED_RUNS)
        rows_s = time.monotonic() - started
        judgment = judge_history_values(values)
        judge_s = time.monotonic() - started
        judge_cpu_s = time.process_time() - started_cpu
        judged_values = _count_values(values)
        print('  %s: judged in %.1f s (%.1f CPU s in this process)' % (kind, judge_s, judge_cpu_s), flush=True)
        rows_path = None
        if compare_rows:
            # the judgment as it was made before judging_values: every sample as a row (a dict), for comparison
            started, started_cpu = time.monotonic(), time.process_time()
            rows = history.judging_rows(run_id_of(runs), JUDGED_RUNS)
            by_rows = judge_history(rows['current'], rows['earlier'], other_runs=rows['other_runs'])
            rows_path = {'s': time.monotonic() - started, 'cpu_s': time.process_time() - started_cpu,
                         'same': by_rows == judgment}
            del rows, by_rows
            print('  %s: judged by rows in %.1f s (%.1f CPU s), same judgment: %s'
                  % (kind, rows_path['s'], rows_path['cpu_s'], rows_path['same']), flush=True)
        filled = 0
        if fill_to > runs:
            started = time.monotonic()
            for number in range(runs + 1, fill_to + 1):
                if fill_budget_s is not None and time.monotonic() - started > fill_budget_s:
                    print('  %s: filling stopped after %.0f s (--fill-budget-s), at %d runs'
                          % (kind, time.monotonic() - started, runs + filled), flush=True)
                    break
                fill_run(history, run_id_of(runs), run_id_of(number), (number - runs) * DAY_S)
                filled += 1
                if filled % 10 == 0:
                    print('  %s: %d runs filled in %.1f s' % (kind, filled, time.monotonic() - started), flush=True)
            print('  %s: %d runs filled, not recorded (copies of %s in SQL) in %.1f s'
                  % (kind, filled, run_id_of(runs), time.monotonic() - started), flush=True)
        started = time.monotonic()
        trend = history.samples(component_id=TREND_COMPONENT, metric=TREND_METRIC)
        trend_s = time.monotonic() - started
    size_mib = size_of() / 1048576.0
    return {'kind': kind, 'record_mean_s': statistics.mean(record_s), 'record_max_s': max(record_s),
            'judge_s': judge_s, 'rows_s': rows_s, 'judge_cpu_s': judge_cpu_s,
            'record_cpu_mean_s': statistics.mean(record_cpu_s), 'trend_s': trend_s, 'trend_points': len(trend), 'samples': samples,
            'judged_rows': judged_values, 'rows_path': rows_path,
            'regressions': len(judgment.get('findings') or []), 'mib_per_run': size_mib / (runs + filled),
            'filled': filled}


def _shifted(text, seconds: int):
    """An ISO-8601 UTC time text ``seconds`` later (None stays None)."""
    if text is None:
        return None
    moment = datetime.datetime.strptime(text, '%Y-%m-%dT%H:%M:%SZ') + datetime.timedelta(seconds=seconds)
    return moment.strftime('%Y-%m-%dT%H:%M:%SZ')


def fill_run(history, source: str, run_id: str, later_s: int) -> None:
    """Copies the rows of the recorded run ``source`` under ``run_id``, its times ``later_s`` later, in SQL and in one
    write transaction: a run filled, not recorded (record_run never sees it)."""
    backend = history._backend  # pylint: disable=protected-access
    run = history.run(source)
    shift = [(survey.survey, _shifted(survey.started, later_s), _shifted(survey.finished, later_s))
             for survey in run.surveys.values()]

    def copy():
        backend.execute('INSERT INTO runs (run_id, started, finished, fsname, lustre_version, collection_version, '
                        'host_count, recorded) SELECT ?, ?, ?, fsname, lustre_version, collection_version, host_count, '
                        'recorded FROM runs WHERE run_id = ?',
                        (run_id, _shifted(run.started, later_s), _shifted(run.finished, later_s), source))
        for survey, started, finished in shift:
            backend.execute('INSERT INTO run_surveys (run_id, survey, parameters_hash, parameters, engine, host_count, '
                            'started, finished) SELECT ?, survey, parameters_hash, parameters, engine, host_count, ?, ? '
                            'FROM run_surveys WHERE run_id = ? AND survey = ?',
                            (run_id, started, finished, source, survey))
        # the results' own times are left as they were: only the run's and its surveys' order the runs
        backend.execute('INSERT INTO envelopes (run_id, host, survey, status, engine, started, finished, '
                        'parameters_hash, parameters, fsname, lustre_version, collection_version, sample_count, '
                        'problems, content_hash) SELECT ?, host, survey, status, engine, started, finished, '
                        'parameters_hash, parameters, fsname, lustre_version, collection_version, sample_count, '
                        'problems, content_hash FROM envelopes WHERE run_id = ? ORDER BY id', (run_id, source))
        pairs = ('FROM envelopes o JOIN envelopes n ON n.run_id = ? AND n.host = o.host AND n.survey = o.survey '
                 'JOIN %s x ON x.envelope_id = o.id WHERE o.run_id = ?')
        backend.execute('INSERT INTO samples (envelope_id, seq, series_id, iteration, value, status) '
                        'SELECT n.id, x.seq, x.series_id, x.iteration, x.value, x.status ' + pairs % 'samples',
                        (run_id, source))
        backend.execute('INSERT INTO envelope_components (envelope_id, component_kind, component_id, target) '
                        'SELECT n.id, x.component_kind, x.component_id, x.target ' + pairs % 'envelope_components',
                        (run_id, source))
        backend.execute('INSERT INTO component_fill (envelope_id, component_kind, component_id, free_kib, total_kib, '
                        'free_inodes, total_inodes) SELECT n.id, x.component_kind, x.component_id, x.free_kib, '
                        'x.total_kib, x.free_inodes, x.total_inodes ' + pairs % 'component_fill', (run_id, source))

    backend.run_write(copy)


def _count_values(values: dict) -> int:
    """How many samples a judgment read: a series' value, or each of its values when it has several."""
    return sum(len(value) if isinstance(value, list) else 1
               for by_series in [values['current']] + [item['values'] for item in values['earlier']]
               for value in by_series.values())


def sqlite_case(workdir: str):
    path = os.path.join(workdir, 'history.sqlite')
    return 'sqlite://%s' % path, lambda: sum(os.path.getsize(path + suffix) for suffix in ('', '-wal')
                                             if os.path.exists(path + suffix))


def _exit_on_signal(number: int, _frame) -> None:
    raise SystemExit(128 + number)


def stop_server(server) -> None:
    """Stops the private server, also when a signal came while ``pg_ctl start`` was starting it: the server may then
    write its pid file a moment after pg_ctl was cut short, and is stopped once it has."""
    server.stop()
    pid_file = os.path.join(server.data, 'postmaster.pid')
    deadline = time.monotonic() + 10
    while os.path.isdir(server.data) and time.monotonic() < deadline:
        if os.path.exists(pid_file):
            server.stop()
        elif not _server_running(server.data):
            break
        time.sleep(0.5)
    shutil.rmtree(server.directory, ignore_errors=True)


def _server_running(data: str) -> bool:
    """Whether a postgres process serves ``data`` (its command line names the data directory)."""
    for pid in os.listdir('/proc'):
        if pid.isdigit():
            try:
                with open('/proc/%s/cmdline' % pid, 'rb') as handle:
                    argv = handle.read().split(b'\0')
            except OSError:
                continue
            if argv and argv[0].endswith(b'postgres') and data.encode() in argv:
                return True
    return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('--runs', type=int, default=100)
    parser.add_argument('--oss', type=int, default=1000)
    parser.add_argument('--quick', action='store_true', help='10 runs of 200 OSS')
    parser.add_argument('--databases', default='sqlite,postgresql', help='comma-separated: sqlite, postgresql')
    parser.add_argument('--fill-to', type=int, default=0,
                        help='after the timed runs, fill each database up to this many runs by copying the last '
                             'recorded run in SQL (filled, not recorded), for the trend and the size at full size')
    parser.add_argument('--fill-budget-s', type=float,
                        help='stop filling after this many seconds (the trend and the size are then over fewer runs)')
    parser.add_argument('--results', help='write the runs here and keep them, or use the runs already here')
    parser.add_argument('--compare-rows', action='store_true',
                        help='also judge as before judging_values (judging_rows + judge_history, a dict per sample), '
                             'timed and checked to give the same judgment')
    args = parser.parse_args()
    # A SIGTERM (a timeout, kill) or SIGINT ends the bench through its finally clause, so that the private
    # PostgreSQL server and the temporary directory go with it; by default a SIGTERM would skip both.
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, _exit_on_signal)
    if args.quick:
        args.runs, args.oss = 10, 200
    report_bench._import_collection()  # pylint: disable=protected-access
    workdir = tempfile.mkdtemp(prefix='iokit-hbench-')
    server = None
    rows = []
    try:
        results_dir = args.results or os.path.join(workdir, 'results')
        os.makedirs(results_dir, exist_ok=True)
        if all(os.path.isdir(os.path.join(results_dir, run_id_of(number))) for number in range(1, args.runs + 1)):
            print('using the %d runs in %s (not written again: their size is not checked)' % (args.runs, results_dir),
                  flush=True)
        else:
            print('writing %d runs of %d OSS ...' % (args.runs, args.oss), flush=True)
            print('  written in %.1f s' % write_runs(results_dir, args.runs, args.oss), flush=True)
        for kind in args.databases.split(','):
            if kind == 'sqlite':
                dsn, size_of = sqlite_case(workdir)
            else:
                from history_env import PostgresServer  # pylint: disable=import-outside-toplevel
                # A short path: a Unix socket's path must stay under 108 bytes.
                server = PostgresServer(tempfile.mkdtemp(prefix='iokit-pg-'))
                server.start()
                name = server.new_database()
                dsn = server.dsn(name)

                def size_of(name=name):
                    with server.connect() as connection:
                        return connection.execute('SELECT pg_database_size(%s)', (name,)).fetchone()[0]
            rows.append(bench_database(kind, dsn, results_dir, args.runs, size_of, args.compare_rows,
                                       args.fill_to, args.fill_budget_s))
    finally:
        # a second signal must not cut the teardown short
        for number in (signal.SIGTERM, signal.SIGINT):
            signal.signal(number, signal.SIG_IGN)
        if server is not None:
            stop_server(server)
        shutil.rmtree(workdir, ignore_errors=True)
    print()
    print('%d runs of %d OSS' % (args.runs, args.oss)
          + (', filled up to %s runs (filled, not recorded: copies of the last run in SQL)'
             % ' and '.join(sorted({str(args.runs + row['filled']) for row in rows}))
             if any(row['filled'] for row in rows) else ''))
    print('| database | samples | record mean s | record max s | record CPU s | judge s (of which read s; samples) '
          '| judge CPU s | trend s (points) | MiB per run |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|---:|')
    for row in rows:
        print('| %s | %d | %.2f | %.2f | %.2f | %.2f (%.2f; %d) | %.2f | %.3f (%d) | %.1f |' % (
            row['kind'], row['samples'], row['record_mean_s'], row['record_max_s'], row['record_cpu_mean_s'],
            row['judge_s'], row['rows_s'], row['judged_rows'], row['judge_cpu_s'], row['trend_s'],
            row['trend_points'], row['mib_per_run']))
    for row in rows:
        if row['rows_path']:
            print('%s judged by rows (before judging_values): %.2f s, %.2f CPU s, same judgment: %s'
                  % (row['kind'], row['rows_path']['s'], row['rows_path']['cpu_s'], row['rows_path']['same']))
    for row in rows:
        if row['filled']:
            print('%s: %d runs recorded, %d filled, not recorded; the trend and the MiB per run are over all %d'
                  % (row['kind'], args.runs, row['filled'], args.runs + row['filled']))
    for row in rows:
        print('history %s: record %.1f s, judge %.1f s, trend %.3f s, %.1f MiB per run' % (
            row['kind'], row['record_max_s'], row['judge_s'], row['trend_s'], row['mib_per_run']))
    return 0


if __name__ == '__main__':
    sys.exit(main())
