# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The result envelope (docs/architecture.md section 6): its schema, run ids, its status and its builder.

Every survey module returns one envelope per host and survey, and every
playbook stores it on the controller as
``<results_dir>/<run_id>/<host>/<survey>.json``::

    {"schema": "lustre.iokit/result/v1", "run_id": "20261122T101500Z-3f2a",
     "host": "oss1", "survey": "obdfilter", "engine": "native", "status": "ok",
     "parameters": {...}, "started": "2026-11-22T10:15:01Z",
     "finished": "2026-11-22T10:31:44Z", "duration_s": 1003.2,
     "records": [...], "errors": [{"point": {...} or null, "message": "..."}],
     "environment": {...}, "raw_output": "/path/on/the/node" or null}

Typical use in a module::

    builder = EnvelopeBuilder(run_id, host, 'obdfilter', 'native', parameters)
    builder.set_environment(lustre_version='2.15.5')
    for record in engine.run():          # records arrive one sweep point at a time
        builder.add_record(record)
    ...                                  # on a timeout: builder.mark_aborted('timeout after 3600 s')
    envelope = builder.finish()          # every record measured so far, status derived

The controller's results store, where envelopes are written and read, is
``plugins/plugin_utils/results_store.py``; it does not ship to the nodes.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import binascii
import datetime
import json
import math
import numbers
import os
import re
import time

from ansible_collections.lustre.iokit.plugins.module_utils import survey_catalog
from ansible_collections.lustre.iokit.plugins.module_utils.units import is_number

SCHEMA = 'lustre.iokit/result/v1'

STATUS_OK = 'ok'
STATUS_PARTIAL = 'partial'
STATUS_FAILED = 'failed'
STATUS_SKIPPED = 'skipped'
STATUSES = (STATUS_OK, STATUS_PARTIAL, STATUS_FAILED, STATUS_SKIPPED)

# Modules, roles and the store accept exactly the surveys of the catalogue.
SURVEYS = survey_catalog.ALL

ENGINES = ('native', 'iokit')

# Keys every envelope carries, in the order they are documented.
ENVELOPE_KEYS = ('schema', 'run_id', 'host', 'survey', 'engine', 'status', 'parameters',
                 'started', 'finished', 'duration_s', 'records', 'errors', 'environment', 'raw_output')

# Optional v1 fields a survey may add (EnvelopeBuilder.extra_fields), kept by the store like the others:
# an adaptive sweep's ``sweep`` and ``skipped_points``, a resumed run's ``attempts`` and the earlier attempts'
# points it took back out of its sweep (``withdrawn_points``, EnvelopeBuilder.withdraw_record), the work its
# plan had (``plan_work``, for plan_estimate to measure later plans from).
OPTIONAL_ENVELOPE_KEYS = ('sweep', 'skipped_points', 'attempts', 'withdrawn_points', 'plan_work')

RUN_ID_MAX_LENGTH = 64
# A fully qualified host name may be 253 characters; a path component 255.
HOST_MAX_LENGTH = 253

# \Z, not $: "$" would accept a trailing newline.  First character alphanumeric: no hidden directories, nothing that reads as a command-line option.
_PATH_COMPONENT_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._-]*\Z')
_RUN_ID_SUFFIX_RE = re.compile(r'^[a-z0-9]{1,16}\Z')
_TIMESTAMP_RE = re.compile(r'^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?Z\Z')
_TIMESTAMP_FORMAT = '%Y-%m-%dT%H:%M:%SZ'
_RUN_ID_TIME_FORMAT = '%Y%m%dT%H%M%SZ'

# Message recorded when a survey ends with no measurement and nobody said why,
# so that a failed envelope always explains itself.
NO_RECORD_MESSAGE = 'no measurement was recorded'


class EnvelopeError(ValueError):
    """An envelope (or the file holding it) is not a valid result envelope.

    ``problems`` lists every problem found, each naming the field or file.
    """

    def __init__(self, problems, source=None):
        if isinstance(problems, str):
            problems = [problems]
        self.problems = list(problems)
        self.source = source
        prefix = '%s: ' % source if source else ''
        super(EnvelopeError, self).__init__(prefix + 'invalid result envelope: ' + '; '.join(self.problems))


# --------------------------------------------------------------------------
# Time and identifiers


_UTC = datetime.timezone.utc


