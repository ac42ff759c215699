# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A survey role's settings checked on the controller by the survey's own module and engine code.

A preflight gives the role's variables (``<prefix><option>``, such as ``obdfilter_size_mib``); this module turns
them into the options the role passes to the survey module, converts them as the module's argument spec does, runs
the module's ``option_problems`` (its engine's checks that need no look at the node among them), and adds the checks
every survey role shares (timeout, async margin, poll interval, slow share, slowest count, workdir, iterations).  Each
problem comes back as one line naming the role variable and its value first, such as
``obdfilter_size_mib (3): 3 MiB is not a multiple of the 1024 KiB record``.  The module's checks return
OptionProblems (``module_utils/option_problem.py``) that say which options they are about and which their rule
mentions, so each option is shown under the name users set without reading the message back.

The mapping from a role variable to a module option is the rule of the survey roles' module calls, kept here once:
the option's name after the role's prefix, except ``timeout`` (``<prefix>timeout_s``) and the few aliases of
``SURVEYS`` (``lnet_server_nids`` for ``servers``, ...); an option without a module default is left out when its
variable is empty, as the roles do with ``omit``.  ``engine``, ``timeout`` and ``workdir`` are named after the
``iokit_*`` settings users give.  The values computed for a role (``INTERNAL``: the ``iokit_*`` settings read
under the role's prefix, the hostfile's hosts, the LNet test's hosts; ``survey_call.computed_values()``) are
internal and carry two leading underscores (``__obdfilter_timeout_s``); a problem never names them but the setting
users give.  ``survey_call`` makes the module's call by the same rule (``option_variables``, ``left_out``,
``overridden``).
"""

from __future__ import annotations

import importlib
import os
import re

from ansible.module_utils.common.validation import (
    check_type_bool,
    check_type_dict,
    check_type_float,
    check_type_int,
    check_type_list,
    check_type_str,
)

from ansible_collections.lustre.iokit.plugins.module_utils import survey_catalog
from ansible_collections.lustre.iokit.plugins.module_utils.option_problem import OptionProblem
from ansible_collections.lustre.iokit.plugins.plugin_utils import sweep_profile

# survey: its role's variable prefix, its module, and where the role's call differs from the rule (the catalogue's
# role_call: aliases, fixed, unset_zero)
SURVEYS = dict((name, dict(survey.role_call, prefix=name + '_', module=survey.module))
               for name, survey in survey_catalog.CATALOG.items())

# Options that come from the iokit_* settings: the role variable's suffix and the name users set.
SHARED_OPTIONS = {
    'timeout': ('timeout_s', 'iokit_timeout_s'),
    'workdir': ('workdir', 'iokit_workdir'),
    'engine': ('engine', 'iokit_engine'),
}

# Role variable suffixes whose values survey_call computes (internal: ``__<prefix><suffix>``), and the name
# a problem shows for them: the setting users give (None: the check names its own).
INTERNAL = {
    'timeout_s': 'iokit_timeout_s',
    'workdir': 'iokit_workdir',
    'engine': 'iokit_engine',
    'mpi_hosts': '{prefix}hosts',
    'selftest_hosts': None,
    'sweep_profile': 'iokit_sweep_profile',
}


def role_variable(prefix, suffix):
    """The name of a role's variable: ``<prefix><suffix>``, or ``__<prefix><suffix>`` for an internal one."""
    return ('__' if suffix in INTERNAL else '') + prefix + suffix


# Options a preflight does not check: made by the run (run_id, launch_id), or decided per iteration.
RUN_OPTIONS = ('run_id', 'launch_id', 'force_rerun', 'start_signal')

# An option's value as the module's argument spec converts it, by the option's type.
_CONVERTERS = {
    'int': check_type_int,
    'float': check_type_float,
    'bool': check_type_bool,
    'dict': check_type_dict,
    'list': check_type_list,
    'str': check_type_str,
    'path': check_type_str,
    'raw': lambda value: value,
}


class UnknownSurvey(ValueError):
    pass


def _plain(value):
    """Ansible's tagged strings, lists and dicts as the builtin types (for messages and the module code)."""
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return dict((_plain(key), _plain(item)) for key, item in value.items())
    return value


