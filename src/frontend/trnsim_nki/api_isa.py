"""The ``nki.isa`` namespaces of both API generations (``neuronxcc.nki.isa``: results returned;
``nki.isa``: ``dst`` first). Both lower through isa_core.py.
"""

from __future__ import annotations

import enum

from . import dtypes, isa_core as core, language_core, ops
from .errors import KernelError
from .expr import Sym, Var, render
from .tensor import PSUM, SBUF, IndexExpr, IndexPred, Tensor
from .trace import current


class engine(enum.Enum):
    unknown = 0
    tensor = 1
    scalar = 2
    gpsimd = 3
    dma = 4
    vector = 5
    sync = 6


class reduce_cmd(enum.Enum):
    idle = 0
    reset = 1
    reduce = 2
    reset_reduce = 3
    load_reduce = 4


class dge_mode(enum.Enum):
    unknown = 0
    swdge = 1
    hwdge = 2
    none = 3


class oob_mode(enum.Enum):
    error = 0
    skip = 1


class matmul_perf_mode(enum.Enum):
    none = 0
    double_row = 1
    double_row_gen3 = 2


class nc_version(enum.Enum):
    gen2 = 2
    gen3 = 3
    gen4 = 4
    gen5 = 5


class dma_engine(enum.Enum):
    dma = 0
    gpsimd_dma = 1


class Instruction:
    """What a new-API ISA call returns: usable for ``.depends_on(...)`` (ordering only)."""

    def depends_on(self, *producers):
        return self


def get_nc_version():
    version = current().target.get("nc_version", 3) if current() else 3
    return nc_version(min(max(version, 2), 5))


def get_nc_sub_version():
    return 0


def _start():
    tracer = current()
    tracer.flush()
    return tracer, tracer.location(4)


def _result(shape, dtype, memory, op, emit, source, accumulate=None):
    return ops.classic_result(tuple(shape), dtype, memory, op, emit, source, accumulate)


def _dt(dtype, default):
    return dtypes.dtype_of(dtype) if dtype is not None else default


def _has_reduce(reduce_cmd_value, reduce_res):
    return reduce_res is not None


def _perf(perf_mode):
    if perf_mode is None:
        return None
    name = getattr(perf_mode, "name", perf_mode)
    return None if str(name) in ("none", "", "None") else str(name)


# --- index-expression helpers for iota / affine_select -----------------------------------------


def _affine_text(expr):
    """An nl.arange expression as the format's affine pattern over p (partition) and f0..f3
    (free axes), e.g. ``p - f0 + 128*i``."""
    if isinstance(expr, IndexPred):
        raise KernelError("expected an index expression, found a comparison")
    if not isinstance(expr, IndexExpr):
        return render(expr), 1
    ndim = len(expr.shape)
    value = expr.const
    for axis, (iota, c) in sorted(expr.iotas_by_axis().items()):
        position = ndim + axis
        name = "p" if position == 0 else f"f{position - 1}"
        value = value + c * (Sym.var(Var(name, 0, iota.size, 1)) + iota.start)
    return render(value), ndim


def _pattern_text(pattern, offset, channel_multiplier):
    """A new-API affine pattern (``offset + p * channel_multiplier + sum of step_k * i_k`` over
    ``[[step, count], ...]``) as the format's expression over p and f0..f3."""
    value = int(offset) + int(channel_multiplier) * Sym.var(Var("p", 0, 1, 1))
    for i, pair in enumerate(pattern or []):
        value = value + int(pair[0]) * Sym.var(Var(f"f{i}", 0, int(pair[1]), 1))
    return render(value)


_CMP_NAME = {">=": "ge", ">": "gt", "<=": "le", "<": "lt", "==": "eq", "!=": "ne"}


def _pred_text(pred):
    if not isinstance(pred, IndexPred) or len(pred.constraints) != 1:
        raise KernelError("affine_select needs one comparison of nl.arange expressions")
    expr, op = pred.constraints[0]
    text, _ = _affine_text(expr)
    return text, _CMP_NAME[op]


