# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A survey's results of a run as Prometheus text for node_exporter's textfile collector, and as OpenMetrics
with the run's own time for ``promtool tsdb create-blocks-from openmetrics`` (docs/monitoring.md)::

    export = series.run_series(results_dir, run_id, 'obdfilter')
    paths = write_run(directory, export)  # lustre_iokit_obdfilter.prom and lustre_iokit_obdfilter.<run_id>.om

The ``.prom`` file is the survey's latest exported run: the collector reads every ``*.prom`` of its directory at
each scrape and refuses a file with timestamps, so it has none, and one name per survey means a newer run replaces
the older one's series in one rename instead of two runs being served side by side. The ``.om`` file keeps each
run with its finish time for backfilling history; the collector ignores it.
Controller-side code, no Ansible imports.
"""

from __future__ import annotations

import os

from ansible_collections.lustre.iokit.plugins.module_utils.results import validate_run_id
from ansible_collections.lustre.iokit.plugins.plugin_utils.export.series import RunExport, metric_suffix
from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import write_bytes_atomic

PREFIX = 'lustre_iokit'
RUN_INFO = PREFIX + '_run_info'
RUN_FINISHED = PREFIX + '_run_finished_timestamp_seconds'
TEXTFILE_SUFFIX = '.prom'
OPENMETRICS_SUFFIX = '.om'

# Shared by every survey's file: node_exporter merges a name found in several files, and their help must agree.
RUN_HELP = {
    RUN_INFO: 'The lustre.iokit run whose results a survey\'s series show (value always 1).',
    RUN_FINISHED: 'When the survey\'s exported run finished (the latest end over its hosts), in seconds since the epoch.',
}
UNIT_WORDS = {'bytes_per_second': 'bytes per second', 'operations_per_second': 'operations per second'}


def escape_label_value(value: str) -> str:
    return value.replace('\\', '\\\\').replace('\n', '\\n').replace('"', '\\"')


def escape_help(text: str) -> str:
    return text.replace('\\', '\\\\').replace('\n', '\\n')


def format_value(value: float) -> str:
    """The shortest text that reads back as the same float (``repr``), integers without ``.0``."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else repr(float(value))


def rate_metric(survey: str, test: str, unit: str) -> str:
    """``lustre_iokit_<survey>_<test>_<base unit>``, e.g. ``lustre_iokit_obdfilter_write_bytes_per_second``."""
    return '%s_%s_%s_%s' % (PREFIX, survey, metric_suffix(test), unit)


def duration_metric(survey: str) -> str:
    return '%s_%s_duration_seconds' % (PREFIX, survey)


def _labels(pairs) -> str:
    return '{%s}' % ','.join('%s="%s"' % (name, escape_label_value(value)) for name, value in pairs)


def families(export: RunExport) -> list[tuple[str, str, list[tuple[tuple, float]]]]:
    """``[(metric name, help, [(label pairs, value)])]``: what both formats write, each name once."""
    grouped: dict = {}
    helps: dict = {}
    for one in export.series:
        name = rate_metric(one.survey, one.test, one.unit)
        helps[name] = ('lustre.iokit %s survey, test %s: the median over iterations of each sweep point, in %s.'
                       % (one.survey, one.test, UNIT_WORDS[one.unit]))
        labels = [('component', one.component)]
        if one.target is not None:
            labels.append(('target', one.target))
        labels.append(('host', one.host))
        labels.extend(one.point)
        grouped.setdefault(name, []).append((tuple(labels), one.value))
    result = [(RUN_INFO, RUN_HELP[RUN_INFO], [((('run_id', export.run_id), ('survey', export.survey)), 1.0)])]
    if export.finished is not None:
        result.append((RUN_FINISHED, RUN_HELP[RUN_FINISHED], [((('survey', export.survey),), float(export.finished))]))
    if export.durations:
        result.append((duration_metric(export.survey),
                       'lustre.iokit %s survey: how long the exported run took on each host, in seconds.' % export.survey,
                       [((('host', host),), seconds) for host, seconds in sorted(export.durations.items())]))
    result.extend((name, helps[name], grouped[name]) for name in sorted(grouped))
    return result


def textfile(export: RunExport) -> str:
    """The Prometheus text format for node_exporter's textfile collector: no timestamps, HELP and TYPE once a name."""
    lines = []
    for name, help_text, samples in families(export):
        lines.append('# HELP %s %s' % (name, escape_help(help_text)))
        lines.append('# TYPE %s gauge' % name)
        lines.extend('%s%s %s' % (name, _labels(labels), format_value(value)) for labels, value in samples)
    return '\n'.join(lines) + '\n'


def openmetrics(export: RunExport) -> str:
    """OpenMetrics text with the run's finish time on every sample and ``# EOF``, for backfilling with promtool.

    ValueError when no envelope of the run says when it finished: a sample without its time would be placed at
    the time of the backfill.
    """
    if export.finished is None:
        raise ValueError('run %s: no %s result says when it finished; cannot write a backfill file'
                         % (export.run_id, export.survey))
    lines = []
    for name, help_text, samples in families(export):
        # OpenMetrics names an info family without its _info suffix and reserves the suffix for that type.
        family, kind = (name[:-len('_info')], 'info') if name == RUN_INFO else (name, 'gauge')
        lines.append('# TYPE %s %s' % (family, kind))
        lines.append('# HELP %s %s' % (family, escape_help(help_text)))
        lines.extend('%s%s %s %d' % (name, _labels(labels), format_value(value), export.finished)
                     for labels, value in samples)
    lines.append('# EOF')
    return '\n'.join(lines) + '\n'


def textfile_path(directory: str, survey: str) -> str:
    return os.path.join(directory, '%s_%s%s' % (PREFIX, survey, TEXTFILE_SUFFIX))


def openmetrics_path(directory: str, survey: str, run_id: str) -> str:
    return os.path.join(directory, '%s_%s.%s%s' % (PREFIX, survey, validate_run_id(run_id), OPENMETRICS_SUFFIX))


def write_run(directory: str, export: RunExport) -> list[str]:
    """Write the survey's textfile and, when the run's finish time is known, its OpenMetrics file; each atomically.

    Both texts are made before any file is touched; each is written to a temporary name in ``directory`` (a
    dot file ending ``.tmp``, which the collector does not read) and renamed, so that a scrape sees the old file or
    the new one. Returns the paths written.
    """
    texts = [(textfile_path(directory, export.survey), textfile(export))]
    if export.finished is not None:
        texts.append((openmetrics_path(directory, export.survey, export.run_id), openmetrics(export)))
    return [write_bytes_atomic(path, text.encode('utf-8')) for path, text in texts]
