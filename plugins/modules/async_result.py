#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: async_result
short_description: Wait on the node for a survey started with async, and return its own result and raw output
version_added: 0.2.0
description:
  - Waits, on the node, for the job of a task started with C(async) and C(poll) 0 to end, and returns the
    module's result exactly as the module returned it, with the contents of the raw output files it names.
  - One task replaces polling with C(ansible.builtin.async_status), reading the job file with
    C(ansible.builtin.slurp), fetching each raw output file and removing the job file. The end of the job is seen
    within half a second, not at the next poll, and the controller runs one task per host for the whole wait
    instead of one per poll.
  - C(async_status) turns the module's own C(started) and C(finished) timestamps into booleans; this module
    does not.
  - When O(wait_s) passes first it returns RV(finished=false); repeat the task with C(until) for a longer wait.
  - A job killed by its C(async) limit ends with the result Ansible's async wrapper writes
    (C(msg=Timeout exceeded), C(failed=true)), which is returned under RV(job) like any other.
author:
  - lustre.iokit contributors (@lustre)
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
    details:
      - Waits and reads as usual but leaves the job file in place.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
options:
  results_file:
    description:
      - The job file of the async task, its registered C(results_file).
    type: path
    required: true
  wait_s:
    description:
      - The longest this task waits on the node. A job that ends earlier is returned at once.
      - 0 looks once and returns.
    type: int
    default: 60
  read_raw_output:
    description:
      - Once the job has ended, read the raw output files its result names (C(raw_files), else C(raw_output))
        and return them in RV(raw_contents), compressed, for M(lustre.iokit.store_result).
    type: bool
    default: true
  raw_name_suffix:
    description:
      - Added to the stem of each raw output file's name in RV(raw_contents) (before the first dot), so that
        several runs of the same survey keep apart (C(-iteration2) makes C(obdfilter.summary) into
        C(obdfilter-iteration2.summary)).
    type: str
    default: ''
  remove:
    description:
      - Remove the job file once the job has ended and its result has been read.
    type: bool
    default: true
notes:
  - The raw output is held in memory on the controller until it is stored; at the I/O kit's output sizes (text,
    compressed here) that is small.
seealso:
  - module: lustre.iokit.store_result
  - name: ansible.builtin.async_status
    description: The polling this module replaces for a survey.
    link: https://docs.ansible.com/ansible/latest/collections/ansible/builtin/async_status_module.html
'''

EXAMPLES = r'''
- name: Start the survey in the background
  lustre.iokit.mds_survey:
    thrhi: 8
    timeout: 1800
  async: 1920
  poll: 0
  register: mds_job

- name: Wait for it; each task waits up to five minutes on the node, and the end is seen at once
  lustre.iokit.async_result:
    results_file: "{{ mds_job.results_file }}"
    wait_s: 300
    read_raw_output: false
  register: mds_wait
  until: mds_wait.finished
  retries: 8
  delay: 0

- name: Say how it went (the envelope's own timestamps are strings, as the module returned them)
  ansible.builtin.debug:
    msg: "{{ mds_wait.job.envelope.status }} from {{ mds_wait.job.envelope.started }} to {{ mds_wait.job.envelope.finished }}"
'''

RETURN = r'''
finished:
  description: Whether the job has ended (successfully, failed or killed by its C(async) limit).
  returned: always
  type: bool
  sample: true
waited_s:
  description: How long this task waited on the node.
  returned: always
  type: float
  sample: 12.503
job:
  description:
    - The job's result as the module wrote it (for a survey module, the envelope's keys and C(envelope));
      for a running job, the async wrapper's progress marker.
  returned: always
  type: dict
  sample: {"envelope": {"survey": "obdfilter", "status": "ok"}, "raw_files": ["/tmp/lustre-iokit/x/obdfilter.summary"]}
raw_contents:
  description: The raw output files named by the job's result, once it has ended.
  returned: always
  type: list
  elements: dict
  contains:
    path:
      description: The file on the node.
      type: str
    name:
      description: The name to store it under (its base name with O(raw_name_suffix)).
      type: str
    content:
      description: The file's bytes, gzip-compressed and base64-encoded.
      type: str
  sample: [{"path": "/tmp/lustre-iokit/x/obdfilter.summary", "name": "obdfilter.summary", "content": "H4sI..."}]
raw_problems:
  description: Raw output files that could not be read, each with the reason; they are left out of RV(raw_contents).
  returned: always
  type: list
  elements: str
  sample: []
