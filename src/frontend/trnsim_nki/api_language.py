"""The ``nki.language`` namespaces of both API generations (``neuronxcc.nki.language`` and
``nki.language``). The modules under those names copy these into their globals.
"""

from __future__ import annotations

import contextlib

from . import buffers, dtypes, language_core as core, ops, trace
from .errors import KernelError
from .expr import Sym
from .tensor import DynSlice, IndexExpr, Iota, Tensor

DEFAULT_TARGET = {
    "name": "trn2", "nc_version": 3, "pmax": 128, "gemm_stationary_fmax": 128,
    "gemm_moving_fmax": 512, "psum_fmax": 512, "psum_num_banks": 8, "psum_bank_bytes": 2048,
    "psum_partition_bytes": 16384, "sbuf_partition_bytes": 196608, "sbuf_alignment_bytes": 64,
    "psum_alignment_bytes": 4, "bn_stats_fmax": 512, "vector_transpose_max": 32,
    "dma_queues": 16, "cores_per_chip": 8,
    "compiler": {"loop_tile_buffers": 2, "dma_queues": 16, "sbuf_memset_engine": "gpsimd",
                 "copy_engine": "vector", "fold_zero_fill": True,
                 "dge_mode": "hwdge"},
}

_target = [DEFAULT_TARGET]


def set_target(target):
    _target[0] = target


def target():
    tracer = trace.active()
    return tracer.target if tracer is not None else _target[0]


class TileSize:
    """``nl.tile_size``: the architecture constants of the configuration being traced."""

    @property
    def pmax(self):
        return target()["pmax"]

    @property
    def psum_fmax(self):
        return target()["psum_fmax"]

    psum_bank_fmax = psum_fmax

    @property
    def psum_bank_fmax_bytes(self):
        return target()["psum_bank_bytes"]

    @property
    def psum_num_banks(self):
        return target()["psum_num_banks"]

    @property
    def gemm_stationary_fmax(self):
        return target()["gemm_stationary_fmax"]

    @property
    def gemm_moving_fmax(self):
        return target()["gemm_moving_fmax"]

    @property
    def bn_stats_fmax(self):
        return target()["bn_stats_fmax"]

    @property
    def sbuf_fmax_bytes(self):
        return target()["sbuf_partition_bytes"]

    total_available_sbuf_size = sbuf_fmax_bytes
    sbuf_size_bytes = sbuf_fmax_bytes

    @property
    def sbuf_fmax(self):
        return target()["sbuf_partition_bytes"] // 4

    @property
    def sbuf_min_align(self):
        return target()["sbuf_alignment_bytes"]

    @property
    def psum_min_align(self):
        return target()["psum_alignment_bytes"]


class MGrid:
    """``nl.mgrid[0:128, 0:512]``: one index expression per axis, also as .p, .x, .y."""

    def __getitem__(self, slices):
        if not isinstance(slices, tuple):
            slices = (slices,)
        n = len(slices)
        exprs = []
        for i, s in enumerate(slices):
            if not isinstance(s, slice) or s.stop is None:
                raise KernelError("nl.mgrid takes slices with explicit stops: nl.mgrid[0:128, 0:512]")
            start = 0 if s.start is None else s.start
            step = 1 if s.step is None else s.step
            size = len(range(int(start), int(s.stop), int(step)))
            shape = [1] * n
            shape[i] = size
            iota = Iota(0, size, i - n)
            e = IndexExpr(int(start), {iota: int(step)}, shape)
            exprs.append(e)
        return GridResult(exprs)


class GridResult(tuple):
    def __new__(cls, exprs):
        return super().__new__(cls, exprs)

    @property
    def p(self):
        return self[0]

    @property
    def x(self):
        return self[1]

    @property
    def y(self):
        return self[2]

    @property
    def z(self):
        return self[3]


