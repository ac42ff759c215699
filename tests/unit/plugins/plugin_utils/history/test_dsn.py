# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""iokit_history_dsn: its two forms, the default beside the results, the password never shown, never on Lustre."""

from __future__ import annotations

import os

import pytest

from ansible_collections.lustre.iokit.plugins.plugin_utils.history import dsn as dsn_module
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.dsn import (
    POSTGRESQL, SQLITE, check_placement, mask_password, parse_dsn, resolve_dsn)
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.errors import HistoryLocationError
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.store import History


@pytest.mark.parametrize('value, path', [
    ('sqlite:///var/lib/lustre-iokit/history.sqlite', '/var/lib/lustre-iokit/history.sqlite'),
    ('sqlite:////var/lib/lustre-iokit/history.sqlite', '/var/lib/lustre-iokit/history.sqlite'),
    (' sqlite:///var/lib/x/../history.sqlite ', '/var/lib/history.sqlite'),
])
def test_a_sqlite_dsn_is_an_absolute_path(value, path):
    parsed = parse_dsn(value)
    assert (parsed.kind, parsed.target, parsed.shown) == (SQLITE, path, 'sqlite://' + path)


def test_a_sqlite_dsn_may_start_at_the_home_directory():
    assert parse_dsn('sqlite:///~/.local/share/lustre-iokit/history.sqlite').target == os.path.expanduser(
        '~/.local/share/lustre-iokit/history.sqlite')


@pytest.mark.parametrize('value, message', [
    ('sqlite://history.sqlite', 'give an absolute path after sqlite://'),
    ('sqlite:///', 'names no file'),
    ('sqlite:///var/h.sqlite?mode=ro', 'a path only'),
    ('mysql://iokit@db/iokit', 'neither sqlite'),
    ('/var/lib/history.sqlite', 'neither sqlite'),
    ('postgresql://', 'names no server'),
    (42, 'must be sqlite'),
    ('', 'must be sqlite'),
])
def test_anything_else_is_refused_naming_the_variable(value, message):
    with pytest.raises(ValueError, match=message) as raised:
        parse_dsn(value)
    assert str(raised.value).startswith('iokit_history_dsn: ')


def test_a_postgresql_dsn_is_passed_as_given_and_shown_without_its_password():
    given = 'postgresql://iokit:s3cret@db.example.org:5433/iokit?sslmode=require'
    parsed = parse_dsn(given)
    assert (parsed.kind, parsed.target) == (POSTGRESQL, given)
    assert parsed.shown == 'postgresql://iokit:***@db.example.org:5433/iokit?sslmode=require' == str(parsed)
    assert parse_dsn('postgres:///iokit?host=/run/postgresql&password=s3cret').shown == \
        'postgres:///iokit?host=/run/postgresql&password=***'
    with pytest.raises(ValueError) as raised:
        parse_dsn('mysql://iokit:s3cret@db/iokit')
    assert 's3cret' not in str(raised.value)


def test_mask_password_leaves_a_dsn_without_one_alone():
    assert mask_password('postgresql://iokit@db/iokit') == 'postgresql://iokit@db/iokit'


def test_no_dsn_means_a_file_beside_the_results(tmp_path):
    for unset in (None, '', '  '):
        parsed = resolve_dsn(unset, str(tmp_path / 'iokit-results'))
        assert parsed.target == str(tmp_path / 'iokit-results' / 'history.sqlite')
    assert resolve_dsn('sqlite:///srv/h.sqlite', str(tmp_path)).target == '/srv/h.sqlite'


MOUNTINFO = '''\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
40 22 0:35 / /lustre/testfs rw,relatime shared:20 - lustre 10.0.0.1@tcp:/testfs rw,flock
41 22 0:36 / /mnt/sim\\040client rw,nosuid,nodev shared:21 - fuse.lustre-sim lustre-sim:/testfs rw
42 40 8:2 / /lustre/testfs/local rw,relatime shared:22 - xfs /dev/sdb1 rw
'''


@pytest.fixture
def mounts(tmp_path, monkeypatch):
    """The mount lookup reads this machine's mounts from MOUNTINFO, with every mount point made under tmp_path."""
    text = MOUNTINFO.replace(' /lustre/', ' %s/lustre/' % tmp_path).replace(' /mnt/', ' %s/mnt/' % tmp_path)
    path = tmp_path / 'mountinfo'
    path.write_text(text)
    monkeypatch.setattr(dsn_module, 'MOUNTINFO_PATH', str(path))
    for directory in ('lustre/testfs/acceptance', 'mnt/sim client', 'lustre/testfs/local', 'var'):
        (tmp_path / directory).mkdir(parents=True)
    return tmp_path


@pytest.mark.parametrize('where, mount, fstype', [
    ('lustre/testfs/acceptance/history.sqlite', 'lustre/testfs', 'lustre'),
    # The nearest existing parent decides: the directories are made later.
    ('lustre/testfs/new/dirs/history.sqlite', 'lustre/testfs', 'lustre'),
    ('mnt/sim client/history.sqlite', 'mnt/sim client', 'fuse.lustre-sim'),
])
def test_a_sqlite_file_on_lustre_is_refused_with_what_to_do(mounts, where, mount, fstype):
    dsn = parse_dsn('sqlite://%s/%s' % (mounts, where))
    with pytest.raises(HistoryLocationError) as raised:
        check_placement(dsn)
    message = str(raised.value)
    assert message.startswith('iokit_history_dsn: %s is on a Lustre file system (%s/%s, type %s)'
                              % (dsn.shown, mounts, mount, fstype))
    assert 'sqlite:///var/lib/lustre-iokit/history.sqlite' in message and 'postgresql://' in message
    # History refuses it before creating anything there.
    with pytest.raises(HistoryLocationError):
        History(dsn)
    assert not os.path.exists(dsn.target)


def test_a_local_file_system_is_accepted_even_under_a_lustre_mount(mounts):
    check_placement(parse_dsn('sqlite://%s/var/history.sqlite' % mounts))
    check_placement(parse_dsn('sqlite://%s/lustre/testfs/local/history.sqlite' % mounts))
    check_placement(parse_dsn('postgresql://iokit@db/iokit'))