# --- classic namespace --------------------------------------------------------------------------


def classic_namespace():
    ns = {}

    def nc_matmul(stationary, moving, *, is_stationary_onezero=False, is_moving_onezero=False,
                  is_transpose=False, tile_position=(), tile_size=(), mask=None, perf_mode=None,
                  **kwargs):
        tracer, source = _start()
        stationary = ops.operand(stationary, "nc_matmul stationary")
        moving = ops.operand(moving, "nc_matmul moving")
        perf = _perf(perf_mode)
        shape = core.matmul_result_shape(stationary, moving)
        if perf and "double_row" in perf:
            shape = (stationary.shape[-1], moving.shape[-1])

        def emit(dst):
            language_core._matmul_into(dst, stationary, moving, source, mask, False,
                                       is_transpose, perf)

        def accumulate(dst):
            language_core._matmul_into(dst, stationary, moving, source, mask, True,
                                       is_transpose, perf)

        dtype = stationary.dtype if is_transpose and stationary.dtype.itemsize == 2 else dtypes.float32
        return _result(shape, dtype, PSUM, "nc_matmul", emit, source, accumulate)

    def nc_transpose(data, *, mask=None, dtype=None, engine=None, **kwargs):
        tracer, source = _start()
        data = ops.operand(data, "nc_transpose data")
        eng = core.engine_name(engine)
        if eng is None:
            small = max(data.partitions, data.free_elements()) <= tracer.target.get("vector_transpose_max", 32)
            eng = "vector" if small else "tensor"
        return language_core.transpose(data, dtype=dtype, mask=mask, engine=eng)

    def activation(op, data, *, bias=None, scale=1.0, reduce_op=None, reduce_res=None,
                   reduce_cmd=None, mask=None, dtype=None, **kwargs):
        tracer, source = _start()
        data = ops.operand(data, "activation data")

        def emit(dst):
            core.lower_activation(dst, op, data, bias, scale, reduce_res, source, mask)

        return _result(language_core._tile_shape(data.shape), _dt(dtype, data.dtype), SBUF,
                       "activation", emit, source)

    def activation_reduce(op, data, *, reduce_op=None, reduce_res=None, bias=None, scale=1.0,
                          mask=None, dtype=None, **kwargs):
        return activation(op, data, bias=bias, scale=scale, reduce_op=reduce_op,
                          reduce_res=reduce_res, mask=mask, dtype=dtype)

    def tensor_tensor(data1, data2, op, *, dtype=None, mask=None, engine=None, **kwargs):
        tracer, source = _start()
        data1 = ops.operand(data1, "tensor_tensor data1")
        data2 = ops.operand(data2, "tensor_tensor data2")
        out = _dt(dtype, dtypes.promote(data1.dtype, data2.dtype))

        def emit(dst):
            core.lower_tensor_tensor(dst, data1, data2, op, engine, source, mask)

        return _result(language_core._tile_shape(data1.shape), out, SBUF, "tensor_tensor", emit, source)

    def tensor_scalar(data, op0, operand0, reverse0=False, op1=None, operand1=None,
                      reverse1=False, *, dtype=None, mask=None, engine=None, **kwargs):
        tracer, source = _start()
        data = ops.operand(data, "tensor_scalar data")

        def emit(dst):
            core.lower_tensor_scalar(dst, data, op0, operand0, reverse0, op1, operand1, reverse1,
                                     engine, source, mask)

        return _result(language_core._tile_shape(data.shape), _dt(dtype, data.dtype), SBUF,
                       "tensor_scalar", emit, source)

    def scalar_tensor_tensor(*, data, op0, operand0, op1, operand1, reverse0=False,
                             reverse1=False, dtype=None, mask=None, **kwargs):
        tracer, source = _start()
        data = ops.operand(data, "scalar_tensor_tensor data")

        def emit(dst):
            core.lower_scalar_tensor_tensor(dst, data, op0, operand0, op1, operand1, reverse0,
                                            reverse1, source, mask)

        return _result(language_core._tile_shape(data.shape), _dt(dtype, data.dtype), SBUF,
                       "scalar_tensor_tensor", emit, source)

    def tensor_scalar_reduce(*, data, op0, operand0, reduce_op, reduce_res, reverse0=False,
                             dtype=None, mask=None, **kwargs):
        tracer, source = _start()
        data = ops.operand(data, "tensor_scalar_reduce data")

        def emit(dst):
            _tensor_scalar_reduce(dst, data, op0, operand0, reduce_op, reduce_res, reverse0,
                                  source, mask)

        return _result(language_core._tile_shape(data.shape), _dt(dtype, data.dtype), SBUF,
                       "tensor_scalar_reduce", emit, source)

    def tensor_reduce(op, data, axis, *, mask=None, dtype=None, negate=False, keepdims=False,
                      **kwargs):
        tracer, source = _start()
        data = ops.operand(data, "tensor_reduce data")
        axes = ops.normalize_axes(axis, data.ndim)
        shape = language_core._tile_shape(ops.reduced_shape(data.shape, axes, keepdims))

        def emit(dst):
            core.lower_tensor_reduce(dst, op, data, axes, negate, keepdims, source, mask)

        return _result(shape, _dt(dtype, data.dtype), SBUF, "tensor_reduce", emit, source)

    def tensor_tensor_scan(data0, data1, initial, op0, op1, reverse0=False, reverse1=False, *,
                           dtype=None, mask=None, **kwargs):
        tracer, source = _start()
        data0 = ops.operand(data0, "tensor_tensor_scan data0")
        data1 = ops.operand(data1, "tensor_tensor_scan data1")

        def emit(dst):
            core.lower_tensor_tensor_scan(dst, data0, data1, initial, op0, op1, reverse0,
                                          reverse1, source, mask)

        return _result(language_core._tile_shape(data0.shape), _dt(dtype, data0.dtype), SBUF,
                       "tensor_tensor_scan", emit, source)

    def tensor_copy(src, *, mask=None, dtype=None, engine=None, **kwargs):
        tracer, source = _start()
        src = ops.operand(src, "tensor_copy src")

        def emit(dst):
            core.lower_tensor_copy(dst, src, engine, source, mask)

        return _result(language_core._tile_shape(src.shape), _dt(dtype, src.dtype), SBUF,
                       "tensor_copy", emit, source)

    def tensor_copy_predicated(*, src, dst, predicate, reverse_pred=False, mask=None, dtype=None,
                               **kwargs):
        tracer, source = _start()
        dst = ops.operand(dst, "tensor_copy_predicated dst")
        core.lower_select(dst, predicate, src, dst, source, mask)

    def reciprocal(data, *, dtype=None, mask=None, **kwargs):
        tracer, source = _start()
        data = ops.operand(data, "reciprocal data")

        def emit(dst):
            core.lower_reciprocal(dst, data, source, mask)

        return _result(language_core._tile_shape(data.shape), _dt(dtype, data.dtype), SBUF,
                       "reciprocal", emit, source)

    def bn_stats(data, *, mask=None, dtype=None, **kwargs):
        tracer, source = _start()
        data = ops.operand(data, "bn_stats data")

        def emit(dst):
            core.lower_bn_stats(dst, data, source, mask)

        return _result((data.partitions, 6), _dt(dtype, dtypes.float32), SBUF, "bn_stats", emit, source)

    def bn_aggr(data, *, mask=None, dtype=None, **kwargs):
        tracer, source = _start()
        data = ops.operand(data, "bn_aggr data")

        def emit(dst):
            core.lower_bn_aggr(dst, data, source, mask)

        return _result((data.partitions, 2), _dt(dtype, dtypes.float32), SBUF, "bn_aggr", emit, source)

    def dropout(data, prob, *, mask=None, dtype=None, **kwargs):
        return tensor_scalar(data, "multiply", 1.0, dtype=dtype, mask=mask)

    def memset(shape, value, dtype, *, mask=None, engine=None, **kwargs):
        tracer, source = _start()

        def emit(dst):
            core.lower_memset(dst, value, engine, source, mask)

        return _result(tuple(int(s) for s in shape), dtypes.dtype_of(dtype), SBUF, "memset",
                       emit, source)

    def iota(expr, dtype, *, mask=None, **kwargs):
        tracer, source = _start()
        text, _ = _affine_text(expr)
        shape = expr.shape if isinstance(expr, IndexExpr) else (1, 1)

        def emit(dst):
            core.lower_iota(dst, text, source, mask)

        return _result(language_core._tile_shape(shape), dtypes.dtype_of(dtype), SBUF, "iota",
                       emit, source)

    def affine_select(pred, on_true_tile, on_false_value, *, mask=None, dtype=None, **kwargs):
        tracer, source = _start()
        on_true_tile = ops.operand(on_true_tile, "affine_select on_true_tile")
        text, cmp = _pred_text(pred)

        def emit(dst):
            core.lower_affine_select(dst, text, on_true_tile, on_false_value, cmp, source, mask)

        return _result(language_core._tile_shape(on_true_tile.shape),
                       _dt(dtype, on_true_tile.dtype), SBUF, "affine_select", emit, source)

    def tensor_partition_reduce(op, data, *, mask=None, dtype=None, **kwargs):
        tracer, source = _start()
        data = ops.operand(data, "tensor_partition_reduce data")

        def emit(dst):
            core.lower_tensor_partition_reduce(dst, op, data, source, mask)

        return _result((1,) + tuple(data.shape[1:]) if data.ndim > 1 else (1, 1),
                       _dt(dtype, data.dtype), SBUF, "tensor_partition_reduce", emit, source)

    def dma_copy(*, dst, src, mask=None, dst_rmw_op=None, oob_mode=None, dge_mode=None, **kwargs):
        tracer, source = _start()
        core.lower_dma(ops.operand(dst, "dma_copy dst"), src, "dma_copy", source, mask, dge_mode)

    def dma_transpose(src, *, axes=None, mask=None, dtype=None, dge_mode=None, **kwargs):
        tracer, source = _start()
        src = ops.operand(src, "dma_transpose src")
        shape = tuple(reversed(src.shape))

        def emit(dst):
            core.lower_dma(dst, src, "dma_transpose", source, mask, dge_mode)

        return _result(shape, _dt(dtype, src.dtype), SBUF, "dma_transpose", emit, source)

    ns.update(locals())
    ns.update(_common())
    return ns