def arange(*args):
    if len(args) == 1:
        start, stop, step = 0, args[0], 1
    elif len(args) == 2:
        start, stop, step = args[0], args[1], 1
    else:
        start, stop, step = args[0], args[1], args[2]
    if any(isinstance(v, Sym) for v in (start, stop, step)):
        raise KernelError("nl.arange bounds must be constants (add a loop index to the result)")
    size = len(range(int(start), int(stop), int(step)))
    iota = Iota(0, size, -1)
    return IndexExpr(int(start), {iota: int(step)}, (size,))


def ds(start, size):
    return DynSlice(start, size)


def par_dim(size):
    return ops.ParDim(size)


class _Nc:
    """``nl.nc(k)``: a launch-grid dimension distributed over k NeuronCores."""

    def __init__(self, k):
        self.k = int(k)

    def __mul__(self, other):
        return SpmdDim(self, int(other))

    __rmul__ = __mul__

    def __index__(self):
        return self.k


class SpmdDim:
    def __init__(self, nc, n):
        self.nc = nc
        self.n = n

    def __index__(self):
        return self.nc.k * self.n


def spmd_dim(*args):
    nc = next((a for a in args if isinstance(a, _Nc)), None)
    n = 1
    for a in args:
        if not isinstance(a, _Nc):
            n *= int(a)
    return SpmdDim(nc or _Nc(1), n)


def _loop(kind):
    def make(*args, **kwargs):
        return trace.traced_range(kind, args, kwargs.get("directives"))

    make.__name__ = kind
    return make


def _new_loop(name):
    def make(*args, **kwargs):
        return range(*[int(a) for a in args])

    make.__name__ = name
    return make


def _named(name, func):
    func._nki_op = name
    func.__name__ = name
    return func


def _binary(name, classic):
    if classic:
        def f(x, y, *, dtype=None, mask=None, **kwargs):
            return core.binary(name, x, y, dtype=dtype, mask=mask)
    else:
        def f(x, y, dtype=None, **kwargs):
            return core.binary(name, x, y, dtype=dtype)
    return _named(name, f)


def _unary(name, classic):
    if classic:
        def f(x, *, dtype=None, mask=None, **kwargs):
            return core.unary(name, x, dtype=dtype, mask=mask)
    else:
        def f(x, dtype=None, **kwargs):
            return core.unary(name, x, dtype=dtype)
    return _named(name, f)


def _reduction(name):
    def f(x, axis=None, *, dtype=None, mask=None, keepdims=False, **kwargs):
        return core.reduce(name, x, axis, dtype=dtype, mask=mask, keepdims=keepdims)

    return _named(name if name not in ("max", "min") else {"max": "maximum", "min": "minimum"}[name], f)


def ndarray(shape, dtype, *, buffer=None, name="", address=None, **kwargs):
    return ops.create_tensor(shape, dtype, buffer, name, address)


def zeros(shape, dtype, *, buffer=None, name="", **kwargs):
    return core.zeros(shape, dtype, buffer, name, **kwargs)


def ones(shape, dtype, *, buffer=None, name="", **kwargs):
    return core.full(shape, 1.0, dtype, buffer, name, **kwargs)


def full(shape, fill_value, dtype, *, buffer=None, name="", **kwargs):
    return core.full(shape, fill_value, dtype, buffer, name, **kwargs)


def _like(maker):
    def f(a, dtype=None, *, buffer=None, name="", **kwargs):
        return maker(a.shape, dtype if dtype is not None else a.dtype,
                     buffer=buffer if buffer is not None else buffers.buffer_of(a.storage)
                     if a.storage.on_chip else None, name=name)

    return f


def device_print(*args, **kwargs):
    return None


def static_cast(x, dtype):
    return core.copy(x, dtype=dtype)


class _FInfo:
    def __init__(self, dtype):
        self.dtype = dtypes.dtype_of(dtype)
        big = {"float32": 3.4028235e38, "bfloat16": 3.3895314e38, "float16": 65504.0,
               "tfloat32": 3.4028235e38, "float8_e4m3": 240.0, "float8_e5m2": 57344.0,
               "float8_e4m3fn": 448.0}.get(self.dtype.name, 3.4028235e38)
        self.max = big
        self.min = -big


