# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import os

from ansible_collections.lustre.iokit.plugins.module_utils.parsers.proc_mounts import parse_proc_mounts

FIXTURES = os.path.join(os.path.dirname(__file__), 'fixtures', 'proc_mounts')


def _parsed(name):
    with open(os.path.join(FIXTURES, name + '.txt'), encoding='utf-8') as handle:
        return parse_proc_mounts(handle.read())


def test_one_lustre_client_mount_with_its_fsname():
    lustre = [mount for mount in _parsed('client_one_lustre') if mount['lustre']]
    assert [(m['mount_point'], m['type'], m['fsname']) for m in lustre] == [('/mnt/testfs', 'lustre', 'testfs')]
    assert lustre[0]['device'] == '10.0.0.1@o2ib,10.0.0.2@o2ib:/testfs' and 'flock' in lustre[0]['options']


def test_several_mounts_escaped_paths_and_the_simulator():
    lustre = [(m['mount_point'], m['fsname']) for m in _parsed('client_two_lustre_and_sim') if m['lustre']]
    # an older simulator named no file system; the current one mounts lustre-sim:/<fsname>
    assert lustre == [('/lustre/scratch', 'scratch'), ('/lustre/my home', 'home'), ('/tmp/sim/mnt', None),
                      ('/tmp/sim2/mnt', 'simfs')]


def test_lines_that_are_no_mounts_are_skipped():
    assert parse_proc_mounts('garbage\n\nnone none\n') == []
