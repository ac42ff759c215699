# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# Sweep options with the same name and default in every I/O-kit survey; paired with survey_args.sweep_argument_spec().

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r'''
options:
  rszlo:
    description:
      - Smallest record size in KiB (the I/O kit's C(rszlo)); the sweep doubles it up to O(rszhi).
    type: int
    default: 1024
  rszhi:
    description:
      - Largest record size in KiB (the I/O kit's C(rszhi)).
    type: int
    default: 1024
  thrlo:
    description:
      - Smallest thread count (the I/O kit's C(thrlo)); the sweep doubles it up to the survey's C(thrhi).
    type: int
    default: 1
'''
