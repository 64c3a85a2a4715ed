"""``nki.language`` calls that compute or move data, shared by both API generations.

Each call returns a classic result (ops.classic_result): it becomes instructions once its
destination is known. The engine of each call is written down in docs/nki-frontend.md (the NKI
documentation names it for ``load``/``store``/``matmul``; the others follow the ISA tables).
"""

from __future__ import annotations

from . import dtypes, ops
from .errors import KernelError
from .expr import Sym
from .tensor import PSUM, SBUF, IndexPred, Tensor, broadcast_free_view, broadcast_shapes
from .trace import current

UNARY_ACTIVATIONS = {
    "exp", "log", "sqrt", "rsqrt", "sin", "cos", "arctan", "tanh", "sigmoid", "relu", "gelu",
    "gelu_dx", "gelu_apprx_tanh", "gelu_apprx_sigmoid", "gelu_apprx_sigmoid_dx", "silu",
    "silu_dx", "erf", "erf_dx", "softplus", "mish", "square", "abs", "sign", "copy",
}


def _start(source_depth=4):
    tracer = current()
    tracer.flush()
    return tracer, tracer.location(source_depth)


def _dtype(dtype, default):
    return dtypes.dtype_of(dtype) if dtype is not None else default


def _tile_shape(shape):
    """On-chip results keep at least two dimensions (a [P] result is [P, 1])."""
    shape = tuple(shape)
    return shape if len(shape) >= 2 else shape + (1,)


# --- data movement -------------------------------------------------------------------------------


def load(src, mask=None, dtype=None):
    tracer, source = _start()
    src = ops.operand(src, "nl.load source")
    if src.storage.on_chip:
        raise KernelError(f"nl.load reads HBM; its source is in {src.storage.memory.upper()}")
    shape = _tile_shape(src.shape)
    if shape[0] > tracer.target["pmax"]:
        raise KernelError(f"nl.load of {list(src.shape)}: the first dimension ({shape[0]}) goes to "
                          f"the partitions and exceeds pmax = {tracer.target['pmax']}")
    out_dtype = _dtype(dtype, src.dtype)

    def emit(dst):
        ops.emit_dma(dst, src, source, mask=mask)

    return ops.classic_result(shape, out_dtype, SBUF, "load", emit, source)


def store(dst, value, mask=None):
    tracer, source = _start()
    dst = ops.operand(dst, "nl.store destination")
    if dst.storage.on_chip:
        raise KernelError(f"nl.store writes HBM; its destination is in {dst.storage.memory.upper()}")
    if not isinstance(value, Tensor):
        raise KernelError(f"nl.store value must be a tile, found {value!r}")
    value = ops.operand(value, "nl.store value")
    ops.emit_dma(dst, value, source, mask=mask)


def load_transpose2d(src, mask=None, dtype=None):
    tracer, source = _start()
    src = ops.operand(src, "nl.load_transpose2d source")
    if len([s for s in src.shape]) != 2:
        raise KernelError(f"nl.load_transpose2d takes a 2-D HBM view, found {list(src.shape)}")
    shape = (src.shape[1], src.shape[0])
    out_dtype = _dtype(dtype, src.dtype)

    def emit(dst):
        ops.emit_dma(dst, src, source, op="dma_transpose", mask=mask)

    return ops.classic_result(shape, out_dtype, SBUF, "load_transpose2d", emit, source)


def copy(x, dtype=None, mask=None, engine=None):
    tracer, source = _start()
    x = ops.operand(x, "nl.copy source")
    if not x.storage.on_chip:
        return load(x, mask=mask, dtype=dtype)
    out_dtype = _dtype(dtype, x.dtype)

    def emit(dst):
        views = ops.apply_mask({"dst": dst, "src": x}, mask)
        if views is None:
            return
        if not views["dst"].storage.on_chip:
            ops.emit_dma(views["dst"], views["src"], source)
        else:
            ops.emit_tensor_copy(views["dst"], views["src"], engine, source)

    return ops.classic_result(_tile_shape(x.shape), out_dtype, SBUF, "copy", emit, source)