def _as_int(value):
    try:
        return check_type_int(value)
    except (TypeError, ValueError):
        return None


def _as_float(value):
    try:
        return check_type_float(value)
    except (TypeError, ValueError):
        return None


def _at_least(minimum, rule):
    def check(value):
        number = _as_int(value)
        return None if number is not None and number >= minimum else rule
    return check


def _share(value):
    number = _as_float(value)
    return None if number is not None and 0 < number <= 1 else 'must be in (0, 1]'


def _workdir(value):
    value = _plain(value)
    ok = isinstance(value, str) and os.path.isabs(value) and os.path.normpath(value) != '/'
    return None if ok else 'must be an absolute path other than /'


def _iterations(value):
    ok = re.match(r'^[0-9]+\Z', str(_plain(value))) and int(str(_plain(value))) >= 1
    return None if ok else 'must be a whole number >= 1: how many times the {survey} survey runs on each host'


# suffix: (the name shown, the check); the name shown is the role variable unless given
ROLE_CHECKS = (
    ('timeout_s', 'iokit_timeout_s', _at_least(1, 'must be >= 1')),
    ('async_margin_s', None, _at_least(30, 'must be >= 30')),
    ('poll_interval_s', None, _at_least(1, 'must be >= 1')),
    ('slow_share', None, _share),
    ('slowest_count', None, _at_least(0, 'must be >= 0')),
    ('workdir', 'iokit_workdir', _workdir),
    ('iterations', None, _iterations),
    ('sweep_profile', 'iokit_sweep_profile', sweep_profile.problem),
)


def _devices(value, settings, context):
    value = _plain(value)
    relative = [str(item) for item in value if not os.path.isabs(str(item))] if isinstance(value, list) else []
    return 'not absolute paths: %s' % ', '.join(relative) if relative else None


def _lnet_console(value, settings, context):
    return None if value else 'must name a host'


def _lnet_network(value, settings, context):
    value = _plain(value)
    return None if value in ('', None) or re.match(r'^[a-z]+[0-9]*\Z', str(value)) else \
        'must be empty or a network name such as tcp or o2ib1'


def _lnet_hosts(kind):
    def check(value, settings, context):
        if _plain(value) or _plain(settings.get('lnet_%s_nids' % kind)):
            return None
        group = 'oss' if kind == 'server' else 'clients'
        return 'or lnet_%s_nids must not be empty (default: the %s group)' % (kind, group)
    return check


def _lnet_selftest_hosts(value, settings, context):
    play = context.get('play_hosts')
    if play is None:
        return None
    missing = [str(host) for host in _plain(value) or [] if host and host not in _plain(play)]
    if not missing:
        return None
    return ('iokit_lnet_hosts', ','.join(str(host) for host in _plain(play)),
            'must include every host of the test; not in the play: %s' % ', '.join(missing))


def _expected(what, counted_from, source):
    """The check of a whole-fleet survey's ``<prefix>expected_<what>``: the test must hold at least that many.

    A survey that needs the whole fleet in one play (one lst session, one MPI launch) measures a different test on a
    part of it, and nothing tells it that it got a part: an AWX job slice gets an inventory of its own hosts only, and
    a --limit or a host left out of a group is as silent. The count a site expects is the only thing to check against.
    ``counted_from``: the settings naming the test's members, the first non-empty one counted; ``source``: where
    users set them, for the message (the internal hostfile's name means nothing to them).
    """
    def check(value, settings, context):
        expected = _plain(value)
        if expected is None or isinstance(expected, bool):
            return None if expected is None else 'must be a whole number (0: not checked)'
        try:
            expected = int(expected)
        except (TypeError, ValueError):
            return 'must be a whole number (0: not checked)'
        if expected < 0:
            return 'must be 0 (not checked) or more'
        members = []
        for name in counted_from:
            members = [str(item) for item in _plain(settings.get(name)) or []]
            if members:
                break
        if len(members) >= expected:
            return None
        return ('the test has %d %s%s, %d missing: the inventory or the play holds fewer than expected (a sliced job, '
                'a --limit, a host left out of %s); this survey needs every one of them in one run and cannot be sliced'
                % (len(members), what, ' (%s)' % ', '.join(members) if members else '', expected - len(members),
                   source))
    return check


