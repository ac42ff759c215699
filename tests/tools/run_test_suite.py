# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run every quality gate of the project and print one verdict.

Each stage runs even when an earlier one failed, so that one CI run shows
every problem; the exit status is non-zero when any stage failed.  The last
lines are a table of every stage's wall time, the suite's total, and
``stages: N passed, M failed``.  ``--only`` and ``--skip`` select stages by
name for a quicker local loop.  The stages in OPT_IN_STAGES run only when
named (``--only guest`` or ``--with guest``): they emulate a whole machine and
would take CI past its time budget on two cores.

Many stages wait (on simulated devices throttled by construction, on
containers), so the stages run in LANES: the stages of one lane one after another, the lanes at
the same time, each stage's output kept in its own log and printed whole when
it ends.  ``--lanes 1`` runs everything one after another with live output;
``--workers N`` sets how many tests wait together inside the playbook and
integration stages.  docs/testing.md says how each test keeps its resources
apart from its neighbours'.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import fcntl
import glob
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV_BIN = os.path.dirname(sys.executable)
BUILD = os.path.join(ROOT, '.build')
LOGS = os.path.join(BUILD, 'suite-logs')
CONTROLLER_PYTHON = '%d.%d' % sys.version_info[:2]
# Target nodes run RHEL/Rocky 8 (3.6) and newer; every one of these that pyenv has is checked.
TARGET_PYTHONS = ('3.6', '3.7', '3.8', '3.9', '3.10', '3.11', '3.12', '3.13')
# Why a stage failed, repeated after the verdict table: CI shows only the end of a long log, and a failed
# integration task printed 20 minutes earlier would be out of sight there.
FAILURE_LINES: dict[str, list[str]] = {}
ANSIBLE_FAILURE = re.compile(r'^(?P<task_failure>fatal|failed): |^ERROR[:!] ')
RESULT_REASON = re.compile(r'^"(assertion|msg|evaluated_to)": ')
# The parser filters whose names users rely on (README, each filter's documentation): none may go missing.
CONTRACT_FILTERS = ('parse_sgpdd_survey', 'parse_obdfilter_survey', 'parse_mds_survey', 'parse_ost_survey', 'parse_lst_survey',
                    'parse_lst_stat', 'parse_lctl_dl', 'parse_brw_stats', 'parse_sgp_dd', 'parse_mdtest',
                    'parse_ior')
# What a built tarball must never carry (docs/architecture.md section 2, galaxy.yml build_ignore).
# Each is a path from the tarball's root: the path itself and everything under it. All of tests/ (whatever
# directories it grows), not a list of the ones known today.
NOT_IN_TARBALL = ('tests', 'roles/lustre_sim', 'simulator', 'bench', '.venv', '.build', '.ci', 'molecule')


def tool(name: str) -> str:
    return os.path.join(VENV_BIN, name)


class StageOutput:
    """The suite's sys.stdout: a thread that runs a stage writes to that stage's log (see ``logging_to``), any other
    thread to the terminal, so that stages running side by side never interleave their output."""

    def __init__(self, terminal):
        self.terminal = terminal
        self.local = threading.local()

    def current(self):
        return getattr(self.local, 'log', None) or self.terminal

    def write(self, text: str) -> int:
        return self.current().write(text)

    def flush(self) -> None:
        self.current().flush()

    def fileno(self) -> int:
        return self.current().fileno()

    def __getattr__(self, name):
        return getattr(self.current(), name)


OUTPUT = StageOutput(sys.stdout)
PRINT_LOCK = threading.Lock()


@contextlib.contextmanager
def logging_to(path: str | None):
    """Send this thread's output (prints and the commands' stdout and stderr) to ``path``; None keeps the terminal."""
    if path is None:
        yield
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w', encoding='utf-8', errors='replace') as log:
        previous = getattr(OUTPUT.local, 'log', None)
        OUTPUT.local.log = log
        try:
            yield
        finally:
            OUTPUT.local.log = previous


# CPU seconds (user + system) of each stage's commands and every process they waited for, as os.wait4 reports
# them: what a stage costs on a loaded machine, where its wall time says little.  Processes outside that tree
# (podman's containers, daemons) are not counted.
STAGE_CPU: dict[str, float] = {}
CURRENT_STAGE = threading.local()


def reap(process: subprocess.Popen) -> int:
    """Wait for ``process`` and add its CPU time to the running stage's; returns its exit code."""
    _pid, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    stage = getattr(CURRENT_STAGE, 'name', None)
    if stage is not None:
        with PRINT_LOCK:
            STAGE_CPU[stage] = STAGE_CPU.get(stage, 0.0) + usage.ru_utime + usage.ru_stime
    return process.returncode


def run_counted(cmd: list[str], cwd: str, env: dict[str, str], capture: bool = False) -> tuple[int, str]:
    """Run ``cmd`` to its end as subprocess.run would, counting its CPU (see ``reap``): returns its exit code and,
    with ``capture``, its stdout and stderr together; else they go to the stage's output."""
    with tempfile.TemporaryFile('w+', encoding='utf-8', errors='replace') as captured:
        target = captured if capture else OUTPUT.current()
        process = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=target,  # pylint: disable=consider-using-with
                                   stderr=subprocess.STDOUT)
        try:
            rc = reap(process)
        except BaseException:
            process.kill()
            raise
        captured.seek(0)
        return rc, captured.read() if capture else ''


