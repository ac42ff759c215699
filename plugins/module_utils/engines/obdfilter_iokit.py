# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``engine: iokit`` of the obdfilter survey: the node's installed ``obdfilter-survey`` run with the sweep's
parameters in its environment, its summary parsed (``parse_obdfilter_survey``) and each record given the
per-OST figures of its ``.detail`` file (``parse_obdfilter_detail``).

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.lustre.iokit.plugins.module_utils.engines.iokit_script import read_text, run_script
from ansible_collections.lustre.iokit.plugins.module_utils.engines.obdfilter import CASE_DISK
from ansible_collections.lustre.iokit.plugins.module_utils.parsers._obdfilter_detail import (
    STATUS_ERROR, STATUS_INCOMPLETE, parse_obdfilter_detail)
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.obdfilter_survey import parse_obdfilter_survey


def iokit_environment(targets, size_mib, rszlo, rszhi, nobjlo, nobjhi, thrlo, thrhi, tests, verify, rslt,
                      case=CASE_DISK):
    """The environment that makes the installed obdfilter-survey run the same sweep."""
    return {'case': case, 'targets': ' '.join(targets), 'size': str(size_mib), 'rszlo': str(rszlo),
            'rszhi': str(rszhi), 'nobjlo': str(nobjlo), 'nobjhi': str(nobjhi), 'thrlo': str(thrlo),
            'thrhi': str(thrhi), 'tests_str': ' '.join(tests), 'verify': '1' if verify else '0', 'rslt': rslt}


# Lines of the script's stdout that explain a run that produced no result (it exits 0 after most of them).
_IOKIT_FAILURE_RE = re.compile(
    r"(Can't find any OSTs to test.*|OST \S+ not setup.*|Can't setup echo-client.*|First test must be 'write'.*"
    r"|error: lctl not found.*|Test disk case support maximum.*|obdecho not setup on server.*"
    r"|ost not setup on server.*|The existing setup must be cleaned.*|.*not contiguous.*"
    r"|Error loading obdecho.*|.*[Cc]an't load obdecho.*)")


def iokit_errors(records, output):
    """Errors of an obdfilter-survey run, judged from its text (its exit status is not to be trusted)."""
    errors = []
    for record in records:
        point = {'rsz_kib': record['rsz_kib'], 'obj': record['obj'], 'thr': record['thr']}
        if record.get('error'):
            errors.append({'point': point, 'message': record['error']})
        for test, result in sorted(record['tests'].items()):
            if result['status'] in (STATUS_ERROR, STATUS_INCOMPLETE):
                errors.append({'point': dict(point, test=test), 'message': '%s %s (see the .detail file)'
                               % (test, result['status'].upper())})
    if not records:
        found = [match.group(0).strip() for match in _IOKIT_FAILURE_RE.finditer(output or '')]
        tail = (output or '').strip()[-2000:]
        errors.append({'point': None, 'message': 'obdfilter-survey produced no result: %s'
                       % ('; '.join(found) if found else tail or 'no output')})
    return errors


def run_iokit(runner, script, rslt, **parameters):
    """Run the node's ``obdfilter-survey`` and parse its summary: ``(records, errors, result)``."""
    env = iokit_environment(rslt=rslt, **parameters)
    result, summary = run_script(runner, script, env, rslt)
    records = parse_obdfilter_survey(summary)
    detail = read_text(rslt + '.detail')
    per_point = parse_obdfilter_detail(detail) if detail is not None else {}
    for record in records:
        per_ost = per_point.get((record['ost'], record['size_kib'], record['rsz_kib'], record['obj'], record['thr']))
        if per_ost is not None:
            record['per_ost'] = per_ost
    errors = iokit_errors(records, result.stdout + result.stderr)
    if result.timed_out:
        errors.append({'point': None, 'message': 'obdfilter-survey stopped: %s' % (runner.stop_reason or 'timeout')})
    return records, errors, result
