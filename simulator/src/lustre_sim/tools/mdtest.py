"""mdtest (hpc/ior) on a simulated node: real metadata operations, mdtest's report.

Run alone it is one task; ``mpirun -np N mdtest ...`` runs it with N tasks
(the launcher passes the rank count in LUSTRE_SIM_MPI_SIZE/NODES).
"""

import os
import signal
import sys

from lustre_sim import mdtest_engine
from lustre_sim.node import Node, SimError

SIZE_ENV = "LUSTRE_SIM_MPI_SIZE"
NODES_ENV = "LUSTRE_SIM_MPI_NODES"


def _terminate(signum, frame):
    # Like an MPI job killed by its launcher: the ranks (daemon children) go with us.
    sys.exit(128 + signum)


def mdtest_version(node):
    section = node.config.get("mdtest") or {}
    return str(section.get("version") or "3.3.0")


def metadata_rate(node, tasks):
    """The ops/s the first MDT with a concurrency curve allows ``tasks`` tasks (None: no MDT has a curve)."""
    for target in node.targets("mdt"):
        if target.get("curve"):
            return node.target_rate(target["name"], tasks, "mdtest")
    return None


def main(argv=None, program=None, size=None, nodes=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    program = program or os.environ.get("LUSTRE_SIM_ARGV0") or "mdtest"
    try:
        node = Node.from_env()
    except SimError as error:
        sys.stderr.write("mdtest: %s\n" % error)
        return 1
    node.fault_gate("mdtest", argv)
    if size is None:
        size = int(os.environ.get(SIZE_ENV) or 1)
    if nodes is None:
        nodes = int(os.environ.get(NODES_ENV) or 1)
    previous = signal.signal(signal.SIGTERM, _terminate)
    pid = os.getpid()
    node.register_helper(pid, " ".join([program] + argv))
    try:
        return mdtest_engine.run(argv, program=program, size=size, nodes=nodes,
                                 version=mdtest_version(node), rate_ops_s=metadata_rate(node, size))
    finally:
        node.unregister_helper(pid)
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
