"""``lctl`` imitation: command-line and stdin-driven sessions on the simulated node."""

import signal
import sys

from ..lctl_commands import Session
from ..node import Node, SimError


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    # Like the C tool, die quietly on a closed pipe (lctl dl | head).
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        node = Node.from_env()
    except SimError as error:
        sys.stderr.write("lctl: %s\n" % error)
        return 2
    node.fault_gate("lctl", argv)
    try:
        sys.stdout.reconfigure(line_buffering=True)
    except (AttributeError, ValueError):
        pass
    session = Session(node)
    if argv:
        rc = session.execarg(argv)
    else:
        rc = session.commands_from(sys.stdin)
    sys.stdout.flush()
    return -rc if rc < 0 else rc


if __name__ == "__main__":
    sys.exit(main())
