"""The lctl command table and session: device selection, config commands, device list.

Rules and texts follow ``lustre/utils/{lctl.c,obd.c,lustre_cfg.c}`` and
``libcfs/libcfs/util/parser.c``; the kernel side (``class_attach``,
``class_setup``, ``echo_client_setup``...) is modelled on the device list in
``state/devices.json``.
"""

import errno
import sys

from . import echo_io, lctl_params
from .lctl_base import CMD_HELP, LctlError, c_strtol_prefix, device_line, devices_yaml, strerror
from .lctl_threads import ThreadContext, run_threads

# Module that registers each attachable obd type.
TYPE_MODULES = {
    "echo_client": "obdecho", "obdecho": "obdecho", "osc": "osc", "mdc": "mdc",
    "ost": "ost", "obdfilter": "ofd", "mdt": "mdt", "mdd": "mdd", "lov": "lov",
    "lmv": "lmv", "osp": "osp", "lod": "lod", "mgc": "mgc", "mgs": "mgs",
}
ECHO_TARGET_TYPES = ("obdfilter", "osc", "mdt")


class Session:
    """One lctl process (or one forked --threads worker): current device and config name."""

    def __init__(self, node, out=None, err=None, ctx=None):
        self.node = node
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.ctx = ctx or ThreadContext()
        self.cur_device = -1
        self.devname = None
        self.ignore_errors = False
        self.done = False

    # -- devices ---------------------------------------------------------------

    def devices(self):
        return self.node.devices()

    def device_by_index(self, index):
        for device in self.devices():
            if device["index"] == index:
                return device
        return None

    def set_devname(self, name):
        """lcfg_set_devname: a purely numeric name cannot be mapped back, so config is unset."""
        if name is None:
            self.devname = None
            return
        if name[:1] in "$%":
            name = name[1:]
        self.devname = None if name.isdigit() else name

    def parse_devname(self, func, name):
        try_digit = name[:1].isdigit()
        lookup = name[1:] if name[:1] in "$%" else name
        for device in self.devices():
            if device["name"] == lookup or device["uuid"] == lookup:
                return device["index"]
        if try_digit:
            value, _ = c_strtol_prefix(lookup)
            return value
        self.err.write("No device found for name %s: %s\n" % (lookup, strerror(errno.ENODEV)))
        return -1

    def do_device(self, func, name):
        index = self.parse_devname(func, name)
        if index < 0:
            return -1
        self.set_devname(name)
        self.cur_device = index
        return 0

    def ioctl_device(self, types=("echo_client",)):
        """The current device as the kernel's ioctl path sees it (raises LctlError)."""
        if self.cur_device < 0:
            raise LctlError(errno.EINVAL)
        device = self.device_by_index(self.cur_device)
        if device is None:
            raise LctlError(errno.EINVAL)
        if device["status"] != "UP":
            raise LctlError(errno.ENODEV)
        if types and device["type"] not in types:
            raise LctlError(errno.ENOTTY)
        return device

    # -- running commands ----------------------------------------------------------

    def execarg(self, argv):
        """Parser_execarg: run one command given as arguments."""
        command = COMMANDS.get(argv[0])
        if command is None:
            self.out.write("Try interactive use without arguments or use one of:\n")
            for name in COMMANDS:
                self.out.write('"%s"\n' % name)
            self.out.write("as argument.\n")
            return -1
        if self.node.hang_matches("lctl", argv):
            self.out.flush()
            self.node.hang_while_faulted("lctl", argv)
        rc = command[0](self, argv)
        if rc == CMD_HELP:
            self.err.write("%s\n" % command[1])
        return rc

    def execute_line(self, line):
        words = line.replace("\t", " ").split()
        if not words:
            return 0
        command = COMMANDS.get(words[0])
        if command is None:
            matches = [name for name in COMMANDS if name.startswith(words[0])]
            if len(matches) == 1:
                words[0] = matches[0]
                command = COMMANDS[matches[0]]
            elif len(matches) > 1:
                self.err.write("Ambiguous command '%s'\nOptions: %s \n"
                               % (line, " ".join(matches)))
                return 0
            else:
                self.err.write("No such command, type help\n")
                return 0
        return self.execarg(words)

    def commands_from(self, stream):
        """Parser_commands on a non-tty: stop at the first error unless ignore_errors."""
        rc = 0
        save_error = 0
        interactive = stream.isatty()
        while not self.done:
            if interactive:
                self.out.write("lctl > ")
                self.out.flush()
            line = stream.readline()
            if not line:
                break
            text = line.strip()
            if text:
                rc = self.execute_line(text)
            if rc != 0 and not interactive:
                if save_error == 0:
                    save_error = rc
                if not self.ignore_errors:
                    self.done = True
        return save_error or rc


