"""How a target's throughput depends on concurrency: the simulator's saturation model.

A curve rises linearly with the number of threads until ``knee_threads``, stays
flat at its peak after it (``rise: smooth`` rounds the corner off) and, when ``decline_threads`` is given, loses
``decline_pct`` percent of the peak for every doubling past that point (a
device thrashing under too many streams).  ``noise_pct`` perturbs each thread
count's rate by up to that many percent either way; the perturbation is a hash
of ``seed``, the target, the thread count and the operation, so a run on a fresh
node reproduces it exactly and all workers of one run agree on it.

Pure (no I/O): the simulator throttles to ``rate()``; bench/adaptive_bench.py
uses the same functions to model survey time without moving the bytes.
"""

import hashlib
import math

# ``peak_mib_s`` for OSTs and LUNs, ``peak_ops_s`` for MDTs.
PEAK_KEYS = ("peak_mib_s", "peak_ops_s")
CURVE_KEYS = PEAK_KEYS + ("knee_threads", "rise", "decline_threads", "decline_pct", "floor_pct", "noise_pct", "seed")
# linear: proportional to the threads up to the knee, a sharp corner; smooth: 71 % of the peak at the knee, then
# closer and closer to it (97 % at 4x the knee), as a device whose queue fills gradually.
RISES = ("linear", "smooth")
# Past the decline point a curve never falls below this share of its peak unless told.
DEFAULT_FLOOR_PCT = 10.0


def _number(where, key, value, minimum=0.0, strict=True):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("%s.%s must be a number, got %r" % (where, key, value))
    if value < minimum or (strict and value == minimum):
        raise ValueError("%s.%s must be %s %s, got %r"
                         % (where, key, "above" if strict else "at least", minimum, value))
    return value


def normalise_curve(section, where, peak_key):
    """Validate one ``curve:`` mapping; ``peak_key`` names the peak this kind of target has."""
    if not isinstance(section, dict):
        raise ValueError("%s must be a mapping of %s" % (where, ", ".join(CURVE_KEYS)))
    unknown = sorted(str(key) for key in set(section) - set(CURVE_KEYS))
    if unknown:
        raise ValueError("%s: unknown keys %s (known: %s)" % (where, ", ".join(unknown), ", ".join(CURVE_KEYS)))
    wrong_peak = [key for key in PEAK_KEYS if key != peak_key and key in section]
    if wrong_peak:
        raise ValueError("%s: this target's peak is %s, not %s" % (where, peak_key, wrong_peak[0]))
    if peak_key not in section:
        raise ValueError("%s needs %s (the rate at and after the knee)" % (where, peak_key))
    curve = {peak_key: float(_number(where, peak_key, section[peak_key])),
             "knee_threads": int(_number(where, "knee_threads", section.get("knee_threads", 1), 1, False)),
             "rise": section.get("rise", "linear")}
    if curve["rise"] not in RISES:
        raise ValueError("%s.rise must be one of %s, got %r" % (where, ", ".join(RISES), curve["rise"]))
    if section.get("decline_threads") is not None:
        decline = int(_number(where, "decline_threads", section["decline_threads"], 1, False))
        if decline < curve["knee_threads"]:
            raise ValueError("%s.decline_threads (%d) must not be below knee_threads (%d)"
                             % (where, decline, curve["knee_threads"]))
        curve["decline_threads"] = decline
        curve["decline_pct"] = float(_number(where, "decline_pct", section.get("decline_pct", 10.0)))
        if curve["decline_pct"] >= 100:
            raise ValueError("%s.decline_pct must be below 100, got %r" % (where, curve["decline_pct"]))
    elif section.get("decline_pct") is not None:
        raise ValueError("%s.decline_pct needs decline_threads (where the decline starts)" % where)
    curve["floor_pct"] = float(_number(where, "floor_pct", section.get("floor_pct", DEFAULT_FLOOR_PCT)))
    curve["noise_pct"] = float(_number(where, "noise_pct", section.get("noise_pct", 0.0), 0.0, False))
    if curve["noise_pct"] >= 100:
        raise ValueError("%s.noise_pct must be below 100, got %r" % (where, curve["noise_pct"]))
    curve["seed"] = int(_number(where, "seed", section.get("seed", 0), 0, False))
    return curve


def peak(curve):
    for key in PEAK_KEYS:
        if key in curve:
            return curve[key]
    raise KeyError("curve has no peak (%s)" % ", ".join(PEAK_KEYS))


def shape(curve, threads):
    """Share of the peak reached with ``threads`` concurrent threads, before noise (0..1]."""
    threads = max(int(threads), 1)
    if curve.get("rise") == "smooth":
        ratio = threads / float(curve["knee_threads"])
        share = ratio / math.sqrt(1.0 + ratio * ratio)
    else:
        share = min(threads, curve["knee_threads"]) / float(curve["knee_threads"])
    decline_at = curve.get("decline_threads")
    if decline_at and threads > decline_at:
        doublings = math.log(threads / float(decline_at), 2)
        share *= (1.0 - curve["decline_pct"] / 100.0) ** doublings
        share = max(share, curve.get("floor_pct", DEFAULT_FLOOR_PCT) / 100.0)
    return share


def noise_factor(curve, threads, target="", op=""):
    """1 +/- up to noise_pct %, the same for the same seed, target, thread count and operation."""
    if not curve.get("noise_pct"):
        return 1.0
    key = "%d/%s/%d/%s" % (curve.get("seed", 0), target, int(threads), op)
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    uniform = int.from_bytes(digest[:8], "big") / float(1 << 64)
    return 1.0 + curve["noise_pct"] / 100.0 * (2.0 * uniform - 1.0)


def rate(curve, threads, target="", op=""):
    """The target's total rate (MiB/s or ops/s) with ``threads`` threads on it."""
    return peak(curve) * shape(curve, threads) * noise_factor(curve, threads, target, op)
