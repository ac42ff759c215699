"""``lctl get_param`` / ``set_param`` / ``list_param`` over the simulated parameter tree.

Each parameter is (dotted name, reader, writer); readers compute their text
from the node's state and backing directories when asked.  Output rules
(``name=value``, a newline after ``=`` for long or multi-line values, the
error texts) follow ``read_param``/``write_param`` in ``lustre/utils/lustre_cfg.c``.
"""

import errno
import fnmatch
import getopt
import os
import time

from .lctl_base import CMD_HELP, device_line, devices_yaml, strerror
from .lctl_stats import (OFD_COUNTERS, format_brw_stats, format_counters, reset_brw_stats,
                         reset_counters)

DEBUGFS_NAMES = ("stats", "brw_stats", "md_stats", "rpc_stats")

MDT_COUNTERS = tuple((name, "usecs", False) for name in (
    "open", "close", "mknod", "link", "unlink", "mkdir", "rmdir", "rename", "getattr",
    "setattr", "getxattr", "setxattr", "statfs", "sync", "samedir_rename",
    "crossdir_rename"))
CLIENT_COUNTERS = tuple((name, units, False) for name, units in (
    ("read_bytes", "bytes"), ("write_bytes", "bytes"), ("read", "usecs"),
    ("write", "usecs"), ("open", "usecs"), ("close", "usecs"), ("mkdir", "usecs"),
    ("unlink", "usecs"), ("getattr", "usecs"), ("statfs", "usecs")))


class Param:
    def __init__(self, name, read=None, write=None):
        self.name = name
        self.read = read
        self.write = write

    @property
    def path(self):
        parts = self.name.split(".", 2) if "." in self.name else [self.name]
        base = "/sys/kernel/debug/lustre/" if parts[-1] in DEBUGFS_NAMES else "/sys/fs/lustre/"
        return base + "/".join(parts)


def stored(node, name, default):
    return node.read_state("params").get(name, default)


def store(node, name, value):
    with node.state("params") as params:
        params[name] = value


def mem_total_mib():
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 1024


def usage_reader(node, target, key):
    return lambda: "%d\n" % node.target_usage(target)[key]


def stored_reader(node, name, default):
    return lambda: "%s\n" % stored(node, name, default)


def stored_writer(node, name, check=None):
    def write(value):
        if check is not None and not check(value):
            raise OSError(errno.EINVAL, strerror(errno.EINVAL))
        store(node, name, value.strip())
    return write


def is_integer(value):
    try:
        int(value.strip(), 0)
        return True
    except ValueError:
        return False


def force_sync(value):
    # Data written by echo I/O sits in the page cache; a force_sync really flushes it.
    os.sync()


def counters_reader(node, group, target, layout):
    def read():
        entry = node.read_state("stats").get("counters", {}).get(group, {}).get(target)
        return format_counters(entry, layout)
    return read


def counters_writer(node, group, target):
    return lambda value: reset_counters(node, group, target)


def brw_reader(node, target):
    def read():
        return format_brw_stats(node.read_state("stats").get("brw_stats", {}).get(target))
    return read


def brw_writer(node, target):
    return lambda value: reset_brw_stats(node, target)


def osc_rpc_stats(node, name):
    def read():
        now = time.time()
        entry = node.read_state("stats").get("rpc_stats", {}).get(name, {})
        init = entry.get("init", now)
        lines = ["snapshot_time:         %.9f secs.nsecs" % now,
                 "start_time:            %.9f secs.nsecs" % init,
                 "elapsed_time:          %.9f secs.nsecs" % max(now - init, 0),
                 "read RPCs in flight:  0",
                 "write RPCs in flight: 0",
                 "pending write pages:  0",
                 "pending read pages:   0", ""]
        for title in ("pages per rpc", "rpcs in flight", "offset"):
            lines.append("\t\t\tread\t\t\twrite")
            lines.append("%-22s rpcs   %% cum %% |       rpcs   %% cum %%" % title)
            lines.append("")
        return "\n".join(lines)
    return read


