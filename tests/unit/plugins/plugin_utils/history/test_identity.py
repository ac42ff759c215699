# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the history keys by: component identities, the survey variables' hash, fill levels, the direction."""

from __future__ import annotations

import json

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils.sample_extraction import UNIT_MIB_S, UNIT_OPS_S
from ansible_collections.lustre.iokit.plugins.plugin_utils.history import identity
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.store import parse_tags, time_text
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.samples import (
    EXTRACTORS, envelope_samples, metric_direction)
from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.history.helpers import envelope
from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.report.helpers import (
    ior_clients, lnet_nodes, ost_survey, per_lun_sgpdd)

RUN = '20261122T101500Z-test'


def components(item, nid_owners=None):
    namer = identity.ComponentNamer(item, nid_owners)
    return sorted(set(namer.component(sample.target) for sample in envelope_samples(item)[0]))


def test_a_lun_is_keyed_by_its_stable_id_never_its_kernel_name():
    devices = [{'device': '/dev/sdb', 'stable_id': 'wwid:naa.5000c500a1b2c3d4'},
               {'device': '/dev/disk/by-id/wwn-0x5000c500a1b2c3d5', 'stable_id': 'by-id:wwn-0x5000c500a1b2c3d5'},
               {'device': '/dev/loop3', 'stable_id': 'loop:/var/tmp/lun3.img'},
               {'device': '/dev/sdd', 'stable_id': None}]
    item = envelope(RUN, 'oss1', 'sgpdd', per_lun_sgpdd('oss1', {device['device']: 1.0 for device in devices}),
                    1795342501, environment={'devices': devices})
    assert components(item) == [
        ('LUN', 'by-id:wwn-0x5000c500a1b2c3d5'),
        # A backing file's path is only unique on its host; a device without a stable id says so.
        ('LUN', 'loop:oss1:/var/tmp/lun3.img'),
        ('LUN', 'unstable:oss1:sdd'),
        ('LUN', 'wwid:naa.5000c500a1b2c3d4'),
        ('host', 'oss1')]
    assert identity.is_stable('wwid:naa.5000c500a1b2c3d4') and not identity.is_stable('unstable:oss1:sdd')


def test_a_client_is_its_host_name():
    item = envelope(RUN, 'client1', 'ior', ior_clients({'client1': 1.0, 'client2': 0.5}), 1795342501)
    assert components(item) == [('client', 'client1'), ('client', 'client2'), ('host', 'client1')]


def test_a_nid_is_keyed_with_the_node_that_owns_it_the_results_own_record_first():
    namer = identity.ComponentNamer({'survey': 'lnet', 'host': 'client1',
                                     'environment': {'nid_owners': {'10.0.0.1@o2ib': 'oss1'}}},
                                    {'10.0.0.1@o2ib': 'old-name', '10.0.0.2@o2ib': 'oss2'})
    assert namer.component('10.0.0.1@o2ib') == ('NID', 'oss1/10.0.0.1@o2ib')
    assert namer.component('10.0.0.2@o2ib') == ('NID', 'oss2/10.0.0.2@o2ib')
    assert namer.component('10.0.0.3@o2ib') == ('NID', '10.0.0.3@o2ib')


def test_the_samples_of_an_lnet_result_that_records_its_nid_owners_are_keyed_by_them():
    # lst_survey's envelope: environment.nid_owners, each NID of its groups -> its host (nid_owners option)
    records = lnet_nodes({'10.0.0.1@tcp': 1.0, '10.0.0.2@tcp': 1.0}, {'10.0.0.3@tcp': 1.0})
    owners = {'10.0.0.1@tcp': 'oss1', '10.0.0.2@tcp': 'oss2', '10.0.0.3@tcp': 'client1'}
    item = envelope(RUN, 'client1', 'lnet', records, 1795342501, environment={'nid_owners': owners})
    assert components(item) == [('NID', 'client1/10.0.0.3@tcp'), ('NID', 'oss1/10.0.0.1@tcp'),
                                ('NID', 'oss2/10.0.0.2@tcp'), ('host', 'client1')]
    # without the record, the NID alone
    del item['environment']['nid_owners']
    assert ('NID', '10.0.0.1@tcp') in components(item)


def test_the_variables_hash_ignores_where_and_how_long_but_not_what_is_measured():
    base = {'size_mib': 1024, 'thrhi': 64, 'engine': 'native'}
    one = identity.parameters_hash(dict(base, devices=['/dev/sdb'], timeout=3600, targets=['testfs-OST0000']))
    other = identity.parameters_hash(dict(base, devices=['/dev/sdc', '/dev/sdd'], timeout=60, targets=[]))
    assert one == other == identity.parameters_hash(dict(reversed(list(base.items()))))
    assert identity.parameters_hash(dict(base, size_mib=2048)) != one
    assert identity.parameters_hash(dict(base, engine='iokit')) != one
    # Hosts that disagree make one hash of their hashes, whatever order they come in.
    assert identity.combined_hash(['a', 'b', 'a']) == identity.combined_hash(['b', 'a']) != 'a'
    assert identity.combined_hash(['a', 'a']) == 'a'
    assert json.loads(identity.canonical_json({'b': 1, 'a': [1, 2]})) == {'a': [1, 2], 'b': 1}


