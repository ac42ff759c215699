# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where the history database is: ``iokit_history_dsn`` parsed, masked for messages, and kept off Lustre.

Two forms (docs/history.md)::

    sqlite:///var/lib/lustre-iokit/history.sqlite      # a file on the controller (Python's sqlite3)
    postgresql://iokit:secret@db.example.org/iokit      # a PostgreSQL server (psycopg 3)

An empty or unset ``iokit_history_dsn`` means ``sqlite:///<iokit_results_dir>/history.sqlite``: the history sits
beside the results it indexes (``DEFAULT_FILE_NAME``).  Every message names the DSN as ``Dsn.shown``, with the
password masked.
"""

from __future__ import annotations

import os
import re
import typing as t
import urllib.parse

from ansible_collections.lustre.iokit.plugins.module_utils.parsers.proc_mounts import LUSTRE_CLIENT_TYPES
from ansible_collections.lustre.iokit.plugins.module_utils.safety import parse_mountinfo
from ansible_collections.lustre.iokit.plugins.plugin_utils.history.errors import HistoryLocationError

SQLITE = 'sqlite'
POSTGRESQL = 'postgresql'
DEFAULT_FILE_NAME = 'history.sqlite'
VARIABLE = 'iokit_history_dsn'
# Read to find the file system a SQLite path is on (tests point it at a file of their own).
MOUNTINFO_PATH = '/proc/self/mountinfo'
MASK = '***'

_SQLITE_PREFIX = 'sqlite://'
_POSTGRESQL_SCHEMES = ('postgresql', 'postgres')
_QUERY_PASSWORD = re.compile(r'([?&])password=[^&#]*')


class Dsn(t.NamedTuple):
    """A parsed ``iokit_history_dsn``."""

    kind: str     # SQLITE or POSTGRESQL
    target: str   # the SQLite file's absolute path, or the PostgreSQL URI as given (password included)
    shown: str    # the DSN as messages name it: the password masked
    default: bool = False  # made by resolve_dsn beside the results, not given

    def __str__(self) -> str:
        return self.shown


def default_dsn(results_dir: str) -> str:
    """``sqlite:///<results_dir>/history.sqlite``: the history beside the results store it indexes."""
    return _SQLITE_PREFIX + os.path.join(os.path.abspath(os.path.expanduser(results_dir)), DEFAULT_FILE_NAME)


def mask_password(text: str) -> str:
    """``text`` (a DSN) with the password of its user part and any ``password=`` query value replaced by ``***``."""
    scheme, separator, rest = text.partition('://')
    if separator:
        authority, slash, tail = rest.partition('/')
        if '@' in authority:
            userinfo, host = authority.rsplit('@', 1)
            if ':' in userinfo:
                authority = '%s:%s@%s' % (userinfo.split(':', 1)[0], MASK, host)
        text = scheme + separator + authority + slash + tail
    return _QUERY_PASSWORD.sub(r'\g<1>password=' + MASK, text)


def parse_dsn(value: t.Any, variable: str = VARIABLE) -> Dsn:
    """The Dsn of ``value``; ValueError naming ``variable`` for anything that is neither form.

    ``sqlite://`` is followed by an absolute path (``sqlite:///var/lib/h.sqlite`` and ``sqlite:////var/lib/h.sqlite``
    both mean ``/var/lib/h.sqlite``; ``sqlite:///~/h.sqlite`` is under the home directory).  A PostgreSQL DSN is a
    libpq URI, ``postgresql://`` or ``postgres://``, passed to the driver as given.
    """
    if not isinstance(value, str) or not value.strip():
        raise ValueError('%s: must be sqlite:///<absolute path> or postgresql://..., got %r' % (variable, value))
    value = value.strip()
    if value.startswith(_SQLITE_PREFIX):
        return _parse_sqlite(value, variable)
    scheme = value.split(':', 1)[0].lower() if ':' in value else ''
    if scheme in _POSTGRESQL_SCHEMES and value[len(scheme):].startswith('://'):
        shown = mask_password(value)
        parts = urllib.parse.urlsplit(value)
        if not parts.netloc and not parts.query:
            raise ValueError('%s: %s names no server; give postgresql://user@host/database (or '
                             'postgresql:///database?host=/run/postgresql for a local socket)' % (variable, shown))
        return Dsn(POSTGRESQL, value, shown)
    raise ValueError('%s: %s is neither sqlite:///<absolute path> nor postgresql://user@host/database'
                     % (variable, mask_password(value)))


