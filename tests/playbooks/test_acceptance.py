# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/acceptance.yml end to end on this machine: localhost is every node of a simulated Lustre, with a
loop device as the sgpdd LUN.

    .venv/bin/python -m pytest tests/playbooks/test_acceptance.py -q -p no:cacheprovider

Run 1: prepare -> sgpdd (opted in, on the loop device) -> obdfilter -> mds -> ost -> mdtest -> report, with
criteria that hold: the verdict passes.  Run 2: the MDT fails every metadata operation (a simulator fault), so
the mds stage fails; what its cleanup cannot remove from the failing MDT is named with how to remove it, and the
later stages still run; the other stages' results remain, the report names the missing mds result and the verdict
fails; once the fault is cleared, cleanup.yml removes what the run left.  Needs root (losetup) and sgp_dd; writes only to the loop device it creates.

Then the default criteria: a simulated OSS with three OSTs, one throttled to a fifth of the others' bandwidth
(3 and 0.6 MiB/s, as 300 and 60 on a real OSS),
runs acceptance.yml (obdfilter stage only) without any acceptance_criteria: the verdict fails naming the slow
OST; the same run with three equal OSTs passes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from xml.etree import ElementTree

import pytest

from conftest import WAIT_POLL_S
from test_survey_playbooks import INVENTORY, LUSTRE_SIM, SURVEY_VARS, Cluster, pytestmark as survey_mark

from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import envelope_path, read_envelope

pytestmark = [survey_mark, pytest.mark.skipif(os.geteuid() != 0 or not shutil.which('losetup')
                                              or not shutil.which('sgp_dd'),
                                              reason='needs root, losetup and sgp_dd (sg3-utils)')]

PASS_RUN = 'pbtest-accept-pass'
FAIL_RUN = 'pbtest-accept-mds-fails'
MDT = 'testfs-MDT0000'

# Floors any machine passes, however loaded: what is tested is that each subject is judged, not its speed.
CRITERIA = {
    'floors': [{'metric': 'obdfilter_write_mib_s', 'subjects': 'localhost*', 'min': 0.05},
               {'metric': 'ost_write_mib_s', 'min': 0.05}],
    'ratios': [],
}


class AcceptanceCluster(Cluster):
    def envelope(self, survey, run_id):
        return read_envelope(envelope_path(self.results, run_id, 'localhost', survey))

    def run_file(self, run_id, *names):
        return os.path.join(self.results, run_id, *names)

    def published(self, output):
        """What set_stats published (ANSIBLE_SHOW_CUSTOM_STATS prints it after the recap)."""
        text = output[output.rindex('CUSTOM STATS:'):]
        return json.loads(text[text.index('{'):text.rindex('}') + 1])


