"""lst, the LNet self-test console (lnet/utils/lst.c), on a simulated node.

The console session lives in ``state/lst.json``; like the kernel console it
needs the ``lnet_selftest`` module, answers only to the key in
``LST_SESSION``, and ends itself when no command arrived for its timeout
(default 300 s).  Traffic comes from ``lustre_sim.lnet_model``.
"""

import errno
import getopt
import os
import pwd
import socket
import sys
import time

from lustre_sim import lnet_model
from lustre_sim.node import Node, SimError

NAME_SIZE = 32
DEFAULT_BATCH = "batch"
FEATS_MASK = 0x1
NO_ENV = "Can't find env LST_SESSION or value is not valid\n"

USAGE = {
    "new_session": "Usage: lst new_session [--timeout TIME] [--force] [NAME]",
    "end_session": "Usage: lst end_session",
    "show_session": "Usage: lst show_session",
    "add_group": "Usage: lst group NAME IDs [IDs]...",
    "del_group": "Usage: lst del_group NAME",
    "list_group": "Usage: lst list_group [--active] [--busy] [--down] [--unknown] GROUP ...",
    "stat": "Usage: lst stat [--bw] [--rate] [--read] [--write] [--max] [--min] [--avg] "
            " [--mbs] [--timeout #] [--delay #] [--count #] GROUP [GROUP]",
    "show_error": "Usage: lst show_error NAME | IDS ...",
    "add_batch": "Usage: lst add_batch NAME",
    "run": "Usage: lst run [--timeout TIME] [NAME]",
    "stop": "Usage: lst stop [--force] BATCH_NAME",
    "list_batch": "Usage: lst list_batch NAME [--test ID] [--server]",
    "add_test": "Usage: lst add_test [--batch BATCH] [--loop #] [--concurrency #] "
                " [--distribute #:#] [--from GROUP] [--to GROUP] TEST...",
}


class Failed(Exception):
    """A kernel ioctl failed with errno."""

    def __init__(self, error):
        Exception.__init__(self, error)
        self.errno = error


def out(text):
    sys.stdout.write(text)
    sys.stdout.flush()


def err(text):
    sys.stderr.write(text)
    sys.stderr.flush()


def atoi(text):
    """C atoi: leading optional sign and digits, anything else gives 0."""
    text = (text or "").strip()
    sign = 1
    if text[:1] in "+-" and text[:1]:
        sign = -1 if text[0] == "-" else 1
        text = text[1:]
    digits = ""
    for char in text:
        if not char.isdigit():
            break
        digits += char
    return sign * int(digits) if digits else 0


def print_error(sub, code, default):
    """lst_print_error: fixed texts for the console's own errnos."""
    texts = {
        errno.ESRCH: "No session exists\n",
        errno.ESHUTDOWN: "Session is shutting down\n",
        errno.EACCES: "Unmatched session key or not root\n",
        errno.ENOENT: "Can't find %s in current session\n" % sub,
        errno.EINVAL: "Invalid parameters list in command line\n",
        errno.EFAULT: "Bad parameter address\n",
        errno.EEXIST: "%s already exists\n" % sub,
    }
    err(texts.get(code, default % os.strerror(code) if "%s" in default else default))


def usage(command):
    out(USAGE.get(command, "") + "\n")
    return 255


class Console:
    """The kernel side: session state under lock, expiry, module presence."""

    def __init__(self, node, key):
        self.node = node
        self.key = key
        self.model = lnet_model.LinkModel(node.config)

    def selftest_loaded(self):
        return "lnet_selftest" in self.node.loaded_modules()

    def call(self, operation, need_key=True, touch=True):
        """Run operation(state, session) like one LSTIO ioctl; raise Failed(errno)."""
        if not self.selftest_loaded():
            # Without lnet_selftest no handler takes IOC_LIBCFS_LNETST: libcfs says EINVAL.
            raise Failed(errno.EINVAL)
        with self.node.state("lst") as state:
            now = time.time()
            session = state.get("session")
            if session and now > session["last_active"] + session["timeout"]:
                state.setdefault("expired", []).append(
                    {"name": session["name"], "key": session["key"], "expired_at": now,
                     "reason": "timeout"})
                state["expired"] = state["expired"][-5:]
                session = state["session"] = None
            # A failed call still saves the state: an expiry noticed here must stick.
            failure = result = None
            try:
                if session and need_key and session["key"] != self.key:
                    raise Failed(errno.EACCES)
                result = operation(state, session, now)
            except Failed as error:
                failure = error
            session = state.get("session")
            if session and touch and failure is None:
                session["last_active"] = now
                session["expires_at"] = now + session["timeout"]
        if failure is not None:
            raise failure
        return result


