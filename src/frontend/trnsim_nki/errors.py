"""Errors of the front end and where they point.

``KernelError`` is a problem with the kernel (a shape mismatch, a tile over the partition limit,
an unsupported call). It is raised deep inside the tracer; the location reported to the user is
the innermost frame of the traceback that belongs to the kernel's own files, so the message names
the kernel's ``file:line`` whatever the depth of the front end's code. ``UsageError`` is a bad
command line or input specification (no kernel location).
"""

from __future__ import annotations

import os
import traceback

FRONTEND_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class KernelError(Exception):
    """Invalid kernel. ``where`` may be set explicitly as (file, line)."""

    def __init__(self, message, where=None):
        super().__init__(message)
        self.message = message
        self.where = where


class UsageError(Exception):
    """Invalid command line, input spec or keyword argument."""


def is_frontend_file(filename):
    try:
        path = os.path.abspath(filename)
    except (TypeError, ValueError):
        return False
    return path.startswith(FRONTEND_DIR + os.sep)


def user_location(tb, display_path):
    """(file, line) of the innermost traceback frame in the kernel's files, or None.

    ``display_path`` maps an absolute file name to the text shown to the user."""
    found = None
    for frame, lineno in traceback.walk_tb(tb):
        filename = frame.f_code.co_filename
        if filename.startswith("<") or is_frontend_file(filename):
            continue
        found = (display_path(filename), lineno)
    return found


def caller_location(display_path):
    """(file, line) of the innermost kernel frame of the current stack."""
    import sys

    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith("<") and not is_frontend_file(filename):
            return display_path(filename), frame.f_lineno
        frame = frame.f_back
    return ("<unknown>", 0)
