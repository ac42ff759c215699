"""ior, srun and module: IOR's report from real I/O through the client mount, Slurm and Lmod behaviour."""

import json
import os
import re

import pytest

from conftest import node_from_config
from lustre_sim import client_mount

IOR_FLAGS = ["-a", "POSIX", "-w", "-r", "-C", "-e", "-t", "64k", "-b", "256k"]


def tool(sim, name, *args, **kwargs):
    return sim.run(os.path.join(sim.root, "bin", name), *args, **kwargs)


@pytest.fixture
def client(node_factory, tmp_path):
    """A node with its client mounted in the best form this machine allows (FUSE when root has /dev/fuse)."""
    sim = node_factory("c", osts=2, client_mount=str(tmp_path / "mnt"))
    client_mount.mount(sim.node)
    sim.mnt = str(tmp_path / "mnt")
    yield sim
    client_mount.unmount(sim.node)


def test_mpirun_ior_file_per_process_report_parses(client, parse):
    sim = client
    target = os.path.join(client.mnt, "ior-fpp")
    os.mkdir(target)
    result = tool(sim, "mpirun", "--allow-run-as-root", "-np", "4", "-H", "c1:2,c2:2", "ior", *IOR_FLAGS,
                  "-F", "-i", "2", "-o", os.path.join(target, "f"))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "IOR-3.3.0: MPI Coordinated Test of Parallel I/O"
    assert "access              : file-per-process" in lines
    assert "ordering inter file : constant task offset" in lines
    runs = parse("ior", result.stdout)
    assert len(runs) == 1
    run = runs[0]
    assert (run["version"], run["tasks"], run["nodes"], run["tasks_per_node"]) == ("3.3.0", 4, 2, 2)
    assert (run["transfer_size_bytes"], run["block_size_bytes"], run["repetitions"]) == (65536, 262144, 2)
    assert [(row["access"], row["iter"]) for row in run["results"]] == [
        ("write", 0), ("read", 0), ("remove", 0), ("write", 1), ("read", 1), ("remove", 1)]
    assert all(row["bw_mib_s"] > 0 for row in run["results"] if row["access"] != "remove")
    assert set(run["max"]) == {"write", "read"} and run["max"]["write"]["mib_s"] > 0
    write = run["summary"][0]
    assert (write["operation"], write["tasks"], write["file_per_process"], write["aggregate_mib"]) == (
        "write", 4, True, 1.0)
    assert write["max_mib_s"] >= write["mean_mib_s"] >= write["min_mib_s"] > 0
    assert re.match(r"^Finished +: ", lines[-1])
    # Without -k IOR removes what it wrote.
    assert os.listdir(target) == []


