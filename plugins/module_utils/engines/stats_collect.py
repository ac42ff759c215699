# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Statistics gathered on a node while a survey runs: the logic of the ``stats_collect`` module.

The I/O kit's ``iokit-lstats`` starts one background collector per kind
(vmstat, brw_stats, service stats, disk I/O, client stats), each timed by an
interval variable: unset disables it, 0 takes a snapshot at start and at
stop, N samples every N seconds.  This engine keeps those names and that
meaning, with three differences that matter to a survey:

* Lustre counters are never reset (the I/O kit writes ``brw_stats=0``, which
  wipes what other tools read); every figure is a delta between the snapshot
  at start and the one at stop, so the disk I/O size histogram is that of
  exactly this survey;
* each sampler runs detached, in a process group of its own, and is written
  to the node state (pid *and* kernel start time) right after it is
  started, so that stopping or the cleanup module kills exactly our
  samplers and never a process that reused a pid;
* each sampler also stops by itself after ``max_duration_s``, so a lost
  controller cannot leave one running for ever.

Files live under ``<workdir>/<run_id>/stats/``: ``manifest.json`` (what was
started, with pids), ``stats-<collector>.start``/``.end`` snapshots and
``stats-<collector>.out`` time series.  Lustre snapshots and samples share one
format: a marker line ``@@lustre.iokit sample <epoch> rc=<rc>``, the
``lctl get_param`` text, and ``@@lustre.iokit end``; a sample cut short by a
kill has no end line and is ignored.

The sampler program and the handling of its process are in ``stats_collect_sampler.py``; the small text
parsers for the sample files, vmstat, iostat and lprocfs counters, and the deltas between snapshots, in
``stats_collect_parsers.py`` (only this engine reads those formats; brw_stats goes through the shared parser
``parsers/brw_stats.py``).

Target-side code: standard library only, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import signal
import sys
import time

from ansible_collections.lustre.iokit.plugins.module_utils.engines.errors import EngineError
from ansible_collections.lustre.iokit.plugins.module_utils.engines.stats_collect_parsers import (
    SAMPLE_END, SAMPLE_MARK, brw_delta, brw_series, brw_targets, counters_delta, parse_counters, parse_iostat,
    parse_vmstat, split_samples, vmstat_summary)
from ansible_collections.lustre.iokit.plugins.module_utils.engines.stats_collect_sampler import (
    SAMPLER_SOURCE, Spawner, find_executable, sampler_alive, signal_sampler)
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import process_start_time
from ansible_collections.lustre.iokit.plugins.module_utils.option_problem import OptionProblem
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.brw_stats import parse_brw_stats
from ansible_collections.lustre.iokit.plugins.module_utils.results import parse_timestamp

SURVEY = 'stats_collect'
MANIFEST_SCHEMA = 'lustre.iokit/stats-collect/v1'
MANIFEST = 'manifest.json'
# Output files are stored beside the survey's raw output on the controller: the prefix keeps them apart.
FILE_PREFIX = 'stats-'

VMSTAT = 'vmstat'
IOSTAT = 'iostat'
BRW = 'brw'
SERVICE = 'service'
CLIENT = 'client'
# In the order the I/O kit's iokit-lstats starts them.
COLLECTORS = (VMSTAT, BRW, SERVICE, IOSTAT, CLIENT)
LUSTRE_COLLECTORS = (BRW, SERVICE, CLIENT)
# The I/O kit's defaults (iokit-config): VMSTAT_INTERVAL=1, IO_INTERVAL=1, SERVICE_INTERVAL=0, BRW_INTERVAL=0;
# CLIENT_INTERVAL has no default there (the gather script never forwards it), 0 here so clients report too.
DEFAULT_INTERVALS = {VMSTAT: 1, IOSTAT: 1, BRW: 0, SERVICE: 0, CLIENT: 0}
DEFAULT_MAX_DURATION_S = 21600
# What a collection is for (the survey it surrounds); records and errors carry it.
DEFAULT_LABEL = 'stats'
DEFAULT_GRACE_S = 5.0

