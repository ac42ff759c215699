# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parser for the summary that mdtest prints (mdtest 1.8 to 4.x, IO500 runs).

Forms handled (from hpc/ior ``src/mdtest.c`` and published outputs):

- 1.8/1.9: ``SUMMARY: (of N iterations)``, rows ``Directory creation:  1 2 3 4``.
- 3.x: ``SUMMARY rate: (of N iterations)`` and, with ``-Z``/print-rate-and-time,
  ``SUMMARY time: (of N iterations)``; row names padded then ``:``;
  ``File create (stonewall)   :  NA  NA  123.4  NA``.
- 4.x: the same titles with no colon after the names, and since 2024
  ``SUMMARY rate (in ops/sec): ...`` / ``SUMMARY time (in ms/op): ...``
  (that label is wrong: the figures are still seconds, see mdtest.c).
- ``-P`` (per-rank statistics): seven figures per row; the header says which
  four are the per-iteration ones (``summary``) and the rest go to ``per_rank``.
- A table without the Std Dev column: ``stddev`` is null.

Only the first run is reported at the top level.  When the text holds more
than one run (``-f``/``-l``/``-s`` task sweeps print one summary per task
count, a log can hold several invocations), ``runs`` lists each run.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import (
    NUMBER,
    clean_lines,
    ensure_text,
    to_number,
)

_LAUNCH_RE = re.compile(
    r'mdtest-(?P<version>\S+)\s+was\s+launched\s+with\s+(?P<tasks>\d+)\s+total\s+task\(s\)'
    r'(?:\s+on\s+(?P<nodes>\d+)\s+node\(s\))?')
_SUMMARY_RE = re.compile(
    r'^SUMMARY(?:\s+(?P<kind>rate|time))?(?:\s*\((?P<label>[^)]*)\))?\s*:\s*'
    r'(?:\(\s*of\s+(?P<iterations>\d+)\s+iterations?\s*\))?', re.IGNORECASE)
_HEADER_RE = re.compile(r'^Operation\b(?P<rest>.*)$')
_DASHES_RE = re.compile(r'^-{3,}(?:\s+-{3,})*$')
_VALUE = r'(?:' + NUMBER + r'|NA|-?nan|-?inf)'
_ROW_RE = re.compile(
    r'^(?P<name>[A-Za-z][A-Za-z ()]*?)\s*:?\s+(?P<values>' + _VALUE + r'(?:\s+' + _VALUE + r')*)\s*$',
    re.IGNORECASE)
_NAME_ONLY_RE = re.compile(r'^(?P<name>[A-Za-z][A-Za-z ()]*?)\s*:\s*$')
_TASKS_RE = re.compile(r'^(?P<tasks>\d+)\s+tasks,\s+(?P<items>\d+)\s+(?:files|directories|files/directories)\b')
_KNOWN_OPS = (
    'directory creation', 'directory stat', 'directory read', 'directory rename', 'directory removal',
    'file creation', 'file create (stonewall)', 'file stat', 'file read', 'file removal',
    'tree creation', 'tree removal',
)
_MPI_NOISE_RE = re.compile(r'^(?:\[[^\]]*:\d+\]|-{5,}$|\*\*\*)')


def _empty_run():
    return {
        'version': None,
        'tasks': None,
        'nodes': None,
        'iterations': None,
        'summary': {},
        'unit': 'ops/sec',
    }


def _figure(token):
    # mdtest prints NA for figures it does not compute; nan/inf are not JSON.
    return to_number(token)


def _row_values(values, layout):
    """Map the printed figures to max/min/mean/stddev (and per-rank ones)."""
    figures = [_figure(token) for token in values]
    row = {'max': None, 'min': None, 'mean': None, 'stddev': None}
    if layout == 'rank_first_iteration_with_stddev' and len(figures) == 7:
        # 4.x -P: per rank max/min/mean, then per iteration max/min/mean/stddev.
        row.update(zip(('max', 'min', 'mean', 'stddev'), figures[3:]))
        row['per_rank'] = dict(zip(('max', 'min', 'mean'), figures[:3]))
        return row
    if layout == 'rank_with_stddev_first' and len(figures) == 7:
        # 2020 development builds: per rank max/min/mean/stddev, then per iteration max/min/mean.
        row.update(zip(('max', 'min', 'mean'), figures[4:]))
        row['per_rank'] = dict(zip(('max', 'min', 'mean', 'stddev'), figures[:4]))
        return row
    row.update(zip(('max', 'min', 'mean', 'stddev'), figures[:4]))
    return row


