"""The simulated batch system and environment modules: configuration and shared state.

Configuration (optional sections of the ``lustre-sim init --config`` file):

- ``slurm: {partitions: [debug], accounts: [], nodes: 4}``: the partitions
  (the first is the default), the accounts a job may name (empty: any) and
  how many nodes the cluster has (an allocation may not ask for more).
- ``modules: {available: [gcc, openmpi, ior, mdtest]}``: the module names
  ``module load`` knows (``name`` or ``name/version``).
- ``ior: {version: "3.3.0"}``: which IOR release's report ``ior`` imitates.

``module load`` records, per calling shell (its parent process id), what it
loaded in ``state/envmodules.json``; ``srun`` records every job it ran in
``state/slurm.json`` with the modules loaded by the same shell, so a test can
see that the modules were loaded in the shell that started the job.
``salloc`` and ``sbatch`` record the allocations they make under
``allocations`` in the same file, and ``scancel`` ends them (see below).
"""

import os
import signal
import time

from .errors import SimError
from .processes import process_start_ticks

IOR_VERSIONS = ("3.3.0", "4.0.0")
DEFAULT_PARTITIONS = ["debug"]
DEFAULT_MODULES = ["gcc", "openmpi", "ior", "mdtest"]
SLURM_KEYS = ("partitions", "accounts", "nodes")


def _names(section, key, value):
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        raise SimError("%s.%s must be a list of names" % (section, key))
    return [item.strip() for item in value]


def normalise_slurm(section):
    if section is None:
        return None
    if not isinstance(section, dict) or set(section) - set(SLURM_KEYS):
        raise SimError("slurm must be a mapping with only %s" % ", ".join(SLURM_KEYS))
    partitions = _names("slurm", "partitions", section.get("partitions", DEFAULT_PARTITIONS))
    if not partitions:
        raise SimError("slurm.partitions must name at least one partition")
    nodes = section.get("nodes", 1)
    if not isinstance(nodes, int) or isinstance(nodes, bool) or nodes < 1:
        raise SimError("slurm.nodes must be a positive integer, got %r" % (nodes,))
    return {"partitions": partitions, "accounts": _names("slurm", "accounts", section.get("accounts", [])),
            "nodes": nodes}


def normalise_modules(section):
    if section is None:
        return None
    if not isinstance(section, dict) or set(section) - {"available"}:
        raise SimError("modules must be a mapping with only 'available'")
    return {"available": _names("modules", "available", section.get("available", DEFAULT_MODULES))}


def normalise_ior(section):
    if section is None:
        return None
    if not isinstance(section, dict) or set(section) - {"version", "client_mib_s"}:
        raise SimError("ior must be a mapping with only 'version' and 'client_mib_s'")
    version = str(section.get("version") or IOR_VERSIONS[0])
    if version not in IOR_VERSIONS:
        raise SimError("ior.version must be one of %s, got %r" % (", ".join(IOR_VERSIONS), version))
    # A slow client by construction: {host: MiB/s} caps the I/O of the ranks mpirun places on that host.
    limits = section.get("client_mib_s") or {}
    if not isinstance(limits, dict) or not all(
            isinstance(rate, (int, float)) and not isinstance(rate, bool) and rate > 0 for rate in limits.values()):
        raise SimError("ior.client_mib_s must map host names to positive MiB/s")
    result = {"version": version}
    if limits:
        result["client_mib_s"] = dict((str(host), float(rate)) for host, rate in limits.items())
    return result


SECTIONS = (("slurm", normalise_slurm), ("modules", normalise_modules), ("ior", normalise_ior))


def slurm_config(node):
    return node.config.get("slurm") or normalise_slurm({})


def available_modules(node):
    return (node.config.get("modules") or normalise_modules({}))["available"]


def loaded_modules(node, shell_pid):
    return list(node.read_state("envmodules").get(str(shell_pid), []))


