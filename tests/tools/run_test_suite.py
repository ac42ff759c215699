# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run every quality gate of the project and print one verdict.

Each stage runs even when an earlier one failed, so that one CI run shows
every problem; the exit status is non-zero when any stage failed.  The last
line is ``stages: N passed, M failed``.  ``--only`` and ``--skip`` select
stages by name for a quicker local loop.  The stages in OPT_IN_STAGES run only
when named (``--only guest`` or ``--with guest``): they emulate a whole machine
and would take CI past its time budget on two cores.
"""

from __future__ import annotations

import argparse
import fcntl
import glob
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV_BIN = os.path.dirname(sys.executable)
BUILD = os.path.join(ROOT, '.build')
STAGED_PARENT = os.path.join(BUILD, 'sanity')
STAGED = os.path.join(STAGED_PARENT, 'ansible_collections', 'lustre', 'iokit')
CONTROLLER_PYTHON = '%d.%d' % sys.version_info[:2]
# Target nodes run RHEL/Rocky 8 (3.6) and newer; every one of these that pyenv has is checked.
TARGET_PYTHONS = ('3.6', '3.7', '3.8', '3.9', '3.10', '3.11', '3.12', '3.13')
# Why a stage failed, repeated after the verdict table: CI shows only the end of a long log, and a failed
# integration task printed 20 minutes earlier would be out of sight there.
FAILURE_LINES: dict[str, list[str]] = {}
ANSIBLE_FAILURE = re.compile(r'^(?P<task_failure>fatal|failed): |^ERROR[:!] ')
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


def run(cmd: list[str], cwd: str = ROOT, env: dict[str, str] | None = None, quiet: bool = False,
        failures_of: str | None = None) -> int:
    print('+ ' + ' '.join(cmd), flush=True)
    merged = dict(os.environ)
    # Tools started by tools (antsibull-docs runs `ansible`, molecule runs `ansible-config`) must find the venv's.
    merged['PATH'] = VENV_BIN + os.pathsep + merged.get('PATH', '')
    merged.setdefault('NO_COLOR', '1')
    merged.update(env or {})
    if failures_of:
        return _run_noting_failures(cmd, cwd, merged, FAILURE_LINES.setdefault(failures_of, []))
    if not quiet:
        return subprocess.run(cmd, cwd=cwd, env=merged, check=False).returncode
    completed = subprocess.run(cmd, cwd=cwd, env=merged, check=False, capture_output=True, text=True)
    if completed.returncode != 0:
        print(completed.stdout + completed.stderr)
    return completed.returncode


def stage_copy() -> None:
    subprocess.run([sys.executable, os.path.join(ROOT, 'tests', 'tools', 'stage_collection.py'),
                    '--checkout', ROOT, '--dest', STAGED], check=True)
    # The copy lives inside this checkout, whose .gitignore hides it: without a repository of its
    # own, ansible-test would ask the outer one for the file list and find nothing to test.
    for cmd in (['git', 'init', '-q'], ['git', 'add', '-A']):
        subprocess.run(cmd, cwd=STAGED, check=True)


def stage_lint() -> int:
    return run([tool('ansible-lint'), '--profile', 'production', '--offline', '--nocolor'])


def stage_sanity() -> int:
    stage_copy()
    return run([tool('ansible-test'), 'sanity', '--venv', '--python', CONTROLLER_PYTHON, '--color', 'no'], cwd=STAGED)


def stage_units() -> int:
    stage_copy()
    return run([tool('ansible-test'), 'units', '--venv', '--python', CONTROLLER_PYTHON, '--color', 'no'], cwd=STAGED)


def _run_noting_failures(cmd: list[str], cwd: str, env: dict[str, str], noted: list[str]) -> int:
    """Stream an Ansible run's output as it comes and note each failed task (its name and the failure's start)."""
    task = ''
    failure_pending = False  # the last line noted a task's failure, which "...ignoring" may take back
    with subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors='replace') as process:
        for line in process.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            stripped = line.strip()
            if line.startswith('TASK ['):
                task = stripped.rstrip('*').strip()
            if stripped == '...ignoring' and failure_pending:
                noted.pop()  # a failure the task expects (ignore_errors)
            if stripped:
                failure_pending = False
            failure = ANSIBLE_FAILURE.match(line)
            if failure:
                failure_pending = failure.group('task_failure') is not None
                noted.append('%s %s' % (task, stripped[:600]) if failure_pending else stripped[:600])
    return process.returncode


def stage_integration() -> int:
    """Every ansible-test integration target, on this machine (root, loop devices, the simulator).  Every target
    runs even after one failed, so that one run names them all."""
    stage_copy()
    return run([tool('ansible-test'), 'integration', '--local', '--python', CONTROLLER_PYTHON, '--allow-destructive',
                '--continue-on-error', '--color', 'no'], cwd=STAGED, failures_of='integration')


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
    stage_copy()
    found = [(v, _pyenv_python(v)) for v in TARGET_PYTHONS]
    missing = [v for v, path in found if path is None]
    if missing:
        print('target-pythons: no interpreter for %s (install them with pyenv)' % ', '.join(missing))
        return 1
    failures = 0
    for _version, python in found:
        failures += run([python, os.path.join(STAGED, 'tests', 'tools', 'target_python_smoke.py')],
                        cwd=STAGED, env={'PYTHONPATH': STAGED_PARENT, 'PYTHONDONTWRITEBYTECODE': '1'}) != 0
    return failures


def stage_simulator() -> int:
    if not os.path.exists(os.path.join(ROOT, 'simulator', 'pyproject.toml')):
        print('simulator: no simulator/pyproject.toml')
        return 1
    return run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], cwd=os.path.join(ROOT, 'simulator'))


def stage_report_html() -> int:
    """The HTML report opened in a real headless Chromium (console errors, charts, units, sorting)."""
    return run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests/report'])


def stage_playbooks() -> int:
    """The survey playbooks end to end on localhost against the simulator (results store, summaries, rerun, cleanup)."""
    return run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests/playbooks'])


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
        done = subprocess.run(cmd, cwd=site, env=merged, capture_output=True, text=True, check=False)
        output = done.stdout + done.stderr
        warnings = [line for line in output.splitlines() if re.search(r'\b(WARNING|ERROR)\b|Found errors', line)]
        if done.returncode != 0 or warnings:
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
    'report-html': stage_report_html,
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
}
# The QEMU (TCG) guest with real SCSI disks costs 15-30 minutes on two cores; `make test-guest` runs it.
OPT_IN_STAGES = ('guest',)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--only', nargs='*', choices=sorted(STAGES), default=None)
    parser.add_argument('--skip', nargs='*', choices=sorted(STAGES), default=[])
    parser.add_argument('--with', dest='with_stages', nargs='*', choices=sorted(OPT_IN_STAGES), default=[],
                        help='also run these opt-in stages')
    args = parser.parse_args()
    wanted = set(args.only) if args.only is not None else set(STAGES) - set(OPT_IN_STAGES) | set(args.with_stages)
    selected = [s for s in STAGES if s in wanted and s not in args.skip]
    # Two runs at once would rebuild the same staged copy under each other: the second waits.
    os.makedirs(BUILD, exist_ok=True)
    lock = open(os.path.join(BUILD, 'suite.lock'), 'w', encoding='utf-8')  # pylint: disable=consider-using-with
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        print('another test suite run holds %s; waiting for it' % lock.name, flush=True)
        fcntl.flock(lock, fcntl.LOCK_EX)
    results = []
    for name in selected:
        print('\n==== stage %s ====' % name, flush=True)
        started = time.monotonic()
        try:
            rc = STAGES[name]()
        except (OSError, subprocess.CalledProcessError) as exc:
            print('%s: %s' % (name, exc))
            rc = 1
        results.append((name, rc == 0, time.monotonic() - started))
    print('\n%-16s %-6s %8s' % ('stage', 'result', 'seconds'))
    for name, ok, seconds in results:
        print('%-16s %-6s %8.1f' % (name, 'ok' if ok else 'FAILED', seconds))
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
