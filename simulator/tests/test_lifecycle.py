"""A node's life: init mounts its client, mount/umount, init --force and destroy stop what runs."""

import contextlib
import io
import json
import os
import subprocess
import time

import pytest

from lustre_sim import client_mount
from lustre_sim.cli import main
from lustre_sim.lifecycle import destroy_node
from lustre_sim.node import Node, SimError, helper_running

ROOT_WITH_FUSE = os.geteuid() == 0 and client_mount.fuse_possible()


def cli(*argv):
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        code = main(list(argv))
    return code, output.getvalue()


def status(root):
    code, text = cli("status", "--root", root)
    assert code == 0
    return json.loads(text)


def sleeper():
    return subprocess.Popen(["sleep", "60"], start_new_session=True)


def test_init_mounts_then_force_unmounts_before_recreating(tmp_path):
    root, mount_path = str(tmp_path / "n"), str(tmp_path / "mnt")
    code, text = cli("init", "--root", root, "--osts", "1", "--client-mount", mount_path)
    try:
        assert code == 0
        first = status(root)["client"]
        assert first["kind"] in ("fuse", "bind", "symlink")
        assert "client mounted at %s (%s)" % (mount_path, first["kind"]) in text
        with open(os.path.join(mount_path, "old-file"), "w") as handle:
            handle.write("from the first node")
        assert os.path.exists(os.path.join(root, "client", "old-file"))
        code, text = cli("init", "--root", root, "--osts", "2", "--client-mount", mount_path,
                         "--force")
        assert code == 0
        second = status(root)["client"]
        assert second["kind"] == first["kind"]
        if first["kind"] == "fuse":
            assert second["state"]["pid"] != first["state"]["pid"]
            assert not helper_running({"pid": first["state"]["pid"]})
        # The new node starts empty and its mount shows the new, empty namespace.
        assert os.listdir(mount_path) == []
        assert len(Node(root).targets("ost")) == 2
    finally:
        cli("destroy", "--root", root)
    assert not os.path.ismount(mount_path) and not os.path.islink(mount_path)


def test_mount_and_umount_commands(tmp_path):
    root, mount_path = str(tmp_path / "n"), str(tmp_path / "mnt")
    assert cli("init", "--root", root, "--osts", "1", "--client-mount", mount_path,
               "--no-mount")[0] == 0
    assert status(root)["client"]["kind"] is None
    try:
        code, kind = cli("mount", "--root", root, "--kind", "symlink")
        assert (code, kind) == (0, "symlink\n")
        assert os.path.realpath(mount_path) == os.path.realpath(os.path.join(root, "client"))
        assert cli("mount", "--root", root) == (0, "symlink\n")  # already mounted: kept
        assert status(root)["client"]["state"]["kind"] == "symlink"
        assert cli("umount", "--root", root) == (0, "symlink\n")
        assert cli("umount", "--root", root) == (0, "not mounted\n")
        assert not os.path.lexists(mount_path)
        assert status(root)["client"] == {"mountpoint": mount_path, "kind": None, "state": {}}
    finally:
        cli("destroy", "--root", root)


def test_mount_without_a_client_mount_is_an_error(tmp_path, capsys):
    root = str(tmp_path / "n")
    assert cli("init", "--root", root, "--osts", "1")[0] == 0
    assert main(["mount", "--root", root]) == 1
    assert "no client_mount configured" in capsys.readouterr().err


def test_destroy_stops_helpers_and_removes_the_root(tmp_path):
    root = str(tmp_path / "n")
    cli("init", "--root", root, "--osts", "1")
    node = Node(root)
    helper = sleeper()
    try:
        node.register_helper(helper.pid, "sleep 60 (test helper)")
        assert [h["pid"] for h in status(root)["helpers"]] == [helper.pid]
        assert cli("destroy", "--root", root) == (0, "lustre-sim: removed %s\n" % root)
        assert helper.wait(timeout=10) == -15  # SIGTERM
    finally:
        if helper.poll() is None:
            helper.kill()
            helper.wait()
    assert not os.path.exists(root)
    assert cli("destroy", "--root", root) == (0, "")  # nothing left: a no-op


def test_destroy_refuses_a_directory_that_is_not_a_node(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "keep").write_text("precious")
    with pytest.raises(SimError, match="not a lustre-sim node"):
        destroy_node(str(tmp_path / "data"))
    assert (tmp_path / "data" / "keep").read_text() == "precious"