def broadcast_to(x, shape):
    tracer, source = _start()
    x = ops.operand(x, "broadcast_to source")
    shape = tuple(int(s) for s in shape)
    if not x.storage.on_chip:
        return broadcast_free_view(x, shape)
    if x.partitions == shape[0]:
        return broadcast_free_view(x, shape)
    if x.partitions != 1:
        raise KernelError(f"cannot broadcast {list(x.shape)} to {list(shape)}")
    row = x if x.shape[1:] == shape[1:] else broadcast_free_view(x, (1,) + shape[1:])
    return ops.broadcast_partitions(row, shape[0], source)


# --- element-wise ---------------------------------------------------------------------------------


def _result_dtype(a, b, dtype):
    if dtype is not None:
        return dtypes.dtype_of(dtype)
    da = a.dtype if isinstance(a, Tensor) else dtypes.scalar_dtype(a)
    db = b.dtype if isinstance(b, Tensor) else dtypes.scalar_dtype(b)
    return dtypes.promote(da, db)


def binary(name, a, b, dtype=None, mask=None, engine=None):
    """Element-wise ``a name b`` with NumPy broadcasting (free axes; [1, F] rows are broadcast
    along the partitions by the Tensor Engine)."""
    fused = _fuse_scalar_ops(name, a, b, dtype, mask, engine)
    if fused is not None:
        return fused
    tracer, source = _start()
    alu = ops.alu_name(name)
    a_t = isinstance(a, Tensor)
    b_t = isinstance(b, Tensor)
    if not a_t and not b_t:
        raise KernelError(f"nl.{name} needs at least one tile operand")
    if a_t:
        a = ops.operand(a)
    if b_t:
        b = ops.operand(b)
    if name in ("equal", "not_equal", "greater", "greater_equal", "less", "less_equal") and dtype is None:
        out_dtype = dtypes.uint8
    else:
        out_dtype = _result_dtype(a, b, dtype)
    if a_t and b_t:
        shape = broadcast_shapes(a.shape, b.shape)
    else:
        shape = (a if a_t else b).shape
    shape = _tile_shape(shape)

    def emit(dst):
        _emit_binary(dst, alu, a, b, a_t, b_t, source, mask, engine)

    result = ops.classic_result(shape, out_dtype, SBUF, name, emit, source)
    scalar = _scalar_side(a, b, a_t, b_t)
    if scalar is not None and mask is None and engine is None:
        tile, operand, reverse = scalar
        tracer.pending[id(result)].scalar_op = (tile, alu, operand, reverse)
    return result


def _scalar_side(a, b, a_t, b_t):
    """(tile, scalar operand, reverse) when ``a op b`` is a one-op tensor_scalar."""
    def per_partition(x, y):
        return x.free_elements() == 1 and y.free_elements() > 1 and x.partitions == y.partitions

    if a_t and not b_t:
        return a, b, False
    if b_t and not a_t:
        return b, a, True
    if per_partition(b, a):
        return a, b, False
    if per_partition(a, b):
        return b, a, True
    return None


def _fuse_scalar_ops(name, a, b, dtype, mask, engine):
    """``(x op0 s0) op1 s1`` as ONE two-op tensor_scalar when the inner result is pending and
    used only here: the compiler's fusion of scalar chains (``var * (1/n) + eps``)."""
    if mask is not None or engine is not None:
        return None
    tracer = current()
    for inner, other, reverse in ((a, b, False), (b, a, True)):
        if not isinstance(inner, Tensor):
            continue
        pending = tracer.pending.get(id(inner))
        if pending is None or pending.scalar_op is None:
            continue
        if isinstance(other, Tensor):
            if other is inner or id(other) in tracer.pending:
                return None
            if not (other.free_elements() == 1 and other.partitions == inner.partitions):
                return None
        tracer.take_pending(inner)
        tracer.fused[id(inner)] = pending  # emitted after all if the kernel uses it again
        tracer.flush()
        source = tracer.location()
        tile, alu0, operand0, reverse0 = pending.scalar_op
        alu1 = ops.alu_name(name)
        out_dtype = _dtype(dtype, inner.dtype)

        def emit(dst):
            ops.emit_tensor_scalar(dst, tile, alu0, operand0, reverse0, alu1, other, reverse,
                                   source=source)

        return ops.classic_result(_tile_shape(inner.shape), out_dtype, SBUF, name, emit, source)
    return None


