# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The IOR survey's progress on a fake launcher, run by the client-launch layer as its module runs it: the progress
log starts from the plan (its points, weighed by their bytes, and the estimate), and each record reaches the
envelope, and so the log, as its point ends."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.lustre.iokit.plugins.module_utils import client_launch
from ansible_collections.lustre.iokit.plugins.module_utils import progress as progress_utils
from ansible_collections.lustre.iokit.plugins.module_utils.engines import ior
from ansible_collections.lustre.iokit.plugins.module_utils.engines.contract import EngineContext
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState
from ansible_collections.lustre.iokit.plugins.module_utils.runner import CommandResult
from ansible_collections.lustre.iokit.tests.unit.fakes import FakeClock, FakeNode, client_survey_progress

RUN = 'ior-progress-1'
FIXTURE = os.path.join(os.path.dirname(__file__), '..', 'parsers', 'fixtures', 'ior',
                       'exascaler_cloud_lustre_fpp_3_3_0.txt')


def test_each_poll_sees_the_points_done_of_the_planned_total_the_current_point_the_last_figure_and_an_eta(tmp_path):
    mount = tmp_path / 'mnt'
    mount.mkdir()
    work = str(tmp_path / 'work')
    clock = FakeClock()
    runner = FakeNode()
    # 1 GiB per task: the one-node points move 1 GiB each way, the two-node points 2 GiB
    survey = ior.IorSurvey(EngineContext(runner, runner, NodeState(work), RUN), str(mount), ['c1', 'c2'],
                           {'access': ['fpp', 'ssf'], 'nodes': [1, 2], 'block_size_mib': 1024,
                            'transfer_sizes_kib': [256], 'memory_factor': 0}, workdir=work)
    log, builder = client_survey_progress(survey, clock)
    with open(FIXTURE) as handle:
        output = handle.read()
    polls = []

    def launch(point, nodes, tasks_per_node, program, what=None):
        # a poll while the point runs: what async_result returns
        summary = progress_utils.read_progress(progress_utils.progress_path(survey.run_dir, 'ior'), now=clock.now)
        polls.append(dict(summary, envelope_records=len(builder.records)))
        clock.sleep(2)
        return CommandResult(['mpirun'], 0, output, '', 2.0)
    survey.launch = launch
    assert client_launch._run(survey, builder, os.path.join(survey.run_dir, 'ior.out')) is True
    order = [('fpp', 1), ('fpp', 2), ('ssf', 1), ('ssf', 2)]
    # every point finished before this poll is counted, of the planned 4, and is in the envelope already
    assert [(poll['done'], poll['total'], poll['envelope_records']) for poll in polls] == [(n, 4, n) for n in range(4)]
    assert [poll['current'] for poll in polls] == [
        {'access': access, 'nodes': nodes, 'tasks_per_node': 1, 'transfer_kib': 256} for access, nodes in order]
    # the plan's estimate (12 GiB at the assumed 1000 MiB/s), then the rate measured so far over the bytes left:
    # 2 s for 1 of 6 GiB, 4 s for 3 of 6, 6 s for 4 of 6
    assert [poll['eta_s'] for poll in polls] == [12.3, 10.0, 4.0, 3.0]
    assert polls[0]['last'] is None
    assert [poll['last']['point'] for poll in polls[1:]] == [
        {'access': access, 'nodes': nodes, 'tasks_per_node': 1, 'transfer_kib': 256} for access, nodes in order[:3]]
    assert all(poll['last']['figure'].startswith('write ') and ', read ' in poll['last']['figure']
               for poll in polls[1:])
    summary = progress_utils.read_progress(progress_utils.progress_path(survey.run_dir, 'ior'), now=clock.now)
    assert (summary['done'], summary['total'], summary['current']) == (4, 4, None)
    envelope = builder.finish()
    # every record once in the envelope and once in the points file, the summary ended with the envelope's status
    assert len(envelope['records']) == 4 and envelope['status'] == 'ok'
    summary = progress_utils.read_progress(progress_utils.progress_path(survey.run_dir, 'ior'))
    assert (summary['state'], summary['done'], summary['total'], summary['eta_s']) == ('ok', 4, 4, 0.0)
    with open(progress_utils.points_path(survey.run_dir, 'ior')) as handle:
        assert len(handle.readlines()) == 4
    assert [record['attempt'] for record in envelope['records']] == [1, 1, 1, 1]


def test_a_failed_point_is_an_error_naming_it_and_not_counted_and_the_others_are(tmp_path):
    mount = tmp_path / 'mnt'
    mount.mkdir()
    work = str(tmp_path / 'work')
    runner = FakeNode()
    survey = ior.IorSurvey(EngineContext(runner, runner, NodeState(work), RUN), str(mount), ['c1', 'c2'],
                           {'access': ['fpp'], 'nodes': [1, 2], 'block_size_mib': 1, 'transfer_sizes_kib': [256],
                            'memory_factor': 0}, workdir=work)
    log, builder = client_survey_progress(survey, FakeClock())
    with open(FIXTURE) as handle:
        output = handle.read()

    def launch(point, nodes, tasks_per_node, program, what=None):
        if nodes == 1:
            return CommandResult(['mpirun'], 1, '', 'ior: cannot open\n', 1.0)
        return CommandResult(['mpirun'], 0, output, '', 1.0)
    survey.launch = launch
    assert client_launch._run(survey, builder, os.path.join(survey.run_dir, 'ior.out')) is True
    summary = progress_utils.read_progress(progress_utils.progress_path(survey.run_dir, 'ior'))
    assert (summary['done'], summary['total']) == (1, 2)
    assert [record['nodes'] for record in builder.records] == [2]
    # the error names the point (as every survey's envelope does: a dict of its coordinates)
    assert [error['point'] for error in builder.errors] == [
        {'access': 'fpp', 'nodes': 1, 'tasks_per_node': 1, 'transfer_kib': 256}]
