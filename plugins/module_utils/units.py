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

import math
import numbers
import re

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
TIB = 1024 * GIB

# One MiB is 1.048576 decimal MB (sg3_utils' MB is 10^6 bytes).
DECIMAL_MB_PER_MIB = MIB / 1000000

# Binary multipliers, as lctl, lfs and the I/O-kit scripts use them.  "kb",
# "mb", "b" are refused on purpose: dd reads "kB" as 1000 and "b" as 512.
_SIZE_MULTIPLIERS = {'': 1, 'k': KIB, 'm': MIB, 'g': GIB, 't': TIB}
_SIZE_RE = re.compile(r'^([0-9]+)\s*(?:([kmgt])(?:ib)?)?\Z', re.IGNORECASE | re.ASCII)


def _number(value, what):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError('%s must be a number, got %r' % (what, value))
    return value


def decimal_mb_s_to_mib_s(mb_s):
    """Convert sg3_utils' decimal MB/s (10^6 bytes/s) to MiB/s: ``mb_s / 1.048576``."""
    if mb_s is None:
        return None
    return _number(mb_s, 'MB/s') / DECIMAL_MB_PER_MIB


def kib_to_mib(kib):
    """KiB to MiB (``kib / 1024``), e.g. the I/O kit's ``sz`` column (KiB) to a size in MiB."""
    if kib is None:
        return None
    return _number(kib, 'KiB') / KIB


def bytes_to_mib(nbytes):
    """Bytes to MiB (``nbytes / 1048576``)."""
    if nbytes is None:
        return None
    return _number(nbytes, 'byte count') / MIB


def parse_size(value):
    """A size as users and the tools write it, in bytes: ``"512"`` -> 512, ``"4k"`` -> 4096, ``"1G"`` -> 1073741824.

    Accepts a non-negative integer, or a string of digits with an optional
    binary suffix ``k``, ``m``, ``g``, ``t`` (any case, optionally followed by
    ``iB``: ``4KiB``).  Fractions, negative numbers and the ambiguous suffixes
    ``b``/``kB``/``MB`` raise ValueError naming the value.
    """
    if isinstance(value, bool):
        raise ValueError('invalid size %r: expected a byte count or a string like "4k", "1m", "1G"' % (value,))
    if isinstance(value, numbers.Integral):
        if value < 0:
            raise ValueError('invalid size %r: a size cannot be negative' % (value,))
        return int(value)
    match = _SIZE_RE.match(value.strip()) if isinstance(value, str) else None
    if not match:
        raise ValueError('invalid size %r: expected a byte count or digits with a suffix k, m, g or t '
                         '(binary: 4k = 4096 bytes), like "4k", "1m", "512", "1G"' % (value,))
    digits, suffix = match.groups()
    return int(digits) * _SIZE_MULTIPLIERS[(suffix or '').lower()]


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


def round_for_report(value, digits=2):
    """``value`` rounded to ``digits`` decimals for reports; None, NaN and infinities become None.

    Only for presentation: records keep full precision.
    """
    if value is None:
        return None
    _number(value, 'value')
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return round(value, digits)
