# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The contract a native survey engine fills in, so that one driver (``survey_module.run_native``) runs any of them.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class NativeSurvey:
    """One survey on this node, as ``survey_module.run_native`` drives it: ``setup()``, then ``run()`` to its end,
    then always ``teardown(control_runner)``.

    What the driver reads from the engine:

    - ``errors``: a list of ``{'point': <point or None>, 'message': <text>}`` the engine met while measuring;
    - ``aborted``: None, or why the sweep stopped early (a timeout, a stop request, a step that cannot go on);
    - ``raw``: set by the driver to an object with ``summary(text)`` and ``detail(text)`` when the survey writes
      the I/O kit's text files, else left as the engine made it (None);
    - ``envelope_fields()``: the envelope fields the engine adds itself (an adaptive sweep's), or {};
    - ``withdrawn``: records of earlier attempts (put into the envelope when the run resumed) that the sweep, as it
      ended, no longer has, each ``{'record', 'reason', 'point'}`` (mdtest's nodes step after its best changed).

    Before the driver runs, the module has asked ``problems()`` (every invalid or unsafe setting, each message
    naming its option) and ``plan()`` (the points, what each writes, for the check mode and the estimate).
    """

    errors = None
    aborted = None
    raw = None
    withdrawn = ()

    def problems(self):
        """Every setting that keeps the survey from starting, each a message naming the option; [] when none."""
        return []

    def plan(self):
        """What the survey would do: its points, the bytes each writes, what it changes on the node."""
        raise NotImplementedError

    def setup(self):
        """Make what the survey measures through (each thing written to the node state first).

        Raises ``EngineError`` (or ``LctlError``) when that fails; ``teardown`` still runs and undoes what was made.
        """

    def run(self):
        """Measure the points in order, yielding one record as each completes (resumed points are not measured)."""
        raise NotImplementedError

    def teardown(self, control_runner):
        """Undo what ``setup`` and ``run`` made, through ``control_runner`` (a runner whose deadline has not passed:
        the survey's own may have); returns the problems left, [] when everything was undone."""
        return []

    def envelope_fields(self):
        """Envelope fields this engine adds (``adaptive.envelope_fields`` of its sweep), {} when none."""
        return {}
