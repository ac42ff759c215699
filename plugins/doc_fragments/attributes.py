# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # Every survey module: check mode returns the plan and touches nothing; there is no diff.
    DOCUMENTATION = r'''
options: {}
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
    details:
      - Check mode runs every preflight and safety check and returns the plan of the survey.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
  async:
    description: Supports being used with the C(async) action.
    support: full
    details:
      - Set the module's O(timeout) below the task's C(async) value.
'''

    # The controller-side actions (results store, run location, plan, report): they run on the controller once
    # per task host, never on the node; each module adds its own check_mode attribute.
    CONTROLLER_ACTION = r'''
options: {}
attributes:
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
  async:
    description: Supports being used with the C(async) action.
    support: none
  bypass_host_loop:
    description: Forces a 'global' task that does not execute per host, this bypasses per host templating and serial,
      throttle and other loop considerations.
    support: none
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
  platform:
    description: Target OS/families that can be operated against.
    support: N/A
    platforms: posix
'''

    # A module that changes a node's settings in place (block_queue): quick, no async; each module adds the details
    # of its check mode.
    NODE_SETTING = r'''
options: {}
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
  async:
    description: Supports being used with the C(async) action.
    support: none
  platform:
    description: Target OS/families that can be operated against.
    support: N/A
    platforms: posix
'''
