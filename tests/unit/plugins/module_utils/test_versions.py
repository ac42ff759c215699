# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one version reader: Lustre's and sg3_utils' version strings as comparable tuples."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils.versions import version_tuple


@pytest.mark.parametrize('text, expected', [
    ('2.15.5', (2, 15, 5)),
    ('lustre: 2.15.5_12_g1234abc', (2, 15, 5)),
    ('2.16', (2, 16, 0)),
    ('1.46-3', (1, 46, 0)),
    ('', None),
    (None, None),
    ('unknown', None),
])
def test_version_tuple(text, expected):
    assert version_tuple(text) == expected


def test_versions_compare_as_releases():
    assert version_tuple('2.15.6') > (2, 15, 5) and version_tuple('2.15.10') > version_tuple('2.15.9')
