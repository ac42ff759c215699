# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Send SIGTERM to the obdfilter_survey module process of one simulated node, once its sweep reached a point.

Usage: signal_module.py SIM_ROOT SUMMARY_FILE POINTS TIMEOUT_S

The module is the process running AnsiballZ_obdfilter_survey.py (not the
async_wrapper that names it in its arguments) whose environment has
LUSTRE_SIM_ROOT=SIM_ROOT (a fresh temporary directory, so no other process
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
        is_module = any(arg.endswith(b'AnsiballZ_obdfilter_survey.py') for arg in argv)
        if is_module and not any(b'async_wrapper' in arg for arg in argv) and wanted in environ:
            return int(name)
    return None


def main():
    sim_root, summary, points, timeout_s = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with open(summary) as handle:
                started = sum(1 for line in handle if line.startswith('ost '))
        except OSError:
            started = 0
        pid = module_pid(sim_root)
        if pid is not None and started >= points:
            os.kill(pid, signal.SIGTERM)
            print(pid)
            return 0
        time.sleep(0.2)
    print('the module never reached point %d' % points, file=sys.stderr)
    return 1


if __name__ == '__main__':
    sys.exit(main())
