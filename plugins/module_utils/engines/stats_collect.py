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

The small text parsers for vmstat, iostat and lprocfs counters live here
because only this engine reads those formats; brw_stats goes through the
shared parser ``parsers/brw_stats.py``.

Target-side code: standard library only, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
import json
import math
import os
import re
import signal
import subprocess
import sys
import time

from ansible_collections.lustre.iokit.plugins.module_utils.node_state import has_exited, is_same_process, process_start_time
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.brw_stats import parse_brw_stats
from ansible_collections.lustre.iokit.plugins.module_utils.results import parse_timestamp
from ansible_collections.lustre.iokit.plugins.module_utils.runner import child_environment

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
# The brw_stats histograms kept sample by sample (``series`` of a brw record) when brw is sampled: the
# report cuts the disk I/O size per survey phase; every histogram every second would weigh tens of MB.
BRW_SERIES_HISTOGRAMS = ('disk I/O size', 'pages per bulk r/w')

# Parameters read per collector.  brw_stats belongs to the osd since 2.x; older servers have it under
# obdfilter only, and some versions show both names for one histogram, so the first group found wins.
BRW_PATTERN_GROUPS = (('osd-*.*.brw_stats',), ('obdfilter.*.brw_stats',))
SERVICE_PATTERNS = ('obdfilter.*.stats', 'ost.OSS.*.stats', 'mdt.*.md_stats', 'mds.MDS.*.stats',
                    'ldlm.services.*.stats')
CLIENT_PATTERNS = ('osc.*.stats', 'llite.*.stats', 'mdc.*.md_stats')

SAMPLE_MARK = '@@lustre.iokit sample'
SAMPLE_END = '@@lustre.iokit end'

# The Lustre sampler: runs one argument list every interval until SIGTERM or its time limit, writing
# each complete output between markers.  Run as ``python -c`` so that it needs nothing from the
# module's temporary directory, which Ansible deletes once the module returns.
SAMPLER_SOURCE = r'''
import signal, subprocess, sys, time
interval = float(sys.argv[1])
limit = time.monotonic() + float(sys.argv[2])
argv = sys.argv[3:]
state = {'stop': False, 'sleeping': False}
class Stop(Exception):
    pass
def on_signal(signum, frame):
    state['stop'] = True
    if state['sleeping']:
        raise Stop()
for signum in (signal.SIGTERM, signal.SIGUSR1, signal.SIGINT, signal.SIGHUP):
    signal.signal(signum, on_signal)
next_at = time.monotonic()
try:
    while not state['stop'] and time.monotonic() < limit:
        stamp = time.time()
        child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        text = child.communicate()[0].decode('utf-8', 'replace')
        if state['stop'] or child.returncode < 0:
            break
        if text and not text.endswith('\n'):
            text += '\n'
        took = time.time() - stamp
        sys.stdout.write('@@lustre.iokit sample %.6f rc=%d took=%.6f\n%s@@lustre.iokit end\n'
                         % (stamp, child.returncode, took, text))
        sys.stdout.flush()
        next_at += interval
        pause = next_at - time.monotonic()
        if pause < 0:
            next_at = time.monotonic()
            continue
        state['sleeping'] = True
        if state['stop']:
            break
        time.sleep(min(pause, max(0.0, limit - time.monotonic())))
        state['sleeping'] = False
except Stop:
    pass
'''

# ``took``: seconds the command ran after the stamp (absent from files of older samplers).
_SAMPLE_RE = re.compile(r'^@@lustre\.iokit sample (?P<time>\d+(?:\.\d+)?) rc=(?P<rc>-?\d+)'
                        r'(?: took=(?P<took>\d+(?:\.\d+)?))?$')
_PARAM_LINE_RE = re.compile(r'^(?P<name>[A-Za-z0-9_-]+(?:\.[^\s=]+)+)=(?P<value>.*)$')
_COUNTER_RE = re.compile(
    r'^(?P<name>[A-Za-z_][\w.-]*)\s+(?P<count>\d+)\s+samples\s+\[(?P<unit>[^\]]+)\]'
    r'(?:\s+(?P<min>-?\d+)\s+(?P<max>-?\d+)\s+(?P<sum>-?\d+)(?:\s+(?P<sumsq>\d+))?)?\s*$')
