"""The client mount: FUSE file system throttled per OST, faults, fallbacks, clean unmount."""

import errno
import os
import shutil
import subprocess
import time

import pytest

from conftest import wait_for
from lustre_sim import client_mount
from lustre_sim.node import pid_alive

FUSE = os.geteuid() == 0 and client_mount.fuse_possible()
needs_fuse = pytest.mark.skipif(not FUSE, reason="needs root and /dev/fuse")


@pytest.fixture
def mounted(node_factory, tmp_path):
    sim = node_factory("f", client_mount=str(tmp_path / "mnt"),
                       osts=[{"mib_s": 20}, {}], ost_size_mib=64)
    assert client_mount.mount(sim.node, mode="fuse") == "fuse"
    sim.mnt = str(tmp_path / "mnt")
    yield sim
    client_mount.unmount(sim.node)


def test_every_fuse_handler_is_named_after_the_opcode_it_serves():
    handlers = {name for name in dir(client_mount.FuseServer) if name.startswith("op_")}
    assert handlers <= set(client_mount.HANDLER_NAMES.values()), "never dispatched: %s" % sorted(
        handlers - set(client_mount.HANDLER_NAMES.values()))
    assert client_mount.HANDLER_NAMES[client_mount.OP["GETATTR"]] == "op_getattr"
    assert "op_getattr" in handlers and "op_read" in handlers


def lfs(sim, *args):
    return sim.run(os.path.join(sim.root, "bin", "lfs"), *args)


