# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The results store on the controller (docs/architecture.md section 6): ``<results_dir>/<run_id>/<host>/<survey>.json``.

Used on the controller only (actions, filters, the report)::

    if not should_skip(results_dir, run_id, host, survey, force=force_rerun):
        write_envelope(results_dir, envelope)

Writes are atomic (a temporary file, then a rename) and the store never leaves its directory: a run or host
directory that is a symbolic link leading out of it, or an envelope that is not a regular file, is reported as
unusable instead of being written or read.  What an envelope holds and how it is checked is
``plugins/module_utils/results.py``.
"""

from __future__ import annotations

import glob
import json
import os
import stat
import tempfile

from ansible_collections.lustre.iokit.plugins.module_utils import plan_estimate
from ansible_collections.lustre.iokit.plugins.module_utils.results import (
    STATUS_OK,
    EnvelopeError,
    type_name,
    check_envelope,
    validate_host,
    validate_run_id,
    validate_survey,
)

# The store's default place, relative to the directory ansible-playbook was started from.
DEFAULT_RESULTS_DIR = './iokit-results'
# How many stored envelopes of a host's survey are read, newest first, to find one to measure from.
STORE_READ_LIMIT = 20


def resolve_results_dir(value, variable='iokit_results_dir', cwd=None):
    """The absolute path of the results directory ``value``; a relative one is taken from ``cwd`` (default: the process's).

    ``~`` is expanded.  ValueError naming ``variable`` when ``value`` is not a
    non-empty string (an empty one would scatter results in the current directory).
    """
    if not isinstance(value, str):
        raise ValueError('%s: must be a directory path, got %s (%r)' % (variable, type_name(value), value))
    if not value.strip():
        raise ValueError('%s: must not be empty; give the controller directory that keeps the results '
                         '(default %s, relative to the directory ansible-playbook is started from)'
                         % (variable, DEFAULT_RESULTS_DIR))
    path = os.path.expanduser(value)
    return os.path.normpath(os.path.join(cwd if cwd is not None else os.getcwd(), path))


def _probe_writable(directory):
    fd, probe = tempfile.mkstemp(dir=directory, prefix='.iokit-probe.', suffix='.tmp')
    os.close(fd)
    os.unlink(probe)


# What one host's result of one survey may take in the store (its envelope and its raw output): the free space the
# preflight asks of the results directory per host, so that a store does not meet a full file system.
STORE_ALLOWANCE_PER_HOST = 4 * 1024 * 1024


def check_free_space(path, hosts, variable='iokit_results_dir'):
    """Refuse (ValueError naming ``variable``) a results directory without room for ``hosts`` results."""
    needed = STORE_ALLOWANCE_PER_HOST * max(1, hosts)
    try:
        info = os.statvfs(path)
    except OSError as exc:
        raise ValueError('%s: cannot read the free space of %s (%s)' % (variable, path, exc.strerror or exc))
    free = info.f_bavail * info.f_frsize
    if free < needed:
        raise ValueError('%s: %s has %.1f MiB free, and this run stores up to %.0f MiB (%d host(s), %d MiB each): '
                         'make room or choose another directory'
                         % (variable, path, free / 1048576.0, needed / 1048576.0, max(1, hosts),
                            STORE_ALLOWANCE_PER_HOST // 1048576))
    return free


def check_results_dir(path, variable='iokit_results_dir', run_id=None, create=True):
    """Check that the results directory ``path`` (absolute) can take this run's results; raise ValueError naming ``variable``.

    With ``create`` the directory is made if missing and a probe file is
    created and removed in it, and in ``<path>/<run_id>`` when that exists.
    Without (check mode) nothing is created: the nearest existing directory
    must be writable.  A file, a read-only directory or file system, or a
    run directory that is not a directory fail here, before any node is touched.
    """
    targets = [(path, variable)]
    if run_id is not None:
        targets.append((os.path.join(path, validate_run_id(run_id)), '%s/%s' % (variable, run_id)))
    for directory, name in targets:
        if os.path.lexists(directory) and not os.path.isdir(directory):
            raise ValueError('%s: %s is not a directory' % (name, directory))
    if run_id is not None:
        _refuse_links_out(path, targets[1][0], targets[1][1])
    if not create:
        existing = path
        while not os.path.lexists(existing):
            existing = os.path.dirname(existing)
        if not os.path.isdir(existing):
            raise ValueError('%s: %s cannot be created, %s is not a directory' % (variable, path, existing))
        if not os.access(existing, os.W_OK | os.X_OK):
            raise ValueError('%s: %s cannot be written (%s is not writable)' % (variable, path, existing))
        return path
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise ValueError('%s: cannot create %s (%s)' % (variable, path, exc.strerror or exc))
    for directory, name in targets:
        if os.path.isdir(directory):
            try:
                _probe_writable(directory)
            except OSError as exc:
                raise ValueError('%s: cannot write in %s (%s)' % (name, directory, exc.strerror or exc))
    return path


def _refuse_links_out(results_dir, run_dir, name):
    """Refuse, before any node is touched, a run directory or a host directory in it that is a symbolic link
    leading out of the results directory: the store would refuse it only once the surveys had run (store_directory).
    """
    candidates = [run_dir]
    if os.path.isdir(run_dir) and _is_inside(run_dir, results_dir):
        try:
            candidates.extend(os.path.join(run_dir, entry) for entry in sorted(os.listdir(run_dir)))
        except OSError as exc:
            raise ValueError('%s: cannot list %s (%s)' % (name, run_dir, exc.strerror or exc))
    for candidate in candidates:
        if os.path.islink(candidate) and not _is_inside(candidate, results_dir):
            raise ValueError('%s: %s is a symbolic link leading out of the results directory %s (to %s): the store '
                             'does not follow it; remove the link'
                             % (name, candidate, results_dir, os.path.realpath(candidate)))


def envelope_path(results_dir, run_id, host, survey):
    """``<results_dir>/<run_id>/<host>/<survey>.json``, after checking every component is safe."""
    return os.path.join(results_dir, validate_run_id(run_id), validate_host(host), validate_survey(survey) + '.json')


def write_json_atomic(path, data):
    """Write ``data`` as JSON to ``path`` atomically: readers see the old file or the new one, never half of either.

    The JSON is produced before any file is touched (so an unserialisable or
    NaN value changes nothing), written to a temp file in the same directory,
    fsynced and renamed over ``path``.  Missing directories are created; the
    file is mode 0644.  On any failure the temp file is removed.
    """
    text = json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + '\n'
    return write_bytes_atomic(path, text.encode('utf-8'))


def write_bytes_atomic(path, data):
    """Write the bytes ``data`` to ``path`` atomically (temp file in the same directory, fsync, rename, mode 0644).

    Missing directories are created; on any failure the temp file is removed
    and ``path`` keeps its old content.
    """
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, temp_path = tempfile.mkstemp(dir=directory, prefix='.%s.' % os.path.basename(path), suffix='.tmp')
    try:
        with os.fdopen(fd, 'wb') as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            os.fchmod(handle.fileno(), 0o644)
        os.replace(temp_path, path)
    except BaseException:
        try:
            os.unlink(temp_path)
        except OSError:
            pass
        raise
    _fsync_directory(directory)
    return path


def _fsync_directory(directory):
    # Makes the rename itself durable; not every platform or file system allows it.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _is_inside(directory, root):
    """Whether ``directory`` (resolved, symbolic links followed) is ``root`` or below it."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(directory)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def store_directory(results_dir, run_id, host):
    """``<results_dir>/<run_id>/<host>``, created if missing, after checking it stays inside ``results_dir``.

    A run or host directory that is a symbolic link leading out of the
    results directory is refused (ValueError naming it): the store never
    writes where a link planted in it points.
    """
    directory = os.path.join(results_dir, validate_run_id(run_id), validate_host(host))
    os.makedirs(directory, exist_ok=True)
    if not _is_inside(directory, results_dir):
        raise ValueError('%s leads out of the results directory %s (to %s): the store does not follow a symbolic '
                         'link out of it; remove the link' % (directory, results_dir, os.path.realpath(directory)))
    return directory


def write_envelope(results_dir, envelope):
    """Validate ``envelope`` (EnvelopeError if invalid) and store it atomically; return its path.

    ValueError when its directory leads out of ``results_dir`` (see store_directory).
    """
    check_envelope(envelope)
    store_directory(results_dir, envelope['run_id'], envelope['host'])
    path = envelope_path(results_dir, envelope['run_id'], envelope['host'], envelope['survey'])
    return write_json_atomic(path, envelope)


def _file_kind(mode):
    for test, kind in ((stat.S_ISFIFO, 'a FIFO'), (stat.S_ISSOCK, 'a socket'), (stat.S_ISDIR, 'a directory'),
                       (stat.S_ISCHR, 'a character device'), (stat.S_ISBLK, 'a block device')):
        if test(mode):
            return kind
    return 'not a regular file'


def read_regular_file(path):
    """The bytes of the regular file at ``path``; OSError for anything else (a FIFO, a device, a directory).

    Opened without blocking, so that a FIFO planted in the store is refused at
    once instead of waiting for a writer that never comes.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, 'O_NONBLOCK', 0))
    with os.fdopen(fd, 'rb') as handle:
        mode = os.fstat(handle.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise OSError('%s, not a regular file: skipped' % _file_kind(mode))
        return handle.read()


def read_envelope(path):
    """Load and validate the envelope at ``path``.

    Raises EnvelopeError naming the file when it is not a regular file,
    cannot be read, is not JSON or is not a valid envelope.
    """
    try:
        envelope = json.loads(read_regular_file(path).decode('utf-8'))
    except (OSError, UnicodeDecodeError) as exc:
        raise EnvelopeError('cannot read file (%s)' % exc, path)
    except ValueError as exc:
        raise EnvelopeError('not valid JSON (%s)' % exc, path)
    return check_envelope(envelope, path)


def _location_problems(envelope, run_id, host, survey):
    """Problems where the envelope's identity disagrees with where it is stored."""
    return ['%s: %r but the file is stored as %r' % (key, envelope.get(key), expected)
            for key, expected in (('run_id', run_id), ('host', host), ('survey', survey))
            if envelope.get(key) != expected]


def should_skip(results_dir, run_id, host, survey, force=False):
    """True when a rerun of ``run_id`` may skip this host and survey.

    Only an existing, valid ``ok`` envelope stored in its own place counts, and
    never with ``force``.  Missing, corrupt, partial, failed or skipped results
    are run again (and their file overwritten).
    """
    if force:
        return False
    path = envelope_path(results_dir, run_id, host, survey)
    if not os.path.isfile(path):
        return False
    try:
        envelope = read_envelope(path)
    except EnvelopeError:
        return False
    return envelope['status'] == STATUS_OK and not _location_problems(envelope, run_id, host, survey)


def list_envelopes(results_dir, run_id):
    """Every stored envelope of ``run_id``: a sorted list of ``(path, envelope or EnvelopeError)``.

    Reads ``<results_dir>/<run_id>/<host>/*.json``; a file that is unreadable,
    invalid, or whose run_id/host/survey disagree with its location comes back
    with its EnvelopeError, so that it is reported, never silently dropped.
    Temp files of an interrupted write (``.*.tmp``), raw outputs and the
    reports beside the host directories are not envelopes and are ignored.
    A ``*.json`` that is not a regular file (a FIFO) and a host directory
    leading out of ``results_dir`` come back as errors, never read.
    A run with no directory yet has no envelopes.
    """
    run_dir = os.path.join(results_dir, validate_run_id(run_id))
    if not os.path.isdir(run_dir):
        return []
    found = []
    for host in sorted(os.listdir(run_dir)):
        host_dir = os.path.join(run_dir, host)
        if not os.path.isdir(host_dir):
            continue
        if not _is_inside(host_dir, results_dir):
            found.append((host_dir, EnvelopeError('leads out of the results directory (to %s): not read'
                                                  % os.path.realpath(host_dir), host_dir)))
            continue
        for name in sorted(os.listdir(host_dir)):
            if name.startswith('.') or not name.endswith('.json'):
                continue
            path = os.path.join(host_dir, name)
            try:
                envelope = read_envelope(path)
                problems = _location_problems(envelope, run_id, host, name[:-len('.json')])
                if problems:
                    raise EnvelopeError(problems, path)
            except EnvelopeError as exc:
                found.append((path, exc))
            else:
                found.append((path, envelope))
    return found


def stored_rate(results_dir, host, survey, exclude_run_id=None, limit=STORE_READ_LIMIT):
    """The rate the newest usable earlier run of ``survey`` on ``host`` measured (``plan_estimate.measured_rate``), or None.

    Reads ``<results_dir>/*/<host>/<survey>.json`` newest first (by file time), at most ``limit`` of them, leaving
    out ``exclude_run_id`` (the run being planned); an unreadable envelope is passed over.
    """
    if not results_dir or not os.path.isdir(results_dir):
        return None
    try:
        validate_host(host)
        validate_survey(survey)
    except ValueError:
        return None
    paths = glob.glob(os.path.join(glob.escape(results_dir), '*', glob.escape(host), survey + '.json'))
    candidates = []
    for path in paths:
        run_id = os.path.basename(os.path.dirname(os.path.dirname(path)))
        if run_id == exclude_run_id:
            continue
        try:
            candidates.append((os.path.getmtime(path), path))
        except OSError:
            continue
    for unused_mtime, path in sorted(candidates, reverse=True)[:limit]:
        try:
            envelope = read_envelope(path)
        except EnvelopeError:
            continue
        measured = plan_estimate.measured_rate(survey, envelope)
        if measured is not None:
            return measured
    return None
