"""One simulated Lustre node living under a root directory.

Layout of a root (see README.md):

* ``config.yaml``      normalised configuration written by ``lustre-sim init``
* ``bin/``             shims (``lctl``, ``lfs``, ... ``modprobe``) put first on PATH
* ``state/<name>.json`` mutable state per subsystem, changed under ``flock``
* ``targets/<name>/``  real directories backing each MDT/OST
* ``client/``          the client namespace when a client mount is configured
"""

import contextlib
import copy
import fcntl
import json
import os
import re
import shutil
import signal
import socket
import sys
import tempfile
import time
import uuid as uuidlib

import yaml

from . import curve as curve_model

DEFAULT_FSNAME = "testfs"
DEFAULT_NID = "192.168.1.10@tcp"
DEFAULT_VERSION = "2.15.5"
DEFAULT_OST_SIZE_MIB = 1024
DEFAULT_MDT_SIZE_MIB = 512
DEFAULT_PAGE_SIZE = 4096

SHIM_TOOLS = ("lctl", "lfs", "lst", "mdtest", "mpirun", "ior", "srun", "salloc", "sbatch", "scancel", "module")
MODULE_SHIMS = ("modprobe", "rmmod", "lsmod")

FAULT_TYPES = (
    "io_error",
    "hang",
    "enomem",
    "leftover_echo_client",
    "obdecho_busy",
    "target_full",
    "host_dead",
)
FAULT_KEYS = ("type", "target", "op", "command")

# Optional sections of config.yaml read by the client tools (lst's LNet model, mdtest).
LNET_KEYS = ("link_mib_s", "per_nid", "latency_us", "msg_rate_max")
MDTEST_VERSIONS = ("3.3.0", "4.0.0")

# ldiskfs formats OSTs with fewer, MDTs with many more inodes per byte.
BYTES_PER_INODE = {"ost": 65536, "mdt": 2560}

# Modules a combined MGS/MDS/OSS node has loaded once Lustre is mounted.
SERVER_MODULES = (
    "libcfs", "lnet", "ksocklnd", "ptlrpc", "obdclass", "fld", "fid", "lmv",
    "mdc", "osc", "lov", "mgc", "mgs", "lquota", "ldiskfs", "osd_ldiskfs",
    "lod", "osp", "mdd", "mdt", "ofd", "ost", "lfsck",
)
CLIENT_MODULES = ("lustre",)


class SimError(Exception):
    """A simulated node is missing, misconfigured or cannot be changed as asked."""


def parse_version(text):
    """``"2.15.5"`` -> ``(2, 15, 5)``; missing parts count as 0."""
    parts = [int(p) for p in re.findall(r"\d+", str(text))[:4]]
    while len(parts) < 3:
        parts.append(0)
    return tuple(parts)


def mount_hash(fsname, hostname):
    """The client mount's instance name: 16 hex digits, stable for a node.

    Lustre names a client's devices and parameters after the superblock
    address (``testfs-clilov-ffff8881a2b3c400``, ``llite.testfs-ffff...``);
    the simulator derives it from fsname and hostname so that every process
    and every run of a node agrees on it.
    """
    value = 0xffff000000000000 | (abs(hash_text(fsname + hostname)) & 0xffffffffffff)
    return "%016x" % value


def hash_text(text):
    """A process-independent hash (Python's ``hash`` is salted per process)."""
    value = 1469598103934665603
    for byte in text.encode():
        value = ((value ^ byte) * 1099511628211) & 0xffffffffffffffff
    return value


# --------------------------------------------------------------------------
# configuration


def _target_entry(kind, fsname, index, size_mib, mib_s):
    label = "OST" if kind == "ost" else "MDT"
    return {
        "name": "%s-%s%04x" % (fsname, label, index),
        "index": index,
        "size_mib": int(size_mib),
        "mib_s": None if mib_s in (None, "", 0) else float(mib_s),
    }