class _Min:
    def __init__(self, value):
        self.min = value


@contextlib.contextmanager
def no_reorder():
    yield


def _loop_reduce(x, op, loop_indices=None, *, dtype=None, mask=None, **kwargs):
    """``dst[...] = nl.loop_reduce(x, op, loop_indices)``: dst = op(x, dst) in every iteration
    (the destination is the accumulator); into a zero-filled dst the first one writes x."""
    tracer = trace.current()
    tracer.flush()
    source = tracer.location()
    x = ops.operand(x, "loop_reduce input")

    def emit(dst):
        ops.accumulate_tile(dst, ops.alu_name(op), x, None, source)

    return ops.classic_result(x.shape, dtypes.dtype_of(dtype) if dtype is not None else x.dtype,
                              "sbuf", "loop_reduce", emit, source)


def _atomic_rmw(dst, value, op, *, mask=None, **kwargs):
    tracer = trace.current()
    tracer.flush()
    value = ops.operand(value)
    ops.emit_dma(ops.operand(dst), value, tracer.location(2), mask=mask)


def _all_reduce(*args, **kwargs):
    raise KernelError("nl.all_reduce across SPMD programs is not supported by trnsim's NKI front end")


def _dynamic(name):
    def f(*args, **kwargs):
        raise KernelError(f"nl.{name} (a runtime loop) is not supported by trnsim's NKI front end")

    f.__name__ = name
    return f


BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "mod", "fmod",
          "equal", "not_equal", "greater", "greater_equal", "less", "less_equal", "logical_and",
          "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
          "right_shift", "abs_max", "abs_min"]
UNARY = ["exp", "log", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "arctan", "tanh", "sigmoid",
         "relu", "gelu", "gelu_dx", "gelu_apprx_tanh", "gelu_apprx_sigmoid",
         "gelu_apprx_sigmoid_dx", "silu", "silu_dx", "erf", "erf_dx", "softplus", "mish",
         "square", "abs", "sign", "negative", "ceil", "floor", "trunc", "logical_not", "invert"]


