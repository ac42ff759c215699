# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A stored run for the export tests: two OSS with two OSTs each (obdfilter, two iterations) and an MDS (mds)."""

from __future__ import annotations

import copy

from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import write_envelope
from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.report.helpers import (
    RUN_ID, envelope, obdfilter_sweep)

FSNAME = 'testfs'
# helpers.envelope() finishes every envelope at this time (2026-11-22T10:31:44Z).
FINISHED = 1795343504


def mds_records():
    records = []
    for thr in (1, 4):
        records.append({'mdt': 1, 'file': 1000, 'dir': 1, 'stripe': 0, 'thr': thr, 'target': FSNAME + '-MDT0000',
                        'tests': {'create': {'ops_s': 1000.0 * thr, 'min_ops_s': None, 'max_ops_s': None,
                                             'status': 'ok'},
                                  'destroy': {'ops_s': 1500.0 * thr, 'min_ops_s': None, 'max_ops_s': None,
                                              'status': 'ok'}}})
    return records


def with_iterations(records, factors):
    """The records once per iteration, each iteration's rates multiplied by its factor."""
    result = []
    for iteration, factor in enumerate(factors, start=1):
        for record in copy.deepcopy(records):
            record['iteration'] = iteration
            for test in record['tests'].values():
                for key in ('mib_s', 'ops_s'):
                    if isinstance(test.get(key), (int, float)):
                        test[key] = test[key] * factor
            result.append(record)
    return result


def store_run(results_dir, run_id=RUN_ID, factors=(1.0, 0.5, 2.0)):
    """Store obdfilter on oss1/oss2 (iterations with ``factors``: the median is factor 1) and mds on mds1."""
    for host, osts in (('oss1', ('OST0000', 'OST0001')), ('oss2', ('OST0002', 'OST0003'))):
        records = with_iterations(obdfilter_sweep(targets=['%s-%s' % (FSNAME, ost) for ost in osts]), factors)
        write_envelope(str(results_dir), envelope(host, 'obdfilter', records, run_id=run_id))
    write_envelope(str(results_dir), envelope('mds1', 'mds', mds_records(), run_id=run_id))
    return run_id
