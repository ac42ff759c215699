# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one error class of the survey engines.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class EngineError(Exception):
    """A setting or a state of the node that keeps a survey from starting, found before anything is made.

    The message names the option at fault (``targets: ...``), so that the module can fail with it as it is.
    """