def timed_write(path, nbytes):
    started = time.monotonic()
    with open(path, "wb") as handle:
        for _ in range(nbytes // (1 << 20)):
            handle.write(b"\0" * (1 << 20))
    return time.monotonic() - started


@needs_fuse
def test_fuse_mount_is_a_working_file_system(mounted):
    assert client_mount.mount_kind(mounted.node) == "fuse"
    state = mounted.node.read_state("client")
    assert state["kind"] == "fuse" and pid_alive(state["pid"])
    assert any(h["pid"] == state["pid"] for h in mounted.node.live_helpers())
    mnt = mounted.mnt
    os.makedirs(os.path.join(mnt, "a", "b"))
    with open(os.path.join(mnt, "a", "b", "f"), "w") as handle:
        handle.write("hello")
    os.rename(os.path.join(mnt, "a"), os.path.join(mnt, "c"))
    with open(os.path.join(mnt, "c", "b", "f")) as handle:
        assert handle.read() == "hello"
    assert sorted(os.listdir(os.path.join(mnt, "c", "b"))) == ["f"]
    # data lives in the backing directory
    assert os.path.exists(os.path.join(mounted.node.client_dir(), "c", "b", "f"))
    os.truncate(os.path.join(mnt, "c", "b", "f"), 2)
    assert os.path.getsize(os.path.join(mnt, "c", "b", "f")) == 2
    os.symlink("b/f", os.path.join(mnt, "c", "link"))
    assert os.readlink(os.path.join(mnt, "c", "link")) == "b/f"
    shutil.rmtree(os.path.join(mnt, "c"))
    assert os.listdir(mnt) == []
    statvfs = os.statvfs(mnt)
    assert statvfs.f_blocks * statvfs.f_frsize == 128 << 20


@needs_fuse
def test_writes_and_reads_run_at_the_ost_speed(mounted):
    slow = os.path.join(mounted.mnt, "slow")
    fast = os.path.join(mounted.mnt, "fast")
    assert lfs(mounted, "setstripe", "-c", "1", "-i", "0", slow).returncode == 0
    assert lfs(mounted, "setstripe", "-c", "1", "-i", "1", fast).returncode == 0
    slow_seconds = timed_write(slow, 2 << 20)
    fast_seconds = timed_write(fast, 2 << 20)
    assert slow_seconds >= 0.095  # 2 MiB at 20 MiB/s
    assert fast_seconds < slow_seconds
    started = time.monotonic()
    result = subprocess.run(["dd", "if=" + slow, "of=/dev/null", "bs=1M"],
                            stderr=subprocess.PIPE)
    assert result.returncode == 0
    assert time.monotonic() - started >= 0.095


@needs_fuse
def test_io_error_and_full_target_faults(mounted):
    path = os.path.join(mounted.mnt, "victim")
    lfs(mounted, "setstripe", "-c", "1", "-i", "1", path)
    with mounted.node.state("faults") as state:
        state["faults"] = [{"type": "io_error", "target": "testfs-OST0001", "op": "write"}]
    with pytest.raises(OSError) as raised:
        with open(path, "wb") as handle:
            handle.write(b"x" * 4096)
            handle.flush()
    assert raised.value.errno == errno.EIO
    with mounted.node.state("faults") as state:
        state["faults"] = [{"type": "target_full", "target": "testfs-OST0001"}]
    with pytest.raises(OSError) as raised:
        with open(path, "wb") as handle:
            handle.write(b"x" * 4096)
            handle.flush()
    assert raised.value.errno == errno.ENOSPC
    with mounted.node.state("faults") as state:
        state["faults"] = []
    with open(path, "wb") as handle:
        handle.write(b"x" * 4096)


@needs_fuse
def test_unmount_stops_the_daemon(node_factory, tmp_path):
    sim = node_factory("u", client_mount=str(tmp_path / "m"), osts=1)
    client_mount.mount(sim.node, mode="fuse")
    pid = sim.node.read_state("client")["pid"]
    assert client_mount.unmount(sim.node) == "fuse"
    assert not client_mount.is_mounted(sim.node)
    assert not pid_alive(pid)
    assert sim.node.live_helpers() == []
    assert client_mount.unmount(sim.node) is None  # idempotent


@needs_fuse
def test_mount_replaces_a_dead_daemon(mounted):
    old = mounted.node.read_state("client")["pid"]
    os.kill(old, 9)
    wait_for("the killed daemon %d to be gone" % old, lambda: not pid_alive(old))
    assert client_mount.mount(mounted.node) == "fuse"
    assert mounted.node.read_state("client")["pid"] != old
    open(os.path.join(mounted.mnt, "alive"), "w").close()


@needs_fuse
def test_mdtest_on_the_mount(mounted):
    result = mounted.run(os.path.join(mounted.root, "bin", "mdtest"), "-n", "20", "-w", "512",
                         "-e", "512", "-d", os.path.join(mounted.mnt, "md"))
    assert result.returncode == 0, result.stdout
    assert "Path: %s/md" % mounted.mnt in result.stdout
    assert "FS: 0.1 GiB" in result.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="bind mounts need root")
def test_bind_fallback(node_factory, tmp_path):
    sim = node_factory("b", client_mount=str(tmp_path / "bind"), osts=1)
    assert client_mount.mount(sim.node, mode="bind") == "bind"
    open(os.path.join(str(tmp_path / "bind"), "x"), "w").close()
    assert os.path.exists(os.path.join(sim.node.client_dir(), "x"))
    assert client_mount.unmount(sim.node) == "bind"
    assert not client_mount.is_mounted(sim.node)


def test_symlink_fallback_and_layout_math(node_factory, tmp_path):
    sim = node_factory("s", client_mount=str(tmp_path / "link"), osts=3)
    assert client_mount.mount(sim.node, mode="symlink") == "symlink"
    assert os.path.realpath(str(tmp_path / "link")) == os.path.realpath(sim.node.client_dir())
    layout = client_mount.resolve(sim.node, {"stripe_count": 2, "stripe_size": 65536,
                                             "stripe_offset": 2}, 77)
    assert layout["osts"] == [2, 0]
    assert client_mount.stripe_pieces(layout, 60000, 80000) == [(2, 5536), (0, 65536),
                                                                (2, 8928)]
    assert client_mount.unmount(sim.node) == "symlink"
    assert not os.path.lexists(str(tmp_path / "link"))
