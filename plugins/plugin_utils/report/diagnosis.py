# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One finding per weak component, diagnosed across the I/O kit's layers (docs/diagnosis.md).

findings.py says which values are low; this module says which component is
weak and where its weakness starts.  The low rows of ``analysis.judge_points``
(one per survey, metric, subject and sweep point) are

1. grouped by the component they are about: an OST (by its target name, the
   same whether obdfilter on its OSS or ost-survey from a client measured it),
   a LUN (host and device), an MDT, a NID (attributed to the node that owns
   it, never to the LNet console that ran the test), a client, or a host;
2. a host's row is folded into the weakest of the host's own components that
   was low in the same survey (``oss2`` is low because ``OST0003`` is; for a
   survey that gave host aggregates only, the weakest low component of the
   kind it measures); a host stays a finding of its own only where none of its
   components explains it;
3. each component is diagnosed by the first row of RULES that matches what
   was measured for it and for the layers below and around it: raw LUN
   (sgpdd), target (obdfilter for an OST, mds-survey for an MDT), network
   (LNet self-test), OST from a client (ost-survey), file system from one
   client (IOR);
4. a component whose rule points one layer down (an OST on a slow LUN, an OST
   or a client behind a slow NID) is folded into that lower component's
   finding: the weak component is the one where the weakness first appears.

Each low row ends in exactly one finding, as evidence.  What the samples do not
say is taken from two optional mappings: ``nid_owners`` (NID -> host, the
``lctl list_nids`` of each node) and ``ost_luns`` (target -> [(host, device)],
the block devices each OST or MDT is mounted from).  Without them the layer
they would link is reported as not known, never guessed.

``finding_rows`` prepares what the findings tables of summary.md and report.html
print, and ``case_diagnoses`` what a failed JUnit case about a low subject adds
to its message.