def _epoch_seconds(when):
    """Seconds since the epoch for ``when``: None (now), a number, or a datetime (naive means UTC)."""
    if when is None:
        return time.time()
    if isinstance(when, datetime.datetime):
        if when.tzinfo is None:
            when = when.replace(tzinfo=_UTC)
        return when.timestamp()
    if is_number(when):
        return float(when)
    raise TypeError('expected None, a datetime or epoch seconds, got %r' % (when,))


def _utc_datetime(when):
    return datetime.datetime.fromtimestamp(_epoch_seconds(when), _UTC)


def utc_timestamp(when=None):
    """ISO 8601 UTC timestamp with a ``Z``, to the second: ``2026-11-22T10:15:01Z``.

    ``when`` is None (now), epoch seconds, or a datetime (a naive one is taken as UTC).
    """
    return _utc_datetime(when).strftime(_TIMESTAMP_FORMAT)


def parse_timestamp(text):
    """Parse ``YYYY-MM-DDTHH:MM:SS[.fraction]Z`` into an aware UTC datetime.

    Raises ValueError naming the text when it is not such a timestamp.
    """
    match = _TIMESTAMP_RE.match(text) if isinstance(text, str) else None
    if not match:
        raise ValueError('not a UTC timestamp like 2026-11-22T10:15:01Z: %r' % (text,))
    year, month, day, hour, minute, second = (int(part) for part in match.groups()[:6])
    microsecond = int((match.group(7) or '0')[:6].ljust(6, '0'))
    try:
        return datetime.datetime(year, month, day, hour, minute, second, microsecond, tzinfo=_UTC)
    except ValueError as exc:
        raise ValueError('not a valid UTC timestamp: %r (%s)' % (text, exc))


def new_launch_id():
    """A fresh launch id: one start of a survey play (or of a survey module, when the play gives none).

    A run id names the results and may be started again (a resumed run, an AWX job launched twice); the launch
    id tells those starts apart, so that one start's cleanup never undoes what another start of the same run
    made on the node.
    """
    return binascii.hexlify(os.urandom(4)).decode('ascii')


def new_run_id(now=None, suffix=None):
    """A fresh run id: UTC time to the second plus a short random suffix, ``20261122T101500Z-3f2a``.

    The suffix keeps two runs started in the same second apart; pass ``suffix``
    (lower-case letters and digits) to make the id reproducible.
    """
    if suffix is None:
        suffix = binascii.hexlify(os.urandom(2)).decode('ascii')
    elif not isinstance(suffix, str) or not _RUN_ID_SUFFIX_RE.match(suffix):
        raise ValueError('run id suffix must be 1 to 16 lower-case letters or digits, got %r' % (suffix,))
    return '%s-%s' % (_utc_datetime(now).strftime(_RUN_ID_TIME_FORMAT), suffix)


def validate_path_component(value, what='path component', max_length=255):
    """Return ``value`` if it is safe as one directory or file name, else raise ValueError naming ``what``.

    Safe means: a non-empty string of at most ``max_length`` characters from
    ``[A-Za-z0-9._-]``, starting with a letter or digit, without ``..``.  So no
    path separators, no ``.``/``..``, no hidden files, no leading ``-``.
    """
    if not isinstance(value, str):
        raise ValueError('%s must be a string, got %r' % (what, value))
    if not value:
        raise ValueError('%s must not be empty' % what)
    if len(value) > max_length:
        raise ValueError('%s is longer than %d characters: %r' % (what, max_length, value))
    if '..' in value:
        raise ValueError('%s must not contain "..": %r' % (what, value))
    if not _PATH_COMPONENT_RE.match(value):
        raise ValueError('%s may contain only letters, digits, ".", "_" and "-", starting with a letter or digit: %r'
                         % (what, value))
    return value


def validate_run_id(run_id):
    """Return ``run_id`` if it is a valid run id (a safe path component of at most 64 characters), else raise ValueError."""
    return validate_path_component(run_id, 'run_id', RUN_ID_MAX_LENGTH)


def validate_host(host):
    """Return ``host`` if it is safe as the host directory name, else raise ValueError."""
    return validate_path_component(host, 'host', HOST_MAX_LENGTH)


def validate_survey(survey):
    """Return ``survey`` if it is one of SURVEYS, else raise ValueError listing them."""
    if survey not in SURVEYS:
        raise ValueError('survey must be one of %s, got %r' % (', '.join(SURVEYS), survey))
    return survey


