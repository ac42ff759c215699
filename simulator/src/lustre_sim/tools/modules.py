"""``modprobe``/``rmmod``/``lsmod`` wrappers: Lustre modules live in the simulator's state,
every other module goes to the real command unchanged.

The shims call ``python -m lustre_sim.tools.modules --sim-tool=<name> ARGS``;
invoked under its own name (a symlink), argv[0] decides.
"""

import os
import signal
import subprocess
import sys
import time

from ..node import Node, SimError

SHIM_MARKER = "lustre-sim shim"

# module -> modules it needs (the kernel's "Used by" is the reverse).
DEPENDS = {
    "libcfs": [], "lnet": ["libcfs"], "ksocklnd": ["lnet", "libcfs"],
    "obdclass": ["lnet", "libcfs"], "ptlrpc": ["obdclass", "lnet", "libcfs"],
    "fld": ["ptlrpc", "obdclass"], "fid": ["ptlrpc", "obdclass"],
    "lmv": ["ptlrpc", "obdclass", "fld"], "mdc": ["ptlrpc", "obdclass", "lmv"],
    "osc": ["ptlrpc", "obdclass"], "lov": ["ptlrpc", "obdclass", "osc"],
    "mgc": ["ptlrpc", "obdclass"], "mgs": ["ptlrpc", "obdclass", "mgc"],
    "lquota": ["ptlrpc", "obdclass"], "ldiskfs": [],
    "osd_ldiskfs": ["ldiskfs", "lquota", "obdclass", "fid", "fld"],
    "lod": ["ptlrpc", "obdclass", "lquota", "fid"], "osp": ["ptlrpc", "obdclass", "lquota"],
    "mdd": ["obdclass", "lquota", "fid"], "lfsck": ["ptlrpc", "obdclass", "fid", "fld"],
    "mdt": ["ptlrpc", "obdclass", "mdd", "lquota", "fid", "fld", "lfsck"],
    "ofd": ["ptlrpc", "obdclass", "lquota", "fid", "fld", "lfsck"],
    "ost": ["ptlrpc", "obdclass"], "lustre": ["lmv", "mdc", "lov", "ptlrpc", "obdclass"],
    "obdecho": ["ptlrpc", "obdclass", "libcfs"], "lnet_selftest": ["lnet", "libcfs"],
}
SIZES = {
    "libcfs": 147456, "lnet": 712704, "ksocklnd": 204800, "obdclass": 3211264,
    "ptlrpc": 2703360, "fld": 98304, "fid": 69632, "lmv": 253952, "mdc": 315392,
    "osc": 491520, "lov": 368640, "mgc": 98304, "mgs": 380928, "lquota": 466944,
    "ldiskfs": 2842624, "osd_ldiskfs": 811008, "lod": 729088, "osp": 425984,
    "mdd": 528384, "lfsck": 892928, "mdt": 1499136, "ofd": 405504, "ost": 28672,
    "lustre": 1126400, "obdecho": 135168, "lnet_selftest": 294912,
}
LUSTRE_MODULES = set(DEPENDS)


def canonical(name):
    return name.replace("-", "_")


def real_binary(tool, node):
    """The real tool on PATH after the shim directory (never another lustre-sim shim)."""
    own = os.path.realpath(node.bin_dir) if node else None
    search = os.environ.get("PATH", "").split(os.pathsep) + ["/usr/sbin", "/sbin",
                                                               "/usr/bin", "/bin"]
    for directory in search:
        if not directory or (own and os.path.realpath(directory) == own):
            continue
        for candidate in (os.path.join(directory, tool),
                          os.path.join(directory, tool + ".lustre-sim-orig")):
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK) \
                    and not is_shim(candidate):
                return candidate
    return None


def is_shim(path):
    try:
        with open(path, "rb") as handle:
            return SHIM_MARKER.encode() in handle.read(512)
    except OSError:
        return False


def run_real(tool, argv, node):
    binary = real_binary(tool, node)
    if binary is None:
        return None
    sys.stdout.flush()
    # kmod picks the tool from argv[0]: a diverted modprobe.lustre-sim-orig must still be "modprobe".
    return subprocess.call([tool] + list(argv), executable=binary)


def missing_module(tool, name):
    if tool == "modprobe":
        sys.stderr.write("modprobe: FATAL: Module %s not found in directory /lib/modules/%s\n"
                         % (name, os.uname().release))
    else:
        sys.stderr.write("rmmod: ERROR: Module %s is not currently loaded\n" % name)
    return 1


def holders(name, loaded):
    return [other for other in loaded if name in DEPENDS.get(other, [])]


def echo_devices(node):
    return [d for d in node.devices() if d["type"] in ("echo_client", "obdecho")]


def load(node, name):
    with node.state("modules") as modules:
        loaded = modules.setdefault("loaded", [])
        pending = [name]
        while pending:
            module = pending.pop()
            if module in loaded:
                continue
            missing = [dep for dep in DEPENDS[module] if dep not in loaded]
            if missing:
                pending.append(module)
                pending.extend(missing)
                continue
            loaded.append(module)


