"""salloc (Slurm) on a simulated node.

Checks ``-p`` against the configured partitions (the first is the default),
``-A`` against the accounts and ``-N`` against the cluster's node count, with
Slurm's messages; then records the allocation in ``state/slurm.json``
(``allocations``), says ``salloc: Granted job allocation N`` on stderr and
runs the command (default ``$SHELL``) on this host with the allocation's
``SLURM_*`` variables, so that an ``srun`` inside takes its node count. When
the command ends the allocation is relinquished with its exit status; a
SIGTERM stops the command first. salloc killed outright leaves its
allocation RUNNING until ``scancel`` ends it, as a lost salloc leaves a job
to the scheduler.
"""

import os
import pwd
import signal
import subprocess
import sys

from lustre_sim.batch import allocation, allocation_environment, request_problem, slurm_config, submit, update_allocation
from lustre_sim.node import Node, SimError, process_start_ticks
from lustre_sim.tools.srun import LaunchError, parse

WITH_VALUE = {"-N": "nodes", "--nodes": "nodes", "-n": "ntasks", "--ntasks": "ntasks",
              "--ntasks-per-node": "per_node", "-p": "partition", "--partition": "partition",
              "-A": "account", "--account": "account", "-J": "name", "--job-name": "name", "-t": None,
              "--time": None, "-c": None, "--cpus-per-task": None, "-D": "chdir", "--chdir": "chdir",
              "-w": None, "--nodelist": None, "--mem": None, "--export": None}
FLAGS = {"--exclusive", "-Q", "--quiet", "-v", "--verbose", "--no-shell"}


def user_name(uid):
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        node = Node.from_env()
    except SimError as error:
        sys.stderr.write("salloc: %s\n" % error)
        return 1
    node.fault_gate("salloc", argv)
    try:
        options = parse(argv, "salloc", WITH_VALUE, FLAGS)
    except LaunchError as error:
        sys.stderr.write("%s\n" % error)
        return 1
    config = slurm_config(node)
    problem = request_problem(config, "salloc", options["partition"], options["account"], options["nodes"])
    if problem:
        sys.stderr.write(problem + "\n")
        return 1
    command = options["program"] or [os.environ.get("SHELL") or "/bin/sh"]
    pid = os.getpid()
    job_id = submit(node, {"kind": "salloc", "name": options["name"] or os.path.basename(command[0]),
                           "nodes": options["nodes"] or 1, "per_node": options["per_node"],
                           "partition": options["partition"] or config["partitions"][0],
                           "account": options["account"], "uid": os.geteuid(), "user": user_name(os.geteuid()),
                           "command": command, "pid": pid, "proc_start": process_start_ticks(pid)})
    sys.stderr.write("salloc: Granted job allocation %d\n" % job_id)
    sys.stderr.flush()
    env = dict(os.environ, **allocation_environment(allocation(node, job_id)))
    stopped = []

    def on_signal(signum, frame):
        stopped.append(signum)
        if child is not None and child.poll() is None:
            child.send_signal(signal.SIGTERM)

    child = None
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    try:
        child = subprocess.Popen(command, env=env, cwd=options["chdir"] or None)
    except OSError as error:
        sys.stderr.write("salloc: error: %s: %s\n" % (command[0], error.strerror))
        update_allocation(node, job_id, ended=True, state="FAILED", exit_code=127)
        sys.stderr.write("salloc: Relinquishing job allocation %d\n" % job_id)
        return 1
    while True:
        try:
            status = child.wait()
            break
        except InterruptedError:  # pragma: no cover - PEP 475 retries
            continue
    code = status if status >= 0 else 128 - status
    update_allocation(node, job_id, ended=True, state="CANCELLED" if stopped else "COMPLETED", exit_code=code)
    sys.stderr.write("salloc: Relinquishing job allocation %d\n" % job_id)
    return code


if __name__ == "__main__":
    sys.exit(main())
