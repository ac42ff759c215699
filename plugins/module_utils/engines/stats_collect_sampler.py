# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The samplers of stats_collect: the program each Lustre sampler runs, and starting, finding and stopping them.

Target-side code: standard library only, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess

from ansible_collections.lustre.iokit.plugins.module_utils.node_state import has_exited, is_same_process
from ansible_collections.lustre.iokit.plugins.module_utils.runner import child_environment

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


def sampler_alive(entry):
    """True while the process of a manifest entry runs: same pid, same start time, not a zombie."""
    return entry.get('pid') is not None and is_same_process(entry) and not has_exited(entry['pid'])


def _leads_own_group(pid):
    try:
        return os.getpgid(pid) == pid
    except OSError:
        return False


def signal_sampler(pid, signum):
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
