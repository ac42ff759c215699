# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The results store on the controller: paths, atomic writes, reading back, reruns, hostile contents, its directory."""

from __future__ import annotations

import json
import os
import stat

import pytest

from ansible_collections.lustre.iokit.plugins.module_utils.results import EnvelopeError
from ansible_collections.lustre.iokit.plugins.plugin_utils import results_store
from ansible_collections.lustre.iokit.tests.unit.plugins.module_utils.test_plan_estimate import envelope
from ansible_collections.lustre.iokit.tests.unit.plugins.module_utils.test_results import RECORD, T0, make_envelope, new_builder


# --------------------------------------------------------------------------
# Results store


def test_envelope_path(tmp_path):
    path = results_store.envelope_path(str(tmp_path), '20261122T101500Z-3f2a', 'oss1', 'obdfilter')
    assert path == os.path.join(str(tmp_path), '20261122T101500Z-3f2a', 'oss1', 'obdfilter.json')


@pytest.mark.parametrize('run_id, host, survey', [
    ('../x', 'oss1', 'sgpdd'), ('a/b', 'oss1', 'sgpdd'), ('', 'oss1', 'sgpdd'),
    ('r1', '../x', 'sgpdd'), ('r1', 'a/b', 'sgpdd'), ('r1', '', 'sgpdd'), ('r1', '..', 'sgpdd'),
    ('r1', 'oss1', '../sgpdd'), ('r1', 'oss1', 'unknown'),
])
def test_envelope_path_rejects_unsafe_components(tmp_path, run_id, host, survey):
    with pytest.raises(ValueError):
        results_store.envelope_path(str(tmp_path), run_id, host, survey)


def _dir_listing(directory):
    return sorted(os.listdir(str(directory)))


def test_write_json_atomic_creates_directories_and_mode(tmp_path):
    path = str(tmp_path / 'a' / 'b' / 'data.json')
    assert results_store.write_json_atomic(path, {'b': 1, 'a': [1.5, None]}) == path
    with open(path) as handle:
        assert json.load(handle) == {'b': 1, 'a': [1.5, None]}
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    assert _dir_listing(tmp_path / 'a' / 'b') == ['data.json']


def test_write_json_atomic_replaces_existing_file(tmp_path):
    path = str(tmp_path / 'data.json')
    results_store.write_json_atomic(path, {'version': 1})
    inode_before = os.stat(path).st_ino
    results_store.write_json_atomic(path, {'version': 2})
    with open(path) as handle:
        assert json.load(handle) == {'version': 2}
    # A rename installs a new inode; rewriting in place would keep the old one.
    assert os.stat(path).st_ino != inode_before
    assert _dir_listing(tmp_path) == ['data.json']


@pytest.mark.parametrize('bad_data', [{'x': object()}, {'x': float('nan')}, {'x': float('-inf')}])
def test_write_json_atomic_unserialisable_leaves_old_file(tmp_path, bad_data):
    path = str(tmp_path / 'data.json')
    results_store.write_json_atomic(path, {'version': 1})
    with pytest.raises((TypeError, ValueError)):
        results_store.write_json_atomic(path, bad_data)
    with open(path) as handle:
        assert json.load(handle) == {'version': 1}
    assert _dir_listing(tmp_path) == ['data.json']


@pytest.mark.parametrize('failing', ['fsync', 'replace'])
def test_write_json_atomic_failure_mid_write_removes_temp_file(tmp_path, monkeypatch, failing):
    path = str(tmp_path / 'data.json')
    results_store.write_json_atomic(path, {'version': 1})

    def fail(*args):
        raise OSError(28, 'No space left on device')

    monkeypatch.setattr(results_store.os, failing, fail)
    with pytest.raises(OSError):
        results_store.write_json_atomic(path, {'version': 2})
    monkeypatch.undo()
    with open(path) as handle:
        assert json.load(handle) == {'version': 1}
    assert _dir_listing(tmp_path) == ['data.json']


def test_write_envelope_and_read_back(tmp_path):
    envelope = make_envelope()
    path = results_store.write_envelope(str(tmp_path), envelope)
    assert path == results_store.envelope_path(str(tmp_path), envelope['run_id'], 'oss1', 'obdfilter')
    assert results_store.read_envelope(path) == envelope


