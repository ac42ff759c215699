# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Version numbers of the software a survey depends on (Lustre, sg3_utils), read to be compared.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_VERSION_RE = re.compile(r'(\d+)\.(\d+)(?:\.(\d+))?')


def version_tuple(text):
    """The first ``major.minor[.patch]`` in ``text`` as ``(major, minor, patch)``, patch 0 when not given; else None.

    ``2.15.5`` and ``lustre: 2.15.5_12_g...`` give ``(2, 15, 5)``, sg3_utils' ``1.46-3`` gives ``(1, 46, 0)``.
    Compare with three-part tuples such as ``(2, 16, 0)``.
    """
    match = _VERSION_RE.search(text or '')
    if not match:
        return None
    return tuple(int(part or 0) for part in match.groups())
