# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A running survey's progress, kept in its run directory on the node.

Two files in ``<workdir>/<run_id>/``, named after the survey:

``<survey>.points.jsonl``
    one JSON line per finished sweep point (its record, when it ended, how long it took), appended and fsync'd
    before the next point starts: a survey killed at any moment leaves every point it finished here.
``<survey>.progress.json``
    the latest summary (points done and planned, the point now running, elapsed, the last point's figure, an
    ETA), replaced atomically after each point, for ``async_result`` to return on every poll.

Target-side code: pure standard library, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import time

from ansible_collections.lustre.iokit.plugins.module_utils import results
from ansible_collections.lustre.iokit.plugins.module_utils.units import is_number

PROGRESS_SCHEMA = 'lustre.iokit/progress/v1'

# Keys that place a record in its sweep (the first of these a record has, in this order).
POINT_KEYS = ('rsz_kib', 'obj', 'thr', 'crg', 'region_count', 'threads', 'thread_count', 'file_count', 'dir_count',
              'concurrency', 'size', 'step', 'access', 'nodes', 'tasks_per_node', 'transfer_kib', 'transfer_size', 'api',
              'mode', 'test', 'ost', 'target')


# What a cleanup leaves of a run directory: the finished points (for a rerun to resume from), their summary and
# the attempts with the parameters they measured.
KEPT_SUFFIXES = ('.points.jsonl', '.progress.json', '.attempts.json')


# Parameters that bound how long an attempt may run, not what a point measures: a rerun may change them (a longer
# timeout for the attempt that finishes the sweep) and still resume.
BOUNDS_OF_AN_ATTEMPT = frozenset(['timeout'])


def resume_argument_spec():
    """force_rerun (doc fragment lustre.iokit.resume)."""
    return dict(force_rerun=dict(type='bool', default=False))


class ResumeError(ValueError):
    """The run directory holds points of other survey parameters."""


def attempts_path(run_dir, survey):
    return os.path.join(run_dir, '%s.attempts.json' % survey)


def finished_record(record):
    """True for a point measured whole: no error, no test cut short (such a point is measured again)."""
    if not isinstance(record, dict) or record.get('error'):
        return False
    tests = record.get('tests')
    if isinstance(tests, dict):
        return all(isinstance(result, dict) and result.get('status') in (None, 'ok') for result in tests.values())
    return True


def start_attempt(run_dir, survey, parameters, force=False, clock=time.time):
    """Begin an attempt of the run in ``run_dir``: ``(attempt, attempts, records)``.

    ``records`` are the points earlier attempts finished whole, each with its ``attempt``; ``attempts`` lists
    every attempt with its start and end (this one's end null). ``force`` forgets the earlier attempts.
    Raises ResumeError when the earlier attempts measured other ``parameters``: their points are never mixed.
    """
    files = [points_path(run_dir, survey), attempts_path(run_dir, survey), progress_path(run_dir, survey)]
    if force:
        for path in files:
            if os.path.lexists(path):
                os.unlink(path)
    attempts, earlier_parameters = [], None
    try:
        with open(files[1]) as stream:
            saved = json.load(stream)
        attempts, earlier_parameters = list(saved['attempts']), saved['parameters']
    except (IOError, OSError, ValueError, KeyError, TypeError):
        pass
    changed = []
    if earlier_parameters is not None:
        changed = sorted(key for key in set(earlier_parameters) | set(parameters)
                         if key not in BOUNDS_OF_AN_ATTEMPT
                         and earlier_parameters.get(key) != json.loads(json.dumps(parameters.get(key))))
    if changed:
        raise ResumeError('this run id already measured %s points here with other parameters (%s changed: %s); '
                          'a changed sweep is a new run: give a new iokit_run_id, or iokit_force_rerun=true to '
                          'start this one over' % (survey, ', '.join(changed),
                                                   '; '.join('%s was %r' % (key, earlier_parameters.get(key))
                                                             for key in changed)))
    records = []
    try:
        with open(files[0]) as stream:
            for line in stream:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue  # the torn last line of a killed write: that point is measured again
                if isinstance(entry, dict) and finished_record(entry.get('record')):
                    records.append(dict(entry['record'], attempt=entry.get('attempt', 1)))
    except (IOError, OSError):
        pass
    attempt = max([item.get('attempt', 0) for item in attempts] + [0]) + 1
    attempts.append({'attempt': attempt, 'started': results.utc_timestamp(clock()), 'finished': None})
    _write_json(files[1], {'parameters': parameters, 'attempts': attempts})
    return attempt, attempts, records


