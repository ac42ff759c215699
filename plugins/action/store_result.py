# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Store one survey's result envelope in the controller's results store.

Runs on the controller (documentation in ``plugins/modules/store_result.py``).
The envelope is validated, the node's raw output files are fetched beside
it, and every file is written atomically, raw output first: an envelope on
disk always has its raw output next to it.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.lustre.iokit.plugins.module_utils.results import (
    ENVELOPE_KEYS,
    OPTIONAL_ENVELOPE_KEYS,
    EnvelopeError,
    check_envelope,
    validate_host,
    validate_path_component,
)
from ansible_collections.lustre.iokit.plugins.plugin_utils.results_store import (
    envelope_path,
    store_directory,
    write_bytes_atomic,
    write_json_atomic,
)

ARGUMENT_SPEC = {
    'envelope': {'type': 'dict', 'required': True},
    'results_dir': {'type': 'path', 'required': True},
    'host': {'type': 'str'},
    'fetch_raw_output': {'type': 'bool', 'default': True},
    'raw_files': {'type': 'list', 'elements': 'str'},
    'raw_contents': {'type': 'list', 'elements': 'dict'},
}

# Keys that ansible.builtin.async_status puts in its result; with them present,
# an envelope's own started/finished timestamps have been replaced by booleans.
_ASYNC_STATUS_KEYS = ('ansible_job_id', 'results_file')


def raw_file_name(node_path):
    """The name under which a raw output file of the node is stored: its own base name, if that is safe.

    A name that is not a safe path component, or that ends in ``.json`` (the
    store's envelopes), gets ``.raw`` appended or is refused with ValueError.
    """
    name = validate_path_component(os.path.basename(node_path), 'raw output file name')
    return name + '.raw' if name.endswith('.json') else name


def _same_file_content(path, data):
    try:
        with open(path, 'rb') as handle:
            return handle.read() == data
    except OSError:
        return False


def _same_json(path, data):
    try:
        with open(path, encoding='utf-8') as handle:
            return json.load(handle) == data
    except (OSError, ValueError):
        return False


def _decoded_contents(raw_contents):
    """``[(stored name, bytes)]`` from lustre.iokit.async_result's ``raw_contents`` (gzip, then base64)."""
    decoded = []
    for index, item in enumerate(raw_contents):
        if not isinstance(item.get('name'), str) or not isinstance(item.get('content'), str):
            raise AnsibleActionFail('raw_contents[%d]: needs a name and a content (as lustre.iokit.async_result '
                                    'returns them), got the keys %s' % (index, ', '.join(sorted(item)) or 'none'))
        try:
            name = raw_file_name(item['name'])
        except ValueError as exc:
            raise AnsibleActionFail('raw_contents[%d]: %s' % (index, exc))
        try:
            data = gzip.decompress(base64.b64decode(item['content'], validate=True))
        except (binascii.Error, OSError, EOFError, ValueError) as exc:
            raise AnsibleActionFail('raw_contents[%d] (%s): the content is not base64 of gzip data: %s'
                                    % (index, item['name'], exc))
        decoded.append((name, data))
    return decoded


class ActionModule(ActionBase):

    TRANSFERS_FILES = False

    def _slurp(self, path, task_vars):
        result = self._execute_module(module_name='ansible.legacy.slurp', module_args={'src': path},
                                      task_vars=task_vars)
        if result.get('failed'):
            return None, result.get('msg', 'cannot read %s' % path)
        return base64.b64decode(result['content']), None

    def _envelope_from(self, given, task_vars):
        """The envelope in ``given``: the envelope itself, a module result, or an async_status result.

        ``async_status`` overwrites the module's ``started``/``finished`` with
        booleans, so from such a result the envelope is read back from the
        node's async job file, which holds the module's result untouched.
        """
        if isinstance(given.get('envelope'), dict):
            given = given['envelope']
        clobbered = any(isinstance(given.get(key), bool) for key in ('started', 'finished'))
        if clobbered and all(given.get(key) for key in _ASYNC_STATUS_KEYS):
            data, problem = self._slurp(given['results_file'], task_vars)
            if data is None:
                raise AnsibleActionFail('cannot read the async job file %s to recover the envelope: %s'
                                        % (given['results_file'], problem))
            try:
                given = json.loads(data.decode('utf-8'))
            except ValueError as exc:
                raise AnsibleActionFail('the async job file %s is not JSON: %s' % (given['results_file'], exc))
        return dict((key, given[key]) for key in ENVELOPE_KEYS + OPTIONAL_ENVELOPE_KEYS if key in given)

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        params = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)[1]
        host = params['host'] or task_vars.get('inventory_hostname')
        try:
            validate_host(host)
        except ValueError as exc:
            raise AnsibleActionFail('host: %s' % exc)

        envelope = self._envelope_from(params['envelope'], task_vars)
        if envelope.get('host') != host:
            # The store is organised by inventory name; the node's own name is kept, not lost.
            environment = dict(envelope.get('environment') or {})
            environment.setdefault('node_hostname', envelope.get('host'))
            envelope['environment'] = environment
            envelope['host'] = host
        try:
            check_envelope(envelope, source='envelope of %s' % host)
        except EnvelopeError as exc:
            raise AnsibleActionFail(str(exc))

        path = envelope_path(params['results_dir'], envelope['run_id'], host, envelope['survey'])
        result.update(path=path, status=envelope['status'], run_id=envelope['run_id'], survey=envelope['survey'],
                      changed=False)

        if params['raw_files'] is not None and params['raw_contents'] is not None:
            raise AnsibleActionFail('raw_files and raw_contents are mutually exclusive: give the files to fetch, '
                                    'or their contents as lustre.iokit.async_result returned them')
        node_files = params['raw_files']
        if node_files is None:
            given = params['envelope']
            node_files = given.get('raw_files') or ([envelope['raw_output']] if envelope.get('raw_output') else [])
        fetched = []
        if params['raw_contents'] is not None:
            fetched = [(os.path.join(os.path.dirname(path), name), data)
                       for name, data in _decoded_contents(params['raw_contents'])]
        elif params['fetch_raw_output']:
            for node_path in node_files:
                try:
                    name = raw_file_name(node_path)
                except ValueError as exc:
                    raise AnsibleActionFail('raw_files: %s' % exc)
                data, problem = self._slurp(node_path, task_vars)
                if data is None:
                    self._display.warning('%s: raw output %s not fetched: %s' % (host, node_path, problem))
                    continue
                fetched.append((os.path.join(os.path.dirname(path), name), data))
        result['raw_output_paths'] = [local for local, _data in fetched]

        changed = not _same_json(path, envelope) or any(not _same_file_content(local, data) for local, data in fetched)
        result['changed'] = changed
        if not changed or self._task.check_mode:
            return result
        try:
            store_directory(params['results_dir'], envelope['run_id'], host)
        except (ValueError, OSError) as exc:
            raise AnsibleActionFail('results_dir: %s' % exc)
        # A full or failing results directory is named with the file it could not take; the node keeps the
        # survey's finished points for a rerun (the survey play's cleanup is told this host failed).
        for local, data in fetched:
            self._write(write_bytes_atomic, local, data, path)
        self._write(write_json_atomic, path, envelope, path)
        return result

    @staticmethod
    def _write(write, local, data, envelope):
        try:
            write(local, data)
        except OSError as exc:
            raise AnsibleActionFail('results_dir: cannot store %s (%s), so %s was not stored; the node keeps the '
                                    'points it measured: make room, then run again with the same iokit_run_id'
                                    % (local, exc.strerror or exc, envelope))
