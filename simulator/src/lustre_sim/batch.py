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
"""

from .node import SimError

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
    if not isinstance(section, dict) or set(section) - {"version"}:
        raise SimError("ior must be a mapping with only 'version'")
    version = str(section.get("version") or IOR_VERSIONS[0])
    if version not in IOR_VERSIONS:
        raise SimError("ior.version must be one of %s, got %r" % (", ".join(IOR_VERSIONS), version))
    return {"version": version}


SECTIONS = (("slurm", normalise_slurm), ("modules", normalise_modules), ("ior", normalise_ior))


def slurm_config(node):
    return node.config.get("slurm") or normalise_slurm({})


def available_modules(node):
    return (node.config.get("modules") or normalise_modules({}))["available"]


def loaded_modules(node, shell_pid):
    return list(node.read_state("envmodules").get(str(shell_pid), []))
