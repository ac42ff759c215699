"""The simulated Lustre client mount.

The namespace is stored in ``DIR/client/``.  Preferred form: a small FUSE
file system (this module speaks the kernel FUSE protocol over ``/dev/fuse``
itself, no libfuse) mounted at the configured ``client_mount`` path.  Every
read and write of a file is split by the file's stripe layout and each OST's
share waits for that OST's bandwidth (``Node.reserve_bandwidth``: the
target's ``mib_s`` shared by everyone doing I/O on it), so even a plain
``dd`` into a single-striped file runs at that OST's speed.  ``io_error``
faults make I/O on the OST fail with EIO, ``target_full`` makes writes fail
with ENOSPC.

Fallback when FUSE cannot be mounted (no /dev/fuse, no CAP_SYS_ADMIN): the
mount path becomes a bind mount of ``DIR/client`` (or, without the right to
mount, a symbolic link to it).  Then layouts, ``lfs`` and mdtest work, but
file I/O is neither throttled nor subject to faults.

Stripe layouts live in ``state/layouts.json`` keyed by the backing inode
number, so renames keep them: ``{"files": {ino: layout}, "dirs": {ino: default}}``.
"""

import ctypes
import errno
import os
import stat as statmod
import struct
import subprocess
import sys
import threading
import time

from .common import mount_hash
from .errors import SimError
from .node import Node
from .processes import pid_alive

FUSE_DEV = "/dev/fuse"
FSTYPE = "fuse.lustre-sim"
DEFAULT_STRIPE_SIZE = 1 << 20
MAX_WRITE = 1 << 20
ATTR_TIMEOUT = 1

# --------------------------------------------------------------------------
# layouts (shared by the FUSE daemon and lfs)


def instance(node):
    """The client's superblock instance name, as used by lov/llite parameter names."""
    return mount_hash(node.fsname, node.hostname)


def mountpoint(node):
    path = node.config.get("client_mount")
    return os.path.abspath(path) if path else None


def ost_indices(node):
    return [t["index"] for t in sorted(node.targets("ost"), key=lambda t: t["index"])]


def read_layouts(node):
    data = node.read_state("layouts")
    return data.get("files", {}), data.get("dirs", {})


def default_layout():
    return {"stripe_count": 1, "stripe_size": DEFAULT_STRIPE_SIZE, "stripe_offset": -1}


def inherited_layout(node, backing_path, dirs=None):
    """Default layout a new file under backing_path gets (nearest directory default)."""
    if dirs is None:
        _, dirs = read_layouts(node)
    root = os.path.realpath(node.client_dir())
    current = os.path.realpath(backing_path)
    while True:
        try:
            entry = dirs.get(str(os.stat(current).st_ino))
        except OSError:
            entry = None
        if entry:
            return dict(entry)
        if current == root or len(current) <= len(root):
            break
        current = os.path.dirname(current)
    return default_layout()


def resolve(node, template, inode):
    """Turn (count, size, offset) with -1/0 wildcards into a concrete list of OST indices."""
    indices = ost_indices(node)
    if not indices:
        return dict(template, stripe_count=0, osts=[])
    count = template.get("stripe_count") or 1
    if count == -1 or count > len(indices):
        count = len(indices)
    size = template.get("stripe_size") or DEFAULT_STRIPE_SIZE
    offset = template.get("stripe_offset", -1)
    if offset is None or offset == -1 or offset not in indices:
        # Stand-in for the QoS/round-robin allocator: stable per inode.
        start = inode % len(indices)
    else:
        start = indices.index(offset)
    osts = [indices[(start + k) % len(indices)] for k in range(count)]
    return {"stripe_count": count, "stripe_size": size, "stripe_offset": osts[0], "osts": osts}


def file_layout(node, backing_path, files=None, dirs=None):
    """The layout of an existing file: explicit (lfs setstripe) or inherited at creation."""
    st = os.stat(backing_path)
    if files is None or dirs is None:
        files, dirs = read_layouts(node)
    entry = files.get(str(st.st_ino))
    if entry:
        return entry
    return resolve(node, inherited_layout(node, os.path.dirname(backing_path), dirs), st.st_ino)


def set_file_layout(node, inode, layout):
    with node.state("layouts") as data:
        data.setdefault("files", {})[str(inode)] = layout


