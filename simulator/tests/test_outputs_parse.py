"""The simulator's outputs, read by the collection's own parsers, say what the simulator did.

The parsers live in the lustre.iokit checkout that holds this simulator
(``plugins/module_utils/parsers``); the ``parse`` fixture (conftest) imports them.
"""

import os
import subprocess

import pytest

from conftest import node_from_config

def tool(sim, name, *args, **kwargs):
    result = sim.run(os.path.join(sim.root, "bin", name), *args, **kwargs)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_device_lists(parse, node_factory):
    sim = node_factory("dl", osts=2, client_mount="/mnt/testfs", lustre_version="2.16.1")
    expected = sim.node.devices()
    plain = parse("lctl_dl", tool(sim, "lctl", "dl"))
    assert [(d["index"], d["status"], d["type"], d["name"], d["uuid"], d["refcount"])
            for d in plain] == [(d["index"], d["status"], d["type"], d["name"], d["uuid"],
                                 d["refcount"]) for d in expected]
    with_nids = parse("lctl_dl", tool(sim, "lctl", "dl", "-t"))
    nids = {d["name"]: d["nid"] for d in with_nids if d["nid"]}
    clients = [d["name"] for d in expected if d["type"] in ("osc", "mdc")]
    assert sorted(nids) == sorted(clients) and len(clients) == 3
    assert set(nids.values()) == {sim.node.config["nid"]}
    assert parse("lctl_dl", tool(sim, "lctl", "dl", "-y")) == plain


def test_brw_stats_count_the_io_issued(parse, sim):
    devno = sim.echo_client("testfs-OST0000")
    objid = tool(sim, "lctl", "--device", devno, "create", "1").split()[-1]
    tool(sim, "lctl", "--device", devno, "test_brw", "3", "w", "q", "16", objid)
    tool(sim, "lctl", "--device", devno, "test_brw", "2", "r", "q", "256", objid)
    parsed = parse("brw_stats", tool(sim, "lctl", "get_param", "osd-*.*.brw_stats"))
    targets = {t["target"]: t for t in parsed["targets"]}
    assert sorted(targets) == ["testfs-MDT0000", "testfs-OST0000", "testfs-OST0001"]
    assert all(not rows for rows in targets["testfs-OST0001"]["histograms"].values())

    def counts(histogram, direction):
        rows = targets["testfs-OST0000"]["histograms"][histogram]
        return {row["bucket"]: row[direction]["count"] for row in rows if row[direction]["count"]}

    assert counts("pages per bulk r/w", "write") == {"16": 3}
    assert counts("pages per bulk r/w", "read") == {"256": 2}
    assert counts("disk I/O size", "write") == {"64K": 3}  # 16 pages of 4 KiB
    assert counts("disk I/O size", "read") == {"1M": 2}
    for histogram in ("disk fragmented I/Os", "I/O time (1/1000s)", "disk I/Os in flight"):
        assert sum(counts(histogram, "write").values()) == 3
        assert sum(counts(histogram, "read").values()) == 2


def test_lst_stat_groups_and_conservation(parse, node_factory):
    sim = node_factory("lst", osts=1)
    tool(sim, "modprobe", "lnet_selftest")
    env = sim.env(LST_SESSION="31")

    def lst(*args):
        result = subprocess.run([os.path.join(sim.root, "bin", "lst")] + list(args), env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                universal_newlines=True, timeout=60)
        assert result.returncode == 0, result.stderr
        return result.stdout

    lst("new_session", "parse")
    lst("add_group", "servers", "10.0.0.[1-2]@tcp")
    lst("add_group", "clients", "10.0.0.[3-5]@tcp")
    lst("add_batch", "b")
    lst("add_test", "--batch", "b", "--concurrency", "8", "--from", "clients", "--to", "servers",
        "brw", "write", "size=64k")
    lst("run", "b")
    text = lst("stat", "--delay", "1", "--count", "1", "servers", "clients")
    lst("stop", "b")
    lst("end_session")
    records = parse("lst_stat", text)
    assert sorted({(r["group"], r["metric"], r["direction"]) for r in records}) == sorted(
        (group, metric, direction) for group in ("servers", "clients")
        for metric in ("rates", "bandwidth") for direction in ("read", "write"))

    def total(group, metric, direction, members):
        record = [r for r in records if (r["group"], r["metric"], r["direction"])
                  == (group, metric, direction)][0]
        return record["avg"] * members

    # What 3 clients send is what 2 servers receive (MiB/s printed with 2 decimals).
    assert total("clients", "bandwidth", "write", 3) == pytest.approx(
        total("servers", "bandwidth", "read", 2), rel=0.01)
    assert total("clients", "bandwidth", "write", 3) > 0


@pytest.mark.parametrize("version", ["3.3.0", "4.0.0"])
def test_mdtest_report(parse, tmp_path, version):
    sim = node_from_config(tmp_path / "md", "osts: 1\nmdtest: {version: %s}\n" % version)
    text = tool(sim, "mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "3", "mdtest",
                "-F", "-n", "5", "-i", "2", "-d", str(tmp_path / "work"))
    parsed = parse("mdtest", text)
    assert (parsed["version"], parsed["tasks"], parsed["nodes"], parsed["iterations"]) == \
        (version, 3, 1, 2)
    assert sorted(parsed["summary"]) == ["file creation", "file read", "file removal",
                                         "file stat", "tree creation", "tree removal"]
    for row in parsed["summary"].values():
        assert 0 < row["min"] <= row["mean"] <= row["max"]
