# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Prove that the target-side code works on an old node Python (3.6 and up).

Run by *each* target interpreter (see run_test_suite.py), with
``PYTHONPATH`` pointing at a directory holding ``ansible_collections``:
compiles every module and module_utils file, then runs every parser over
every fixture and compares with the expected JSON, exactly as the unit
tests do on the controller's Python.  This file itself must stay
Python 3.6 compatible.
"""

from __future__ import absolute_import, division, print_function

import importlib
import io
import json
import os
import sys

__metaclass__ = type

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(ROOT, 'tests', 'unit', 'plugins', 'module_utils', 'parsers', 'fixtures')
TARGET_DIRS = (os.path.join(ROOT, 'plugins', 'modules'), os.path.join(ROOT, 'plugins', 'module_utils'))
ACTION_DIR = os.path.join(ROOT, 'plugins', 'action')


def _runs_on_controller_only(path):
    """A module file beside an action plugin of the same name only documents it: it never reaches a node."""
    return os.path.dirname(path) == TARGET_DIRS[0] and os.path.exists(os.path.join(ACTION_DIR, os.path.basename(path)))


def compile_all():
    problems = []
    count = 0
    for top in TARGET_DIRS:
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = [d for d in dirnames if d != '__pycache__']
            for name in sorted(filenames):
                if name.endswith('.py'):
                    path = os.path.join(dirpath, name)
                    if _runs_on_controller_only(path):
                        continue
                    with io.open(path, 'rb') as handle:
                        source = handle.read()
                    count += 1
                    try:
                        compile(source, path, 'exec', dont_inherit=True)
                    except SyntaxError as exc:
                        problems.append('%s: %s' % (path, exc))
    return count, problems


def run_fixtures():
    problems = []
    count = 0
    if not os.path.isdir(FIXTURES):
        return count, problems
    for fmt in sorted(os.listdir(FIXTURES)):
        fmt_dir = os.path.join(FIXTURES, fmt)
        if not os.path.isdir(fmt_dir):
            continue
        module = importlib.import_module('ansible_collections.lustre.iokit.plugins.module_utils.parsers.' + fmt)
        parser = getattr(module, 'parse_' + fmt)
        for name in sorted(os.listdir(fmt_dir)):
            if not name.endswith('.txt'):
                continue
            count += 1
            with io.open(os.path.join(fmt_dir, name), encoding='utf-8') as handle:
                text = handle.read()
            with io.open(os.path.join(fmt_dir, name[:-4] + '.json'), encoding='utf-8') as handle:
                expected = json.load(handle)
            got = json.loads(json.dumps(parser(text)))
            if got != expected:
                problems.append('%s/%s: result differs from %s.json' % (fmt, name, name[:-4]))
    return count, problems


def main():
    version = '%d.%d' % sys.version_info[:2]
    compiled, compile_problems = compile_all()
    parsed, parse_problems = run_fixtures()
    for problem in compile_problems + parse_problems:
        print('python %s: %s' % (version, problem))
    print('python %s: compiled %d files, parsed %d fixtures, %d problems'
          % (version, compiled, parsed, len(compile_problems) + len(parse_problems)))
    return 1 if compile_problems or parse_problems else 0


if __name__ == '__main__':
    sys.exit(main())
