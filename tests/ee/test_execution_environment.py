# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The execution environment's build context is complete, without a container engine.

The real execution-environment.yml (and the files it names) is copied to a scratch directory with a
freshly built collection tarball where `make ee-context` puts it; `ansible-builder create` then writes
the build context, and the builder stage's own introspection script is run over the collection
installed from that tarball, as it would run inside the image.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV_BIN = os.path.dirname(sys.executable)
EE_FILE = os.path.join(ROOT, 'execution-environment.yml')


def _tool(name: str) -> str:
    return os.path.join(VENV_BIN, name)


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=VENV_BIN + os.pathsep + os.environ.get('PATH', ''), NO_COLOR='1')
    env.update(kwargs.pop('env', {}))
    completed = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env, **kwargs)
    assert completed.returncode == 0, '%s failed:\n%s%s' % (' '.join(cmd), completed.stdout, completed.stderr)
    return completed


def _load(path: str):
    with open(path, encoding='utf-8') as handle:
        return yaml.safe_load(handle)


def _galaxy_version() -> str:
    return _load(os.path.join(ROOT, 'galaxy.yml'))['version']


def _dev_pin(package: str) -> str:
    with open(os.path.join(ROOT, 'requirements-dev.txt'), encoding='utf-8') as handle:
        for line in handle:
            if line.split('==')[0].strip().lower() == package:
                return line.strip()
    raise AssertionError('%s is not pinned in requirements-dev.txt' % package)


@pytest.fixture(scope='module')
def definition() -> dict:
    return _load(EE_FILE)


@pytest.fixture(scope='module')
def context(tmp_path_factory, definition) -> dict:
    work = tmp_path_factory.mktemp('ee')
    shutil.copy(EE_FILE, work / 'execution-environment.yml')
    deps = definition['dependencies']
    for key in ('galaxy', 'python', 'system'):
        if isinstance(deps.get(key), str):
            (work / deps[key]).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(os.path.join(ROOT, deps[key]), work / deps[key])
    dist = work / '.build' / 'ee' / 'dist'
    _run([_tool('ansible-galaxy'), 'collection', 'build', '--output-path', str(dist)], cwd=ROOT)
    built = _run([_tool('ansible-builder'), 'create', '-f', str(work / 'execution-environment.yml'),
                  '--context', str(work / 'context')], cwd=str(work))
    return {'dir': work / 'context', 'work': work, 'log': built.stdout + built.stderr,
            'tarball': dist / ('lustre-iokit-%s.tar.gz' % _galaxy_version())}


def test_definition_is_version_3_and_pins_what_ci_tested(definition):
    assert definition['version'] == 3
    deps = definition['dependencies']
    assert deps['ansible_core']['package_pip'] == _dev_pin('ansible-core')
    # ansible-core 2.21 refuses to run on a controller Python older than 3.12.
    assert re.search(r'python3\.1[2-9]$', deps['python_interpreter']['python_path'])


def test_create_copies_the_collection_tarball_without_warnings(context):
    assert 'No matches' not in context['log'], context['log']
    copied = context['dir'] / '_build' / 'collections' / context['tarball'].name
    assert copied.is_file(), 'the build context lacks %s' % copied
    assert copied.read_bytes() == context['tarball'].read_bytes()


def test_containerfile_installs_everything(context, definition):
    containerfile = (context['dir'] / 'Containerfile').read_text(encoding='utf-8')
    assert 'EE_BASE_IMAGE="%s"' % definition['images']['base_image']['name'] in containerfile
    assert _dev_pin('ansible-core') in containerfile
    # Collections from requirements.yml, then lustre.iokit from the tarball, both in the galaxy stage,
    # before the builder stage copies /usr/share/ansible and introspects it.
    galaxy_stage = containerfile.split('FROM base AS galaxy', 1)[1].split('FROM base AS builder', 1)[0]
    assert '-r requirements.yml' in galaxy_stage
    assert re.search(r'ansible-galaxy collection install --offline .*lustre-iokit-\*\.tar\.gz', galaxy_stage)
    builder_stage = containerfile.split('FROM base AS builder', 1)[1].split('FROM base AS final', 1)[0]
    assert 'introspect.py introspect' in builder_stage
    assert '--user-bindep=bindep.txt' in builder_stage
    assert 'lustre.iokit.iokit_report' in containerfile.split('FROM base AS final', 1)[1]


def test_context_carries_the_collection_requirements(context):
    build = context['dir'] / '_build'
    galaxy = _load(str(build / 'requirements.yml'))
    assert 'awx.awx' in [c['name'] for c in galaxy['collections']]
    bindep = (build / 'bindep.txt').read_text(encoding='utf-8')
    assert re.search(r'^sshpass \[platform:rpm\]$', bindep, re.M)
    for script in ('introspect.py', 'assemble', 'install-from-bindep', 'check_ansible', 'check_galaxy'):
        assert (build / 'scripts' / script).is_file(), script


def test_tarball_declares_its_own_dependencies(context):
    with tarfile.open(context['tarball']) as archive:
        names = set(archive.getnames())
        meta = yaml.safe_load(archive.extractfile('meta/execution-environment.yml'))
    assert meta['dependencies']['python'] in names
    assert meta['dependencies']['system'] in names


def test_builder_stage_introspection_finds_the_collection_deps(context):
    """What the image's builder stage computes, run here over the collection installed from the tarball."""
    collections = context['work'] / 'collections'
    # An empty config keeps the checkout's ansible.cfg (collections_path) out of the picture.
    empty_config = context['work'] / 'ansible.cfg'
    empty_config.write_text('[defaults]\n', encoding='utf-8')
    _run([_tool('ansible-galaxy'), 'collection', 'install', '--offline', '-p', str(collections),
          str(context['tarball'])], cwd=str(context['work']),
         env={'ANSIBLE_CONFIG': str(empty_config), 'ANSIBLE_COLLECTIONS_PATH': str(collections)})
    build = context['dir'] / '_build'
    pip_out = context['work'] / 'requirements.txt'
    bindep_out = context['work'] / 'bindep.txt'
    _run([sys.executable, str(build / 'scripts' / 'introspect.py'), 'introspect', str(collections),
          '--user-bindep', str(build / 'bindep.txt'),
          '--write-pip', str(pip_out), '--write-bindep', str(bindep_out)], cwd=str(context['work']))
    pip_lines = pip_out.read_text(encoding='utf-8').splitlines()
    bindep_lines = bindep_out.read_text(encoding='utf-8').splitlines()
    # PyYAML is dropped on purpose by ansible-builder: every image it builds has it already.
    assert any(line.startswith('Jinja2') and 'lustre.iokit' in line for line in pip_lines), pip_lines
    # The results history's PostgreSQL driver: AWX jobs record into a server (docs/history.md).
    assert any(line.startswith('psycopg[binary]') and 'lustre.iokit' in line for line in pip_lines), pip_lines
    assert any(line.startswith('openssh-clients [platform:rpm]') and 'lustre.iokit' in line
               for line in bindep_lines), bindep_lines
    assert any(line.startswith('sshpass') and 'user' in line for line in bindep_lines), bindep_lines