def validate_engine(engine):
    """Return ``engine`` if it is one of ENGINES, else raise ValueError listing them."""
    if engine not in ENGINES:
        raise ValueError('engine must be one of %s, got %r' % (', '.join(ENGINES), engine))
    return engine


# --------------------------------------------------------------------------
# Status


def derive_status(records, errors, aborted=False, check_mode=False, nothing_to_do=False):
    """The envelope status for what a survey produced.

    - ``skipped``: check mode, or there was nothing to do (and nothing measured);
    - ``ok``: records and neither errors nor an abort;
    - ``partial``: records, then an error, a timeout or an abort;
    - ``failed``: no records otherwise (an empty run is never ``ok``).
    """
    if check_mode:
        return STATUS_SKIPPED
    if records:
        return STATUS_PARTIAL if (errors or aborted) else STATUS_OK
    if nothing_to_do and not errors and not aborted:
        return STATUS_SKIPPED
    return STATUS_FAILED


# --------------------------------------------------------------------------
# Building an envelope while a survey runs


class EnvelopeBuilder:
    """Collects one survey's results on a node and produces its envelope.

    Records are kept as they arrive, so whatever stops the survey (an error,
    a timeout, an abort) ``finish()`` still returns every measured point.
    ``finish()`` does not validate: losing a long survey's data to one odd
    value would be worse than storing it; ``write_envelope`` validates.
    """

    def __init__(self, run_id, host, survey, engine, parameters=None, raw_output=None, check_mode=False, now=None):
        """Start the clock (``now``: epoch seconds or datetime, for tests) and check the identifiers.

        Raises ValueError for an invalid run id, host, survey or engine.
        """
        self.run_id = validate_run_id(run_id)
        self.host = validate_host(host)
        self.survey = validate_survey(survey)
        self.engine = validate_engine(engine)
        self.parameters = dict(parameters or {})
        self.raw_output = raw_output
        self.check_mode = check_mode
        self.environment = {}
        # Optional v1 fields a survey adds (``sweep``, ``skipped_points`` of an adaptive sweep).
        self.extra_fields = {}
        # Told of each record as it is added and of the end (``point_done(record)``, ``finish(status)``): the
        # run directory's progress log, so that every engine's finished points pass through one place.
        self.observers = []
        self._records = []
        self._errors = []
        self._aborted = False
        self._nothing_to_do = False
        self._started = _epoch_seconds(now)
        # Durations come from the monotonic clock when the real clock is used,
        # so that a clock step during a long survey cannot make them negative.
        self._started_monotonic = time.monotonic() if now is None else None

    @property
    def records(self):
        """The records so far (a copy)."""
        return list(self._records)

    @property
    def errors(self):
        """The errors so far (a copy)."""
        return list(self._errors)

    @property
    def aborted(self):
        """True once ``mark_aborted`` was called."""
        return self._aborted

    def add_record(self, record):
        """Append one parsed record (a dict, shaped as the parser filter's RETURN says), one per sweep point."""
        if not isinstance(record, dict):
            raise TypeError('a record must be a dict, got %r' % (record,))
        self._records.append(record)
        for observer in self.observers:
            observer.point_done(record)

    def withdraw_record(self, record, reason, point=None):
        """Take ``record`` (the very dict added before) back out of the records: it no longer belongs to the sweep.

        A resumed run does so with a point an earlier attempt measured that the sweep as it ends no longer has
        (mdtest's nodes step, measured at a tasks per node that is no longer the best). The envelope lists it
        under ``withdrawn_points``: the ``point`` (e.g. ``{"step": "nodes", "nodes": 2, "tasks_per_node": 4}``),
        the ``attempt`` that measured it (when the record says) and the ``reason``; the record itself stays in
        the run's points file on the node. Returns False, listing nothing, when ``record`` is not among the
        records.
        """
        if not isinstance(reason, str) or not reason.strip():
            raise ValueError('a withdrawn record needs a non-empty reason, got %r' % (reason,))
        for index, kept in enumerate(self._records):
            if kept is record:
                del self._records[index]
                entry = {'point': dict(point) if point is not None else None, 'reason': reason}
                if record.get('attempt') is not None:
                    entry['attempt'] = record['attempt']
                self.extra_fields.setdefault('withdrawn_points', []).append(entry)
                for observer in self.observers:
                    withdrawn = getattr(observer, 'point_withdrawn', None)
                    if callable(withdrawn):
                        withdrawn(record)
                return True
        return False

    def add_error(self, message, point=None):
        """Record an error; ``point`` is the sweep point it belongs to (e.g. ``{"obj": 4, "thr": 32}``) or None."""
        if not isinstance(message, str) or not message.strip():
            raise ValueError('an error needs a non-empty message, got %r' % (message,))
        if point is not None and not isinstance(point, dict):
            raise TypeError('an error point must be a dict or None, got %r' % (point,))
        self._errors.append({'point': dict(point) if point is not None else None, 'message': message})

    def restart_clock(self):
        """The envelope's ``started`` and ``duration_s`` count from now: what came before was waiting, not the
        survey (a start signal)."""
        self._started = _epoch_seconds(None)
        self._started_monotonic = time.monotonic()

    def set_environment(self, facts=None, **more_facts):
        """Add facts about the node (``lustre_version``, ``kernel``, ...), like ``dict.update``."""
        self.environment.update(facts or {}, **more_facts)

    def set_raw_output(self, path):
        """Where the tool's raw output was kept on the node (None if it was not kept)."""
        self.raw_output = path

    def mark_aborted(self, reason):
        """The survey was stopped (timeout, signal, abort); ``reason`` is kept as an error."""
        self.add_error(reason)
        self._aborted = True

    def mark_nothing_to_do(self):
        """The survey had nothing to run (e.g. no matching targets): an empty result is ``skipped``, not ``failed``."""
        self._nothing_to_do = True

    def status(self):
        """The status the envelope would have now."""
        return derive_status(self._records, self._errors, aborted=self._aborted,
                             check_mode=self.check_mode, nothing_to_do=self._nothing_to_do)

    def finish(self, now=None):
        """Stop the clock and return the envelope as a new dict.

        May be called again (e.g. after a late error); each call builds a fresh
        envelope.  A ``failed`` result that nobody explained gets the error
        NO_RECORD_MESSAGE, so a failed envelope always says why.
        """
        finished = _epoch_seconds(now)
        if now is None and self._started_monotonic is not None:
            duration = time.monotonic() - self._started_monotonic
        else:
            duration = finished - self._started
            if duration < 0:
                raise ValueError('finish time %s is before start time %s'
                                 % (utc_timestamp(finished), utc_timestamp(self._started)))
        status = self.status()
        if status == STATUS_FAILED and not self._errors:
            self.add_error(NO_RECORD_MESSAGE)
        for observer in self.observers:
            observer.finish(status)
        envelope = {
            'schema': SCHEMA,
            'run_id': self.run_id,
            'host': self.host,
            'survey': self.survey,
            'engine': self.engine,
            'status': status,
            'parameters': dict(self.parameters),
            'started': utc_timestamp(self._started),
            'finished': utc_timestamp(finished),
            'duration_s': round(duration, 3),
            'records': list(self._records),
            'errors': [dict(error) for error in self._errors],
            'environment': dict(self.environment),
            'raw_output': self.raw_output,
        }
        envelope.update(self.extra_fields)
        return envelope


