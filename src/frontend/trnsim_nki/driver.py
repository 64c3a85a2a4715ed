"""Tracing a kernel function end to end: load the file, build the arguments, trace (restarting
with more loops unrolled while Python needs concrete loop indices), allocate, write JSON.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import os
import re
import struct
import sys

from . import alloc, api_language, dtypes, emit, ops, trace
from .errors import KernelError, UsageError
from .expr import NotAffine, Sym, Var
from .tensor import HBM, Storage, Tensor

MAX_RESTARTS = 64
_SPEC_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z_0-9]*)\s*\[\s*([0-9,\s]*)\]\s*$")


# --- command-line values -----------------------------------------------------------------------------


def parse_kernel_spec(spec):
    """'path/file.py::function' -> (path, function or None)."""
    if "::" in spec:
        path, _, func = spec.rpartition("::")
        if not func:
            raise UsageError(f"kernel '{spec}': expected FILE.py::FUNCTION")
        return path, func
    return spec, None


def parse_input(text, base_dir=None):
    """'NAME=DTYPE[D0,D1,...]' or 'NAME=FILE.npy' -> (name, dtype, shape)."""
    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier():
        raise UsageError(f"--input '{text}': expected NAME=DTYPE[SHAPE] (e.g. a=float32[128,512]) "
                         "or NAME=FILE.npy")
    value = value.strip()
    if value.endswith(".npy"):
        path = value if base_dir is None or os.path.isabs(value) else os.path.join(base_dir, value)
        dtype, shape = read_npy_header(path, text)
        return name, dtype, shape
    match = _SPEC_RE.match(value)
    if not match:
        raise UsageError(f"--input '{text}': expected NAME=DTYPE[SHAPE] (e.g. a=float32[128,512]) "
                         "or NAME=FILE.npy")
    try:
        dtype = dtypes.dtype_of(match.group(1))
    except dtypes.DTypeError as e:
        raise UsageError(f"--input '{text}': {e}") from None
    dims = [d.strip() for d in match.group(2).split(",") if d.strip()]
    if not dims:
        raise UsageError(f"--input '{text}': the shape needs at least one dimension")
    shape = tuple(int(d) for d in dims)
    if any(d <= 0 for d in shape):
        raise UsageError(f"--input '{text}': dimensions must be positive")
    return name, dtype, shape


_NPY_DTYPES = {"f4": "float32", "f2": "float16", "i4": "int32", "i2": "int16", "i1": "int8",
               "u1": "uint8", "u2": "uint16", "u4": "uint32", "b1": "bool"}


def read_npy_header(path, what):
    try:
        with open(path, "rb") as f:
            magic = f.read(6)
            if magic != b"\x93NUMPY":
                raise UsageError(f"--input '{what}': {path} is not a .npy file")
            major = f.read(2)[0]
            if major == 1:
                length = struct.unpack("<H", f.read(2))[0]
            else:
                length = struct.unpack("<I", f.read(4))[0]
            header = f.read(length).decode("latin1")
    except OSError as e:
        raise UsageError(f"--input '{what}': cannot read {path}: {e.strerror}") from None
    try:
        info = ast.literal_eval(header)
        descr, shape = info["descr"], tuple(info["shape"])
    except (ValueError, SyntaxError, KeyError, TypeError):
        raise UsageError(f"--input '{what}': {path} has an unreadable .npy header") from None
    if not isinstance(descr, str):
        raise UsageError(f"--input '{what}': {path}: structured arrays are not supported")
    code = descr.lstrip("<>|=")
    if code in ("V2", "bf16") or "bfloat16" in code:
        return dtypes.bfloat16, shape
    if code in ("f8", "i8", "u8"):
        raise UsageError(f"--input '{what}': {path} holds 64-bit values ({descr}); NKI has no "
                         "64-bit types: save it as float32 or int32")
    if code not in _NPY_DTYPES:
        raise UsageError(f"--input '{what}': {path} has dtype {descr}, not an NKI dtype")
    if not shape:
        raise UsageError(f"--input '{what}': {path} holds a scalar, not an array")
    return dtypes.dtype_of(_NPY_DTYPES[code]), shape


def parse_kwarg(text):
    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier():
        raise UsageError(f"--kwarg '{text}': expected NAME=VALUE")
    value = value.strip()
    try:
        return name, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return name, value


_GRID_NC = re.compile(r"^nc\(\s*(\d+)\s*\)(?:\s*\*\s*(\d+))?$")


def parse_grid(text):
    """'2,2' or 'nc(2)*2,4': integers (programs run one after the other on one NeuronCore) or
    nc(K) / nc(K)*N (K NeuronCores, N programs each)."""
    if text is None or text == "":
        return ()
    dims = []
    for part in text.split(","):
        part = part.strip()
        match = _GRID_NC.match(part)
        if match:
            cores, serial = int(match.group(1)), int(match.group(2) or 1)
        else:
            try:
                cores, serial = 1, int(part)
            except ValueError:
                raise UsageError(f"--grid '{text}': expected integers or nc(K), like 2,2 or "
                                 "nc(2)*2") from None
        if cores <= 0 or serial <= 0:
            raise UsageError(f"--grid '{text}': dimensions must be positive")
        dims.append((cores, serial))
    if sum(1 for c, _ in dims if c > 1) > 1:
        raise UsageError(f"--grid '{text}': at most one dimension may be nc(K)")
    return tuple(dims)


# --- loading the kernel -------------------------------------------------------------------------------


def load_module(path):
    if not os.path.exists(path):
        raise UsageError(f"{path}: no such file")
    if os.path.isdir(path):
        raise UsageError(f"{path}: is a directory, expected a Python file")
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as e:
        raise UsageError(f"{path}: cannot be read: {e.strerror}") from None
    # compile() rejects some texts with other exceptions than SyntaxError: NUL bytes and bytes
    # that are not UTF-8 (ValueError), nesting too deep for its parser (MemoryError).
    display = trace.display_path_factory(os.getcwd())

    def not_python(message, offset):
        line = source.count(b"\n", 0, offset) + 1
        return KernelError(f"SyntaxError: {message}", where=(display(os.path.abspath(path)), line))

    if b"\0" in source:
        raise not_python("a NUL byte in the source (expected Python source text)",
                         source.index(b"\0"))
    try:
        code = compile(source, path, "exec", dont_inherit=True)
    except UnicodeDecodeError as e:
        try:  # where in the file (the exception's offset may be within one line)
            source.decode("utf-8")
        except UnicodeDecodeError as whole:
            raise not_python(f"the source is not UTF-8 text (byte 0x{source[whole.start]:02x})",
                             whole.start) from None
        raise not_python(f"the source cannot be decoded ({e.reason})", 0) from None
    except (MemoryError, RecursionError):
        raise not_python("the source nests too deeply for Python's parser", 0) from None
    except ValueError as e:
        raise not_python(f"the source cannot be parsed ({e})", 0) from None
    directory = os.path.dirname(os.path.abspath(path))
    if directory not in sys.path:
        sys.path.insert(0, directory)
    name = "trnsim_kernel_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"{path}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    exec(code, module.__dict__)  # what the loader's exec_module does, with the code compiled above
    return module


def find_kernel(module, func_name, path):
    from .api_top import Kernel

    if func_name is None:
        kernels = [(n, v) for n, v in vars(module).items() if isinstance(v, Kernel)
                   and getattr(v.func, "__module__", None) == module.__name__]
        if len(kernels) == 1:
            return kernels[0][0], kernels[0][1].func
        names = ", ".join(n for n, _ in kernels) or "none"
        raise UsageError(f"{path}: name the kernel function as {path}::FUNCTION "
                         f"(decorated kernels found: {names})")
    value = getattr(module, func_name, None)
    if value is None:
        candidates = [n for n, v in vars(module).items() if callable(v) and not n.startswith("_")]
        hint = _closest(func_name, candidates)
        raise UsageError(f"{path}: no function '{func_name}'" + (f"; did you mean '{hint}'?" if hint else ""))
    func = getattr(value, "func", value)
    while hasattr(func, "__wrapped__"):
        func = func.__wrapped__
    if not callable(func):
        raise UsageError(f"{path}: '{func_name}' is not a function")
    return func_name, func


def _closest(name, candidates):
    import difflib

    match = difflib.get_close_matches(name, candidates, n=1)
    return match[0] if match else None


def detect_api(module):
    from . import api_top

    for value in vars(module).values():
        mod_name = getattr(value, "__name__", "")
        if isinstance(mod_name, str) and (mod_name == "nki" or mod_name.startswith("nki.")):
            return "new"
        if value is api_top.NEW_MARKER:
            return "new"
    return "classic"


# --- tracing -------------------------------------------------------------------------------------------


def bind_arguments(func, inputs, kwargs, path):
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        raise UsageError(f"{path}: cannot read the signature of '{func.__name__}'") from None
    args = {}
    unknown = set(inputs) | set(kwargs)
    missing = []
    for pname, param in signature.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if pname in inputs:
            dtype, shape = inputs[pname]
            storage = Storage(HBM, dtype, shape, 0, pname, hbm_kind="input")
            trace.current().hbm.append(storage)
            args[pname] = Tensor.whole(storage)
        elif pname in kwargs:
            args[pname] = kwargs[pname]
        elif param.default is inspect.Parameter.empty:
            missing.append(pname)
        unknown.discard(pname)
    if unknown:
        names = ", ".join(sorted(unknown))
        params = ", ".join(signature.parameters)
        raise UsageError(f"{path}::{func.__name__} has no parameter {names} (parameters: {params})")
    if missing:
        raise UsageError(
            f"{path}::{func.__name__} needs {', '.join(missing)}: give tensors with "
            "--input NAME=DTYPE[SHAPE] and other values with --kwarg NAME=VALUE")
    return args


def trace_kernel(path, func_name, inputs, kwargs, grid, target):
    """Returns (document dict, info dict)."""
    api_language.set_target(target)
    base_dir = os.getcwd()
    display = trace.display_path_factory(base_dir)
    module = load_module(path)
    func_name, func = find_kernel(module, func_name, path)
    api = detect_api(module)
    unroll = set()
    restarts = 0
    while True:
        tracer = trace.Tracer(target, unroll, display, api)
        tracer.cores = 1
        tracer.grid = ()
        tracer.program_ids = {}
        tracer.unrolled_grid = 0
        tracer.grid_tensors = {}
        ops.reset_touch_state()
        try:
            with tracer:
                args = bind_arguments(func, inputs, kwargs, path)
                result = run_grid(tracer, func, args, grid_dims(grid))
                tracer.flush()
                tracer.check_pending_restart()
            break
        except NotAffine as e:
            sites = {v.owner.site for v in e.variables if isinstance(v, Var) and v.owner is not None}
            new = sites - unroll
            if not new:
                raise KernelError(f"{e.what}: this needs a value that is only known at run time")
            unroll |= new
        except trace.Restart as e:
            new = set(e.sites) - unroll
            if not new:
                raise KernelError(e.reason)
            unroll |= new
        restarts += 1
        if restarts > MAX_RESTARTS:
            raise KernelError("the kernel could not be traced (too many loops need unrolling)")
    with tracer:
        pools = alloc.allocate(tracer)
    outputs = _outputs(result)
    description = _description(path, func_name, inputs, kwargs, grid, target, api, outputs, unroll)
    doc = emit.build_document(tracer, pools, func_name, description, list(inputs))
    info = {"instructions_traced": tracer.instructions, "restarts": restarts,
            "unrolled_loops": sorted(f"{f}:{line}" for f, line in unroll if isinstance(line, int)),
            "api": api}
    return doc, info


def grid_dims(grid):
    """Launch-grid entries as (cores, serial) pairs: ``4`` runs 4 programs one after the other on
    one NeuronCore (the classic documented behaviour), ``nl.nc(2)`` distributes 2 programs over
    2 NeuronCores, ``nl.spmd_dim(nl.nc(2), 2)`` (or ``nl.nc(2) * 2``) 4 programs over 2 cores."""
    from .api_language import SpmdDim, _Nc

    dims = []
    for entry in grid:
        if isinstance(entry, _Nc):
            dims.append((entry.k, 1))
        elif isinstance(entry, SpmdDim):
            dims.append((entry.nc.k, entry.n))
        elif isinstance(entry, tuple):
            dims.append(entry)
        else:
            try:
                n = int(entry)
            except (TypeError, ValueError):
                raise KernelError(f"launch grid entries must be integers or nl.nc(k), found {entry!r}") from None
            if n <= 0:
                raise KernelError(f"launch grid entries must be positive, found {n}")
            dims.append((1, n))
    if sum(1 for c, _ in dims if c > 1) > 1:
        raise KernelError("at most one launch-grid dimension may be distributed over NeuronCores")
    return dims


def run_grid(tracer, func, args, dims):
    """Calls ``func`` once per program of the launch grid ``dims`` (grid_dims pairs)."""
    saved = dict(tracer.program_ids), tracer.grid
    tracer.grid = tuple(c * n for c, n in dims)
    try:
        return _run_grid(tracer, func, args, dims, 0)
    finally:
        tracer.program_ids, tracer.grid = saved


def _run_grid(tracer, func, args, dims, axis):
    if axis == len(dims):
        return func(**args)
    cores, serial = dims[axis]
    if cores > 1:
        return _run_cores(tracer, func, args, dims, axis, cores, serial)
    return _run_serial(tracer, func, args, dims, axis, serial, 0)


def _run_cores(tracer, func, args, dims, axis, cores, serial):
    """A grid dimension over NeuronCores: the program runs SPMD, its id uses ``pid``."""
    if tracer.cores not in (1, cores):
        raise KernelError(f"the kernel is launched on {tracer.cores} NeuronCores and on {cores}")
    tracer.cores = cores
    site = ("<cores>", axis)
    var = Var("pid", 0, cores, 1)
    var.owner = trace.Frame(True, var, None, site, cores, 0, 1)
    pid = Sym.var(var)
    if site not in tracer.unroll_sites:
        return _run_serial(tracer, func, args, dims, axis, serial, pid * serial)
    result = None
    for core in range(cores):
        record = trace.If(pid == core, ("<grid>", 0))
        tracer.flush()
        tracer.append(record)
        tracer.bodies.append(record.then)
        tracer.unrolled_grid += 1
        try:
            result = _run_serial(tracer, func, args, dims, axis, serial, core * serial)
            tracer.flush()
        finally:
            tracer.unrolled_grid -= 1
            tracer.bodies.pop()
    return result


def _run_serial(tracer, func, args, dims, axis, size, base):
    site = ("<grid>", axis)
    if size == 1:
        tracer.program_ids[axis] = base
        return _run_grid(tracer, func, args, dims, axis + 1)
    if site in tracer.unroll_sites:
        result = None
        tracer.unrolled_grid += 1
        try:
            for value in range(size):
                tracer.program_ids[axis] = base + value
                tracer.flush()
                result = _run_grid(tracer, func, args, dims, axis + 1)
        finally:
            tracer.unrolled_grid -= 1
        return result
    name = tracer.loop_var_name(("", 0, ""), base=f"program{axis}")
    var = Var(name, 0, size, 1)
    loop = trace.Loop(var, 0, size, 1, ("<grid>", 0), tracer.next_seq(), "grid")
    frame = trace.Frame(True, var, loop, site, size, 0, 1)
    var.owner = frame
    tracer.flush()
    tracer.append(loop)
    tracer.bodies.append(loop.body)
    tracer.frames.append(frame)
    tracer.program_ids[axis] = base + Sym.var(var)
    try:
        result = _run_grid(tracer, func, args, dims, axis + 1)
        tracer.flush()
    finally:
        if tracer.frames and tracer.frames[-1] is frame:
            tracer.frames.pop()
            tracer.bodies.pop()
        loop.seq_end = tracer.next_seq()
    return result


def _outputs(result):
    if result is None:
        return []
    if isinstance(result, Tensor):
        return [result]
    if isinstance(result, (tuple, list)):
        return [r for r in result if isinstance(r, Tensor)]
    return []


def _description(path, func_name, inputs, kwargs, grid, target, api, outputs, unroll):
    parts = [f"Traced from {path}::{func_name} ({'classic neuronxcc.nki' if api == 'classic' else 'nki'} API) "
             f"by the trnsim NKI front end for {target.get('name', '?')}"]
    if inputs:
        parts.append("inputs " + ", ".join(f"{n}={d}[{','.join(map(str, s))}]"
                                           for n, (d, s) in inputs.items()))
    if kwargs:
        parts.append("kwargs " + ", ".join(f"{n}={v!r}" for n, v in kwargs.items()))
    if grid:
        parts.append("grid " + ",".join(f"nc({c})*{n}" if c > 1 else str(n) for c, n in grid))
    if outputs:
        parts.append("returns " + ", ".join(o.storage.name or "?" for o in outputs))
    return "; ".join(parts) + "."
