"""What every part of lctl shares: return codes, errors, number parsing, verbosity, device lines.

Rules and texts follow ``lustre/utils/{lctl.c,obd.c}``.  A leaf module: it
imports nothing of the package, so that the command table (``lctl_commands``)
and the commands it dispatches to (``lctl_params``, ``echo_io``,
``lctl_threads``) all import it and not each other.
"""

import os
import time

CMD_HELP = 4
BAD_VERBOSE = -999999999


def strerror(code):
    return os.strerror(code)


class LctlError(Exception):
    """An ioctl-level failure carrying an errno."""

    def __init__(self, code):
        super().__init__(strerror(code))
        self.errno = code


def get_verbose(session, func, arg):
    """obd.c get_verbose: parse and announce the verbosity."""
    if arg is None or arg.startswith("v"):
        verbose = 1
    elif arg[0] in "sq":
        verbose = 0
    else:
        try:
            verbose = c_strtol(arg)
        except ValueError:
            session.err.write("error: %s: bad verbose option '%s'\n"
                              % (session.ctx.cmdname(func), arg))
            return BAD_VERBOSE
    if verbose < 0:
        session.out.write("Print status every %d seconds\n" % -verbose)
    elif verbose == 1:
        session.out.write("Print status every operation\n")
    elif verbose > 1:
        session.out.write("Print status every %d operations\n" % verbose)
    return verbose


def c_strtol(text):
    """strtoul(text, &end, 0) requiring the whole string (raises ValueError otherwise)."""
    text = text.strip()
    sign = 1
    body = text
    if body[:1] in "+-":
        sign = -1 if body[0] == "-" else 1
        body = body[1:]
    if not body:
        raise ValueError(text)
    if body.lower().startswith("0x"):
        value = int(body[2:], 16)
    elif body.startswith("0") and len(body) > 1:
        value = int(body[1:], 8)
    else:
        value = int(body, 10)
    return sign * value


def c_strtol_prefix(text):
    """strtoul(text, &end, 0): (value, rest) reading the longest numeric prefix."""
    index = 0
    if text[:1] in "+-":
        index = 1
    base = 10
    if text[index:index + 2].lower() == "0x":
        base = 16
        digits = "0123456789abcdefABCDEF"
        start = index + 2
    elif text[index:index + 1] == "0":
        base = 8
        digits = "01234567"
        start = index
    else:
        digits = "0123456789"
        start = index
    end = start
    while end < len(text) and text[end] in digits:
        end += 1
    if end == start:
        if base == 16:  # "0x" alone parses as 0 with end after the 0
            return 0, text[index + 1:]
        return 0, text
    value = int(text[start:end], base)
    if text[:1] == "-":
        value = -value
    return value, text[end:]


def be_verbose(verbose, state, num, num_total):
    """obd.c be_verbose; ``state`` holds next_time/next_num."""
    if not verbose:
        return False
    now = time.time()
    if verbose > 0 and (num >= state["next_num"] or num >= num_total):
        state["next_num"] += verbose
        state["next_time"] = now - verbose
        return True
    if verbose < 0 and now - state["next_time"] >= 0.0:
        state["next_time"] = now - verbose
        state["next_num"] = num
        return True
    return False


def device_line(device):
    return "%3d %s %s %s %s %d" % (device["index"], device["status"], device["type"],
                                   device["name"], device["uuid"], device["refcount"])


def devices_yaml(devices):
    lines = ["devices:"]
    for device in devices:
        lines.append("- index: %d" % device["index"])
        for key in ("status", "type", "name", "uuid"):
            lines.append("  %s: %s" % (key, device[key]))
        lines.append("  refcount: %d" % device["refcount"])
    return "\n".join(lines) + "\n"