def _emit_binary(dst, alu, a, b, a_t, b_t, source, mask, engine):
    if a_t and b_t:
        # [P, 1] against [P, F]: a scalar operand per partition
        if b.free_elements() == 1 and a.free_elements() > 1 and b.partitions == a.partitions:
            views = ops.apply_mask({"dst": dst, "src": a}, mask)
            if views:
                ops.emit_tensor_scalar(views["dst"], views["src"], alu, b, engine=engine, source=source)
            return
        if a.free_elements() == 1 and b.free_elements() > 1 and a.partitions == b.partitions:
            views = ops.apply_mask({"dst": dst, "src": b}, mask)
            if views:
                ops.emit_tensor_scalar(views["dst"], views["src"], alu, a, reverse0=True,
                                       engine=engine, source=source)
            return
        if a.partitions == 1 and b.partitions > 1:
            a = ops.broadcast_partitions(a, b.partitions, source)
        if b.partitions == 1 and a.partitions > 1:
            b = ops.broadcast_partitions(b, a.partitions, source)
        if a.shape != b.shape:
            shape = broadcast_shapes(a.shape, b.shape)
            a = broadcast_free_view(a, shape) if a.shape != shape else a
            b = broadcast_free_view(b, shape) if b.shape != shape else b
        views = ops.apply_mask({"dst": dst, "in0": a, "in1": b}, mask)
        if views:
            ops.emit_tensor_tensor(views["dst"], views["in0"], views["in1"], alu, engine, source)
        return
    tile, scalar, reverse = (a, b, False) if a_t else (b, a, True)
    views = ops.apply_mask({"dst": dst, "src": tile}, mask)
    if views:
        ops.emit_tensor_scalar(views["dst"], views["src"], alu, scalar, reverse0=reverse,
                               engine=engine, source=source)


def unary(name, x, dtype=None, mask=None, **kwargs):
    tracer, source = _start()
    x = ops.operand(x)
    out_dtype = _dtype(dtype, x.dtype if x.dtype.kind == "f" else dtypes.float32)
    if name in ("negative",):
        return binary("multiply", x, -1.0, dtype=out_dtype, mask=mask)
    if name in ("ceil", "floor", "trunc"):
        return binary("mod", x, 1.0, dtype=out_dtype, mask=mask)
    if name in ("logical_not",):
        return binary("logical_xor", x, 1, dtype=out_dtype, mask=mask)
    if name in ("invert", "bitwise_not"):
        return binary("bitwise_xor", x, -1, dtype=dtype or x.dtype, mask=mask)
    if name == "reciprocal":
        def emit(dst):
            views = ops.apply_mask({"dst": dst, "src": x}, mask)
            if views:
                ops.require_tile(views["src"], "nl.reciprocal data")
                ops.emit("reciprocal", "vector", views, {}, source)

        return ops.classic_result(_tile_shape(x.shape), out_dtype, SBUF, name, emit, source)
    if name == "rsqrt" and tracer.api == "new":
        # the new API runs nl.rsqrt on GpSimd (higher precision)
        def emit(dst):
            views = ops.apply_mask({"dst": dst, "src": x}, mask)
            if views:
                ops.emit_tensor_scalar(views["dst"], views["src"], "power", -0.5, engine="gpsimd",
                                       source=source)

        return ops.classic_result(_tile_shape(x.shape), out_dtype, SBUF, name, emit, source)
    if name not in UNARY_ACTIVATIONS:
        raise KernelError(f"nl.{name} is not supported by trnsim")

    def emit(dst):
        views = ops.apply_mask({"dst": dst, "src": x}, mask)
        if views:
            ops.emit_activation(views["dst"], views["src"], name, source=source)

    return ops.classic_result(_tile_shape(x.shape), out_dtype, SBUF, name, emit, source)


