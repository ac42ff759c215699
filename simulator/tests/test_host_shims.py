"""install-shims / uninstall-shims on a temporary prefix standing in for /usr/local and /usr/sbin."""

import os
import stat
import subprocess

import pytest

from conftest import SIM_SRC
from lustre_sim.cli import main
from lustre_sim.host import DIVERTED_SUFFIX, shim_root
from lustre_sim.lifecycle import destroy_node
from lustre_sim.node import MODULE_SHIMS, SHIM_TOOLS, Node, SimError
from lustre_sim import host

REAL_MODPROBE = "#!/bin/sh\necho \"real modprobe: $*\"\n"
REAL_LSMOD = "#!/bin/sh\necho 'Module                  Size  Used by'\necho 'ext4   1  0'\n"


@pytest.fixture
def prefix(tmp_path):
    """A fake host: system tools in sys/ (modprobe a file, lsmod a symlink, no rmmod)."""
    system = tmp_path / "sys"
    system.mkdir()
    (system / "kmod-lsmod").write_text(REAL_LSMOD)
    (system / "modprobe").write_text(REAL_MODPROBE)
    os.chmod(str(system / "modprobe"), 0o750)
    os.chmod(str(system / "kmod-lsmod"), 0o755)
    os.symlink("kmod-lsmod", str(system / "lsmod"))
    root = str(tmp_path / "node")
    assert main(["init", "--root", root, "--osts", "1"]) == 0
    return {"root": root, "bin": str(tmp_path / "bin"), "sbin": str(tmp_path / "sbin"),
            "sys": str(system)}


def snapshot(directory):
    """Every entry with what a restore must keep: type, mode, symlink target or content."""
    result = {}
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            result[name] = ("link", os.readlink(path))
        else:
            with open(path, "rb") as handle:
                result[name] = (oct(info.st_mode), handle.read())
    return result


def shims(prefix, action, *extra):
    return main([action, "--root", prefix["root"], "--bindir", prefix["bin"],
                 "--sbindir", prefix["sbin"], "--system-module-tools",
                 "--system-dir", prefix["sys"]] + list(extra))


def run(path, *args, env_path):
    env = {k: v for k, v in os.environ.items() if k != "LUSTRE_SIM_ROOT"}
    env["PATH"] = env_path
    env["PYTHONPATH"] = SIM_SRC
    return subprocess.run([path] + list(args), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)


def test_install_diverts_and_uninstall_restores_exactly(prefix):
    before = snapshot(prefix["sys"])
    for _ in range(2):  # idempotent
        assert shims(prefix, "install-shims") == 0
    assert sorted(os.listdir(prefix["bin"])) == sorted(SHIM_TOOLS)
    assert sorted(os.listdir(prefix["sbin"])) == sorted(MODULE_SHIMS)
    for tool in MODULE_SHIMS:
        assert shim_root(os.path.join(prefix["sys"], tool)) == prefix["root"]
    after = snapshot(prefix["sys"])
    assert after["modprobe" + DIVERTED_SUFFIX] == before["modprobe"]
    assert after["lsmod" + DIVERTED_SUFFIX] == ("link", "kmod-lsmod")
    assert "rmmod" + DIVERTED_SUFFIX not in after  # there was no rmmod to move aside
    recorded = Node(prefix["root"]).read_state("shims")["installs"]
    assert recorded == [{"bindir": prefix["bin"], "sbindir": prefix["sbin"],
                         "system_dirs": [prefix["sys"]]}]

    for _ in range(2):
        assert shims(prefix, "uninstall-shims") == 0
    assert snapshot(prefix["sys"]) == before
    assert os.listdir(prefix["bin"]) == [] and os.listdir(prefix["sbin"]) == []
    assert Node(prefix["root"]).read_state("shims")["installs"] == []


