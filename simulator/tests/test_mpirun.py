"""mpirun: rank placement, node count, root and slot rules, non-MPI programs, -x."""

import os

import pytest

ROOT = os.geteuid() == 0


def mpirun(sim, *args, **env):
    return sim.run(os.path.join(sim.root, "bin", "mpirun"), *args)


@pytest.mark.skipif(not ROOT, reason="the root refusal only applies to root")
def test_refuses_root_without_permission(sim):
    result = mpirun(sim, "-np", "1", "mdtest", "-n", "1")
    assert result.returncode == 1
    assert "mpirun has detected an attempt to run as root." in result.stderr


def test_mdtest_with_ranks(sim, tmp_path):
    work = tmp_path / "w"
    result = mpirun(sim, "--allow-run-as-root", "--oversubscribe", "-np", "3", "mdtest", "-n",
                    "4", "-u", "-d", str(work))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert "mdtest-3.3.0 was launched with 3 total task(s) on 1 node(s)" in lines
    assert "Nodemap: 111" in lines
    assert "3 tasks, 12 files/directories" in lines
    assert "Command line used: mdtest '-n' '4' '-u' '-d' '%s'" % work in lines
    assert os.listdir(str(work)) == []


def test_hosts_give_node_count_and_nodemap(sim, tmp_path):
    result = mpirun(sim, "--allow-run-as-root", "-H", "c1,c2", "-np", "2", "mdtest", "-n", "2",
                    "-d", str(tmp_path / "h"))
    assert result.returncode == 0, result.stderr
    assert "mdtest-3.3.0 was launched with 2 total task(s) on 2 node(s)" in result.stdout
    assert "Nodemap: 10" in result.stdout


def test_hostfile_slots_and_oversubscribe(sim, tmp_path):
    hostfile = tmp_path / "hosts"
    hostfile.write_text("c1 slots=1\n# comment\nc2 slots=1\n")
    too_many = mpirun(sim, "--allow-run-as-root", "--hostfile", str(hostfile), "-np", "3",
                      "mdtest", "-n", "1", "-d", str(tmp_path / "x"))
    assert too_many.returncode == 1
    assert "There are not enough slots available in the system to satisfy the 3" in \
        too_many.stderr
    ok = mpirun(sim, "--allow-run-as-root", "--oversubscribe", "--hostfile", str(hostfile),
                "-np", "3", "mdtest", "-n", "1", "-d", str(tmp_path / "y"))
    assert ok.returncode == 0
    assert "launched with 3 total task(s) on 2 node(s)" in ok.stdout
    assert "Nodemap: 110" in ok.stdout


def test_other_programs_run_once_per_rank_with_exports(sim):
    result = mpirun(sim, "--allow-run-as-root", "--oversubscribe", "-np", "2", "-x",
                    "GREETING=hi", "sh", "-c", "echo $GREETING $OMPI_COMM_WORLD_RANK/"
                    "$OMPI_COMM_WORLD_SIZE")
    assert result.returncode == 0
    assert sorted(result.stdout.split("\n")[:2]) == ["hi 0/2", "hi 1/2"]
    failing = mpirun(sim, "--allow-run-as-root", "-np", "1", "sh", "-c", "exit 3")
    assert failing.returncode == 3


def test_missing_program_and_unknown_option(sim):
    assert mpirun(sim, "--allow-run-as-root", "-np", "1").returncode == 1
    result = mpirun(sim, "--bogus", "mdtest")
    assert result.returncode == 1 and "unknown option" in result.stderr


def test_dead_host_stops_the_launcher(sim):
    with sim.node.state("faults") as state:
        state.setdefault("faults", []).append({"type": "host_dead"})
    result = mpirun(sim, "--allow-run-as-root", "-np", "1", "mdtest", "-n", "1")
    assert result.returncode == 255
