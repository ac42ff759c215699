# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/tools/module_code_cache: what the playbook tests' module runs load from the cache is what they would compile."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
import zipfile

import pytest

HOOK = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'tools', 'module_code_cache')

pytestmark = pytest.mark.skipif(sys.version_info < (3, 10), reason='the hook is installed on Python 3.10 and later')


def payload(path, value):
    with zipfile.ZipFile(path, 'w') as archive:
        archive.writestr('pkg/__init__.py', '')
        archive.writestr('pkg/mod.py', 'VALUE = %r\n\ndef where():\n    return where.__code__.co_filename\n' % value)
    return str(path)


def run(archive, cache):
    """Import pkg.mod from ``archive`` in a new Python with the hook: its VALUE, where() and its loader's type."""
    code = ('import sys; sys.path.insert(0, %r); import pkg.mod as m; print(m.VALUE); print(m.where()); '
            'print(type(m.__loader__).__name__)' % archive)
    env = dict(os.environ, PYTHONPATH=HOOK, IOKIT_MODULE_CODE_CACHE=str(cache))
    return subprocess.run([sys.executable, '-c', code], env=env, check=True, capture_output=True,
                          text=True).stdout.split()


def cached_files(cache):
    return sorted(os.path.join(top, name) for top, unused, names in os.walk(str(cache)) for name in names)


def test_a_payload_is_compiled_once_and_then_loaded_with_the_name_of_the_zip_it_came_from(tmp_path):
    cache = tmp_path / 'cache'
    (tmp_path / 'one').mkdir()
    first = payload(tmp_path / 'one' / 'ansible_x_payload.zip', 1)
    assert run(first, cache) == ['1', first + '/pkg/mod.py', 'CachingZipImporter']
    entries = cached_files(cache)
    assert len(entries) == 2  # pkg and pkg.mod
    # The same source in another run's zip: nothing compiled anew, and the code named after that zip.
    (tmp_path / 'two').mkdir()
    second = payload(tmp_path / 'two' / 'ansible_x_payload.zip', 1)
    assert run(second, cache) == ['1', second + '/pkg/mod.py', 'CachingZipImporter']
    assert cached_files(cache) == entries


def test_a_hit_loads_the_cache_and_changed_source_is_compiled_again(tmp_path):
    cache = tmp_path / 'cache'
    (tmp_path / 'one').mkdir()
    first = payload(tmp_path / 'one' / 'ansible_x_payload.zip', 1)
    run(first, cache)
    # Put other code in pkg.mod's entry: the same zip now runs that code, so a hit does not compile the source.
    for entry in cached_files(cache):
        with open(entry, 'rb') as handle:
            code = marshal.load(handle)
        if 'VALUE' in code.co_names:
            with open(entry, 'wb') as handle:
                marshal.dump(compile("VALUE = 'cached'\ndef where():\n    return ''\n", 'x', 'exec'), handle)
    assert run(first, cache)[0] == 'cached'
    (tmp_path / 'two').mkdir()
    assert run(payload(tmp_path / 'two' / 'ansible_x_payload.zip', 2), cache)[0] == '2'
    assert len(cached_files(cache)) == 3


def test_other_zips_and_an_unset_cache_are_left_to_zipimport(tmp_path):
    cache = tmp_path / 'cache'
    other = payload(tmp_path / 'library.zip', 1)
    assert run(other, cache)[2] == 'zipimporter' and not os.path.exists(str(cache))
    (tmp_path / 'one').mkdir()
    archive = payload(tmp_path / 'one' / 'ansible_x_payload.zip', 1)
    assert run(archive, '')[2] == 'zipimporter'