def set_dir_default(node, inode, template):
    with node.state("layouts") as data:
        data.setdefault("dirs", {})[str(inode)] = template


def ost_name(node, index):
    for target in node.targets("ost"):
        if target["index"] == index:
            return target["name"]
    return None


def stripe_pieces(layout, offset, length):
    """Split [offset, offset+length) into (ost index, bytes) pieces by the layout."""
    pieces = []
    size = layout["stripe_size"]
    osts = layout["osts"]
    position, end = offset, offset + length
    while position < end and osts:
        stripe = position // size
        boundary = (stripe + 1) * size
        chunk = min(end, boundary) - position
        pieces.append((osts[stripe % len(osts)], chunk))
        position += chunk
    return pieces


# --------------------------------------------------------------------------
# mounting


def _mountinfo():
    try:
        with open("/proc/self/mountinfo") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return []
    entries = []
    for line in lines:
        left, _, right = line.partition(" - ")
        fields = left.split()
        if len(fields) < 5:
            continue
        target = fields[4].replace("\\040", " ")
        entries.append((target, right.split()[0] if right else ""))
    return entries


def mount_kind(node):
    """'fuse', 'bind', 'symlink' or None."""
    path = mountpoint(node)
    if not path:
        return None
    for target, fstype in _mountinfo():
        if target == path:
            return "fuse" if fstype == FSTYPE else "bind"
    if os.path.islink(path) and os.path.realpath(path) == os.path.realpath(node.client_dir()):
        return "symlink"
    return None


def is_mounted(node):
    return mount_kind(node) is not None


def fuse_possible():
    return os.path.exists(FUSE_DEV) and os.access(FUSE_DEV, os.R_OK | os.W_OK)


def mount(node, mode="auto", timeout=10.0):
    """Mount the client at its configured path; returns the kind of mount made."""
    path = mountpoint(node)
    if not path:
        raise SimError("this node has no client_mount configured")
    kind = mount_kind(node)
    daemon = node.read_state("client").get("pid")
    if kind == "fuse" and not (daemon and pid_alive(daemon)):
        # The daemon died (killed): the kernel mount only answers ENOTCONN now.
        unmount(node)
        kind = None
    if kind:
        return kind
    os.makedirs(node.client_dir(), exist_ok=True)
    errors = []
    if mode in ("auto", "fuse") and fuse_possible():
        try:
            return _mount_fuse(node, path, timeout)
        except SimError as error:
            errors.append(str(error))
            if mode == "fuse":
                raise
    if mode in ("auto", "bind"):
        try:
            os.makedirs(path, exist_ok=True)
            _libc_mount(node.client_dir(), path, None, MS_BIND, None)
            _record(node, "bind", None)
            return "bind"
        except OSError as error:
            errors.append("bind mount: %s" % error.strerror)
            if mode == "bind":
                raise SimError("; ".join(errors))
    if mode in ("auto", "symlink"):
        if os.path.isdir(path) and not os.path.islink(path):
            if os.listdir(path):
                raise SimError("%s is a non-empty directory; cannot replace it by a link "
                                           "(%s)" % (path, "; ".join(errors)))
            os.rmdir(path)
        parent = os.path.dirname(path)
        os.makedirs(parent, exist_ok=True)
        if os.path.lexists(path):
            os.unlink(path)
        os.symlink(node.client_dir(), path)
        _record(node, "symlink", None)
        return "symlink"
    raise SimError("cannot mount the client: %s" % "; ".join(errors))


def _record(node, kind, pid):
    with node.state("client") as data:
        data.update({"mountpoint": mountpoint(node), "kind": kind, "pid": pid,
                     "instance": instance(node), "mounted_at": time.time()})


def _mount_fuse(node, path, timeout):
    os.makedirs(path, exist_ok=True)
    log_path = os.path.join(node.state_dir, "client-mount.log")
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "lustre_sim.client_mount", "serve", node.root],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
            close_fds=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if mount_kind(node) == "fuse":
            node.register_helper(process.pid, "lustre-sim client mount %s" % path)
            _record(node, "fuse", process.pid)
            return "fuse"
        if process.poll() is not None:
            break
        time.sleep(0.02)
    if process.poll() is None:
        process.kill()
        process.wait()
    with open(log_path, "rb") as handle:
        tail = handle.read()[-400:].decode("utf-8", "replace").strip()
    raise SimError("FUSE mount of %s failed: %s" % (path, tail or "timeout"))