def _parse_sqlite(value: str, variable: str) -> Dsn:
    rest = value[len(_SQLITE_PREFIX):]
    if '?' in rest or '#' in rest:
        raise ValueError('%s: %s: a SQLite DSN is a path only, without ?options' % (variable, value))
    if not rest.startswith('/'):
        raise ValueError('%s: %s: give an absolute path after sqlite:// (sqlite:///var/lib/lustre-iokit/%s)'
                         % (variable, value, DEFAULT_FILE_NAME))
    path = '/' + rest.lstrip('/')
    if path == '/~' or path.startswith('/~/'):
        path = os.path.expanduser(path[1:])
    path = os.path.normpath(path)
    if path == '/' or path.endswith(os.sep):
        raise ValueError('%s: %s names no file' % (variable, value))
    return Dsn(SQLITE, path, _SQLITE_PREFIX + path)


def resolve_dsn(value: t.Any, results_dir: str, variable: str = VARIABLE) -> Dsn:
    """The Dsn of ``value``, or of the default beside ``results_dir`` when ``value`` is None or empty."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return parse_dsn(default_dsn(results_dir), variable)._replace(default=True)
    return parse_dsn(value, variable)


# --------------------------------------------------------------------------
# Never on Lustre


def nearest_existing(path: str) -> str:
    """``path`` or its nearest ancestor that exists (symbolic links followed)."""
    path = os.path.abspath(path)
    while not os.path.exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return os.path.realpath(path)


def mount_of(path: str, mountinfo_path: str | None = None) -> tuple[str, str | None]:
    """``(mount point, file-system type)`` of the mount that holds ``path`` (which exists): the longest mount point
    above it in ``/proc/self/mountinfo`` (the last one listed at that point, which is on top)."""
    try:
        with open(mountinfo_path or MOUNTINFO_PATH, encoding='utf-8', errors='replace') as handle:
            mounts = parse_mountinfo(handle.read())
    except OSError:
        return '/', None
    best: tuple[str, str | None] = ('/', None)
    for mount in mounts:
        point = mount['mountpoint']
        inside = path == point or point == '/' or path.startswith(point.rstrip('/') + '/')
        if inside and len(point) >= len(best[0]):
            best = (point, mount['fstype'])
    return best


def check_placement(dsn: Dsn, variable: str = VARIABLE) -> None:
    """Refuse a SQLite file on a Lustre file system (HistoryLocationError naming the DSN and what to do).

    The history must outlive the file system the surveys measure, fill and sometimes break, and SQLite's locks need
    the ``flock`` mount option that a Lustre client may not have.  The simulator's client mount (``fuse.lustre-sim``)
    counts as Lustre.  A PostgreSQL DSN is the server's business.
    """
    if dsn.kind != SQLITE:
        return
    existing = nearest_existing(dsn.target)
    point, fstype = mount_of(existing)
    if fstype in LUSTRE_CLIENT_TYPES:
        raise HistoryLocationError(
            '%s: %s%s is on a Lustre file system (%s, type %s): the history must not live on the file system the '
            'surveys measure. Set %s to a path on a local disk of the controller (sqlite:///var/lib/lustre-iokit/%s) '
            'or to a PostgreSQL server (postgresql://user@host/database)'
            % (variable, dsn.shown, ' (unset: the default beside the results)' if dsn.default else '', point, fstype,
               variable, DEFAULT_FILE_NAME), dsn.shown)
