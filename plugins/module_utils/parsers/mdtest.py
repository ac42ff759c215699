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
- A failed run prints no table: the version, nodes and task count of the
  first run are still given, with an empty ``summary``.

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

# "mdtest-<version> was launched with N total task(s)": the tail is found first and
# the version in the few characters before it, so a line full of "mdtest-" is
# not rescanned from each of them.
_LAUNCH_RE = re.compile(
    r'was\s+launched\s+with\s+(?P<tasks>\d+)\s+total\s+task\(s\)(?:\s+on\s+(?P<nodes>\d+)\s+node\(s\))?')
_VERSION_BEFORE_RE = re.compile(r'mdtest-(?P<version>\S+)\s+$')
_VERSION_WINDOW = 200
# A pasted title may be decorated (`**SUMMARY rate:**`, `> SUMMARY`) or cut short.
_SUMMARY_RE = re.compile(
    r'^\W*SUMMARY(?:\s+(?P<kind>rate|time))?(?:\s*\((?P<label>[^)]*)\))?\s*:?\s*'
    r'(?:\(\s*of\s+(?P<iterations>\d+)\s+iterations?\b)?', re.IGNORECASE)
_HEADER_RE = re.compile(r'^Operation\b(?P<rest>.*)$')
# The column titles of a rate or time table, which identify it when its title is lost.
_STAT_HEADER_RE = re.compile(r'^Operation\s+(?:per\s+Rank:\s+)?Max\s+Min\s+Mean\b', re.IGNORECASE)
# The rule under the column titles; pasted copies may shrink it to single dashes.
_DASHES_RE = re.compile(r'^-+(?:\s+-+)*$')
# "-- started at ... --" / "-- finished at ... --", also with single dashes or none.
_BANNER_RE = re.compile(r'^-*\s*(?:started|finished)\s+at\b', re.IGNORECASE)
_VALUE_RE = re.compile(r'^(?:' + NUMBER + r'|NA|[-+]?nan|[-+]?inf)$', re.IGNORECASE)
# mdtest prints every figure with three decimals: "22,523" is a decimal comma.
_DECIMAL_COMMA_RE = re.compile(r'^[-+]?\d+,\d{3}$')
_NAME_RE = re.compile(r'^[A-Za-z][A-Za-z ()]*$')
# "N tasks, M files/directories" ("files", "directories", or "1 file" with -S).
_TASKS_RE = re.compile(r'^(?P<tasks>\d+)\s+tasks,\s+(?P<items>\d+)\s+(?:files?|directories)\b')
# The words of column titles, for the end of a title line a mail client wrapped
# onto a line of its own (``Std Dev`` alone under ``Operation  Max  Min  Mean``).
_TITLE_WORD_RE = re.compile(r'^(?:max|min|mean|std|dev|stddev|per|rank|iteration):?$', re.IGNORECASE)
# Lines the column titles may be wrapped onto (the -P titles, the longest,
# take three at 72 columns); a bound keeps the parse linear.
_TITLE_LINES = 4
_KNOWN_OPS = (
    'directory creation', 'directory stat', 'directory read', 'directory rename', 'directory removal',
    'file creation', 'file create (stonewall)', 'file stat', 'file read', 'file removal',
    'tree creation', 'tree removal',
)


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


def _launch(line):
    """(version, tasks, nodes) from a launch banner anywhere in ``line``, or None."""
    if 'launched' not in line:
        return None
    for match in _LAUNCH_RE.finditer(line):
        version = _VERSION_BEFORE_RE.search(line, max(0, match.start() - _VERSION_WINDOW), match.start())
        if version:
            nodes = match.group('nodes')
            return version.group('version'), int(match.group('tasks')), int(nodes) if nodes else None
    return None


def _expected_figures(header_rest):
    """How many figures a complete row has under this header (None: unknown)."""
    words = header_rest.lower().split()
    count = words.count('max') + words.count('min') + words.count('mean')
    return count + (1 if 'std' in words or 'stddev' in words else 0) or None


def _split_row(line):
    """(name, figures) of a table row, or None.

    The name is everything before the trailing run of figures (and the
    colon after it); a row is split by tokens rather than by one pattern,
    whose lazy name would retry the rest of a long line at every word.
    """
    tokens = line.split()
    cut = len(tokens)
    while cut and (_VALUE_RE.match(tokens[cut - 1]) or _DECIMAL_COMMA_RE.match(tokens[cut - 1])):
        cut -= 1
    figures = tokens[cut:]
    name = tokens[:cut]
    if name and name[-1].endswith(':'):
        name[-1] = name[-1][:-1]
    name = ' '.join(name).strip()
    if not figures or not _NAME_RE.match(name):
        return None
    return name, figures


def _decimal_points(figures):
    """Figures with a decimal comma read with a point, when every figure has one."""
    numbers = [figure for figure in figures if not _VALUE_RE.match(figure) or any(c.isdigit() for c in figure)]
    if numbers and all(_DECIMAL_COMMA_RE.match(figure) for figure in numbers):
        return [figure.replace(',', '.') for figure in figures]
    return figures


def _title_words(line):
    """True when ``line`` holds nothing but column-title words."""
    words = line.split()
    return bool(words) and all(_TITLE_WORD_RE.match(word) for word in words)


def _all_figures(line):
    tokens = line.split()
    return tokens if tokens and all(_VALUE_RE.match(token) or _DECIMAL_COMMA_RE.match(token) for token in tokens) else None