msg:
  description: Why the job is not over yet, or why it failed (the job's own C(msg)).
  returned: when the job is running or failed
  type: str
  sample: Timeout exceeded
removed:
  description: Whether the job file was removed.
  returned: always
  type: bool
  sample: true
'''

import base64
import gzip
import json
import os
import re
import time

from ansible.module_utils.basic import AnsibleModule

# The async wrapper writes the job file by rename, so a read sees a whole file; a file that is there but not
# JSON is one the wrapper never wrote (or another process damaged): looked at again, then reported.
POLL_S = 0.5
STEM_AND_EXTENSION = re.compile(r'^([^.]*)(.*)$')


def _is_running(job):
    """The async wrapper's progress marker: ``started`` true and ``finished`` false (0 before ansible-core 2.19).

    A finished survey module's result also has ``started``/``finished`` (its envelope's timestamps, strings).
    """
    return job.get('finished') in (False, 0) and job.get('started') in (True, 1)


def read_job(path):
    """The job file's JSON, or raise OSError/ValueError."""
    with open(path) as handle:
        return json.load(handle)


def raw_paths(job):
    if job.get('raw_files'):
        return [path for path in job['raw_files'] if path]
    envelope = job.get('envelope') if isinstance(job.get('envelope'), dict) else job
    raw_output = envelope.get('raw_output')
    return [raw_output] if raw_output else []


def stored_name(path, suffix):
    stem, extension = STEM_AND_EXTENSION.match(os.path.basename(path)).groups()
    return stem + suffix + extension


def read_raw(paths, suffix):
    contents = []
    problems = []
    for path in paths:
        try:
            with open(path, 'rb') as handle:
                data = handle.read()
        except (IOError, OSError) as exc:
            problems.append('%s: %s' % (path, exc.strerror or exc))
            continue
        contents.append({'path': path, 'name': stored_name(path, suffix),
                         'content': base64.b64encode(gzip.compress(data)).decode('ascii')})
    return contents, problems


def wait_for_job(path, wait_s, clock=time.monotonic, sleep=time.sleep):
    """``(job, finished, waited_s)``: the job file's content once the job has ended, or when ``wait_s`` has passed."""
    started = clock()
    deadline = started + wait_s
    unreadable = None
    while True:
        try:
            job = read_job(path)
            unreadable = None
            if not _is_running(job):
                return job, True, clock() - started
        except ValueError as exc:
            unreadable = exc
            job = None
        if clock() >= deadline:
            if unreadable is not None:
                raise unreadable
            return job, False, clock() - started
        sleep(min(POLL_S, max(0.0, deadline - clock())))


def main():
    module = AnsibleModule(
        argument_spec=dict(
            results_file=dict(type='path', required=True),
            wait_s=dict(type='int', default=60),
            read_raw_output=dict(type='bool', default=True),
            raw_name_suffix=dict(type='str', default=''),
            remove=dict(type='bool', default=True),
        ),
        supports_check_mode=True,
    )
    params = module.params
    if params['wait_s'] < 0:
        module.fail_json(msg='wait_s must be 0 or more (got %d)' % params['wait_s'])
    if '/' in params['raw_name_suffix'] or '\0' in params['raw_name_suffix']:
        module.fail_json(msg='raw_name_suffix must not contain "/" (got %r)' % params['raw_name_suffix'])
    path = params['results_file']
    if not os.path.exists(path):
        module.fail_json(msg='results_file: no async job file %s (the job was never started on this node, or its '
                             'file was already removed)' % path)
    try:
        job, finished, waited_s = wait_for_job(path, params['wait_s'])
    except (IOError, OSError) as exc:
        module.fail_json(msg='results_file: cannot read %s: %s' % (path, exc))
    except ValueError as exc:
        module.fail_json(msg='results_file: %s is not an async job file (not JSON: %s)' % (path, exc))
    result = dict(changed=False, finished=finished, waited_s=round(waited_s, 3), job=job, raw_contents=[],
                  raw_problems=[], removed=False)
    if not finished:
        result['msg'] = 'the job is still running after %d s' % params['wait_s']
        module.exit_json(**result)
    if job.get('failed'):
        # Shown when the task fails on it: for a job killed by its async limit, the wrapper's "Timeout exceeded".
        result['msg'] = job.get('msg') or 'the job failed without a message'
    if params['read_raw_output']:
        result['raw_contents'], result['raw_problems'] = read_raw(raw_paths(job), params['raw_name_suffix'])
    if params['remove'] and not module.check_mode:
        try:
            os.remove(path)
            result['removed'] = True
        except OSError as exc:
            module.warn('cannot remove the async job file %s: %s' % (path, exc))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
