"""``nki.isa`` instructions, lowered into a given destination.

``lower_*`` functions take the destination view and the instruction's arguments, check them, and
emit instructions of the kernel format. The classic API (results returned) and the new API
(``dst`` first) are thin wrappers in isa_classic.py and isa_new.py.
"""

from __future__ import annotations

from . import dtypes, ops
from .errors import KernelError
from .tensor import PSUM, SBUF, Tensor
from .trace import current


def engine_name(engine, default=None):
    """'tensor', 'vector', 'scalar', 'gpsimd', 'sync', 'dma' or None (compiler's choice)."""
    if engine is None:
        return default
    name = getattr(engine, "name", None) or str(engine)
    name = name.lower().replace("_engine", "").replace("engine.", "")
    if name in ("unknown", "none", "0"):
        return default
    table = {"1": "tensor", "2": "scalar", "3": "gpsimd", "4": "dma", "5": "vector", "6": "sync",
             "pool": "gpsimd", "act": "scalar", "activation": "scalar", "pe": "tensor"}
    name = table.get(name, name)
    if name not in ("tensor", "vector", "scalar", "gpsimd", "sync", "dma"):
        raise KernelError(f"unknown engine {engine!r}")
    return name


def lower_nc_matmul(dst, stationary, moving, accumulate, is_transpose=False, perf_mode=None,
                    source=None, mask=None):
    stationary = ops.operand(stationary, "nc_matmul stationary")
    moving = ops.operand(moving, "nc_matmul moving")
    views = ops.apply_mask({"dst": dst, "stationary": stationary, "moving": moving}, mask)
    if not views:
        return
    d, s, m = views["dst"], views["stationary"], views["moving"]
    if accumulate is None:
        ops.matmul_first_write(d, s, m, perf_mode, source, is_transpose)
    elif accumulate == "+=":
        ops.matmul_accumulate(d, s, m, perf_mode, source, is_transpose)
    else:
        ops.emit_matmul(d, s, m, accumulate, is_transpose, perf_mode, source)


def lower_nc_transpose(dst, data, engine=None, source=None, mask=None):
    data = ops.operand(data, "nc_transpose data")
    tracer = current()
    if engine is None:
        small = max(data.partitions, data.free_elements()) <= tracer.target.get("vector_transpose_max", 32)
        engine = "tensor" if dst.storage.memory == PSUM or not small else "vector"
    views = ops.apply_mask({"dst": dst, "src": data}, mask)
    if not views:
        return
    ops.emit_transpose(views["dst"], ops._flatten_free(views["src"]), engine, source)


def lower_activation(dst, op, data, bias=None, scale=1.0, reduce_res=None, source=None, mask=None):
    data = ops.operand(data, "activation data")
    views = ops.apply_mask({"dst": dst, "src": data}, mask)
    if not views:
        return
    ops.emit_activation(views["dst"], views["src"], op, scale, bias, reduce_res, source)


def lower_tensor_tensor(dst, data1, data2, op, engine=None, source=None, mask=None):
    data1 = ops.operand(data1, "tensor_tensor data1")
    data2 = ops.operand(data2, "tensor_tensor data2")
    views = ops.apply_mask({"dst": dst, "in0": data1, "in1": data2}, mask)
    if not views:
        return
    ops.emit_tensor_tensor(views["dst"], views["in0"], views["in1"], op,
                           engine_name(engine), source)


def lower_tensor_scalar(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None,
                        reverse1=False, engine=None, source=None, mask=None):
    data = ops.operand(data, "tensor_scalar data")
    views = ops.apply_mask({"dst": dst, "src": data}, mask)
    if not views:
        return
    ops.emit_tensor_scalar(views["dst"], views["src"], op0, operand0, reverse0, op1, operand1,
                           reverse1, engine_name(engine), source)


