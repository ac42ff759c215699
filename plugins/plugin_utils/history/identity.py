# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the history keys by: components that survive a reboot and a re-cabling, and the variables' hash.

A sample of the report names its component as the survey did (``Sample.target``): an OST or MDT by its target name,
a LUN by the device the user listed (``/dev/sdb`` becomes ``sdb``), a NID as lst printed it, a client by its host
name, nothing for a host's aggregate.  The history keys each by an identity that stays the same across runs
(docs/history.md, "Identities"):

=========  =======================================================================================================
kind       component id
=========  =======================================================================================================
OST, MDT   the target name, ``testfs-OST0003``
LUN        the device's stable id recorded by sgpdd (``environment.devices[].stable_id``): ``wwid:naa.5000...``,
           ``dm-uuid:mpath-3600...``, ``by-id:wwn-0x5000...``; a loop device's backing file with its host,
           ``loop:oss1:/var/tmp/lun0.img`` (a path is only unique on its host); without a stable id (results stored
           before sgpdd recorded one) ``unstable:<host>:<device>``, which ``is_stable`` tells apart
NID        ``<owner>/<nid>`` (``oss1/192.168.1.10@tcp``) when the node that owns the NID is known, else the NID
client     the client's host name
host       the host's inventory name (a host's aggregate over its components)
=========  =======================================================================================================
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import typing as t

from ansible_collections.lustre.iokit.plugins.plugin_utils.report.findings import HOST, component_kind

OST = 'OST'
MDT = 'MDT'
LUN = 'LUN'
NID = 'NID'
CLIENT = 'client'
KINDS = (OST, MDT, LUN, NID, CLIENT, HOST)

UNSTABLE_PREFIX = 'unstable:'
LOOP_PREFIX = 'loop:'

# Variables left out of a survey's hash: they say where a host runs or how long it may, not what is measured, and
# they differ from host to host of one run (each OSS lists its own devices and targets).  What is measured is in the
# rest, and in each sample's sweep point (the number of devices or OSTs of a host's aggregate is part of it).
NOT_HASHED = frozenset(('devices', 'targets', 'timeout', 'mount_point', 'directory', 'destroy_data',
                        'allow_signatures'))

_TARGET_NAME = re.compile(r'^(?P<fsname>[A-Za-z0-9_]{1,8})-(?:OST|MDT)[0-9a-fA-F]{4,}$')


def canonical_json(value: t.Any) -> str:
    """JSON with sorted keys and no spaces: the same text for the same value, whatever the order it was built in."""
    return json.dumps(value, sort_keys=True, separators=(',', ':'), allow_nan=False)


def hashed_parameters(parameters: t.Mapping) -> dict:
    """The envelope's parameters that its survey's hash covers (all but NOT_HASHED)."""
    return {key: value for key, value in (parameters or {}).items() if key not in NOT_HASHED}


def parameters_hash(parameters: t.Mapping) -> str:
    """The SHA-256 (hex) of the canonical JSON of ``hashed_parameters``: equal for runs that measured alike."""
    return hashlib.sha256(canonical_json(hashed_parameters(parameters)).encode('utf-8')).hexdigest()


def combined_hash(hashes: t.Iterable[str]) -> str:
    """One hash for a run's survey whose hosts ran with different variables: the hash of the sorted distinct ones.

    A run whose hosts all agree has their common hash; one whose hosts differ is comparable only with a run whose
    hosts differed the same way.
    """
    distinct = sorted(set(hashes))
    if len(distinct) == 1:
        return distinct[0]
    return hashlib.sha256(canonical_json(distinct).encode('utf-8')).hexdigest()


_POINT_JSON: dict = {}


def point_json(point: tuple) -> str:
    """A Sample's point (``((key, value), ...)``) as canonical JSON, as the history stores and compares it."""
    # A run has a million samples and a few hundred distinct points.
    text = _POINT_JSON.get(point)
    if text is None:
        text = _POINT_JSON[point] = canonical_json(dict(point))
    return text


def is_stable(component_id: str) -> bool:
    """False for a LUN keyed by its kernel name (``unstable:``): it may be another disk after a reboot."""
    return not component_id.startswith(UNSTABLE_PREFIX)


def device_stable_ids(environment: t.Mapping) -> dict[str, str]:
    """sgpdd's devices by the name their samples use (the device's base name) -> their recorded ``stable_id``."""
    found = {}
    for device in environment.get('devices') or ():
        if isinstance(device, dict) and isinstance(device.get('device'), str) and device.get('stable_id'):
            found[device['device'].rsplit('/', 1)[-1]] = str(device['stable_id'])
    return found


