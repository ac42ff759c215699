# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A problem of a module's options, kept as data: the options it is about, the rule they break, the other options
that rule names, and what was given.

A module's ``msg`` shows a problem as text, ``str(problem)``: ``thrlo: 5 is greater than thrhi (3)``.  A survey
role's preflight (``plugin_utils/survey_checks.py``) shows the same problem with the names users set
(``obdfilter_thrlo``, ``obdfilter_thrhi``) through ``render`` and ``text``, so no message is parsed back and every
option a message names is one the check declared.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def _as_named(option):
    return option


class OptionProblem:
    """One invalid setting: ``<options>: <rule>[, got <got>]``.

    ``options``: the option the problem is about, or several (``'items, items_per_dir: give one of them'``); ``()``
    for a sentence that names its option itself, such as ``results.validate_run_id``'s ``'run_id must not be
    empty'``, which the action plugins raise too.
    ``rule``: what is wrong.  It writes each option of ``mentions`` as ``{option}``, and only those placeholders are
    replaced, by plain text replacement: a value put into the rule may hold braces (``str.format`` would choke).
    ``got``: what was given, shown after the rule as ``, got <got>`` (``%s``); None when the rule shows nothing given.
    A preflight that already shows the setting's value leaves it out.
    """

    __slots__ = ('options', 'rule', 'got', 'mentions')

    def __init__(self, options, rule, got=None, mentions=()):
        self.options = (options,) if isinstance(options, str) else tuple(options)
        self.rule = rule
        self.got = got
        self.mentions = (mentions,) if isinstance(mentions, str) else tuple(mentions)
        unwritten = [option for option in self.mentions if '{%s}' % option not in rule]
        if unwritten:
            raise ValueError('the rule %r does not write the mentioned option(s) %s as {option}'
                             % (rule, ', '.join(unwritten)))

    def text(self, name_of=_as_named, got=True):
        """The rule with each mentioned option shown as ``name_of(option)``, then ``, got <got>`` unless ``got`` is
        false."""
        text = self.rule
        for option in self.mentions:
            text = text.replace('{%s}' % option, name_of(option))
        if got and self.got is not None:
            text = '%s, got %s' % (text, self.got)
        return text

    def render(self, name_of=_as_named):
        """The whole message with every option it names, those it is about and those it mentions, shown as
        ``name_of(option)``."""
        if not self.options:
            return self.text(name_of)
        return '%s: %s' % (', '.join(name_of(option) for option in self.options), self.text(name_of))

    def __str__(self):
        return self.render()

    def __repr__(self):
        return 'OptionProblem(%r, %r, got=%r, mentions=%r)' % (self.options, self.rule, self.got, self.mentions)

    def _key(self):
        return (self.options, self.rule, self.got, self.mentions)

    def __eq__(self, other):
        return isinstance(other, OptionProblem) and self._key() == other._key()

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self._key())
