# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The test suite's cache of the compiled code of Ansible's module payloads (on PYTHONPATH in the tests only).

Every module Ansible runs arrives as a zip of its code and the module_utils it imports, which Python imports
with zipimport: from source, compiled anew in every run, since nothing can be cached inside a temporary zip.
That compilation is most of a module run's CPU (about 0.4 s for ansible.module_utils.basic and what it imports),
and the playbook tests run thousands of modules on this machine's Python. This hook keeps each compiled module,
keyed by its name and the hash of its source, in IOKIT_MODULE_CODE_CACHE; a payload whose source is the same
loads the code instead of compiling it again. What runs is the same code object compile() makes, with the file
name of the zip it came from, so a module behaves, fails and reports exactly as without the cache.
Only zips named as Ansible names its payloads are touched; without IOKIT_MODULE_CODE_CACHE nothing is.
"""

import hashlib
import marshal
import os
import sys
import zipimport

CACHE = os.environ.get('IOKIT_MODULE_CODE_CACHE')
PAYLOAD_SUFFIX = '_payload.zip'
MAGIC = repr(sys.version_info[:3]).encode() + b'\0'


def _with_filename(code, filename):
    consts = tuple(_with_filename(const, filename) if isinstance(const, type(code)) else const
                   for const in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


class CachingZipImporter(zipimport.zipimporter):
    def _source_path(self, fullname):
        name = fullname.rpartition('.')[2]
        inner = os.path.join(name, '__init__.py') if self.is_package(fullname) else name + '.py'
        return os.path.join(self.archive, self.prefix, inner)

    def get_filename(self, fullname):
        # zipimport's finds the name by compiling the module (and the import system asks it for every module)
        if self.get_source(fullname) is None:
            return zipimport.zipimporter.get_filename(self, fullname)
        return self._source_path(fullname)

    def get_code(self, fullname):
        source = self.get_source(fullname)
        if source is None:
            return zipimport.zipimporter.get_code(self, fullname)
        filename = self._source_path(fullname)
        data = source.encode('utf-8')
        key = hashlib.sha256(MAGIC + fullname.encode() + b'\0' + data).hexdigest()
        path = os.path.join(CACHE, key[:2], key)
        try:
            with open(path, 'rb') as handle:
                return _with_filename(marshal.load(handle), filename)
        except (OSError, EOFError, ValueError, TypeError):
            pass
        code = compile(data, filename, 'exec', dont_inherit=True)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            partial = '%s.%d' % (path, os.getpid())
            with open(partial, 'wb') as handle:
                marshal.dump(code, handle)
            os.replace(partial, path)
        except OSError:
            pass
        return code


def _payload_hook(path):
    # the payload itself, or a package's directory inside it
    if PAYLOAD_SUFFIX + os.sep not in path + os.sep:
        raise ImportError('not an Ansible module payload')
    return CachingZipImporter(path)


# Python 3.10 and later load a zipimported module through get_code() (older ones through zipimport's own
# load_module), and code.replace() needs 3.8: elsewhere the hook is not installed and modules compile as always.
if CACHE and sys.version_info >= (3, 10):
    sys.path_hooks.insert(0, _payload_hook)
    sys.path_importer_cache.clear()
