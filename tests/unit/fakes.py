# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The small fakes the engine, module and progress tests share (the per-survey fake nodes stay with their tests).

Import them as ``from ansible_collections.lustre.iokit.tests.unit.fakes import FakeClock, FakeNode, RawSink``: the same path
works from the checkout and from ansible-test's staged copy.
"""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import client_launch, progress, results
from ansible_collections.lustre.iokit.plugins.module_utils.engines.errors import EngineError


class FakeClock:
    """A clock that only moves when told: call it for the time (epoch seconds); ``sleep`` moves it on.

    A fake node advances ``now`` as its commands take time, so that durations and ETAs are exact.
    """

    def __init__(self, now=100.0):
        self.now = now

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


class RawSink:
    """Where an engine writes the tool's raw output (``summary`` and ``detail`` text), kept for the test to read."""

    def __init__(self):
        self.summary_text = ''
        self.detail_text = ''

    def summary(self, text):
        self.summary_text += text

    def detail(self, text):
        self.detail_text += text


class FakeNode:
    """The runner interface a fake node offers (that of module_utils/runner.py's Runner) for a subclass to fill in.

    A subclass answers ``run_many`` (a batch, run side by side) or ``run`` (one command): ``run`` is a batch of
    one, a batch is its commands one after the other. The node has expired once the test set a ``stop_reason``
    (the deadline or the signal it plays), as a Runner has when its deadline passed.
    """

    stop_reason = None

    def expired(self):
        return self.stop_reason is not None

    def run(self, argv, env=None, cwd=None):
        return self.run_many([argv], env=env, cwd=cwd)[0]

    def run_many(self, argvs, env=None, cwd=None):
        return [self.run(argv, env=env, cwd=cwd) for argv in argvs]


def client_survey_progress(survey, clock, host='c1'):
    """``(log, builder)`` as a client survey's module starts them before the client-launch layer runs ``survey``
    (SurveyStart.start_run): the run directory, the progress log from the plan (client_launch.progress_plan) on ``clock``, told
    of every record the envelope builder receives and, as SurveyStart.follow_sweep wires it, of every point an adaptive
    step of the survey passes over. Run the survey with ``client_launch._run(survey, builder, raw_path)``."""
    os.makedirs(survey.run_dir, exist_ok=True)
    planned, duration = client_launch.progress_plan(survey, survey.plan())
    log = progress.ProgressLog(survey.run_dir, survey.SURVEY, survey.run_id, host, planned=planned,
                               planned_duration_s=duration, clock=clock)
    builder = results.EnvelopeBuilder(survey.run_id, host, survey.SURVEY, 'native', {})
    builder.observers.append(log)
    for sweep in survey.sweeps.values():
        sweep.on_skip = log.point_skipped
    return log, builder


class Killed(Exception):
    """Stands for a kill of the module right after a point ended."""


def killed_after(survey, count):
    """Run a client-launch ``survey`` (ior, mdtest) until ``count`` points ended, then kill it.

    Returns the finished records as the points file keeps them: written as each point ended, by attempt 1.
    """
    kept = []
    survey.inspect()
    survey.setup()
    with pytest.raises(Killed):
        for record in survey.run():
            kept.append(dict(json.loads(json.dumps(record)), attempt=1))
            if len(kept) == count:
                raise Killed()
    return kept


def run_whole(survey, control_runner=None):
    """A native survey's records between its ``setup()`` and its ``teardown()``, whatever happens, as
    survey_module.run_native drives an engine: a setup that fails (EngineError) joins ``survey.errors`` as the
    envelope shows it; the teardown's problems are kept in ``survey.teardown_problems``."""
    survey.teardown_problems = []
    try:
        survey.setup()
        yield from survey.run()
    except EngineError as exc:
        survey.errors.append({'point': None, 'message': str(exc)})
    finally:
        survey.teardown_problems = survey.teardown(control_runner)