def _tensor_scalar_reduce(dst, data, op0, operand0, reduce_op, reduce_res, reverse0, source, mask):
    views = ops.apply_mask({"dst": dst, "src": data}, mask)
    if not views:
        return
    instr = ops.emit_tensor_scalar(views["dst"], views["src"], op0, operand0, reverse0,
                                   source=source)
    if reduce_res is not None and instr is not None:
        view = ops.operand(reduce_res, "reduce_res")
        instr.operands["reduce_dst"] = view
        instr.attrs["reduce_op"] = ops.alu_name(reduce_op)
        if view.storage.tile is not None:
            current().note_use(view.storage.tile, instr.seq, instr.frames)


# --- new namespace --------------------------------------------------------------------------------


def new_namespace():
    ns = {}

    def _go():
        tracer = current()
        tracer.flush()
        return tracer.location(4)

    def _dst(dst):
        return ops.operand(dst, "dst")

    def nc_matmul(dst, stationary, moving, is_stationary_onezero=False, is_moving_onezero=False,
                  is_transpose=False, accumulate=None, tile_position=(), tile_size=(),
                  perf_mode=None, name=None, **kwargs):
        source = _go()
        dst = _dst(dst)
        core.lower_nc_matmul(dst, stationary, moving, accumulate, is_transpose, _perf(perf_mode),
                             source)
        return Instruction()

    def nc_matmul_mx(dst, stationary, moving, stationary_scale, moving_scale, tile_position=None,
                     tile_size=None, accumulate=None, name=None, **kwargs):
        source = _go()
        dst = _dst(dst)
        st = ops.operand(stationary)
        mv = ops.operand(moving)
        operands = {"dst": dst, "stationary": st, "moving": mv,
                    "stationary_scale": ops.operand(stationary_scale),
                    "moving_scale": ops.operand(moving_scale)}
        attrs = {}
        acc = ops.sym_not(ops.first_touch(dst)) if accumulate is None else accumulate
        if isinstance(acc, Sym) or acc:
            attrs["accumulate"] = acc
        ops.emit("nc_matmul_mx", "tensor", operands, attrs, source, accumulating=("dst",))
        return Instruction()

    def nc_transpose(dst, data, engine=None, name=None, **kwargs):
        source = _go()
        core.lower_nc_transpose(_dst(dst), data, core.engine_name(engine), source)
        return Instruction()

    def activation(dst, op, data, bias=None, scale=1.0, reduce_op=None, reduce_res=None,
                   reduce_cmd=None, name=None, **kwargs):
        source = _go()
        core.lower_activation(_dst(dst), op, data, bias, scale, reduce_res, source)
        return Instruction()

    def activation_reduce(dst, op, data, reduce_op=None, reduce_res=None, bias=None, scale=1.0,
                          name=None, **kwargs):
        source = _go()
        core.lower_activation(_dst(dst), op, data, bias, scale, reduce_res, source)
        return Instruction()

    def tensor_tensor(dst, data1, data2, op, engine=None, name=None, **kwargs):
        source = _go()
        core.lower_tensor_tensor(_dst(dst), data1, data2, op, engine, source)
        return Instruction()

    def tensor_scalar(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None,
                      reverse1=False, engine=None, name=None, **kwargs):
        source = _go()
        core.lower_tensor_scalar(_dst(dst), data, op0, operand0, reverse0, op1, operand1,
                                 reverse1, engine, source)
        return Instruction()

    def scalar_tensor_tensor(dst, data, op0, operand0, op1, operand1, reverse0=False,
                             reverse1=False, name=None, **kwargs):
        source = _go()
        core.lower_scalar_tensor_tensor(_dst(dst), data, op0, operand0, op1, operand1, reverse0,
                                        reverse1, source)
        return Instruction()

    def tensor_scalar_reduce(dst, data, op0, operand0, reduce_op, reduce_res=None, reverse0=False,
                             name=None, **kwargs):
        source = _go()
        _tensor_scalar_reduce(_dst(dst), ops.operand(data), op0, operand0, reduce_op, reduce_res,
                              reverse0, source, None)
        return Instruction()

    def tensor_reduce(dst, op, data, axis, negate=False, keepdims=False, name=None, **kwargs):
        source = _go()
        core.lower_tensor_reduce(_dst(dst), op, data, axis, negate, keepdims, source)
        return Instruction()

    def tensor_tensor_scan(dst, data0, data1, initial, op0, op1, reverse0=False, reverse1=False,
                           name=None, **kwargs):
        source = _go()
        core.lower_tensor_tensor_scan(_dst(dst), data0, data1, initial, op0, op1, reverse0,
                                      reverse1, source)
        return Instruction()

    def tensor_copy(dst, src, engine=None, name=None, **kwargs):
        source = _go()
        core.lower_tensor_copy(_dst(dst), src, engine, source)
        return Instruction()

    def tensor_copy_predicated(dst, src, predicate, reverse_pred=False, name=None, **kwargs):
        source = _go()
        dst = _dst(dst)
        core.lower_select(dst, predicate, src, dst, source)
        return Instruction()

    def reciprocal(dst, data, name=None, **kwargs):
        source = _go()
        core.lower_reciprocal(_dst(dst), data, source)
        return Instruction()

    def exponential(dst, src, max_value=0.0, reduce_res=None, reduce_cmd=None, reduce_init=0.0,
                    name=None, **kwargs):
        source = _go()
        core.lower_exponential(_dst(dst), src, max_value, reduce_res, source)
        return Instruction()

    def bn_stats(dst, data, name=None, **kwargs):
        source = _go()
        core.lower_bn_stats(_dst(dst), data, source)
        return Instruction()

    def bn_aggr(dst, data, name=None, **kwargs):
        source = _go()
        core.lower_bn_aggr(_dst(dst), data, source)
        return Instruction()

    def dropout(dst, data, prob, name=None, **kwargs):
        source = _go()
        core.lower_tensor_scalar(_dst(dst), data, "multiply", 1.0, source=source)
        return Instruction()

    def memset(dst, value, engine=None, name=None, **kwargs):
        source = _go()
        core.lower_memset(_dst(dst), value, engine, source)
        return Instruction()

    def iota(dst, pattern, offset=0, channel_multiplier=0, name=None, **kwargs):
        source = _go()
        core.lower_iota(_dst(dst), _pattern_text(pattern, offset, channel_multiplier), source)
        return Instruction()

    def affine_select(dst, pattern, channel_multiplier, on_true_tile, on_false_value,
                      cmp_op=None, offset=0, name=None, **kwargs):
        source = _go()
        cmp = ops.op_name(cmp_op) if cmp_op is not None else "equal"
        cmp = {"equal": "eq", "not_equal": "ne", "greater": "gt", "greater_equal": "ge",
               "less": "lt", "less_equal": "le"}.get(cmp, cmp)
        core.lower_affine_select(_dst(dst), _pattern_text(pattern, offset, channel_multiplier),
                                 on_true_tile, on_false_value, cmp, source)
        return Instruction()

    def tensor_partition_reduce(dst, op, data, name=None, **kwargs):
        source = _go()
        core.lower_tensor_partition_reduce(_dst(dst), op, data, source)
        return Instruction()

    def dma_copy(dst, src, priority=None, oob_mode=None, dge_mode=None, engine=None, name=None,
                 **kwargs):
        source = _go()
        core.lower_dma(_dst(dst), src, "dma_copy", source, dge_mode=dge_mode)
        return Instruction()

    def dma_transpose(dst, src, axes=None, priority=None, dge_mode=None, oob_mode=None, name=None,
                      **kwargs):
        source = _go()
        core.lower_dma(_dst(dst), src, "dma_transpose", source, dge_mode=dge_mode)
        return Instruction()

    ns.update(locals())
    ns.pop("_go")
    ns.pop("_dst")
    ns.update(_common())
    return ns


def _common():
    ns = {
        "engine": engine, "reduce_cmd": reduce_cmd, "dge_mode": dge_mode, "oob_mode": oob_mode,
        "matmul_perf_mode": matmul_perf_mode, "nc_version": nc_version, "dma_engine": dma_engine,
        "get_nc_version": get_nc_version, "get_nc_sub_version": get_nc_sub_version,
        "tensor_engine": engine.tensor, "vector_engine": engine.vector,
        "scalar_engine": engine.scalar, "gpsimd_engine": engine.gpsimd,
        "unknown_engine": engine.unknown, "sync_engine": engine.sync,
        "NkiInstruction": Instruction,
    }
    for name in core.UNSUPPORTED:
        ns.setdefault(name, core.unsupported(name))
    return ns


__all__ = ["classic_namespace", "new_namespace", "Tensor"]
