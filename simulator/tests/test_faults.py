"""Each fault type, injected by config or at run time."""

import json
import os
import signal
import subprocess

from conftest import wait_for
from lustre_sim.node import Node


def fault(sim, *argv):
    from lustre_sim.cli import main
    assert main(["fault", "--root", sim.root] + list(argv)) == 0


def brw_setup(sim, target="testfs-OST0000"):
    devno = sim.echo_client(target)
    objid = sim.lctl("--device", devno, "create", "1").stdout.split()[-1]
    return devno, objid


def test_io_error_on_write_only(sim):
    devno, objid = brw_setup(sim)
    fault(sim, "add", "io_error", "--target", "testfs-OST0000", "--op", "write")
    result = sim.lctl("--device", devno, "test_brw", "2", "w", "q", "1", objid)
    assert result.stderr == "error: test_brw: #1 - Input/output error on write\n"
    assert result.returncode == 5
    assert sim.lctl("--device", devno, "test_brw", "1", "r", "q", "1", objid).returncode == 0


def test_enomem_in_threads(sim):
    devno, objid = brw_setup(sim)
    fault(sim, "add", "enomem", "--target", "testfs-OST0000")
    result = sim.lctl("--threads", "1", "-1", devno, "test_brw", "2", "w", "q", "1",
                      "t" + str(int(objid, 16)))
    assert "error: test_brw-1: #1 - Cannot allocate memory on write\n" in result.stderr
    assert "--threads: PID " in result.stderr and "had rc=12" in result.stderr
    assert result.returncode == 12


def test_target_full(sim):
    devno, objid = brw_setup(sim, "testfs-OST0001")
    fault(sim, "add", "target_full", "--target", "testfs-OST0001")
    result = sim.lctl("--device", devno, "test_brw", "1", "w", "q", "1", objid)
    assert result.stderr == "error: test_brw: #1 - No space left on device on write\n"


def test_real_capacity_limit(node_factory):
    node = node_factory("small", osts=1, ost_size_mib=1)
    devno, objid = brw_setup(node)
    result = node.lctl("--device", devno, "test_brw", "3", "w", "q", "128", objid)
    assert result.stderr == "error: test_brw: #3 - No space left on device on write\n"


def test_hang_until_killed(sim):
    devno, objid = brw_setup(sim)
    fault(sim, "add", "hang", "--command", "test_brw")
    process = subprocess.Popen([sim.root + "/bin/lctl", "--device", devno, "test_brw", "1",
                                "w", "q", "1", objid], env=sim.env())
    sim.wait_for_hang(process)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=10) == -signal.SIGTERM
    assert sim.lctl("--device", devno, "create", "1").returncode == 0


def test_hang_after_the_first_object_of_a_create(sim, tmp_path):
    devno = sim.echo_client("testfs-OST0000")
    fault(sim, "add", "hang", "--command", "obj_batch create")
    output = tmp_path / "create.out"
    with open(str(output), "w") as handle:
        process = subprocess.Popen([sim.root + "/bin/lctl", "--device", devno, "create", "3"],
                                   stdout=handle, env=sim.env())
    sim.wait_for_hang(process)
    # held after its first object, whose id is printed (written out) before it holds
    assert output.read_text().splitlines()[-1] == "create: #1 is object id 0x2"
    objects = os.path.join(sim.root, "targets", "testfs-OST0000", "O", "echo")
    assert sum(len(files) for _, _, files in os.walk(objects)) == 1
    fault(sim, "clear", "hang")
    assert process.wait(timeout=30) == 0
    assert output.read_text().splitlines()[-2:] == ["create: #2 is object id 0x3", "create: #3 is object id 0x4"]
    assert sum(len(files) for _, _, files in os.walk(objects)) == 3


def test_leftover_echo_client_and_obdecho_busy(tmp_path, node_factory):
    node = node_factory("left", osts=1, faults=[
        {"type": "leftover_echo_client", "target": "testfs-OST0000"},
        {"type": "obdecho_busy"}])
    line = [l for l in node.lctl("dl").stdout.splitlines() if "_ecc" in l][0]
    assert line.split()[1:5] == ["UP", "echo_client", "testfs-OST0000_ecc",
                                 "testfs-OST0000_ecc_UUID"]
    assert node.lctl(stdin="--device testfs-OST0000_ecc cleanup\n"
                           "--device testfs-OST0000_ecc detach\n").returncode == 0
    busy = node.run(node.root + "/bin/rmmod", "obdecho")
    assert busy.stderr == "rmmod: ERROR: Module obdecho is in use\n"
    fault(node, "clear", "obdecho_busy")
    assert node.run(node.root + "/bin/rmmod", "obdecho").returncode == 0


def test_host_dead(sim):
    fault(sim, "add", "host_dead")
    hostname = Node(sim.root).hostname
    for tool in ("lctl", "lsmod", "modprobe"):
        result = sim.run(os.path.join(sim.root, "bin", tool), "dl")
        assert result.returncode == 255
        assert result.stderr == ("ssh: connect to host %s port 22: Connection refused\n"
                                 % hostname)
    fault(sim, "clear", "host_dead")
    assert sim.lctl("dl").returncode == 0


def test_status_lists_running_helpers(node_factory):
    from lustre_sim.cli import main
    import contextlib
    import io

    def helpers():
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            main(["status", "--root", node.root])
        return json.loads(buffer.getvalue())["helpers"]

    node = node_factory("slow", osts=1, ost_mib_s=1)
    devno, objid = brw_setup(node)
    slow = subprocess.Popen([node.root + "/bin/lctl", "--threads", "2", "-1", devno,
                             "test_brw", "4", "wx", "q", "64", "2t" + str(int(objid, 16))],
                            env=node.env(), stdout=subprocess.PIPE)

    def three_or_more():
        running = helpers()
        return running if len(running) >= 3 else None

    running = wait_for("the helpers of the slow run", three_or_more, process=slow)
    assert len(running) == 3 and any("--threads" in h["command"] for h in running)
    slow.wait(timeout=30)
    assert helpers() == []