# -- commands ------------------------------------------------------------------------


def cmd_device_list(session, argv):
    if len(argv) > 2:
        return CMD_HELP
    show_nid = False
    yaml_form = False
    if len(argv) == 2:
        if argv[1] == "-t":
            show_nid = True
        elif argv[1] == "-y" and session.node.version_tuple >= (2, 15, 54):
            yaml_form = True
        else:
            return CMD_HELP
    devices = session.devices()
    if yaml_form:
        session.out.write(devices_yaml(devices))
        return 0
    for device in devices:
        line = device_line(device)
        if show_nid and device["type"] in ("osc", "mdc") and device.get("conn"):
            line += " " + device["conn"]
        session.out.write(line + "\n")
    return 0


def cmd_device(session, argv):
    if len(argv) > 2:
        return CMD_HELP
    if len(argv) == 1:
        session.out.write("current device is %d - %s\n"
                          % (session.cur_device, session.devname or "not set"))
        return 0
    return session.do_device("device", argv[1])


def cmd_opt_device(session, argv):
    if len(argv) < 3:
        return CMD_HELP
    rc = session.do_device("device", argv[1])
    if not rc:
        rc = session.execarg(argv[2:])
    session.set_devname(None)
    session.cur_device = -1
    return rc


def cmd_ignore_errors(session, argv):
    session.ignore_errors = True
    return 0


def cmd_quit(session, argv):
    session.done = True
    return 0


def cmd_help(session, argv):
    if len(argv) > 1 and argv[1] in COMMANDS:
        session.out.write("%s: %s\n" % (argv[1], COMMANDS[argv[1]][1]))
        return 0
    session.out.write("Available commands are:\n")
    for name in COMMANDS:
        session.out.write("\t%s\n" % name)
    return 0


def cmd_version(session, argv):
    session.out.write("lctl %s\n" % session.node.version)
    return 0


def cmd_build_version(session, argv):
    if len(argv) != 1:
        return CMD_HELP
    session.out.write("Lustre version: %s\n" % session.node.version)
    return 0


def cmd_list_nids(session, argv):
    session.out.write("%s\n" % session.node.config.get("nid"))
    return 0


def cmd_mark(session, argv):
    return 0


def config_error(session, func, code):
    session.err.write("error: %s: %s\n" % (session.ctx.cmdname(func), strerror(code)))
    return code


def need_devname(session, func):
    if session.devname:
        return False
    session.err.write("%s: please use 'device name' to set the device name for config "
                      "commands.\n" % session.ctx.cmdname(func))
    return True


MAX_OBD_NAME = 128
UUID_MAX = 40


def cmd_attach(session, argv):
    if len(argv) != 4:
        return CMD_HELP
    dtype, name, uuid = argv[1], argv[2], argv[3]
    node = session.node
    module = TYPE_MODULES.get(dtype)
    if module is None or module not in node.loaded_modules():
        return config_error(session, argv[0], errno.ENODEV)
    # class_attach: the name must fit MAX_OBD_NAME and the UUID struct obd_uuid (40 bytes with its NUL).
    if len(name) >= MAX_OBD_NAME or len(uuid) >= UUID_MAX:
        return config_error(session, argv[0], errno.EINVAL)
    with node.state("devices") as state:
        devices = state.setdefault("devices", [])
        if any(d["name"] == name for d in devices):
            code = errno.EEXIST
        else:
            code = 0
            used = {d["index"] for d in devices}
            index = 0
            while index in used:
                index += 1
            devices.append({"index": index, "status": "AT", "type": dtype, "name": name,
                            "uuid": uuid, "refcount": 1})
            devices.sort(key=lambda d: d["index"])
    if code:
        return config_error(session, argv[0], code)
    session.set_devname(name)
    return 0


