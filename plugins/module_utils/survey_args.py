# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Argument specs shared by the survey modules, paired with the doc fragments.

``survey_common_argument_spec()`` goes with ``lustre.iokit.survey_common``
and ``sweep_argument_spec()`` with ``lustre.iokit.sweep``; a module merges
them into its own spec, so that an option means the same everywhere.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.lustre.iokit.plugins.module_utils.option_problem import OptionProblem
from ansible_collections.lustre.iokit.plugins.module_utils.results import ENGINES, validate_run_id

DEFAULT_WORKDIR = '/tmp/lustre-iokit'


def survey_common_argument_spec(engines=ENGINES):
    """engine, timeout, run_id, launch_id, workdir, start_signal.

    ``engines`` narrows the choices of ``engine`` for a survey the I/O kit has no script for (ior, mdtest:
    ``('native',)``), so that Ansible's own argument validation refuses ``engine=iokit`` there.
    """
    return dict(
        engine=dict(type='str', choices=list(engines), default='native'),
        timeout=dict(type='int'),
        run_id=dict(type='str'),
        launch_id=dict(type='str'),
        workdir=dict(type='path', default=DEFAULT_WORKDIR),
        start_signal=dict(type='path'),
    )


def sweep_argument_spec():
    """rszlo, rszhi (KiB) and thrlo, with the I/O kit's defaults."""
    return dict(
        rszlo=dict(type='int', default=1024),
        rszhi=dict(type='int', default=1024),
        thrlo=dict(type='int', default=1),
    )


def common_option_problems(params):
    """Invalid values of the survey_common options, each an OptionProblem."""
    problems = []
    if params['timeout'] is not None and params['timeout'] < 1:
        problems.append(OptionProblem('timeout', 'must be at least 1 second', got='%d' % params['timeout']))
    if params['run_id'] is not None:
        try:
            validate_run_id(params['run_id'])
        except ValueError as exc:
            # validate_run_id's sentence names run_id itself (the action plugins raise it as it is)
            problems.append(OptionProblem((), str(exc)))
    return problems
