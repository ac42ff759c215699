"""The read cache of a simulated OSS: the page cache an ldiskfs OSD keeps in front of its OSTs.

Opt-in (``read_cache_mib`` in the node's configuration). One cache per node, shared by all its OSTs, as a
server's page cache is: the bytes recently written or read on any OST, least recently used first, up to the
configured size. A read finds in it the bytes of its range that are still there (``ReadCache.access``); the node
books those at ``read_cache_speedup`` times the target's rate and the rest at the target's rate
(``Node.reserve_bandwidth``). Writes enter the cache but are booked at the device's rate: the OSD writes
through to the device, the cache only serves the reads that follow.

The state is ``state/read-cache.json``: ``extents``, a list of ``[object, start, end]`` (bytes), least recently
used first, and ``read_hit_bytes``, how many bytes reads have found in the cache since the node was made (what a
test checks to know the cache served a read, whatever the machine's speed). A range appended right after the most
recent extent of the same object extends it, so that a sequential stream stays one extent whose bytes are older
the lower their offset; eviction trims the least recent extent from its start.

Imports only the leaf module ``statefile``, so that ``node`` can hold a cache.
"""

from . import statefile

STATE = "read-cache"
MIB = 1048576

# A read served from a server's page cache runs this many times faster than the device behind it: the figure the
# collection's survey model (bench/adaptive_bench.py, CACHE_SPEEDUP) assumes, so that the simulator inflates a
# cached point by what the model says the floor prevents.
DEFAULT_SPEEDUP = 4.0


def object_key(target_name, object_name):
    """The cache's name for one object of one OST: the same object on two OSTs is two objects."""
    return "%s/%s" % (target_name, object_name)


def touch(extents, key, start, end, capacity):
    """Move the bytes ``[start, end)`` of object ``key`` to the most recent end of ``extents``, evict the least
    recent bytes past ``capacity``, and return how many of the range were there before. Changes ``extents``."""
    found = 0
    kept = []
    for extent in extents:
        other, low, high = extent
        if other != key or high <= start or low >= end:
            kept.append(extent)
            continue
        found += min(high, end) - max(low, start)
        # what lies outside the range keeps its place (and its age)
        if low < start:
            kept.append([other, low, start])
        if high > end:
            kept.append([other, end, high])
    if kept and kept[-1][0] == key and kept[-1][2] == start:
        kept[-1][2] = end
    else:
        kept.append([key, start, end])
    excess = sum(high - low for _, low, high in kept) - capacity
    while excess > 0:
        oldest = kept[0]
        size = oldest[2] - oldest[1]
        if size <= excess:
            kept.pop(0)
            excess -= size
        else:
            oldest[1] += excess
            excess = 0
    extents[:] = kept
    return found


class ReadCache:
    """A node's read cache of ``size_mib`` MiB; reads found in it run ``speedup`` times faster."""

    def __init__(self, state_dir, size_mib, speedup=DEFAULT_SPEEDUP):
        self.state_dir = state_dir
        self.capacity = int(size_mib * MIB)
        self.speedup = float(speedup)

    def access(self, key, offset, nbytes, read=False):
        """Record ``nbytes`` at ``offset`` of object ``key`` as just used; the bytes of it that were cached, counted
        as served when it is a ``read``."""
        with statefile.changed(self.state_dir, STATE) as state:
            extents = state.setdefault("extents", [])
            found = touch(extents, key, offset, offset + nbytes, self.capacity)
            if read:
                state["read_hit_bytes"] = state.get("read_hit_bytes", 0) + found
            return found

    def forget(self, key):
        """Drop object ``key`` (destroyed: its pages are freed, not kept as the least recent)."""
        with statefile.changed(self.state_dir, STATE) as state:
            state["extents"] = [extent for extent in state.get("extents", []) if extent[0] != key]

    def read_hit_bytes(self):
        """How many bytes reads have found in the cache so far."""
        return statefile.read(self.state_dir, STATE).get("read_hit_bytes", 0)

    def cached_bytes(self):
        """How many bytes the cache holds now."""
        return sum(high - low for _, low, high in statefile.read(self.state_dir, STATE).get("extents", []))
