"""srun (Slurm) on a simulated node.

Inside an allocation (``SLURM_JOB_ID`` set, as under ``salloc`` or in an
``sbatch`` script) the job step gets the allocation's node count; outside one
srun makes its own allocation from ``-N``, after checking ``-p`` against the
configured partitions, ``-A`` against the accounts and the node count against
the cluster's, with Slurm's messages. All tasks run on this machine: ``ior``
and ``mdtest`` run as one job of N ranks on the allocated node count, any
other program is started N times with SLURM_PROCID/SLURM_NTASKS/SLURM_NODEID.
Each job is recorded in ``state/slurm.json`` (with the modules the calling
shell loaded, see ``module``).
"""

import os
import subprocess
import sys
import time

from lustre_sim.batch import loaded_modules, slurm_config
from lustre_sim.node import Node, SimError

WITH_VALUE = {"-N": "nodes", "--nodes": "nodes", "-n": "ntasks", "--ntasks": "ntasks",
              "--ntasks-per-node": "per_node", "-p": "partition", "--partition": "partition",
              "-A": "account", "--account": "account", "-t": None, "--time": None, "-J": None,
              "--job-name": None, "-c": None, "--cpus-per-task": None, "--mpi": None, "--export": None,
              "-D": "chdir", "--chdir": "chdir", "-o": None, "--output": None, "-e": None, "--error": None,
              "-w": None, "--nodelist": None, "--distribution": None, "-m": None, "--mem": None}
FLAGS = {"-l", "--label", "--exclusive", "-u", "--unbuffered", "-v", "--verbose", "-Q", "--quiet", "--overlap"}


class LaunchError(Exception):
    pass


def parse(argv, tool="srun", with_value=None, flags=None):
    """The options before the program (``tool``'s table, srun's by default) and ``program``, the words after."""
    with_value = WITH_VALUE if with_value is None else with_value
    flags = FLAGS if flags is None else flags
    options = dict((key, None) for key in set(with_value.values()) if key)
    options.update({"nodes": None, "ntasks": None, "per_node": None, "partition": None, "account": None,
                    "chdir": None, "flags": []})
    position = 0
    while position < len(argv):
        word = argv[position]
        if not word.startswith("-"):
            break
        name, sep, attached = word.partition("=")
        if word == "--":
            position += 1
            break
        if name in flags:
            options["flags"].append(name)
            position += 1
            continue
        if name not in with_value:
            raise LaunchError("%s: unrecognized option '%s'\nTry \"%s --help\" for more information"
                              % (tool, word, tool))
        if sep:
            value = attached
            position += 1
        elif len(name) == 2 and len(word) > 2:
            value = word[2:]
            position += 1
        else:
            if position + 1 >= len(argv):
                raise LaunchError("%s: option '%s' requires an argument" % (tool, name))
            value = argv[position + 1]
            position += 2
        key = with_value[name]
        if key in ("nodes", "ntasks", "per_node"):
            try:
                options[key] = int(value.split("-")[0])
            except ValueError:
                raise LaunchError("%s: error: Invalid numeric value \"%s\" for %s." % (tool, value, name))
        elif key:
            options[key] = value
    options["program"] = argv[position:]
    return options


