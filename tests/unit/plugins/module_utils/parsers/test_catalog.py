# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every parser of plugins/module_utils/parsers/ is found by its format name (catalog.PARSERS) and is a filter."""

from __future__ import annotations

import importlib
import os

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils.parsers import catalog
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.catalog import PARSERS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))))
PARSERS_DIR = os.path.dirname(os.path.abspath(catalog.__file__))


def parser_formats():
    """The format of each parser module: its file name, less the helpers (``_text.py``...) and the catalogue."""
    return sorted(name[:-len('.py')] for name in os.listdir(PARSERS_DIR)
                  if name.endswith('.py') and not name.startswith('_') and name != 'catalog.py')


def test_the_parsers_are_found():
    assert 'obdfilter_survey' in parser_formats()


@pytest.mark.parametrize('output_format', parser_formats())
def test_every_parser_module_is_in_the_catalogue(output_format):
    module = importlib.import_module('ansible_collections.lustre.iokit.plugins.module_utils.parsers.' + output_format)
    parser = getattr(module, 'parse_' + output_format, None)
    assert parser is not None, 'plugins/module_utils/parsers/%s.py: name its parser parse_%s' % (
        output_format, output_format)
    assert PARSERS.get(output_format) is parser, (
        'plugins/module_utils/parsers/catalog.py: add %r: parse_%s to PARSERS' % (output_format, output_format))


@pytest.mark.parametrize('output_format', parser_formats())
def test_every_parser_module_has_its_filter(output_format):
    path = os.path.join('plugins', 'filter', 'parse_%s.py' % output_format)
    assert os.path.isfile(os.path.join(ROOT, path)), (
        '%s is missing: the filter lustre.iokit.parse_%s, made with plugin_utils/parser_filters.make_parser_filter '
        '(as plugins/filter/parse_obdfilter_survey.py)' % (path, output_format))