def test_a_reused_pid_is_not_taken_for_a_helper(tmp_path):
    cli("init", "--root", str(tmp_path / "n"), "--osts", "1")
    node = Node(str(tmp_path / "n"))
    other = sleeper()
    try:
        node.register_helper(other.pid, "a helper that died; its pid now belongs to another")
        with node.state("helpers") as state:
            state["helpers"][0]["proc_start"] -= 1
        assert node.live_helpers() == []
        assert node.stop_helpers() == []
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()


@pytest.mark.skipif(not ROOT_WITH_FUSE, reason="needs root to mount under the node")
def test_force_refuses_while_something_is_mounted_under_the_root(tmp_path):
    root = str(tmp_path / "n")
    cli("init", "--root", root, "--osts", "1")
    target = os.path.join(root, "targets", "testfs-OST0000")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "keep").write_text("not the node's")
    client_mount._libc_mount(str(tmp_path / "elsewhere"), target, None, client_mount.MS_BIND, None)
    try:
        with pytest.raises(SimError, match="still mounted under"):
            destroy_node(root)
        code, _ = cli("init", "--root", root, "--osts", "1", "--force")
        assert code == 1
        assert (tmp_path / "elsewhere" / "keep").read_text() == "not the node's"
    finally:
        client_mount._libc_umount(target, 0)
    destroy_node(root)


def lst(root, *args):
    env = dict(os.environ, LST_SESSION="77", LUSTRE_SIM_ROOT=root)
    return subprocess.run([os.path.join(root, "bin", "lst")] + list(args), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)


def test_status_shows_lst_sessions_and_rmmod_ends_them(tmp_path):
    root = str(tmp_path / "n")
    cli("init", "--root", root, "--osts", "1")
    env = dict(os.environ, LUSTRE_SIM_ROOT=root)
    subprocess.run([os.path.join(root, "bin", "modprobe"), "lnet_selftest"], env=env, check=True)
    assert lst(root, "new_session", "--timeout", "60", "bench").returncode == 0
    lst(root, "add_group", "servers", "10.0.0.1@tcp")
    before = time.time()
    session = status(root)["lst"]["session"]
    assert session["name"] == "bench" and session["key"] == 77 and session["timeout"] == 60
    assert session["groups"] == ["servers"]
    assert before + 55 < session["expires_at"] <= before + 60
    assert "lnet_selftest" in status(root)["modules"]

    rmmod = subprocess.run([os.path.join(root, "bin", "rmmod"), "lnet_selftest"], env=env)
    assert rmmod.returncode == 0
    lst_state = status(root)["lst"]
    assert lst_state["session"] is None
    assert lst_state["expired"][-1]["name"] == "bench"
    assert lst_state["expired"][-1]["reason"] == "rmmod lnet_selftest"
    subprocess.run([os.path.join(root, "bin", "modprobe"), "lnet_selftest"], env=env, check=True)
    assert lst(root, "show_session").stderr == "No session exists\n"


def test_status_counts_a_session_past_its_timeout_as_expired(tmp_path):
    root = str(tmp_path / "n")
    cli("init", "--root", root, "--osts", "1")
    node = Node(root)
    with node.state("lst") as state:
        state["session"] = {"name": "old", "key": 5, "timeout": 10, "created": 100.0,
                            "last_active": 100.0, "expires_at": 110.0, "owner_pid": 1,
                            "groups": {}, "batches": {}}
    lst_state = status(root)["lst"]
    assert lst_state["session"] is None
    assert lst_state["expired"] == [{"name": "old", "key": 5, "expired_at": 110.0,
                                     "reason": "timeout"}]


def test_destroying_one_node_leaves_another_running(tmp_path):
    roots = [str(tmp_path / name) for name in ("a", "b")]
    for number, root in enumerate(roots):
        assert cli("init", "--root", root, "--osts", "1", "--fsname", "fs%d" % number,
                   "--client-mount", str(tmp_path / ("mnt%d" % number)))[0] == 0
    survivor = sleeper()
    try:
        Node(roots[1]).register_helper(survivor.pid, "sleep 60 (node b)")
        before = status(roots[1])
        assert cli("destroy", "--root", roots[0])[0] == 0
        after = status(roots[1])
        assert after["client"]["kind"] == before["client"]["kind"] is not None
        assert after["helpers"] == before["helpers"] and survivor.poll() is None
        with open(os.path.join(str(tmp_path / "mnt1"), "still-there"), "w") as handle:
            handle.write("b's mount works")
    finally:
        cli("destroy", "--root", roots[1])
        if survivor.poll() is None:
            survivor.kill()
        survivor.wait()
    assert not os.path.exists(roots[1])
