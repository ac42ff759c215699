# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The sgpdd engine against a fake runner: commands, sweep order, skips, ENOMEM, arithmetic, timeouts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import adaptive
from ansible_collections.lustre.iokit.plugins.module_utils.engines import sgpdd
from ansible_collections.lustre.iokit.plugins.module_utils.engines.contract import EngineContext
from ansible_collections.lustre.iokit.plugins.module_utils.engines.errors import EngineError
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.sgpdd_survey import parse_sgpdd_survey
from ansible_collections.lustre.iokit.plugins.module_utils.runner import CommandResult
from ansible_collections.lustre.iokit.tests.unit.fakes import FakeClock, FakeNode, RawSink

OLD_TIMING = 'time to transfer data was %.6f secs, %.2f MB/sec\n8192+0 records in\n8192+0 records out\n'
NEW_TIMING = 'time to copy data: %.6f secs at %.2f MB/sec\n8192+0 records in\n8192+0 records out\n'


class FakeRunner(FakeNode):
    """Answers every sgp_dd with the next stderr of ``outputs`` (cycled) and advances the clock."""

    def __init__(self, clock, outputs=None, seconds_per_batch=2.0, stop_after_batches=None):
        self.clock = clock
        self.outputs = outputs or [OLD_TIMING % (1.0, 100.0)]
        self.seconds_per_batch = seconds_per_batch
        self.stop_after_batches = stop_after_batches
        self.batches = []
        self.stop_reason = None
        self._next = 0

    def run_many(self, argvs, env=None, cwd=None):
        self.batches.append([list(argv) for argv in argvs])
        self.clock.now += self.seconds_per_batch
        interrupted = self.stop_after_batches is not None and len(self.batches) > self.stop_after_batches
        if interrupted:
            self.stop_reason = 'timeout'
        results = []
        for argv in argvs:
            if interrupted:
                results.append(CommandResult(argv, -15, '', '', self.seconds_per_batch, timed_out=True))
                continue
            stderr = self.outputs[self._next % len(self.outputs)]
            self._next += 1
            results.append(CommandResult(argv, 0, '', stderr, self.seconds_per_batch))
        return results


