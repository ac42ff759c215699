"""lctl: device list, config rules, sessions, parameters."""

import re

DL_LINE = re.compile(r"^[ \d]{2}\d (UP|AT|ST|IN|--) \S+ \S+ \S+ \d+$")


def test_device_list_format(sim):
    lines = sim.lctl("dl").stdout.splitlines()
    assert all(DL_LINE.match(line) for line in lines), lines
    text = "\n".join(lines)
    for expected in (" UP mgs MGS MGS ", " UP ost OSS OSS_uuid ",
                     " UP obdfilter testfs-OST0001 testfs-OST0001_UUID ",
                     " UP mdt testfs-MDT0000 testfs-MDT0000_UUID ", " UP lov testfs-clilov-"):
        assert expected in text
    assert [int(line.split()[0]) for line in lines] == list(range(len(lines)))
    with_nid = sim.lctl("dl", "-t").stdout.splitlines()
    osc = [line for line in with_nid if line.split()[2] in ("osc", "mdc")]
    assert osc and all(len(line.split()) == 7 for line in osc)
    assert all(len(line.split()) == 6 for line in with_nid if line not in osc)


def test_yaml_device_list_follows_version(sim, node_factory):
    old = sim.lctl("dl", "-y")
    assert old.returncode == 4 and "usage: dl [-t]" in old.stderr
    new = node_factory("new", lustre_version="2.16.1", osts=1)
    text = new.lctl("dl", "-y").stdout
    assert text.startswith("devices:\n- index: 0\n  status: UP\n  type: ")
    assert new.lctl("get_param", "-y", "devices").stdout == text


def test_config_commands_need_a_name(sim):
    devno = sim.echo_client("testfs-OST0000")
    result = sim.lctl("--device", devno, "cleanup")
    assert result.returncode == 22
    assert result.stderr == ("cleanup: please use 'device name' to set the device name "
                             "for config commands.\n")
    again = sim.lctl(stdin="attach echo_client testfs-OST0000_ecc x_UUID\n")
    assert again.stderr == "error: attach: File exists\n" and again.returncode == 17
    busy = sim.lctl("--device", "testfs-OST0000_ecc", "detach")
    assert busy.stderr == "error: detach: Device or resource busy\n"
    assert sim.lctl(stdin="--device testfs-OST0000_ecc cleanup\n"
                          "--device testfs-OST0000_ecc detach\n").returncode == 0
    assert sim.devno("testfs-OST0000_ecc") is None
    not_setup = sim.lctl(stdin="attach echo_client e e_UUID\ncleanup\n")
    assert not_setup.stderr == "error: cleanup: No such device\n"


def test_echo_setup_rules_and_index_reuse(sim):
    sim.run(sim.root + "/bin/modprobe", "obdecho")
    bad = sim.lctl(stdin="attach echo_client mdt_ecc mdt_ecc_UUID\nsetup testfs-MDT0000 osd\n")
    assert bad.stderr == "error: setup: Invalid argument\n" and bad.returncode == 22
    line = [l for l in sim.lctl("dl").stdout.splitlines() if "mdt_ecc" in l][0]
    assert line.split()[1] == "AT" and line.split()[5] == "1"
    index = line.split()[0]
    assert sim.lctl(stdin="device mdt_ecc\nsetup testfs-MDT0000 mdd\n").returncode == 0
    assert sim.lctl(stdin="device mdt_ecc\nsetup testfs-MDT0000 mdd\n").stderr \
        == "error: setup: File exists\n"
    nosuch = sim.lctl(stdin="attach echo_client x x_UUID\nsetup testfs-OST0009\n")
    assert nosuch.stderr == "error: setup: Invalid argument\n"
    sim.lctl(stdin="device mdt_ecc\ncleanup\ndetach\ndevice x\ndetach\n")
    sim.lctl(stdin="attach echo_client again again_UUID\n")
    assert sim.devno("again") == index


def test_session_stops_at_first_error(sim):
    result = sim.lctl(stdin="attach echo_client a a_UUID\nmark hello\n")
    assert result.stderr == "error: attach: No such device\n"
    assert result.returncode == 19
    assert sim.lctl("mark", "some", "text").stdout == ""


def test_device_command_and_unknown_name(sim):
    out = sim.lctl(stdin="device testfs-OST0000\ndevice\n").stdout
    assert re.match(r"current device is \d+ - testfs-OST0000\n", out)
    missing = sim.lctl("--device", "nosuch", "create", "1")
    assert missing.stderr == "No device found for name nosuch: No such device\n"


def test_versions_and_nids(sim):
    assert sim.lctl("get_param", "-n", "version").stdout == "2.15.5\n"
    assert sim.lctl("lustre_build_version").stdout == "Lustre version: 2.15.5\n"
    assert sim.lctl("--version").stdout == "lctl 2.15.5\n"
    assert sim.lctl("list_nids").stdout == "192.168.1.10@tcp\n"


def test_get_set_param(sim):
    out = sim.lctl("get_param", "osd-*.*.kbytestotal").stdout.splitlines()
    assert "osd-ldiskfs.testfs-OST0000.kbytestotal=16384" in out
    free = int(sim.lctl("get_param", "-n", "obdfilter.testfs-OST0000.kbytesfree").stdout)
    assert 0 < free <= 16384
    assert sim.lctl("get_param", "-n", "osd-ldiskfs.testfs-OST0001.mntdev").stdout.strip() \
        .endswith("targets/testfs-OST0001")
    assert sim.lctl("set_param", "-n", "osd*.*.force_sync=1").returncode == 0
    assert sim.lctl("set_param", "obdfilter.*.sync_journal=1").stdout.splitlines() == [
        "obdfilter.testfs-OST0000.sync_journal=1", "obdfilter.testfs-OST0001.sync_journal=1"]
    assert sim.lctl("get_param", "-n", "lov.*.numobd").stdout == "2\n"
    target_obd = sim.lctl("get_param", "-n", "lov.testfs-clilov-*.target_obd").stdout
    assert target_obd == "0: testfs-OST0000_UUID ACTIVE\n1: testfs-OST0001_UUID ACTIVE\n"
    sim.lctl("set_param", "llite.*.max_cached_mb=128")
    assert "max_cached_mb: 128\n" in sim.lctl("get_param", "-n", "llite.*.max_cached_mb").stdout
    missing = sim.lctl("get_param", "nosuch.*.thing")
    assert missing.stderr == ("error: get_param: param_path 'nosuch.*.thing': "
                              "No such file or directory\n")
    assert missing.returncode == 2
    stats = sim.lctl("get_param", "mdt.*.md_stats").stdout
    assert stats.startswith("mdt.testfs-MDT0000.md_stats=\nsnapshot_time ")
    assert sim.lctl("get_param", "-n", "osc.*.rpc_stats").returncode == 0
    assert sim.lctl("get_param", "-n", "devices").stdout == sim.lctl("dl").stdout


def test_unknown_command(sim):
    result = sim.lctl("frobnicate")
    assert result.returncode == 1
    assert result.stdout.startswith("Try interactive use without arguments")
