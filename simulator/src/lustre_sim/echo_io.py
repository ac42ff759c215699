"""echo_client operations: OST objects (create/destroy/test_brw) and MD tests.

Objects are real files under ``targets/<OST>/O/echo/``; MD tests create real
files and directories under ``targets/<MDT>/ROOT_ECHO/``.  Output texts and
argument handling follow ``lustre/utils/obd.c``; errno choices follow the
kernel paths of ``lustre/obdecho/echo_client.c`` and the OFD.
"""

import errno
import fcntl
import getopt
import os
import struct
import time

from .common import parse_version
from .lctl_base import (CMD_HELP, BAD_VERBOSE, LctlError, be_verbose, c_strtol,
                        c_strtol_prefix, get_verbose, strerror)
from .lctl_stats import StatsRecorder
from .lnet_model import LinkModel
from .read_cache import object_key

OBIF_MAX_OID = (1 << 32) - 1
MD_STEP_COUNT = 1000
MAX_BASE_ID = 0xffffffff
PTLRPC_MAX_BRW_SIZE = 64 << 20
XATTR_NAME = "user.test1"
FAULT_REFRESH_SECONDS = 0.5


def hex_id(value):
    """printf("%#jx"): zero prints without the 0x prefix."""
    return "%#x" % value if value else "0"


def object_path(target_path, objid):
    return os.path.join(target_path, "O", "echo", "d%d" % (objid % 32), "%d" % objid)


def ost_of(session, device):
    """Name of the OST whose backing directory serves an OST echo_client."""
    target = device.get("target")
    if device.get("target_type") == "osc":
        for other in session.devices():
            if other["name"] == target:
                if other.get("target"):
                    return other["target"]
                args = other.get("setup_args") or []
                if args and args[0].endswith("_UUID"):
                    return args[0][:-len("_UUID")]
        raise LctlError(errno.ENODEV)
    return target


# obdfilter-survey case=network: the osc's server is an obdecho device, which stores nothing.
ECHO_SERVER_KIND = "echo_server"


def network_echo_target(session, device, name):
    """The obdecho server behind an osc echo client, when it is not an OST of this node.

    The osc must have been set up as ``setup <server>_UUID <peer uuid>`` with the peer UUID given a NID by
    ``add_uuid`` (what obdfilter-survey's network case does); the server may be another node, so all the
    simulator knows of it is that NID, whose LNet link (``lnet.link_mib_s``/``per_nid``) limits the rate.
    """
    if device.get("target_type") != "osc":
        return None
    osc = next((d for d in session.devices() if d["name"] == device.get("target")), None)
    args = (osc or {}).get("setup_args") or []
    if len(args) < 2:
        return None
    nid = session.node.read_state("uuids").get(args[1])
    if nid is None:
        return None
    return {"name": name, "kind": ECHO_SERVER_KIND, "nid": nid, "path": None}


def ost_echo_device(session):
    device = session.ioctl_device()
    if device.get("layer") == "mdd":
        raise LctlError(errno.EINVAL)
    name = ost_of(session, device)
    target = session.node.target(name)
    if target is None:
        target = network_echo_target(session, device, name)
        if target is not None:
            return device, target
    if target is None or target["kind"] != "ost":
        raise LctlError(errno.ENODEV)
    return device, target


def reserve_link(node, nid, nbytes):
    """Share the peer NID's link among every thread sending to it (as ``Node.reserve_bandwidth`` does for
    an OST): each transfer books the next free slot of the link's time line and sleeps until it ends."""
    mib_s = LinkModel(node.config).link(nid)
    if not mib_s:
        return
    path = os.path.join(node.state_dir, "link-%s" % nid.replace("/", "_"))
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        now = time.time()
        try:
            busy_until = float(handle.read().strip())
        except ValueError:
            busy_until = now
        end = max(now, busy_until) + nbytes / (mib_s * 1048576.0)
        handle.seek(0)
        handle.truncate()
        handle.write("%.6f" % end)
        handle.flush()
        fcntl.flock(handle, fcntl.LOCK_UN)
    delay = end - time.time()
    if delay > 0:
        time.sleep(delay)