def block_target(name, block_size=512, mib=64):
    return sgpdd.Target('/dev/' + name, '/dev/' + name, sgpdd.PATH_BLOCK, block_size,
                        mib * 1024 * 1024 // block_size, name, name)


def sg_target(name, sg, block_size=512, mib=64):
    return sgpdd.Target('/dev/' + name, '/dev/' + sg, sgpdd.PATH_SG, block_size,
                        mib * 1024 * 1024 // block_size, name, name)


WALL_ORIGIN = 1800000000.0


def survey(runner, targets, clock, make_context=EngineContext, **kwargs):
    kwargs.setdefault('size_mib', 4)
    # The wall clock moves with the fake monotonic one, from another origin, as the real ones do.
    wall_clock = kwargs.pop('wall_clock', lambda: WALL_ORIGIN + clock.now)
    context = make_context(runner, None, None, None, 'oss1', clock=clock, wall_clock=wall_clock)
    return sgpdd.SgpddSurvey(context, targets, raw=kwargs.pop('raw', None), **kwargs)


def test_sweep_order_and_skips_follow_the_iokit_loops():
    points = sgpdd.sweep(1024, 2048, 1, 4, 1, 8, max_threads_per_region=2)
    assert [(p['rsz_kib'], p['crg'], p['thr']) for p in points][:8] == [
        (1024, 1, 1), (1024, 1, 2), (1024, 1, 4), (1024, 1, 8),
        (1024, 2, 1), (1024, 2, 2), (1024, 2, 4), (1024, 2, 8)]
    assert len(points) == 2 * 3 * 4
    runs = [(p['crg'], p['thr']) for p in points if p['rsz_kib'] == 1024 and p['skip'] is None]
    assert runs == [(1, 1), (1, 2), (2, 2), (2, 4), (4, 4), (4, 8)]
    skipped = dict(((p['crg'], p['thr']), p['skip']) for p in points if p['rsz_kib'] == 1024 and p['skip'])
    assert skipped[(2, 1)] == sgpdd.SKIP_THR_BELOW_CRG
    assert skipped[(1, 4)] == sgpdd.SKIP_PER_REGION_CAP % 2


def test_default_cap_is_sg_max_queue():
    points = sgpdd.sweep(1024, 1024, 1, 1, 16, 32)
    assert [p['skip'] is None for p in points] == [True, False]


def test_exact_sgp_dd_commands_for_a_sweep():
    clock = FakeClock()
    runner = FakeRunner(clock)
    targets = [block_target('loop0'), sg_target('sdb', 'sg1', block_size=4096)]
    engine = survey(runner, targets, clock, size_mib=8, crglo=1, crghi=2, thrlo=2, thrhi=2, rszlo=1024,
                    rszhi=1024, actions=['write', 'read'], boundary=1024)
    records = list(engine.run())
    assert len(records) == 2
    # point (crg 1, thr 2): write then read, each device's regions started together
    assert runner.batches[0] == [
        ['sgp_dd', 'if=/dev/zero', 'of=/dev/loop0', 'seek=1024', 'thr=2', 'count=16384', 'bs=512', 'bpt=2048',
         'time=1', 'oflag=direct'],
        ['sgp_dd', 'if=/dev/zero', 'of=/dev/sg1', 'seek=1024', 'thr=2', 'count=2048', 'bs=4096', 'bpt=256',
         'time=1'],
    ]
    assert runner.batches[1][0] == ['sgp_dd', 'if=/dev/loop0', 'of=/dev/null', 'skip=1024', 'thr=2', 'count=16384',
                                    'bs=512', 'bpt=2048', 'time=1', 'iflag=direct']
    # point (crg 2, thr 2): blocks per region = size * (1 MiB / bs) / crg, contiguous after the boundary
    assert [argv[3] for argv in runner.batches[2]] == ['seek=1024', 'seek=9216', 'seek=1024', 'seek=2048']
    assert [argv[4:6] for argv in runner.batches[2]] == [['thr=1', 'count=8192']] * 2 + [['thr=1', 'count=1024']] * 2
    assert len(runner.batches) == 4


def test_each_test_carries_its_wall_clock_window_in_run_order():
    clock = FakeClock()
    runner = FakeRunner(clock)
    engine = survey(runner, [block_target('loop0')], clock, size_mib=8, crglo=1, crghi=2, thrlo=2, thrhi=2,
                    actions=['write', 'read'])
    records = list(engine.run())
    windows = [(record['crg'], action, round(record['tests'][action]['start_time'] - WALL_ORIGIN, 3),
                round(record['tests'][action]['end_time'] - WALL_ORIGIN, 3))
               for record in records for action in ('write', 'read')]
    # One batch of sgp_dd per test, 2 s each on the fake clock, run back to back.
    assert windows == [(1, 'write', 100.0, 102.0), (1, 'read', 102.0, 104.0),
                       (2, 'write', 104.0, 106.0), (2, 'read', 106.0, 108.0)]


def test_records_have_the_parser_shape_and_totals_times_devices():
    clock = FakeClock()
    runner = FakeRunner(clock, outputs=[OLD_TIMING % (1.0, 100.0), NEW_TIMING % (1.0, 200.0)],
                        seconds_per_batch=4.0)
    raw = RawSink()
    engine = survey(runner, [block_target('loop0'), block_target('loop1')], clock, size_mib=4, crglo=2, crghi=2,
                    thrlo=4, thrhi=4, actions=['write'], raw=raw)
    (record,) = list(engine.run())
    assert (record['dev'], record['size_kib'], record['rsz_kib'], record['crg'], record['thr']) == (2, 8192, 1024, 4, 8)
    assert (record['crg_per_dev'], record['thr_per_dev'], record['thr_per_region']) == (2, 4, 2)
    assert record['enomem'] is False and record['path_measured'] == 'block'
    write = record['tests']['write']
    # aggregate: 8192 KiB over 4 s of wall clock = 2 MiB/s; min/max: sg3_utils' decimal MB/s in MiB/s
    assert write['mib_s'] == pytest.approx(2.0)
    assert (write['min_mib_s'], write['max_mib_s']) == (pytest.approx(100 / 1.048576), pytest.approx(200 / 1.048576))
    assert (write['failed'], write['status']) == (0, 'ok')
    assert [d['max_mib_s'] for d in write['devices']] == [pytest.approx(200 / 1.048576)] * 2
    # each device's own figure: its regions' rates side by side
    assert [d['mib_s'] for d in write['devices']] == [pytest.approx(300 / 1.048576)] * 2
    # our summary reads back through the I/O kit parser as the same figures
    (parsed,) = parse_sgpdd_survey(raw.summary_text)
    assert (parsed['dev'], parsed['size_kib'], parsed['crg'], parsed['thr']) == (2, 8192, 4, 8)
    assert parsed['tests']['write']['mib_s'] == pytest.approx(2.0, abs=0.005)
    assert parsed['tests']['write']['max_mib_s'] == pytest.approx(190.73, abs=0.005)
    assert raw.detail_text.count('time to') == 4 and '=====> write' in raw.detail_text


@pytest.mark.parametrize('bad_output, failed', [
    ('8192+0 records in\n8192+0 records out\n', 1),
    (OLD_TIMING % (1.0, 50.0) + 'sgp_dd: some error occurred\n', 1),
    ('', 1),
])
def test_an_instance_without_timing_or_with_an_error_counts_as_failed(bad_output, failed):
    clock = FakeClock()
    runner = FakeRunner(clock, outputs=[OLD_TIMING % (1.0, 100.0), bad_output])
    raw = RawSink()
    engine = survey(runner, [block_target('loop0')], clock, crglo=2, crghi=2, thrlo=2, thrhi=2, actions=['read'],
                    raw=raw)
    (record,) = list(engine.run())
    read = record['tests']['read']
    assert (read['failed'], read['status'], read['mib_s'], read['min_mib_s']) == (failed, 'failed', None, None)
    assert engine.errors == [{'point': {'rsz_kib': 1024, 'crg': 2, 'thr': 2, 'action': 'read'},
                              'message': 'read: 1 of 2 sgp_dd instances failed; see raw_output'}]
    assert parse_sgpdd_survey(raw.summary_text)[0]['tests']['read']['failed'] == 1


def test_new_timing_form_below_one_mb_s():
    clock = FakeClock()
    runner = FakeRunner(clock, outputs=['time to copy data: 10.0 secs at 524.288 kB/sec\n'])
    engine = survey(runner, [block_target('loop0')], clock, crghi=1, thrhi=1, actions=['read'])
    (record,) = list(engine.run())
    assert record['tests']['read']['min_mib_s'] == pytest.approx(0.5)


def test_enomem_point_is_recorded_not_run():
    clock = FakeClock()
    runner = FakeRunner(clock)
    raw = RawSink()
    # (1024*2/1 + 64) * 1 * 2 devices = 4224 KiB > 4000
    engine = survey(runner, [block_target('loop0'), block_target('loop1')], clock, crghi=1, thrlo=1, thrhi=2,
                    mem_total_kib=4000, actions=['write'], raw=raw)
    records = list(engine.run())
    assert [r['enomem'] for r in records] == [False, True]
    assert records[1]['tests'] == {}
    assert len(runner.batches) == 1
    assert parse_sgpdd_survey(raw.summary_text)[1]['enomem'] is True
    assert 'ENOMEM on oss1' in raw.detail_text
    assert sgpdd.memory_needed_kib(1024, 1, 2, 2) == 4224


def test_timeout_keeps_measured_points_and_stops():
    clock = FakeClock()
    runner = FakeRunner(clock, stop_after_batches=3)
    engine = survey(runner, [block_target('loop0')], clock, crghi=1, thrlo=1, thrhi=8, actions=['write', 'read'])
    records = list(engine.run())
    # batches: p1 write, p1 read, p2 write, p2 read (interrupted) -> p2 kept with its write
    assert len(records) == 2
    assert records[1]['tests']['write']['status'] == 'ok'
    assert records[1]['tests']['read']['status'] == 'incomplete'
    assert engine.aborted == 'timeout'
    assert engine.errors[0]['message'] == 'read interrupted: timeout'
    assert len(runner.batches) == 4


def test_timeout_during_first_action_drops_the_point():
    clock = FakeClock()
    runner = FakeRunner(clock, stop_after_batches=0)
    engine = survey(runner, [block_target('loop0')], clock, crghi=1, thrhi=2, actions=['write'])
    assert list(engine.run()) == []
    assert engine.aborted == 'timeout'


def test_problems_name_the_options():
    engine = survey(FakeRunner(FakeClock()), [block_target('loop0', block_size=4096, mib=8)], FakeClock(),
                    size_mib=8, rszlo=2, rszhi=2)
    problems = [str(problem) for problem in engine.problems()]
    assert problems[0].startswith('rszlo: 2 KiB is not a multiple of the block size of /dev/loop0')
    assert problems[1].startswith('size_mib: /dev/loop0 holds 8388608 bytes')


def test_plan_counts_bytes_written():
    engine = survey(FakeRunner(FakeClock()), [block_target('loop0'), block_target('loop1')], FakeClock(),
                    size_mib=4, crghi=2, thrhi=2, actions=['write', 'read'])
    # three points run (crg1 thr1, crg1 thr2, crg2 thr2), each writes 4 MiB per device
    assert engine.bytes_written_per_device() == {'/dev/loop0': 3 * 4 * 1024 * 1024, '/dev/loop1': 3 * 4 * 1024 * 1024}
    read_only = survey(FakeRunner(FakeClock()), [block_target('loop0')], FakeClock(), actions=['read'])
    assert read_only.bytes_written_per_device() == {'/dev/loop0': 0}


def make_block(sysfs, name, sectors=131072, block_size=512, sg=None):
    base = sysfs / 'class' / 'block' / name
    (base / 'queue').mkdir(parents=True)
    (base / 'size').write_text('%d\n' % sectors)
    (base / 'queue' / 'logical_block_size').write_text('%d\n' % block_size)
    if sg:
        (base / 'device' / 'scsi_generic' / sg).mkdir(parents=True)
    return base


class ReadcapRunner(FakeRunner):
    def run(self, argv, env=None, cwd=None):
        self.batches.append([list(argv)])
        return CommandResult(argv, 0, '0x200000 0x1000\n', '', 0.01)


class FakeStat:
    def __init__(self, char_paths):
        self.char_paths = char_paths

    def __call__(self, path):
        if path not in self.char_paths:
            raise OSError(2, 'No such file or directory')
        return os.stat_result((stat.S_IFCHR | 0o600, 0, 0, 1, 0, 0, 0, 0, 0, 0))


def test_block_device_without_sg_node_uses_sysfs_geometry(tmp_path):
    make_block(tmp_path, 'loop3', sectors=131072, block_size=4096)
    identity = {'device': '/dev/loop3', 'path': '/dev/loop3', 'kind': 'block', 'name': 'loop3', 'block': 'loop3'}
    target = sgpdd.resolve_target(identity, FakeRunner(FakeClock()), sysfs_root=str(tmp_path))
    assert (target.io_path, target.path_measured, target.block_size, target.capacity_bytes) == (
        '/dev/loop3', 'block', 4096, 131072 * 512)


def test_scsi_disk_resolves_to_its_sg_node_through_sysfs(tmp_path):
    make_block(tmp_path, 'sdc', sg='sg7')
    runner = ReadcapRunner(FakeClock())
    identity = {'device': '/dev/disk/by-id/wwn-1', 'path': '/dev/sdc', 'kind': 'block', 'name': 'sdc', 'block': 'sdc'}
    target = sgpdd.resolve_target(identity, runner, sysfs_root=str(tmp_path), dev_root='/dev',
                                  stat_func=FakeStat({'/dev/sg7'}))
    assert runner.batches == [[['sg_readcap', '-lb', '/dev/sg7']]]
    assert (target.io_path, target.path_measured, target.block_size, target.capacity_blocks) == (
        '/dev/sg7', 'sg', 4096, 0x200000)


def test_missing_sg_node_is_refused_rather_than_created(tmp_path):
    make_block(tmp_path, 'sdc', sg='sg7')
    identity = {'device': '/dev/sdc', 'path': '/dev/sdc', 'kind': 'block', 'name': 'sdc', 'block': 'sdc'}
    with pytest.raises(EngineError, match='not a character device'):
        sgpdd.resolve_target(identity, FakeRunner(FakeClock()), sysfs_root=str(tmp_path), stat_func=FakeStat(set()))


def test_device_facts_name_the_members_of_an_md_array(tmp_path):
    base = make_block(tmp_path, 'md0', sectors=126976)
    (base / 'queue' / 'scheduler').write_text('none\n')
    (base / 'md').mkdir()
    (base / 'md' / 'level').write_text('raid1\n')
    for member in ('sdc', 'sdb'):
        (base / 'slaves' / member).mkdir(parents=True)
    target = sgpdd.Target('/dev/md0', '/dev/md0', 'block', 512, 126976, 'md0', 'md0')
    facts = sgpdd.device_facts(target, sysfs_root=str(tmp_path))
    assert (facts['slaves'], facts['md_level'], facts['queue']['scheduler'], facts['model']) == (
        ['sdb', 'sdc'], 'raid1', 'none', None)
    make_block(tmp_path, 'sdd', sg='sg3')
    plain = sgpdd.device_facts(sgpdd.Target('/dev/sdd', '/dev/sg3', 'sg', 512, 131072, 'sdd', 'sdd'),
                               sysfs_root=str(tmp_path))
    assert (plain['slaves'], plain['md_level']) == ([], None)


def test_stable_id_is_the_wwid_then_the_dm_uuid_then_the_best_by_id_link_never_the_kernel_name(tmp_path):
    sysfs, dev = tmp_path / 'sys', tmp_path / 'dev'
    by_id = dev / 'disk' / 'by-id'
    by_id.mkdir(parents=True)
    scsi = make_block(sysfs, 'sdb', sg='sg1')
    (scsi / 'device' / 'wwid').write_text('naa.5000c500a1b2c3d4\n')
    ata = make_block(sysfs, 'sdc')
    (ata / 'device').mkdir()
    (ata / 'device' / 'wwid').write_text('t10.ATA     ST4000NM0035        ZC1ABCDE\n')
    nvme = make_block(sysfs, 'nvme0n1')
    (nvme / 'wwid').write_text('eui.0025385b71b02f3a\n')
    mpath = make_block(sysfs, 'dm-3')
    (mpath / 'dm').mkdir()
    (mpath / 'dm' / 'uuid').write_text('mpath-3600508b1001c5d1e2f3a4b5c6d7e8f90\n')
    make_block(sysfs, 'vdb')
    (dev / 'vdb').write_text('')
    for link in ('virtio-disk1', 'wwn-0x5000c500a1b2c3d4', 'scsi-SATA_disk1'):
        (by_id / link).symlink_to('../../vdb')
    make_block(sysfs, 'vdc')
    loop = make_block(sysfs, 'loop0')
    (loop / 'loop').mkdir()
    (loop / 'loop' / 'backing_file').write_text('/var/tmp/lun0.img\n')

    def stable(name):
        return sgpdd.stable_device_id(name, sysfs_root=str(sysfs), dev_root=str(dev))

    assert stable('sdb') == 'wwid:naa.5000c500a1b2c3d4'
    assert stable('sdc') == 'wwid:t10.ATA ST4000NM0035 ZC1ABCDE'
    assert stable('nvme0n1') == 'wwid:eui.0025385b71b02f3a'
    assert stable('dm-3') == 'dm-uuid:mpath-3600508b1001c5d1e2f3a4b5c6d7e8f90'
    assert stable('vdb') == 'by-id:wwn-0x5000c500a1b2c3d4'
    assert stable('loop0') == 'loop:/var/tmp/lun0.img'
    # Nothing that outlives a reboot: no id rather than the kernel name.
    assert stable('vdc') is None
    facts = sgpdd.device_facts(sgpdd.Target('/dev/sdb', '/dev/sg1', 'sg', 512, 131072, 'sdb', 'sdb'),
                               sysfs_root=str(sysfs), dev_root=str(dev))
    assert facts['stable_id'] == 'wwid:naa.5000c500a1b2c3d4'


def test_an_sg_node_without_a_block_device_has_the_wwid_of_its_scsi_device(tmp_path):
    (tmp_path / 'class' / 'scsi_generic' / 'sg4' / 'device').mkdir(parents=True)
    (tmp_path / 'class' / 'scsi_generic' / 'sg4' / 'device' / 'wwid').write_text('naa.6000000000000004\n')
    facts = sgpdd.device_facts(sgpdd.Target('/dev/sg4', '/dev/sg4', 'sg', 512, 131072, 'sg4', None),
                               sysfs_root=str(tmp_path), dev_root=str(tmp_path / 'dev'))
    assert facts['stable_id'] == 'wwid:naa.6000000000000004'


def test_iokit_engine_passes_parameters_by_environment(tmp_path):
    rslt = str(tmp_path / 'sgpdd_survey')
    (tmp_path / 'sgpdd_survey.summary').write_text(
        'Mon Nov 23 sgpdd-survey on /dev/sdb from oss1\n'
        'dev  1 sz     4096K rsz 1024K crg     1 thr     1 write 1 failed read 1 failed \n')

    class ScriptRunner(FakeRunner):
        def run(self, argv, env=None, cwd=None):
            self.batches.append((list(argv), dict(env)))
            return CommandResult(argv, 0, '', '', 1.0)

    runner = ScriptRunner(FakeClock())
    records, errors, unused = sgpdd.run_iokit(
        runner, '/usr/bin/sgpdd-survey', ['/dev/sdb'], rslt, sg3_utils_version='1.48', size_mib=4,
        actions=['write', 'read'], rszlo=1024, rszhi=1024, crglo=1, crghi=1, thrlo=1, thrhi=1, boundary=1024)
    argv, env = runner.batches[0]
    assert argv == ['bash', '/usr/bin/sgpdd-survey']
    assert env == {'scsidevs': '/dev/sdb', 'size': '4', 'actions': 'write read', 'rszlo': '1024', 'rszhi': '1024',
                   'crglo': '1', 'crghi': '1', 'thrlo': '1', 'thrhi': '1', 'boundary': '1024', 'rslt': rslt}
    assert records[0]['tests']['write']['failed'] == 1 and records[0]['path_measured'] == 'sg'
    assert 'counts every sgp_dd instance as failed' in errors[0]['message']


class PackageRunner(FakeRunner):
    """Answers the package queries: ``answers`` maps the tool (dpkg-query, rpm) to ``(rc, stdout)``."""

    def __init__(self, answers):
        FakeRunner.__init__(self, FakeClock())
        self.answers = answers

    def run(self, argv, env=None, cwd=None):
        self.batches.append([list(argv)])
        rc, stdout = self.answers.get(argv[0], (1, ''))
        return CommandResult(argv, rc, stdout, '', 0.01)


@pytest.mark.parametrize('answers, expected', [
    ({'dpkg-query': (0, '1.46-3')}, '1.46'),
    ({'dpkg-query': (0, '1.48-1ubuntu1')}, '1.48'),
    ({'dpkg-query': (1, 'dpkg-query: no packages found matching sg3-utils'), 'rpm': (0, '1.47')}, '1.47'),
    ({'rpm': (1, 'package sg3_utils is not installed')}, None),
    ({'dpkg-query': (0, '')}, None),
])
def test_sg3_utils_version_is_major_minor_from_dpkg_or_rpm(answers, expected):
    assert sgpdd.sg3_utils_version(PackageRunner(answers)) == expected


@pytest.mark.parametrize('version, warned', [(None, False), ('', False), ('1.46', False), ('1.47', False),
                                             ('1.48', True), ('1.48.1', True), ('2.0', True)])
def test_iokit_engine_warns_from_sg3_utils_1_48_on(tmp_path, version, warned):
    runner = PackageRunner({'bash': (0, '')})
    unused_records, errors, unused_result = sgpdd.run_iokit(
        runner, '/usr/bin/sgpdd-survey', ['/dev/sdb'], str(tmp_path / 'rslt'), sg3_utils_version=version,
        size_mib=4, actions=['write'], rszlo=1024, rszhi=1024, crglo=1, crghi=1, thrlo=1, thrhi=1, boundary=1024)
    assert any('counts every sgp_dd instance as failed' in error['message'] for error in errors) == warned


def test_parse_readcap_brief():
    assert sgpdd.parse_readcap_brief('0x3b9e12b0 0x200\n') == (0x3b9e12b0, 512)
    assert sgpdd.parse_readcap_brief('garbage') is None


class SaturatingRunner(FakeRunner):
    """Devices that saturate at ``knee`` threads in all: a batch takes 8 s at one thread, 8/knee s from the knee
    on, and every instance reports the same rate (no spread)."""

    def __init__(self, clock, knee):
        FakeRunner.__init__(self, clock)
        self.knee = knee

    def run_many(self, argvs, env=None, cwd=None):
        threads = sum(int(next(arg for arg in argv if arg.startswith('thr='))[4:]) for argv in argvs)
        self.seconds_per_batch = 8.0 / min(threads, self.knee)
        return FakeRunner.run_many(self, argvs, env=env, cwd=cwd)


@pytest.mark.parametrize('mode, expected', [
    ('adaptive', [(1, 1), (1, 2), (1, 4), (1, 8), (2, 2), (2, 4), (2, 8)]),
    ('full', [(1, 1), (1, 2), (1, 4), (1, 8), (1, 16), (2, 2), (2, 4), (2, 8), (2, 16)]),
])
def test_adaptive_thread_sweep_stops_one_point_past_the_knee_for_each_region_count(mode, expected):
    clock = FakeClock()
    engine = survey(SaturatingRunner(clock, knee=4), [block_target('loop0')], clock, size_mib=8, crglo=1, crghi=2,
                    thrlo=1, thrhi=16, actions=['write', 'read'])
    engine.inner_sweeps = adaptive.InnerSweeps(mode)
    records = list(engine.run())
    assert [(record['crg_per_dev'], record['thr_per_dev']) for record in records] == expected
    skipped = engine.inner_sweeps.skipped_points
    if mode == 'full':
        assert skipped == []
        return
    reason = 'read saturated at thr 8: +0.0 % < 3 %; write saturated at thr 8: +0.0 % < 3 %'
    assert skipped == [{'point': {'rsz_kib': 1024, 'crg': 1, 'thr': 16}, 'reason': reason},
                       {'point': {'rsz_kib': 1024, 'crg': 2, 'thr': 16}, 'reason': reason}]
    assert adaptive.envelope_fields(engine.inner_sweeps, engine.points())['sweep']['points_full'] == 9


def test_a_resumed_adaptive_sweep_skips_the_done_points_and_still_stops_past_the_knee():
    clock = FakeClock()
    first = survey(SaturatingRunner(clock, knee=4), [block_target('loop0')], clock, size_mib=8, crglo=1, crghi=1,
                   thrlo=1, thrhi=16, actions=['write', 'read'])
    first.inner_sweeps = adaptive.InnerSweeps('adaptive')
    # an attempt killed after its third point (thr 4)
    done = [record for record, unused in zip(first.run(), range(3))]
    engine = survey(SaturatingRunner(clock, knee=4), [block_target('loop0')], clock, size_mib=8, crglo=1, crghi=1,
                    thrlo=1, thrhi=16, actions=['write', 'read'])
    engine.inner_sweeps = adaptive.InnerSweeps('adaptive')
    engine.done_points = dict(((record['rsz_kib'], record['crg_per_dev'], record['thr_per_dev']), record)
                              for record in done)
    records = list(engine.run())
    # thr 8 runs (flat after thr 4, which the earlier attempt measured), then the sweep stops: 16 is skipped
    assert [record['thr_per_dev'] for record in records] == [8]
    assert [item['point']['thr'] for item in engine.inner_sweeps.skipped_points] == [16]


def test_the_next_thread_sweep_may_start_near_the_previous_knee():
    clock = FakeClock()
    engine = survey(SaturatingRunner(clock, knee=4), [block_target('loop0')], clock, size_mib=8, rszlo=1024,
                    rszhi=2048, crglo=1, crghi=1, thrlo=1, thrhi=16, actions=['write', 'read'])
    engine.inner_sweeps = adaptive.InnerSweeps('adaptive', start_near_knee=True)
    records = list(engine.run())
    # the 1 MiB sweep saturates at 4 threads (stopping at 8); the 2 MiB one starts one doubling below that knee
    assert [(record['rsz_kib'], record['thr_per_dev']) for record in records] == [
        (1024, 1), (1024, 2), (1024, 4), (1024, 8), (2048, 2), (2048, 4), (2048, 8)]
    passed_over = [(item['point']['rsz_kib'], item['point']['thr'], item['reason'].split(':')[0])
                   for item in engine.inner_sweeps.skipped_points]
    assert passed_over == [(1024, 16, 'read saturated at thr 8'),
                           (2048, 1, 'started near the previous knee (thr 4 at crg 1, rsz_kib 1024)'),
                           (2048, 16, 'read saturated at thr 8')]


# --------------------------------------------------------------------------
# Time-bounded points


class RateRunner(FakeRunner):
    """Devices that move data at a set rate: ``rates`` maps a device's sgp_dd path to its MiB/s as a function of
    its threads; its regions share that rate, each sgp_dd lasts what it moves over its share and prints that
    rate, and a batch lasts as long as its slowest instance.  ``deadline_s`` on the fake clock gives the survey's
    timeout (``remaining_s``, as a Runner has)."""

    def __init__(self, clock, rates, deadline_s=None):
        FakeRunner.__init__(self, clock)
        self.rates = rates
        self.deadline_s = deadline_s

    def remaining_s(self):
        if self.deadline_s is None:
            return None
        return max(0.0, self.deadline_s - self.clock.now)

    def run_many(self, argvs, env=None, cwd=None):
        self.batches.append([list(argv) for argv in argvs])
        regions = {}
        for argv in argvs:
            regions.setdefault(device_of(argv), []).append(argv)
        results = []
        for argv in argvs:
            mine = regions[device_of(argv)]
            threads = sum(int(option(other, 'thr')) for other in mine)
            region_mib_s = self.rates[device_of(argv)](threads) / len(mine)
            seconds = int(option(argv, 'count')) * int(option(argv, 'bs')) / 1048576.0 / region_mib_s
            results.append(CommandResult(argv, 0, '', OLD_TIMING % (seconds, region_mib_s * 1.048576), seconds))
        self.clock.now += max(result.elapsed_s for result in results)
        return results


def option(argv, name):
    return next(arg.split('=', 1)[1] for arg in argv if arg.startswith(name + '='))


def device_of(argv):
    return option(argv, 'of') if option(argv, 'if') == '/dev/zero' else option(argv, 'if')


# sdb (4 KiB blocks, through its sg node) rises 4 MiB/s per thread to 16 MiB/s from 4 threads on; loop0 (512-byte
# blocks) is twice as fast.  Powers of two keep the fake clock's times exact.
SLOW, FAST = '/dev/sg1', '/dev/loop0'


def slow_and_fast_devices():
    return {SLOW: lambda thr: min(4.0 * thr, 16.0), FAST: lambda thr: 2 * min(4.0 * thr, 16.0)}


def bounded_engine(clock, runner, **options):
    settings = dict(size_mib=1024, crglo=1, crghi=1, thrlo=1, thrhi=8, actions=['write', 'read'], point_s=10.0,
                    point_min_mib=64, floor_reason='point_min_mib 64 MiB per device')
    settings.update(options)
    targets = [block_target('loop0', mib=4096), sg_target('sdb', 'sg1', block_size=4096, mib=4096)]
    return survey(runner, targets, clock, **settings)


def bytes_per_device(runner):
    """Each sgp_dd batch as (threads per device, {device: bytes it moves over its regions})."""
    moved = []
    for batch in runner.batches:
        per_device = {}
        for argv in batch:
            per_device[device_of(argv)] = (per_device.get(device_of(argv), 0)
                                           + int(option(argv, 'count')) * int(option(argv, 'bs')))
        threads = sum(int(option(argv, 'thr')) for argv in batch if device_of(argv) == SLOW)
        moved.append((threads, per_device))
    return moved


def test_an_adaptive_sweep_stops_on_a_host_with_one_slow_lun():
    # sdb at half loop0's rate, both flat from 4 threads: the host's sgp_dd instances span 16-32 MiB/s, a third of
    # the figure per device either way, which judged as one curve was noise at every point; each LUN's own curve is
    # flat, and its regions agree
    clock = FakeClock()
    runner = RateRunner(clock, slow_and_fast_devices())
    targets = [block_target('loop0', mib=4096), sg_target('sdb', 'sg1', block_size=4096, mib=4096)]
    engine = survey(runner, targets, clock, size_mib=128, crglo=1, crghi=2, thrlo=1, thrhi=16,
                    actions=['write', 'read'])
    engine.inner_sweeps = adaptive.InnerSweeps('adaptive')
    records = list(engine.run())
    assert engine.errors == []
    assert [(record['crg_per_dev'], record['thr_per_dev']) for record in records] == [
        (1, 1), (1, 2), (1, 4), (1, 8), (2, 2), (2, 4), (2, 8)]
    assert [item['point']['thr'] for item in engine.inner_sweeps.skipped_points] == [16, 16]
    assert 'write /dev/sdb saturated at thr 8: +0.0 % < 3 %' in engine.inner_sweeps.stops[0]['reason']


def test_an_adaptive_sweep_goes_on_while_one_lun_still_rises():
    clock = FakeClock()
    rates = slow_and_fast_devices()
    rates[SLOW] = lambda thr: 2.0 * thr
    runner = RateRunner(clock, rates)
    targets = [block_target('loop0', mib=4096), sg_target('sdb', 'sg1', block_size=4096, mib=4096)]
    engine = survey(runner, targets, clock, size_mib=128, crglo=1, crghi=1, thrlo=1, thrhi=16,
                    actions=['write', 'read'])
    engine.inner_sweeps = adaptive.InnerSweeps('adaptive')
    assert [record['thr_per_dev'] for record in engine.run()] == [1, 2, 4, 8, 16]
    assert engine.inner_sweeps.stops == []


def test_a_bounded_point_moves_the_floor_first_then_its_time_at_the_slowest_devices_rate():
    clock = FakeClock()
    runner = RateRunner(clock, slow_and_fast_devices())
    engine = bounded_engine(clock, runner)
    records = list(engine.run())
    assert engine.errors == []
    # per device, per action: thr 1 has no rate yet (the floor); thr 2 at 4 MiB/s x 10 s = 40 MiB, below the 64 MiB
    # floor; thr 4 at 8 MiB/s: 80 MiB; thr 8 at 16 MiB/s: 160 MiB; never the 1024 MiB of the full size
    assert [(r['thr_per_dev'], r['moved_mib_per_device'], r['point_limit'], r['sized_from_mib_s'])
            for r in records] == [(1, 64, 'floor, no rate yet', None), (2, 64, 'floor', 4.0),
                                  (4, 80, 'time budget', 8.0), (8, 160, 'time budget', 16.0)]
    assert all(r['bounded'] is True and r['point_s'] == 10.0 for r in records)
    assert [r['size_kib'] for r in records] == [2 * mib * 1024 for mib in (64, 64, 80, 160)]
    # on the plateau the slow device's action lasts its point_s exactly; the figure is still data over time
    last = records[-1]
    assert [last['tests'][action]['elapsed_s'] for action in ('write', 'read')] == [10.0, 10.0]
    assert last['elapsed_s'] == 20.0
    assert last['tests']['write']['mib_s'] == 2 * 160 / 10.0


def test_every_device_moves_the_same_bytes_in_whole_records_for_every_thread():
    clock = FakeClock()
    runner = RateRunner(clock, slow_and_fast_devices())
    list(bounded_engine(clock, runner).run())
    mib = 1048576
    assert bytes_per_device(runner) == [(thr, {SLOW: amount * mib, FAST: amount * mib})
                                        for thr, amount in ((1, 64), (1, 64), (2, 64), (2, 64), (4, 80), (4, 80),
                                                            (8, 160), (8, 160))]
    # sgp_dd's count is in each device's own blocks: 80 MiB is 20480 blocks of 4 KiB and 163840 of 512 bytes
    assert [(option(argv, 'count'), option(argv, 'bs'), option(argv, 'bpt')) for argv in runner.batches[4]] == [
        ('163840', '512', '2048'), ('20480', '4096', '256')]


def test_with_several_regions_each_region_moves_whole_records_for_each_of_its_threads():
    clock = FakeClock()
    runner = RateRunner(clock, slow_and_fast_devices())
    engine = bounded_engine(clock, runner, crglo=4, crghi=4, thrlo=8, thrhi=8, point_min_mib=70)
    (record,) = list(engine.run())
    # 70 MiB rounded up to a 1 MiB record for each of the 8 threads: 72 MiB, 18 records in each of 4 regions
    assert record['moved_mib_per_device'] == 72 and record['point_limit'] == 'floor, no rate yet'
    write = runner.batches[0]
    assert [(device_of(argv), option(argv, 'seek'), option(argv, 'thr'), option(argv, 'count')) for argv in write] == [
        (FAST, str(1024 + region * 18 * 2048), '2', str(18 * 2048)) for region in range(4)] + [
        (SLOW, str(1024 + region * 18 * 256), '2', str(18 * 256)) for region in range(4)]


def test_a_bounded_point_never_moves_more_than_the_full_size():
    clock = FakeClock()
    runner = RateRunner(clock, slow_and_fast_devices())
    records = list(bounded_engine(clock, runner, size_mib=128).run())
    assert [(r['moved_mib_per_device'], r['point_limit']) for r in records] == [
        (64, 'floor, no rate yet'), (64, 'floor'), (80, 'time budget'), (128, 'full size')]
    # at the full size the commands are the I/O kit's
    assert [option(argv, 'count') for argv in runner.batches[-1]] == [str(128 * 2048), str(128 * 256)]


def test_the_floor_wins_over_the_full_size():
    clock = FakeClock()
    records = list(bounded_engine(clock, RateRunner(clock, slow_and_fast_devices()), size_mib=32).run())
    assert [(r['moved_mib_per_device'], r['point_limit']) for r in records] == [
        (64, 'floor, no rate yet'), (64, 'floor'), (64, 'floor'), (64, 'floor')]


def test_a_point_whose_floor_cannot_be_moved_before_the_timeout_is_not_run_and_says_why():
    # the first point's two actions move 64 MiB at 4 MiB/s on the slow device: 32 s; 20 s are left then, 10 s per
    # action, less than the 16 s the floor takes at that rate
    clock = FakeClock()
    runner = RateRunner(clock, slow_and_fast_devices(), deadline_s=100.0 + 32.0 + 20.0)
    engine = bounded_engine(clock, runner, thrhi=2)
    records = list(engine.run())
    assert [r['thr_per_dev'] for r in records] == [1]
    assert len(runner.batches) == 2
    [error] = engine.errors
    assert error['point'] == {'rsz_kib': 1024, 'crg': 1, 'thr': 2}
    assert error['message'].startswith('not run: point_min_mib: every sgpdd point must move at least 64 MiB')
    assert 'about 16 s at the 4.0 MiB/s measured so far, more than the 10 s left before timeout' in error['message']
    assert engine.aborted is None


def test_with_time_enough_the_timeout_bounds_nothing():
    clock = FakeClock()
    runner = RateRunner(clock, slow_and_fast_devices(), deadline_s=100.0 + 10000.0)
    records = list(bounded_engine(clock, runner).run())
    assert [r['moved_mib_per_device'] for r in records] == [64, 64, 80, 160]


def test_a_short_time_left_bounds_the_point_like_point_s():
    # the first point takes 32 s; what is left then, shared by the two actions, bounds the next point when it is
    # shorter than point_s
    clock = FakeClock()
    runner = RateRunner(clock, slow_and_fast_devices(), deadline_s=100.0 + 32.0 + 2 * 48.0)
    records = list(bounded_engine(clock, runner, thrhi=2, point_s=30.0).run())
    # 30 s at 4 MiB/s is 120 MiB; 48 s left per action allow 192: point_s is the tighter bound
    assert [(r['moved_mib_per_device'], r['point_limit']) for r in records] == [
        (64, 'floor, no rate yet'), (120, 'time budget')]
    clock = FakeClock()
    runner = RateRunner(clock, slow_and_fast_devices(), deadline_s=100.0 + 32.0 + 2 * 20.0)
    records = list(bounded_engine(clock, runner, thrhi=2, point_s=30.0).run())
    # 20 s left per action: 80 MiB, not the 120 MiB of point_s
    assert [(r['moved_mib_per_device'], r['point_limit']) for r in records] == [
        (64, 'floor, no rate yet'), (80, 'time budget')]


def test_a_resumed_bounded_sweep_sizes_its_next_point_from_the_earlier_attempts():
    clock = FakeClock()
    whole = [(r['thr_per_dev'], r['moved_mib_per_device'])
             for r in bounded_engine(clock, RateRunner(clock, slow_and_fast_devices())).run()]
    clock = FakeClock()
    killed = bounded_engine(clock, RateRunner(clock, slow_and_fast_devices()))
    done = [record for record, unused in zip(killed.run(), range(2))]
    clock = FakeClock()
    runner = RateRunner(clock, slow_and_fast_devices())
    resumed = bounded_engine(clock, runner)
    resumed.done_points = dict(((r['rsz_kib'], r['crg_per_dev'], r['thr_per_dev']), r) for r in done)
    records = list(resumed.run())
    # only the missing points run, and they move what they moved in the uninterrupted run
    assert [(r['thr_per_dev'], r['moved_mib_per_device']) for r in records] == whole[2:] == [(4, 80), (8, 160)]
    assert len(runner.batches) == 4


def test_without_point_s_the_plan_and_commands_are_the_io_kits():
    def commands_and_plan(**options):
        clock = FakeClock()
        runner = FakeRunner(clock)
        engine = survey(runner, [block_target('loop0'), block_target('loop1')], clock, size_mib=4, crghi=2, thrhi=2,
                        actions=['write', 'read'], **options)
        records = list(engine.run())
        return runner.batches, engine.plan(), records

    today = commands_and_plan()
    with_floor_only = commands_and_plan(point_min_mib=512)
    # the floor alone only tells the plan what the fast profile would move
    assert with_floor_only[1].pop('point_sizing')['floor'] == 512
    assert with_floor_only == today
    assert 'bounded' not in today[1] and not any('bounded' in record for record in today[2])


def test_the_plan_of_bounded_points_gives_their_time_and_the_worst_case():
    clock = FakeClock()
    engine = bounded_engine(clock, FakeRunner(clock), size_mib=32, crghi=2, thrhi=2, point_min_mib=63)
    plan = engine.plan()
    # three runnable points, two actions: 60 s if each action lasts its 10 s; at worst every point moves its 63 MiB
    # floor in whole records for every thread: 63 MiB at one thread, 64 MiB at two
    assert plan['bounded'] == {'point_s': 10.0, 'point_min_mib': 63, 'floor_reason': 'point_min_mib 64 MiB per device',
                               'target_duration_s': 60.0, 'worst_case_kib_per_device': 2 * (63 + 64 + 64) * 1024,
                               'full_kib_per_device': 2 * 3 * 32 * 1024}
    # the points and what they write are the full grid's, so a rerun recognises the same points
    assert [p['size_kib'] for p in plan['points'] if p['skip'] is None] == [2 * 32 * 1024] * 3
    assert plan['bytes_written_per_device'] == {'/dev/loop0': 3 * 32 * 1048576, '/dev/sdb': 3 * 32 * 1048576}


@pytest.mark.parametrize('options, message', [
    ({'point_s': 0.0}, 'point_s: must be more than 0 seconds, got 0'),
    ({'point_s': -1.5}, 'point_s: must be more than 0 seconds, got -1.5'),
    ({'point_min_mib': 0}, 'point_min_mib: must be at least 1, got 0'),
])
def test_bounded_settings_are_checked(options, message):
    clock = FakeClock()
    engine = bounded_engine(clock, FakeRunner(clock), **options)
    assert [str(problem) for problem in engine.problems()] == [message]


def test_a_floor_the_devices_cannot_hold_is_refused_naming_point_min_mib():
    clock = FakeClock()
    targets = [block_target('loop0', mib=64)]
    engine = survey(FakeRunner(clock), targets, clock, size_mib=32, crghi=1, thrhi=2, point_s=10.0,
                    point_min_mib=101, floor_reason='101 MiB per device: controller cache 101 MiB over 1 device')
    [problem] = engine.problems()
    # the largest floor is the two-thread point's, 101 MiB rounded up to a record for each thread
    assert str(problem) == (
        'point_min_mib: /dev/loop0 holds 67108864 bytes, but boundary (1024 blocks) plus a bounded point\'s floor '
        '(101 MiB per device: controller cache 101 MiB over 1 device; 102 MiB once rounded up to a 1024 KiB record '
        'for every thread) need %d; lower point_min_mib' % (1024 * 512 + 102 * 1048576))
    assert problem.mentions == ('boundary', 'point_min_mib')
    # the I/O kit's fixed size fits: without point_s the floor is never moved
    engine.point_s = None
    assert engine.problems() == []