def run(cmd: list[str], cwd: str = ROOT, env: dict[str, str] | None = None, quiet: bool = False,
        failures_of: str | None = None) -> int:
    print('+ ' + ' '.join(cmd), flush=True)
    merged = dict(os.environ)
    # Tools started by tools (antsibull-docs runs `ansible`, molecule runs `ansible-config`) must find the venv's.
    merged['PATH'] = VENV_BIN + os.pathsep + merged.get('PATH', '')
    merged.setdefault('NO_COLOR', '1')
    merged.update(env or {})
    if failures_of:
        return _run_noting_failures(cmd, cwd, merged, failures_of)
    rc, output = run_counted(cmd, cwd, merged, capture=quiet)
    if rc != 0 and quiet:
        print(output)
    return rc


STAGED_COPIES: dict[str, str] = {}


def staged_copy(name: str) -> str:
    """The copy of the collection that ansible-test runs on, ``.build/staged/<name>/ansible_collections/lustre/
    iokit``, made once per suite run: ansible-test keeps its output inside the copy, so only stages that run one
    after another (one lane) share a name; side by side, each needs its own."""
    with PRINT_LOCK:
        made = STAGED_COPIES.get(name)
    if made:
        return made
    dest = os.path.join(BUILD, 'staged', name, 'ansible_collections', 'lustre', 'iokit')
    subprocess.run([sys.executable, os.path.join(ROOT, 'tests', 'tools', 'stage_collection.py'),
                    '--checkout', ROOT, '--dest', dest], check=True, stdout=OUTPUT.current(), stderr=subprocess.STDOUT)
    # The copy lives inside this checkout, whose .gitignore hides it: without a repository of its
    # own, ansible-test would ask the outer one for the file list and find nothing to test.
    for cmd in (['git', 'init', '-q'], ['git', 'add', '-A']):
        subprocess.run(cmd, cwd=dest, check=True, stdout=OUTPUT.current(), stderr=subprocess.STDOUT)
    with PRINT_LOCK:
        STAGED_COPIES[name] = dest
    return dest


def collections_root(staged: str) -> str:
    """The directory above ``ansible_collections`` of a staged copy: what PYTHONPATH and ANSIBLE_COLLECTIONS_PATH name."""
    return os.path.dirname(os.path.dirname(os.path.dirname(staged)))


def stage_lint() -> int:
    return run([tool('ansible-lint'), '--profile', 'production', '--offline', '--nocolor'])


def stage_sanity() -> int:
    return run([tool('ansible-test'), 'sanity', '--venv', '--python', CONTROLLER_PYTHON, '--color', 'no'],
               cwd=staged_copy('ansible-test'))


def stage_units() -> int:
    return run([tool('ansible-test'), 'units', '--venv', '--python', CONTROLLER_PYTHON, '--color', 'no'],
               cwd=staged_copy('ansible-test'))


