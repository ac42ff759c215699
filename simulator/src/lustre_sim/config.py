"""A node's configuration: validating ``lustre-sim init`` settings and the state a new node starts with.

Imports only the leaf modules and ``batch`` (whose sections the configuration may hold).
"""

import re
import socket
import uuid as uuidlib

from . import curve as curve_model
from .batch import SECTIONS as BATCH_SECTIONS
from .common import (DEFAULT_FSNAME, DEFAULT_MDT_SIZE_MIB, DEFAULT_NID, DEFAULT_OST_SIZE_MIB, DEFAULT_PAGE_SIZE,
                     DEFAULT_VERSION, hash_text, mount_hash, parse_version)
from .errors import SimError
from .read_cache import DEFAULT_SPEEDUP as DEFAULT_READ_CACHE_SPEEDUP

FAULT_TYPES = (
    "io_error",
    "hang",
    "enomem",
    "leftover_echo_client",
    "obdecho_busy",
    "target_full",
    "host_dead",
)
FAULT_KEYS = ("type", "target", "op", "command")

# Optional sections of config.yaml read by the client tools (lst's LNet model, mdtest).
LNET_KEYS = ("link_mib_s", "per_nid", "latency_us", "msg_rate_max")
MDTEST_VERSIONS = ("3.3.0", "4.0.0")

# Modules a combined MGS/MDS/OSS node has loaded once Lustre is mounted.
SERVER_MODULES = (
    "libcfs", "lnet", "ksocklnd", "ptlrpc", "obdclass", "fld", "fid", "lmv",
    "mdc", "osc", "lov", "mgc", "mgs", "lquota", "ldiskfs", "osd_ldiskfs",
    "lod", "osp", "mdd", "mdt", "ofd", "ost", "lfsck",
)
CLIENT_MODULES = ("lustre",)


def _target_entry(kind, fsname, index, size_mib, mib_s):
    label = "OST" if kind == "ost" else "MDT"
    return {
        "name": "%s-%s%04x" % (fsname, label, index),
        "index": index,
        "size_mib": int(size_mib),
        "mib_s": None if mib_s in (None, "", 0) else float(mib_s),
    }


def _target_device(entry, item):
    """A target's block device (``device``: what its mount and ``osd-*.mntdev`` name) and that device's own rate
    (``device_mib_s``), which the target inherits: it is booked at the lower of its own and its device's rate."""
    device = item.get("device")
    device_mib_s = item.get("device_mib_s")
    if device in (None, ""):
        if device_mib_s not in (None, ""):
            raise SimError("%s: device_mib_s needs a device" % entry["name"])
        return
    if not isinstance(device, str) or not device.startswith("/"):
        raise SimError("%s: device must be an absolute path, got %r" % (entry["name"], device))
    entry["device"] = device
    if device_mib_s not in (None, ""):
        rate = float(_positive_number(entry["name"], "device_mib_s", device_mib_s))
        entry["device_mib_s"] = rate
        entry["mib_s"] = rate if entry["mib_s"] is None else min(entry["mib_s"], rate)


def _target_list(kind, fsname, spec, size_mib, mib_s, overrides):
    """Normalise ``N`` or a list of per-target dicts into full target entries."""
    if spec is None:
        spec = 1 if kind == "mdt" else 4
    if isinstance(spec, int):
        spec = [{"index": i} for i in range(spec)]
    if not isinstance(spec, list):
        raise SimError("%ss must be a number or a list, got %r" % (kind, spec))
    entries = []
    for position, item in enumerate(spec):
        item = dict(item or {})
        index = int(item.get("index", position))
        entry = _target_entry(kind, fsname, index,
                              item.get("size_mib", size_mib),
                              item.get("mib_s", mib_s))
        if item.get("curve") is not None:
            entry["curve"] = _target_curve(kind, entry["name"], item["curve"])
        _target_device(entry, item)
        entries.append(entry)
    for key, value in (overrides or {}).items():
        match = [e for e in entries if e["name"] == key or e["name"].endswith("-" + key)]
        if not match:
            raise SimError("override for unknown target %s" % key)
        match[0]["mib_s"] = None if value in (None, "", 0) else float(value)
    names = [e["name"] for e in entries]
    if len(set(names)) != len(names):
        raise SimError("duplicate %s index" % kind)
    return entries


def _target_curve(kind, name, section):
    """A target's concurrency curve (see curve.py); an MDT's peak is in ops/s, a data target's in MiB/s."""
    try:
        return curve_model.normalise_curve(section, "%s curve" % name,
                                           "peak_ops_s" if kind == "mdt" else "peak_mib_s")
    except ValueError as error:
        raise SimError(str(error))


