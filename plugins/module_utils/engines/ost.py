# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ost survey engine: per-OST write and read bandwidth from a Lustre client.

Measured as lustre-iokit's ``ost-survey`` measures it (docs/iokit-notes.md, 7):

* the mount is Lustre when ``lfs getname <mount>`` names its instance
  (``testfs-ffff8803c9f3a800``); the fsname is the text before the last ``-``;
* the OSTs and their state come from ``lctl get_param -n
  lov.<fsname>-clilov-<instance>.target_obd`` (``0: testfs-OST0000_UUID ACTIVE``);
* ``llite.<fsname>-<instance>.max_cached_mb`` is saved and set to 256 pages
  (1 MiB with 4 KiB pages) to defeat the client cache, and restored at the end;
* for every ACTIVE OST in turn ``lfs setstripe -S 0 -i <idx> -c 1 <dir>/file<idx>``,
  then a timed ``dd of=<file> if=/dev/zero count=<size_mib> bs=1048576``;
  then for every one a timed ``dd if=<file> of=/dev/null ...``; each timing
  is ``sync``, t0, ``dd``, ``sync``, t1, and the rate is
  ``size_mib / (t1 - t0)`` MiB/s;
* worst and best are the slowest and fastest OST (the first one wins a tie),
  the average and the population standard deviation divide by the *total*
  OST count, inactive ones included, exactly as the script does.

Differences from the script, on purpose: the instance-qualified parameter
names make two mounts of one file system harmless; the printed OST index is
used for ``-i`` (the script uses the line position, which breaks on sparse
indices); the scratch directory is ``ost_survey_<run_id>`` (the script
deletes any existing ``ost_survey_tmp``); a ``dd`` that fails leaves that
OST's figure null and is reported (the script would compute a rate anyway),
and the survey refuses to start when an OST has less free space than
``size_mib * min_free_factor``.

With ``point_s`` set (time-bounded points, point_budget.py) each OST's file
is ``max(floor, min(size_mib, point_s x rate))`` MiB instead of ``size_mib``.
The OSTs are measured one after another, so there is no slowest OST of a
point to size from: each OST is sized from the rate of the OST written before
it, the first one moves the floor.  An OST's amount is fixed when its file is
written (its read reads that file back), and by then only the earlier OSTs'
writes have been measured, so the write rate sizes it.

Everything changed is written to the node state first (the scratch
directory, each file, the old ``max_cached_mb``) and crossed off once undone.

``engine: iokit`` runs the installed ``ost-survey -s <size_mib> <mount>``
and parses its stdout with ``parse_ost_survey``.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import os
import re
import shutil
import time

from ansible_collections.lustre.iokit.plugins.module_utils import point_budget
from ansible_collections.lustre.iokit.plugins.module_utils import sample_extraction as extraction
from ansible_collections.lustre.iokit.plugins.module_utils.engines.contract import NativeSurvey
from ansible_collections.lustre.iokit.plugins.module_utils.engines.errors import EngineError
from ansible_collections.lustre.iokit.plugins.module_utils.option_problem import OptionProblem
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.ost_survey import parse_ost_survey
from ansible_collections.lustre.iokit.plugins.module_utils.units import KIB, MIB

# ost-survey's fixed dd block size ($BSIZE)
BLOCK_SIZE = MIB
# pages the client may cache during the survey (ost-survey's 256 * page size)
CACHE_PAGES = 256
DEFAULT_SIZE_MIB = 30
DEFAULT_MIN_FREE_FACTOR = 2.0
OPERATIONS = ('write', 'read')
# The OSTs are one series that one dd measures after another: SizingRates' axis value for every OST, so that each
# is sized from the one before.
ONE_DD = 1

_TARGET_OBD_RE = re.compile(r'^\s*(?P<index>\d+):\s+(?P<uuid>\S+)\s+(?P<state>\S+)')
_DF_OST_RE = re.compile(r'^(?P<uuid>\S+)\s+(?P<total>\d+)\s+(?P<used>\d+)\s+(?P<available>\d+)\s+\S+\s+\S*\[OST:(?P<index>\d+)\]')
_CACHED_MB_RE = re.compile(r'^\s*(?:max_cached_mb:\s*)?(?P<value>\d+)\s*$')


# --------------------------------------------------------------------------
# What the client says


def parse_getname(text):
    """``lfs getname`` output (``testfs-ffff8803c9f3a800 /mnt/testfs`` or just the instance) as
    ``(fsname, instance_id)``, or None."""
    words = (text or '').split()
    if not words or '-' not in words[0]:
        return None
    fsname, instance_id = words[0].rsplit('-', 1)
    if not fsname or not instance_id:
        return None
    return fsname, instance_id


