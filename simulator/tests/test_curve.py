"""Concurrency curves: the model, its configuration, and the throttle target test_brw / md tests book against.

No timing asserts: the throttle books every I/O on the target's time line
(``state/bw-<target>``), one slot of ``size / rate`` after another from the
moment the run starts, so the last slot ends at least ``bytes / rate`` after
the start whatever the machine's load; a throttle at the wrong rate (or none)
books less and fails the lower bound.
"""

import os
import time

import pytest

from lustre_sim import curve
from lustre_sim.node import CATCH_UP_S, Node, SimError


def test_rises_to_the_knee_then_stays_flat():
    model = curve.normalise_curve({"peak_mib_s": 120, "knee_threads": 4}, "ost", "peak_mib_s")
    assert [curve.rate(model, t) for t in (1, 2, 4, 8, 64)] == [30.0, 60.0, 120.0, 120.0, 120.0]


def test_smooth_rise_approaches_the_peak():
    model = curve.normalise_curve({"peak_mib_s": 100, "knee_threads": 4, "rise": "smooth"}, "ost", "peak_mib_s")
    assert curve.rate(model, 4) == pytest.approx(100 / 2 ** 0.5)
    assert curve.rate(model, 16) == pytest.approx(100 * 4 / 17 ** 0.5)
    assert curve.rate(model, 4096) < 100.0


def test_declines_past_the_second_point_down_to_the_floor():
    model = curve.normalise_curve({"peak_mib_s": 100, "knee_threads": 2, "decline_threads": 8,
                                   "decline_pct": 20, "floor_pct": 50}, "ost", "peak_mib_s")
    assert curve.rate(model, 8) == 100.0
    assert curve.rate(model, 16) == pytest.approx(80.0)
    assert curve.rate(model, 32) == pytest.approx(64.0)
    assert curve.rate(model, 1024) == pytest.approx(50.0)


def test_noise_is_bounded_and_reproducible_per_seed():
    model = curve.normalise_curve({"peak_mib_s": 100, "knee_threads": 1, "noise_pct": 5, "seed": 7},
                                  "ost", "peak_mib_s")
    rates = [curve.rate(model, t, "OST0000", "write") for t in (1, 2, 4, 8, 16, 32, 64)]
    assert all(95.0 <= value <= 105.0 for value in rates)
    assert len(set(rates)) == len(rates)
    assert rates == [curve.rate(model, t, "OST0000", "write") for t in (1, 2, 4, 8, 16, 32, 64)]
    other = dict(model, seed=8)
    assert rates != [curve.rate(other, t, "OST0000", "write") for t in (1, 2, 4, 8, 16, 32, 64)]


@pytest.mark.parametrize("section, message", [
    ({"knee_threads": 4}, "needs peak_mib_s"),
    ({"peak_mib_s": 0}, "peak_mib_s must be above 0"),
    ({"peak_mib_s": 10, "knee": 4}, "unknown keys knee"),
    ({"peak_mib_s": 10, "knee_threads": 8, "decline_threads": 4}, "must not be below knee_threads"),
    ({"peak_mib_s": 10, "decline_pct": 5}, "needs decline_threads"),
    ({"peak_mib_s": 10, "noise_pct": 100}, "noise_pct must be below 100"),
    ({"peak_ops_s": 10}, "peak is peak_mib_s, not peak_ops_s"),
    ({"peak_mib_s": 10, "rise": "steep"}, "rise must be one of linear, smooth"),
])
def test_bad_curves_are_refused_naming_the_key(node_factory, section, message):
    with pytest.raises(SimError, match=message):
        node_factory(osts=[{"index": 0, "curve": section}])


def test_configured_per_target(node_factory):
    sim = node_factory(osts=[{"index": 0, "curve": {"peak_mib_s": 120, "knee_threads": 4}}, {"index": 1}],
                       ost_mib_s=50, mdts=[{"index": 0, "curve": {"peak_ops_s": 4000, "knee_threads": 8}}])
    node = Node(sim.root)
    assert [node.target_rate("testfs-OST0000", t) for t in (1, 2, 4, 32)] == [30.0, 60.0, 120.0, 120.0]
    assert [node.target_rate("testfs-OST0001", t) for t in (1, 32)] == [50.0, 50.0]
    assert node.target_rate("testfs-MDT0000", 2) == 1000.0


def booked_end(sim, target):
    with open(os.path.join(Node(sim.root).state_dir, "bw-%s" % target)) as handle:
        return float(handle.read().split()[0])


def test_a_run_keeps_its_place_on_the_time_line_through_its_own_stalls(node_factory, step_clock):
    # 1 MiB/s, 1 MiB per I/O: each slot is one second.  A stall of the run's own process between two I/Os
    # (a loaded machine) does not cost the target time; another run, or a stall past CATCH_UP_S, starts anew.
    sim = node_factory(ost_mib_s=1)
    node = Node(sim.root)
    clock = step_clock
    target = "testfs-OST0000"
    node.reserve_bandwidth(target, 1048576, run="a")
    assert (clock.now, booked_end(sim, target)) == (1001.0, 1001.0)
    clock.now += 0.5
    node.reserve_bandwidth(target, 1048576, run="a")
    assert (clock.now, booked_end(sim, target)) == (1002.0, 1002.0)
    clock.now += 0.5
    node.reserve_bandwidth(target, 1048576, run="b")
    assert booked_end(sim, target) == 1003.5
    clock.now += CATCH_UP_S + 0.5
    node.reserve_bandwidth(target, 1048576, run="b")
    assert booked_end(sim, target) == 1003.5 + CATCH_UP_S + 0.5 + 1.0


def test_brw_books_the_curve_rate_for_its_thread_count(node_factory):
    # 8 MiB/s from 4 threads on: one thread gets 2 MiB/s, so 1 MiB takes at least half a second
    # (the flat peak would book 1/8 s).
    sim = node_factory(osts=[{"index": 0, "curve": {"peak_mib_s": 8, "knee_threads": 4}}])
    devno = sim.echo_client("testfs-OST0000")
    objid = int(sim.lctl("--device", devno, "create", "1").stdout.splitlines()[1].split()[-1], 16)
    started = time.time()
    result = sim.lctl("--threads", "1", "-1", devno, "test_brw", "4", "wx", "q", "64", "1t%d" % objid, "p64")
    finished = time.time()
    assert result.returncode == 0, result.stderr
    assert started + 1.0 / 2.0 <= booked_end(sim, "testfs-OST0000") <= finished


def test_md_test_books_the_curve_rate_for_its_thread_count(node_factory):
    # 400 ops/s from 4 threads on: two threads get 200 ops/s, so 100 creates take at least half a second.
    sim = node_factory(mdts=[{"index": 0, "curve": {"peak_ops_s": 400, "knee_threads": 4}}])
    devno = sim.echo_client("testfs-MDT0000", "mdd")
    assert sim.lctl("--device", devno, "test_mkdir", "/tests").returncode == 0
    started = time.time()
    result = sim.lctl("--threads", "2", "-1", devno, "test_create", "-d", "/tests", "-D", "1", "-b", "2",
                      "-n", "50")
    finished = time.time()
    assert result.returncode == 0, result.stderr
    assert started + 100 / 200.0 <= booked_end(sim, "testfs-MDT0000") <= finished
