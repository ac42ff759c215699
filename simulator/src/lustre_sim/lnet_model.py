"""The LNet self-test traffic model behind the simulated ``lst``.

There is no network to measure, so ``lst stat`` reports LNet counters that
this model accumulates over real elapsed time while a batch runs.  The model
(documented in docs/client-tools.md):

* Every NID has a full-duplex link of ``link_mib_s`` MiB/s (config
  ``lnet: {link_mib_s: N, per_nid: {NID: N}}``, default 1000), a one-way
  latency ``latency_us`` (default 50) and can handle at most ``msg_rate_max``
  LNet messages per second (default 400000).
* Each RPC of a test moves, per direction, these LNet messages (payload bytes):

  ========= ================================ ================================
  test      client sends                     server sends
  ========= ================================ ================================
  ping      request (154)                    reply (154)
  brw read  request (154)                    bulk PUT (size), reply (154)
  brw write request (154), bulk REPLY (size) bulk GET (0), reply (154)
  ========= ================================ ================================

  154 bytes is the per-message payload implied by the published lst-survey
  example (read 4k: 22 MiB/s received at 149981 RPC/s).
* ``--distribute S:D``: clients are taken in sets of S, set k talks to D
  consecutive servers starting at server ``k*D`` (wrapping); a client spreads
  its RPCs evenly over its servers.
* A client keeps ``concurrency`` RPCs in flight; one RPC takes
  ``2*latency + size/link`` seconds, so it offers
  ``concurrency / rtt`` RPC/s, capped by its own link (bulk bytes per
  RPC) and message rate.  A server whose offered load exceeds its link or
  message rate slows every client using it in proportion.
* ``--loop N`` ends a client's part after N*concurrency RPCs; otherwise a test
  runs until ``lst stop``.
* Tests in one batch are independent (their loads are not shared).
"""

import re

MIB = 1048576.0
MESSAGE_BYTES = 154
DEFAULT_LINK_MIB_S = 1000.0
DEFAULT_LATENCY_US = 50.0
DEFAULT_MSG_RATE_MAX = 400000.0
LNET_MTU = 1 << 20
MAX_CONCURRENCY = 1024

_NET = r"(tcp|o2ib|gni|kfi|ptl|ptl4|mx|ra|elan|openib|iib|vib)(\d*)"
_IPV4 = r"(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})"


class NidError(Exception):
    pass


def valid_nid(text):
    """libcfs_str2nid accepts ``a.b.c.d@net[N]`` for IP networks and ``0@lo``."""
    if text == "0@lo":
        return True
    match = re.match(r"^%s@%s$" % (_IPV4, _NET), text)
    if not match:
        return False
    return all(0 <= int(part) <= 255 for part in match.groups()[:4])


def _expand_once(text):
    """Expand the first ``[...]`` of text (lists ``a,b``, ranges ``a-b`` and ``a-b/step``)."""
    start = text.find("[")
    if start < 0:
        return None
    end = text.find("]", start)
    if end < 0:
        raise NidError(text)
    head, body, tail = text[:start], text[start + 1:end], text[end + 1:]
    results = []
    for item in body.split(","):
        match = re.match(r"^(\d+)(?:-(\d+)(?:/(\d+))?)?$", item.strip())
        if not match:
            raise NidError(text)
        low = int(match.group(1))
        high = int(match.group(2)) if match.group(2) is not None else low
        step = int(match.group(3)) if match.group(3) is not None else 1
        if high < low or step <= 0:
            raise NidError(text)
        for value in range(low, high + 1, step):
            results.append("%s%d%s" % (head, value, tail))
    return results


def expand_nids(text):
    """All NIDs named by one ``lst add_group`` argument, in order."""
    pending = [text]
    done = []
    while pending:
        item = pending.pop(0)
        expanded = _expand_once(item)
        if expanded is None:
            done.append(item)
        else:
            pending = expanded + pending
    return done


class LinkModel:
    def __init__(self, config):
        section = dict((config or {}).get("lnet") or {})
        self.link_mib_s = float(section.get("link_mib_s") or DEFAULT_LINK_MIB_S)
        self.per_nid = {str(k): float(v) for k, v in (section.get("per_nid") or {}).items()}
        self.latency_s = float(section.get("latency_us") or DEFAULT_LATENCY_US) / 1e6
        self.msg_rate_max = float(section.get("msg_rate_max") or DEFAULT_MSG_RATE_MAX)

    def link(self, nid):
        return self.per_nid.get(nid, self.link_mib_s)


