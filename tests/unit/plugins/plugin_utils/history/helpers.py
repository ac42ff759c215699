# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs in a results store and databases to record them in, for the history's tests.

The tests of ``test_databases.py`` take a ``database`` fixture (an object as SqliteDatabase): the unit tests give
them SQLite; ``tests/history`` gives them SQLite and a real PostgreSQL server.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3

from ansible_collections.lustre.iokit.plugins.module_utils.results import EnvelopeBuilder
from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import write_envelope
from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.report.helpers import (
    lnet_nodes, per_lun_sgpdd, per_mdt_mds, per_ost_obdfilter)

TABLES = ('runs', 'run_tags', 'run_surveys', 'envelopes', 'series', 'samples', 'envelope_components',
          'component_fill')
OSTS_PER_OSS = 2
# Each run's results start an hour after the previous run's.
FIRST_START = 1795342501


class SqliteDatabase:
    """A fresh SQLite file per ``new_dsn()``, under ``directory``."""

    kind = 'sqlite'

    def __init__(self, directory):
        self.directory = str(directory)
        self.count = 0

    def new_dsn(self) -> str:
        self.count += 1
        return 'sqlite://%s/db%d/history.sqlite' % (self.directory, self.count)

    @contextlib.contextmanager
    def locked(self, dsn: str):
        """Another writer in the middle of its transaction (it holds the one writer's lock; readers go on)."""
        connection = sqlite3.connect(dsn[len('sqlite://'):], isolation_level=None)
        connection.execute('BEGIN IMMEDIATE')
        try:
            yield
        finally:
            connection.execute('ROLLBACK')
            connection.close()

    def unreachable_dsn(self) -> str:
        """A DSN that cannot be opened: its directory cannot be made (a file stands in the way)."""
        os.makedirs(self.directory, exist_ok=True)
        blocker = os.path.join(self.directory, 'not-a-directory')
        with open(blocker, 'w', encoding='utf-8') as handle:
            handle.write('x')
        return 'sqlite://%s/history.sqlite' % blocker


def oss_name(index: int) -> str:
    return 'oss%d' % index


def ost_names(index: int) -> list[str]:
    return ['testfs-OST%04x' % ((index - 1) * OSTS_PER_OSS + number) for number in range(OSTS_PER_OSS)]


def lun_names(index: int) -> list[str]:
    return ['/dev/sd%s' % chr(ord('b') + number + 2 * (index - 1)) for number in range(2)]


def envelope(run_id, host, survey, records, start, parameters=None, environment=None):
    builder = EnvelopeBuilder(run_id, host, survey, 'native', parameters or {}, now=start)
    builder.set_environment(environment or {})
    for record in records:
        builder.add_record(record)
    return builder.finish(now=start + 600)


def store_run(results_dir, run_id, number=0, oss_count=2, factor=1.0, surveys=('obdfilter', 'sgpdd', 'mds', 'lnet'),
              parameters=None, cabling=0):
    """A run of ``oss_count`` OSS (obdfilter per OST, sgpdd per LUN), one MDS and an lnet console, stored in
    ``results_dir``.  ``number`` orders runs in time; ``factor`` scales every rate; ``cabling`` shifts which kernel
    name each LUN gets (a reboot or a re-cabling), while its WWID stays.  Returns the stored envelopes."""
    start = FIRST_START + 3600 * number
    stored = []
    parameters = dict({'size_mib': 64, 'thrhi': 4}, **(parameters or {}))
    for index in range(1, oss_count + 1):
        host = oss_name(index)
        if 'obdfilter' in surveys:
            osts = ost_names(index)
            stored.append(envelope(run_id, host, 'obdfilter', per_ost_obdfilter(host, {ost: factor for ost in osts}),
                                   start, dict(parameters, targets=osts),
                                   {'lustre_version': '2.15.5', 'targets': osts,
                                    'free_kib': {ost: 750 for ost in osts}, 'total_kib': {ost: 1000 for ost in osts}}))
        if 'sgpdd' in surveys:
            luns = lun_names(index)
            # The kernel names move with the cabling; the disks (their WWIDs) stay where they are.
            named = luns[cabling % 2:] + luns[:cabling % 2]
            devices = [{'device': name, 'stable_id': 'wwid:naa.%s-%d' % (host, position)}
                       for position, name in enumerate(named)]
            stored.append(envelope(run_id, host, 'sgpdd', per_lun_sgpdd(host, {lun: factor for lun in luns}), start,
                                   dict(parameters, devices=luns), {'devices': devices}))
    if 'mds' in surveys:
        stored.append(envelope(run_id, 'mds1', 'mds', per_mdt_mds('mds1', {'testfs-MDT0000': factor}), start,
                               dict(parameters, targets=['testfs-MDT0000']),
                               {'lustre_version': '2.15.5', 'free_inodes': {'testfs-MDT0000': 900},
                                'total_inodes': {'testfs-MDT0000': 1000}}))
    if 'lnet' in surveys:
        servers = {'192.168.1.%d@tcp' % index: factor for index in range(1, oss_count + 1)}
        stored.append(envelope(run_id, 'client1', 'lnet', lnet_nodes(servers, {'192.168.1.100@tcp': factor}), start,
                               {'servers': list(servers), 'clients': ['192.168.1.100@tcp']},
                               {'lustre_version': '2.15.5'}))
    for item in stored:
        write_envelope(results_dir, item)
    return stored


def nid_owners(oss_count=2) -> dict:
    return dict({'192.168.1.%d@tcp' % index: oss_name(index) for index in range(1, oss_count + 1)},
                **{'192.168.1.100@tcp': 'client1'})


def dump(history) -> dict:
    """Every row of every table, sorted: what 'changes nothing' is checked against."""
    backend = history._backend  # pylint: disable=protected-access
    return {table: sorted(tuple(row) for row in backend.query('SELECT * FROM %s' % table)) for table in TABLES}


def tree_digest(directory) -> dict:
    """Each file under ``directory`` with its SHA-256: the run's files, to show they were not touched."""
    digests = {}
    for root, _dirs, files in os.walk(str(directory)):
        for name in files:
            path = os.path.join(root, name)
            with open(path, 'rb') as handle:
                digests[os.path.relpath(path, str(directory))] = hashlib.sha256(handle.read()).hexdigest()
    return digests
