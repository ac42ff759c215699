# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A survey's results of a run as InfluxDB line protocol, to a file or to InfluxDB's ``/api/v2/write`` (docs/monitoring.md)::

    lines = run_lines(series.run_series(results_dir, run_id, 'obdfilter'))
    write_http('http://influx:8086', token, bucket, lines, org='hpc')

One line per (host, component, target, sweep point): measurement ``lustre_iokit_<survey>``, the tags ``name`` (the
target, as Telegraf's lustre2 input tags it), ``component``, ``host`` and the point's, one field per test
(``write_bytes_per_second``...) and the run id as a string field, at the run's finish time in nanoseconds.  The
series key and the time depend only on the run, so publishing a run again overwrites its points.
Controller-side code; the write goes through Ansible's ``open_url``, so proxies and certificates behave as in
Ansible's own modules.
"""

from __future__ import annotations

import urllib.error
import urllib.parse

from ansible.module_utils.urls import ConnectionError as UrlsConnectionError
from ansible.module_utils.urls import SSLValidationError, open_url

from ansible_collections.lustre.iokit.plugins.plugin_utils.export.series import RunExport, metric_suffix
from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import write_bytes_atomic

MEASUREMENT_PREFIX = 'lustre_iokit_'
TARGET_TAG = 'name'
# Lines per request: InfluxDB advises batches of about 5000 lines.
BATCH_LINES = 5000
ERROR_BODY_CHARS = 300


class InfluxWriteError(Exception):
    """A write that InfluxDB did not take whole; ``sent`` lines were accepted, ``not_sent`` were not."""

    def __init__(self, message, sent, not_sent):
        super().__init__('%s; %d line(s) written, %d not written' % (message, sent, not_sent))
        self.sent = sent
        self.not_sent = not_sent


def _escape(text: str, special: str) -> str:
    text = text.replace('\\', '\\\\')
    for char in special:
        text = text.replace(char, '\\' + char)
    return text.replace('\n', '\\n')


def escape_measurement(text: str) -> str:
    return _escape(text, ', ')


def escape_tag(text: str) -> str:
    """A tag key or value: commas, equals signs and spaces escaped."""
    return _escape(text, ',= ')


def string_field(text: str) -> str:
    return '"%s"' % text.replace('\\', '\\\\').replace('"', '\\"')


def float_field(value: float) -> str:
    return repr(float(value))


def run_lines(export: RunExport) -> list[str]:
    """The line protocol of one survey's run; ValueError when no envelope says when the run finished."""
    if export.finished is None:
        raise ValueError('run %s: no %s result says when it finished; its points would have no time'
                         % (export.run_id, export.survey))
    grouped: dict = {}
    for one in export.series:
        tags = [('component', one.component), ('host', one.host)] + list(one.point)
        if one.target is not None:
            tags.append((TARGET_TAG, one.target))
        key = tuple(sorted(tags))  # InfluxDB keeps tags sorted by key; writing them so spares it the sort
        grouped.setdefault(key, {})['%s_%s' % (metric_suffix(one.test), one.unit)] = one.value
    measurement = escape_measurement(MEASUREMENT_PREFIX + export.survey)
    timestamp = export.finished * 1000000000
    lines = []
    for tags, fields in sorted(grouped.items()):
        tag_text = ''.join(',%s=%s' % (escape_tag(name), escape_tag(value)) for name, value in tags)
        field_text = ','.join('%s=%s' % (escape_tag(name), float_field(value)) for name, value in sorted(fields.items()))
        lines.append('%s%s %s,run_id=%s %d'
                     % (measurement, tag_text, field_text, string_field(export.run_id), timestamp))
    return lines


def write_file(path: str, lines: list[str]) -> str:
    """Write ``lines`` to ``path`` atomically (a temporary file in its directory, then a rename)."""
    return write_bytes_atomic(path, ''.join(line + '\n' for line in lines).encode('utf-8'))


def write_url(url: str, bucket: str, org: str | None = None) -> str:
    """``<url>/api/v2/write?bucket=...&org=...&precision=ns``; ValueError for a URL that is not http(s)."""
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ('http', 'https') or not parsed.netloc:
        raise ValueError('iokit_export_influx_url: %r is not an http:// or https:// URL' % (url,))
    query = {'bucket': bucket, 'precision': 'ns'}
    if org:
        query['org'] = org
    return '%s/api/v2/write?%s' % (url.rstrip('/'), urllib.parse.urlencode(query))


def write_http(url: str, token: str, bucket: str, lines: list[str], org: str | None = None,
               batch_lines: int = BATCH_LINES, timeout: float = 30.0) -> int:
    """POST ``lines`` in batches; the number of lines written, or InfluxWriteError at the first batch refused.

    Every batch is sent whole or counted as not sent: nothing is dropped without the error saying how much.
    """
    endpoint = write_url(url, bucket, org)
    sent = 0
    for start in range(0, len(lines), batch_lines):
        batch = lines[start:start + batch_lines]
        body = ''.join(line + '\n' for line in batch).encode('utf-8')
        headers = {'Authorization': 'Token %s' % token, 'Content-Type': 'text/plain; charset=utf-8',
                   'Accept': 'application/json'}
        try:
            with open_url(endpoint, data=body, method='POST', headers=headers, timeout=timeout) as response:
                status = response.status
        except urllib.error.HTTPError as exc:
            answer = exc.read(ERROR_BODY_CHARS).decode('utf-8', 'replace').strip()
            raise InfluxWriteError('InfluxDB refused the write to %s: HTTP %d %s' % (endpoint, exc.code, answer or exc.reason),
                                   sent, len(lines) - sent)
        except (urllib.error.URLError, OSError, UrlsConnectionError, SSLValidationError) as exc:
            raise InfluxWriteError('cannot write to %s: %s' % (endpoint, getattr(exc, 'reason', exc)),
                                   sent, len(lines) - sent)
        if not 200 <= status < 300:
            raise InfluxWriteError('InfluxDB answered HTTP %d to the write to %s' % (status, endpoint),
                                   sent, len(lines) - sent)
        sent += len(batch)
    return sent
