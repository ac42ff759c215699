"""lfs over a client mount (symbolic-link form, so no FUSE is needed here)."""

import os
import re

import pytest

from lustre_sim import client_mount


@pytest.fixture
def client(node_factory, tmp_path):
    sim = node_factory("c", osts=4, client_mount=str(tmp_path / "mnt"))
    assert client_mount.mount(sim.node, mode="symlink") == "symlink"
    sim.mnt = str(tmp_path / "mnt")
    yield sim
    client_mount.unmount(sim.node)


def lfs(sim, *args):
    return sim.run(os.path.join(sim.root, "bin", "lfs"), *args)


def test_getname_osts_check(client):
    instance = client_mount.instance(client.node)
    assert re.match(r"^ffff[0-9a-f]{12}$", instance)
    assert lfs(client, "getname", client.mnt).stdout == "testfs-%s %s\n" % (instance, client.mnt)
    assert lfs(client, "getname", "-n", client.mnt).stdout == "testfs\n"
    assert lfs(client, "getname", "-i", client.mnt).stdout == instance + "\n"
    assert lfs(client, "osts").stdout == "".join(
        ["OBDS:\n"] + ["%d: testfs-OST%04x_UUID ACTIVE\n" % (i, i) for i in range(4)])
    osts = lfs(client, "check", "osts").stdout.splitlines()
    assert osts == ["testfs-OST%04x-osc-%s active." % (i, instance) for i in range(4)]
    servers = lfs(client, "check", "servers").stdout.splitlines()
    assert servers[-2:] == ["testfs-MDT0000-mdc-%s active." % instance,
                            "MGC192.168.1.10@tcp active."]
    bad = lfs(client, "check", "bogus")
    assert bad.returncode == 22 and bad.stderr == "lfs check: unrecognized option 'bogus'\n"


def test_df_formats(client):
    text = lfs(client, "df", client.mnt).stdout
    lines = text.splitlines()
    assert lines[0] == "UUID                   1K-blocks        Used   Available Use% Mounted on"
    assert lines[1] == "testfs-MDT0000_UUID        16384           0       16384   0%% %s[MDT:0]" \
        % client.mnt
    assert lines[2] == "testfs-OST0000_UUID        16384           0       16384   0%% %s[OST:0]" \
        % client.mnt
    assert lines[6] == ""
    assert lines[7] == "filesystem_summary:        65536           0       65536   0%% %s" \
        % client.mnt
    assert text.endswith("\n\n")
    human = lfs(client, "df", "-h").stdout.splitlines()
    assert human[0].split()[1] == "bytes"
    assert human[2] == "testfs-OST0000_UUID        16.0M           0       16.0M   0%% %s[OST:0]" \
        % client.mnt
    inodes = lfs(client, "df", "-i", client.mnt).stdout.splitlines()
    assert inodes[0] == "UUID                      Inodes       IUsed       IFree IUse% Mounted on"
    assert re.match(r"^testfs-MDT0000_UUID +6553 +\d+ +\d+ +\d+% ", inodes[1])


def test_df_counts_client_data_and_full_target(client):
    lfs(client, "setstripe", "-c", "1", "-i", "1", os.path.join(client.mnt, "data"))
    with open(os.path.join(client.mnt, "data"), "wb") as handle:
        handle.write(b"\0" * (2 << 20))
        os.fsync(handle.fileno())
    with client.node.state("faults") as state:
        state.setdefault("faults", []).append({"type": "target_full", "target": "testfs-OST0003"})
    lines = lfs(client, "df", client.mnt).stdout.splitlines()
    ost1 = lines[3].split()
    assert ost1[0] == "testfs-OST0001_UUID" and int(ost1[2]) >= 2048
    ost3 = lines[5].split()
    assert ost3[3] == "0" and ost3[4] == "100%"


