# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The parse_* filter plugins: registered under their contract names, same result as the parser, clear errors."""

from __future__ import annotations

import glob
import importlib
import os

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.lustre.iokit.plugins.module_utils.parsers.catalog import PARSERS
from ansible_collections.lustre.iokit.plugins.plugin_utils.parser_filters import make_parser_filter

FIXTURES = os.path.join(os.path.dirname(__file__), '..', 'module_utils', 'parsers', 'fixtures')


def _filter(output_format):
    module = importlib.import_module('ansible_collections.lustre.iokit.plugins.filter.parse_%s' % output_format)
    filters = module.FilterModule().filters()
    assert list(filters) == ['parse_%s' % output_format]
    return filters['parse_%s' % output_format]


@pytest.mark.parametrize('output_format', sorted(PARSERS))
def test_filter_returns_the_parser_result_for_every_fixture(output_format):
    texts = sorted(glob.glob(os.path.join(FIXTURES, output_format, '*.txt')))
    assert texts
    for path in texts:
        with open(path, encoding='utf-8') as handle:
            text = handle.read()
        assert _filter(output_format)(text) == PARSERS[output_format](text)


@pytest.mark.parametrize('output_format', sorted(PARSERS))
@pytest.mark.parametrize('bad', [12, 1.5, ['text'], {'a': 1}, object(), b'\x00\x01\x02\x03\x04\x05\x06\x07' * 4],
                         ids=['int', 'float', 'list', 'dict', 'object', 'binary'])
def test_bad_input_raises_ansible_filter_error_naming_the_filter(output_format, bad):
    with pytest.raises(AnsibleFilterError, match=r'^parse_%s: ' % output_format):
        _filter(output_format)(bad)


def test_a_parser_bug_still_names_the_filter():
    def broken_parser(_text):
        raise KeyError('tests')

    with pytest.raises(AnsibleFilterError, match=r"^parse_example: cannot parse the input \(KeyError: 'tests'\)"):
        make_parser_filter('parse_example', broken_parser)('any text')
