# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Signal the lst_survey module process of one simulated node once a file it writes contains a marker.

Usage: signal_module.py SIM_ROOT FILE MARKER SIGNAL TIMEOUT_S   (SIGNAL: TERM or KILL)

With FILE the module's lst output (lst_survey.detail) and MARKER ``$ lst run``, the signal arrives while the
first test runs, its session open.

The module is the process running AnsiballZ_lst_survey.py (not the async_wrapper that names it in its
arguments) whose environment has LUSTRE_SIM_ROOT=SIM_ROOT (a fresh temporary directory, so no other process
can match).  Prints the pid signalled.
"""

import os
import signal
import sys
import time


def module_pid(sim_root):
    wanted = ('LUSTRE_SIM_ROOT=' + sim_root).encode()
    for name in os.listdir('/proc'):
        if not name.isdigit():
            continue
        try:
            with open('/proc/%s/cmdline' % name, 'rb') as handle:
                argv = handle.read().split(b'\0')
            with open('/proc/%s/environ' % name, 'rb') as handle:
                environ = handle.read().split(b'\0')
        except OSError:
            continue
        is_module = any(arg.endswith(b'AnsiballZ_lst_survey.py') for arg in argv)
        if is_module and not any(b'async_wrapper' in arg for arg in argv) and wanted in environ:
            return int(name)
    return None


def main():
    sim_root, watched, marker, which, timeout_s = sys.argv[1:6]
    signum = {'TERM': signal.SIGTERM, 'KILL': signal.SIGKILL}[which]
    deadline = time.monotonic() + float(timeout_s)
    while time.monotonic() < deadline:
        try:
            with open(watched) as handle:
                reached = marker in handle.read()
        except OSError:
            reached = False
        pid = module_pid(sim_root)
        if pid is not None and reached:
            os.kill(pid, signum)
            print(pid)
            return 0
        time.sleep(0.2)
    print('the module never wrote %r to %s' % (marker, watched), file=sys.stderr)
    return 1


if __name__ == '__main__':
    sys.exit(main())
