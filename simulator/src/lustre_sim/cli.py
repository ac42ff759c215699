"""``lustre-sim``: create, mount, inspect and destroy simulated nodes; faults; host-wide shims."""

import argparse
import json
import re
import sys
import time

import yaml

from . import client_mount, host
from .config import FAULT_TYPES, normalise_fault
from .errors import SimError
from .lifecycle import create_node, destroy_node
from .node import Node


def _override(text):
    if "=" not in text:
        raise argparse.ArgumentTypeError("expected TARGET=MiB/s, got %r" % text)
    name, value = text.split("=", 1)
    try:
        return name.strip(), float(value)
    except ValueError:
        raise argparse.ArgumentTypeError("MiB/s must be a number in %r" % text)


def build_parser():
    parser = argparse.ArgumentParser(prog="lustre-sim",
                                     description="A simulated Lustre node for tests and demos.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    init = commands.add_parser("init", help="create a simulated node under --root")
    init.add_argument("--root", required=True)
    init.add_argument("--config", help="YAML file with the same settings (and faults)")
    init.add_argument("--fsname")
    init.add_argument("--mdts", type=int)
    init.add_argument("--osts", type=int)
    init.add_argument("--ost-size-mib", type=int)
    init.add_argument("--mdt-size-mib", type=int)
    init.add_argument("--ost-mib-s", type=float, help="throttle every OST to this MiB/s")
    init.add_argument("--ost-mib-s-override", type=_override, action="append", default=[],
                      metavar="OSTxxxx=MIB_S", help="per-OST throttle (repeatable)")
    init.add_argument("--read-cache-mib", type=float,
                      help="the node's read cache (page cache of its OSTs) in MiB (default: none)")
    init.add_argument("--read-cache-speedup", type=float,
                      help="how many times its OST's rate a read found in the read cache runs (default 4)")
    init.add_argument("--client-mount")
    init.add_argument("--nid")
    init.add_argument("--hostname")
    init.add_argument("--lustre-version")
    init.add_argument("--force", action="store_true",
                      help="re-create an existing node (unmounts its client and stops its helpers first)")
    init.add_argument("--no-mount", action="store_true",
                      help="configure the client mount but do not mount it now")

    env = commands.add_parser("env", help="print export lines for a node's shims")
    env.add_argument("--root", required=True)

    status = commands.add_parser("status", help="print devices, modules, sessions, helpers as JSON")
    status.add_argument("--root", required=True)

    mount = commands.add_parser("mount", help="mount the node's client (fuse, else bind, else symlink)")
    mount.add_argument("--root", required=True)
    mount.add_argument("--kind", choices=("auto", "fuse", "bind", "symlink"), default="auto")

    umount = commands.add_parser("umount", help="unmount the node's client and stop its daemon")
    umount.add_argument("--root", required=True)

    destroy = commands.add_parser(
        "destroy", help="unmount, stop helpers, uninstall installed shims, remove the root")
    destroy.add_argument("--root", required=True)

    for name, text in (("install-shims", "put the node's shims where the whole host finds them"),
                       ("uninstall-shims", "undo install-shims (same options)")):
        shims = commands.add_parser(name, help=text)
        shims.add_argument("--root", required=True)
        shims.add_argument("--bindir", default=host.DEFAULT_BINDIR,
                           help="for lctl lfs lst mdtest mpirun (default %(default)s)")
        shims.add_argument("--sbindir", default=host.DEFAULT_SBINDIR,
                           help="for modprobe rmmod lsmod (default %(default)s)")
        shims.add_argument("--system-module-tools", action="store_true",
                           help="divert the system's modprobe/rmmod/lsmod to the shims")
        shims.add_argument("--system-dir", action="append", dest="system_dirs", metavar="DIR",
                           help="where the system's module tools are (repeatable, implies "
                                "--system-module-tools; default /usr/sbin, and /sbin when it "
                                "is not the same directory)")

    fault = commands.add_parser("fault", help="add or clear faults at run time")
    fault.add_argument("--root", required=True)
    actions = fault.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    add = actions.add_parser("add", help="activate a fault")
    add.add_argument("type", choices=FAULT_TYPES)
    add.add_argument("--target")
    add.add_argument("--op", choices=("write", "read"))
    add.add_argument("--command", dest="fault_command", metavar="COMMAND")
    clear = actions.add_parser("clear", help="deactivate faults")
    clear.add_argument("type", nargs="?", choices=FAULT_TYPES)
    clear.add_argument("--target")
    clear.add_argument("--all", action="store_true")
    actions.add_parser("list", help="print active faults as JSON")
    return parser


def settings_from_args(args):
    settings = {}
    if args.config:
        with open(args.config) as handle:
            loaded = yaml.safe_load(handle) or {}
        if not isinstance(loaded, dict):
            raise SimError("%s: expected a mapping" % args.config)
        settings.update({key.replace("-", "_"): value for key, value in loaded.items()})
    for option in ("fsname", "mdts", "osts", "ost_size_mib", "mdt_size_mib", "ost_mib_s",
                   "client_mount", "nid", "hostname", "lustre_version", "read_cache_mib",
                   "read_cache_speedup"):
        value = getattr(args, option)
        if value is not None:
            settings[option] = value
    if args.ost_mib_s_override:
        overrides = dict(settings.get("ost_mib_s_override") or {})
        overrides.update(dict(args.ost_mib_s_override))
        settings["ost_mib_s_override"] = overrides
    return settings


def command_init(args):
    node = create_node(args.root, settings_from_args(args), force=args.force)
    print("lustre-sim: node %s (%s, %d MDT, %d OST) created under %s"
          % (node.hostname, node.fsname, len(node.targets("mdt")),
             len(node.targets("ost")), node.root))
    if node.config.get("client_mount") and not args.no_mount:
        kind = client_mount.mount(node)
        print("lustre-sim: client mounted at %s (%s)" % (client_mount.mountpoint(node), kind))
    return 0


def command_mount(args):
    node = Node(args.root)
    print(client_mount.mount(node, mode=args.kind))
    return 0


def command_umount(args):
    print(client_mount.unmount(Node(args.root)) or "not mounted")
    return 0


def command_destroy(args):
    if destroy_node(args.root):
        print("lustre-sim: removed %s" % args.root)
    return 0


def command_shims(args):
    node = Node(args.root)
    action = host.install_shims if args.command == "install-shims" else host.uninstall_shims
    # Naming a system directory means diverting the module tools there.
    divert = args.system_module_tools or bool(args.system_dirs)
    for path in action(node, args.bindir, args.sbindir, divert, args.system_dirs):
        print(path)
    return 0


def _double_quoted(text):
    return re.sub(r'(["\\$`])', r"\\\1", text)


def command_env(args):
    node = Node(args.root)
    print('export PATH="%s:$PATH"' % _double_quoted(node.bin_dir))
    print('export LUSTRE_SIM_ROOT="%s"' % _double_quoted(node.root))
    return 0


def lst_status(node, now=None):
    """The lst console as ``lst`` would find it now: a session past its timeout counts as expired."""
    now = time.time() if now is None else now
    state = node.read_state("lst")
    session = state.get("session")
    expired = list(state.get("expired", []))
    if session and now > session["last_active"] + session["timeout"]:
        expired.append({"name": session["name"], "key": session["key"],
                        "expired_at": session["last_active"] + session["timeout"],
                        "reason": "timeout"})
        session = None
    if session:
        session = {key: session.get(key) for key in
                   ("name", "key", "timeout", "created", "last_active", "expires_at",
                    "owner_pid", "nid")}
        groups = state["session"].get("groups", {})
        session["groups"] = sorted(groups)
        session["batches"] = sorted(state["session"].get("batches", {}))
    return {"session": session, "expired": expired}


def command_status(args):
    node = Node(args.root)
    status = {
        "root": node.root,
        "hostname": node.hostname,
        "fsname": node.fsname,
        "lustre_version": node.version,
        "devices": node.devices(),
        "modules": node.loaded_modules(),
        "client": {"mountpoint": client_mount.mountpoint(node),
                   "kind": client_mount.mount_kind(node),
                   "state": node.read_state("client")},
        "lst": lst_status(node),
        "helpers": node.live_helpers(),
        "shims": node.read_state("shims").get("installs", []),
        "faults": node.faults(),
        "targets": [dict(t, **{k: v for k, v in node.target_usage(t["name"]).items()
                               if k in ("kbytestotal", "kbytesfree")})
                    for t in node.targets()],
    }
    json.dump(status, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
    return 0


def command_fault(args):
    node = Node(args.root)
    if args.action == "list":
        json.dump(node.faults(), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    if args.action == "add":
        fault = normalise_fault({"type": args.type, "target": args.target, "op": args.op,
                                 "command": args.fault_command})
        if fault.get("target") and node.target(fault["target"]) is None:
            raise SimError("no target %s on this node" % fault["target"])
        with node.state("faults") as state:
            faults = state.setdefault("faults", [])
            if fault not in faults:
                faults.append(fault)
        node.apply_fault_effects(fault)
        return 0
    if not args.all and not args.type:
        raise SimError("fault clear needs a TYPE or --all")
    with node.state("faults") as state:
        state["faults"] = [
            f for f in state.get("faults", [])
            if not (args.all or (f["type"] == args.type
                                 and args.target in (None, f.get("target"))))]
    return 0


def main(argv=None):
    args = build_parser().parse_args(argv)
    handler = {"init": command_init, "env": command_env, "status": command_status,
               "mount": command_mount, "umount": command_umount, "destroy": command_destroy,
               "install-shims": command_shims, "uninstall-shims": command_shims,
               "fault": command_fault}[args.command]
    try:
        return handler(args)
    except (SimError, OSError, yaml.YAMLError) as error:
        sys.stderr.write("lustre-sim: error: %s\n" % error)
        return 1


if __name__ == "__main__":
    sys.exit(main())
