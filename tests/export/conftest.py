# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run from the checkout with the .venv's Python: the collection is imported from this checkout.

``.venv/collections`` links the collection of the checkout that made the .venv, which is another checkout when
the .venv is shared (a git worktree); a link made here, under tests/output, always names this one.
"""

from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLECTIONS = os.path.join(ROOT, 'tests', 'output', 'export-collections')
_LINK = os.path.join(COLLECTIONS, 'ansible_collections', 'lustre', 'iokit')
os.makedirs(os.path.dirname(_LINK), exist_ok=True)
if os.path.realpath(_LINK) != os.path.realpath(ROOT):
    if os.path.lexists(_LINK):
        os.unlink(_LINK)
    os.symlink(ROOT, _LINK)
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)
