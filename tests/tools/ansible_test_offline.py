# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Let ``ansible-test --venv`` bootstrap pip without its download site.

ansible-test creates each test venv by running a get-pip script that it
downloads from a host our build machines cannot reach, but it first looks
in ``~/.ansible/test/cache/get_pip_<version>.py``.  This writes a small
stand-in there that installs pip from a wheel fetched from PyPI beside it.
Nothing is written when the stand-in and wheel already exist.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import ansible_test

STAND_IN = '''\
# Written by lustre.iokit tests/tools/ansible_test_offline.py: stands in for
# get-pip.py, installing pip from the wheel stored next to this file.
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, {wheel!r}))
args = [a for a in sys.argv[1:] if a not in ('--no-setuptools', '--no-wheel')]
from pip._internal.cli.main import main  # noqa: E402
sys.exit(main(['install', '--upgrade', '--force-reinstall'] + args))
'''


def wanted_pip_version() -> str:
    """The pip version this ansible-test bootstraps into its venvs."""
    source = os.path.join(os.path.dirname(ansible_test.__file__), '_internal', 'python_requirements.py')
    with open(source, encoding='utf-8') as handle:
        match = re.search(r"default_packages = dict\(\s*pip='([^']+)'", handle.read())
    if not match:
        raise SystemExit('ansible_test_offline: cannot find the pip version in %s; update this helper' % source)
    return match.group(1)


def main() -> int:
    cache = os.path.expanduser('~/.ansible/test/cache')
    version = wanted_pip_version()
    wheel = 'pip-%s-py3-none-any.whl' % version
    script = os.path.join(cache, 'get_pip_%s.py' % version.replace('.', '_'))
    os.makedirs(cache, exist_ok=True)
    if not os.path.exists(os.path.join(cache, wheel)):
        subprocess.run([sys.executable, '-m', 'pip', 'download', '--quiet', '--no-deps',
                        '--dest', cache, 'pip==%s' % version], check=True)
    content = STAND_IN.format(wheel=wheel)
    try:
        with open(script, encoding='utf-8') as handle:
            if handle.read() == content:
                return 0
    except OSError:
        pass
    with open(script, 'w', encoding='utf-8') as handle:
        handle.write(content)
    print('ansible-test pip %s bootstrap: %s' % (version, script))
    return 0


if __name__ == '__main__':
    sys.exit(main())