def where(condition, x, y, dtype=None, mask=None):
    tracer, source = _start()
    cond = ops.operand(condition, "nl.where condition")
    operands = [v for v in (x, y) if isinstance(v, Tensor)]
    shape = _tile_shape(cond.shape)
    out_dtype = _dtype(dtype, operands[0].dtype if operands else dtypes.float32)
    xs = ops.operand(x) if isinstance(x, Tensor) else x
    ys = ops.operand(y) if isinstance(y, Tensor) else y

    def emit(dst):
        views = {"dst": dst, "pred": cond}
        attrs = {}
        for key, value in (("on_true", xs), ("on_false", ys)):
            if isinstance(value, Tensor):
                views[key] = value
            else:
                attrs[key] = ops._scalar_attr(value)
        views = ops.apply_mask(views, mask)
        if views:
            ops.emit("select", "vector", views, attrs, source)

    return ops.classic_result(shape, out_dtype, SBUF, "where", emit, source)


# --- reductions --------------------------------------------------------------------------------------


def reduce(name, x, axis, dtype=None, mask=None, keepdims=False, negate=False):
    tracer, source = _start()
    x = ops.operand(x)
    ops.require_tile(x, f"nl.{name} data")
    axes = ops.normalize_axes(axis, x.ndim)
    alu = {"sum": "add", "max": "max", "min": "min", "prod": "multiply", "all": "logical_and",
           "mean": "add"}[name]
    out_dtype = _dtype(dtype, dtypes.float32 if name == "mean" else x.dtype)
    shape = _tile_shape(ops.reduced_shape(x.shape, axes, keepdims))
    count = 1
    for a in axes:
        count *= x.shape[a]

    def emit(dst):
        views = ops.apply_mask({"dst": dst, "src": x}, mask)
        if not views:
            return
        d = views["dst"]
        ops.emit_tensor_reduce(d, views["src"], alu, axes, negate, keepdims, source)
        if name == "mean":
            ops.emit_tensor_scalar(d, d, "multiply", 1.0 / count, source=source)

    return ops.classic_result(shape, out_dtype, SBUF, name, emit, source)


def var(x, axis, dtype=None, mask=None):
    mean_ = reduce("mean", x, axis, dtype=dtypes.float32, keepdims=True, mask=mask)
    centered = binary("subtract", x, mean_, dtype=dtypes.float32, mask=mask)
    sq = unary("square", centered, mask=mask)
    return reduce("mean", sq, axis, dtype=dtype, keepdims=True, mask=mask)


# --- Tensor Engine -------------------------------------------------------------------------------------


def matmul(x, y, transpose_x=False, mask=None):
    tracer, source = _start()
    x = ops.operand(x, "nl.matmul x")
    y = ops.operand(y, "nl.matmul y")
    ops.require_tile(x, "nl.matmul x")
    ops.require_tile(y, "nl.matmul y")
    if transpose_x:
        stationary = x
    else:
        # x [M, K] is transposed on the Tensor Engine into [K, M] first (as the compiler does)
        stationary = _transposed_copy(x, source)
    m = stationary.free_elements()
    n = y.free_elements()

    def emit(dst):
        _matmul_into(dst, stationary, y, source, mask, accumulate=False)

    def accumulate(dst):
        _matmul_into(dst, stationary, y, source, mask, accumulate=True)

    return ops.classic_result((m, n), dtypes.float32, PSUM, "matmul", emit, source, accumulate)


