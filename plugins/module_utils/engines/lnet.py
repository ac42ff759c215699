# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The lnet survey engine: LNet self-test between server and client NIDs, as lustre-iokit's ``lst-survey`` does.

Planned and measured as ``lst-survey`` (docs/iokit-notes.md, 6.3) drives ``lst.sh``:

* the servers and the clients are split into groups (``split``): ``all``
  (every client against every server), ``each_server`` (every server alone
  against all clients, ``-N 1``) or ``each_client`` (``-M 1``); every server
  group is tested against every client group;
* per group pair the modes run in order, a bulk mode once per size
  (``read_4k``, ``read_1m``, ``write_4k``, ``write_1m``), ``ping`` once;
* one test is a batch of the LNet self-test console::

      lst add_batch <batch>
      lst add_test --batch <batch> --concurrency <c> --distribute <M>:<N>
                   --from <client group> --to <server group> brw read|write size=<size> | ping
      lst run <batch>
      lst stat --bw --rate --count <n> --delay <D> <server group> <client group> [<nid> ...]
      lst stop <batch>
      lst show_error <server group> <client group>

  where ``<M>:<N>`` are the client and server group sizes, so that every
  client of a pair talks to every server of it, as lst-survey passes them.

The figures of a record are those of the reported group (``stat_group``,
servers by default): the per-node average that ``lst stat`` prints, averaged
over the ``n`` samples (lst-survey truncates them to integers; they are kept
as numbers here).  ``[R]`` is what the group received and ``[W]`` what it sent,
so for a ``read`` test the servers' Write column carries the bulk data.
lst-survey never passes ``--mbs``: every bandwidth is MiB/s.

Added to lst-survey's figures, so that one bad NIC is visible: the Min and
Max over the nodes of both groups, each node's own figures (``lst stat <nid>``
in the same sampling run) and each node's errors during the test, from the
difference of ``lst show_error``'s session counters before and after it.

One console session, keyed by ``LST_SESSION``, carries the whole survey.  It
is written to the node state before ``lst new_session`` and ended by
``close`` whatever happened (error, timeout, SIGTERM); after a SIGKILL the
cleanup module ends it.  A session left open by an earlier run of this
collection (found in the node state) is ended first; any other open session
is reported and left alone unless ``force_session``.

``engine: iokit`` runs the installed ``lst-survey`` (Lustre 2.16 and later)
with the same parameters and parses its CSV with ``parse_lst_survey``.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import re

from ansible_collections.lustre.iokit.plugins.module_utils import sample_extraction as extraction
from ansible_collections.lustre.iokit.plugins.module_utils.engines.contract import NativeSurvey
from ansible_collections.lustre.iokit.plugins.module_utils.engines.errors import EngineError
from ansible_collections.lustre.iokit.plugins.module_utils.option_problem import OptionProblem
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.lst_stat import parse_lst_stat
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.lst_survey import parse_lst_survey
from ansible_collections.lustre.iokit.plugins.module_utils.units import parse_size
from ansible_collections.lustre.iokit.plugins.module_utils.versions import version_tuple

MODES = ('read', 'write', 'rw', 'ping')
SPLITS = ('all', 'each_server', 'each_client')
STAT_GROUPS = ('servers', 'clients')
DEFAULT_MODES = ('read', 'write', 'ping')
DEFAULT_SIZES = ('4k', '1m')
DEFAULT_CONCURRENCY = 64
DEFAULT_STAT_COUNT = 3
DEFAULT_STAT_DELAY_S = 3
DEFAULT_SESSION_TIMEOUT_S = 300
# lst add_test refuses more (LST_MAX_CONCUR) and a bulk above LNET_MTU.
MAX_CONCURRENCY = 1024
LNET_MTU = 1 << 20
# lst's LST_NAME_SIZE is 32 with the terminating NUL.
MAX_NAME_LENGTH = 31
SELFTEST_MODULE = 'lnet_selftest'
SESSION_PREFIX = 'iokit_'
# lst-survey appeared in lustre-iokit 2.16.0 (not in any 2.15.x).
IOKIT_MIN_VERSION = (2, 16, 0)