class FaultView:
    """Faults for one target, re-read now and then so runtime changes take effect mid-run."""

    def __init__(self, node, target_name):
        self.node = node
        self.target_name = target_name
        self.loaded_at = 0.0
        self.faults = []

    def active(self, fault_type, op=None):
        now = time.monotonic()
        if now - self.loaded_at > FAULT_REFRESH_SECONDS:
            self.faults = self.node.faults()
            self.loaded_at = now
        for fault in self.faults:
            if fault["type"] != fault_type:
                continue
            if fault.get("target") not in (None, self.target_name):
                continue
            if op is not None and fault.get("op") not in (None, op):
                continue
            return True
        return False


# -- create / destroy ---------------------------------------------------------------


def create(session, argv):
    ctx = session.ctx
    name = ctx.cmdname(argv[0])
    if len(argv) < 2 or len(argv) > 4:
        return CMD_HELP
    try:
        count = c_strtol(argv[1])
    except ValueError:
        session.err.write("error: %s: invalid iteration count '%s'\n" % (name, argv[1]))
        return CMD_HELP
    if len(argv) > 2:
        try:
            c_strtol(argv[2])
        except ValueError:
            session.err.write("error: %s: invalid mode '%s'\n" % (name, argv[2]))
            return CMD_HELP
    verbose = 1
    if len(argv) > 3:
        verbose = get_verbose(session, argv[0], argv[3])
        if verbose == BAD_VERBOSE:
            return CMD_HELP
    session.out.write("%s: %d objects\n" % (name, count))
    node = session.node
    recorder = StatsRecorder(node)
    progress = {"next_time": time.time() - verbose, "next_num": verbose}
    rc = 0
    number = 1
    while number <= count and ctx.running():
        if number > 1 and node.hang_matches("lctl", ["obj_batch", "create"]):
            # a hang fault "obj_batch create" holds the create after its first object, created and its id
            # printed (flushed), until the fault is cleared: a test's "killed while lctl create runs"
            node.hang_while_faulted("lctl", ["obj_batch", "create"])
        started = time.monotonic()
        try:
            device, target = ost_echo_device(session)
            if node.fault_active("target_full", target["name"]):
                raise LctlError(errno.ENOSPC)
            objid = allocate_object(node, target)
        except LctlError as error:
            ctx.bump(1)
            session.err.write("error: %s: #%d - %s\n" % (name, number, strerror(error.errno)))
            rc = error.errno
            break
        ctx.bump(1)
        recorder.count("obdfilter", target["name"], "create",
                       int((time.monotonic() - started) * 1e6))
        if be_verbose(verbose, progress, number, count):
            session.out.write("%s: #%d is object id %s\n" % (name, number, hex_id(objid)))
        number += 1
    recorder.flush()
    return rc


def allocate_object(node, target):
    with node.state("objects") as objects:
        entry = objects.setdefault(target["name"], {"next_id": 2})
        objid = entry["next_id"]
        entry["next_id"] = objid + 1
    if target["kind"] == ECHO_SERVER_KIND:
        return objid
    path = object_path(target["path"], objid)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    except OSError as error:
        raise LctlError(error.errno)
    return objid


def destroy(session, argv):
    ctx = session.ctx
    name = ctx.cmdname(argv[0])
    if len(argv) < 2 or len(argv) > 4:
        return CMD_HELP
    try:
        objid = c_strtol(argv[1])
        if objid <= 0:
            raise ValueError
    except ValueError:
        session.err.write("error: %s: invalid objid '%s'\n" % (name, argv[1]))
        return CMD_HELP
    count = 1
    if len(argv) > 2:
        try:
            count = c_strtol(argv[2])
        except ValueError:
            session.err.write("error: %s: invalid iteration count '%s'\n" % (name, argv[2]))
            return CMD_HELP
    verbose = 1
    if len(argv) > 3:
        verbose = get_verbose(session, argv[0], argv[3])
        if verbose == BAD_VERBOSE:
            return CMD_HELP
    session.out.write("%s: %d objects\n" % (name, count))
    recorder = StatsRecorder(session.node)
    cache = session.node.read_cache
    progress = {"next_time": time.time() - verbose, "next_num": verbose}
    rc = 0
    number = 1
    while number <= count and ctx.running():
        if objid >= OBIF_MAX_OID:
            session.err.write("errr: %s: invalid objid '%d'\n" % (name, objid))
            return -errno.E2BIG
        started = time.monotonic()
        try:
            device, target = ost_echo_device(session)
            try:
                if target["kind"] != ECHO_SERVER_KIND:
                    os.unlink(object_path(target["path"], objid))
                    if cache is not None:
                        cache.forget(object_key(target["name"], objid))
            except OSError as error:
                raise LctlError(error.errno)
        except LctlError as error:
            ctx.bump(1)
            session.err.write("error: %s: objid %s: %s\n"
                              % (name, hex_id(objid), strerror(error.errno)))
            rc = error.errno
            break
        ctx.bump(1)
        recorder.count("obdfilter", target["name"], "destroy",
                       int((time.monotonic() - started) * 1e6))
        if be_verbose(verbose, progress, number, count):
            session.out.write("%s: #%d is object id %s\n" % (name, number, hex_id(objid)))
        number += 1
        objid += 1
    recorder.flush()
    return rc


