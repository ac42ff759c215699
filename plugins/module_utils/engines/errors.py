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
    """A setting or a state of the node that keeps a survey from starting, or a step of the survey that failed.

    Most are found before anything is made (a device that cannot be sized, a mount point that is not Lustre,
    a console session someone else holds); the rest are a command of the survey that failed (``lst add_test``,
    removing a file it wrote), which the engine records against the point or its teardown.  The message
    names the option or the command at fault (``targets: ...``), so that the module can fail with it as it is.
    """