def test_diverted_tools_serve_lustre_modules_and_pass_the_rest(prefix):
    assert shims(prefix, "install-shims") == 0
    # A non-interactive SSH session: no LUSTRE_SIM_ROOT, the system PATH.
    env_path = os.pathsep.join([prefix["sbin"], prefix["bin"], prefix["sys"], "/usr/bin", "/bin"])
    modprobe = os.path.join(prefix["sys"], "modprobe")
    assert run(modprobe, "obdecho", env_path=env_path).returncode == 0
    assert "obdecho" in Node(prefix["root"]).loaded_modules()
    passed = run(modprobe, "dummy_nic", env_path=env_path)
    assert passed.stdout == "real modprobe: dummy_nic\n"
    listing = run(os.path.join(prefix["sys"], "lsmod"), env_path=env_path).stdout.splitlines()
    assert listing[0] == "Module                  Size  Used by"
    assert "ext4   1  0" in listing and any(l.startswith("obdecho ") for l in listing)
    lctl = run(os.path.join(prefix["bin"], "lctl"), "dl", env_path=env_path)
    assert " obdfilter testfs-OST0000 testfs-OST0000_UUID " in lctl.stdout
    # Without its node the diverted shim still works as the real tool.
    destroy_node(prefix["root"])
    assert os.listdir(prefix["bin"]) == []
    assert snapshot(prefix["sys"])["modprobe"] == (oct(0o100750), REAL_MODPROBE.encode())


def test_node_gone_shim_falls_back_to_the_real_tool(prefix, tmp_path):
    assert shims(prefix, "install-shims") == 0
    os.rename(prefix["root"], str(tmp_path / "moved"))
    env_path = os.pathsep.join([prefix["sys"], "/usr/bin", "/bin"])
    result = run(os.path.join(prefix["sys"], "modprobe"), "loop", env_path=env_path)
    assert result.stdout == "real modprobe: loop\n"


def test_install_never_replaces_a_file_that_is_not_a_shim(prefix):
    os.makedirs(prefix["bin"])
    with open(os.path.join(prefix["bin"], "lctl"), "w") as handle:
        handle.write("#!/bin/sh\necho the real lctl\n")
    with pytest.raises(SimError, match="is not a lustre-sim shim"):
        host.install_shims(Node(prefix["root"]), prefix["bin"], prefix["sbin"])
    with open(os.path.join(prefix["bin"], "lctl")) as handle:
        assert handle.read() == "#!/bin/sh\necho the real lctl\n"


def test_uninstall_leaves_another_nodes_shims(prefix, tmp_path):
    other = str(tmp_path / "other")
    main(["init", "--root", other, "--osts", "1"])
    assert main(["install-shims", "--root", other, "--bindir", prefix["bin"],
                 "--sbindir", prefix["sbin"]]) == 0
    assert main(["uninstall-shims", "--root", prefix["root"], "--bindir", prefix["bin"],
                 "--sbindir", prefix["sbin"]]) == 0
    assert shim_root(os.path.join(prefix["bin"], "lctl")) == other


def test_second_install_writes_nothing_and_repairs_only_what_differs(prefix, capsys):
    assert shims(prefix, "install-shims") == 0
    first = capsys.readouterr().out.split()
    assert len(first) == len(SHIM_TOOLS) + 2 * len(MODULE_SHIMS)
    written = {path: os.stat(path) for path in first}

    assert shims(prefix, "install-shims") == 0
    assert capsys.readouterr().out == ""
    for path, info in written.items():
        again = os.stat(path)
        assert (again.st_ino, again.st_mtime_ns) == (info.st_ino, info.st_mtime_ns), path
    assert len(Node(prefix["root"]).read_state("shims")["installs"]) == 1

    # A shim edited by hand, one with a wrong mode and one deleted are put back; the rest is left alone.
    lctl, lfs, lsmod = (os.path.join(prefix["bin"], "lctl"), os.path.join(prefix["bin"], "lfs"),
                        os.path.join(prefix["sbin"], "lsmod"))
    with open(lctl, "ab") as handle:
        handle.write(b"# edited\n")
    os.chmod(lfs, 0o700)
    os.unlink(lsmod)
    assert shims(prefix, "install-shims") == 0
    assert sorted(capsys.readouterr().out.split()) == sorted([lctl, lfs, lsmod])
    with open(lctl, "rb") as handle, open(os.path.join(Node(prefix["root"]).bin_dir, "lctl"), "rb") as shim:
        assert handle.read() == shim.read()
    assert stat.S_IMODE(os.stat(lfs).st_mode) == 0o755