# -- test_brw --------------------------------------------------------------------------


def test_brw(session, argv):
    ctx = session.ctx
    node = session.node
    name = ctx.cmdname(argv[0])
    page_size = node.page_size
    argc = len(argv)
    if argc < 2 or argc > 7:
        session.err.write("error: %s: bad number of arguments: %d\n" % (name, argc))
        return CMD_HELP
    try:
        count = c_strtol(argv[1])
    except ValueError:
        session.err.write("error: %s: bad iteration count '%s'\n" % (name, argv[1]))
        return CMD_HELP
    write = repeat_offset = False
    verify = True
    if argc >= 3:
        mode = argv[2]
        write = mode[:1] in ("w", "1")
        for letter in mode[1:]:
            if letter == "r":
                repeat_offset = True
            elif letter == "x":
                verify = False
            else:
                session.err.write("Can't parse cmd '%s'\n" % mode)
                return CMD_HELP
    verbose = 1
    if argc >= 4:
        verbose = get_verbose(session, argv[0], argv[3])
        if verbose == BAD_VERBOSE:
            return CMD_HELP
    pages, offset_pages = 1, 0
    if argc >= 5:
        pages, rest = c_strtol_prefix(argv[4])
        if rest.startswith("+"):
            offset_pages, rest = c_strtol_prefix(rest[1:])
        if rest or offset_pages < 0 or offset_pages >= pages:
            session.err.write("error: %s: bad npages[+offset] parameter '%s'\n"
                              % (name, argv[4]))
            return CMD_HELP
    objid, threads_per_object = 3, 0
    if argc >= 6:
        spec = argv[5]
        leading, rest = c_strtol_prefix(spec)
        if ctx.thread and leading > 0 and rest.startswith("t") \
                and c_strtol_prefix(rest[1:])[0] > 0 and not c_strtol_prefix(rest[1:])[1]:
            threads_per_object = leading
            objid = c_strtol_prefix(rest[1:])[0]
            rest = ""
        elif ctx.thread and spec.startswith("t"):
            threads_per_object = 1
            objid, rest = c_strtol_prefix(spec[1:])
        else:
            objid = leading
        if rest:
            session.err.write("error: %s: bad objid '%s'\n" % (name, spec))
            return CMD_HELP
    batch_kind, batch_bytes = "default", 0
    if argc >= 7:
        batch = argv[6]
        if batch[:1] not in ("g", "p"):
            session.err.write("error: %s: batching '%s' needs to specify 'p' or 'g'\n"
                              % (name, batch))
            return CMD_HELP
        value, rest = c_strtol_prefix(batch[1:])
        if rest:
            session.err.write("error: %s: bad batching '%s'\n" % (name, batch))
            return CMD_HELP
        batch_kind = "plug" if batch[0] == "g" else "prep"
        batch_bytes = value * page_size

    length = pages * page_size
    thread_offset = offset_pages * page_size
    stride = length
    object_index = 0
    if ctx.thread:
        if threads_per_object:
            object_index = (ctx.thread - 1) // threads_per_object
            objid += object_index
            stride *= threads_per_object
            if (ctx.thread - 1) % threads_per_object == 0:
                ctx.set_offset(object_index, stride + thread_offset)
            thread_offset += ((ctx.thread - 1) % threads_per_object) * length
        else:
            thread_offset += (ctx.thread - 1) * length
        ctx.wait_start()

    if objid >= OBIF_MAX_OID:
        session.err.write("errr: %s: invalid objid '%d'\n" % (name, objid))
        return -errno.E2BIG

    offset = 0 if repeat_offset else thread_offset
    start = time.time()
    if verbose != 0:
        session.out.write("%s: %s %dx%d pages (obj %s, off %d): %s\n"
                          % (name, "writing" if write else "reading", count, pages,
                             hex_id(objid), offset, time.ctime(start)))
    op = "write" if write else "read"
    progress = {"next_time": start - verbose, "next_num": verbose}
    rc = 0
    io = None
    number = 1
    try:
        while number <= count and ctx.running():
            try:
                if io is None:
                    io = BrwWorker(session, objid, write, verify, batch_kind, batch_bytes)
                io.transfer(offset, length)
            except LctlError as error:
                ctx.bump(1)
                session.out.flush()
                session.err.write("error: %s: #%d - %s on %s\n"
                                  % (name, number, strerror(error.errno), op))
                rc = error.errno
                break
            ctx.bump(1)
            if be_verbose(verbose, progress, number, count):
                session.out.write("%s: %s number %d @ %d:%d for %d\n"
                                  % (name, op, number, objid, offset, length))
            if not repeat_offset:
                if stride == length or not ctx.thread:
                    offset += stride if ctx.thread else length
                elif number < count:
                    offset = ctx.take_offset(object_index, length)
            number += 1
    finally:
        if io is not None:
            io.close()
    if not rc:
        end = time.time()
        done = number - 1
        elapsed = end - start
        if verbose != 0:
            rate = (done * pages * page_size) / (elapsed * 1048576.0) if elapsed else float("inf")
            session.out.write("%s: %s %dx%d pages in %.3fs (%.3f MB/s): %s\n"
                              % (name, "wrote" if write else "read", done, pages, elapsed,
                                 rate, time.ctime(end)))
    ctx.mark_end()
    return rc


