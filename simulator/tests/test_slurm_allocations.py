"""salloc, sbatch and scancel: allocations with Slurm's checks, jobs that run for real, and cancelling them."""

import os
import subprocess

from conftest import node_from_config, wait_for
from lustre_sim.batch import active_allocations
from lustre_sim.node import process_start_ticks

CONFIG = ("osts: 1\nslurm: {partitions: [batch, debug], accounts: [proj1], nodes: 2}\n"
          "modules: {available: [gcc, openmpi, ior]}\n")
TASKS = 'echo "$SLURM_PROCID/$SLURM_NTASKS/$SLURM_NODEID"'


def tool(sim, name, *args, **kwargs):
    return sim.run(os.path.join(sim.root, "bin", name), *args, **kwargs)


def script(path, text):
    path.write_text(text)
    path.chmod(0o755)
    return str(path)


def test_salloc_checks_the_request_then_runs_the_command_in_the_allocation(tmp_path):
    sim = node_from_config(tmp_path / "n", CONFIG)
    refused = tool(sim, "salloc", "-N", "1", "-p", "gpu", "true")
    assert refused.returncode == 1 and "Invalid partition name specified" in refused.stderr
    refused = tool(sim, "salloc", "-N", "3", "true")
    assert refused.returncode == 1 and "Requested node configuration is not available" in refused.stderr
    result = tool(sim, "salloc", "-N", "2", "--ntasks-per-node", "2", "-p", "debug", "-A", "proj1", "-J", "t1",
                  "sh", "-c", "module load gcc && exec srun -N 2 -n 4 --ntasks-per-node 2 sh -c '%s'" % TASKS)
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.split()) == ["0/4/0", "1/4/0", "2/4/1", "3/4/1"]
    job_id = int(result.stderr.split("Granted job allocation ")[1].split()[0])
    assert "Relinquishing job allocation %d" % job_id in result.stderr
    state = sim.node.read_state("slurm")
    allocation = state["allocations"][-1]
    assert (allocation["job_id"], allocation["name"], allocation["nodes"], allocation["partition"],
            allocation["account"], allocation["state"], allocation["exit_code"]) == (
        job_id, "t1", 2, "debug", "proj1", "COMPLETED", 0)
    # srun ran as a step of the allocation, with the modules of the shell that started it
    step = state["jobs"][-1]
    assert (step["job_id"], step["nodes"], step["partition"], step["modules"]) == (job_id, 2, "debug", ["gcc"])
    assert active_allocations(sim.node) == []
    failed = tool(sim, "salloc", "-N", "1", "sh", "-c", "exit 3")
    assert failed.returncode == 3 and sim.node.read_state("slurm")["allocations"][-1]["exit_code"] == 3


def test_sbatch_wait_writes_the_output_file_and_returns_the_exit_code(tmp_path):
    sim = node_from_config(tmp_path / "n", CONFIG)
    job = script(tmp_path / "job.sh", "#!/bin/sh\n#SBATCH -p debug\n#SBATCH -N 1\nexec srun sh -c '%s'\n" % TASKS)
    output = tmp_path / "out" / "%x-%j.out"
    output.parent.mkdir()
    result = tool(sim, "sbatch", "--wait", "--parsable", "-N", "2", "--ntasks-per-node", "1", "-J", "t2",
                  "-o", str(output), job)
    assert result.returncode == 0, result.stderr
    job_id = int(result.stdout.strip())
    written = tmp_path / "out" / ("t2-%d.out" % job_id)
    # the command line's -N 2 wins over the script's -N 1; the script's partition is taken
    assert sorted(written.read_text().split()) == ["0/2/0", "1/2/1"]
    allocation = sim.node.read_state("slurm")["allocations"][-1]
    assert (allocation["nodes"], allocation["partition"], allocation["state"]) == (2, "debug", "COMPLETED")
    failing = script(tmp_path / "fail.sh", "#!/bin/sh\necho broken >&2\nexit 4\n")
    result = tool(sim, "sbatch", "--wait", "-o", str(tmp_path / "fail.out"), failing)
    assert result.returncode == 4 and result.stdout.startswith("Submitted batch job ")
    assert (tmp_path / "fail.out").read_text() == "broken\n"
    assert tool(sim, "sbatch", str(tmp_path / "fail.out")).returncode == 1  # not a script
    assert active_allocations(sim.node) == []


def test_a_killed_sbatch_wait_leaves_its_job_running_until_scancel(tmp_path):
    sim = node_from_config(tmp_path / "n", CONFIG)
    marker = tmp_path / "started"
    job = script(tmp_path / "long.sh", "#!/bin/sh\ntouch %s\nexec sleep 600\n" % marker)
    waiting = subprocess.Popen([os.path.join(sim.root, "bin", "sbatch"), "--wait", "--parsable", "-J", "long",
                                "-o", str(tmp_path / "long.out"), job], stdout=subprocess.PIPE,
                               universal_newlines=True, env=sim.env(), start_new_session=True)
    try:
        wait_for("the job to start", marker.exists)
        waiting.kill()
        waiting.wait(timeout=30)
        [running] = active_allocations(sim.node)
        assert running["name"] == "long" and os.path.exists("/proc/%d" % running["pid"])
        # by name (and user), as a cleanup that never saw the id does
        user = running["user"]
        assert tool(sim, "scancel", "--name", "long", "--user", user).returncode == 0
        assert active_allocations(sim.node) == []
        assert sim.node.read_state("slurm")["allocations"][-1]["state"] == "CANCELLED"
        wait_for("the job's processes to be gone",
                 lambda: process_start_ticks(running["pid"]) != running["proc_start"])
        again = tool(sim, "scancel", str(running["job_id"]))
        assert again.returncode == 0 and "already completing or completed" in again.stderr
        unknown = tool(sim, "scancel", "99999")
        assert unknown.returncode == 1 and "Invalid job id specified" in unknown.stderr
    finally:
        if waiting.poll() is None:
            waiting.kill()
        tool(sim, "scancel", "--user", sim.node.read_state("slurm")["allocations"][-1]["user"])


def test_scancel_by_id_ends_a_salloc_whose_holder_was_killed(tmp_path):
    sim = node_from_config(tmp_path / "n", CONFIG)
    holder = subprocess.Popen([os.path.join(sim.root, "bin", "salloc"), "-N", "1", "-J", "held", "sleep", "600"],
                              stderr=subprocess.PIPE, universal_newlines=True, env=sim.env(),
                              start_new_session=True)
    try:
        wait_for("the allocation", lambda: active_allocations(sim.node))
        [held] = active_allocations(sim.node)
        os.killpg(holder.pid, 9)
        holder.wait(timeout=30)
        # salloc killed outright: the allocation stays until scancel
        assert [job["job_id"] for job in active_allocations(sim.node)] == [held["job_id"]]
        assert tool(sim, "scancel", str(held["job_id"])).returncode == 0
        assert active_allocations(sim.node) == []
    finally:
        if holder.poll() is None:
            os.killpg(holder.pid, 9)
            holder.wait(timeout=30)


def test_the_tools_are_installed_as_shims(tmp_path):
    sim = node_from_config(tmp_path / "n", CONFIG)
    for name in ("salloc", "sbatch", "scancel"):
        assert os.access(os.path.join(sim.root, "bin", name), os.X_OK)
