# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: parse_ior
author: lustre.iokit contributors
version_added: 1.0.0
short_description: Parse IOR output into one record per run
description:
  - Reads the output of the IOR benchmark, versions 2.10 to 4.x - the C(IOR-x.y) banner, the options block,
    the per-iteration rows under the C(access) header, the C(Max Write) / C(Max Read) lines and the
    C(Summary of all tests) table - and returns one record per run, in the order printed.
  - A text may hold several runs (a sweep, a batch log, a commit message comparing two builds). A new run starts at
    each banner, at a second C(Max Write) or C(Max Read) line, at a repeated results header with no banner between,
    and at each C(TestID) of a multi-test invocation; C(Finished) closes a run.
  - Output written with C(-O summaryFormat=JSON) or C(-O summaryFormat=CSV) is read into the same shape.
  - Columns are found by their header names, so a version that adds columns (C(IOPS), the C(Stonewall) ones) is read too;
    a row cut short by a truncated paste is dropped, never half read.
  - IOR's own error lines (C(ior ERROR:), C(ERROR:), C(FAILED)) and the MPI abort line are kept in RV(_value[].errors);
    a run that failed before its summary still gives its record with what was printed.
  - Text in another format gives an empty list.
options:
  _input:
    description: The IOR output text (stdout of the run, a saved log, a pasted excerpt).
    type: string
    required: true
'''

EXAMPLES = r'''
- name: Parse a saved IOR log
  ansible.builtin.set_fact:
    ior_runs: "{{ lookup('file', 'results/client1/ior.out') | lustre.iokit.parse_ior }}"

- name: Best write bandwidth of every run
  ansible.builtin.debug:
    msg: "{{ ior_runs | map(attribute='max') | map(attribute='write', default={}) | map(attribute='mib_s', default=none) | list }}"

- name: Fail when the mean aggregate write of the first run is below the acceptance floor
  vars:
    write_row: "{{ ior_runs[0].summary | selectattr('operation', 'equalto', 'write') | first }}"
  ansible.builtin.assert:
    that: write_row.mean_mib_s >= 10000
    fail_msg: "aggregate write {{ write_row.mean_mib_s }} MiB/s with {{ ior_runs[0].tasks }} tasks is below 10000 MiB/s"
'''

RETURN = r'''
_value:
  description: One record per IOR run found in the text, in the order printed; empty when there is none.
  type: list
  elements: dict
  contains:
    version:
      description: IOR version from the banner (C(2.10.3), C(3.3.0), C(3.4.0+dev), C(4.0.0)), or null.
      type: str
    command:
      description: The command line IOR printed (C(Command line) or C(Command line used)), or null.
      type: str
    api:
      description: I/O API (C(POSIX), C(MPIIO), ...) from the options block, else from the summary; or null.
      type: str
    access:
      description: C(file-per-process) or C(single-shared-file) as printed in the options block, or null.
      type: str
    tasks:
      description: Number of MPI tasks (options C(tasks), else C(Participating tasks), else the summary's C(#Tasks)).
      type: int
    nodes:
      description: Number of nodes, only when IOR prints a C(nodes) line (never worked out from tasks); or null.
      type: int
    tasks_per_node:
      description: Tasks per node (C(clients per node), else the summary's C(tPN)), or null.
      type: int
    repetitions:
      description: Iterations of the test (C(-i)), or null.
      type: int
    segments:
      description: Segment count (C(-s)), or null.
      type: int
    transfer_size_bytes:
      description: Transfer size (C(-t)) in bytes, or null.
      type: int
    block_size_bytes:
      description: Block size per task (C(-b)) in bytes, or null.
      type: int
    results:
      description:
        - The per-iteration rows as printed (C(write), C(read), and C(remove) where IOR prints it).
        - Keys C(access), C(bw_mib_s), C(iops), C(latency_s), C(block_kib), C(xfer_kib), C(open_s), C(wrrd_s),
          C(close_s), C(total_s), C(iter); a column an older IOR lacks, or a C(-) in it, is null.
      type: list
      elements: dict
    summary:
      description:
        - Rows of the C(Summary of all tests) table (or the JSON C(summary)), one per operation and test.
        - Keys C(operation), C(max_mib_s), C(min_mib_s), C(mean_mib_s), C(stddev_mib_s), C(max_ops), C(min_ops),
          C(mean_ops), C(stddev_ops), C(mean_s), C(stonewall_s), C(stonewall_mib_s), C(test), C(tasks),
          C(tasks_per_node), C(repetitions), C(file_per_process) (boolean from C(fPP)), C(segments),
          C(block_size_bytes), C(transfer_size_bytes), C(aggregate_mib) (MiB even where IOR printed bytes), C(api).
        - Bandwidths are MiB/s (2^20 bytes per second); columns the version does not print are null.
      type: list
      elements: dict
    max:
      description:
        - The C(Max Write) / C(Max Read) lines by operation - C(write) and/or C(read), each with C(mib_s) and
          C(mb_s) (the decimal MB/s IOR prints in brackets). Empty when the text has none.
      type: dict
    errors:
      description: IOR's own error lines and the MPI abort line, verbatim; empty when there are none.
      type: list
      elements: str
    task_timings:
      description:
        - Only present when the text holds IOR's per-task timer lines (verbosity 3, C(-v -v -v)); absent otherwise.
        - One record per iteration, phase and task (MPI rank), in the order first printed, with keys C(test),
          C(iter), C(access) (C(write) or C(read)), C(task), the six wall-clock stamps in seconds since the epoch
          C(open_start), C(open_stop), C(start), C(stop), C(close_start), C(close_stop), and the spans worked out
          from them, C(open_s), C(wrrd_s) (start to stop), C(close_s) and C(total_s) (open start to close stop).
        - A stamp the text lacks (a truncated paste) is null, and so is every span that needs it.
        - The stamps are each task's own clock; IOR prints no host name with them, so which node ran a task
          follows from how the launcher placed the ranks.
      type: list
      elements: dict
'''

from ansible_collections.lustre.iokit.plugins.module_utils.parsers.ior import parse_ior
from ansible_collections.lustre.iokit.plugins.plugin_utils.parser_filters import make_parser_filter


class FilterModule(object):
    def filters(self):
        return {'parse_ior': make_parser_filter('parse_ior', parse_ior)}