# --------------------------------------------------------------------------
# Allocations made by salloc and sbatch (``state/slurm.json``, key ``allocations``)
#
# Each allocation is a record: job_id, name, kind (salloc or sbatch), nodes, per_node, partition, account, uid,
# state (RUNNING, then COMPLETED, FAILED or CANCELLED), exit_code, pid and proc_start of the process that holds
# the job (salloc itself, or the batch job's runner), and for sbatch its output file. ``scancel`` stops that
# process's group and marks the job CANCELLED; a record left RUNNING is a job left behind.

ACTIVE = ("PENDING", "RUNNING")
SUBMIT_FAILED = {"salloc": "Job submit/allocate failed", "sbatch": "Batch job submission failed"}


def request_problem(config, tool, partition, account, nodes):
    """Slurm's refusal of an allocation request (``tool``: salloc or sbatch), or None."""
    failed = "%s: error: %s: " % (tool, SUBMIT_FAILED[tool])
    if partition is not None and partition not in config["partitions"]:
        return ("%s: error: invalid partition specified: %s\n%sInvalid partition name specified"
                % (tool, partition, failed))
    if account is not None and config["accounts"] and account not in config["accounts"]:
        return failed + "Invalid account or account/partition combination specified"
    if (nodes or 1) > config["nodes"]:
        return failed + "Requested node configuration is not available"
    return None


def submit(node, record):
    """Record a new allocation (RUNNING); returns its job id (shared with srun's own job ids)."""
    with node.state("slurm") as state:
        job_id = int(state.get("next_job_id", 1001))
        state["next_job_id"] = job_id + 1
        entry = dict(record, job_id=job_id, state="RUNNING", submitted=time.time())
        state.setdefault("allocations", []).append(entry)
    return job_id


def allocation(node, job_id):
    for entry in node.read_state("slurm").get("allocations", []):
        if entry["job_id"] == int(job_id):
            return entry
    return None


def update_allocation(node, job_id, ended=False, **changes):
    """Change a job's record; with ``ended`` its final state is kept when scancel already set CANCELLED."""
    with node.state("slurm") as state:
        for entry in state.get("allocations", []):
            if entry["job_id"] == int(job_id):
                if ended and entry["state"] not in ACTIVE:
                    changes.pop("state", None)
                entry.update(changes)
                if ended:
                    entry.setdefault("ended", time.time())
                return entry
    return None


def active_allocations(node):
    """The jobs not ended: what a killed survey would leave behind."""
    return [entry for entry in node.read_state("slurm").get("allocations", []) if entry["state"] in ACTIVE]


def allocation_environment(entry):
    """What a process of the job sees: Slurm's SLURM_* variables of the allocation."""
    env = {"SLURM_JOB_ID": str(entry["job_id"]), "SLURM_JOBID": str(entry["job_id"]),
           "SLURM_JOB_NAME": entry.get("name") or "", "SLURM_JOB_NUM_NODES": str(entry["nodes"]),
           "SLURM_NNODES": str(entry["nodes"]), "SLURM_JOB_PARTITION": entry["partition"]}
    if entry.get("account"):
        env["SLURM_JOB_ACCOUNT"] = entry["account"]
    if entry.get("per_node"):
        env["SLURM_NTASKS_PER_NODE"] = str(entry["per_node"])
    return env


def stop_job_processes(entry, grace_s=5.0):
    """SIGTERM the process group of the job's holder (salloc, or the batch runner), SIGKILL after the grace."""
    pid = entry.get("pid")
    if not pid or process_start_ticks(pid) != entry.get("proc_start"):
        return
    try:
        group = os.getpgid(int(pid)) == int(pid)
    except OSError:
        return
    for signum in (signal.SIGTERM, signal.SIGKILL):
        try:
            if group:
                os.killpg(int(pid), signum)
            else:
                os.kill(int(pid), signum)
        except OSError:
            return
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline:
            if process_start_ticks(pid) != entry.get("proc_start") or _zombie(pid):
                return
            time.sleep(0.05)


def _zombie(pid):
    try:
        with open("/proc/%d/stat" % int(pid)) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True
