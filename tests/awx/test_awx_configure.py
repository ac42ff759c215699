# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/awx-configure.yml without an AWX: its awx.awx calls use only documented options, what it
would configure (awx_iokit_render_to) matches the survey forms, and the acceptance workflow, walked with
AWX's own edge rules, runs every survey whatever fails, cleans up after each failure before going on and
ends with the report.  awx/playbooks/workflow-plan.yml publishes the run id and the expected hosts."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV_BIN = os.path.dirname(sys.executable)
PLAYBOOK = os.path.join(ROOT, 'playbooks', 'awx-configure.yml')
PLAN = os.path.join(ROOT, 'awx', 'playbooks', 'workflow-plan.yml')
AWX = os.path.join(ROOT, '.venv', 'collections', 'ansible_collections', 'awx', 'awx')


def _run(cmd: list[str], env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    merged = dict(os.environ, PATH=VENV_BIN + os.pathsep + os.environ.get('PATH', ''), NO_COLOR='1')
    merged.update(env or {})
    done = subprocess.run(cmd, cwd=ROOT, env=merged, capture_output=True, text=True, check=False)
    if check:
        assert done.returncode == 0, '%s\n%s%s' % (' '.join(cmd), done.stdout, done.stderr)
    return done


def _forms() -> list[dict]:
    forms = []
    for path in sorted(glob.glob(os.path.join(ROOT, 'awx', 'surveys', '*.yml'))):
        with open(path, encoding='utf-8') as handle:
            forms.append(yaml.safe_load(handle))
    return forms


@pytest.fixture(scope='module')
def awx_installed():
    if not os.path.isdir(AWX):
        pytest.fail('awx.awx is not in .venv/collections: run `make setup`')


def _render(tmp_path, *extra: str) -> dict:
    out = tmp_path / 'objects.json'
    _run([os.path.join(VENV_BIN, 'ansible-playbook'), PLAYBOOK, '-e', 'awx_iokit_render_to=%s' % out, *extra])
    with open(out, encoding='utf-8') as handle:
        return json.load(handle)


@pytest.fixture(scope='module')
def workflow(tmp_path_factory):
    return _render(tmp_path_factory.mktemp('wf'))['workflow']


def test_syntax(awx_installed):
    for playbook in (PLAYBOOK, PLAN):
        _run([os.path.join(VENV_BIN, 'ansible-playbook'), '--syntax-check', playbook])


def test_awx_tasks_use_documented_options(awx_installed):
    """ansible-lint cannot load awx.awx 19.4.0's modules on Python 3.12, so their options are checked here."""
    with open(PLAYBOOK, encoding='utf-8') as handle:
        tasks = yaml.safe_load(handle)[0]['tasks']
    used = {}
    for task in tasks:
        for key, args in task.items():
            if key.startswith('awx.awx.'):
                used.setdefault(key, []).append(args)
    assert set(used) >= {'awx.awx.project', 'awx.awx.inventory', 'awx.awx.credential', 'awx.awx.job_template',
                         'awx.awx.workflow_job_template', 'awx.awx.execution_environment'}
    docs = json.loads(_run([os.path.join(VENV_BIN, 'ansible-doc'), '--json', *sorted(used)]).stdout)
    for module, calls in used.items():
        options = docs[module]['doc']['options']
        for args in calls:
            unknown = sorted(set(args) - set(options))
            assert not unknown, '%s: %s not options of the module' % (module, ', '.join(unknown))


def test_schema_nodes_use_documented_keys(awx_installed, workflow):
    docs = json.loads(_run([os.path.join(VENV_BIN, 'ansible-doc'), '--json', 'awx.awx.workflow_job_template']).stdout)
    node_options = docs['awx.awx.workflow_job_template']['doc']['options']['schema']['suboptions']
    for node in workflow['schema']:
        assert set(node) <= set(node_options) | {'related'}, sorted(set(node) - set(node_options))
        assert set(node['related']) <= {'success_nodes', 'failure_nodes', 'always_nodes', 'credentials'}


def test_one_job_template_per_form(tmp_path):
    rendered = _render(tmp_path, '-e', 'awx_iokit_job_slice_count=4', '-e', 'awx_iokit_results_dir=/srv/iokit')
    by_name = {t['name']: t for t in rendered['job_templates']}
    forms = [f for f in _forms() if 'job_template' in f]
    assert sorted(by_name) == sorted(f['job_template']['name'] for f in forms)
    for form in forms:
        template = by_name[form['job_template']['name']]
        assert template['playbook'] == form['job_template']['playbook']
        assert template['survey_spec']['spec'] == form['survey_spec']['spec']
        assert template['job_slice_count'] == (4 if form['job_template']['job_slicing']['sliceable'] else 1)
        assert template['extra_vars']['iokit_results_dir'] == '/srv/iokit'
        judged = template['playbook'] in ('playbooks/report.yml', 'playbooks/acceptance.yml')
        assert ('acceptance_criteria' in template['extra_vars']) is judged


def test_one_template_gets_its_own_slice_count(tmp_path):
    rendered = _render(tmp_path, '-e', 'awx_iokit_job_slice_count=2',
                       '-e', '{"awx_iokit_job_slice_counts": {"lustre.iokit | survey obdfilter": 8}}')
    counts = {t['name']: t['job_slice_count'] for t in rendered['job_templates']}
    assert counts['lustre.iokit | survey obdfilter'] == 8
    assert counts['lustre.iokit | survey mds'] == 2
    assert counts['lustre.iokit | survey lnet'] == 1


def _refused(tmp_path, extra_vars):
    """awx-configure.yml rendering to ``tmp_path/x`` with ``extra_vars``: it must fail, before rendering anything."""
    done = _run([os.path.join(VENV_BIN, 'ansible-playbook'), PLAYBOOK, '-e', 'awx_iokit_render_to=%s' % (tmp_path / 'x'),
                 '-e', json.dumps(extra_vars)], check=False)
    assert done.returncode != 0
    assert not (tmp_path / 'x').exists()
    return done


@pytest.mark.parametrize('template', ['lustre.iokit | survey lnet', 'lustre.iokit | survey mdtest',
                                      'lustre.iokit | survey ior'])
def test_slices_of_a_whole_fleet_survey_are_refused_naming_the_template(tmp_path, template):
    reason = next(f['job_template']['job_slicing']['reason'] for f in _forms()
                  if f.get('job_template', {}).get('name') == template)
    done = _refused(tmp_path, {'awx_iokit_job_slice_counts': {template: 4}})
    message = ' '.join(done.stdout.split())
    assert 'awx_iokit_job_slice_counts: %s: 4 slices asked, but this job template cannot be sliced: %s' % (
        template, ' '.join(reason.split())) in message, done.stdout[-2000:]


def test_a_slice_count_for_an_unknown_template_is_refused(tmp_path):
    done = _refused(tmp_path, {'awx_iokit_job_slice_counts': {'survey obdfilter': 4}})
    assert 'awx_iokit_job_slice_counts: survey obdfilter: no such job template' in done.stdout


def test_unknown_workflow_survey_is_refused(tmp_path):
    done = _refused(tmp_path, {'awx_iokit_workflow_surveys': ['obdfilter', 'iozone']})
    assert 'awx_iokit_workflow_surveys: no survey form for iozone' in done.stdout


def test_live_run_needs_the_repository_and_the_image():
    done = _run([os.path.join(VENV_BIN, 'ansible-playbook'), PLAYBOOK], check=False)
    assert done.returncode != 0
    assert 'awx_iokit_scm_url' in done.stdout and 'awx_iokit_ee_image' in done.stdout


def _walk(schema: list[dict], failing: set[str]) -> list[str]:
    """The order AWX runs the nodes in, by its rules: a finished node's success (or, when it failed or was
    cancelled, failure) edges and its always edges lead on; a node runs once every parent that can still
    run has finished; a node none of whose parents leads to it never runs."""
    nodes = {n['identifier']: n for n in schema}
    parents = {name: [] for name in nodes}
    for node in schema:
        for kind in ('success_nodes', 'failure_nodes', 'always_nodes'):
            for child in node['related'][kind]:
                parents[child['identifier']].append((node['identifier'], kind))
    state = {name: 'pending' for name in nodes}
    order = []
    while True:
        progressed = False
        for name in nodes:
            if state[name] != 'pending':
                continue
            if not parents[name]:
                fire = True
            elif any(state[p] == 'pending' for p, _kind in parents[name]):
                continue
            else:
                fire = any(state[p] != 'skipped' and (kind == 'always_nodes' or kind == (
                    'failure_nodes' if state[p] == 'failed' else 'success_nodes')) for p, kind in parents[name])
            state[name] = ('failed' if name in failing else 'ok') if fire else 'skipped'
            if fire:
                order.append(name)
            progressed = True
        if not progressed:
            return order


def test_workflow_asks_the_client_mount_of_each_client_survey(workflow):
    assert [q['variable'] for q in workflow['survey_spec']['spec']] == [
        'ost_mount_point', 'ior_mount_point', 'mdtest_mount_point']
    ior = next(n for n in workflow['schema'] if n['identifier'] == 'ior')
    assert ior['unified_job_template']['name'] == 'lustre.iokit | survey ior'


def test_workflow_runs_in_order_when_all_succeed(workflow):
    assert _walk(workflow['schema'], set()) == ['plan', 'prepare', 'obdfilter', 'mds', 'ost', 'lnet', 'ior',
                                                'mdtest', 'report']


@pytest.mark.parametrize('failing', ['obdfilter', 'mds', 'ost', 'lnet', 'ior', 'mdtest'])
def test_a_failed_or_cancelled_survey_is_cleaned_up_before_the_next(workflow, failing):
    order = _walk(workflow['schema'], {failing})
    surveys = ['obdfilter', 'mds', 'ost', 'lnet', 'ior', 'mdtest']
    assert [n for n in order if n in surveys] == surveys
    cleanup = 'cleanup-' + failing
    assert order.index(failing) + 1 == order.index(cleanup)
    assert [n for n in order if n.startswith('cleanup-')] == [cleanup]
    assert order[-1] == 'report'
    node = next(n for n in workflow['schema'] if n['identifier'] == cleanup)
    assert node['extra_data'] == {'cleanup_surveys': [failing]}


def test_failed_prepare_does_not_stop_the_surveys(workflow):
    assert _walk(workflow['schema'], {'prepare'})[-1] == 'report'


def test_failed_plan_touches_no_node(workflow):
    assert _walk(workflow['schema'], {'plan'}) == ['plan']


def test_workflow_asks_only_what_its_surveys_need(tmp_path):
    rendered = _render(tmp_path, '-e', '{"awx_iokit_workflow_surveys": ["obdfilter", "ost"]}',
                       '-e', 'awx_iokit_workflow_prepare=false')
    workflow = rendered['workflow']
    assert [q['variable'] for q in workflow['survey_spec']['spec']] == ['ost_mount_point']
    assert _walk(workflow['schema'], set()) == ['plan', 'obdfilter', 'ost', 'report']
    templates = {n['identifier']: n['unified_job_template']['name'] for n in workflow['schema']}
    assert templates['report'] == workflow['report_template']
    assert templates['plan'] == workflow['plan_template']


def _plan(tmp_path, *extra: str) -> subprocess.CompletedProcess:
    inventory = tmp_path / 'hosts.yml'
    inventory.write_text(yaml.safe_dump({'all': {'children': {
        'oss': {'hosts': {'oss1': None, 'oss2': None}}, 'mds': {'hosts': {'mds1': None}},
        'clients': {'hosts': {'client1': None}}}}}), encoding='utf-8')
    return _run([os.path.join(VENV_BIN, 'ansible-playbook'), PLAN, '-i', str(inventory), *extra],
                env={'ANSIBLE_STDOUT_CALLBACK': 'ansible.posix.json', 'ANSIBLE_SHOW_CUSTOM_STATS': 'true'},
                check=False)


def test_plan_publishes_run_id_and_expected_hosts(tmp_path):
    done = _plan(tmp_path, '-e', 'awx_workflow_job_id=42', '-e', '{"iokit_workflow_surveys": ["obdfilter", "mds", "ost"]}')
    assert done.returncode == 0, done.stdout + done.stderr
    stats = json.loads(done.stdout)['global_custom_stats']
    assert stats['iokit_run_id'] == 'awx-wf42'
    assert stats['report_expected'] == {'obdfilter': ['oss1', 'oss2'], 'mds': ['mds1']}


def test_plan_keeps_a_given_run_id_and_refuses_bad_criteria(tmp_path):
    done = _plan(tmp_path, '-e', 'iokit_run_id=rerun-7', '-e', 'awx_workflow_job_id=42')
    assert json.loads(done.stdout)['global_custom_stats']['iokit_run_id'] == 'rerun-7'
    bad = _plan(tmp_path, '-e', 'iokit_run_id=has/slash')
    assert bad.returncode != 0 and 'iokit_run_id' in bad.stdout
    criteria = _plan(tmp_path, '-e', '{"acceptance_criteria": {"obdfilter": {"no_such_check": 1}}}')
    assert criteria.returncode != 0
    assert 'global_custom_stats' not in criteria.stdout or 'iokit_run_id' not in json.loads(criteria.stdout).get(
        'global_custom_stats', {})
