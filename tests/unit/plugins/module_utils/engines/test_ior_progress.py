# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The IOR engine's progress on a fake launcher: the module's progress log is told the plan and every point."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.lustre.iokit.plugins.module_utils import progress as progress_utils
from ansible_collections.lustre.iokit.plugins.module_utils.engines import ior
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState
from ansible_collections.lustre.iokit.plugins.module_utils.runner import CommandResult

RUN = 'ior-progress-1'
FIXTURE = os.path.join(os.path.dirname(__file__), '..', 'parsers', 'fixtures', 'ior',
                       'exascaler_cloud_lustre_fpp_3_3_0.txt')


class NeverExpires:
    stop_reason = None

    def expired(self):
        return False


def test_the_progress_log_gets_the_plan_at_setup_and_each_point_as_it_ends(tmp_path):
    mount = tmp_path / 'mnt'
    mount.mkdir()
    work = str(tmp_path / 'work')
    run_dir = os.path.join(work, RUN)
    os.makedirs(run_dir)
    # what the survey module starts before the client-launch layer runs the survey: a log without a plan
    log = progress_utils.ProgressLog(run_dir, 'ior', RUN, 'c1')
    runner = NeverExpires()
    survey = ior.IorSurvey(runner, runner, NodeState(work), RUN, str(mount), ['c1', 'c2'],
                           {'access': ['fpp', 'ssf'], 'nodes': [1, 2], 'block_size_mib': 1,
                            'transfer_sizes_kib': [256], 'memory_factor': 0}, workdir=work)
    with open(FIXTURE) as handle:
        output = handle.read()
    seen = []

    def launch(point, nodes, tasks_per_node, program, what=None):
        summary = progress_utils.read_progress(progress_utils.progress_path(run_dir, 'ior'))
        seen.append((summary['done'], summary['total'], summary['current'], summary['eta_s'] is not None))
        return CommandResult(['mpirun'], 0, output, '', 1.0)
    survey.launch = launch
    survey.make_point_directory = lambda point: str(mount)
    survey.setup()
    survey.run()
    assert [entry[:3] for entry in seen] == [
        (index, 4, {'access': access, 'nodes': nodes, 'tasks_per_node': 1, 'transfer_kib': 256})
        for index, (access, nodes) in enumerate([('fpp', 1), ('fpp', 2), ('ssf', 1), ('ssf', 2)])]
    # the plan's estimate gives an ETA before the first point ends
    assert all(entry[3] for entry in seen)
    summary = progress_utils.read_progress(progress_utils.progress_path(run_dir, 'ior'))
    assert (summary['done'], summary['total']) == (4, 4)
    assert summary['last']['figure'].startswith('write ') and ', read ' in summary['last']['figure']
    # the client-launch layer hands the records to the envelope once the sweep ended: not counted again
    for record in survey.records:
        log.point_done(record)
    log.finish('ok')
    summary = progress_utils.read_progress(progress_utils.progress_path(run_dir, 'ior'))
    assert (summary['state'], summary['done'], summary['total']) == ('ok', 4, 4)
    with open(progress_utils.points_path(run_dir, 'ior')) as handle:
        assert len(handle.readlines()) == 4
    assert [record['attempt'] for record in survey.records] == [1, 1, 1, 1]


def test_without_a_progress_log_the_engine_runs_as_before(tmp_path):
    mount = tmp_path / 'mnt'
    mount.mkdir()
    work = str(tmp_path / 'other-work')
    runner = NeverExpires()
    survey = ior.IorSurvey(runner, runner, NodeState(work), RUN, str(mount), ['c1'],
                           {'block_size_mib': 1, 'transfer_sizes_kib': [256], 'memory_factor': 0}, workdir=work)
    survey.setup()
    assert survey.progress is None
