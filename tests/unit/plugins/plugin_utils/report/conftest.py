# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest

from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.report.helpers import fleet


@pytest.fixture
def fleet_envelopes():
    """Four OSS (oss3 at half speed) with obdfilter and sgpdd, one MDS, one client with ost-survey."""
    return fleet()
