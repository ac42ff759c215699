# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Wait for a survey's async job, but only while the controller that started it is alive.

The wait is a task repeated with ``until``, and those repetitions run in the
forked worker process of ``ansible-playbook``.  When ``ansible-playbook`` is
killed (SIGKILL, a lost AWX job), that worker is left over and would go on
asking the node for an hour; before each repetition it looks whether its parent
is still there and stops when it is not.  The module itself is documented in
``plugins/modules/async_result.py``.
"""

from __future__ import annotations

import errno
import fcntl
import json
import multiprocessing
import os
import shutil
import tempfile
import time

from ansible import constants as C
from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.lustre.iokit.plugins.module_utils.progress import progress_run_and_survey
from ansible_collections.lustre.iokit.plugins.plugin_utils.fleet_progress import fleet_line, survey_of

display = Display()

# The stdout callback that prints the fleet line itself; with any other (AWX's is fixed) this action prints it.
PROGRESS_CALLBACKS = ('lustre.iokit.survey_progress', 'survey_progress')


def controller_gone(parent=None, getppid=os.getppid):
    """The pid of the controller process this worker was forked from, if that process has ended; else None.

    A worker whose parent ended is re-parented (to init or a subreaper), so its
    parent pid no longer matches the one recorded at the fork.  Outside a forked
    worker there is no such parent and nothing to tell.
    """
    parent = parent if parent is not None else multiprocessing.parent_process()
    if parent is None or parent.pid is None:
        return None
    return parent.pid if getppid() != parent.pid else None


CONTROLLER_DIRECTORY_PREFIX = 'lustre-iokit-controller-'


def _alive(pid):
    try:
        os.kill(pid, 0)
    except OSError as exc:
        return exc.errno != errno.ESRCH
    return True


def controller_directory(parent=None):
    """This controller's directory in the temporary directory, where its waits and starts leave notes for each other.

    The notes of one ``ansible-playbook`` process (its pid is the workers' parent) are of no use once it has ended,
    however it ended (a SIGKILL runs no clean-up): making a controller's directory first removes those of the
    controllers that have ended, so each machine keeps at most the directories of its running controllers and of
    the last one to end.
    """
    parent = os.getppid() if parent is None else parent
    root = tempfile.gettempdir()
    directory = os.path.join(root, '%s%d' % (CONTROLLER_DIRECTORY_PREFIX, parent))
    if not os.path.isdir(directory):
        for name in os.listdir(root):
            suffix = name[len(CONTROLLER_DIRECTORY_PREFIX):]
            if name.startswith(CONTROLLER_DIRECTORY_PREFIX) and suffix.isdigit() and not _alive(int(suffix)):
                shutil.rmtree(os.path.join(root, name), ignore_errors=True)
        os.makedirs(directory, mode=0o700, exist_ok=True)
    return directory


def _started_pointer(run_id, survey, parent=None):
    """The file naming the latest start task of ``survey`` in ``run_id`` under this controller process."""
    return os.path.join(controller_directory(parent), 'started-%s-%s' % (run_id, survey))


def note_started(run_id, survey, start_task, host, parent=None):
    """Note that the start task ``start_task`` started ``survey`` on ``host`` (called by the survey_start action).

    With fewer forks than hosts, a host's wait holds a fork until its survey ends, so the hosts past the fork count
    are polled late; the fleet line counts them from these notes as started, not polled yet.
    """
    pointer = _started_pointer(run_id, survey, parent)
    directory = '%s-%s' % (pointer, start_task)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    open(os.path.join(directory, host), 'w').close()
    temporary = '%s.%s.tmp' % (pointer, host)
    with open(temporary, 'w') as stream:
        stream.write(start_task)
    os.rename(temporary, pointer)


def started_hosts(run_id, survey, parent=None):
    """The hosts the latest start task of ``survey`` in ``run_id`` started (empty if not known)."""
    if not run_id or not survey:
        return set()
    pointer = _started_pointer(run_id, survey, parent)
    try:
        with open(pointer) as stream:
            start_task = stream.read().strip()
        return set(os.listdir('%s-%s' % (pointer, start_task)))
    except (IOError, OSError):
        return set()


def share_progress(directory, host, progress, every_s, now=None, started=None):
    """Note ``host``'s progress for the others, and return the fleet line when none was shown for ``every_s``.

    Each host's wait runs in a worker of its own: the hosts meet in ``directory`` (one file per host), and a lock
    lets only one of them print a line per interval. ``started`` (the hosts whose survey was started) adds those not
    polled yet to the line's count.
    """
    now = time.time() if now is None else now
    os.makedirs(directory, mode=0o700, exist_ok=True)
    temporary = os.path.join(directory, '.%s.tmp' % host)
    with open(temporary, 'w') as stream:
        json.dump(progress, stream)
    os.rename(temporary, os.path.join(directory, '%s.json' % host))
    with open(os.path.join(directory, '.shown'), 'a+') as marker:
        fcntl.flock(marker, fcntl.LOCK_EX)
        marker.seek(0)
        try:
            shown = float(marker.read().strip() or 0)
        except ValueError:
            shown = 0.0
        if now - shown < every_s:
            return None
        marker.seek(0)
        marker.truncate()
        marker.write('%f' % now)
    progresses = {}
    for name in os.listdir(directory):
        if name.endswith('.json') and not name.startswith('.'):
            try:
                with open(os.path.join(directory, name)) as stream:
                    progresses[name[:-len('.json')]] = json.load(stream)
            except (IOError, OSError, ValueError):
                continue
    unpolled = len(set(started or ()) - set(progresses))
    return fleet_line(survey_of(progresses), progresses, now=now, unpolled=unpolled)


class ActionModule(ActionBase):

    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        gone = controller_gone()
        if gone is not None:
            # An exception, not a failed result: it ends the task's until loop at once.
            raise AnsibleActionFail('the controller that started this wait (ansible-playbook, pid %d) is gone: stopped '
                                    'waiting for the job; run playbooks/cleanup.yml to stop what it left on the node'
                                    % gone)
        module_args = dict(self._task.args)
        if module_args.get('purge') and 'async_dir' not in module_args:
            # The job files are where the async wrapper of this connection's shell writes them.
            module_args['async_dir'] = self._remote_expand_user(self.get_shell_option('async_dir',
                                                                                      default='~/.ansible_async'))
        result.update(self._execute_module(module_name='lustre.iokit.async_result', module_args=module_args,
                                           task_vars=task_vars))
        if result.get('progress') and C.config.get_config_value('DEFAULT_STDOUT_CALLBACK') not in PROGRESS_CALLBACKS:
            # Per controller and task: the hosts of this wait, not those of another run or play.
            try:
                directory = os.path.join(controller_directory(), 'fleet-%s' % self._task._uuid)
                line = share_progress(directory, task_vars.get('inventory_hostname', 'host'), result['progress'],
                                      max(1, int(module_args.get('wait_s', 60))),
                                      started=started_hosts(*progress_run_and_survey(module_args.get('progress_file'))))
            except (IOError, OSError) as exc:
                line = None
                display.vvv('fleet progress: cannot share this host\'s progress: %s' % exc)
            if line:
                display.display(line)
        return result
