# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Install the collections this project needs without Ansible Galaxy.

Galaxy cannot be reached from the build machines, but PyPI can: the
all-in-one ``ansible`` wheel carries every community collection.  This takes
the ones named on the command line out of that wheel into
``<dest>/ansible_collections/`` and links the checkout in as
``lustre.iokit``, so that ansible-playbook, ansible-doc and ansible-lint
find everything through ``collections_path`` in the checkout's ansible.cfg.

Re-running with the same wheel version changes nothing.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import zipfile


def _installed_version(dest: str, fqcn: str) -> str | None:
    namespace, name = fqcn.split('.')
    manifest = os.path.join(dest, 'ansible_collections', namespace, name, 'MANIFEST.json')
    try:
        with open(manifest, encoding='utf-8') as handle:
            return json.load(handle)['collection_info']['version']
    except (OSError, ValueError, KeyError):
        return None


def _download_wheel(version: str, cache: str) -> str:
    pattern = os.path.join(cache, 'ansible-%s-py3-none-any.whl' % version)
    found = glob.glob(pattern)
    if not found:
        os.makedirs(cache, exist_ok=True)
        subprocess.run([sys.executable, '-m', 'pip', 'download', '--quiet', '--no-deps',
                        '--dest', cache, 'ansible==%s' % version], check=True)
        found = glob.glob(pattern)
    if not found:
        raise SystemExit('install_collections: pip did not produce %s' % pattern)
    return found[0]


def _extract(wheel: str, dest: str, fqcn: str) -> None:
    namespace, name = fqcn.split('.')
    prefix = 'ansible_collections/%s/%s/' % (namespace, name)
    target = os.path.join(dest, 'ansible_collections', namespace, name)
    shutil.rmtree(target, ignore_errors=True)
    with zipfile.ZipFile(wheel) as archive:
        members = [m for m in archive.namelist() if m.startswith(prefix)]
        if not members:
            raise SystemExit('install_collections: %s is not in %s' % (fqcn, os.path.basename(wheel)))
        archive.extractall(dest, members)


def _link_checkout(dest: str, checkout: str) -> None:
    link = os.path.join(dest, 'ansible_collections', 'lustre', 'iokit')
    os.makedirs(os.path.dirname(link), exist_ok=True)
    relative = os.path.relpath(checkout, os.path.dirname(link))
    if os.path.islink(link) and os.readlink(link) == relative:
        return
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(relative, link)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--ansible-version', required=True, help='version of the ansible wheel on PyPI')
    parser.add_argument('--dest', required=True, help='collections directory (holds ansible_collections/)')
    parser.add_argument('--cache', required=True, help='where the downloaded wheel is kept')
    parser.add_argument('--checkout', required=True, help='this collection\'s checkout, linked in as lustre.iokit')
    parser.add_argument('collections', nargs='+', help='collection names, e.g. community.general')
    args = parser.parse_args()

    wheel = None
    for fqcn in args.collections:
        if _installed_version(args.dest, fqcn) is not None and os.path.exists(os.path.join(args.dest, '.from-ansible-' + args.ansible_version)):
            continue
        wheel = wheel or _download_wheel(args.ansible_version, args.cache)
        _extract(wheel, args.dest, fqcn)
        print('installed %s %s from ansible %s' % (fqcn, _installed_version(args.dest, fqcn), args.ansible_version))
    for marker in glob.glob(os.path.join(args.dest, '.from-ansible-*')):
        os.remove(marker)
    with open(os.path.join(args.dest, '.from-ansible-' + args.ansible_version), 'w', encoding='utf-8') as handle:
        handle.write(' '.join(args.collections) + '\n')
    _link_checkout(args.dest, os.path.abspath(args.checkout))
    return 0


if __name__ == '__main__':
    sys.exit(main())
