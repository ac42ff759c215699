"""lst: session rules, NID parsing, output texts, stat sampling and the link model."""

import os
import re
import subprocess
import time

import pytest

from conftest import node_from_config
from lustre_sim import lnet_model

RATE_LINE = re.compile(r"^\[(R|W)\] Avg: (\S+) +RPC/s Min: (\S+) +RPC/s Max: (\S+) +RPC/s$")
BW_LINE = re.compile(r"^\[(R|W)\] Avg: (\S+) +MiB/s Min: (\S+) +MiB/s Max: (\S+) +MiB/s $")


@pytest.fixture
def console(node_factory):
    sim = node_factory("lnet", osts=1)
    with sim.node.state("modules") as modules:
        modules.setdefault("loaded", []).append("lnet_selftest")
    return sim


def lst(sim, *args, key="4242", timeout=30):
    env = sim.env()
    if key is None:
        env.pop("LST_SESSION", None)
    else:
        env["LST_SESSION"] = key
    return subprocess.run([os.path.join(sim.root, "bin", "lst")] + list(args), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=timeout)


def test_needs_session_key(console):
    for key in (None, "abc", "0"):
        result = lst(console, "new_session", "s", key=key)
        assert result.returncode == 255
        assert result.stderr == "Can't find env LST_SESSION or value is not valid\n"


def test_needs_lnet_selftest(node_factory):
    sim = node_factory("plain", osts=1)
    result = lst(sim, "new_session", "s")
    assert result.stderr == "Invalid parameters list in command line\n"


def test_session_lifecycle_and_key_rules(console):
    created = lst(console, "new_session", "--timeout", "60", "sess")
    assert created.stdout == "SESSION: sess FEATURES: 1 TIMEOUT: 60 FORCE: No\n"
    again = lst(console, "new_session", "other", key="99")
    assert again.returncode == 255 and again.stderr == "session already exists\n"
    shown = lst(console, "show_session", key="99")
    assert re.match(r"^sess ID: \d+@192\.168\.1\.10@tcp, KEY: 4242 FEATURES: 1 NODES: 0\n$",
                    shown.stdout)
    stolen = lst(console, "add_batch", "b", key="99")
    assert stolen.stderr == "Unmatched session key or not root\n"
    forced = lst(console, "new_session", "--force", "mine", key="99")
    assert forced.stdout == "SESSION: mine FEATURES: 1 TIMEOUT: 300 FORCE: Yes\n"
    assert console.node.read_state("lst")["session"]["key"] == 99
    assert lst(console, "end_session", key="99").stdout == "session is ended\n"
    gone = lst(console, "show_session")
    assert gone.returncode == 255 and gone.stderr == "No session exists\n"


def test_session_expires_after_its_timeout(console):
    lst(console, "new_session", "--timeout", "1", "short")
    state = console.node.read_state("lst")["session"]
    assert state["expires_at"] - state["last_active"] == 1
    time.sleep(1.3)
    result = lst(console, "show_session")
    assert result.stderr == "No session exists\n"
    assert console.node.read_state("lst")["expired"][-1]["name"] == "short"
    assert lst(console, "new_session", "fresh").returncode == 0


def test_groups_nids_and_ranges(console):
    lst(console, "new_session", "s")
    added = lst(console, "add_group", "servers", "10.0.0.[1-3,7]@tcp", "192.168.5.2@o2ib1")
    assert added.stdout == ("10.0.0.[1-3,7]@tcp are added to session\n"
                            "192.168.5.2@o2ib1 are added to session\n")
    assert console.node.read_state("lst")["session"]["groups"]["servers"] == [
        "10.0.0.1@tcp", "10.0.0.2@tcp", "10.0.0.3@tcp", "10.0.0.7@tcp", "192.168.5.2@o2ib1"]
    bad = lst(console, "add_group", "bad", "host1@tcp", "10.0.0.300@tcp")
    assert bad.returncode == 255
    assert bad.stderr == ("Invalid nid: host1@tcp\nIgnore invalid id list host1@tcp\n"
                          "Invalid nid: 10.0.0.300@tcp\nIgnore invalid id list 10.0.0.300@tcp\n"
                          "No nodes added successfully, deleting group bad\n")
    assert lst(console, "add_group", "servers", "10.0.0.9@tcp").stderr == \
        "group already exists\n"
    listing = lst(console, "list_group")
    assert listing.stdout == "1) servers\nTotal 1 groups\n"
    assert lst(console, "list_group", "servers").stdout == \
        "\tACTIVE\tBUSY\tDOWN\tUNKNOWN\tTOTAL\n\t5\t0\t0\t0\t5\tservers\n"
    assert "NODES: 5" in lst(console, "show_session").stdout


def test_add_test_validation(console):
    lst(console, "new_session", "s")
    lst(console, "add_group", "c", "10.0.0.1@tcp")
    lst(console, "add_group", "s", "10.0.0.2@tcp")
    assert lst(console, "add_test", "--concurrency", "2000", "--from", "c", "--to", "s",
               "ping").stderr == "Invalid concurrency of test: 2000\n"
    assert lst(console, "add_test", "--from", "c", "--to", "s", "brw", "size=2m").stderr == \
        "Size exceed limitation: 2097152 bytes\nFailed to add test (brw)\n"
    assert lst(console, "add_test", "--from", "c", "--to", "s", "brw", "off=3").returncode == 255
    assert lst(console, "add_test", "--from", "nope", "--to", "s", "ping").stderr == \
        "Can't get count of nodes from nope: No such file or directory\n"
    assert lst(console, "add_test", "--distribute", "1", "--from", "c", "--to", "s",
               "ping").stderr == "Invalid distribution: 1\n"
    assert lst(console, "add_test", "--batch", "nobatch", "--from", "c", "--to", "s",
               "ping").stderr == "Can't find test in current session\n"
    assert lst(console, "add_test", "--from", "c", "--to", "s", "brw", "write",
               "size=4k").stdout == "Test was added successfully\n"
    assert lst(console, "list_batch").stdout == "1) batch\nTotal 1 batches\n"


