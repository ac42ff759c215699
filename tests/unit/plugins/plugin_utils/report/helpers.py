# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Envelopes for the report tests, built from the parsers' real fixtures (the record shapes the surveys store)."""

from __future__ import annotations

import copy
import os

from ansible_collections.lustre.iokit.plugins.module_utils.parsers.catalog import PARSERS
from ansible_collections.lustre.iokit.plugins.module_utils.results import EnvelopeBuilder
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.findings import component_kind

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', 'module_utils', 'parsers', 'fixtures')
RUN_ID = '20261122T101500Z-test'
REPORT_TEMPLATES = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', '..', 'roles', 'report', 'templates')


def parsed(output_format, name):
    with open(os.path.join(FIXTURES, output_format, name + '.txt'), encoding='utf-8') as handle:
        return PARSERS[output_format](handle.read())


def envelope(host, survey, records, run_id=RUN_ID, errors=(), parameters=None, aborted=False):
    builder = EnvelopeBuilder(run_id, host, survey, 'native', parameters or {}, now=1795342501)
    for record in records:
        builder.add_record(record)
    for message in errors:
        builder.add_error(message)
    if aborted:
        builder.mark_aborted('timeout after 3600 s')
    return builder.finish(now=1795343504)


def scaled(records, factor, unit_field='mib_s'):
    """The same records with every rate multiplied by ``factor`` (another host of the fleet)."""
    records = copy.deepcopy(records)
    for record in records:
        for result in (record.get('tests') or {}).values():
            for key in (unit_field, 'min_' + unit_field, 'max_' + unit_field):
                if isinstance(result.get(key), (int, float)):
                    result[key] = round(result[key] * factor, 2)
    return records


def obdfilter_sweep(host_factor=1.0, targets=None):
    """A small obdfilter sweep in parse_obdfilter_survey's shape: obj 1-4, thr 1-16, write and read."""
    records = []
    for target in targets or [None]:
        for obj in (1, 2, 4):
            for thr in (1, 2, 4, 8, 16):
                if thr < obj:
                    continue
                level = min(thr, 8) / 8.0
                record = {'ost': 1, 'size_kib': 1048576, 'rsz_kib': 1024, 'obj': obj, 'thr': thr, 'case': 'disk',
                          'host': None, 'skipped': False, 'error': None,
                          'tests': {'write': {'mib_s': round(1000 * level * host_factor, 2), 'min_mib_s': None,
                                              'max_mib_s': None, 'status': 'ok'},
                                    'read': {'mib_s': round(1200 * level * host_factor, 2), 'min_mib_s': None,
                                             'max_mib_s': None, 'status': 'ok'}}}
                if target:
                    record['target'] = target
                records.append(record)
    return records


def sgpdd_sweep(peak_write=1100.0, peak_read=1300.0):
    records = []
    for crg in (1, 2):
        for thr in (1, 2, 4, 8):
            if thr < crg:
                continue
            level = min(thr, 4) / 4.0
            records.append({'dev': 1, 'size_kib': 1048576, 'rsz_kib': 1024, 'crg': crg, 'thr': thr, 'host': None,
                            'devices': None, 'enomem': False,
                            'tests': {'write': {'mib_s': peak_write * level, 'min_mib_s': None, 'max_mib_s': None,
                                                'failed': 0, 'status': 'ok'},
                                      'read': {'mib_s': peak_read * level, 'min_mib_s': None, 'max_mib_s': None,
                                               'failed': 0, 'status': 'ok'}}})
    return records


def fleet():
    """Four OSS (oss3 at half speed), each with obdfilter and sgpdd, one MDS, one client with ost-survey."""
    envelopes = []
    for index, factor in enumerate((1.0, 1.02, 0.5, 0.98), start=1):
        host = 'oss%d' % index
        envelopes.append(envelope(host, 'obdfilter', obdfilter_sweep(factor)))
        envelopes.append(envelope(host, 'sgpdd', sgpdd_sweep()))
    envelopes.append(envelope('mds1', 'mds', parsed('mds_survey', 'readme_older_spacing')))
    envelopes.append(envelope('client1', 'ost', [parsed('ost_survey', 'manual_current')], parameters={'fsname': 'testfs'}))
    return envelopes


# A small fleet as the native engines store it: every OST, LUN, MDT, NID and client has its own figures, so that
# every layer can be made slow on its own.  Rates are MiB/s (ops/s for mds); a factor below 1 makes one slow.

