# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# The option of every survey module that resumes a killed run; paired with progress.resume_argument_spec().

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r'''
options:
  force_rerun:
    description:
      - With O(engine=native), a run id that ran here before resumes - the points its earlier attempts finished
        (kept in O(workdir)/O(run_id)/C(<survey>.points.jsonl)) go into the envelope, each with its C(attempt),
        and only the others are measured; the envelope lists the attempts with their start and end in
        C(attempts). Earlier points of other parameters fail the module (a changed sweep is a new run); another
        O(timeout) is not another sweep.
      - V(true) forgets the earlier attempts and measures every point again.
    type: bool
    default: false
'''