# Parameters read per collector.  brw_stats belongs to the osd since 2.x; older servers have it under
# obdfilter only, and some versions show both names for one histogram, so the first group found wins.
BRW_PATTERN_GROUPS = (('osd-*.*.brw_stats',), ('obdfilter.*.brw_stats',))
SERVICE_PATTERNS = ('obdfilter.*.stats', 'ost.OSS.*.stats', 'mdt.*.md_stats', 'mds.MDS.*.stats',
                    'ldlm.services.*.stats')
CLIENT_PATTERNS = ('osc.*.stats', 'llite.*.stats', 'mdc.*.md_stats')


def _ordered(collectors):
    """``(name, entry)`` pairs in the I/O kit's collector order (the manifest's JSON keys are sorted)."""
    return [(name, collectors[name]) for name in COLLECTORS if name in collectors]


def merge_previous(previous, label, records, errors, started, stopped):
    """Add what an earlier collection of the run on this host stored (``previous``, an envelope) to this one.

    One host may be surveyed several times in a run (ost-survey, then mdtest on a client); each collection is
    labelled with its survey, and the stored envelope keeps the records and errors of every other label.
    Returns ``(records, errors, started, stopped)``, the times spanning both.
    """
    if not previous:
        return records, errors, started, stopped
    prefix = label + ': '
    kept = [record for record in previous.get('records', []) if record.get('label', DEFAULT_LABEL) != label]
    kept_errors = []
    for error in previous.get('errors', []):
        message = error.get('message') if isinstance(error, dict) else error
        if isinstance(message, str) and message and not message.startswith(prefix):
            kept_errors.append(message)
    if kept:
        try:
            started = min(started, parse_timestamp(previous['started']).timestamp())
            stopped = max(stopped, parse_timestamp(previous['finished']).timestamp())
        except (KeyError, ValueError):
            pass
    return kept + records, kept_errors + errors, started, stopped


# -- the collection -----------------------------------------------------------------------------------


def interval_problems(intervals, collectors, max_duration_s):
    """Invalid interval settings, each an OptionProblem naming the option (``<collector>_interval``)."""
    problems = []
    for name in collectors:
        value = intervals.get(name)
        if value is None:
            continue
        if name in (VMSTAT, IOSTAT) and value < 1:
            problems.append(OptionProblem('%s_interval' % name, '%s samples every N >= 1 seconds' % name,
                                          got='%d' % value))
        elif value < 0:
            problems.append(OptionProblem('%s_interval' % name, '0 (a snapshot at start and at stop) or N >= 1 seconds',
                                          got='%d' % value))
    if max_duration_s < 1:
        problems.append(OptionProblem('max_duration_s', 'must be at least 1 second', got='%d' % max_duration_s))
    return problems