def unload(node, name, tool):
    """Returns an error text (without the 'rmmod: ERROR: ' prefix) or None."""
    if name == "obdecho" and (echo_devices(node) or node.faults(type="obdecho_busy")):
        return "Module obdecho is in use"
    with node.state("modules") as modules:
        loaded = modules.setdefault("loaded", [])
        if name not in loaded:
            return "Module %s is not currently loaded" % name
        users = holders(name, loaded)
        if users:
            return "Module %s is in use by: %s" % (name, " ".join(users))
        loaded.remove(name)
    if name == "lnet_selftest":
        end_lst_session(node)
    return None


def end_lst_session(node):
    """Unloading lnet_selftest tears down the console and with it any session (lstcon_console_fini)."""
    with node.state("lst") as state:
        session = state.get("session")
        if session:
            ended = state.setdefault("expired", [])
            ended.append({"name": session["name"], "key": session["key"],
                          "expired_at": time.time(), "reason": "rmmod lnet_selftest"})
            state["expired"] = ended[-5:]
            state["session"] = None


def modprobe(node, argv):
    flags = [a for a in argv if a.startswith("-")]
    words = [a for a in argv if not a.startswith("-")]
    remove = any(f in ("-r", "--remove") or (f.startswith("-") and not f.startswith("--")
                                              and "r" in f[1:]) for f in flags)
    take_all = remove or any(f in ("-a", "--all") for f in flags)
    names = words if take_all else words[:1]
    lustre = [n for n in names if canonical(n) in LUSTRE_MODULES]
    if not names or len(lustre) != len(names):
        if lustre:
            # Mixed lists: handle Lustre ones here, hand the rest to the real tool.
            others = [a for a in argv if canonical(a) not in LUSTRE_MODULES]
            rc = handle_modprobe(node, lustre, remove)
            real = run_real("modprobe", others, node)
            return rc or (real if real is not None else
                          missing_module("modprobe", [w for w in words if w not in lustre][0]))
        real = run_real("modprobe", argv, node)
        if real is None:
            if not words:
                sys.stderr.write("modprobe: ERROR: missing parameters. See -h.\n")
                return 1
            return missing_module("modprobe", words[0])
        return real
    return handle_modprobe(node, names, remove)


def handle_modprobe(node, names, remove):
    rc = 0
    for name in names:
        module = canonical(name)
        if remove:
            with node.state("modules") as modules:
                loaded = list(modules.get("loaded", []))
            if module not in loaded:
                continue
            error = unload(node, module, "modprobe")
            if error:
                sys.stderr.write("modprobe: FATAL: %s\n" % error)
                rc = 1
        else:
            load(node, module)
    return rc


def rmmod(node, argv):
    names = [a for a in argv if not a.startswith("-")]
    if not names:
        real = run_real("rmmod", argv, node)
        if real is None:
            sys.stderr.write("rmmod: ERROR: missing module name.\n")
            return 1
        return real
    rc = 0
    others = [n for n in names if canonical(n) not in LUSTRE_MODULES]
    for name in names:
        module = canonical(name)
        if module not in LUSTRE_MODULES:
            continue
        error = unload(node, module, "rmmod")
        if error:
            sys.stderr.write("rmmod: ERROR: %s\n" % error)
            rc = 1
    if others:
        real = run_real("rmmod", [a for a in argv if a.startswith("-")] + others, node)
        if real is None:
            for name in others:
                missing_module("rmmod", name)
            real = 1
        rc = rc or real
    return rc


def lsmod(node, argv):
    binary = real_binary("lsmod", node)
    header = "Module                  Size  Used by\n"
    real_lines = []
    if binary is not None:
        result = subprocess.run(["lsmod"] + list(argv), executable=binary,
                                stdout=subprocess.PIPE, universal_newlines=True)
        real_lines = result.stdout.splitlines(True)
    if real_lines:
        sys.stdout.write(real_lines[0])
        body = real_lines[1:]
    else:
        sys.stdout.write(header)
        body = []
    loaded = node.loaded_modules()
    lines = []
    for module in reversed(loaded):
        users = holders(module, loaded)
        count = len(users)
        if module == "obdecho":
            count += len(echo_devices(node))
        line = "%-19s %8d  %d" % (module, SIZES.get(module, 65536), count)
        if users:
            line += " " + ",".join(users)
        lines.append(line + "\n")
    sys.stdout.write("".join(lines))
    sys.stdout.write("".join(body))
    return 0


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    tool = os.path.basename(sys.argv[0])
    if argv and argv[0].startswith("--sim-tool="):
        tool = argv.pop(0).split("=", 1)[1]
    if tool not in ("modprobe", "rmmod", "lsmod"):
        sys.stderr.write("lustre-sim modules: unknown tool %r\n" % tool)
        return 2
    try:
        node = Node.from_env()
    except SimError as error:
        # Installed over the system's tools, the shim must not break module loading
        # for everything else when its node is gone: act as the real tool.
        real = run_real(tool, argv, None)
        if real is not None:
            return real
        sys.stderr.write("%s: %s\n" % (tool, error))
        return 2
    node.fault_gate(tool, argv)
    handler = {"modprobe": modprobe, "rmmod": rmmod, "lsmod": lsmod}[tool]
    return handler(node, argv)


if __name__ == "__main__":
    sys.exit(main())
