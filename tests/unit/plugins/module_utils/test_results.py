# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The result envelope: identifiers, status rules, builder, validation, the run id as a playbook variable."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import datetime

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils import results
from ansible_collections.lustre.iokit.plugins.module_utils.results import EnvelopeBuilder, EnvelopeError

# 2026-11-22T10:15:01Z
T0 = 1795342501.0
RECORD = {'ost': 1, 'size_kib': 1048576, 'rsz_kib': 1024, 'obj': 1, 'thr': 1,
          'tests': {'write': {'mib_s': 613.54, 'min_mib_s': 64.0, 'max_mib_s': 82.0, 'status': 'ok'}}}


def make_envelope(**changes):
    """A valid ``ok`` envelope, with ``changes`` applied on top."""
    envelope = {
        'schema': results.SCHEMA, 'run_id': '20261122T101500Z-3f2a', 'host': 'oss1',
        'survey': 'obdfilter', 'engine': 'native', 'status': 'ok',
        'parameters': {'size_mib': 1024, 'nobjlo': 1, 'nobjhi': 16, 'thrlo': 1, 'thrhi': 64},
        'started': '2026-11-22T10:15:01Z', 'finished': '2026-11-22T10:31:44Z', 'duration_s': 1003.2,
        'records': [copy.deepcopy(RECORD)], 'errors': [],
        'environment': {'lustre_version': '2.15.5', 'kernel': '4.18.0', 'sg3_utils': '1.46'},
        'raw_output': '/tmp/lustre-iokit/20261122T101500Z-3f2a/obdfilter.out',
    }
    envelope.update(changes)
    return envelope


def test_t0_is_the_documented_example_time():
    assert results.utc_timestamp(T0) == '2026-11-22T10:15:01Z'


# --------------------------------------------------------------------------
# Constants


def test_surveys_are_exactly_the_documented_ones():
    assert results.SURVEYS == ('sgpdd', 'obdfilter', 'ost', 'mds', 'lnet', 'mdtest', 'ior', 'stats_collect')


def test_statuses_and_engines():
    assert set(results.STATUSES) == {'ok', 'partial', 'failed', 'skipped'}
    assert set(results.ENGINES) == {'native', 'iokit'}


# --------------------------------------------------------------------------
# Time stamps and run ids


@pytest.mark.parametrize('when, expected', [
    (T0, '2026-11-22T10:15:01Z'),
    (T0 + 0.999, '2026-11-22T10:15:01Z'),
    (0, '1970-01-01T00:00:00Z'),
    (datetime.datetime(2026, 11, 22, 10, 15, 1), '2026-11-22T10:15:01Z'),
    (datetime.datetime(2026, 11, 22, 11, 15, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=1))),
     '2026-11-22T10:15:01Z'),
])
def test_utc_timestamp(when, expected):
    assert results.utc_timestamp(when) == expected


def test_utc_timestamp_defaults_to_now():
    before = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    stamp = results.parse_timestamp(results.utc_timestamp())
    after = datetime.datetime.now(datetime.timezone.utc)
    assert before <= stamp <= after


@pytest.mark.parametrize('bad', ['2026', True, '12:00'])
def test_utc_timestamp_rejects_other_types(bad):
    with pytest.raises(TypeError):
        results.utc_timestamp(bad)


@pytest.mark.parametrize('text, expected', [
    ('2026-11-22T10:15:01Z', datetime.datetime(2026, 11, 22, 10, 15, 1, tzinfo=datetime.timezone.utc)),
    ('2026-11-22T10:15:01.25Z', datetime.datetime(2026, 11, 22, 10, 15, 1, 250000, tzinfo=datetime.timezone.utc)),
    ('2026-11-22T10:15:01.123456789Z', datetime.datetime(2026, 11, 22, 10, 15, 1, 123456, tzinfo=datetime.timezone.utc)),
])
def test_parse_timestamp(text, expected):
    assert results.parse_timestamp(text) == expected


