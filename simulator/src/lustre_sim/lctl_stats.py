"""Kernel-side statistics of the simulated node: lprocfs counters and brw_stats histograms.

Numbers come only from operations the simulator really performed (echo I/O,
object creates/destroys, syncs); the text layout follows
``lustre/obdclass/lprocfs_status.c`` (counters, header) and
``lustre/obdclass/lprocfs_status_server.c`` (brw_stats).
"""

import time

OBD_HIST_MAX = 32

# (key, title, units, scale) in the kernel's brw_props order.
BRW_HISTOGRAMS = (
    ("pages", "pages per bulk r/w", "rpcs", True),
    ("discont_pages", "discontiguous pages", "rpcs", False),
    ("discont_blocks", "discontiguous blocks", "rpcs", False),
    ("fragmented", "disk fragmented I/Os", "ios", False),
    ("in_flight", "disk I/Os in flight", "ios", False),
    ("io_time", "I/O time (1/1000s)", "ios", True),
    ("io_size", "disk I/O size", "ios", True),
    ("block_maps", "block maps msec", "maps", True),
)

# ldiskfs submits at most this much per bio in the model (1 MiB, the default max_sectors_kb
# of most block devices), so larger records count as fragmented disk I/Os.
MAX_BIO_BYTES = 1 << 20

# obdfilter stats counters: (name, units, with sumsquare) as ofd_stats_counter_init declares them.
OFD_COUNTERS = (
    ("read_bytes", "bytes", True), ("write_bytes", "bytes", True),
    ("read", "usecs", False), ("write", "usecs", False),
    ("getattr", "usecs", False), ("setattr", "usecs", False),
    ("punch", "usecs", False), ("sync", "usecs", False),
    ("destroy", "usecs", False), ("create", "usecs", False),
    ("statfs", "usecs", False), ("get_info", "usecs", False),
    ("set_info", "usecs", False), ("quotactl", "usecs", False),
    ("prealloc", "usecs", False),
)


def log2_bucket(value):
    """lprocfs_oh_tally_log2: bucket = fls(value - 1), capped."""
    if value <= 0:
        return 0
    return min((int(value) - 1).bit_length(), OBD_HIST_MAX - 1)


def empty_histograms():
    return {key: {"read": [0] * OBD_HIST_MAX, "write": [0] * OBD_HIST_MAX}
            for key, _, _, _ in BRW_HISTOGRAMS}


