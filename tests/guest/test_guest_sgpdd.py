# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""node_prep, sgpdd_survey and the survey playbook on real SCSI disks with real sg nodes (QEMU guest).

    .venv/bin/python -m pytest tests/guest -q -p no:cacheprovider      # as root; builds the image once

Everything goes through ansible-playbook over real SSH; the guest is inspected over SSH only to
check what the collection did.  The sweeps are tiny (4 MiB, one or two points): the guest's CPU
is emulated.
"""

from __future__ import annotations

import glob
import json
import os
import re

import pytest

from conftest import ROOT, checksum, save_results, sg_loaded, sh

QUEUE_ATTRIBUTES = ('scheduler', 'nr_requests', 'max_sectors_kb', 'read_ahead_kb')
MODULES_LOAD = '/etc/modules-load.d/lustre-iokit.conf'
MODPROBE = '/etc/modprobe.d/lustre-iokit.conf'
UDEV_RULE = '/etc/udev/rules.d/99-lustre-iokit.rules'
SAVED_STATE = '/var/lib/lustre-iokit/node_prep.json'
WORKDIR = '/var/tmp/iokit-guest-test'
TINY_SWEEP = {'size_mib': 4, 'crghi': 1, 'thrhi': 2, 'workdir': WORKDIR}


def queue(guest, name):
    values = {}
    for attribute in QUEUE_ATTRIBUTES + ('max_hw_sectors_kb',):
        values[attribute] = sh(guest, 'cat /sys/class/block/%s/queue/%s' % (name, attribute))
    values['scheduler_offered'] = values['scheduler'].replace('[', '').replace(']', '').split()
    values['scheduler'] = re.search(r'\[(\S+)\]', values['scheduler']).group(1)
    return values


def unload_sg(guest):
    sh(guest, 'if [ -d /sys/module/sg ]; then modprobe -r sg; fi')
    assert not sg_loaded(guest)


def exists(guest, path):
    return guest.ssh(['test', '-e', path], check=False).returncode == 0


def survey_task(register, devices, ignore_errors=False, **options):
    parameters = dict(TINY_SWEEP, devices=devices, **options)
    lines = ['    - name: sgpdd_survey %s' % register, '      lustre.iokit.sgpdd_survey:']
    lines += ['        %s: %s' % (key, json.dumps(value)) for key, value in sorted(parameters.items())]
    lines.append('      register: %s' % register)
    if ignore_errors:
        lines.append('      ignore_errors: true')
    return '\n'.join(lines) + '\n'


NODE_PREP = '''
    - name: Prepare the node
      ansible.builtin.include_role:
        name: lustre.iokit.node_prep
'''


def test_node_prep_loads_sg_tunes_the_queue_and_restores_it(guest, controller):
    unload_sg(guest)
    before = queue(guest, 'sda')
    other_schedulers = [name for name in before['scheduler_offered'] if name != before['scheduler']]
    assert other_schedulers, 'the guest disk offers one scheduler only: %s' % before
    wanted = {'scheduler': other_schedulers[0], 'nr_requests': '32' if before['nr_requests'] != '32' else '16',
              'read_ahead_kb': str(int(before['read_ahead_kb']) * 2 + 4), 'max_sectors_kb': before['max_hw_sectors_kb']}
    assert wanted['max_sectors_kb'] != before['max_sectors_kb'], 'nothing to tune: %s' % before
    extra = {'node_prep_devices': ['/dev/sda'], 'node_prep_scheduler': [wanted['scheduler']],
             'node_prep_nr_requests': int(wanted['nr_requests']), 'node_prep_read_ahead_kb': int(wanted['read_ahead_kb'])}

    run = controller.playbook(NODE_PREP, extra_vars=extra, check=True)
    assert run.rc == 0, run
    assert run.changed > 0, 'check mode showed no change: %r' % run
    assert not sg_loaded(guest), 'check mode loaded sg'
    assert queue(guest, 'sda') == before, 'check mode changed the queue'
    for path in (MODULES_LOAD, MODPROBE, UDEV_RULE, SAVED_STATE):
        assert not exists(guest, path), 'check mode wrote %s' % path

    run = controller.playbook(NODE_PREP, extra_vars=extra)
    assert run.rc == 0, run
    assert sg_loaded(guest), 'sg not loaded although the guest has SCSI disks'
    assert sh(guest, 'cat /sys/module/sg/parameters/allow_dio') == '1'
    assert sh(guest, 'grep -vx "#.*" %s' % MODULES_LOAD) == 'sg'
    assert 'options sg allow_dio=1' in sh(guest, 'cat %s' % MODPROBE).splitlines()
    after = queue(guest, 'sda')
    assert {key: after[key] for key in wanted} == wanted
    assert 'KERNEL=="sda"' in sh(guest, 'cat %s' % UDEV_RULE)
    # sg nodes exist now, found through sysfs (their numbers follow the order sg attaches the disks in)
    sg_name = sh(guest, 'ls /sys/class/block/sda/device/scsi_generic')
    assert re.match(r'^sg\d+$', sg_name), sg_name
    assert sh(guest, 'stat -c %%F /dev/%s' % sg_name) == 'character special file'

    run = controller.playbook(NODE_PREP, extra_vars=extra)
    assert (run.rc, run.changed) == (0, 0), 'second run changed something: %r' % run

    absent = dict(extra, node_prep_state='absent')
    run = controller.playbook(NODE_PREP, extra_vars=absent, check=True)
    assert run.rc == 0 and run.changed > 0, run
    assert sg_loaded(guest) and queue(guest, 'sda') == after and exists(guest, MODULES_LOAD)

    run = controller.playbook(NODE_PREP, extra_vars=absent)
    assert run.rc == 0, run
    assert not sg_loaded(guest), 'absent left sg loaded although node_prep loaded it'
    assert queue(guest, 'sda') == before
    for path in (MODULES_LOAD, MODPROBE, UDEV_RULE, SAVED_STATE):
        assert not exists(guest, path), 'absent left %s' % path

    run = controller.playbook(NODE_PREP, extra_vars=absent)
    assert (run.rc, run.changed) == (0, 0), 'second absent changed something: %r' % run


def test_node_prep_absent_keeps_an_sg_it_did_not_load(guest, controller):
    unload_sg(guest)
    sh(guest, 'modprobe sg allow_dio=0')
    extra = {'node_prep_devices': [], 'node_prep_install_packages': False}
    try:
        run = controller.playbook(NODE_PREP, extra_vars=extra)
        assert run.rc == 0, run
        assert sh(guest, 'cat /sys/module/sg/parameters/allow_dio') == '1'
        run = controller.playbook(NODE_PREP, extra_vars=dict(extra, node_prep_state='absent'))
        assert run.rc == 0, run
        assert sg_loaded(guest), 'absent unloaded an sg that was loaded before node_prep'
        assert sh(guest, 'cat /sys/module/sg/parameters/allow_dio') == '0', 'allow_dio not restored'
        assert not exists(guest, MODPROBE) and not exists(guest, MODULES_LOAD)
    finally:
        unload_sg(guest)


def test_sgpdd_survey_measures_the_sg_node(guest, controller):
    sh(guest, 'modprobe sg')
    try:
        sg_name = sh(guest, 'ls /sys/class/block/sda/device/scsi_generic')
        tasks = (survey_task('refused_without_opt_in', ['/dev/sda'], ignore_errors=True)
                 + survey_task('by_block_name', ['/dev/sda'], destroy_data=True)
                 + survey_task('by_sg_node', ['/dev/%s' % sg_name], destroy_data=True, actions=['read'])
                 + save_results('refused_without_opt_in', 'by_block_name', 'by_sg_node'))
        run = controller.playbook(tasks)
        assert run.rc == 0, run
        refused = run.results['refused_without_opt_in']
        assert refused['failed'] and 'destroy_data' in refused['msg']

        survey = run.results['by_block_name']
        assert survey['status'] == 'ok', survey
        device = survey['environment']['devices'][0]
        assert (device['device'], device['io_path'], device['path_measured']) == ('/dev/sda', '/dev/' + sg_name, 'sg')
        assert device['block'] == 'sda' and device['model'] == 'QEMU HARDDISK'
        assert len(survey['records']) == 2
        for record in survey['records']:
            assert record['path_measured'] == 'sg'
            assert set(record['tests']) == {'write', 'read'}
            for test in record['tests'].values():
                assert test['status'] == 'ok' and test['failed'] == 0 and test['mib_s'] > 0, record
        assert survey['changed']

        by_sg = run.results['by_sg_node']
        assert by_sg['status'] == 'ok' and not by_sg['changed']
        assert by_sg['environment']['devices'][0]['io_path'] == '/dev/' + sg_name
        assert {record['path_measured'] for record in by_sg['records']} == {'sg'}
        assert sh(guest, 'pgrep -x sgp_dd || true') == ''
    finally:
        sh(guest, 'rm -rf %s' % WORKDIR)
        unload_sg(guest)


def _iokit_script():
    """The unmodified lustre-iokit sgpdd-survey from $LUSTRE_IOKIT_DIR (a tag directory or a directory of them)."""
    base = os.environ.get('LUSTRE_IOKIT_DIR')
    if not base:
        return None
    candidates = glob.glob(os.path.join(base, 'sgpdd-survey')) + sorted(glob.glob(os.path.join(base, '*', 'sgpdd-survey')))
    return candidates[0] if candidates else None


@pytest.mark.skipif(_iokit_script() is None, reason='LUSTRE_IOKIT_DIR has no sgpdd-survey (see simulator/README.md)')
def test_engine_iokit_runs_the_installed_sgpdd_survey(guest, controller):
    with open(_iokit_script(), encoding='utf-8') as handle:
        guest.ssh(['sh', '-c', 'cat > /usr/local/bin/sgpdd-survey && chmod 755 /usr/local/bin/sgpdd-survey'],
                  stdin=handle.read())
    unload_sg(guest)
    try:
        run = controller.playbook(survey_task('iokit', ['/dev/sda'], destroy_data=True, engine='iokit')
                                  + save_results('iokit'))
        assert run.rc == 0, run
        survey = run.results['iokit']
        assert survey['engine'] == 'iokit' and survey['status'] == 'ok', survey
        assert len(survey['records']) == 2
        for record in survey['records']:
            assert record['path_measured'] == 'sg'
            assert record['tests']['write']['mib_s'] > 0 and record['tests']['read']['mib_s'] > 0, record
        # the script unloads the sg it loaded itself
        assert not sg_loaded(guest)
    finally:
        sh(guest, 'rm -rf %s /usr/local/bin/sgpdd-survey' % WORKDIR)
        unload_sg(guest)


def test_md_members_and_arrays_are_detected(guest, controller):
    sh(guest, 'modprobe sg')
    members = ['/dev/sdb', '/dev/sdc']
    sh(guest, 'mdadm --create /dev/md0 --run --quiet --level=1 --raid-devices=2 --assume-clean --metadata=1.2 '
              + ' '.join(members) + ' && mdadm --wait /dev/md0; udevadm settle; sync')
    try:
        sg_of_member = '/dev/' + sh(guest, 'ls /sys/class/block/sdb/device/scsi_generic')
        # Refusals alone in one play: nothing else may write to the array while the members are compared.
        sums = {member: checksum(guest, member) for member in members}
        run = controller.playbook(survey_task('member', ['/dev/sdb'], destroy_data=True, ignore_errors=True)
                                  + survey_task('member_sg', [sg_of_member], destroy_data=True, ignore_errors=True)
                                  + save_results('member', 'member_sg'))
        assert run.rc == 0, run
        for name, device in (('member', '/dev/sdb'), ('member_sg', sg_of_member)):
            refused = run.results[name]
            assert refused['failed'], refused
            assert device in refused['refusals'], refused
            assert 'held by md0' in refused['msg'] and device in refused['msg'], refused['msg']
        assert {member: checksum(guest, member) for member in members} == sums, 'a refused run changed a member'

        run = controller.playbook(survey_task('member_read', ['/dev/sdb'], actions=['read'])
                                  + survey_task('array', ['/dev/md0'], destroy_data=True)
                                  + save_results('member_read', 'array'))
        assert run.rc == 0, run
        assert run.results['member_read']['status'] == 'ok'
        array = run.results['array']
        assert array['status'] == 'ok', array
        facts = array['environment']['devices'][0]
        assert facts['path_measured'] == 'block' and facts['io_path'] == '/dev/md0'
        assert sorted(facts['slaves']) == ['sdb', 'sdc'] and facts['md_level'] == 'raid1', facts

        # A stopped array leaves its RAID superblock on the members: refused for that signature.
        sh(guest, 'mdadm --stop /dev/md0')
        sums = {member: checksum(guest, member) for member in members}
        run = controller.playbook(survey_task('stopped_member', ['/dev/sdb'], destroy_data=True, ignore_errors=True)
                                  + save_results('stopped_member'))
        refused = run.results['stopped_member']
        assert refused['failed'] and 'linux_raid_member' in refused['msg'] and '/dev/sdb' in refused['msg'], refused
        assert {member: checksum(guest, member) for member in members} == sums
    finally:
        sh(guest, 'mdadm --stop /dev/md0 2>/dev/null; mdadm --zero-superblock /dev/sdb /dev/sdc 2>/dev/null; '
                  'rm -rf %s; true' % WORKDIR)
        unload_sg(guest)


def _survey_playbook(controller, base, run_id):
    inventory_vars = {
        'sgpdd_devices': ['/dev/sda'], 'sgpdd_destroy_data': True, 'sgpdd_size_mib': 4, 'sgpdd_crghi': 1,
        'sgpdd_thrhi': 1, 'sgpdd_poll_interval_s': 1, 'iokit_results_dir': os.path.join(base, 'results'),
        'iokit_workdir': WORKDIR, 'iokit_run_id': run_id,
    }
    return controller.run([os.path.join(ROOT, 'playbooks', 'survey-sgpdd.yml')],
                          '-e', 'iokit_sgpdd_hosts=guest', extra_vars=inventory_vars)


def test_survey_playbook_cleanup_unloads_only_the_sg_it_loaded(guest, controller):
    base = controller.base
    unload_sg(guest)
    run = _survey_playbook(controller, base, 'guest-1')
    assert run.rc == 0, run
    with open(os.path.join(base, 'results', 'guest-1', 'guest', 'sgpdd.json'), encoding='utf-8') as handle:
        envelope = json.load(handle)
    assert envelope['status'] == 'ok'
    assert {record['path_measured'] for record in envelope['records']} == {'sg'}
    assert sh(guest, 'pgrep -a -x sgp_dd || true') == ''
    assert not exists(guest, os.path.join(WORKDIR, 'guest-1'))
    assert not sg_loaded(guest), 'cleanup left the sg module the survey loaded'

    sh(guest, 'modprobe sg')
    try:
        run = _survey_playbook(controller, base, 'guest-2')
        assert run.rc == 0, run
        assert sh(guest, 'pgrep -a -x sgp_dd || true') == ''
        assert sg_loaded(guest), 'cleanup unloaded an sg module that was loaded before the survey'
    finally:
        unload_sg(guest)
