# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A survey role's call of its module, made from the role's variables on the controller.

``module_args()`` is what ``lustre.iokit.survey_start`` passes to the survey's module (``survey_catalog.CATALOG``);
``run_values()`` is what ``roles/survey_common`` takes from the survey's role around that call (the
``lustre.iokit.survey_run`` lookup).  A role variable sets the option of the same name after the role's prefix, by
the rule the preflight checks the variables with (``survey_checks.option_variables``, the catalogue's
``role_call``), so that the preflight checks exactly what the module gets.

The values no user sets directly (``computed_values()``: the ``iokit_*`` settings with their defaults, the MPI
hostfile of the client surveys, the hosts of a test run from a console) carry the internal names
``__<prefix><suffix>`` that ``survey_checks`` maps to module options and names in its problems by the setting users
give.  The survey variables a sweep profile fills (``sweep_profile.py``: those left unset) keep their own names.
"""

from __future__ import annotations

from ansible_collections.lustre.iokit.plugins.module_utils import survey_catalog
from ansible_collections.lustre.iokit.plugins.plugin_utils import survey_checks, sweep_profile

# The collection-wide settings every survey role reads: the role variable suffix -> (setting, its default).
SHARED_SETTINGS = {
    'engine': ('iokit_engine', 'native'),
    'timeout_s': ('iokit_timeout_s', 3600),
    'workdir': ('iokit_workdir', '/tmp/lustre-iokit'),
    'sweep_profile': (sweep_profile.SETTING, sweep_profile.DEFAULT),
}

# Options survey_common gives the module itself, whatever the role's variables say.
RUN_OPTIONS = survey_checks.RUN_OPTIONS


class Variables:
    """A host's variables as a task sees them, each templated when it is read (``template``)."""

    def __init__(self, variables, template=None):
        self._variables = variables or {}
        self._template = template or (lambda value: value)

    def defined(self, name):
        return name in self._variables

    def get(self, name, default=None):
        return self._template(self._variables[name]) if name in self._variables else default

    def raw(self, name, default=None):
        """The value untemplated: ``hostvars`` and ``groups``, which template what is read from them."""
        return self._variables.get(name, default)


def _catalog(survey):
    try:
        entry = survey_catalog.CATALOG[survey]
    except KeyError:
        entry = None
    if entry is None or entry.kind == survey_catalog.SAMPLER:
        raise survey_checks.UnknownSurvey('unknown survey %r; known: %s'
                                          % (survey, ', '.join(survey_catalog.MEASURING)))
    return entry


def mpi_hosts(prefix, variables):
    """The hostfile of a client survey: ``<prefix>hosts`` when not empty, else the ``<prefix>client_group`` group
    with the launching host first, each host as its ``<prefix>mpi_hostname`` or its inventory name."""
    given = variables.get(prefix + 'hosts') or []
    if given:
        return list(given)
    groups = variables.raw('groups') or {}
    members = list(groups.get(variables.get(prefix + 'client_group'), None) or [])
    launcher = variables.get('inventory_hostname')
    ordered = [launcher] if launcher in members else []
    ordered += [host for host in members if host not in ordered]
    hostvars = variables.raw('hostvars') or {}
    names = []
    for host in ordered:
        host_variables = hostvars[host] if host in hostvars else {}
        names.append(host_variables[prefix + 'mpi_hostname'] if prefix + 'mpi_hostname' in host_variables else host)
    return names


def _test_hosts(prefix, console_suffix, variables):
    """Every host of a test run from a console: its servers, its clients and the console, each once."""
    hosts = []
    for host in (list(variables.get(prefix + 'server_hosts') or []) + list(variables.get(prefix + 'client_hosts') or [])
                 + [variables.get(prefix + console_suffix)]):
        if host not in hosts:
            hosts.append(host)
    return hosts