@pytest.mark.parametrize('text', [
    '2026-11-22T10:15:01', '2026-11-22T10:15:01+00:00', '2026-11-22 10:15:01Z', '2026-13-22T10:15:01Z',
    '2026-11-22T10:15:01Z\n', '', None, 1795342501,
])
def test_parse_timestamp_rejects(text):
    with pytest.raises(ValueError) as excinfo:
        results.parse_timestamp(text)
    assert repr(text) in str(excinfo.value)


def test_new_run_id_format():
    assert results.new_run_id(now=T0, suffix='3f2a') == '20261122T101501Z-3f2a'
    assert results.new_run_id(now=datetime.datetime(2026, 11, 22, 10, 15, 0), suffix='3f2a') == '20261122T101500Z-3f2a'


def test_new_run_id_random_suffix_is_valid_and_varies():
    run_ids = {results.new_run_id(now=T0) for dummy in range(50)}
    assert len(run_ids) > 1
    for run_id in run_ids:
        assert results.validate_run_id(run_id) == run_id
        assert run_id.startswith('20261122T101501Z-')
        assert len(run_id.split('-')[1]) == 4


@pytest.mark.parametrize('suffix', ['', 'ABC', 'a/b', 'x' * 17, 7])
def test_new_run_id_rejects_bad_suffix(suffix):
    with pytest.raises(ValueError):
        results.new_run_id(now=T0, suffix=suffix)


@pytest.mark.parametrize('run_id', ['20261122T101500Z-3f2a', 'nightly-2026.11.22', 'A', 'acceptance_run_7', 'x' * 64])
def test_valid_run_ids(run_id):
    assert results.validate_run_id(run_id) == run_id


@pytest.mark.parametrize('run_id, fragment', [
    ('', 'must not be empty'),
    ('../x', '".."'),
    ('a..b', '".."'),
    ('..', '".."'),
    ('.', 'only letters'),
    ('a/b', 'only letters'),
    ('a\\b', 'only letters'),
    ('/abs', 'only letters'),
    ('.hidden', 'only letters'),
    ('-rf', 'only letters'),
    ('run id', 'only letters'),
    ('run\n', 'only letters'),
    ('caf\u00e9', 'only letters'),
    ('x' * 65, 'longer than 64'),
    (None, 'must be a string'),
    (42, 'must be a string'),
])
def test_invalid_run_ids(run_id, fragment):
    with pytest.raises(ValueError) as excinfo:
        results.validate_run_id(run_id)
    message = str(excinfo.value)
    assert message.startswith('run_id ')
    assert fragment in message


@pytest.mark.parametrize('host', ['oss1', 'oss1.cluster.example.com', 'node-01_a', 'x' * 253])
def test_valid_hosts(host):
    assert results.validate_host(host) == host


@pytest.mark.parametrize('host', ['', '../oss1', 'oss/1', '..', 'fe80::1', 'x' * 254])
def test_invalid_hosts(host):
    with pytest.raises(ValueError) as excinfo:
        results.validate_host(host)
    assert str(excinfo.value).startswith('host ')


def test_validate_path_component_names_what_and_limit():
    with pytest.raises(ValueError) as excinfo:
        results.validate_path_component('abcd', 'device label', max_length=3)
    assert str(excinfo.value).startswith('device label is longer than 3')


@pytest.mark.parametrize('survey', results.SURVEYS)
def test_every_survey_is_accepted(survey):
    assert results.validate_survey(survey) == survey


@pytest.mark.parametrize('survey', ['stats-collect', 'OBDFILTER', 'lst', '', None])
def test_unknown_surveys_are_rejected(survey):
    with pytest.raises(ValueError) as excinfo:
        results.validate_survey(survey)
    assert 'stats_collect' in str(excinfo.value)


@pytest.mark.parametrize('engine, valid', [('native', True), ('iokit', True), ('Native', False), ('', False)])
def test_engines(engine, valid):
    if valid:
        assert results.validate_engine(engine) == engine
    else:
        with pytest.raises(ValueError):
            results.validate_engine(engine)


