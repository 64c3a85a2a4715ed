"""Helpers for the NKI front end's unit tests: trace a kernel written in the test."""

import json
import os
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
FRONTEND = os.path.join(ROOT, "src", "frontend")
if FRONTEND not in sys.path:
    sys.path.insert(0, FRONTEND)

from trnsim_nki import api_language, driver, dtypes  # noqa: E402
from trnsim_nki.errors import KernelError, UsageError  # noqa: E402

CLASSIC = "from neuronxcc import nki\nimport neuronxcc.nki.language as nl\nimport neuronxcc.nki.isa as nisa\n"
NEW = "import nki\nimport nki.language as nl\nimport nki.isa as nisa\n"


def target(**overrides):
    t = dict(api_language.DEFAULT_TARGET)
    compiler = dict(t["compiler"])
    compiler.update(overrides.pop("compiler", {}))
    t.update(overrides)
    t["compiler"] = compiler
    return t


class TraceCase(unittest.TestCase):
    """Writes kernel source to a temporary file and traces it."""

    def setUp(self):
        self._dir = tempfile.TemporaryDirectory()
        self.addCleanup(self._dir.cleanup)
        self._count = 0

    def write(self, source, header=CLASSIC):
        self._count += 1
        path = os.path.join(self._dir.name, f"kernel_{self._count}.py")
        with open(path, "w") as f:
            f.write(header + textwrap.dedent(source))
        return path

    def trace(self, source, func, inputs, kwargs=None, header=CLASSIC, grid=(), **target_overrides):
        path = self.write(source, header)
        parsed = {name: (dtypes.dtype_of(d), tuple(s)) for name, (d, s) in inputs.items()}
        doc, info = driver.trace_kernel(path, func, parsed, kwargs or {}, grid,
                                        target(**target_overrides))
        return doc, info

    def trace_error(self, source, func, inputs, kwargs=None, header=CLASSIC, **target_overrides):
        """The KernelError message and its kernel line."""
        from trnsim_nki.errors import user_location

        path = self.write(source, header)
        parsed = {name: (dtypes.dtype_of(d), tuple(s)) for name, (d, s) in inputs.items()}
        try:
            driver.trace_kernel(path, func, parsed, kwargs or {}, (), target(**target_overrides))
        except KernelError as caught:
            err = caught
        else:
            self.fail("the kernel traced without an error")
        where = err.where or user_location(err.__traceback__, lambda f: os.path.basename(f))
        line = where[1] if where else None
        return err.message, line


def instructions(body):
    """Every instruction of a lowered program, depth first (loop bodies once)."""
    out = []
    for st in body:
        if "op" in st:
            out.append(st)
        for key in ("body", "then", "else"):
            if key in st:
                out.extend(instructions(st[key]))
    return out


def loops(body):
    out = []
    for st in body:
        if "for" in st:
            out.append(st)
            out.extend(loops(st["body"]))
        for key in ("then", "else"):
            if key in st:
                out.extend(loops(st[key]))
    return out


def dumps(doc):
    return json.dumps(doc, indent=1)
