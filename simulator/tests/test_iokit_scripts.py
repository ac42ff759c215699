"""The unmodified lustre-iokit scripts against a simulated node, their outputs read by the
collection's parsers.

``LUSTRE_IOKIT_DIR`` names a directory holding the scripts of one lustre-release tag
(``obdfilter-survey``, ``iokit-libecho``, ``mds-survey``, ``ost-survey``, ``lst.sh``,
``lst-survey``), or a directory of such directories named after their tags (``v2_15_5``,
``v2_16_1``); each test runs once per directory that has its script. See README.md for how
to extract them. The echo surveys call ``/sbin/lsmod`` etc. by absolute path, so they run
in a private mount namespace whose /usr/sbin (and /sbin when separate) is an overlay into
which ``lustre-sim install-shims --system-module-tools`` diverts the module tools (needs
root, ``unshare`` and overlayfs).
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import SIM_SRC
from lustre_sim import client_mount

IOKIT_DIR = os.environ.get("LUSTRE_IOKIT_DIR")

OBDFILTER_LINE = re.compile(
    r"^ost +\d+ sz +\d+K rsz +\d+K obj +\d+ thr +\d+ "
    r"(?:(?:write|rewrite|read) +\d+\.\d{2} \[ *\d+\.\d{2}, +\d+\.\d{2}\] ){3}$")
MDS_LINE = re.compile(
    r"^mdt \d+ file +\d+ dir +\d+ thr +\d+ "
    r"(?:(?:create|lookup|md_getattr|setxattr|destroy) +\d+\.\d{2} "
    r"\[ +\d+\.\d{2}, +\d+\.\d{2}\] ){5}$")

pytestmark = pytest.mark.skipif(
    not IOKIT_DIR, reason="LUSTRE_IOKIT_DIR is not set (see README: extract the scripts "
    "from lustre-release)")
needs_namespace = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare"),
    reason="needs root and unshare to overlay /usr/sbin with the shims")
needs_gawk = pytest.mark.skipif(not shutil.which("gawk"), reason="the surveys need gawk")
needs_fuse = pytest.mark.skipif(os.geteuid() != 0 or not client_mount.fuse_possible(),
                                reason="ost-survey needs the throttled FUSE client mount")


def dirs_with(script):
    if not IOKIT_DIR:
        return ["unset"]
    if os.path.exists(os.path.join(IOKIT_DIR, script)):
        return [IOKIT_DIR]
    found = sorted(os.path.join(IOKIT_DIR, d) for d in os.listdir(IOKIT_DIR)
                   if os.path.exists(os.path.join(IOKIT_DIR, d, script)))
    return found or ["no %s under %s" % (script, IOKIT_DIR)]


def tag_version(directory, default="2.15.5"):
    """``.../v2_16_1`` -> ``2.16.1``: the simulated node claims the scripts' own release."""
    match = re.search(r"v(\d+)_(\d+)_(\d+)", os.path.basename(directory))
    return ".".join(match.groups()) if match else default


def script(directory, name):
    path = os.path.join(directory, name)
    if not os.path.exists(path):
        pytest.skip("%s has no %s" % (directory, name))
    return path


def module_tool_dirs():
    dirs = ["/usr/sbin"]
    if os.path.realpath("/sbin") != os.path.realpath("/usr/sbin"):
        dirs.append("/sbin")
    return dirs


def run_echo_survey(sim, path, variables, results):
    work = tempfile.mkdtemp()
    try:
        mounts, system_dirs = [], []
        for number, directory in enumerate(module_tool_dirs()):
            upper, scratch = (os.path.join(work, "%s%d" % (kind, number))
                              for kind in ("upper", "work"))
            os.mkdir(upper)
            os.mkdir(scratch)
            mounts.append("mount -t overlay overlay -o lowerdir=%s,upperdir=%s,workdir=%s %s"
                          % (directory, upper, scratch, directory))
            system_dirs += ["--system-dir", directory]
        install = ("%s -m lustre_sim.cli install-shims --root %s --bindir %s/bin "
                   "--sbindir %s/sbin --system-module-tools %s >/dev/null"
                   % (shlex.quote(sys.executable), shlex.quote(sim.root), work, work,
                      " ".join(system_dirs)))
        assignments = " ".join("%s=%s" % item for item in variables.items())
        command = " && ".join(mounts + [install, "env rslt_loc=%s %s bash %s"
                                        % (results, assignments, path)])
        return subprocess.run(["unshare", "-m", "bash", "-c", command], env=sim.env(),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=300)
    finally:
        shutil.rmtree(work, ignore_errors=True)


@needs_namespace
@needs_gawk
@pytest.mark.parametrize("directory", dirs_with("obdfilter-survey"))
def test_obdfilter_survey(directory, node_factory, tmp_path, parse):
    path = script(directory, "obdfilter-survey")
    sim = node_factory("ofs", osts=1, ost_size_mib=64, ost_mib_s=4,
                       lustre_version=tag_version(directory))
    result = run_echo_survey(sim, path, {"size": 8, "nobjhi": 2, "thrhi": 2}, str(tmp_path))
    lines = [l for l in result.stdout.splitlines() if l.startswith("ost ")]
    assert len(lines) == 3, result.stdout
    assert all(OBDFILTER_LINE.match(line) for line in lines), result.stdout
    assert "done!" in result.stdout
    assert "echo_client" not in sim.lctl("dl").stdout
    records = parse("obdfilter_survey", result.stdout)
    assert [(r["obj"], r["thr"], r["size_kib"]) for r in records] == [
        (1, 1, 8192), (1, 2, 8192), (2, 2, 8192)]
    for record in records:
        for test in ("write", "rewrite", "read"):
            # The OST is throttled to 4 MiB/s, shared by all threads.
            assert record["tests"][test]["status"] == "ok"
            assert 1.0 < record["tests"][test]["mib_s"] <= 4.4, record


