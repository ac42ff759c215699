"""mpirun (Open MPI 4 command line) on a simulated node.

Ranks are placed by slot over the hosts of ``-H``/``--hostfile`` (or this
host with one slot per CPU) exactly as Open MPI would, but all of them run
here: ``mdtest`` and ``ior`` become one job with N ranks (worker processes),
any other program is started N times with OMPI_COMM_WORLD_RANK/SIZE set.
"""

import os
import subprocess
import sys

from lustre_sim.node import Node, SimError

RULE = "-" * 74

ROOT_MESSAGE = """%s
mpirun has detected an attempt to run as root.

Running as root is *strongly* discouraged as any mistake (e.g., in
defining TMPDIR) or bug can result in catastrophic damage to the OS
file system, leaving your system in an unusable state.

We strongly suggest that you run mpirun as a non-root user.

You can override this protection by adding the --allow-run-as-root option
to the cmd line or by setting two environment variables in the following way:
the variable OMPI_ALLOW_RUN_AS_ROOT=1 to indicate the desire to override this
protection, and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 to confirm the choice and
add one more layer of certainty that you want to do so.
We reiterate our advice against doing so - please proceed at your own risk.
%s
""" % (RULE, RULE)

SLOTS_MESSAGE = """%s
There are not enough slots available in the system to satisfy the %d
slots that were requested by the application:

  %s

Either request fewer slots for your application, or make more slots
available for use.

A "slot" is the Open MPI term for an allocatable unit where we can
launch a process.  The number of slots available are defined by the
environment in which Open MPI processes are run:

  1. Hostfile, via "slots=N" clauses (N defaults to number of
     processor cores if not provided)
  2. The --host command line parameter, via a ":N" suffix on the
     hostname (N defaults to 1 if not provided)
  3. Resource manager (e.g., SLURM, PBS/Torque, LSF, etc.)
  4. If none of a hostfile, the --host command line parameter, or an
     RM is present, Open MPI defaults to the number of processor cores

In all the above cases, if you want Open MPI to default to the number
of hardware threads instead of the number of processor cores, use the
--use-hwthread-cpus option.

Alternatively, you can use the --oversubscribe option to ignore the
number of available slots when deciding the number of processes to
launch.
%s
"""

WITH_VALUE = {"-np", "--np", "-n", "-c", "-H", "--host", "-host", "--hostfile", "-hostfile",
              "--machinefile", "-machinefile", "-x", "--map-by", "-map-by", "--bind-to",
              "-bind-to", "--rank-by", "-rank-by", "-N", "--npernode", "-npernode",
              "--wdir", "-wdir", "--prefix", "--output-filename", "--timeout"}
TWO_VALUES = {"--mca", "-mca", "--gmca", "-gmca"}
FLAGS = {"--oversubscribe", "-oversubscribe", "--allow-run-as-root", "-allow-run-as-root",
         "-q", "--quiet", "--tag-output", "-tag-output", "--report-bindings",
         "-report-bindings", "-v", "--verbose", "--display-map", "-display-map",
         "--use-hwthread-cpus", "--nooversubscribe", "--timestamp-output", "--merge-stderr-to-stdout"}


class LaunchError(Exception):
    pass


def parse(argv):
    options = {"np": None, "hosts": [], "hostfile": None, "oversubscribe": False,
               "allow_root": False, "export": [], "wdir": None}
    position = 0
    while position < len(argv):
        word = argv[position]
        if not word.startswith("-"):
            break
        name, _, attached = word.partition("=")
        if name in TWO_VALUES:
            position += 3
            continue
        if name in WITH_VALUE:
            if attached:
                value = attached
                position += 1
            else:
                if position + 1 >= len(argv):
                    raise LaunchError("%s: option requires an argument" % name)
                value = argv[position + 1]
                position += 2
            if name in ("-np", "--np", "-n", "-c"):
                try:
                    options["np"] = int(value)
                except ValueError:
                    raise LaunchError("invalid value for %s: %s" % (name, value))
            elif name in ("-H", "--host", "-host"):
                options["hosts"].extend(h for h in value.split(",") if h)
            elif name in ("--hostfile", "-hostfile", "--machinefile", "-machinefile"):
                options["hostfile"] = value
            elif name == "-x":
                options["export"].append(value)
            elif name in ("--wdir", "-wdir"):
                options["wdir"] = value
            continue
        if name in FLAGS:
            if name in ("--oversubscribe", "-oversubscribe"):
                options["oversubscribe"] = True
            if name in ("--allow-run-as-root", "-allow-run-as-root"):
                options["allow_root"] = True
            position += 1
            continue
        raise LaunchError("mpirun: Error: unknown option \"%s\"" % word)
    options["program"] = argv[position:]
    return options