def _target_list(kind, fsname, spec, size_mib, mib_s, overrides):
    """Normalise ``N`` or a list of per-target dicts into full target entries."""
    if spec is None:
        spec = 1 if kind == "mdt" else 4
    if isinstance(spec, int):
        spec = [{"index": i} for i in range(spec)]
    if not isinstance(spec, list):
        raise SimError("%ss must be a number or a list, got %r" % (kind, spec))
    entries = []
    for position, item in enumerate(spec):
        item = dict(item or {})
        index = int(item.get("index", position))
        entry = _target_entry(kind, fsname, index,
                              item.get("size_mib", size_mib),
                              item.get("mib_s", mib_s))
        if item.get("curve") is not None:
            entry["curve"] = _target_curve(kind, entry["name"], item["curve"])
        entries.append(entry)
    for key, value in (overrides or {}).items():
        match = [e for e in entries if e["name"] == key or e["name"].endswith("-" + key)]
        if not match:
            raise SimError("override for unknown target %s" % key)
        match[0]["mib_s"] = None if value in (None, "", 0) else float(value)
    names = [e["name"] for e in entries]
    if len(set(names)) != len(names):
        raise SimError("duplicate %s index" % kind)
    return entries


def _target_curve(kind, name, section):
    """A target's concurrency curve (see curve.py); an MDT's peak is in ops/s, a data target's in MiB/s."""
    try:
        return curve_model.normalise_curve(section, "%s curve" % name,
                                           "peak_ops_s" if kind == "mdt" else "peak_mib_s")
    except ValueError as error:
        raise SimError(str(error))


def normalise_fault(fault):
    """Validate one fault record and keep only its known keys."""
    if not isinstance(fault, dict) or fault.get("type") not in FAULT_TYPES:
        raise SimError("unknown fault %r (types: %s)" % (fault, ", ".join(FAULT_TYPES)))
    record = {key: fault[key] for key in FAULT_KEYS if fault.get(key) not in (None, "")}
    if record["type"] in ("io_error", "enomem", "leftover_echo_client", "target_full") \
            and "target" not in record:
        raise SimError("fault %s needs a target" % record["type"])
    if record["type"] == "hang" and "command" not in record:
        raise SimError("fault hang needs a command")
    if record.get("op") not in (None, "read", "write"):
        raise SimError("fault op must be read or write")
    return record


