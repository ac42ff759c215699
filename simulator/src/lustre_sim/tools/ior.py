"""ior (hpc/ior) on a simulated node: real file I/O, IOR's report.

Run alone it is one task; ``mpirun -np N ior ...`` and ``srun -n N ior ...``
run it with N tasks (a launcher may also pass the rank and node counts in
LUSTRE_SIM_MPI_SIZE/NODES). ``mpirun`` also says which host each rank is
placed on; the config's ``ior: {client_mib_s: {HOST: MiB/s}}`` then caps the
I/O of that host's ranks, a slow client by construction.
"""

import os
import signal
import sys

from lustre_sim import ior_engine
from lustre_sim.node import Node, SimError
from lustre_sim.tools.mdtest import NODES_ENV, SIZE_ENV


def _terminate(signum, frame):
    # Like an MPI job killed by its launcher: the ranks (daemon children) go with us.
    sys.exit(128 + signum)


def ior_version(node):
    section = node.config.get("ior") or {}
    return str(section.get("version") or ior_engine.SUPPORTED_VERSIONS[0])


def main(argv=None, program=None, size=None, nodes=None, hosts=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    program = program or os.environ.get("LUSTRE_SIM_ARGV0") or "ior"
    try:
        node = Node.from_env()
    except SimError as error:
        sys.stderr.write("ior: %s\n" % error)
        return 1
    node.fault_gate("ior", argv)
    if size is None:
        size = int(os.environ.get(SIZE_ENV) or 1)
    if nodes is None:
        nodes = int(os.environ.get(NODES_ENV) or 1)
    previous = signal.signal(signal.SIGTERM, _terminate)
    pid = os.getpid()
    node.register_helper(pid, " ".join([program] + argv))
    try:
        limits = (node.config.get("ior") or {}).get("client_mib_s") or {}
        return ior_engine.run(argv, program=program, size=size, nodes=nodes, version=ior_version(node),
                              hosts=hosts, client_mib_s=limits)
    finally:
        node.unregister_helper(pid)
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