def cmd_setup(session, argv):
    if need_devname(session, argv[0]):
        return -errno.EINVAL
    if len(argv) > 6:
        return CMD_HELP
    with session.node.state("devices") as state:
        code = setup_device(state.setdefault("devices", []), session.devname, argv[1:])
    if code:
        return config_error(session, argv[0], code)
    return 0


def setup_device(devices, name, args):
    device = next((d for d in devices if d["name"] == name), None)
    if device is None:
        return errno.EINVAL
    if device["status"] == "UP":
        return errno.EEXIST
    if device["type"] == "echo_client":
        if not args or not args[0]:
            return errno.EINVAL
        target = next((d for d in devices if d["name"] == args[0]), None)
        if target is None or target["status"] != "UP" \
                or target["type"] not in ECHO_TARGET_TYPES:
            return errno.EINVAL
        if target["type"] == "mdt":
            if len(args) < 2 or args[1] != "mdd":
                return errno.EINVAL
            device["layer"] = "mdd"
        device["target"] = target["name"]
        device["target_type"] = target["type"]
        target["refcount"] += 1
        device["refcount"] = 3
    else:
        device["refcount"] += 1
        device["setup_args"] = list(args)
    device["status"] = "UP"
    return 0


def cmd_cleanup(session, argv):
    if need_devname(session, argv[0]):
        return -errno.EINVAL
    if len(argv) < 1 or len(argv) > 3:
        return CMD_HELP
    for option in argv[1:]:
        if option not in ("force", "failover"):
            session.err.write("unknown option: %s\n" % option)
            return CMD_HELP
    with session.node.state("devices") as state:
        devices = state.setdefault("devices", [])
        device = next((d for d in devices if d["name"] == session.devname), None)
        if device is None:
            code = errno.EINVAL
        elif device["status"] != "UP":
            code = errno.ENODEV
        elif any(d.get("target") == device["name"] and d["type"] == "echo_client"
                 and d["status"] == "UP" for d in devices):
            code = errno.EBUSY
        else:
            code = 0
            if device.get("target"):
                target = next((d for d in devices if d["name"] == device["target"]), None)
                if target is not None:
                    target["refcount"] = max(target["refcount"] - 1, 1)
            device["status"] = "AT"
            device["refcount"] = 1
            device.pop("leftover", None)
    if code:
        return config_error(session, argv[0], code)
    return 0


def cmd_detach(session, argv):
    if need_devname(session, argv[0]):
        return -errno.EINVAL
    if len(argv) != 1:
        return CMD_HELP
    with session.node.state("devices") as state:
        devices = state.setdefault("devices", [])
        device = next((d for d in devices if d["name"] == session.devname), None)
        if device is None:
            code = errno.EINVAL
        elif device["status"] == "UP":
            code = errno.EBUSY
        else:
            code = 0
            devices.remove(device)
    if code:
        return config_error(session, argv[0], code)
    return 0


def cmd_add_uuid(session, argv):
    if len(argv) != 3:
        return CMD_HELP
    with session.node.state("uuids") as state:
        state[argv[1]] = argv[2]
    return 0


def cmd_del_uuid(session, argv):
    if len(argv) != 2:
        return CMD_HELP
    with session.node.state("uuids") as state:
        state.pop(argv[1], None)
    return 0


def cmd_threads(session, argv):
    def worker(context, device, command):
        child = Session(session.node, session.out, session.err, context)
        return child.execarg(["--device", device] + list(command))

    session.out.flush()
    with session.node.helper("lctl " + " ".join(argv)):
        return run_threads(session, argv, worker)


MD_USAGE = ("[-d parent_basedir] <-D parent_count>[-b child_base_id] [-n count] <-t time>\n")

