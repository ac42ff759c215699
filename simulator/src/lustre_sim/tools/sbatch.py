"""sbatch (Slurm) on a simulated node.

Reads the script (it must start with ``#!``), takes ``#SBATCH`` lines before
its first command as options (the command line wins), checks the request as
``salloc`` does, records the job in ``state/slurm.json`` (``allocations``)
with a copy of the script (as Slurm keeps the script it was given), prints
``Submitted batch job N`` (``--parsable``: ``N``) and starts the job: a
runner process in a session of its own (registered as a node helper) runs
the script on this host with the allocation's ``SLURM_*`` variables, its
stdout and stderr going to ``--output`` (default ``slurm-%j.out`` in the
working directory; ``%j`` job id, ``%x`` job name, ``%u`` user). With
``--wait`` sbatch returns once the job ended, with its exit code. Killing
sbatch does not end the job; ``scancel`` does.
"""

import os
import shutil
import signal
import subprocess
import sys
import time

from lustre_sim.batch import (ACTIVE, allocation, allocation_environment, request_problem, slurm_config, submit,
                              update_allocation)
from lustre_sim.node import Node, SimError, process_start_ticks
from lustre_sim.tools.salloc import user_name
from lustre_sim.tools.srun import LaunchError, parse

WITH_VALUE = {"-N": "nodes", "--nodes": "nodes", "-n": "ntasks", "--ntasks": "ntasks",
              "--ntasks-per-node": "per_node", "-p": "partition", "--partition": "partition",
              "-A": "account", "--account": "account", "-J": "name", "--job-name": "name",
              "-o": "output", "--output": "output", "-e": "error", "--error": "error", "-t": None,
              "--time": None, "-c": None, "--cpus-per-task": None, "-D": "chdir", "--chdir": "chdir",
              "-w": None, "--nodelist": None, "--mem": None, "--export": None}
FLAGS = {"-W", "--wait", "--parsable", "--exclusive", "-Q", "--quiet", "-v", "--verbose", "-H", "--hold"}
RUN_JOB = "--sim-run-job"
NOT_A_SCRIPT = ("sbatch: error: This does not look like a batch script.  The first\n"
                "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
                "sbatch: error: For instance: #!/bin/sh\n")


def script_options(text):
    """The words of the ``#SBATCH`` lines before the script's first command."""
    words = []
    for line in text.splitlines()[1:]:
        stripped = line.strip()
        if stripped.startswith("#SBATCH"):
            words.extend(stripped[len("#SBATCH"):].split())
        elif stripped and not stripped.startswith("#"):
            break
    return words


