"""``lustre-sim``: create a simulated node, print its environment, show status, change faults."""

import argparse
import json
import os
import re
import sys

import yaml

from .node import FAULT_TYPES, Node, SimError, create_node, normalise_fault, pid_alive


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
    init.add_argument("--client-mount")
    init.add_argument("--nid")
    init.add_argument("--hostname")
    init.add_argument("--lustre-version")
    init.add_argument("--force", action="store_true", help="re-create an existing node")

    env = commands.add_parser("env", help="print export lines for a node's shims")
    env.add_argument("--root", required=True)

    status = commands.add_parser("status", help="print devices, modules, sessions, helpers as JSON")
    status.add_argument("--root", required=True)

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
                   "client_mount", "nid", "hostname", "lustre_version"):
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
    return 0


def _double_quoted(text):
    return re.sub(r'(["\\$`])', r"\\\1", text)


def command_env(args):
    node = Node(args.root)
    print('export PATH="%s:$PATH"' % _double_quoted(node.bin_dir))
    print('export LUSTRE_SIM_ROOT="%s"' % _double_quoted(node.root))
    return 0


def command_status(args):
    node = Node(args.root)
    helpers = [h for h in node.read_state("helpers").get("helpers", []) if pid_alive(h["pid"])]
    status = {
        "root": node.root,
        "hostname": node.hostname,
        "fsname": node.fsname,
        "lustre_version": node.version,
        "devices": node.devices(),
        "modules": node.loaded_modules(),
        "lst_sessions": node.read_state("lst"),
        "helpers": helpers,
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
               "fault": command_fault}[args.command]
    try:
        return handler(args)
    except (SimError, OSError, yaml.YAMLError) as error:
        sys.stderr.write("lustre-sim: error: %s\n" % error)
        return 1


if __name__ == "__main__":
    sys.exit(main())