# A NID as lst takes it: address@network, the address possibly a range such as 10.0.0.[1-4].
_NID_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9.:\[\],/-]*@[a-z]+[0-9]*\Z')
_SHOW_SESSION_RE = re.compile(r'^(?P<name>\S+) ID: \S+, KEY: (?P<key>-?[0-9]+) ')
_NODE_ERRORS_RE = re.compile(
    r'^(?:[0-9]+-)?(?P<nid>\S+@\S+): \[Session (?P<brw>[0-9]+) brw errors, (?P<ping>[0-9]+) ping errors\]'
    r'(?:\s*\[RPC: (?P<rpc>[0-9]+) errors, (?P<dropped>[0-9]+) dropped, (?P<expired>[0-9]+) expired\])?')
_NODE_FAILURE_RE = re.compile(r'^(?P<kind>RPC|Framework) failure, can\'t show error on (?:[0-9]+-)?(?P<nid>\S+)')
_ERROR_TOTAL_RE = re.compile(r'^Total (?P<count>[0-9]+) error nodes in (?P<group>\S+)')
_ERROR_COUNTERS = ('brw', 'ping', 'rpc', 'dropped', 'expired')


# --------------------------------------------------------------------------
# Options and plan


def size_bytes(size):
    """``4k`` -> 4096, ``1m`` -> 1048576, ``512`` -> 512; None when lst would not take it.

    lst reads a size with strtol and one suffix letter, k or m: the strict form of ``units.parse_size``
    (no spaces, no ``iB``, no leading zero, which strtol would read as octal), and above zero.
    """
    try:
        number = parse_size(size, suffixes='km', strict=True)
    except ValueError:
        return None
    return number if number > 0 else None


def nid_problems(option, nids):
    """The OptionProblems of ``option``'s NIDs."""
    problems = []
    if not nids:
        problems.append(OptionProblem(option, 'give at least one NID (such as 10.0.0.1@tcp)'))
    bad = [nid for nid in nids or [] if not _NID_RE.match(nid)]
    if bad:
        problems.append(OptionProblem(option, 'not a NID (address@network, such as 10.0.0.1@tcp or 10.0.0.[1-4]@o2ib): '
                                      '%s' % ', '.join(bad)))
    if nids and len(set(nids)) != len(nids):
        problems.append(OptionProblem(option, 'each NID may appear once', got=', '.join(nids)))
    return problems


def _size_problems(sizes):
    """The OptionProblems of ``sizes``, which a bulk mode needs."""
    problems = []
    if not sizes:
        problems.append(OptionProblem('sizes', 'a bulk mode (read, write, rw) needs at least one size, such as 4k or 1m'))
    for size in sizes or []:
        number = size_bytes(size)
        if number is None:
            problems.append(OptionProblem('sizes', '%r is not a size lst takes (bytes, or a number with k or m)'
                                          % (size,)))
        elif number > LNET_MTU:
            problems.append(OptionProblem('sizes', '%s is above the LNet MTU (1m), which lst refuses' % size))
    if sizes and len(set(sizes)) != len(sizes):
        problems.append(OptionProblem('sizes', 'each size may appear once', got=', '.join(sizes)))
    return problems


def option_problems(servers, clients, modes, sizes, concurrency, stat_count, stat_delay_s, stat_group, split,
                    distribute=None, session_timeout=DEFAULT_SESSION_TIMEOUT_S):
    """Every invalid option value, each an OptionProblem (checked before anything runs)."""
    problems = nid_problems('servers', servers) + nid_problems('clients', clients)
    if not modes:
        problems.append(OptionProblem('modes', 'give at least one of %s' % ', '.join(MODES)))
    unknown = [mode for mode in modes or [] if mode not in MODES]
    if unknown:
        problems.append(OptionProblem('modes', 'unknown mode %s (known: %s)' % (', '.join(unknown), ', '.join(MODES))))
    if modes and len(set(modes)) != len(modes):
        problems.append(OptionProblem('modes', 'each mode may appear once', got=', '.join(modes)))
    if any(mode != 'ping' for mode in modes or []):
        problems.extend(_size_problems(sizes))
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        problems.append(OptionProblem('concurrency', 'must be from 1 to %d' % MAX_CONCURRENCY, got='%d' % concurrency))
    if stat_count < 1:
        problems.append(OptionProblem('stat_count', 'must be at least 1 sample', got='%d' % stat_count))
    if stat_delay_s < 1:
        problems.append(OptionProblem('stat_delay_s', 'must be at least 1 second', got='%d' % stat_delay_s))
    if stat_group not in STAT_GROUPS:
        problems.append(OptionProblem('stat_group', 'must be servers or clients', got='%r' % (stat_group,)))
    if not split:
        problems.append(OptionProblem('split', 'give at least one of %s' % ', '.join(SPLITS)))
    unknown = [entry for entry in split or [] if entry not in SPLITS]
    if unknown:
        problems.append(OptionProblem('split', 'unknown %s (known: %s)' % (', '.join(unknown), ', '.join(SPLITS))))
    if split and len(set(split)) != len(split):
        problems.append(OptionProblem('split', 'each entry may appear once', got=', '.join(split)))
    if distribute is not None and not re.match(r'^[1-9][0-9]*:[1-9][0-9]*\Z', distribute):
        problems.append(OptionProblem('distribute', 'must be S:D with two positive numbers (such as 1:1)',
                                      got='%r' % (distribute,)))
    if session_timeout < 1:
        problems.append(OptionProblem('session_timeout', 'must be at least 1 second', got='%d' % session_timeout))
    return problems


