"""scancel (Slurm) on a simulated node.

Ends the allocations ``salloc`` and ``sbatch`` recorded in
``state/slurm.json``: named by job id, or chosen with ``-n/--name`` and
``-u/--user`` (only among jobs not ended). A job's record is marked
CANCELLED, then the process group that holds it (salloc and its command, or
the batch runner and the script) gets SIGTERM and, after a grace, SIGKILL;
unlike Slurm's, this scancel returns once they are gone. An unknown job id
fails as Slurm's does (``Invalid job id specified``, status 1); a job that
has already ended is reported (``Job/step already completing or
completed``) with status 0. Filters matching nothing are not an error.
"""

import pwd
import sys

from lustre_sim.batch import ACTIVE, stop_job_processes, update_allocation
from lustre_sim.node import Node, SimError
from lustre_sim.tools.srun import LaunchError, parse

WITH_VALUE = {"-n": "name", "--name": "name", "--jobname": "name", "-u": "user", "--user": "user",
              "-s": None, "--signal": None, "-p": "partition", "--partition": "partition", "-A": "account",
              "--account": "account", "-t": None, "--state": None}
FLAGS = {"-Q", "--quiet", "-v", "--verbose", "-b", "--batch", "-f", "--full", "-i", "--interactive"}


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        node = Node.from_env()
    except SimError as error:
        sys.stderr.write("scancel: %s\n" % error)
        return 1
    node.fault_gate("scancel", argv)
    words, ids = [], []
    for word in argv:
        (ids if word.isdigit() else words).append(word)
    try:
        options = parse(words, "scancel", WITH_VALUE, FLAGS)
        if options["program"]:
            raise LaunchError("scancel: error: Invalid job id %s" % options["program"][0])
    except LaunchError as error:
        sys.stderr.write("%s\n" % error)
        return 1
    if not ids and not options["name"] and not options["user"]:
        sys.stderr.write("scancel: error: No job identification provided\n")
        return 1
    if options["user"]:
        try:
            pwd.getpwnam(options["user"])
        except KeyError:
            sys.stderr.write("scancel: error: Invalid user name: %s\n" % options["user"])
            return 1
    quiet = "-Q" in options["flags"] or "--quiet" in options["flags"]
    jobs = node.read_state("slurm").get("allocations", [])
    status = 0
    chosen = []
    for job_id in ids:
        found = [job for job in jobs if job["job_id"] == int(job_id)]
        if not found:
            if not quiet:
                sys.stderr.write("scancel: error: Kill job error on job id %s: Invalid job id specified\n" % job_id)
            status = 1
        elif found[0]["state"] not in ACTIVE:
            if not quiet:
                sys.stderr.write("scancel: error: Kill job error on job id %s: Job/step already completing or "
                                 "completed\n" % job_id)
        else:
            chosen.append(found[0])
    if not ids:
        chosen = [job for job in jobs if job["state"] in ACTIVE]
    for key in ("name", "user", "partition", "account"):
        if options[key]:
            chosen = [job for job in chosen if job.get(key) == options[key]]
    for job in chosen:
        update_allocation(node, job["job_id"], ended=True, state="CANCELLED")
        stop_job_processes(job)
    return status


if __name__ == "__main__":
    sys.exit(main())
