# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Make a block device slow by construction, for the processes of one interpreter only.

A test that needs a survey to outlast its timeout must not hope that the machine is slow: it runs the
module under an interpreter that first joins a block-I/O cgroup throttling reads and writes on the
device to a fixed rate.  The cgroup v1 ``blkio`` controller is used where it is mounted, else the
cgroup v2 ``io`` controller; without either the test fails here, naming what is missing.

Usage:
  slow_device.py throttle MIB_S WRAPPER PYTHON DEVICE[=MIB_S]...
      Create a group limiting each DEVICE to MIB_S MiB/s each way (a DEVICE=MIB_S its own rate), write
      WRAPPER: an executable that joins the group and then runs PYTHON with its arguments (give it as
      ansible_python_interpreter). Prints the group's directory.
  slow_device.py release GROUP [TIMEOUT_S]
      Move what is still in GROUP to its parent and remove GROUP (its limits go with it), waiting up to
      TIMEOUT_S (default 30) for processes that are exiting.  Run it before detaching the device: a
      later device with the same numbers must not inherit the limit.
"""

import hashlib
import os
import stat
import sys
import time

V1_ROOT = '/sys/fs/cgroup/blkio'
GROUP_PREFIX = 'lustre-iokit-slow-'


class SlowDeviceError(Exception):
    pass


def group_name(device_number, wrapper):
    """The cgroup of the wrapper ``wrapper`` limiting the device ``device_number`` (``MAJOR:MINOR``).  The wrapper's
    path is part of the name: tests run side by side, and a loop device one test has released may be another's a
    moment later, so a name made of the device numbers alone could be taken for the other test's group."""
    owner = hashlib.sha1(os.path.abspath(wrapper).encode()).hexdigest()[:10]
    return '%s%s-%s' % (GROUP_PREFIX, device_number.replace(':', '_'), owner)


def _write(path, text):
    with open(path, 'w') as handle:
        handle.write(text)


def _cgroup2_root():
    with open('/proc/self/mounts') as mounts:
        for line in mounts:
            fields = line.split()
            if len(fields) > 2 and fields[2] == 'cgroup2':
                return fields[1]
    return None


def _device_numbers(device):
    mode = os.stat(device)
    if not stat.S_ISBLK(mode.st_mode):
        raise SlowDeviceError('%s is not a block device' % device)
    return '%d:%d' % (os.major(mode.st_rdev), os.minor(mode.st_rdev))


def _rate(mib_s):
    rate = int(float(mib_s) * 1048576)
    if rate <= 0:
        raise SlowDeviceError('MIB_S must be positive, not %s' % mib_s)
    return rate


def throttle(mib_s, wrapper, python, *devices):
    # A device path has no '=': what follows one is that device's own rate.
    limits = [(path, _rate(own or mib_s)) for path, _sep, own in (device.partition('=') for device in devices)]
    devices = [path for path, _rate_bps in limits]
    numbers = [(_device_numbers(path), rate) for path, rate in limits]
    name = group_name(numbers[0][0], wrapper)
    if os.path.exists(os.path.join(V1_ROOT, 'blkio.throttle.write_bps_device')):
        group = os.path.join(V1_ROOT, name)
        if not os.path.isdir(group):
            os.mkdir(group)
        for number, rate in numbers:
            _write(os.path.join(group, 'blkio.throttle.read_bps_device'), '%s %d' % (number, rate))
            _write(os.path.join(group, 'blkio.throttle.write_bps_device'), '%s %d' % (number, rate))
    else:
        root = _cgroup2_root()
        controllers = []
        if root:
            with open(os.path.join(root, 'cgroup.controllers')) as handle:
                controllers = handle.read().split()
        if 'io' not in controllers:
            raise SlowDeviceError('cannot throttle %s: neither the cgroup v1 blkio controller (%s) nor the cgroup '
                                  'v2 io controller is available; a slow device cannot be made on this machine'
                                  % (', '.join(devices), V1_ROOT))
        _write(os.path.join(root, 'cgroup.subtree_control'), '+io')
        group = os.path.join(root, name)
        if not os.path.isdir(group):
            os.mkdir(group)
        for number, rate in numbers:
            _write(os.path.join(group, 'io.max'), '%s rbps=%d wbps=%d' % (number, rate, rate))
    _write(wrapper, '#!/bin/sh\n# joins %s (%s limited to %s MiB/s), then runs %s\n'
                    'echo $$ > %s/cgroup.procs || exit 1\nexec %s "$@"\n'
           % (name, ' '.join(devices), mib_s, python, group, python))
    os.chmod(wrapper, 0o755)
    return group


def release(group, timeout_s=30.0):
    if not os.path.basename(group).startswith(GROUP_PREFIX):
        raise SlowDeviceError('%s is not a group this script made' % group)
    if not os.path.isdir(group):
        return
    parent = os.path.dirname(group)
    deadline = time.monotonic() + timeout_s
    while True:
        with open(os.path.join(group, 'cgroup.procs')) as handle:
            for pid in handle.read().split():
                try:
                    _write(os.path.join(parent, 'cgroup.procs'), pid)
                except OSError:
                    pass  # it exited meanwhile
        try:
            os.rmdir(group)
            return
        except OSError as exc:
            if time.monotonic() > deadline:
                raise SlowDeviceError('cannot remove %s after %ss: %s' % (group, timeout_s, exc))
        time.sleep(0.1)


def main(argv):
    try:
        if len(argv) >= 5 and argv[0] == 'throttle':
            print(throttle(*argv[1:]))
        elif len(argv) in (2, 3) and argv[0] == 'release':
            release(argv[1], *[float(value) for value in argv[2:]])
        else:
            sys.stderr.write(__doc__)
            return 2
    except (SlowDeviceError, OSError) as exc:
        sys.stderr.write('slow_device.py: %s\n' % exc)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