def test_single_shared_file_is_kept_with_k_and_has_every_block(client, parse):
    sim = client
    target = os.path.join(client.mnt, "ior-ssf")
    os.mkdir(target)
    result = tool(sim, "mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "3", "ior", "-w", "-r", "-R", "-k", "-s", "2",
                  "-t", "32k", "-b", "64k", "-o", os.path.join(target, "shared"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert os.listdir(target) == ["shared"]
    assert os.path.getsize(os.path.join(target, "shared")) == 3 * 2 * 64 * 1024
    run = parse("ior", result.stdout)[0]
    assert (run["access"], run["segments"], run["tasks"]) == ("single-shared-file", 2, 3)
    assert [row["access"] for row in run["results"]] == ["write", "read"]


def test_open_failure_is_an_ior_error_and_exit_1(client, parse):
    sim = client
    # A directory where the shared file should go: open(O_WRONLY) fails with EISDIR, as on Lustre.
    blocked = os.path.join(client.mnt, "taken")
    os.mkdir(blocked)
    result = tool(sim, "ior", "-w", "-t", "4k", "-b", "8k", "-o", blocked)
    assert result.returncode == 1
    run = parse("ior", result.stdout)[0]
    assert run["results"] == [] and run["summary"] == []
    assert run["errors"][0].startswith('ior ERROR: open64("%s", ' % blocked)
    assert "errno 21, Is a directory" in run["errors"][0]
    assert run["errors"][1].startswith("MPI_ABORT was invoked on rank 0")


def test_bad_options_are_refused_by_name(sim):
    result = tool(sim, "ior", "-w", "-b", "100k", "-t", "64k")
    assert result.returncode == 1 and "block size must be a multiple of transfer size" in result.stdout
    result = tool(sim, "ior", "-a", "MPIIO")
    assert result.returncode == 1 and "API MPIIO is not simulated" in result.stdout


def test_ior_4_0_0_report(tmp_path, parse):
    sim = node_from_config(tmp_path / "n", "osts: 1\nior: {version: '4.0.0'}\n")
    result = tool(sim, "ior", "-w", "-t", "4k", "-b", "16k", "-o", str(tmp_path / "f"))
    assert result.returncode == 0, result.stdout + result.stderr
    run = parse("ior", result.stdout)[0]
    assert run["version"] == "4.0.0" and run["max"]["write"]["mib_s"] > 0


def test_srun_outside_an_allocation_checks_partition_account_and_nodes(tmp_path):
    sim = node_from_config(tmp_path / "n", "osts: 1\nslurm: {partitions: [batch, debug], accounts: [proj1], nodes: 4}\n")
    result = tool(sim, "srun", "-p", "gpu", "hostname")
    assert result.returncode == 1
    assert "Unable to allocate resources: Invalid partition name specified" in result.stderr
    result = tool(sim, "srun", "-A", "other", "hostname")
    assert result.returncode == 1 and "Invalid account or account/partition combination specified" in result.stderr
    result = tool(sim, "srun", "-N", "5", "hostname")
    assert result.returncode == 1 and "Requested node configuration is not available" in result.stderr
    result = tool(sim, "srun", "-N", "2", "-n", "4", "-p", "debug", "-A", "proj1", "sh", "-c",
                  'echo "$SLURM_PROCID/$SLURM_NTASKS/$SLURM_NODEID"')
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.split()) == ["0/4/0", "1/4/0", "2/4/1", "3/4/1"]
    jobs = sim.node.read_state("slurm")["jobs"]
    assert [(job["nodes"], job["ntasks"], job["partition"], job["account"], job["status"]) for job in jobs] == [
        (2, 4, "debug", "proj1", 0)]


def test_modules_loaded_in_the_shell_that_runs_srun_ior(tmp_path, parse):
    sim = node_from_config(tmp_path / "n", "osts: 1\nslurm: {nodes: 2}\nmodules: {available: [gcc/12.2, openmpi, ior]}\n")
    script = ("module load gcc openmpi ior && srun -N 2 --ntasks-per-node 2 ior -w -r -F -t 4k -b 16k -o %s"
              % (tmp_path / "f"))
    result = sim.run("sh", "-c", script)
    assert result.returncode == 0, result.stdout + result.stderr
    run = parse("ior", result.stdout)[0]
    assert (run["tasks"], run["nodes"], run["tasks_per_node"]) == (4, 2, 2)
    jobs = sim.node.read_state("slurm")["jobs"]
    assert jobs[-1]["modules"] == ["gcc", "openmpi", "ior"]
    # Another shell has loaded nothing.
    result = sim.run("sh", "-c", "srun hostname")
    assert result.returncode == 0
    assert sim.node.read_state("slurm")["jobs"][-1]["modules"] == []


def test_module_refuses_an_unknown_name(tmp_path):
    sim = node_from_config(tmp_path / "n", "osts: 1\nmodules: {available: [gcc]}\n")
    result = tool(sim, "module", "load", "gcc", "nosuch")
    assert result.returncode == 1
    assert 'The following module(s) are unknown: "nosuch"' in result.stderr
    assert json.dumps(sim.node.read_state("envmodules")) == "{}"


def test_stonewall_wear_out_columns(client, parse):
    sim = client
    target = os.path.join(client.mnt, "ior-sw")
    os.mkdir(target)
    result = tool(sim, "mpirun", "--allow-run-as-root", "-np", "2", "ior", "-w", "-r", "-D", "1", "-O",
                  "stoneWallingWearOut=1", "-t", "4k", "-b", "64k", "-o", os.path.join(target, "f"))
    assert result.returncode == 0, result.stdout + result.stderr
    run = parse("ior", result.stdout)[0]
    write = run["summary"][0]
    assert write["stonewall_s"] is not None and write["stonewall_mib_s"] is not None
    # The ranks agree on the largest count any reached by the deadline: all 16 pairs unless it came first.
    pairs = re.search(r"^Pairs deadlineForStonewallingaccessed: (\d+)$", result.stdout, re.M)
    assert pairs and 1 <= int(pairs.group(1)) <= 16


def test_verbosity_3_prints_every_tasks_stamps_and_a_capped_client_is_slow_by_construction(tmp_path, parse):
    # c2 may move 1 MiB/s, shared by its two ranks: 256 KiB each takes at least half a second per phase
    sim = node_from_config(tmp_path / "n", "osts: 1\nior: {client_mib_s: {c2: 1}}\n")
    result = tool(sim, "mpirun", "--allow-run-as-root", "-np", "4", "-H", "c1:2,c2:2", "ior", *IOR_FLAGS,
                  "-F", "-v", "-v", "-v", "-o", str(tmp_path / "f"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"^Test 0: Iter=0, Task=3, Time=\d+\.\d{6}, read close stop$", result.stdout, re.M)
    run = parse("ior", result.stdout)[0]
    timings = run["task_timings"]
    assert sorted((row["access"], row["task"]) for row in timings) == [
        (access, task) for access in ("read", "write") for task in range(4)]
    assert all(row[key] is not None for row in timings for key in ("open_start", "close_stop", "wrrd_s"))
    capped = [row["wrrd_s"] for row in timings if row["task"] in (2, 3)]
    assert min(capped) >= 0.25 * 1.0 / 0.5 - 0.01
    # without -v -v -v there are none
    quiet = tool(sim, "ior", *IOR_FLAGS, "-o", str(tmp_path / "g"))
    assert "task_timings" not in parse("ior", quiet.stdout)[0]


def test_client_caps_must_be_positive_rates(tmp_path):
    from lustre_sim.batch import normalise_ior
    from lustre_sim.node import SimError
    assert normalise_ior({"client_mib_s": {"c2": 5}}) == {"version": "3.3.0", "client_mib_s": {"c2": 5.0}}
    with pytest.raises(SimError, match="client_mib_s"):
        normalise_ior({"client_mib_s": {"c2": 0}})
