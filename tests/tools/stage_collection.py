# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Copy the collection into an ``ansible_collections/lustre/iokit`` tree for ansible-test.

ansible-test refuses to run unless the working directory really is
``.../ansible_collections/<namespace>/<name>`` (a symlink is resolved and
rejected), so it runs in a copy.  The copy holds the files git knows about
(tracked, or untracked and not ignored) as they are in the working tree,
minus the parts that are not collection content: the simulator and the
benchmarks are separate Python projects with their own tests, and CI glue.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

NOT_COLLECTION_CONTENT = ('simulator/', 'bench/', '.ci/', 'molecule/')


def collection_files(checkout: str) -> list[str]:
    listing = subprocess.run(['git', '-C', checkout, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'],
                             check=True, capture_output=True).stdout.decode('utf-8')
    files = []
    for path in sorted(set(p for p in listing.split('\0') if p)):
        if path.startswith(NOT_COLLECTION_CONTENT):
            continue
        if os.path.isfile(os.path.join(checkout, path)):  # deleted-but-tracked files are skipped
            files.append(path)
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--checkout', required=True)
    parser.add_argument('--dest', required=True, help='the .../ansible_collections/lustre/iokit directory to (re)create')
    args = parser.parse_args()
    dest = os.path.abspath(args.dest)
    if not dest.endswith(os.path.join('ansible_collections', 'lustre', 'iokit')):
        raise SystemExit('stage_collection: --dest must end in ansible_collections/lustre/iokit')
    shutil.rmtree(dest, ignore_errors=True)
    for path in collection_files(args.checkout):
        target = os.path.join(dest, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(os.path.join(args.checkout, path), target)
    return 0


if __name__ == '__main__':
    sys.exit(main())