def end_attempt(run_dir, survey, attempt, clock=time.time):
    """Note the end of ``attempt``; the attempts as the envelope lists them."""
    path = attempts_path(run_dir, survey)
    with open(path) as stream:
        saved = json.load(stream)
    for item in saved['attempts']:
        if item.get('attempt') == attempt:
            item['finished'] = results.utc_timestamp(clock())
    _write_json(path, saved)
    return saved['attempts']


def _write_json(path, value):
    temporary = path + '.tmp'
    with open(temporary, 'w') as stream:
        json.dump(value, stream, sort_keys=True)
        stream.flush()
        os.fsync(stream.fileno())
    os.rename(temporary, path)


def _complete(path, names):
    """True when every survey of the run directory ended ``ok``: nothing left for a rerun to resume."""
    summaries = [name for name in names if name.endswith('.progress.json')]
    for name in summaries:
        try:
            with open(os.path.join(path, name)) as stream:
                if json.load(stream).get('state') != results.STATUS_OK:
                    return False
        except (IOError, OSError, ValueError, AttributeError):
            return False
    return True


def _holds_a_finished_point(points_file):
    """True when a line of the points file is a point a rerun would keep (``finished_record``): a point cut short
    by the stop that ended the run is measured again, so it alone is no reason to keep the files."""
    try:
        with open(points_file) as stream:
            for line in stream:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if isinstance(entry, dict) and finished_record(entry.get('record')):
                    return True
    except (IOError, OSError):
        return False
    return False


def remove_tree_keeping_points(path, keep_finished=False):
    """Remove the tree at ``path``, except the progress files of a run that did not complete; True when all went.

    ``keep_finished`` keeps them for a completed run too: its result has not reached the controller's store (a full
    results directory), and a rerun takes the points from here instead of measuring them again.
    """
    names = os.listdir(path)
    # Something to resume: finished points of a run that did not end ok, or whose result was not stored.
    keep = any(name.endswith('.points.jsonl') and _holds_a_finished_point(os.path.join(path, name))
               for name in names) and (keep_finished or not _complete(path, names))
    kept = False
    for name in names:
        child = os.path.join(path, name)
        if keep and name.endswith(KEPT_SUFFIXES) and os.path.isfile(child) and not os.path.islink(child):
            kept = True
        elif os.path.isdir(child) and not os.path.islink(child):
            shutil.rmtree(child)
        else:
            os.unlink(child)
    if not kept:
        os.rmdir(path)
    return not kept


def points_path(run_dir, survey):
    return os.path.join(run_dir, '%s.points.jsonl' % survey)


PROGRESS_SUFFIX = '.progress.json'


def progress_path(run_dir, survey):
    return os.path.join(run_dir, survey + PROGRESS_SUFFIX)


def progress_run_and_survey(path):
    """``(run_id, survey)`` of a progress file at ``<workdir>/<run_id>/<survey>.progress.json``, else (None, None)."""
    name = os.path.basename(path or '')
    run_id = os.path.basename(os.path.dirname(path or ''))
    if not name.endswith(PROGRESS_SUFFIX) or not run_id or name == PROGRESS_SUFFIX:
        return None, None
    return run_id, name[:-len(PROGRESS_SUFFIX)]


def point_of(record):
    """The sweep coordinates of ``record``: its scalar values under the usual sweep keys."""
    return dict((key, record[key]) for key in POINT_KEYS
                if key in record and isinstance(record[key], (int, float, str)) and not isinstance(record[key], bool))


# Top-level rates of a record, as ``(key, name shown)``: lnet's and ost's per-direction figures, IOR's means.
DIRECTION_RATES = (('write_mib_s', 'write'), ('read_mib_s', 'read'), ('ior_write_mib_s', 'write'),
                   ('ior_read_mib_s', 'read'))


# mdtest's operations (parse_mdtest's names) that make its point's figure, when the point measured them.
MDTEST_FIGURES = ('file creation', 'file stat', 'file read', 'file removal')


