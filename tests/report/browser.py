# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A headless Chromium driven over the DevTools protocol through a pipe (``--remote-debugging-pipe``).

A pipe instead of a port: no listening socket, no websocket client to install,
and nothing else on the machine can talk to the browser.  Chromium reads
NUL-terminated JSON commands on fd 3 and writes replies and events on fd 4.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time


def find_chromium() -> str | None:
    for name in ('chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """One headless Chromium with one page; records every console error and uncaught exception."""

    # A deadline for each answer, not a speed: generous enough for a Chromium starting on a loaded machine.
    def __init__(self, executable: str, width: int = 1400, height: int = 2000, timeout_s: float = 180.0):
        self.timeout_s = timeout_s
        self.width, self.height = width, height
        self.profile = tempfile.mkdtemp(prefix='iokit-chromium-')
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()
        # Above 9, so that moving them onto 3 and 4 in the child can never overwrite one with the other.
        to_browser_read, from_browser_write = (self._high_fd(to_browser_read), self._high_fd(from_browser_write))
        # The child sees our pipe ends as fds 3 (commands in) and 4 (replies out).

        def child_fds():
            os.dup2(to_browser_read, 3)
            os.dup2(from_browser_write, 4)
        self.process = subprocess.Popen(
            [executable, '--headless', '--disable-gpu', '--no-sandbox', '--remote-debugging-pipe',
             '--user-data-dir=' + self.profile, '--no-first-run', '--no-default-browser-check',
             '--disable-extensions', '--disable-background-networking', '--window-size=%d,%d' % (width, height),
             'about:blank'],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            # 3 and 4 are kept open in the child by number: they are the dup2 copies made by child_fds.
            preexec_fn=child_fds, pass_fds=(3, 4))
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b''
        self._next_id = 0
        self.events: list[dict] = []
        target = self.command('Target.createTarget', {'url': 'about:blank'})['targetId']
        self.session = self.command('Target.attachToTarget', {'targetId': target, 'flatten': True})['sessionId']
        for domain in ('Runtime.enable', 'Log.enable', 'Page.enable'):
            self.command(domain, session=True)
        self.command('Emulation.setDeviceMetricsOverride', {'width': width, 'height': height, 'deviceScaleFactor': 1,
                                                            'mobile': False}, session=True)

    @staticmethod
    def _high_fd(fd: int) -> int:
        high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(fd)
        return high

    def _read_message(self, deadline: float) -> dict:
        while b'\0' not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self._from_browser], [], [], remaining)[0]:
                raise TimeoutError('no answer from chromium within %.0f s' % self.timeout_s)
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError('chromium closed the DevTools pipe (exit status %s)' % self.process.poll())
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b'\0', 1)
        return json.loads(message)

    def command(self, method: str, params: dict | None = None, session: bool = False) -> dict:
        self._next_id += 1
        request = {'id': self._next_id, 'method': method, 'params': params or {}}
        if session:
            request['sessionId'] = self.session
        os.write(self._to_browser, json.dumps(request).encode() + b'\0')
        deadline = time.monotonic() + self.timeout_s
        while True:
            message = self._read_message(deadline)
            if message.get('id') == self._next_id:
                if 'error' in message:
                    raise RuntimeError('%s failed: %s' % (method, message['error']))
                return message.get('result', {})
            self.events.append(message)

    def wait_for_event(self, method: str) -> dict:
        deadline = time.monotonic() + self.timeout_s
        for index, event in enumerate(self.events):
            if event.get('method') == method:
                return self.events.pop(index)
        while True:
            message = self._read_message(deadline)
            if message.get('method') == method:
                return message
            self.events.append(message)

    def open(self, path: str) -> None:
        """Load a local file and wait for its load event."""
        self.command('Page.navigate', {'url': 'file://' + os.path.abspath(path)}, session=True)
        self.wait_for_event('Page.loadEventFired')

    def evaluate(self, expression: str):
        result = self.command('Runtime.evaluate', {'expression': expression, 'returnByValue': True}, session=True)
        if 'exceptionDetails' in result:
            raise RuntimeError('%s: %s' % (expression, result['exceptionDetails']))
        return result['result'].get('value')

    def console_errors(self) -> list[str]:
        """Uncaught exceptions, console.error calls and error log entries (failed loads included) so far."""
        # A no-op round trip collects the events the page sent after the last command.
        self.command('Runtime.evaluate', {'expression': '0'}, session=True)
        errors = []
        for event in self.events:
            params = event.get('params', {})
            if event.get('method') == 'Runtime.exceptionThrown':
                details = params['exceptionDetails']
                errors.append('exception: %s' % details.get('exception', {}).get('description', details.get('text')))
            elif event.get('method') == 'Runtime.consoleAPICalled' and params.get('type') == 'error':
                errors.append('console.error: %s' % ' '.join(str(arg.get('value', arg.get('description')))
                                                             for arg in params.get('args', [])))
            elif event.get('method') == 'Log.entryAdded' and params['entry'].get('level') == 'error':
                errors.append('log: %s %s' % (params['entry'].get('text'), params['entry'].get('url', '')))
        return errors

    def screenshot(self, path: str) -> str:
        data = self.command('Page.captureScreenshot', {'format': 'png', 'captureBeyondViewport': False}, session=True)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'wb') as handle:
            handle.write(base64.b64decode(data['data']))
        return path

    def close(self) -> None:
        try:
            self.command('Browser.close')
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)
