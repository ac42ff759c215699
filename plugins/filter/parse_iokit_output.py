# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: parse_iokit_output
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Parse the output of any Lustre I/O-kit tool, chosen by format name
description:
  - Parses O(_input) with the parser named by O(output_format), so that a task that loops over
    outputs of several tools does not need one filter per tool.
  - The result is exactly what the dedicated filter returns (for example
    P(lustre.iokit.parse_obdfilter_survey#filter) for C(obdfilter_survey)).
options:
  _input:
    description: The whole text of the tool's output (a summary file or captured stdout/stderr).
    type: string
    required: true
  output_format:
    description: Which tool's output O(_input) is.
    type: string
    required: true
    choices:
      brw_stats: C(lctl get_param osd-*.*.brw_stats) histograms, see P(lustre.iokit.parse_brw_stats#filter).
      ior: IOR output (text, JSON or CSV summaries), see P(lustre.iokit.parse_ior#filter).
      lctl_dl: C(lctl dl) device lists, see P(lustre.iokit.parse_lctl_dl#filter).
      lst_stat: C(lst stat) samples, see P(lustre.iokit.parse_lst_stat#filter).
      lst_survey: lst-survey CSV or table, see P(lustre.iokit.parse_lst_survey#filter).
      mds_survey: mds-survey summaries, see P(lustre.iokit.parse_mds_survey#filter).
      mdtest: mdtest summaries, see P(lustre.iokit.parse_mdtest#filter).
      obdfilter_survey: obdfilter-survey summaries, see P(lustre.iokit.parse_obdfilter_survey#filter).
      ost_survey: ost-survey reports, see P(lustre.iokit.parse_ost_survey#filter).
      sgp_dd: sgp_dd/sg_dd stderr, see P(lustre.iokit.parse_sgp_dd#filter).
      sgpdd_survey: sgpdd-survey summaries, see P(lustre.iokit.parse_sgpdd_survey#filter).
'''

EXAMPLES = r'''
- name: Parse every raw output fetched from the nodes, whatever tool wrote it
  ansible.builtin.set_fact:
    parsed: "{{ parsed | default({}) | combine({item.path | basename: lookup('file', item.path) | lustre.iokit.parse_iokit_output(item.format)}) }}"
  loop:
    - {path: results/oss1/obdfilter_survey.summary, format: obdfilter_survey}
    - {path: results/oss1/sgpdd_survey.summary, format: sgpdd_survey}
'''

RETURN = r'''
_value:
  description:
    - The parsed records, in the shape documented by the dedicated filter of O(output_format).
    - A list for the survey summaries, C(lctl dl), C(lst stat) and C(ior); a dictionary for
      C(ost_survey), C(brw_stats), C(sgp_dd) and C(mdtest).
  type: raw
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.lustre.iokit.plugins.module_utils.parsers.catalog import PARSERS
from ansible_collections.lustre.iokit.plugins.plugin_utils.parser_filters import make_parser_filter

_FILTERS = {name: make_parser_filter('parse_iokit_output(%s)' % name, parser) for name, parser in PARSERS.items()}


def parse_iokit_output(text, output_format):
    """Dispatch to the parser of ``output_format``; unknown formats name the valid ones."""
    if output_format not in _FILTERS:
        raise AnsibleFilterError('parse_iokit_output: unknown output_format %r; expected one of %s'
                                 % (output_format, ', '.join(sorted(_FILTERS))))
    return _FILTERS[output_format](text)


class FilterModule(object):
    def filters(self):
        return {'parse_iokit_output': parse_iokit_output}