def nid_owner_problems(nid_owners):
    """The OptionProblems of ``nid_owners`` (NID -> the inventory host that owns it): each owner a host name."""
    bad = sorted(str(nid) for nid, owner in (nid_owners or {}).items()
                 if not isinstance(owner, str) or not owner.strip() or '/' in owner)
    if bad:
        return [OptionProblem('nid_owners', 'map each NID to the inventory name of the host that owns it (a '
                              'non-empty name without /); not so for %s' % ', '.join(bad))]
    return []


def group_nid_owners(servers, clients, nid_owners):
    """``{nid: host}`` for every NID of the server and client groups whose owner ``nid_owners`` names.

    The history keys a NID by its owner (``oss1/192.168.1.10@tcp``); NIDs of ``nid_owners`` outside the groups are
    not this test's and are left out.
    """
    owners = {}
    for nid in list(servers or []) + list(clients or []):
        owner = (nid_owners or {}).get(nid)
        if isinstance(owner, str) and owner.strip():
            owners[nid] = owner.strip()
    return owners


def tests_plan(modes, sizes):
    """The tests of one group pair in lst-survey's order: each bulk mode per size, ping once."""
    tests = []
    for mode in modes:
        if mode == 'ping':
            tests.append({'mode': 'ping', 'test': 'ping', 'ops': [], 'size': None})
            continue
        ops = ['read', 'write'] if mode == 'rw' else [mode]
        for size in sizes:
            tests.append({'mode': '%s_%s' % (mode, str(size).lower()), 'test': 'brw', 'ops': ops,
                          'size': str(size).lower()})
    return tests


def group_pairs(servers, clients, split):
    """Every (server group, client group) pair of the split entries, in order, with lst group names."""
    pairs = []
    for entry in split:
        if entry == 'all':
            pairs.append({'split': entry, 'server_group': 'servers', 'servers': list(servers),
                          'client_group': 'clients', 'clients': list(clients)})
        elif entry == 'each_server':
            for index, nid in enumerate(servers):
                pairs.append({'split': entry, 'server_group': 'server%d' % index, 'servers': [nid],
                              'client_group': 'clients', 'clients': list(clients)})
        else:
            for index, nid in enumerate(clients):
                pairs.append({'split': entry, 'server_group': 'servers', 'servers': list(servers),
                              'client_group': 'client%d' % index, 'clients': [nid]})
    return pairs


def pair_distribute(pair, distribute=None):
    """``--distribute``: given, or the group sizes (clients:servers) as lst-survey passes them."""
    return distribute or '%d:%d' % (len(pair['clients']), len(pair['servers']))


def iokit_version_problem(version):
    """Why ``engine: iokit`` cannot run on a node of this Lustre version, or None."""
    found = version_tuple(version)
    if found is None:
        return None
    if found < IOKIT_MIN_VERSION:
        return ('engine: iokit runs lst-survey, which lustre-iokit ships from Lustre 2.16 on; this node runs Lustre '
                '%s; use engine: native (same method, driving lst directly)' % version)
    return None


# --------------------------------------------------------------------------
# lst output


def parse_show_session(stdout):
    """``(name, key)`` of the session ``lst show_session`` prints, or None when none is open."""
    for line in (stdout or '').splitlines():
        match = _SHOW_SESSION_RE.match(line.strip())
        if match:
            return match.group('name'), int(match.group('key'))
    return None