class BrwWorker:
    """Bulk I/O of one echo_client on one object file, with faults, capacity and throttle."""

    def __init__(self, session, objid, write, verify, batch_kind, batch_bytes):
        node = session.node
        self.node = node
        self.device, self.target = ost_echo_device(session)
        self.objid = objid
        self.write = write
        self.verify = verify
        if batch_kind == "plug" and self.device.get("target_type") == "osc" \
                and parse_version(node.version) >= (2, 15, 7):
            # LU-10994 removed the plug/unplug path; only prep/commit remains.
            raise LctlError(errno.EINVAL)
        self.faults = FaultView(node, self.target["name"])
        # The target's concurrency curve sees this test_brw's thread count (lctl --threads).
        self.threads = max(session.ctx.nthreads, 1)
        self.run_key = session.ctx.run_key()
        self.recorder = StatsRecorder(node)
        self.fd = None
        self.buffer = None
        if self.target["kind"] == ECHO_SERVER_KIND:
            # obdecho sinks writes and answers reads with zeroes: no object file, no capacity
            self.path = None
            return
        self.path = object_path(self.target["path"], objid)
        self.cache_key = object_key(self.target["name"], objid)
        try:
            self.fd = os.open(self.path, os.O_RDWR if write else os.O_RDONLY)
        except OSError as error:
            raise LctlError(error.errno)
        usage = node.target_usage(self.target["name"])
        self.capacity = usage["kbytestotal"] * 1024
        self.used = usage["used_bytes"]
        self.buffer = None

    def payload(self, offset, length):
        if self.buffer is None or len(self.buffer) != length:
            self.buffer = bytearray(length)
        if self.verify:
            page_size = self.node.page_size
            for page in range(0, length, page_size):
                struct.pack_into("<QQ", self.buffer, page, self.objid, offset + page)
        return self.buffer

    def check(self, data, offset):
        page_size = self.node.page_size
        for page in range(0, len(data) - 15, page_size):
            stamp = struct.unpack_from("<QQ", data, page)
            if stamp != (0, 0) and stamp != (self.objid, offset + page):
                raise LctlError(errno.EINVAL)

    def transfer(self, offset, length):
        op = "write" if self.write else "read"
        if self.faults.active("enomem"):
            raise LctlError(errno.ENOMEM)
        if self.faults.active("io_error", op):
            raise LctlError(errno.EIO)
        if self.fd is None:
            if not self.write and self.verify:
                self.check(bytes(length), offset)
            reserve_link(self.node, self.target["nid"], length)
            return
        started = time.monotonic()
        map_seconds = None
        try:
            if self.write:
                if self.faults.active("target_full"):
                    raise LctlError(errno.ENOSPC)
                size = os.fstat(self.fd).st_size
                growth = max(offset + length - size, 0)
                if growth and self.used + growth > self.capacity:
                    raise LctlError(errno.ENOSPC)
                if growth:
                    mapped = time.monotonic()
                    os.ftruncate(self.fd, offset + length)
                    map_seconds = time.monotonic() - mapped
                    self.used += growth
                os.pwrite(self.fd, self.payload(offset, length), offset)
            else:
                data = os.pread(self.fd, length, offset)
                if self.verify:
                    self.check(data, offset)
        except OSError as error:
            raise LctlError(error.errno)
        self.node.reserve_bandwidth(self.target["name"], length, self.threads, op, run=self.run_key,
                                    extent=(self.cache_key, offset))
        self.recorder.brw(self.target["name"], op, length, time.monotonic() - started,
                          map_seconds)

    def close(self):
        self.recorder.flush()
        if self.fd is not None:
            os.close(self.fd)


