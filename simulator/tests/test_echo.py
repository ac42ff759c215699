"""OST echo (create/destroy/test_brw, --threads) and MD echo tests."""

import os
import re
import threading

from lustre_sim.echo_io import object_path
from lustre_sim.node import Node

TOTAL = re.compile(r"^Total: total (\d+) threads (\d+) sec [0-9.]+ [0-9.]+/second$", re.M)


def test_create_destroy_real_files(sim):
    devno = sim.echo_client("testfs-OST0000")
    out = sim.lctl("--device", devno, "create", "3").stdout.splitlines()
    assert out[0] == "create: 3 objects"
    ids = [int(line.split()[-1], 16) for line in out[1:]]
    assert out[1] == "create: #1 is object id %#x" % ids[0]
    assert ids == list(range(ids[0], ids[0] + 3))
    target = Node(sim.root).target("testfs-OST0000")
    assert all(os.path.exists(object_path(target["path"], i)) for i in ids)
    gone = sim.lctl("--device", devno, "destroy", str(ids[0]), "3")
    assert gone.stdout.splitlines()[0] == "destroy: 3 objects"
    assert not any(os.path.exists(object_path(target["path"], i)) for i in ids)
    again = sim.lctl("--device", devno, "destroy", str(ids[0]))
    assert again.stderr == "error: destroy: objid %#x: No such file or directory\n" % ids[0]


def test_brw_writes_and_reads_real_data(sim):
    devno = sim.echo_client("testfs-OST0001")
    first = sim.lctl("--device", devno, "create", "1").stdout.split()[-1]
    objid = int(first, 16)
    write = sim.lctl("--device", devno, "test_brw", "4", "w", "v", "8", str(objid))
    assert write.returncode == 0, write.stderr
    assert re.search(r"^test_brw: writing 4x8 pages \(obj %s, off 0\): " % first, write.stdout, re.M)
    assert re.search(r"^test_brw: wrote 4x8 pages in [0-9.]+s \([0-9.]+ MB/s\): ",
                     write.stdout, re.M)
    target = Node(sim.root).target("testfs-OST0001")
    assert os.path.getsize(object_path(target["path"], objid)) == 4 * 8 * 4096
    read = sim.lctl("--device", devno, "test_brw", "4", "r", "q", "8", str(objid))
    assert read.returncode == 0 and read.stderr == ""
    stats = sim.lctl("get_param", "-n", "osd-ldiskfs.testfs-OST0001.brw_stats").stdout
    assert re.search(r"^pages per bulk r/w\s+rpcs\s+% cum % \|\s+rpcs\s+% cum %$", stats, re.M)
    assert re.search(r"^8:\t\t\s+4 100 100   \|    4 100 100$", stats, re.M)
    assert re.search(r"^32K:\t\t\s+4 100 100   \|    4 100 100$", stats, re.M)
    ofd = sim.lctl("get_param", "-n", "obdfilter.testfs-OST0001.stats").stdout
    assert re.search(r"^write_bytes\s+4 samples \[bytes\] 32768 32768 131072 ", ofd, re.M)
    sim.lctl("set_param", "osd-ldiskfs.testfs-OST0001.brw_stats=0")
    cleared = sim.lctl("get_param", "-n", "obdfilter.testfs-OST0001.brw_stats").stdout
    assert "100 100" not in cleared


def test_brw_missing_object(sim):
    devno = sim.echo_client("testfs-OST0000")
    result = sim.lctl("--device", devno, "test_brw", "1", "w", "q", "1", "999")
    assert result.stderr == "error: test_brw: #1 - No such file or directory on write\n"
    assert result.returncode == 2


def test_threads_shared_object_and_summary(sim):
    devno = sim.echo_client("testfs-OST0000")
    first = sim.lctl("--device", devno, "create", "2").stdout.splitlines()[1].split()[-1]
    result = sim.lctl("--threads", "4", "-1", devno, "test_brw", "8", "wx", "q", "4",
                      "2t%d" % int(first, 16), "p4")
    lines = result.stdout.splitlines()
    assert lines[0] == "Print status every 1 seconds"
    assert lines[1] == ("--threads: starting 4 threads on device %s running test_brw 8 wx q 4 "
                        "2t%d p4" % (devno, int(first, 16)))
    match = TOTAL.search(result.stdout)
    assert match and match.group(1) == "32" and match.group(2) == "4"
    target = Node(sim.root).target("testfs-OST0000")
    # two threads share each object, interleaving 16 KiB records: 16 records per object
    assert os.path.getsize(object_path(target["path"], int(first, 16))) == 16 * 4 * 4096
    assert Node(sim.root).live_helpers() == []