@pytest.fixture(scope='module')
def cluster(tmp_path_factory):
    made = AcceptanceCluster(str(tmp_path_factory.mktemp('acceptance')))
    image = os.path.join(made.base, 'lun0.img')
    loop = None
    made.sim('init', '--root', made.root, '--osts', '3', '--mdts', '1', '--ost-size-mib', '64',
             '--ost-mib-s', '24', '--client-mount', made.mount, '--force')
    try:
        subprocess.run(['truncate', '--size', '96M', image], check=True)
        loop = subprocess.run(['losetup', '--find', '--show', '--direct-io=on', image], check=True,
                              stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()
        made.loop = loop
        with open(made.inventory, 'w', encoding='utf-8') as handle:
            handle.write(INVENTORY.format(python=sys.executable))
        prep_dir = os.path.join(made.base, 'etc')
        with open(made.extra_vars, 'w', encoding='utf-8') as handle:
            json.dump(dict(
                SURVEY_VARS, iokit_results_dir=made.results, iokit_workdir=made.workdir,
                ost_mount_point=made.mount, mdtest_mount_point=made.mount,
                mdtest_items=10, mdtest_tasks_per_node=[1], mdtest_allow_run_as_root=True,
                mdtest_poll_interval_s=WAIT_POLL_S, mdtest_async_margin_s=30,
                sgpdd_devices=[loop], sgpdd_destroy_data=True, sgpdd_size_mib=32, sgpdd_crghi=1, sgpdd_thrhi=2,
                sgpdd_poll_interval_s=WAIT_POLL_S,
                # prepare changes the loop device's queue only; its files go to the test's directory, nothing is
                # installed and sg is left alone (a loop device is no SCSI disk).
                node_prep_install_packages=False, node_prep_load_sg=False,
                node_prep_udev_rule_file=os.path.join(prep_dir, '99-lustre-iokit.rules'),
                node_prep_modprobe_file=os.path.join(prep_dir, 'lustre-iokit.conf'),
                node_prep_modules_load_file=os.path.join(prep_dir, 'modules-load.conf'),
                node_prep_saved_state_file=os.path.join(prep_dir, 'node_prep.json'),
                acceptance_run_sgpdd=True, acceptance_run_lnet=False, acceptance_run_ior=False,
                # these runs check the user's criteria alone (the built-in ones are tested below)
                acceptance_criteria=CRITERIA, acceptance_default_criteria=False), handle)
        os.environ['ANSIBLE_SHOW_CUSTOM_STATS'] = '1'
        made.passing = made.playbook('acceptance.yml', extra={'iokit_run_id': PASS_RUN})
        made.sim('fault', '--root', made.root, 'add', 'io_error', '--target', MDT)
        made.failing = made.playbook('acceptance.yml', extra={
            'iokit_run_id': FAIL_RUN, 'acceptance_run_prepare': 'false', 'acceptance_run_sgpdd': 'false'})
        made.sim('fault', '--root', made.root, 'clear', '--all')
        # the MDT repaired, the cleanup the failed run's leftovers asked for
        made.cleaned = made.playbook('cleanup.yml', extra={'cleanup_run_id': FAIL_RUN})
        yield made
    finally:
        os.environ.pop('ANSIBLE_SHOW_CUSTOM_STATS', None)
        if loop:
            made.playbook('prepare.yml', extra={'node_prep_state': 'absent'})
            subprocess.run(['losetup', '--detach', loop], check=False)
        subprocess.run([LUSTRE_SIM, 'destroy', '--root', made.root], check=False, stdout=subprocess.DEVNULL)


def test_every_stage_ran_and_the_verdict_passes(cluster):
    assert cluster.passing.returncode == 0, cluster.passing.stdout[-8000:]
    for survey in ('sgpdd', 'obdfilter', 'mds', 'ost', 'mdtest'):
        envelope = cluster.envelope(survey, PASS_RUN)
        assert (envelope['run_id'], envelope['status']) == (PASS_RUN, 'ok'), (survey, envelope['errors'])
    assert cluster.envelope('sgpdd', PASS_RUN)['parameters']['devices'] == [cluster.loop]
    with open(cluster.run_file(PASS_RUN, 'verdict.json'), encoding='utf-8') as handle:
        verdict = json.load(handle)
    assert verdict['verdict'] == 'passed' and verdict['counts']['failed'] == 0, verdict['failures']
    floors = [case for case in verdict['cases'] if case['kind'] == 'floors']
    # the host's aggregate and each of its OSTs (the native engine's per-OST figures)
    assert set(case['subject'] for case in floors if case['metric'] == 'obdfilter_write_mib_s') == {
        'localhost', 'localhost/testfs-OST0000', 'localhost/testfs-OST0001', 'localhost/testfs-OST0002'}
    assert all(case['status'] == 'passed' and case['value'] >= 0.05 for case in floors), floors


def test_the_skipped_stages_say_why(cluster):
    assert 'Stage lnet skipped: switched off (acceptance_run_lnet=false)' in cluster.passing.stdout
    assert 'Stage sgpdd skipped: switched off (acceptance_run_sgpdd=false)' in cluster.failing.stdout
    assert 'Stage prepare skipped: switched off (acceptance_run_prepare=false)' in cluster.failing.stdout


def test_the_report_files_and_junit_are_written(cluster):
    for name in ('report.html', 'report.json', 'results.csv', 'summary.md', 'analysis.json', 'verdict.json',
                 'junit.xml'):
        assert os.path.getsize(cluster.run_file(PASS_RUN, name)) > 0, name
    with open(cluster.run_file(PASS_RUN, 'report.json'), encoding='utf-8') as handle:
        surveys = set(json.loads(line)['survey'] for line in handle if line.strip())
    assert surveys == {'sgpdd', 'obdfilter', 'mds', 'ost', 'mdtest'}
    suites = ElementTree.parse(cluster.run_file(PASS_RUN, 'junit.xml')).getroot()
    cases = suites.findall('.//testcase')
    assert cases and not suites.findall('.//failure')


def test_a_failed_stage_is_recorded_and_the_other_stages_results_remain(cluster):
    output = cluster.failing.stdout
    assert cluster.failing.returncode != 0, output[-8000:]
    # When the mds result is missing, what the mds stage printed says why (the end of the output is the report).
    start = output.find('PLAY [Survey the MDTs with mds-survey]')
    assert os.path.exists(envelope_path(cluster.results, FAIL_RUN, 'localhost', 'mds')), \
        output[start:start + 12000] if start >= 0 else output[-12000:]
    mds = cluster.envelope('mds', FAIL_RUN)
    assert mds['status'] == 'failed' and mds['records'] == []
    for survey in ('obdfilter', 'ost', 'mdtest'):
        assert cluster.envelope(survey, FAIL_RUN)['status'] == 'ok', survey
    # The ost and mdtest stages came after the failed one and still ran.
    assert mds['finished'] <= cluster.envelope('ost', FAIL_RUN)['started']
    assert mds['finished'] <= cluster.envelope('mdtest', FAIL_RUN)['started']
    assert 'Acceptance failed for run %s' % FAIL_RUN in output


def test_the_mds_errors_name_the_failing_mdt(cluster):
    errors = ' '.join(error['message'] for error in cluster.envelope('mds', FAIL_RUN)['errors'])
    assert MDT in errors and 'Input/output error' in errors, errors


def test_what_the_failing_mdt_keeps_is_named_then_removed_once_it_is_repaired(cluster):
    # Not a cleanup failure that would end the play: a warning naming what may remain and how to remove it.
    output = cluster.failing.stdout
    assert 'cleanup left things behind' not in output, output[-8000:]
    kept = re.search(r'test directories /MDT0000-\S*-tests may remain on %s, which fails \(' % MDT, output)
    assert kept, output[-8000:]
    line = output[kept.start():output.index('\n', kept.start())]
    assert 'Input/output error' in line and 'cleanup_run_id=%s' % FAIL_RUN in line and 'test_rmdir' in line, line
    assert cluster.cleaned.returncode == 0, cluster.cleaned.stdout[-6000:]
    echo_root = os.path.join(cluster.root, 'targets', MDT, 'ROOT_ECHO')
    assert not os.path.isdir(echo_root) or not os.listdir(echo_root), os.listdir(echo_root)
    state_file = os.path.join(cluster.workdir, 'node-state.json')
    if os.path.exists(state_file):  # removed once nothing is left in it
        with open(state_file, encoding='utf-8') as handle:
            assert json.load(handle)['echo_clients'] == []


def test_the_report_names_what_is_missing_and_the_junit_failure_names_the_host(cluster):
    with open(cluster.run_file(FAIL_RUN, 'verdict.json'), encoding='utf-8') as handle:
        verdict = json.load(handle)
    assert verdict['verdict'] == 'failed'
    failed = [case for case in verdict['cases'] if case['status'] == 'failed']
    assert [(case['kind'], case['subject'], case['metric']) for case in failed] == [
        ('completeness', 'localhost', 'mds')], failed
    # the verdict names the MDT's problem, not only the missing result
    assert FAIL_RUN in failed[0]['message'] and MDT in failed[0]['message'], failed[0]['message']
    assert 'Input/output error' in failed[0]['message'], failed[0]['message']
    junit = ElementTree.parse(cluster.run_file(FAIL_RUN, 'junit.xml')).getroot()
    messages = [failure.get('message') or failure.text or '' for failure in junit.iter('failure')]
    assert len(messages) == 1 and 'mds on localhost' in messages[0], messages
    with open(cluster.run_file(FAIL_RUN, 'summary.md'), encoding='utf-8') as handle:
        summary = handle.read()
    verdict_section = summary.split('## Verdict', 1)[1]
    assert verdict_section.lstrip().startswith('**Verdict: FAILED**') and 'mds on localhost' in verdict_section
    with open(cluster.run_file(FAIL_RUN, 'report.html'), encoding='utf-8') as handle:
        html = handle.read()
    assert '<span id="verdict" class="verdict failed">FAILED</span>' in html
    assert 'mds on localhost' in html.split('<h2 id="problems">', 1)[1].split('<h2', 1)[0]


def test_the_verdict_stages_and_report_are_published_for_awx(cluster):
    passed = cluster.published(cluster.passing.stdout)
    assert (passed['iokit_run_id'], passed['iokit_verdict']) == (PASS_RUN, 'passed')
    assert passed['iokit_report_html'] == cluster.run_file(PASS_RUN, 'report.html')
    assert passed['iokit_report_junit'] == cluster.run_file(PASS_RUN, 'junit.xml')
    stages = dict((stage['stage'], stage) for stage in passed['iokit_acceptance_stages'])
    assert [name for name, stage in stages.items() if stage['ran']] == [
        'prepare', 'sgpdd', 'obdfilter', 'mds', 'ost', 'mdtest'], stages
    assert not stages['lnet']['ran'] and 'acceptance_run_lnet=false' in stages['lnet']['reason']
    assert not stages['stats_collect']['ran'] and 'stats_collect_enabled=false' in stages['stats_collect']['reason']


def test_the_failed_verdict_is_published_for_awx(cluster):
    failed = cluster.published(cluster.failing.stdout)
    assert (failed['iokit_verdict'], failed['iokit_verdict_counts']['failed'], failed['iokit_report_missing']) == (
        'failed', 1, 1)
    assert [stage['stage'] for stage in failed['iokit_acceptance_stages'] if stage['ran']] == [
        'obdfilter', 'mds', 'ost', 'mdtest']


SLOW_OST = 'testfs-OST0002'
ONLY_OBDFILTER = {'acceptance_run_prepare': False, 'acceptance_run_sgpdd': False, 'acceptance_run_mds': False,
                  'acceptance_run_ost': False, 'acceptance_run_lnet': False, 'acceptance_run_ior': False,
                  'acceptance_run_mdtest': False}


def _acceptance_on_sim(base, run_id, sim_args, extra_vars):
    """acceptance.yml on a fresh simulated node made with ``sim_args``; returns the cluster, with ``result``."""
    made = AcceptanceCluster(base)
    made.sim('init', '--root', made.root, '--mdts', '1', '--ost-size-mib', '64', '--force',
             *[arg.replace('{mount}', made.mount) for arg in sim_args])
    try:
        with open(made.inventory, 'w', encoding='utf-8') as handle:
            handle.write(INVENTORY.format(python=sys.executable))
        with open(made.extra_vars, 'w', encoding='utf-8') as handle:
            json.dump(dict(SURVEY_VARS, **extra_vars, iokit_results_dir=made.results, iokit_workdir=made.workdir),
                      handle)
        made.result = made.playbook('acceptance.yml', extra={'iokit_run_id': run_id})
        made.run_id = run_id
        return made
    finally:
        subprocess.run([LUSTRE_SIM, 'destroy', '--root', made.root], check=False, stdout=subprocess.DEVNULL)


def _default_criteria_run(base, run_id, override):
    """One simulated OSS with three OSTs at 0.5 MiB/s (``override`` throttles one), obdfilter only, no criteria.

    The rates are far below what a busy test machine's files give (slow by construction, whatever else runs), and
    each OST's 4 MiB take 8 s: the simulated lctl's start-up (a Python interpreter, up to a second on a loaded
    machine, and not the same for the three OSTs) is part of each OST's time, so it must stay a small part of it
    for three equal OSTs to measure equal (a share under 80 % of the median is slow)."""
    sim_args = ['--osts', '3', '--ost-mib-s', '0.5', '--client-mount', '{mount}']
    if override:
        sim_args += ['--ost-mib-s-override', override]
    return _acceptance_on_sim(base, run_id, sim_args, dict(ONLY_OBDFILTER, obdfilter_size_mib=4, obdfilter_thrhi=2))


@pytest.fixture(scope='module')
def slow_ost(tmp_path_factory):
    return _default_criteria_run(str(tmp_path_factory.mktemp('slow-ost')), 'pbtest-slow-ost',
                                 SLOW_OST.split('-')[1] + '=0.25')


@pytest.fixture(scope='module')
def equal_osts(tmp_path_factory):
    return _default_criteria_run(str(tmp_path_factory.mktemp('equal-osts')), 'pbtest-equal-osts', None)


def test_without_criteria_a_slow_ost_fails_the_verdict_by_name(slow_ost):
    output = slow_ost.result.stdout
    assert slow_ost.result.returncode != 0, output[-8000:]
    with open(slow_ost.run_file(slow_ost.run_id, 'verdict.json'), encoding='utf-8') as handle:
        verdict = json.load(handle)
    assert verdict['verdict'] == 'failed'
    failed = [case for case in verdict['cases'] if case['status'] == 'failed']
    assert failed and all(case['kind'] == 'outliers' and case['subject'] == 'localhost/' + SLOW_OST
                          for case in failed), failed
    junit = ElementTree.parse(slow_ost.run_file(slow_ost.run_id, 'junit.xml')).getroot()
    messages = [failure.get('message') for failure in junit.iter('failure')]
    assert messages and all(SLOW_OST in m and m.startswith('obdfilter obdfilter_') and 'peer median' in m
                            and ' % of it' in m and 'limit 0' in m for m in messages), messages
    assert 'Findings: ' in output and SLOW_OST in output


def test_the_report_and_summary_open_with_the_slow_ost(slow_ost):
    with open(slow_ost.run_file(slow_ost.run_id, 'report.html'), encoding='utf-8') as handle:
        html = handle.read()
    first = html[html.index('<h2'):]
    assert first.startswith('<h2 id="findings">Findings</h2>')
    findings = first.split('<h2', 2)[1]
    assert SLOW_OST in findings and 'obdfilter' in findings and 'brw_stats' in findings
    with open(slow_ost.run_file(slow_ost.run_id, 'summary.md'), encoding='utf-8') as handle:
        summary = handle.read()
    first = summary[summary.index('\n## '):]
    assert first.startswith('\n## Findings')
    findings = first.split('\n## ', 2)[1]
    # One row per weak component, its evidence (a row per survey and metric) beneath it.
    components = [line for line in findings.splitlines() if re.match(r'\| [0-9]+ \| ', line)]
    assert len(components) == 1 and components[0].startswith('| 1 | OST **%s** | localhost |' % SLOW_OST), findings
    rows = [line for line in findings.splitlines() if line.startswith('| | ↳ obdfilter ')]
    assert rows and all('localhost/' + SLOW_OST in row for row in rows), findings
    summary_obdfilter = open(slow_ost.run_file(slow_ost.run_id, 'summary-obdfilter.md'), encoding='utf-8').read()
    slow_rows = [line for line in summary_obdfilter.split('## Slow OSTs', 1)[1].splitlines() if '**slow**' in line]
    assert slow_rows and all('`%s`' % SLOW_OST in row for row in slow_rows)


def test_without_criteria_equal_osts_pass_with_a_case_of_every_default_criterion(equal_osts):
    assert equal_osts.result.returncode == 0, equal_osts.result.stdout[-8000:]
    with open(equal_osts.run_file(equal_osts.run_id, 'verdict.json'), encoding='utf-8') as handle:
        verdict = json.load(handle)
    assert verdict['verdict'] == 'passed', verdict['failures']
    status = {}
    for case in verdict['cases']:
        status.setdefault(case['kind'], set()).add(case['status'])
    assert 'passed' in status['completeness'] and 'passed' in status['outliers'], status
    # layer efficiency is judged where obdfilter and sgpdd both ran: here sgpdd did not, so it is skipped
    assert status['ratios'] == {'skipped'}, status
    published = equal_osts.published(equal_osts.result.stdout) if 'CUSTOM STATS' in equal_osts.result.stdout else None
    if published is not None:
        assert published['iokit_verdict'] == 'passed'
    with open(equal_osts.run_file(equal_osts.run_id, 'summary.md'), encoding='utf-8') as handle:
        assert 'No finding: no component is low among its peers.' in handle.read()


def test_bad_variables_of_every_stage_are_named_before_any_stage_runs(tmp_path):
    """No client mount given (and the simulated node has none): the ost and mdtest problems, in one message,
    before the obdfilter stage (which comes first and is fine) has touched the node."""
    # iokit_fsname: other simulated clients mounted on this machine are not this file system's
    made = _acceptance_on_sim(str(tmp_path), 'pbtest-plan', ['--fsname', 'planfs', '--osts', '2'], dict(
        ONLY_OBDFILTER, acceptance_run_ost=True, acceptance_run_mdtest=True, iokit_fsname='planfs'))
    output = made.result.stdout
    assert made.result.returncode != 0, output[-6000:]
    failed = output[output.index('Fail naming every problem'):]
    message = failed[:failed.index('PLAY RECAP')]
    assert 'not started: fix these first' in message
    assert 'ost on localhost: ost_mount_point' in message and 'mdtest on localhost: mdtest_mount_point' in message
    assert 'Lustre client mounts found:' in message
    assert 'Acceptance | Stage obdfilter' not in output
    assert not os.path.exists(envelope_path(made.results, 'pbtest-plan', 'localhost', 'obdfilter'))


def test_the_client_mount_is_found_when_not_given(tmp_path):
    """The ost stage without ost_mount_point surveys through the simulated client's mount of iokit_fsname."""
    made = _acceptance_on_sim(str(tmp_path), 'pbtest-discover',
                              ['--fsname', 'discofs', '--osts', '2', '--client-mount', '{mount}'],
                              dict(ONLY_OBDFILTER, acceptance_run_obdfilter=False, acceptance_run_ost=True,
                                   iokit_fsname='discofs'))
    assert made.result.returncode == 0, made.result.stdout[-6000:]
    envelope = made.envelope('ost', 'pbtest-discover')
    assert envelope['status'] == 'ok' and envelope['parameters']['mount_point'] == made.mount, envelope['parameters']
