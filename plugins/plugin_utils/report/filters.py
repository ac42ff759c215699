# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The report filters' shared wrapper: samples in any accepted form, errors as AnsibleFilterError naming the filter."""

from __future__ import annotations

import functools
import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.lustre.iokit.plugins.plugin_utils.report.samples import as_samples


def samples_argument(filter_name: str, data: t.Any) -> list:
    """``data`` (a list of samples, envelopes, or a mix) as Samples; AnsibleFilterError when it is not a list."""
    if isinstance(data, dict) and 'records' in data:
        data = [data]
    if not isinstance(data, (list, tuple)):
        raise AnsibleFilterError('%s: expected a list of samples or result envelopes, got %s'
                                 % (filter_name, type(data).__name__))
    try:
        return as_samples(data)
    except ValueError as exc:
        raise AnsibleFilterError('%s: %s' % (filter_name, exc)) from exc


def make_report_filter(filter_name: str, function: t.Callable[..., t.Any]) -> t.Callable[..., t.Any]:
    """Wrap ``function`` so that ValueError/TypeError (bad arguments) surface as AnsibleFilterError naming the filter."""

    @functools.wraps(function)
    def _filter(*args: t.Any, **kwargs: t.Any) -> t.Any:
        try:
            return function(*args, **kwargs)
        except AnsibleFilterError:
            raise
        except (ValueError, TypeError, KeyError) as exc:
            raise AnsibleFilterError('%s: %s' % (filter_name, exc)) from exc

    _filter.__name__ = filter_name
    return _filter