def parse_target_obd(text):
    """``lov.*.target_obd`` lines as ``[{'position', 'ost', 'uuid', 'active'}]`` in printed order."""
    osts = []
    for line in (text or '').splitlines():
        match = _TARGET_OBD_RE.match(line)
        if match:
            osts.append({'position': len(osts), 'ost': int(match.group('index')), 'uuid': match.group('uuid'),
                         'active': match.group('state') == 'ACTIVE'})
    return osts


def parse_lfs_df_usage(text):
    """``lfs df`` OST lines (``testfs-OST0000_UUID  1048576  0  1048576  0% /mnt/testfs[OST:0]``) as
    ``{ost index: {'uuid', 'total_kib', 'used_kib', 'available_kib'}}``: the 1K-blocks, Used and Available
    columns, in KiB without ``-h``.  Inactive OSTs print no figures and the MDTs and the summary are not OSTs: none
    of them is in it."""
    usage = {}
    for line in (text or '').splitlines():
        match = _DF_OST_RE.match(line.strip())
        if match:
            usage[int(match.group('index'))] = {
                'uuid': match.group('uuid'), 'total_kib': int(match.group('total')),
                'used_kib': int(match.group('used')), 'available_kib': int(match.group('available'))}
    return usage


def parse_lfs_df(text):
    """``lfs df`` OST lines as ``{ost index: available KiB}`` (inactive OSTs print no figures)."""
    return dict((index, entry['available_kib']) for index, entry in parse_lfs_df_usage(text).items())


def parse_max_cached_mb(text):
    """The limit in ``llite.*.max_cached_mb`` (the ``max_cached_mb:`` line, or a lone number before 2.4)."""
    for line in (text or '').splitlines():
        match = _CACHED_MB_RE.match(line)
        if match:
            return int(match.group('value'))
    return None


def mount_fstype(mount_point, mountinfo_path='/proc/self/mountinfo'):
    """The file-system type of the mount at ``mount_point`` (``lustre``, ``fuse.lustre-sim``), or None."""
    try:
        with open(mountinfo_path) as handle:
            lines = handle.read().splitlines()
    except (IOError, OSError):
        return None
    wanted = os.path.realpath(mount_point)
    fstype = None
    for line in lines:
        before, separator, after = line.partition(' - ')
        fields = before.split()
        if not separator or len(fields) < 5:
            continue
        # mountinfo escapes spaces and other bytes as octal; the last match is the one on top
        if fields[4].replace('\\040', ' ') == wanted and after.split():
            fstype = after.split()[0]
    return fstype


