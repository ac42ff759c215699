"""The node's read cache: which bytes it holds, how it books a read, and what test_brw then reports.

Every rate checked here is set by construction: a target's throttle books each I/O on its time line, so a run
can never report more than the booked rate; the cache books the bytes it holds at ``read_cache_speedup`` times
that rate. A figure above the throttle can only come from the cache.
"""

import os
import re

import pytest

from lustre_sim import read_cache
from lustre_sim.cli import main
from lustre_sim.config import normalise_config
from lustre_sim.errors import SimError
from lustre_sim.node import Node
from lustre_sim.read_cache import ReadCache, object_key, touch

MIB = 1048576
TOTAL = re.compile(r"^Total: total (\d+) threads (\d+) sec ([0-9.]+) ([0-9.]+)/second$", re.M)
# obdfilter-survey's record: 1 MiB, 256 pages of 4 KiB
PAGES = 256


# -- the LRU ---------------------------------------------------------------------------------------


def test_a_range_is_found_once_it_was_used_and_only_the_part_that_was():
    extents = []
    assert touch(extents, "a", 0, 4 * MIB, 8 * MIB) == 0
    assert touch(extents, "a", 2 * MIB, 6 * MIB, 8 * MIB) == 2 * MIB
    assert touch(extents, "b", 0, MIB, 8 * MIB) == 0
    assert touch(extents, "a", 0, 6 * MIB, 8 * MIB) == 6 * MIB


def test_a_sequential_stream_stays_one_extent():
    extents = []
    for record in range(16):
        touch(extents, "a", record * MIB, (record + 1) * MIB, 64 * MIB)
    assert extents == [["a", 0, 16 * MIB]]


def test_the_least_recently_used_bytes_go_first():
    extents = []
    touch(extents, "a", 0, 4 * MIB, 6 * MIB)
    touch(extents, "b", 0, 2 * MIB, 6 * MIB)
    touch(extents, "a", 0, MIB, 6 * MIB)          # the first MiB of a is the most recent now
    touch(extents, "c", 0, 2 * MIB, 6 * MIB)      # 8 MiB used: the 2 least recent go, a's 1..3 MiB
    assert extents == [["a", 3 * MIB, 4 * MIB], ["b", 0, 2 * MIB], ["a", 0, MIB], ["c", 0, 2 * MIB]]
    assert sum(high - low for _, low, high in extents) == 6 * MIB


def test_a_sequential_read_larger_than_the_cache_finds_nothing():
    # What the floor relies on: written in order, read back in order, the oldest pages go first, so each
    # record is evicted just before it is read again.
    extents = []
    for record in range(10):
        touch(extents, "a", record * MIB, (record + 1) * MIB, 8 * MIB)
    found = sum(touch(extents, "a", record * MIB, (record + 1) * MIB, 8 * MIB) for record in range(10))
    assert found == 0


def test_a_destroyed_object_leaves_the_cache(tmp_path):
    cache = ReadCache(str(tmp_path), 8)
    cache.access(object_key("fs-OST0000", 5), 0, 2 * MIB)
    cache.access(object_key("fs-OST0001", 5), 0, MIB)
    cache.forget(object_key("fs-OST0000", 5))
    assert cache.cached_bytes() == MIB
    assert cache.access(object_key("fs-OST0000", 5), 0, 2 * MIB) == 0


# -- configuration ---------------------------------------------------------------------------------


def test_without_a_cache_the_configuration_is_as_before():
    config = normalise_config({"osts": 2})
    assert "read_cache_mib" not in config and "read_cache_speedup" not in config


def test_the_speedup_defaults_to_the_survey_model():
    config = normalise_config({"read_cache_mib": 64})
    assert (config["read_cache_mib"], config["read_cache_speedup"]) == (64, read_cache.DEFAULT_SPEEDUP) == (64, 4.0)


