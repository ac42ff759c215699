# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The contract a native survey engine fills in, so that one driver (``survey_module.run_native``) runs any of them,
and the context (``EngineContext``) every engine is built with.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import abc
import time


class EngineContext:
    """What every native engine needs from the module that drives it, in one object, so that each engine's
    constructor takes it first and keeps its own arguments for the survey's own settings.

    - ``runner``: runs what the survey measures, under the deadline of the module's ``timeout``;
    - ``control_runner``: runs what makes and undoes things, with no deadline, so that teardown still runs after
      a timeout (None in tests that never make anything);
    - ``node_state``: the NodeState that records what is made before it is made, for the cleanup (None: nothing
      is recorded);
    - ``run_id``: the run's id, in the names of what the survey makes (None outside a run);
    - ``host``: this node's short name, in the records (None: not named);
    - ``clock``: monotonic seconds, for the durations and rates;
    - ``wall_clock``: epoch seconds, stamped on the records so that statistics sampled on the node can be cut per
      test.
    """

    def __init__(self, runner, control_runner=None, node_state=None, run_id=None, host=None, clock=time.monotonic,
                 wall_clock=time.time):
        self.runner = runner
        self.control_runner = control_runner
        self.node_state = node_state
        self.run_id = run_id
        self.host = host
        self.clock = clock
        self.wall_clock = wall_clock


class NativeSurvey(abc.ABC):
    """One survey on this node, as ``survey_module.run_native`` drives it: ``setup()``, then ``run()`` to its end,
    then always ``teardown(control_runner)``.

    What the driver reads from the engine:

    - ``errors``: a list of ``{'point': <point or None>, 'message': <text>}`` the engine met while measuring;
    - ``inner_sweeps``: the adaptive sweep (``adaptive.InnerSweeps``) the module gives an engine whose inner thread
      sweep may stop early, else None;
    - ``done_points``: the points an earlier attempt of the run id finished (resume), set by the driver before
      ``setup()``: a dict from the point's key (the tuple of its ``resume_keys``, the one value for a single key)
      to its record; {} when nothing was done before;
    - ``aborted``: None, or why the sweep stopped early (a timeout, a stop request, a step that cannot go on);
    - ``raw``: set by the driver to an object with ``summary(text)`` and ``detail(text)`` when the survey writes
      the I/O kit's text files, else left as the engine made it (None);
    - ``envelope_fields()``: the envelope fields the engine adds itself (an adaptive sweep's), or {};
    - ``withdrawn``: records of earlier attempts (put into the envelope when the run resumed) that the sweep, as it
      ended, no longer has, each ``{'record', 'reason', 'point'}`` (mdtest's nodes step after its best changed).

    Before the driver runs, the module has asked ``problems()`` (every invalid or unsafe setting, each an
    OptionProblem naming its option) and ``plan()`` (the points, what each writes, for the check mode and the estimate).
    """

    errors = None
    inner_sweeps = None
    done_points = None
    aborted = None
    raw = None
    withdrawn = ()

    def problems(self):
        """Every setting that keeps the survey from starting, each an OptionProblem (option_problem.py); [] when
        none."""
        return []

    @abc.abstractmethod
    def plan(self):
        """What the survey would do, a dict (the module's ``plan``): its points, the bytes each writes, what it
        changes on the node."""

    def setup(self):
        """Make what the survey measures through (each thing written to the node state first).

        Raises ``EngineError`` (or ``LctlError``) when that fails; ``teardown`` still runs and undoes what was made.
        """

    @abc.abstractmethod
    def run(self):
        """Measure the points in order, yielding one record as each completes (resumed points are not measured)."""

    def teardown(self, control_runner):
        """Undo what ``setup`` and ``run`` made, through ``control_runner`` (a runner whose deadline has not passed:
        the survey's own may have); returns the problems left, [] when everything was undone."""
        return []

    def envelope_fields(self):
        """Envelope fields this engine adds (``adaptive.envelope_fields`` of its sweep), {} when none."""
        return {}