def cache_limit_mb(page_size):
    """The max_cached_mb ost-survey sets: 256 pages in MiB (1 with 4 KiB pages), at least 1."""
    return max(1, page_size * CACHE_PAGES // MIB)


# --------------------------------------------------------------------------
# Arithmetic


def rate_mib_s(size_mib, seconds):
    return size_mib * BLOCK_SIZE / seconds / MIB if seconds > 0 else None


def operation_statistics(osts, operation, total_osts):
    """Worst, best, average and standard deviation of one operation, as ost-survey computes them.

    ``osts``: per-OST entries with ``<operation>_mib_s`` (None when not
    measured); only active, measured ones count, but the average and the
    population standard deviation divide by ``total_osts`` (inactive OSTs
    included), as the script does.
    """
    key = operation + '_mib_s'
    measured = [entry for entry in osts if entry['active'] and entry.get(key) is not None]
    if not measured or not total_osts:
        return {'worst': None, 'best': None, 'avg_mib_s': None, 'stddev_mib_s': None}
    worst = best = measured[0]
    for entry in measured[1:]:
        if entry[key] < worst[key]:
            worst = entry
        if entry[key] > best[key]:
            best = entry
    average = sum(entry[key] for entry in measured) / total_osts
    deviation = math.sqrt(sum((entry[key] - average) ** 2 for entry in measured) / total_osts)
    return {'worst': {'ost': worst['ost'], 'mib_s': worst[key]}, 'best': {'ost': best['ost'], 'mib_s': best[key]},
            'avg_mib_s': average, 'stddev_mib_s': deviation}


def report_text(record, program='ost-survey', date_text=None):
    """The survey as ost-survey prints it (what ``parse_ost_survey`` reads back)."""
    date_text = date_text or time.strftime('%m/%d/%y')
    header = '%s: %s OST speed survey on %s from %s' % (program, date_text, record['mount_point'],
                                                        record['client_nid'] or 'unknown')
    lines = [header, 'Number of Active OST devices : %d' % record['active_osts']]
    if record['inactive_osts']:
        lines.append('Number of non active ots(s): %d' % record['inactive_osts'])
    if not record['active_osts']:
        lines.append("There is no active OST's found")
        return '\n'.join(lines) + '\n'
    for label, operation in (('Read', 'read'), ('Write', 'write')):
        stats = record[operation]
        if stats['worst'] is None:
            continue
        lines.append('Worst  %s OST indx: %d speed: %f' % (label, stats['worst']['ost'], stats['worst']['mib_s']))
        lines.append('Best   %s OST indx: %d speed: %f' % (label, stats['best']['ost'], stats['best']['mib_s']))
        lines.append('%s Average: %f +/- %f MB/s' % (label, stats['avg_mib_s'], stats['stddev_mib_s']))
    lines.append('Ost#  Read(MB/s)  Write(MB/s)  Read-time  Write-time')
    lines.append('-' * 52)
    for entry in record['osts']:
        figures = [entry[key] for key in ('read_mib_s', 'write_mib_s', 'read_time_s', 'write_time_s')]
        if not entry['active']:
            lines.append('%d     Inactive ost' % entry['ost'])
        elif None not in figures:
            lines.append('%d     %.3f       %.3f        %.3f      %.3f' % tuple([entry['ost']] + figures))
    return '\n'.join(lines) + '\n'


def bounded_problems(point_s, point_min_mib):
    """The time-bounded point's settings: a positive time and a floor of at least 1 MiB, which must be given."""
    problems = []
    if point_s is not None and point_s <= 0:
        problems.append(OptionProblem('point_s', 'must be more than 0 seconds', got='%g' % point_s))
    if point_min_mib is not None and point_min_mib < 1:
        problems.append(OptionProblem('point_min_mib', 'must be at least 1', got='%d' % point_min_mib))
    if point_s is not None and point_min_mib is None:
        # the floor is the OSS's cache (point_budget.default_floor), and the client cannot read the OSS's memory
        problems.append(OptionProblem(
            'point_min_mib', 'time-bounded points ({point_s}) need the floor per OST, and this client cannot read '
            'the OSS\'s memory: give the largest OSS\'s MemTotal in MiB (its page cache), or on ZFS its ARC '
            'maximum, at least %d' % point_budget.MIN_FLOOR_MIB, mentions='point_s'))
    return problems


# --------------------------------------------------------------------------
# The survey


class OstSurvey(NativeSurvey):
    """Checks, plans, runs and cleans up one ost survey from this client.

    From ``context`` (an EngineContext, contract.py): ``runner``, the
    survey's Runner; ``node_state``, where every change is written down
    first; ``clock``, the timing source (monotonic); ``wall_clock``, epoch
    seconds, stamped on each OST's row as
    ``<operation>_start_time``/``<operation>_end_time`` (beside
    ``<operation>_time_s``) so that statistics sampled on the nodes can be
    cut per OST and operation.  ``point_s``, ``point_min_mib`` and
    ``floor_reason``: time-bounded points (see the module docstring), None
    for the I/O kit's fixed ``size_mib``.
    """

    def __init__(self, context, mount_point, size_mib=DEFAULT_SIZE_MIB, min_free_factor=DEFAULT_MIN_FREE_FACTOR,
                 workdir='/tmp/lustre-iokit', page_size=None, lctl='lctl', lfs='lfs',
                 mountinfo_path='/proc/self/mountinfo', point_s=None, point_min_mib=None, floor_reason=None):
        self.context = context
        # The checks and the plan run on the control runner, under no deadline; the module hands the survey the
        # measuring runner (``context.runner``) once they are done, right before setup.
        self.runner = context.control_runner or context.runner
        self.node_state = context.node_state
        self.run_id = context.run_id
        self.mount_point = mount_point.rstrip('/') or '/'
        self.size_mib = size_mib
        self.min_free_factor = min_free_factor
        # Time-bounded points: seconds per test (write, read) of an OST, None for the I/O kit's fixed size_mib; the
        # floor in MiB per OST and where it came from (the module says).
        self.point_s = point_s
        self.point_min_mib = point_min_mib
        self.floor_reason = floor_reason
        self.sizing_rates = point_budget.SizingRates()
        # The reads still to come of the OSTs this attempt wrote, in seconds at their write rates: the time before
        # the timeout that a bounded OST's write cannot count on.
        self._pending_read_s = 0.0
        self.workdir = workdir
        self.page_size = page_size or os.sysconf('SC_PAGE_SIZE')
        self.host = context.host
        self.lctl = lctl
        self.lfs = lfs
        self.clock = context.clock
        self.wall_clock = context.wall_clock
        self.mountinfo_path = mountinfo_path
        self.fsname = None
        self.instance_id = None
        self.osts = []
        self.available_kib = {}
        self.total_kib = {}
        self.client_nid = None
        self.fstype = None
        self.errors = []
        self.aborted = None
        # Told of each OST written or read, ``on_step(point, figure)`` (the module's progress log); None: nobody.
        self.on_step = None
        # Told of each OST written and read whole, ``on_ost_done(entry)`` (its row of the record): the progress log
        # keeps it on the node, so that a rerun of the run id after a kill does not measure that OST again.
        self.on_ost_done = None
        # OST index -> its row as an earlier attempt of the run id finished it (written and read): not measured again.
        self.done_points = {}
        self.directory = os.path.join(self.mount_point, 'ost_survey_%s' % self.run_id)
        self._saved_cache = None
        self._files = []
        self._directory_made = False

    # -- checks and plan ---------------------------------------------------------------

    @property
    def instance(self):
        return '%s-%s' % (self.fsname, self.instance_id)

    @property
    def lov_param(self):
        return 'lov.%s-clilov-%s.target_obd' % (self.fsname, self.instance_id)

    @property
    def cache_param(self):
        return 'llite.%s.max_cached_mb' % self.instance

    def _run(self, argv):
        return self.runner.run(argv)

    def inspect(self):
        """Read the mount, the OSTs and their free space; raise EngineError naming the option on a refusal."""
        self.fstype = mount_fstype(self.mount_point, self.mountinfo_path)
        result = self._run([self.lfs, 'getname', self.mount_point])
        names = parse_getname(result.stdout) if result.rc == 0 else None
        if names is None:
            raise EngineError('mount_point: %s is not a Lustre client mount: lfs getname failed (rc %s): %s'
                              % (self.mount_point, result.rc, (result.stderr or result.stdout).strip()))
        self.fsname, self.instance_id = names
        result = self._run([self.lctl, 'get_param', '-n', self.lov_param])
        self.osts = parse_target_obd(result.stdout) if result.rc == 0 else []
        if not self.osts:
            raise EngineError('mount_point: cannot read the OSTs of %s (lctl get_param -n %s, rc %s): %s'
                              % (self.mount_point, self.lov_param, result.rc, (result.stderr or result.stdout).strip()))
        result = self._run([self.lfs, 'df', self.mount_point])
        if result.rc != 0:
            raise EngineError('mount_point: lfs df %s failed (rc %s): %s' % (
                self.mount_point, result.rc, (result.stderr or result.stdout).strip()))
        usage = parse_lfs_df_usage(result.stdout)
        self.available_kib = dict((index, entry['available_kib']) for index, entry in usage.items())
        self.total_kib = dict((index, entry['total_kib']) for index, entry in usage.items())
        result = self._run([self.lctl, 'list_nids'])
        nids = result.stdout.split() if result.rc == 0 else []
        self.client_nid = nids[0] if nids else None

    def active_osts(self):
        return [ost for ost in self.osts if ost['active']]

    def fill(self):
        """``(free_kib, total_kib)``: each active OST's Available and 1K-blocks as ``lfs df`` showed them before the
        survey wrote anything, keyed by the OST's name (``testfs-OST0000``, as its samples name it); an OST that
        ``lfs df`` showed no figures for is left out.  The envelope's ``environment`` keeps them, as obdfilter's,
        so that the history knows how full each OST was when it was measured."""
        free_kib, total_kib = {}, {}
        for ost in self.active_osts():
            name = _ost_name(ost['ost'], self.fsname)
            if ost['ost'] in self.available_kib:
                free_kib[name] = self.available_kib[ost['ost']]
            if ost['ost'] in self.total_kib:
                total_kib[name] = self.total_kib[ost['ost']]
        return free_kib, total_kib

    def problems(self):
        return bounded_problems(self.point_s, self.point_min_mib)

    def largest_file(self):
        """``(option, MiB)``: the largest file an OST may get and the option that sets it - ``size_mib``, or with
        time-bounded points the floor when that is larger (the floor wins over the full size)."""
        if self.point_s is not None and self.point_min_mib > self.size_mib:
            return 'point_min_mib', self.point_min_mib
        return 'size_mib', self.size_mib

    def space_problems(self):
        """Active OSTs with less than the largest file (``largest_file``) times ``min_free_factor`` available (from
        ``lfs df``), each an OptionProblem of the option that sets that file."""
        option, largest_mib = self.largest_file()
        needed_kib = int(math.ceil(largest_mib * MIB * self.min_free_factor / KIB))
        problems = []
        for ost in self.active_osts():
            available = self.available_kib.get(ost['ost'])
            if available is None:
                problems.append(OptionProblem(option, 'lfs df shows no free space for OST index %d (%s)'
                                              % (ost['ost'], ost['uuid'])))
            elif available < needed_kib:
                problems.append(OptionProblem(
                    option, 'OST index %d (%s) has %d KiB available, the survey needs %d KiB ({%s} %d x '
                    '{min_free_factor} %g)' % (ost['ost'], ost['uuid'], available, needed_kib, option, largest_mib,
                                               self.min_free_factor),
                    mentions=(option, 'min_free_factor')))
        return problems

    def steps(self):
        """The steps of the sweep in order, as ``on_step`` names them: every active OST written, then every one read."""
        return [{'operation': operation, 'ost': ost['ost']} for operation in OPERATIONS for ost in self.active_osts()]

    def plan(self):
        """What the survey would do: the OSTs, the files, the bytes per OST and the cache change."""
        plan = {
            'mount_point': self.mount_point,
            'fsname': self.fsname,
            'directory': self.directory,
            'osts': [dict(ost, file=self.file_path(ost) if ost['active'] else None,
                          available_kib=self.available_kib.get(ost['ost'])) for ost in self.osts],
            'bytes_written_per_ost': self.size_mib * MIB,
            'bytes_read_per_ost': self.size_mib * MIB,
            'max_cached_mb': cache_limit_mb(self.page_size),
            'estimated_duration_s': None,
        }
        if self.point_s is not None:
            plan['bounded'] = self.bounded_plan()
        if self.point_min_mib is not None:
            plan['point_sizing'] = point_budget.point_sizing(self.size_mib, self.point_min_mib, self.floor_reason,
                                                             self.point_s)
        return plan

    def bounded_plan(self):
        """What time-bounded points change in the plan: the time and floor, and the worst case.

        An OST moves ``max(floor, min(size_mib, point_s x rate))`` (point_budget.py), written then read, so at worst
        every OST moves the larger of the floor and ``size_mib`` twice.
        """
        tests = len(OPERATIONS)
        return {'point_s': self.point_s, 'point_min_mib': self.point_min_mib, 'floor_reason': self.floor_reason,
                'target_duration_s': self.point_s * tests * len(self.active_osts()),
                'worst_case_mib_per_ost': self.largest_file()[1] * tests, 'full_mib_per_ost': self.size_mib * tests}

    def file_path(self, ost):
        return os.path.join(self.directory, 'file%d' % ost['ost'])

    def write_argv(self, path, size_mib=None):
        return ['dd', 'of=' + path, 'if=/dev/zero', 'count=%d' % (size_mib or self.size_mib), 'bs=%d' % BLOCK_SIZE]

    def read_argv(self, path, size_mib=None):
        return ['dd', 'if=' + path, 'of=/dev/null', 'count=%d' % (size_mib or self.size_mib), 'bs=%d' % BLOCK_SIZE]

    # -- node state ------------------------------------------------------------------------

    def _record_cache_change(self, old_value):
        """Write the old max_cached_mb down before changing it, so a cleanup after a kill restores it."""
        self.node_state.record('params', self.run_id, name=self.cache_param, old_value=str(old_value))

    def _forget_cache_change(self):
        self.node_state.forget('params', self.cache_param)

    # -- running ---------------------------------------------------------------------------

    def setup(self):
        """Lower the client cache and create the scratch directory (each recorded first)."""
        result = self._run([self.lctl, 'get_param', '-n', self.cache_param])
        old_value = parse_max_cached_mb(result.stdout) if result.rc == 0 else None
        if old_value is None:
            raise EngineError('mount_point: cannot read %s (rc %s): %s' % (
                self.cache_param, result.rc, (result.stderr or result.stdout).strip()))
        self._record_cache_change(old_value)
        self._saved_cache = old_value
        result = self._run([self.lctl, 'set_param', '-n', '%s=%d' % (self.cache_param, cache_limit_mb(self.page_size))])
        if result.rc != 0:
            detail = (result.stderr or result.stdout).strip()
            raise EngineError('cannot set %s (rc %s): %s' % (self.cache_param, result.rc, detail))
        self.node_state.record('paths', self.run_id, path=self.directory, mount_point=self.mount_point, survey='ost')
        self._directory_made = True
        if os.path.isdir(self.directory):
            # the same run id after an abort: the directory and its files are ours
            self._remove_files(os.listdir(self.directory))
        else:
            os.mkdir(self.directory)

    def _measure(self, argv):
        """sync, t0, dd, sync, t1: returns (seconds, dd result, interrupted, (epoch t0, epoch t1))."""
        self._run(['sync'])
        start_time = round(self.wall_clock(), 3)
        started = self.clock()
        result = self._run(argv)
        self._run(['sync'])
        elapsed = self.clock() - started
        end_time = round(self.wall_clock(), 3)
        return elapsed, result, result.timed_out or self.runner.expired(), (start_time, end_time)

    @staticmethod
    def part_point(logged):
        """The point an OST's row kept by an earlier attempt covers (its write and read), None for a whole record."""
        if not isinstance(logged, dict) or 'osts' in logged or 'ost' not in logged:
            return None
        return {'ost': logged['ost']}

    def _entry(self, ost):
        """The row of ``ost`` in the record: an earlier attempt's when it finished that OST, else still empty."""
        done = self.done_points.get(ost['ost'])
        if done is not None and ost['active']:
            return dict(done)
        return {'ost': ost['ost'], 'uuid': ost['uuid'], 'active': ost['active'], 'read_mib_s': None,
                'write_mib_s': None, 'read_time_s': None, 'write_time_s': None, 'write_start_time': None,
                'write_end_time': None, 'read_start_time': None, 'read_end_time': None}

    def run(self):
        """The sweep (``sweep()``) as the contract runs it: its one record, once at its end, when an OST was written."""
        record = self.sweep()
        if any(entry['write_mib_s'] is not None for entry in record['osts']):
            yield record

    def sweep(self):
        """Write then read every active OST an earlier attempt did not finish; returns the one record (see
        parse_ost_survey), with the earlier attempts' rows (each with its ``attempt``) in their places."""
        entries = [self._entry(ost) for ost in self.osts]
        completed = []
        for operation in OPERATIONS:
            if not self._run_pass(operation, entries):
                break
            completed.append(operation)
        record = {
            'active_osts': len(self.active_osts()),
            'inactive_osts': len(self.osts) - len(self.active_osts()),
            'date': time.strftime('%m/%d/%y'),
            'mount_point': self.mount_point,
            'client_nid': self.client_nid,
            'no_active_osts': not self.active_osts(),
            'fsname': self.fsname,
            'host': self.host,
            'size_mib': self.size_mib,
            'complete': completed == list(OPERATIONS),
            'osts': entries,
        }
        if self.point_s is not None:
            record.update(bounded=True, point_s=self.point_s)
        for operation in OPERATIONS:
            # a pass cut short is not summarised: its worst/best/average would be over some OSTs only
            record[operation] = operation_statistics(entries if operation in completed else [], operation,
                                                     len(self.osts))
        return record

    def _run_pass(self, operation, entries):
        for entry in entries:
            if not entry['active']:
                continue
            if entry['ost'] in self.done_points:
                if operation == 'write':
                    # an earlier attempt's OST sizes the next, as in the uninterrupted run
                    self.sizing_rates.measured({}, ONE_DD, entry.get('write_mib_s'))
                continue
            if self.runner.expired():
                self._stop({'ost': entry['ost'], 'operation': operation}, 'not run')
                return False
            if not self._run_step(operation, entry):
                return False
            if self.on_step is not None:
                rate = entry[operation + '_mib_s']
                self.on_step({'operation': operation, 'ost': entry['ost']},
                             None if rate is None else '%s %.1f MiB/s' % (operation, rate))
            if operation == 'read' and entry['read_mib_s'] is not None and self.on_ost_done is not None:
                self.on_ost_done(entry)
        return True

    def _run_step(self, operation, entry):
        """Write or read one OST's file into ``entry``; False when the survey was stopped during it."""
        path = os.path.join(self.directory, 'file%d' % entry['ost'])
        if operation == 'write' and self.point_s is not None:
            size = self._bounded(entry)
            if size.refused is not None:
                # never cut short by the timeout: the OST is not written (nor read), the survey goes on
                self.errors.append({'point': {'ost': entry['ost'], 'operation': operation},
                                    'message': 'not run: %s' % size.refused})
                return True
        if operation == 'write':
            self.node_state.record('paths', self.run_id, path=path, mount_point=self.mount_point, survey='ost')
            self._files.append(path)
            result = self._run([self.lfs, 'setstripe', '-S', '0', '-i', str(entry['ost']), '-c', '1', path])
            if result.timed_out or self.runner.expired():
                # the deadline cut the layout step: the survey stopped, the OST did not fail
                self._stop({'ost': entry['ost'], 'operation': operation}, 'setstripe interrupted')
                return False
            if result.rc != 0:
                self.errors.append({'point': {'ost': entry['ost'], 'operation': operation},
                                    'message': 'lfs setstripe -i %d failed (rc %s): %s' % (
                                        entry['ost'], result.rc, (result.stderr or result.stdout).strip())})
                return True
            argv = self.write_argv(path, entry.get('moved_mib'))
        else:
            if entry['write_mib_s'] is None:
                return True
            if self.point_s is not None:
                # this read is under way: no longer one still to come
                self._pending_read_s = max(0.0, self._pending_read_s - entry['write_time_s'])
            argv = self.read_argv(path, entry.get('moved_mib'))
        seconds, result, interrupted, (start_time, end_time) = self._measure(argv)
        # Times even for a failed or cut dd: its I/O still shows in the statistics of that window.
        entry[operation + '_start_time'] = start_time
        entry[operation + '_end_time'] = end_time
        if interrupted:
            self._stop({'ost': entry['ost'], 'operation': operation}, '%s interrupted' % operation)
            return False
        if result.rc != 0:
            self.errors.append({'point': {'ost': entry['ost'], 'operation': operation},
                                'message': 'dd %s on OST index %d failed (rc %s): %s' % (
                                    operation, entry['ost'], result.rc, result.stderr.strip())})
            return True
        entry[operation + '_time_s'] = seconds
        entry[operation + '_mib_s'] = rate_mib_s(entry.get('moved_mib', self.size_mib), seconds)
        if self.point_s is not None:
            self._bounded_measured(operation, entry)
        return True

    def _bounded(self, entry):
        """The PointSize of ``entry``'s OST, sized from the OST written before it, kept in the row
        (``moved_mib``, ``point_limit``, ``sized_from_mib_s``).

        The OST's write and read share the time the survey has left, less the reads still to come of the OSTs
        already written (every read follows every write).
        """
        rate = self.sizing_rates.rate_for({}, ONE_DD)
        remaining_s = self.runner.remaining_s()
        time_left_s = None
        if remaining_s is not None:
            time_left_s = max(0.0, remaining_s - self._pending_read_s) / len(OPERATIONS)
        size = point_budget.size_point('ost', self.size_mib, self.point_min_mib, self.point_s, rate, time_left_s,
                                       granule=1)
        if size.refused is None:
            entry.update(moved_mib=int(size.amount), point_limit=size.limit, sized_from_mib_s=rate)
        return size

    def _bounded_measured(self, operation, entry):
        """A bounded OST's test ended: its write sizes the next OST and leaves its read to come; its read ends the
        OST's point."""
        if operation == 'write':
            self.sizing_rates.measured({}, ONE_DD, entry['write_mib_s'])
            self._pending_read_s += entry['write_time_s']
        else:
            entry['elapsed_s'] = round(entry['write_time_s'] + entry['read_time_s'], 6)

    def _stop(self, point, what):
        self.aborted = self.runner.stop_reason or 'stopped'
        self.errors.append({'point': point, 'message': '%s: %s' % (what, self.aborted)})

    # -- cleanup ------------------------------------------------------------------------------

    def _remove_files(self, names):
        for name in names:
            path = os.path.join(self.directory, name)
            try:
                os.unlink(path)
            except OSError as exc:
                if os.path.lexists(path):
                    raise EngineError('cannot remove %s: %s' % (path, exc))
            self.node_state.forget('paths', path)

    def teardown(self, control_runner):
        """Restore max_cached_mb, remove the files and the directory; returns the problems left.

        ``control_runner`` should be one whose deadline has not passed.
        """
        problems = []
        if self._saved_cache is not None:
            result = control_runner.run([self.lctl, 'set_param', '-n', '%s=%d' % (self.cache_param, self._saved_cache)])
            if result.rc == 0:
                self._forget_cache_change()
                self._saved_cache = None
            else:
                problems.append('cannot restore %s to %d: %s' % (self.cache_param, self._saved_cache,
                                                                 (result.stderr or result.stdout).strip()))
        if self._directory_made:
            try:
                names = os.listdir(self.directory) if os.path.isdir(self.directory) else []
                ours = set(os.path.basename(path) for path in self._files)
                self._remove_files([name for name in names if name in ours])
                for path in self._files:
                    self.node_state.forget('paths', path)
                if os.path.isdir(self.directory):
                    os.rmdir(self.directory)
                self.node_state.forget('paths', self.directory)
                self._directory_made = False
            except (OSError, EngineError) as exc:
                problems.append('cannot remove %s: %s' % (self.directory, exc))
        return problems


# --------------------------------------------------------------------------
# engine: iokit


def iokit_argv(script, size_mib, mount_point):
    return ['perl', script, '-s', str(size_mib), mount_point]


IOKIT_DIRECTORY = 'ost_survey_tmp'


def run_iokit_guarded(survey, runner, control_runner, script, raw_path=None):
    """Run the installed ``ost-survey`` on ``survey``'s mount (after ``inspect``), then undo what it left.

    The script lowers max_cached_mb and uses ``<mount>/ost_survey_tmp``; both
    are written to the node state first, and restored or removed afterwards
    if its own end (which a ``die`` or a kill skips) did not.  An existing
    ``ost_survey_tmp`` is not ours, so the survey refuses (the script would
    delete it).  Returns ``(record or None, errors, result)``.
    """
    directory = os.path.join(survey.mount_point, IOKIT_DIRECTORY)
    if os.path.lexists(directory):
        raise EngineError('mount_point: %s exists and is not ours; ost-survey would delete it' % directory)
    result = control_runner.run([survey.lctl, 'get_param', '-n', survey.cache_param])
    old_value = parse_max_cached_mb(result.stdout) if result.rc == 0 else None
    if old_value is not None:
        survey._record_cache_change(old_value)
    survey.node_state.record('paths', survey.run_id, path=directory, mount_point=survey.mount_point, survey='ost')
    record, errors, result = run_iokit(runner, script, survey.size_mib, survey.mount_point, raw_path)
    if old_value is not None:
        current = control_runner.run([survey.lctl, 'get_param', '-n', survey.cache_param])
        if parse_max_cached_mb(current.stdout) != old_value:
            restore = control_runner.run([survey.lctl, 'set_param', '-n', '%s=%d' % (survey.cache_param, old_value)])
            if restore.rc != 0:
                errors.append({'point': None, 'message': 'cannot restore %s to %d after ost-survey: %s' % (
                    survey.cache_param, old_value, (restore.stderr or restore.stdout).strip())})
            else:
                survey._forget_cache_change()
                errors.append({'point': None, 'message': 'ost-survey left %s lowered; restored it to %d' % (
                    survey.cache_param, old_value)})
        else:
            survey._forget_cache_change()
    if os.path.lexists(directory):
        try:
            shutil.rmtree(directory)
        except OSError as exc:
            errors.append({'point': None, 'message': 'ost-survey left %s and it cannot be removed: %s' % (
                directory, exc)})
        else:
            errors.append({'point': None, 'message': 'ost-survey left %s behind; removed it' % directory})
    if not os.path.lexists(directory):
        survey.node_state.forget('paths', directory)
    return record, errors, result


def run_iokit(runner, script, size_mib, mount_point, raw_path=None):
    """Run the node's ``ost-survey`` and parse its stdout; returns ``(record or None, errors, result)``.

    Success is decided from the parsed text, never from the exit status.
    """
    result = runner.run(iokit_argv(script, size_mib, mount_point))
    if raw_path:
        with open(raw_path, 'w') as handle:
            handle.write(result.stdout)
            if result.stderr:
                handle.write(result.stderr)
    parsed = parse_ost_survey(result.stdout)
    errors = []
    if result.timed_out:
        errors.append({'point': None, 'message': 'ost-survey stopped: %s' % (runner.stop_reason or 'timeout')})
    measured = [entry for entry in parsed['osts'] if entry['active'] and entry['write_mib_s'] is not None]
    if parsed['no_active_osts']:
        errors.append({'point': None, 'message': "ost-survey: There is no active OST's found"})
    elif not measured:
        errors.append({'point': None, 'message': 'ost-survey printed no result (rc %s): %s' % (
            result.rc, (result.stdout + result.stderr).strip()[-2000:])})
    if 'Warning: Couldn' in result.stdout:
        errors.append({'point': None, 'message': 'ost-survey could not remove its ost_survey_tmp directory'})
    if not measured:
        return None, errors, result
    parsed['complete'] = not result.timed_out
    return parsed, errors, result


# --------------------------------------------------------------------------
# The report's samples


def _ost_name(index, fsname):
    # Lustre names targets by their hexadecimal index: testfs-OST000a.
    name = 'OST%04x' % index if isinstance(index, int) and not isinstance(index, bool) else 'OST%s' % index
    return '%s-%s' % (fsname, name) if fsname else name


def record_samples(record, ctx):
    """One record's samples for the report (``sample_extraction``): each OST's write and read rate."""
    # Either the whole parse_ost_survey object (one per client) or one record per OST.
    rows = record.get('osts') if isinstance(record.get('osts'), list) else [record]
    # The ost_survey module puts the file system's name in its record; older envelopes had it in the parameters.
    fsname = next((value for value in (record.get('fsname'), ctx['parameters'].get('fsname'))
                   if isinstance(value, str) and value), None)
    for row in rows:
        if not isinstance(row, dict) or 'ost' not in row:
            continue
        target = row.get('target') if isinstance(row.get('target'), str) else _ost_name(row.get('ost'), fsname)
        if row.get('active') is False:
            ctx['problems'].append('%s inactive' % target)
            continue
        for test in ('write', 'read'):
            value = row.get('%s_mib_s' % test)
            if extraction.is_finite_number(value):
                yield (test, extraction.UNIT_MIB_S, target, extraction.make_point({}), float(value), 'ok',
                       record.get('iteration'))
            else:
                ctx['problems'].append('%s on %s: no value' % (test, target))