def slots(options):
    """[(host, slots)] from -H (host[:N], default 1) or a hostfile (slots=N, default cores)."""
    entries = []
    for host in options["hosts"]:
        name, _, count = host.partition(":")
        entries.append((name, int(count) if count else 1))
    if options["hostfile"]:
        try:
            with open(options["hostfile"]) as handle:
                lines = handle.read().splitlines()
        except OSError as error:
            raise LaunchError("Open RTE was unable to open the hostfile:\n    %s\nCheck to make "
                              "sure the path and filename are correct.\n(%s)"
                              % (options["hostfile"], error.strerror))
        for line in lines:
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            count = os.cpu_count() or 1
            for field in line[1:]:
                if field.startswith("slots="):
                    count = int(field.split("=", 1)[1])
            entries.append((line[0], count))
    if not entries:
        entries.append(("localhost", os.cpu_count() or 1))
    merged = {}
    for name, count in entries:
        merged[name] = merged.get(name, 0) + count
    return list(merged.items())


def place(np, host_slots, oversubscribe):
    """By-slot mapping: fill each host's slots in order; wrap round when oversubscribed."""
    total = sum(count for _, count in host_slots)
    if np > total and not oversubscribe:
        return None
    placement = []
    while len(placement) < np:
        for name, count in host_slots:
            take = min(count, np - len(placement))
            placement.extend([name] * take)
            if len(placement) >= np:
                break
    return placement


def exported_environment(exports):
    environment = {}
    for item in exports:
        name, sep, value = item.partition("=")
        if sep:
            environment[name] = value
        elif name in os.environ:
            environment[name] = os.environ[name]
    return environment


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        node = Node.from_env()
    except SimError as error:
        sys.stderr.write("mpirun: %s\n" % error)
        return 1
    node.fault_gate("mpirun", argv)
    try:
        options = parse(argv)
        host_slots = slots(options)
    except LaunchError as error:
        sys.stderr.write("%s\n" % error)
        return 1
    program = options["program"]
    if not program:
        sys.stderr.write("%s\nNo executable was specified on the mpirun command line.\n\n"
                         "Aborting.\n%s\n" % (RULE, RULE))
        return 1
    allowed = options["allow_root"] or (os.environ.get("OMPI_ALLOW_RUN_AS_ROOT") == "1" and
                                        os.environ.get("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM") == "1")
    if os.geteuid() == 0 and not allowed:
        sys.stderr.write(ROOT_MESSAGE)
        return 1
    np = options["np"] if options["np"] is not None else sum(c for _, c in host_slots)
    if np < 1:
        sys.stderr.write("mpirun: -np must be at least 1\n")
        return 1
    placement = place(np, host_slots, options["oversubscribe"])
    if placement is None:
        sys.stderr.write(SLOTS_MESSAGE % (RULE, np, program[0], RULE))
        return 1
    nodes = len(set(placement))
    os.environ.update(exported_environment(options["export"]))
    if options["wdir"]:
        os.chdir(options["wdir"])
    if os.path.basename(program[0]) in ("mdtest", "ior"):
        # Deferred for start-up time: only an ior or mdtest launch needs their engines (multiprocessing and all).
        from lustre_sim.tools import ior, mdtest
        tool = ior if os.path.basename(program[0]) == "ior" else mdtest
        extra = {"hosts": placement} if tool is ior else {}
        status = tool.main(program[1:], program=program[0], size=np, nodes=nodes, **extra)
        sys.stdout.flush()
        return status
    return run_copies(program, np)


def run_copies(program, np):
    children = []
    for rank in range(np):
        environment = dict(os.environ, OMPI_COMM_WORLD_RANK=str(rank),
                           OMPI_COMM_WORLD_SIZE=str(np), OMPI_COMM_WORLD_LOCAL_RANK=str(rank),
                           PMIX_RANK=str(rank))
        try:
            children.append(subprocess.Popen(program, env=environment))
        except OSError:
            for child in children:
                child.kill()
            sys.stderr.write("%s\nmpirun was unable to launch the specified application as it "
                             "could not access\nor execute an executable:\n\nExecutable: %s\n"
                             "Node: %s\n\nwhile attempting to start process rank %d.\n%s\n"
                             % (RULE, program[0], os.uname().nodename, rank, RULE))
            return 1
    status = 0
    for child in children:
        code = child.wait()
        if code and not status:
            status = code
    return status


if __name__ == "__main__":
    sys.exit(main())
