# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Load or unload one Lustre kernel module, remembering in the node state whether we loaded it.

The modules ``obdecho`` and ``lnet_selftest`` are both thin front ends to
``manage_kernel_module``: the rule (unload only what this collection loaded,
never while it is in use) must be the same for every module a survey loads.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.lustre.iokit.plugins.module_utils import lctl as lctl_utils
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState, NodeStateError
from ansible_collections.lustre.iokit.plugins.module_utils.results import new_run_id, validate_run_id
from ansible_collections.lustre.iokit.plugins.module_utils.runner import Runner


def argument_spec():
    return dict(
        state=dict(type='str', choices=['present', 'absent'], default='present'),
        workdir=dict(type='path', default='/tmp/lustre-iokit'),
        run_id=dict(type='str'),
    )


def predict(state, loaded, ours):
    """(action, loaded afterwards, ours afterwards) for ``state``, given lsmod's entry and the node state."""
    if state == 'present':
        if loaded is not None:
            return 'already_loaded', True, ours
        return 'loaded', True, True
    if not ours:
        return ('not_ours', True, False) if loaded is not None else ('not_loaded', False, False)
    if loaded is None:
        return 'not_loaded', False, False
    if loaded['use_count'] > 0:
        return 'in_use', True, True
    return 'unloaded', False, False


def manage_kernel_module(module, name, runner=None):
    """Bring kernel module ``name`` to ``module.params['state']`` and exit the AnsibleModule with the result."""
    state = module.params['state']
    run_id = None
    if state == 'present':
        try:
            run_id = validate_run_id(module.params['run_id']) if module.params['run_id'] else new_run_id()
        except ValueError as exc:
            module.fail_json(msg='run_id: %s' % exc)
    node_state = NodeState(module.params['workdir'])
    runner = runner or Runner()
    try:
        loaded = lctl_utils.loaded_modules(runner).get(name)
        ours = lctl_utils.module_is_ours(node_state, name)
    except (lctl_utils.LctlError, NodeStateError) as exc:
        module.fail_json(msg=str(exc))
    use_count = loaded['use_count'] if loaded else 0
    action, loaded_after, ours_after = predict(state, loaded, ours)
    result = dict(changed=action in ('loaded', 'unloaded'), action=action, loaded=loaded_after, ours=ours_after,
                  use_count=use_count, run_id=run_id)
    if module.check_mode:
        module.exit_json(**result)

    try:
        if state == 'present':
            if loaded is None and not lctl_utils.load_module(runner, node_state, name, run_id):
                # Someone loaded it between our lsmod and load_module's own: not ours.
                result.update(changed=False, action='already_loaded', ours=ours)
        else:
            action = lctl_utils.unload_module_if_ours(runner, node_state, name)
            # lsmod may have changed since the prediction; report what really happened.
            loaded_after = name in lctl_utils.loaded_modules(runner)
            if action == 'not_ours' and not loaded_after:
                action = 'not_loaded'
            result.update(action=action, changed=action == 'unloaded', loaded=loaded_after, ours=action == 'in_use')
            if action == 'in_use':
                module.warn('%s is still in use; it stays loaded and recorded for a later cleanup' % name)
    except (lctl_utils.LctlError, NodeStateError) as exc:
        module.fail_json(msg=str(exc), **result)
    module.exit_json(**result)
