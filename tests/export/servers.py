# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Real Prometheus, node_exporter and InfluxDB servers on loopback ports, for the export tests (Debian packages of
requirements-apt.txt); each is stopped by its context manager, also when the test fails."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import urllib.error
import urllib.parse
import urllib.request

from ansible_collections.lustre.iokit.tests.unit.waiting import wait_for as wait_until

# Deadlines for a server to answer on a loaded two-core machine, not expected durations.
START_DEADLINE_S = 90.0


def executable(*names: str) -> str | None:
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    return None


PROMETHEUS = executable('prometheus')
PROMTOOL = executable('promtool')
NODE_EXPORTER = executable('prometheus-node-exporter', 'node_exporter')
INFLUXD = executable('influxd')


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


def http_get(url: str, timeout: float = 5.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def wait_for(condition, what: str, deadline_s: float = START_DEADLINE_S, process=None):
    """The collection's one wait (``tests/unit/waiting.py``), with a server that does not answer yet (the connection
    refused, a reply not yet whole) counted as not yet rather than as a failure."""
    def answered():
        try:
            return condition()
        except (OSError, ValueError):
            return None
    return wait_until(what, answered, deadline_s, process)


@contextlib.contextmanager
def running(argv: list[str], log_path: str):
    """A server process whose output goes to ``log_path``; terminated (then killed) on the way out."""
    with open(log_path, 'wb') as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            yield process
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def log_tail(path: str, chars: int = 3000) -> str:
    with open(path, 'rb') as handle:
        return handle.read()[-chars:].decode('utf-8', 'replace')


@contextlib.contextmanager
def node_exporter(textfile_dir: str, workdir: str):
    """node_exporter with only its textfile collector, reading ``textfile_dir``; yields its address."""
    port = free_port()
    address = '127.0.0.1:%d' % port
    log = os.path.join(workdir, 'node_exporter.log')
    argv = [NODE_EXPORTER, '--web.listen-address=' + address, '--collector.disable-defaults',
            '--collector.textfile', '--collector.textfile.directory=' + textfile_dir]
    with running(argv, log) as process:
        wait_for(lambda: http_get('http://%s/metrics' % address)[0] == 200, 'node_exporter on %s' % address,
                 process=process)
        yield address, log


@contextlib.contextmanager
def prometheus_server(scrape_address: str, workdir: str):
    """Prometheus scraping ``scrape_address`` every second; yields its base URL."""
    port = free_port()
    config = os.path.join(workdir, 'prometheus.yml')
    with open(config, 'w', encoding='utf-8') as handle:
        handle.write('global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n'
                     'scrape_configs:\n  - job_name: node\n    static_configs:\n'
                     '      - targets: ["%s"]\n' % scrape_address)
    log = os.path.join(workdir, 'prometheus.log')
    argv = [PROMETHEUS, '--config.file=' + config, '--storage.tsdb.path=' + os.path.join(workdir, 'tsdb'),
            '--web.listen-address=127.0.0.1:%d' % port]
    url = 'http://127.0.0.1:%d' % port
    with running(argv, log) as process:
        wait_for(lambda: http_get(url + '/-/ready')[0] == 200, 'Prometheus on %s' % url, process=process)
        yield url, log


def query(url: str, expression: str) -> list[dict]:
    """The result vector of an instant query through Prometheus's HTTP API."""
    status, body = http_get('%s/api/v1/query?%s' % (url, urllib.parse.urlencode({'query': expression})))
    answer = json.loads(body.decode('utf-8'))
    if status != 200 or answer.get('status') != 'success':
        raise ValueError('query %s: HTTP %d %s' % (expression, status, answer))
    return answer['data']['result']


@contextlib.contextmanager
def influxdb_server(workdir: str):
    """InfluxDB 1.x (Debian's influxdb) with its data under ``workdir``; yields its base URL."""
    port, rpc_port = free_port(), free_port()
    config = os.path.join(workdir, 'influxdb.conf')
    with open(config, 'w', encoding='utf-8') as handle:
        handle.write('reporting-disabled = true\nbind-address = "127.0.0.1:%d"\n'
                     '[meta]\n  dir = "%s"\n'
                     '[data]\n  dir = "%s"\n  wal-dir = "%s"\n'
                     '[http]\n  bind-address = "127.0.0.1:%d"\n  log-enabled = false\n'
                     '[monitor]\n  store-enabled = false\n'
                     % (rpc_port, os.path.join(workdir, 'meta'), os.path.join(workdir, 'data'),
                        os.path.join(workdir, 'wal'), port))
    log = os.path.join(workdir, 'influxd.log')
    url = 'http://127.0.0.1:%d' % port
    with running([INFLUXD, 'run', '-config', config], log) as process:
        wait_for(lambda: http_get(url + '/ping')[0] == 204, 'InfluxDB on %s' % url, process=process)
        yield url, log


def influx_query(url: str, database: str, statement: str, method: str = 'GET') -> list[dict]:
    """The series of an InfluxQL statement's first result (1.x ``/query``, times as epoch nanoseconds)."""
    parameters = urllib.parse.urlencode({'db': database, 'q': statement, 'epoch': 'ns'})
    request = urllib.request.Request('%s/query?%s' % (url, parameters), method=method)
    with urllib.request.urlopen(request, timeout=10) as response:
        answer = json.loads(response.read().decode('utf-8'))
    result = answer['results'][0]
    if 'error' in result:
        raise ValueError('%s: %s' % (statement, result['error']))
    return result.get('series', [])


def influx_write_v1(url: str, database: str, lines: list[str]) -> int:
    """POST ``lines`` to the 1.x ``/write`` endpoint; the HTTP status."""
    request = urllib.request.Request('%s/write?%s' % (url, urllib.parse.urlencode({'db': database, 'precision': 'ns'})),
                                     data=''.join(line + '\n' for line in lines).encode('utf-8'), method='POST')
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        raise AssertionError('InfluxDB refused the lines: HTTP %d %s' % (exc.code, exc.read()[:500])) from exc
