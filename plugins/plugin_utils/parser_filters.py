# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Turn a pure parser function into a Jinja2 filter with Ansible's error type.

Every parse_* filter of the collection is built here, so that they all treat
bad input the same way: a non-text or binary input raises AnsibleFilterError
naming the filter; any unexpected exception from a parser is reported the same
way instead of escaping as a bare Python traceback.
"""

from __future__ import annotations

import functools
import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import ParserError


def make_parser_filter(filter_name: str, parser: t.Callable[[t.Any], t.Any]) -> t.Callable[[t.Any], t.Any]:
    """Wrap ``parser`` so that any failure surfaces as AnsibleFilterError."""

    @functools.wraps(parser)
    def _filter(data: t.Any) -> t.Any:
        try:
            return parser(data)
        except ParserError as exc:
            raise AnsibleFilterError('%s: %s' % (filter_name, exc)) from exc
        except Exception as exc:  # a parser bug must still name the filter
            raise AnsibleFilterError('%s: cannot parse the input (%s: %s)' % (filter_name, type(exc).__name__, exc)) from exc

    _filter.__name__ = filter_name
    return _filter