def parse_show_error(stdout, stderr):
    """``lst show_error`` as ``{'totals': {group: n}, 'nodes': {nid: {counters or failure}}}``.

    The totals are on stdout; per-node lines (``12345-10.0.0.1@tcp: [Session 3 brw errors, 0 ping errors]
    [RPC: 5 errors, 0 dropped, 0 expired]``, ``RPC failure, can't show error on ...``) on stderr.
    """
    totals = {}
    nodes = {}
    for line in (stdout or '').splitlines():
        match = _ERROR_TOTAL_RE.match(line.strip())
        if match:
            totals[match.group('group')] = int(match.group('count'))
    for line in (stderr or '').splitlines() + (stdout or '').splitlines():
        line = line.strip()
        match = _NODE_ERRORS_RE.match(line)
        if match:
            nodes[match.group('nid')] = dict((name, int(match.group(name) or 0)) for name in _ERROR_COUNTERS)
            continue
        match = _NODE_FAILURE_RE.match(line)
        if match:
            nodes[match.group('nid')] = {'failure': '%s failure' % match.group('kind')}
    return {'totals': totals, 'nodes': nodes}


def _mean(values):
    values = [value for value in values if value is not None]
    return sum(values) / len(values) if values else None


def stat_figures(stat_records, label):
    """One lst stat label's figures averaged over its complete samples.

    Returns ``{'samples': n, 'failed_nodes': max, 'bandwidth': {'read': {'avg','min','max'}, 'write': ...},
    'rates': {...}}``; a sample counts when its four [R]/[W] lines are there (a stopped lst stat may cut one).
    """
    by_sample = {}
    for record in stat_records:
        if record['group'] == label:
            by_sample.setdefault(record['sample'], {})[(record['metric'], record['direction'])] = record
    complete = [sample for sample in sorted(by_sample) if len(by_sample[sample]) == 4]
    figures = {'samples': len(complete), 'failed_nodes': max([by_sample[sample][key]['failed_nodes']
                                                              for sample in complete for key in by_sample[sample]]
                                                             or [0])}
    for metric in ('bandwidth', 'rates'):
        figures[metric] = {}
        for direction in ('read', 'write'):
            figures[metric][direction] = dict(
                (kind, _mean([by_sample[sample][(metric, direction)][kind] for sample in complete]))
                for kind in ('avg', 'min', 'max'))
    return figures


def error_delta(before, after):
    """A node's errors during one test: the session counters after it minus before (failures as they are)."""
    if after is None:
        return None
    if 'failure' in after:
        return dict(after)
    before = before if before and 'failure' not in before else {}
    delta = dict((name, after.get(name, 0) - before.get(name, 0)) for name in _ERROR_COUNTERS)
    return delta if any(delta.values()) else None


def csv_row(record, separator=','):
    """The record as a row of lst-survey's CSV (so that ``parse_lst_survey`` reads the raw output back)."""
    def number(value, digits):
        return '' if value is None else ('%.*f' % (digits, value))
    return separator.join([' '.join(record['servers']), ' '.join(record['clients']), record['mode'],
                           number(record['read_mib_s'], 2), number(record['read_rpc_s'], 0),
                           number(record['write_mib_s'], 2), number(record['write_rpc_s'], 0),
                           str(record['server_errors']), str(record['client_errors'])]) + '\n'


CSV_HEADER = 'Servers,Clients,Mode,Read_BW,Read_Rate,Write_BW,Write_Rate,Server_Errors,Client_Errors\n'


# --------------------------------------------------------------------------
# The survey


