"""Command line of the NKI front end: ``python3 -m trnsim_nki trace FILE.py::FUNC ...``.

trnsim's ``run``/``check``/``nki trace`` commands call this with the target (the configuration's
architecture constants and ``compiler`` section, as JSON). Exit codes: 0 success, 2 invalid
kernel or input (one message on stderr naming the kernel's file:line), 70 internal error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback

from . import api_language, driver, emit
from .errors import KernelError, UsageError, user_location

EXIT_INVALID = 2
EXIT_INTERNAL = 70


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def main(argv=None):
    parser = _Parser(prog="trnsim-nki", description="Trace an NKI kernel into trnsim-kernel/1 JSON")
    sub = parser.add_subparsers(dest="command")
    t = sub.add_parser("trace", help="trace a kernel")
    t.add_argument("kernel", help="FILE.py::FUNCTION")
    t.add_argument("--input", action="append", default=[], help="NAME=DTYPE[SHAPE] or NAME=FILE.npy")
    t.add_argument("--kwarg", action="append", default=[], help="NAME=VALUE (a Python literal)")
    t.add_argument("--grid", default=None, help="launch grid, e.g. 2,2")
    t.add_argument("--target", default=None, help="target JSON file ('-' for stdin)")
    t.add_argument("-o", "--output", default=None, help="write the JSON here (default stdout)")
    t.add_argument("--info", default=None, help="write tracing statistics (JSON) here")
    t.add_argument("--traceback", action="store_true", help="show Python tracebacks")
    args = None
    try:
        args = parser.parse_args(argv)
        if args.command != "trace":
            raise UsageError("expected the 'trace' command")
        target = _load_target(args.target)
        path, func = driver.parse_kernel_spec(args.kernel)
        inputs = {}
        for text in args.input:
            name, dtype, shape = driver.parse_input(text)
            if name in inputs:
                raise UsageError(f"--input {name} is given twice")
            inputs[name] = (dtype, shape)
        kwargs = {}
        for text in args.kwarg:
            name, value = driver.parse_kwarg(text)
            if name in kwargs:
                raise UsageError(f"--kwarg {name} is given twice")
            kwargs[name] = value
        grid = driver.parse_grid(args.grid)
        stdout = sys.stdout
        sys.stdout = sys.stderr  # what the kernel prints is not part of the lowered JSON
        try:
            doc, info = driver.trace_kernel(path, func, inputs, kwargs, grid, target)
        finally:
            sys.stdout = stdout
        text = emit.dumps(doc)
        if args.output:
            tmp = args.output + ".tmp"
            with open(tmp, "w") as f:
                f.write(text)
            os.replace(tmp, args.output)
        else:
            sys.stdout.write(text)
        if args.info:
            with open(args.info, "w") as f:
                json.dump(info, f)
        return 0
    except UsageError as e:
        _report(str(e), None, args)
        return EXIT_INVALID
    except KernelError as e:
        where = e.where or user_location(e.__traceback__, _display())
        _report(e.message, where, args, e)
        return EXIT_INVALID
    except SyntaxError as e:
        where = (_display()(e.filename), e.lineno) if e.filename else None
        _report(f"SyntaxError: {e.msg}", where, args, e)
        return EXIT_INVALID
    except RecursionError as e:
        where = user_location(e.__traceback__, _display())
        _report("the kernel recursed too deeply", where, args, e)
        return EXIT_INVALID
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as e:  # noqa: BLE001 - the kernel's own exception
        where = user_location(e.__traceback__, _display())
        if where is None:
            sys.stderr.write("trnsim: internal error in the NKI front end: "
                             f"{type(e).__name__}: {e}\n")
            traceback.print_exc()
            return EXIT_INTERNAL
        _report(f"the kernel raised {type(e).__name__}: {e}", where, args, e)
        return EXIT_INVALID


def _display():
    from .trace import display_path_factory

    return display_path_factory(os.getcwd())


def _report(message, where, args, exc=None):
    if exc is not None and args is not None and getattr(args, "traceback", False):
        traceback.print_exception(type(exc), exc, exc.__traceback__)
    prefix = f"{where[0]}:{where[1]}: " if where else ""
    sys.stderr.write(f"trnsim: error: {prefix}{message}\n")


def _load_target(path):
    if path is None:
        return api_language.DEFAULT_TARGET
    try:
        if path == "-":
            data = json.load(sys.stdin)
        else:
            with open(path) as f:
                data = json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError(f"--target {path}: {e}") from None
    target = dict(api_language.DEFAULT_TARGET)
    compiler = dict(target["compiler"])
    compiler.update(data.get("compiler", {}))
    target.update(data)
    target["compiler"] = compiler
    return target


if __name__ == "__main__":
    sys.exit(main())
