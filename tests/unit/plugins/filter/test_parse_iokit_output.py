# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import glob
import importlib
import json
import os

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.lustre.iokit.plugins.filter.parse_iokit_output import FilterModule
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.catalog import PARSERS

FIXTURES = os.path.join(os.path.dirname(__file__), '..', 'module_utils', 'parsers', 'fixtures')
parse_iokit_output = FilterModule().filters()['parse_iokit_output']


def _one_fixture(output_format):
    texts = sorted(glob.glob(os.path.join(FIXTURES, output_format, '*.txt')))
    assert texts, 'no fixture for %s' % output_format
    with open(texts[0], encoding='utf-8') as handle:
        text = handle.read()
    with open(texts[0][:-4] + '.json', encoding='utf-8') as handle:
        return text, json.load(handle)


@pytest.mark.parametrize('output_format', sorted(PARSERS))
def test_dispatch_gives_what_the_dedicated_filter_gives(output_format):
    text, expected = _one_fixture(output_format)
    dedicated = importlib.import_module('ansible_collections.lustre.iokit.plugins.filter.parse_%s' % output_format)
    assert parse_iokit_output(text, output_format) == expected
    assert dedicated.FilterModule().filters()['parse_%s' % output_format](text) == expected


def test_unknown_format_lists_the_valid_ones():
    with pytest.raises(AnsibleFilterError, match=r"unknown output_format 'obdfilter'.*obdfilter_survey"):
        parse_iokit_output('ost  1 sz 1024K', 'obdfilter')


@pytest.mark.parametrize('bad_input', [12, ['a list'], {'a': 'dict'}, b'\x00\x01\x02\x03\x04\x05' * 20])
@pytest.mark.parametrize('output_format', sorted(PARSERS))
def test_bad_input_names_the_filter(output_format, bad_input):
    with pytest.raises(AnsibleFilterError, match=r'parse_iokit_output\(%s\)' % output_format):
        parse_iokit_output(bad_input, output_format)


def test_the_catalog_covers_every_parser_module():
    parser_dir = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', 'plugins', 'module_utils', 'parsers')
    modules = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(parser_dir, '*.py'))
                     if not os.path.basename(p).startswith('_') and os.path.basename(p) != 'catalog.py')
    assert modules == sorted(PARSERS)