# --------------------------------------------------------------------------
# Status


ERR = [{'point': None, 'message': 'boom'}]


@pytest.mark.parametrize('records, errors, aborted, check_mode, nothing_to_do, expected', [
    ([RECORD], [], False, False, False, 'ok'),
    ([RECORD, RECORD], [], False, False, False, 'ok'),
    ([RECORD], ERR, False, False, False, 'partial'),
    ([RECORD], [], True, False, False, 'partial'),
    ([RECORD], ERR, True, False, False, 'partial'),
    ([], ERR, False, False, False, 'failed'),
    ([], [], True, False, False, 'failed'),
    ([], [], False, False, False, 'failed'),
    ([], [], False, True, False, 'skipped'),
    ([], ERR, False, True, False, 'skipped'),
    ([], [], False, False, True, 'skipped'),
    ([], ERR, False, False, True, 'failed'),
    ([], [], True, False, True, 'failed'),
    ([RECORD], [], False, False, True, 'ok'),
])
def test_derive_status(records, errors, aborted, check_mode, nothing_to_do, expected):
    assert results.derive_status(records, errors, aborted=aborted, check_mode=check_mode,
                                 nothing_to_do=nothing_to_do) == expected


# --------------------------------------------------------------------------
# Builder


def new_builder(**kwargs):
    arguments = dict(run_id='20261122T101500Z-3f2a', host='oss1', survey='obdfilter', engine='native',
                     parameters={'size_mib': 1024}, now=T0)
    arguments.update(kwargs)
    return EnvelopeBuilder(**arguments)


def test_builder_ok_envelope_with_injected_times():
    builder = new_builder(raw_output='/tmp/lustre-iokit/r/obdfilter.out')
    builder.set_environment({'lustre_version': '2.15.5'}, kernel='4.18.0')
    builder.add_record(RECORD)
    builder.add_record(dict(RECORD, thr=2))
    envelope = builder.finish(now=T0 + 1003.2)
    assert envelope == {
        'schema': 'lustre.iokit/result/v1', 'run_id': '20261122T101500Z-3f2a', 'host': 'oss1',
        'survey': 'obdfilter', 'engine': 'native', 'status': 'ok', 'parameters': {'size_mib': 1024},
        'started': '2026-11-22T10:15:01Z', 'finished': '2026-11-22T10:31:44Z', 'duration_s': 1003.2,
        'records': [RECORD, dict(RECORD, thr=2)], 'errors': [],
        'environment': {'lustre_version': '2.15.5', 'kernel': '4.18.0'},
        'raw_output': '/tmp/lustre-iokit/r/obdfilter.out',
    }
    assert results.validate_envelope(envelope) == []


def test_builder_accepts_datetimes():
    start = datetime.datetime(2026, 11, 22, 10, 15, 1)
    builder = new_builder(now=start)
    builder.add_record(RECORD)
    envelope = builder.finish(now=start + datetime.timedelta(seconds=2.5))
    assert (envelope['started'], envelope['finished'], envelope['duration_s']) == \
        ('2026-11-22T10:15:01Z', '2026-11-22T10:15:03Z', 2.5)


def test_builder_real_clock_gives_non_negative_duration():
    builder = new_builder(now=None)
    builder.add_record(RECORD)
    envelope = builder.finish()
    assert envelope['duration_s'] >= 0 and envelope['started'] <= envelope['finished']
    assert results.validate_envelope(envelope) == []


def test_builder_refuses_finish_before_start():
    builder = new_builder()
    with pytest.raises(ValueError) as excinfo:
        builder.finish(now=T0 - 1)
    assert 'before start' in str(excinfo.value)


def test_builder_timeout_keeps_measured_records():
    builder = new_builder()
    builder.add_record(RECORD)
    builder.add_record(dict(RECORD, thr=2))
    builder.mark_aborted('timeout after 3600 s')
    envelope = builder.finish(now=T0 + 3600)
    assert envelope['status'] == 'partial'
    assert len(envelope['records']) == 2
    assert envelope['errors'] == [{'point': None, 'message': 'timeout after 3600 s'}]
    assert builder.aborted
    assert results.validate_envelope(envelope) == []


