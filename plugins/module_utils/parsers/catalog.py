# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every output parser of the collection, by format name.

Lets a caller that only knows which tool produced a text (a survey's
``engine: iokit`` path, the report role reading raw outputs, the
``parse_iokit_output`` filter) pick the right parser.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.lustre.iokit.plugins.module_utils.parsers.brw_stats import parse_brw_stats
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.ior import parse_ior
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.lctl_dl import parse_lctl_dl
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.lst_stat import parse_lst_stat
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.lst_survey import parse_lst_survey
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.mds_survey import parse_mds_survey
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.mdtest import parse_mdtest
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.obdfilter_survey import parse_obdfilter_survey
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.ost_survey import parse_ost_survey
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.proc_mounts import parse_proc_mounts
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.sgp_dd import parse_sgp_dd
from ansible_collections.lustre.iokit.plugins.module_utils.parsers.sgpdd_survey import parse_sgpdd_survey

PARSERS = {
    'brw_stats': parse_brw_stats,
    'ior': parse_ior,
    'lctl_dl': parse_lctl_dl,
    'lst_stat': parse_lst_stat,
    'lst_survey': parse_lst_survey,
    'mds_survey': parse_mds_survey,
    'mdtest': parse_mdtest,
    'obdfilter_survey': parse_obdfilter_survey,
    'ost_survey': parse_ost_survey,
    'proc_mounts': parse_proc_mounts,
    'sgp_dd': parse_sgp_dd,
    'sgpdd_survey': parse_sgpdd_survey,
}
