"""lustre-sim init/env/status/fault."""

import json
import os
import subprocess
import sys

from conftest import SIM_SRC


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


def test_config_file_with_faults(tmp_path):
    config = tmp_path / "node.yaml"
    config.write_text("fsname: demo\nosts:\n  - {index: 0, mib_s: 50}\n  - {index: 4}\n"
                      "client_mount: /mnt/demo\nlustre_version: 2.16.1\n"
                      "faults:\n  - {type: leftover_echo_client, target: demo-OST0004}\n")
    root = str(tmp_path / "n")
    assert cli("init", "--root", root, "--config", str(config)).returncode == 0
    status = json.loads(cli("status", "--root", root).stdout)
    names = [d["name"] for d in status["devices"]]
    assert "demo-OST0004" in names and "demo-OST0004_ecc" in names
    assert "obdecho" in status["modules"] and "lustre" in status["modules"]


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
