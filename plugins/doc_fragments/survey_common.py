# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# The options every survey module shares; paired with plugins/module_utils/survey_args.py.

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r'''
options:
  engine:
    description:
      - V(native) drives the low-level tools directly; V(iokit) runs the node's installed lustre-iokit script
        with the same parameters and parses its summary into the same records.
    type: str
    choices: [native, iokit]
    default: native
  timeout:
    description:
      - Seconds the survey may run on the node. On expiry every child process group gets SIGTERM, then SIGKILL
        after a short grace; the points measured so far are returned with RV(status=partial).
      - Under C(async), set it below the task's C(async) value, so that the module returns before Ansible's
        async wrapper kills it.
      - Unset means no limit.
    type: int
  run_id:
    description:
      - Identifier of the run, shared by every host and survey of one playbook run; letters, digits, C(.), C(_)
        and C(-), at most 64 characters.
      - Default is a fresh UTC timestamp with a random suffix, such as C(20261122T101500Z-3f2a).
    type: str
  launch_id:
    description:
      - Identifies this start of the survey; everything the module records in the node state under O(workdir)
        carries it, so that the cleanup of one launch (O(lustre.iokit.iokit_cleanup#module:launch_id)) undoes nothing
        of another launch of the same O(run_id) that is still running.
      - The survey roles give the playbook run's (RV(lustre.iokit.results_location#module:launch_id)); default a fresh
        random id.
    type: str
  workdir:
    description:
      - Scratch directory on the node; the raw output goes to O(workdir)/O(run_id)/.
    type: path
    default: /tmp/lustre-iokit
  start_signal:
    description:
      - A file on the node whose appearance starts the measurement, so that the surveys of a whole fleet begin
        together however long the controller takes to launch them all (fewer forks than hosts, a busy
        controller). Once the module has taken its node lock and recorded itself for the cleanup, it waits for
        the file, removes it, and measures.
      - If the file does not appear within 15 minutes (the controller that launched the survey is gone), the
        module fails naming it, having measured nothing.
      - The survey roles launch every host's survey with C(poll=0), then create the file on every host in one
        task; unset, the survey starts at once.
    type: path
'''