def changed_files() -> list[str]:
    """The checkout's files that differ from HEAD (staged, unstaged, untracked), or from ``$CHECK_BASE`` when set."""
    base = os.environ.get('CHECK_BASE') or 'HEAD'
    listed = subprocess.run(['git', 'diff', '--name-only', '--diff-filter=d', base], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.split()
    listed += subprocess.run(['git', 'ls-files', '--others', '--exclude-standard'], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.split()
    return sorted(set(listed))


def stage_sanity_changed() -> int:
    """`make check`: ansible-test sanity (every test) on the files that changed since HEAD (or $CHECK_BASE) alone."""
    staged = staged_copy('ansible-test')
    paths = [path for path in changed_files() if os.path.isfile(os.path.join(staged, path))]
    if not paths:
        print('sanity-changed: no changed file of the collection')
        return 0
    print('sanity-changed: %s' % ' '.join(paths), flush=True)
    return run([tool('ansible-test'), 'sanity', '--venv', '--python', CONTROLLER_PYTHON, '--color', 'no'] + paths,
               cwd=staged)


def stage_lint_changed() -> int:
    """`make check`: ansible-lint on the changed files it lints (YAML of playbooks, roles, tests); stage lint, what CI
    runs, takes the whole tree (about two CPU minutes, most of `make check` otherwise)."""
    import yaml  # pylint: disable=import-outside-toplevel
    with open(os.path.join(ROOT, '.ansible-lint'), encoding='utf-8') as handle:
        excluded = tuple(yaml.safe_load(handle).get('exclude_paths') or ())
    paths = [path for path in changed_files() if path.endswith(('.yml', '.yaml'))
             and os.path.isfile(os.path.join(ROOT, path)) and not path.startswith(excluded)]
    if not paths:
        print('lint-changed: no changed YAML file')
        return 0
    print('lint-changed: %s' % ' '.join(paths), flush=True)
    return run([tool('ansible-lint'), '--profile', 'production', '--offline', '--nocolor'] + paths)


def stage_history_changed() -> int:
    """`make check`: the history's tests (stage history) when a changed file is the history's: its path names it."""
    touched = [path for path in changed_files() if 'history' in path]
    if not touched:
        print('history-changed: no changed file of the history')
        return 0
    print('history-changed: %s' % ' '.join(touched), flush=True)
    return stage_history()


def stage_units_quick() -> int:
    """`make check`: the unit tests with the checkout venv's pytest in WORKERS workers, without ansible-test's
    virtual environment (stage units stays what CI runs).  As ansible-test does, on the staged copy with its
    collection loader and in two runs: the tests of modules and module_utils apart from the controller's, whose
    imports of ansible's controller code change how a module reports warnings.  Quicker than stage units in two
    ways that stage units keeps honest: no fork per test (ansible-test's ansible_forked plugin; the tests keep no
    state between them, and stage units runs each in its own fork), and the parsers' linear-cost check at a quarter
    of its input sizes (LINEAR_TEST_SCALE; a quadratic parser still costs 16 times more at 4 times the input)."""
    import ansible_test  # pylint: disable=import-outside-toplevel
    staged = staged_copy('ansible-test')
    parent = collections_root(staged)
    plugins = os.path.join(os.path.dirname(ansible_test.__file__), '_util', 'target', 'pytest', 'plugins')
    env = {'PYTHONPATH': parent + os.pathsep + plugins, 'ANSIBLE_COLLECTIONS_PATH': parent,
           'ANSIBLE_CONTROLLER_MIN_PYTHON_VERSION': CONTROLLER_PYTHON,
           'PYTEST_PLUGINS': 'ansible_pytest_collections',
           'LINEAR_TEST_SCALE': os.environ.get('LINEAR_TEST_SCALE', '0.25')}
    unit = os.path.join(staged, 'tests', 'unit')
    module_side = ['tests/unit/plugins/modules', 'tests/unit/plugins/module_utils']
    controller_side = sorted(os.path.relpath(os.path.join(unit, *parts), staged) for parts in
                             [('plugins', name) for name in os.listdir(os.path.join(unit, 'plugins'))
                              if name not in ('modules', 'module_utils')]
                             + [(name,) for name in os.listdir(unit) if name.startswith('test_')])
    parallel = ['-n', str(WORKERS)] if WORKERS > 1 else []
    failures = 0
    for paths in (module_side, controller_side):
        failures += run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider'] + parallel + paths,
                        cwd=staged, env=env) != 0
    return failures


def _run_noting_failures(cmd: list[str], cwd: str, env: dict[str, str], stage: str) -> int:
    """Stream an Ansible run's output as it comes and note each failed task (its name and the failure's start)
    under ``stage`` in FAILURE_LINES."""
    task = ''
    noted: list[str] = []
    failure_pending = False  # the last failure noted is a task's, which "...ignoring" may take back
    in_result = False  # inside the JSON result printed after "FAILED! => {"
    with subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors='replace') as process:
        for line in process.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            stripped = line.strip()
            if line.startswith('TASK ['):
                task = stripped.rstrip('*').strip()
            if in_result:
                in_result = line.rstrip() != '}'
                # Which assertion failed, or the module's message: what a reader of the CI log needs first.
                if RESULT_REASON.match(stripped):  # only a task's failure opens a result
                    noted[-1] += ' ' + stripped[:600]
                continue
            if stripped == '...ignoring' and failure_pending:
                noted.pop()  # a failure the task expects (ignore_errors)
            if stripped:
                failure_pending = False
            failure = ANSIBLE_FAILURE.match(line)
            if failure:
                failure_pending = failure.group('task_failure') is not None
                in_result = failure_pending and stripped.endswith('=> {')
                noted.append('%s %s' % (task, stripped[:600]) if failure_pending else stripped[:600])
        reap(process)
    with PRINT_LOCK:
        FAILURE_LINES.setdefault(stage, []).extend(noted)
    return process.returncode


INTEGRATION_TARGETS = os.path.join(ROOT, 'tests', 'integration', 'targets')
# Seconds each integration target took in a whole suite run (the stage prints them), only to start the longest
# first; a target not listed counts as INTEGRATION_UNKNOWN_S.  Every target runs whether listed or not.
INTEGRATION_COST_S = {
    'node_prep': 460, 'survey_sgpdd_playbook': 280, 'obdfilter_survey': 275, 'sgpdd_survey': 240, 'lst_survey': 225,
    'mds_survey': 225, 'obdfilter_survey_adaptive': 210, 'stats_collect_module': 180, 'mdtest_sweep': 135,
    'obdfilter_survey_network': 135, 'ost_survey': 125,
}
INTEGRATION_UNKNOWN_S = 60


def integration_targets() -> list[str]:
    """Every target ansible-test would run: not the setup_/prepare_ targets that others pull in with needs/target."""
    return sorted(name for name in os.listdir(INTEGRATION_TARGETS)
                  if os.path.isdir(os.path.join(INTEGRATION_TARGETS, name))
                  and not name.startswith(('setup_', 'prepare_')))