class LstSurvey(NativeSurvey):
    """Plans, runs and always ends one LNet self-test session on the console node.

    From ``context`` (an EngineContext, contract.py): ``runner`` runs the
    measuring commands under the survey's deadline;
    ``control_runner`` (no deadline) ends the session after a timeout;
    ``node_state`` is where the session is written down before it is opened.
    ``raw``: an object with ``summary(text)`` (the CSV) and ``detail(text)``
    (every lst command and its output), or None.
    """

    def __init__(self, context, servers, clients, modes=DEFAULT_MODES,
                 sizes=DEFAULT_SIZES, concurrency=DEFAULT_CONCURRENCY, stat_count=DEFAULT_STAT_COUNT,
                 stat_delay_s=DEFAULT_STAT_DELAY_S, stat_group='servers', split=('all',), distribute=None,
                 per_node_stats=True, session_timeout=DEFAULT_SESSION_TIMEOUT_S, force_session=False, key=None,
                 lst='lst', raw=None):
        self.context = context
        self.runner = context.runner
        self.control_runner = context.control_runner
        self.node_state = context.node_state
        self.run_id = context.run_id
        self.servers = list(servers)
        self.clients = list(clients)
        self.modes = list(modes)
        self.sizes = [str(size).lower() for size in sizes]
        self.concurrency = concurrency
        self.stat_count = stat_count
        self.stat_delay_s = stat_delay_s
        self.stat_group = stat_group
        self.split = list(split)
        self.distribute = distribute
        self.per_node_stats = per_node_stats
        self.session_timeout = session_timeout
        self.force_session = force_session
        self.key = int(key if key is not None else os.getpid())
        self.session = SESSION_PREFIX + str(self.key)
        self.lst = lst
        self.raw = raw
        self.host = context.host
        self.errors = []
        self.notes = []
        self.aborted = None
        self.session_open = False
        self._groups = set()
        # (server group, client group, mode) -> the record of a test an earlier attempt of the run measured (resume)
        self.done_points = {}
        self._batches = 0
        self._running_batch = None
        self._node_errors = {}
        self._interrupted = None

    # -- planning ------------------------------------------------------------------

    def problems(self):
        return option_problems(self.servers, self.clients, self.modes, self.sizes, self.concurrency,
                               self.stat_count, self.stat_delay_s, self.stat_group, self.split, self.distribute,
                               self.session_timeout)

    def plan(self):
        """The group pairs and tests, for check mode; the duration is lst stat's sampling time."""
        pairs = group_pairs(self.servers, self.clients, self.split)
        tests = tests_plan(self.modes, self.sizes)
        points = len(pairs) * len(tests)
        return {
            'pairs': [dict(pair, distribute=pair_distribute(pair, self.distribute)) for pair in pairs],
            'tests': [test['mode'] for test in tests],
            'points': points,
            'session': self.session,
            'stat_group': self.stat_group,
            'overlap': sorted(set(self.servers) & set(self.clients)),
            'estimated_duration_s': points * self.stat_count * self.stat_delay_s,
        }

    # -- lst --------------------------------------------------------------------------

    def _lst(self, args, runner=None, key=None):
        runner = runner or self.runner
        result = runner.run([self.lst] + list(args), env={'LST_SESSION': str(self.key if key is None else key)})
        self._raw('detail', '$ lst %s\n%s%s' % (' '.join(args), result.stdout, result.stderr))
        return result

    def _checked(self, args):
        result = self._lst(args)
        if result.timed_out:
            raise _Stopped('lst %s' % args[0])
        if result.rc != 0:
            raise EngineError('lst %s failed (rc %s): %s' % (
                ' '.join(args), result.rc, (result.stderr or result.stdout).strip()))
        return result

    def _raw(self, kind, text):
        if self.raw is not None:
            getattr(self.raw, kind)(text)

    # -- session ----------------------------------------------------------------------

    def setup(self):
        """End a stale session of ours, refuse another console's (unless ``force_session``), open ours.

        Raises EngineError naming what is open; the session is in the node state before ``new_session``.
        """
        shown = self._lst(['show_session'], runner=self.control_runner)
        current = parse_show_session(shown.stdout) if shown.rc == 0 else None
        force = False
        if current is not None:
            name, key = current
            ours = [entry for entry in self.node_state.entries('lst_sessions')
                    if entry.get('name') == name and entry.get('key') == key]
            if ours:
                ended = self._lst(['end_session'], runner=self.control_runner, key=key)
                if ended.rc != 0:
                    raise EngineError('lst: cannot end the session %s (key %d) left by run %s: %s' % (
                        name, key, ours[0].get('run_id'), (ended.stderr or ended.stdout).strip()))
                self.node_state.forget('lst_sessions', name)
                self.notes.append('ended the lst session %s left open by run %s' % (name, ours[0].get('run_id')))
            elif self.force_session:
                force = True
                self.notes.append('replaced the lst session %s (key %d) of another console (force_session)'
                                  % (name, key))
            else:
                raise EngineError(
                    'lst: a session %s (key %d) that this collection did not open is active on this console; '
                    'end it (LST_SESSION=%d lst end_session), wait for its timeout, or set force_session to '
                    'replace it' % (name, key, key))
        self.node_state.record('lst_sessions', self.run_id, name=self.session, key=self.key)
        args = ['new_session', '--timeout', str(self.session_timeout)] + (['--force'] if force else []) + [
            self.session]
        result = self._lst(args, runner=self.control_runner)
        if result.rc != 0:
            self.node_state.forget('lst_sessions', self.session)
            raise EngineError('lst new_session failed (rc %s): %s' % (result.rc, (result.stderr or result.stdout)
                                                                      .strip()))
        self.session_open = True

    def teardown(self, control_runner=None):
        """Stop a running batch and end the session on the control runner (no deadline); returns the problems
        (empty when done)."""
        if control_runner is not None:
            self.control_runner = control_runner
        problems = []
        if not self.session_open:
            return problems
        if self._running_batch is not None:
            stopped = self._lst(['stop', self._running_batch], runner=self.control_runner)
            if stopped.rc != 0:
                problems.append('lst stop %s: %s' % (self._running_batch, (stopped.stderr or stopped.stdout).strip()))
            self._running_batch = None
        ended = self._lst(['end_session'], runner=self.control_runner)
        if ended.rc != 0 and 'No session exists' not in ended.stderr:
            problems.append('lst end_session: %s (the session %s stays recorded for the cleanup)'
                            % ((ended.stderr or ended.stdout).strip(), self.session))
            return problems
        self.session_open = False
        self.node_state.forget('lst_sessions', self.session)
        return problems

    # -- running ----------------------------------------------------------------------

    def run(self):
        """Every test of every group pair (after ``setup``), yielding one record per test.

        Stops at the deadline or a stop request (``aborted`` holds the reason; a test cut short yields a record
        with ``complete: false`` when lst stat printed a whole sample); an lst failure is an error of that test.
        """
        self._raw('summary', CSV_HEADER)
        tests = tests_plan(self.modes, self.sizes)
        try:
            for pair in group_pairs(self.servers, self.clients, self.split):
                missing = [test for test in tests
                           if (pair['server_group'], pair['client_group'], test['mode']) not in self.done_points]
                if not missing:
                    continue
                self._add_group(pair['server_group'], pair['servers'])
                self._add_group(pair['client_group'], pair['clients'])
                for test in missing:
                    if self.runner.expired():
                        raise _Stopped('%s %s' % (pair['split'], test['mode']))
                    record = self._run_test(pair, test)
                    if record is not None:
                        self._raw('summary', csv_row(record))
                        yield record
                    if self._interrupted:
                        raise _Stopped(self._interrupted)
        except _Stopped as stop:
            self.aborted = self.runner.stop_reason or 'stopped'
            self.errors.append({'point': None, 'message': '%s interrupted: %s' % (stop, self.aborted)})

    def _add_group(self, name, nids):
        if name in self._groups:
            return
        self._checked(['add_group', name] + list(nids))
        self._groups.add(name)

    def _run_test(self, pair, test):
        self._batches += 1
        batch = ('%s_%d' % (test['mode'], self._batches))[:MAX_NAME_LENGTH]
        point = {'split': pair['split'], 'servers': pair['server_group'], 'clients': pair['client_group'],
                 'mode': test['mode']}
        try:
            self._checked(['add_batch', batch])
            common = ['add_test', '--batch', batch, '--concurrency', str(self.concurrency), '--distribute',
                      pair_distribute(pair, self.distribute), '--from', pair['client_group'],
                      '--to', pair['server_group']]
            if test['test'] == 'ping':
                self._checked(common + ['ping'])
            for op in test['ops']:
                self._checked(common + ['brw', op, 'size=%s' % test['size']])
            self._checked(['run', batch])
            self._running_batch = batch
        except EngineError as exc:
            self.errors.append({'point': point, 'message': str(exc)})
            return None
        labels = [pair['server_group'], pair['client_group']]
        if self.per_node_stats:
            labels += pair['servers'] + [nid for nid in pair['clients'] if nid not in pair['servers']]
        stat = self._lst(['stat', '--bw', '--rate', '--count', str(self.stat_count), '--delay',
                          str(self.stat_delay_s)] + labels)
        stopped = self._lst(['stop', batch], runner=self.control_runner)
        if stopped.rc == 0:
            self._running_batch = None
        errors = self._lst(['show_error', pair['server_group'], pair['client_group']], runner=self.control_runner)
        record = self._record(pair, test, stat, errors)
        if errors.rc != 0:
            self.errors.append({'point': point, 'message': record['error']})
        if stopped.rc != 0:
            self.errors.append({'point': point, 'message': 'lst stop %s failed: %s' % (
                batch, (stopped.stderr or stopped.stdout).strip())})
        if stat.timed_out:
            self._interrupted = '%s %s' % (pair['split'], test['mode'])
            if not record['samples']:
                return None
            record['complete'] = False
            record['error'] = 'stopped after %d of %d samples' % (record['samples'], self.stat_count)
            return record
        if stat.rc != 0 or record['samples'] < self.stat_count:
            record['complete'] = False
            record['error'] = 'lst stat gave %d of %d samples (rc %s): %s' % (
                record['samples'], self.stat_count, stat.rc, (stat.stderr or '').strip())
            self.errors.append({'point': point, 'message': record['error']})
            if not record['samples']:
                return None
        bad = [node for node in record['nodes'] if node['errors']]
        if bad:
            self.errors.append({'point': point, 'message': 'LNet errors on %s' % ', '.join(
                '%s (%s)' % (node['nid'], _error_text(node['errors'])) for node in bad)})
        return record

    def _record(self, pair, test, stat, errors):
        stat_records = parse_lst_stat(stat.stdout)
        groups = {'servers': stat_figures(stat_records, pair['server_group']),
                  'clients': stat_figures(stat_records, pair['client_group'])}
        reported = groups[self.stat_group]
        parsed_errors = parse_show_error(errors.stdout, errors.stderr) if errors.rc == 0 else None
        nodes = []
        roles = [(nid, 'server') for nid in pair['servers']] + [(nid, 'client') for nid in pair['clients']]
        for nid, role in roles:
            own = stat_figures(stat_records, nid) if self.per_node_stats else None
            node_errors = None
            if parsed_errors is not None:
                after = parsed_errors['nodes'].get(nid)
                node_errors = error_delta(self._node_errors.get(nid), after)
                if after is not None:
                    self._node_errors[nid] = after
            entry = {'nid': nid, 'role': role, 'errors': node_errors, 'read_mib_s': None, 'write_mib_s': None,
                     'read_rpc_s': None, 'write_rpc_s': None}
            if own is not None and own['samples']:
                entry.update(read_mib_s=own['bandwidth']['read']['avg'], write_mib_s=own['bandwidth']['write']['avg'],
                             read_rpc_s=own['rates']['read']['avg'], write_rpc_s=own['rates']['write']['avg'])
            nodes.append(entry)

        def count_errors(role):
            if parsed_errors is None:
                return None
            return len([node for node in nodes if node['role'] == role and node['errors']])

        record = {
            'servers': list(pair['servers']), 'clients': list(pair['clients']), 'mode': test['mode'],
            'read_mib_s': reported['bandwidth']['read']['avg'], 'read_rpc_s': reported['rates']['read']['avg'],
            'write_mib_s': reported['bandwidth']['write']['avg'], 'write_rpc_s': reported['rates']['write']['avg'],
            'server_errors': count_errors('server'),
            'client_errors': count_errors('client'),
            'complete': True, 'error': None,
            'split': pair['split'], 'server_group': pair['server_group'], 'client_group': pair['client_group'],
            'stat_group': self.stat_group, 'concurrency': self.concurrency,
            'distribute': pair_distribute(pair, self.distribute), 'size': test['size'],
            'samples': reported['samples'], 'delay_s': self.stat_delay_s,
            'read_min_mib_s': reported['bandwidth']['read']['min'],
            'read_max_mib_s': reported['bandwidth']['read']['max'],
            'write_min_mib_s': reported['bandwidth']['write']['min'],
            'write_max_mib_s': reported['bandwidth']['write']['max'],
            'read_min_rpc_s': reported['rates']['read']['min'], 'read_max_rpc_s': reported['rates']['read']['max'],
            'write_min_rpc_s': reported['rates']['write']['min'],
            'write_max_rpc_s': reported['rates']['write']['max'],
            'failed_nodes': max(groups['servers']['failed_nodes'], groups['clients']['failed_nodes']),
            'groups': groups, 'nodes': nodes, 'host': self.host,
        }
        if parsed_errors is None:
            record['error'] = 'lst show_error failed (rc %s): %s' % (errors.rc, errors.stderr.strip())
        return record