def allocate(options, config):
    """(nodes, partition, account, job id) for this step; LaunchError with Slurm's message when refused."""
    inside = os.environ.get("SLURM_JOB_ID")
    if inside:
        allocated = int(os.environ.get("SLURM_JOB_NUM_NODES") or os.environ.get("SLURM_NNODES") or 1)
        nodes = options["nodes"] or allocated
        if nodes > allocated:
            raise LaunchError("srun: error: Only allocated %d nodes asked for %d" % (allocated, nodes))
        return nodes, os.environ.get("SLURM_JOB_PARTITION"), os.environ.get("SLURM_JOB_ACCOUNT"), int(inside)
    partition = options["partition"] or config["partitions"][0]
    if partition not in config["partitions"]:
        raise LaunchError("srun: error: invalid partition specified: %s\n"
                          "srun: error: Unable to allocate resources: Invalid partition name specified" % partition)
    account = options["account"]
    if account is not None and config["accounts"] and account not in config["accounts"]:
        raise LaunchError("srun: error: Unable to allocate resources: "
                          "Invalid account or account/partition combination specified")
    nodes = options["nodes"] or 1
    if nodes > config["nodes"]:
        raise LaunchError("srun: error: Unable to allocate resources: Requested node configuration is not available")
    return nodes, partition, account, None


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        node = Node.from_env()
    except SimError as error:
        sys.stderr.write("srun: %s\n" % error)
        return 1
    node.fault_gate("srun", argv)
    try:
        options = parse(argv)
        if not options["program"]:
            raise LaunchError("srun: fatal: No command given to execute.")
        nodes, partition, account, job_id = allocate(options, slurm_config(node))
    except LaunchError as error:
        sys.stderr.write("%s\n" % error)
        return 1
    if options["ntasks"] is not None:
        ntasks = options["ntasks"]
    else:
        ntasks = nodes * (options["per_node"] or 1)
    if ntasks < nodes:
        sys.stderr.write("srun: error: Invalid node count specification: %d tasks on %d nodes\n" % (ntasks, nodes))
        return 1
    # The shell that loaded the modules is our parent, or ourselves when it ran "exec srun ...".
    modules = loaded_modules(node, os.getpid()) or loaded_modules(node, os.getppid())
    with node.state("slurm") as state:
        job_id = job_id or int(state.get("next_job_id", 1001))
        state["next_job_id"] = max(int(state.get("next_job_id", 1001)), job_id + 1)
        record = {"job_id": job_id, "argv": argv, "program": options["program"], "nodes": nodes, "ntasks": ntasks,
                  "partition": partition, "account": account, "modules": modules,
                  "uid": os.geteuid(), "started": time.time()}
        state.setdefault("jobs", []).append(record)
    if options["chdir"]:
        os.chdir(options["chdir"])
    os.environ.update({"SLURM_JOB_ID": str(job_id), "SLURM_JOB_NUM_NODES": str(nodes), "SLURM_NNODES": str(nodes),
                       "SLURM_NTASKS": str(ntasks), "SLURM_NPROCS": str(ntasks)})
    status = launch(options["program"], ntasks, nodes)
    with node.state("slurm") as state:
        for job in state.get("jobs", []):
            if job["job_id"] == job_id and job.get("status") is None and job["argv"] == argv:
                job["status"] = status
                job["finished"] = time.time()
                break
    return status


def launch(program, ntasks, nodes):
    name = os.path.basename(program[0])
    if name in ("ior", "mdtest"):
        # Deferred for start-up time: only an ior or mdtest launch needs their engines (multiprocessing and all).
        from lustre_sim.tools import ior, mdtest
        tool = ior if name == "ior" else mdtest
        status = tool.main(program[1:], program=program[0], size=ntasks, nodes=nodes)
        sys.stdout.flush()
        return status
    children = []
    per_node = -(-ntasks // nodes)
    for rank in range(ntasks):
        environment = dict(os.environ, SLURM_PROCID=str(rank), SLURM_NODEID=str(rank // per_node),
                           SLURM_LOCALID=str(rank % per_node), PMIX_RANK=str(rank))
        try:
            children.append(subprocess.Popen(program, env=environment))
        except OSError as error:
            for child in children:
                child.kill()
            sys.stderr.write("slurmstepd: error: execve(): %s: %s\nsrun: error: task %d launch failed\n"
                             % (program[0], error.strerror, rank))
            return 2
    status = 0
    for child in children:
        code = child.wait()
        if code and not status:
            status = code
    return status


if __name__ == "__main__":
    sys.exit(main())
