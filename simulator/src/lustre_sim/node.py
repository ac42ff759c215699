"""One simulated Lustre node living under a root directory: the ``Node`` every tool works through.

Layout of a root (see README.md):

* ``config.yaml``      normalised configuration written by ``lustre-sim init``
* ``bin/``             shims (``lctl``, ``lfs``, ... ``modprobe``) put first on PATH
* ``state/<name>.json`` mutable state per subsystem, changed under ``flock``
* ``targets/<name>/``  real directories backing each MDT/OST
* ``client/``          the client namespace when a client mount is configured

This module imports only the leaf modules (``common``, ``errors``, ``processes``,
``statefile``, ``curve``) and ``read_cache`` (which imports only ``statefile``);
creating and destroying a node is ``lifecycle``'s, validating a configuration
``config``'s.
"""

import contextlib
import fcntl
import os
import signal
import socket
import sys
import time

import yaml

from . import curve as curve_model
from . import statefile
from .common import BYTES_PER_INODE, DEFAULT_PAGE_SIZE, DEFAULT_VERSION, parse_version
from .errors import SimError
from .processes import helper_running, process_start_ticks, signal_helper
from .read_cache import ReadCache

# Names callers have always imported from here, defined in the leaf modules now.
from .common import MODULE_SHIMS, SHIM_TOOLS, hash_text, mount_hash  # noqa: F401  (re-exported)
from .processes import mounts_under, pid_alive  # noqa: F401  (re-exported)

# How long a run's own turnaround between two of its I/Os may last and still count as the target being busy
# (Node.reserve_bandwidth): longer than a stall of a loaded machine, and all a run can gain after a pause of its own.
CATCH_UP_S = 1.0


def parse_time_line(text):
    """``(busy_until, run)`` of a target's time line file; ``(None, None)`` when empty or unreadable."""
    words = text.split()
    try:
        busy_until = float(words[0])
    except (IndexError, ValueError):
        return None, None
    run = words[1] if len(words) > 1 and words[1] != "-" else None
    return busy_until, run


# --------------------------------------------------------------------------
# the node

