"""mdtest: report format of 3.3.0/4.0.0, real operations, options, helper registration, faults."""

import os
import re
import signal
import subprocess
import time

from conftest import node_from_config

SUMMARY_33_HEADER = [
    "   Operation                      Max            Min           Mean        Std Dev",
    "   ---------                      ---            ---           ----        -------",
]
ROW_33 = re.compile(r"^   (Directory creation|Directory stat|Directory removal|File creation|"
                    r"File stat|File read|File removal|Tree creation|Tree removal) +:"
                    r"( +\d+\.\d{3}){4}$")


def mdtest(sim, *args, **kwargs):
    return sim.run(os.path.join(sim.root, "bin", "mdtest"), *args, **kwargs)


def test_single_task_report_format(sim, tmp_path):
    work = tmp_path / "work"
    result = mdtest(sim, "-n", "10", "-d", str(work))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert re.match(r"^-- started at \d\d/\d\d/\d{4} \d\d:\d\d:\d\d --$", lines[0])
    assert lines[1] == ""
    assert lines[2] == "mdtest-3.3.0 was launched with 1 total task(s) on 1 node(s)"
    assert lines[3] == "Command line used: mdtest '-n' '10' '-d' '%s'" % work
    assert lines[4] == "Path: %s" % os.path.realpath(str(work))
    assert re.match(r"^FS: \d+\.\d (GiB|TiB)   Used FS: \d+\.\d%   Inodes: \d+\.\d Mi   "
                    r"Used Inodes: \d+\.\d%$", lines[5])
    assert lines[6:10] == ["", "Nodemap: 1", "1 tasks, 10 files/directories", ""]
    assert lines[10] == "SUMMARY rate: (of 1 iterations)"
    assert lines[11:13] == SUMMARY_33_HEADER
    rows = lines[13:22]
    assert [r.split(":")[0].strip() for r in rows] == [
        "Directory creation", "Directory stat", "Directory removal", "File creation",
        "File stat", "File read", "File removal", "Tree creation", "Tree removal"]
    assert all(ROW_33.match(r) for r in rows), rows
    assert re.match(r"^-- finished at .* --$", lines[22])
    # every phase ran: rates are measured and positive
    assert all(float(r.split()[-4]) > 0 for r in rows)
    assert os.listdir(str(work)) == []


def test_files_only_unique_dirs_tree_and_bytes(sim, tmp_path):
    work = tmp_path / "w"
    result = mdtest(sim, "-F", "-u", "-L", "-z", "2", "-b", "2", "-I", "3", "-w", "100",
                    "-e", "100", "-C", "-d", str(work))
    assert result.returncode == 0, result.stdout
    assert "1 tasks, 12 files" in result.stdout  # 3 items x 2^2 leaves
    rows = [l for l in result.stdout.splitlines() if ROW_33.match(l)]
    assert [r.split(":")[0].strip() for r in rows] == [
        "File creation", "File stat", "File read", "File removal", "Tree creation",
        "Tree removal"]
    # -C: only the create phase ran, the tree and its files stay behind
    values = {r.split(":")[0].strip(): float(r.split()[-4]) for r in rows}
    assert values["File creation"] > 0 and values["File stat"] == 0
    tree = work / "test-dir.0-0" / "mdtest_tree.0.0"
    files = [os.path.join(d, f) for d, _, fs in os.walk(str(tree)) for f in fs]
    assert len(files) == 12
    assert all(os.path.getsize(f) == 100 for f in files)
    assert all(os.path.dirname(f).count("mdtest_tree.0.") == 3 for f in files)  # leaves only


def test_print_rate_and_time_iterations(sim, tmp_path):
    result = mdtest(sim, "-D", "-n", "5", "-i", "2", "-P", "-d", str(tmp_path / "p"))
    assert result.returncode == 0
    text = result.stdout
    assert "SUMMARY rate: (of 2 iterations)" in text
    assert "SUMMARY time: (of 2 iterations)" in text
    assert text.index("SUMMARY rate") < text.index("SUMMARY time")
    assert "1 tasks, 5 directories" in text
    assert "File creation" not in text