def require_session(session):
    if not session:
        raise Failed(errno.ESRCH)
    return session


# --------------------------------------------------------------------------
# commands


def cmd_new_session(console, args):
    if console.key == 0:
        err(NO_ENV)
        return 255
    try:
        options, rest = getopt.gnu_getopt(args, "ft:", ["timeout=", "force"])
    except getopt.GetoptError:
        return usage("new_session")
    timeout, force = 300, False
    for option, value in options:
        if option in ("-f", "--force"):
            force = True
        else:
            timeout = atoi(value)
    if timeout <= 0:
        err("Invalid timeout value\n")
        return 255
    if len(rest) == 1:
        name = rest[0]
        if len(name) >= NAME_SIZE:
            err("Name size is limited to %d\n" % (NAME_SIZE - 1))
            return 255
    elif not rest:
        try:
            user = pwd.getpwuid(os.getuid()).pw_name
        except KeyError:
            user = str(os.getuid())
        name = "%s@%s" % (user, socket.gethostname())
    else:
        return usage("new_session")
    features = console_features()

    def operation(state, session, now):
        if session and not force:
            raise Failed(errno.EEXIST)
        state["session"] = {
            "name": name, "key": console.key, "features": features, "timeout": timeout,
            "force": force, "nid": console.node.config.get("nid"),
            "stamp_ms": int(time.monotonic() * 1000), "created": now, "last_active": now,
            "expires_at": now + timeout, "owner_pid": os.getppid(),
            "groups": {}, "batches": {DEFAULT_BATCH: {"tests": [], "runs": []}},
        }

    try:
        console.call(operation, need_key=False)
    except Failed as error:
        print_error("session", error.errno, "Failed to create session: %s\n")
        return 255
    out("SESSION: %s FEATURES: %x TIMEOUT: %d FORCE: %s\n"
        % (name, features, timeout, "Yes" if force else "No"))
    return 0


def console_features():
    text = os.environ.get("LST_FEATURES")
    return int(text, 16) if text else FEATS_MASK


def cmd_end_session(console, args):
    if console.key == 0:
        err(NO_ENV)
        return 255

    def operation(state, session, now):
        require_session(session)
        state["session"] = None

    try:
        console.call(operation, touch=False)
    except Failed as error:
        print_error("session", error.errno, "Failed to end session: %s\n")
        return 255
    out("session is ended\n")
    return 0


def cmd_show_session(console, args):
    def operation(state, session, now):
        return dict(require_session(session))

    try:
        session = console.call(operation, need_key=False, touch=False)
    except Failed as error:
        print_error("session", error.errno, "Failed to show session: %s\n")
        return 255
    nodes = set()
    for members in session["groups"].values():
        nodes.update(members)
    out("%s ID: %d@%s, KEY: %d FEATURES: %x NODES: %d\n"
        % (session["name"], session["stamp_ms"], session["nid"], session["key"],
           session["features"], len(nodes)))
    return 0


def cmd_add_group(console, args):
    if console.key == 0:
        err(NO_ENV)
        return 255
    if len(args) < 2:
        return usage("add_group")
    name = args[0]
    if len(name) >= NAME_SIZE:
        err("Name length is limited to %d\n" % (NAME_SIZE - 1))
        return 255

    def create(state, session, now):
        session = require_session(session)
        if name in session["groups"]:
            raise Failed(errno.EEXIST)
        session["groups"][name] = []

    try:
        console.call(create)
    except Failed as error:
        print_error("group", error.errno, "Failed to add group %s: %%s\n" % name)
        return 255
    rc = 0
    added = False
    for word in args[1:]:
        try:
            nids = lnet_model.expand_nids(word)
        except lnet_model.NidError:
            err("Syntax error in \"%s\"\n" % word)
            err("Ignore invalid id list %s\n" % word)
            rc = 255
            continue
        bad = [nid for nid in nids if not lnet_model.valid_nid(nid)]
        if bad:
            for nid in bad:
                err("Invalid nid: %s\n" % nid)
            err("Ignore invalid id list %s\n" % word)
            rc = 255
            continue
        if not nids:
            continue

        def add(state, session, now, nids=nids):
            group = require_session(session)["groups"].setdefault(name, [])
            for nid in nids:
                if nid not in group:
                    group.append(nid)

        console.call(add)
        out("%s are added to session\n" % word)
        added = True
        rc = 0
    if not added:
        err("No nodes added successfully, deleting group %s\n" % name)

        def delete(state, session, now):
            require_session(session)["groups"].pop(name, None)

        console.call(delete)
    return rc