def test_builder_error_at_a_point():
    builder = new_builder()
    builder.add_record(RECORD)
    builder.add_error('lctl test_brw: Cannot allocate memory', point={'obj': 4, 'thr': 32})
    envelope = builder.finish(now=T0 + 10)
    assert envelope['status'] == 'partial'
    assert envelope['errors'] == [{'point': {'obj': 4, 'thr': 32}, 'message': 'lctl test_brw: Cannot allocate memory'}]


def test_builder_nothing_measured_is_failed_and_says_why():
    envelope = new_builder().finish(now=T0 + 1)
    assert envelope['status'] == 'failed'
    assert envelope['errors'] == [{'point': None, 'message': results.NO_RECORD_MESSAGE}]
    assert results.validate_envelope(envelope) == []


def test_builder_failed_with_error_does_not_add_generic_message():
    builder = new_builder()
    builder.add_error('lctl attach: File exists')
    envelope = builder.finish(now=T0 + 1)
    assert envelope['status'] == 'failed'
    assert [error['message'] for error in envelope['errors']] == ['lctl attach: File exists']


@pytest.mark.parametrize('check_mode, nothing_to_do', [(True, False), (False, True)])
def test_builder_skipped(check_mode, nothing_to_do):
    builder = new_builder(check_mode=check_mode)
    if nothing_to_do:
        builder.mark_nothing_to_do()
    envelope = builder.finish(now=T0)
    assert envelope['status'] == 'skipped'
    assert envelope['errors'] == []
    assert envelope['duration_s'] == 0
    assert results.validate_envelope(envelope) == []


def test_builder_finish_returns_independent_snapshots():
    builder = new_builder()
    builder.add_record(RECORD)
    first = builder.finish(now=T0 + 1)
    builder.add_error('late failure')
    second = builder.finish(now=T0 + 2)
    assert (first['status'], first['errors']) == ('ok', [])
    assert (second['status'], len(second['errors'])) == ('partial', 1)
    first['records'].append({'tampered': True})
    assert builder.records == [RECORD]


def test_builder_does_not_share_parameters_or_points_with_caller():
    parameters = {'size_mib': 1024}
    point = {'obj': 1}
    builder = new_builder(parameters=parameters)
    builder.add_error('x', point=point)
    parameters['size_mib'] = 1
    point['obj'] = 99
    envelope = builder.finish(now=T0)
    assert envelope['parameters'] == {'size_mib': 1024}
    assert envelope['errors'][0]['point'] == {'obj': 1}


def test_builder_withdraws_a_record_and_lists_the_point_with_its_attempt_and_reason():
    builder = new_builder(survey='mdtest')
    earlier = {'step': 'nodes', 'nodes': 2, 'tasks_per_node': 4, 'attempt': 1}
    twin = dict(earlier)
    builder.add_record(dict(earlier, step='tasks_per_node', nodes=1))
    builder.add_record(earlier)
    builder.add_record(twin)
    point = {'step': 'nodes', 'nodes': 2, 'tasks_per_node': 4}
    assert builder.withdraw_record(earlier, 'measured at 4 tasks per node', point=point) is True
    point['nodes'] = 99
    # the very record goes, not an equal one; a record that is not there is not listed
    assert builder.records == [dict(earlier, step='tasks_per_node', nodes=1), twin]
    assert builder.records[1] is twin
    assert builder.withdraw_record(earlier, 'again') is False
    assert builder.withdraw_record({'step': 'nodes', 'nodes': 4}, 'never added') is False
    envelope = builder.finish(now=T0 + 1)
    assert envelope['withdrawn_points'] == [
        {'point': {'step': 'nodes', 'nodes': 2, 'tasks_per_node': 4}, 'attempt': 1,
         'reason': 'measured at 4 tasks per node'}]
    assert envelope['status'] == 'ok' and len(envelope['records']) == 2
    assert 'withdrawn_points' in results.OPTIONAL_ENVELOPE_KEYS
    assert results.validate_envelope(envelope) == []
    with pytest.raises(ValueError):
        builder.withdraw_record(twin, ' ')