def _layout(header_rest):
    text = ' '.join(header_rest.split()).lower()
    if 'per rank' in text and 'per iteration' in text:
        rank_part = text.split('per iteration', 1)[0]
        if 'std' in rank_part.split('per rank', 1)[-1]:
            return 'rank_with_stddev_first'
        return 'rank_first_iteration_with_stddev'
    return 'plain'


def _normal_name(name):
    return ' '.join(name.replace(':', ' ').split()).lower()


def parse_mdtest(text):
    """Parse mdtest output into one object (see parsed-results.md)."""
    text = ensure_text(text, 'parse_mdtest')
    runs = []
    run = _empty_run()
    table = None
    table_kind = None
    layout = 'plain'
    pending_name = None

    def finish(current):
        if current['summary'] or current.get('summary_time'):
            runs.append(current)

    for line in clean_lines(text):
        if not line:
            continue
        launch = _LAUNCH_RE.search(line)
        if launch:
            if run['summary'] or run.get('summary_time'):
                finish(run)
                run = _empty_run()
            run['version'] = launch.group('version')
            run['tasks'] = int(launch.group('tasks'))
            run['nodes'] = int(launch.group('nodes')) if launch.group('nodes') else None
            table = None
            continue
        tasks = _TASKS_RE.match(line)
        if tasks:
            if run['summary'] or run.get('summary_time'):
                # A task sweep (-f/-l/-s) prints one summary per task count.
                previous = run
                finish(previous)
                run = _empty_run()
                for key in ('version', 'nodes'):
                    run[key] = previous[key]
            run['tasks'] = int(tasks.group('tasks'))
            table = None
            continue
        summary = _SUMMARY_RE.match(line)
        if summary:
            kind = (summary.group('kind') or 'rate').lower()
            key = 'summary' if kind == 'rate' else 'summary_time'
            if run.get(key):
                finish(run)
                previous = run
                run = _empty_run()
                for copy in ('version', 'tasks', 'nodes'):
                    run[copy] = previous[copy]
            if summary.group('iterations'):
                run['iterations'] = int(summary.group('iterations'))
            table = run.setdefault(key, {})
            table_kind = kind
            if kind == 'time':
                run['summary_time_unit'] = 'sec'
            layout = 'plain'
            pending_name = None
            continue
        if table is None:
            continue
        header = _HEADER_RE.match(line)
        if header:
            layout = _layout(header.group('rest'))
            continue
        if _DASHES_RE.match(line):
            continue
        if pending_name is not None:
            # A row wrapped after its name: the figures follow on the next line.
            values = line.split()
            if values and all(re.match('^' + _VALUE + '$', value, re.IGNORECASE) for value in values):
                table[pending_name] = _row_values(values, layout)
                pending_name = None
                continue
            pending_name = None
        row = _ROW_RE.match(line)
        if row:
            name = _normal_name(row.group('name'))
            if name in _KNOWN_OPS or name.startswith(('directory ', 'file ', 'tree ')):
                table[name] = _row_values(row.group('values').split(), layout)
                continue
        only_name = _NAME_ONLY_RE.match(line)
        if only_name:
            name = _normal_name(only_name.group('name'))
            if name in _KNOWN_OPS:
                # 1.9 prints `File read :` with nothing after it when -E/-e was not used.
                pending_name = name
                table[name] = {'max': None, 'min': None, 'mean': None, 'stddev': None}
                continue
        if _MPI_NOISE_RE.match(line) or table_kind is None:
            continue
        # The table ends at the first line that is neither a row nor noise
        # (`-- finished at ...`, the next run's header, a prompt).
        table = None
        table_kind = None

    finish(run)
    if not runs:
        return _empty_run()
    result = dict(runs[0])
    if len(runs) > 1:
        result['runs'] = [dict(item) for item in runs]
    return result