def _error_text(errors):
    if 'failure' in errors:
        return errors['failure']
    return ', '.join('%d %s' % (errors[name], name) for name in _ERROR_COUNTERS if errors.get(name))


class _Stopped(Exception):
    """The deadline or a stop request interrupted the survey (not an error of the network)."""


# --------------------------------------------------------------------------
# engine: iokit


def iokit_argv(script, servers, clients, modes, sizes, concurrency, stat_count, stat_delay_s, stat_group, split,
               output_dir):
    """lst-survey's command line for one split entry (``-N 1``: each server alone; ``-M 1``: each client)."""
    argv = [script, '-t', ' '.join(servers), '-f', ' '.join(clients), '-m', ' '.join(modes),
            '-s', ' '.join(sizes), '-c', str(concurrency), '-n', str(stat_count), '-D', str(stat_delay_s),
            '-g', stat_group, '-O', output_dir]
    if split == 'each_server':
        argv += ['-N', '1']
    elif split == 'each_client':
        argv += ['-M', '1']
    return argv


# Lines of lst-survey's stdout that mean it gave up (it exits 0 on some of them).
IOKIT_FAILURES = ('Cannot find lst.sh', 'Must specify', 'must be > 0', 'cannot be larger', 'Invalid stat group',
                  'Empty mode list', 'Empty bulk size list', 'Invalid mode', 'Failed to create results directory',
                  'Error: Failed to get all samples', "Can't find env LST_SESSION", 'Invalid parameters list',
                  'session already exists')


