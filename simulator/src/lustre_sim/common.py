"""Constants and pure helpers every layer of the simulator shares.

A leaf module: it imports nothing of the package, so that any module may import it.
"""

import re

DEFAULT_FSNAME = "testfs"
DEFAULT_NID = "192.168.1.10@tcp"
DEFAULT_VERSION = "2.15.5"
DEFAULT_OST_SIZE_MIB = 1024
DEFAULT_MDT_SIZE_MIB = 512
DEFAULT_PAGE_SIZE = 4096

SHIM_TOOLS = ("lctl", "lfs", "lst", "mdtest", "mpirun", "ior", "srun", "salloc", "sbatch", "scancel", "module")
MODULE_SHIMS = ("modprobe", "rmmod", "lsmod")

# ldiskfs formats OSTs with fewer, MDTs with many more inodes per byte.
BYTES_PER_INODE = {"ost": 65536, "mdt": 2560}


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
