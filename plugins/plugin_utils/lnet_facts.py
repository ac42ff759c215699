# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which node owns each NID, from what the lnet role found on the hosts of this playbook run.

The lnet survey's records name NIDs only; the role sets each host's ``lnet_host_nid`` (its ``lctl list_nids``) while
it prepares the run, and the report (its diagnosis) and the history (a NID's identity) read it from ``hostvars``.
The survey's envelope also records the owners the role passed it (``environment.nid_owners``), which the history
prefers (``history/identity.py``), so that results imported without this play's facts keep them.
"""

from __future__ import annotations

import typing as t


def nid_owners(hostvars: t.Mapping, hosts: t.Iterable[str], given: t.Mapping | None = None) -> dict[str, str]:
    """Each NID with the host of ``hosts`` whose ``lnet_host_nid`` it is, then the ``given`` ``{nid: host}``, which
    win."""
    owners = {}
    for host in hosts:
        nid = hostvars[host].get('lnet_host_nid') if host in hostvars else None
        if nid:
            owners[str(nid)] = host
    owners.update(given or {})
    return owners