def run_iokit(runner, script, workdir, split, **parameters):
    """Run the node's ``lst-survey`` once per split entry and parse its CSV; returns ``(records, errors, files)``.

    Success is read from the CSV, never from the exit status (lst-survey exits 0 when samples are missing).
    """
    records, errors, files = [], [], []
    for index, entry in enumerate(split):
        output_dir = os.path.join(workdir, 'lst_survey.%s' % entry)
        result = runner.run(iokit_argv(script, output_dir=output_dir, split=entry, **parameters))
        output_path = os.path.join(workdir, 'lst_survey.%s.out' % entry)
        with open(output_path, 'w') as handle:
            handle.write(result.stdout + result.stderr)
        files.append(output_path)
        csv_files = sorted(glob.glob(os.path.join(output_dir, 'results.*.csv')))
        text = ''
        for path in csv_files:
            with open(path) as handle:
                text += handle.read()
            files.append(path)
        for record in parse_lst_survey(text) if text else []:
            record['split'] = entry
            if not record['complete']:
                errors.append({'point': {'split': entry}, 'message': 'lst-survey: %s' % record['error']})
                continue
            records.append(record)
        output = result.stdout + result.stderr
        for marker in IOKIT_FAILURES:
            lines = [line.strip() for line in output.splitlines() if marker in line]
            if lines:
                errors.append({'point': {'split': entry}, 'message': 'lst-survey: %s' % lines[0]})
        if result.timed_out:
            errors.append({'point': {'split': entry}, 'message': 'lst-survey stopped: %s' % (
                runner.stop_reason or 'timeout')})
            break
        if not text and not any(error['point'] == {'split': entry} for error in errors):
            errors.append({'point': {'split': entry}, 'message': 'lst-survey wrote no CSV (rc %s): %s' % (
                result.rc, output.strip()[-2000:])})
    return records, errors, files