def computed_values(survey, variables):
    """The survey role's internal values (``__<prefix><suffix>``) from the host's ``variables``."""
    entry = _catalog(survey)
    prefix = survey + '_'
    values = dict((survey_checks.role_variable(prefix, suffix), variables.get(setting, default))
                  for suffix, (setting, default) in SHARED_SETTINGS.items())
    if 'mpi_hosts' in entry.role_call.get('aliases', {}).values():
        values[survey_checks.role_variable(prefix, 'mpi_hosts')] = mpi_hosts(prefix, variables)
    if 'console' in entry.role_run:
        values[survey_checks.role_variable(prefix, 'selftest_hosts')] = _test_hosts(
            prefix, entry.role_run['console'], variables)
    engine = entry.role_call.get('fixed', {}).get('engine', values[survey_checks.role_variable(prefix, 'engine')])
    profile = values[survey_checks.role_variable(prefix, 'sweep_profile')]
    values.update(sweep_profile.profile_values(prefix, survey_checks.module_argument_spec(survey), profile,
                                               variables.get, engine))
    return values


def _as_option(option_spec, value):
    """``value`` as the option's type takes it without a conversion warning: numbers in a list of strings (lnet's
    sizes) as strings."""
    if option_spec.get('type') == 'list' and option_spec.get('elements') == 'str' and isinstance(value, (list, tuple)):
        return [str(item) if isinstance(item, (int, float)) and not isinstance(item, bool) else item for item in value]
    return value


def module_args(survey, variables, run):
    """The arguments of the survey's module: each option from its role variable, left out where the role leaves it
    out, the options the role fixes, and ``run`` (the ``RUN_OPTIONS``: run id, launch id, force_rerun)."""
    entry = _catalog(survey)
    call = entry.role_call
    prefix = survey + '_'
    spec = survey_checks.module_argument_spec(survey)
    computed = computed_values(survey, variables)
    # A deprecated variable wins over the one that replaces it while it is set.
    replaced = dict((prefix + new, prefix + old) for old, new in call.get('renamed', {}).items()
                    if variables.get(prefix + old) is not None)
    args = {}
    for option, (variable, unused) in survey_checks.option_variables(survey).items():
        variable = replaced.get(variable, prefix + call['prepared'][option] if option in call.get('prepared', {})
                                else variable)
        if variable in computed:
            value = computed[variable]
        elif variables.defined(variable):
            value = variables.get(variable)
        else:
            continue
        if not survey_checks.left_out(survey, option, spec[option], value):
            args[option] = _as_option(spec[option], value)
    for option in survey_checks.overridden(survey, args):
        args.pop(option, None)
    for option, fact in call.get('fallback', {}).items():
        if option not in args and variables.get(fact) is not None:
            args[option] = variables.get(fact)
    args.update(call.get('fixed', {}))
    args.update((option, run[option]) for option in RUN_OPTIONS if option in run)
    return args


def run_values(survey, variables):
    """What survey_common takes from the survey's role around the module's call on this host:

    ``iterations`` (``<prefix>iterations``; 1 where that name is a deprecated module option), ``prepare`` (run the
    role's tasks/prepare.yml first), ``result_host`` (the host that runs the module and stores the result, None for
    every host) and ``here`` (whether this host is it), ``estimate`` and ``fleet_plan`` (what check mode shows: the
    plan's duration, and the sum over the hosts, which means nothing for a survey launched from one client), the
    ``timeout_s`` and ``workdir`` the module gets, and ``computed`` (``computed_values()``, for the preflight).
    """
    entry = _catalog(survey)
    prefix = survey + '_'
    computed = computed_values(survey, variables)
    iterations = 1
    if 'iterations' not in entry.role_call.get('renamed', {}):
        iterations = int(str(variables.get(prefix + 'iterations', 1)))
    console = entry.role_run.get('console')
    result_host = variables.get(prefix + console) if console else None
    return {
        'iterations': iterations,
        'prepare': bool(entry.role_run.get('prepare', False)),
        'result_host': result_host,
        'here': result_host is None or variables.get('inventory_hostname') == result_host,
        'estimate': bool(entry.role_run.get('estimate', True)),
        'fleet_plan': entry.kind == survey_catalog.SERVER,
        'timeout_s': computed[survey_checks.role_variable(prefix, 'timeout_s')],
        'workdir': computed[survey_checks.role_variable(prefix, 'workdir')],
        'computed': computed,
    }
