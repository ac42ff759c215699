"""obdfilter-survey's network case: an echo client over an osc to an obdecho server, which stores nothing."""

import os
import re
import time

SETUP = ("attach obdecho echo_srv echo_srv_UUID\nsetup\n"
         "add_uuid echo_UUID 192.0.2.7@tcp\n"
         "attach osc echotmp echotmp_UUID\nsetup echo_srv_UUID echo_UUID\n"
         "attach echo_client echotmp_ecc echotmp_ecc_UUID\nsetup echotmp\n")


def network_client(node):
    node.run(os.path.join(node.root, "bin", "modprobe"), "obdecho")
    result = node.lctl(stdin=SETUP)
    assert result.returncode == 0, result.stderr
    return node.devno("echotmp_ecc")


def files_under(path):
    return sorted(os.path.join(top, name) for top, dirs, names in os.walk(path) for name in names)


def test_objects_and_io_through_the_echo_server_store_nothing(node_factory):
    node = node_factory("net", lustre_version="2.15.5", osts=1)
    before = files_under(os.path.join(node.root, "targets"))
    devno = network_client(node)
    out = node.lctl("--device", devno, "create", "2").stdout.splitlines()
    assert out[0] == "create: 2 objects"
    first = int(out[1].split()[-1], 16)
    assert out[2].split()[-1] == "%#x" % (first + 1)
    write = node.lctl("--threads", "2", "-1", "echotmp_ecc", "test_brw", "8", "wx", "q", "256",
                      "1t%#x" % first, "g256")
    assert write.returncode == 0, write.stderr
    assert re.search(r"^Total: total 16 threads 2 sec", write.stdout, re.M)
    read = node.lctl("--device", devno, "test_brw", "4", "r", "q", "256", str(first), "g256")
    assert read.returncode == 0 and read.stderr == ""
    gone = node.lctl("--device", devno, "destroy", str(first), "2")
    assert gone.returncode == 0 and gone.stdout.splitlines()[0] == "destroy: 2 objects"
    assert files_under(os.path.join(node.root, "targets")) == before


def test_the_peer_link_rate_limits_the_transfer(node_factory):
    node = node_factory("slowlink", lustre_version="2.15.5", osts=1,
                        lnet={"per_nid": {"192.0.2.7@tcp": 8}})
    devno = network_client(node)
    objid = node.lctl("--device", devno, "create", "1").stdout.split()[-1]
    started = time.monotonic()
    result = node.lctl("--device", devno, "test_brw", "4", "wx", "q", "256", objid, "g256")
    assert result.returncode == 0, result.stderr
    # 4 MiB over an 8 MiB/s link
    assert time.monotonic() - started >= 0.45


def test_the_removed_kbrw_path_fails_on_new_versions(node_factory):
    node = node_factory("netnew", lustre_version="2.15.7", osts=1)
    devno = network_client(node)
    objid = node.lctl("--device", devno, "create", "1").stdout.split()[-1]
    result = node.lctl("--device", devno, "test_brw", "1", "w", "q", "1", objid, "g1")
    assert result.stderr == "error: test_brw: #1 - Invalid argument on write\n"


def test_an_osc_without_a_known_peer_is_no_echo_server(node_factory):
    node = node_factory("nopeer", lustre_version="2.15.5", osts=1)
    node.run(os.path.join(node.root, "bin", "modprobe"), "obdecho")
    result = node.lctl(stdin="attach osc echotmp echotmp_UUID\nsetup echo_srv_UUID nobody_UUID\n"
                       "attach echo_client echotmp_ecc echotmp_ecc_UUID\nsetup echotmp\n")
    assert result.returncode == 0, result.stderr
    created = node.lctl("--device", node.devno("echotmp_ecc"), "create", "1")
    assert created.stderr == "error: create: #1 - No such device\n"
