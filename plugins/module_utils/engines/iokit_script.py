# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``engine: iokit``: running one of the node's installed I/O-kit scripts and reading what it wrote.

The scripts take their sweep from environment variables and write their results beside ``rslt``
(``<rslt>.summary``, ``<rslt>.detail``); what a survey makes of them is its engine's.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def read_text(path):
    """The text of ``path``, or None when it cannot be read (a script stopped early writes no file)."""
    try:
        with open(path) as handle:
            return handle.read()
    except (IOError, OSError):
        return None


def run_script(runner, script, env, rslt):
    """Run ``bash <script>`` with ``env``; returns ``(result, summary)``, the summary file's text or, without one,
    what the script printed."""
    result = runner.run(['bash', script], env=env)
    summary = read_text(rslt + '.summary')
    return result, result.stdout if summary is None else summary