class ComponentNamer:
    """The component kind and id of each sample of one envelope (see the module's table)."""

    def __init__(self, envelope: t.Mapping, nid_owners: t.Mapping[str, str] | None = None):
        self.survey = envelope['survey']
        self.host = envelope['host']
        environment = envelope.get('environment') if isinstance(envelope.get('environment'), dict) else {}
        self.stable_ids = device_stable_ids(environment)
        owners = dict(nid_owners or {})
        # Owners the result itself recorded win over those the caller knows from the inventory.
        if isinstance(environment.get('nid_owners'), dict):
            owners.update(environment['nid_owners'])
        self.nid_owners = owners

    def component(self, target: str | None) -> tuple[str, str]:
        """``(kind, id)`` of the component a sample with ``target`` is about."""
        kind = component_kind(self.survey, target)
        if target is None:
            return HOST, self.host
        if kind == LUN:
            return LUN, self.lun_id(target)
        if kind == NID:
            owner = self.nid_owners.get(target)
            return NID, '%s/%s' % (owner, target) if owner else target
        return kind, target

    def lun_id(self, name: str) -> str:
        stable = self.stable_ids.get(name)
        if not stable:
            return '%s%s:%s' % (UNSTABLE_PREFIX, self.host, name)
        if stable.startswith(LOOP_PREFIX):
            return '%s%s:%s' % (LOOP_PREFIX, self.host, stable[len(LOOP_PREFIX):])
        return stable


def _text_or_none(value: t.Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def envelope_fsnames(envelope: t.Mapping, component_ids: t.Iterable[str] = ()) -> list[str]:
    """The file systems an envelope is about: its environment's or parameters' ``fsname``, else the prefix of the
    OST and MDT names it measured (``testfs-OST0003``)."""
    environment = envelope.get('environment') if isinstance(envelope.get('environment'), dict) else {}
    parameters = envelope.get('parameters') if isinstance(envelope.get('parameters'), dict) else {}
    for source in (environment, parameters):
        name = _text_or_none(source.get('fsname'))
        if name:
            return [name]
    names = set()
    for component_id in component_ids:
        match = _TARGET_NAME.match(component_id)
        if match:
            names.add(match.group('fsname'))
    return sorted(names)


def envelope_lustre_version(envelope: t.Mapping) -> str | None:
    environment = envelope.get('environment') if isinstance(envelope.get('environment'), dict) else {}
    return _text_or_none(environment.get('lustre_version')) or _text_or_none(environment.get('server_lustre_version'))


def envelope_collection_version(envelope: t.Mapping) -> str | None:
    environment = envelope.get('environment') if isinstance(envelope.get('environment'), dict) else {}
    return _text_or_none(environment.get('collection_version'))


class Fill(t.NamedTuple):
    """How full one OST or MDT was when a survey read it (None: not read)."""

    component_kind: str
    component_id: str
    free_kib: int | None
    total_kib: int | None
    free_inodes: int | None
    total_inodes: int | None


def _count(mapping: t.Any, key: str) -> int | None:
    value = mapping.get(key) if isinstance(mapping, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def envelope_fill(envelope: t.Mapping) -> list[Fill]:
    """Each OST's free and total KiB (obdfilter's ``free_kib``/``total_kib``) and each MDT's free and total inodes
    (mds' ``free_inodes``/``total_inodes``), as the survey's environment recorded them before measuring."""
    environment = envelope.get('environment') if isinstance(envelope.get('environment'), dict) else {}
    fill = []
    for kind, free_key, total_key in ((OST, 'free_kib', 'total_kib'), (MDT, 'free_inodes', 'total_inodes')):
        free, total = environment.get(free_key), environment.get(total_key)
        names = set(free if isinstance(free, dict) else ()) | set(total if isinstance(total, dict) else ())
        for name in sorted(str(name) for name in names):
            free_value, total_value = _count(free, name), _count(total, name)
            if free_value is None and total_value is None:
                continue
            if kind == OST:
                fill.append(Fill(OST, name, free_value, total_value, None, None))
            else:
                fill.append(Fill(MDT, name, None, None, free_value, total_value))
    return fill


def used_percent(free: int | None, total: int | None) -> float | None:
    """The share used, in percent, or None when either count is unknown or the total is 0."""
    if free is None or not total:
        return None
    return round(100.0 * (total - free) / total, 2)


def collection_version(collection_root: str | None = None) -> str | None:
    """This collection's version: its ``MANIFEST.json`` when installed, else the checkout's ``galaxy.yml``."""
    root = collection_root or os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    try:
        with open(os.path.join(root, 'MANIFEST.json'), encoding='utf-8') as handle:
            return json.load(handle)['collection_info']['version']
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        with open(os.path.join(root, 'galaxy.yml'), encoding='utf-8') as handle:
            for line in handle:
                if line.startswith('version:'):
                    return line.split(':', 1)[1].strip().strip('\'"') or None
    except OSError:
        pass
    return None
