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

import multiprocessing
import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase


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
        return result