@pytest.mark.parametrize("settings, message", [
    ({"read_cache_speedup": 4}, "read_cache_speedup needs read_cache_mib"),
    ({"read_cache_mib": -1}, "read_cache_mib must be a positive number"),
    ({"read_cache_mib": "lots"}, "read_cache_mib must be a positive number"),
    ({"read_cache_mib": 64, "read_cache_speedup": 0.5}, "read_cache_speedup must be at least 1"),
])
def test_bad_cache_settings_are_refused(settings, message):
    with pytest.raises(SimError, match=message):
        normalise_config(settings)


def test_init_options_set_the_cache(tmp_path):
    root = str(tmp_path / "node")
    assert main(["init", "--root", root, "--osts", "1", "--read-cache-mib", "64", "--read-cache-speedup", "3",
                 "--no-mount"]) == 0
    cache = Node(root).read_cache
    assert (cache.capacity, cache.speedup) == (64 * MIB, 3.0)


# -- booking ---------------------------------------------------------------------------------------


def booker(node, clock, target):
    """``book(nbytes, op, extent)``: how long the target's time line books one I/O; each starts as the previous
    one ends (a stepped clock: its sleep moves it), so it is the I/O's own time."""

    def book(nbytes, op, extent):
        started = clock.now
        node.reserve_bandwidth(target, nbytes, op=op, extent=extent)
        return clock.now - started
    return book


def test_a_cached_read_is_booked_at_the_speedup_and_a_write_at_the_rate(node_factory, step_clock):
    # 1 MiB/s, a 4 MiB cache, 4x: a MiB read back from the cache books a quarter second, one not in it a second
    node = Node(node_factory(osts=1, ost_mib_s=1, read_cache_mib=4).root)
    target = "testfs-OST0000"
    key = object_key(target, 2)
    book = booker(node, step_clock, target)
    assert book(MIB, "write", (key, 0)) == pytest.approx(1.0)
    assert book(MIB, "write", (key, 0)) == pytest.approx(1.0)       # write-through: cached or not
    assert book(MIB, "read", (key, 0)) == pytest.approx(0.25)
    assert book(2 * MIB, "read", (key, 0)) == pytest.approx(0.25 + 1.0)
    assert book(MIB, "read", (object_key(target, 3), 0)) == pytest.approx(1.0)


def test_without_a_cache_a_read_is_booked_at_the_rate(node_factory, step_clock):
    node = Node(node_factory(osts=1, ost_mib_s=1).root)
    target = "testfs-OST0000"
    key = object_key(target, 2)
    book = booker(node, step_clock, target)
    book(MIB, "write", (key, 0))
    assert book(MIB, "read", (key, 0)) == pytest.approx(1.0)
    assert not os.path.exists(os.path.join(node.state_dir, read_cache.STATE + ".json"))


# -- what test_brw reports -------------------------------------------------------------------------

THROTTLE_MIB_S = 20
CACHE_MIB = 64


def new_object(sim, target, objects=1):
    """An echo client on ``target`` and the first of ``objects`` new objects: ``(devno, first id)``."""
    devno = sim.echo_client(target)
    objid = int(sim.lctl("--device", devno, "create", str(objects)).stdout.splitlines()[1].split()[-1], 16)
    return devno, objid