def messages(test):
    """(client send msgs, client send bytes, server send msgs, server send bytes) per RPC."""
    if test["type"] == "ping":
        return 1, MESSAGE_BYTES, 1, MESSAGE_BYTES
    size = test["size"]
    if test["op"] == "read":
        return 1, MESSAGE_BYTES, 2, size + MESSAGE_BYTES
    return 2, MESSAGE_BYTES + size, 2, MESSAGE_BYTES


def pairing(clients, servers, dist, span):
    """Which servers each client talks to under ``--distribute dist:span``."""
    result = {}
    if not servers:
        return result
    for position, client in enumerate(clients):
        group = position // dist
        first = group * span
        result[client] = [servers[(first + k) % len(servers)] for k in range(min(span, len(servers)))]
    return result


def client_rates(test, clients, servers, model):
    """Steady-state RPC/s of every client toward each of its servers: {client: {server: rate}}."""
    c_msgs, c_bytes, s_msgs, s_bytes = messages(test)
    size = test["size"] if test["type"] == "brw" else 0
    pairs = pairing(clients, servers, test["dist"], test["span"])
    offered = {}
    for client, targets in pairs.items():
        slowest = min([model.link(client)] + [model.link(s) for s in targets])
        rtt = 2 * model.latency_s + size / (slowest * MIB)
        by_concurrency = test["concurrency"] / rtt
        by_link = model.link(client) * MIB / max(c_bytes, s_bytes)
        by_messages = model.msg_rate_max / (c_msgs + s_msgs)
        offered[client] = min(by_concurrency, by_link, by_messages)
    demand = {}
    for client, targets in pairs.items():
        for server in targets:
            demand[server] = demand.get(server, 0.0) + offered[client] / len(targets)
    scale = {}
    for server, load in demand.items():
        capacity = min(model.link(server) * MIB / max(c_bytes, s_bytes),
                       model.msg_rate_max / (c_msgs + s_msgs))
        scale[server] = min(1.0, capacity / load) if load > 0 else 1.0
    rates = {}
    for client, targets in pairs.items():
        share = offered[client] / len(targets)
        rates[client] = {server: share * scale[server] for server in targets}
    return rates


def _add(counters, nid, send_msgs, send_bytes, recv_msgs, recv_bytes):
    entry = counters.setdefault(nid, [0.0, 0.0, 0.0, 0.0])
    entry[0] += send_msgs
    entry[1] += send_bytes
    entry[2] += recv_msgs
    entry[3] += recv_bytes


def test_counters(test, groups, model, seconds_running, counters):
    """Add to counters {nid: [send_msgs, send_bytes, recv_msgs, recv_bytes]} for one test."""
    clients = groups.get(test["from"], [])
    servers = groups.get(test["to"], [])
    c_msgs, c_bytes, s_msgs, s_bytes = messages(test)
    for client, per_server in client_rates(test, clients, servers, model).items():
        total_rate = sum(per_server.values())
        active = seconds_running
        if test["loop"] > 0 and total_rate > 0:
            active = min(active, test["loop"] * test["concurrency"] / total_rate)
        for server, rate in per_server.items():
            rpcs = rate * active
            _add(counters, client, c_msgs * rpcs, c_bytes * rpcs, s_msgs * rpcs, s_bytes * rpcs)
            _add(counters, server, s_msgs * rpcs, s_bytes * rpcs, c_msgs * rpcs, c_bytes * rpcs)


def test_duration(test, groups, model):
    """Seconds until a looped test has finished on every client (None: runs until stopped)."""
    if test["loop"] <= 0:
        return None
    clients = groups.get(test["from"], [])
    servers = groups.get(test["to"], [])
    longest = 0.0
    for per_server in client_rates(test, clients, servers, model).values():
        total_rate = sum(per_server.values())
        if total_rate > 0:
            longest = max(longest, test["loop"] * test["concurrency"] / total_rate)
    return longest


def node_counters(session, model, now):
    """Cumulative LNet counters of every node of the session at time ``now``."""
    counters = {}
    groups = session.get("groups", {})
    for batch in session.get("batches", {}).values():
        for start, stop in batch.get("runs", []):
            seconds = max(0.0, (stop if stop is not None else now) - start)
            for test in batch.get("tests", []):
                test_counters(test, groups, model, seconds, counters)
    return counters