def output_path(pattern, job_id, name, user, cwd):
    path = pattern.replace("%j", str(job_id)).replace("%A", str(job_id)).replace("%x", name).replace("%u", user)
    return path if os.path.isabs(path) else os.path.join(cwd, path)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == [RUN_JOB]:
        return run_job(int(argv[1]))
    try:
        node = Node.from_env()
    except SimError as error:
        sys.stderr.write("sbatch: %s\n" % error)
        return 1
    node.fault_gate("sbatch", argv)
    try:
        options = parse(argv, "sbatch", WITH_VALUE, FLAGS)
        if not options["program"]:
            raise LaunchError("sbatch: error: Batch script is empty!")
        script = options["program"][0]
        try:
            with open(script) as handle:
                text = handle.read()
        except OSError:
            raise LaunchError("sbatch: error: Unable to open file %s" % script)
        if not text.startswith("#!"):
            raise LaunchError(NOT_A_SCRIPT.rstrip("\n"))
        from_script = parse(script_options(text), "sbatch", WITH_VALUE, FLAGS)
    except LaunchError as error:
        sys.stderr.write("%s\n" % error)
        return 1
    for key, value in from_script.items():
        if key not in ("program", "flags") and options.get(key) is None:
            options[key] = value
    config = slurm_config(node)
    problem = request_problem(config, "sbatch", options["partition"], options["account"], options["nodes"])
    if problem:
        sys.stderr.write(problem + "\n")
        return 1
    cwd = os.path.abspath(options["chdir"] or os.getcwd())
    name = options["name"] or os.path.basename(script)
    user = user_name(os.geteuid())
    job_id = submit(node, {"kind": "sbatch", "name": name, "nodes": options["nodes"] or 1,
                           "per_node": options["per_node"], "partition": options["partition"] or config["partitions"][0],
                           "account": options["account"], "uid": os.geteuid(), "user": user, "cwd": cwd,
                           "arguments": options["program"][1:], "env": dict(os.environ)})
    jobs_dir = os.path.join(node.state_dir, "jobs")
    os.makedirs(jobs_dir, exist_ok=True)
    copy = os.path.join(jobs_dir, "%d.sh" % job_id)
    shutil.copyfile(script, copy)
    os.chmod(copy, 0o700)
    output = output_path(options["output"] or "slurm-%j.out", job_id, name, user, cwd)
    error = output_path(options["error"], job_id, name, user, cwd) if options["error"] else None
    update_allocation(node, job_id, script=copy, output=output, error=error)
    runner = subprocess.Popen([sys.executable, "-m", "lustre_sim.tools.sbatch", RUN_JOB, str(job_id)],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              cwd=cwd, start_new_session=True)
    update_allocation(node, job_id, pid=runner.pid, proc_start=process_start_ticks(runner.pid))
    sys.stdout.write("%d\n" % job_id if "--parsable" in options["flags"] else "Submitted batch job %d\n" % job_id)
    sys.stdout.flush()
    if "--wait" not in options["flags"] and "-W" not in options["flags"]:
        return 0
    while True:
        entry = allocation(node, job_id)
        if entry["state"] not in ACTIVE:
            break
        if runner.poll() is not None and allocation(node, job_id)["state"] in ACTIVE:
            # the runner died without ending the job (killed outright): the job failed
            update_allocation(node, job_id, ended=True, state="FAILED", exit_code=1)
            continue
        time.sleep(0.05)
    runner.poll()
    code = entry.get("exit_code")
    if entry["state"] != "COMPLETED" or code:
        sys.stderr.write("sbatch: error: Batch job %d %s with exit code %s\n"
                         % (job_id, entry["state"].lower(), code if code is not None else 1))
    return code if entry["state"] == "COMPLETED" else (code or 1)


def run_job(job_id):
    """The batch job itself: the script copy run with the allocation's variables, output to the job's file."""
    node = Node.from_env()
    entry = allocation(node, job_id)
    pid = os.getpid()
    node.register_helper(pid, "sbatch job %d" % job_id)
    child = None
    cancelled = []

    def on_signal(signum, frame):
        cancelled.append(signum)
        if child is not None and child.poll() is None:
            child.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_signal)
    try:
        env = dict(entry["env"], **allocation_environment(entry))
        with open(entry["output"], "ab") as out:
            err = open(entry["error"], "ab") if entry.get("error") else out
            try:
                child = subprocess.Popen([entry["script"]] + list(entry.get("arguments") or []), stdin=subprocess.DEVNULL,
                                         stdout=out, stderr=err, env=env, cwd=entry["cwd"])
                status = child.wait()
            except OSError as error:
                out.write(("slurmstepd: error: execve(): %s: %s\n" % (entry["script"], error.strerror)).encode())
                status = 127
            finally:
                if err is not out:
                    err.close()
        code = status if status >= 0 else 128 - status
        state = "CANCELLED" if cancelled else ("COMPLETED" if code == 0 else "FAILED")
        update_allocation(node, job_id, ended=True, state=state, exit_code=code)
    finally:
        try:
            os.unlink(entry["script"])
        except OSError:
            pass
        node.unregister_helper(pid)
    return 0


if __name__ == "__main__":
    sys.exit(main())