@pytest.mark.parametrize('field, value', [
    ('run_id', '../x'), ('host', 'a/b'), ('survey', 'stats-collect'), ('engine', 'script'), ('run_id', ''),
])
def test_builder_rejects_bad_identifiers(field, value):
    with pytest.raises(ValueError) as excinfo:
        new_builder(**{field: value})
    assert field in str(excinfo.value)


@pytest.mark.parametrize('method, args, exception', [
    ('add_record', (['not', 'a', 'dict'],), TypeError),
    ('add_error', ('',), ValueError),
    ('add_error', ('   ',), ValueError),
    ('add_error', (None,), ValueError),
    ('add_error', ('msg', [4, 32]), TypeError),
    ('mark_aborted', ('',), ValueError),
])
def test_builder_rejects_bad_items(method, args, exception):
    builder = new_builder()
    with pytest.raises(exception):
        getattr(builder, method)(*args)
    assert builder.records == [] and builder.errors == [] and not builder.aborted


# --------------------------------------------------------------------------
# Validation


def test_good_envelope_has_no_problems():
    envelope = make_envelope()
    assert results.validate_envelope(envelope) == []
    assert results.check_envelope(envelope) is envelope


@pytest.mark.parametrize('envelope', [
    make_envelope(status='partial', errors=[{'point': {'obj': 4, 'thr': 32}, 'message': 'lctl test_brw: Cannot allocate memory'}]),
    make_envelope(status='failed', records=[], errors=[{'point': None, 'message': 'lctl attach: File exists'}]),
    make_envelope(status='skipped', records=[]),
    make_envelope(status='skipped', records=[], errors=[{'point': None, 'message': 'preflight: no OSTs'}]),
    make_envelope(engine='iokit', raw_output=None, duration_s=0),
    make_envelope(started='2026-11-22T10:15:01.5Z', extra_field_from_the_future=1),
])
def test_other_valid_envelopes(envelope):
    assert results.validate_envelope(envelope) == []


@pytest.mark.parametrize('changes, expected_problem', [
    ({'schema': 'lustre.iokit/result/v2'}, "schema: must be 'lustre.iokit/result/v1'"),
    ({'run_id': '../etc'}, 'run_id must not contain ".."'),
    ({'host': 'a/b'}, 'host may contain only'),
    ({'survey': 'stats-collect'}, 'survey must be one of'),
    ({'engine': 'bash'}, 'engine must be one of'),
    ({'status': 'done'}, 'status: must be one of ok, partial, failed, skipped'),
    ({'parameters': []}, 'parameters: must be an object'),
    ({'environment': None}, 'environment: must be an object'),
    ({'records': {}}, 'records: must be a list of objects'),
    ({'records': [1, 2]}, 'records: must be a list of objects'),
    ({'errors': 'none'}, 'errors: must be a list'),
    ({'raw_output': 5}, 'raw_output: must be a string or null'),
    ({'started': '2026-11-22 10:15:01'}, 'started: not a UTC timestamp'),
    ({'finished': None}, 'finished: not a UTC timestamp'),
    ({'duration_s': -0.1}, 'duration_s: must be a non-negative number'),
    ({'duration_s': '1003.2'}, 'duration_s: must be a non-negative number'),
    ({'duration_s': True}, 'duration_s: must be a non-negative number'),
    ({'duration_s': float('inf')}, 'duration_s: must be a non-negative number'),
    ({'status': 'ok', 'records': []}, "status: 'ok' but records is empty"),
    ({'status': 'ok', 'errors': [{'point': None, 'message': 'x'}]}, "status: 'ok' but errors is not empty"),
    ({'status': 'partial'}, "status: 'partial' but errors is empty"),
    ({'status': 'partial', 'records': [], 'errors': [{'point': None, 'message': 'x'}]}, "status: 'partial' but records is empty"),
    ({'status': 'failed', 'errors': [{'point': None, 'message': 'x'}]}, "status: 'failed' but records has 1 record(s)"),
    ({'status': 'failed', 'records': []}, "status: 'failed' but errors is empty"),
    ({'status': 'skipped'}, "status: 'skipped' but records has 1 record(s)"),
    ({'status': 'failed', 'records': [], 'errors': [{'point': None}]}, 'errors[0].message: must be a non-empty string'),
    ({'status': 'failed', 'records': [], 'errors': [{'message': ''}]}, 'errors[0].message: must be a non-empty string'),
    ({'status': 'failed', 'records': [], 'errors': ['oops']}, 'errors[0]: must be an object'),
    ({'status': 'failed', 'records': [], 'errors': [{'point': [4, 32], 'message': 'x'}]}, 'errors[0].point: must be an object or null'),
    ({'records': [{'tests': {'write': {'mib_s': float('nan')}}}]}, 'envelope: not serialisable as strict JSON'),
    ({'environment': {'kernel': object()}}, 'envelope: not serialisable as strict JSON'),
])
def test_bad_envelope_problem_is_named(changes, expected_problem):
    problems = results.validate_envelope(make_envelope(**changes))
    assert any(problem.startswith(expected_problem) for problem in problems), problems


