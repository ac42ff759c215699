# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit conversions shared by the surveys.

The collection stores every bandwidth in MiB/s (2^20 bytes per second) and
every size with its unit in the field name (``_kib``, ``_mib``).  Lustre tools
already print MiB/s (as "MB/s"); sg3_utils prints decimal MB/s (10^6 bytes),
which ``decimal_mb_s_to_mib_s`` converts exactly as the I/O kit does.

Conversions pass ``None`` through unchanged, because a value a tool did not
print is ``null`` in the records, never ``0``.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import numbers
import re

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
TIB = 1024 * GIB
PIB = 1024 * TIB

# One MiB is 1.048576 decimal MB (sg3_utils' MB is 10^6 bytes).
DECIMAL_MB_PER_MIB = MIB / 1000000

# Binary multipliers, as lctl, lfs and the I/O-kit scripts use them.  "kb",
# "mb", "b" are refused on purpose: dd reads "kB" as 1000 and "b" as 512.
_SIZE_MULTIPLIERS = {'': 1, 'k': KIB, 'm': MIB, 'g': GIB, 't': TIB}
# The unit words of a size a tool prints (parsers._text.read_size): binary whatever the spelling, for the
# tools say what they mean ("1 MiB", "4096 bytes", brw_stats' "4K"); also "kb"/"mb", as older IOR prints them.
PRINTED_SIZE_UNITS = dict([('', 1), ('b', 1), ('byte', 1), ('bytes', 1)] + [
    (letter + tail, factor) for letter, factor in (('k', KIB), ('m', MIB), ('g', GIB), ('t', TIB), ('p', PIB))
    for tail in ('', 'b', 'ib')])
_SIZE_RE = re.compile(r'^([0-9]+)\s*(?:([kmgt])(?:ib)?)?\Z', re.IGNORECASE | re.ASCII)
# The form a C tool reads with strtol and one suffix letter: no spaces, no "iB", and no leading zero
# (strtol would read 010 as octal 8, and 08 as 0 followed by junk).
_STRICT_SIZE_RE = re.compile(r'^(0|[1-9][0-9]*)([kmgt])?\Z', re.IGNORECASE | re.ASCII)
_SIZE_EXAMPLES = (('4k', 'k'), ('1m', 'm'), ('512', ''), ('1G', 'g'))
_SIZE_BINARY_EXAMPLES = (('4k', 4 * KIB), ('1m', MIB), ('1g', GIB), ('1t', TIB))


def is_number(value):
    """True for an int or a float (a real number), never for a bool: a figure of a record, not a flag."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _number(value, what):
    if not is_number(value):
        raise TypeError('%s must be a number, got %r' % (what, value))
    return value


def decimal_mb_s_to_mib_s(mb_s):
    """Convert sg3_utils' decimal MB/s (10^6 bytes/s) to MiB/s: ``mb_s / 1.048576``."""
    if mb_s is None:
        return None
    return _number(mb_s, 'MB/s') / DECIMAL_MB_PER_MIB


def _size_refusal(value, suffixes):
    """The ValueError for a size string that is not one of the forms accepted with ``suffixes``."""
    letters = list(suffixes)
    one_of = letters[0] if len(letters) == 1 else '%s or %s' % (', '.join(letters[:-1]), letters[-1])
    binary = [(example, nbytes) for example, nbytes in _SIZE_BINARY_EXAMPLES if example[-1] in suffixes][0]
    examples = ', '.join('"%s"' % example for example, letter in _SIZE_EXAMPLES if not letter or letter in suffixes)
    return ValueError('invalid size %r: expected a byte count or digits with a suffix %s (binary: %s = %d bytes), '
                      'like %s' % (value, one_of, binary[0], binary[1], examples))


def parse_size(value, suffixes='kmgt', strict=False):
    """A size as users and the tools write it, in bytes: ``"512"`` -> 512, ``"4k"`` -> 4096, ``"1G"`` -> 1073741824.

    Accepts a non-negative integer, or a string of digits with an optional
    binary suffix ``k``, ``m``, ``g``, ``t`` (any case, optionally followed by
    ``iB``: ``4KiB``).  Fractions, negative numbers and the ambiguous suffixes
    ``b``/``kB``/``MB`` raise ValueError naming the value.

    For a size handed on as text to a tool that reads fewer forms: ``suffixes``
    names the suffix letters it takes (lst: ``'km'``), and ``strict`` accepts
    only the compact form a C tool reads with strtol and one suffix letter:
    no surrounding or inner spaces, no ``iB``, no leading zero (``010`` would
    be octal 8 to strtol).
    """
    suffixes = suffixes.lower()
    if not suffixes or any(letter not in 'kmgt' for letter in suffixes):
        raise ValueError('invalid suffixes %r: a selection of k, m, g and t' % (suffixes,))
    if isinstance(value, bool):
        raise ValueError('invalid size %r: expected a byte count or a string like "4k", "1m", "1G"' % (value,))
    if isinstance(value, numbers.Integral):
        if value < 0:
            raise ValueError('invalid size %r: a size cannot be negative' % (value,))
        return int(value)
    match = None
    if isinstance(value, str):
        match = _STRICT_SIZE_RE.match(value) if strict else _SIZE_RE.match(value.strip())
    suffix = ((match.group(2) if match else None) or '').lower()
    if not match or (suffix and suffix not in suffixes):
        raise _size_refusal(value, suffixes)
    return int(match.group(1)) * _SIZE_MULTIPLIERS[suffix]


def rate_mib_s(nbytes, seconds):
    """Bandwidth in MiB/s for ``nbytes`` moved in ``seconds``; None when the time is None, zero or negative.

    A zero time means the clock could not measure the transfer; reporting
    infinity or a division error would be worse than "not measured".
    """
    if nbytes is None or seconds is None:
        return None
    _number(nbytes, 'byte count')
    if _number(seconds, 'seconds') <= 0:
        return None
    return nbytes / MIB / seconds
