"""Putting a node's shims where a whole host finds them, and taking them away again.

A test or ``eval "$(lustre-sim env ...)"`` puts ``ROOT/bin`` first on PATH.
Two callers need more: a non-interactive SSH session (Ansible), whose PATH
is the system default, and the unmodified iokit scripts, which call
``/sbin/lsmod``, ``/sbin/modprobe`` and ``/sbin/rmmod`` by absolute path.

``install_shims`` copies the node's tool shims into ``bindir`` and its module
shims into ``sbindir``; with ``system_module_tools`` it also diverts the
system's ``modprobe``/``rmmod``/``lsmod`` (like ``dpkg-divert --rename``):
the real file is renamed to ``TOOL.lustre-sim-orig`` beside it and the shim
takes its place. The module shims hand every non-Lustre module to that
renamed binary. ``uninstall_shims`` removes only shims of this node and
renames the diverted binaries back, so the system ends exactly as before.
Both are idempotent and write only what differs (a second install changes
no file and prints nothing); what was installed is recorded in ``state/shims.json``
so that ``lustre-sim destroy`` can undo it.
"""

import os
import stat

from .common import MODULE_SHIMS, SHIM_TOOLS
from .errors import SimError

DIVERTED_SUFFIX = ".lustre-sim-orig"
SHIM_MARKER = b"lustre-sim shim"
DEFAULT_BINDIR = "/usr/local/bin"
DEFAULT_SBINDIR = "/usr/local/sbin"


def default_system_dirs():
    """Where the system's module tools live: /usr/sbin, plus /sbin unless it is the same."""
    dirs = ["/usr/sbin"]
    if os.path.isdir("/sbin") and os.path.realpath("/sbin") != os.path.realpath("/usr/sbin"):
        dirs.append("/sbin")
    return dirs


def shim_root(path):
    """The node root a lustre-sim shim file belongs to, or None for any other file."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return None
    if SHIM_MARKER not in head:
        return None
    for line in head.decode("utf-8", "replace").splitlines():
        if line.startswith("LUSTRE_SIM_ROOT=${LUSTRE_SIM_ROOT:-'"):
            quoted = line.split(":-", 1)[1].rsplit("}", 1)[0]
            return quoted[1:-1].replace("'\\''", "'")
    return ""


def _same_shim(destination, text):
    """True when ``destination`` already is this shim: a regular file with that content, mode 0755."""
    try:
        info = os.lstat(destination)
        if not stat.S_ISREG(info.st_mode) or stat.S_IMODE(info.st_mode) != 0o755:
            return False
        with open(destination, "rb") as handle:
            return handle.read() == text
    except OSError:
        return False


def _copy_shim(node, tool, destination):
    """Write the shim unless it is already there as it would be written; True when written.

    Rewriting an unchanged shim would change its mtime and report a change, so that a
    configuration run (the lustre_sim role) could never be idempotent.
    """
    with open(os.path.join(node.bin_dir, tool), "rb") as handle:
        text = handle.read()
    if _same_shim(destination, text):
        return False
    temporary = destination + ".lustre-sim-new"
    with open(temporary, "wb") as handle:
        handle.write(text)
    os.chmod(temporary, 0o755)
    os.replace(temporary, destination)
    return True


def _place(node, tool, directory, changes):
    destination = os.path.join(directory, tool)
    owner = shim_root(destination) if os.path.lexists(destination) else None
    if os.path.lexists(destination) and owner is None:
        raise SimError("%s exists and is not a lustre-sim shim; not replacing it" % destination)
    if _copy_shim(node, tool, destination):
        changes.append(destination)


def _divert(node, tool, directory, changes):
    path = os.path.join(directory, tool)
    aside = path + DIVERTED_SUFFIX
    if os.path.lexists(path) and shim_root(path) is None:
        if os.path.lexists(aside):
            raise SimError("%s and %s both exist; restore one of them by hand" % (path, aside))
        # A rename keeps the file exactly: a symlink (to kmod) stays a symlink, owner and mode stay.
        os.rename(path, aside)
    if _copy_shim(node, tool, path):
        changes.append(path)


def install_shims(node, bindir=DEFAULT_BINDIR, sbindir=DEFAULT_SBINDIR,
                  system_module_tools=False, system_dirs=None):
    """Install the node's shims host-wide; returns the paths written."""
    system_dirs = list(system_dirs or default_system_dirs()) if system_module_tools else []
    for directory in [bindir, sbindir] + system_dirs:
        if not os.path.isdir(directory):
            if directory in system_dirs:
                raise SimError("%s is not a directory" % directory)
            os.makedirs(directory, exist_ok=True)
    changes = []
    for tool in SHIM_TOOLS:
        _place(node, tool, bindir, changes)
    for tool in MODULE_SHIMS:
        _place(node, tool, sbindir, changes)
    for directory in system_dirs:
        for tool in MODULE_SHIMS:
            _divert(node, tool, directory, changes)
    record = {"bindir": os.path.abspath(bindir), "sbindir": os.path.abspath(sbindir),
              "system_dirs": [os.path.abspath(d) for d in system_dirs]}
    if record not in node.read_state("shims").get("installs", []):
        with node.state("shims") as state:
            state["installs"] = [i for i in state.get("installs", []) if i != record] + [record]
    return changes


def _remove_own(node, path, changes):
    if os.path.lexists(path) and shim_root(path) == node.root:
        os.unlink(path)
        changes.append(path)


def uninstall_shims(node, bindir=DEFAULT_BINDIR, sbindir=DEFAULT_SBINDIR,
                    system_module_tools=False, system_dirs=None):
    """Undo ``install_shims`` with the same arguments; returns the paths changed."""
    system_dirs = list(system_dirs or default_system_dirs()) if system_module_tools else []
    changes = []
    for tool in SHIM_TOOLS:
        _remove_own(node, os.path.join(bindir, tool), changes)
    for tool in MODULE_SHIMS:
        _remove_own(node, os.path.join(sbindir, tool), changes)
    for directory in system_dirs:
        for tool in MODULE_SHIMS:
            path = os.path.join(directory, tool)
            aside = path + DIVERTED_SUFFIX
            if os.path.lexists(path) and shim_root(path) != node.root:
                # Not our shim (a package update replaced it, or another node's): leave both.
                continue
            _remove_own(node, path, changes)
            if os.path.lexists(aside) and not os.path.lexists(path):
                os.rename(aside, path)
                changes.append(path)
    with node.state("shims") as state:
        record = {"bindir": os.path.abspath(bindir), "sbindir": os.path.abspath(sbindir),
                  "system_dirs": [os.path.abspath(d) for d in system_dirs]}
        state["installs"] = [i for i in state.get("installs", []) if i != record]
    return changes


def uninstall_recorded_shims(node):
    """Undo every ``install_shims`` recorded for this node (used by ``destroy``)."""
    changes = []
    for record in list(node.read_state("shims").get("installs", [])):
        changes += uninstall_shims(node, record["bindir"], record["sbindir"],
                                   bool(record["system_dirs"]), record["system_dirs"])
    return changes