class StatsCollection:
    """The samplers of one run on this node.

    ``runner`` runs short commands (probes, ``lctl get_param`` snapshots) and
    waits for them; ``spawner`` starts the long-running samplers without
    waiting.  Tests pass fakes of both.
    """

    def __init__(self, runner, node_state, run_id, workdir, host=None, spawner=None, lctl='lctl', clock=time.time,
                 which=find_executable, python=None, grace_s=DEFAULT_GRACE_S, sleep=time.sleep, alive=sampler_alive,
                 signal_process=signal_sampler):
        self.runner = runner
        self.node_state = node_state
        self.run_id = run_id
        self.host = host
        self.spawner = spawner or Spawner()
        self.lctl = lctl
        self.clock = clock
        self.which = which
        self.python = python or sys.executable
        self.grace_s = grace_s
        self.sleep = sleep
        self.alive = alive
        self.signal_process = signal_process
        self.directory = os.path.join(workdir, run_id, 'stats')
        self.manifest_path = os.path.join(self.directory, MANIFEST)
        self.errors = []

    # -- manifest -----------------------------------------------------------------------------------

    def read_manifest(self):
        """The manifest of this run on this node, or None when nothing was started."""
        try:
            with open(self.manifest_path) as handle:
                manifest = json.load(handle)
        except (IOError, OSError):
            return None
        except ValueError as exc:
            raise EngineError('%s is not valid JSON (%s); move it aside to start again' % (self.manifest_path, exc))
        if not isinstance(manifest, dict) or manifest.get('schema') != MANIFEST_SCHEMA:
            raise EngineError('%s is not a stats_collect manifest' % self.manifest_path)
        return manifest

    def _write_manifest(self, manifest):
        temp = self.manifest_path + '.tmp'
        with open(temp, 'w') as handle:
            json.dump(manifest, handle, indent=1, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.rename(temp, self.manifest_path)

    def _path(self, name):
        return os.path.join(self.directory, name)

    # -- discovery and plan -------------------------------------------------------------------------

    def _list_params(self, patterns):
        """The parameters that exist for each pattern (``lctl list_param``), in pattern order."""
        found = []
        for pattern in patterns:
            result = self.runner.run([self.lctl, 'list_param', pattern])
            if result.rc != 0:
                continue
            for line in result.stdout.splitlines():
                name = line.strip()
                if name and name not in found:
                    found.append(name)
        return found

    def _lustre_params(self, collector):
        if collector == BRW:
            for group in BRW_PATTERN_GROUPS:
                found = self._list_params(group)
                if found:
                    return found
            return []
        return self._list_params(SERVICE_PATTERNS if collector == SERVICE else CLIENT_PATTERNS)

    def plan(self, collectors, intervals, max_duration_s):
        """What would run: ``{'collectors': {name: {...}}, 'skipped': {name: reason}}`` (reads only)."""
        planned = {}
        skipped = {}
        lctl_path = self.which(self.lctl) if any(name in LUSTRE_COLLECTORS for name in collectors) else None
        for name in COLLECTORS:
            if name not in collectors:
                continue
            interval = intervals.get(name, DEFAULT_INTERVALS[name])
            if name in (VMSTAT, IOSTAT):
                tool = self.which(name)
                if tool is None:
                    skipped[name] = '%s is not installed' % name
                    continue
                planned[name] = {'interval_s': interval, 'argv': self._tool_argv(name, tool, interval, max_duration_s),
                                 'output': FILE_PREFIX + name + '.out'}
                continue
            if lctl_path is None:
                skipped[name] = '%s is not installed (no Lustre utilities on this node)' % self.lctl
                continue
            params = self._lustre_params(name)
            if not params:
                skipped[name] = 'no %s parameters on this node' % ', '.join(
                    [pattern for group in BRW_PATTERN_GROUPS for pattern in group] if name == BRW
                    else SERVICE_PATTERNS if name == SERVICE else CLIENT_PATTERNS)
                continue
            entry = {'interval_s': interval, 'params': params, 'start': FILE_PREFIX + name + '.start',
                     'end': FILE_PREFIX + name + '.end'}
            if interval > 0:
                entry['argv'] = [self.python, '-c', SAMPLER_SOURCE, str(interval), str(max_duration_s),
                                 self.lctl, 'get_param'] + params
                entry['output'] = FILE_PREFIX + name + '.out'
            planned[name] = entry
        return {'collectors': planned, 'skipped': skipped}

    def _tool_argv(self, name, tool, interval, max_duration_s):
        # A count makes the tool stop by itself after max_duration_s; +1 for the since-boot report.
        count = str(max_duration_s // interval + 1)
        if name == VMSTAT:
            probe = self.runner.run([tool, '-n', '-t', '1', '1'])
            options = ['-n', '-t'] if probe.rc == 0 else ['-n']
            return [tool] + options + [str(interval), count]
        return [tool, '-d', '-x', '-k', '-t', '-y', str(interval), count]

    # -- start ----------------------------------------------------------------------------------------

    def _snapshot(self, params, filename):
        """``lctl get_param`` of ``params`` into a sample file; an error message or None."""
        stamp = self.clock()
        result = self.runner.run([self.lctl, 'get_param'] + list(params))
        took = max(0.0, self.clock() - stamp)
        text = result.stdout if result.stdout.endswith('\n') or not result.stdout else result.stdout + '\n'
        rc = result.rc if result.rc is not None else -1
        with open(self._path(filename), 'w') as handle:
            handle.write('%s %.6f rc=%d took=%.6f\n%s%s\n' % (SAMPLE_MARK, stamp, rc, took, text, SAMPLE_END))
        if result.rc != 0:
            return '%s get_param %s: %s' % (self.lctl, ' '.join(params),
                                            (result.stderr or 'exit status %s' % result.rc).strip())
        return None

    def start(self, collectors, intervals, max_duration_s, label=DEFAULT_LABEL):
        """Take the start snapshots and start the samplers; returns ``{'changed', 'manifest'}``.

        A run whose samplers are already started is left alone (``changed`` False); a run that was
        stopped earlier starts afresh, replacing its earlier files.
        """
        manifest = self.read_manifest()
        if manifest is not None and manifest.get('stopped') is None:
            return {'changed': False, 'manifest': manifest}
        plan = self.plan(collectors, intervals, max_duration_s)
        if not os.path.isdir(self.directory):
            os.makedirs(self.directory, 0o755)
        for name in os.listdir(self.directory):
            # Files of an earlier collection of this run on this node: replaced, not mixed with the new one.
            if name.startswith(FILE_PREFIX):
                os.unlink(self._path(name))
        manifest = {'schema': MANIFEST_SCHEMA, 'run_id': self.run_id, 'host': self.host, 'started': self.clock(),
                    'stopped': None, 'max_duration_s': max_duration_s, 'requested': list(collectors), 'label': label,
                    'collectors': plan['collectors'],
                    'skipped': plan['skipped'], 'errors': []}
        # Written before anything starts, and again after each sampler: a killed module leaves a manifest
        # that names every sampler it started.
        self._write_manifest(manifest)
        for name, entry in plan['collectors'].items():
            if 'params' in entry:
                problem = self._snapshot(entry['params'], entry['start'])
                if problem:
                    manifest['errors'].append(problem)
            if 'argv' not in entry:
                continue
            extra = {'TZ': 'UTC', 'S_TIME_FORMAT': 'ISO'}
            try:
                process = self.spawner.spawn(entry['argv'], self._path(entry['output']),
                                             self._path(FILE_PREFIX + name + '.err'), env=extra)
            except OSError as exc:
                manifest['errors'].append('cannot start the %s sampler (%s): %s' % (name, entry['argv'][0], exc))
                entry['pid'] = None
                continue
            entry['pid'] = process.pid
            entry['start_time'] = process_start_time(process.pid)
            entry['started'] = self.clock()
            # No survey key, as for every module's entry: a run-scoped cleanup (a survey play's always) stops
            # what a failed collection left, whichever survey it ran for.
            self.node_state.record('processes', self.run_id, pid=process.pid, command=self._short_command(entry),
                                   group=True, start_time=entry['start_time'], sampler=name)
            self._write_manifest(manifest)
        self._check_early_exits(manifest)
        self._write_manifest(manifest)
        return {'changed': True, 'manifest': manifest}

    @staticmethod
    def _short_command(entry):
        # The sampler's Python source is long and says nothing in a cleanup report.
        argv = entry['argv']
        if len(argv) > 2 and argv[1] == '-c':
            return [argv[0], '-c', '<lustre.iokit sampler>'] + argv[3:]
        return list(argv)

    def _check_early_exits(self, manifest):
        """A sampler that dies at once (an option its tool lacks) is an error now, not a gap found later."""
        started = [(name, entry) for name, entry in _ordered(manifest['collectors']) if entry.get('pid')]
        if not started:
            return
        self.sleep(0.3)
        for name, entry in started:
            if not self.alive(entry):
                manifest['errors'].append('the %s sampler exited at once: %s' % (name, self._stderr_of(name)))
                self.node_state.forget('processes', entry['pid'])
                entry['ended_early'] = True

    def _stderr_of(self, name):
        try:
            with open(self._path(FILE_PREFIX + name + '.err')) as handle:
                text = handle.read().strip()
        except (IOError, OSError):
            text = ''
        return text.splitlines()[-1] if text else 'no error output'

    # -- stop -----------------------------------------------------------------------------------------

    def stop(self):
        """Stop our samplers and take the end snapshots; returns ``{'changed', 'stopped', 'manifest'}``.

        Idempotent: a run already stopped, or never started here, changes nothing.
        """
        manifest = self.read_manifest()
        if manifest is None or manifest.get('stopped') is not None:
            return {'changed': False, 'stopped': [], 'manifest': manifest}
        stopped = self._stop_samplers(manifest)
        for name, entry in _ordered(manifest['collectors']):
            if 'params' in entry:
                problem = self._snapshot(entry['params'], entry['end'])
                if problem:
                    manifest['errors'].append(problem)
        manifest['stopped'] = self.clock()
        self._write_manifest(manifest)
        return {'changed': True, 'stopped': stopped, 'manifest': manifest}

    def _stop_samplers(self, manifest):
        running = []
        for name, entry in _ordered(manifest['collectors']):
            if not entry.get('pid'):
                continue
            if self.alive(entry):
                running.append((name, entry))
                continue
            if not entry.get('ended_early'):
                limit = entry.get('started', manifest['started']) + manifest['max_duration_s'] - entry['interval_s']
                if self.clock() < limit:
                    manifest['errors'].append('the %s sampler had ended before the stop: %s'
                                              % (name, self._stderr_of(name)))
            self.node_state.forget('processes', entry['pid'])
        stopped = []
        for name, entry in running:
            self.signal_process(int(entry['pid']), signal.SIGTERM)
        deadline = self.clock() + self.grace_s
        while self.clock() < deadline and any(self.alive(entry) for unused, entry in running):
            self.sleep(0.05)
        for name, entry in running:
            summary = {'collector': name, 'pid': entry['pid'], 'signal': 'SIGTERM'}
            if self.alive(entry):
                self.signal_process(int(entry['pid']), signal.SIGKILL)
                summary['signal'] = 'SIGKILL'
            stopped.append(summary)
        deadline = self.clock() + self.grace_s
        while self.clock() < deadline and any(self.alive(entry) for unused, entry in running):
            self.sleep(0.05)
        for name, entry in running:
            if self.alive(entry):
                manifest['errors'].append('the %s sampler (pid %s) survived SIGKILL' % (name, entry['pid']))
                continue
            self.node_state.forget('processes', entry['pid'])
        return stopped

    # -- collect --------------------------------------------------------------------------------------

    def _read(self, filename):
        try:
            with open(self._path(filename)) as handle:
                return handle.read()
        except (IOError, OSError):
            return None

    def _lustre_samples(self, entry):
        """Every complete sample of a Lustre collector in time order: start snapshot, series, end snapshot.

    Each is ``(epoch, rc, text, took)`` (see ``split_samples``).
    """
        samples = []
        for filename in (entry.get('start'), entry.get('output'), entry.get('end')):
            text = self._read(filename) if filename else None
            if text:
                samples.extend(sample for sample in split_samples(text, with_took=True)
                               if sample[1] == 0 or sample[2].strip())
        return samples

    def collect(self):
        """Parse what the samplers wrote: ``(records, errors, info)``; stops first if still running."""
        manifest = self.read_manifest()
        if manifest is None:
            return [], [], {'collected': False, 'reason': 'no statistics were started in run %s on this node'
                            % self.run_id}
        stop = self.stop()
        manifest = stop['manifest']
        records = []
        errors = list(manifest.get('errors', []))
        files = []
        for name, entry in _ordered(manifest['collectors']):
            for key in ('start', 'output', 'end'):
                if entry.get(key) and os.path.exists(self._path(entry[key])):
                    files.append(self._path(entry[key]))
            if name == VMSTAT:
                records.extend(self._vmstat_records(entry, manifest))
            elif name == IOSTAT:
                records.extend(self._iostat_records(entry))
            elif name == BRW:
                found, problems = self._brw_records(entry)
                records.extend(found)
                errors.extend(problems)
            else:
                found, problems = self._counter_records(name, entry)
                records.extend(found)
                errors.extend(problems)
        label = manifest.get('label', DEFAULT_LABEL)
        for record in records:
            record['label'] = label
        errors = ['%s: %s' % (label, message) for message in errors]
        info = {'collected': True, 'changed': stop['changed'], 'stopped_now': stop['stopped'], 'files': files,
                'manifest': self.manifest_path, 'label': label, 'skipped': manifest.get('skipped', {}),
                'started': manifest['started'], 'stopped': manifest['stopped'],
                'collectors': dict((name, dict((key, value) for key, value in entry.items() if key != 'argv'))
                                   for name, entry in _ordered(manifest['collectors']))}
        return records, errors, info

    def _vmstat_records(self, entry, manifest):
        text = self._read(entry['output']) or ''
        rows = parse_vmstat(text)
        base = entry.get('started', manifest['started'])
        for index, row in enumerate(rows):
            if row['time'] is None:
                # vmstat without -t: the n-th report comes n intervals after the start.
                row['time'] = round(base + (index + 1) * entry['interval_s'], 3)
                row['time_estimated'] = True
        return [{'collector': VMSTAT, 'interval_s': entry['interval_s'],
                 'start_time': rows[0]['time'] if rows else None, 'end_time': rows[-1]['time'] if rows else None,
                 'samples': rows, 'summary': vmstat_summary(rows)}]

    def _iostat_records(self, entry):
        reports = parse_iostat(self._read(entry['output']) or '')
        return [{'collector': IOSTAT, 'interval_s': entry['interval_s'],
                 'start_time': reports[0]['time'] if reports else None,
                 'end_time': reports[-1]['time'] if reports else None, 'samples': reports}]

    def _brw_records(self, entry):
        samples = self._lustre_samples(entry)
        if len(samples) < 2:
            return [], ['brw: no start and end snapshots of %s to compare' % ', '.join(entry['params'])]
        first_time, first_text = samples[0][0], samples[0][2]
        last_time, last_text = samples[-1][0], samples[-1][2]
        first = brw_targets(parse_brw_stats(first_text))
        last = brw_targets(parse_brw_stats(last_text))
        # Snapshots only (interval 0): the whole-collection delta says it all, there is no series.
        series = brw_series(samples) if entry.get('output') else {}
        records = []
        for target in sorted(last):
            histograms, reset = brw_delta(first.get(target), last[target])
            record = {'collector': BRW, 'target': target, 'interval_s': entry['interval_s'],
                      'start_time': first_time, 'end_time': last_time,
                      'elapsed_s': round(last_time - first_time, 6), 'reset': reset, 'samples': len(samples),
                      'histograms': histograms, 'units': last[target].get('units', {})}
            if entry.get('output'):
                record['series'] = series[target]
            records.append(record)
        return records, []

    def _counter_records(self, name, entry):
        samples = self._lustre_samples(entry)
        if len(samples) < 2:
            return [], ['%s: no start and end snapshots of %s to compare' % (name, ', '.join(entry['params']))]
        first_time, first_text = samples[0][0], samples[0][2]
        last_time, last_text = samples[-1][0], samples[-1][2]
        first = parse_counters(first_text)
        last = parse_counters(last_text)
        records = []
        for param in sorted(last):
            counters, reset = counters_delta(first.get(param), last[param])
            records.append({'collector': name, 'param': param, 'interval_s': entry['interval_s'],
                            'start_time': first_time, 'end_time': last_time,
                            'elapsed_s': round(last_time - first_time, 6), 'reset': reset, 'samples': len(samples),
                            'counters': counters})
        return records, []
