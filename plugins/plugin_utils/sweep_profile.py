# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The sweep profiles: one setting, ``iokit_sweep_profile``, that chooses how every survey of a run sweeps.

* ``full`` (the default): every point of the grid at the I/O kit's fixed size, as the I/O kit does; the results
  compare with the I/O kit's and with any contract that names its grid.
* ``fast``: an adaptive sweep (each inner sweep stops at its plateau), each inner sweep after the first starting
  one doubling below the previous one's knee, and time-bounded points of ``point_budget.FAST_POINT_S`` seconds per
  test, never below the survey's floor (docs/adaptive-sweeps.md says what each buys and when to use it).

A profile only fills the survey variables a user left unset (absent or null): ``obdfilter_sweep: full`` under the
fast profile keeps that survey's full grid.  Each survey takes the settings its module has (the ost survey has no
thread sweep, only bounded points; ior and lnet none of them), and only where they apply: the I/O kit's own scripts
(``iokit_engine=iokit``) run their fixed grid, obdfilter bounds its points only on the OSTs themselves
(``obdfilter_case=disk``; through the network there is no device cache to size a floor from), and ost only when
``ost_point_min_mib`` is given (its floor is the OSS's cache, which the client it runs on cannot read, so it has no
default and the module refuses bounded points without it).  The values are given under the role variables'
names, so that the preflight checks and the module gets exactly what the profile set
(``survey_call.computed_values``).
"""

from __future__ import annotations

from ansible_collections.lustre.iokit.plugins.module_utils.point_budget import FAST_POINT_S

SETTING = 'iokit_sweep_profile'
DEFAULT = 'full'

# profile -> module option -> the value it gives where the survey's variable is unset
PROFILES = {
    'full': {'sweep': 'full', 'sweep_start_near_knee': False, 'point_s': None},
    'fast': {'sweep': 'adaptive', 'sweep_start_near_knee': True, 'point_s': FAST_POINT_S},
}


def problem(value):
    """The rule ``value`` of ``iokit_sweep_profile`` breaks, or None."""
    return None if value in PROFILES else 'must be one of %s' % ', '.join(sorted(PROFILES))


def profile_values(prefix, options, profile, get, engine):
    """The role variables (``<prefix><option>``) the ``profile`` sets: those of its options in ``options`` (the
    survey module's) that apply and whose variable is unset (``get(name)``, the variable's value, is None); {} for
    an unknown profile (the preflight names it).  The I/O kit's scripts (``engine`` other than native) take the full
    profile whatever is asked: they run their own fixed grid."""
    settings = PROFILES.get(profile if engine == 'native' else DEFAULT)
    if settings is None:
        return {}
    values = dict((prefix + option, value) for option, value in settings.items()
                  if option in options and get(prefix + option) is None)
    if prefix == 'obdfilter_' and (get('obdfilter_case') or 'disk') != 'disk' and 'obdfilter_point_s' in values:
        values['obdfilter_point_s'] = None
    if prefix == 'ost_' and get('ost_point_min_mib') is None and 'ost_point_s' in values:
        values['ost_point_s'] = None
    return values