def _matmul_into(dst, stationary, moving, source, mask, accumulate, is_transpose=False,
                 perf_mode=None):
    if dst.storage.memory != PSUM:
        tracer = current()
        temp = ops.new_result(dst.shape, dtypes.float32, PSUM)
        ops.create_implicit_tile(tracer, temp.storage, source)
        _matmul_into(temp, stationary, moving, source, mask, False, is_transpose, perf_mode)
        ops.emit_tensor_copy(dst, temp, None, source)
        return
    views = ops.apply_mask({"dst": dst, "stationary": stationary, "moving": moving}, mask)
    if not views:
        return
    if accumulate:
        ops.matmul_accumulate(views["dst"], views["stationary"], views["moving"], perf_mode,
                              source, is_transpose)
    else:
        ops.emit_matmul(views["dst"], views["stationary"], views["moving"], False, is_transpose,
                        perf_mode, source)


def _transposed_copy(x, source):
    tracer = current()
    psum = ops.new_result((x.free_elements(), x.partitions), dtypes.float32, PSUM)
    ops.create_implicit_tile(tracer, psum.storage, source)
    flat = ops._flatten_free(x)
    ops.emit_transpose(psum, flat, "tensor", source)
    out = ops.new_result(psum.shape, x.dtype, SBUF)
    ops.create_implicit_tile(tracer, out.storage, source)
    ops.emit_tensor_copy(out, psum, None, source)
    return out


def transpose(x, dtype=None, mask=None, engine=None):
    tracer, source = _start()
    x = ops.operand(x, "transpose data")
    ops.require_tile(x, "transpose data")
    engine = engine or "tensor"
    memory = PSUM if engine == "tensor" else SBUF
    out_dtype = _dtype(dtype, dtypes.float32 if engine == "tensor" else x.dtype)
    if engine == "tensor" and x.dtype.itemsize == 2 and tracer.target.get("nc_version", 3) >= 3:
        out_dtype = _dtype(dtype, x.dtype)
    flat = ops._flatten_free(x)

    def emit(dst):
        if engine == "tensor" and dst.storage.memory != PSUM:
            temp = ops.new_result(dst.shape, out_dtype, PSUM)
            ops.create_implicit_tile(tracer, temp.storage, source)
            ops.emit_transpose(temp, flat, engine, source)
            ops.emit_tensor_copy(dst, temp, None, source)
            return
        ops.emit_transpose(dst, flat, engine, source)

    return ops.classic_result((x.free_elements(), x.partitions), out_dtype, memory, "transpose",
                              emit, source)


# --- composites ----------------------------------------------------------------------------------------


def softmax(x, axis=-1, dtype=None, compute_dtype=None, mask=None):
    tracer, source = _start()
    x = ops.operand(x)
    axes = ops.normalize_axes(axis, x.ndim)
    negmax = reduce("max", x, axes, dtype=dtypes.float32, keepdims=True, negate=True, mask=mask)
    negmax = ops.operand(negmax)
    sums = ops.new_result((x.partitions, 1), dtypes.float32, SBUF)
    ops.create_implicit_tile(tracer, sums.storage, source)
    e = ops.new_result(x.shape, dtypes.float32, SBUF)
    ops.create_implicit_tile(tracer, e.storage, source)
    ops.emit_activation(e, x, "exp", bias=negmax, reduce_dst=sums, source=source)
    inv = unary("reciprocal", sums)
    return binary("multiply", e, inv, dtype=_dtype(dtype, x.dtype), mask=mask)