def figure_of(record):
    """A short text of the point's result: each test's aggregate rate (``write 812.3 MiB/s``), mdtest's mean rate
    of each file operation (``file creation 1800.0 ops/s``), else None."""
    tests = record.get('tests')
    parts = []
    if isinstance(tests, dict):
        for name, result in tests.items():
            if isinstance(result, dict) and is_number(result.get('mib_s')):
                parts.append('%s %.1f MiB/s' % (name, result['mib_s']))
            elif isinstance(result, dict) and is_number(result.get('ops_s')):
                parts.append('%s %.1f ops/s' % (name, result['ops_s']))
    for key, name in DIRECTION_RATES:
        if is_number(record.get(key)):
            parts.append('%s %.1f MiB/s' % (name, record[key]))
    summary = record.get('summary')
    if record.get('unit') == 'ops/sec' and isinstance(summary, dict):
        for name in MDTEST_FIGURES:
            stats = summary.get(name)
            if isinstance(stats, dict) and is_number(stats.get('mean')):
                parts.append('%s %.1f ops/s' % (name, stats['mean']))
    for key, unit in (('mib_s', 'MiB/s'), ('ops_s', 'ops/s'), ('rate', '/s')):
        if not parts and isinstance(record.get(key), (int, float)) and not isinstance(record.get(key), bool):
            parts.append('%.1f %s' % (record[key], unit))
    return ', '.join(parts) or None


def estimate_remaining_s(elapsed_s, done_weight, total_weight, planned_remaining_s=None):
    """Seconds left: the rate measured so far applied to the work left; the plan's figure before any point ended.

    Weights are the points' planned costs (bytes, or 1 each): a sweep whose later points move more data is not
    promised to end early because its first points were small.
    """
    if done_weight > 0 and elapsed_s > 0:
        return max(0.0, (total_weight - done_weight) * elapsed_s / done_weight)
    return planned_remaining_s


def planned_points(points, keys, weight_key=None):
    """The runnable points of an engine's plan (``skip`` None) as ``ProgressLog`` wants them: ``keys`` and a weight."""
    planned = []
    for point in points:
        if point.get('skip') is None:
            entry = dict((key, point[key]) for key in keys if key in point)
            if weight_key is not None:
                entry['weight'] = point.get(weight_key)
            planned.append(entry)
    return planned


