# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""preload: every module of plugin_utils imported in ansible-playbook's process, so that its workers inherit them."""

from __future__ import annotations

import os
import sys

from ansible_collections.lustre.iokit.plugins.plugin_utils import preload

PLUGIN_UTILS = os.path.dirname(os.path.abspath(preload.__file__))


def _files_on_disk():
    names = set()
    for directory, unused_subdirectories, files in os.walk(PLUGIN_UTILS):
        relative = os.path.relpath(directory, PLUGIN_UTILS)
        parts = [] if relative == os.curdir else relative.split(os.sep)
        names.update('.'.join([preload.PACKAGE] + parts + [name[:-3]]) for name in files if name.endswith('.py'))
    return names


def test_every_module_of_plugin_utils_is_imported_including_the_report_package():
    for name in _files_on_disk():
        sys.modules.pop(name, None)
    assert preload.preload_controller_code() == []
    expected = _files_on_disk()
    assert preload.PACKAGE + '.report.criteria' in expected
    assert expected <= set(sys.modules), sorted(expected - set(sys.modules))


def test_a_module_that_fails_to_import_is_named_and_the_others_still_load(tmp_path, monkeypatch):
    broken = tmp_path / 'plugin_utils'
    (broken / 'report').mkdir(parents=True)
    (broken / 'fine.py').write_text('VALUE = 1\n')
    (broken / 'report' / 'broken.py').write_text('raise ImportError("a dependency is missing")\n')

    class Package:
        __path__ = [str(broken)]

    imported = []

    def import_module(name):
        if name == preload.PACKAGE:
            return Package
        imported.append(name)
        if name.endswith('.broken'):
            raise ImportError('a dependency is missing')
        return None

    monkeypatch.setattr(preload.importlib, 'import_module', import_module)
    assert preload.preload_controller_code() == [preload.PACKAGE + '.report.broken']
    assert imported == [preload.PACKAGE + '.fine', preload.PACKAGE + '.report.broken']
