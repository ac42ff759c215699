"""Run the unmodified lustre-iokit obdfilter-survey and mds-survey against a simulated node.

Set LUSTRE_IOKIT_DIR to a directory holding ``obdfilter-survey``, ``iokit-libecho`` and
``mds-survey`` from a lustre-release tag (or to a directory of such directories, one per
tag).  The scripts call ``/sbin/lsmod`` etc. by absolute path, so each run happens in a
private mount namespace whose ``/usr/sbin`` is overlaid with the node's module shims
(needs root, ``unshare`` and overlayfs).
"""

import os
import re
import shutil
import subprocess
import tempfile

import pytest

IOKIT_DIR = os.environ.get("LUSTRE_IOKIT_DIR")

OBDFILTER_LINE = re.compile(
    r"^ost +\d+ sz +\d+K rsz +\d+K obj +\d+ thr +\d+ "
    r"(?:(?:write|rewrite|read) +\d+\.\d{2} \[ *\d+\.\d{2}, +\d+\.\d{2}\] ){3}$")
MDS_LINE = re.compile(
    r"^mdt \d+ file +\d+ dir +\d+ thr +\d+ "
    r"(?:(?:create|lookup|md_getattr|setxattr|destroy) +\d+\.\d{2} "
    r"\[ +\d+\.\d{2}, +\d+\.\d{2}\] ){5}$")


def script_dirs():
    if not IOKIT_DIR:
        return []
    if os.path.exists(os.path.join(IOKIT_DIR, "obdfilter-survey")):
        return [IOKIT_DIR]
    return sorted(os.path.join(IOKIT_DIR, d) for d in os.listdir(IOKIT_DIR)
                  if os.path.exists(os.path.join(IOKIT_DIR, d, "obdfilter-survey")))


pytestmark = [
    pytest.mark.skipif(not IOKIT_DIR, reason="LUSTRE_IOKIT_DIR is not set (see README: "
                       "copy obdfilter-survey, iokit-libecho, mds-survey from lustre-release)"),
    pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                       reason="needs root and unshare to overlay /usr/sbin with the shims"),
    pytest.mark.skipif(not shutil.which("gawk"), reason="the surveys need gawk"),
]


def run_survey(sim, script, variables, results):
    work = tempfile.mkdtemp()
    try:
        upper, scratch = os.path.join(work, "upper"), os.path.join(work, "work")
        os.mkdir(upper)
        os.mkdir(scratch)
        for tool in ("lsmod", "modprobe", "rmmod"):
            shutil.copy(os.path.join(sim.root, "bin", tool), upper)
        assignments = " ".join("%s=%s" % item for item in variables.items())
        command = ("mount -t overlay overlay -o lowerdir=/usr/sbin,upperdir=%s,workdir=%s "
                   "/usr/sbin && env rslt_loc=%s %s bash %s"
                   % (upper, scratch, results, assignments, script))
        return subprocess.run(["unshare", "-m", "bash", "-c", command], env=sim.env(),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=300)
    finally:
        shutil.rmtree(work, ignore_errors=True)


@pytest.mark.parametrize("directory", script_dirs() or ["none"])
def test_obdfilter_survey(directory, node_factory, tmp_path):
    version = re.sub(r".*v(\d+)_(\d+)_(\d+).*", r"\1.\2.\3", directory)
    sim = node_factory("ofs", osts=1, ost_size_mib=64, ost_mib_s=4,
                       lustre_version=version if re.match(r"^\d+\.\d+\.\d+$", version)
                       else "2.15.5")
    result = run_survey(sim, os.path.join(directory, "obdfilter-survey"),
                        {"size": 8, "nobjhi": 2, "thrhi": 2}, str(tmp_path))
    lines = [l for l in result.stdout.splitlines() if l.startswith("ost ")]
    assert len(lines) == 3, result.stdout
    assert all(OBDFILTER_LINE.match(line) for line in lines), result.stdout
    assert "done!" in result.stdout
    assert "echo_client" not in sim.lctl("dl").stdout


@pytest.mark.parametrize("directory", script_dirs() or ["none"])
def test_mds_survey(directory, node_factory, tmp_path):
    sim = node_factory("mds", osts=1)
    result = run_survey(sim, os.path.join(directory, "mds-survey"),
                        {"thrlo": 1, "thrhi": 2, "dir_count": 1, "file_count": 400},
                        str(tmp_path))
    lines = [l for l in result.stdout.splitlines() if l.startswith("mdt ")]
    assert len(lines) == 2, result.stdout
    assert all(MDS_LINE.match(line) for line in lines), result.stdout
    assert "echo_client" not in sim.lctl("dl").stdout