def unmount(node, timeout=10.0):
    """Unmount whatever kind of client mount is there and stop its daemon."""
    path = mountpoint(node)
    kind = mount_kind(node)
    info = node.read_state("client")
    if kind in ("fuse", "bind"):
        try:
            _libc_umount(path, 0)
        except OSError:
            _libc_umount(path, MNT_DETACH)
    elif kind == "symlink":
        os.unlink(path)
    pid = info.get("pid")
    if pid:
        deadline = time.monotonic() + timeout
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        if pid_alive(pid):
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        node.unregister_helper(pid)
    with node.state("client") as data:
        data.clear()
    return kind


# --------------------------------------------------------------------------
# libc


MS_NOSUID = 2
MS_NODEV = 4
MS_BIND = 4096
MNT_DETACH = 2
_libc = None


def _c():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def _libc_mount(source, target, fstype, flags, data):
    result = _c().mount(source.encode(), target.encode(),
                        fstype.encode() if fstype else None, flags,
                        data.encode() if data else None)
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), target)


def _libc_umount(target, flags):
    if _c().umount2(target.encode(), flags) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), target)


# --------------------------------------------------------------------------
# the FUSE daemon

IN_HEADER = struct.Struct("<IIQQIIIHH")
OUT_HEADER = struct.Struct("<IiQ")
ATTR = struct.Struct("<QQQQQQIIIIIIIIII")
ENTRY_OUT = struct.Struct("<QQQQII")
ATTR_OUT = struct.Struct("<QII")
OPEN_OUT = struct.Struct("<QII")

OP = dict(LOOKUP=1, FORGET=2, GETATTR=3, SETATTR=4, READLINK=5, SYMLINK=6, MKNOD=8, MKDIR=9,
          UNLINK=10, RMDIR=11, RENAME=12, LINK=13, OPEN=14, READ=15, WRITE=16, STATFS=17,
          RELEASE=18, FSYNC=20, FLUSH=25, INIT=26, OPENDIR=27, READDIR=28, RELEASEDIR=29,
          FSYNCDIR=30, ACCESS=34, CREATE=35, INTERRUPT=36, DESTROY=38, BATCH_FORGET=42,
          RENAME2=45)
NO_REPLY = (OP["FORGET"], OP["BATCH_FORGET"], OP["INTERRUPT"])
# The handler of each opcode is the FuseServer method op_<name>, e.g. op_getattr for GETATTR (3).
HANDLER_NAMES = {code: "op_" + name.lower() for name, code in OP.items()}

FATTR_MODE, FATTR_UID, FATTR_GID, FATTR_SIZE = 1, 2, 4, 8
FATTR_ATIME, FATTR_MTIME, FATTR_ATIME_NOW, FATTR_MTIME_NOW = 16, 32, 128, 256

INIT_FLAGS_WANTED = (1 << 0) | (1 << 3) | (1 << 5) | (1 << 18) | (1 << 22)  # ASYNC_READ, ATOMIC_O_TRUNC, BIG_WRITES, PARALLEL_DIROPS, MAX_PAGES


def _name(data, offset=0):
    end = data.index(b"\0", offset)
    return os.fsdecode(data[offset:end]), end + 1