def max_cached_reader(node, name):
    def read():
        limit = int(stored(node, name, mem_total_mib() // 2))
        used = 0
        client = node.client_dir()
        if client and os.path.isdir(client):
            for directory, _, files in os.walk(client):
                for filename in files:
                    try:
                        used += os.lstat(os.path.join(directory, filename)).st_blocks * 512
                    except OSError:
                        pass
        used_mb = min(used >> 20, limit)
        return ("users: 1\nmax_cached_mb: %d\nused_mb: %d\nunused_mb: %d\n"
                "reclaim_count: 0\n" % (limit, used_mb, limit - used_mb))
    return read


def build_params(node):
    params = []
    add = lambda name, read=None, write=None: params.append(Param(name, read, write))
    devices = node.devices()
    add("version", lambda: "%s\n" % node.version)
    add("devices", lambda: "".join(device_line(d) + "\n" for d in node.devices()))
    add("health_check", lambda: "healthy\n")
    for target in node.targets():
        name = target["name"]
        osd = "osd-ldiskfs.%s" % name
        add(osd + ".brw_stats", brw_reader(node, name), brw_writer(node, name))
        # The block device the target is mounted from when the configuration names one (device), else its directory.
        add(osd + ".mntdev", lambda t=target: "%s\n" % (t.get("device") or t["path"]))
        add(osd + ".fstype", lambda: "ldiskfs\n")
        add(osd + ".blocksize", lambda: "4096\n")
        add(osd + ".force_sync", None, force_sync)
        for key in ("kbytestotal", "kbytesfree", "kbytesavail", "filestotal", "filesfree"):
            add("%s.%s" % (osd, key), usage_reader(node, name, key))
        if target["kind"] == "ost":
            ofd = "obdfilter.%s" % name
            add(ofd + ".stats", counters_reader(node, "obdfilter", name, OFD_COUNTERS),
                counters_writer(node, "obdfilter", name))
            add(ofd + ".brw_stats", brw_reader(node, name), brw_writer(node, name))
            add(ofd + ".sync_journal", stored_reader(node, ofd + ".sync_journal", "0"),
                stored_writer(node, ofd + ".sync_journal", is_integer))
            add(ofd + ".uuid", lambda t=target: "%s\n" % t["uuid"])
            for key in ("kbytestotal", "kbytesfree", "kbytesavail", "filestotal",
                        "filesfree"):
                add("%s.%s" % (ofd, key), usage_reader(node, name, key))
        else:
            mdt = "mdt.%s" % name
            add(mdt + ".md_stats", counters_reader(node, "mdt", name, MDT_COUNTERS),
                counters_writer(node, "mdt", name))
            add(mdt + ".uuid", lambda t=target: "%s\n" % t["uuid"])
    client_osc = [d for d in devices if d["type"] == "osc"]
    for device in devices:
        dname = device["name"]
        if device["type"] == "lov":
            osts = node.targets("ost")
            add("lov.%s.numobd" % dname, lambda n=len(osts): "%d\n" % n)
            add("lov.%s.activeobd" % dname, lambda n=len(osts): "%d\n" % n)
            add("lov.%s.target_obd" % dname,
                lambda o=osts: "".join("%d: %s ACTIVE\n" % (t["index"], t["uuid"])
                                       for t in o))
            add("lov.%s.stripecount" % dname, lambda: "1\n")
            add("lov.%s.stripesize" % dname, lambda: "1048576\n")
        elif device["type"] == "lmv":
            fsname, _, instance = dname.partition("-clilmv-")
            llite = "llite.%s-%s" % (fsname, instance)
            add(llite + ".max_cached_mb", max_cached_reader(node, llite + ".max_cached_mb"),
                stored_writer(node, llite + ".max_cached_mb", is_integer))
            add(llite + ".stats", counters_reader(node, "llite", llite, CLIENT_COUNTERS),
                counters_writer(node, "llite", llite))
        elif device["type"] in ("osc", "mdc") and device in client_osc + [
                d for d in devices if d["type"] == "mdc"]:
            prefix = "%s.%s" % (device["type"], dname)
            add(prefix + ".stats", counters_reader(node, device["type"], dname,
                                                   CLIENT_COUNTERS),
                counters_writer(node, device["type"], dname))
            add(prefix + ".%s_conn_uuid" % ("ost" if device["type"] == "osc" else "mds"),
                lambda d=device: "%s\n" % d.get("conn", node.config.get("nid")))
            if device["type"] == "osc":
                add(prefix + ".rpc_stats", osc_rpc_stats(node, dname))
                add(prefix + ".max_rpcs_in_flight",
                    stored_reader(node, prefix + ".max_rpcs_in_flight", "8"),
                    stored_writer(node, prefix + ".max_rpcs_in_flight", is_integer))
                add(prefix + ".max_pages_per_rpc",
                    stored_reader(node, prefix + ".max_pages_per_rpc", "1024"),
                    stored_writer(node, prefix + ".max_pages_per_rpc", is_integer))
    return params


def match(params, pattern):
    """Params whose dotted name matches a glob, component by component."""
    wanted = pattern.replace("/", ".").split(".")
    found = []
    for param in params:
        parts = param.name.split(".")
        if len(parts) == len(wanted) and all(fnmatch.fnmatchcase(part, glob)
                                             for part, glob in zip(parts, wanted)):
            found.append(param)
    return found


def _options(session, argv, letters):
    try:
        options, rest = getopt.getopt(argv[1:], letters)
    except getopt.GetoptError as error:
        session.err.write("%s: invalid option -- '%s'\n" % (argv[0], error.opt))
        return None, None
    return {option for option, _ in options}, rest


def cmd_get_param(session, argv):
    node = session.node
    letters = "FnNRy" if node.version_tuple >= (2, 15, 54) else "FnNR"
    options, patterns = _options(session, argv, letters)
    if options is None or not patterns:
        return CMD_HELP
    show_path = "-n" not in options
    only_path = "-N" in options
    params = build_params(node)
    rc = 0
    for pattern in patterns:
        if "-y" in options and pattern == "devices":
            session.out.write(devices_yaml(node.devices()))
            continue
        found = match(params, pattern)
        if not found:
            session.err.write("error: %s: param_path '%s': %s\n"
                              % ("list_param" if only_path else "get_param", pattern,
                                 strerror(errno.ENOENT)))
            rc = rc or -errno.ENOENT
            continue
        for param in found:
            if only_path:
                session.out.write("%s\n" % param.name)
                continue
            if param.read is None:
                session.err.write("error: read_param: '%s': %s\n"
                                  % (param.path, strerror(errno.EACCES)))
                rc = rc or -errno.EACCES
                continue
            value = param.read()
            if not value:
                continue
            if show_path:
                long_value = "\n" in value[:-1] or len(value) + 1 + len(param.name) >= 80
                session.out.write("%s=%s" % (param.name, "\n" if long_value else ""))
            session.out.write(value)
    return rc


def cmd_list_param(session, argv):
    options, patterns = _options(session, argv, "FRD")
    if options is None or not patterns:
        return CMD_HELP
    return cmd_get_param(session, ["list_param", "-N"] + patterns)


def cmd_set_param(session, argv):
    node = session.node
    options, assignments = _options(session, argv, "nPdF")
    if options is None or not assignments:
        return CMD_HELP
    show_path = "-n" not in options
    if "-P" in options:
        # Persistent settings go through the MGS, which this node has; they apply locally too.
        pass
    pairs = []
    index = 0
    while index < len(assignments):
        item = assignments[index]
        if "=" in item:
            name, value = item.split("=", 1)
        elif index + 1 < len(assignments):
            name, value = item, assignments[index + 1]
            index += 1
        else:
            session.err.write("error: set_param: setting %s: %s\n"
                              % (item, strerror(errno.EINVAL)))
            return -errno.EINVAL
        pairs.append((name, value))
        index += 1
    params = build_params(node)
    rc = 0
    for pattern, value in pairs:
        found = match(params, pattern)
        if not found:
            session.err.write("error: set_param: param_path '%s': %s\n"
                              % (pattern, strerror(errno.ENOENT)))
            rc = rc or -errno.ENOENT
            continue
        for param in found:
            if param.write is None:
                session.err.write("error: set_param: opening '%s': %s\n"
                                  % (param.path, strerror(errno.EACCES)))
                rc = rc or -errno.EACCES
                continue
            try:
                param.write(value)
            except OSError as error:
                session.err.write("error: set_param: setting %s=%s: %s\n"
                                  % (param.path, value, strerror(error.errno)))
                rc = rc or -error.errno
                continue
            if show_path:
                session.out.write("%s=%s\n" % (param.name, value))
    return rc