_TIME_FIELD_RE = re.compile(r'^(?P<field>snapshot_time|start_time|elapsed_time):?\s+(?P<value>\d+(?:\.\d+)?)')
# Every number column of procps vmstat (-a prints inact/active instead of buff/cache; 4.x adds gu).
VMSTAT_COLUMNS = frozenset(('r', 'b', 'swpd', 'free', 'buff', 'cache', 'inact', 'active', 'si', 'so', 'bi', 'bo',
                            'in', 'cs', 'us', 'sy', 'id', 'wa', 'st', 'gu'))
_VMSTAT_STAMP_RE = re.compile(r'^(\d{4})-(\d{2})-(\d{2})$')
_ISO_STAMP_RE = re.compile(r'^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:[+-]\d{4}|Z)?$')


def _ordered(collectors):
    """``(name, entry)`` pairs in the I/O kit's collector order (the manifest's JSON keys are sorted)."""
    return [(name, collectors[name]) for name in COLLECTORS if name in collectors]


class StatsError(Exception):
    """A request the engine cannot carry out (bad option values, an unreadable manifest)."""


# -- text parsers -------------------------------------------------------------------------------------


def split_samples(text, with_took=False):
    """``[(epoch, rc, body)]`` of the complete samples in a sampler or snapshot file.

    ``with_took``: ``(epoch, rc, body, took)`` where ``took`` is how long the command ran after ``epoch``
    (None when the file does not say): what it read was read somewhen in between.
    """
    samples = []
    current = None
    for line in text.splitlines():
        mark = _SAMPLE_RE.match(line)
        if mark:
            took = float(mark.group('took')) if mark.group('took') is not None else None
            current = (float(mark.group('time')), int(mark.group('rc')), [], took)
            continue
        if line == SAMPLE_END:
            if current is not None:
                sample = (current[0], current[1], '\n'.join(current[2]) + '\n')
                samples.append(sample + (current[3],) if with_took else sample)
            current = None
            continue
        if current is not None:
            current[2].append(line)
    return samples


def parse_counters(text):
    """lprocfs ``stats`` text of one or more parameters: ``{param: {'start_time', 'counters': {...}}}``.

    Each counter has ``count``, ``unit`` and, when printed, ``min``, ``max``, ``sum`` and ``sumsq``.
    Text without parameter names (``get_param -n``) is kept under the name ``''``.
    """
    params = {}
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        param = _PARAM_LINE_RE.match(line)
        if param and not _TIME_FIELD_RE.match(line):
            current = params.setdefault(param.group('name'), {'start_time': None, 'counters': {}})
            continue
        if current is None:
            current = params.setdefault('', {'start_time': None, 'counters': {}})
        timing = _TIME_FIELD_RE.match(line)
        if timing:
            if timing.group('field') == 'start_time':
                current['start_time'] = float(timing.group('value'))
            continue
        counter = _COUNTER_RE.match(line)
        if counter:
            entry = {'count': int(counter.group('count')), 'unit': counter.group('unit')}
            for key in ('min', 'max', 'sum', 'sumsq'):
                value = counter.group(key)
                entry[key] = int(value) if value is not None else None
            current['counters'][counter.group('name')] = entry
    return params


def _epoch_utc(year, month, day, hour, minute, second):
    return float(calendar.timegm((int(year), int(month), int(day), int(hour), int(minute), int(second), 0, 0, 0)))