def _positive_number(section, key, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise SimError("%s.%s must be a positive number, got %r" % (section, key, value))
    return value


def normalise_lnet(section):
    """Validate the ``lnet:`` section (see docs/client-tools.md, LNet model)."""
    if section is None:
        return None
    if not isinstance(section, dict):
        raise SimError("lnet must be a mapping of %s" % ", ".join(LNET_KEYS))
    unknown = sorted(set(section) - set(LNET_KEYS))
    if unknown:
        raise SimError("unknown lnet keys: %s (known: %s)"
                       % (", ".join(map(str, unknown)), ", ".join(LNET_KEYS)))
    result = {}
    for key in ("link_mib_s", "latency_us", "msg_rate_max"):
        if section.get(key) is not None:
            result[key] = _positive_number("lnet", key, section[key])
    per_nid = section.get("per_nid")
    if per_nid is not None:
        if not isinstance(per_nid, dict):
            raise SimError("lnet.per_nid must map NIDs to MiB/s")
        result["per_nid"] = {}
        for nid, value in per_nid.items():
            if not re.match(r"^\S+@[a-z]+\d*$", str(nid)):
                raise SimError("lnet.per_nid: %r is not a NID (a.b.c.d@tcp)" % (nid,))
            result["per_nid"][str(nid)] = _positive_number("lnet.per_nid", nid, value)
    return result


def normalise_mdtest(section):
    """Validate the ``mdtest:`` section: which mdtest release's report to imitate."""
    if section is None:
        return None
    if not isinstance(section, dict) or set(section) - {"version"}:
        raise SimError("mdtest must be a mapping with only 'version'")
    version = str(section.get("version") or MDTEST_VERSIONS[0])
    if version not in MDTEST_VERSIONS:
        raise SimError("mdtest.version must be one of %s, got %r"
                       % (", ".join(MDTEST_VERSIONS), version))
    return {"version": version}


def normalise_config(settings):
    """Turn CLI/YAML settings into the stored configuration dict."""
    settings = dict(settings or {})
    fsname = str(settings.get("fsname") or DEFAULT_FSNAME)
    if not re.match(r"^[A-Za-z0-9_]{1,8}$", fsname):
        raise SimError("fsname must be 1-8 letters, digits or underscores: %r" % fsname)
    ost_size = settings.get("ost_size_mib") or DEFAULT_OST_SIZE_MIB
    mdt_size = settings.get("mdt_size_mib") or DEFAULT_MDT_SIZE_MIB
    overrides = dict(settings.get("ost_mib_s_override") or {})
    config = {
        "fsname": fsname,
        "hostname": str(settings.get("hostname") or socket.gethostname()),
        "nid": str(settings.get("nid") or DEFAULT_NID),
        "lustre_version": str(settings.get("lustre_version") or DEFAULT_VERSION),
        "page_size": int(settings.get("page_size") or DEFAULT_PAGE_SIZE),
        "mdts": _target_list("mdt", fsname, settings.get("mdts"), mdt_size,
                             settings.get("mdt_mib_s"), {}),
        "osts": _target_list("ost", fsname, settings.get("osts"), ost_size,
                             settings.get("ost_mib_s"), overrides),
        "client_mount": settings.get("client_mount") or None,
        "faults": [normalise_fault(f) for f in settings.get("faults") or []],
    }
    from .batch import SECTIONS as BATCH_SECTIONS
    for key, normalise in (("lnet", normalise_lnet), ("mdtest", normalise_mdtest)) + BATCH_SECTIONS:
        section = normalise(settings.get(key))
        if section is not None:
            config[key] = section
    parse_version(config["lustre_version"])
    known = set(config) | {"lnet", "mdtest", "slurm", "modules", "ior", "ost_size_mib", "mdt_size_mib", "ost_mib_s", "mdt_mib_s",
                           "ost_mib_s_override"}
    unknown = sorted(set(settings) - known)
    if unknown:
        raise SimError("unknown configuration keys: %s" % ", ".join(unknown))
    if not config["osts"] and not config["mdts"]:
        raise SimError("a node needs at least one target")
    return config


def initial_devices(config):
    """The obd device list of a combined MGS/MDS/OSS (+client) node after mount."""
    fsname = config["fsname"]
    devices = []

    def add(dtype, name, uuid, refcount, **extra):
        device = {"index": len(devices), "status": "UP", "type": dtype, "name": name,
                  "uuid": uuid, "refcount": refcount}
        device.update(extra)
        devices.append(device)

    mgc_uuid = str(uuidlib.UUID(int=hash_text(config["hostname"] + "mgc") << 64
                                | hash_text(config["nid"])))
    osts, mdts = config["osts"], config["mdts"]
    if mdts:
        add("osd-ldiskfs", "MGS-osd", "MGS-osd_UUID", 4)
        add("mgs", "MGS", "MGS", 4 + len(osts))
    add("mgc", "MGC%s" % config["nid"], mgc_uuid, 5, conn=config["nid"])
    for mdt in mdts:
        label = "MDT%04x" % mdt["index"]
        add("osd-ldiskfs", "%s-osd" % mdt["name"], "%s-osd_UUID" % mdt["name"], 4 + len(osts))
        if mdt["index"] == 0:
            add("mds", "MDS", "MDS_uuid", 2)
        add("lod", "%s-mdtlov" % mdt["name"], "%s-mdtlov_UUID" % mdt["name"], 3)
        add("mdt", mdt["name"], "%s_UUID" % mdt["name"], 8 + len(osts))
        add("mdd", "%s-MDD%04x" % (fsname, mdt["index"]),
            "%s-MDD%04x_UUID" % (fsname, mdt["index"]), 3, mdt=mdt["name"])
        add("qmt", "%s-QMT%04x" % (fsname, mdt["index"]),
            "%s-QMT%04x_UUID" % (fsname, mdt["index"]), 3)
        for ost in osts:
            name = "%s-osc-%s" % (ost["name"], label)
            add("osp", name, "%s-mdtlov_UUID" % mdt["name"], 4, target=ost["name"])
        add("lwp", "%s-MDT0000-lwp-%s" % (fsname, label),
            "%s-MDT0000-lwp-%s_UUID" % (fsname, label), 4)
    if osts:
        for position, ost in enumerate(osts):
            add("osd-ldiskfs", "%s-osd" % ost["name"], "%s-osd_UUID" % ost["name"], 4)
            if position == 0:
                add("ost", "OSS", "OSS_uuid", 2)
            add("obdfilter", ost["name"], "%s_UUID" % ost["name"], 4 + len(mdts))
            add("lwp", "%s-MDT0000-lwp-OST%04x" % (fsname, ost["index"]),
                "%s-MDT0000-lwp-OST%04x_UUID" % (fsname, ost["index"]), 4)
    if config.get("client_mount"):
        instance = mount_hash(fsname, config["hostname"])
        client_uuid = str(uuidlib.UUID(int=hash_text(instance) << 64 | hash_text(fsname)))
        add("lov", "%s-clilov-%s" % (fsname, instance), client_uuid, 3 + len(osts))
        add("lmv", "%s-clilmv-%s" % (fsname, instance), client_uuid, 3 + len(mdts))
        for mdt in mdts:
            add("mdc", "%s-mdc-%s" % (mdt["name"], instance), client_uuid, 4,
                conn=config["nid"], target=mdt["name"])
        for ost in osts:
            add("osc", "%s-osc-%s" % (ost["name"], instance), client_uuid, 4,
                conn=config["nid"], target=ost["name"])
    return devices


def initial_modules(config):
    names = list(SERVER_MODULES)
    if config.get("client_mount"):
        names += list(CLIENT_MODULES)
    return {"loaded": names}


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
                })
        return result

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

    def _state_paths(self, name):
        if not re.match(r"^[A-Za-z0-9_.-]+$", name):
            raise SimError("bad state name %r" % name)
        return (os.path.join(self.state_dir, name + ".json"),
                os.path.join(self.state_dir, name + ".lock"))

    @contextlib.contextmanager
    def _locked(self, name, mode):
        _, lock_path = self._state_paths(name)
        os.makedirs(self.state_dir, exist_ok=True)
        handle = open(lock_path, "a")
        try:
            fcntl.flock(handle, mode)
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()

    def _load(self, name):
        json_path, _ = self._state_paths(name)
        try:
            with open(json_path) as handle:
                return json.load(handle)
        except FileNotFoundError:
            return {}

    def _save(self, name, data):
        json_path, _ = self._state_paths(name)
        descriptor, temp_path = tempfile.mkstemp(prefix="." + name, dir=self.state_dir)
        try:
            with os.fdopen(descriptor, "w") as handle:
                json.dump(data, handle, indent=1, sort_keys=True)
                handle.write("\n")
            os.replace(temp_path, json_path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp_path)
            raise

    @contextlib.contextmanager
    def state(self, name):
        """Read-modify-write ``state/<name>.json`` under an exclusive lock."""
        with self._locked(name, fcntl.LOCK_EX):
            data = self._load(name)
            yield data
            self._save(name, data)

    def read_state(self, name):
        with self._locked(name, fcntl.LOCK_SH):
            return self._load(name)

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

    def reserve_bandwidth(self, target_name, nbytes, threads=1, op="", run=None):
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
        """
        rate = self.target_rate(target_name, threads, op)
        if not rate:
            return
        unit = 1.0 if "peak_ops_s" in (self.target(target_name).get("curve") or {}) else 1048576.0
        duration = nbytes / (rate * unit)
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
            _signal_helper(pid, signal.SIGTERM)
            stopped.append(helper)
        deadline = time.monotonic() + timeout
        while any(helper_running(h) for h in stopped) and time.monotonic() < deadline:
            time.sleep(0.05)
        for helper in stopped:
            if helper_running(helper):
                _signal_helper(int(helper["pid"]), signal.SIGKILL)
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


def _signal_helper(pid, signum):
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


# --------------------------------------------------------------------------
# creating a node


def shim_text(root, python, module, first_args=()):
    quoted_root = root.replace("'", "'\\''")
    extra = "".join(" %s" % a for a in first_args)
    return ("#!/bin/sh\n"
            "# lustre-sim shim: generated by 'lustre-sim init'\n"
            # Unquoted on purpose: inside double quotes the single quotes would become part of the path.
            "LUSTRE_SIM_ROOT=${LUSTRE_SIM_ROOT:-'%s'}; export LUSTRE_SIM_ROOT\n"
            "exec '%s' -m %s%s \"$@\"\n" % (quoted_root, python, module, extra))


def write_shims(root, python=None):
    python = python or sys.executable
    bin_dir = os.path.join(root, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    for tool in SHIM_TOOLS:
        _write_executable(os.path.join(bin_dir, tool),
                          shim_text(root, python, "lustre_sim.tools.%s" % tool))
    for tool in MODULE_SHIMS:
        _write_executable(os.path.join(bin_dir, tool),
                          shim_text(root, python, "lustre_sim.tools.modules",
                                    ("--sim-tool=%s" % tool,)))


def _write_executable(path, text):
    with open(path, "w") as handle:
        handle.write(text)
    os.chmod(path, 0o755)


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


def teardown(node):
    """Stop what a node runs: its client mount (and FUSE daemon), then every other helper.

    Raises SimError if a file system is still mounted under the root
    afterwards, so that nothing is ever deleted through a live mount.
    """
    from . import client_mount

    if node.config.get("client_mount"):
        client_mount.unmount(node)
    node.stop_helpers()
    live = mounts_under(node.root)
    if live:
        raise SimError("still mounted under %s: %s" % (node.root, ", ".join(live)))


def _existing_node(root):
    try:
        return Node(root)
    except SimError:
        return None


def destroy_node(root):
    """Unmount, stop helpers, remove installed shims and delete the root; idempotent."""
    from . import host

    root = os.path.abspath(os.fspath(root))
    if not os.path.exists(root):
        return False
    node = _existing_node(root)
    if node is None:
        raise SimError("%s is not a lustre-sim node (no config.yaml); not removing it" % root)
    teardown(node)
    host.uninstall_recorded_shims(node)
    shutil.rmtree(root)
    return True


def create_node(root, settings, force=False, python=None):
    """Create (or with ``force`` re-create) a simulated node under ``root``."""
    root = os.path.abspath(os.fspath(root))
    config = normalise_config(settings)
    config_path = os.path.join(root, "config.yaml")
    if os.path.exists(config_path):
        if not force:
            raise SimError("%s already holds a lustre-sim node; use --force to re-create it"
                           % root)
        previous = _existing_node(root)
        if previous is not None:
            teardown(previous)
        live = mounts_under(root)
        if live:
            raise SimError("still mounted under %s: %s" % (root, ", ".join(live)))
        for sub in ("bin", "state", "targets", "client"):
            shutil.rmtree(os.path.join(root, sub), ignore_errors=True)
    os.makedirs(os.path.join(root, "state"), exist_ok=True)
    with open(config_path, "w") as handle:
        yaml.safe_dump(config, handle, default_flow_style=False, sort_keys=False)
    node = Node(root)
    for target in node.targets():
        os.makedirs(target["path"], exist_ok=True)
        if target["kind"] == "ost":
            os.makedirs(os.path.join(target["path"], "O"), exist_ok=True)
        else:
            os.makedirs(os.path.join(target["path"], "ROOT"), exist_ok=True)
            os.makedirs(os.path.join(target["path"], "ROOT_ECHO"), exist_ok=True)
    if node.client_dir():
        os.makedirs(node.client_dir(), exist_ok=True)
    with node.state("devices") as state:
        state["devices"] = initial_devices(config)
    with node.state("modules") as state:
        state.update(initial_modules(config))
    with node.state("faults") as state:
        state["faults"] = copy.deepcopy(config["faults"])
    for name in ("lst", "helpers", "objects"):
        with node.state(name):
            pass
    for fault in config["faults"]:
        node.apply_fault_effects(fault)
    write_shims(root, python)
    return node