def test_fill_levels_come_from_what_obdfilter_and_mds_read():
    obdfilter = {'environment': {'free_kib': {'testfs-OST0000': 250, 'testfs-OST0001': None},
                                 'total_kib': {'testfs-OST0000': 1000}}}
    assert identity.envelope_fill(obdfilter) == [identity.Fill('OST', 'testfs-OST0000', 250, 1000, None, None)]
    mds = {'environment': {'free_inodes': {'testfs-MDT0000': 10}, 'total_inodes': {'testfs-MDT0000': 40}}}
    assert identity.envelope_fill(mds) == [identity.Fill('MDT', 'testfs-MDT0000', None, None, 10, 40)]
    assert identity.used_percent(250, 1000) == 75.0
    assert identity.used_percent(250, None) is None and identity.used_percent(None, 1000) is None
    assert identity.envelope_fill({'environment': {}}) == []


def test_an_ost_survey_records_the_fill_of_every_ost_it_measured():
    # ost_survey's envelope: lfs df's Available and 1K-blocks per OST name, read before it wrote
    item = envelope(RUN, 'client1', 'ost', ost_survey({0: 1.0, 2: 1.0}), 1795342501,
                    environment={'fsname': 'testfs', 'free_kib': {'testfs-OST0000': 300, 'testfs-OST0002': 900},
                                 'total_kib': {'testfs-OST0000': 1200, 'testfs-OST0002': 1200}})
    fill = identity.envelope_fill(item)
    assert fill == [identity.Fill('OST', 'testfs-OST0000', 300, 1200, None, None),
                    identity.Fill('OST', 'testfs-OST0002', 900, 1200, None, None)]
    # the same ids as the samples: the history joins each OST's rates to its fill
    assert set((entry.component_kind, entry.component_id) for entry in fill) == set(
        component for component in components(item) if component[0] == 'OST')
    assert [identity.used_percent(entry.free_kib, entry.total_kib) for entry in fill] == [75.0, 25.0]


def test_the_file_system_is_the_results_own_else_the_prefix_of_its_targets():
    assert identity.envelope_fsnames({'environment': {'fsname': 'scratch'}}, ['testfs-OST0000']) == ['scratch']
    assert identity.envelope_fsnames({'parameters': {'fsname': 'home'}}) == ['home']
    assert identity.envelope_fsnames({}, ['testfs-OST0000', 'work-MDT0001', 'sdb', 'oss1']) == ['testfs', 'work']


def test_every_unit_a_survey_yields_has_a_direction():
    assert metric_direction(UNIT_MIB_S) == metric_direction(UNIT_OPS_S) == 'higher'
    with pytest.raises(ValueError, match='UNIT_DIRECTIONS'):
        metric_direction('ms')
    assert EXTRACTORS  # every measuring survey's samples are in MiB/s or ops/s (sample_extraction's units)


def test_tags_and_time_bounds():
    assert parse_tags(['quarter=2026Q3', 'reason = after upgrade']) == {'quarter': '2026Q3', 'reason': 'after upgrade'}
    assert parse_tags('quarter=2026Q3,site=a') == {'quarter': '2026Q3', 'site': 'a'}
    assert parse_tags({'quarter': 2026}) == {'quarter': '2026'}
    for bad in (['quarter'], {'': 'x'}, {'a=b': 'x'}, {'quarter': None}):
        with pytest.raises(ValueError, match='tag'):
            parse_tags(bad)
    import datetime  # pylint: disable=import-outside-toplevel
    assert time_text(datetime.datetime(2026, 1, 2, 3, 4, 5)) == '2026-01-02T03:04:05Z'
    assert time_text(datetime.date(2026, 1, 2)) == '2026-01-02T00:00:00Z'
    assert time_text(datetime.datetime(2026, 1, 2, 4, 4, 5, tzinfo=datetime.timezone(datetime.timedelta(hours=1)))) \
        == '2026-01-02T03:04:05Z'


def test_the_collection_version_is_the_installed_manifests_else_the_checkouts(tmp_path):
    (tmp_path / 'galaxy.yml').write_text('namespace: lustre\nversion: 1.4.0\n')
    assert identity.collection_version(str(tmp_path)) == '1.4.0'
    (tmp_path / 'MANIFEST.json').write_text(json.dumps({'collection_info': {'version': '1.5.0'}}))
    assert identity.collection_version(str(tmp_path)) == '1.5.0'
    assert identity.collection_version(str(tmp_path / 'nowhere')) is None
    assert identity.collection_version()  # this checkout's