def test_run_stat_stop_with_model_numbers(tmp_path):
    console = node_from_config(tmp_path / "lnet100", "osts: 1\nlnet: {link_mib_s: 100}\n")
    console.run(os.path.join(console.root, "bin", "modprobe"), "lnet_selftest")
    lst(console, "new_session", "s")
    lst(console, "add_group", "servers", "10.0.0.[1-2]@tcp")
    lst(console, "add_group", "clients", "10.0.0.[3-4]@tcp")
    lst(console, "add_batch", "bulk")
    lst(console, "add_test", "--batch", "bulk", "--concurrency", "16", "--distribute", "1:1",
        "--from", "clients", "--to", "servers", "brw", "read", "size=1m")
    assert lst(console, "run", "bulk").stdout == "bulk is running now\n"
    started = time.time()
    stat = lst(console, "stat", "--count", "1", "--delay", "1", "servers")
    assert time.time() - started >= 1.0
    lines = stat.stdout.splitlines()
    assert lines[0] == "[LNet Rates of servers]"
    assert lines[3] == "[LNet Bandwidth of servers]"
    rates = [RATE_LINE.match(l).groups() for l in lines[1:3]]
    bandwidth = [BW_LINE.match(l).groups() for l in lines[4:6]]
    assert [r[0] for r in rates] == ["R", "W"] and [b[0] for b in bandwidth] == ["R", "W"]
    # read test: servers send the bulk; each server link (100 MiB/s) is the limit
    assert bandwidth[1][1:] == ("100.00", "100.00", "100.00")
    rpc = 100 * 1048576.0 / (1048576 + lnet_model.MESSAGE_BYTES)
    assert int(rates[0][1]) == round(rpc)
    assert int(rates[1][1]) == round(2 * rpc)
    mbs = lst(console, "stat", "--count", "1", "--delay", "1", "--bw", "--write", "--mbs",
              "--avg", "servers")
    assert mbs.stdout == "[LNet Bandwidth of servers]\n[W] Avg: 104.86   MB/s  \n"
    errors = lst(console, "show_error", "--session", "servers", "clients")
    assert errors.stdout == ("servers:\nTotal 0 error nodes in servers\n"
                             "clients:\nTotal 0 error nodes in clients\n")
    assert lst(console, "stop", "bulk").stdout == "Batch is stopped\n"
    idle = lst(console, "stat", "--count", "1", "--delay", "1", "--rate", "clients")
    assert "[R] Avg: 0        RPC/s Min: 0        RPC/s Max: 0        RPC/s" in idle.stdout


def test_stat_argument_checks(console):
    lst(console, "new_session", "s")
    assert lst(console, "stat", "--delay", "0", "x").stderr == "Invalid timeout or delay value\n"
    assert lst(console, "stat", "--count", "-2", "x").stderr == "Invalid count value\n"
    missing = lst(console, "stat", "--count", "1", "--delay", "1", "nogroup")
    assert missing.stderr == "Failed to get count of nodes from nogroup: No such file or directory\n"


def test_hang_fault_on_stat(console):
    lst(console, "new_session", "s")
    lst(console, "add_group", "g", "10.0.0.1@tcp")
    with console.node.state("faults") as state:
        state.setdefault("faults", []).append({"type": "hang", "command": "lst stat"})
    with pytest.raises(subprocess.TimeoutExpired):
        lst(console, "stat", "--count", "1", "--delay", "1", "g", timeout=2)
    assert lst(console, "show_session").returncode == 0


def test_model_pairing_and_loop_duration():
    assert lnet_model.pairing(["c1", "c2", "c3"], ["s1", "s2"], 1, 1) == {
        "c1": ["s1"], "c2": ["s2"], "c3": ["s1"]}
    assert lnet_model.pairing(["c1", "c2"], ["s1", "s2"], 2, 2) == {
        "c1": ["s1", "s2"], "c2": ["s1", "s2"]}
    model = lnet_model.LinkModel({"lnet": {"link_mib_s": 10, "per_nid": {"s1": 5}}})
    test = {"type": "brw", "op": "write", "size": 1 << 20, "concurrency": 8, "loop": 10,
            "dist": 1, "span": 1, "from": "c", "to": "s"}
    groups = {"c": ["c1"], "s": ["s1"]}
    rates = lnet_model.client_rates(test, ["c1"], ["s1"], model)
    # the 5 MiB/s server link limits the writer, whose own link allows 10
    assert rates["c1"]["s1"] == pytest.approx(5 * 1048576.0 / (1048576 + 154), rel=1e-9)
    assert lnet_model.test_duration(test, groups, model) == pytest.approx(
        10 * 8 / rates["c1"]["s1"])
    test["concurrency"] = 1
    single = lnet_model.client_rates(test, ["c1"], ["s1"], model)["c1"]["s1"]
    # one RPC in flight: latency plus transfer time bound the rate
    assert single == pytest.approx(1 / (2 * 50e-6 + 1 / 5.0))
    assert lnet_model.expand_nids("10.0.[1-2].[5,7]@tcp") == [
        "10.0.1.5@tcp", "10.0.1.7@tcp", "10.0.2.5@tcp", "10.0.2.7@tcp"]
