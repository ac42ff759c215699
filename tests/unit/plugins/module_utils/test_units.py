# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit conversions shared by the surveys."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import units


def test_binary_constants():
    assert (units.KIB, units.MIB, units.GIB, units.TIB) == (2 ** 10, 2 ** 20, 2 ** 30, 2 ** 40)


@pytest.mark.parametrize('mb_s, expected', [
    (1.048576, 1.0),
    (0, 0.0),
    (57.16, 54.51202392578125),
    # docs/iokit-notes.md, 2.3: sgp_dd min/max figures are the decimal MB/s divided by 1.048576
    (1776.24, 1776.24 / 1.048576),
    (1000, 953.67431640625),
])
def test_decimal_mb_s_to_mib_s(mb_s, expected):
    assert units.decimal_mb_s_to_mib_s(mb_s) == pytest.approx(expected, rel=1e-12)


def test_decimal_mb_s_to_mib_s_keeps_missing_value_missing():
    assert units.decimal_mb_s_to_mib_s(None) is None


@pytest.mark.parametrize('function', [units.decimal_mb_s_to_mib_s])
@pytest.mark.parametrize('bad', ['1024', True, [1]])
def test_conversions_reject_non_numbers(function, bad):
    with pytest.raises(TypeError) as excinfo:
        function(bad)
    assert repr(bad) in str(excinfo.value)


@pytest.mark.parametrize('value, expected', [
    ('512', 512),
    ('0', 0),
    ('4k', 4096),
    ('4K', 4096),
    ('4KiB', 4096),
    ('4kib', 4096),
    ('1m', 1048576),
    ('1M', 1048576),
    ('1024K', 1048576),
    ('1G', 1073741824),
    ('8g', 8 * 2 ** 30),
    ('2t', 2 * 2 ** 40),
    (' 64k ', 65536),
    ('4 k', 4096),
    (512, 512),
    (0, 0),
])
def test_parse_size(value, expected):
    assert units.parse_size(value) == expected


@pytest.mark.parametrize('value', [
    '', '   ', 'k', '4x', '4kb', '4KB', '1MB', '512b', '1.5G', '-4k', '+4k', '4 kk', '0x10', '1e3',
    '4k\n4k', '\u0664k', -1, True, None, 1.5, ['4k'],
])
def test_parse_size_rejects_and_names_the_value(value):
    with pytest.raises(ValueError) as excinfo:
        units.parse_size(value)
    assert repr(value) in str(excinfo.value)


def test_the_default_refusal_lists_every_suffix():
    with pytest.raises(ValueError, match=r'with a suffix k, m, g or t \(binary: 4k = 4096 bytes\), '
                                         r'like "4k", "1m", "512", "1G"$'):
        units.parse_size('4x')


@pytest.mark.parametrize('value, expected', [
    ('512', 512), ('0', 0), ('4k', 4096), ('4K', 4096), ('1m', 1048576), ('1M', 1048576), ('1024k', 1048576),
    (4096, 4096),
])
def test_strict_km_sizes_are_the_compact_form(value, expected):
    assert units.parse_size(value, suffixes='km', strict=True) == expected


@pytest.mark.parametrize('value', [
    # A leading zero is octal to strtol (010 is 8, 08 is 0 and junk); spaces and iB are read as junk.
    '010', '08k', '00', ' 4k', '4k ', '4 k', '4KiB', '4kib', '1g', '2t', '4kb', '0x10', '-4k', '+4k', '', None, True, -1,
])
def test_strict_km_sizes_refuse_what_a_c_tool_would_misread(value):
    with pytest.raises(ValueError) as excinfo:
        units.parse_size(value, suffixes='km', strict=True)
    assert repr(value) in str(excinfo.value)


def test_the_refusal_names_only_the_suffixes_taken():
    with pytest.raises(ValueError, match=r'with a suffix k or m \(binary: 4k = 4096 bytes\), like "4k", "1m", "512"$'):
        units.parse_size('1g', suffixes='km')
    with pytest.raises(ValueError, match=r'with a suffix m \(binary: 1m = 1048576 bytes\), like "1m", "512"$'):
        units.parse_size('4k', suffixes='M')


@pytest.mark.parametrize('value, suffixes, expected', [
    ('8g', 'kmgt', 8 * 2 ** 30), (' 4 KiB ', 'km', 4096), ('010', 'km', 10), ('2T', 't', 2 * 2 ** 40),
])
def test_suffixes_without_strict_keep_the_lenient_form(value, suffixes, expected):
    assert units.parse_size(value, suffixes=suffixes) == expected


@pytest.mark.parametrize('suffixes', ['', 'kx', 'b'])
def test_unknown_suffix_letters_are_a_programming_error(suffixes):
    with pytest.raises(ValueError, match='invalid suffixes'):
        units.parse_size('4k', suffixes=suffixes)


@pytest.mark.parametrize('nbytes, seconds, expected', [
    (1048576, 1, 1.0),
    (1048576, 0.5, 2.0),
    (1073741824, 4, 256.0),
    (0, 3, 0.0),
    (1048576, 0, None),
    (1048576, -1, None),
    (1048576, None, None),
    (None, 1, None),
])
def test_rate_mib_s(nbytes, seconds, expected):
    assert units.rate_mib_s(nbytes, seconds) == expected


@pytest.mark.parametrize('nbytes, seconds', [('1048576', 1), (1048576, '1'), (True, 1)])
def test_rate_mib_s_rejects_non_numbers(nbytes, seconds):
    with pytest.raises(TypeError):
        units.rate_mib_s(nbytes, seconds)
