# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Finding our processes in /proc: by command line, by working directory or open files, by process group.

What the cleanup (``cleanup.py``) stops is matched here: a process a role recorded by its command line, a
recorded pid that must still be the same process (its start time), the live members of a process group.  Only
this PID namespace is looked at, and never this process or its ancestors.

Target-side code: standard library only, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.lustre.iokit.plugins.module_utils.node_state import (
    command_line,
    has_exited,
    is_same_process,
    parent_pid,
)


def signal_process(pid, signum, group):
    """SIGNUM to the process ``pid``, or to its whole group with ``group``; one already gone is no error."""
    try:
        if group:
            os.killpg(pid, signum)
        else:
            os.kill(pid, signum)
    except OSError:
        pass


def pid_namespace(pid):
    try:
        return os.readlink('/proc/%s/ns/pid' % pid)
    except OSError:
        return None


def uses_directory(pid, directory):
    """True when the process's working directory or one of its open files is under ``directory``."""
    prefix = os.path.realpath(directory).rstrip(os.sep) + os.sep
    links = ['/proc/%d/cwd' % pid]
    try:
        links += ['/proc/%d/fd/%s' % (pid, fd) for fd in os.listdir('/proc/%d/fd' % pid)]
    except OSError:
        return False
    for link in links:
        try:
            target = os.readlink(link)
        except OSError:
            continue
        if (target.rstrip(os.sep) + os.sep).startswith(prefix):
            return True
    return False


def holding_file(path):
    """Pids of the live processes of our PID namespace (this one and its ancestors aside) that have ``path`` open.

    The writer of a file we gave a command as its output, found after the process that started it was killed.
    """
    wanted = os.path.realpath(path)
    holders = []
    for pid in sorted(command_lines()):
        try:
            fds = os.listdir('/proc/%d/fd' % pid)
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink('/proc/%d/fd/%s' % (pid, fd))
            except OSError:
                continue
            if target == wanted:
                holders.append(pid)
                break
    return holders


def command_lines():
    """{pid: (command name, argv)} of every process of our PID namespace but this one and its ancestors.

    Only our namespace: seen from a host, the processes of its containers are in /proc too, and a survey
    module running in a container is not this node's.
    """
    own_namespace = pid_namespace('self')
    spared = set()
    pid = os.getpid()
    while pid and pid > 1 and pid not in spared:
        spared.add(pid)
        pid = parent_pid(pid)
    found = {}
    for name in os.listdir('/proc'):
        if not name.isdigit() or int(name) in spared:
            continue
        if own_namespace is not None and pid_namespace(name) not in (own_namespace, None):
            continue
        try:
            with open('/proc/%s/comm' % name) as handle:
                comm = handle.read().strip()
        except (IOError, OSError):
            continue
        argv = command_line(int(name))
        if argv and not has_exited(int(name)):
            found[int(name)] = (comm, argv)
    return found


def matches_command(entry, comm, argv):
    """A process matches a ``commands`` entry by its name (unless the entry has none) and one argument.

    An argument matches exactly or by its last path component, and so does each word of an argument,
    so that ``obdfilter-survey`` matches ``/bin/bash /usr/bin/obdfilter-survey``.
    """
    if entry.get('name') not in (None, comm):
        return False
    wanted = set(entry.get('args_any') or [])
    for arg in argv:
        for word in [arg] + arg.split():
            if word in wanted or os.path.basename(word) in wanted:
                return True
    return False


def leader_of_own_group(pid):
    try:
        return os.getpgid(pid) == pid and pid != os.getpgid(0)
    except OSError:
        return False


def live_group_members(pgid):
    """Pids of the processes in group ``pgid`` that are not zombies (read from /proc)."""
    members = []
    for name in os.listdir('/proc'):
        if not name.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % name) as handle:
                fields = handle.read().rsplit(')', 1)[1].split()
        except (IOError, OSError, IndexError):
            continue
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != 'Z':
            members.append(int(name))
    return members


def still_running(entry, group):
    pid = int(entry['pid'])
    if group:
        return bool(live_group_members(pid))
    return is_same_process(entry) and not has_exited(pid)