def lower_scalar_tensor_tensor(dst, data, op0, operand0, op1, operand1, reverse0=False,
                               reverse1=False, source=None, mask=None):
    data = ops.operand(data, "scalar_tensor_tensor data")
    in1 = ops.operand(operand1, "scalar_tensor_tensor operand1")
    views = ops.apply_mask({"dst": dst, "data": data, "in1": in1}, mask)
    if not views:
        return
    ops.require_tile(views["data"], "scalar_tensor_tensor data")
    ops.check_match(views["data"], views["in1"], "scalar_tensor_tensor")
    operands = {"dst": views["dst"], "data": views["data"], "in1": views["in1"]}
    attrs = {"op0": ops.alu_name(op0), "op1": ops.alu_name(op1)}
    v0, n0 = ops.scalar_or_tensor(operand0, "operand0", views["data"].partitions)
    if v0 is not None:
        operands["operand0"] = v0
    else:
        attrs["operand0"] = n0
    ops.emit("scalar_tensor_tensor", "vector", operands, attrs, source)


def lower_tensor_reduce(dst, op, data, axis, negate=False, keepdims=False, source=None, mask=None):
    data = ops.operand(data, "tensor_reduce data")
    axes = ops.normalize_axes(axis, data.ndim)
    views = ops.apply_mask({"dst": dst, "src": data}, mask)
    if not views:
        return
    ops.emit_tensor_reduce(views["dst"], views["src"], op, axes, negate, keepdims, source)


def lower_tensor_copy(dst, src, engine=None, source=None, mask=None):
    src = ops.operand(src, "tensor_copy src")
    views = ops.apply_mask({"dst": dst, "src": src}, mask)
    if not views:
        return
    engine = engine_name(engine)
    if engine is None and not ops.compiler("copy_engine", None):
        engine = "vector"
    ops.emit_tensor_copy(views["dst"], views["src"], engine, source)


def lower_memset(dst, value, engine=None, source=None, mask=None):
    views = ops.apply_mask({"dst": dst}, mask)
    if not views:
        return
    d = views["dst"]
    if (value == 0 and d.storage.memory == PSUM and ops._is_whole(d)
            and ops.compiler("fold_zero_fill", True)):
        ops.zero_fill(d, source)
        return
    ops.emit_memset(d, value, engine_name(engine), source)


def lower_reciprocal(dst, data, source=None, mask=None):
    data = ops.operand(data, "reciprocal data")
    views = ops.apply_mask({"dst": dst, "src": data}, mask)
    if views:
        ops.check_match(views["dst"], views["src"], "reciprocal")
        ops.emit("reciprocal", "vector", views, {}, source)


def lower_bn_stats(dst, data, source=None, mask=None):
    data = ops.operand(data, "bn_stats data")
    views = ops.apply_mask({"dst": dst, "src": data}, mask)
    if views:
        ops.emit("bn_stats", "vector", views, {}, source)


def lower_bn_aggr(dst, data, source=None, mask=None):
    data = ops.operand(data, "bn_aggr data")
    views = ops.apply_mask({"dst": dst, "src": data}, mask)
    if views:
        ops.emit("bn_aggr", "vector", views, {}, source)


def lower_tensor_tensor_scan(dst, data0, data1, initial, op0, op1, reverse0=False,
                             reverse1=False, source=None, mask=None):
    data0 = ops.operand(data0, "tensor_tensor_scan data0")
    data1 = ops.operand(data1, "tensor_tensor_scan data1")
    views = ops.apply_mask({"dst": dst, "in0": data0, "in1": data1}, mask)
    if not views:
        return
    operands = dict(views)
    attrs = {"op0": ops.alu_name(op0), "op1": ops.alu_name(op1)}
    v, n = ops.scalar_or_tensor(initial, "initial", views["in0"].partitions)
    if v is not None:
        operands["initial"] = v
    else:
        attrs["initial"] = n
    ops.emit("tensor_tensor_scan", "vector", operands, attrs, source)


def sbuf_copy(view, source):
    """GpSimd cannot access PSUM: a PSUM operand of a GpSimd-only instruction is first copied to
    SBUF on VectorE (the compiler inserts the same copy)."""
    if view.storage.memory != PSUM:
        return view
    tracer = current()
    temp = ops.new_result(view.shape, view.dtype, SBUF)
    ops.create_implicit_tile(tracer, temp.storage, source)
    ops.emit_tensor_copy(temp, view, "vector", source)
    return temp


