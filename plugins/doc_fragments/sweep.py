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

    # The adaptive sweep (module_utils/adaptive.py), paired with adaptive.adaptive_sweep_argument_spec().
    ADAPTIVE = r'''
options:
  sweep:
    description:
      - V(full) runs every point of the grid, as the I/O kit does.
      - V(adaptive) stops doubling the threads of an inner sweep once the figure is flat or falls (the outer
        dimensions carry on) and lists every point it skipped, with the reason, in C(skipped_points).
      - A point that gains less than O(sweep_min_gain_pct) on the best so far is flat; O(sweep_patience) flat
        points in a row stop the inner sweep; a fall of more than O(sweep_min_gain_pct) stops it at once; a
        point whose min..max spread is wider than the gain never stops it.
      - Each test of each component (OST, device, MDT) is its own curve, judged on that component's own figure and
        min..max, and the inner sweep stops when every one of them does, so a component slower than its peers does
        not keep it going while one still rising does.
      - Keep V(full) for acceptance against a contract that names the full grid.
    type: str
    choices: [full, adaptive]
    default: full
  sweep_min_gain_pct:
    description: The gain, in percent of the best figure so far, below which a point counts as flat.
    type: float
    default: 3.0
  sweep_patience:
    description: How many flat points in a row stop an inner sweep.
    type: int
    default: 1
'''