def ansible_test_key_pair() -> None:
    """The SSH key pair every ``ansible-test integration`` uses (``~/.ansible/test/id_rsa``), made once before the
    workers start: on a machine without one, each of them would make it at once, and those that find the private
    key already written by another stop at ssh-keygen's "Overwrite (y/n)?" and fail their target.  Made as
    ansible-test makes it (PEM, the header paramiko reads)."""
    key = os.path.expanduser('~/.ansible/test/id_rsa')
    if os.path.isfile(key) and os.path.isfile(key + '.pub'):
        return
    os.makedirs(os.path.dirname(key), exist_ok=True)
    for stale in (key, key + '.pub'):
        if os.path.exists(stale):
            os.remove(stale)
    subprocess.run(['ssh-keygen', '-m', 'PEM', '-q', '-t', 'rsa', '-N', '', '-f', key], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    with open(key, encoding='utf-8') as handle:
        text = handle.read()
    with open(key, 'w', encoding='utf-8') as handle:
        handle.write(re.sub(r'(BEGIN|END) PRIVATE KEY', r'\1 RSA PRIVATE KEY', text))


def stage_integration() -> int:
    """Every ansible-test integration target, on this machine (root, loop devices, the simulator): WORKERS workers,
    each with its own staged copy, take the targets one at a time, the longest first.  Every target runs even after
    one failed, so that one run names them all.  The targets keep apart by construction: each works in its own
    temporary directory, on loop devices that losetup hands out one at a time, under block-I/O cgroups named after
    their device and wrapper."""
    pending = sorted(integration_targets(), key=lambda t: -INTEGRATION_COST_S.get(t, INTEGRATION_UNKNOWN_S))
    workers = max(1, min(WORKERS, len(pending)))
    ansible_test_key_pair()
    timings: list[tuple[str, int, float]] = []

    def work(index: int) -> None:
        CURRENT_STAGE.name = 'integration'  # a worker thread of this stage: its commands count as the stage's
        with logging_to(os.path.join(LOGS, 'integration-%d.log' % index) if workers > 1 else None):
            staged = staged_copy('integration-%d' % index)
            while True:
                with PRINT_LOCK:
                    if not pending:
                        return
                    target = pending.pop(0)
                started = time.monotonic()
                rc = run([tool('ansible-test'), 'integration', '--local', '--python', CONTROLLER_PYTHON,
                          '--allow-destructive', '--color', 'no', target], cwd=staged, failures_of='integration')
                with PRINT_LOCK:
                    timings.append((target, rc, time.monotonic() - started))

    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for future in [pool.submit(work, index) for index in range(workers)]:
            future.result()
    if workers > 1:
        for index in range(workers):
            with open(os.path.join(LOGS, 'integration-%d.log' % index), encoding='utf-8', errors='replace') as log:
                sys.stdout.write('\n---- integration worker %d ----\n' % index + log.read())
    print('\n%-28s %-6s %8s' % ('integration target', 'result', 'seconds'))
    for target, rc, seconds in sorted(timings):
        print('%-28s %-6s %8.1f' % (target, 'ok' if rc == 0 else 'FAILED', seconds))
    missing = sorted(set(integration_targets()) - set(t for t, _rc, _s in timings))
    if missing:
        print('integration: not run: %s' % ', '.join(missing))
    return sum(1 for _t, rc, _s in timings if rc != 0) + len(missing)


def stage_guest() -> int:
    """node_prep, sgpdd_survey and the sgpdd playbook against a QEMU (TCG) guest with real SCSI disks and sg
    nodes, over real SSH; builds the guest image once (cached in .build/guest)."""
    return run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests/guest'])


def _pyenv_python(version: str) -> str | None:
    roots = [os.path.expanduser('~/.pyenv/versions')]
    if os.environ.get('PYENV_ROOT'):
        roots.insert(0, os.path.join(os.environ['PYENV_ROOT'], 'versions'))
    for root in roots:
        candidates = sorted(glob.glob(os.path.join(root, version + '.*', 'bin', 'python')),
                            key=lambda p: [int(x) for x in re.findall(r'\d+', os.path.basename(os.path.dirname(os.path.dirname(p))))])
        if candidates:
            return candidates[-1]
    return shutil.which('python' + version)


def stage_target_pythons() -> int:
    staged = staged_copy('ansible-test')
    found = [(v, _pyenv_python(v)) for v in TARGET_PYTHONS]
    missing = [v for v, path in found if path is None]
    if missing:
        print('target-pythons: no interpreter for %s (install them with pyenv)' % ', '.join(missing))
        return 1
    failures = 0
    for _version, python in found:
        failures += run([python, os.path.join(staged, 'tests', 'tools', 'target_python_smoke.py')], cwd=staged,
                        env={'PYTHONPATH': collections_root(staged),
                             'PYTHONDONTWRITEBYTECODE': '1'}) != 0
    return failures


def stage_simulator() -> int:
    if not os.path.exists(os.path.join(ROOT, 'simulator', 'pyproject.toml')):
        print('simulator: no simulator/pyproject.toml')
        return 1
    # Every test of the simulator keeps its nodes, mounts and files under its own tmp_path: they wait together.
    parallel = ['-n', str(WORKERS)] if WORKERS > 1 else []
    return run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider'] + parallel + ['tests'],
               cwd=os.path.join(ROOT, 'simulator'))


