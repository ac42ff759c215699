"""lfs (lustre/utils/lfs.c) over the simulated client mount.

Subcommands: osts, mdts, df [-h|-H] [-i] [-v], setstripe, getstripe, getname,
check osts|mds|mdts|mgts|servers|all, mkdir/setdirstripe -c/-i, getdirstripe.
Layouts are kept by ``lustre_sim.client_mount``; space comes from the target
directories plus the client files striped onto each OST.
"""

import errno
import getopt
import os
import stat as statmod
import sys

from lustre_sim import client_mount
from lustre_sim.node import Node, SimError

PROG = "lfs"
UUF = "%-20s"


class LfsError(Exception):
    def __init__(self, message, code=errno.EINVAL):
        Exception.__init__(self, message)
        self.code = code


def err(text):
    sys.stderr.write(text)


def parse_size(text, command):
    """lfs size arguments: bytes with an optional k/M/G/T suffix (powers of 1024)."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    value = text.strip()
    factor = 1
    if value and value[-1].lower() in units:
        factor = units[value[-1].lower()]
        value = value[:-1]
    try:
        number = int(value, 0)
    except ValueError:
        raise LfsError("%s %s: invalid stripe size '%s'" % (PROG, command, text))
    return number * factor


class Client:
    """Maps paths between the client mount and its backing directory."""

    def __init__(self, node):
        self.node = node
        self.mount = client_mount.mountpoint(node)
        self.backing = os.path.realpath(node.client_dir()) if node.client_dir() else None

    def mounted(self):
        return bool(self.mount) and client_mount.is_mounted(self.node)

    def backing_path(self, path):
        """The backing path of a path on the client, or None if it is not on Lustre."""
        if not self.mounted():
            return None
        absolute = os.path.abspath(path)
        for base in (self.mount, self.backing):
            if absolute == base:
                return self.backing
            if absolute.startswith(base + "/"):
                return os.path.join(self.backing, os.path.relpath(absolute, base))
        real = os.path.realpath(absolute)
        if real == self.backing or real.startswith(self.backing + "/"):
            return real
        return None

    def require(self, path, command):
        backing = self.backing_path(path)
        if backing is None:
            raise LfsError("%s %s: '%s' is not on a Lustre filesystem: %s"
                           % (PROG, command, path, os.strerror(errno.ENOTTY)), errno.ENOTTY)
        return backing


def ost_uuid(target):
    return target["name"] + "_UUID"


# --------------------------------------------------------------------------
# lfs osts / mdts / getname / check


def cmd_tgts(node, client, args, kind):
    paths = args or ([client.mount] if client.mounted() else [])
    if not paths:
        return 0
    for path in paths:
        client.require(path, "osts" if kind == "ost" else "mdts")
        print("OBDS:" if kind == "ost" else "MDTS:")
        for target in sorted(node.targets(kind), key=lambda t: t["index"]):
            print("%d: %s ACTIVE" % (target["index"], ost_uuid(target)))
    return 0


def cmd_getname(node, client, args):
    try:
        options, paths = getopt.gnu_getopt(args, "inh", ["instance", "fsname", "help"])
    except getopt.GetoptError as error:
        err("%s getname: %s\n" % (PROG, error))
        return errno.EINVAL
    want_instance = any(o in ("-i", "--instance") for o, _ in options)
    want_fsname = any(o in ("-n", "--fsname") for o, _ in options)
    inst = client_mount.instance(node)

    def text():
        if want_instance == want_fsname:
            return "%s-%s" % (node.fsname, inst)
        return node.fsname if want_fsname else inst

    if not paths:
        if client.mounted():
            print("%s %s" % (text(), client.mount))
        return 0
    show_mount = len(paths) > 1 or want_instance == want_fsname
    status = 0
    for path in paths:
        if client.backing_path(path) is None:
            err("cannot get instance for '%s': %s\n" % (path, os.strerror(errno.ENODEV)))
            status = errno.ENODEV
            continue
        print("%s %s" % (text(), path) if show_mount else text())
    return status


def cmd_check(node, client, args):
    if len(args) not in (1, 2):
        err("%s check: server type must be specified\n" % PROG)
        return errno.EINVAL
    kinds = {"osts": ["osc"], "mdts": ["mdc"], "mds": ["mdc"], "mgts": ["mgc"],
             "all": ["osc", "mdc", "mgc"], "servers": ["osc", "mdc", "mgc"]}
    if args[0] not in kinds:
        err("%s check: unrecognized option '%s'\n" % (PROG, args[0]))
        return errno.EINVAL
    if len(args) == 2 and not os.path.exists(args[1]):
        err("error: invalid path '%s': %s\n" % (args[1], os.strerror(errno.ENOENT)))
        return errno.ENOENT
    if not client.mounted() or (len(args) == 2 and client.backing_path(args[1]) is None):
        err("%s check: cannot find mounted Lustre filesystem: %s\n"
            % (PROG, os.strerror(errno.ENODEV)))
        return errno.ENODEV
    inst = client_mount.instance(node)
    for kind in kinds[args[0]]:
        if kind == "mgc":
            print("MGC%s active." % node.config.get("nid"))
            continue
        targets = node.targets("ost" if kind == "osc" else "mdt")
        for target in sorted(targets, key=lambda t: t["name"]):
            print("%s-%s-%s active." % (target["name"], kind, inst))
    return 0


# --------------------------------------------------------------------------
# lfs df


def cook(value, base, suffixes):
    radix = 0
    value = float(value)
    while value > base:
        value /= base
        radix += 1
    return value, radix


def df_row(uuid, total, used, avail, ratio, mount, cooked, decimal, label=None):
    if cooked:
        base = 1000 if decimal else 1024
        suffixes = "kMGTPEZY" if decimal else "KMGTPEZY"
        cells = []
        for value in (total, used, avail):
            scaled, radix = cook(value, base, suffixes)
            cells.append("%8.1f%c" % (scaled, suffixes[radix - 1]) if radix > 0 else "%11d" % value)
    else:
        cells = ["%11d" % v for v in (total, used, avail)]
    line = (UUF + " %11s %11s %11s %4s %-s") % (uuid, cells[0], cells[1], cells[2], "%3d%%" % ratio,
                                              mount)
    if label:
        line += "[%s:%d]" % label
    return line


def ratio_of(used, avail):
    if used + avail <= 0:
        return 0
    ratio = used / float(used + avail) * 100
    return int(ratio + 1) if ratio - int(ratio) > 0 else int(ratio)


def cmd_df(node, client, args):
    try:
        options, paths = getopt.gnu_getopt(args, "hHilp:v", ["human-readable", "si", "inodes",
                                                            "lazy", "pool=", "verbose"])
    except getopt.GetoptError as error:
        err("%s df: %s\n" % (PROG, error))
        return errno.EINVAL
    names = [o for o, _ in options]
    cooked = any(o in ("-h", "--human-readable", "-H", "--si") for o in names)
    decimal = any(o in ("-H", "--si") for o in names)
    inodes = any(o in ("-i", "--inodes") for o in names)
    if paths:
        for path in paths:
            if not os.path.exists(path):
                err("%s: failed for '%s': %s\n" % (PROG, path, os.strerror(errno.ENOENT)))
                return errno.ENOENT
            client.require(path, "df")
    if not client.mounted():
        return 0
    mount = client.mount
    usage_by_client = client_mount.client_usage(node)
    shift = 0 if cooked else 10
    if inodes:
        print((UUF + " %11s %11s %11s %4s %-s") % ("UUID", "Inodes", "IUsed", "IFree", "IUse%",
                                                 "Mounted on"))
    else:
        print((UUF + " %11s %11s %11s %4s %-s") % ("UUID", "bytes" if cooked else "1K-blocks",
                                                 "Used", "Available", "Use%", "Mounted on"))
    summary = {"blocks": 0, "bfree": 0, "bavail": 0, "files": 0, "ffree": 0}
    ost_files = ost_ffree = 0
    have_ost = False
    for kind, label in (("mdt", "MDT"), ("ost", "OST")):
        for target in sorted(node.targets(kind), key=lambda t: t["index"]):
            usage = client_mount.target_usage(node, target, usage_by_client)
            blocks = usage["kbytestotal"] * 1024
            bfree = usage["kbytesfree"] * 1024
            bavail = usage["kbytesavail"] * 1024
            files, ffree = usage["filestotal"], usage["filesfree"]
            if kind == "ost" and not have_ost:
                have_ost = True
                summary["blocks"] = summary["bfree"] = summary["bavail"] = 0
            if inodes:
                print(df_row(ost_uuid(target), files, files - ffree, ffree,
                             ratio_of(files - ffree, ffree), mount, cooked, decimal,
                             (label, target["index"])))
            else:
                print(df_row(ost_uuid(target), blocks >> shift, (blocks - bfree) >> shift,
                             bavail >> shift, ratio_of(blocks - bfree, bavail), mount, cooked,
                             decimal, (label, target["index"])))
            if kind == "mdt":
                summary["files"] += files
                summary["ffree"] += ffree
            else:
                ost_files += files
                ost_ffree += ffree
            summary["blocks"] += blocks
            summary["bfree"] += bfree
            summary["bavail"] += bavail
    if ost_files and ost_ffree < summary["ffree"]:
        summary["files"] = summary["files"] - summary["ffree"] + ost_ffree
        summary["ffree"] = ost_ffree
    print("")
    if inodes:
        files, ffree = summary["files"], summary["ffree"]
        print(df_row("filesystem_summary:", files, files - ffree, ffree,
                     ratio_of(files - ffree, ffree), mount, cooked, decimal))
    else:
        blocks, bfree, bavail = summary["blocks"], summary["bfree"], summary["bavail"]
        print(df_row("filesystem_summary:", blocks >> shift, (blocks - bfree) >> shift,
                     bavail >> shift, ratio_of(blocks - bfree, bavail), mount, cooked, decimal))
    print("")
    return 0


# --------------------------------------------------------------------------
# lfs setstripe / getstripe


SETSTRIPE_LONG = ["stripe-count=", "stripe_count=", "stripe-index=", "stripe_index=", "ost=",
                  "ost-list=", "stripe-size=", "stripe_size=", "size=", "delete", "pool=",
                  "layout=", "yaml=", "component-end="]


def cmd_setstripe(node, client, args):
    try:
        options, paths = getopt.gnu_getopt(args, "c:i:o:S:s:dp:L:E:", SETSTRIPE_LONG)
    except getopt.GetoptError as error:
        err("%s setstripe: %s\n" % (PROG, error))
        return errno.EINVAL
    count, index, size, delete = None, None, None, False
    for option, value in options:
        if option in ("-c", "--stripe-count", "--stripe_count"):
            try:
                count = int(value, 0)
            except ValueError:
                err("%s setstripe: invalid stripe count '%s'\n" % (PROG, value))
                return errno.EINVAL
            if count < -1:
                err("%s setstripe: invalid stripe count '%s'\n" % (PROG, value))
                return errno.EINVAL
        elif option in ("-i", "-o", "--stripe-index", "--stripe_index", "--ost", "--ost-list"):
            try:
                index = int(value.split(",")[0], 0)
            except ValueError:
                err("%s setstripe: invalid stripe offset '%s'\n" % (PROG, value))
                return errno.EINVAL
        elif option in ("-S", "-s", "--stripe-size", "--stripe_size", "--size"):
            try:
                size = parse_size(value, "setstripe")
            except LfsError as error:
                err("%s\n" % error)
                return errno.EINVAL
            if size and size % 65536:
                err("%s setstripe: invalid stripe size '%s', must be an even multiple of "
                    "65536 bytes\n" % (PROG, value))
                return errno.EINVAL
        elif option in ("-d", "--delete"):
            delete = True
    if not paths:
        err("%s setstripe: FILENAME must be specified\n" % PROG)
        return errno.EINVAL
    indices = client_mount.ost_indices(node)
    if index is not None and index != -1 and index not in indices:
        err("%s setstripe: invalid stripe offset '%d'\n" % (PROG, index))
        return errno.EINVAL
    if count is not None and count > len(indices):
        count = len(indices)
    template = {"stripe_count": count or 1, "stripe_size": size or client_mount.DEFAULT_STRIPE_SIZE,
                "stripe_offset": -1 if index is None else index}
    status = 0
    for path in paths:
        try:
            backing = client.require(path, "setstripe")
        except LfsError as error:
            err("%s\n" % error)
            status = error.code
            continue
        if os.path.isdir(backing):
            inode = os.stat(backing).st_ino
            if delete:
                with node.state("layouts") as data:
                    data.setdefault("dirs", {}).pop(str(inode), None)
            else:
                client_mount.set_dir_default(node, inode, template)
            continue
        if os.path.exists(backing):
            err("%s setstripe: setstripe error for '%s': stripe already set\n" % (PROG, path))
            status = errno.EEXIST
            continue
        try:
            descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except OSError as error:
            err("%s setstripe: cannot create '%s': %s\n" % (PROG, path, error.strerror))
            status = error.errno
            continue
        try:
            inode = os.fstat(descriptor).st_ino
        finally:
            os.close(descriptor)
        client_mount.set_file_layout(node, inode, client_mount.resolve(node, template, inode))
    return status


def cmd_getstripe(node, client, args):
    try:
        options, paths = getopt.gnu_getopt(
            args, "cdiSyqvrDL",
            ["stripe-count", "stripe_count", "directory", "stripe-index", "stripe_index",
             "stripe-size", "stripe_size", "yaml", "quiet", "verbose", "recursive", "layout"])
    except getopt.GetoptError as error:
        err("%s getstripe: %s\n" % (PROG, error))
        return errno.EINVAL
    names = [o for o, _ in options]
    fields = []
    if any(o in ("-c", "--stripe-count", "--stripe_count") for o in names):
        fields.append("count")
    if any(o in ("-S", "--stripe-size", "--stripe_size") for o in names):
        fields.append("size")
    if any(o in ("-i", "--stripe-index", "--stripe_index") for o in names):
        fields.append("offset")
    directory_only = any(o in ("-d", "--directory") for o in names)
    yaml = any(o in ("-y", "--yaml") for o in names)
    quiet = any(o in ("-q", "--quiet") for o in names)
    recursive = any(o in ("-r", "--recursive") for o in names)
    if not paths:
        err("%s getstripe: FILENAME must be specified\n" % PROG)
        return errno.EINVAL
    files, dirs = client_mount.read_layouts(node)
    status = 0
    for path in paths:
        try:
            backing = client.require(path, "getstripe")
            st = os.stat(backing)
        except LfsError as error:
            err("%s\n" % error)
            status = error.code
            continue
        except OSError as error:
            err("%s getstripe: cannot open '%s': %s\n" % (PROG, path, error.strerror))
            status = error.errno
            continue
        if statmod.S_ISDIR(st.st_mode):
            show_directory(node, path, backing, files, dirs, fields, yaml, quiet, directory_only,
                           recursive, depth=0)
        else:
            show_file(node, path, backing, files, dirs, fields, yaml, quiet, print_path=False)
    return status


def show_directory(node, path, backing, files, dirs, fields, yaml, quiet, directory_only,
                   recursive, depth):
    entry = dirs.get(str(os.stat(backing).st_ino))
    if entry or depth == 0:
        template = entry or client_mount.default_layout()
        if not fields and not yaml:
            print(path)
        if fields:
            values = {"count": template["stripe_count"], "size": template["stripe_size"],
                      "offset": template["stripe_offset"]}
            print(" ".join(str(values[f]) for f in fields))
        elif not quiet:
            print("stripe_count:  %d stripe_size:   %d pattern:       raid0 stripe_offset: %d"
                  % (template["stripe_count"], template["stripe_size"], template["stripe_offset"]))
        if not fields and not yaml:
            print("")
    if directory_only:
        return
    for name in sorted(os.listdir(backing)):
        child_backing = os.path.join(backing, name)
        child_path = os.path.join(path, name)
        if os.path.isdir(child_backing):
            if recursive:
                show_directory(node, child_path, child_backing, files, dirs, fields, yaml, quiet,
                               False, True, depth + 1)
            continue
        if os.path.isfile(child_backing):
            show_file(node, child_path, child_backing, files, dirs, fields, yaml, quiet,
                      print_path=True)


def show_file(node, path, backing, files, dirs, fields, yaml, quiet, print_path):
    layout = client_mount.file_layout(node, backing, files, dirs)
    inode = os.stat(backing).st_ino
    if fields:
        values = {"count": layout["stripe_count"], "size": layout["stripe_size"],
                  "offset": layout["stripe_offset"]}
        for field in fields:
            print(values[field])
        return
    if not yaml:
        print(path)
    if not quiet:
        print("lmm_stripe_count:  %d" % layout["stripe_count"])
        print("lmm_stripe_size:   %d" % layout["stripe_size"])
        print("lmm_pattern:       raid0")
        print("lmm_layout_gen:    0")
        print("lmm_stripe_offset: %d" % layout["stripe_offset"])
    if yaml:
        print("lmm_objects:")
        for stripe, index in enumerate(layout["osts"]):
            print("      - l_ost_idx: %d" % index)
            print("        l_fid:     0x%x:0x%x:0x0" % (0x100000000 + (index << 16), object_id(inode, stripe)))
        return
    print("\tobdidx\t\t objid\t\t objid\t\t group")
    for stripe, index in enumerate(layout["osts"]):
        objid = object_id(inode, stripe)
        print("\t%6u\t%14u\t%#13x\t%14u" % (index, objid, objid, 0))
    print("")


def object_id(inode, stripe):
    # Object ids on an OST are arbitrary; derive a stable one from the backing inode.
    return (inode * 8 + stripe) & 0xffffffff


# --------------------------------------------------------------------------
# lfs mkdir / setdirstripe / getdirstripe


def cmd_mkdir(node, client, args, command):
    try:
        options, paths = getopt.gnu_getopt(
            args, "c:i:H:m:D", ["mdt-count=", "count=", "mdt-index=", "index=", "mdt-hash=",
                                "mode=", "default"])
    except getopt.GetoptError as error:
        err("%s %s: %s\n" % (PROG, command, error))
        return errno.EINVAL
    count, index, mode = 1, -1, 0o755
    for option, value in options:
        try:
            if option in ("-c", "--mdt-count", "--count"):
                count = int(value, 0)
            elif option in ("-i", "--mdt-index", "--index"):
                index = int(value.split(",")[0], 0)
            elif option in ("-m", "--mode"):
                mode = int(value, 8)
        except ValueError:
            err("%s %s: invalid option value '%s'\n" % (PROG, command, value))
            return errno.EINVAL
    if not paths:
        err("%s %s: missing dirname\n" % (PROG, command))
        return errno.EINVAL
    mdts = sorted(t["index"] for t in node.targets("mdt"))
    if index != -1 and index not in mdts:
        err("%s %s: dirstripe error on '%s': %s\n" % (PROG, command, paths[0],
                                                      os.strerror(errno.ENODEV)))
        return errno.ENODEV
    if count == -1 or count > len(mdts):
        count = len(mdts)
    status = 0
    for path in paths:
        try:
            client.require(path, command)
        except LfsError as error:
            err("%s\n" % error)
            status = error.code
            continue
        try:
            os.mkdir(path, mode)
        except OSError as error:
            err("%s %s: dirstripe error on '%s': %s\n" % (PROG, command, path, error.strerror))
            status = error.errno
            continue
        inode = os.stat(path).st_ino
        start = index if index != -1 else mdts[inode % len(mdts)]
        position = mdts.index(start)
        placed = [mdts[(position + k) % len(mdts)] for k in range(max(count, 1))]
        with node.state("layouts") as data:
            data.setdefault("lmv", {})[str(inode)] = {"stripe_count": count, "mdts": placed}
    return status


def cmd_getdirstripe(node, client, args):
    paths = [a for a in args if not a.startswith("-")]
    lmv = node.read_state("layouts").get("lmv", {})
    status = 0
    for path in paths:
        try:
            backing = client.require(path, "getdirstripe")
            inode = os.stat(backing).st_ino
        except (LfsError, OSError) as error:
            err("%s\n" % error)
            status = errno.EINVAL
            continue
        entry = lmv.get(str(inode))
        if not entry or entry["stripe_count"] <= 1:
            offset = entry["mdts"][0] if entry else 0
            print("lmv_stripe_count: 0 lmv_stripe_offset: %d lmv_hash_type: none" % offset)
            continue
        print("lmv_stripe_count: %d lmv_stripe_offset: %d lmv_hash_type: fnv_1a_64"
              % (entry["stripe_count"], entry["mdts"][0]))
        print("mdtidx\t\t FID[seq:oid:ver]")
        for mdt in entry["mdts"]:
            print("%6u\t\t [0x%x:0x1:0x0]" % (mdt, 0x200000400 + mdt))
    return status


COMMANDS = ("osts", "mdts", "df", "setstripe", "getstripe", "getname", "check", "mkdir",
            "setdirstripe", "getdirstripe")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        node = Node.from_env()
    except SimError as error:
        err("lfs: %s\n" % error)
        return 1
    node.fault_gate("lfs", argv)
    if not argv or argv[0] not in COMMANDS:
        if argv:
            err("%s: '%s' is not a valid command. See '%s --list-commands'.\n"
                % (PROG, argv[0], PROG))
        else:
            err("usage: lfs COMMAND [ARGS]; commands: %s\n" % " ".join(COMMANDS))
        return errno.EINVAL if argv else 0
    command, args = argv[0], argv[1:]
    client = Client(node)
    try:
        if command in ("osts", "mdts"):
            status = cmd_tgts(node, client, args, "ost" if command == "osts" else "mdt")
        elif command == "df":
            status = cmd_df(node, client, args)
        elif command == "setstripe":
            status = cmd_setstripe(node, client, args)
        elif command == "getstripe":
            status = cmd_getstripe(node, client, args)
        elif command == "getname":
            status = cmd_getname(node, client, args)
        elif command == "check":
            status = cmd_check(node, client, args)
        elif command in ("mkdir", "setdirstripe"):
            status = cmd_mkdir(node, client, args, command)
        else:
            status = cmd_getdirstripe(node, client, args)
    except LfsError as error:
        err("%s\n" % error)
        status = error.code
    sys.stdout.flush()
    return status


if __name__ == "__main__":
    sys.exit(main())
