"""modprobe/rmmod/lsmod wrappers."""

import re

LSMOD_LINE = re.compile(r"^\S+\s+\d+\s+\d+( \S+)?$")


def test_initial_modules_and_lsmod_format(sim):
    out = sim.run(sim.root + "/bin/lsmod").stdout.splitlines()
    assert out[0].split() == ["Module", "Size", "Used", "by"]
    names = [line.split()[0] for line in out[1:]]
    for loaded in ("lnet", "ptlrpc", "obdclass", "ost", "ofd", "mdt", "mdd", "osd_ldiskfs",
                   "lustre"):
        assert loaded in names
    assert "obdecho" not in names and "lnet_selftest" not in names
    assert all(LSMOD_LINE.match(line) for line in out[1:] if line.split()[0] in names[:5])


def test_load_unload_obdecho(sim):
    modprobe, rmmod, lsmod = (sim.root + "/bin/" + t for t in ("modprobe", "rmmod", "lsmod"))
    assert sim.run(modprobe, "obdecho").returncode == 0
    assert re.search(r"^obdecho\s+\d+\s+0$", sim.run(lsmod).stdout, re.M)
    sim.lctl(stdin="attach echo_client e e_UUID\nsetup testfs-OST0000\n")
    busy = sim.run(rmmod, "obdecho")
    assert busy.returncode == 1 and busy.stderr == "rmmod: ERROR: Module obdecho is in use\n"
    assert re.search(r"^obdecho\s+\d+\s+1$", sim.run(lsmod).stdout, re.M)
    sim.lctl(stdin="device e\ncleanup\ndetach\n")
    assert sim.run(rmmod, "obdecho").returncode == 0
    again = sim.run(rmmod, "obdecho")
    assert again.stderr == "rmmod: ERROR: Module obdecho is not currently loaded\n"
    in_use = sim.run(rmmod, "lnet")
    assert in_use.returncode == 1 and in_use.stderr.startswith(
        "rmmod: ERROR: Module lnet is in use by: ")
    assert sim.run(modprobe, "lnet-selftest").returncode == 0
    assert "lnet_selftest" in sim.run(lsmod).stdout
    assert sim.run(modprobe, "-r", "lnet_selftest").returncode == 0
    assert "lnet_selftest" not in sim.run(lsmod).stdout


def test_other_modules_go_to_the_real_tool(sim, tmp_path):
    fake = tmp_path / "realbin"
    fake.mkdir()
    (fake / "modprobe").write_text("#!/bin/sh\necho real-modprobe \"$@\"\n")
    (fake / "modprobe").chmod(0o755)
    env_path = sim.root + "/bin:" + str(fake)
    import subprocess
    result = subprocess.run([sim.root + "/bin/modprobe", "-q", "loop"], env=dict(
        sim.env(), PATH=env_path), stdout=subprocess.PIPE, universal_newlines=True)
    assert result.stdout == "real-modprobe -q loop\n"


def test_missing_real_tool_behaves_like_missing_module(sim):
    import subprocess
    result = subprocess.run([sim.root + "/bin/modprobe", "no_such_mod"],
                            env=dict(sim.env(), PATH=sim.root + "/bin"),
                            stderr=subprocess.PIPE, universal_newlines=True)
    if result.returncode == 1 and "FATAL" in result.stderr:
        assert re.match(r"modprobe: FATAL: Module no_such_mod not found", result.stderr)
