# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one list of surveys, with what each one is.

Every Python table keyed by survey name is built from ``CATALOG``: the names the results store accepts
(``results.SURVEYS``), the role variables a preflight checks (``plugin_utils/survey_checks.py``), the component a
finding names (``plugin_utils/report/findings.py``), the report's extractor of each measuring survey's samples (the
``record_samples`` of ``engines/<name>.py``, in ``plugin_utils/report/samples.py``) and the unit of work a plan is
estimated in (``plan_estimate.WORK_UNITS``).  The lists that Ansible needs literal (a module's ``DOCUMENTATION``
choices, a role's argument specs and defaults, an AWX form) are compared with it by
``tests/unit/plugins/module_utils/test_survey_catalog.py``, which names the file that disagrees.

Node-side code: runs on the targets' Python 3.6 and newer, no Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections

# What a survey runs on:
#   server  - the module runs on each server and measures that server's own devices, targets or NIDs;
#   client  - one client launches the tool across the clients (MPI or Slurm), one envelope per launch;
#   sampler - no measurement of its own: statistics taken around another survey.
SERVER = 'server'
CLIENT = 'client'
SAMPLER = 'sampler'

# name       - the survey's name in results, roles (roles/<name>), playbooks (survey-<name>.yml) and the store;
# module     - the module that runs it;
# kind       - SERVER, CLIENT or SAMPLER;
# component  - what one of its samples is about when it names a target ('LUN', 'OST', 'MDT', 'NID', 'client');
#              None for a sampler;
# work       - how its plan's work is counted, for the time estimate: (unit of the amount, unit of the rate, the
#              rate assumed when nothing was measured or None, where that figure comes from); None for a sampler;
# role_call  - where the role's call of the module differs from the rule "option <o> is role variable
#              <name>_<o>": 'aliases' (option -> the role variable's suffix), 'fixed' (options the role always
#              passes so), 'unset_zero' (options the role leaves out when 0), 'renamed' (a deprecated role
#              variable's suffix -> the suffix of the one that replaces it; the old one wins while it is set),
#              'overrides' (option -> the options left out when it is passed), 'fallback' (option -> the fact
#              passed for it when the role leaves it out) and 'prepared' (option -> the suffix of the fact the role's
#              tasks/prepare.yml sets from the variable the preflight checks, which the module gets instead);
# role_run   - how survey_common runs it, where it differs from once per host with the survey's iterations:
#              'prepare' (the role's tasks/prepare.yml runs before the iterations), 'console' (the role variable
#              suffix naming the one host that runs the module and stores the result; the others only take part),
#              'estimate' False (check mode shows no estimate: the plan has no amount to time).
Survey = collections.namedtuple('Survey', ['name', 'module', 'kind', 'component', 'work', 'role_call', 'role_run'])

# The rates are deliberately middling guesses for current hardware: the first run's ETA corrects itself from its
# first points, and later plans use what that run measured.
CATALOG = collections.OrderedDict((survey.name, survey) for survey in (
    Survey('sgpdd', 'sgpdd_survey', SERVER, 'LUN',
           ('MiB per device', 'MiB/s per device', 300.0, 'built-in guess'), {}, {'prepare': True}),
    Survey('obdfilter', 'obdfilter_survey', SERVER, 'OST',
           ('MiB per OST', 'MiB/s per OST', 500.0, 'built-in guess'), {}, {}),
    Survey('ost', 'ost_survey', SERVER, 'OST',
           ('MiB through the client', 'MiB/s through the client', 300.0, 'built-in guess'), {}, {}),
    Survey('mds', 'mds_survey', SERVER, 'MDT',
           ('operations per MDT', 'operations/s per MDT', 5000.0, 'built-in guess'), {}, {}),
    # lst stat samples for a fixed time: its plan already knows how long, the rate only corrects it.
    Survey('lnet', 'lst_survey', SERVER, 'NID',
           ('s of lst stat sampling', 's of sampling per s', 1.0, 'lst stat_count x stat_delay_s per point'),
           {'aliases': {'servers': 'server_nids', 'clients': 'client_nids', 'session_timeout': 'session_timeout_s'},
            'prepared': {'servers': 'servers', 'clients': 'clients', 'nid_owners': 'nid_owner_map'}},
           {'prepare': True, 'console': 'console_host'}),
    # mdtest's plan has no item count to divide: only a stored run says how long a point takes.
    Survey('mdtest', 'mdtest', CLIENT, 'client', ('points', 'points/s', None, None),
           {'aliases': {'hosts': 'mpi_hosts', 'mdtest_path': 'binary'}, 'fixed': {'engine': 'native'},
            'unset_zero': ('items_per_dir',), 'renamed': {'iterations': 'repetitions'},
            'overrides': {'items_per_dir': ('items',)}},
           {'estimate': False}),
    Survey('ior', 'ior', CLIENT, 'client',
           ('MiB through the clients', 'MiB/s through the clients', 1000.0, 'built-in guess'),
           {'aliases': {'hosts': 'mpi_hosts', 'ior_path': 'binary'}, 'fixed': {'engine': 'native'},
            'unset_zero': ('client_memory_mib',), 'renamed': {'iterations': 'repetitions'},
            'fallback': {'client_memory_mib': 'ansible_memtotal_mb'}},
           {}),
    # The samplers around any survey: the run id is the preflight's (results_location made or checked it).
    Survey('stats_collect', 'stats_collect', SAMPLER, None, None,
           {'fixed': {'state': 'started', 'run_id': 'preflight'}}, {}),
))

# Every survey, in the order the store and the reports list them.
ALL = tuple(CATALOG)
# The surveys that measure (not the samplers): those with a role that runs them, a plan and a summary.
MEASURING = tuple(name for name, survey in CATALOG.items() if survey.kind != SAMPLER)