# --------------------------------------------------------------------------
# Validation


def _identifier_problem(validate, value):
    try:
        validate(value)
    except ValueError as exc:
        return str(exc)
    return None


def _status_problems(status, records, errors):
    """Problems of a status that contradicts the records and errors (see derive_status)."""
    if status not in STATUSES or not isinstance(records, list) or not isinstance(errors, list):
        return []
    problems = []
    if status == STATUS_OK:
        if not records:
            problems.append("status: 'ok' but records is empty")
        if errors:
            problems.append("status: 'ok' but errors is not empty (%d)" % len(errors))
    elif status == STATUS_PARTIAL:
        if not records:
            problems.append("status: 'partial' but records is empty (nothing measured is 'failed')")
        if not errors:
            problems.append("status: 'partial' but errors is empty (a partial result must say what stopped it)")
    elif status == STATUS_FAILED:
        if records:
            problems.append("status: 'failed' but records has %d record(s) (that is 'partial')" % len(records))
        if not errors:
            problems.append("status: 'failed' but errors is empty (a failed result must say why)")
    elif status == STATUS_SKIPPED and records:
        problems.append("status: 'skipped' but records has %d record(s)" % len(records))
    return problems


def _error_item_problems(errors):
    problems = []
    for index, error in enumerate(errors):
        where = 'errors[%d]' % index
        if not isinstance(error, dict):
            problems.append('%s: must be an object, got %r' % (where, error))
            continue
        message = error.get('message')
        if not isinstance(message, str) or not message.strip():
            problems.append('%s.message: must be a non-empty string, got %r' % (where, message))
        point = error.get('point')
        if point is not None and not isinstance(point, dict):
            problems.append('%s.point: must be an object or null, got %r' % (where, point))
    return problems