def test_builder_round_trip_through_store(tmp_path):
    builder = new_builder()
    builder.add_record(RECORD)
    builder.add_error('lctl test_brw: Cannot allocate memory', point={'obj': 4, 'thr': 32})
    envelope = builder.finish(now=T0 + 12.345)
    path = results_store.write_envelope(str(tmp_path), envelope)
    assert results_store.read_envelope(path) == envelope
    assert results_store.list_envelopes(str(tmp_path), envelope['run_id']) == [(path, envelope)]


def test_write_envelope_refuses_invalid_and_writes_nothing(tmp_path):
    with pytest.raises(EnvelopeError) as excinfo:
        results_store.write_envelope(str(tmp_path), make_envelope(status='ok', records=[]))
    assert "status: 'ok' but records is empty" in excinfo.value.problems
    assert _dir_listing(tmp_path) == []


def _write_text(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as handle:
        handle.write(text)


@pytest.mark.parametrize('content, fragment', [
    ('{"schema": ', 'not valid JSON'),
    ('', 'not valid JSON'),
    ('[]', 'envelope: must be an object'),
    ('{"schema": "lustre.iokit/result/v1"}', 'missing keys'),
])
def test_read_envelope_names_the_file(tmp_path, content, fragment):
    path = str(tmp_path / 'r1' / 'oss1' / 'obdfilter.json')
    _write_text(path, content)
    with pytest.raises(EnvelopeError) as excinfo:
        results_store.read_envelope(path)
    assert str(excinfo.value).startswith(path + ': ')
    assert fragment in str(excinfo.value)
    assert excinfo.value.source == path


def test_read_envelope_missing_file(tmp_path):
    path = str(tmp_path / 'nothing.json')
    with pytest.raises(EnvelopeError) as excinfo:
        results_store.read_envelope(path)
    assert 'cannot read file' in str(excinfo.value)
    assert path in str(excinfo.value)


RUN = '20261122T101500Z-3f2a'


@pytest.mark.parametrize('stored, force, expected', [
    ('ok', False, True),
    ('ok', True, False),
    ('partial', False, False),
    ('failed', False, False),
    ('skipped', False, False),
    ('corrupt', False, False),
    ('invalid', False, False),
    ('misplaced', False, False),
    ('missing', False, False),
    ('missing', True, False),
])
def test_should_skip(tmp_path, stored, force, expected):
    results_dir = str(tmp_path)
    path = results_store.envelope_path(results_dir, RUN, 'oss1', 'obdfilter')
    error = [{'point': None, 'message': 'x'}]
    if stored == 'ok':
        results_store.write_envelope(results_dir, make_envelope(run_id=RUN))
    elif stored == 'partial':
        results_store.write_envelope(results_dir, make_envelope(run_id=RUN, status='partial', errors=error))
    elif stored == 'failed':
        results_store.write_envelope(results_dir, make_envelope(run_id=RUN, status='failed', records=[], errors=error))
    elif stored == 'skipped':
        results_store.write_envelope(results_dir, make_envelope(run_id=RUN, status='skipped', records=[]))
    elif stored == 'corrupt':
        _write_text(path, '{"status": "ok", ')
    elif stored == 'invalid':
        results_store.write_json_atomic(path, make_envelope(run_id=RUN, records=[]))
    elif stored == 'misplaced':
        # A valid ok envelope of another host copied into oss1's place.
        results_store.write_json_atomic(path, make_envelope(run_id=RUN, host='oss2'))
    assert results_store.should_skip(results_dir, RUN, 'oss1', 'obdfilter', force=force) is expected


def test_should_skip_other_survey_or_run_is_not_skipped(tmp_path):
    results_store.write_envelope(str(tmp_path), make_envelope(run_id=RUN))
    assert results_store.should_skip(str(tmp_path), RUN, 'oss1', 'obdfilter')
    assert not results_store.should_skip(str(tmp_path), RUN, 'oss1', 'sgpdd')
    assert not results_store.should_skip(str(tmp_path), RUN, 'oss2', 'obdfilter')
    assert not results_store.should_skip(str(tmp_path), 'another-run', 'oss1', 'obdfilter')


def test_should_skip_rejects_unsafe_run_id(tmp_path):
    with pytest.raises(ValueError):
        results_store.should_skip(str(tmp_path), '../x', 'oss1', 'obdfilter')


def test_list_envelopes_names_every_bad_file(tmp_path):
    results_dir = str(tmp_path)
    good = make_envelope(run_id=RUN)
    good_path = results_store.write_envelope(results_dir, good)
    partial = make_envelope(run_id=RUN, host='oss2', status='partial', errors=[{'point': None, 'message': 'timeout'}])
    partial_path = results_store.write_envelope(results_dir, partial)
    corrupt_path = os.path.join(results_dir, RUN, 'oss2', 'sgpdd.json')
    _write_text(corrupt_path, 'not json')
    misplaced_path = os.path.join(results_dir, RUN, 'oss3', 'obdfilter.json')
    results_store.write_json_atomic(misplaced_path, make_envelope(run_id=RUN, host='oss1'))
    # Not envelopes: raw output, a report in the run directory, a leftover temp file.
    _write_text(os.path.join(results_dir, RUN, 'oss1', 'obdfilter.out'), 'ost  1 sz ...')
    _write_text(os.path.join(results_dir, RUN, 'report.md'), '# report')
    _write_text(os.path.join(results_dir, RUN, 'summary.json'), '{}')
    _write_text(os.path.join(results_dir, RUN, 'oss1', '.obdfilter.json.abc123.tmp'), '{')
    # Another run is not listed.
    results_store.write_envelope(results_dir, make_envelope(run_id='other-run'))

    listing = results_store.list_envelopes(results_dir, RUN)

    assert [path for path, dummy in listing] == [good_path, partial_path, corrupt_path, misplaced_path]
    assert listing[0][1] == good
    assert listing[1][1] == partial
    corrupt_error = listing[2][1]
    assert isinstance(corrupt_error, EnvelopeError) and corrupt_path in str(corrupt_error)
    misplaced_error = listing[3][1]
    assert isinstance(misplaced_error, EnvelopeError)
    assert misplaced_error.problems == ["host: 'oss1' but the file is stored as 'oss3'"]


def test_list_envelopes_of_unknown_run_is_empty(tmp_path):
    assert results_store.list_envelopes(str(tmp_path), RUN) == []


def test_list_envelopes_rejects_unsafe_run_id(tmp_path):
    with pytest.raises(ValueError):
        results_store.list_envelopes(str(tmp_path), '..')


# --------------------------------------------------------------------------
# Hostile store contents: FIFOs and symbolic links planted in the results directory


def test_read_envelope_refuses_a_fifo_at_once(tmp_path):
    path = str(tmp_path / 'r1' / 'oss1' / 'obdfilter.json')
    os.makedirs(os.path.dirname(path))
    os.mkfifo(path)
    # Opening a FIFO without a writer would block for ever; the store opens it without blocking and refuses it.
    with pytest.raises(EnvelopeError) as excinfo:
        results_store.read_envelope(path)
    assert 'a FIFO, not a regular file: skipped' in str(excinfo.value) and path in str(excinfo.value)


def test_list_envelopes_reports_a_fifo_and_keeps_the_others(tmp_path):
    results_dir = str(tmp_path)
    good_path = results_store.write_envelope(results_dir, make_envelope(run_id=RUN))
    fifo = os.path.join(results_dir, RUN, 'oss2', 'obdfilter.json')
    os.makedirs(os.path.dirname(fifo))
    os.mkfifo(fifo)
    listing = results_store.list_envelopes(results_dir, RUN)
    assert [path for path, dummy in listing] == [good_path, fifo]
    assert isinstance(listing[1][1], EnvelopeError) and 'a FIFO' in str(listing[1][1])


def _host_link_out(tmp_path):
    """A results directory whose run holds oss2 as a symbolic link to a directory outside it."""
    results_dir = str(tmp_path / 'results')
    outside = str(tmp_path / 'outside')
    os.makedirs(os.path.join(results_dir, RUN))
    os.makedirs(outside)
    os.symlink(outside, os.path.join(results_dir, RUN, 'oss2'))
    return results_dir, outside


def test_write_envelope_does_not_follow_a_host_link_out_of_the_store(tmp_path):
    results_dir, outside = _host_link_out(tmp_path)
    with pytest.raises(ValueError) as excinfo:
        results_store.write_envelope(results_dir, make_envelope(run_id=RUN, host='oss2'))
    assert 'leads out of the results directory' in str(excinfo.value)
    assert os.listdir(outside) == []


def test_the_preflight_refuses_a_host_or_run_link_out_of_the_store(tmp_path):
    results_dir, outside = _host_link_out(tmp_path)
    with pytest.raises(ValueError) as excinfo:
        results_store.check_results_dir(results_dir, run_id=RUN)
    assert str(excinfo.value).startswith('iokit_results_dir/%s: %s is a symbolic link leading out'
                                         % (RUN, os.path.join(results_dir, RUN, 'oss2')))
    os.unlink(os.path.join(results_dir, RUN, 'oss2'))
    os.rmdir(os.path.join(results_dir, RUN))
    os.symlink(outside, os.path.join(results_dir, RUN))
    with pytest.raises(ValueError) as excinfo:
        results_store.check_results_dir(results_dir, run_id=RUN, create=False)
    assert 'is a symbolic link leading out' in str(excinfo.value)
    assert os.listdir(outside) == []


def test_list_envelopes_does_not_read_through_a_host_link_out_of_the_store(tmp_path):
    results_dir, outside = _host_link_out(tmp_path)
    results_store.write_json_atomic(os.path.join(outside, 'obdfilter.json'), make_envelope(run_id=RUN, host='oss2'))
    listing = results_store.list_envelopes(results_dir, RUN)
    assert len(listing) == 1 and isinstance(listing[0][1], EnvelopeError)
    assert 'leads out of the results directory' in str(listing[0][1])


def test_a_link_inside_the_store_and_a_linked_results_dir_are_followed(tmp_path):
    real = str(tmp_path / 'real')
    os.makedirs(os.path.join(real, 'moved', 'oss1'))
    os.makedirs(os.path.join(real, RUN))
    os.symlink(os.path.join(real, 'moved', 'oss1'), os.path.join(real, RUN, 'oss1'))
    linked = str(tmp_path / 'linked')
    os.symlink(real, linked)
    path = results_store.write_envelope(linked, make_envelope(run_id=RUN))
    assert results_store.list_envelopes(linked, RUN) == [(path, results_store.read_envelope(path))]


# --------------------------------------------------------------------------
# The results directory, fixed on the controller before any node is touched


@pytest.mark.parametrize('value, cwd, expected', [
    ('./iokit-results', '/home/admin', '/home/admin/iokit-results'),
    ('iokit-results', '/home/admin/', '/home/admin/iokit-results'),
    ('../common/results', '/home/admin/work', '/home/admin/common/results'),
    ('/srv/iokit/', '/home/admin', '/srv/iokit'),
])
def test_resolve_results_dir_is_absolute_from_the_working_directory(value, cwd, expected):
    assert results_store.resolve_results_dir(value, cwd=cwd) == expected


def test_resolve_results_dir_defaults_to_the_process_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(str(tmp_path))
    assert results_store.resolve_results_dir('r') == os.path.join(str(tmp_path), 'r')
    monkeypatch.setenv('HOME', '/home/admin')
    assert results_store.resolve_results_dir('~/r') == '/home/admin/r'


@pytest.mark.parametrize('value, fragment', [
    ('', 'iokit_results_dir: must not be empty'),
    ('  ', 'iokit_results_dir: must not be empty'),
    (None, 'iokit_results_dir: must be a directory path, got null'),
    (5, 'iokit_results_dir: must be a directory path, got a number'),
])
def test_resolve_results_dir_refuses_empty_and_non_strings(value, fragment):
    with pytest.raises(ValueError) as excinfo:
        results_store.resolve_results_dir(value, cwd='/tmp')
    assert str(excinfo.value).startswith(fragment)


def test_check_results_dir_creates_the_directory_and_leaves_no_probe(tmp_path):
    path = str(tmp_path / 'a' / 'results')
    assert results_store.check_results_dir(path, run_id=RUN) == path
    assert os.listdir(path) == []


def test_check_results_dir_probes_an_existing_run_directory(tmp_path):
    path = str(tmp_path / 'results')
    os.makedirs(os.path.join(path, RUN))
    results_store.check_results_dir(path, run_id=RUN)
    assert os.listdir(os.path.join(path, RUN)) == []


@pytest.mark.parametrize('where', ['results', 'parent', 'run'])
def test_check_results_dir_refuses_a_file(tmp_path, where):
    path = str(tmp_path / 'parent' / 'results')
    blocker = {'results': path, 'parent': str(tmp_path / 'parent'), 'run': os.path.join(path, RUN)}[where]
    os.makedirs(os.path.dirname(blocker), exist_ok=True)
    _write_text(blocker, 'a file')
    for create in (True, False):
        with pytest.raises(ValueError) as excinfo:
            results_store.check_results_dir(path, run_id=RUN, create=create)
        assert str(excinfo.value).startswith('iokit_results_dir')
        assert 'not a directory' in str(excinfo.value) or 'cannot create' in str(excinfo.value)


def test_check_results_dir_refuses_a_directory_it_cannot_write(tmp_path, monkeypatch):
    path = str(tmp_path / 'results')
    os.makedirs(path)

    def read_only(*args, **kwargs):
        raise OSError(30, 'Read-only file system')

    monkeypatch.setattr(results_store.tempfile, 'mkstemp', read_only)
    with pytest.raises(ValueError) as excinfo:
        results_store.check_results_dir(path, run_id=RUN)
    assert str(excinfo.value) == 'iokit_results_dir: cannot write in %s (Read-only file system)' % path


def test_check_results_dir_in_check_mode_creates_nothing(tmp_path, monkeypatch):
    path = str(tmp_path / 'new' / 'results')
    assert results_store.check_results_dir(path, run_id=RUN, create=False) == path
    assert not os.path.exists(str(tmp_path / 'new'))
    monkeypatch.setattr(results_store.os, 'access', lambda *args: False)
    with pytest.raises(ValueError, match='cannot be written'):
        results_store.check_results_dir(path, run_id=RUN, create=False)


# --------------------------------------------------------------------------
# The rate a host's last stored run of a survey measured (for plan estimates)


def store(results_dir, made, mtime):
    path = results_store.envelope_path(results_dir, made['run_id'], made['host'], made['survey'])
    os.makedirs(os.path.dirname(path))
    results_store.write_json_atomic(path, made)
    os.utime(path, (mtime, mtime))


def test_the_store_gives_the_hosts_newest_usable_run_of_the_survey(tmp_path):
    directory = str(tmp_path)
    store(directory, envelope('old', duration_s=40.0), 1000)
    store(directory, envelope('newer', duration_s=10.0), 2000)
    store(directory, dict(envelope('newest-failed', status='partial')), 3000)
    store(directory, envelope('planned-now', duration_s=1.0), 4000)
    measured = results_store.stored_rate(directory, 'oss1', 'obdfilter', exclude_run_id='planned-now')
    assert (measured['run_id'], measured['rate']) == ('newer', 20.0)
    assert results_store.stored_rate(directory, 'oss2', 'obdfilter') is None
    assert results_store.stored_rate(directory, 'oss1', 'mds') is None
    assert results_store.stored_rate(str(tmp_path / 'none'), 'oss1', 'obdfilter') is None


def test_an_unreadable_envelope_is_passed_over(tmp_path):
    directory = str(tmp_path)
    store(directory, envelope('good'), 1000)
    path = results_store.envelope_path(directory, 'broken', 'oss1', 'obdfilter')
    os.makedirs(os.path.dirname(path))
    with open(path, 'w') as stream:
        stream.write('{not json')
    assert results_store.stored_rate(directory, 'oss1', 'obdfilter')['run_id'] == 'good'