def cmd_del_group(console, args):
    if console.key == 0:
        err(NO_ENV)
        return 255
    if len(args) != 1:
        return usage("del_group")
    name = args[0]

    def operation(state, session, now):
        session = require_session(session)
        if name not in session["groups"]:
            raise Failed(errno.ENOENT)
        for batch in session["batches"].values():
            for test in batch["tests"]:
                if name in (test["from"], test["to"]):
                    raise Failed(errno.EBUSY)
        del session["groups"][name]

    try:
        console.call(operation)
    except Failed as error:
        print_error("group", error.errno, "Failed to delete group: %s\n")
        return 255
    out("Group is deleted\n")
    return 0


def cmd_list_group(console, args):
    if console.key == 0:
        err(NO_ENV)
        return 255
    try:
        options, rest = getopt.gnu_getopt(args, "abduvl", ["active", "busy", "down", "unknown",
                                                           "all"])
    except getopt.GetoptError:
        return usage("list_group")

    def operation(state, session, now):
        return dict(require_session(session)["groups"])

    try:
        groups = console.call(operation)
    except Failed as error:
        print_error("group", error.errno, "Failed to list group: %s\n")
        return 255
    if not rest:
        for position, name in enumerate(groups):
            out("%d) %s\n" % (position + 1, name))
        out("Total %d groups\n" % len(groups))
        return 0
    if options:
        for name in rest:
            if name not in groups:
                break
            out("Group [ %s ]\n" % name)
            for nid in groups[name]:
                out("\t12345-%s: Active\n" % nid)
            out("Total %d nodes [ %s ]\n" % (len(groups[name]), name))
        return 0
    out("\tACTIVE\tBUSY\tDOWN\tUNKNOWN\tTOTAL\n")
    for name in rest:
        if name not in groups:
            break
        count = len(groups[name])
        out("\t%d\t%d\t%d\t%d\t%d\t%s\n" % (count, 0, 0, 0, count, name))
    return 0


def cmd_add_batch(console, args):
    if console.key == 0:
        err(NO_ENV)
        return 255
    if len(args) != 1:
        return usage("add_batch")
    name = args[0]
    if len(name) >= NAME_SIZE:
        err("Name length is limited to %d\n" % (NAME_SIZE - 1))
        return 255

    def operation(state, session, now):
        session = require_session(session)
        if name in session["batches"]:
            raise Failed(errno.EEXIST)
        session["batches"][name] = {"tests": [], "runs": []}

    try:
        console.call(operation)
    except Failed as error:
        print_error("batch", error.errno, "Failed to create batch: %s\n")
        return 255
    return 0


def cmd_list_batch(console, args):
    if console.key == 0:
        err(NO_ENV)
        return 255

    def operation(state, session, now):
        return dict(require_session(session)["batches"])

    try:
        batches = console.call(operation)
    except Failed as error:
        print_error("batch", error.errno, "Failed to list batch: %s\n")
        return 255
    if not args:
        for position, name in enumerate(batches):
            out("%d) %s\n" % (position + 1, name))
        out("Total %d batches\n" % len(batches))
        return 0
    name = args[0]
    if name not in batches:
        print_error("batch", errno.ENOENT, "")
        return 255
    batch = batches[name]
    out("Batch: %s Tests: %d State: %d\n" % (name, len(batch["tests"]),
                                             1 if batch_running(batch) else 0))
    return 0