def stage_history() -> int:
    """The results history on SQLite and on a real PostgreSQL server the tests start themselves (a private cluster on
    a Unix socket in a temporary directory, stopped at the end), and its import and recording from the playbooks."""
    return run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests/history'])


def stage_report_html() -> int:
    """The HTML report opened in a real headless Chromium (console errors, charts, units, sorting)."""
    return run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests/report'])


def stage_export() -> int:
    """The monitoring export against real servers: promtool's checks and backfill, node_exporter's textfile
    collector scraped by Prometheus, the line protocol written to InfluxDB (requirements-apt.txt), each server on a
    loopback port for a few seconds."""
    return run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests/export'])


def stage_playbooks() -> int:
    """The survey playbooks end to end on localhost against the simulator (results store, summaries, rerun, cleanup),
    in WORKERS pytest-xdist workers; the tests that share a module fixture stay on one worker (tests/playbooks/conftest.py)."""
    parallel = ['-n', str(WORKERS), '--dist', 'loadgroup'] if WORKERS > 1 else []
    return run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider'] + parallel + ['tests/playbooks'])


def stage_fleet() -> int:
    """molecule/fleet: four podman hosts reached over real SSH, each running the simulator; the survey
    playbooks run across them and testinfra checks that nothing is left behind."""
    if run([sys.executable, os.path.join(ROOT, 'tests', 'tools', 'fleet_images.py')]) != 0:
        return 1
    env = {'CONTAINERS_CONF': os.path.join(ROOT, 'molecule', 'containers.conf'),
           'ANSIBLE_COLLECTIONS_PATH': os.path.join(ROOT, '.venv', 'collections')}
    return run([tool('molecule'), 'test', '-s', 'fleet'], env=env)


def stage_faults() -> int:
    """molecule/faults: two podman OSSs over real SSH; the survey playbooks under injected faults (async limit,
    dead host, leftover echo client, ENOMEM, I/O errors, interrupted ansible-playbook), each host clean afterwards."""
    if run([sys.executable, os.path.join(ROOT, 'tests', 'tools', 'fleet_images.py')]) != 0:
        return 1
    env = {'CONTAINERS_CONF': os.path.join(ROOT, 'molecule', 'containers.conf'),
           'ANSIBLE_COLLECTIONS_PATH': os.path.join(ROOT, '.venv', 'collections')}
    return run([tool('molecule'), 'test', '-s', 'faults'], env=env)


def stage_core_matrix() -> int:
    """The older ansible-core lines (.venv/core/<line>, made by `make setup-core-matrix`): a compatibility subset
    of sanity on each; on the oldest also the unit tests of the ansible-core plugin APIs and the survey playbooks
    end to end (tests/tools/core_matrix.py)."""
    return run([sys.executable, os.path.join(ROOT, 'tests', 'tools', 'core_matrix.py'), 'test'])


def stage_changelog() -> int:
    return run([tool('antsibull-changelog'), 'lint'])


def stage_docs() -> int:
    env = {'ANSIBLE_COLLECTIONS_PATH': os.path.join(ROOT, '.venv', 'collections')}
    return run([tool('antsibull-docs'), 'lint-collection-docs', '--plugin-docs', '--skip-rstcheck', '.'], env=env)


def stage_awx() -> int:
    """The execution environment's build context (ansible-builder create, no container engine), the AWX survey
    forms against the roles' argument specs, and awx-configure.yml's job templates and workflow without an AWX."""
    return run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests/ee', 'tests/awx'])


# The few labels of Ansible's own documentation that antsibull-docs' pages link to, so that the docsite builds
# without a network (intersphinx reads a local inventory) and every other unresolved reference stays an error.
ANSIBLE_DOCS_URL = 'https://docs.ansible.com/projects/ansible/devel/'
ANSIBLE_DOCS_TARGETS = {
    ('common_return_values', 'label'): ('reference_appendices/common_return_values.html', 'Return Values'),
    ('action_plugins', 'label'): ('plugins/action.html', 'Action plugins'),
    ('callback_plugins', 'label'): ('plugins/callback.html', 'Callback plugins'),
    ('ansible_configuration_settings', 'label'): ('reference_appendices/config.html', 'Ansible Configuration Settings'),
    # The stdout callback extends ansible.builtin.default, whose documented options name these settings.
    ('ANSIBLE_DISPLAY_SKIPPED_HOSTS', 'envvar'): ('reference_appendices/config.html#envvar-$', '-'),
    ('ANSIBLE_SHOW_CUSTOM_STATS', 'envvar'): ('reference_appendices/config.html#envvar-$', '-'),
    # survey_variables says which lookups a preflight reads the role's variables with.
    ('ansible_collections.ansible.builtin.varnames_lookup', 'label'): (
        'collections/ansible/builtin/varnames_lookup.html', 'ansible.builtin.varnames lookup'),
    ('ansible_collections.ansible.builtin.vars_lookup', 'label'): (
        'collections/ansible/builtin/vars_lookup.html', 'ansible.builtin.vars lookup'),
}


