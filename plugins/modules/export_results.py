# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# Documentation only: the work is done on the controller by plugins/action/export_results.py.

from __future__ import annotations

DOCUMENTATION = r'''
module: export_results
author:
  - lustre.iokit contributors (@lustre)
version_added: 0.2.0
short_description: Publish a stored run's survey results to Prometheus and InfluxDB, on the controller
description:
  - Reads the survey results of a stored run from the results store and writes, for each survey, one value per
    component, test and sweep point (the median over the point's iterations), in base units (bytes per second,
    operations per second, seconds). The values are the report's samples (the same extraction), so a dashboard and
    C(report.html) show the same figures.
  - B(Prometheus) (O(prometheus_dir)). For node_exporter's textfile collector, C(lustre_iokit_<survey>.prom)
    without timestamps, HELP and TYPE once per metric name, the metrics named
    C(lustre_iokit_<survey>_<test>_bytes_per_second) or C(..._operations_per_second) and labelled as the Lustre
    exporters label their own (C(component="ost"), C(target="testfs-OST0003")) plus C(host) and the sweep point's
    labels (C(threads), C(objects), C(record_size_kib)...). The run id is only on C(lustre_iokit_run_info). One file
    per survey holds the survey's latest exported run, so a later run replaces the earlier one's series in a single
    rename. For history at the run's real time, C(lustre_iokit_<survey>.<run_id>.om) (OpenMetrics with the run's
    finish time and C(# EOF)), which C(promtool tsdb create-blocks-from openmetrics) turns into TSDB blocks; the
    collector ignores it.
  - B(InfluxDB) (O(influx_file), O(influx_url)). Line protocol with the measurement C(lustre_iokit_<survey>), the
    tags C(name) (the target, Telegraf's lustre2 join key), C(component), C(host) and the sweep point's, one field
    per test and the run id as a string field, at the run's finish time in nanoseconds. Publishing a run again
    writes the same series keys at the same time, which InfluxDB overwrites instead of adding points.
  - Every file is written to a temporary name in its directory and renamed over the old one, so a reader sees the
    old file or the new one, never a half-written one.
  - With O(check_only) (and in check mode) only the destinations are checked, naming the variable of the first
    that is wrong; the collection's preflight does so before any node is touched. A directory is created if missing
    and a probe file is written and removed in it.
  - Does nothing when no destination is set. Runs on the controller only; never contacts the node.
  - See C(docs/monitoring.md) for pointing node_exporter at the directory, the backfill and the Grafana dashboard.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
  - lustre.iokit.attributes.controller_action
attributes:
  check_mode:
    support: full
    details: Checks the destinations (creates nothing) and writes nothing.
options:
  results_dir:
    description: The results directory (C(iokit_run.results_dir) of M(lustre.iokit.results_location)).
    type: path
  run_id:
    description: The stored run to export.
    type: str
  surveys:
    description:
      - The surveys of the run to export; a survey the run has no result of is listed in RV(missing).
      - Defaults to every survey the run has a result of.
      - The InfluxDB file always holds every survey the run has a result of, rewritten at each export.
    type: list
    elements: str
  check_only:
    description: Only check the destinations; export nothing.
    type: bool
    default: false
  prometheus_dir:
    description:
      - The directory of node_exporter's textfile collector to write the C(.prom) and C(.om) files to; relative to
        the working directory of C(ansible-playbook), C(~) expanded. Empty turns this output off.
      - Defaults to the variable C(iokit_export_prometheus_dir).
    type: raw
  influx_file:
    description:
      - A file to write the run's line protocol to (for C(influx write) or Telegraf's file input). Empty turns this
        output off.
      - Defaults to the variable C(iokit_export_influx_file).
    type: raw
  influx_url:
    description:
      - The InfluxDB base URL (C(http://influx.example:8086)); the lines are posted to C(<url>/api/v2/write) (InfluxDB
        2.x, or 1.8 and newer with its 2.x compatibility API). Empty turns this output off.
      - A write InfluxDB refuses, or that cannot reach it, fails the task with the number of lines written and not
        written.
      - Defaults to the variable C(iokit_export_influx_url).
    type: raw
  influx_token:
    description:
      - 'The API token (sent as C(Authorization: Token ...)); required with O(influx_url). Not logged.'
      - Defaults to the variable C(iokit_export_influx_token).
    type: raw
  influx_bucket:
    description:
      - The bucket to write to; required with O(influx_url).
      - Defaults to the variable C(iokit_export_influx_bucket).
    type: raw
  influx_org:
    description:
      - The organisation of the bucket, when the token does not imply it.
      - Defaults to the variable C(iokit_export_influx_org).
    type: raw
seealso:
  - module: lustre.iokit.results_location
  - module: lustre.iokit.store_result
  - module: lustre.iokit.iokit_report
'''

EXAMPLES = r'''
- name: Check the export destinations before any node is touched
  lustre.iokit.export_results:
    check_only: true
  run_once: true

- name: Publish the obdfilter results of this run to node_exporter's textfile directory
  lustre.iokit.export_results:
    results_dir: "{{ iokit_run.results_dir }}"
    run_id: "{{ iokit_run.run_id }}"
    surveys: [obdfilter]
    prometheus_dir: /var/lib/prometheus/node-exporter
  run_once: true

- name: Publish a stored run to InfluxDB
  lustre.iokit.export_results:
    results_dir: ./iokit-results
    run_id: 20261122T101500Z-3f2a
    influx_url: http://influx.example:8086
    influx_token: "{{ vault_influx_token }}"
    influx_bucket: lustre
    influx_org: hpc
  run_once: true
'''

RETURN = r'''
enabled:
  description: Whether any destination is set.
  returned: always
  type: bool
  sample: true
surveys:
  description: The surveys exported.
  returned: always
  type: list
  elements: str
  sample: [obdfilter]
missing:
  description: The surveys asked for in O(surveys) that the run has no result of.
  returned: always
  type: list
  elements: str
  sample: []
files:
  description: The files written.
  returned: always
  type: list
  elements: str
  sample:
    - /var/lib/prometheus/node-exporter/lustre_iokit_obdfilter.prom
    - /var/lib/prometheus/node-exporter/lustre_iokit_obdfilter.20261122T101500Z-3f2a.om
prometheus_dir:
  description: The textfile directory, absolute; empty when that output is off.
  returned: always
  type: str
  sample: /var/lib/prometheus/node-exporter
influx_file:
  description: The line protocol file, absolute; empty when that output is off.
  returned: always
  type: str
  sample: /srv/iokit/run.lp
influx_lines:
  description: The lines to post to InfluxDB (0 when O(influx_url) is not set).
  returned: always
  type: int
  sample: 120
influx_written:
  description: The lines InfluxDB accepted; on a failed write, those accepted before the refused batch.
  returned: always
  type: int
  sample: 120
problems:
  description: Records of the exported results that gave no value, and result files that could not be read.
  returned: always
  type: list
  elements: str
  sample: []
'''
