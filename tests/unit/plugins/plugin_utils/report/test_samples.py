# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Samples from envelopes built from the parsers' real fixtures."""

from __future__ import annotations

import glob
import os

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import survey_catalog
from ansible_collections.lustre.iokit.plugins.module_utils.sample_extraction import make_point, point_label
from ansible_collections.lustre.iokit.plugins.plugin_utils.report.samples import (
    EXTRACTORS, Sample, as_samples, envelope_samples, sample_from_dict)

from ansible_collections.lustre.iokit.tests.unit.plugins.plugin_utils.report.helpers import FIXTURES, RUN_ID, envelope, parsed

SURVEY_OF_FORMAT = {'sgpdd_survey': ('sgpdd', 'mib_s'), 'obdfilter_survey': ('obdfilter', 'mib_s'),
                    'mds_survey': ('mds', 'ops_s')}


def _fixture_names(output_format):
    return sorted(os.path.basename(path)[:-4] for path in glob.glob(os.path.join(FIXTURES, output_format, '*.txt')))


@pytest.mark.parametrize('output_format', sorted(SURVEY_OF_FORMAT))
def test_every_usable_value_of_every_fixture_becomes_one_sample(output_format):
    survey, unit_field = SURVEY_OF_FORMAT[output_format]
    for name in _fixture_names(output_format):
        records = parsed(output_format, name)
        expected = sorted(
            (test, result[unit_field]) for record in records if not record.get('skipped') and not record.get('enomem')
            for test, result in record['tests'].items()
            if isinstance(result.get(unit_field), (int, float)) and result.get('status', 'ok') in ('ok', 'short'))
        samples = envelope_samples(envelope('oss1', survey, records or [{}]))[0]
        assert sorted((s.test, s.value) for s in samples) == expected, name
        assert all(s.metric == '%s_%s_%s' % (survey, s.test, unit_field) for s in samples)
        assert all(s.unit == ('MiB/s' if unit_field == 'mib_s' else 'ops/s') for s in samples)
        assert all(s.run_id == RUN_ID and s.host == 'oss1' for s in samples)


def test_unusable_points_are_problems_not_samples():
    records = parsed('sgpdd_survey', 'constructed_current_stdout')
    samples, problems = envelope_samples(envelope('oss1', 'sgpdd', records))
    assert any('ENOMEM' in problem and 'crg 256 thr 4096' in problem for problem in problems)
    assert all(sample.point_dict()['thr'] != 4096 for sample in samples)
    # One device named in the record: the values are that LUN's.
    assert {sample.target for sample in samples} == {'sdb'}


def test_error_and_failed_tests_are_reported_with_their_point():
    samples, problems = envelope_samples(envelope('oss1', 'obdfilter', parsed('obdfilter_survey', 'constructed_current_error_short')))
    assert any('error' in problem for problem in problems)
    assert all(sample.status in ('ok', 'short') for sample in samples)


def test_ost_survey_gives_one_subject_per_ost_named_like_lustre():
    result = parsed('ost_survey', 'manual_current')
    samples = envelope_samples(envelope('client1', 'ost', [result], parameters={'fsname': 'testfs'}))[0]
    assert sorted({s.target for s in samples}) == ['testfs-OST0000', 'testfs-OST0001', 'testfs-OST0002', 'testfs-OST0003']
    write = {s.target: s.value for s in samples if s.metric == 'ost_write_mib_s'}
    assert write['testfs-OST0003'] == 17.706


def test_ost_survey_names_the_osts_by_the_file_system_the_module_recorded():
    # The ost_survey module adds the fsname to its record; its parameters are the mount point and sizes.
    result = dict(parsed('ost_survey', 'manual_current'), fsname='scratch')
    samples = envelope_samples(envelope('client1', 'ost', [result], parameters={'mount_point': '/mnt/scratch'}))[0]
    assert sorted({s.target for s in samples}) == ['scratch-OST0000', 'scratch-OST0001', 'scratch-OST0002',
                                                   'scratch-OST0003']


def test_inactive_osts_are_problems():
    result = parsed('ost_survey', 'constructed_inactive_ost')
    samples, problems = envelope_samples(envelope('client1', 'ost', [result]))
    inactive = [row['ost'] for row in result['osts'] if row.get('active') is False]
    assert inactive and all(any('OST%04x inactive' % index in p for p in problems) for index in inactive)
    assert not {'OST%04x' % index for index in inactive} & {s.target for s in samples}


def test_repeated_points_are_numbered_as_iterations():
    records = parsed('obdfilter_survey', 'manual_example_output') * 3
    samples = envelope_samples(envelope('oss1', 'obdfilter', records))[0]
    writes = [s for s in samples if s.test == 'write']
    assert [s.iteration for s in writes] == [1, 2, 3]


def test_explicit_iteration_field_wins():
    records = parsed('obdfilter_survey', 'manual_example_output')
    records[0]['iteration'] = 7
    samples = envelope_samples(envelope('oss1', 'obdfilter', records))[0]
    assert {s.iteration for s in samples} == {7}


def test_surveys_without_an_extractor_give_no_sample():
    assert envelope_samples(envelope('oss1', 'stats_collect', [{'histograms': {}}])) == ([], [])


@pytest.mark.parametrize('survey', survey_catalog.MEASURING)
def test_every_measuring_survey_of_the_catalogue_has_an_extractor(survey):
    assert survey in EXTRACTORS, (
        'the %s survey has no samples in the report: write record_samples(record, ctx) in '
        'plugins/module_utils/engines/%s.py, yielding the samples of one of its records (see engines/obdfilter.py '
        'and module_utils/sample_extraction.py)' % (survey, survey))


def test_point_label_shows_the_swept_parameters_only():
    point = make_point({'case': 'disk', 'ost': 8, 'size_kib': 1, 'rsz_kib': 1024, 'obj': 8, 'thr': 16, 'unknown': 3})
    assert point_label(point) == 'rsz 1024K obj 8 thr 16'
    assert point_label(make_point({})) == 'single point'
    assert make_point({'thr': 1, 'obj': 2}) is make_point({'obj': 2, 'thr': 1})


def test_sample_dict_round_trip_and_errors():
    sample = Sample(RUN_ID, 'mds', 'create', 'mds_create_ops_s', 5.0, 'ops/s', 'mds1', None, make_point({'thr': 4}), 1, 'ok')
    assert sample_from_dict(sample.to_dict()) == sample
    assert as_samples([sample.to_dict(), sample]) == [sample, sample]
    with pytest.raises(ValueError, match='lacks value'):
        sample_from_dict({'survey': 'mds', 'metric': 'x', 'host': 'h'})
    with pytest.raises(ValueError, match='finite number'):
        sample_from_dict(dict(sample.to_dict(), value=float('nan')))
    with pytest.raises(ValueError, match='mapping'):
        sample_from_dict('text')
