# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The sgpdd survey engine: sequential raw-device bandwidth with ``sgp_dd``.

The sweep is planned exactly as lustre-iokit's ``sgpdd-survey`` plans it
(docs/iokit-notes.md, 2.2): ``rsz``, ``crg`` and ``thr`` double from their low to their
high value, outermost first; a point with ``thr < crg`` or ``thr/crg`` above
the per-region cap (16, the script's ``SG_MAX_QUEUE``) is skipped; a point
whose ``(rsz*thr/crg + 64) * crg * ndevs`` KiB exceeds ``MemTotal`` is
recorded as ``ENOMEM`` and not run.  For every other point and action one
``sgp_dd`` per region per device runs at once::

    sgp_dd if=/dev/zero of=<dev> seek=<boundary + j*blocks> thr=<thr/crg>
           count=<blocks> bs=<block size> bpt=<rsz*1024/block size> time=1

with ``blocks = size_MiB * (1 MiB / block size) / crg``.  The aggregate is the
total KiB over the wall-clock time of all instances, min/max are the
instances' decimal MB/s converted to MiB/s, and an instance without a timing
line (either sg3_utils form) or with an error line counts as failed.

With ``point_s`` set (time-bounded points, ``point_budget.py``) each point moves, per device, what that time
allows at the rate the previous point measured, within the floor and the full size: the same sgp_dd commands
with ``count`` sized before the point runs, whole records for every thread of every region.

Differences from the script, on purpose: a block device is resolved to its
sg node through sysfs (never by matching ``sg_map`` text); a device without
one (NVMe, virtio, loop, dm) is driven as a block device with
``oflag=direct``/``iflag=direct`` and the record says which path was
measured; each device uses its own block size.

``engine: iokit`` runs the installed ``sgpdd-survey`` with the same
parameters and parses its summary with ``parse_sgpdd_survey``.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import stat
import time

from ansible_collections.lustre.iokit.plugins.module_utils import adaptive
from ansible_collections.lustre.iokit.plugins.module_utils import point_budget
from ansible_collections.lustre.iokit.plugins.module_utils import sample_extraction as extraction
from ansible_collections.lustre.iokit.plugins.module_utils.engines.contract import NativeSurvey
from ansible_collections.lustre.iokit.plugins.module_utils.engines.errors import EngineError
from ansible_collections.lustre.iokit.plugins.module_utils.option_problem import OptionProblem
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.sgp_dd import parse_sgp_dd
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.sgpdd_survey import parse_sgpdd_survey
from ansible_collections.lustre.iokit.plugins.module_utils.units import KIB, MIB, decimal_mb_s_to_mib_s
from ansible_collections.lustre.iokit.plugins.module_utils.versions import version_tuple

# The I/O kit's SG_MAX_QUEUE: threads per region above it are skipped.
SG_MAX_QUEUE = 16
DEFAULT_BOUNDARY_BLOCKS = 1024
ACTIONS = ('write', 'read')
# The I/O kit's per-thread memory allowance in the ENOMEM guard, KiB.
MEMORY_OVERHEAD_KIB = 64
PATH_SG = 'sg'
PATH_BLOCK = 'block'
# sg3_utils release whose sgp_dd prints "time to copy data" (docs/iokit-notes.md, 2.5).
SG3_UTILS_NEW_TIMING = (1, 48, 0)

SKIP_THR_BELOW_CRG = 'thr < crg: fewer threads than regions'
SKIP_PER_REGION_CAP = 'thr/crg > %d: more threads per region than the cap (max_threads_per_region)'


# --------------------------------------------------------------------------
# Devices


class Target:
    """One device of the survey: what the user named, what sgp_dd drives, its geometry."""

    def __init__(self, device, io_path, path_measured, block_size, capacity_blocks, name=None, block=None):
        self.device = device
        self.io_path = io_path
        self.path_measured = path_measured
        self.block_size = block_size
        self.capacity_blocks = capacity_blocks
        self.name = name
        self.block = block

    @property
    def capacity_bytes(self):
        return self.block_size * self.capacity_blocks

    def as_dict(self):
        return {'device': self.device, 'io_path': self.io_path, 'path_measured': self.path_measured,
                'block_size': self.block_size, 'capacity_bytes': self.capacity_bytes, 'block': self.block}


def _read_int(path):
    try:
        with open(path) as handle:
            return int(handle.read().strip())
    except (IOError, OSError, ValueError):
        return None


def parse_readcap_brief(text):
    """``sg_readcap -lb`` output (two hex numbers: block count, block size) as ``(blocks, size)`` or None."""
    numbers = re.findall(r'0x[0-9a-fA-F]+|\b\d+\b', text or '')
    if len(numbers) < 2:
        return None
    return int(numbers[0], 0), int(numbers[1], 0)


def sg_node_of(block_name, sysfs_root='/sys'):
    """The sg node name (``sg3``) of a SCSI block device from sysfs, or None (NVMe, virtio, loop, dm...)."""
    directory = os.path.join(sysfs_root, 'class', 'block', block_name, 'device', 'scsi_generic')
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return None
    return names[0] if names else None


def resolve_target(identity, runner, sysfs_root='/sys', dev_root='/dev', stat_func=os.stat):
    """Build the Target for a device that passed the safety checks (``safety.DeviceSafety.check``).

    Raises EngineError when the device cannot be resolved or sized.
    """
    device = identity['device']
    block = identity.get('block')
    if identity['kind'] == 'char':
        sg_path = identity['path']
    else:
        sg_name = sg_node_of(identity['name'], sysfs_root)
        sg_path = os.path.join(dev_root, sg_name) if sg_name else None
    if sg_path:
        try:
            is_char = stat.S_ISCHR(stat_func(sg_path).st_mode)
        except OSError:
            is_char = False
        if not is_char:
            # sgp_dd would create a regular file there and "measure" it
            raise EngineError('%s: sysfs names the sg node %s but it is not a character device; '
                              'load the sg module (modprobe sg) or give the device without it' % (device, sg_path))
        result = runner.run(['sg_readcap', '-lb', sg_path])
        geometry = parse_readcap_brief(result.stdout) if result.rc == 0 else None
        if not geometry:
            raise EngineError('%s: sg_readcap -lb %s failed (rc %s): %s' % (
                device, sg_path, result.rc, (result.stderr or result.stdout).strip()))
        blocks, block_size = geometry
        # The I/O kit falls back to 512 for a zero block size; so do we.
        return Target(device, sg_path, PATH_SG, block_size or 512, blocks, identity['name'], block)
    queue = os.path.join(sysfs_root, 'class', 'block', identity['name'])
    block_size = _read_int(os.path.join(queue, 'queue', 'logical_block_size'))
    if block_size is None:
        # partitions have no queue directory of their own; their disk has
        block_size = _read_int(os.path.join(os.path.dirname(os.path.realpath(queue)), 'queue', 'logical_block_size'))
    sectors = _read_int(os.path.join(queue, 'size'))
    if not block_size or sectors is None:
        raise EngineError('%s: cannot read its size and logical block size from %s' % (device, queue))
    # sysfs "size" counts 512-byte sectors whatever the logical block size
    return Target(device, identity['path'], PATH_BLOCK, block_size, sectors * 512 // block_size,
                  identity['name'], block)


# --------------------------------------------------------------------------
# The plan


def _doubling(low, high):
    value = low
    while value <= high:
        yield value
        value *= 2


def sweep(rszlo, rszhi, crglo, crghi, thrlo, thrhi, max_threads_per_region=SG_MAX_QUEUE):
    """Every sweep point in the I/O kit's order: ``{'rsz_kib', 'crg', 'thr', 'skip'}`` (skip: reason or None)."""
    points = []
    for rsz in _doubling(rszlo, rszhi):
        for crg in _doubling(crglo, crghi):
            for thr in _doubling(thrlo, thrhi):
                skip = None
                if thr < crg:
                    skip = SKIP_THR_BELOW_CRG
                elif thr // crg > max_threads_per_region:
                    skip = SKIP_PER_REGION_CAP % max_threads_per_region
                points.append({'rsz_kib': rsz, 'crg': crg, 'thr': thr, 'skip': skip})
    return points


class PointGeometry:
    """The sgp_dd arithmetic of one point for one device.

    ``records_per_region``: None for the I/O kit's amount, ``size_mib`` over the regions; a time-bounded point
    gives whole records (``rsz_kib`` each) instead, so that every device moves the same bytes whatever its block size.
    """

    def __init__(self, target, size_mib, rsz_kib, crg, records_per_region=None):
        self.block_size = target.block_size
        self.bpt = rsz_kib * KIB // target.block_size
        if records_per_region is None:
            self.blocks = size_mib * (MIB // target.block_size) // crg
        else:
            self.blocks = records_per_region * self.bpt
        self.rsz_kib = self.bpt * target.block_size // KIB
        self.size_kib = target.block_size * self.blocks * crg // KIB


def sgp_dd_argv(action, target, region, geometry, thr_per_region, boundary):
    """The argument list of the ``sgp_dd`` for ``region`` of ``target``."""
    offset = boundary + region * geometry.blocks
    if action == 'write':
        argv = ['sgp_dd', 'if=/dev/zero', 'of=' + target.io_path, 'seek=%d' % offset]
    else:
        argv = ['sgp_dd', 'if=' + target.io_path, 'of=/dev/null', 'skip=%d' % offset]
    argv += ['thr=%d' % thr_per_region, 'count=%d' % geometry.blocks, 'bs=%d' % geometry.block_size,
             'bpt=%d' % geometry.bpt, 'time=1']
    if target.path_measured == PATH_BLOCK:
        # the page cache would otherwise measure memory, not the device
        argv.append('oflag=direct' if action == 'write' else 'iflag=direct')
    return argv


def memory_needed_kib(rsz_kib, crg, thr, ndevs):
    """The I/O kit's memory estimate for one point, KiB (integer arithmetic as in bash)."""
    return (rsz_kib * thr // crg + MEMORY_OVERHEAD_KIB) * crg * ndevs


def prefix_line(ndevs, size_kib, rsz_kib, crg, thr):
    """The summary line prefix as sgpdd-survey prints it (totals over devices)."""
    return 'dev %2d sz %8dK rsz %4dK crg %5d thr %5d ' % (ndevs, size_kib, rsz_kib, crg * ndevs, thr * ndevs)


class SgpddSurvey(NativeSurvey):
    """Plans and runs one sgpdd survey on this node.

    ``context``: the engines' EngineContext (contract.py), of which the
    survey uses the runner, the host and both clocks (the monotonic one
    times the aggregate, the wall clock stamps each test's
    ``start_time``/``end_time``); ``targets``: resolved Targets; ``raw``: an
    object with ``summary(text)`` and ``detail(text)`` (or None) that
    receives the I/O kit's summary lines and every instance's stderr.
    """

    def __init__(self, context, targets, size_mib, actions=ACTIONS, rszlo=1024, rszhi=1024, crglo=1, crghi=256,
                 thrlo=1, thrhi=4096, boundary=DEFAULT_BOUNDARY_BLOCKS, max_threads_per_region=SG_MAX_QUEUE,
                 mem_total_kib=None, raw=None, point_s=None, point_min_mib=None, floor_reason=None):
        self.context = context
        self.runner = context.runner
        self.targets = list(targets)
        self.size_mib = size_mib
        self.actions = list(actions)
        self.rszlo, self.rszhi = rszlo, rszhi
        self.crglo, self.crghi = crglo, crghi
        self.thrlo, self.thrhi = thrlo, thrhi
        self.boundary = boundary
        self.max_threads_per_region = max_threads_per_region
        self.mem_total_kib = mem_total_kib
        self.raw = raw
        self.clock = context.clock
        self.wall_clock = context.wall_clock
        self.host = context.host
        # Full unless the caller sets an adaptive one: the thread sweep of each (rsz, crg) may then stop once
        # the devices saturate.
        self.inner_sweeps = adaptive.InnerSweeps()
        # Points an earlier attempt of the run measured, (rsz_kib, crg, thr) to its record: not measured again.
        self.done_points = {}
        # Time-bounded points (point_budget.py): seconds per action of a point, None for the I/O kit's fixed size;
        # the floor in MiB per device and where it came from (the module derives the default).
        self.point_s = point_s
        self.point_min_mib = point_min_mib
        self.floor_reason = floor_reason
        self.sizing_rates = point_budget.SizingRates()
        self.errors = []
        self.aborted = None

    # -- planning ----------------------------------------------------------------

    def problems(self):
        """Reasons the survey cannot run as asked (checked before any I/O), each an OptionProblem."""
        problems = []
        for target in self.targets:
            if (self.rszlo * KIB) % target.block_size:
                problems.append(OptionProblem('rszlo', '%d KiB is not a multiple of the block size of %s (%d bytes)'
                                              % (self.rszlo, target.device, target.block_size)))
            needed = self.boundary * target.block_size + self.size_mib * MIB
            if needed > target.capacity_bytes:
                problems.append(OptionProblem(
                    'size_mib', '%s holds %d bytes, but {boundary} (%d blocks) plus {size_mib} (%d MiB) need %d; '
                    'reduce {size_mib}' % (target.device, target.capacity_bytes, self.boundary, self.size_mib, needed),
                    mentions=('boundary', 'size_mib')))
        return problems + self._bounded_problems()

    def _bounded_problems(self):
        """The time-bounded point's settings: a positive time, a floor of at least 1 MiB that every device holds."""
        problems = []
        if self.point_s is not None and self.point_s <= 0:
            problems.append(OptionProblem('point_s', 'must be more than 0 seconds', got='%g' % self.point_s))
        if self.point_min_mib is not None and self.point_min_mib < 1:
            problems.append(OptionProblem('point_min_mib', 'must be at least 1', got='%d' % self.point_min_mib))
        if problems or self.point_s is None or not self.targets:
            return problems
        # A bounded point moves at most its full size (checked above as size_mib) or its floor in whole records,
        # which may be more.
        floored = [self._at_floor(entry) for entry in self.points() if entry['skip'] is None]
        largest = max(floored, key=lambda entry: entry['size_kib']) if floored else None
        if largest is None or largest['size_kib'] <= self.size_mib * KIB * len(self.targets):
            return problems
        for target, geometry in zip(self.targets, self._geometries(largest)):
            needed = (self.boundary + geometry.blocks * largest['crg']) * target.block_size
            if needed > target.capacity_bytes:
                problems.append(OptionProblem(
                    'point_min_mib', '%s holds %d bytes, but {boundary} (%d blocks) plus a bounded point\'s floor '
                    '(%s; %d MiB once rounded up to a %d KiB record for every thread) need %d; lower {point_min_mib}'
                    % (target.device, target.capacity_bytes, self.boundary, self.floor_reason or
                       'point_min_mib %d MiB per device' % self.point_min_mib, geometry.size_kib // KIB,
                       largest['rsz_kib'], needed),
                    mentions=('boundary', 'point_min_mib')))
        return problems

    def _geometries(self, point):
        return [PointGeometry(target, self.size_mib, point['rsz_kib'], point['crg'], point.get('records_per_region'))
                for target in self.targets]

    def envelope_fields(self):
        return adaptive.envelope_fields(self.inner_sweeps, self.points())

    def plan(self):
        """The plan: every sweep point (``points()``), those skipped, the bytes written and read on each device and
        the adaptive sweep's settings and bounds."""
        points = self.points()
        sweeps = self.inner_sweeps
        plan = {
            'points': points,
            'skipped_points': [point for point in points if point['skip']],
            'bytes_written_per_device': self.bytes_written_per_device(),
            'bytes_read_per_device': self.bytes_read_per_device(),
            'sweep': adaptive.plan_fields(sweeps.mode, sweeps.min_gain_pct, sweeps.patience,
                                          adaptive.inner_sweep_sizes(points, 'thr', ('rsz_kib', 'crg'))),
        }
        if self.point_s is not None:
            plan['bounded'] = self.bounded_plan(points)
        if self.point_min_mib is not None:
            plan['point_sizing'] = point_budget.point_sizing(self.size_mib, self.point_min_mib, self.floor_reason,
                                                             self.point_s)
        return plan

    def bounded_plan(self, points):
        """What time-bounded points change in the plan: the time and floor, and the worst case.

        A point moves ``max(floor, min(full, point_s x rate))`` per device (point_budget.py), so at worst every
        point moves the larger of its full size and its floor in whole records; each action aims at ``point_s``,
        but a slow point whose floor takes longer lasts as long as its floor takes.
        """
        runnable = [entry for entry in points if entry['skip'] is None]
        ndevs = max(len(self.targets), 1)
        worst_kib = sum(max(entry['size_kib'], self._at_floor(entry)['size_kib']) // ndevs for entry in runnable)
        full_kib = sum(entry['size_kib'] // ndevs for entry in runnable)
        return {'point_s': self.point_s, 'point_min_mib': self.point_min_mib, 'floor_reason': self.floor_reason,
                'target_duration_s': self.point_s * len(self.actions) * len(runnable),
                'worst_case_kib_per_device': worst_kib * len(self.actions),
                'full_kib_per_device': full_kib * len(self.actions)}

    def points(self):
        """Every sweep point with what would happen: run, ENOMEM or skip (and why)."""
        ndevs = len(self.targets)
        planned = []
        for point in sweep(self.rszlo, self.rszhi, self.crglo, self.crghi, self.thrlo, self.thrhi,
                           self.max_threads_per_region):
            entry = dict(point)
            entry['enomem'] = False
            if point['skip'] is None:
                geometries = self._geometries(point)
                entry['rsz_kib'] = geometries[0].rsz_kib
                entry['size_kib'] = sum(geometry.size_kib for geometry in geometries)
                entry['thr_per_region'] = point['thr'] // point['crg']
                entry['instances'] = ndevs * point['crg']
                entry['memory_kib'] = memory_needed_kib(geometries[0].rsz_kib, point['crg'], point['thr'], ndevs)
                if self.mem_total_kib is not None and entry['memory_kib'] > self.mem_total_kib:
                    entry['enomem'] = True
                    entry['skip'] = 'ENOMEM: needs %d KiB, MemTotal is %d KiB' % (entry['memory_kib'],
                                                                                  self.mem_total_kib)
            planned.append(entry)
        return planned

    def bytes_written_per_device(self):
        """Bytes each device receives over the whole sweep (0 without ``write``)."""
        return self._bytes_per_device('write')

    def bytes_read_per_device(self):
        """Bytes read from each device over the whole sweep (0 without ``read``)."""
        return self._bytes_per_device('read')

    def _bytes_per_device(self, action):
        written = dict((target.device, 0) for target in self.targets)
        if action not in self.actions:
            return written
        for entry in self.points():
            if entry['skip'] is None:
                for target, geometry in zip(self.targets, self._geometries(entry)):
                    written[target.device] += geometry.size_kib * KIB
        return written

    # -- time-bounded points ---------------------------------------------------------

    def _granule_mib(self, entry):
        """The unit a bounded amount is rounded up to: a record for every thread of the device.  sgp_dd's threads
        share their region's records, so fewer would leave threads idle and the point would not measure its
        thread count."""
        return entry['rsz_kib'] * entry['thr'] / float(KIB)

    def _sized(self, entry, amount_mib):
        """The point's entry moving ``amount_mib`` per device: the I/O kit's geometry at the full size, else whole
        records in every region."""
        sized = dict(entry)
        if amount_mib != self.size_mib:
            sized['records_per_region'] = int(round(amount_mib * KIB / (entry['rsz_kib'] * entry['crg'])))
        sized['size_kib'] = sum(geometry.size_kib for geometry in self._geometries(sized))
        return sized

    def _at_floor(self, entry):
        """The point's entry moving its floor in whole records, the least a bounded point moves (the survey's
        first point, which has no rate yet, moves just that)."""
        size = point_budget.size_point('sgpdd', self.size_mib, self.point_min_mib, self.point_s,
                                       granule=self._granule_mib(entry))
        return self._sized(entry, size.amount)

    def _bounded(self, entry):
        """``(entry, size, rate)``: the point's entry with the amount a bounded point moves, its PointSize and the
        rate per device it was sized from (None for the survey's first point).

        Every device of the host moves the same amount, sized from the slowest device's rate, so that their figures
        compare and the slowest one, which ends the action, takes the point's time; each action gets an equal share
        of the time the survey has left.
        """
        rate = self.sizing_rates.rate_for(_outer_key(entry), entry['thr'])
        remaining_s = self.runner.remaining_s()
        time_left_s = remaining_s / len(self.actions) if remaining_s is not None else None
        size = point_budget.size_point('sgpdd', self.size_mib, self.point_min_mib, self.point_s, rate, time_left_s,
                                       self._granule_mib(entry))
        return self._sized(entry, size.amount), size, rate

    def commands(self, action, point):
        """Every sgp_dd argument list of ``action`` at ``point``, device by device, region by region."""
        thr_per_region = point['thr'] // point['crg']
        argvs = []
        for target, geometry in zip(self.targets, self._geometries(point)):
            for region in range(point['crg']):
                argvs.append(sgp_dd_argv(action, target, region, geometry, thr_per_region, self.boundary))
        return argvs

    # -- running -------------------------------------------------------------------

    def _raw(self, kind, text):
        if self.raw is not None:
            getattr(self.raw, kind)(text)

    def header(self, date_text):
        return '%s sgpdd-survey on %s from %s' % (date_text, ' '.join(target.device for target in self.targets),
                                                  self.host or os.uname()[1])

    def _measure(self, action, point, size_kib):
        argvs = self.commands(action, point)
        start_time = round(self.wall_clock(), 3)
        started = self.clock()
        results = self.runner.run_many(argvs)
        elapsed = self.clock() - started
        end_time = round(self.wall_clock(), 3)
        interrupted = any(result.timed_out for result in results)
        self._raw('detail', '=====> %s\n' % action)
        failed = 0
        rates = []
        per_device = dict((target.device, {'device': target.device, 'io_path': target.io_path,
                                           'path_measured': target.path_measured, 'failed': 0,
                                           'mib_s': None, 'min_mib_s': None, 'max_mib_s': None})
                          for target in self.targets)
        index = 0
        for target in self.targets:
            for _region in range(point['crg']):
                result = results[index]
                index += 1
                self._raw('detail', result.stderr if result.stderr.endswith('\n') or not result.stderr
                          else result.stderr + '\n')
                parsed = parse_sgp_dd(result.stderr)
                device = per_device[target.device]
                if parsed['mb_s'] is None or parsed['errors'] or result.timed_out:
                    failed += 1
                    device['failed'] += 1
                    device['mib_s'] = None
                    continue
                rate = decimal_mb_s_to_mib_s(parsed['mb_s'])
                rates.append(rate)
                # the device's own figure, its regions side by side: what the stop rule judges per device
                if not device['failed']:
                    device['mib_s'] = rate if device['mib_s'] is None else device['mib_s'] + rate
                device['min_mib_s'] = rate if device['min_mib_s'] is None else min(device['min_mib_s'], rate)
                device['max_mib_s'] = rate if device['max_mib_s'] is None else max(device['max_mib_s'], rate)
        test = {'mib_s': None, 'min_mib_s': None, 'max_mib_s': None, 'failed': failed,
                'elapsed_s': round(elapsed, 6), 'start_time': start_time, 'end_time': end_time,
                'devices': [per_device[target.device] for target in self.targets]}
        if interrupted:
            test['status'] = 'incomplete'
            test['failed'] = None
            self._raw('summary', '%s ' % action)
        elif failed:
            test['status'] = 'failed'
            self._raw('summary', '%s %d failed ' % (action, failed))
        elif elapsed > 0:
            aggregate, slowest, fastest = size_kib / elapsed / KIB, min(rates), max(rates)
            test.update(status='ok', mib_s=aggregate, min_mib_s=slowest, max_mib_s=fastest)
            self._raw('summary', '%s %7.2f  [ %7.2f, %7.2f]  ' % (action, aggregate, slowest, fastest))
        else:
            test['status'] = 'failed'
            self._raw('summary', '%s %d failed ' % (action, len(results)))
        return test, interrupted

    def run(self):
        """Run the sweep, yielding one record per measured (or ENOMEM) point.

        Stops early when the runner's deadline passes or a stop is requested:
        ``aborted`` then holds the reason and ``errors`` the point it stopped at.
        """
        ndevs = len(self.targets)
        self._raw('summary', self.header(time.strftime('%a %b %d %H:%M:%S %Z %Y')) + '\n')
        for entry in self.points():
            if entry['skip'] and not entry['enomem']:
                continue
            earlier = self.done_points.get((entry['rsz_kib'], entry['crg'], entry['thr']))
            if earlier is not None:
                # the module resumes: the point is in the envelope already, its figures still count
                if not entry['enomem'] and not self.inner_sweeps.stopped(_outer_key(entry), entry['thr']):
                    self.inner_sweeps.measured(_outer_key(entry), entry['thr'], _sweep_figures(earlier, entry))
                # and its rate sizes the next bounded point, as in the uninterrupted run
                self.sizing_rates.measured(_outer_key(entry), entry['thr'], slowest_device_mib_s(earlier))
                continue
            stopped = self.inner_sweeps.stopped(_outer_key(entry), entry['thr'])
            if stopped:
                self.inner_sweeps.skip(_point_key(entry), stopped)
                continue
            if self.runner.expired():
                self.aborted = self.runner.stop_reason
                self.errors.append({'point': _point_key(entry), 'message': 'not run: %s' % self.aborted})
                return
            size = None
            if self.point_s is not None and not entry['enomem']:
                entry, size, sized_from = self._bounded(entry)
                if size.refused is not None:
                    # never cut short into a figure below its floor: the point fails, the sweep goes on
                    self.errors.append({'point': _point_key(entry), 'message': 'not run: %s' % size.refused})
                    continue
            prefix = prefix_line(ndevs, entry['size_kib'], entry['rsz_kib'], entry['crg'], entry['thr'])
            self._raw('summary', prefix)
            self._raw('detail', '==============> %s\n' % prefix)
            record = {'dev': ndevs, 'size_kib': entry['size_kib'], 'rsz_kib': entry['rsz_kib'],
                      'crg': entry['crg'] * ndevs, 'thr': entry['thr'] * ndevs,
                      'crg_per_dev': entry['crg'], 'thr_per_dev': entry['thr'],
                      'thr_per_region': entry['thr_per_region'], 'host': self.host,
                      'devices': [target.device for target in self.targets],
                      'path_measured': _path_measured(self.targets),
                      'enomem': entry['enomem'], 'tests': {}}
            if size is not None:
                record.update(bounded=True, point_s=self.point_s, moved_mib_per_device=entry['size_kib'] / ndevs / KIB,
                              point_limit=size.limit, sized_from_mib_s=sized_from)
            if entry['enomem']:
                self._raw('detail', 'ENOMEM on %s\n' % (self.host or 'localhost'))
                self._raw('summary', 'ENOMEM\n')
                yield record
                continue
            for action in self.actions:
                test, interrupted = self._measure(action, entry, entry['size_kib'])
                record['tests'][action] = test
                if interrupted:
                    self.aborted = self.runner.stop_reason or 'stopped'
                    self.errors.append({'point': _point_key(entry),
                                        'message': '%s interrupted: %s' % (action, self.aborted)})
                    self._raw('summary', '\n')
                    if any(test['status'] != 'incomplete' for test in record['tests'].values()):
                        yield record
                    return
                if test['status'] == 'failed':
                    self.errors.append({'point': _point_key(entry, action),
                                        'message': '%s: %s of %d sgp_dd instances failed; see raw_output'
                                                   % (action, test['failed'], entry['instances'])})
            self._raw('summary', '\n')
            self.inner_sweeps.measured(_outer_key(entry), entry['thr'], _sweep_figures(record, entry))
            if size is not None:
                record['elapsed_s'] = round(sum(test['elapsed_s'] for test in record['tests'].values()), 6)
            self.sizing_rates.measured(_outer_key(entry), entry['thr'], slowest_device_mib_s(record))
            yield record


def slowest_device_mib_s(record):
    """What sizes the next bounded point: MiB/s per device in the slowest action of a measured point.

    Every device moved the point's amount and an action lasts until its slowest device is done, so the amount per
    device over the action's time is the slowest device's rate, with sgp_dd's start included (its own figures
    leave that out, and the point's time is what the rate is to predict).
    """
    rates = [test['mib_s'] / float(record['dev']) for test in (record.get('tests') or {}).values()
             if test.get('status') == 'ok' and test.get('mib_s')]
    return min(rates) if rates else None


def _outer_key(entry):
    return {'rsz_kib': entry['rsz_kib'], 'crg': entry['crg']}


def _sweep_figures(record, entry):
    """The stop rule's figures of a measured point: each device's own curve (the sum of its regions' sgp_dd rates,
    its min/max single instances' rates, one of its ``crg``), so that a LUN slower than its peers does not read as
    noise; a record without per-device figures (written by an earlier version) is judged per test, its min/max
    single instances' rates of the whole host."""
    tests = record.get('tests') or {}
    components = {}
    for action, test in tests.items():
        for device in test.get('devices') or ():
            if not isinstance(device, dict) or 'mib_s' not in device:
                return adaptive.figures(tests, entry['instances'])
            ok = test.get('status') == 'ok' and not device.get('failed')
            components.setdefault(device['device'], {})[action] = {
                'status': 'ok' if ok else 'failed', 'mib_s': device['mib_s'],
                'min_mib_s': device.get('min_mib_s'), 'max_mib_s': device.get('max_mib_s')}
    return adaptive.figures(tests, entry['instances'], components=components, component_scale=entry['crg'])


def _point_key(entry, action=None):
    point = {'rsz_kib': entry['rsz_kib'], 'crg': entry['crg'], 'thr': entry['thr']}
    if action:
        point['action'] = action
    return point


def _path_measured(targets):
    kinds = sorted(set(target.path_measured for target in targets))
    return kinds[0] if len(kinds) == 1 else 'mixed'


# --------------------------------------------------------------------------
# engine: iokit


def iokit_environment(devices, size_mib, actions, rszlo, rszhi, crglo, crghi, thrlo, thrhi, boundary, rslt):
    """The environment that makes the installed sgpdd-survey run the same sweep."""
    return {'scsidevs': ' '.join(devices), 'size': str(size_mib), 'actions': ' '.join(actions),
            'rszlo': str(rszlo), 'rszhi': str(rszhi), 'crglo': str(crglo), 'crghi': str(crghi),
            'thrlo': str(thrlo), 'thrhi': str(thrhi), 'boundary': str(boundary), 'rslt': rslt}


def run_iokit(runner, script, devices, rslt, sg3_utils_version=None, **sweep_parameters):
    """Run the node's ``sgpdd-survey`` and parse its summary.

    Returns ``(records, errors, result)``; ``errors`` carries the script's
    failure and the sg3_utils >= 1.48 warning (every instance counted failed).
    """
    env = iokit_environment(devices, rslt=rslt, **sweep_parameters)
    result = runner.run(['bash', script], env=env)
    summary_path = rslt + '.summary'
    try:
        with open(summary_path) as handle:
            summary = handle.read()
    except (IOError, OSError):
        summary = result.stdout
    records = parse_sgpdd_survey(summary)
    for record in records:
        record['path_measured'] = PATH_SG
    errors = []
    if result.timed_out:
        errors.append({'point': None, 'message': 'sgpdd-survey stopped: %s' % (runner.stop_reason or 'timeout')})
    elif result.rc != 0:
        errors.append({'point': None, 'message': 'sgpdd-survey exited with rc %s: %s' % (
            result.rc, (result.stdout + result.stderr).strip()[-2000:])})
    if (version_tuple(sg3_utils_version) or ()) >= SG3_UTILS_NEW_TIMING:
        errors.append({'point': None, 'message': 'sg3_utils %s prints "time to copy data", which sgpdd-survey does '
                                                 'not recognise: it counts every sgp_dd instance as failed; use '
                                                 'engine: native' % sg3_utils_version})
    return records, errors, result


# --------------------------------------------------------------------------
# Environment facts


def sg3_utils_version(runner):
    """The installed sg3_utils package version (``1.46``) or None, from dpkg or rpm."""
    for argv in (['dpkg-query', '-W', '-f=${Version}', 'sg3-utils'], ['rpm', '-q', '--qf', '%{VERSION}', 'sg3_utils']):
        result = runner.run(argv)
        version = version_tuple(result.stdout) if result.rc == 0 else None
        if version:
            return '%d.%d' % version[:2]
    return None


def mem_total_kib(meminfo_path='/proc/meminfo'):
    """MemTotal in KiB (what the I/O kit's guard compares with), or None."""
    try:
        with open(meminfo_path) as handle:
            for line in handle:
                if line.startswith('MemTotal:'):
                    return int(line.split()[1])
    except (IOError, OSError, ValueError, IndexError):
        pass
    return None


QUEUE_SETTINGS = ('scheduler', 'max_sectors_kb', 'max_hw_sectors_kb', 'nr_requests', 'read_ahead_kb',
                  'rotational', 'logical_block_size', 'physical_block_size', 'write_cache')


def _read_text(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except (IOError, OSError):
        return None


# /dev/disk/by-id names that identify the device itself, best first: the WWN (or an NVMe EUI) is the disk's own,
# then the device-mapper and MD UUIDs (a multipath map or an array), then the names udev makes from the vendor's
# serial.  A name is never used from by-path, which changes with the cabling.
BY_ID_PREFERENCE = ('wwn-', 'nvme-eui.', 'dm-uuid-', 'md-uuid-', 'scsi-3', 'nvme-', 'scsi-', 'ata-', 'usb-')


def stable_device_id(name, sysfs_root='/sys', dev_root='/dev'):
    """An id of block (or sg) device ``name`` that survives a reboot and a re-cabling, or None.

    ``wwid:<WWID>`` (sysfs ``device/wwid``, or ``wwid`` of an NVMe namespace), else ``dm-uuid:<UUID>`` (a
    device-mapper target: multipath, LVM), else ``by-id:<name>`` (the best of its ``/dev/disk/by-id`` links, in
    BY_ID_PREFERENCE order); a loop device has none of these and is ``loop:<backing file>`` (its file is what it
    measures; the path is only unique on its host).  Never the kernel name (``sdb``, ``loop0``), which the next boot
    may give another disk.
    """
    if not name:
        return None
    block = os.path.join(sysfs_root, 'class', 'block', name)
    backing = _read_text(os.path.join(block, 'loop', 'backing_file'))
    if backing:
        return 'loop:' + backing
    for path in (os.path.join(block, 'device', 'wwid'), os.path.join(block, 'wwid'),
                 os.path.join(sysfs_root, 'class', 'scsi_generic', name, 'device', 'wwid')):
        wwid = _read_text(path)
        if wwid:
            # Some devices pad the WWID with runs of spaces (t10 ids of ATA disks).
            return 'wwid:' + ' '.join(wwid.split())
    dm_uuid = _read_text(os.path.join(block, 'dm', 'uuid'))
    if dm_uuid:
        return 'dm-uuid:' + dm_uuid
    links = []
    by_id = os.path.join(dev_root, 'disk', 'by-id')
    for link in _list_names(by_id):
        if os.path.basename(os.path.realpath(os.path.join(by_id, link))) == name:
            rank = next((index for index, prefix in enumerate(BY_ID_PREFERENCE) if link.startswith(prefix)),
                        len(BY_ID_PREFERENCE))
            links.append((rank, link))
    return 'by-id:' + min(links)[1] if links else None


def device_facts(target, sysfs_root='/sys', dev_root='/dev'):
    """Model, size, queue settings and stable id of a target's block device at run time (values as sysfs prints
    them)."""
    facts = target.as_dict()
    name = target.block or target.name
    base = os.path.join(sysfs_root, 'class', 'block', name or '')
    # What the history keys the LUN by across runs (docs/history.md): the kernel name may change at the next boot.
    stable_id = stable_device_id(name, sysfs_root, dev_root)
    if stable_id is None and target.name and target.name != name:
        stable_id = stable_device_id(target.name, sysfs_root, dev_root)  # an sg node's own sysfs entry
    facts['stable_id'] = stable_id
    facts['vendor'] = _read_text(os.path.join(base, 'device', 'vendor'))
    facts['model'] = _read_text(os.path.join(base, 'device', 'model'))
    facts['queue'] = dict((setting, _read_text(os.path.join(base, 'queue', setting))) for setting in QUEUE_SETTINGS)
    # An MD array or a device-mapper target measures its members too: say which they are.
    facts['slaves'] = _list_names(os.path.join(base, 'slaves'))
    facts['md_level'] = _read_text(os.path.join(base, 'md', 'level'))
    return facts


def _list_names(path):
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def collect_environment(runner, targets, sysfs_root='/sys', meminfo_path='/proc/meminfo', dev_root='/dev'):
    """Facts for the envelope's ``environment``: sg3_utils, kernel, memory and every device."""
    version = runner.run(['sgp_dd', '-V'])
    return {
        'sgp_dd_version': (version.stdout + version.stderr).strip() or None,
        'sg3_utils': sg3_utils_version(runner),
        'kernel': os.uname()[2],
        'mem_total_kib': mem_total_kib(meminfo_path),
        'devices': [device_facts(target, sysfs_root, dev_root) for target in targets],
    }


# --------------------------------------------------------------------------
# The report's samples


def record_samples(record, ctx):
    """One record's samples for the report (``sample_extraction``): each test's rate at its point, and with several
    LUNs in the record each LUN's own lower bound."""
    if record.get('enomem'):
        ctx['problems'].append('ENOMEM at %s' % extraction.point_label(extraction.make_point(record)))
        return
    devices = record.get('devices') if isinstance(record.get('devices'), list) else []
    per_lun = len(devices) > 1 and extraction.is_finite_number(record.get('crg_per_dev'))
    yield from extraction.tests_samples(record, 'mib_s', extraction.UNIT_MIB_S,
                                        ('dev', 'size_kib', 'rsz_kib', 'crg', 'thr'),
                                        () if per_lun else ('target', 'devices'), ctx)
    if not per_lun:
        return
    # Per LUN (native engine): the slowest of its regions' sgp_dd rates times the regions, a lower bound of the
    # LUN's bandwidth that is exact with one region, compared at the per-LUN sweep point.
    regions = record['crg_per_dev']
    point = extraction.make_point({'size_kib': record.get('size_kib'), 'rsz_kib': record.get('rsz_kib'),
                                   'crg': regions, 'thr': record.get('thr_per_dev')})
    tests = record.get('tests') if isinstance(record.get('tests'), dict) else {}
    for test, result in tests.items():
        if not isinstance(result, dict) or result.get('status') != 'ok':
            continue
        for device in result.get('devices') or ():
            if isinstance(device, dict) and not device.get('failed') and \
                    extraction.is_finite_number(device.get('min_mib_s')):
                yield from extraction.component_samples(
                    {test: {'mib_s': device['min_mib_s'] * regions, 'status': 'ok'}}, 'mib_s',
                    extraction.UNIT_MIB_S, str(device.get('device')), point, record)