def namespace(classic):
    ns = {}
    for name, d in dtypes.BY_NAME.items():
        ns[name] = d
    ns["bool_"] = dtypes.bool_
    ns["tfloat32"] = dtypes.BY_NAME["tfloat32"]
    ns.update(sbuf=buffers.sbuf, psum=buffers.psum, hbm=buffers.hbm,
              private_hbm=buffers.private_hbm, shared_hbm=buffers.shared_hbm)
    ns["tile_size"] = TileSize()
    ns.update(ndarray=ndarray, zeros=zeros, ones=ones, full=full,
              zeros_like=_like(zeros), ones_like=_like(ones), empty_like=_like(ndarray),
              rand=lambda shape, dtype=dtypes.float32, **kw: core.rand(shape, dtype, **kw),
              random_seed=lambda *a, **k: None, shared_constant=core.shared_constant,
              shared_identity_matrix=core.shared_identity_matrix)
    ns.update(arange=arange, mgrid=MGrid(), ds=ds, par_dim=par_dim)
    if classic:
        ns.update(affine_range=_loop("affine_range"), sequential_range=_loop("sequential_range"),
                  static_range=_loop("static_range"))
    else:
        ns.update(affine_range=_new_loop("affine_range"),
                  sequential_range=_new_loop("sequential_range"),
                  static_range=_new_loop("static_range"))
    for name in ("dynamic_range", "fori_loop", "while_loop"):
        ns[name] = _dynamic(name)
    ns.update(program_id=core.program_id, num_programs=core.num_programs,
              program_ndim=core.program_ndim, nc=_Nc, spmd_dim=spmd_dim)
    if classic:
        ns["load"] = lambda src, *, mask=None, dtype=None, **kw: core.load(src, mask, dtype)
        ns["store"] = lambda dst, value, *, mask=None, **kw: core.store(dst, value, mask)
        ns["load_transpose2d"] = lambda src, *, mask=None, dtype=None, **kw: core.load_transpose2d(src, mask, dtype)
        ns["copy"] = _named("copy", lambda src, *, mask=None, dtype=None, **kw: core.copy(src, dtype, mask))
        ns["matmul"] = lambda x, y, *, transpose_x=False, mask=None, **kw: core.matmul(x, y, transpose_x, mask)
        ns["transpose"] = lambda x, *, dtype=None, mask=None, **kw: core.transpose(x, dtype, mask)
    else:
        ns["load"] = lambda src, dtype=None, **kw: core.load(src, None, dtype)
        ns["store"] = lambda dst, value, **kw: core.store(dst, value, None)
        ns["load_transpose2d"] = lambda src, dtype=None, **kw: core.load_transpose2d(src, None, dtype)
        ns["copy"] = _named("copy", lambda x, dtype=None, **kw: core.copy(x, dtype))
        ns["matmul"] = lambda x, y, transpose_x=False, **kw: core.matmul(x, y, transpose_x)
        ns["transpose"] = lambda x, dtype=None, **kw: core.transpose(x, dtype)
    ns["broadcast_to"] = lambda src, shape=None, **kw: core.broadcast_to(src, shape or kw.get("shape"))
    ns["gather_flattened"] = lambda data, indices, *a, **kw: core.gather_flattened(data, indices)
    ns["expand_dims"] = lambda data, axis: data.expand_dims(axis)
    ns["atomic_rmw"] = _atomic_rmw
    for name in BINARY:
        ns[name] = _binary(name, classic)
    for name in UNARY:
        ns[name] = _unary(name, classic)
    for name in ("sum", "prod", "max", "min", "mean", "all"):
        ns[name] = _reduction(name)
    ns["max"]._nki_op = "maximum"
    ns["min"]._nki_op = "minimum"
    ns["var"] = lambda x, axis, *, dtype=None, mask=None, **kw: core.var(x, axis, dtype, mask)
    ns["softmax"] = lambda x, axis=-1, *, dtype=None, compute_dtype=None, mask=None, **kw: core.softmax(
        x, axis, dtype, compute_dtype, mask)
    ns["rms_norm"] = lambda x, w, axis, n, epsilon=1e-6, *, dtype=None, compute_dtype=None, mask=None, **kw: core.rms_norm(
        x, w, axis, n, epsilon, dtype, compute_dtype, mask)
    ns["dropout"] = lambda x, rate, *, dtype=None, mask=None, **kw: core.dropout(x, rate, dtype, mask)
    ns["where"] = lambda condition, x, y, *, dtype=None, mask=None, **kw: core.where(condition, x, y, dtype, mask)
    ns["loop_reduce"] = _loop_reduce
    ns["all_reduce"] = _all_reduce
    ns["device_print"] = device_print
    ns["static_cast"] = static_cast
    ns["finfo"] = _FInfo
    ns["fp32"] = _Min(-3.4028235e38)
    ns["bfp16"] = _Min(-3.3895314e38)
    ns["no_reorder"] = no_reorder
    ns["bypass"] = _named("bypass", lambda x, **kw: x)
    ns["average"] = _named("average", lambda *a, **kw: None)
    ns["prelu"] = _named("prelu", lambda *a, **kw: None)
    ns["identity"] = _named("copy", lambda *a, **kw: None)
    ns["tensor"] = Tensor
    ns["NkiTensor"] = Tensor

    class NKIObject:
        pass

    ns["NKIObject"] = NKIObject
    ns["is_hbm"] = lambda b: getattr(b, "memory", None) == "hbm"
    ns["is_on_chip"] = lambda b: getattr(b, "memory", None) in ("sbuf", "psum")
    ns["is_psum"] = lambda b: getattr(b, "memory", None) == "psum"
    ns["is_sbuf"] = lambda b: getattr(b, "memory", None) == "sbuf"
    return ns
