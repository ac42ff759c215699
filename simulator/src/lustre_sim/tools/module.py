"""``module`` (Lmod / Environment Modules) on a simulated node.

``module load|add NAME...`` checks every name against the configured list
(``name`` or ``name/version``) and records it for the calling shell (the
parent process), ``unload|rm``, ``purge``, ``list`` and ``avail`` work on
that record. A real ``module`` changes the calling shell's environment; here
the record is what ``srun`` reads to report the modules of the shell it was
started from. An unknown name fails as Lmod does, naming it, with status 1.
"""

import os
import sys

from lustre_sim.batch import available_modules
from lustre_sim.node import Node, SimError

UNKNOWN = """Lmod has detected the following error:  The following module(s) are unknown: %s

Please check the spelling or version number. Also try "module spider ..."
It is also possible your cache file is out-of-date; it may help to try:
  $ module --ignore_cache load %s
"""


def _known(name, available):
    return any(name == item or item.startswith(name + "/") or name.startswith(item + "/") for item in available)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        node = Node.from_env()
    except SimError as error:
        sys.stderr.write("module: %s\n" % error)
        return 1
    node.fault_gate("module", argv)
    words = [word for word in argv if not word.startswith("-")]
    if not words:
        sys.stderr.write("Usage: module [options] sub-command [args ...]\n")
        return 1
    command, names = words[0], words[1:]
    shell = str(os.getppid())
    available = available_modules(node)
    if command in ("load", "add", "try-load"):
        unknown = [name for name in names if not _known(name, available)]
        if unknown and command != "try-load":
            quoted = " ".join('"%s"' % name for name in unknown)
            sys.stderr.write(UNKNOWN % (quoted, quoted))
            return 1
        with node.state("envmodules") as state:
            loaded = state.setdefault(shell, [])
            loaded.extend(name for name in names if name not in loaded and name not in unknown)
        return 0
    if command in ("unload", "rm", "del"):
        with node.state("envmodules") as state:
            state[shell] = [name for name in state.get(shell, []) if name not in names]
        return 0
    if command == "purge":
        with node.state("envmodules") as state:
            state.pop(shell, None)
        return 0
    if command == "list":
        loaded = node.read_state("envmodules").get(shell, [])
        if not loaded:
            sys.stderr.write("No modules loaded\n")
        else:
            sys.stderr.write("\nCurrently Loaded Modules:\n  %s\n\n"
                             % "   ".join("%d) %s" % (i + 1, name) for i, name in enumerate(loaded)))
        return 0
    if command in ("avail", "av", "spider"):
        sys.stderr.write("\n---- /opt/modulefiles ----\n   %s\n\n" % "    ".join(available))
        return 0
    sys.stderr.write("Lmod has detected the following error:  Invalid command: %s\n" % command)
    return 1


if __name__ == "__main__":
    sys.exit(main())