def per_ost_obdfilter(host, rates, aggregate=1.0):
    """obdfilter on one OSS: the host's aggregate and each OST's (``{ost: factor}``) at three thread counts.

    ``aggregate`` scales the host's own figure: below 1, the OSTs together are slower than each alone.
    """
    records = []
    for thr in (1, 2, 4):
        level = thr / 4.0
        per_ost = {ost: {test: {'mib_s': 500.0 * factor * level, 'status': 'ok'} for test in ('write', 'read')}
                   for ost, factor in rates.items()}
        total = sum(500.0 * factor * level for factor in rates.values()) * aggregate
        records.append({'ost': len(rates), 'size_kib': 65536 * len(rates), 'rsz_kib': 1024, 'obj': len(rates),
                        'thr': thr * len(rates), 'case': 'disk', 'host': host, 'skipped': False, 'error': None,
                        'obj_per_ost': 1, 'thr_per_ost': thr, 'targets': list(rates),
                        'tests': {test: {'mib_s': total, 'status': 'ok'} for test in ('write', 'read')},
                        'per_ost': per_ost})
    return records


def per_lun_sgpdd(host, rates):
    """sgpdd on one OSS with several LUNs (``{device: factor}``): the aggregate and each LUN's, at two points."""
    records = []
    for thr in (1, 2):
        devices = [{'device': device, 'failed': 0, 'min_mib_s': 600.0 * factor * thr / 2,
                    'max_mib_s': 600.0 * factor * thr / 2} for device, factor in rates.items()]
        total = sum(device['min_mib_s'] for device in devices)
        records.append({'dev': len(rates), 'size_kib': 65536, 'rsz_kib': 1024, 'crg': len(rates),
                        'thr': thr * len(rates), 'crg_per_dev': 1, 'thr_per_dev': thr, 'host': host,
                        'devices': list(rates), 'enomem': False,
                        'tests': {test: {'mib_s': total, 'status': 'ok', 'devices': devices}
                                  for test in ('write', 'read')}})
    return records


def ost_survey(rates, fsname='testfs'):
    """ost-survey from one client: one row per OST index (``{index: factor}``)."""
    return [{'fsname': fsname, 'osts': [{'ost': index, 'write_mib_s': 300.0 * factor, 'read_mib_s': 350.0 * factor,
                                         'active': True} for index, factor in rates.items()]}]


def lnet_nodes(servers, clients):
    """lst_survey's records (split all): each node's own bandwidth, servers and clients ``{nid: factor}``."""
    records = []
    for mode in ('read_1m', 'write_1m'):
        nodes = [{'nid': nid, 'role': role, 'read_mib_s': 1000.0 * factor, 'write_mib_s': 1000.0 * factor}
                 for role, group in (('server', servers), ('client', clients)) for nid, factor in group.items()]
        records.append({'mode': mode, 'split': 'all', 'servers': list(servers), 'clients': list(clients),
                        'read_mib_s': 1000.0, 'write_mib_s': 1000.0, 'complete': True, 'error': None,
                        'server_errors': 0, 'client_errors': 0, 'nodes': nodes})
    return records


def ior_clients(clients):
    """One IOR launch over the clients (``{host: factor}``) with each client's own rate (per_client)."""
    return [{'access': 'file-per-process', 'nodes': len(clients), 'tasks_per_node': 1, 'transfer_kib': 1024,
             'ior_write_mib_s': 800.0 * sum(clients.values()), 'ior_read_mib_s': 900.0 * sum(clients.values()),
             'per_client': [{'host': host, 'ior_write_mib_s': 800.0 * factor, 'ior_read_mib_s': 900.0 * factor}
                            for host, factor in clients.items()]}]


def per_mdt_mds(host, rates):
    """mds-survey on one MDS with several MDTs (``{mdt: factor}``), two thread counts."""
    return [{'mdt': len(rates), 'file': 1000, 'dir': 1, 'thr': thr, 'host': host,
             'tests': {'create': {'ops_s': sum(rates.values()) * 5000.0 * thr, 'status': 'ok'}},
             'per_mdt': [{'target': mdt, 'tests': {'create': {'ops_s': 5000.0 * factor * thr, 'status': 'ok'}}}
                         for mdt, factor in rates.items()]} for thr in (1, 2)]


def history_rows(samples, finished, run_id=None, params_hash='vars-1'):
    """A run's samples as the history database hands them to the report (history_judge's row shape): a component is
    its target (an OST by its name) or, for a host aggregate, the host."""
    return [{'run_id': run_id or sample.run_id, 'finished': finished, 'survey': sample.survey,
             'params_hash': params_hash, 'component_kind': component_kind(sample.survey, sample.target),
             'component_id': sample.target or sample.host, 'metric': sample.metric, 'unit': sample.unit,
             'direction': 'higher', 'point': dict(sample.point), 'iteration': sample.iteration, 'value': sample.value,
             'host': sample.host, 'target': sample.target}
            for sample in samples]