def _write_ansible_inventory(path: str) -> None:
    import zlib  # pylint: disable=import-outside-toplevel
    lines = ''.join('%s std:%s -1 %s %s\n' % (name, role, uri, title)
                    for (name, role), (uri, title) in sorted(ANSIBLE_DOCS_TARGETS.items()))
    header = '# Sphinx inventory version 2\n# Project: Ansible\n# Version: devel\n# The remainder of this file is compressed using zlib.\n'
    with open(path, 'wb') as handle:
        handle.write(header.encode() + zlib.compress(lines.encode()))


def stage_docsite() -> int:
    """The collection's documentation site (modules, filters, roles and the guides of docs/docsite) rendered by
    antsibull-docs and built by Sphinx into .build/docsite/build/html; any warning fails."""
    site = os.path.join(BUILD, 'docsite')
    shutil.rmtree(site, ignore_errors=True)
    # antsibull-docs refuses a destination that others can write to.
    os.makedirs(os.path.join(site, 'rst'), mode=0o700)
    os.chmod(site, 0o700)
    env = {'ANSIBLE_COLLECTIONS_PATH': os.path.join(ROOT, '.venv', 'collections')}
    if run([tool('antsibull-docs'), 'sphinx-init', '--use-current', '--squash-hierarchy', '--fail-on-error',
            '--sphinx-theme', 'alabaster', '--project', 'lustre.iokit', '--title', 'lustre.iokit',
            '--dest-dir', site, 'lustre.iokit'], env=env, quiet=True) != 0:
        return 1
    _write_ansible_inventory(os.path.join(site, 'ansible.inv'))
    with open(os.path.join(site, 'conf.py'), 'a', encoding='utf-8') as handle:
        handle.write("\nintersphinx_mapping = {'ansible_devel': (%r, %r)}\n" % (ANSIBLE_DOCS_URL, os.path.join(site, 'ansible.inv')))
    merged = dict(os.environ, PATH=VENV_BIN + os.pathsep + os.environ.get('PATH', ''), NO_COLOR='1', **env)
    failures = 0
    for cmd in ([tool('antsibull-docs'), '--config-file', 'antsibull-docs.cfg', 'collection', '--cleanup', 'everything',
                 '--fail-on-error', '--use-current', '--squash-hierarchy', '--dest-dir', 'rst', 'lustre.iokit'],
                [tool('sphinx-build'), '-M', 'html', 'rst', 'build', '-c', '.', '-W', '--keep-going', '-q']):
        print('+ ' + ' '.join(cmd), flush=True)
        rc, output = run_counted(cmd, site, merged, capture=True)
        warnings = [line for line in output.splitlines() if re.search(r'\b(WARNING|ERROR)\b|Found errors', line)]
        if rc != 0 or warnings:
            print(output)
            failures += 1
    guides = glob.glob(os.path.join(site, 'build', 'html', 'docsite', '*.html'))
    if not failures and not guides:
        print('docsite: no guide of docs/docsite/extra-docs.yml was rendered')
        failures += 1
    print('docsite: %s' % os.path.join(site, 'build', 'html', 'index.html'))
    return failures


def stage_release() -> int:
    """The release flow in a scratch copy of the checkout (this one keeps its version and fragments):
    antsibull-changelog release with the version of galaxy.yml, then every fragment's entries must be in
    CHANGELOG.md and changelogs/changelog.yaml, and the fragments consumed."""
    import yaml  # pylint: disable=import-outside-toplevel
    listed = subprocess.run(['git', 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], cwd=ROOT,
                            check=True, capture_output=True).stdout.decode().split('\0')
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, 'lustre.iokit')
        for name in filter(None, listed):
            source = os.path.join(ROOT, name)
            if os.path.isfile(source):
                os.makedirs(os.path.dirname(os.path.join(copy, name)), exist_ok=True)
                shutil.copy2(source, os.path.join(copy, name))
        with open(os.path.join(copy, 'galaxy.yml'), encoding='utf-8') as handle:
            version = yaml.safe_load(handle)['version']
        fragments_dir = os.path.join(copy, 'changelogs', 'fragments')
        fragments = {}
        for path in sorted(glob.glob(os.path.join(fragments_dir, '*.yml'))):
            with open(path, encoding='utf-8') as handle:
                fragments[os.path.basename(path)] = yaml.safe_load(handle)
        if run([tool('antsibull-changelog'), 'release', '--date', time.strftime('%Y-%m-%d')], cwd=copy) != 0:
            return 1
        with open(os.path.join(copy, 'CHANGELOG.md'), encoding='utf-8') as handle:
            # The Markdown writer escapes punctuation and wraps code in <code>: compare the text without either.
            changelog = re.sub(r'\\(.)', r'\1', re.sub(r'</?code>', '', handle.read()))
        with open(os.path.join(copy, 'changelogs', 'changelog.yaml'), encoding='utf-8') as handle:
            release = (yaml.safe_load(handle).get('releases') or {}).get(version) or {}

        def words(text: str) -> str:
            return ' '.join(re.findall(r'[A-Za-z0-9]+', text))

        flat = words(changelog)
        problems = []
        if not re.search(r'^#+ v%s$' % re.escape(version), changelog, re.M):
            problems.append('CHANGELOG.md has no section for v%s' % version)
        for name, sections in fragments.items():
            if name not in release.get('fragments', []):
                problems.append('%s is not recorded in release %s of changelog.yaml' % (name, version))
            for section, entries in (sections or {}).items():
                if section == 'trivial':  # recorded, never rendered
                    continue
                for entry in ([entries] if isinstance(entries, str) else entries or []):
                    # The first words of an entry, markup aside, must show up in the rendered changelog.
                    if words(entry).split()[:8] and ' '.join(words(entry).split()[:8]) not in flat:
                        problems.append('%s (%s): "%s..." is not in CHANGELOG.md' % (name, section, entry[:60]))
        left = glob.glob(os.path.join(fragments_dir, '*.yml'))
        if left:
            problems.append('fragments left after the release: %s' % ', '.join(sorted(map(os.path.basename, left))))
        for problem in problems:
            print('release: ' + problem)
        print('release: v%s with %d fragments' % (version, len(fragments)))
        return 1 if problems or not fragments else 0