def validate_envelope(envelope):
    """Return the list of problems of ``envelope`` (empty when it is valid).

    Each problem is a sentence that starts with the field it is about.  Keys
    beyond ENVELOPE_KEYS are allowed, so that v1 can gain optional fields.
    """
    if not isinstance(envelope, dict):
        return ['envelope: must be an object, got %s' % type(envelope).__name__]
    problems = []
    missing = [key for key in ENVELOPE_KEYS if key not in envelope]
    if missing:
        problems.append('missing keys: %s' % ', '.join(missing))

    def check(key, test, expectation):
        if key in envelope and not test(envelope[key]):
            problems.append('%s: must be %s, got %r' % (key, expectation, envelope[key]))

    check('schema', lambda value: value == SCHEMA, repr(SCHEMA))
    for key, validate in (('run_id', validate_run_id), ('host', validate_host),
                          ('survey', validate_survey), ('engine', validate_engine)):
        if key in envelope:
            # The validators' messages already start with the field name.
            problem = _identifier_problem(validate, envelope[key])
            if problem:
                problems.append(problem)
    check('status', lambda value: value in STATUSES, 'one of %s' % ', '.join(STATUSES))
    check('parameters', lambda value: isinstance(value, dict), 'an object')
    check('environment', lambda value: isinstance(value, dict), 'an object')
    check('records', lambda value: isinstance(value, list) and all(isinstance(item, dict) for item in value),
          'a list of objects')
    check('errors', lambda value: isinstance(value, list), 'a list')
    check('raw_output', lambda value: value is None or isinstance(value, str), 'a string or null')
    for key in ('started', 'finished'):
        if key in envelope:
            problem = _identifier_problem(parse_timestamp, envelope[key])
            if problem:
                problems.append('%s: %s' % (key, problem))
    check('duration_s', lambda value: is_number(value) and math.isfinite(value) and value >= 0,
          'a non-negative number')
    if isinstance(envelope.get('errors'), list):
        problems.extend(_error_item_problems(envelope['errors']))
    problems.extend(_status_problems(envelope.get('status'), envelope.get('records'), envelope.get('errors')))
    try:
        json.dumps(envelope, allow_nan=False)
    except (TypeError, ValueError) as exc:
        problems.append('envelope: not serialisable as strict JSON (%s)' % exc)
    return problems


def check_envelope(envelope, source=None):
    """Return ``envelope`` if valid, else raise EnvelopeError listing every problem (``source`` names where it came from)."""
    problems = validate_envelope(envelope)
    if problems:
        raise EnvelopeError(problems, source)
    return envelope


# --------------------------------------------------------------------------
# The run id as a playbook variable (the store itself is plugins/plugin_utils/results_store.py)


def type_name(value):
    """How a message names the type of a variable's value: 'null', 'a boolean', 'a number', 'a list' ..."""
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return 'a boolean'
    if isinstance(value, numbers.Number):
        return 'a number'
    return 'a %s' % type(value).__name__


def checked_run_id(value, variable='iokit_run_id'):
    """Return the run id ``value`` if valid, else raise ValueError naming ``variable`` first.

    A number, a boolean or null is refused with its type.
    """
    if value is None:
        raise ValueError('%s: is null; give a run id such as 20261122T101500Z-3f2a, or leave it unset for a new one'
                         % variable)
    if not isinstance(value, str):
        # YAML reads 123 or yes as a number or a boolean.
        hint = '; quote it' if isinstance(value, numbers.Number) else ''
        raise ValueError('%s: must be a string such as 20261122T101500Z-3f2a, got %s (%r)%s'
                         % (variable, type_name(value), value, hint))
    try:
        return validate_run_id(value)
    except ValueError as exc:
        raise ValueError('%s: %s' % (variable, str(exc).replace('run_id ', '', 1)))