def parse_bulk(words):
    """lst_get_bulk_param: read|write, size=N[k|m], check=simple|full, off=N."""
    bulk = {"op": "read", "size": 4096, "check": None, "off": 0}
    for word in words:
        lower = word.lower()
        if lower.startswith("check=") or lower.startswith("c="):
            value = word.split("=", 1)[1]
            if value.lower() not in ("full", "simple"):
                err("Unknow flag %s\n" % value)
                return None
            bulk["check"] = value.lower()
        elif lower.startswith("size=") or lower.startswith("s="):
            value = word.split("=", 1)[1]
            digits = ""
            for char in value:
                if not (char.isdigit() or (char in "xX" and digits == "0")
                        or (digits.lower().startswith("0x") and char in "abcdefABCDEF")):
                    break
                digits += char
            try:
                size = int(digits, 0) if digits else 0
            except ValueError:
                size = 0
            if size <= 0:
                err("Invalid size %s\n" % value)
                return None
            suffix = value[len(digits):len(digits) + 1]
            if suffix in ("k", "K"):
                size *= 1024
            elif suffix in ("m", "M"):
                size *= 1024 * 1024
            if size > lnet_model.LNET_MTU:
                err("Size exceed limitation: %d bytes\n" % size)
                return None
            bulk["size"] = size
        elif lower.startswith("off="):
            value = word.split("=", 1)[1]
            offset = atoi(value)
            if offset < 0 or offset % 8:
                err("Invalid offset %s/%d, it should be postive value and multiple of %d\n"
                    % (value, offset, 8))
                return None
            bulk["off"] = offset
        elif lower in ("read", "r"):
            bulk["op"] = "read"
        elif lower in ("write", "w"):
            bulk["op"] = "write"
        else:
            err("Unknow parameter: %s\n" % word)
            return None
    return bulk


def cmd_add_test(console, args):
    if console.key == 0:
        err(NO_ENV)
        return 255
    try:
        options, rest = getopt.getopt(args, "b:c:d:f:l:t:", ["batch=", "concurrency=",
                                                             "distribute=", "from=", "to=",
                                                             "loop="])
    except getopt.GetoptError:
        return usage("add_test")
    batch, concurrency, loop, distribute, source, destination = None, 1, -1, None, None, None
    for option, value in options:
        if option in ("-b", "--batch"):
            batch = value
        elif option in ("-c", "--concurrency"):
            concurrency = atoi(value)
        elif option in ("-d", "--distribute"):
            distribute = value
        elif option in ("-f", "--from"):
            source = value
        elif option in ("-l", "--loop"):
            loop = atoi(value)
        else:
            destination = value
    if not rest or source is None or destination is None:
        return usage("add_test")
    if concurrency <= 0 or concurrency > lnet_model.MAX_CONCURRENCY:
        err("Invalid concurrency of test: %d\n" % concurrency)
        return 255
    batch = batch or DEFAULT_BATCH
    dist, span = 1, 1
    if distribute is not None:
        left, sep, right = distribute.partition(":")
        dist, span = atoi(left), atoi(right)
        if not sep or dist <= 0 or span <= 0:
            err("Invalid distribution: %s\n" % distribute)
            return 255
    test_name = rest[0]
    if test_name == "ping":
        test = {"type": "ping", "op": None, "size": 0, "check": None, "off": 0}
    elif test_name == "brw":
        bulk = parse_bulk(rest[1:])
        if bulk is None:
            err("Failed to add test (%s)\n" % test_name)
            return 255
        test = dict(bulk, type="brw")
    else:
        err("Unknow test name %s\n" % test_name)
        err("Failed to add test (%s)\n" % test_name)
        return 255
    test.update({"from": source, "to": destination, "concurrency": concurrency, "loop": loop,
                 "dist": dist, "span": span})

    def operation(state, session, now):
        session = require_session(session)
        for group in (source, destination):
            if group not in session["groups"]:
                raise Failed(("group", group))
        if batch not in session["batches"]:
            raise Failed(errno.ENOENT)
        if batch_running(session["batches"][batch], console.model, session, now):
            raise Failed(errno.EBUSY)
        session["batches"][batch]["tests"].append(test)

    try:
        console.call(operation)
    except Failed as error:
        if isinstance(error.errno, tuple):
            err("Can't get count of nodes from %s: %s\n" % (error.errno[1],
                                                            os.strerror(errno.ENOENT)))
            return 255
        print_error("test", error.errno, "Failed to add test: %s\n")
        return 255
    out("Test was added successfully\n")
    return 0


def batch_running(batch, model=None, session=None, now=None):
    """Running until stopped, or until every looped test has finished."""
    runs = batch.get("runs", [])
    if not runs or runs[-1][1] is not None:
        return False
    if model is None:
        return True
    durations = [lnet_model.test_duration(t, session["groups"], model) for t in batch["tests"]]
    if not durations or any(d is None for d in durations):
        return True
    return now - runs[-1][0] < max(durations)


