# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every survey engine through the checks of engines/contract.py, on the fake runners of its own tests: the server
engines through all of them, the client engines through what they share. Each is built through the one
EngineContext of ``one_context``."""

from __future__ import annotations

import time

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import survey_catalog
from ansible_collections.lustre.iokit.plugins.module_utils.engines.contract import EngineContext, NativeSurvey
from ansible_collections.lustre.iokit.plugins.module_utils.engines.errors import EngineError
from ansible_collections.lustre.iokit.plugins.modules import lst_survey, mds_survey, obdfilter_survey, sgpdd_survey
from ansible_collections.lustre.iokit.tests.unit.fakes import FakeClock, run_whole
from ansible_collections.lustre.iokit.tests.unit.plugins.module_utils.engines import (
    test_ior_engine as ior_tests,
    test_lnet_engine as lnet_tests,
    test_mds_engine as mds_tests,
    test_mdtest_engine as mdtest_tests,
    test_obdfilter_engine as obdfilter_tests,
    test_ost_engine as ost_tests,
    test_sgpdd_engine as sgpdd_tests,
)


RUN_ID = 'run-1'
HOST = 'node1'


def one_context(runner, unused_control_runner, node_state, unused_run_id, unused_host, clock=time.monotonic,
                wall_clock=time.time):
    """The context every engine here is built with, whatever its own tests would give: the fake node's runner as
    both runners, the run id and host above; the node state and the clocks are the fake node's (its helper's)."""
    return EngineContext(runner, runner, node_state, RUN_ID, HOST, clock=clock, wall_clock=wall_clock)


def sgpdd_engine(unused_tmp_path):
    clock = FakeClock(0.0)
    runner = sgpdd_tests.FakeRunner(clock)
    return sgpdd_tests.survey(runner, [sgpdd_tests.block_target('sdb')], clock, make_context=one_context, thrhi=2,
                              crghi=1), runner


def obdfilter_engine(tmp_path):
    lustre = obdfilter_tests.FakeLustre()
    return obdfilter_tests.make_survey(lustre, tmp_path, make_context=one_context, thrhi=2, nobjhi=1,
                                       tests=['write', 'read'])[0], lustre


def mds_engine(tmp_path):
    runner = mds_tests.FakeRunner()
    return mds_tests.make_survey(tmp_path, runner, make_context=one_context, thrlo=1, thrhi=2, file_count=40)[0], runner


def ost_engine(tmp_path):
    survey, runner, unused_state = ost_tests.make_survey(tmp_path, make_context=one_context)
    survey.inspect()
    return survey, runner


def lnet_engine(tmp_path):
    console = lnet_tests.FakeConsole()
    return lnet_tests.make_survey(tmp_path, console, make_context=one_context)[0], console


def one_per_point(survey, plan):
    return len([point for point in plan['points'] if point['skip'] is None])


# engine -> (how to make it and its control runner on its fake node, how many records a whole run yields)
ENGINES = {
    'sgpdd': (sgpdd_engine, one_per_point),
    'obdfilter': (obdfilter_engine, one_per_point),
    'mds': (mds_engine, one_per_point),
    # one record for the whole survey, built from each OST written and read
    'ost': (ost_engine, lambda survey, plan: 1),
    # one record per test of every group pair
    'lnet': (lnet_engine, lambda survey, plan: len(plan['pairs']) * len(plan['tests'])),
}


# The module's spec of each engine whose records are its points (ost's one record is built from parts).
SPECS = {
    'sgpdd': sgpdd_survey.SgpddSpec,
    'obdfilter': obdfilter_survey.ObdfilterSpec,
    'mds': mds_survey.MdsSpec,
    'lnet': lst_survey.LstSpec,
}
# The server engines whose records are not one per point, so not in SPECS: ost's one record is built from parts.
NOT_PER_POINT = ('ost',)

SERVER_SURVEYS = [name for name, survey in survey_catalog.CATALOG.items() if survey.kind == survey_catalog.SERVER]


@pytest.mark.parametrize('name', SERVER_SURVEYS)
def test_every_server_survey_of_the_catalogue_is_held_to_the_contract(name):
    here = 'tests/unit/plugins/module_utils/engines/test_contract.py'
    assert name in ENGINES, (
        '%s: add %r to ENGINES: a function that makes its engine on the fake node of its own tests, built through '
        'one_context, and how many records a whole run yields' % (here, name))
    assert name in SPECS or name in NOT_PER_POINT, (
        '%s: add %r to SPECS, the ServerSurveySpec of plugins/modules/%s.py (or to NOT_PER_POINT when its records '
        'are not one per point)' % (here, name, survey_catalog.CATALOG[name].module))


@pytest.fixture(params=sorted(ENGINES))
def engine(request, tmp_path):
    make, expected = ENGINES[request.param]
    survey, control_runner = make(tmp_path)
    return survey, control_runner, expected


def test_the_contract_is_an_abstract_base():
    class NoRun(NativeSurvey):
        def plan(self):
            return {}

    with pytest.raises(TypeError):
        NoRun()  # pylint: disable=abstract-class-instantiated


def test_every_engine_declares_what_the_driver_reads(engine):
    survey = engine[0]
    assert isinstance(survey, NativeSurvey)
    assert survey.errors == []
    assert survey.aborted is None
    # the points already measured: one name, one type (the driver gives survey_module.SurveyStart.done_by's dict)
    assert survey.done_points == {}
    assert hasattr(survey, 'inner_sweeps')
    assert isinstance(survey.envelope_fields(), dict)


def test_every_engine_takes_what_every_engine_needs_from_its_context(engine):
    survey, runner = engine[0], engine[1]
    context = survey.context
    assert isinstance(context, EngineContext)
    assert (context.runner, context.control_runner, context.run_id, context.host) == (runner, runner, RUN_ID, HOST)
    # what an engine keeps of it under the same names is the context's
    for name in ('runner', 'control_runner', 'node_state', 'run_id', 'host', 'clock', 'wall_clock'):
        if hasattr(survey, name):
            assert getattr(survey, name) is getattr(context, name), name


def test_every_plan_is_a_dict(engine):
    survey = engine[0]
    assert isinstance(survey.plan(), dict)


def test_every_engine_yields_a_record_per_point(engine):
    survey, control_runner, expected = engine
    plan = survey.plan()
    records = list(run_whole(survey, control_runner))
    assert survey.errors == []
    assert survey.teardown_problems == []
    assert all(isinstance(record, dict) for record in records)
    assert len(records) == expected(survey, plan)


def test_every_engine_tears_down_after_an_error(engine):
    survey = engine[0]
    measured = survey.run

    def failing_run():
        for record in measured():
            yield record
            raise EngineError('the second point failed')
    survey.run = failing_run
    records = list(run_whole(survey, engine[1]))
    assert len(records) == 1
    assert survey.errors[-1] == {'point': None, 'message': 'the second point failed'}
    assert survey.teardown_problems == []


@pytest.mark.parametrize('name', sorted(SPECS))
def test_every_record_is_keyed_for_resume_as_its_planned_point(name, tmp_path):
    survey, control_runner = ENGINES[name][0](tmp_path)
    spec = SPECS[name]()
    plan = survey.plan()
    records = list(run_whole(survey, control_runner))

    def key(point):
        return tuple(point[resume_key] for resume_key in spec.resume_keys)
    assert sorted(key(spec.record_point(record)) for record in records) == sorted(
        key(point) for point in spec.planned(survey, plan))


# A record of an earlier attempt, with the figures a point's record adds; and the key its point is looked up by.
CLIENT_RESUME_KEYS = {
    'ior': (ior_tests, ('fpp', 1, 2, 256)),
    'mdtest': (mdtest_tests, ('tasks', 1, 2)),
}


@pytest.mark.parametrize('name', sorted(CLIENT_RESUME_KEYS))
def test_the_client_engines_keep_resumed_points_under_the_same_name_and_type(name, tmp_path):
    client_tests, key = CLIENT_RESUME_KEYS[name]
    mount = tmp_path / 'mnt'
    mount.mkdir()
    survey = client_tests.survey_for(str(mount), tmp_path, make_context=one_context)[0]
    assert isinstance(survey, NativeSurvey)
    assert survey.context.run_id == RUN_ID
    assert survey.done_points == {}
    record = {'step': 'tasks', 'access': 'fpp', 'nodes': 1, 'tasks_per_node': 2, 'transfer_kib': 256,
              'tasks': 2, 'write_mib_s': 10.0, 'summary': {}}
    # the driver keys each earlier record by resume_key; the figures the record adds are not part of the key
    assert survey.resume_key(record) == key