class Node:
    """Access to one simulated node: configuration, locked state, faults, throttling."""

    def __init__(self, root):
        self.root = os.path.abspath(os.fspath(root))
        config_path = os.path.join(self.root, "config.yaml")
        try:
            with open(config_path) as handle:
                self.config = yaml.safe_load(handle) or {}
        except FileNotFoundError:
            raise SimError("%s is not a lustre-sim node (no config.yaml); "
                           "run 'lustre-sim init --root %s'" % (self.root, self.root))
        if "fsname" not in self.config:
            raise SimError("%s: config.yaml has no fsname" % config_path)

    @classmethod
    def from_env(cls):
        root = os.environ.get("LUSTRE_SIM_ROOT")
        if not root:
            raise SimError("LUSTRE_SIM_ROOT is not set; run 'eval \"$(lustre-sim env --root DIR)\"'")
        return cls(root)

    # -- paths and targets -------------------------------------------------

    @property
    def fsname(self):
        return self.config["fsname"]

    @property
    def hostname(self):
        return self.config.get("hostname") or socket.gethostname()

    @property
    def version(self):
        return str(self.config.get("lustre_version") or DEFAULT_VERSION)

    @property
    def version_tuple(self):
        return parse_version(self.version)

    @property
    def page_size(self):
        return int(self.config.get("page_size") or DEFAULT_PAGE_SIZE)

    @property
    def bin_dir(self):
        return os.path.join(self.root, "bin")

    @property
    def state_dir(self):
        return os.path.join(self.root, "state")

    def client_dir(self):
        """Real directory holding the client namespace (None without a client mount)."""
        if not self.config.get("client_mount"):
            return None
        return os.path.join(self.root, "client")

    def targets(self, kind=None):
        result = []
        for key, target_kind in (("mdts", "mdt"), ("osts", "ost")):
            if kind not in (None, target_kind):
                continue
            for entry in self.config.get(key) or []:
                result.append({
                    "name": entry["name"],
                    "kind": target_kind,
                    "index": entry["index"],
                    "uuid": entry["name"] + "_UUID",
                    "size_mib": entry["size_mib"],
                    "mib_s": entry.get("mib_s"),
                    "curve": entry.get("curve"),
                    "path": os.path.join(self.root, "targets", entry["name"]),
                    "device": entry.get("device"),
                })
        return result

    @property
    def read_cache(self):
        """The node's read cache (``read_cache_mib``), or None when it has none: every read at the device rate."""
        size_mib = self.config.get("read_cache_mib")
        if not size_mib:
            return None
        return ReadCache(self.state_dir, size_mib, self.config["read_cache_speedup"])

    def target(self, name):
        for entry in self.targets():
            if entry["name"] == name:
                return entry
        return None

    def target_usage(self, name):
        """Blocks/inodes of a target from its backing directory against its configured size."""
        target = self.target(name)
        if target is None:
            raise SimError("no target %s" % name)
        used_bytes = 0
        used_files = 0
        for directory, subdirs, files in os.walk(target["path"]):
            used_files += len(subdirs) + len(files)
            for filename in files:
                try:
                    stat = os.lstat(os.path.join(directory, filename))
                except OSError:
                    continue
                used_bytes += stat.st_blocks * 512
        total_bytes = target["size_mib"] * 1024 * 1024
        files_total = max(total_bytes // BYTES_PER_INODE[target["kind"]], 1)
        return {
            "kbytestotal": total_bytes // 1024,
            "kbytesfree": max(total_bytes - used_bytes, 0) // 1024,
            "kbytesavail": max(total_bytes - used_bytes, 0) // 1024,
            "filestotal": files_total,
            "filesfree": max(files_total - used_files, 0),
            "used_bytes": used_bytes,
        }

    # -- state ---------------------------------------------------------------

    @contextlib.contextmanager
    def state(self, name):
        """Read-modify-write ``state/<name>.json`` under an exclusive lock."""
        with statefile.changed(self.state_dir, name) as data:
            yield data

    def read_state(self, name):
        return statefile.read(self.state_dir, name)

    # -- faults --------------------------------------------------------------

    def faults(self, **match):
        """Active faults (seeded from config at init, changed by ``lustre-sim fault``)."""
        active = self.read_state("faults").get("faults", [])
        return [f for f in active
                if all(f.get(key) == value for key, value in match.items())]

    def fault_active(self, fault_type, target=None, op=None):
        """True if a fault of this type applies to target/op (faults without op match both)."""
        for fault in self.faults(type=fault_type):
            if target is not None and fault.get("target") not in (None, target):
                continue
            if op is not None and fault.get("op") not in (None, op):
                continue
            return True
        return False

    def hang_matches(self, tool, words):
        """A 'hang' fault whose command names this tool invocation or a word in it."""
        words = [str(w) for w in words]
        for fault in self.faults(type="hang"):
            command = fault["command"].split()
            if command[0] == tool:
                if all(word in words for word in command[1:]):
                    return True
            elif all(word in words for word in command):
                return True
        return False

    def hang_while_faulted(self, tool, words):
        """Hang as a stuck Lustre command does: until killed, or until the fault is cleared, then go on.

        Clearing the fault resumes the command, so that a test can hold a run at a known point for as long as
        it needs (a run long by construction) and let it finish.
        """
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.getpid()
        with self.state("hangs") as hangs:
            hangs["hangs"] = [h for h in hangs.get("hangs", []) if h["pid"] != pid] + [
                {"pid": pid, "command": " ".join([tool] + [str(w) for w in words]),
                 "proc_start": process_start_ticks(pid)}]
        try:
            while self.hang_matches(tool, words):
                time.sleep(0.2)
        finally:
            with self.state("hangs") as hangs:
                hangs["hangs"] = [h for h in hangs.get("hangs", []) if h["pid"] != pid]

    def hung_commands(self):
        """The commands hanging on a fault now, so that a test can wait until a run reached the hang.

        A command killed while it hung leaves its record behind; only live processes count.
        """
        return [h for h in self.read_state("hangs").get("hangs", [])
                if process_start_ticks(h["pid"]) == h["proc_start"]]

    def fault_gate(self, tool, argv):
        if self.faults(type="host_dead"):
            sys.stdout.flush()
            sys.stderr.write("ssh: connect to host %s port 22: Connection refused\n"
                             % self.hostname)
            sys.stderr.flush()
            sys.exit(255)
        if self.hang_matches(tool, list(argv or [])):
            self.hang_while_faulted(tool, list(argv or []))

    # -- throttling ------------------------------------------------------------

    def throttle(self, target_name, nbytes, started):
        """Sleep so that ``nbytes`` moved since ``started`` stay within the target's MiB/s."""
        target = self.target(target_name)
        if target is None or not target.get("mib_s"):
            return
        due = started + nbytes / (target["mib_s"] * 1048576.0)
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)

    def target_rate(self, target_name, threads=1, op=""):
        """The rate a target allows with ``threads`` concurrent threads: its curve's, else its flat
        ``mib_s`` (None: unthrottled).  MiB/s for OSTs, ops/s for an MDT with a curve."""
        target = self.target(target_name)
        if target is None:
            return None
        if target.get("curve"):
            return curve_model.rate(target["curve"], threads, target_name, op)
        return target.get("mib_s") or None

    def reserve_bandwidth(self, target_name, nbytes, threads=1, op="", run=None, extent=None):
        """Share a target's rate for ``threads`` concurrent threads among all processes doing I/O on it.

        Each I/O books the next free slot of the target's time line (kept in
        ``state/bw-<target>`` with the run that booked last) and sleeps until its
        slot ends, so T concurrent writers together never exceed the rate.  For
        an MDT ``nbytes`` counts operations.

        ``run`` names the I/O stream (one test_brw, one open file): while the same
        run goes on, the time its own processes spend between two I/Os (up to
        ``CATCH_UP_S``) is not lost to the target, so a loaded machine does not
        slow a run below the target's rate, whatever the thread count.  A new run
        starts at the time it asks, never in the past.

        ``extent``: ``(object key, offset)`` of the bytes an OST moves (``read_cache.object_key``), for the node's
        read cache when it has one: they enter it, and a read's bytes found there are booked at the cache's
        speed-up times the rate. A write is booked at the rate whatever the cache holds (write-through).
        """
        cached = 0
        cache = self.read_cache if extent is not None else None
        if cache is not None:
            found = cache.access(extent[0], extent[1], nbytes, read=op == "read")
            if op == "read":
                cached = found
        rate = self.target_rate(target_name, threads, op)
        if not rate:
            return
        unit = 1.0 if "peak_ops_s" in (self.target(target_name).get("curve") or {}) else 1048576.0
        duration = (nbytes - cached) / (rate * unit)
        if cached:
            duration += cached / (rate * cache.speedup * unit)
        path = os.path.join(self.state_dir, "bw-%s" % target_name)
        with open(path, "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            handle.seek(0)
            busy_until, last_run = parse_time_line(handle.read())
            now = time.time()
            if busy_until is None:
                busy_until = now
            same_run = run is not None and last_run == str(run)
            start = busy_until if same_run and now - busy_until <= CATCH_UP_S else max(now, busy_until)
            end = start + duration
            handle.seek(0)
            handle.truncate()
            handle.write("%.6f %s" % (end, "-" if run is None else run))
            handle.flush()
            fcntl.flock(handle, fcntl.LOCK_UN)
        delay = end - time.time()
        if delay > 0:
            time.sleep(delay)

    # -- helpers registry --------------------------------------------------------

    def register_helper(self, pid, command):
        if not isinstance(command, str):
            command = " ".join(str(c) for c in command)
        with self.state("helpers") as helpers:
            entries = [h for h in helpers.get("helpers", []) if h["pid"] != pid]
            entries.append({"pid": int(pid), "command": command, "started": time.time(),
                            "proc_start": process_start_ticks(pid)})
            helpers["helpers"] = entries

    def unregister_helper(self, pid):
        with self.state("helpers") as helpers:
            helpers["helpers"] = [h for h in helpers.get("helpers", []) if h["pid"] != pid]

    @contextlib.contextmanager
    def helper(self, command, pid=None):
        """Register the current (or given) process as a running helper for the block."""
        pid = os.getpid() if pid is None else pid
        self.register_helper(pid, command)
        try:
            yield
        finally:
            self.unregister_helper(pid)

    def live_helpers(self):
        return [h for h in self.read_state("helpers").get("helpers", []) if helper_running(h)]

    def stop_helpers(self, timeout=5.0):
        """End every running helper of this node (SIGTERM, then SIGKILL); returns their pids.

        Helpers are registered with their kernel start time, so a pid reused by
        an unrelated process after a helper died is never signalled.
        """
        own = {os.getpid(), os.getppid()}
        stopped = []
        for helper in self.live_helpers():
            pid = int(helper["pid"])
            if pid in own:
                continue
            signal_helper(pid, signal.SIGTERM)
            stopped.append(helper)
        deadline = time.monotonic() + timeout
        while any(helper_running(h) for h in stopped) and time.monotonic() < deadline:
            time.sleep(0.05)
        for helper in stopped:
            if helper_running(helper):
                signal_helper(int(helper["pid"]), signal.SIGKILL)
            self.unregister_helper(int(helper["pid"]))
        return [int(h["pid"]) for h in stopped]

    # -- devices and modules (shared by lctl and the module shims) -----------------

    def devices(self):
        return self.read_state("devices").get("devices", [])

    def loaded_modules(self):
        return list(self.read_state("modules").get("loaded", []))

    def apply_fault_effects(self, fault):
        """Faults that leave state behind (an aborted run's echo_client) act when added."""
        if fault["type"] != "leftover_echo_client":
            return
        target = fault["target"]
        with self.state("modules") as modules:
            loaded = modules.setdefault("loaded", [])
            if "obdecho" not in loaded:
                loaded.append("obdecho")
        with self.state("devices") as state:
            devices = state.setdefault("devices", [])
            name = "%s_ecc" % target
            if any(d["name"] == name for d in devices):
                return
            used = {d["index"] for d in devices}
            index = 0
            while index in used:
                index += 1
            backing = [d for d in devices if d["name"] == target]
            if backing:
                backing[0]["refcount"] += 1
            devices.append({"index": index, "status": "UP", "type": "echo_client",
                            "name": name, "uuid": name + "_UUID", "refcount": 3,
                            "target": target, "leftover": True})
            devices.sort(key=lambda d: d["index"])
