# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fault runs of the survey playbooks on the faults scenario's OSSs, reached over real SSH.

Each test injects a fault (through the simulator, or by killing the survey, a container or
ansible-playbook itself), runs the unmodified playbooks as a user does, and checks both what the
run reports and that every host is clean afterwards: no echo_client device, no obdecho loaded by
us, no survey module or lctl worker still running, nothing left in the node state, and the
controller's stored results intact.

The tests run in file order and share the two hosts; each starts from, and leaves, clean hosts
without faults (the fixture ``clean_hosts`` checks and restores that).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

PROJECT = os.environ.get('MOLECULE_PROJECT_DIRECTORY', os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..')))
EPHEMERAL = os.environ.get('MOLECULE_EPHEMERAL_DIRECTORY', '')
INVENTORY = os.path.dirname(os.environ.get('MOLECULE_INVENTORY_FILE', ''))
RESULTS = os.path.join(EPHEMERAL, 'iokit-results')
PLAYBOOKS = os.path.join(PROJECT, 'playbooks')
ANSIBLE_PLAYBOOK = os.path.join(PROJECT, '.venv', 'bin', 'ansible-playbook')
SIM_ROOT = '/var/lib/lustre-sim/node'
# group_vars/all.yml: a workdir that survives the container's restart, as /var/tmp survives a reboot.
WORKDIR = '/var/tmp/lustre-iokit'
OSS1, OSS2 = 'faults-oss1', 'faults-oss2'
HOSTS = (OSS1, OSS2)
OSTS = {OSS1: ['faultfs-OST0000', 'faultfs-OST0001'], OSS2: ['faultfs-OST0002', 'faultfs-OST0003']}
# A sweep that lasts (64 MiB per OST at the OSTs' 20 MiB/s, three tests), so a fault can hit it mid-way.
LONG_SWEEP = ('-e', 'obdfilter_size_mib=64')
# What a survey leaves running on a node: the module (and its async wrapper) and the lctl workers.
SURVEY_PROCESSES = r'AnsiballZ_|lctl|lustre_sim[.]tools'
RUN_TIMEOUT_S = 600

pytestmark = pytest.mark.skipif(not (EPHEMERAL and INVENTORY), reason='run by molecule (molecule test -s faults)')


# -- the hosts, seen from the controller ----------------------------------------------------------


def podman(*args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(['podman', *args], capture_output=True, text=True, check=check, timeout=timeout)


def on_host(host: str, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
    return podman('exec', host, *argv, check=check)


def sim(host: str, *args: str) -> str:
    return on_host(host, 'lustre-sim', args[0], '--root', SIM_ROOT, *args[1:]).stdout


def sim_status(host: str) -> dict:
    return json.loads(sim(host, 'status'))


def echo_devices(host: str) -> list[str]:
    return [d['name'] for d in sim_status(host)['devices'] if d['type'] in ('echo_client', 'obdecho')]


def survey_processes(host: str) -> list[str]:
    found = on_host(host, 'pgrep', '-af', SURVEY_PROCESSES, check=False)
    return found.stdout.splitlines()


def node_state(host: str) -> dict | None:
    shown = on_host(host, 'cat', WORKDIR + '/node-state.json', check=False)
    return json.loads(shown.stdout) if shown.returncode == 0 else None


def leftovers(host: str) -> dict:
    """Everything a survey may leave on a host; all empty on a clean host."""
    status = sim_status(host)
    state = node_state(host) or {}
    return {
        'echo devices': [d['name'] for d in status['devices'] if d['type'] in ('echo_client', 'obdecho')],
        'obdecho loaded': [m for m in status['modules'] if m == 'obdecho'],
        'simulator helpers': status['helpers'],
        'survey processes': survey_processes(host),
        'node-state entries': {k: v for k, v in state.items() if isinstance(v, list) and v},
        'faults': status['faults'],
        # What Ansible extracted a SIGKILLed module of the collection into (cleanup.yml and the survey plays'
        # cleanup remove it; a run that ends normally leaves none).
        'module payloads': on_host(host, 'sh', '-c', 'ls -d "${TMPDIR:-/tmp}"/ansible_lustre.iokit.*_payload_* '
                                   '2>/dev/null', check=False).stdout.split(),
    }


def async_wrapper_processes(host: str) -> tuple[list[str], list[str]]:
    """Ansible's async wrapper processes on ``host``: (watchdogs, job processes).

    The daemonised watchdog sits in its session's process group; the job process it forks (which runs the module,
    writes the result that async_status reads, then exits) leads a group of its own.
    """
    shown = on_host(host, 'ps', '-eo', 'pid=,pgid=,args=', check=False).stdout
    watchdogs, jobs = [], []
    for line in shown.splitlines():
        fields = line.split(None, 2)
        if len(fields) == 3 and 'async_wrapper' in fields[2]:
            (jobs if fields[0] == fields[1] else watchdogs).append(line.strip())
    return watchdogs, jobs


def leftovers_after_run(host: str) -> dict:
    """What a finished survey playbook left on ``host``.

    Its cleanup waited for the survey's async watchdog to end (docs/safety.md), so none may run now. The job process
    ends by itself right after writing the result, so it is waited for, with a deadline, before anything else is read.
    """
    watchdogs, unused_jobs = async_wrapper_processes(host)
    assert watchdogs == [], 'the cleanup left async watchdogs on %s' % host
    wait_for('the async job processes on %s to exit' % host, lambda: not async_wrapper_processes(host)[1],
             timeout=60)
    return leftovers(host)


def assert_clean(host: str, left: dict | None = None) -> None:
    left = leftovers(host) if left is None else left
    assert {k: v for k, v in left.items() if v} == {}, '%s is not clean' % host


def assert_clean_after_run(host: str) -> None:
    assert_clean(host, leftovers_after_run(host))


def wait_for(what: str, condition, timeout: float = 180, interval: float = 0.5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError('timed out after %ss waiting for %s' % (timeout, what))


def wait_for_ssh(host: str) -> None:
    port = {OSS1: 22211, OSS2: 22212}[host]
    ssh = ['ssh', '-p', str(port), '-i', os.path.join(PROJECT, 'molecule', '.ssh', 'id_ed25519'),
           '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR',
           '-o', 'ConnectTimeout=5', '-o', 'BatchMode=yes', 'root@127.0.0.1', 'true']
    wait_for('sshd on %s' % host, lambda: subprocess.run(ssh, capture_output=True, timeout=30).returncode == 0,
             timeout=120, interval=1)


# -- the controller -------------------------------------------------------------------------------


def playbook_argv(name: str, run_id: str, *extra: str) -> list[str]:
    return [ANSIBLE_PLAYBOOK, '-i', INVENTORY, os.path.join(PLAYBOOKS, name), '-e', 'iokit_run_id=' + run_id, *extra]


def playbook_env() -> dict:
    env = dict(os.environ)
    env.setdefault('ANSIBLE_COLLECTIONS_PATH', os.path.join(PROJECT, '.venv', 'collections'))
    env['ANSIBLE_CONFIG'] = os.path.join(PROJECT, 'ansible.cfg')
    env['ANSIBLE_FORCE_COLOR'] = '0'
    env['ANSIBLE_NOCOLOR'] = '1'
    return env


def run_playbook(name: str, run_id: str, *extra: str) -> subprocess.CompletedProcess:
    result = subprocess.run(playbook_argv(name, run_id, *extra), capture_output=True, text=True,
                            env=playbook_env(), cwd=PROJECT, timeout=RUN_TIMEOUT_S)
    # Kept for the developer: molecule shows only the test failures.
    with open(os.path.join(EPHEMERAL, 'faults-%s-%s.log' % (run_id, name.replace('.yml', ''))), 'w') as log:
        log.write(result.stdout + result.stderr)
    return result


def start_playbook(name: str, run_id: str, *extra: str) -> subprocess.Popen:
    log = open(os.path.join(EPHEMERAL, 'faults-%s-%s.log' % (run_id, name.replace('.yml', ''))), 'w')
    # Its own session: ansible-playbook's forks and ssh masters can be signalled together, as a terminal's ^C does.
    return subprocess.Popen(playbook_argv(name, run_id, *extra), stdout=log, stderr=subprocess.STDOUT,
                            env=playbook_env(), cwd=PROJECT, start_new_session=True)


def envelope(run_id: str, host: str, survey: str = 'obdfilter') -> dict | None:
    path = os.path.join(RESULTS, run_id, host, survey + '.json')
    if not os.path.exists(path):
        return None
    with open(path, encoding='utf-8') as handle:
        return json.load(handle)


def per_ost_results(found: dict) -> dict:
    """{ost: [per-test results of every measured point]} from an obdfilter envelope."""
    results: dict = {}
    for record in found['records']:
        if record.get('skipped'):
            continue
        for ost, tests in (record.get('per_ost') or {}).items():
            results.setdefault(ost, []).extend(tests.values() if isinstance(tests, dict) else tests)
    return results


def is_measured(test: dict) -> bool:
    """A per-OST test result with a rate (``short``: too brief for one-second samples, still measured)."""
    return test.get('status') in ('ok', 'short') and bool(test.get('mib_s'))


def recap(output: str) -> dict:
    """PLAY RECAP counters per host."""
    counts = {}
    lines = output.split('PLAY RECAP', 1)[-1].splitlines()
    for line in lines:
        words = line.split()
        if len(words) > 2 and words[1] == ':':
            counts[words[0]] = {k: int(v) for k, v in (w.split('=') for w in words[2:] if '=' in w)}
    return counts


# -- fixtures --------------------------------------------------------------------------------------


@pytest.fixture(scope='module')
def earlier_results():
    """Snapshot of the controller's results store; at the end every file must still be there, unchanged."""
    def snapshot():
        files = {}
        for directory, _, names in os.walk(RESULTS):
            for name in names:
                path = os.path.join(directory, name)
                with open(path, 'rb') as handle:
                    files[os.path.relpath(path, RESULTS)] = handle.read()
        return files
    return snapshot


@pytest.fixture
def clean_hosts():
    """Every test starts on clean hosts without faults and leaves them so (whatever it did to them)."""
    for host in HOSTS:
        assert_clean(host)
    yield
    for host in HOSTS:
        if podman('container', 'inspect', '--format', '{{.State.Running}}', host).stdout.strip() != 'true':
            podman('start', host)
            wait_for_ssh(host)
        sim(host, 'fault', 'clear', '--all')


# -- c, d, e: faults inside the survey, one run ---------------------------------------------------


@pytest.fixture(scope='module')
def inner_faults_run():
    """One run of survey-obdfilter.yml on both OSSs with three faults in place:

    (c) oss1 has a leftover UP echo client faultfs-OST0000_ecc (obdecho loaded) from an aborted I/O-kit run,
        which the survey leaves alone and playbooks/cleanup.yml removes afterwards;
    (e) oss1's faultfs-OST0001 fails writes with EIO;
    (d) oss2's faultfs-OST0003 answers test_brw with ENOMEM.
    """
    for host in HOSTS:
        assert_clean(host)
    sim(OSS1, 'fault', 'add', 'leftover_echo_client', '--target', 'faultfs-OST0000')
    sim(OSS1, 'fault', 'add', 'io_error', '--target', 'faultfs-OST0001')
    sim(OSS2, 'fault', 'add', 'enomem', '--target', 'faultfs-OST0003')
    before = {host: sim_status(host) for host in HOSTS}
    result = run_playbook('survey-obdfilter.yml', 'faults-inner', '-e', 'iokit_report=true')
    after = {host: leftovers_after_run(host) for host in HOSTS}
    for host in HOSTS:
        sim(host, 'fault', 'clear', '--all')
    # The aborted run's echo client is not the survey's to remove: playbooks/cleanup.yml removes I/O-kit leftovers.
    cleanup = run_playbook('cleanup.yml', 'faults-inner', '-e', 'iokit_cleanup_hosts=' + OSS1)
    after_cleanup = leftovers(OSS1)
    # The leftover's obdecho was loaded by the "aborted run", not by us: it stays loaded (docs/docsite/rst/safety.rst);
    # the test unloads it to give the next test a pristine node.
    if 'obdecho' in sim_status(OSS1)['modules']:
        on_host(OSS1, 'rmmod', 'obdecho')
    return {'result': result, 'before': before, 'after': after, 'cleanup': cleanup, 'after_cleanup': after_cleanup}


def test_c_leftover_echo_client_is_left_to_the_cleanup_not_attach_file_exists(inner_faults_run):
    assert 'faultfs-OST0000_ecc' in [d['name'] for d in inner_faults_run['before'][OSS1]['devices']]
    found = envelope('faults-inner', OSS1)
    assert found is not None, inner_faults_run['result'].stdout[-3000:]
    messages = ' '.join(e['message'] for e in found['errors'])
    assert 'File exists' not in messages
    measured = per_ost_results(found)
    assert any(is_measured(r) for r in measured['faultfs-OST0000']), measured
    # The survey attaches its own, run-named echo client beside the leftover, and removes only its own.
    assert found['environment'].get('reused_echo_clients', []) == []
    left = inner_faults_run['after'][OSS1]
    assert left['echo devices'] == ['faultfs-OST0000_ecc'], left
    assert left['survey processes'] == [] and left['node-state entries'] == {}
    assert left['obdecho loaded'] == ['obdecho']
    # playbooks/cleanup.yml removes the leftover; obdecho, loaded before us, stays loaded (docs/architecture.md section 7).
    assert inner_faults_run['cleanup'].returncode == 0, inner_faults_run['cleanup'].stdout[-3000:]
    assert inner_faults_run['after_cleanup']['echo devices'] == []
    assert inner_faults_run['after_cleanup']['obdecho loaded'] == ['obdecho']


def test_e_io_error_is_recorded_as_error_and_the_other_ost_measured(inner_faults_run):
    found = envelope('faults-inner', OSS1)
    measured = per_ost_results(found)
    assert measured['faultfs-OST0001'] and all(r.get('status') == 'error' for r in measured['faultfs-OST0001']), measured
    assert any(is_measured(r) for r in measured['faultfs-OST0000'])
    assert found['status'] in ('partial', 'failed')
    assert 'Input/output error' in ' '.join(e['message'] for e in found['errors'])


def test_d_enomem_is_recorded_as_such_and_the_node_left_clean(inner_faults_run):
    found = envelope('faults-inner', OSS2)
    assert found is not None
    assert 'Cannot allocate memory' in ' '.join(e['message'] for e in found['errors'])
    measured = per_ost_results(found)
    assert all(r.get('status') == 'error' for r in measured['faultfs-OST0003']), measured
    assert any(is_measured(r) for r in measured['faultfs-OST0002'])
    assert found['status'] in ('partial', 'failed')
    left = inner_faults_run['after'][OSS2]
    assert {k: v for k, v in left.items() if v and k != 'faults'} == {}


def test_inner_faults_run_reports_the_hosts_and_keeps_them_clean(inner_faults_run):
    result = inner_faults_run['result']
    # Both hosts measured something: their envelopes are partial, nobody "measured nothing".
    statuses = {host: envelope('faults-inner', host)['status'] for host in HOSTS}
    if 'failed' in statuses.values():
        assert result.returncode != 0 and 'measured nothing' in result.stdout
    else:
        assert result.returncode == 0, result.stdout[-3000:]
    report = os.path.join(RESULTS, 'faults-inner', 'summary.md')
    assert os.path.exists(report)
    # Only the aborted run's leftover is left (test c); none of this run's echo clients.
    assert inner_faults_run['after'][OSS1]['echo devices'] == ['faultfs-OST0000_ecc']
    assert inner_faults_run['after'][OSS2]['echo devices'] == []


# -- a: the async limit expires mid-survey (the async wrapper SIGKILLs the module) ----------------


def test_a_async_limit_expiring_is_reported_and_always_cleans_up(clean_hosts):
    # Every test_brw hangs: the module is SIGKILLed by Ansible's async wrapper while its lctl workers,
    # each leading its own process group, keep the echo clients busy. The async limit is roles/survey_common's internal
    # __survey_common_async_s (not a setting: only extra vars outrank role vars), cut here below the module's timeout.
    sim(OSS1, 'fault', 'add', 'hang', '--command', 'test_brw')
    result = run_playbook('survey-obdfilter.yml', 'faults-async', '-e', 'iokit_obdfilter_hosts=' + OSS1,
                          '-e', '__survey_common_async_s=8')
    assert result.returncode != 0
    assert 'Timeout exceeded' in result.stdout
    assert '%s has no result (Wait for the survey: Timeout exceeded)' % OSS1 in result.stdout
    assert envelope('faults-async', OSS1) is None
    # The play's own always section cleaned up: no playbooks/cleanup.yml here.
    assert recap(result.stdout)[OSS1]['rescued'] == 1
    sim(OSS1, 'fault', 'clear', '--all')
    assert_clean_after_run(OSS1)


# -- f: ansible-playbook interrupted (SIGINT, then SIGKILL), then playbooks/cleanup.yml --------------


def test_f_interrupted_ansible_playbook_then_cleanup_playbook(clean_hosts, earlier_results):
    stored_before = earlier_results()
    for host in HOSTS:
        sim(host, 'fault', 'add', 'hang', '--command', 'test_brw')
    run = start_playbook('survey-obdfilter.yml', 'faults-interrupted')
    try:
        # Mid-survey: both hosts have their echo clients and a hanging lctl test_brw worker.
        for host in HOSTS:
            wait_for('test_brw running on %s' % host,
                     lambda host=host: [p for p in survey_processes(host) if 'test_brw' in p] and echo_devices(host))
        os.killpg(run.pid, signal.SIGINT)
        try:
            run.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    finally:
        # Whatever survived the ^C (ansible-playbook, its forks, ssh masters) is killed, as a cancelled job is.
        try:
            os.killpg(run.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        run.wait(timeout=30)
    # The nodes do not know: the modules still run under their async wrappers, the workers still hang.
    for host in HOSTS:
        left = leftovers(host)
        assert [p for p in left['survey processes'] if 'AnsiballZ_obdfilter_survey' in p], (host, left)
        assert left['echo devices'], (host, left)
    # The surveys still run (they hold their survey locks): cleanup.yml stops a live run only when named.
    result = run_playbook('cleanup.yml', 'faults-interrupted', '-e', 'cleanup_run_id=faults-interrupted')
    assert result.returncode == 0, result.stdout[-3000:]
    for host in HOSTS:
        sim(host, 'fault', 'clear', '--all')
        assert_clean_after_run(host)
    # The controller's results of the earlier runs are untouched.
    stored_after = earlier_results()
    assert {k: v for k, v in stored_before.items() if stored_after.get(k) != v} == {}
    assert envelope('faults-interrupted', OSS1) is None


# -- b: a host dies mid-survey ----------------------------------------------------------------------


def test_b_dead_host_is_reported_and_the_others_stored(clean_hosts):
    run = start_playbook('survey-obdfilter.yml', 'faults-dead-host', '-e', 'iokit_report=true', *LONG_SWEEP)
    try:
        wait_for('the survey running on %s' % OSS2,
                 lambda: [p for p in survey_processes(OSS2) if 'test_brw' in p] and echo_devices(OSS2))
        podman('kill', OSS2)
        run.wait(timeout=RUN_TIMEOUT_S)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait(timeout=30)
    with open(os.path.join(EPHEMERAL, 'faults-faults-dead-host-survey-obdfilter.log')) as log:
        output = log.read()
    assert run.returncode != 0
    counts = recap(output)
    assert counts[OSS2]['unreachable'] >= 1 and counts[OSS1]['failed'] == 1 and counts[OSS1]['unreachable'] == 0
    # The survivor finished and was stored; the dead host is named in the play's outcome and in the report.
    assert envelope('faults-dead-host', OSS1)['status'] == 'ok'
    assert envelope('faults-dead-host', OSS2) is None
    assert '%s has no result (unreachable' % OSS2 in output
    with open(os.path.join(RESULTS, 'faults-dead-host', 'summary.md'), encoding='utf-8') as handle:
        summary = handle.read()
    assert OSS2 in summary
    assert os.path.exists(os.path.join(RESULTS, 'faults-dead-host', 'summary-obdfilter.md'))
    assert_clean_after_run(OSS1)
    # The host comes back with what the killed survey left (the simulator keeps its devices, the node state
    # is on /var/tmp); playbooks/cleanup.yml removes it.
    podman('start', OSS2)
    wait_for_ssh(OSS2)
    assert echo_devices(OSS2)
    result = run_playbook('cleanup.yml', 'faults-dead-host', '-e', 'iokit_cleanup_hosts=' + OSS2)
    assert result.returncode == 0, result.stdout[-3000:]
    assert_clean(OSS2)