def parse_vmstat(text):
    """vmstat output (``-n``, with or without ``-t`` in UTC): ``[{column: number, 'time': epoch or None}]``.

    The first row is vmstat's average since boot and is dropped: it says nothing about the survey.
    """
    columns = None
    rows = []
    seen_first = False
    for line in text.splitlines():
        tokens = line.split()
        if not tokens:
            continue
        if tokens[:2] == ['r', 'b']:
            # -t adds a time-zone name over the date and time columns: not a number column.
            columns = [token for token in tokens if token in VMSTAT_COLUMNS]
            continue
        if columns is None or not tokens[0].isdigit():
            continue
        values = tokens[:len(columns)]
        if len(values) < len(columns) or not all(value.lstrip('-').isdigit() for value in values):
            continue
        stamp = None
        extra = tokens[len(columns):]
        if len(extra) >= 2:
            date = _VMSTAT_STAMP_RE.match(extra[0])
            clock = extra[1].split(':')
            if date and len(clock) == 3:
                stamp = _epoch_utc(date.group(1), date.group(2), date.group(3), clock[0], clock[1], clock[2])
        if not seen_first:
            seen_first = True
            continue
        row = dict((name, int(value)) for name, value in zip(columns, values))
        row['time'] = stamp
        rows.append(row)
    return rows


def parse_iostat(text):
    """``iostat -d -x -t`` output with ISO times: ``[{'time': epoch or None, 'devices': {dev: {column: number}}}]``."""
    reports = []
    current = None
    columns = None
    for line in text.splitlines():
        tokens = line.split()
        if not tokens:
            columns = None
            continue
        stamp = _ISO_STAMP_RE.match(tokens[0]) if len(tokens) == 1 else None
        if stamp:
            current = {'time': _epoch_utc(*stamp.groups()), 'devices': {}}
            reports.append(current)
            continue
        if tokens[0].rstrip(':') == 'Device':
            columns = tokens[1:]
            if current is None:
                current = {'time': None, 'devices': {}}
                reports.append(current)
            continue
        if columns is None or current is None:
            continue
        values = {}
        for name, value in zip(columns, tokens[1:]):
            try:
                values[name] = float(value.replace(',', '.'))
            except ValueError:
                values = None
                break
        if values:
            current['devices'][tokens[0]] = values
    return [report for report in reports if report['devices']]


# -- deltas -----------------------------------------------------------------------------------------------


def _percentages(rows):
    """Integer percentages and cumulative percentages per side, as Lustre prints them."""
    totals = {'read': sum(row['read']['count'] for row in rows), 'write': sum(row['write']['count'] for row in rows)}
    running = {'read': 0, 'write': 0}
    for row in rows:
        for side in ('read', 'write'):
            running[side] += row[side]['count']
            whole = totals[side]
            row[side]['pct'] = row[side]['count'] * 100 // whole if whole else 0
            row[side]['cum_pct'] = running[side] * 100 // whole if whole else 0
    return rows


def _brw_targets(parsed):
    targets = parsed.get('targets') or [parsed]
    return dict((target.get('target') or '', target) for target in targets if target.get('histograms')
                or target.get('target'))


def brw_delta(start, end):
    """The histograms of ``end`` minus those of ``start`` (parsed brw_stats of one target).

    Returns ``(histograms, reset)``: rows that did not change are left out; when any count went down
    (somebody reset the statistics during the survey) the end counts are the delta and ``reset`` is True.
    """
    start_hists = (start or {}).get('histograms', {})
    counted = any(row['read']['count'] or row['write']['count'] for rows in start_hists.values() for row in rows)
    # A new start_time means a reset, but only counts taken before it can spoil the delta (and some
    # servers move start_time until the first I/O).
    reset = bool(start is None or (counted and start.get('start_time') is not None
                                   and end.get('start_time') is not None and end['start_time'] != start['start_time']))
    if not reset:
        for title, rows in end.get('histograms', {}).items():
            before = dict((row['bucket'], row) for row in start_hists.get(title, []))
            for row in rows:
                old = before.get(row['bucket'])
                if old and (row['read']['count'] < old['read']['count'] or row['write']['count'] < old['write']['count']):
                    reset = True
    histograms = {}
    for title, rows in end.get('histograms', {}).items():
        before = {} if reset else dict((row['bucket'], row) for row in start_hists.get(title, []))
        delta_rows = []
        for row in rows:
            old = before.get(row['bucket'])
            read = row['read']['count'] - (old['read']['count'] if old else 0)
            write = row['write']['count'] - (old['write']['count'] if old else 0)
            if read or write:
                delta_rows.append({'bucket': row['bucket'], 'read': {'count': read}, 'write': {'count': write}})
        histograms[title] = _percentages(delta_rows)
    return histograms, reset