# -- metadata tests -----------------------------------------------------------------------

MD_LONG_OPTIONS = ["child_base_id=", "stripe_count=", "parent_basedir=", "parent_dircount=",
                   "stripe_index=", "mode=", "count=", "time=", "version"]
MD_SHORT_TO_LONG = {"--child_base_id": "-b", "--stripe_count": "-c",
                    "--parent_basedir": "-d", "--parent_dircount": "-D",
                    "--stripe_index": "-i", "--mode": "-m", "--count": "-n",
                    "--time": "-t", "--version": "-v"}


def test_create(session, argv):
    return md_common(session, argv, "create")


def test_mkdir(session, argv):
    return md_common(session, argv, "mkdir")


def test_destroy(session, argv):
    return md_common(session, argv, "destroy")


def test_rmdir(session, argv):
    return md_common(session, argv, "rmdir")


def test_lookup(session, argv):
    return md_common(session, argv, "lookup")


def test_setxattr(session, argv):
    return md_common(session, argv, "setxattr")


def test_md_getattr(session, argv):
    return md_common(session, argv, "getattr")


def md_common(session, argv, op):
    ctx = session.ctx
    name = ctx.cmdname(argv[0])
    mode = 0o644
    parent_basedir = None
    parent_count = 1
    child_base_id = -1
    stripe_count = 0
    stripe_index = -1
    total_count = 0
    seconds = 0
    show_rate = False
    try:
        options, rest = getopt.gnu_getopt(argv[1:], "b:c:d:D:m:n:t:v", MD_LONG_OPTIONS)
    except getopt.GetoptError as error:
        session.err.write("error: %s: option '%s' unrecognized\n"
                          % (argv[0], "-" + error.opt if len(error.opt) == 1
                             else "--" + error.opt))
        return CMD_HELP
    numeric = {"-b": "bad child_base_id", "-c": "bad stripe count", "-D": "bad parent count",
               "-i": "bad stripe index", "-m": "bad mode", "-t": "seconds"}
    for option, value in options:
        option = MD_SHORT_TO_LONG.get(option, option)
        if option in numeric:
            try:
                number = c_strtol(value)
            except ValueError:
                session.err.write("error: %s: %s '%s'\n" % (name, numeric[option], value))
                return CMD_HELP
            if option == "-b":
                child_base_id = number
            elif option == "-c":
                stripe_count = number
            elif option == "-D":
                parent_count = number
            elif option == "-i":
                stripe_index = number
            elif option == "-m":
                mode = number
            else:
                seconds = number
        elif option == "-d":
            parent_basedir = value
        elif option == "-n":
            try:
                total_count = c_strtol(value)
                if total_count == 0:
                    raise ValueError
            except ValueError:
                session.err.write("%s: bad child count '%s'\n" % (name, value))
                return CMD_HELP
        elif option == "-v":
            show_rate = True
    child_name = None
    if child_base_id == -1:
        if not rest:
            return CMD_HELP
        child_name = rest[0]
        total_count = 1
    elif rest:
        session.err.write("child_base_id and name can not specified at the same time\n")
        return CMD_HELP
    if stripe_count == 0 and stripe_index != -1:
        session.err.write("If stripe_count is 0, stripe_index can not be specified\n")
        return CMD_HELP
    if total_count == 0 and seconds == 0:
        session.err.write("count or seconds needs to be indicated\n")
        return CMD_HELP
    if parent_count <= 0:
        session.err.write("parent count must < 0\n")
        return CMD_HELP

    parent_base_id = 0
    if ctx.thread:
        parent_base_id += (ctx.thread - 1) % parent_count
        if child_base_id != -1:
            child_base_id += (ctx.thread - 1) * (MAX_BASE_ID // ctx.nthreads)
        ctx.wait_start()

    if parent_basedir is None:
        if child_name is None:
            session.err.write("parent_basedir or name must be indicated!\n")
            return CMD_HELP
        if "/" not in child_name or not child_name.startswith("/"):
            session.err.write("Can not locate %s\n" % child_name)
            return CMD_HELP
        dirname, child_name = child_name.rsplit("/", 1)
        dirname = dirname or "/"
    elif parent_base_id > 0:
        dirname = "%s%d" % (parent_basedir, parent_base_id)
    else:
        dirname = parent_basedir

    started = time.time()
    count = 0
    rc = 0
    while ctx.running():
        if total_count > 0:
            step = min(total_count - count, MD_STEP_COUNT)
        else:
            step = MD_STEP_COUNT
        first_id = child_base_id
        child_base_id += step
        count += step
        try:
            if count > step and session.node.hang_matches("lctl", ["md_batch", op]):
                # a hang fault "md_batch <op>" stops every thread after its first batch, with part of its
                # work done, until the fault is cleared (a test's "mid-create" or "mid-destroy")
                session.node.hang_while_faulted("lctl", ["md_batch", op])
            md_batch(session, op, dirname, child_name, first_id, step, mode)
        except LctlError as error:
            session.err.write("error: %s: %s\n" % (name, strerror(error.errno)))
            return error.errno
        ctx.bump(step)
        elapsed = time.time() - started
        if seconds > 0 and int(elapsed) > seconds:
            break
        if total_count > 0 and count >= total_count:
            break
    if count > 0 and show_rate:
        end = time.time()
        elapsed = end - started
        session.out.write("%s: %d in %.3fs (%.3f /s): %s\n"
                          % (name, count, elapsed, count / elapsed if elapsed else float("inf"),
                             time.ctime(end)))
    ctx.mark_end()
    return rc


def mdt_echo_root(session):
    device = session.ioctl_device()
    if device.get("layer") != "mdd":
        raise LctlError(errno.EINVAL)
    target = session.node.target(device["target"])
    if target is None:
        raise LctlError(errno.ENODEV)
    return target, os.path.join(target["path"], "ROOT_ECHO")


def md_batch(session, op, dirname, child_name, first_id, step, mode):
    """One OBD_IOC_ECHO_MD ioctl: ``step`` operations on ``dirname`` children."""
    target, root = mdt_echo_root(session)
    parent = os.path.join(root, dirname.strip("/"))
    if child_name is not None:
        names = [child_name]
    else:
        names = ["%d" % (first_id + number) for number in range(step)]
    if session.node.fault_active("io_error", target["name"]):
        raise LctlError(errno.EIO)
    if op in ("create", "mkdir") and session.node.fault_active("target_full", target["name"]):
        raise LctlError(errno.ENOSPC)
    if not os.path.isdir(parent):
        raise LctlError(errno.ENOENT)
    if target.get("curve"):
        # The MDT's curve gives its ops/s for this md test's thread count; the batch books its share.
        session.node.reserve_bandwidth(target["name"], len(names), max(session.ctx.nthreads, 1), op,
                                       run=session.ctx.run_key())
    try:
        for child in names:
            path = os.path.join(parent, child)
            if op == "create":
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, mode & 0o7777))
            elif op == "mkdir":
                os.mkdir(path, mode & 0o7777 | 0o700)
            elif op == "destroy":
                os.unlink(path)
                remove_sidecar_xattr(root, path)
            elif op == "rmdir":
                os.rmdir(path)
                remove_sidecar_xattr(root, path)
            elif op in ("lookup", "getattr"):
                os.stat(path)
            elif op == "setxattr":
                set_xattr_once(root, path)
    except OSError as error:
        raise LctlError(error.errno)


def _sidecar(root, path):
    relative = os.path.relpath(path, root).replace(os.sep, "%")
    return os.path.join(os.path.dirname(root), "ECHO_XATTRS", relative)


def set_xattr_once(root, path):
    """setxattr(user.test1, XATTR_CREATE); a side file stands in where the fs lacks xattrs."""
    os.stat(path)
    try:
        os.setxattr(path, XATTR_NAME, b"test1", os.XATTR_CREATE)
        return
    except OSError as error:
        if error.errno not in (errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM):
            raise
    sidecar = _sidecar(root, path)
    os.makedirs(os.path.dirname(sidecar), exist_ok=True)
    os.close(os.open(sidecar, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))


def remove_sidecar_xattr(root, path):
    try:
        os.unlink(_sidecar(root, path))
    except OSError:
        pass
