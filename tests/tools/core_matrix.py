# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Test the collection on the older ansible-core lines it supports.

The newest ansible-core is the checkout's own .venv (requirements-dev.txt), which every other stage of the
suite uses.  Each older line has its own venv, ``.venv/core/<line>``, made by ``setup <line>`` from
``core_matrix/requirements-<line>.txt`` with the controller Python named in that file's
``# controller-python:`` line (ansible-core 2.16 runs on 3.10-3.12, 2.18 on 3.11-3.13, 2.20 on 3.12-3.14;
each line takes a different one so that the matrix also covers every controller Python from 3.10 up).

``test`` runs, for each line, a compatibility subset of ``ansible-test sanity`` (SANITY_TESTS: what breaks
when a plugin uses an API, a Python feature or a documentation key the line lacks; pylint and the style
checks only run on the newest line).  On the oldest line (``--deep``) it also runs the unit tests that
exercise ansible-core (UNITS_OLDER_LINES, with pytest from the line's venv, pinned with its ansible-core in its
requirements file) and the survey playbooks end to end against the simulator
(tests/playbooks/test_survey_playbooks.py with that line's ansible-playbook), the modules running under the
oldest node Python that line supports.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REQUIREMENTS = os.path.join(HERE, 'core_matrix')
VENVS = os.path.join(ROOT, '.venv', 'core')
STAGED_PARENT = os.path.join(ROOT, '.build', 'core-matrix')
STAGED = os.path.join(STAGED_PARENT, 'ansible_collections', 'lustre', 'iokit')
# The sanity tests that find incompatibilities with an ansible-core line; a name a line does not know is
# left out for it (the Python 2 boilerplate checks exist up to 2.16 only).
SANITY_TESTS = ('action-plugin-docs', 'ansible-doc', 'compile', 'future-import-boilerplate', 'import',
                'metaclass-boilerplate', 'runtime-metadata', 'validate-modules', 'yamllint')
# The end-to-end run, kept to what depends on the ansible-core line: the module-scoped fixture's one
# ansible-playbook call for the obdfilter, mds and ost surveys (every envelope stored and valid) and the
# bad-variables preflight (the role's argument checks).  The rerun, report and cleanup checks run on the newest
# line in the playbooks stage.
E2E_TESTS = ('tests/playbooks/test_survey_playbooks.py',)
# The unit tests that exercise ansible-core itself (AnsibleModule, the action, filter and callback plugin APIs),
# run on the oldest line with its end-to-end tests; the parsers, engines and report model are plain Python whose
# behaviour no ansible-core line changes, tested on the newest line (stage units).  Every line runs the sanity
# subset, which imports and documents every plugin against that line.
UNITS_OLDER_LINES = ('tests/unit/plugins/modules', 'tests/unit/plugins/action', 'tests/unit/plugins/filter',
                     'tests/unit/plugins/plugin_utils/test_fleet_plan.py',
                     'tests/unit/plugins/plugin_utils/test_fleet_progress.py')
E2E_SELECTION = 'surveys_ran_and_every_envelope or bad_obdfilter_variables'
# The node Python the end-to-end run gives the modules on each line: the oldest that line supports
# (RHEL 8's platform Python 3.6 is only supported up to ansible-core 2.16).
OLDEST_NODE_PYTHON = {'2.16': '3.6', '2.17': '3.7', '2.18': '3.8', '2.19': '3.8', '2.20': '3.9'}


def lines() -> list[str]:
    found = [re.match(r'requirements-(.+)\.txt$', os.path.basename(p)).group(1)
             for p in glob.glob(os.path.join(REQUIREMENTS, 'requirements-*.txt'))]
    return sorted(found, key=lambda line: [int(x) for x in line.split('.')])


def requirements(line: str) -> str:
    path = os.path.join(REQUIREMENTS, 'requirements-%s.txt' % line)
    if not os.path.exists(path):
        raise SystemExit('core_matrix: no %s (lines: %s)' % (path, ', '.join(lines())))
    return path


def controller_python_version(line: str) -> str:
    with open(requirements(line), encoding='utf-8') as handle:
        match = re.search(r'^# controller-python: (\d+\.\d+)\s*$', handle.read(), re.M)
    if not match:
        raise SystemExit('core_matrix: %s has no "# controller-python: X.Y" line' % requirements(line))
    return match.group(1)


def find_python(version: str) -> str | None:
    """The newest pyenv build of ``version`` (3.10 -> ~/.pyenv/versions/3.10.13/bin/python), else pythonX.Y."""
    roots = [os.path.join(os.environ['PYENV_ROOT'], 'versions')] if os.environ.get('PYENV_ROOT') else []
    roots.append(os.path.expanduser('~/.pyenv/versions'))
    for root in roots:
        builds = glob.glob(os.path.join(root, version + '.*', 'bin', 'python'))
        if builds:
            return max(builds, key=lambda p: [int(x) for x in re.findall(r'\d+', p.split(os.sep)[-3])])
    return shutil.which('python' + version)


def venv_bin(line: str) -> str:
    return os.path.join(VENVS, line, 'bin')


def setup(line: str) -> int:
    version = controller_python_version(line)
    python = find_python(version)
    if python is None:
        print('core_matrix: ansible-core %s is tested on Python %s, which is not installed '
              '(pyenv install %s, or put python%s on PATH)' % (line, version, version, version))
        return 1
    venv = os.path.join(VENVS, line)
    if not os.access(os.path.join(venv, 'bin', 'python'), os.X_OK):
        subprocess.run([python, '-m', 'venv', venv], check=True)
    pip = [os.path.join(venv, 'bin', 'python'), '-m', 'pip', '--disable-pip-version-check']
    subprocess.run(pip + ['install', '--quiet', '-r', requirements(line)], check=True)
    # Each ansible-test bootstraps its own pip version into its test venvs: give it its stand-in too.
    subprocess.run([os.path.join(venv, 'bin', 'python'), os.path.join(HERE, 'ansible_test_offline.py')], check=True)
    return 0


def line_env(line: str) -> dict[str, str]:
    # ansible-test and the tools it starts must come from this line's venv, not the checkout's.
    bin_dir = venv_bin(line)
    return {'PATH': bin_dir + os.pathsep + os.environ.get('PATH', ''), 'VIRTUAL_ENV': os.path.dirname(bin_dir)}


def run(cmd: list[str], cwd: str, env: dict[str, str] | None = None) -> int:
    print('+ ' + ' '.join(cmd), flush=True)
    merged = dict(os.environ, NO_COLOR='1', **(env or {}))
    return subprocess.run(cmd, cwd=cwd, env=merged, check=False).returncode


def stage_copy() -> None:
    subprocess.run([sys.executable, os.path.join(HERE, 'stage_collection.py'), '--checkout', ROOT, '--dest', STAGED],
                   check=True)
    # ansible-test lists the files to check through git; the copy sits in an ignored directory of the checkout.
    for cmd in (['git', 'init', '-q'], ['git', 'add', '-A']):
        subprocess.run(cmd, cwd=STAGED, check=True)


def known_sanity_tests(ansible_test: str) -> set[str]:
    listed = subprocess.run([ansible_test, 'sanity', '--list-tests'], cwd=STAGED, check=True,
                            capture_output=True, text=True).stdout
    return set(listed.split())


def unit_paths() -> list[str]:
    paths = []
    for top in UNITS_OLDER_LINES:
        found = glob.glob(os.path.join(STAGED, top, '**', 'test_*.py'), recursive=True)
        paths += sorted(os.path.relpath(path, STAGED) for path in found)
    return paths


def test_line(line: str, timings: list[tuple[str, int, float]], deep: bool) -> int:
    """The sanity subset; with ``deep``, also the ansible-core unit tests and the playbooks end to end."""
    bin_dir = venv_bin(line)
    ansible_test = os.path.join(bin_dir, 'ansible-test')
    if not os.access(ansible_test, os.X_OK):
        print('core_matrix: no %s; run `make setup` (or %s setup %s)' % (ansible_test, __file__, line))
        timings.append(('%s setup' % line, 1, 0.0))
        return 1
    python = controller_python_version(line)
    env = line_env(line)
    failures = 0
    started = time.monotonic()
    tests = [t for t in SANITY_TESTS if t in known_sanity_tests(ansible_test)]
    argv = [ansible_test, 'sanity', '--venv', '--python', python, '--color', 'no']
    for name in tests:
        argv += ['--test', name]
    rc = run(argv, cwd=STAGED, env=env)
    timings.append(('%s sanity' % line, rc, time.monotonic() - started))
    failures += rc != 0

    if not deep:
        return failures
    started = time.monotonic()
    # pytest straight from this line's venv, with the staged copy importable as ansible_collections.lustre.iokit:
    # the same tests against this ansible-core, without the unit-test venv that ansible-test units would build
    # (about 90 s a line) and its process per test.
    units_env = dict(env, PYTHONPATH=STAGED_PARENT)
    rc = run([os.path.join(bin_dir, 'python'), '-m', 'pytest', '-q', '-p', 'no:cacheprovider', '--import-mode=importlib']
             + unit_paths(), cwd=STAGED, env=units_env)
    timings.append(('%s units' % line, rc, time.monotonic() - started))
    failures += rc != 0

    started = time.monotonic()
    node_python = find_python(OLDEST_NODE_PYTHON.get(line, python)) or find_python(python)
    # The checkout venv's pytest and lustre-sim drive the run; ansible-playbook is this line's.
    e2e_env = {'IOKIT_ANSIBLE_BIN': bin_dir, 'IOKIT_NODE_PYTHON': node_python}
    print('core_matrix: %s end to end, modules on %s' % (line, node_python), flush=True)
    rc = run([os.path.join(ROOT, '.venv', 'bin', 'python'), '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
              '-k', E2E_SELECTION] + list(E2E_TESTS), cwd=ROOT, env=e2e_env)
    timings.append(('%s playbooks' % line, rc, time.monotonic() - started))
    failures += rc != 0
    return failures


def test(selected: list[str], deep_lines: list[str]) -> int:
    stage_copy()
    timings: list[tuple[str, int, float]] = []
    failures = sum(test_line(line, timings, line in deep_lines) for line in selected)
    print('\n%-22s %-6s %8s' % ('ansible-core step', 'result', 'seconds'))
    for name, rc, seconds in timings:
        print('%-22s %-6s %8.1f' % (name, 'ok' if rc == 0 else 'FAILED', seconds))
    return 1 if failures else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest='command', required=True)
    make = sub.add_parser('setup', help='create or update .venv/core/<line>')
    make.add_argument('line')
    check = sub.add_parser('test', help='sanity subset and units on each line, the playbooks on the oldest')
    check.add_argument('--lines', nargs='*', help='default: every line with a requirements file')
    check.add_argument('--deep', nargs='*', help='lines that also run the ansible-core unit tests and the playbooks '
                       'end to end (default: the oldest)')
    sub.add_parser('lines', help='print the lines of the matrix')
    args = parser.parse_args()
    if args.command == 'setup':
        return setup(args.line)
    if args.command == 'lines':
        print(' '.join(lines()))
        return 0
    selected = args.lines or lines()
    for line in selected:
        requirements(line)
    deep = args.deep if args.deep is not None else selected[:1]
    return test(selected, deep)


if __name__ == '__main__':
    sys.exit(main())
