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
  - Each repetition first looks, on the controller, whether the C(ansible-playbook) that started the wait is still
    running; when it was killed, its left-over worker stops at once instead of polling until the limit.
  - With O(purge=true) it removes, instead, the job files that this collection's surveys left in the async directory
    when nobody read their result (the controller was killed or lost), only finished jobs whose result is a survey
    envelope, of O(run_id) when given.
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
      - Required unless O(purge=true).
    type: path
  purge:
    description:
      - Remove the job files of finished surveys of this collection from O(async_dir) instead of waiting for one job.
      - A job file is removed only when the job has ended and its result is a survey envelope (of O(run_id) when
        given). Running jobs, other modules' jobs and unreadable files are left alone.
    type: bool
    default: false
  run_id:
    description:
      - With O(purge=true), only the job files of this run, whatever their age.
      - Without it, only job files older than O(min_age_s), so that a live controller reads its result first.
    type: str
  job_ids:
    description:
      - With O(purge=true), also the job files of these async job ids, whatever they hold (a job whose wrapper a
        cleanup stopped leaves a file that says it is still running).
      - An id as the async wrapper's command line has it (C(j130487208545)) also names the job file the wrapper
        made of it (C(j130487208545.4871), the id and the wrapper's pid).
    type: list
    elements: str
    default: []
  min_age_s:
    description: With O(purge=true) and no O(run_id), the age in seconds below which a job file is kept.
    type: int
    default: 600
  async_dir:
    description:
      - With O(purge=true), the async directory of the node, where the async wrapper writes the job files.
      - The action uses the connection shell's C(async_dir) setting when this is not given.
    type: path
    default: ~/.ansible_async
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
  progress_file:
    description:
      - The survey's progress file in its run directory on the node (C(<workdir>/<run_id>/<survey>.progress.json)),
        rewritten by the survey module after every finished sweep point.
      - When given, each poll returns its contents in RV(progress), with the elapsed time and the ETA brought up to
        the moment of the poll. A file not written yet (the survey is still setting up) gives RV(progress=null).
    type: path
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

- name: After a killed controller, remove the job files of the run's surveys that nobody read
  lustre.iokit.async_result:
    purge: true
    run_id: 20261122T101500Z-3f2a

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
  description:
    - Why the job is not over yet, or why it failed (the job's own C(msg)).
    - For a module process that was killed without writing its result (SIGKILL, the out-of-memory killer), instead
      of the async wrapper's traceback, a sentence naming the module and the node (see RV(killed)).
  returned: when the job is running or failed
  type: str
  sample: Timeout exceeded
killed:
  description: True when the job's module process ended without writing its result, killed by a signal.
  returned: when the job's module was killed
  type: bool
  sample: true
removed:
  description: Whether the job file was removed.
  returned: when O(purge=false)
  type: bool
  sample: true
progress:
  description:
    - The survey's progress when O(progress_file) is given and readable, else null.
    - C(done) and C(total) points (C(total) is the engine's plan; an adaptive sweep may end below it), C(current)
      (the point now running), C(elapsed_s), C(last) (the last finished point, its C(figure) and C(duration_s)),
      C(eta_s) (seconds left, the work left at the rate measured so far), C(state) (C(running) or the envelope's
      status once it ended).
  returned: when O(purge=false)
  type: dict
  sample: {"survey": "obdfilter", "host": "oss1", "state": "running", "done": 12, "total": 30, "elapsed_s": 421.5,
           "eta_s": 730.2, "current": {"rsz_kib": 1024, "nobj": 2, "thr": 16},
           "last": {"point": {"rsz_kib": 1024, "obj": 2, "thr": 8}, "figure": "write 812.3 MiB/s",
                    "duration_s": 33.1}}
purged:
  description: The job files removed by O(purge=true).
  returned: when O(purge=true)
  type: list
  elements: str
  sample: ["/root/.ansible_async/j229586444454.22560"]
'''

import base64
import gzip
import json
import os
import re
import socket
import stat
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.lustre.iokit.plugins.module_utils import payload
from ansible_collections.lustre.iokit.plugins.module_utils.progress import read_progress
from ansible_collections.lustre.iokit.plugins.module_utils.results import SCHEMA

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


def died_without_result(job, host=None):
    """What to say of a job whose module process ended without printing its result, or None for any other job.

    The async wrapper then writes its own traceback (its JSON filter's "No start of json char found") with the
    module's empty output: that is a process killed by a signal it cannot catch, as a module that is stopped
    any other way (SIGTERM, an error) still prints its result.  The wrapper does not keep the exit status, so the
    signal is named as the usual one, with what else does the same.
    """
    if not job.get('failed') or 'cmd' not in job or not isinstance(job.get('msg'), str):
        return None
    if (job.get('data') or job.get('outdata') or '').strip() or 'Traceback' not in job['msg']:
        return None
    host = host or socket.gethostname().split('.')[0]
    match = re.search(r'AnsiballZ_(\w+)\.py', job['cmd'])
    what = 'the %s process' % match.group(1) if match else 'the survey process'
    stderr = (job.get('stderr') or '').strip()
    if stderr:
        return ('%s on %s ended without writing its result: %s' % (what, host, stderr.splitlines()[-1]))
    return ('%s on %s was killed (signal 9, SIGKILL, or another signal a process cannot catch, such as the '
            'out-of-memory killer\'s) and wrote no result. The points it finished stay on the node: run the playbook '
            'again with the same iokit_run_id to resume, and playbooks/cleanup.yml removes what it left'
            % (what, host))


def survey_run_of(job):
    """The run id of a finished survey job's envelope, or None when the job file is anything else."""
    if not isinstance(job, dict) or _is_running(job):
        return None
    envelope = job.get('envelope') if isinstance(job.get('envelope'), dict) else job
    if envelope.get('schema') != SCHEMA or not isinstance(envelope.get('run_id'), str):
        return None
    return envelope['run_id']


def purge_job_files(async_dir, run_id=None, min_age_s=600, job_ids=(), now=None):
    """Remove job files in ``async_dir``; return their paths.

    Removed: finished survey jobs (of ``run_id``, else older than ``min_age_s``)
    and the files of ``job_ids`` whatever they hold.  Never anything but a
    regular file directly in ``async_dir``.
    """
    now = time.time() if now is None else now
    removed = []
    try:
        names = sorted(os.listdir(async_dir))
    except OSError:
        return removed
    named = set(job_ids)
    for name in names:
        path = os.path.join(async_dir, name)
        try:
            info = os.lstat(path)
            if not stat.S_ISREG(info.st_mode):
                continue
            if name not in named and name.split('.', 1)[0] not in named:
                job_run = survey_run_of(read_job(path))
                if job_run is None or (run_id is not None and job_run != run_id):
                    continue
                if run_id is None and now - info.st_mtime < min_age_s:
                    continue
        except (OSError, ValueError):
            continue
        try:
            os.remove(path)
        except OSError:
            continue
        removed.append(path)
    return removed


def main():
    # First: a module killed later still leaves a payload directory the cleanup knows is stale.
    payload.claim()
    module = AnsibleModule(
        argument_spec=dict(
            results_file=dict(type='path'),
            wait_s=dict(type='int', default=60),
            read_raw_output=dict(type='bool', default=True),
            raw_name_suffix=dict(type='str', default=''),
            remove=dict(type='bool', default=True),
            purge=dict(type='bool', default=False),
            run_id=dict(type='str'),
            min_age_s=dict(type='int', default=600),
            job_ids=dict(type='list', elements='str', default=[]),
            async_dir=dict(type='path', default='~/.ansible_async'),
            progress_file=dict(type='path'),
        ),
        required_if=[('purge', False, ['results_file'])],
        supports_check_mode=True,
    )
    params = module.params
    if params['purge']:
        async_dir = params['async_dir']
        if module.check_mode:
            module.exit_json(changed=False, purged=[])
        purged = purge_job_files(async_dir, params['run_id'], params['min_age_s'], params['job_ids'])
        module.exit_json(changed=bool(purged), purged=purged)
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
    result['progress'] = read_progress(params['progress_file']) if params['progress_file'] else None
    if not finished:
        result['msg'] = 'the job is still running after %d s' % params['wait_s']
        module.exit_json(**result)
    if job.get('failed'):
        # Shown when the task fails on it: for a job killed by its async limit, the wrapper's "Timeout exceeded".
        result['msg'] = job.get('msg') or 'the job failed without a message'
        died = died_without_result(job)
        if died is not None:
            # The wrapper's traceback says only that the module printed nothing: the sentence replaces it there too.
            result['job'] = dict((key, value) for key, value in job.items() if key not in ('data', 'outdata'))
            result['job']['msg'] = result['msg'] = died
            result['killed'] = True
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
