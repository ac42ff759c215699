"""Processes of a node seen from outside: start times, liveness, signals, mounts.

A leaf module: it imports nothing of the package, so that any module may import it.
"""

import os


def process_start_ticks(pid):
    """The process's start time in clock ticks since boot (``/proc/PID/stat`` field 22)."""
    try:
        with open("/proc/%d/stat" % int(pid)) as handle:
            return int(handle.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def helper_running(helper):
    """A registered helper is running: its pid is alive and still the same process."""
    if not pid_alive(helper["pid"]):
        return False
    recorded = helper.get("proc_start")
    return recorded is None or process_start_ticks(helper["pid"]) in (None, recorded)


def signal_helper(pid, signum):
    # The FUSE daemon and other helpers started in their own session lead a
    # process group holding their workers: signal the whole group then.
    try:
        if os.getpgid(pid) == pid and pid != os.getpgid(0):
            os.killpg(pid, signum)
        else:
            os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def pid_alive(pid):
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie still answers kill(0); it is not running any more.
    try:
        with open("/proc/%d/stat" % int(pid)) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def mounts_under(path):
    """Mount points at or below ``path`` (from /proc/self/mountinfo), deepest first."""
    path = os.path.realpath(path)
    found = []
    try:
        with open("/proc/self/mountinfo") as handle:
            for line in handle:
                target = line.split()[4].replace("\\040", " ")
                if target == path or target.startswith(path.rstrip("/") + "/"):
                    found.append(target)
    except OSError:
        pass
    return sorted(found, key=len, reverse=True)
