# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What every survey module does the same way around its engine.

Target-side code: pure standard library, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# Ansible's own keys of an async job's result: ``async_status`` reads ``finished`` to know whether the
# job ended, and turns a timestamp there into a boolean, so the envelope's fields of these names
# appear only inside ``envelope``.
ASYNC_RESERVED_KEYS = ('started', 'finished')


def module_result(envelope):
    """The module's result: the envelope under ``envelope`` and its keys at the top level, except Ansible's async keys."""
    result = dict((key, value) for key, value in envelope.items() if key not in ASYNC_RESERVED_KEYS)
    result['envelope'] = envelope
    return result


class RawOutput:
    """The I/O kit's ``.summary`` and ``.detail`` files, written as the survey goes.

    Flushed after every write, so that what a killed survey measured is on disk for the user to read.
    """

    def __init__(self, prefix):
        self.summary_path = prefix + '.summary'
        self.detail_path = prefix + '.detail'
        self._summary = open(self.summary_path, 'w')
        self._detail = open(self.detail_path, 'w')

    def summary(self, text):
        self._summary.write(text)
        self._summary.flush()

    def detail(self, text):
        self._detail.write(text)
        self._detail.flush()

    def close(self):
        self._summary.close()
        self._detail.close()
