# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Property-based fuzzing of every output parser.

For any string a parser returns its result type (list or dict) that is plain
JSON; for non-text input it raises ParserError; it never raises anything else.
Inputs: random text, mutations of every captured fixture (lines deleted,
duplicated or shuffled, characters inserted or replaced, numbers swapped for
huge values, ``nan`` or ``-``, truncation), random bytes and non-strings.
"""

from __future__ import annotations

import glob
import importlib
import json
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.lustre.iokit.plugins.module_utils.parsers._text import ParserError

# Parser format -> top-level type of its result (as each parse_* filter's RETURN documents it).
FORMATS = {
    'sgpdd_survey': list,
    'sgp_dd': dict,
    'obdfilter_survey': list,
    'mds_survey': list,
    'ost_survey': dict,
    'lst_survey': list,
    'lst_stat': list,
    'lctl_dl': list,
    'brw_stats': dict,
    'mdtest': dict,
    'ior': list,
}
FIXTURES = os.path.join(os.path.dirname(__file__), 'fixtures')
PACKAGE = 'ansible_collections.lustre.iokit.plugins'
FUZZ = settings(max_examples=200, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _parser(fmt):
    module = importlib.import_module('%s.module_utils.parsers.%s' % (PACKAGE, fmt))
    return getattr(module, 'parse_%s' % fmt)


def _fixture_texts(fmt):
    texts = []
    for path in sorted(glob.glob(os.path.join(FIXTURES, fmt, '*.txt'))):
        with open(path, encoding='utf-8') as handle:
            texts.append(handle.read())
    # A format without captured fixtures is still fuzzed from a small seed.
    return texts or ['%s 1 2 3\n' % fmt]


def _check_result(fmt, result):
    assert isinstance(result, FORMATS[fmt]), '%s returned %s' % (fmt, type(result).__name__)
    # Raises on NaN/inf, tuples survive as lists, objects that are not JSON fail.
    json.dumps(result, allow_nan=False)


_NUMBER_RE = re.compile(r'\d+(?:\.\d+)?')
_REPLACEMENTS = st.sampled_from(['9' * 40, '1e308', '-1', 'nan', '-nan', 'inf', '-', 'NA', '0', '', '99999999999.999999'])
_NOISE_LINES = st.sampled_from([
    '[root@oss1 ~]# ', '--------------------------------------------------------------------------',
    '[node01:12345] 3 more processes have sent help message', 'done!', '...', '# ', '\\', '=', '|', ':',
    'write', 'read', 'SUMMARY rate: (of 1 iterations)', 'snapshot_time:', 'ost 1 sz 1K rsz 1K obj 1 thr 1',
])


@st.composite
def mutated_text(draw, seeds):
    text = draw(st.sampled_from(seeds))
    lines = text.split('\n')
    for _step in range(draw(st.integers(min_value=1, max_value=6))):
        action = draw(st.sampled_from(['delete', 'duplicate', 'shuffle', 'insert_char', 'replace_char',
                                       'number', 'truncate', 'noise_line', 'join_lines']))
        if not lines:
            lines = ['']
        index = draw(st.integers(min_value=0, max_value=len(lines) - 1))
        if action == 'delete':
            del lines[index]
        elif action == 'duplicate':
            lines.insert(index, lines[index])
        elif action == 'shuffle':
            lines = draw(st.permutations(lines))
        elif action in ('insert_char', 'replace_char'):
            line = lines[index]
            pos = draw(st.integers(min_value=0, max_value=len(line)))
            char = draw(st.characters(blacklist_categories=('Cs',)))
            end = pos + 1 if action == 'replace_char' else pos
            lines[index] = line[:pos] + char + line[end:]
        elif action == 'number':
            replacement = draw(_REPLACEMENTS)
            count = draw(st.integers(min_value=1, max_value=3))
            lines[index] = _NUMBER_RE.sub(replacement, lines[index], count=count)
        elif action == 'truncate':
            joined = '\n'.join(lines)
            lines = joined[:draw(st.integers(min_value=0, max_value=len(joined)))].split('\n')
        elif action == 'noise_line':
            lines.insert(index, draw(_NOISE_LINES))
        elif action == 'join_lines' and index + 1 < len(lines):
            lines[index:index + 2] = [lines[index] + draw(st.sampled_from([' ', ' \\', ''])) + lines[index + 1]]
    return '\n'.join(lines)


@pytest.mark.parametrize('fmt', sorted(FORMATS))
@FUZZ
@given(text=st.text(max_size=400))
def test_random_text(fmt, text):
    try:
        result = _parser(fmt)(text)
    except ParserError:
        # Text that is mostly control characters is treated as binary on purpose.
        return
    _check_result(fmt, result)


@pytest.mark.parametrize('fmt', sorted(FORMATS))
@FUZZ
@given(data=st.data())
def test_mutated_fixtures(fmt, data):
    text = data.draw(mutated_text(_fixture_texts(fmt)))
    try:
        result = _parser(fmt)(text)
    except ParserError:
        return
    _check_result(fmt, result)


@pytest.mark.parametrize('fmt', sorted(FORMATS))
@FUZZ
@given(data=st.binary(max_size=300))
def test_random_bytes(fmt, data):
    try:
        result = _parser(fmt)(data)
    except ParserError:
        return
    _check_result(fmt, result)


_NON_TEXT = st.one_of(
    st.integers(), st.floats(), st.booleans(),
    st.lists(st.text(max_size=5), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.tuples(st.text(max_size=5)),
    st.builds(object),
)


@pytest.mark.parametrize('fmt', sorted(FORMATS))
@FUZZ
@given(value=_NON_TEXT)
def test_non_text_raises_parser_error(fmt, value):
    with pytest.raises(ParserError):
        _parser(fmt)(value)