class ProgressLog:
    """Writes the progress files of one survey run; ``point_done`` is called once per finished point.

    ``planned`` is the list of points the engine plans to run (dicts; an optional ``weight`` each, e.g. its bytes),
    ``planned_duration_s`` the plan's estimate of the whole sweep (None when unknown).
    A survey that ends with one record for its whole sweep (ost) counts its steps instead (``step_done``).
    """

    def __init__(self, run_dir, survey, run_id, host, planned=None, planned_duration_s=None, attempt=1,
                 done_before=0, clock=time.time):
        self.run_dir = run_dir
        self.survey = survey
        self.run_id = run_id
        self.host = host
        self.planned = list(planned or [])
        self.planned_duration_s = planned_duration_s
        self.attempt = attempt
        self._clock = clock
        self.started = clock()
        self._point_started = self.started
        # Points earlier attempts finished: counted as done, not in the rate this attempt measures.
        self.done_before = done_before
        self.done = 0
        self.done_weight = 0.0
        self.last = None
        self.state = 'running'
        self.problems = []
        self.envelope_fields = None
        # Records already logged: one handed over twice is counted once.
        self._logged = set()
        self._steps = False
        self._write_summary()

    def point_skipped(self, point):
        """A planned point the sweep will not run (its adaptive step stopped): out of the total, the current point
        and the ETA. ``point`` matches the first planned point not yet done whose keys it has with the same values;
        True when one did."""
        for index in range(self.done, len(self.planned)):
            entry = self.planned[index]
            if all(key in point and point[key] == value for key, value in entry.items() if key != 'weight'):
                del self.planned[index]
                self._write_summary()
                return True
        return False

    def step_done(self, point, figure=None):
        """One step of a sweep whose single record comes at its end (ost: an OST written or read) is done.

        Counted and shown as a point (``figure`` its result, None after a failure); the record, when it comes, is
        still kept in the points file but not counted again.
        """
        now = self._clock()
        self._steps = True
        self.done_weight += self._weight(self.done)
        self.done += 1
        self.last = {'point': dict(point), 'figure': figure, 'duration_s': round(now - self._point_started, 3)}
        self._point_started = now
        self._write_summary(now)

    def point_withdrawn(self, record):
        """A point counted as done, by an earlier attempt or this one, has left the envelope (EnvelopeBuilder.
        withdraw_record): it no longer counts, so that the run ends at done == total with the points it keeps."""
        if record.get('attempt', self.attempt) != self.attempt and self.done_before > 0:
            self.done_before -= 1
        elif self.done > 0:
            self.done -= 1
        self._write_summary()

    @property
    def total(self):
        return self.done_before + max(len(self.planned), self.done)

    def _weight(self, index):
        if index < len(self.planned):
            weight = self.planned[index].get('weight')
            if isinstance(weight, (int, float)) and weight > 0:
                return float(weight)
        return 1.0

    def _total_weight(self):
        planned = sum(self._weight(index) for index in range(len(self.planned)))
        return max(planned, self.done_weight)

    def point_done(self, record):
        """Append the finished point durably, then refresh the summary."""
        if id(record) in self._logged:
            return
        self._logged.add(id(record))
        now = self._clock()
        # The record in the envelope says which attempt measured it (the builder holds the same dict).
        record.setdefault('attempt', self.attempt)
        line = {'n': self.done_before + self.done + 1, 'attempt': self.attempt, 'point': point_of(record),
                'started': results.utc_timestamp(self._point_started), 'finished': results.utc_timestamp(now),
                'duration_s': round(now - self._point_started, 3), 'record': record}
        try:
            with open(points_path(self.run_dir, self.survey), 'a') as stream:
                stream.write(json.dumps(line, sort_keys=True) + '\n')
                stream.flush()
                os.fsync(stream.fileno())
        except (IOError, OSError, TypeError, ValueError) as exc:
            self._problem('cannot append the point to %s: %s' % (points_path(self.run_dir, self.survey), exc))
        if self._steps:
            # its steps were counted as they ended
            return
        self.done_weight += self._weight(self.done)
        self.done += 1
        self.last = {'point': line['point'], 'figure': figure_of(record), 'duration_s': line['duration_s']}
        self._point_started = now
        self._write_summary(now)

    def finish(self, status):
        """The survey ended (``status`` from its envelope); a resumable run notes the attempt's end.

        With ``envelope_fields`` (the builder's extra fields) set, the envelope lists the attempts.
        """
        self.state = status
        self._write_summary()
        if self.envelope_fields is not None:
            try:
                self.envelope_fields['attempts'] = end_attempt(self.run_dir, self.survey, self.attempt, self._clock)
            except (IOError, OSError, ValueError, KeyError) as exc:
                self._problem('cannot note the end of attempt %d: %s' % (self.attempt, exc))

    def summary(self, now=None):
        now = self._clock() if now is None else now
        elapsed = max(0.0, now - self.started)
        planned_left = None
        if self.planned_duration_s is not None:
            planned_left = max(0.0, self.planned_duration_s - elapsed)
        remaining = estimate_remaining_s(elapsed, self.done_weight, self._total_weight(), planned_left)
        if self.state != 'running':
            remaining = 0.0
        current = None
        if self.state == 'running' and self.done < len(self.planned):
            current = dict((key, value) for key, value in self.planned[self.done].items() if key != 'weight')
        return {'schema': PROGRESS_SCHEMA, 'survey': self.survey, 'run_id': self.run_id, 'host': self.host,
                'attempt': self.attempt, 'state': self.state, 'done': self.done_before + self.done,
                'total': self.total,
                'current': current, 'started': results.utc_timestamp(self.started),
                'elapsed_s': round(elapsed, 1), 'last': self.last,
                'eta_s': None if remaining is None else round(remaining, 1),
                'updated': results.utc_timestamp(now), 'updated_epoch': round(now, 3)}

    def _problem(self, message):
        # The measurement matters more than its progress report: a full disk here is noted, not fatal.
        if message not in self.problems:
            self.problems.append(message)

    def _write_summary(self, now=None):
        path = progress_path(self.run_dir, self.survey)
        temporary = path + '.tmp'
        try:
            with open(temporary, 'w') as stream:
                json.dump(self.summary(now), stream, sort_keys=True)
                stream.flush()
                os.fsync(stream.fileno())
            os.rename(temporary, path)
        except (IOError, OSError) as exc:
            self._problem('cannot write %s: %s' % (path, exc))


def read_progress(path, now=None):
    """The progress summary at ``path`` with its elapsed time and ETA brought up to ``now``; None if absent.

    The file is written only when a point ends: between points the elapsed time still moves, and the ETA
    counts down from what the last point measured.
    """
    try:
        with open(path) as stream:
            summary = json.load(stream)
    except (IOError, OSError, ValueError):
        return None
    if not isinstance(summary, dict) or summary.get('schema') != PROGRESS_SCHEMA:
        return None
    if summary.get('state') == 'running':
        now = time.time() if now is None else now
        updated = summary.get('updated_epoch')
        since = max(0.0, now - updated) if isinstance(updated, (int, float)) else 0.0
        summary['elapsed_s'] = round(summary.get('elapsed_s', 0) + since, 1)
        if isinstance(summary.get('eta_s'), (int, float)):
            summary['eta_s'] = round(max(0.0, summary['eta_s'] - since), 1)
    return summary
