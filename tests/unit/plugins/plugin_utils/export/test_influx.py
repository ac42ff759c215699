# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The line protocol of a stored run, read back by a strict parser, and its write to a recording HTTP server."""

from __future__ import annotations

import http.server
import threading
import urllib.parse

import pytest

from ansible_collections.lustre.iokit.plugins.plugin_utils.export import influx
from ansible_collections.lustre.iokit.plugins.plugin_utils.export.series import run_series
from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.export.helpers import FINISHED, store_run

RUN_ID = '20261122T101500Z-test'


def _split(text, separator):
    """Split at ``separator`` outside backslash escapes and double-quoted strings; the parts stay escaped."""
    parts, current, quoted, index = [], '', False, 0
    while index < len(text):
        char = text[index]
        if char == '\\':
            current += text[index:index + 2]
            index += 2
            continue
        if char == '"':
            quoted = not quoted
        if char == separator and not quoted:
            parts.append(current)
            current = ''
        else:
            current += char
        index += 1
    assert not quoted, 'unterminated string in %r' % text
    parts.append(current)
    return parts


def _unescape(text, allowed):
    result, index = '', 0
    while index < len(text):
        if text[index] == '\\':
            following = text[index + 1:index + 2]
            assert following in allowed + '\\', 'bad escape \\%s in %r' % (following, text)
            result += following
            index += 2
        else:
            assert text[index] not in allowed.replace('"', ''), 'unescaped %r in %r' % (text[index], text)
            result += text[index]
            index += 1
    return result


def parse_line(line):
    """(measurement, tags, fields, timestamp) of one line, refusing what InfluxDB would refuse or misread."""
    assert line and not line.startswith('#') and '\n' not in line
    head, field_text, timestamp = _split(line, ' ')
    key_parts = _split(head, ',')
    measurement = _unescape(key_parts[0], ', ')
    tags = {}
    for part in key_parts[1:]:
        name, value = _split(part, '=')
        assert value, 'empty tag value in %r' % line
        tags[_unescape(name, ',= ')] = _unescape(value, ',= ')
    assert list(tags) == sorted(tags), 'tags not sorted: %r' % line
    fields = {}
    for part in _split(field_text, ','):
        name, value = _split(part, '=')
        if value.startswith('"'):
            assert value.endswith('"') and len(value) >= 2
            fields[_unescape(name, ',= ')] = _unescape(value[1:-1], '"')
        else:
            assert value[-1] not in 'iu', 'expected floats: %r' % value
            fields[_unescape(name, ',= ')] = float(value)
    assert timestamp.isdigit(), timestamp
    return measurement, tags, fields, int(timestamp)


@pytest.fixture
def lines(tmp_path):
    store_run(tmp_path)
    return influx.run_lines(run_series(str(tmp_path), RUN_ID, 'obdfilter'))


def test_lines_parse_with_the_lustre2_join_tag_and_the_run_time(lines):
    parsed = [parse_line(line) for line in lines]
    assert {measurement for measurement, _tags, _fields, _ts in parsed} == {'lustre_iokit_obdfilter'}
    assert {ts for _m, _tags, _fields, ts in parsed} == {FINISHED * 10 ** 9}
    point = [(tags, fields) for _m, tags, fields, _ts in parsed
             if tags['name'] == 'testfs-OST0001' and tags['threads'] == '16' and tags['objects'] == '4']
    assert point == [({'case': 'disk', 'component': 'ost', 'host': 'oss1', 'name': 'testfs-OST0001', 'objects': '4',
                       'osts': '1', 'record_size_kib': '1024', 'size_kib': '1048576', 'threads': '16'},
                      {'read_bytes_per_second': 1200 * 1048576.0, 'run_id': RUN_ID,
                       'write_bytes_per_second': 1000 * 1048576.0})]
    # One line per series key: a second publication of the run lands on the same points.
    keys = [(m, tuple(sorted(tags.items())), ts) for m, tags, _fields, ts in parsed]
    assert len(keys) == len(set(keys))


def test_escaping_reads_back():
    line = '%s,%s=%s %s=1.0,run_id=%s 1' % (influx.escape_measurement('a b,c'), influx.escape_tag('k=1'),
                                            influx.escape_tag('v, w'), influx.escape_tag('f x'),
                                            influx.string_field('r"\\'))
    assert parse_line(line) == ('a b,c', {'k=1': 'v, w'}, {'f x': 1.0, 'run_id': 'r"\\'}, 1)


class _Recorder(http.server.BaseHTTPRequestHandler):
    answers: list = []
    requests: list = []

    def do_POST(self):  # noqa: N802 - http.server's naming
        body = self.rfile.read(int(self.headers['Content-Length']))
        type(self).requests.append((self.path, dict(self.headers), body.decode('utf-8')))
        status = type(self).answers.pop(0) if type(self).answers else 204
        self.send_response(status)
        payload = b'{"code":"invalid","message":"refused by the test"}' if status >= 400 else b''
        self.send_header('Content-Length', str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    _Recorder.answers, _Recorder.requests = [], []
    httpd = http.server.HTTPServer(('127.0.0.1', 0), _Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield 'http://127.0.0.1:%d' % httpd.server_address[1], _Recorder
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_http_write_posts_every_line_in_batches(server, lines):
    url, recorder = server
    assert influx.write_http(url + '/', 'secret', 'iokit', lines, org='hpc', batch_lines=10) == len(lines)
    assert len(recorder.requests) == -(-len(lines) // 10)
    path, headers, _body = recorder.requests[0]
    assert urllib.parse.urlsplit(path).path == '/api/v2/write'
    assert dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(path).query)) == {
        'bucket': 'iokit', 'org': 'hpc', 'precision': 'ns'}
    assert headers['Authorization'] == 'Token secret'
    assert ''.join(body for _p, _h, body in recorder.requests).splitlines() == lines


@pytest.mark.parametrize('status', [400, 500])
def test_a_refused_batch_fails_with_the_counts(server, lines, status):
    url, recorder = server
    recorder.answers = [204, status]
    with pytest.raises(influx.InfluxWriteError) as caught:
        influx.write_http(url, 'secret', 'iokit', lines, batch_lines=10)
    assert (caught.value.sent, caught.value.not_sent) == (10, len(lines) - 10)
    assert 'HTTP %d' % status in str(caught.value) and 'refused by the test' in str(caught.value)
    assert '10 line(s) written, %d not written' % (len(lines) - 10) in str(caught.value)


def test_an_unreachable_server_fails_with_nothing_sent(lines):
    with pytest.raises(influx.InfluxWriteError, match='0 line\\(s\\) written, %d not written' % len(lines)):
        influx.write_http('http://127.0.0.1:9', 'secret', 'iokit', lines, timeout=5)


def test_a_url_that_is_not_http_is_refused():
    with pytest.raises(ValueError, match='iokit_export_influx_url'):
        influx.write_url('file:///etc/passwd', 'iokit')


def test_write_file_is_the_lines(tmp_path, lines):
    path = influx.write_file(str(tmp_path / 'out' / 'run.lp'), lines)
    with open(path, encoding='utf-8') as handle:
        assert handle.read().splitlines() == lines