def normalise_fault(fault):
    """Validate one fault record and keep only its known keys."""
    if not isinstance(fault, dict) or fault.get("type") not in FAULT_TYPES:
        raise SimError("unknown fault %r (types: %s)" % (fault, ", ".join(FAULT_TYPES)))
    record = {key: fault[key] for key in FAULT_KEYS if fault.get(key) not in (None, "")}
    if record["type"] in ("io_error", "enomem", "leftover_echo_client", "target_full") \
            and "target" not in record:
        raise SimError("fault %s needs a target" % record["type"])
    if record["type"] == "hang" and "command" not in record:
        raise SimError("fault hang needs a command")
    if record.get("op") not in (None, "read", "write"):
        raise SimError("fault op must be read or write")
    return record


def _positive_number(section, key, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise SimError("%s.%s must be a positive number, got %r" % (section, key, value))
    return value


def normalise_read_cache(settings):
    """``read_cache_mib`` and ``read_cache_speedup`` of the node's read cache (read_cache.py), or ``{}`` without
    one: a node configured without it stores neither key and behaves as before the cache existed."""
    size_mib = settings.get("read_cache_mib")
    speedup = settings.get("read_cache_speedup")
    if size_mib in (None, 0):
        if speedup is not None:
            raise SimError("read_cache_speedup needs read_cache_mib")
        return {}
    size_mib = _positive_number("node", "read_cache_mib", size_mib)
    speedup = DEFAULT_READ_CACHE_SPEEDUP if speedup is None else \
        _positive_number("node", "read_cache_speedup", speedup)
    if speedup < 1:
        raise SimError("node.read_cache_speedup must be at least 1 (a cache is no slower than the device), "
                       "got %r" % (speedup,))
    return {"read_cache_mib": size_mib, "read_cache_speedup": float(speedup)}


def normalise_lnet(section):
    """Validate the ``lnet:`` section (see docs/client-tools.md, LNet model)."""
    if section is None:
        return None
    if not isinstance(section, dict):
        raise SimError("lnet must be a mapping of %s" % ", ".join(LNET_KEYS))
    unknown = sorted(set(section) - set(LNET_KEYS))
    if unknown:
        raise SimError("unknown lnet keys: %s (known: %s)"
                       % (", ".join(map(str, unknown)), ", ".join(LNET_KEYS)))
    result = {}
    for key in ("link_mib_s", "latency_us", "msg_rate_max"):
        if section.get(key) is not None:
            result[key] = _positive_number("lnet", key, section[key])
    per_nid = section.get("per_nid")
    if per_nid is not None:
        if not isinstance(per_nid, dict):
            raise SimError("lnet.per_nid must map NIDs to MiB/s")
        result["per_nid"] = {}
        for nid, value in per_nid.items():
            if not re.match(r"^\S+@[a-z]+\d*$", str(nid)):
                raise SimError("lnet.per_nid: %r is not a NID (a.b.c.d@tcp)" % (nid,))
            result["per_nid"][str(nid)] = _positive_number("lnet.per_nid", nid, value)
    return result


def normalise_mdtest(section):
    """Validate the ``mdtest:`` section: which mdtest release's report to imitate."""
    if section is None:
        return None
    if not isinstance(section, dict) or set(section) - {"version"}:
        raise SimError("mdtest must be a mapping with only 'version'")
    version = str(section.get("version") or MDTEST_VERSIONS[0])
    if version not in MDTEST_VERSIONS:
        raise SimError("mdtest.version must be one of %s, got %r"
                       % (", ".join(MDTEST_VERSIONS), version))
    return {"version": version}


def normalise_config(settings):
    """Turn CLI/YAML settings into the stored configuration dict."""
    settings = dict(settings or {})
    fsname = str(settings.get("fsname") or DEFAULT_FSNAME)
    if not re.match(r"^[A-Za-z0-9_]{1,8}$", fsname):
        raise SimError("fsname must be 1-8 letters, digits or underscores: %r" % fsname)
    ost_size = settings.get("ost_size_mib") or DEFAULT_OST_SIZE_MIB
    mdt_size = settings.get("mdt_size_mib") or DEFAULT_MDT_SIZE_MIB
    overrides = dict(settings.get("ost_mib_s_override") or {})
    config = {
        "fsname": fsname,
        "hostname": str(settings.get("hostname") or socket.gethostname()),
        "nid": str(settings.get("nid") or DEFAULT_NID),
        "lustre_version": str(settings.get("lustre_version") or DEFAULT_VERSION),
        "page_size": int(settings.get("page_size") or DEFAULT_PAGE_SIZE),
        "mdts": _target_list("mdt", fsname, settings.get("mdts"), mdt_size,
                             settings.get("mdt_mib_s"), {}),
        "osts": _target_list("ost", fsname, settings.get("osts"), ost_size,
                             settings.get("ost_mib_s"), overrides),
        "client_mount": settings.get("client_mount") or None,
        "faults": [normalise_fault(f) for f in settings.get("faults") or []],
    }
    config.update(normalise_read_cache(settings))
    for key, normalise in (("lnet", normalise_lnet), ("mdtest", normalise_mdtest)) + BATCH_SECTIONS:
        section = normalise(settings.get(key))
        if section is not None:
            config[key] = section
    parse_version(config["lustre_version"])
    known = set(config) | {"lnet", "mdtest", "slurm", "modules", "ior", "ost_size_mib", "mdt_size_mib", "ost_mib_s", "mdt_mib_s",
                           "ost_mib_s_override", "read_cache_mib", "read_cache_speedup"}
    unknown = sorted(set(settings) - known)
    if unknown:
        raise SimError("unknown configuration keys: %s" % ", ".join(unknown))
    if not config["osts"] and not config["mdts"]:
        raise SimError("a node needs at least one target")
    return config


def initial_devices(config):
    """The obd device list of a combined MGS/MDS/OSS (+client) node after mount."""
    fsname = config["fsname"]
    devices = []

    def add(dtype, name, uuid, refcount, **extra):
        device = {"index": len(devices), "status": "UP", "type": dtype, "name": name,
                  "uuid": uuid, "refcount": refcount}
        device.update(extra)
        devices.append(device)

    mgc_uuid = str(uuidlib.UUID(int=hash_text(config["hostname"] + "mgc") << 64
                                | hash_text(config["nid"])))
    osts, mdts = config["osts"], config["mdts"]
    if mdts:
        add("osd-ldiskfs", "MGS-osd", "MGS-osd_UUID", 4)
        add("mgs", "MGS", "MGS", 4 + len(osts))
    add("mgc", "MGC%s" % config["nid"], mgc_uuid, 5, conn=config["nid"])
    for mdt in mdts:
        label = "MDT%04x" % mdt["index"]
        add("osd-ldiskfs", "%s-osd" % mdt["name"], "%s-osd_UUID" % mdt["name"], 4 + len(osts))
        if mdt["index"] == 0:
            add("mds", "MDS", "MDS_uuid", 2)
        add("lod", "%s-mdtlov" % mdt["name"], "%s-mdtlov_UUID" % mdt["name"], 3)
        add("mdt", mdt["name"], "%s_UUID" % mdt["name"], 8 + len(osts))
        add("mdd", "%s-MDD%04x" % (fsname, mdt["index"]),
            "%s-MDD%04x_UUID" % (fsname, mdt["index"]), 3, mdt=mdt["name"])
        add("qmt", "%s-QMT%04x" % (fsname, mdt["index"]),
            "%s-QMT%04x_UUID" % (fsname, mdt["index"]), 3)
        for ost in osts:
            name = "%s-osc-%s" % (ost["name"], label)
            add("osp", name, "%s-mdtlov_UUID" % mdt["name"], 4, target=ost["name"])
        add("lwp", "%s-MDT0000-lwp-%s" % (fsname, label),
            "%s-MDT0000-lwp-%s_UUID" % (fsname, label), 4)
    if osts:
        for position, ost in enumerate(osts):
            add("osd-ldiskfs", "%s-osd" % ost["name"], "%s-osd_UUID" % ost["name"], 4)
            if position == 0:
                add("ost", "OSS", "OSS_uuid", 2)
            add("obdfilter", ost["name"], "%s_UUID" % ost["name"], 4 + len(mdts))
            add("lwp", "%s-MDT0000-lwp-OST%04x" % (fsname, ost["index"]),
                "%s-MDT0000-lwp-OST%04x_UUID" % (fsname, ost["index"]), 4)
    if config.get("client_mount"):
        instance = mount_hash(fsname, config["hostname"])
        client_uuid = str(uuidlib.UUID(int=hash_text(instance) << 64 | hash_text(fsname)))
        add("lov", "%s-clilov-%s" % (fsname, instance), client_uuid, 3 + len(osts))
        add("lmv", "%s-clilmv-%s" % (fsname, instance), client_uuid, 3 + len(mdts))
        for mdt in mdts:
            add("mdc", "%s-mdc-%s" % (mdt["name"], instance), client_uuid, 4,
                conn=config["nid"], target=mdt["name"])
        for ost in osts:
            add("osc", "%s-osc-%s" % (ost["name"], instance), client_uuid, 4,
                conn=config["nid"], target=ost["name"])
    return devices


def initial_modules(config):
    names = list(SERVER_MODULES)
    if config.get("client_mount"):
        names += list(CLIENT_MODULES)
    return {"loaded": names}