class _Table(object):
    """The summary table being read: where its rows go and what a complete row is."""

    def __init__(self, rows):
        self.rows = rows
        self.layout = 'plain'
        self.expected = None
        # the column titles, while the next line may still be their wrapped end
        self.header = None
        self.header_lines = 0
        # a row whose name ended the line (1.9), or whose last figures a mail
        # client moved to the next line: (name, figures so far)
        self.open_row = None

    def set_header(self, rest, lines=1):
        self.header = rest
        self.header_lines = lines
        self.layout = _layout(rest)
        self.expected = _expected_figures(rest)

    def continue_header(self, line):
        """Join ``line`` to the column titles when it is their wrapped end; False otherwise."""
        header, self.header = self.header, None
        if header is None or self.header_lines >= _TITLE_LINES or not _title_words(line):
            return False
        # With the wrapped ``Std Dev`` counted, a row whose Std Dev was
        # wrapped too waits for it on the next line.
        self.set_header(header + ' ' + line, self.header_lines + 1)
        return True

    def store(self, name, figures):
        # Two rows of one operation (a paste joined twice): the first is kept.
        if name not in self.rows:
            self.rows[name] = _row_values(_decimal_points(figures), self.layout)

    def add_row(self, name, figures):
        if self.expected is not None and len(figures) < self.expected:
            self.open_row = (name, figures)
        else:
            self.store(name, figures)

    def continue_row(self, line):
        """Complete the open row with ``line``; False when ``line`` does not continue it."""
        name, figures = self.open_row
        more = _all_figures(line)
        if more is None:
            return False
        figures = figures + more
        if self.expected is not None and len(figures) < self.expected:
            self.open_row = (name, figures)
            return True
        self.open_row = None
        self.store(name, figures)
        return True

    def close_row(self):
        """Drop a row still short of figures (a truncated paste is not half-read)."""
        if self.open_row is not None:
            name, figures = self.open_row
            self.open_row = None
            if not figures:
                # 1.9 prints `File read :` alone when -E/-e was not used.
                self.store(name, [])


def parse_mdtest(text):
    """Parse mdtest output into one object (fields: RETURN of plugins/filter/parse_mdtest.py)."""
    text = ensure_text(text, 'parse_mdtest')
    runs = []
    run = _empty_run()
    table = None
    # column titles of a table whose SUMMARY title is missing, until its rule confirms it
    untitled_header = None
    untitled_lines = 0

    # The first run that printed no table (a failed run), reported when no run has one.
    unfinished = []

    def finish(current):
        if current['summary'] or current.get('summary_time'):
            runs.append(current)
        elif not unfinished and (current['tasks'] is not None or current['version'] is not None):
            unfinished.append(current)

    def close_table():
        if table is not None:
            table.close_row()

    def open_table(kind, iterations):
        previous = run
        key = 'summary' if kind == 'rate' else 'summary_time'
        current = run
        if current.get(key):
            finish(current)
            current = _empty_run()
            for copy in ('version', 'tasks', 'nodes'):
                current[copy] = previous[copy]
        if iterations:
            current['iterations'] = int(iterations)
        if kind == 'time':
            current['summary_time_unit'] = 'sec'
        return current, _Table(current.setdefault(key, {}))

    for line in clean_lines(text):
        if not line:
            continue
        launch = _launch(line)
        if launch:
            close_table()
            # Another invocation: the run so far is over, with or without a table.
            finish(run)
            run = _empty_run()
            run['version'], run['tasks'], run['nodes'] = launch
            table = untitled_header = None
            continue
        tasks = _TASKS_RE.match(line)
        if tasks:
            close_table()
            if run['summary'] or run.get('summary_time'):
                # A task sweep (-f/-l/-s) prints one summary per task count.
                previous = run
                finish(previous)
                run = _empty_run()
                for key in ('version', 'nodes'):
                    run[key] = previous[key]
            # Without a launch banner this line is the only task count.
            run['tasks'] = int(tasks.group('tasks'))
            table = untitled_header = None
            continue
        summary = _SUMMARY_RE.match(line)
        if summary:
            close_table()
            run, table = open_table((summary.group('kind') or 'rate').lower(), summary.group('iterations'))
            untitled_header = None
            continue
        if _BANNER_RE.match(line):
            close_table()
            table = untitled_header = None
            continue
        header = _HEADER_RE.match(line)
        if header and table is None and _STAT_HEADER_RE.match(line):
            untitled_header = header.group('rest')
            untitled_lines = 1
            continue
        if untitled_header is not None:
            if untitled_lines < _TITLE_LINES and _title_words(line):
                # The end of the column titles, wrapped onto a line of its own.
                untitled_header += ' ' + line
                untitled_lines += 1
                continue
            if _DASHES_RE.match(line):
                # A rate table whose SUMMARY line was lost or damaged.
                run, table = open_table('rate', None)
                table.set_header(untitled_header)
            untitled_header = None
            continue
        if table is None:
            continue
        if header:
            table.set_header(header.group('rest'))
            continue
        if table.continue_header(line):
            continue
        if _DASHES_RE.match(line):
            continue
        if table.open_row is not None:
            if table.continue_row(line):
                continue
            table.close_row()
        if line.endswith(':') and _NAME_RE.match(line[:-1].strip()):
            name = _normal_name(line)
            if name in _KNOWN_OPS:
                table.open_row = (name, [])
                continue
        row = _split_row(line)
        if row:
            name = _normal_name(row[0])
            if name in _KNOWN_OPS or name.startswith(('directory ', 'file ', 'tree ')):
                table.add_row(name, row[1])
                continue
        # Anything else inside a table (MPI chatter, a shell prompt, a note
        # the sender typed between the rows) is skipped; the table ends at a
        # banner, a title or the next run.

    close_table()
    finish(run)
    if not runs:
        # No table at all: a failed run keeps its version and task count, and
        # its summary stays empty.
        return unfinished[0] if unfinished else _empty_run()
    result = dict(runs[0])
    if len(runs) > 1:
        result['runs'] = [dict(item) for item in runs]
    return result