def brw_mib_s(sim, devno, objid, mib, mode, threads=1, objects=1):
    """Move ``mib`` MiB in 1 MiB records with ``threads`` threads over ``objects`` objects, as the obdfilter
    engine runs test_brw; the MiB/s of its ``Total:`` line (records per second times the record size)."""
    result = sim.lctl("--threads", str(threads), "-1", devno, "test_brw", str(mib // threads), mode, "q",
                      str(PAGES), "%dt%d" % (threads // objects, objid), "p%d" % PAGES, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    total = TOTAL.search(result.stdout)
    assert total and int(total.group(1)) == mib, result.stdout
    return float(total.group(4)) * PAGES * 4096 / MIB


@pytest.mark.parametrize("threads, objects", [(1, 1), (4, 2)])
def test_a_read_smaller_than_the_cache_is_served_by_the_cache(node_factory, threads, objects):
    # Every byte read back is found in the cache, so the read is booked at 4 x 20 MiB/s
    # (test_a_cached_read_is_booked_at_the_speedup_and_a_write_at_the_rate checks that booking on a stepped
    # clock). How far above the throttle the reported rate goes depends on how fast this machine runs test_brw's
    # own work, so the hits are counted here, and the rate only bounded by what the cache allows.
    sim = node_factory(osts=1, ost_size_mib=128, ost_mib_s=THROTTLE_MIB_S, read_cache_mib=CACHE_MIB)
    devno, objid = new_object(sim, "testfs-OST0000", objects)
    assert brw_mib_s(sim, devno, objid, 32, "wx", threads, objects) <= THROTTLE_MIB_S * 1.02
    cache = Node(sim.root).read_cache
    assert cache.read_hit_bytes() == 0
    assert brw_mib_s(sim, devno, objid, 32, "rx", threads, objects) <= THROTTLE_MIB_S * cache.speedup * 1.02
    assert cache.read_hit_bytes() == 32 * MIB


def test_a_read_larger_than_the_cache_reports_the_device_rate(node_factory):
    sim = node_factory(osts=1, ost_size_mib=128, ost_mib_s=THROTTLE_MIB_S, read_cache_mib=CACHE_MIB)
    devno, objid = new_object(sim, "testfs-OST0000")
    brw_mib_s(sim, devno, objid, 80, "wx")
    # no byte is found in the cache (each record was evicted just before it is read), so the throttle books all
    assert brw_mib_s(sim, devno, objid, 80, "rx") <= THROTTLE_MIB_S * 1.02
    assert Node(sim.root).read_cache.cached_bytes() == CACHE_MIB * MIB
    assert Node(sim.root).read_cache.read_hit_bytes() == 0


def test_the_cache_is_the_nodes_so_the_data_of_all_its_osts_counts(node_factory):
    # 40 MiB per OST is less than the 64 MiB cache, but the host's 80 MiB is more: the floor's rule (the cache
    # over the host's targets) and why it is needed. OST0000's data, written first, has left the cache by the
    # time it is read.
    sim = node_factory(osts=2, ost_size_mib=128, ost_mib_s=THROTTLE_MIB_S, read_cache_mib=CACHE_MIB)
    first = new_object(sim, "testfs-OST0000")
    second = new_object(sim, "testfs-OST0001")
    brw_mib_s(sim, first[0], first[1], 40, "wx")
    brw_mib_s(sim, second[0], second[1], 40, "wx")
    assert brw_mib_s(sim, first[0], first[1], 40, "rx") <= THROTTLE_MIB_S * 1.02
    assert Node(sim.root).read_cache.read_hit_bytes() == 0


def test_without_a_cache_a_read_smaller_than_any_cache_reports_the_device_rate(node_factory):
    sim = node_factory(osts=1, ost_size_mib=128, ost_mib_s=THROTTLE_MIB_S)
    devno, objid = new_object(sim, "testfs-OST0000")
    brw_mib_s(sim, devno, objid, 32, "wx")
    assert brw_mib_s(sim, devno, objid, 32, "rx") <= THROTTLE_MIB_S * 1.02


def test_a_destroyed_object_is_not_read_from_the_cache(node_factory):
    sim = node_factory(osts=1, ost_size_mib=64, ost_mib_s=THROTTLE_MIB_S, read_cache_mib=CACHE_MIB)
    devno, objid = new_object(sim, "testfs-OST0000")
    brw_mib_s(sim, devno, objid, 8, "wx")
    assert sim.lctl("--device", devno, "destroy", str(objid)).returncode == 0
    assert Node(sim.root).read_cache.cached_bytes() == 0
