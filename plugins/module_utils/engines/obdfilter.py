# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The obdfilter survey engine: OST object-layer bandwidth through ``echo_client``.

The sweep follows lustre-iokit's ``obdfilter-survey`` (docs/iokit-notes.md, 4):
``rsz``, ``nobj`` and ``thr`` double from their low to their high value,
outermost first, and a point whose ``thr`` is not a multiple of ``nobj`` is
skipped.  For every other point, on every OST at once:

* ``lctl --device <ecc> create <nobj>`` — the ids printed must be ``nobj``
  consecutive ids, else the survey stops (the script's exit 3);
* for each test: ``lctl set_param -n osd*.*.force_sync 1`` (errors ignored),
  then one ``lctl --threads <thr> -1 <ecc> test_brw <count> <mode> q <pages>
  <thr/nobj>t<first_obj> p<pages>`` per OST, all concurrently;
* ``lctl --device <ecc> destroy <first_obj> <nobj>``.

``pages = ceil(rsz / page KiB)``, ``actual_rsz = pages * page KiB``,
``count = size * 1024 / (actual_rsz * thr)`` I/Os per thread.  The aggregate
is the KiB written over all OSTs divided by the wall-clock time of the
concurrent lctl runs; min/max are the slowest and fastest one-second sample
(``n/T Total: R/second`` × ``actual_rsz``) of any single OST.  An OST whose
output has a line containing ``error``, or an unexpected line once samples
began, makes the test ``ERROR``; no sample at all makes it ``SHORT``.

Unlike the script, the per-OST figures are kept in every record
(``per_ost``), so one slow OST is visible behind a good aggregate, and a
non-zero exit of lctl also counts as an error.  Echo clients are addressed by
name rather than by device number, which lctl accepts for these ioctl
commands and which cannot point at another device if indices are reused.

Every echo client, object range and module load is written to the node
state before it is made and crossed off once undone, so that the cleanup
module can undo a run that was SIGKILLed.

``engine: iokit`` runs the installed ``obdfilter-survey`` with the same
parameters and parses its summary with ``parse_obdfilter_survey``.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import socket
import time

try:
    from shlex import quote as shell_quote
except ImportError:  # Python 2 targets
    from pipes import quote as shell_quote

from ansible_collections.lustre.iokit.plugins.module_utils import adaptive
from ansible_collections.lustre.iokit.plugins.module_utils import lctl as lctl_utils
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.obdfilter_survey import parse_obdfilter_survey
from ansible_collections.lustre.iokit.plugins.module_utils.units import KIB

CASE_DISK = 'disk'
CASE_NETWORK = 'network'
CASE_NETDISK = 'netdisk'
CASES = (CASE_DISK, CASE_NETWORK, CASE_NETDISK)
DEFAULT_TESTS = ('write', 'rewrite', 'read')
# The script's rszmax: the disk case refuses larger records.
RSZMAX_KIB = 4096
# lctl's MAX_THREADS for --threads.
MAX_THREADS = 4096
DEFAULT_PAGE_KIB = 4
ECHO_MODULE = 'obdecho'
STATUS_OK = 'ok'
STATUS_SHORT = 'short'
STATUS_ERROR = 'error'
STATUS_INCOMPLETE = 'incomplete'
SKIP_THR_NOT_MULTIPLE = 'thr is not a multiple of nobj'

# docs/iokit-notes.md, 4.7 and 9: netdisk is gone from 2.15.6 on; the kernel's "g"
# (kbrw) path that case=network relies on is gone from 2.15.7 and 2.16.0 on.
LAST_NETDISK_VERSION = (2, 15, 5)
LAST_NETWORK_VERSION = (2, 15, 6)

_SAMPLE_RE = re.compile(r'^\s*\d+/\d+\s+Total:\s+(?P<rate>[0-9.]+)/second\s*$')
_TOTAL_RE = re.compile(r'^\s*Total:\s+total\s+\d+\s+threads\s+\d+\s+sec\s+[0-9.]+\s+(?P<rate>[0-9.]+)/second')
_SELECTED_RE = re.compile(r'^Selected device \d+$')
_OBJECT_ID_RE = re.compile(r' is object id (?P<id>0x[0-9a-fA-F]+|\d+)\s*$')
_VERSION_RE = re.compile(r'(\d+)\.(\d+)(?:\.(\d+))?')
_IPV4_RE = re.compile(r'^\d{1,3}(?:\.\d{1,3}){3}$')

# case=network: the I/O kit's device names (docs/iokit-notes.md, 4.3), kept so that its leftover patterns
# (echotmp*, *_ecc) and playbooks/cleanup.yml recognise what a killed run left.
NETWORK_SERVER_DEVICE = 'echo_srv'
NETWORK_SERVER_UUID = 'echo_srv_UUID'
NETWORK_OSS_DEVICE = 'OSS'
NETWORK_OSC = 'echotmp'
NETWORK_ECHO_CLIENT = 'echotmp_ecc'
NETWORK_PEER_UUID = 'echo_UUID'
DEFAULT_NETTYPE = 'tcp'
# test_brw's batching: "p" (prep/commit) on a local obdfilter, "g" (the kbrw path) through an osc.
BATCH_DISK = 'p'
BATCH_NETWORK = 'g'


class EngineError(Exception):
    """A problem found before anything is created on the node (names the option)."""


# --------------------------------------------------------------------------
# Versions and cases


def version_tuple(text):
    """``2.15.5`` (or ``lustre: 2.15.5_12_g...``) as ``(2, 15, 5)``; None when there is no version."""
    match = _VERSION_RE.search(text or '')
    if not match:
        return None
    return tuple(int(part or 0) for part in match.groups())


def case_problem(case, version_text):
    """Why ``case`` cannot run on this Lustre version (a sentence naming ``case``), or None."""
    version = version_tuple(version_text)
    shown = version_text or 'unknown'
    if case == CASE_NETDISK:
        if version is not None and version <= LAST_NETDISK_VERSION:
            return None
        return ('case: netdisk was removed from obdfilter-survey in Lustre 2.15.6 (LU-10994) and this node runs '
                'Lustre %s; survey the OSTs with case: disk on each OSS instead' % shown)
    if case == CASE_NETWORK:
        if version is None:
            return ('case: network needs Lustre 2.15.6 or older (the echo "g" batch path went in 2.15.7/2.16.0, '
                    'LU-10994) and the Lustre version of this node could not be read')
        if version > LAST_NETWORK_VERSION:
            return ('case: network cannot run on Lustre %s: the echo_client "g" batch path it needs was removed '
                    'in 2.15.7 and 2.16.0 (LU-10994), so every test would fail with EINVAL; measure the network '
                    'with the LNet self-test survey (lustre.iokit.lst_survey) instead' % shown)
    return None


# --------------------------------------------------------------------------
# The plan


def doubling(low, high):
    """low, 2*low, 4*low ... up to high, as the I/O kit's loops."""
    value = low
    while value <= high:
        yield value
        value *= 2


def sweep(rszlo, rszhi, nobjlo, nobjhi, thrlo, thrhi):
    """Every point in the I/O kit's order: ``{'rsz_kib', 'nobj', 'thr', 'skip'}`` (skip: reason or None)."""
    points = []
    for rsz in doubling(rszlo, rszhi):
        for nobj in doubling(nobjlo, nobjhi):
            for thr in doubling(thrlo, thrhi):
                skip = SKIP_THR_NOT_MULTIPLE if thr % nobj else None
                points.append({'rsz_kib': rsz, 'nobj': nobj, 'thr': thr, 'skip': skip})
    return points


def point_arithmetic(size_mib, rsz_kib, thr, page_kib=DEFAULT_PAGE_KIB):
    """The script's arithmetic for one point on one OST.

    ``pages`` per I/O, ``actual_rsz_kib`` (whole pages), ``count`` I/Os per
    thread and ``size_kib`` actually moved per OST per test.
    """
    pages = (rsz_kib + page_kib - 1) // page_kib
    actual_rsz = pages * page_kib
    count = size_mib * KIB // (actual_rsz * thr)
    return {'pages': pages, 'actual_rsz_kib': actual_rsz, 'count': count, 'size_kib': actual_rsz * count * thr}


def is_write_test(test):
    """The script treats every test whose name contains ``write`` as a write."""
    return 'write' in test


def test_mode(test, verify=False):
    """test_brw's mode: ``w``/``r``, plus ``x`` (no data check) unless ``verify``."""
    return ('w' if is_write_test(test) else 'r') + ('' if verify else 'x')


def test_brw_argv(device, thr, nobj, count, mode, pages, first_obj, batch='p'):
    """``lctl --threads`` running test_brw with one-second samples, as the script does."""
    return ['lctl', '--threads', str(thr), '-1', device, 'test_brw', str(count), mode, 'q', str(pages),
            '%dt%s' % (thr // nobj, first_obj), '%s%d' % (batch, pages)]


FORCE_SYNC_ARGV = ['lctl', 'set_param', '-n', 'osd*.*.force_sync', '1']


echo_client_name = lctl_utils.echo_client_name


# --------------------------------------------------------------------------
# Output of lctl


def parse_created_objects(text, nobj):
    """``(ids, problem)`` from ``lctl create`` output: the object ids (ints) in the order printed.

    They must be ``nobj`` consecutive ids; ``problem`` says otherwise (None when they are).
    """
    ids = []
    for line in (text or '').splitlines():
        match = _OBJECT_ID_RE.search(line)
        if match:
            ids.append(int(match.group('id'), 0))
    if not ids:
        return ids, 'no object was created'
    if len(ids) != nobj:
        return ids, '%d objects asked, %d created' % (nobj, len(ids))
    if ids != list(range(ids[0], ids[0] + nobj)):
        return ids, 'created object ids are not contiguous: %s' % ' '.join(hex(value) for value in ids)
    return ids, None


def id_ranges(ids):
    """Consecutive runs of ``ids`` as ``[(first, count), ...]``, so that only our objects are destroyed."""
    ranges = []
    for value in ids:
        if ranges and ranges[-1][0] + ranges[-1][1] == value:
            ranges[-1] = (ranges[-1][0], ranges[-1][1] + 1)
        else:
            ranges.append((value, 1))
    return ranges


def parse_thread_samples(text):
    """One OST's ``lctl --threads`` output, judged as the script's awk judges it.

    Returns ``{'rates', 'count', 'error_line', 'total_rate'}``: ``rates`` are
    the per-second ``n/T Total: R/second`` samples (operations per second),
    ``count`` is their number or -1 when a line contains ``error`` or an
    unexpected line follows the first sample; ``total_rate`` is lctl's own
    final ``Total: total ...`` rate (None if absent).
    """
    rates = []
    count = 0
    error_line = None
    total_rate = None
    for raw in (text or '').splitlines():
        line = raw.strip()
        if not line:
            continue
        if _SELECTED_RE.match(line):
            rates, count = [], 0
            continue
        if 'error' in line:
            error_line = error_line or line
            count = -1
            continue
        total = _TOTAL_RE.match(line)
        if total:
            total_rate = float(total.group('rate'))
            continue
        sample = _SAMPLE_RE.match(line)
        if sample:
            rates.append(float(sample.group('rate')))
            if count >= 0:
                count += 1
            continue
        if count != 0 and error_line is None:
            error_line = line
            count = -1
    return {'rates': rates, 'count': count, 'error_line': error_line, 'total_rate': total_rate}


def summary_prefix(nosts, size_kib, rsz_kib, obj, thr):
    """The script's result-line prefix (totals over the OSTs)."""
    return 'ost %2d sz %8dK rsz %4dK obj %4d thr %4d ' % (nosts, size_kib, rsz_kib, obj, thr)


def summary_test(test, result):
    """One test as the script prints it after the prefix."""
    text = '%s %7.2f ' % (test, result['mib_s'] or 0.0)
    if result['status'] == STATUS_OK:
        return text + '[%7.2f, %7.2f] ' % (result['min_mib_s'], result['max_mib_s'])
    if result['status'] in (STATUS_ERROR, STATUS_SHORT):
        return text + '%17s ' % result['status'].upper()
    return '%s ' % test


# --------------------------------------------------------------------------
# Targets


def select_targets(devices, requested, local_names=('localhost',)):
    """The OSTs to survey: ``requested`` names (``[host:]name``) or every UP obdfilter.

    ``devices`` are ``parse_lctl_dl`` records.  Raises EngineError naming
    ``targets`` for an unknown target, one that is not UP, or one on
    another host.
    """
    obdfilters = dict((device['name'], device) for device in devices if device['type'] == 'obdfilter')
    if not requested:
        names = [device['name'] for device in devices if device['type'] == 'obdfilter' and device['status'] == 'UP']
        if not names:
            raise EngineError("targets: no UP obdfilter device on this node (lctl dl); run the survey on an OSS "
                              "with mounted OSTs or name them in targets")
        return names
    problems = []
    names = []
    for item in requested:
        host, separator, name = item.rpartition(':')
        if separator and host not in local_names:
            problems.append('targets: %s names host %s; case=disk runs on the node that holds the OST, so run the '
                            'module on %s' % (item, host, host))
            continue
        device = obdfilters.get(name)
        if device is None:
            problems.append('targets: %s is not an obdfilter device on this node (lctl dl lists %s)'
                            % (name, ', '.join(sorted(obdfilters)) or 'none'))
        elif device['status'] != 'UP':
            problems.append('targets: %s is in state %s, not UP' % (name, device['status']))
        elif name in names:
            problems.append('targets: %s is listed twice' % name)
        else:
            names.append(name)
    if problems:
        raise EngineError('; '.join(problems))
    return names


# --------------------------------------------------------------------------
# The survey


def _outer_key(entry):
    return {'rsz_kib': entry['rsz_kib'], 'nobj': entry['nobj']}


def _point_key(entry, test=None):
    point = {'rsz_kib': entry['rsz_kib'], 'nobj': entry['nobj'], 'thr': entry['thr']}
    if test:
        point['test'] = test
    return point


class ObdfilterSurvey:
    """Plans and runs one case=disk obdfilter survey on this node.

    ``runner`` runs the measurements (its deadline and stop request end the
    survey); ``control_runner`` runs the short lctl commands that create and
    undo things, so that teardown still runs after the deadline.
    ``node_state`` (a NodeState) receives every echo client, object range
    and module load before it is made.  ``raw`` receives the summary and
    detail text (``summary(text)``/``detail(text)``).
    """

    def __init__(self, runner, targets, size_mib, rszlo=1024, rszhi=1024, nobjlo=1, nobjhi=16, thrlo=1, thrhi=16,
                 tests=DEFAULT_TESTS, verify=False, page_kib=DEFAULT_PAGE_KIB, control_runner=None,
                 node_state=None, run_id=None, raw=None, clock=time.monotonic, host=None, case=CASE_DISK,
                 wall_clock=time.time, name_tag=None):
        self.runner = runner
        self.case = case
        self.control_runner = control_runner or runner
        self.lctl = lctl_utils.Lctl(self.control_runner)
        self.targets = list(targets)
        self.size_mib = size_mib
        self.rszlo, self.rszhi = rszlo, rszhi
        self.nobjlo, self.nobjhi = nobjlo, nobjhi
        self.thrlo, self.thrhi = thrlo, thrhi
        self.tests = list(tests)
        self.verify = verify
        self.page_kib = page_kib
        self.node_state = node_state
        self.run_id = run_id
        self.raw = raw
        self.clock = clock
        # Epoch seconds on each test (start_time/end_time), to cut the node's statistics per test.
        self.wall_clock = wall_clock
        self.host = host
        # The run's tag in the echo client names (case=disk): one run's devices are never another's.
        self.name_tag = name_tag
        self.batch = BATCH_DISK
        # Full unless the caller sets an adaptive one: the thread sweep of each (rsz, nobj) may then stop once
        # the OSTs saturate.
        self.inner_sweeps = adaptive.InnerSweeps()
        self.errors = []
        self.aborted = None
        self.loaded_obdecho = False
        self.reused_echo_clients = []
        self.echo_clients = {}
        self._objects = {}

    # -- planning ----------------------------------------------------------------

    def problems(self):
        """Every reason the survey cannot run as asked, each naming the option (checked before anything is made)."""
        problems = []
        for name in ('size_mib', 'rszlo', 'rszhi', 'nobjlo', 'nobjhi', 'thrlo', 'thrhi'):
            if getattr(self, name) < 1:
                problems.append('%s: must be at least 1, got %d' % (name, getattr(self, name)))
        if problems:
            return problems
        for low, high in (('rszlo', 'rszhi'), ('nobjlo', 'nobjhi'), ('thrlo', 'thrhi')):
            low_value, high_value = getattr(self, low), getattr(self, high)
            if low_value > high_value:
                problems.append('%s: %d is greater than %s (%d)' % (low, low_value, high, high_value))
        if self.case == CASE_DISK and self.rszhi > RSZMAX_KIB:
            problems.append('rszhi: %d KiB is above the %d KiB the disk case supports' % (self.rszhi, RSZMAX_KIB))
        if self.thrhi > MAX_THREADS:
            problems.append('thrhi: %d is above lctl\'s limit of %d threads' % (self.thrhi, MAX_THREADS))
        for target in self.targets:
            problem = lctl_utils.name_problem(echo_client_name(target, self.name_tag))
            if problem:
                problems.append('targets: %s: %s' % (target, problem))
        if not self.tests:
            problems.append('tests: give at least one test')
        elif self.tests[0] != 'write':
            problems.append("tests: the first test must be 'write' (the objects are empty until written), got %r"
                            % self.tests[0])
        if len(set(self.tests)) != len(self.tests):
            problems.append('tests: each test may appear once, got %s' % ', '.join(self.tests))
        if problems:
            return problems
        for name in ('rszlo', 'rszhi'):
            value = getattr(self, name)
            if value % self.page_kib:
                problems.append('%s: %d KiB is not a whole number of %d KiB pages' % (name, value, self.page_kib))
        for rsz in doubling(self.rszlo, self.rszhi):
            actual = point_arithmetic(self.size_mib, rsz, 1, self.page_kib)['actual_rsz_kib']
            if (self.size_mib * KIB) % actual:
                problems.append('size_mib: %d MiB is not a multiple of the %d KiB record' % (self.size_mib, actual))
        runnable = [point for point in sweep(self.rszlo, self.rszhi, self.nobjlo, self.nobjhi, self.thrlo,
                                             self.thrhi) if point['skip'] is None]
        if not runnable:
            problems.append('thrhi: no thread count from thrlo (%d) to thrhi (%d) is a multiple of the object '
                            'counts nobjlo (%d) to nobjhi (%d), so nothing would run'
                            % (self.thrlo, self.thrhi, self.nobjlo, self.nobjhi))
        for point in runnable:
            arithmetic = point_arithmetic(self.size_mib, point['rsz_kib'], point['thr'], self.page_kib)
            if arithmetic['count'] == 0:
                problems.append('size_mib: %d MiB per OST is less than one %d KiB record for each of %d threads; '
                                'raise size_mib or lower thrhi' % (self.size_mib, arithmetic['actual_rsz_kib'],
                                                                   point['thr']))
                break
        return problems

    def free_space_problems(self):
        """Each OST with less free space than the sweep's largest point writes to it, naming ``size_mib``.

        The I/O kit checks nothing and fills the OST until the writes fail; ost-survey's engine checks its
        ``lfs df`` the same way.  The free space is the OST's ``obdfilter.<ost>.kbytesavail``; one that cannot
        be read is not checked (``free_kib`` holds None for it).  Returns ``(problems, free_kib)``.
        """
        runnable = [entry['size_kib_per_ost'] for entry in self.plan() if entry['skip'] is None]
        needed_kib = max(runnable or [0])
        problems = []
        free_kib = {}
        for target in self.targets:
            param = 'obdfilter.%s.kbytesavail' % target
            result = self.lctl.run(['get_param', '-n', param], check=False)
            words = result.stdout.split() if result.rc == 0 else []
            free_kib[target] = int(words[0]) if words and words[0].isdigit() else None
            if free_kib[target] is not None and free_kib[target] < needed_kib:
                problems.append('size_mib: %d MiB per OST does not fit %s, which has %d MiB free (lctl get_param '
                                '%s); lower size_mib (obdfilter_size_mib) below that, or free space on the OST'
                                % (self.size_mib, target, free_kib[target] // KIB, param))
        return problems, free_kib

    def plan(self):
        """Every sweep point with its arithmetic and whether it runs (``skip`` None) or why not."""
        nosts = len(self.targets)
        planned = []
        for point in sweep(self.rszlo, self.rszhi, self.nobjlo, self.nobjhi, self.thrlo, self.thrhi):
            entry = dict(point)
            arithmetic = point_arithmetic(self.size_mib, point['rsz_kib'], point['thr'], self.page_kib)
            entry.update(pages=arithmetic['pages'], actual_rsz_kib=arithmetic['actual_rsz_kib'],
                         count=arithmetic['count'], size_kib_per_ost=arithmetic['size_kib'],
                         size_kib=arithmetic['size_kib'] * nosts, obj=point['nobj'] * nosts,
                         threads=point['thr'] * nosts)
            planned.append(entry)
        return planned

    def totals_per_ost(self):
        """What the whole sweep does to each OST: bytes written and read, objects created, points run."""
        runnable = [entry for entry in self.plan() if entry['skip'] is None]
        writes = sum(1 for test in self.tests if is_write_test(test))
        reads = len(self.tests) - writes
        written = sum(entry['size_kib_per_ost'] for entry in runnable) * KIB * writes
        read = sum(entry['size_kib_per_ost'] for entry in runnable) * KIB * reads
        per_ost = {'bytes_written': written, 'bytes_read': read,
                   'objects_created': sum(entry['nobj'] for entry in runnable),
                   'max_objects_at_once': max([entry['nobj'] for entry in runnable] or [0]),
                   'max_bytes_at_once': max([entry['size_kib_per_ost'] for entry in runnable] or [0]) * KIB}
        return dict((target, dict(per_ost)) for target in self.targets)

    # -- bookkeeping -----------------------------------------------------------------

    def _raw(self, kind, text):
        if self.raw is not None:
            getattr(self.raw, kind)(text)

    def _remember_echo_client(self, target):
        """(Re)write the node-state entry of ``target``'s echo client with its live object ranges.

        A range whose ids are not known yet (``create`` running) has ``first`` null.
        """
        objects = [{'first': first, 'count': count} for first, count in self._objects.get(target, [])]
        name = self.echo_clients.get(target) or echo_client_name(target, self.name_tag)
        self.node_state.record('echo_clients', self.run_id, name=name, target=target, objects=objects)

    # -- setup and teardown ---------------------------------------------------------

    def setup(self):
        """Load obdecho (if absent) and get one echo_client per OST; False (and ``errors``) when it fails.

        A leftover UP ``<ost>_ecc`` is reused (as the I/O kit does) and torn
        down at the end like ours; a half-made one is replaced.
        """
        try:
            self.loaded_obdecho = lctl_utils.load_module(self.control_runner, self.node_state, ECHO_MODULE,
                                                         self.run_id)
        except lctl_utils.LctlError as exc:
            self.errors.append({'point': None, 'message': 'cannot load %s: %s' % (ECHO_MODULE, exc)})
            return False
        for target in self.targets:
            name = echo_client_name(target, self.name_tag)
            # written down first: if we are killed half-way, the cleanup still finds it
            self._remember_echo_client(target)
            self.echo_clients[target] = name
            try:
                device = self.lctl.attach_echo_client(name, target)
            except lctl_utils.LctlError as exc:
                self.errors.append({'point': None, 'message': "can't set up echo-client %s on %s: %s"
                                    % (name, target, exc)})
                return False
            if device.get('reused'):
                self.reused_echo_clients.append(name)
        return True

    def destroy_objects(self):
        """Destroy every object range still alive; returns the error messages."""
        problems = []
        for target in list(self._objects):
            name = self.echo_clients[target]
            remaining = []
            for first, count in self._objects[target]:
                if first is None:
                    continue
                result = self.lctl.run(['--device', name, 'destroy', hex(first), str(count)], check=False)
                self._raw('detail', '=============> Destroy %d on localhost:%s\n%s%s'
                          % (count, name, result.stdout, result.stderr))
                if result.rc != 0 or result.timed_out or 'error' in result.stdout + result.stderr:
                    remaining.append((first, count))
                    problems.append('destroy %d objects from %s on %s failed (rc %s): %s' % (
                        count, hex(first), target, result.rc, (result.stderr or result.stdout).strip()))
            if remaining:
                self._objects[target] = remaining
            else:
                del self._objects[target]
            self._remember_echo_client(target)
        return problems

    def teardown(self):
        """Destroy live objects, tear down the echo clients, unload obdecho if we loaded it; returns errors."""
        problems = self.destroy_objects()
        for target, name in list(self.echo_clients.items()):
            if target in self._objects:
                # its objects are still there: keep the device and its entry so that the cleanup retries
                continue
            try:
                self.lctl.teardown(name)
            except lctl_utils.LctlError as exc:
                problems.append('tear down echo_client %s: %s' % (name, exc))
                continue
            del self.echo_clients[target]
            self.node_state.forget('echo_clients', name)
        if not self.echo_clients:
            try:
                lctl_utils.unload_module_if_ours(self.control_runner, self.node_state, ECHO_MODULE)
            except lctl_utils.LctlError as exc:
                problems.append('unload %s: %s' % (ECHO_MODULE, exc))
        for problem in problems:
            self.errors.append({'point': None, 'message': problem})
        return problems

    # -- one point -------------------------------------------------------------------

    def _create_objects(self, entry):
        """Create ``nobj`` objects on every OST; None or the reason the survey must stop."""
        for target in self.targets:
            name = self.echo_clients[target]
            # the count is written down before the ids are known, so a kill here still shows objects to find
            self._objects[target] = [(None, entry['nobj'])]
            self._remember_echo_client(target)
            result = self.lctl.run(['--device', name, 'create', str(entry['nobj'])], check=False)
            self._raw('detail', '=============> Create %d on localhost:%s\n%s%s'
                      % (entry['nobj'], name, result.stdout, result.stderr))
            ids, problem = parse_created_objects(result.stdout, entry['nobj'])
            if ids:
                self._objects[target] = id_ranges(ids)
            else:
                del self._objects[target]
            self._remember_echo_client(target)
            if problem is None and (result.rc != 0 or result.timed_out):
                problem = 'lctl create exited with rc %s' % result.rc
            if problem:
                detail = (result.stderr or '').strip()
                return 'created object #s on localhost:%s not contiguous: %s%s' % (
                    name, problem, ' (%s)' % detail if detail else '')
        return None

    def _measure(self, test, entry):
        """Run ``test`` on every OST at once; ``(aggregate, per_ost, interrupted)``."""
        self.runner.run(FORCE_SYNC_ARGV)
        mode = test_mode(test, self.verify)
        argvs = [test_brw_argv(self.echo_clients[target], entry['thr'], entry['nobj'], entry['count'], mode,
                               entry['pages'], hex(self._objects[target][0][0]), batch=self.batch)
                 for target in self.targets]
        start_time = round(self.wall_clock(), 3)
        started = self.clock()
        results = self.runner.run_many(argvs)
        elapsed = self.clock() - started
        end_time = round(self.wall_clock(), 3)
        interrupted = any(result.timed_out for result in results)
        rsz_mib = entry['actual_rsz_kib'] / KIB
        per_ost = {}
        counts = []
        all_rates = []
        for target, result in zip(self.targets, results):
            output = result.stdout + result.stderr
            self._raw('detail', '=============> %s localhost:%s\n%s' % (test, self.echo_clients[target], output))
            judged = parse_thread_samples(output)
            count = judged['count']
            if result.rc != 0 and count >= 0 and not result.timed_out:
                count = -1
                judged['error_line'] = judged['error_line'] or 'lctl exited with rc %s' % result.rc
            seconds = result.elapsed_s
            figures = {'mib_s': entry['size_kib_per_ost'] / KIB / seconds if seconds > 0 else None,
                       'lctl_mib_s': judged['total_rate'] * rsz_mib if judged['total_rate'] is not None else None,
                       'min_mib_s': None, 'max_mib_s': None, 'samples': len(judged['rates']),
                       'elapsed_s': round(seconds, 6), 'error': judged['error_line']}
            if result.timed_out:
                figures['status'] = STATUS_INCOMPLETE
            elif count < 0:
                figures['status'] = STATUS_ERROR
            elif count == 0:
                figures['status'] = STATUS_SHORT
            else:
                figures.update(status=STATUS_OK, min_mib_s=min(judged['rates']) * rsz_mib,
                               max_mib_s=max(judged['rates']) * rsz_mib)
                all_rates.extend(judged['rates'])
            counts.append(count)
            per_ost[target] = figures
        aggregate = {'mib_s': entry['size_kib'] / KIB / elapsed if elapsed > 0 else None,
                     'min_mib_s': None, 'max_mib_s': None, 'elapsed_s': round(elapsed, 6),
                     'start_time': start_time, 'end_time': end_time}
        if interrupted:
            aggregate['status'] = STATUS_INCOMPLETE
            aggregate['mib_s'] = None
        elif min(counts) < 0:
            aggregate['status'] = STATUS_ERROR
        elif min(counts) == 0:
            aggregate['status'] = STATUS_SHORT
        else:
            aggregate.update(status=STATUS_OK, min_mib_s=min(all_rates) * rsz_mib, max_mib_s=max(all_rates) * rsz_mib)
        return aggregate, per_ost, interrupted

    def _record(self, entry):
        return {'ost': len(self.targets), 'size_kib': entry['size_kib'], 'rsz_kib': entry['actual_rsz_kib'],
                'obj': entry['obj'], 'thr': entry['threads'], 'case': self.case, 'host': self.host,
                'skipped': False, 'error': None, 'obj_per_ost': entry['nobj'], 'thr_per_ost': entry['thr'],
                'count': entry['count'], 'pages': entry['pages'], 'targets': list(self.targets),
                'tests': {}, 'per_ost': dict((target, {}) for target in self.targets)}

    # -- the sweep -------------------------------------------------------------------

    def run(self):
        """Set up, run the sweep yielding one record per measured point, and always tear down.

        Stops early on a deadline or stop request (``aborted`` says why),
        when objects cannot be created, or when setup fails.
        """
        try:
            if not self.setup():
                self.aborted = 'setup failed'
                return
            self._raw('summary', '%s Obdfilter-survey for case=%s from %s\n' % (
                time.strftime('%a %b %d %H:%M:%S %Z %Y'), self.case, self.host or os.uname()[1]))
            for entry in self.plan():
                if entry['skip']:
                    continue
                if (entry['actual_rsz_kib'], entry['nobj'], entry['thr']) in getattr(self, 'done_points', ()):
                    continue  # an earlier attempt of the run measured it (the module resumes)
                stopped = self.inner_sweeps.stopped(_outer_key(entry))
                if stopped:
                    self.inner_sweeps.skip(_point_key(entry), stopped)
                    continue
                if self.runner.expired():
                    self.aborted = self.runner.stop_reason
                    self.errors.append({'point': _point_key(entry), 'message': 'not run: %s' % self.aborted})
                    return
                record = self._record(entry)
                prefix = summary_prefix(record['ost'], record['size_kib'], record['rsz_kib'], record['obj'],
                                        record['thr'])
                self._raw('summary', prefix)
                self._raw('detail', '=======================> %s\n' % prefix)
                problem = self._create_objects(entry)
                if problem:
                    self._raw('summary', problem + '\n')
                    record['error'] = problem
                    self.errors.append({'point': _point_key(entry), 'message': problem})
                    self.aborted = 'object creation failed'
                    yield record
                    return
                for test in self.tests:
                    aggregate, per_ost, interrupted = self._measure(test, entry)
                    record['tests'][test] = aggregate
                    for target in self.targets:
                        record['per_ost'][target][test] = per_ost[target]
                    self._raw('summary', summary_test(test, aggregate))
                    if interrupted:
                        self.aborted = self.runner.stop_reason or 'stopped'
                        self.errors.append({'point': _point_key(entry, test),
                                            'message': '%s interrupted: %s' % (test, self.aborted)})
                        self._raw('summary', '\n')
                        if any(result['status'] != STATUS_INCOMPLETE for result in record['tests'].values()):
                            yield record
                        return
                    if aggregate['status'] == STATUS_ERROR:
                        failing = ['%s: %s' % (target, per_ost[target]['error']) for target in self.targets
                                   if per_ost[target]['status'] == STATUS_ERROR]
                        self.errors.append({'point': _point_key(entry, test),
                                            'message': '%s ERROR on %s' % (test, '; '.join(failing))})
                self._raw('summary', '\n')
                problems = self.destroy_objects()
                if problems:
                    for problem in problems:
                        self.errors.append({'point': _point_key(entry), 'message': problem})
                    self.aborted = 'object destruction failed'
                    yield record
                    return
                # min/max are single-OST rates: the spread is judged per OST
                self.inner_sweeps.measured(_outer_key(entry), entry['thr'],
                                           adaptive.figures(record['tests'], record['ost']))
                yield record
        finally:
            self.teardown()


# --------------------------------------------------------------------------
# case=network


def network_peer(server, nettype=DEFAULT_NETTYPE, resolve=socket.gethostbyname):
    """``(host, nid)`` for the one server of case=network.

    ``server`` is an IPv4 address, a host name (resolved, since a NID needs
    an address) or a NID such as ``192.168.1.5@o2ib``.  ``host`` is what the
    remote shell connects to.  Raises EngineError naming ``targets``.
    """
    if '@' in server:
        host = server.split('@', 1)[0]
        if not host:
            raise EngineError('targets: %r is not a NID (address@network)' % server)
        return host, server
    if _IPV4_RE.match(server):
        return server, '%s@%s' % (server, nettype)
    try:
        address = resolve(server)
    except (socket.error, UnicodeError) as exc:
        raise EngineError('targets: the server %s does not resolve to an IPv4 address (%s); give its address '
                          'or its NID' % (server, exc))
    return server, '%s@%s' % (address, nettype)


def mounted_client_oscs(devices):
    """The UP osc devices of a mounted client (not the MDT's): the I/O kit refuses case=network beside them."""
    return [device['name'] for device in devices
            if device['type'] == 'osc' and device['status'] == 'UP' and 'mdt' not in device['name'].lower()]


class RemoteRunner:
    """Runs commands on the echo server through a remote shell, as the I/O kit's ``ssh <server> ...``.

    ``shell`` is the argument list before the host (``['ssh', '-o', 'BatchMode=yes']``); the remote
    command is the only place an argument list becomes a string, every word quoted for the remote shell.
    An empty ``shell`` runs the commands here (the server is this node).
    """

    def __init__(self, runner, shell, host):
        self.runner = runner
        self.shell = list(shell or [])
        self.host = host

    def argv(self, argv):
        if not self.shell:
            return list(argv)
        command = ' '.join(shell_quote(word) for word in ['env', 'LANG=C', 'LC_ALL=C'] + list(argv))
        return self.shell + [self.host, command]

    def run(self, argv, env=None, cwd=None):
        return self.runner.run(self.argv(argv))


class NetworkSurvey(ObdfilterSurvey):
    """case=network: echo_client over an osc to an ``obdecho`` server on another node (LNet and RPC only).

    As the I/O kit does it (docs/iokit-notes.md, 4.3): on the server, obdecho is
    loaded if absent and an ``obdecho`` device ``echo_srv`` set up (plus an
    ``ost`` service device ``OSS`` when the node has none); here, the
    server's NID gets the UUID ``echo_UUID``, an ``osc`` ``echotmp`` connects
    to ``echo_srv_UUID`` through it, and the echo client ``echotmp_ecc`` on
    top runs the same sweep with ``g`` batches.  Only what this run made is
    undone: the server devices only when we attached them, the OSS service
    only when we created it (the script tears down an existing one too).

    ``server_runner`` runs the server's commands (a RemoteRunner).  Needs a
    node whose echo_client still has the kbrw path (Lustre 2.15.6 and older,
    see ``case_problem``).
    """

    def __init__(self, runner, server, nid, size_mib, server_runner=None, **options):
        options['case'] = CASE_NETWORK
        ObdfilterSurvey.__init__(self, runner, [server], size_mib, **options)
        self.server = server
        self.nid = nid
        self.batch = BATCH_NETWORK
        self.server_runner = server_runner or self.control_runner
        self.server_lctl = lctl_utils.Lctl(self.server_runner)
        self.server_made = []
        self.server_loaded_obdecho = False
        self.server_reused = []
        self.client_made = []
        self.server_version = None

    def setup_commands(self):
        """What setup runs, for the check-mode plan: ``{'server': [argv...], 'client': [argv...]}``."""
        return {
            'server': [self.server_runner.argv(['modprobe', ECHO_MODULE]) + ['(if not loaded)'],
                       self.server_runner.argv(['lctl', 'attach', 'obdecho', NETWORK_SERVER_DEVICE,
                                                NETWORK_SERVER_UUID]),
                       self.server_runner.argv(['lctl', '--device', NETWORK_SERVER_DEVICE, 'setup']),
                       self.server_runner.argv(['lctl', 'attach', 'ost', NETWORK_OSS_DEVICE,
                                                NETWORK_OSS_DEVICE + '_UUID']) + ['(if no ost device)'],
                       self.server_runner.argv(['lctl', '--device', NETWORK_OSS_DEVICE, 'setup'])
                       + ['(if no ost device)']],
            'client': [['modprobe', ECHO_MODULE, '(if not loaded)'],
                       ['lctl', 'add_uuid', NETWORK_PEER_UUID, self.nid],
                       ['lctl', 'attach', 'osc', NETWORK_OSC, NETWORK_OSC + '_UUID'],
                       ['lctl', '--device', NETWORK_OSC, 'setup', NETWORK_SERVER_UUID, NETWORK_PEER_UUID],
                       ['lctl', 'attach', 'echo_client', NETWORK_ECHO_CLIENT, NETWORK_ECHO_CLIENT + '_UUID'],
                       ['lctl', '--device', NETWORK_ECHO_CLIENT, 'setup', NETWORK_OSC]],
        }

    def totals_per_ost(self):
        """Bytes sent to and read from the echo server (which stores nothing), keyed by the server."""
        totals = ObdfilterSurvey.totals_per_ost(self)
        for figures in totals.values():
            figures['stored_on_server'] = False
        return totals

    def _fail(self, message):
        self.errors.append({'point': None, 'message': message})
        return False

    def _setup_server(self):
        try:
            modules = lctl_utils.loaded_modules(self.server_runner)
        except lctl_utils.LctlError as exc:
            return self._fail('cannot reach the echo server %s: %s' % (self.server, exc))
        if ECHO_MODULE not in modules:
            result = self.server_runner.run(['modprobe', ECHO_MODULE])
            if result.rc != 0 or result.timed_out:
                return self._fail('cannot load %s on the server %s: %s'
                                  % (ECHO_MODULE, self.server, (result.stderr or result.stdout).strip()))
            self.server_loaded_obdecho = True
        try:
            self.server_version = self.server_lctl.version()
            devices = self.server_lctl.devices()
            existing = self.server_lctl.find(NETWORK_SERVER_DEVICE, devices)
            if existing is not None and existing['type'] != 'obdecho':
                return self._fail('the server %s has a %s device named %s; refusing to touch it'
                                  % (self.server, existing['type'], NETWORK_SERVER_DEVICE))
            if existing is not None and existing['status'] == 'UP':
                # another client's network survey may be using it: use it too, leave it to its owner
                self.server_reused.append(NETWORK_SERVER_DEVICE)
            else:
                if existing is not None:
                    self.server_lctl.teardown(NETWORK_SERVER_DEVICE, devices)
                self.server_made.append(NETWORK_SERVER_DEVICE)
                self.server_lctl.run(['attach', 'obdecho', NETWORK_SERVER_DEVICE, NETWORK_SERVER_UUID])
                self.server_lctl.run(['--device', NETWORK_SERVER_DEVICE, 'setup'])
            if not any(device['type'] == 'ost' and device['status'] == 'UP' for device in devices):
                self.server_made.append(NETWORK_OSS_DEVICE)
                self.server_lctl.run(['attach', 'ost', NETWORK_OSS_DEVICE, NETWORK_OSS_DEVICE + '_UUID'])
                self.server_lctl.run(['--device', NETWORK_OSS_DEVICE, 'setup'])
            devices = self.server_lctl.devices()
        except lctl_utils.LctlError as exc:
            return self._fail('cannot set up the echo server on %s: %s' % (self.server, exc))
        types = set(device['type'] for device in devices if device['status'] == 'UP')
        for needed, what in (('obdecho', 'obdecho'), ('ost', 'ost')):
            if needed not in types:
                return self._fail('%s not set up on the server %s (lctl dl there shows no UP %s device)'
                                  % (what, self.server, needed))
        return True

    def setup(self):
        """Set up the echo server, then the osc and echo client here; False (and ``errors``) when it fails."""
        try:
            leftover = self.lctl.find(NETWORK_OSC)
        except lctl_utils.LctlError as exc:
            return self._fail('cannot list the Lustre devices: %s' % exc)
        if leftover is not None:
            return self._fail('a %s device %s already exists on this node: another network survey is running, or '
                              'an earlier one was killed (playbooks/cleanup.yml removes its leftovers)'
                              % (leftover['type'], NETWORK_OSC))
        if not self._setup_server():
            return False
        try:
            self.loaded_obdecho = lctl_utils.load_module(self.control_runner, self.node_state, ECHO_MODULE,
                                                         self.run_id)
        except lctl_utils.LctlError as exc:
            return self._fail('cannot load %s: %s' % (ECHO_MODULE, exc))
        try:
            self.client_made.append('uuid')
            self.lctl.run(['add_uuid', NETWORK_PEER_UUID, self.nid])
            self.client_made.append(NETWORK_OSC)
            self.lctl.run(['attach', 'osc', NETWORK_OSC, NETWORK_OSC + '_UUID'])
            self.lctl.run(['--device', NETWORK_OSC, 'setup', NETWORK_SERVER_UUID, NETWORK_PEER_UUID])
        except lctl_utils.LctlError as exc:
            return self._fail('cannot connect an osc to the echo server %s (%s): %s' % (self.server, self.nid, exc))
        target = self.server
        self.echo_clients[target] = NETWORK_ECHO_CLIENT
        # written down first: if we are killed half-way, the cleanup still finds it
        self._remember_echo_client(target)
        try:
            self.lctl.attach_echo_client(NETWORK_ECHO_CLIENT, NETWORK_OSC)
        except lctl_utils.LctlError as exc:
            return self._fail("can't set up echo-client %s on %s: %s" % (NETWORK_ECHO_CLIENT, NETWORK_OSC, exc))
        return True

    def teardown(self):
        """The echo client and objects (as case=disk), then the osc and UUID here, then the server's devices."""
        problems = ObdfilterSurvey.teardown(self)
        more = []
        if self.echo_clients:
            more.append('%s is still set up (see the errors above); %s and the server devices are left for the '
                        'cleanup' % (NETWORK_ECHO_CLIENT, NETWORK_OSC))
        else:
            if NETWORK_OSC in self.client_made:
                try:
                    self.lctl.teardown(NETWORK_OSC)
                    self.client_made.remove(NETWORK_OSC)
                except lctl_utils.LctlError as exc:
                    more.append('tear down osc %s: %s' % (NETWORK_OSC, exc))
            if 'uuid' in self.client_made and NETWORK_OSC not in self.client_made:
                result = self.lctl.run(['del_uuid', NETWORK_PEER_UUID], check=False)
                if result.rc != 0:
                    more.append('del_uuid %s: %s' % (NETWORK_PEER_UUID, (result.stderr or result.stdout).strip()))
                self.client_made.remove('uuid')
            if not self.client_made:
                for name in reversed(list(self.server_made)):
                    try:
                        self.server_lctl.teardown(name)
                        self.server_made.remove(name)
                    except lctl_utils.LctlError as exc:
                        more.append('tear down %s on the server %s: %s' % (name, self.server, exc))
        if self.server_loaded_obdecho and not self.server_made:
            result = self.server_runner.run(['rmmod', ECHO_MODULE])
            if result.rc == 0:
                self.server_loaded_obdecho = False
            else:
                more.append('unload %s on the server %s: %s' % (ECHO_MODULE, self.server,
                                                                (result.stderr or result.stdout).strip()))
        for problem in more:
            self.errors.append({'point': None, 'message': problem})
        return problems + more


# --------------------------------------------------------------------------
# case=netdisk (Lustre 2.15.5 and older)


def netdisk_osc_name(ost):
    return '%s_osc' % ost


def netdisk_targets(devices, requested, nettype=DEFAULT_NETTYPE, resolve=socket.gethostbyname):
    """``[(ost, nid)]`` for case=netdisk, as the I/O kit finds them.

    Without ``requested``: every UP osc of the mounted client (``lctl dl -t``; the OST is the name before
    ``-osc-``, the NID the connection's).  Otherwise ``[host:]ost`` items: ``host`` gives the NID, a bare
    OST name takes it from the client's osc.  Raises EngineError naming ``targets``.
    """
    oscs = {}
    for device in devices:
        if device['type'] == 'osc' and device['status'] == 'UP' and '-osc-' in device['name'] \
                and 'mdt' not in device['name'].lower():
            oscs.setdefault(device['name'].split('-osc-')[0], device.get('nid'))
    if not requested:
        if not oscs:
            raise EngineError('targets: case=netdisk found no UP osc device here (lctl dl -t); run it on a client '
                              'with the file system mounted, or name the OSTs as host:ost')
        missing = sorted(ost for ost, nid in oscs.items() if not nid)
        if missing:
            raise EngineError('targets: lctl dl -t shows no NID for the osc of %s; name them as host:ost'
                              % ', '.join(missing))
        return sorted(oscs.items())
    chosen = []
    problems = []
    for item in requested:
        host, separator, ost = item.rpartition(':')
        if not ost or ost in [name for name, unused in chosen]:
            problems.append('targets: %r is empty or listed twice' % item)
        elif separator:
            try:
                chosen.append((ost, network_peer(host, nettype, resolve)[1]))
            except EngineError as exc:
                problems.append(str(exc))
        elif oscs.get(ost):
            chosen.append((ost, oscs[ost]))
        else:
            problems.append('targets: %s has no UP osc with a NID on this node (lctl dl -t lists %s); name it as '
                            'host:%s' % (ost, ', '.join(sorted(oscs)) or 'none', ost))
    if problems:
        raise EngineError('; '.join(problems))
    return chosen


class NetdiskSurvey(ObdfilterSurvey):
    """case=netdisk: echo clients over oscs of their own to the real OSTs, from a client (Lustre 2.15.5 and older).

    As the I/O kit did it (docs/iokit-notes.md, 4.7): one UUID per server NID (``add_uuid host_<i>_UUID <nid>``),
    per OST an ``osc`` ``<ost>_osc`` set up against ``<ost>_UUID`` through it and an echo client
    ``<ost>_osc_ecc`` on top; the sweep is case=disk's with ``g`` batches, all OSTs at once.  The objects
    are created on the real OSTs, in the echo sequence.  Everything made is undone at the end.
    """

    def __init__(self, runner, peers, size_mib, **options):
        options['case'] = CASE_NETDISK
        ObdfilterSurvey.__init__(self, runner, [ost for ost, unused in peers], size_mib, **options)
        self.peers = list(peers)
        self.batch = BATCH_NETWORK
        self.uuids = {}
        for nid in [nid for unused, nid in self.peers]:
            if nid not in self.uuids:
                self.uuids[nid] = 'host_%d_UUID' % len(self.uuids)
        self.made_oscs = []
        self.added_uuids = []

    def setup_commands(self):
        """What setup runs here, for the check-mode plan: ``{'client': [argv...]}``."""
        commands = [['modprobe', ECHO_MODULE, '(if not loaded)']]
        commands += [['lctl', 'add_uuid', uuid, nid] for nid, uuid in self.uuids.items()]
        for ost, nid in self.peers:
            osc = netdisk_osc_name(ost)
            commands += [['lctl', 'attach', 'osc', osc, osc + '_UUID'],
                         ['lctl', '--device', osc, 'setup', ost + '_UUID', self.uuids[nid]],
                         ['lctl', 'attach', 'echo_client', osc + '_ecc', osc + '_ecc_UUID'],
                         ['lctl', '--device', osc + '_ecc', 'setup', osc]]
        return {'client': commands}

    def _fail(self, message):
        self.errors.append({'point': None, 'message': message})
        return False

    def setup(self):
        """Load obdecho, then the UUIDs, oscs and echo clients; False (and ``errors``) when it fails."""
        try:
            devices = self.lctl.devices()
        except lctl_utils.LctlError as exc:
            return self._fail('cannot list the Lustre devices: %s' % exc)
        leftovers = [netdisk_osc_name(ost) for ost in self.targets
                     if self.lctl.find(netdisk_osc_name(ost), devices) is not None]
        if leftovers:
            return self._fail('%s already exist on this node: another netdisk survey is running, or an earlier one '
                              'was killed (remove them with lctl --device <name> cleanup, then detach)'
                              % ', '.join(leftovers))
        try:
            self.loaded_obdecho = lctl_utils.load_module(self.control_runner, self.node_state, ECHO_MODULE,
                                                         self.run_id)
        except lctl_utils.LctlError as exc:
            return self._fail('cannot load %s: %s' % (ECHO_MODULE, exc))
        for ost, nid in self.peers:
            osc = netdisk_osc_name(ost)
            try:
                if nid not in self.added_uuids:
                    self.added_uuids.append(nid)
                    self.lctl.run(['add_uuid', self.uuids[nid], nid])
                self.made_oscs.append(osc)
                self.lctl.run(['attach', 'osc', osc, osc + '_UUID'])
                self.lctl.run(['--device', osc, 'setup', ost + '_UUID', self.uuids[nid]])
            except lctl_utils.LctlError as exc:
                return self._fail('cannot connect an osc to %s (%s): %s' % (ost, nid, exc))
            self.echo_clients[ost] = osc + '_ecc'
            self._remember_echo_client(ost)
            try:
                self.lctl.attach_echo_client(osc + '_ecc', osc)
            except lctl_utils.LctlError as exc:
                return self._fail("can't set up echo-client %s on %s: %s" % (osc + '_ecc', osc, exc))
        return True

    def teardown(self):
        """The echo clients and objects (as case=disk), then the oscs and UUIDs made."""
        problems = ObdfilterSurvey.teardown(self)
        more = []
        for osc in list(self.made_oscs):
            if osc[:-len('_osc')] in self.echo_clients:
                more.append('%s is left for the cleanup: its echo client is still set up' % osc)
                continue
            try:
                self.lctl.teardown(osc)
                self.made_oscs.remove(osc)
            except lctl_utils.LctlError as exc:
                more.append('tear down osc %s: %s' % (osc, exc))
        if not self.made_oscs:
            for nid in list(self.added_uuids):
                result = self.lctl.run(['del_uuid', self.uuids[nid]], check=False)
                if result.rc != 0:
                    more.append('del_uuid %s: %s' % (self.uuids[nid], (result.stderr or result.stdout).strip()))
                self.added_uuids.remove(nid)
        for problem in more:
            self.errors.append({'point': None, 'message': problem})
        return problems + more


# --------------------------------------------------------------------------
# engine: iokit


def iokit_environment(targets, size_mib, rszlo, rszhi, nobjlo, nobjhi, thrlo, thrhi, tests, verify, rslt,
                      case=CASE_DISK):
    """The environment that makes the installed obdfilter-survey run the same sweep."""
    return {'case': case, 'targets': ' '.join(targets), 'size': str(size_mib), 'rszlo': str(rszlo),
            'rszhi': str(rszhi), 'nobjlo': str(nobjlo), 'nobjhi': str(nobjhi), 'thrlo': str(thrlo),
            'thrhi': str(thrhi), 'tests_str': ' '.join(tests), 'verify': '1' if verify else '0', 'rslt': rslt}


# Lines of the script's stdout that explain a run that produced no result (it exits 0 after most of them).
_IOKIT_FAILURE_RE = re.compile(
    r"(Can't find any OSTs to test.*|OST \S+ not setup.*|Can't setup echo-client.*|First test must be 'write'.*"
    r"|error: lctl not found.*|Test disk case support maximum.*|obdecho not setup on server.*"
    r"|ost not setup on server.*|The existing setup must be cleaned.*|.*not contiguous.*"
    r"|Error loading obdecho.*|.*[Cc]an't load obdecho.*)")


def iokit_errors(records, output):
    """Errors of an obdfilter-survey run, judged from its text (its exit status is not to be trusted)."""
    errors = []
    for record in records:
        point = {'rsz_kib': record['rsz_kib'], 'obj': record['obj'], 'thr': record['thr']}
        if record.get('error'):
            errors.append({'point': point, 'message': record['error']})
        for test, result in sorted(record['tests'].items()):
            if result['status'] in (STATUS_ERROR, STATUS_INCOMPLETE):
                errors.append({'point': dict(point, test=test), 'message': '%s %s (see the .detail file)'
                               % (test, result['status'].upper())})
    if not records:
        found = [match.group(0).strip() for match in _IOKIT_FAILURE_RE.finditer(output or '')]
        tail = (output or '').strip()[-2000:]
        errors.append({'point': None, 'message': 'obdfilter-survey produced no result: %s'
                       % ('; '.join(found) if found else tail or 'no output')})
    return errors


_DETAIL_POINT_RE = re.compile(r'^=+> ost\s+(\d+)\s+sz\s+(\d+)K\s+rsz\s+(\d+)K\s+obj\s+(\d+)\s+thr\s+(\d+)')
_DETAIL_TEST_RE = re.compile(r'^=+> (?P<test>\w+) (?:[^:\s]+:)?(?P<client>\S+)\s*$')


def _per_ost_figures(text, rsz_kib):
    judged = parse_thread_samples(text)
    rsz_mib = rsz_kib / KIB
    figures = {'mib_s': None, 'min_mib_s': None, 'max_mib_s': None, 'samples': len(judged['rates']),
               'lctl_mib_s': judged['total_rate'] * rsz_mib if judged['total_rate'] is not None else None,
               'error': judged['error_line']}
    if judged['count'] < 0:
        figures['status'] = STATUS_ERROR
    elif judged['count'] == 0:
        figures['status'] = STATUS_SHORT
    else:
        figures.update(status=STATUS_OK, min_mib_s=min(judged['rates']) * rsz_mib,
                       max_mib_s=max(judged['rates']) * rsz_mib)
    return figures


def parse_iokit_detail(text):
    """Every OST's figures from obdfilter-survey's ``.detail`` file, judged as the native engine judges them.

    Returns ``{(ost, size_kib, rsz_kib, obj, thr): {<ost name>: {<test>: figures}}}``; ``mib_s`` is null
    (the script times only all OSTs together).
    """
    points = {}
    key = None
    section = None
    lines = []

    def close():
        if key is not None and section is not None:
            test, ost = section
            points[key].setdefault(ost, {})[test] = _per_ost_figures('\n'.join(lines), key[2])

    for line in (text or '').splitlines():
        point = _DETAIL_POINT_RE.match(line)
        header = None if point else _DETAIL_TEST_RE.match(line)
        if point or (header is not None) or line.startswith('====='):
            close()
            section, lines = None, []
        if point:
            key = tuple(int(value) for value in point.groups())
            points.setdefault(key, {})
        elif header is not None and header.group('client').endswith('_ecc') and key is not None:
            section = (header.group('test'), header.group('client')[:-len('_ecc')])
        elif section is not None:
            lines.append(line)
    close()
    return points


def run_iokit(runner, script, rslt, **parameters):
    """Run the node's ``obdfilter-survey`` and parse its summary: ``(records, errors, result)``."""
    env = iokit_environment(rslt=rslt, **parameters)
    result = runner.run(['bash', script], env=env)
    try:
        with open(rslt + '.summary') as handle:
            summary = handle.read()
    except (IOError, OSError):
        summary = result.stdout
    records = parse_obdfilter_survey(summary)
    try:
        with open(rslt + '.detail') as handle:
            per_point = parse_iokit_detail(handle.read())
    except (IOError, OSError):
        per_point = {}
    for record in records:
        per_ost = per_point.get((record['ost'], record['size_kib'], record['rsz_kib'], record['obj'], record['thr']))
        if per_ost is not None:
            record['per_ost'] = per_ost
    errors = iokit_errors(records, result.stdout + result.stderr)
    if result.timed_out:
        errors.append({'point': None, 'message': 'obdfilter-survey stopped: %s' % (runner.stop_reason or 'timeout')})
    return records, errors, result