# --------------------------------------------------------------------------
# The report's samples


def record_samples(record, ctx):
    """One record's samples for the report (``sample_extraction``): the mode's read and write rates, and each
    node's own."""
    mode = record.get('mode')
    point = extraction.make_point({'mode': mode})
    # A record of a split (each server or client alone) is about that node, not the whole fleet: the same mode
    # of another pair is another subject, not a repeat.
    target = None
    if record.get('split') == 'each_server':
        target = extraction.single_name(record, 'servers')
    elif record.get('split') == 'each_client':
        target = extraction.single_name(record, 'clients')
    if record.get('complete') is False:
        ctx['problems'].append('%s%s: %s' % (mode, ' on %s' % target if target else '',
                                             record.get('error') or 'incomplete'))
        return
    for test in ('read', 'write'):
        value = record.get('%s_mib_s' % test)
        if extraction.is_finite_number(value):
            yield test, extraction.UNIT_MIB_S, target, point, float(value), 'ok', record.get('iteration')
    # Each node's own bandwidth (lst stat per NID): a server is a peer of the servers of the same mode, a client
    # of the clients; a node tested alone (each_server, each_client) of the others tested alone.
    for node in record.get('nodes') or ():
        if not isinstance(node, dict) or not isinstance(node.get('nid'), str):
            continue
        role = node.get('role')
        alone = record.get('split') == 'each_%s' % role
        node_point = extraction.make_point({'mode': mode, 'role': '%s alone' % role if alone else role})
        for test in ('read', 'write'):
            value = node.get('%s_mib_s' % test)
            if extraction.is_finite_number(value):
                yield test, extraction.UNIT_MIB_S, node['nid'], node_point, float(value), 'ok', record.get('iteration')
    for role, key in (('server', 'server_errors'), ('client', 'client_errors')):
        if extraction.is_finite_number(record.get(key)) and record[key] > 0:
            ctx['problems'].append('%s%s: %d %s node(s) with LNet errors' % (
                mode, ' on %s' % target if target else '', record[key], role))