def test_version_4_layout(tmp_path):
    sim = node_from_config(tmp_path / "v4node", "osts: 1\nmdtest: {version: 4.0.0}\n")
    result = mdtest(sim, "-F", "-n", "4", "-d", str(tmp_path / "v4"))
    lines = result.stdout.splitlines()
    assert "mdtest-4.0.0 was launched with 1 total task(s) on 1 node(s)" in lines
    start = lines.index("SUMMARY rate: (of 1 iterations)")
    # 4.0 builds the header from pieces: one column further left than 3.3
    assert lines[start + 1] == ("   Operation                     Max            Min"
                                "           Mean        Std Dev")
    assert lines[start + 2] == ("   ---------                     ---            ---"
                                "           ----        -------")
    assert re.match(r"^   File creation      ( +\d+\.\d{3}){3} +0\.000$", lines[start + 3])
    assert re.match(r"^   Tree creation          ( +\d+\.\d{3}){3} +0\.000$", lines[start + 7])


def test_stonewall_prints_stonewall_line(sim, tmp_path):
    result = mdtest(sim, "-F", "-C", "-W", "1", "-n", "2000000", "-d", str(tmp_path / "s"),
                    timeout=60)
    assert result.returncode == 0, result.stdout
    assert "Continue stonewall hit min:" in result.stdout
    assert re.search(r"^   File create \(stonewall\)   : +NA +NA +\d+\.\d{3} +NA$",
                     result.stdout, re.M)


def test_stonewall_needs_branch_factor_one(sim, tmp_path):
    result = mdtest(sim, "-W", "1", "-b", "2", "-z", "1", "-n", "10", "-d", str(tmp_path))
    assert result.returncode == 1
    assert "stone wall timer does only work with a branch factor <= 1" in result.stdout


def test_bad_option_and_unsimulated_option(sim, tmp_path):
    assert mdtest(sim, "-Q").returncode == 1
    result = mdtest(sim, "-S", "-n", "3", "-d", str(tmp_path))
    assert result.returncode == 1 and "not simulated" in result.stdout


def test_failure_reports_rank_and_errno(sim, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = mdtest(sim, "-n", "2", "-d", str(blocker / "sub"))
    assert result.returncode == 1
    assert re.search(r"Process 0: FAILED in main, Unable to create test directory path .*: "
                     r"Not a directory", result.stdout)


def test_registers_as_helper_and_hang_fault(sim, tmp_path):
    with sim.node.state("faults") as state:
        state.setdefault("faults", []).append({"type": "hang", "command": "mdtest"})
    process = subprocess.Popen([os.path.join(sim.root, "bin", "mdtest"), "-n", "1", "-d",
                                str(tmp_path)], env=sim.env(), stdout=subprocess.PIPE)
    sim.wait_for_hang(process)
    process.send_signal(signal.SIGKILL)
    process.wait()
    with sim.node.state("faults") as state:
        state["faults"] = []
    helpers_seen = []
    process = subprocess.Popen([os.path.join(sim.root, "bin", "mdtest"), "-F", "-n", "3000",
                                "-d", str(tmp_path / "h")], env=sim.env(),
                               stdout=subprocess.PIPE)
    deadline = time.time() + 10
    while process.poll() is None and time.time() < deadline:
        helpers_seen += [h["command"] for h in sim.node.read_state("helpers").get("helpers", [])]
        time.sleep(0.02)
    process.wait()
    assert any(c.startswith("mdtest -F -n 3000") for c in helpers_seen)
    assert sim.node.read_state("helpers").get("helpers", []) == []


def test_host_dead(sim, tmp_path):
    with sim.node.state("faults") as state:
        state.setdefault("faults", []).append({"type": "host_dead"})
    result = mdtest(sim, "-n", "1", "-d", str(tmp_path))
    assert result.returncode == 255 and "Connection refused" in result.stderr


def test_an_mdt_curve_holds_every_phase_to_its_rate(tmp_path):
    # 40 ops/s at the knee of 4 tasks: one task gets 10 ops/s, so 10 files take at least 1 s per phase
    node = node_from_config(tmp_path / "node", "mdts: [{index: 0, curve: {peak_ops_s: 40, knee_threads: 4}}]\n")
    work = tmp_path / "work"
    result = mdtest(node, "-n", "10", "-F", "-C", "-r", "-d", str(work))
    assert result.returncode == 0, result.stdout + result.stderr
    rates = dict((line.split(":")[0].strip(), float(line.split()[-2]))
                 for line in result.stdout.splitlines() if line.startswith("   File "))
    # slow by construction: the throttle, far below the machine's speed, is the most a phase can reach
    assert 0 < rates["File creation"] <= 10.0 and 0 < rates["File removal"] <= 10.0, rates
