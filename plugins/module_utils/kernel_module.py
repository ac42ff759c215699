# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Load or unload one kernel module a survey needs, remembering in the node state whether we loaded it.

The ``kernel_module`` module is a thin front end to ``manage_kernel_module``:
the rule (unload only what this collection loaded, never while it is in use,
never a module built into the kernel) is the one the survey engines follow
through ``lctl.load_module`` and ``lctl.unload_module_if_ours``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.lustre.iokit.plugins.module_utils import lctl as lctl_utils
from ansible_collections.lustre.iokit.plugins.module_utils.node_state import NodeState, NodeStateError
from ansible_collections.lustre.iokit.plugins.module_utils.results import new_run_id, validate_run_id
from ansible_collections.lustre.iokit.plugins.module_utils.runner import Runner

# The modules this collection knows how to judge: what needs them, who else may use them, when unloading is safe.
# A closed list, so that the module can never be used to load or unload anything else on a node.
MODULES = (lctl_utils.ECHO_MODULE, 'lnet_selftest', 'sg')


def argument_spec():
    return dict(
        name=dict(type='str', required=True, choices=list(MODULES)),
        state=dict(type='str', choices=['present', 'absent'], default='present'),
        workdir=dict(type='path', default='/tmp/lustre-iokit'),
        run_id=dict(type='str'),
    )


def predict(state, loaded, ours, builtin=False):
    """(action, loaded afterwards, ours afterwards) for ``state``, given lsmod's entry and the node state.

    A module built into the kernel (``builtin``) is always loaded and never ours, whatever a stale record says.
    """
    if builtin:
        return ('already_loaded', True, False) if state == 'present' else ('not_ours', True, False)
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


def manage_kernel_module(module, runner=None):
    """Bring kernel module ``module.params['name']`` to ``module.params['state']`` and exit the AnsibleModule."""
    name = module.params['name']
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
        modules = lctl_utils.loaded_modules(runner)
        ours = lctl_utils.module_is_ours(node_state, name)
    except (lctl_utils.LctlError, NodeStateError) as exc:
        module.fail_json(msg=str(exc))
    loaded = modules.get(name)
    builtin = lctl_utils.is_builtin(name, modules)
    use_count = loaded['use_count'] if loaded else 0
    action, loaded_after, ours_after = predict(state, loaded, ours, builtin)
    result = dict(changed=action in ('loaded', 'unloaded'), action=action, loaded=loaded_after, ours=ours_after,
                  builtin=builtin, use_count=use_count, run_id=run_id)
    if module.check_mode:
        module.exit_json(**result)

    try:
        if builtin:
            if ours:
                # A record for a module the kernel has built in is stale: nothing of ours to unload, ever.
                node_state.forget('modules', name)
        elif state == 'present':
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
        if state == 'absent' and ours and not result['ours']:
            # Our record crossed off: when it was the last entry, no empty state file stays behind in the workdir.
            node_state.remove_if_empty()
    except (lctl_utils.LctlError, NodeStateError, OSError) as exc:
        module.fail_json(msg=str(exc), **result)
    module.exit_json(**result)
