# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Text helpers shared by the I/O-kit output parsers.

Pure functions only: no I/O, no Ansible imports, Python 3.6 compatible, so
that modules (on the target node) and filter plugins (on the controller)
can both use them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import re

from ansible_collections.lustre.iokit.plugins.module_utils.units import PRINTED_SIZE_UNITS


class ParserError(ValueError):
    """The input cannot be read as text at all (not a string, binary junk).

    Text that is simply in another format is not an error: the parsers return
    their empty result for it.  Filter plugins turn this exception into an
    AnsibleFilterError that names the filter.
    """


# A number as the tools print it: optional sign, digits, optional fraction,
# optional exponent.  "nan"/"inf" are deliberately not numbers here.
NUMBER = r'[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?'
NUMBER_RE = re.compile(r'^' + NUMBER + r'$')

# Share of control characters above which an input is treated as binary.
_BINARY_THRESHOLD = 0.10
_CONTROL_RE = re.compile(r'[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]')


def ensure_text(data, parser_name):
    """Return ``data`` as a text string, or raise ParserError.

    Bytes are decoded as UTF-8 with replacement; ``None`` becomes ''.
    Anything else that is not a string (a list, a number, a dict) raises
    ParserError, as does text that is mostly control characters (a binary
    file read by mistake).
    """
    if data is None:
        return u''
    if isinstance(data, bytes):
        data = data.decode('utf-8', 'replace')
    if not isinstance(data, str):
        try:
            # Python 2 unicode / AnsibleUnsafeText are str subclasses on py3;
            # anything reaching here really is not text.
            type_name = type(data).__name__
        except Exception:  # pragma: no cover - defensive
            type_name = 'object'
        raise ParserError('%s expects text (the output of the tool), got %s' % (parser_name, type_name))
    if data and len(_CONTROL_RE.findall(data)) > _BINARY_THRESHOLD * len(data):
        raise ParserError('%s expects text, but the input looks binary' % parser_name)
    return data


def clean_lines(text):
    """Split text into lines with noise that is never part of a format removed.

    Carriage returns are dropped, NUL and other control characters become
    spaces, and leading '# ' comment prefixes of quoted lines are removed.
    Returns a list of stripped lines (blank lines kept as '').
    """
    text = text.replace('\r\n', '\n').replace('\r', '\n')
    lines = []
    for raw in text.split('\n'):
        line = _CONTROL_RE.sub(' ', raw).strip()
        if line.startswith('#'):
            line = _strip_comment_prefixes(line)
        lines.append(line)
    return lines


def _strip_comment_prefixes(line):
    """Drop every leading ``#`` that stands alone (``# # text`` -> ``text``).

    Walks an index instead of re-slicing the line once per ``#``: a line of
    a million ``# `` would otherwise be copied a million times.
    """
    position, end = 0, len(line)
    while position < end and line[position] == '#' and (position + 1 == end or line[position + 1] in ' \t'):
        position += 1
        while position < end and line[position].isspace():
            position += 1
    return line[position:]


def join_backslash_continuations(lines):
    """Join lines that end with a trailing backslash with the next one."""
    out = []
    # The pieces of a continued line are joined once at its end: adding each
    # piece to a growing string would copy it again for every continuation.
    pieces = []
    for line in lines:
        if line.endswith('\\'):
            piece = line[:-1].rstrip()
            if piece or not pieces:
                pieces.append(piece)
            continue
        if pieces:
            pieces.append(line)
            line = ' '.join(pieces)
            pieces = []
        out.append(line)
    if pieces:
        out.append(' '.join(pieces))
    return out


def to_number(token):
    """Convert a printed number to int (no fraction) or float; None if not a number."""
    if token is None:
        return None
    token = str(token).strip().rstrip(',').strip()
    if not NUMBER_RE.match(token):
        return None
    if re.match(r'^[-+]?\d+$', token):
        return int(token)
    return float(token)


def to_int(token):
    """Convert a printed integer to int; None if it is not an integer."""
    value = to_number(token)
    if value is None or isinstance(value, float):
        return None
    return value


def finite_number(token):
    """Like to_number, but an overflowing value (``1e999``) is no measurement: None."""
    value = to_number(token)
    if isinstance(value, float) and (math.isinf(value) or math.isnan(value)):
        return None
    return value


def finite_float(token):
    """finite_number as a float (None stays None)."""
    value = finite_number(token)
    return float(value) if value is not None else None


_PRINTED_SIZE_RE = re.compile(r'^(?P<number>' + NUMBER + r')\s*(?P<unit>[A-Za-z]*)$')


def read_size(text):
    """A size as a tool prints it, in bytes (int when whole): ``1 MiB``, ``4096 bytes``, ``2.50 GiB``, ``4K``.

    None when ``text`` is not one.  For sizes the tools print; a size a user writes is read, and refused
    with a reason, by ``units.parse_size``.
    """
    if text is None:
        return None
    match = _PRINTED_SIZE_RE.match(str(text).strip())
    if not match:
        return None
    factor = PRINTED_SIZE_UNITS.get(match.group('unit').lower())
    number = finite_float(match.group('number'))
    if factor is None or number is None:
        return None
    size = number * factor
    if math.isinf(size):
        # 1e308 MiB: a finite number whose size in bytes is not.
        return None
    return int(size) if size == int(size) else size