class FuseServer:
    def __init__(self, node, mount_path):
        self.node = node
        self.mount_path = mount_path
        self.backing = os.path.realpath(node.client_dir())
        self.lock = threading.Lock()
        self.paths = {1: ""}
        self.ids = {"": 1}
        self.next_id = 2
        self.handles = {}
        self.next_handle = 1
        self.fd = None
        self.stopping = False

    # -- bookkeeping --------------------------------------------------------

    def real(self, relative):
        return os.path.join(self.backing, relative) if relative else self.backing

    def relative(self, nodeid):
        with self.lock:
            return self.paths[nodeid]

    def child(self, parent, name):
        base = self.relative(parent)
        return "%s/%s" % (base, name) if base else name

    def node_id(self, relative):
        with self.lock:
            nodeid = self.ids.get(relative)
            if nodeid is None:
                nodeid = self.next_id
                self.next_id += 1
                self.ids[relative] = nodeid
                self.paths[nodeid] = relative
            return nodeid

    def renamed(self, old, new):
        with self.lock:
            moved = {}
            for path, nodeid in list(self.ids.items()):
                if path == old or path.startswith(old + "/"):
                    moved[new + path[len(old):]] = nodeid
                    del self.ids[path]
            for path in [p for p in self.ids if p == new or p.startswith(new + "/")]:
                del self.ids[path]
            for path, nodeid in moved.items():
                self.ids[path] = nodeid
                self.paths[nodeid] = path

    def dropped(self, relative):
        with self.lock:
            self.ids.pop(relative, None)

    # -- encoding -------------------------------------------------------------

    def attr(self, st, nodeid):
        inode = 1 if nodeid == 1 else st.st_ino
        return ATTR.pack(inode, st.st_size, st.st_blocks, int(st.st_atime), int(st.st_mtime),
                         int(st.st_ctime), st.st_atime_ns % 10**9, st.st_mtime_ns % 10**9,
                         st.st_ctime_ns % 10**9, st.st_mode, st.st_nlink, st.st_uid, st.st_gid,
                         st.st_rdev & 0xffffffff, 4096, 0)

    def entry(self, relative):
        st = os.lstat(self.real(relative))
        nodeid = self.node_id(relative)
        return ENTRY_OUT.pack(nodeid, 0, ATTR_TIMEOUT, ATTR_TIMEOUT, 0, 0) + self.attr(st, nodeid)

    # -- main loop -----------------------------------------------------------------

    def mount(self):
        self.fd = os.open(FUSE_DEV, os.O_RDWR)
        options = "fd=%d,rootmode=%o,user_id=0,group_id=0,allow_other,default_permissions" % (
            self.fd, statmod.S_IFDIR | 0o755)
        # "<MGS>:/<fsname>" like a real Lustre mount, so that /proc/mounts names the file system
        _libc_mount("lustre-sim:/%s" % self.node.fsname, self.mount_path, FSTYPE, MS_NOSUID | MS_NODEV, options)

    def serve(self, threads=4):
        workers = [threading.Thread(target=self.loop, daemon=True) for _ in range(threads - 1)]
        for worker in workers:
            worker.start()
        self.loop()

    def loop(self):
        while not self.stopping:
            try:
                request = os.read(self.fd, MAX_WRITE + 8192)
            except OSError as error:
                if error.errno in (errno.EINTR, errno.EAGAIN, errno.ENOENT):
                    continue
                self.stopping = True  # ENODEV: unmounted
                return
            self.handle(request)

    def reply(self, unique, error=0, body=b""):
        try:
            os.write(self.fd, OUT_HEADER.pack(OUT_HEADER.size + len(body), -error, unique) + body)
        except OSError:
            pass  # the request was interrupted or the file system went away

    def handle(self, request):
        length, opcode, unique, nodeid, uid, gid, pid, extlen, _ = IN_HEADER.unpack_from(request)
        body = request[IN_HEADER.size:length]
        method = getattr(self, HANDLER_NAMES.get(opcode, ""), None)
        if opcode in NO_REPLY:
            return
        if method is None:
            self.reply(unique, errno.ENOSYS)
            return
        try:
            result = method(nodeid, body)
        except OSError as error:
            self.reply(unique, error.errno or errno.EIO)
            return
        except Exception as error:  # a bug must not hang the caller forever
            sys.stderr.write("lustre-sim fuse: opcode %d: %r\n" % (opcode, error))
            self.reply(unique, errno.EIO)
            return
        self.reply(unique, 0, result or b"")

    # -- operations (op_<opcode name>) -----------------------------------------------

    def op_init(self, nodeid, body):
        major, minor, readahead, flags = struct.unpack_from("<IIII", body)
        wanted = flags & INIT_FLAGS_WANTED
        return struct.pack("<IIIIHHIIHHI7I", 7, min(minor, 31), readahead, wanted, 16, 12,
                           MAX_WRITE, 1, MAX_WRITE // 4096, 0, 0, *([0] * 7))

    def op_destroy(self, nodeid, body):
        self.stopping = True

    def op_lookup(self, nodeid, body):
        name, _ = _name(body)
        return self.entry(self.child(nodeid, name))

    def op_getattr(self, nodeid, body):
        st = os.lstat(self.real(self.relative(nodeid)))
        return ATTR_OUT.pack(ATTR_TIMEOUT, 0, 0) + self.attr(st, nodeid)

    def op_setattr(self, nodeid, body):
        (valid, _, fh, size, _, atime, mtime, _, atimensec, mtimensec, _, mode, _, uid, gid,
         _) = struct.unpack_from("<IIQQQQQQIIIIIIII", body)
        path = self.real(self.relative(nodeid))
        if valid & FATTR_MODE:
            os.chmod(path, statmod.S_IMODE(mode))
        if valid & (FATTR_UID | FATTR_GID):
            os.chown(path, uid if valid & FATTR_UID else -1, gid if valid & FATTR_GID else -1)
        if valid & FATTR_SIZE:
            os.truncate(path, size)
        if valid & (FATTR_ATIME | FATTR_MTIME | FATTR_ATIME_NOW | FATTR_MTIME_NOW):
            st = os.lstat(path)
            now = time.time_ns()
            access = now if valid & FATTR_ATIME_NOW else (
                atime * 10**9 + atimensec if valid & FATTR_ATIME else st.st_atime_ns)
            modify = now if valid & FATTR_MTIME_NOW else (
                mtime * 10**9 + mtimensec if valid & FATTR_MTIME else st.st_mtime_ns)
            os.utime(path, ns=(access, modify), follow_symlinks=False)
        return self.op_getattr(nodeid, b"")

    def op_readlink(self, nodeid, body):
        return os.fsencode(os.readlink(self.real(self.relative(nodeid))))

    def op_symlink(self, nodeid, body):
        name, offset = _name(body)
        target, _ = _name(body, offset)
        relative = self.child(nodeid, name)
        os.symlink(target, self.real(relative))
        return self.entry(relative)

    def op_mknod(self, nodeid, body):
        mode, rdev, umask, _ = struct.unpack_from("<IIII", body)
        name, _ = _name(body, 16)
        relative = self.child(nodeid, name)
        os.mknod(self.real(relative), mode & ~umask, rdev)
        self.forget_stale_layout(relative)
        return self.entry(relative)

    def op_mkdir(self, nodeid, body):
        mode, umask = struct.unpack_from("<II", body)
        name, _ = _name(body, 8)
        relative = self.child(nodeid, name)
        os.mkdir(self.real(relative), mode & ~umask & 0o7777)
        return self.entry(relative)

    def op_unlink(self, nodeid, body):
        name, _ = _name(body)
        relative = self.child(nodeid, name)
        path = self.real(relative)
        st = os.lstat(path)
        os.unlink(path)
        if st.st_nlink <= 1:
            self.drop_layout(st.st_ino)
        self.dropped(relative)

    def op_rmdir(self, nodeid, body):
        name, _ = _name(body)
        relative = self.child(nodeid, name)
        path = self.real(relative)
        inode = os.lstat(path).st_ino
        os.rmdir(path)
        self.drop_layout(inode, directory=True)
        self.dropped(relative)

    def op_rename(self, nodeid, body):
        (newdir,) = struct.unpack_from("<Q", body)
        return self.rename(nodeid, newdir, body[8:], 0)

    def op_rename2(self, nodeid, body):
        newdir, flags, _ = struct.unpack_from("<QII", body)
        return self.rename(nodeid, newdir, body[16:], flags)

    def rename(self, nodeid, newdir, names, flags):
        old_name, offset = _name(names)
        new_name, _ = _name(names, offset)
        old = self.child(nodeid, old_name)
        new = self.child(newdir, new_name)
        if flags & 1 and os.path.lexists(self.real(new)):  # RENAME_NOREPLACE
            raise OSError(errno.EEXIST, "exists")
        if flags & ~1:
            raise OSError(errno.EINVAL, "unsupported rename flags")
        os.rename(self.real(old), self.real(new))
        self.renamed(old, new)

    def op_link(self, nodeid, body):
        (old_node,) = struct.unpack_from("<Q", body)
        name, _ = _name(body, 8)
        relative = self.child(nodeid, name)
        os.link(self.real(self.relative(old_node)), self.real(relative))
        return self.entry(relative)

    def op_open(self, nodeid, body):
        flags = struct.unpack_from("<I", body)[0]
        return self.open_file(self.relative(nodeid), flags)

    def open_file(self, relative, flags):
        path = self.real(relative)
        descriptor = os.open(path, flags & ~(os.O_CREAT | os.O_EXCL | os.O_NOCTTY))
        try:
            layout = file_layout(self.node, path)
        except OSError:
            layout = None
        with self.lock:
            handle = self.next_handle
            self.next_handle += 1
            self.handles[handle] = (descriptor, layout)
        return OPEN_OUT.pack(handle, 0, 0)

    def op_create(self, nodeid, body):
        flags, mode, umask, _ = struct.unpack_from("<IIII", body)
        name, _ = _name(body, 16)
        relative = self.child(nodeid, name)
        path = self.real(relative)
        descriptor = os.open(path, (flags | os.O_CREAT) & ~os.O_NOCTTY, mode & ~umask & 0o7777)
        os.close(descriptor)
        self.forget_stale_layout(relative)
        entry = self.entry(relative)
        return entry + self.open_file(relative, flags & ~(os.O_TRUNC | os.O_EXCL))

    def handle_of(self, body):
        (handle,) = struct.unpack_from("<Q", body)
        with self.lock:
            return self.handles[handle]

    def io_gate(self, layout, offset, length, operation, handle):
        """Faults and bandwidth of the OSTs this byte range lives on; each open file is its own run on them."""
        if not layout or not layout.get("osts"):
            return
        for index, nbytes in stripe_pieces(layout, offset, length):
            name = ost_name(self.node, index)
            if name is None:
                continue
            if self.node.fault_active("io_error", target=name, op=operation):
                raise OSError(errno.EIO, "io_error fault on %s" % name)
            if operation == "write" and self.node.fault_active("target_full", target=name):
                raise OSError(errno.ENOSPC, "%s is full" % name)
            self.node.reserve_bandwidth(name, nbytes, run="%d.%d" % (os.getpid(), handle))

    def op_read(self, nodeid, body):
        handle, offset, size = struct.unpack_from("<QQI", body)
        descriptor, layout = self.handle_of(body)
        data = os.pread(descriptor, size, offset)
        self.io_gate(layout, offset, len(data), "read", handle)
        return data

    def op_write(self, nodeid, body):
        handle, offset, size = struct.unpack_from("<QQI", body)
        descriptor, layout = self.handle_of(body)
        data = body[40:40 + size]
        self.io_gate(layout, offset, len(data), "write", handle)
        written = os.pwrite(descriptor, data, offset)
        return struct.pack("<II", written, 0)

    def op_flush(self, nodeid, body):
        return b""

    def op_release(self, nodeid, body):
        (handle,) = struct.unpack_from("<Q", body)
        with self.lock:
            entry = self.handles.pop(handle, None)
        if entry:
            os.close(entry[0])

    def op_fsync(self, nodeid, body):
        descriptor, _ = self.handle_of(body)
        os.fsync(descriptor)

    def op_statfs(self, nodeid, body):
        blocks, bfree, bavail, files, ffree = statfs_numbers(self.node)
        return struct.pack("<QQQQQIIII6I", blocks, bfree, bavail, files, ffree, 4096, 255, 4096,
                           0, *([0] * 6))

    def op_opendir(self, nodeid, body):
        relative = self.relative(nodeid)
        names = [".", ".."] + sorted(os.listdir(self.real(relative)))
        with self.lock:
            handle = self.next_handle
            self.next_handle += 1
            self.handles[handle] = (None, (relative, names))
        return OPEN_OUT.pack(handle, 0, 0)

    def op_readdir(self, nodeid, body):
        handle, offset, size = struct.unpack_from("<QQI", body)
        _, (relative, names) = self.handle_of(body)
        output = b""
        for index in range(offset, len(names)):
            name = names[index]
            if name in (".", ".."):
                inode, kind = 1, statmod.S_IFDIR
            else:
                try:
                    st = os.lstat(os.path.join(self.real(relative), name))
                except OSError:
                    continue
                inode, kind = st.st_ino, statmod.S_IFMT(st.st_mode)
            encoded = os.fsencode(name)
            record = struct.pack("<QQII", inode, index + 1, len(encoded), kind >> 12) + encoded
            record += b"\0" * (-len(record) % 8)
            if len(output) + len(record) > size:
                break
            output += record
        return output

    def op_releasedir(self, nodeid, body):
        (handle,) = struct.unpack_from("<Q", body)
        with self.lock:
            self.handles.pop(handle, None)

    def op_fsyncdir(self, nodeid, body):
        return b""

    def op_access(self, nodeid, body):
        (mask,) = struct.unpack_from("<I", body)
        if not os.access(self.real(self.relative(nodeid)), mask):
            raise OSError(errno.EACCES, "access")

    # -- layouts ------------------------------------------------------------------

    def forget_stale_layout(self, relative):
        # A reused inode number must not inherit a deleted file's explicit layout.
        try:
            inode = os.lstat(self.real(relative)).st_ino
        except OSError:
            return
        files, _ = read_layouts(self.node)
        if str(inode) in files:
            self.drop_layout(inode)

    def drop_layout(self, inode, directory=False):
        files, dirs = read_layouts(self.node)
        table = "dirs" if directory else "files"
        if str(inode) not in (dirs if directory else files):
            return
        with self.node.state("layouts") as data:
            data.get(table, {}).pop(str(inode), None)


def statfs_numbers(node):
    """(blocks, bfree, bavail, files, ffree) in 4 KiB blocks: OSTs for space, MDTs for inodes."""
    blocks = bfree = bavail = 0
    client = client_usage(node)
    for target in node.targets("ost"):
        usage = target_usage(node, target, client)
        blocks += usage["kbytestotal"] // 4
        bfree += usage["kbytesfree"] // 4
        bavail += usage["kbytesavail"] // 4
    files = ffree = 0
    for target in node.targets("mdt"):
        usage = target_usage(node, target, client)
        files += usage["filestotal"]
        ffree += usage["filesfree"]
    return blocks, bfree, bavail, files, ffree


def client_usage(node):
    """Bytes of client files per OST index and the number of client inodes."""
    per_ost = {}
    inodes = 0
    backing = node.client_dir()
    if not backing or not os.path.isdir(backing):
        return per_ost, inodes
    files, dirs = read_layouts(node)
    for directory, subdirs, names in os.walk(backing):
        inodes += len(subdirs) + len(names)
        for name in names:
            path = os.path.join(directory, name)
            try:
                st = os.lstat(path)
                if not statmod.S_ISREG(st.st_mode):
                    continue
                layout = file_layout(node, path, files, dirs)
            except OSError:
                continue
            used = st.st_blocks * 512
            for index, nbytes in stripe_pieces(layout, 0, used):
                per_ost[index] = per_ost.get(index, 0) + nbytes
    return per_ost, inodes


def target_usage(node, target, client=None):
    """A target's statfs: its backing directory plus the client data/inodes placed on it."""
    usage = node.target_usage(target["name"])
    per_ost, inodes = client if client is not None else client_usage(node)
    if target["kind"] == "ost":
        extra = per_ost.get(target["index"], 0) // 1024
        usage["kbytesfree"] = max(usage["kbytesfree"] - extra, 0)
        usage["kbytesavail"] = max(usage["kbytesavail"] - extra, 0)
        usage["filesfree"] = max(usage["filesfree"] - (1 if extra else 0), 0)
    else:
        mdts = max(len(node.targets("mdt")), 1)
        usage["filesfree"] = max(usage["filesfree"] - inodes // mdts, 0)
    if node.fault_active("target_full", target=target["name"]):
        usage["kbytesfree"] = 0
        usage["kbytesavail"] = 0
    return usage


def serve_main(root):
    node = Node(root)
    server = FuseServer(node, mountpoint(node))
    server.mount()
    try:
        server.serve()
    finally:
        try:
            os.close(server.fd)
        except OSError:
            pass
    return 0


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    usage_text = "usage: python -m lustre_sim.client_mount serve|mount|umount|status ROOT\n"
    if len(argv) != 2 or argv[0] not in ("serve", "mount", "umount", "status"):
        sys.stderr.write(usage_text)
        return 2
    command, root = argv
    if command == "serve":
        return serve_main(root)
    node = Node(root)
    try:
        if command == "mount":
            print(mount(node))
        elif command == "umount":
            print(unmount(node) or "not mounted")
        else:
            print(mount_kind(node) or "not mounted")
    except SimError as error:
        sys.stderr.write("lustre-sim: %s\n" % error)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