def test_setstripe_getstripe(client):
    path = os.path.join(client.mnt, "file1")
    assert lfs(client, "setstripe", "-S", "0", "-i", "2", "-c", "1", path).returncode == 0
    text = lfs(client, "getstripe", path).stdout
    lines = text.splitlines()
    assert lines[:7] == [path, "lmm_stripe_count:  1", "lmm_stripe_size:   1048576",
                         "lmm_pattern:       raid0", "lmm_layout_gen:    0",
                         "lmm_stripe_offset: 2", "\tobdidx\t\t objid\t\t objid\t\t group"]
    assert re.match(r"^\t     2\t +\d+\t +0x[0-9a-f]+\t             0$", lines[7])
    assert text.endswith("\n\n")
    assert lfs(client, "getstripe", "-c", path).stdout == "1\n"
    assert lfs(client, "getstripe", "-i", path).stdout == "2\n"
    assert lfs(client, "getstripe", "-S", path).stdout == "1048576\n"
    again = lfs(client, "setstripe", "-c", "1", path)
    assert again.returncode == 17
    assert again.stderr == "lfs setstripe: setstripe error for '%s': stripe already set\n" % path
    wide = os.path.join(client.mnt, "wide")
    assert lfs(client, "setstripe", "--stripe-count", "-1", "--stripe-size", "128k",
               wide).returncode == 0
    yaml_text = lfs(client, "getstripe", "-y", wide).stdout
    assert "lmm_stripe_count:  4\nlmm_stripe_size:   131072\n" in yaml_text
    assert yaml_text.count("      - l_ost_idx: ") == 4
    assert lfs(client, "setstripe", "-S", "100k", wide + "2").stderr == (
        "lfs setstripe: invalid stripe size '100k', must be an even multiple of 65536 bytes\n")
    assert lfs(client, "setstripe", "-i", "9", wide + "3").returncode == 22


def test_directory_default_is_inherited_and_rename_keeps_layout(client):
    directory = os.path.join(client.mnt, "d")
    os.mkdir(directory)
    assert lfs(client, "setstripe", "-c", "2", "-i", "3", directory).returncode == 0
    assert lfs(client, "getstripe", "-d", directory).stdout == (
        "%s\nstripe_count:  2 stripe_size:   1048576 pattern:       raid0 stripe_offset: 3\n\n"
        % directory)
    child = os.path.join(directory, "child")
    open(child, "w").close()
    assert lfs(client, "getstripe", "-i", child).stdout == "3\n"
    assert lfs(client, "getstripe", "-c", child).stdout == "2\n"
    pinned = os.path.join(client.mnt, "pinned")
    lfs(client, "setstripe", "-i", "1", pinned)
    os.rename(pinned, os.path.join(directory, "moved"))
    assert lfs(client, "getstripe", "-i", os.path.join(directory, "moved")).stdout == "1\n"


def test_mkdir_on_mdts(client):
    path = os.path.join(client.mnt, "remote")
    assert lfs(client, "mkdir", "-i", "0", path).returncode == 0 and os.path.isdir(path)
    assert lfs(client, "getdirstripe", path).stdout == \
        "lmv_stripe_count: 0 lmv_stripe_offset: 0 lmv_hash_type: none\n"
    result = lfs(client, "mkdir", "-i", "3", os.path.join(client.mnt, "x"))
    assert result.returncode == 19 and "No such device" in result.stderr


def test_paths_outside_lustre_and_host_dead(client, tmp_path):
    outside = tmp_path / "plain"
    result = lfs(client, "getstripe", str(outside))
    assert result.returncode == 25 and "is not on a Lustre filesystem" in result.stderr
    with client.node.state("faults") as state:
        state.setdefault("faults", []).append({"type": "host_dead"})
    assert lfs(client, "df").returncode == 255


def test_unmounted_client_shows_nothing(node_factory, tmp_path):
    sim = node_factory("u", osts=1, client_mount=str(tmp_path / "m"))
    assert lfs(sim, "df").stdout == ""
    assert lfs(sim, "getname").stdout == ""
    assert "cannot find mounted Lustre" in lfs(sim, "check", "osts").stderr