def _series_view(parsed, titles):
    # Only what brw_delta reads, for the histograms the series keeps: the others are not diffed per sample.
    histograms = parsed.get('histograms', {})
    return {'start_time': parsed.get('start_time'),
            'histograms': dict((title, histograms[title]) for title in titles if title in histograms)}


def brw_series(samples, titles=BRW_SERIES_HISTOGRAMS):
    """Per target, what moved between each brw_stats sample and the one before: ``{target: series}``.

    ``samples`` are ``(epoch, rc, text[, took])`` in time order (start snapshot, sampler output, end snapshot).
    A series is ``{'times': [...], 'resets': [...], 'histograms': {title: {'buckets': [...], 'deltas': [...]}}}``
    and ``read_s`` when the samples say how long each read took (the longest, rounded up to the millisecond:
    a sample holds what was counted somewhen between its time and ``read_s`` later):
    ``times`` holds the epoch of every sample after the first (the record's ``start_time``); a delta row is
    ``[sample, bucket, read, write]``, indices into ``times`` and ``buckets``, only for buckets that moved, so
    an idle sample costs one time and nothing else.  ``resets`` lists the samples whose counts went down (or
    whose target was new): their deltas count from zero, as ``brw_delta`` does.
    """
    times = []
    previous = {}
    series = {}
    tooks = [sample[3] for sample in samples if len(sample) > 3 and sample[3] is not None]
    for position, sample in enumerate(samples):
        stamp, text = sample[0], sample[2]
        current = _brw_targets(parse_brw_stats(text))
        if position == 0:
            previous = dict((target, _series_view(parsed, titles)) for target, parsed in current.items())
            continue
        index = len(times)
        times.append(round(stamp, 3))
        for target, parsed in current.items():
            view = _series_view(parsed, titles)
            histograms, reset = brw_delta(previous.get(target), view)
            entry = series.setdefault(target, {'resets': [], 'histograms': {}})
            if reset:
                entry['resets'].append(index)
            for title, rows in histograms.items():
                if not rows:
                    continue
                kept = entry['histograms'].setdefault(title, {'buckets': [], 'deltas': []})
                for row in rows:
                    if row['bucket'] not in kept['buckets']:
                        kept['buckets'].append(row['bucket'])
                    kept['deltas'].append([index, kept['buckets'].index(row['bucket']), row['read']['count'],
                                           row['write']['count']])
            # A target missing from a sample keeps its last counts as the base of its next delta.
            previous[target] = view
    for entry in series.values():
        entry['times'] = times
        if tooks:
            entry['read_s'] = math.ceil(max(tooks) * 1000) / 1000.0
    return series


def counters_delta(start, end):
    """Counter deltas of one parameter: ``(counters, reset)``; ``start`` None means counted from zero."""
    before = {} if start is None else start['counters']
    counted = any(counter['count'] for counter in before.values())
    reset = start is None or (counted and start.get('start_time') is not None and end.get('start_time') is not None
                              and end['start_time'] != start['start_time'])
    if not reset:
        for name, counter in end['counters'].items():
            old = before.get(name)
            if old and counter['count'] < old['count']:
                reset = True
    counters = {}
    for name, counter in sorted(end['counters'].items()):
        old = None if reset else before.get(name)
        count = counter['count'] - (old['count'] if old else 0)
        if count <= 0:
            continue
        total = None
        if counter['sum'] is not None:
            total = counter['sum'] - (old['sum'] if old and old['sum'] is not None else 0)
        counters[name] = {'count': count, 'sum': total, 'unit': counter['unit']}
    return counters, bool(reset and start is not None)


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