def _module_shell(value, settings, context):
    modules = [name for name, item in settings.items() if name.endswith('_environment_modules') and _plain(item)]
    return 'must name the shell that runs module load, such as [/bin/bash, -l, -c]' if modules and not _plain(value) \
        else None


def _stats_action(value, settings, context):
    return None if _plain(value) in ('start', 'stop', 'collect') else 'must be start, stop or collect'


_EXPECTED_CLIENTS = {
    survey: _expected('clients', (survey + '_hosts', '__%s_mpi_hosts' % survey),
                      '%s_hosts or the %s_client_group group' % (survey, survey))
    for survey in ('ior', 'mdtest')
}

# Checks of a survey role that its module cannot make (settings of the role only, or the inventory's):
# suffix -> check(value, settings, context) returning the rule broken (or the name, value and rule to show) or None
EXTRA_CHECKS = {
    'sgpdd': (('devices', _devices),),
    'ior': (('module_shell', _module_shell), ('expected_clients', _EXPECTED_CLIENTS['ior'])),
    'mdtest': (('module_shell', _module_shell), ('expected_clients', _EXPECTED_CLIENTS['mdtest'])),
    'stats_collect': (('action', _stats_action),),
    'lnet': (('console_host', _lnet_console), ('server_hosts', _lnet_hosts('server')),
             ('client_hosts', _lnet_hosts('client')), ('selftest_hosts', _lnet_selftest_hosts),
             ('network', _lnet_network),
             ('expected_servers', _expected('servers', ('lnet_server_hosts', 'lnet_server_nids'),
                                            'lnet_server_hosts (default: the oss group) or lnet_server_nids')),
             ('expected_clients', _expected('clients', ('lnet_client_hosts', 'lnet_client_nids'),
                                            'lnet_client_hosts (default: the clients group) or lnet_client_nids'))),
}


def survey_names():
    return sorted(SURVEYS)


def _survey(name):
    try:
        return SURVEYS[name]
    except KeyError:
        raise UnknownSurvey('unknown survey %r; known: %s' % (name, ', '.join(survey_names())))


def _module(survey):
    name = _survey(survey)['module']
    return importlib.import_module('ansible_collections.lustre.iokit.plugins.modules.%s' % name)


def module_argument_spec(survey):
    """The argument spec of the survey's module."""
    return _module(survey).argument_spec()


def option_variables(survey):
    """option -> (role variable, name shown to users) for every option of the survey module a role passes."""
    info = _survey(survey)
    aliases = info.get('aliases', {})
    mapping = {}
    for option in _module(survey).argument_spec():
        if option in RUN_OPTIONS or option in info.get('fixed', {}):
            continue
        suffix, shown = SHARED_OPTIONS.get(option, (aliases.get(option, option), None))
        variable = role_variable(info['prefix'], suffix)
        if shown is None and INTERNAL.get(suffix):
            shown = INTERNAL[suffix].format(prefix=info['prefix'])
        mapping[option] = (variable, shown or variable)
    return mapping


def _role_checks(survey):
    """The shared checks that apply to the survey: not those of a module option of the same name, nor of a
    deprecated variable's old name (ior's and mdtest's ``iterations`` was the benchmark's repeat count, not the
    role's)."""
    options = option_variables(survey)
    info = _survey(survey)
    prefix = info['prefix']
    taken = set(variable for variable, unused in options.values() if variable not in (
        role_variable(prefix, 'timeout_s'), role_variable(prefix, 'workdir')))
    return [check for check in ROLE_CHECKS
            if role_variable(prefix, check[0]) not in taken and check[0] not in info.get('renamed', {})]


def renamed_settings(survey, settings):
    """``(old, new)`` for each deprecated role variable set in ``settings`` (names), which wins over ``new``."""
    prefix = _survey(survey)['prefix']
    return [(prefix + old, prefix + new) for old, new in sorted(_survey(survey).get('renamed', {}).items())
            if settings.get(prefix + old) is not None]