Controller-side code, no Ansible imports.
"""

from __future__ import annotations

import re
import typing as t

from ansible_collections.lustre.iokit.plugins.plugin_utils.report import analysis, findings

# What is known of one layer of a component.
LOW = 'low'
FINE = 'fine'
NOT_JUDGED = 'not judged'      # measured, but never with enough peers to be judged
NOT_MEASURED = 'not measured'  # the survey of that layer did not measure it
UNKNOWN = 'unknown'            # which components make that layer is not known (nid_owners, ost_luns)
GAPS = (NOT_JUDGED, NOT_MEASURED, UNKNOWN)

# The layers a diagnosis reads, and the surveys that measure each.
LUN = 'LUN'
TARGET = 'target'
NETWORK = 'network'
CLIENTS = 'clients'
CLIENT = 'client'
SERVERS = 'servers'
COMPONENTS = 'components'
HOST_LAYER = 'host'
OWN = 'own'
LAYER_SURVEYS = {
    LUN: ('sgpdd',),
    TARGET: ('obdfilter', 'mds'),
    NETWORK: ('lnet',),
    CLIENTS: ('ost',),
    CLIENT: ('ior', 'mdtest'),
}
# Which layers are read for each kind of component.
KIND_LAYERS = {
    'OST': (LUN, TARGET, NETWORK, CLIENTS),
    'MDT': (LUN, TARGET),
    'LUN': (LUN, TARGET),
    'NID': (NETWORK,),
    'client': (CLIENT, NETWORK, SERVERS),
    findings.HOST: (COMPONENTS,),
}
# The surveys run on a component's own server: the host of their samples is the component's node.
ON_ITS_SERVER = ('sgpdd', 'obdfilter', 'mds')
# The order of the I/O kit's layers, bottom up, in which evidence is listed.
SURVEY_ORDER = ('sgpdd', 'obdfilter', 'mds', 'lnet', 'ost', 'ior', 'mdtest')
TEST_ORDER = ('write', 'rewrite', 'read')


class DiagnosisRule(t.NamedTuple):
    """One row of the diagnosis table: the first row whose ``kinds`` and ``when`` match a component applies.

    ``when`` maps a layer to the statuses it must have.  ``layer`` is where the
    weakness first appears; ``diagnosis`` says what was seen and ``points_at``
    what that points at (templates: ``{node}``, ``{kind}``, ``{target}``,
    ``{gap}``, ``{above}``, ``{below}``).  ``look`` names the findings.NEXT_STEPS
    entry to read next (None: the component's own kind) and ``also`` adds to
    it.  ``fold`` is the layer whose weakest low component takes this finding
    as evidence; ``gap`` the layer whose missing measurement ``{gap}`` names.
    """

    name: str
    kinds: tuple
    when: dict
    layer: str
    diagnosis: str
    points_at: str
    look: t.Optional[str] = None
    also: str = ''
    fold: t.Optional[str] = None
    gap: t.Optional[str] = None


_TARGETS = ('OST', 'MDT')
RULES: tuple[DiagnosisRule, ...] = (
    DiagnosisRule('lun-under-target', ('LUN',), {LUN: (LOW,), TARGET: (LOW,)}, LUN,
                  'slow at the raw device, and {above} on it is low too', 'the device or its path', 'LUN'),
    DiagnosisRule('lun', ('LUN',), {LUN: (LOW,)}, LUN,
                  'slow at the raw device', 'the device or its path', 'LUN'),
    # An OST whose object layer is fine despite a slow LUN is not slow because of it (the LUN stays its own finding).
    DiagnosisRule('target-on-slow-lun', _TARGETS, {LUN: (LOW,), TARGET: (LOW,) + GAPS}, LUN,
                  'its LUN {below} is slow under it', 'the device or its path', 'LUN', fold=LUN),
    DiagnosisRule('target-backend', _TARGETS, {TARGET: (LOW,), LUN: (FINE,)}, TARGET,
                  'slow at {target}, its LUNs are fine', 'backend file system or {kind} configuration'),
    DiagnosisRule('target-luns-not-measured', _TARGETS, {TARGET: (LOW,), LUN: GAPS}, TARGET,
                  'slow at {target}; {gap}: cannot tell the device from the {kind} configuration',
                  'the device or the {kind} configuration', gap=LUN),
    DiagnosisRule('ost-network', ('OST',), {TARGET: (FINE,), CLIENTS: (LOW,), NETWORK: (LOW,)}, NETWORK,
                  'fine at {target} but slow from the clients, and LNet to {node} is slow too', 'the network',
                  'NID', fold=NETWORK),
    DiagnosisRule('ost-client-path', ('OST',), {TARGET: (FINE,), CLIENTS: (LOW,), NETWORK: (FINE,)}, CLIENTS,
                  'fine at {target} and LNet to {node} is fine, but slow from the clients',
                  "the OST's client path", 'client',
                  also="the clients' OSC of this OST (max_rpcs_in_flight, cur_grant_bytes) and the OSS's ost_io "
                       "service threads"),
    DiagnosisRule('ost-network-not-measured', ('OST',), {TARGET: (FINE,), CLIENTS: (LOW,), NETWORK: GAPS}, CLIENTS,
                  "fine at {target} but slow from the clients; {gap}: cannot tell the network from the OST's "
                  "client path", "the network or the OST's client path", 'NID', gap=NETWORK),
    DiagnosisRule('ost-object-not-measured', ('OST',), {TARGET: GAPS, CLIENTS: (LOW,)}, CLIENTS,
                  'slow from the clients; {gap}: cannot tell the OST from the network', 'the OST or the network',
                  'OST', gap=TARGET),
    DiagnosisRule('nid', ('NID',), {NETWORK: (LOW,)}, NETWORK,
                  'slow in the LNet self-test', 'the NIC or link of {node}', 'NID'),
    DiagnosisRule('client-network', ('client',), {CLIENT: (LOW,), NETWORK: (LOW,)}, NETWORK,
                  'slow from this client, and its own NID is slow in LNet too', "the client's NIC or link", 'NID',
                  fold=NETWORK),
    DiagnosisRule('client-servers', ('client',), {CLIENT: (LOW,), SERVERS: (LOW,)}, CLIENT,
                  'slow from this client while server components are weak too',
                  'the weak server components first (its files may sit on them), then the client', 'client'),
    DiagnosisRule('client-network-not-measured', ('client',), {CLIENT: (LOW,), NETWORK: GAPS}, CLIENT,
                  'slow from this client; {gap}: cannot tell the client from its network',
                  'the client or its network', 'client', gap=NETWORK),
    DiagnosisRule('client-servers-not-measured', ('client',), {CLIENT: (LOW,), SERVERS: GAPS}, CLIENT,
                  'slow from this client; {gap}: cannot tell the client from the servers',
                  'the client or the servers', 'client', gap=SERVERS),
    DiagnosisRule('client', ('client',), {CLIENT: (LOW,), NETWORK: (FINE,), SERVERS: (FINE,)}, CLIENT,
                  'slow from this client while everything below it is fine', 'the client or striping', 'client',
                  also='the striping of its files (lfs getstripe) over the OSTs'),
    DiagnosisRule('host-aggregates-only', (findings.HOST,), {COMPONENTS: GAPS}, HOST_LAYER,
                  'low as a whole; {gap}: cannot tell which of its components', 'one of its components or the host',
                  gap=COMPONENTS),
    DiagnosisRule('host', (findings.HOST,), {COMPONENTS: (FINE,)}, HOST_LAYER,
                  'low as a whole while each of its components is fine',
                  'the host itself: what its components share (CPU, memory, HBA, NIC)'),
    # Whatever no row above explains (a component of a survey this table does not know).
    DiagnosisRule('low', (), {}, OWN, 'low among its peers', 'the component itself'),
)

# Why a layer could not be judged, per layer and status ({node}: the component's node).
_GAP_TEXT = {
    (LUN, NOT_MEASURED): 'its LUNs were not (all) surveyed by sgpdd',
    (LUN, UNKNOWN): 'which LUNs back it is not known (ost_luns)',
    (LUN, NOT_JUDGED): 'its LUNs had too few peers in sgpdd to be judged',
    (TARGET, NOT_MEASURED): '{survey} did not measure it',
    (TARGET, NOT_JUDGED): 'it had too few peers in {survey} to be judged',
    (TARGET, UNKNOWN): '{survey} did not measure it',
    (NETWORK, NOT_MEASURED): 'LNet did not measure the NIDs of {node}',
    (NETWORK, UNKNOWN): 'the NIDs of {node} are not known (nid_owners)',
    (NETWORK, NOT_JUDGED): 'the NIDs of {node} had too few peers in LNet to be judged',
    (SERVERS, NOT_MEASURED): 'no server component was surveyed',
    (SERVERS, NOT_JUDGED): 'the server components had too few peers to be judged',
    (SERVERS, UNKNOWN): 'no server component was surveyed',
    (COMPONENTS, NOT_MEASURED): 'its survey gave host aggregates only',
    (COMPONENTS, NOT_JUDGED): 'its components had too few peers to be judged',
    (COMPONENTS, UNKNOWN): 'its survey gave host aggregates only',
}
_TARGET_TEXT = {'OST': 'the OST object layer (obdfilter)', 'MDT': 'the MDT (mds-survey)'}
_TARGET_SURVEY = {'OST': 'obdfilter', 'MDT': 'mds'}
LAYER_TEXT = {LUN: 'raw LUN (sgpdd)', NETWORK: 'network (LNet self-test)', CLIENTS: 'OST from a client (ost-survey)',
              CLIENT: 'file system from one client (IOR)', HOST_LAYER: 'host aggregate', OWN: 'its own survey'}

_OST_NAME = re.compile(r'^(?:(?P<fsname>.+)-)?OST(?P<index>[0-9a-fA-F]+)$')
_MDT_NAME = re.compile(r'-MDT[0-9a-fA-F]+$')

Key = tuple  # ('OST', name), ('MDT', name), ('LUN', host, device), ('NID', nid), ('client', name), ('host', host)


class _Item(t.NamedTuple):
    """A low row, the component it is about, and the component it was folded into first (None: its own)."""

    row: dict
    about: Key
    because: t.Optional[Key]


def ost_name(name: str) -> str:
    """``testfs-OST0003``: an OST's name with its index as Lustre writes it (``OST3`` -> ``OST0003``)."""
    match = _OST_NAME.match(name)
    if not match:
        return name
    index = 'OST%04x' % int(match.group('index'), 16)
    return '%s-%s' % (match.group('fsname'), index) if match.group('fsname') else index


def _share_key(share: t.Optional[float]) -> float:
    # As findings.py: a share without a median (None) sorts as the weakest.
    return -1.0 if share is None else share


class _Run:
    """What was measured, judged and found low, indexed by component."""

    def __init__(self, table: analysis.PointTable, outliers: list[dict], judged: t.Mapping[tuple, int],
                 nid_owners: t.Mapping[str, str], ost_luns: t.Mapping[str, t.Sequence]):
        self.aliases = _bare_ost_aliases([target for (survey, _m, _h, target) in table.values
                                          if findings.component_kind(survey, target) == 'OST'] + list(ost_luns))
        self.sampled: dict[Key, set] = {}
        self.judged: dict[Key, set] = {}
        self.node: dict[Key, t.Optional[str]] = {}
        self.under: dict[tuple, dict] = {}   # (survey, host) -> the components sampled there (ordered set)
        self.owned: dict[str, dict] = {}     # node -> its components (ordered set)
        self.server_nids: set = set()
        for (survey, _metric, host, target), points in table.values.items():
            key = self.key(findings.component_kind(survey, target), host, target)
            self.sampled.setdefault(key, set()).add(survey)
            if key[0] != findings.HOST:
                self.under.setdefault((survey, host), {})[key] = None
            if survey in ON_ITS_SERVER:
                self.node.setdefault(key, host)
            if key[0] == 'NID' and any(str(dict(point).get('role', '')).startswith('server') for point in points):
                self.server_nids.add(key)
        for (survey, _metric, host, target), count in judged.items():
            if count:
                self.judged.setdefault(self.key(findings.component_kind(survey, target), host, target), set()).add(survey)
        self.target_luns: dict[Key, list] = {}
        self.lun_targets: dict[Key, list] = {}
        for target, luns in ost_luns.items():
            target_key = self.target_key(target)
            for host, device in luns:
                lun = ('LUN', host, device.rsplit('/', 1)[-1])
                self.target_luns.setdefault(target_key, []).append(lun)
                self.lun_targets.setdefault(lun, []).append(target_key)
                self.node.setdefault(lun, host)
                self.node.setdefault(target_key, host)
        for nid, host in nid_owners.items():
            self.node[('NID', nid)] = host
        for key in list(self.sampled) + list(self.target_luns) + list(self.lun_targets) + [
                ('NID', nid) for nid in nid_owners]:
            node = self.node_of(key)
            if node is not None:
                self.owned.setdefault(node, {})[key] = None
        self.rows: dict[Key, list[dict]] = {}
        for row in outliers:
            if row['direction'] == 'low':
                self.rows.setdefault(self.key(row['kind'], row['host'], row['target']), []).append(row)
        self.low_surveys = {key: {row['survey'] for row in rows} for key, rows in self.rows.items()}
        self._servers_status: t.Optional[str] = None

    # -- identity ----------------------------------------------------------------

    def key(self, kind: str, host: str, target: t.Optional[str]) -> Key:
        """The component a subject of a survey is about."""
        if kind == findings.HOST or target is None:
            return (findings.HOST, host)
        if kind == 'OST':
            name = ost_name(target)
            return ('OST', self.aliases.get(name, name))
        if kind in ('MDT', 'NID', 'client'):
            return (kind, target)
        return (kind, host, target)

    def target_key(self, name: str) -> Key:
        return ('MDT', name) if _MDT_NAME.search(name) else self.key('OST', '', name)

    def node_of(self, key: Key) -> t.Optional[str]:
        if key[0] in (findings.HOST, 'client'):
            return key[-1]
        if key[0] == 'LUN':
            return key[1]
        return self.node.get(key)

    # -- what is known of a layer ----------------------------------------------------

    def status(self, keys: t.Iterable[Key], surveys: t.Iterable[str], empty: str = UNKNOWN) -> str:
        """LOW when one of ``keys`` was low in ``surveys``; FINE when every one was judged there; else the gap."""
        keys, surveys = list(keys), set(surveys)
        if not keys:
            return empty
        if any(self.low_surveys.get(key, set()) & surveys for key in keys):
            return LOW
        if not all(self.sampled.get(key, set()) & surveys for key in keys):
            return NOT_MEASURED
        if not all(self.judged.get(key, set()) & surveys for key in keys):
            return NOT_JUDGED
        return FINE

    def nids_of(self, node: t.Optional[str]) -> list[Key]:
        return [key for key in self.owned.get(node, ()) if key[0] == 'NID'] if node else []

    def layers(self, key: Key, host_surveys: t.Iterable[str] = ()) -> dict[str, str]:
        """The status of every layer the component's kind is diagnosed from.

        ``host_surveys``: for a host, the surveys of the rows that none of its components explained.
        """
        statuses = {}
        for layer in KIND_LAYERS.get(key[0], ()):
            if layer == SERVERS:
                statuses[layer] = self.servers_status()
            elif layer == COMPONENTS:
                statuses[layer] = self.host_components_status(key[1], host_surveys)
            else:
                statuses[layer] = self.status(self.layer_components(key, layer), LAYER_SURVEYS[layer],
                                              empty=self.unlinked_status(key, layer))
        return statuses

    def layer_components(self, key: Key, layer: str) -> list[Key]:
        """The components that make ``layer`` for the component ``key`` (its LUNs, its node's NIDs, ...)."""
        kind = key[0]
        if layer == LUN and kind != 'LUN':
            return self.target_luns.get(key, [])
        if layer == TARGET and kind == 'LUN':
            return self.lun_targets.get(key, [])
        if layer == NETWORK and kind != 'NID':
            return self.nids_of(self.node_of(key))
        return [key]

    def unlinked_status(self, key: Key, layer: str) -> str:
        """A layer with no known component: not measured when nothing of it was surveyed, else unknown."""
        if layer == LUN:
            node_luns = [lun for lun in self.owned.get(self.node_of(key), ()) if lun[0] == 'LUN' and lun in self.sampled]
            return UNKNOWN if node_luns else NOT_MEASURED
        if layer == NETWORK:
            return UNKNOWN if any(sampled[0] == 'NID' for sampled in self.sampled) else NOT_MEASURED
        return UNKNOWN

    def servers_status(self) -> str:
        """The server side as a whole (every OST, LUN, MDT and server NID): what a client is judged against.

        Fine when none of them is low and some were judged (a lone MDT, never judged, does not blind it).
        """
        if self._servers_status is None:
            keys = [key for key in self.sampled if key[0] in ('OST', 'LUN', 'MDT') or key in self.server_nids]
            if any(key in self.rows for key in keys):
                self._servers_status = LOW
            elif not keys:
                self._servers_status = NOT_MEASURED
            else:
                self._servers_status = FINE if any(key in self.judged for key in keys) else NOT_JUDGED
        return self._servers_status

    def host_components_status(self, host: str, surveys: t.Iterable[str]) -> str:
        """Whether the host's own components were judged in each of ``surveys``, the gap first when one was not."""
        statuses = [self.status(self.under.get((survey, host), {}), {survey}, empty=NOT_MEASURED)
                    for survey in sorted(set(surveys))]
        return next((status for status in (LOW,) + GAPS if status in statuses), FINE)

    # -- who explains whom --------------------------------------------------------------

    def weakest(self, keys: t.Iterable[Key]) -> t.Optional[Key]:
        """The component with the lowest share among those of ``keys`` that were low, or None."""
        low = [key for key in keys if key in self.rows and key[0] != findings.HOST]
        if not low:
            return None
        return min(low, key=lambda key: min(_share_key(row['share']) for row in self.rows[key]))

    def host_explainer(self, row: dict) -> t.Optional[Key]:
        """The host's own component that makes its aggregate low, or None.

        The host's components in the row's survey, when that survey measured
        any (one of them must be low in it); else, for a survey that gave host
        aggregates only, the host's components of the kind that survey measures
        (low in any survey).
        """
        survey, host = row['survey'], row['host']
        measured = self.under.get((survey, host))
        if measured:
            return self.weakest(key for key in measured if survey in self.low_surveys.get(key, ()))
        kind = findings.COMPONENT_KINDS.get(survey)
        return self.weakest(key for key in self.owned.get(host, ()) if key[0] == kind)


def _bare_ost_aliases(names: t.Iterable[str]) -> dict[str, str]:
    """``OST0003`` -> ``testfs-OST0003`` where exactly one file system has that index (ost-survey without fsname)."""
    full: dict[str, set] = {}
    for name in {ost_name(name) for name in names if isinstance(name, str)}:
        match = _OST_NAME.match(name)
        if match and match.group('fsname'):
            full.setdefault('OST%04x' % int(match.group('index'), 16), set()).add(name)
    return {bare: next(iter(names)) for bare, names in full.items() if len(names) == 1}


def choose_rule(kind: str, layers: t.Mapping[str, str]) -> DiagnosisRule:
    """The first row of RULES for this kind of component whose conditions its layers meet."""
    for rule in RULES:
        if rule.kinds and kind not in rule.kinds:
            continue
        if all(layers.get(layer) in statuses for layer, statuses in rule.when.items()):
            return rule
    raise AssertionError('RULES ends with a row that matches everything')


def _check_nid_owners(nid_owners: t.Any) -> dict[str, str]:
    if nid_owners is None:
        return {}
    if not isinstance(nid_owners, t.Mapping) or not all(
            isinstance(nid, str) and isinstance(host, str) for nid, host in nid_owners.items()):
        raise ValueError('nid_owners must map each NID to the host that owns it, got %r' % (nid_owners,))
    return dict(nid_owners)


def _is_lun_pair(lun: t.Any) -> bool:
    return isinstance(lun, (list, tuple)) and len(lun) == 2 and all(isinstance(part, str) and part for part in lun)


def _check_ost_luns(ost_luns: t.Any) -> dict[str, list[tuple[str, str]]]:
    if ost_luns is None:
        return {}
    if not isinstance(ost_luns, t.Mapping):
        raise ValueError('ost_luns must map each OST to its LUNs as [host, device] pairs, got %r' % (ost_luns,))
    checked = {}
    for target, luns in ost_luns.items():
        pairs = []
        for lun in luns if isinstance(luns, (list, tuple)) else [None]:
            if not _is_lun_pair(lun):
                raise ValueError('ost_luns.%s: each LUN must be a [host, device] pair, got %r' % (target, luns))
            pairs.append((lun[0], lun[1]))
        checked[str(target)] = pairs
    return checked


def diagnose_components(samples: t.Any, outliers: t.Optional[list[dict]] = None,
                        judged: t.Optional[t.Mapping[tuple, int]] = None,
                        nid_owners: t.Optional[t.Mapping[str, str]] = None,
                        ost_luns: t.Optional[t.Mapping[str, t.Sequence]] = None, **rule: t.Any) -> list[dict]:
    """One finding per weak component, diagnosed across the layers, weakest first (plain JSON-able dicts).

    ``samples`` are Samples or a PointTable; ``outliers`` and ``judged`` a
    ready ``analysis.judge_points`` result (computed with ``rule``, the
    ``outlier_*`` knobs, when not given).  ``nid_owners`` maps a NID to the
    host that owns it; ``ost_luns`` an OST (or MDT) name to the ``(host,
    device)`` LUNs it is mounted from.  Raises ValueError when they are not
    mappings of that shape.
    """
    table = samples if isinstance(samples, analysis.PointTable) else analysis.PointTable(samples)
    if outliers is None or judged is None:
        outliers, judged = analysis.judge_points(table, **rule)
    run = _Run(table, outliers, judged, _check_nid_owners(nid_owners), _check_ost_luns(ost_luns))
    items = {key: [_Item(row, key, None) for row in rows] for key, rows in run.rows.items()}
    _fold_hosts(run, items)
    layers = {key: run.layers(key, {item.row['survey'] for item in found}) for key, found in items.items()}
    chosen = {key: choose_rule(key[0], layers[key]) for key in items}
    _fold_down(run, items, chosen)
    result = [_finding(run, key, chosen[key], layers[key], found, judged) for key, found in items.items()]
    result.sort(key=lambda finding: _share_key(finding['share']))
    return result


def _fold_hosts(run: _Run, items: dict[Key, list[_Item]]) -> None:
    """Move each host row that one of the host's components explains into that component's finding."""
    for key in [key for key in items if key[0] == findings.HOST]:
        kept = []
        for item in items[key]:
            explainer = run.host_explainer(item.row)
            if explainer is None:
                kept.append(item)
            else:
                items[explainer].append(item._replace(because=explainer))
        if kept:
            items[key] = kept
        else:
            del items[key]


def _fold_down(run: _Run, items: dict[Key, list[_Item]], chosen: dict[Key, DiagnosisRule]) -> None:
    """Move a component whose rule points one layer down into the weakest low component of that layer."""
    for key, rule in list(chosen.items()):
        if rule.fold is None:
            continue
        below = run.weakest(run.target_luns.get(key, []) if rule.fold == LUN else run.nids_of(run.node_of(key)))
        # The lower component's own rule never folds further (LUN and NID rows have no fold): no chain, no cycle.
        if below is None or below not in items or chosen[below].fold is not None:
            continue
        items[below].extend(item if item.because else item._replace(because=below) for item in items.pop(key))
        del chosen[key]


def _metric_label(row: dict) -> str:
    """``obdfilter write``: the survey and test of a metric (``<survey>_<test>_<unit>``)."""
    test = row['metric'][len(row['survey']) + 1:].rsplit('_', 2)[0] if row['metric'].startswith(row['survey'] + '_') \
        else row['metric']
    return '%s %s' % (row['survey'], test.replace('_', ' '))


def _survey_rank(survey: str) -> int:
    return SURVEY_ORDER.index(survey) if survey in SURVEY_ORDER else len(SURVEY_ORDER)


def _test_rank(row: dict) -> int:
    # The order the surveys run their tests in: a write first, as the I/O kit does.
    test = _metric_label(row).rsplit(' ', 1)[-1]
    return TEST_ORDER.index(test) if test in TEST_ORDER else len(TEST_ORDER)


def _name(key: Key) -> str:
    return key[-1]


def _describe(key: Key, run: _Run) -> dict:
    return {'kind': key[0], 'name': _name(key), 'node': run.node_of(key)}


def _node_text(kind: str, node: t.Optional[str]) -> str:
    if node:
        return node
    return 'its node (not in nid_owners)' if kind == 'NID' else 'its node (not known)'


def _template_values(run: _Run, key: Key, rule: DiagnosisRule, layers: dict) -> dict:
    kind, node = key[0], run.node_of(key)
    above = [target for target in run.lun_targets.get(key, [])
             if run.low_surveys.get(target, set()) & set(LAYER_SURVEYS[TARGET])]
    below = run.weakest(run.target_luns.get(key, []))
    values = {'node': _node_text(kind, node), 'kind': kind, 'target': _TARGET_TEXT.get(kind, 'its target'),
              'above': ', '.join(_name(target) for target in above) or 'the target',
              'below': _name(below) if below else 'under it', 'gap': ''}
    if rule.gap:
        values['gap'] = _GAP_TEXT[(rule.gap, layers[rule.gap])].format(
            node=values['node'], survey=_TARGET_SURVEY.get(kind, 'its survey'))
    return values


def _finding(run: _Run, key: Key, rule: DiagnosisRule, layers: dict[str, str], found: list[_Item],
             judged: t.Mapping[tuple, int]) -> dict:
    values = _template_values(run, key, rule, layers)
    # Its own rows first, then the components folded into it, then the hosts.
    found = sorted(found, key=lambda item: (item.because is not None, item.about[0] == findings.HOST,
                                            _survey_rank(item.row['survey']), item.row['metric'],
                                            item.row['point_label']))
    evidence = [_evidence(item) for item in found]
    share = min((row['share'] for row in evidence), key=_share_key)
    look = findings.NEXT_STEPS.get(rule.look or key[0], findings.NEXT_STEPS[findings.HOST])
    finding = dict(_describe(key, run), share=share, share_pct=None if share is None else 100.0 * share,
                   rule=rule.name, layer=_TARGET_TEXT.get(key[0], 'its target') if rule.layer == TARGET
                   else LAYER_TEXT[rule.layer],
                   diagnosis=rule.diagnosis.format(**values), points_at=rule.points_at.format(**values),
                   look_at=look + ('; ' + rule.also if rule.also else ''), layers=layers,
                   folded=_folded(found, run), metrics=_metrics(found, judged), evidence=evidence)
    finding['text'] = component_text(finding)
    return finding


def _evidence(item: _Item) -> dict:
    row = item.row
    return {'survey': row['survey'], 'metric': row['metric'], 'unit': row['unit'], 'kind': row['kind'],
            'component': _name(item.about), 'host': row['host'], 'target': row['target'], 'subject': row['subject'],
            'point': row['point'], 'point_label': row['point_label'], 'value': row['value'],
            'median': row['median'], 'share': row['share'],
            'share_pct': None if row['share'] is None else 100.0 * row['share'], 'peers': row['peers'],
            'folded': item.because is not None, 'because': _name(item.because) if item.because else None}


def _folded(found: list[_Item], run: _Run) -> list[dict]:
    """The components (hosts included) folded into this finding, each with the one it was folded into."""
    seen: dict = {}
    for item in found:
        if item.because is not None and (item.about, item.because) not in seen:
            seen[(item.about, item.because)] = dict(_describe(item.about, run), because=_name(item.because))
    return list(seen.values())


def _metrics(found: list[_Item], judged: t.Mapping[tuple, int]) -> list[dict]:
    """Per subject and metric: findings.py's row (its weakest point, low and judged points), with its component."""
    by_subject = {(item.row['survey'], item.row['metric'], item.row['subject']): item for item in found}
    rows = findings.findings([item.row for item in found], judged)
    for row in rows:
        item = by_subject[(row['survey'], row['metric'], row['subject'])]
        del row['next']
        row.update(component=_name(item.about), folded=item.because is not None,
                   because=_name(item.because) if item.because else None)
    rows.sort(key=lambda row: (row['folded'], _survey_rank(row['survey']), _test_rank(row), _share_key(row['share'])))
    return rows


def _pct(share: t.Optional[float]) -> str:
    return '-' if share is None else '%.0f %%' % (100.0 * share)


def component_text(finding: dict) -> str:
    """One line: the component, its node, the diagnosis, what it points at, and where it was low.

    ``testfs-OST0003 (oss2): slow at the OST object layer (obdfilter), its LUNs are fine -> backend file system
    or OST configuration; low in obdfilter write 41 %, ost write 40 %; oss2 is low because testfs-OST0003 is
    (obdfilter write 70 %)``
    """
    own = ['%s %s' % (_metric_label(row), _pct(row['share'])) for row in finding['metrics'] if not row['folded']]
    text = '%s (%s): %s -> %s' % (finding['name'], finding['node'] or _node_text(finding['kind'], None),
                                  finding['diagnosis'], finding['points_at'])
    if own:
        text += '; low in ' + ', '.join(own)
    for part in finding['folded']:
        shown = ['%s %s' % (_metric_label(row), _pct(row['share'])) for row in finding['metrics']
                 if (row['kind'], row['component'], row['because']) == (part['kind'], part['name'], part['because'])]
        text += '; %s (%s)' % (because_text(part['name'], part['because']), ', '.join(shown))
    return text


# --------------------------------------------------------------------------
# What the report files print


def _point_key(point: t.Mapping) -> tuple:
    # The order of a sweep (thr 4 before thr 16); a value that is not a number sorts after the numbers, as text.
    return tuple((name, (0, value, '') if isinstance(value, (int, float)) and not isinstance(value, bool)
                  else (1, 0, str(value))) for name, value in sorted(dict(point).items()))


def because_text(component: str, because: t.Optional[str]) -> str:
    """``oss2 is low because testfs-OST0003 is``; empty for a component's own rows."""
    return '%s is low because %s is' % (component, because) if because else ''


def finding_rows(components: t.Sequence[dict]) -> list[dict]:
    """The rows of the findings tables of summary.md and report.html, from ``diagnose_components``.

    One row per weak component, in the order given (weakest first): ``rank``,
    ``kind``, ``name``, ``node`` (the text shown when it is not known),
    ``layer``, ``diagnosis``, ``points_at``, ``look_at``, ``share_pct`` and
    ``text``; and beneath it ``evidence``, one entry per survey, metric and
    subject that was low, in the order of the layers: ``measured`` (``obdfilter
    write``), ``survey``, ``metric``, ``subject``, ``unit``, ``because``
    (``oss2 is low because testfs-OST0003 is``, empty for its own rows), the
    weakest point (``value``, ``median``, ``share_pct``, ``point_label``,
    ``peers``), ``low_points`` of ``points`` judged, and ``low_at``: every low
    point in sweep order with its share of the peer median (``point_label``,
    ``share_pct``), also as one text, ``low_at_text``.
    """
    rows = []
    for rank, finding in enumerate(components, 1):
        points: dict = {}
        for row in finding['evidence']:
            points.setdefault((row['survey'], row['metric'], row['subject']), []).append(row)
        evidence = []
        for metric in finding['metrics']:
            low = sorted(points.get((metric['survey'], metric['metric'], metric['subject']), ()),
                         key=lambda row: _point_key(row['point']))
            low_at = [{'point_label': row['point_label'], 'share_pct': row['share_pct']} for row in low]
            low_at_text = ', '.join('%s %s' % (row['point_label'], _pct(row['share'])) for row in low)
            evidence.append({'measured': _metric_label(metric), 'survey': metric['survey'],
                             'metric': metric['metric'], 'subject': metric['subject'], 'unit': metric['unit'],
                             'because': because_text(metric['component'], metric['because']),
                             'value': metric['value'], 'median': metric['median'], 'share_pct': metric['share_pct'],
                             'point_label': metric['point_label'], 'peers': metric['peers'],
                             'low_points': metric['low_points'], 'points': metric['points'], 'low_at': low_at,
                             'low_at_text': low_at_text})
        rows.append({'rank': rank, 'kind': finding['kind'], 'name': finding['name'],
                     'node': finding['node'] or _node_text(finding['kind'], None), 'layer': finding['layer'],
                     'diagnosis': finding['diagnosis'], 'points_at': finding['points_at'],
                     'look_at': finding['look_at'], 'share_pct': finding['share_pct'], 'text': finding['text'],
                     'evidence': evidence})
    return rows


def diagnosis_text(finding: dict) -> str:
    """``testfs-OST0003 (oss2): slow at ... -> backend ... (first weak at: the OST object layer (obdfilter))``"""
    return '%s (%s): %s -> %s (first weak at: %s)' % (
        finding['name'], finding['node'] or _node_text(finding['kind'], None), finding['diagnosis'],
        finding['points_at'], finding['layer'])


def case_diagnoses(components: t.Iterable[dict]) -> dict[tuple, str]:
    """``{(metric, subject): text}``: for each low subject and metric, the diagnosis of the finding it is evidence of.

    What a verdict's failing case about that subject and metric adds to its
    message (criteria.add_diagnoses); a row folded into another component's
    finding says why first (``oss2 is low because testfs-OST0003 is; ...``).
    """
    texts = {}
    for finding in components:
        text = 'diagnosis: ' + diagnosis_text(finding)
        for row in finding['metrics']:
            because = because_text(row['component'], row['because'])
            texts.setdefault((row['metric'], row['subject']), '%s; %s' % (because, text) if because else text)
    return texts