# name -> (function, help text as lctl.c has it)
COMMANDS = {
    "--device": (cmd_opt_device, "run <command> after connecting to device <devno>\n"
                                 "--device <devno> <command [args ...]>"),
    "--ignore_errors": (cmd_ignore_errors, "ignore errors that occur during script "
                                           "processing\n--ignore_errors"),
    "ignore_errors": (cmd_ignore_errors, "ignore errors that occur during script "
                                         "processing\nignore_errors"),
    "help": (cmd_help, "help"),
    "lustre_build_version": (cmd_build_version, "print version of Lustre modules\n"
                                                "usage: lustre_build_version"),
    "exit": (cmd_quit, "quit"),
    "quit": (cmd_quit, "quit"),
    "--version": (cmd_version, "print build version of this utility and exit"),
    "list_nids": (cmd_list_nids, "list local NIDs\nusage: list_nids [all]"),
    "device": (cmd_device, "set current device to <name|devno>\n"
                           "usage: device <%name|$name|devno>"),
    "cfg_device": (cmd_device, "set current device to <name>, same as 'device'\n"
                               "usage: cfg_device <name>"),
    "device_list": (cmd_device_list, "show all devices\nusage: device_list"),
    "dl": (cmd_device_list, "show all devices, same as 'device_list'\nusage: dl [-t]"),
    "get_param": (lctl_params.cmd_get_param,
                  "get the Lustre or LNET parameter\n"
                  "usage: get_param [-F|n|-N|-R] <param_path1 param_path2 ...>"),
    "set_param": (lctl_params.cmd_set_param,
                  "set the Lustre or LNET parameter\n"
                  "usage: set_param [-n] [-P] [-d] <param_path1=value1 param_path2=value2 ...>"),
    "list_param": (lctl_params.cmd_list_param,
                   "list the Lustre or LNET parameter name\n"
                   "usage: list_param [-F|-R|-D] <param_path1 param_path2 ...>"),
    "mark": (cmd_mark, "insert marker text in the kernel debug buffer.\nusage: mark <text>"),
    "attach": (cmd_attach, "set the type, name, and uuid of the current device\n"
                           "usage: attach type name uuid"),
    "detach": (cmd_detach, "remove driver (and name and uuid) from current device\n"
                           "usage: detach"),
    "setup": (cmd_setup, "type specific device configuration information\n"
                         "usage: setup <args...>"),
    "cleanup": (cmd_cleanup, "cleanup previously setup device\n"
                             "usage: cleanup [force | failover]"),
    "--threads": (cmd_threads, "run <threads> separate instances of <command> on device "
                               "<devno>\n--threads <threads> <verbose> <devno> "
                               "<command [args ...]>"),
    "add_uuid": (cmd_add_uuid, "associate a UUID with a NID\nusage: add_uuid <uuid> <nid>"),
    "del_uuid": (cmd_del_uuid, "delete a UUID association\nusage: del_uuid <uuid>"),
    "test_create": (echo_io.test_create, "create files on MDT by echo client\n"
                    "usage: test_create [-d parent_basedir] <-D parent_count> "
                    "[-b child_base_id] <-c stripe_count> <-n count> <-t time>\n"),
    "test_mkdir": (echo_io.test_mkdir, "mkdir on MDT by echo client\nusage: test_mkdir "
                   + MD_USAGE),
    "test_destroy": (echo_io.test_destroy, "Destroy files on MDT by echo client\n"
                     "usage: test_destroy " + MD_USAGE),
    "test_rmdir": (echo_io.test_rmdir, "rmdir on MDT by echo client\nusage: test_rmdir "
                   + MD_USAGE),
    "test_lookup": (echo_io.test_lookup, "lookup files on MDT by echo client\n"
                    "usage: test_lookup " + MD_USAGE),
    "test_setxattr": (echo_io.test_setxattr, "Set EA for files/directory on MDT by echo "
                      "client\nusage: test_setxattr [-d parent_baseid] <-D parent_count>"
                      "[-b child_base_id] [-n count] <-t time>\n"),
    "test_md_getattr": (echo_io.test_md_getattr, "getattr files on MDT by echo client\n"
                        "usage: test_md_getattr " + MD_USAGE),
    "create": (echo_io.create, "create <num> OST objects (with <mode>)\n"
                                "usage: create [num [mode [verbose [lsm data]]]]"),
    "destroy": (echo_io.destroy, "destroy OST object <objid> [num [verbose]]\n"
                                  "usage: destroy <num> objects, starting at objid <objid>"),
    "test_brw": (echo_io.test_brw, "do <num> bulk read/writes (<npages> per I/O, on OST "
                                    "object <objid>)\nusage: test_brw [t]<num> [write "
                                    "[verbose [npages [[t]objid]]]]"),
}