def stage_build() -> int:
    """Build the tarball, check what it carries, install it offline and use a filter from it."""
    dist = os.path.join(BUILD, 'dist')
    shutil.rmtree(dist, ignore_errors=True)
    if run([tool('ansible-galaxy'), 'collection', 'build', '--output-path', dist]) != 0:
        return 1
    tarballs = glob.glob(os.path.join(dist, 'lustre-iokit-*.tar.gz'))
    if len(tarballs) != 1:
        print('build: expected one tarball in %s, found %s' % (dist, tarballs))
        return 1
    with tarfile.open(tarballs[0]) as archive:
        names = archive.getnames()
    relative = [n[2:] if n.startswith('./') else n for n in names]
    leaked = sorted(n for n in relative if any(n == path or n.startswith(path + '/') for path in NOT_IN_TARBALL))
    if leaked:
        print('build: the tarball carries files that must stay out: %s' % ', '.join(leaked[:10]))
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        # An empty config keeps the checkout's ansible.cfg (and its collections_path) out of the picture.
        empty_config = os.path.join(tmp, 'ansible.cfg')
        with open(empty_config, 'w', encoding='utf-8') as handle:
            handle.write('[defaults]\n')
        env = {'ANSIBLE_COLLECTIONS_PATH': tmp, 'ANSIBLE_CONFIG': empty_config}
        if run([tool('ansible-galaxy'), 'collection', 'install', '--offline', '--force', '-p', tmp, tarballs[0]], env=env) != 0:
            return 1
        failures = 0
        for name in CONTRACT_FILTERS:
            # --json fails loudly when a plugin is missing or its documentation does not load.
            failures += run([tool('ansible-doc'), '--json', '-t', 'filter', 'lustre.iokit.' + name], env=env, cwd=tmp,
                            quiet=True) != 0
        sample = os.path.join(ROOT, 'tests', 'unit', 'plugins', 'module_utils', 'parsers', 'fixtures', 'lctl_dl')
        samples = sorted(glob.glob(os.path.join(sample, '*.txt')))[:1]
        for path in samples:
            failures += run([tool('ansible'), 'localhost', '-m', 'ansible.builtin.debug', '-a',
                             "msg={{ lookup('file', '%s') | lustre.iokit.parse_lctl_dl }}" % path],
                            env=env, cwd=tmp) != 0
        return failures


STAGES = {
    'lint': stage_lint,
    'sanity': stage_sanity,
    'units': stage_units,
    'target-pythons': stage_target_pythons,
    'integration': stage_integration,
    'guest': stage_guest,
    'simulator': stage_simulator,
    'history': stage_history,
    'report-html': stage_report_html,
    'export': stage_export,
    'playbooks': stage_playbooks,
    'fleet': stage_fleet,
    'faults': stage_faults,
    'core-matrix': stage_core_matrix,
    'changelog': stage_changelog,
    'docs': stage_docs,
    'docsite': stage_docsite,
    'awx': stage_awx,
    'release': stage_release,
    'build': stage_build,
    'sanity-changed': stage_sanity_changed,
    'units-quick': stage_units_quick,
    'lint-changed': stage_lint_changed,
    'history-changed': stage_history_changed,
}
# The QEMU (TCG) guest with real SCSI disks costs 15-30 minutes on two cores; `make test-guest` runs it.
# The quicker halves of lint, sanity, units and history that `make check` runs.
OPT_IN_STAGES = ('guest', 'lint-changed', 'sanity-changed', 'units-quick', 'history-changed')
# The lanes run side by side; the stages of a lane one after another, in this order.  The stages that mostly wait
# (throttled simulated devices, containers) each lead a lane of their own, beside the two lanes of CPU-bound checks.
# Stages that share something stay in one lane: sanity, units and core-matrix make ansible-test's virtual
# environments under ~/.ansible/test, and sanity, units, target-pythons, sanity-changed and units-quick run on one
# staged copy.  `make check` is then two lanes: the unit tests beside lint, the simulator's and the history's tests.
LANES = (
    ('playbooks',),
    ('integration', 'report-html'),
    ('fleet', 'faults', 'guest'),  # one container image (fleet_images.py locks while it builds)
    ('sanity', 'units', 'target-pythons', 'core-matrix', 'sanity-changed', 'units-quick'),
    ('lint', 'lint-changed', 'simulator', 'export', 'history', 'history-changed', 'awx', 'changelog', 'docs',
     'docsite', 'release', 'build'),
)
assert sorted(s for lane in LANES for s in lane) == sorted(STAGES), 'every stage is in exactly one lane'
# How many tests wait together inside the playbook and integration stages (pytest-xdist workers, ansible-test groups).
WORKERS = 4


