# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Install awx.awx for linting and syntax-checking playbooks/awx-configure.yml, without Galaxy.

awx.awx left the all-in-one ``ansible`` package after Ansible 5, and Galaxy cannot be reached from
the build machines.  The last ``ansible`` release that carried it (an sdist on PyPI) is the one
offline source: this takes ``ansible_collections/awx/awx`` out of it into ``<dest>``.  That copy
(awx.awx 19.4.0) documents every module and option the playbook uses, so ansible-playbook
--syntax-check, ansible-lint and ansible-doc work; its modules do not run on Python 3.12
(they import distutils), so configuring a real AWX needs a current awx.awx from Galaxy or
Automation Hub (awx/ee/requirements.yml).

Re-running with the same version changes nothing.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tarfile

COLLECTION = ('awx', 'awx')


def installed_version(dest: str) -> str | None:
    manifest = os.path.join(dest, 'ansible_collections', *COLLECTION, 'MANIFEST.json')
    try:
        with open(manifest, encoding='utf-8') as handle:
            return json.load(handle)['collection_info']['version']
    except (OSError, ValueError, KeyError):
        return None


def download_sdist(version: str, cache: str) -> str:
    pattern = os.path.join(cache, 'ansible-%s.tar.gz' % version)
    if not glob.glob(pattern):
        os.makedirs(cache, exist_ok=True)
        # --no-build-isolation and no deps: only the archive is wanted, nothing is built or installed.
        subprocess.run([sys.executable, '-m', 'pip', 'download', '--quiet', '--no-deps', '--no-binary', ':all:',
                        '--no-build-isolation', '--dest', cache, 'ansible==%s' % version], check=True)
    found = glob.glob(pattern)
    if not found:
        raise SystemExit('install_awx_collection: pip did not produce %s' % pattern)
    return found[0]


def extract(sdist: str, version: str, dest: str) -> None:
    prefix = 'ansible-%s/ansible_collections/%s/%s/' % ((version,) + COLLECTION)
    target = os.path.join(dest, 'ansible_collections', *COLLECTION)
    shutil.rmtree(target, ignore_errors=True)
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers() if m.name.startswith(prefix) and (m.isfile() or m.isdir())]
        if not members:
            raise SystemExit('install_awx_collection: awx.awx is not in %s' % os.path.basename(sdist))
        for member in members:
            member.name = member.name[len('ansible-%s/' % version):]
        archive.extractall(dest, members, filter='data')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--ansible-version', required=True, help='an ansible release on PyPI that carries awx.awx')
    parser.add_argument('--dest', required=True, help='collections directory (holds ansible_collections/)')
    parser.add_argument('--cache', required=True, help='where the downloaded sdist is kept')
    args = parser.parse_args()
    marker = os.path.join(args.dest, 'ansible_collections', *COLLECTION, '.from-ansible-' + args.ansible_version)
    if os.path.exists(marker):
        print('awx.awx %s already installed from ansible %s' % (installed_version(args.dest), args.ansible_version))
        return 0
    present = installed_version(args.dest)
    if present and not glob.glob(os.path.join(args.dest, 'ansible_collections', *COLLECTION, '.from-ansible-*')):
        # Installed by hand (a current awx.awx from Galaxy, to configure a live AWX): keep it.
        print('awx.awx %s is installed from elsewhere; left as it is' % present)
        return 0
    extract(download_sdist(args.ansible_version, args.cache), args.ansible_version, args.dest)
    with open(marker, 'w', encoding='utf-8'):
        pass
    print('awx.awx %s installed from ansible %s' % (installed_version(args.dest), args.ansible_version))
    return 0


if __name__ == '__main__':
    sys.exit(main())