def gpsimd_into(dst, source, emit_into):
    """Runs ``emit_into(d)`` with an SBUF destination, copying to a PSUM ``dst`` after."""
    if dst.storage.memory != PSUM:
        emit_into(dst)
        return
    tracer = current()
    temp = ops.new_result(dst.shape, dst.dtype, SBUF)
    ops.create_implicit_tile(tracer, temp.storage, source)
    emit_into(temp)
    ops.emit_tensor_copy(dst, temp, "vector", source)


def lower_tensor_partition_reduce(dst, op, data, source=None, mask=None):
    data = ops.operand(data, "tensor_partition_reduce data")
    views = ops.apply_mask({"dst": dst, "src": data}, mask)
    if views:
        src = sbuf_copy(views["src"], source)
        gpsimd_into(views["dst"], source, lambda d: ops.emit(
            "tensor_partition_reduce", "gpsimd", {"dst": d, "src": src},
            {"alu": ops.alu_name(op)}, source))


def lower_iota(dst, expr_text, source=None, mask=None):
    views = ops.apply_mask({"dst": dst}, mask)
    if views:
        gpsimd_into(views["dst"], source,
                    lambda d: ops.emit("iota", "gpsimd", {"dst": d}, {"expr": expr_text}, source))


def lower_affine_select(dst, pred_text, on_true, on_false_value, cmp="ge", source=None, mask=None):
    on_true = ops.operand(on_true, "affine_select on_true_tile")
    views = ops.apply_mask({"dst": dst, "src": on_true}, mask)
    if views:
        src = sbuf_copy(views["src"], source)
        gpsimd_into(views["dst"], source, lambda d: ops.emit(
            "affine_select", "gpsimd", {"dst": d, "src": src},
            {"pred": pred_text, "cmp": cmp, "fill": ops._scalar_attr(on_false_value)}, source))


def lower_dma(dst, src, op="dma_copy", source=None, mask=None, dge_mode=None):
    src = ops.operand(src, f"{op} src")
    ops.emit_dma(dst, src, source, op=op, mask=mask, dge=dge_mode)


def lower_select(dst, predicate, on_true, on_false, source=None, mask=None):
    pred = ops.operand(predicate, "select predicate")
    views = {"dst": dst, "pred": pred}
    attrs = {}
    for key, value in (("on_true", on_true), ("on_false", on_false)):
        if isinstance(value, Tensor):
            views[key] = ops.operand(value, key)
        else:
            attrs[key] = ops._scalar_attr(value)
    views = ops.apply_mask(views, mask)
    if views:
        ops.emit("select", "vector", views, attrs, source)


def lower_exponential(dst, src, max_value=0.0, reduce_res=None, source=None):
    src = ops.operand(src, "exponential src")
    operands = {"dst": dst, "src": src}
    attrs = {}
    v, n = ops.scalar_or_tensor(max_value, "max_value", src.partitions)
    if v is not None:
        operands["max"] = v
    elif n:
        attrs["max"] = n
    if reduce_res is not None:
        operands["reduce_dst"] = ops.operand(reduce_res, "reduce_res")
    ops.emit("exponential", "vector", operands, attrs, source)


def result_shape_like(data):
    return tuple(data.shape) if data.ndim >= 2 else tuple(data.shape) + (1,)


def matmul_result_shape(stationary, moving):
    return (stationary.free_elements(), moving.free_elements())


def check_psum_dtype(dtype):
    return dtypes.float32 if dtype is None else dtypes.dtype_of(dtype)


UNSUPPORTED = (
    "tensor_copy_dynamic_src", "tensor_copy_dynamic_dst", "select_reduce", "range_select",
    "max8", "nc_find_index8", "nc_match_replace8", "nc_stream_shuffle", "local_gather",
    "nc_n_gather", "sequence_bounds", "nonzero_with_count", "topk", "rng", "rand2",
    "set_rng_seed", "rand_set_state", "rand_get_state", "dma_compute", "sendrecv",
    "register_alloc", "register_move", "register_load", "register_store", "quantize_mx",
    "tensor_scalar_cumulative", "activate2",
)


def unsupported(name):
    def call(*args, **kwargs):
        raise KernelError(f"nisa.{name} is not supported by trnsim's NKI front end "
                          "(docs/nki-frontend.md lists what is)")

    call.__name__ = name
    return call


__all__ = ["SBUF", "PSUM"]