def test_threads_samples_under_throttle(node_factory):
    node = node_factory("slow", osts=1, ost_mib_s=2)
    devno = node.echo_client("testfs-OST0000")
    objid = node.lctl("--device", devno, "create", "2").stdout.splitlines()[1].split()[-1]
    result = node.lctl("--threads", "2", "-1", devno, "test_brw", "10", "wx", "q", "64",
                       "1t" + str(int(objid, 16)), "p64")
    assert TOTAL.search(result.stdout).group(1) == "20"
    samples = re.findall(r"^(\d+)/2 Total: ([0-9.]+)/second$", result.stdout, re.M)
    assert samples, result.stdout
    assert all(0 < float(rate) < 12 for _, rate in samples)


def test_concurrent_threads_on_two_osts(sim):
    results = {}

    def run(target):
        devno = sim.echo_client(target)
        objid = sim.lctl("--device", devno, "create", "2").stdout.splitlines()[1].split()[-1]
        results[target] = sim.lctl("--threads", "2", "-1", devno, "test_brw", "6", "wx", "q",
                                   "16", "1t%d" % int(objid, 16), "p16")

    workers = [threading.Thread(target=run, args=(t,))
               for t in ("testfs-OST0000", "testfs-OST0001")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    for result in results.values():
        assert TOTAL.search(result.stdout).group(1) == "12", result.stdout + result.stderr


def test_md_echo_operations(sim):
    devno = sim.echo_client("testfs-MDT0000", "mdd")
    assert sim.lctl("--device", devno, "test_mkdir", "/tests", "-c", "1",
                    "--stripe_index", "0").returncode == 0
    root = os.path.join(Node(sim.root).target("testfs-MDT0000")["path"], "ROOT_ECHO")
    assert os.path.isdir(os.path.join(root, "tests"))
    again = sim.lctl("--device", devno, "test_mkdir", "/tests")
    assert again.stderr == "error: test_mkdir: File exists\n"
    for test in ("create", "lookup", "md_getattr", "setxattr"):
        result = sim.lctl("--threads", "2", "-1", devno, "test_" + test, "-d", "/tests",
                          "-D", "1", "-b", "2", "-n", "50")
        assert TOTAL.search(result.stdout).group(1) == "100", result.stderr
    assert len(os.listdir(os.path.join(root, "tests"))) == 100
    twice = sim.lctl("--device", devno, "test_setxattr", "-d", "/tests", "-b", "2", "-n", "1")
    assert twice.stderr == "error: test_setxattr: File exists\n"
    verbose = sim.lctl("--device", devno, "test_lookup", "-d", "/tests", "-b", "2",
                       "-n", "10", "-v")
    assert re.match(r"test_lookup: 10 in [0-9.]+s \([0-9.]+ /s\): ", verbose.stdout)
    assert sim.lctl("--device", devno, "test_rmdir", "/tests").stderr \
        == "error: test_rmdir: Directory not empty\n"
    sim.lctl("--threads", "2", "-1", devno, "test_destroy", "-d", "/tests", "-b", "2",
             "-n", "50")
    assert sim.lctl("--device", devno, "test_rmdir", "/tests").returncode == 0
    usage = sim.lctl("--device", devno, "test_create", "-b", "1")
    assert usage.stderr.startswith("count or seconds needs to be indicated\n")


def test_plug_batch_rejected_on_new_versions(node_factory):
    node = node_factory("new", lustre_version="2.16.1", osts=1)
    node.run(node.root + "/bin/modprobe", "obdecho")
    osc = [l.split()[3] for l in node.lctl("dl").stdout.splitlines() if " osc " in l]
    assert not osc  # no client mount configured
    client = node_factory("newclient", lustre_version="2.16.1", osts=1,
                          client_mount="/mnt/testfs")
    osc = [l.split()[3] for l in client.lctl("dl").stdout.splitlines() if " osc " in l][0]
    devno = client.echo_client(osc, name="osc_ecc")
    objid = client.lctl("--device", devno, "create", "1").stdout.split()[-1]
    result = client.lctl("--device", devno, "test_brw", "1", "w", "q", "1", objid, "g1")
    assert result.stderr == "error: test_brw: #1 - Invalid argument on write\n"
    assert client.lctl("--device", devno, "test_brw", "1", "w", "q", "1", objid,
                       "p1").returncode == 0