@pytest.mark.parametrize('key', results.ENVELOPE_KEYS)
def test_missing_key_is_named(key):
    envelope = make_envelope()
    del envelope[key]
    problems = results.validate_envelope(envelope)
    assert 'missing keys: %s' % key in problems


@pytest.mark.parametrize('value', [None, [], 'ok', 3])
def test_non_object_envelope(value):
    assert results.validate_envelope(value) == ['envelope: must be an object, got %s' % type(value).__name__]


def test_check_envelope_lists_all_problems():
    envelope = make_envelope(schema='v0', engine='bash', duration_s=-1)
    with pytest.raises(EnvelopeError) as excinfo:
        results.check_envelope(envelope, source='somewhere.json')
    error = excinfo.value
    assert len(error.problems) == 3
    assert error.source == 'somewhere.json'
    message = str(error)
    assert message.startswith('somewhere.json: invalid result envelope: ')
    for fragment in ('schema', 'engine', 'duration_s'):
        assert fragment in message


def test_envelope_error_is_a_value_error():
    assert issubclass(EnvelopeError, ValueError)


# --------------------------------------------------------------------------
# The run's results directory and run id, fixed on the controller before any node is touched


@pytest.mark.parametrize('value, fragment', [
    (123, 'iokit_run_id: must be a string such as 20261122T101500Z-3f2a, got a number (123); quote it'),
    (1.5, 'iokit_run_id: must be a string such as 20261122T101500Z-3f2a, got a number (1.5); quote it'),
    (True, 'iokit_run_id: must be a string such as 20261122T101500Z-3f2a, got a boolean (True); quote it'),
    (None, 'iokit_run_id: is null'),
    (['a'], "iokit_run_id: must be a string such as 20261122T101500Z-3f2a, got a list (['a'])"),
    ('', 'iokit_run_id: must not be empty'),
    ('../x', 'iokit_run_id: must not contain ".."'),
    ('a/b', 'iokit_run_id: may contain only'),
])
def test_checked_run_id_names_the_variable_first(value, fragment):
    with pytest.raises(ValueError) as excinfo:
        results.checked_run_id(value)
    assert str(excinfo.value).startswith(fragment)


def test_checked_run_id_accepts_a_run_id_and_names_another_variable():
    assert results.checked_run_id('20261122T101500Z-3f2a') == '20261122T101500Z-3f2a'
    with pytest.raises(ValueError, match='^compare_run_id: '):
        results.checked_run_id(7, 'compare_run_id')
