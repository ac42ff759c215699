# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: parse_lst_survey
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Parse lst-survey results (CSV file or stdout table) into records
description:
  - Reads either the CSV file that C(lst-survey) writes (C(Servers,Clients,Mode,Read_BW,...); the separator
    chosen with C(-S) is taken from the header) or its stdout table (one block per C(Commence lst-survey)
    with its C(Server Group:) and C(Client Group:) lines).
  - Modes are normalised to C(read_4k), C(read_1m), C(write_4k), C(write_1m), C(rw_<size>) or C(ping).
  - Bandwidth is MiB/s although lst-survey labels it MB/s (it never passes C(--mbs) to lst), and is the mean per node
    of the reported group.
  - "A row cut short by C(Error: Failed to get all samples) is returned with RV(_value[].complete=false)."
  - Text that is neither gives an empty list; input that is not text raises an error naming the filter.
options:
  _input:
    description: The CSV file or the stdout of C(lst-survey), as one string.
    type: string
    required: true
'''

EXAMPLES = r'''
- name: Parse the CSV of an lst-survey run
  ansible.builtin.set_fact:
    lnet_rows: "{{ lookup('file', 'lst_survey.1666207637/results.1666207637.csv') | lustre.iokit.parse_lst_survey }}"

- name: Group pairs whose 1 MiB write test moved less than 1000 MiB/s
  ansible.builtin.debug:
    msg: "{{ item.servers | join(' ') }} <- {{ item.clients | join(' ') }}: {{ item.read_mib_s }} MiB/s"
  loop: "{{ lnet_rows | selectattr('mode', 'equalto', 'write_1m') | selectattr('read_mib_s', 'lt', 1000) }}"

- name: Fail when a group pair could not be measured
  ansible.builtin.assert:
    that: lnet_rows | rejectattr('complete') | list | length == 0
'''

RETURN = r'''
_value:
  description: One record per result row, in the order printed. A value the text does not give is null.
  type: list
  elements: dict
  contains:
    servers:
      description: NIDs (or host names) of the server group; null when the text does not name them.
      type: list
      elements: str
    clients:
      description: NIDs (or host names) of the client group; null when the text does not name them.
      type: list
      elements: str
    mode:
      description: Test, normalised (C(read_4k), C(write_1m), C(rw_4k), C(ping), ...); null for a cut-short row.
      type: str
    read_mib_s:
      description: Bandwidth received by the reported group, MiB/s per node (C(Read_BW), C(Read MB/s)).
      type: float
    read_rpc_s:
      description: Messages received per second per node (C(Read_Rate), C(Read RPC/s)).
      type: float
    write_mib_s:
      description: Bandwidth sent by the reported group, MiB/s per node (C(Write_BW), C(Write MB/S)).
      type: float
    write_rpc_s:
      description: Messages sent per second per node (C(Write_Rate), C(Write RPC/s)).
      type: float
    server_errors:
      description:
        - Server nodes with errors, cumulative over the modes of the group pair (C(Server_Errors)).
        - "In the stdout table only the block's last row carries it (from C(Server Errors: N)); other rows are null."
      type: int
    client_errors:
      description: Client nodes with errors, same rules as RV(_value[].server_errors).
      type: int
    complete:
      description: False for a row that lst-survey left unfinished.
      type: bool
    error:
      description: Why the row is unfinished, null otherwise.
      type: str
'''

from ansible_collections.lustre.iokit.plugins.module_utils.parsers.lst_survey import parse_lst_survey
from ansible_collections.lustre.iokit.plugins.plugin_utils.parser_filters import make_parser_filter


class FilterModule(object):
    def filters(self):
        return {'parse_lst_survey': make_parser_filter('parse_lst_survey', parse_lst_survey)}
