"""lustre-sim init/env/status/fault."""

import json
import os
import subprocess
import sys

import pytest

from conftest import SIM_SRC
from lustre_sim.node import Node


def cli(*argv):
    env = dict(os.environ, PYTHONPATH=SIM_SRC)
    return subprocess.run([sys.executable, "-m", "lustre_sim.cli"] + list(argv),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env)


def test_init_env_status(tmp_path):
    root = str(tmp_path / "n")
    result = cli("init", "--root", root, "--osts", "3", "--ost-size-mib", "8",
                 "--ost-mib-s-override", "OST0002=40", "--hostname", "oss1",
                 "--nid", "10.0.0.1@tcp")
    assert result.returncode == 0, result.stderr
    for tool in ("lctl", "lfs", "lst", "mdtest", "mpirun", "modprobe", "rmmod", "lsmod"):
        assert os.access(os.path.join(root, "bin", tool), os.X_OK)
    env = cli("env", "--root", root).stdout.splitlines()
    assert env == ['export PATH="%s/bin:$PATH"' % root, 'export LUSTRE_SIM_ROOT="%s"' % root]
    status = json.loads(cli("status", "--root", root).stdout)
    assert "obdecho" not in status["modules"] and "lnet" in status["modules"]
    assert "lustre" not in status["modules"]
    assert [t["mib_s"] for t in status["targets"] if t["kind"] == "ost"] == [None, None, 40.0]
    assert status["helpers"] == []
    again = cli("init", "--root", root)
    assert again.returncode == 1 and "--force" in again.stderr


def test_config_file_with_faults_mounts_the_client(tmp_path):
    mount_path = str(tmp_path / "mnt")
    config = tmp_path / "node.yaml"
    config.write_text("fsname: demo\nosts:\n  - {index: 0, mib_s: 50}\n  - {index: 4}\n"
                      "client_mount: %s\nlustre_version: 2.16.1\n"
                      "lnet: {link_mib_s: 100, per_nid: {10.0.0.1@tcp: 50}}\n"
                      "mdtest: {version: 4.0.0}\n"
                      "faults:\n  - {type: leftover_echo_client, target: demo-OST0004}\n"
                      % mount_path)
    root = str(tmp_path / "n")
    init = cli("init", "--root", root, "--config", str(config))
    try:
        assert init.returncode == 0, init.stderr
        status = json.loads(cli("status", "--root", root).stdout)
        names = [d["name"] for d in status["devices"]]
        assert "demo-OST0004" in names and "demo-OST0004_ecc" in names
        assert "obdecho" in status["modules"] and "lustre" in status["modules"]
        kind = status["client"]["kind"]
        assert kind in ("fuse", "bind", "symlink")
        assert "client mounted at %s (%s)" % (mount_path, kind) in init.stdout
        assert status["client"]["state"]["kind"] == kind
        if kind == "fuse":
            assert [h["pid"] for h in status["helpers"]] == [status["client"]["state"]["pid"]]
        assert Node(root).config["lnet"] == {"link_mib_s": 100,
                                             "per_nid": {"10.0.0.1@tcp": 50}}
    finally:
        cli("destroy", "--root", root)
    assert not os.path.lexists(root)
    assert not os.path.ismount(mount_path)


@pytest.mark.parametrize("text, message", [
    ("lnet: {link_mibs: 10}", "unknown lnet keys: link_mibs"),
    ("lnet: {latency_us: -1}", "lnet.latency_us must be a positive number"),
    ("lnet: {per_nid: {oss1: 10}}", "'oss1' is not a NID"),
    ("mdtest: {version: 3.4.0}", "mdtest.version must be one of 3.3.0, 4.0.0"),
    ("mdtest: {verison: 4.0.0}", "mdtest must be a mapping with only 'version'"),
    ("osts: 1\ncolour: blue", "unknown configuration keys: colour"),
])
def test_config_sections_are_validated(tmp_path, text, message):
    config = tmp_path / "bad.yaml"
    config.write_text(text + "\n")
    result = cli("init", "--root", str(tmp_path / "n"), "--config", str(config))
    assert result.returncode == 1
    assert message in result.stderr
    assert not (tmp_path / "n" / "config.yaml").exists()


def test_fault_add_clear(tmp_path):
    root = str(tmp_path / "n")
    cli("init", "--root", root, "--osts", "1")
    assert cli("fault", "--root", root, "add", "io_error", "--target", "testfs-OST0000",
               "--op", "write").returncode == 0
    assert cli("fault", "--root", root, "add", "hang", "--command", "lst stat").returncode == 0
    assert cli("fault", "--root", root, "add", "io_error", "--target", "nope").returncode == 1
    faults = json.loads(cli("fault", "--root", root, "list").stdout)
    assert {"type": "hang", "command": "lst stat"} in faults
    cli("fault", "--root", root, "clear", "hang")
    assert [f["type"] for f in json.loads(cli("fault", "--root", root, "list").stdout)] \
        == ["io_error"]
    cli("fault", "--root", root, "clear", "--all")
    assert json.loads(cli("fault", "--root", root, "list").stdout) == []


def test_shims_find_their_node_without_the_environment(tmp_path):
    """A playbook runs `<root>/bin/lctl` directly, with no LUSTRE_SIM_ROOT set and another cwd."""
    root = tmp_path / "node with space"
    subprocess.run([sys.executable, "-m", "lustre_sim.cli", "init", "--root", str(root), "--osts", "1"],
                   check=True, env=dict(os.environ, PYTHONPATH=SIM_SRC), cwd=str(tmp_path))
    env = {k: v for k, v in os.environ.items() if k != "LUSTRE_SIM_ROOT"}
    env["PYTHONPATH"] = SIM_SRC
    listing = subprocess.run([str(root / "bin" / "lctl"), "dl"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True, env=env, cwd="/", check=False)
    assert listing.returncode == 0, listing.stderr
    assert " obdfilter testfs-OST0000 testfs-OST0000_UUID " in listing.stdout