def variables(survey, defined=None):
    """The role variables the check of ``survey`` reads, limited to ``defined`` (names) when given."""
    prefix = _survey(survey)['prefix']
    names = set(variable for variable, unused in option_variables(survey).values())
    names.update(role_variable(prefix, suffix) for suffix, unused, unused_check in _role_checks(survey))
    names.update(role_variable(prefix, suffix) for suffix, unused in EXTRA_CHECKS.get(survey, ()))
    names.update(prefix + old for old in _survey(survey).get('renamed', {}))
    if defined is not None:
        names &= set(defined)
    return sorted(names)


def _shown_value(value):
    value = _plain(value)
    return 'unset' if value is None else str(value)


def _line(name, value, rule):
    return '%s (%s): %s' % (name, _shown_value(value), rule)


def _convert(option, spec, value):
    """The value as the module would get it, or raise ValueError with the rule it breaks."""
    kind = spec.get('type', 'str')
    if value is None:
        return None
    try:
        converted = _CONVERTERS[kind](_plain(value))
        if kind == 'list' and spec.get('elements'):
            converted = [_CONVERTERS[spec['elements']](item) for item in converted]
    except (TypeError, ValueError):
        article = {'int': 'a whole number', 'float': 'a number', 'bool': 'true or false', 'list': 'a list',
                   'dict': 'a mapping', 'str': 'a string', 'path': 'a path'}
        what = article.get(kind, kind)
        if kind == 'list' and spec.get('elements') in article:
            what = 'a list of %ss' % article[spec['elements']].split(' ', 1)[1]
        raise ValueError('must be %s' % what)
    choices = spec.get('choices')
    if choices:
        given = converted if kind == 'list' else [converted]
        unknown = [item for item in given if item not in choices]
        if unknown:
            words = [str(choice) for choice in choices]
            either = ' or '.join([', '.join(words[:-1]), words[-1]] if len(words) > 1 else words)
            raise ValueError(('each must be %s' if kind == 'list' else 'must be %s') % either)
    return converted


def left_out(survey, option, option_spec, value):
    """Whether the role leaves ``option`` out of its module call for its variable's ``value``: an option without a
    module default when the value is empty (None, '', [] or {}), or 0 for the survey's ``unset_zero`` options."""
    if option_spec.get('default') is not None:
        return False
    return value in ('', [], {}, None) or (value in (0, '0') and option in _survey(survey).get('unset_zero', ()))


def overridden(survey, given):
    """The options the role leaves out because another one it passes (in ``given``, not None) replaces them."""
    return [option for setter, options in sorted(_survey(survey).get('overrides', {}).items())
            if given.get(setter) is not None for option in options]


def _module_params(survey, settings, context, problems):
    """The module's options from the role's settings, converted as its argument spec does, and left out where the
    role leaves them out; a setting that cannot be converted keeps the module's default (its OptionProblem added to
    ``problems``) so that the module's checks still run."""
    info = _survey(survey)
    spec = _module(survey).argument_spec()
    mapping = option_variables(survey)
    params = {}
    for option, option_spec in spec.items():
        params[option] = info.get('fixed', {}).get(option, option_spec.get('default'))
        if option not in mapping or option in ('timeout', 'workdir'):
            continue  # timeout and workdir are the shared checks' (one message each)
        variable = mapping[option][0]
        if variable not in settings:
            continue
        value = _plain(settings[variable])
        if left_out(survey, option, option_spec, value):
            continue
        if value is None:
            # YAML's empty value (``obdfilter_thrhi:``) reaches the module as None, which its default does not replace.
            problems.append(OptionProblem(option, 'must have a value; leave the variable out for the default, %s'
                                          % _shown_value(option_spec.get('default'))))
            continue
        try:
            params[option] = _convert(option, option_spec, value)
        except ValueError as exc:
            problems.append(OptionProblem(option, str(exc)))
    for option in overridden(survey, params):
        params[option] = None
    for option, fact in info.get('fallback', {}).items():
        if params.get(option) is None and context['facts'].get(fact):
            params[option] = _as_int(context['facts'][fact])  # gathered by the preflight
    if survey == 'lnet':
        # NIDs left empty are found on the hosts when the survey runs: any NID stands for them here (with neither
        # hosts nor NIDs, the role's own check names both).
        for option in ('servers', 'clients'):
            params[option] = params[option] or ['0@lo']
    return params


