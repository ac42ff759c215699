# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the tests of the results history share: the checkout's paths, and a real PostgreSQL server.

    .venv/bin/python -m pytest -q -p no:cacheprovider tests/history

The server is Debian's ``postgresql`` package (requirements-apt.txt): a private cluster made by ``initdb`` in a
temporary directory, listening on a Unix socket in that directory only (no TCP port), run by the ``postgres`` user
when the tests run as root (PostgreSQL refuses root), and stopped at the end of the session whatever happened.
Each test gets a database of its own.  Needs psycopg 3 in the checkout's .venv (requirements-dev.txt).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import re
import shutil
import subprocess
import sys
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# IOKIT_COLLECTIONS_PATH runs another copy of the collection, as in tests/playbooks/conftest.py.
COLLECTIONS = os.environ.get('IOKIT_COLLECTIONS_PATH') or os.path.join(ROOT, '.venv', 'collections')
for _path in reversed(COLLECTIONS.split(os.pathsep)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

VENV_BIN = os.path.join(ROOT, '.venv', 'bin')
ANSIBLE_PLAYBOOK = os.path.join(VENV_BIN, 'ansible-playbook')
LUSTRE_SIM = shutil.which('lustre-sim', path=VENV_BIN + os.pathsep + os.environ.get('PATH', ''))
# A password in every DSN the tests give: the server trusts the socket, and no message may show it.
PASSWORD = 'secret-pw'
SERVER_USER = 'postgres'


def postgres_bin() -> str | None:
    """The newest PostgreSQL server's binaries of the Debian package, or None."""
    found = glob.glob('/usr/lib/postgresql/*/bin/initdb')
    found.sort(key=lambda path: [int(part) for part in re.findall(r'\d+', path)])
    return os.path.dirname(found[-1]) if found else None


class PostgresServer:
    """A private PostgreSQL cluster in ``directory``, on a Unix socket there."""

    def __init__(self, directory: str):
        self.directory = directory
        self.data = os.path.join(directory, 'data')
        self.bin = postgres_bin()
        self.count = 0
        self.lock = threading.Lock()
        if self.bin is None:
            raise RuntimeError('PostgreSQL is not installed: apt-get install postgresql (requirements-apt.txt, '
                               'make setup)')
        self.as_server = []
        if os.geteuid() == 0:
            # PostgreSQL refuses to run as root: the package's own user runs it, and owns its directory.
            account = pwd.getpwnam(SERVER_USER)
            os.chown(directory, account.pw_uid, account.pw_gid)
            self.as_server = ['runuser', '-u', SERVER_USER, '--']
        os.chmod(directory, 0o700)

    def _run(self, *argv):
        completed = subprocess.run(self.as_server + list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   universal_newlines=True, check=False, cwd=self.directory)
        if completed.returncode != 0:
            raise RuntimeError('%s failed (rc %d): %s' % (' '.join(argv), completed.returncode, completed.stdout))
        return completed.stdout

    def start(self):
        self._run(os.path.join(self.bin, 'initdb'), '-D', self.data, '-U', SERVER_USER, '--auth=trust',
                  '--encoding=UTF8', '--no-instructions')
        # No TCP at all; fsync off: a test cluster is thrown away, durability is not what is tested.
        options = "-c listen_addresses='' -c unix_socket_directories=%s -c fsync=off -c max_connections=60" \
            % self.directory
        self._run(os.path.join(self.bin, 'pg_ctl'), '-D', self.data, '-l', os.path.join(self.directory, 'server.log'),
                  '-o', options, '-w', '-t', '120', 'start')

    def stop(self):
        if os.path.exists(os.path.join(self.data, 'postmaster.pid')):
            subprocess.run(self.as_server + [os.path.join(self.bin, 'pg_ctl'), '-D', self.data, '-m', 'immediate',
                                             '-w', 'stop'], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                           check=False, cwd=self.directory)

    def dsn(self, database: str) -> str:
        return 'postgresql://%s:%s@/%s?host=%s' % (SERVER_USER, PASSWORD, database, self.directory)

    def connect(self, database='postgres'):
        import psycopg  # pylint: disable=import-outside-toplevel
        return psycopg.connect(self.dsn(database), autocommit=True)

    def new_database(self) -> str:
        with self.lock:
            self.count += 1
            name = 'history%d' % self.count
        with self.connect() as connection:
            connection.execute('CREATE DATABASE %s' % name)
        return name


class PostgresDatabase:
    """The ``database`` of test_databases.py on the PostgreSQL server: a fresh database per ``new_dsn()``."""

    kind = 'postgresql'

    def __init__(self, server: PostgresServer):
        self.server = server

    def new_dsn(self) -> str:
        return self.server.dsn(self.server.new_database())

    @contextlib.contextmanager
    def locked(self, dsn: str):
        """Another writer in the middle of its transaction: it holds the runs table."""
        name = dsn.split('?', 1)[0].rsplit('/', 1)[1]
        connection = self.server.connect(name)
        try:
            connection.execute('BEGIN')
            connection.execute('LOCK TABLE runs IN ACCESS EXCLUSIVE MODE')
            yield
        finally:
            connection.execute('ROLLBACK')
            connection.close()

    def unreachable_dsn(self) -> str:
        """No server listens there."""
        nowhere = os.path.join(self.server.directory, 'no-server-here')
        return 'postgresql://%s:%s@/nowhere?host=%s' % (SERVER_USER, PASSWORD, nowhere)