def _run_stage(name: str, live: bool) -> tuple[str, bool, float]:
    log = None if live else os.path.join(LOGS, name + '.log')
    with PRINT_LOCK:
        print('\n==== stage %s %s ====' % (name, '' if live else 'started (output when it ends)'), flush=True)
    started = time.monotonic()
    CURRENT_STAGE.name = name
    with logging_to(log):
        try:
            rc = STAGES[name]()
        except Exception as exc:  # pylint: disable=broad-exception-caught  # one stage's crash is its own failure
            print('%s: %s: %s' % (name, type(exc).__name__, exc), flush=True)
            rc = 1
    seconds = time.monotonic() - started
    if log:
        with PRINT_LOCK, open(log, encoding='utf-8', errors='replace') as handle:
            sys.stdout.write('\n==== stage %s: %s in %.1f s ====\n' % (name, 'ok' if rc == 0 else 'FAILED', seconds))
            for chunk in iter(lambda: handle.read(1 << 20), ''):
                sys.stdout.write(chunk)
            sys.stdout.flush()
    return name, rc == 0, seconds


def _run_lane(stages: list[str], live: bool) -> list[tuple[str, bool, float]]:
    return [_run_stage(name, live) for name in stages]


def main() -> int:
    global WORKERS  # pylint: disable=global-statement
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--only', nargs='*', choices=sorted(STAGES), default=None)
    parser.add_argument('--skip', nargs='*', choices=sorted(STAGES), default=[])
    parser.add_argument('--with', dest='with_stages', nargs='*', choices=sorted(OPT_IN_STAGES), default=[],
                        help='also run these opt-in stages')
    parser.add_argument('--lanes', type=int, default=len(LANES),
                        help='how many lanes of stages run at once (1: one stage after another, output live)')
    parser.add_argument('--workers', type=int, default=WORKERS,
                        help='parallel workers inside the playbook and integration stages (1: one test at a time)')
    args = parser.parse_args()
    if args.lanes < 1 or args.workers < 1:
        parser.error('--lanes and --workers take a whole number of at least 1')
    WORKERS = args.workers
    wanted = set(args.only) if args.only is not None else set(STAGES) - set(OPT_IN_STAGES) | set(args.with_stages)
    selected = [s for s in STAGES if s in wanted and s not in args.skip]
    lanes = [[s for s in lane if s in selected] for lane in LANES]
    lanes = [lane for lane in lanes if lane]
    # Two runs at once would rebuild the same staged copies under each other: the second waits.
    os.makedirs(BUILD, exist_ok=True)
    lock = open(os.path.join(BUILD, 'suite.lock'), 'w', encoding='utf-8')  # pylint: disable=consider-using-with
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        print('another test suite run holds %s; waiting for it' % lock.name, flush=True)
        fcntl.flock(lock, fcntl.LOCK_EX)
    shutil.rmtree(LOGS, ignore_errors=True)
    sys.stdout = OUTPUT
    live = args.lanes == 1 or len(lanes) == 1 and len(lanes[0]) == len(selected) == 1
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max(1, min(args.lanes, len(lanes)))) as pool:
        futures = [pool.submit(_run_lane, lane, live) for lane in lanes]
        finished = {name: (ok, seconds) for future in futures for name, ok, seconds in future.result()}
    total = time.monotonic() - started
    results = [(name,) + finished[name] for name in selected]
    print('\n%-16s %-6s %8s %8s' % ('stage', 'result', 'seconds', 'cpu s'))
    for name, ok, seconds in results:
        print('%-16s %-6s %8.1f %8.1f' % (name, 'ok' if ok else 'FAILED', seconds, STAGE_CPU.get(name, 0.0)))
    print('%-16s %-6s %8.1f' % ('total (wall)', '', total))
    print('%-16s %-6s %8.1f %8.1f' % ('sum of stages', '', sum(seconds for _n, _ok, seconds in results),
                                      sum(STAGE_CPU.values())))
    print('lanes %d, workers %d; stage logs in %s' % (min(args.lanes, len(lanes)), WORKERS, LOGS))
    passed = sum(1 for _n, ok, _s in results if ok)
    for name, ok, _seconds in results:
        if not ok and FAILURE_LINES.get(name):
            print('\nwhy %s failed:' % name)
            for line in FAILURE_LINES[name]:
                print('  ' + line)
    print('stages: %d passed, %d failed' % (passed, len(results) - passed))
    return 0 if passed == len(results) else 1


if __name__ == '__main__':
    sys.exit(main())
