"""Node API: configuration, locked state across processes, helpers, throttle."""

import multiprocessing
import os
import time

import pytest

from lustre_sim.config import normalise_config
from lustre_sim.lifecycle import create_node
from lustre_sim.node import Node, SimError


def test_targets_and_paths(sim):
    node = Node(sim.root)
    osts = node.targets("ost")
    assert [t["name"] for t in osts] == ["testfs-OST0000", "testfs-OST0001"]
    assert osts[0]["uuid"] == "testfs-OST0000_UUID"
    assert os.path.isdir(osts[0]["path"])
    assert node.target("testfs-MDT0000")["kind"] == "mdt"
    assert node.target("nope") is None


def test_not_initialised(tmp_path):
    with pytest.raises(SimError):
        Node(tmp_path)


def test_overrides_and_unknown_keys():
    config = normalise_config({"osts": 4, "ost_mib_s": 100,
                               "ost_mib_s_override": {"OST0003": 40}})
    assert [o["mib_s"] for o in config["osts"]] == [100, 100, 100, 40]
    with pytest.raises(SimError):
        normalise_config({"bogus": 1})
    with pytest.raises(SimError):
        normalise_config({"ost_mib_s_override": {"OST0009": 1}})


def test_a_target_on_a_device_inherits_its_rate():
    config = normalise_config({"ost_mib_s": 100, "osts": [
        {"index": 0, "device": "/dev/loop7"},
        {"index": 1, "device": "/dev/loop8", "device_mib_s": 20},
        {"index": 2, "device": "/dev/loop9", "device_mib_s": 200, "mib_s": 50}]})
    assert [(o.get("device"), o.get("device_mib_s"), o["mib_s"]) for o in config["osts"]] == [
        ("/dev/loop7", None, 100), ("/dev/loop8", 20, 20), ("/dev/loop9", 200, 50)]
    for bad in ({"device": "loop7"}, {"device_mib_s": 20}, {"device": "/dev/loop7", "device_mib_s": 0}):
        with pytest.raises(SimError):
            normalise_config({"osts": [dict(bad, index=0)]})


def _bump(root, times):
    node = Node(root)
    for _ in range(times):
        with node.state("counter") as state:
            state["value"] = state.get("value", 0) + 1


def test_state_is_safe_across_processes(sim):
    workers = [multiprocessing.Process(target=_bump, args=(sim.root, 50)) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert Node(sim.root).read_state("counter")["value"] == 200


def test_two_nodes_do_not_interfere(node_factory):
    first = node_factory("a", fsname="alpha")
    second = node_factory("b", fsname="beta", osts=1)
    first.echo_client("alpha-OST0000")
    assert second.devno("alpha-OST0000_ecc") is None
    assert "obdecho" not in Node(second.root).loaded_modules()
    assert "beta-OST0000" in second.lctl("dl").stdout


def test_helpers_registry_reports_live_pids(sim):
    node = Node(sim.root)
    node.register_helper(os.getpid(), "me")
    node.register_helper(999999, "gone")
    pids = [h["pid"] for h in node.live_helpers()]
    assert pids == [os.getpid()]
    node.unregister_helper(os.getpid())
    assert node.live_helpers() == []


def test_throttle_limits_rate(node_factory):
    node = Node(node_factory("t", osts=1, ost_mib_s=10).root)
    started = time.monotonic()
    node.throttle("testfs-OST0000", 2 * 1048576, started)
    assert time.monotonic() - started >= 0.19


def test_reinit_refuses_without_force(sim):
    with pytest.raises(SimError):
        create_node(sim.root, {})
    create_node(sim.root, {"osts": 1}, force=True)
    assert len(Node(sim.root).targets("ost")) == 1