@needs_namespace
@needs_gawk
@pytest.mark.parametrize("directory", dirs_with("mds-survey"))
def test_mds_survey(directory, node_factory, tmp_path, parse):
    path = script(directory, "mds-survey")
    sim = node_factory("mds", osts=1, lustre_version=tag_version(directory))
    result = run_echo_survey(sim, path, {"thrlo": 1, "thrhi": 2, "dir_count": 1,
                                         "file_count": 400}, str(tmp_path))
    lines = [l for l in result.stdout.splitlines() if l.startswith("mdt ")]
    assert len(lines) == 2, result.stdout
    assert all(MDS_LINE.match(line) for line in lines), result.stdout
    assert "echo_client" not in sim.lctl("dl").stdout
    records = parse("mds_survey", result.stdout)
    assert [(r["file"], r["dir"], r["thr"]) for r in records] == [(400, 1, 1), (400, 1, 2)]
    assert all(test["status"] == "ok" and test["ops_s"] > 0
               for record in records for test in record["tests"].values())


@needs_fuse
@pytest.mark.parametrize("directory", dirs_with("ost-survey"))
def test_ost_survey(directory, node_factory, parse):
    path = script(directory, "ost-survey")
    # ost-survey takes the fsname as everything before the last '-' of "<instance> <mount>",
    # so the mount path must not contain a '-' (true of the real script too).
    mount_dir = tempfile.mkdtemp(prefix="lsim")
    sim = node_factory("survey", client_mount=mount_dir, osts=[{"mib_s": 20}, {}],
                       lustre_version=tag_version(directory))
    client_mount.mount(sim.node, mode="fuse")
    try:
        result = sim.run("perl", path, "-s", "2", mount_dir, timeout=120)
    finally:
        client_mount.unmount(sim.node)
        os.rmdir(mount_dir)
    assert result.returncode == 0, result.stdout + result.stderr
    parsed = parse("ost_survey", result.stdout)
    assert parsed["active_osts"] == 2 and parsed["mount_point"] == mount_dir
    speeds = {ost["ost"]: ost for ost in parsed["osts"]}
    assert sorted(speeds) == [0, 1]
    assert speeds[0]["write_mib_s"] < 21 < speeds[1]["write_mib_s"]  # OST0000: 20 MiB/s
    assert speeds[0]["read_mib_s"] < 21


@pytest.fixture
def console(node_factory):
    sim = node_factory("lnet", osts=1)
    sim.run(os.path.join(sim.root, "bin", "modprobe"), "lnet_selftest")
    return sim


@pytest.mark.parametrize("directory", dirs_with("lst.sh"))
def test_lst_sh(directory, console, parse):
    path = script(directory, "lst.sh")
    env = console.env()
    env.pop("LST_SESSION", None)
    result = subprocess.run(["bash", path, "-f", "10.0.0.[1-2]@tcp", "-t", "10.0.0.3@tcp",
                             "-m", "write", "-s", "1m", "-n", "1", "-D", "1", "-e"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            universal_newlines=True, timeout=60)
    assert result.returncode == 0, result.stdout
    text = result.stdout
    assert "[LNet Bandwidth of servers]" in text and "Total 0 error nodes in clients" in text
    assert text.rstrip().endswith("session is ended")
    assert console.node.read_state("lst").get("session") is None
    records = parse("lst_stat", text)
    assert {r["group"] for r in records} == {"servers", "clients"}


@needs_gawk
@pytest.mark.skipif(not shutil.which("bc"), reason="lst-survey needs bc")
@pytest.mark.parametrize("directory", dirs_with("lst-survey"))
def test_lst_survey(directory, console, parse, tmp_path):
    path = script(directory, "lst-survey")
    script(directory, "lst.sh")
    env = console.env(PYTHONPATH=SIM_SRC)
    env.pop("LST_SESSION", None)
    result = subprocess.run(["bash", path, "-f", "10.0.0.1@tcp 10.0.0.2@tcp", "-t",
                             "10.0.0.3@tcp", "-m", "read ping", "-s", "4k", "-n", "1",
                             "-D", "1"], env=env, cwd=str(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            universal_newlines=True, timeout=120)
    assert result.returncode == 0, result.stdout
    rows = parse("lst_survey", result.stdout)
    assert [r["mode"] for r in rows] == ["read_4k", "ping"], result.stdout
    # The default model: the 400000 msg/s ceiling limits both (docs/client-tools.md).
    assert rows[0]["read_rpc_s"] == 133333 and rows[1]["read_rpc_s"] == 200000, result.stdout
    assert rows[0]["servers"] == ["10.0.0.3@tcp"]
    assert rows[0]["clients"] == ["10.0.0.1@tcp", "10.0.0.2@tcp"]