def rms_norm(x, w, axis, n, epsilon=1e-6, dtype=None, compute_dtype=None, mask=None):
    tracer, source = _start()
    x = ops.operand(x)
    sq = ops.new_result(x.shape, dtypes.float32, SBUF)
    ops.create_implicit_tile(tracer, sq.storage, source)
    sums = ops.new_result((x.partitions, 1), dtypes.float32, SBUF)
    ops.create_implicit_tile(tracer, sums.storage, source)
    ops.emit_activation(sq, x, "square", reduce_dst=sums, source=source)
    rstd = ops.new_result((x.partitions, 1), dtypes.float32, SBUF)
    ops.create_implicit_tile(tracer, rstd.storage, source)
    ops.emit_tensor_scalar(rstd, sums, "multiply", 1.0 / float(n), op1="add", operand1=epsilon,
                           source=source)
    ops.emit_activation(rstd, rstd, "rsqrt", source=source)
    scaled = binary("multiply", x, rstd, dtype=dtypes.float32, mask=mask)
    return binary("multiply", scaled, w, dtype=_dtype(dtype, x.dtype), mask=mask)


def dropout(x, rate, dtype=None, mask=None):
    tracer, source = _start()
    x = ops.operand(x)
    return binary("multiply", x, 1.0, dtype=_dtype(dtype, x.dtype), mask=mask)


def gather_flattened(data, indices, axis=0, dtype=None, mask=None):
    tracer, source = _start()
    data = ops.operand(data)
    indices = ops.operand(indices)

    def emit(dst):
        ops.emit("tensor_copy", "gpsimd", {"dst": dst, "src": ops.broadcast_to_match(data, dst)}
                 if data.shape == dst.shape else {"dst": dst, "src": _first(data, dst)}, {}, source)

    return ops.classic_result(indices.shape, _dtype(dtype, data.dtype), SBUF, "gather", emit, source)


def _first(data, dst):
    from .tensor import index_view

    return index_view(data, tuple(slice(0, s) for s in dst.shape))


# --- creation ----------------------------------------------------------------------------------------


def zeros(shape, dtype, buffer=None, name="", **kwargs):
    tracer = current()
    source = tracer.location(3)
    t = ops.create_tensor(shape, dtype, buffer, name, kwargs.get("address"), source)
    if t.storage.on_chip:
        ops.zero_fill(t, source)
    return t


def full(shape, fill_value, dtype, buffer=None, name="", **kwargs):
    tracer = current()
    source = tracer.location(3)
    t = ops.create_tensor(shape, dtype, buffer, name, kwargs.get("address"), source)
    if t.storage.on_chip:
        if fill_value == 0:
            ops.zero_fill(t, source)
        else:
            ops.emit_memset(t, fill_value, None, source)
    return t


def rand(shape, dtype=dtypes.float32, buffer=None, name="", **kwargs):
    tracer = current()
    source = tracer.location(3)
    t = ops.create_tensor(shape, dtype, buffer, name, None, source)
    if t.storage.on_chip:
        ops.emit_memset(t, 0.5, "gpsimd" if t.storage.memory == SBUF else "vector", source)
    return t


def shared_constant(constant, dtype=None):
    tracer = current()
    source = tracer.location(3)
    shape = tuple(getattr(constant, "shape", ()))
    if not shape:
        raise KernelError("nl.shared_constant needs an array with a shape")
    if dtype is None:
        dtype = getattr(constant, "dtype", dtypes.float32)
    t = ops.create_tensor(shape, dtype, "shared_hbm", tracer.assigned_name(source) or "constant",
                          None, source)
    t.storage.hbm_kind = "constant"
    return t


def shared_identity_matrix(n, dtype=dtypes.uint8, **kwargs):
    tracer = current()
    source = tracer.location(3)
    t = ops.create_tensor((n, n), dtype, "sbuf", "identity", None, source)
    ops.emit("iota", "gpsimd", {"dst": t}, {"expr": "p - f"}, source)
    return t


def program_id(axis=0):
    return current().program_ids.get(int(axis), 0)


def num_programs(axes=None):
    dims = current().grid
    if axes is None:
        n = 1
        for d in dims:
            n *= d
        return n
    if isinstance(axes, (tuple, list)):
        n = 1
        for a in axes:
            n *= dims[a] if a < len(dims) else 1
        return n
    return dims[axes] if axes < len(dims) else 1


def program_ndim():
    return len(current().grid)


def is_symbolic(value):
    return isinstance(value, (Sym, IndexPred))