def _shows(value, got):
    """Whether a problem's ``got`` is the value its line already shows (as itself, or a list's items joined)."""
    plain = _plain(value)
    shown = [str(plain)] + ([', '.join(str(item) for item in plain)] if isinstance(plain, list) else [])
    return got is not None and str(got) in shown


def _role_line(problem, mapping, settings):
    """An OptionProblem of the module or engine as the role's: ``<variable> (<value>): <rule>`` for one option,
    ``<variable>, <variable>: <rule>`` for several, every option named as users set it (``thrhi`` ->
    ``obdfilter_thrhi``); an option the role does not pass keeps its own name."""
    def name_of(option):
        return mapping[option][1] if option in mapping else option
    if len(problem.options) != 1 or problem.options[0] not in mapping:
        return problem.render(name_of)
    variable, shown = mapping[problem.options[0]]
    value = settings.get(variable)
    return _line(shown, value, problem.text(name_of, got=not _shows(value, problem.got)))


def _worth_showing(module_problems, unconverted, mapping, settings):
    """The module's problems less those the user cannot act on: a problem of settings that could not be
    converted (it is named once, and the check ran with the module's default), and one of settings left unset while
    others have problems (an unset setting takes its default from another: mds' dir_count is thrlo's)."""
    def only_of(options, problem):
        return bool(problem.options) and set(problem.options) <= options
    unset = set(option for option, (variable, unused) in mapping.items()
                if variable in settings and settings[variable] is None)
    if any(not only_of(unset, problem) for problem in module_problems):
        module_problems = [problem for problem in module_problems if not only_of(unset, problem)]
    failed = set(option for problem in unconverted for option in problem.options)
    return [problem for problem in module_problems if not only_of(failed, problem)]


def problems(survey, settings, play_hosts=None, memory_mib=None):
    """Every problem of a survey role's settings, one line each, the role variable and its value first.

    ``settings``: the role's variables by name (``obdfilter_size_mib``: 3, ...); variables not given keep the
    module's defaults.  ``play_hosts``: the hosts of the play (lnet checks that every host of the test is in it);
    ``memory_mib``: the launching client's memory, for ior's cache rule when ``ior_client_memory_mib`` is 0.
    """
    info = _survey(survey)
    settings = dict((str(name), value) for name, value in (settings or {}).items())
    for old, new in renamed_settings(survey, settings):
        settings[new] = settings.pop(old)  # checked as the name that replaces it, which the role passes
    # memory_mib is the fact a role passes for ior's client_memory_mib when it leaves it out (role_call's fallback)
    context = {'play_hosts': play_hosts, 'facts': {'ansible_memtotal_mb': memory_mib}}
    mapping = option_variables(survey)
    unconverted = []
    params = _module_params(survey, settings, context, unconverted)
    # the engine's checks that need the node (its devices, its page size) are the module's to make there
    module_problems = _module(survey).option_problems(params)
    found = []
    for problem in unconverted + _worth_showing(module_problems, unconverted, mapping, settings):
        line = _role_line(problem, mapping, settings)
        if line not in found:
            found.append(line)
    for suffix, check in EXTRA_CHECKS.get(survey, ()):
        variable = role_variable(info['prefix'], suffix)
        rule = check(settings[variable], settings, context) if variable in settings else None
        if rule:
            found.append(_line(*rule) if isinstance(rule, tuple) else _line(variable, settings[variable], rule))
    for suffix, shown, check in _role_checks(survey):
        variable = role_variable(info['prefix'], suffix)
        if variable not in settings:
            continue
        rule = check(settings[variable])
        if rule:
            value = settings[variable]
            if suffix == 'iterations':
                value = '%s, default iokit_iterations' % _shown_value(value)
                rule = rule.format(survey=survey)
            found.append(_line(shown or variable, value, rule))
    return found
