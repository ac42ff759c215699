# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: merge_iterations
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Merge the envelopes of a survey repeated on one host into one envelope
description:
  - A survey role run with C(<survey>_iterations) > 1 (C(iokit_iterations)) runs its survey that many times on a
    node, one after the other; this filter makes the one envelope per host and survey that the results store
    holds (R(the results guide, ansible_collections.lustre.iokit.docsite.results_schema)) out of the envelopes of those runs.
  - Every record and every error gets C(iteration) (1 for the first envelope, 2 for the second, ...), which is
    how the report tells repeats of one sweep point apart (P(lustre.iokit.report_repeat_stats#filter)).
  - The status is C(ok) only when every requested iteration ran and was C(ok). An iteration that was not run
    (the role stops after one that is not C(ok)) is an error of the merged envelope, so a rerun of the same run id
    does not take it for complete.
  - C(parameters) are the first envelope's plus C(iterations); C(started) is the first envelope's, C(finished) the
    last one's, C(duration_s) their sum; C(environment), C(engine) and C(raw_output) are the first envelope's.
  - With one iteration requested and one envelope given, that envelope is returned unchanged (no C(iteration)
    fields), so a run without repeats stores exactly what the module returned.
options:
  _input:
    description: The envelopes of the iterations, in the order they ran (at least one).
    type: list
    elements: dict
    required: true
  iterations:
    description:
      - How many iterations were requested. Defaults to the number of envelopes given; fewer envelopes than this
        makes the merged result C(partial) (or C(failed) when nothing was measured).
    type: int
'''

EXAMPLES = r'''
- name: One envelope for the three runs of the survey on this host
  ansible.builtin.set_fact:
    obdfilter_envelope: "{{ survey_common_envelopes | lustre.iokit.merge_iterations(iterations=3) }}"
'''

RETURN = r'''
_value:
  description: The merged envelope (schema C(lustre.iokit/result/v1)).
  type: dict
  contains:
    status:
      description: C(ok), C(partial), C(failed) or C(skipped) (every iteration skipped, as in check mode).
      type: str
    records:
      description: Every iteration's records, in order, each with C(iteration).
      type: list
      elements: dict
    errors:
      description: Every iteration's errors, each with C(iteration), then one per requested iteration not run.
      type: list
      elements: dict
    parameters:
      description: The survey's parameters, with C(iterations) (the number requested).
      type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.lustre.iokit.plugins.module_utils.results import (
    STATUS_OK,
    STATUS_SKIPPED,
    derive_status,
)


def _numbered(items, iteration):
    return [dict(item, iteration=iteration) for item in items or () if isinstance(item, dict)]


def merge_iterations(envelopes, iterations=None):
    if not isinstance(envelopes, list) or not envelopes or not all(isinstance(item, dict) for item in envelopes):
        raise AnsibleFilterError('merge_iterations: the input must be a non-empty list of envelopes, got %r'
                                 % (envelopes,))
    requested = len(envelopes) if iterations is None else iterations
    if isinstance(requested, bool) or not isinstance(requested, int) or requested < len(envelopes):
        raise AnsibleFilterError('merge_iterations: iterations must be an integer >= the number of envelopes (%d), '
                                 'got %r' % (len(envelopes), iterations))
    first = envelopes[0]
    for key in ('run_id', 'host', 'survey'):
        values = sorted(set(str(envelope.get(key)) for envelope in envelopes))
        if len(values) > 1:
            raise AnsibleFilterError('merge_iterations: the envelopes must be of one %s, got %s'
                                     % (key, ', '.join(values)))
    if requested == 1:
        return first

    records, errors = [], []
    for iteration, envelope in enumerate(envelopes, 1):
        records.extend(_numbered(envelope.get('records'), iteration))
        errors.extend(_numbered(envelope.get('errors'), iteration))
    statuses = [envelope.get('status') for envelope in envelopes]
    if all(status == STATUS_SKIPPED for status in statuses):
        status = STATUS_SKIPPED
    else:
        last = envelopes[-1]
        for iteration in range(len(envelopes) + 1, requested + 1):
            errors.append({'point': None, 'iteration': iteration,
                           'message': 'iteration %d of %d not run: iteration %d ended %s'
                                      % (iteration, requested, len(envelopes), last.get('status'))})
        status = derive_status(records, errors)
        if status == STATUS_OK and any(value != STATUS_OK for value in statuses):
            # An iteration that was not ok without saying why still keeps the whole from passing for ok.
            errors.append({'point': None, 'iteration': None,
                           'message': 'iterations not ok: %s' % ', '.join(
                               '%d (%s)' % (index, value) for index, value in enumerate(statuses, 1)
                               if value != STATUS_OK)})
            status = derive_status(records, errors)
    durations = [envelope.get('duration_s') for envelope in envelopes]
    numeric = all(isinstance(value, (int, float)) and not isinstance(value, bool) for value in durations)
    merged = dict(first)
    merged.update(
        status=status,
        parameters=dict(first.get('parameters') or {}, iterations=requested),
        finished=envelopes[-1].get('finished'),
        duration_s=round(sum(durations), 3) if numeric else first.get('duration_s'),
        records=records,
        errors=errors,
    )
    return merged


class FilterModule(object):
    def filters(self):
        return {'merge_iterations': merge_iterations}