class StatsRecorder:
    """Collects one process's updates and merges them into ``state/stats.json`` in batches.

    Merging every I/O would serialise all workers on one lock; flushing at most
    every ``interval`` seconds (and at the end) keeps the numbers exact.
    """

    def __init__(self, node, interval=0.5):
        self.node = node
        self.interval = interval
        self.pending_hist = {}
        self.pending_counters = {}
        self.last_flush = time.monotonic()

    def tally(self, target, key, rw, bucket):
        hist = self.pending_hist.setdefault(target, empty_histograms())
        hist[key][rw][min(bucket, OBD_HIST_MAX - 1)] += 1

    def count(self, group, target, name, value):
        counters = self.pending_counters.setdefault((group, target), {})
        entry = counters.get(name)
        if entry is None:
            counters[name] = [1, value, value, value, value * value]
        else:
            entry[0] += 1
            entry[1] = min(entry[1], value)
            entry[2] = max(entry[2], value)
            entry[3] += value
            entry[4] += value * value

    def brw(self, target, rw, nbytes, io_seconds, map_seconds=None, in_flight=1):
        """Account one bulk read/write of ``nbytes`` that took ``io_seconds`` on ``target``."""
        page_size = self.node.page_size
        pages = max((nbytes + page_size - 1) // page_size, 1)
        self.tally(target, "pages", rw, log2_bucket(pages))
        self.tally(target, "discont_pages", rw, 0)
        self.tally(target, "discont_blocks", rw, 0)
        bios = max((nbytes + MAX_BIO_BYTES - 1) // MAX_BIO_BYTES, 1)
        self.tally(target, "fragmented", rw, bios)
        remaining = nbytes
        for number in range(bios):
            self.tally(target, "in_flight", rw, in_flight + number)
            size = min(remaining, MAX_BIO_BYTES)
            remaining -= size
            self.tally(target, "io_size", rw, log2_bucket(size))
        self.tally(target, "io_time", rw, log2_bucket(int(io_seconds * 1000)))
        if map_seconds is not None:
            self.tally(target, "block_maps", rw, log2_bucket(int(map_seconds * 1000)))
        name = "write" if rw == "write" else "read"
        self.count("obdfilter", target, name + "_bytes", nbytes)
        self.count("obdfilter", target, name, int(io_seconds * 1e6))
        self.maybe_flush()

    def maybe_flush(self):
        if time.monotonic() - self.last_flush >= self.interval:
            self.flush()

    def flush(self):
        self.last_flush = time.monotonic()
        if not self.pending_hist and not self.pending_counters:
            return
        now = time.time()
        with self.node.state("stats") as stats:
            brw = stats.setdefault("brw_stats", {})
            for target, hist in self.pending_hist.items():
                entry = brw.setdefault(target, {"init": now, "hist": empty_histograms()})
                for key, sides in hist.items():
                    for rw, buckets in sides.items():
                        merged = entry["hist"][key][rw]
                        for index, value in enumerate(buckets):
                            merged[index] += value
            counters = stats.setdefault("counters", {})
            for (group, target), values in self.pending_counters.items():
                entry = counters.setdefault(group, {}).setdefault(
                    target, {"init": now, "values": {}})
                for name, (count, low, high, total, squares) in values.items():
                    old = entry["values"].get(name)
                    if old is None:
                        entry["values"][name] = [count, low, high, total, squares]
                    else:
                        entry["values"][name] = [old[0] + count, min(old[1], low),
                                                 max(old[2], high), old[3] + total,
                                                 old[4] + squares]
        self.pending_hist = {}
        self.pending_counters = {}


def stats_header(now, init, width=25, colon=""):
    """lprocfs_stats_header: snapshot/start/elapsed lines."""
    def stamp(value):
        seconds = int(value)
        return "%d.%09d" % (seconds, int(round((value - seconds) * 1e9)) % 1000000000)

    names = ("snapshot_time", "start_time", "elapsed_time")
    values = (now, init, max(now - init, 0.0))
    lines = []
    for name, value in zip(names, values):
        field = name + (":" if colon else "")
        lines.append("%-*s %s secs.nsecs\n" % (width, field, stamp(value)))
    return "".join(lines)


def pct(part, whole):
    return part * 100 // whole if whole else 0


def format_brw_stats(entry, now=None):
    now = time.time() if now is None else now
    init = entry.get("init", now) if entry else now
    hist = entry["hist"] if entry else empty_histograms()
    out = [stats_header(now, init, 25, ":")]
    for key, title, units, scale in BRW_HISTOGRAMS:
        out.append("\n%26s read      |     write\n" % " ")
        out.append("%-22s %-5s %% cum %% |  %-11s %% cum %%\n" % (title, units, units))
        reads, writes = hist[key]["read"], hist[key]["write"]
        read_total, write_total = sum(reads), sum(writes)
        if not read_total and not write_total:
            continue
        read_cum = write_cum = 0
        for index in range(OBD_HIST_MAX):
            r, w = reads[index], writes[index]
            read_cum += r
            write_cum += w
            if read_cum == 0 and write_cum == 0:
                continue
            if not scale:
                label = "%d" % index
            elif index < 10:
                label = "%d" % (1 << index)
            elif index < 20:
                label = "%dK" % (1 << (index - 10))
            else:
                label = "%dM" % (1 << (index - 20))
            out.append("%s:\t\t%10d %3d %3d   | %4d %3d %3d\n" % (
                label, r, pct(r, read_total), pct(read_cum, read_total),
                w, pct(w, write_total), pct(write_cum, write_total)))
            if read_cum == read_total and write_cum == write_total:
                break
    return "".join(out)


def format_counters(entry, layout, now=None):
    """lprocfs_stats_seq_show for the counters in ``layout`` ((name, units, sumsquare) tuples)."""
    now = time.time() if now is None else now
    init = entry.get("init", now) if entry else now
    values = entry.get("values", {}) if entry else {}
    out = [stats_header(now, init)]
    for name, units, with_squares in layout:
        value = values.get(name)
        if not value or not value[0]:
            continue
        count, low, high, total, squares = value
        line = "%-25s %d samples [%s] %d %d %d" % (name, count, units, low, high, total)
        if with_squares:
            line += " %d" % squares
        out.append(line + "\n")
    return "".join(out)


def reset_brw_stats(node, target):
    with node.state("stats") as stats:
        stats.setdefault("brw_stats", {})[target] = {"init": time.time(),
                                                      "hist": empty_histograms()}


def reset_counters(node, group, target):
    with node.state("stats") as stats:
        stats.setdefault("counters", {}).setdefault(group, {})[target] = {
            "init": time.time(), "values": {}}