def vmstat_summary(rows):
    """Mean and peak of CPU busy (us+sy, plus st/gu when printed) and iowait over the samples."""
    if not rows:
        return {'samples': 0, 'cpu_busy_pct': None, 'iowait_pct': None}
    busy = [row.get('us', 0) + row.get('sy', 0) for row in rows]
    wait = [row.get('wa', 0) for row in rows]
    return {
        'samples': len(rows),
        'cpu_busy_pct': {'mean': round(sum(busy) / float(len(busy)), 2), 'max': max(busy)},
        'iowait_pct': {'mean': round(sum(wait) / float(len(wait)), 2), 'max': max(wait)},
    }


# -- processes ----------------------------------------------------------------------------------------


def sampler_alive(entry):
    """True while the process of a manifest entry runs: same pid, same start time, not a zombie."""
    return entry.get('pid') is not None and is_same_process(entry) and not has_exited(entry['pid'])


def _leads_own_group(pid):
    try:
        return os.getpgid(pid) == pid
    except OSError:
        return False


def _signal(pid, signum):
    """Our samplers lead their own group (lctl children included); anything else gets only its own signal."""
    try:
        if _leads_own_group(pid):
            os.killpg(pid, signum)
        else:
            os.kill(pid, signum)
    except OSError:
        pass


def find_executable(name, path=None):
    """The full path of ``name`` in PATH (plus the sbin directories, where root's tools live), or None."""
    if os.sep in name:
        return name if os.access(name, os.X_OK) else None
    directories = (path if path is not None else os.environ.get('PATH', '')).split(os.pathsep)
    for directory in directories + ['/usr/sbin', '/sbin', '/usr/bin', '/bin']:
        candidate = os.path.join(directory or '.', name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


class Spawner:
    """Starts a sampler detached: its own session and process group, output to files, no wait."""

    def spawn(self, argv, stdout_path, stderr_path, env=None):
        """Start ``argv``; returns the Popen object (``pid``, ``poll()``)."""
        with open(stdout_path, 'ab') as out, open(stderr_path, 'ab') as err:
            # start_new_session: no terminal hang-up reaches it and killpg stops the lctl it runs;
            # AnsibleModule.run_command waits for its child, which a sampler must outlive.
            return subprocess.Popen(  # pylint: disable=ansible-bad-function
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=child_environment(env), cwd='/',
                close_fds=True, start_new_session=True)


# -- the collection -----------------------------------------------------------------------------------


def interval_problems(intervals, collectors, max_duration_s):
    """Invalid interval settings, each message naming the option."""
    problems = []
    for name in collectors:
        value = intervals.get(name)
        if value is None:
            continue
        if name in (VMSTAT, IOSTAT) and value < 1:
            problems.append('%s_interval: %s samples every N >= 1 seconds, got %d' % (name, name, value))
        elif value < 0:
            problems.append('%s_interval: 0 (a snapshot at start and at stop) or N >= 1 seconds, got %d'
                            % (name, value))
    if max_duration_s < 1:
        problems.append('max_duration_s: must be at least 1 second, got %d' % max_duration_s)
    return problems


class StatsCollection:
    """The samplers of one run on this node.

    ``runner`` runs short commands (probes, ``lctl get_param`` snapshots) and
    waits for them; ``spawner`` starts the long-running samplers without
    waiting.  Tests pass fakes of both.
    """

    def __init__(self, runner, node_state, run_id, workdir, host=None, spawner=None, lctl='lctl', clock=time.time,
                 which=find_executable, python=None, grace_s=DEFAULT_GRACE_S, sleep=time.sleep, alive=sampler_alive,
                 signal_process=_signal):
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
            raise StatsError('%s is not valid JSON (%s); move it aside to start again' % (self.manifest_path, exc))
        if not isinstance(manifest, dict) or manifest.get('schema') != MANIFEST_SCHEMA:
            raise StatsError('%s is not a stats_collect manifest' % self.manifest_path)
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
        first = _brw_targets(parse_brw_stats(first_text))
        last = _brw_targets(parse_brw_stats(last_text))
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