def batch_command(console, args, command, with_force):
    if console.key == 0:
        err(NO_ENV)
        return 255
    short, long_options = ("f", ["force"]) if with_force else ("t:", ["timeout="])
    try:
        _, rest = getopt.gnu_getopt(args, short, long_options)
    except getopt.GetoptError:
        return usage(command)
    if len(rest) > 1:
        return usage(command)
    name = rest[0] if rest else DEFAULT_BATCH

    def operation(state, session, now):
        session = require_session(session)
        if name not in session["batches"]:
            raise Failed(errno.ENOENT)
        runs = session["batches"][name].setdefault("runs", [])
        if command == "run":
            if not runs or runs[-1][1] is not None:
                runs.append([now, None])
        elif runs and runs[-1][1] is None:
            runs[-1][1] = now

    try:
        console.call(operation)
    except Failed as error:
        if error.errno == errno.ENOENT:
            err("Failed to get count of nodes from %s: %s\n" % (name, os.strerror(errno.ENOENT)))
        else:
            print_error("batch", error.errno, "Failed to %s batch: %%s\n"
                        % ("start" if command == "run" else "stop"))
        return 255
    out("%s is running now\n" % name if command == "run" else "Batch is stopped\n")
    return 0


def resolve_names(session, names):
    """Group name or NID list -> (label, nids); raises Failed for unknown ones."""
    resolved = []
    for name in names:
        if name in session["groups"]:
            resolved.append((name, list(session["groups"][name])))
            continue
        try:
            nids = lnet_model.expand_nids(name)
        except lnet_model.NidError:
            nids = []
        if not nids or not all(lnet_model.valid_nid(n) for n in nids):
            raise Failed(("nodes", name))
        resolved.append((name, nids))
    return resolved


def cmd_stat(console, args):
    if console.key == 0:
        err(NO_ENV)
        return 255
    try:
        options, rest = getopt.gnu_getopt(
            args, "t:d:lcbarwgnxm",
            ["timeout=", "delay=", "count=", "lnet", "rpc", "bw", "rate", "read", "write", "avg",
             "min", "max", "mbs"])
    except getopt.GetoptError:
        return usage("stat")
    timeout, delay, count, bwrt, rdwr, kinds, mbs = 5, 5, -1, 0, 0, -1, False
    for option, value in options:
        if option in ("-t", "--timeout"):
            timeout = atoi(value)
        elif option in ("-d", "--delay"):
            delay = atoi(value)
        elif option == "--count":
            count = atoi(value)
        elif option in ("-b", "--bw"):
            bwrt |= 1
        elif option in ("-a", "--rate"):
            bwrt |= 2
        elif option in ("-r", "--read"):
            rdwr |= 1
        elif option in ("-w", "--write"):
            rdwr |= 2
        elif option in ("-g", "--avg", "-n", "--min", "-x", "--max"):
            bit = 1 if option in ("-g", "--avg") else 2 if option in ("-n", "--min") else 4
            kinds = bit if kinds == -1 else kinds | bit
        elif option in ("-m", "--mbs"):
            mbs = True
    if not rest:
        return usage("stat")
    if timeout <= 0 or delay <= 0:
        err("Invalid timeout or delay value\n")
        return 255
    if count < -1:
        err("Invalid count value\n")
        return 255
    if count != -1:
        count += 1  # one extra sample as the baseline of the first difference

    def sample(state, session, now):
        session = require_session(session)
        targets = resolve_names(session, rest)
        counters = lnet_model.node_counters(session, console.model, now)
        return now, [(label, [counters.get(nid, [0.0] * 4) for nid in nids])
                     for label, nids in targets]

    previous = None
    last = 0.0
    while count == -1 or count > 0:
        wait = last + delay - time.time()
        if last and wait > 0:
            time.sleep(wait)
        last = time.time()
        try:
            current = console.call(sample)
        except Failed as error:
            if isinstance(error.errno, tuple):
                err("Failed to get count of nodes from %s: %s\n"
                    % (error.errno[1], os.strerror(errno.ENOENT)))
            else:
                print_error("stat", error.errno, "Failed to stat: %s\n")
            return 255
        if previous is not None:
            print_sample(previous, current, bwrt, rdwr, kinds, mbs)
        previous = current
        if count > 0:
            count -= 1
    return 0


