"""trnsim from Python (notebooks, scripts): simulate or trace a kernel with the trnsim command.

    import trnsim
    stats = trnsim.run("kernels/add.py::vector_add",
                       inputs={"a": "float32[256,512]", "b": numpy_array}, config="trn2")
    stats["time"]["kernel_us"]                      # the `trnsim run --json` statistics
    lowered = trnsim.trace("kernels/add.py::vector_add", inputs=..., config="trn1")

Both run the trnsim binary: $TRNSIM_BINARY, else ``trnsim`` on PATH, else the one built beside
this package (the source tree's build/src/cli/trnsim, or bin/trnsim of an installed tree). A
failure raises TrnsimError carrying the command's message and exit code. Standard library only;
NumPy arrays are accepted as inputs when NumPy is installed (only their dtype and shape matter).
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import shutil
import subprocess
from pathlib import Path

__all__ = ["TrnsimError", "binary", "run", "trace"]

_ERROR_PREFIXES = ("trnsim: error: ", "trnsim: internal error: ")


class TrnsimError(Exception):
    """A trnsim command failed. ``str(error)`` is its message (e.g. "k.py:9: the kernel raised
    ValueError: ..."); ``exit_code`` is 2 for invalid input, 70 for an internal error; ``stderr``
    is everything the command wrote there (a Python traceback of the kernel included)."""

    def __init__(self, message, exit_code=None, stderr="", command=()):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.stderr = stderr
        self.command = list(command)


def binary():
    """Path of the trnsim binary the functions run (see the module's docstring)."""
    chosen = os.environ.get("TRNSIM_BINARY")
    if chosen:
        return chosen
    on_path = shutil.which("trnsim")
    if on_path:
        return on_path
    # This file is <root>/src/frontend/trnsim/__init__.py in the source tree and
    # <prefix>/share/trnsim/python/trnsim/__init__.py when installed.
    root = Path(__file__).resolve().parents[3]
    for candidate in (root / "build" / "src" / "cli" / "trnsim", root / "bin" / "trnsim"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    raise TrnsimError("cannot find the trnsim binary: set TRNSIM_BINARY to its path, put it on "
                      "PATH, or build it (scripts/build.sh)")


def run(kernel, inputs=None, kwargs=None, grid=None, config="trn2", set=None, params=None):
    """Simulates ``kernel`` on ``config`` and returns the `trnsim run --json` statistics.

    kernel  an NKI Python kernel "FILE.py::FUNCTION" (or the function itself, when it is defined
            in a file), or a JSON kernel file
    inputs  {name: "DTYPE[D0,D1,..]" | "FILE.npy" | array with .dtype and .shape} (NKI kernels)
    kwargs  {name: Python literal} (NKI kernels)
    grid    launch grid: int, "D0,D1" or (D0, D1) (NKI kernels)
    config  built-in config name or JSON file
    set     {"dotted.config.key": value} overrides, e.g. {"compiler.loop_tile_buffers": 1}
    params  {name: int or expression string} (JSON kernels)
    """
    arguments = ["run", _kernel_reference(kernel), "--config", str(config)]
    arguments += _set_arguments(set)
    arguments += _nki_arguments(inputs, kwargs, grid)
    for name, value in (params or {}).items():
        arguments += ["--param", f"{name}={value}"]
    arguments.append("--json")
    return json.loads(_call(arguments))


def trace(kernel, inputs=None, kwargs=None, grid=None, config="trn2", set=None):
    """Lowers an NKI Python kernel for ``config`` and returns the trnsim-kernel/1 JSON document
    that `run` would simulate (`trnsim nki trace`). Arguments as for `run`."""
    arguments = ["nki", "trace", _kernel_reference(kernel), "--config", str(config)]
    arguments += _set_arguments(set)
    arguments += _nki_arguments(inputs, kwargs, grid)
    return json.loads(_call(arguments))


def _kernel_reference(kernel):
    if isinstance(kernel, (str, os.PathLike)):
        return os.fspath(kernel)
    function = getattr(kernel, "func", kernel)  # an @nki.jit kernel wraps its function
    function = inspect.unwrap(function)
    if not callable(function) or not hasattr(function, "__name__"):
        raise TypeError(f"kernel: expected 'FILE.py::FUNCTION', a JSON kernel file or a kernel "
                        f"function, found {type(kernel).__name__}")
    try:
        source = inspect.getsourcefile(function)
    except TypeError:
        source = None
    if not source or not source.endswith(".py") or not os.path.isfile(source):
        raise TrnsimError(f"kernel {function.__name__} is not defined in a .py file (a notebook "
                          "cell?): save it in a file and pass 'FILE.py::FUNCTION'")
    return f"{source}::{function.__name__}"


def _input_spec(name, value):
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    dtype = getattr(value, "dtype", None)
    shape = getattr(value, "shape", None)
    if dtype is None or shape is None:
        raise TypeError(f"inputs['{name}']: expected 'DTYPE[D0,D1,..]', a .npy file or an array "
                        f"with dtype and shape, found {type(value).__name__}")
    dtype_name = getattr(dtype, "name", str(dtype))
    return f"{dtype_name}[{','.join(str(int(d)) for d in shape)}]"


def _python_literal(name, value):
    text = repr(value)
    try:
        same = ast.literal_eval(text) == value
    except (ValueError, SyntaxError):
        same = False
    if not same:
        raise TypeError(f"kwargs['{name}']: {text} is not a Python literal (a number, string, "
                        "bool, None, or a tuple, list or dict of them)")
    return text


def _nki_arguments(inputs, kwargs, grid):
    arguments = []
    for name, value in (inputs or {}).items():
        arguments += ["--input", f"{name}={_input_spec(name, value)}"]
    for name, value in (kwargs or {}).items():
        arguments += ["--kwarg", f"{name}={_python_literal(name, value)}"]
    if grid is not None:
        if isinstance(grid, (tuple, list)):
            grid = ",".join(str(int(d)) for d in grid)
        arguments += ["--grid", str(grid)]
    return arguments


def _set_arguments(overrides):
    arguments = []
    for key, value in (overrides or {}).items():
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        arguments += ["--set", f"{key}={text}"]
    return arguments


def _call(arguments):
    command = [binary()] + arguments
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    except OSError as e:
        raise TrnsimError(f"cannot run {command[0]}: {e.strerror}", command=command) from None
    if done.returncode != 0:
        raise TrnsimError(_message(done.stderr, done.returncode), done.returncode, done.stderr,
                          command)
    return done.stdout


def _message(stderr, exit_code):
    """The command's error message: its last "trnsim: error: ..." line, without the prefix."""
    for line in reversed(stderr.splitlines()):
        for prefix in _ERROR_PREFIXES:
            if line.startswith(prefix):
                return line[len(prefix):]
    lines = [line for line in stderr.splitlines() if line.strip()]
    return lines[-1] if lines else f"trnsim exited with code {exit_code}"
