# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every parser against every captured fixture.

Layout: ``fixtures/<format>/<case>.txt`` is the tool output as found (see
``fixtures/<format>/SOURCES.md`` for where each came from) and
``<case>.json`` the parsed result expected from
``parsers/<format>.py:parse_<format>``.
"""

from __future__ import annotations

import importlib
import json
import os

import pytest

FIXTURES = os.path.join(os.path.dirname(__file__), 'fixtures')


def _cases():
    for fmt in sorted(os.listdir(FIXTURES)):
        fmt_dir = os.path.join(FIXTURES, fmt)
        if not os.path.isdir(fmt_dir):
            continue
        for name in sorted(os.listdir(fmt_dir)):
            if name.endswith('.txt'):
                yield pytest.param(fmt, os.path.join(fmt_dir, name), id='%s/%s' % (fmt, name[:-4]))


def _parser(fmt):
    module = importlib.import_module('ansible_collections.lustre.iokit.plugins.module_utils.parsers.%s' % fmt)
    return getattr(module, 'parse_%s' % fmt)


@pytest.mark.parametrize('fmt,txt_path', list(_cases()))
def test_fixture_parses_to_expected_json(fmt, txt_path):
    with open(txt_path, encoding='utf-8') as handle:
        text = handle.read()
    with open(txt_path[:-4] + '.json', encoding='utf-8') as handle:
        expected = json.load(handle)
    result = _parser(fmt)(text)
    # A JSON round trip proves the result is plain JSON (no tuples, no NaN).
    assert json.loads(json.dumps(result, allow_nan=False)) == expected


def test_every_format_has_sources_documented():
    for fmt in sorted(os.listdir(FIXTURES)):
        fmt_dir = os.path.join(FIXTURES, fmt)
        if os.path.isdir(fmt_dir):
            sources = os.path.join(fmt_dir, 'SOURCES.md')
            assert os.path.isfile(sources), '%s has no SOURCES.md' % fmt
            with open(sources, encoding='utf-8') as handle:
                listed = handle.read()
            for name in os.listdir(fmt_dir):
                if name.endswith('.txt'):
                    assert name in listed, '%s/%s is not described in SOURCES.md' % (fmt, name)