def print_sample(previous, current, bwrt, rdwr, kinds, mbs):
    then, old_groups = previous
    now, new_groups = current
    delta = now - then
    divisor = 1000.0 * 1000.0 if mbs else 1048576.0
    units = "MB/s  " if mbs else "MiB/s "
    for (label, old_nodes), (_, new_nodes) in zip(old_groups, new_groups):
        per_node = []
        for old, new in zip(old_nodes, new_nodes):
            per_node.append({
                "rate": ((new[2] - old[2]) / delta, (new[0] - old[0]) / delta),
                "bw": ((new[3] - old[3]) / divisor / delta, (new[1] - old[1]) / divisor / delta),
            })
        if not per_node:
            continue
        sections = [("Rates", "rate"), ("Bandwidth", "bw")]
        if bwrt == 1:
            sections = sections[1:]
        elif bwrt == 2:
            sections = sections[:1]
        directions = [(0, "R"), (1, "W")]
        if rdwr == 1:
            directions = directions[:1]
        elif rdwr == 2:
            directions = directions[1:]
        for title, key in sections:
            out("[LNet %s of %s]\n" % (title, label))
            for index, letter in directions:
                values = [entry[key][index] for entry in per_node]
                average = sum(values) / len(values)
                minimum = maximum = 0.0
                for value in values:
                    # lst_cal_lnet_stat treats a zero minimum as "not set yet"
                    if minimum > value or minimum == 0:
                        minimum = value
                    if maximum < value:
                        maximum = value
                line = "[%s] " % letter
                if key == "rate":
                    if kinds & 1:
                        line += "Avg: %-8.0f RPC/s " % average
                    if kinds & 2:
                        line += "Min: %-8.0f RPC/s " % minimum
                    if kinds & 4:
                        line += "Max: %-8.0f RPC/s" % maximum
                else:
                    if kinds & 1:
                        line += "Avg: %-8.2f %s" % (average, units)
                    if kinds & 2:
                        line += "Min: %-8.2f %s" % (minimum, units)
                    if kinds & 4:
                        line += "Max: %-8.2f %s" % (maximum, units)
                out(line + "\n")


def cmd_show_error(console, args):
    if console.key == 0:
        err(NO_ENV)
        return 255
    try:
        _, rest = getopt.gnu_getopt(args, "s", ["session"])
    except getopt.GetoptError:
        return usage("show_error")
    if not rest:
        return usage("show_error")

    def operation(state, session, now):
        return resolve_names(require_session(session), rest)

    try:
        targets = console.call(operation)
    except Failed as error:
        if isinstance(error.errno, tuple):
            err("Failed to get count of nodes from %s: %s\n"
                % (error.errno[1], os.strerror(errno.ENOENT)))
        else:
            print_error("session", error.errno, "Failed to show errors: %s\n")
        return 255
    for label, nids in targets:
        out("%s:\n" % label)
        # The model has no lossy links: no node reports brw, ping or RPC errors.
        out("Total %d error nodes in %s\n" % (0, label))
    return 0


COMMANDS = {
    "new_session": cmd_new_session,
    "end_session": cmd_end_session,
    "show_session": cmd_show_session,
    "add_group": cmd_add_group,
    "del_group": cmd_del_group,
    "list_group": cmd_list_group,
    "add_batch": cmd_add_batch,
    "list_batch": cmd_list_batch,
    "add_test": cmd_add_test,
    "run": lambda console, args: batch_command(console, args, "run", False),
    "stop": lambda console, args: batch_command(console, args, "stop", True),
    "stat": cmd_stat,
    "show_error": cmd_show_error,
}


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        node = Node.from_env()
    except SimError as error:
        err("lst: %s\n" % error)
        return 1
    node.fault_gate("lst", argv)
    features = os.environ.get("LST_FEATURES")
    if features:
        try:
            value = int(features, 16)
        except ValueError:
            value = 0
        if value & ~FEATS_MASK:
            err("Unsupported session features %x, only support these features so far: %x\n"
                % (value & ~FEATS_MASK, FEATS_MASK))
            return 255
    if not argv:
        out("lst > \n")
        return 0
    handler = COMMANDS.get(argv[0])
    if handler is None:
        out("Try interactive use without arguments or use one of:\n")
        for name in list(COMMANDS) + ["help", "--list-commands"]:
            out("\"%s\"\n" % name)
        out("as argument.\n")
        return 255
    console = Console(node, atoi(os.environ.get("LST_SESSION")))
    try:
        return handler(console, argv[1:])
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
