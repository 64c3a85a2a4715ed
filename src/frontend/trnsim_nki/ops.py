"""Lowering: NKI calls to instructions of the kernel format, the way the Neuron compiler would.

Both API generations end here. New-API ISA calls name their destination (``dst``); classic calls
return a result whose destination is decided by what the kernel does with it (trace.py
``PendingResult``): assigned into a tensor it is written there, used as an operand it gets an
implicit tile. Every rule that is a choice is written down in docs/nki-frontend.md; settable ones
read ``target["compiler"]``.
"""

from __future__ import annotations

import math

from . import buffers, dtypes
from .errors import KernelError
from .expr import NotAffine, Sym, render, sym_and, sym_not
from .tensor import (
    HBM,
    PSUM,
    SBUF,
    IndexPred,
    Storage,
    Tensor,
    broadcast_free_view,
    check_bounds,
    index_view,
    restrict_axis,
)
from .trace import If, PendingResult, current

# ------------------------------------------------------------------------------------------------
# Names

ALU_NAMES = {
    "bypass": "bypass", "add": "add", "subtract": "subtract", "sub": "subtract",
    "multiply": "multiply", "mul": "multiply", "divide": "divide", "true_divide": "divide",
    "maximum": "max", "max": "max", "amax": "max", "minimum": "min", "min": "min", "amin": "min",
    "power": "power", "pow": "power", "mod": "mod", "fmod": "mod", "remainder": "mod",
    "abs_max": "abs_max", "abs_min": "abs_min", "average": "average", "mean": "average",
    "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor",
    "invert": "invert", "bitwise_not": "invert", "left_shift": "left_shift",
    "right_shift": "right_shift", "logical_and": "logical_and", "logical_or": "logical_or",
    "logical_xor": "logical_xor", "equal": "equal", "not_equal": "not_equal",
    "greater": "greater", "greater_equal": "greater_equal", "less": "less",
    "less_equal": "less_equal",
}
ACTIVATION_NAMES = {
    "copy", "abs", "arctan", "erf", "erf_dx", "exp", "gelu", "gelu_dx", "gelu_apprx_tanh",
    "gelu_apprx_sigmoid", "gelu_apprx_sigmoid_dx", "log", "mish", "prelu", "reciprocal", "relu",
    "rsqrt", "sigmoid", "sign", "silu", "silu_dx", "sin", "softplus", "sqrt", "square", "tanh",
}
_ACTIVATION_ALIASES = {"identity": "copy", "absolute": "abs", "arctan2": "arctan",
                       "gelu_apprx_tanh_dx": "gelu_dx", "cos": "sin", "exp2": "exp",
                       "log2": "log", "log1p": "log", "expm1": "exp"}


def op_name(op):
    """Canonical name of an op argument: an nl function, a NumPy ufunc or a string."""
    if op is None:
        return None
    name = getattr(op, "_nki_op", None)
    if name is None:
        if isinstance(op, str):
            name = op
        else:
            name = getattr(op, "__name__", None) or getattr(op, "name", None)
    if name is None:
        raise KernelError(f"expected an operator (nl.add, np.exp, ...), found {op!r}")
    return str(name)


def alu_name(op):
    name = op_name(op)
    if name not in ALU_NAMES:
        raise KernelError(f"'{name}' is not an ALU operator (expected one of nl.add, "
                          "nl.subtract, nl.multiply, nl.maximum, ...)")
    return ALU_NAMES[name]


def activation_name(op):
    name = op_name(op)
    name = _ACTIVATION_ALIASES.get(name, name)
    if name not in ACTIVATION_NAMES:
        raise KernelError(f"'{name}' is not an activation function of the Scalar Engine")
    return name


def compiler(key, default):
    return current().target.get("compiler", {}).get(key, default)


# ------------------------------------------------------------------------------------------------
# Creating tensors


class ParDim:
    """``nl.par_dim(n)``: marks the partition dimension of a classic tensor."""

    __slots__ = ("size",)

    def __init__(self, size):
        self.size = size

    def __index__(self):
        return int(self.size)

    def __int__(self):
        return int(self.size)

    def __eq__(self, other):
        return int(self) == other

    def __hash__(self):
        return hash(int(self))

    def __repr__(self):
        return f"par_dim({self.size})"


def parse_shape(shape, on_chip):
    """(sizes, partition_dim) of a shape given by a kernel (ints, nl.par_dim)."""
    if isinstance(shape, (int, Sym, ParDim)):
        shape = (shape,)
    if isinstance(shape, Tensor):
        raise KernelError("a shape must be a tuple of integers, found a tensor")
    sizes = []
    partition_dim = 0
    marked = False
    for d, s in enumerate(shape):
        if isinstance(s, ParDim):
            if marked:
                raise KernelError("a shape may mark only one nl.par_dim")
            partition_dim, marked = d, True
            s = s.size
        if isinstance(s, Sym):
            raise NotAffine(s.variables(), "a tensor shape that depends on a loop index")
        try:
            s = int(s)
        except (TypeError, ValueError):
            raise KernelError(f"a shape must contain integers, found {s!r}") from None
        if s <= 0:
            raise KernelError(f"shape {tuple(shape)}: sizes must be positive")
        sizes.append(s)
    if not sizes:
        raise KernelError("a tensor needs at least one dimension")
    if not on_chip:
        partition_dim = 0
    return tuple(sizes), partition_dim


def check_on_chip_shape(sizes, partition_dim, memory, dtype):
    tracer = current()
    pmax = tracer.target["pmax"]
    if sizes[partition_dim] > pmax:
        raise KernelError(
            f"tile {list(sizes)} has {sizes[partition_dim]} partitions, more than the "
            f"{pmax} of {tracer.target['name']} (partition dimension {partition_dim})")
    free = 1
    for d, s in enumerate(sizes):
        if d != partition_dim:
            free *= s
    nbytes = free * dtype.itemsize
    capacity = (tracer.target["sbuf_partition_bytes"] if memory == SBUF
                else tracer.target["psum_partition_bytes"])
    if nbytes > capacity:
        raise KernelError(
            f"tile {list(sizes)} {dtype} needs {nbytes} bytes per partition, more than the "
            f"{capacity} of {memory.upper()} per partition on {tracer.target['name']}")


def create_tensor(shape, dtype, buffer=None, name=None, address=None, source=None):
    """``nl.ndarray``: a new HBM tensor or logical on-chip tile (uninitialised)."""
    tracer = current()
    tracer.flush()
    if source is None:
        source = tracer.location(3)
    buf = buffers.resolve(buffer)
    dtype = dtypes.dtype_of(dtype)
    sizes, partition_dim = parse_shape(shape, buf.memory != HBM)
    hint = name or tracer.assigned_name(source) or ""
    if buf.memory == HBM:
        kind = buf.hbm_kind or "shared"
        key = (source[:2], sizes, dtype.name, kind)
        if getattr(tracer, "unrolled_grid", 0) and kind == "shared" and key in tracer.grid_tensors:
            # every program of a launch grid sees the same shared output
            return Tensor.whole(tracer.grid_tensors[key])
        storage = Storage(HBM, dtype, sizes, 0, hint, hbm_kind=kind)
        tracer.hbm.append(storage)
        if getattr(tracer, "unrolled_grid", 0):
            tracer.grid_tensors[key] = storage
        return Tensor.whole(storage)
    check_on_chip_shape(sizes, partition_dim, buf.memory, dtype)
    storage = Storage(buf.memory, dtype, sizes, partition_dim, hint)
    tile = tracer.new_tile(storage, source)
    if address is not None:
        tile.address = _parse_address(address, buf.memory, tracer)
    elif buf.placement is not None:
        tile.address, tile.mod_alloc = direct_placement(buf.placement, storage, tracer)
    if buf.memory == PSUM:
        tile.zero = None
    init_touch(tile)
    return Tensor.whole(storage)


def direct_placement(placement, storage, tracer):
    """(address, (fold, block stride in bytes) or None) of a classic direct allocation.

    ``mod_alloc``: block i of a tensor with one block dimension lives at base + (i mod k) *
    block size (SBUF) or in bank base_bank + (i mod k) (PSUM). ``alloc(func)``: func(block
    index tuple, partitions, bytes per partition) -> (partition, byte), which must place the
    blocks at a constant stride, repeating with some period."""
    from .buffers import FuncAlloc

    bank = tracer.target["psum_bank_bytes"]
    blocks = storage.shape[:storage.partition_dim]
    if len(blocks) > 1:
        raise KernelError("direct allocation of a tensor with more than one block dimension is "
                          "not supported")
    free = 1
    for d, size in enumerate(storage.shape):
        if d > storage.partition_dim:
            free *= size
    tile_bytes = free * storage.dtype.itemsize
    partitions = storage.shape[storage.partition_dim]
    if isinstance(placement, FuncAlloc):
        if not blocks:
            return _checked_address(placement.func((), partitions, tile_bytes), storage.memory,
                                    tracer), None
        places = [tuple(int(v) for v in placement.func((i,), partitions, tile_bytes))
                  for i in range(blocks[0])]
        period = next((k for k in range(1, len(places) + 1)
                       if all(places[i] == places[i % k] for i in range(len(places)))), len(places))
        base = places[0]
        stride = places[1][1] - base[1] if period > 1 else tile_bytes
        if any(p[0] != base[0] or p[1] != base[1] + i * stride for i, p in enumerate(places[:period])):
            raise KernelError("alloc(func) must place the blocks at a constant stride")
        if period > 1 and stride < tile_bytes:
            raise KernelError(f"alloc(func) places blocks {stride} bytes apart, less than their "
                              f"{tile_bytes} bytes")
        return _checked_address(base, storage.memory, tracer), (period, stride)
    if storage.memory == PSUM:
        address = (placement.base_partition, placement.byte_offset(bank))
        tiles = placement.num_free_tiles or (blocks[0] if blocks else 1,)
        stride = bank
        if tile_bytes > bank:
            raise KernelError(f"a PSUM mod_alloc block of {tile_bytes} bytes per partition does "
                              f"not fit one {bank}-byte bank")
    else:
        address = (placement.base_partition, placement.base_addr)
        tiles = placement.num_free_tiles or (blocks[0] if blocks else 1,)
        stride = tile_bytes
    address = _checked_address(address, storage.memory, tracer)
    if not blocks:
        return address, None
    return address, (max(1, int(tiles[0])), stride)


def _checked_address(address, memory, tracer):
    return _parse_address(tuple(int(v) for v in address), memory, tracer)


def _parse_address(address, memory, tracer):
    if isinstance(address, int):
        address = (0, address)
    try:
        partition, byte = (int(address[0]), int(address[1]))
    except (TypeError, ValueError, IndexError):
        raise KernelError(f"address= must be (partition, byte offset), found {address!r}") from None
    if memory == PSUM and byte % tracer.target["psum_bank_bytes"] != 0:
        raise KernelError(f"a PSUM address must start at a bank boundary (multiple of "
                          f"{tracer.target['psum_bank_bytes']}), found {byte}")
    align = tracer.target["sbuf_alignment_bytes"] if memory == SBUF else tracer.target["psum_alignment_bytes"]
    if byte % align != 0:
        raise KernelError(f"address byte offset {byte} is not a multiple of the {align}-byte alignment")
    return partition, byte


def create_implicit_tile(tracer, storage, source):
    check_on_chip_shape(storage.shape, storage.partition_dim, storage.memory, storage.dtype)
    tile = tracer.new_tile(storage, source, written_next=True)
    init_touch(tile)
    return tile


def new_result(shape, dtype, memory):
    """A Tensor viewing a fresh implicit Storage (no tile yet)."""
    sizes = tuple(int(s) for s in shape)
    storage = Storage(memory, dtypes.dtype_of(dtype), sizes, 0, "")
    return Tensor.whole(storage)


def classic_result(shape, dtype, memory, op, emit, source=None, accumulate=None):
    """A classic call's result: emitted when its destination is known. ``accumulate(dst)``
    (matmuls) emits it as an accumulation into dst (``psum += nisa.nc_matmul(...)``)."""
    tracer = current()
    if source is None:
        source = tracer.location(3)
    tensor = new_result(shape, dtype, memory)
    tensor.storage.name = tracer.assigned_name(source) or ""
    tracer.add_pending(PendingResult(tensor, emit, source, op, accumulate))
    return tensor


def operand(x, what="operand"):
    """A materialised Tensor for an instruction operand."""
    if not isinstance(x, Tensor):
        raise KernelError(f"{what} must be a tensor, found {type(x).__name__} {x!r}")
    tracer = current()
    pending = tracer.take_pending(x)
    if pending is None and x.storage.tile is None and x.storage.on_chip:
        pending = tracer.fused.pop(id(x), None)
    if pending is not None:
        from .trace import materialize

        materialize(tracer, pending)
    return x


def retarget(tensor, dst):
    """Makes ``tensor`` (a pending result just written into dst) a view of dst."""
    tensor.storage = dst.storage
    tensor.dtype = dst.dtype
    tensor.axes = [list(a) for a in dst.axes]
    tensor.offset = dst.offset
    tensor.pstart = dst.pstart
    tensor.paxis = dst.paxis
    tensor.index_form = dst.index_form


# ------------------------------------------------------------------------------------------------
# First touches of PSUM / zero-initialised tiles


class Touch:
    """Which regions of a tile were written by accumulating instructions since an epoch
    (its creation, or a zero-fill), and the symbolic loops active at that epoch."""

    __slots__ = ("frames", "keys")

    def __init__(self, frames):
        self.frames = frames
        self.keys = set()


class ZeroFill:
    """A deferred zero-fill record: emitted as a memset only if something needs the zeros."""

    __slots__ = ("view", "engine", "source", "seq", "needed", "claimed", "frames")

    def __init__(self, view, engine, source, seq, frames):
        self.view = view
        self.engine = engine
        self.source = source
        self.seq = seq
        self.needed = False  # something read the zeros before any accumulation: emit it
        self.claimed = False  # an accumulation's first write replaced it: it is dead
        self.frames = frames


def init_touch(tile):
    tile.zero = None
    tile_touch[tile.ident] = Touch(current().symbolic_frames())


tile_touch = {}


def reset_touch_state():
    tile_touch.clear()


def _region_key(view):
    return (render(view.offset), render(view.pstart), tuple(map(tuple, view.axes)))


def first_touch(view):
    """1, 0 or a Sym: whether this accumulation is the first write of its region since the
    tile's epoch. Symbolic loops entered since the epoch whose index does not select the region
    are the accumulation loops: the first touch is their first iteration."""
    tracer = current()
    touch = tile_touch.get(view.storage.tile.ident)
    key = _region_key(view)
    if touch is None or key in touch.keys:
        return 0
    touch.keys.add(key)
    index_vars = set()
    for value in (view.offset, view.pstart):
        if isinstance(value, Sym):
            index_vars |= value.variables()
    cond = 1
    for frame in tracer.symbolic_frames():
        if frame in touch.frames:
            continue
        if frame.var in index_vars:
            continue
        cond = sym_and(cond, Sym.var(frame.var) == frame.start)
    return cond


def zero_fill(view, source=None):
    """A zero-fill of a whole on-chip tile, deferred: an accumulation that comes first makes it
    unnecessary (its first write overwrites); any other access emits it as a memset."""
    tracer = current()
    tracer.flush()
    if source is None:
        source = tracer.location(3)
    tile = view.storage.tile
    if not compiler("fold_zero_fill", True):
        emit_memset(view, 0.0, None, source)
        return
    engine = default_memset_engine(view)
    record = ZeroFill(view, engine, source, tracer.next_seq(), tracer.symbolic_frames())
    tracer.append(record)
    tile.zero = record
    tile_touch[tile.ident] = Touch(tracer.symbolic_frames())


def settle_zero(view, accumulating=False):
    """Called for every on-chip operand before an instruction is emitted."""
    tile = view.storage.tile
    if tile is None or tile.zero is None:
        return
    if accumulating:
        tile.zero.claimed = True
        return
    if not tile.zero.claimed:
        tile.zero.needed = True
        tile.zero = None


def default_memset_engine(view):
    if view.storage.memory == PSUM:
        return "vector"
    return compiler("sbuf_memset_engine", "gpsimd")


# ------------------------------------------------------------------------------------------------
# Emitting instructions


def emit(op, engine, operands, attrs=None, source=None, accumulating=()):
    tracer = current()
    if source is None:
        source = tracer.location(3)
    for slot, view in operands.items():
        if view is not None and view.checks:
            check_bounds(view)
        if view is not None and view.storage.on_chip:
            settle_zero(view, slot in accumulating)
    return tracer.emit(op, engine, operands, attrs or {}, source)


def _same_shape(a, b):
    sa, sb = a.shape, b.shape
    if sa == sb:
        return True
    return tuple([s for s in sa if s != 1]) == tuple([s for s in sb if s != 1])


def check_match(a, b, what):
    if not _same_shape(a, b):
        raise KernelError(f"{what}: shapes {list(a.shape)} and {list(b.shape)} do not match")


def require_tile(view, what):
    if not view.storage.on_chip:
        raise KernelError(f"{what} must be in SBUF or PSUM, found an HBM tensor")
    if view.paxis != 0:
        raise KernelError(f"{what} must have its partition dimension first (shape {list(view.shape)})")


def dma_queue(source, kind):
    """Queue of a DMA: each DMA call site of the kernel gets the next queue, round robin."""
    tracer = current()
    key = (source[0], source[1], kind)
    queue = tracer.dma_queues.get(key)
    if queue is None:
        queues = max(1, int(compiler("dma_queues", tracer.target.get("dma_queues", 16))))
        queue = len(tracer.dma_queues) % queues
        tracer.dma_queues[key] = queue
    return queue


DGE_MODES = ("none", "hwdge", "swdge")


def dge_mode(requested, op, dst, src):
    """Descriptor generation of a DMA: the kernel's own `dge_mode` when it gives one, else the
    config's `compiler.dge_mode` for a dma_copy without a cast (hardware DGE cannot cast) and
    prebuilt descriptors otherwise. None for prebuilt descriptors (the format's default)."""
    name = getattr(requested, "name", requested)
    if name is None or name == "unknown":
        name = compiler("dge_mode", "none") if op == "dma_copy" else "none"
        if name == "hwdge" and dst.dtype != src.dtype:
            name = "none"
        return None if name == "none" else name
    if name not in DGE_MODES:
        raise KernelError(f"dge_mode must be one of nisa.dge_mode.none, swdge, hwdge, found "
                          f"{requested!r}")
    if name == "hwdge":
        if current().target.get("nc_version", 3) < 3:
            raise KernelError(f"dge_mode hwdge needs a NeuronCore with hardware DGE (v3 or "
                              f"later); {current().target.get('name', 'this target')} has none")
        if dst.dtype != src.dtype:
            raise KernelError(f"a DMA that casts ({src.dtype.name} to {dst.dtype.name}) cannot "
                              f"use dge_mode hwdge")
    return None if name == "none" else name


def _dma_attrs(source, op, dst, src, dge):
    attrs = {"queue": dma_queue(source, op)}
    mode = dge_mode(dge, op, dst, src)
    if mode is not None:
        attrs["dge"] = mode
    return attrs


def _squeezed(view):
    return tuple(s for s in view.shape if s != 1)


def emit_dma_transpose(dst, src, source, mask=None, dge=None):
    """A 2-D transpose on the way in: the DMA engines transpose 2-byte data without a cast on
    NeuronCore-v3 and later; otherwise the data is loaded as it is and transposed on TensorE
    (into PSUM, then copied to the destination)."""
    tracer = current()
    views = apply_mask({"dst": dst, "src": src}, mask)
    if views is None:
        return None
    dst, src = views["dst"], views["src"]
    a, b = (_squeezed(src) + (1, 1))[:2] if len(_squeezed(src)) < 2 else _squeezed(src)[-2:]
    if len(_squeezed(src)) > 2 or _squeezed(dst) != tuple(s for s in (b, a) if s != 1):
        raise KernelError(f"transpose of {list(src.shape)} into {list(dst.shape)}: expected a "
                          f"2-D source and a destination of its transposed shape")
    native = (src.dtype.itemsize == 2 and dst.dtype is src.dtype
              and tracer.target.get("nc_version", 3) >= 3)
    if native:
        return emit("dma_transpose", "dma", {"dst": dst, "src": src},
                    _dma_attrs(source, "dma_transpose", dst, src, dge), source)
    if a > tracer.target["pmax"] or b > tracer.target["pmax"]:
        raise KernelError(f"transpose of {list(src.shape)}: without a DMA transpose both sides "
                          f"must fit {tracer.target['pmax']} partitions")
    staged = new_result((a, b), src.dtype, SBUF)
    create_implicit_tile(tracer, staged.storage, source)
    emit_dma(staged, src, source)
    flipped = new_result((b, a), dtypes.float32, PSUM)
    create_implicit_tile(tracer, flipped.storage, source)
    emit_transpose(flipped, staged, "tensor", source)
    return emit_tensor_copy(dst, flipped, None, source)


def emit_dma(dst, src, source=None, op="dma_copy", mask=None, dge=None):
    tracer = current()
    if source is None:
        source = tracer.location(3)
    if op == "dma_transpose":
        return emit_dma_transpose(dst, src, source, mask, dge)
    if src.storage.memory == PSUM:
        temp = new_result(src.shape, src.dtype, SBUF)
        create_implicit_tile(tracer, temp.storage, source)
        emit_tensor_copy(temp, src, None, source)
        src = temp
    if dst.size != src.size or not _same_shape(dst, src):
        if dst.size == src.size and (dst.storage.on_chip or src.storage.on_chip):
            raise KernelError(f"DMA shapes {list(src.shape)} -> {list(dst.shape)} do not match")
        raise KernelError(f"DMA of {list(src.shape)} into {list(dst.shape)}: shapes do not match")
    if dst.storage.memory == PSUM:
        if op == "dma_copy":
            temp = new_result(dst.shape, dst.dtype, SBUF)
            create_implicit_tile(tracer, temp.storage, source)
            emit_dma(temp, src, source, op, dge=dge)
            emit_tensor_copy(dst, temp, None, source)
            return None
    views = apply_mask({"dst": dst, "src": src}, mask)
    if views is None:
        return None
    return emit(op, "dma", views, _dma_attrs(source, op, dst, src, dge), source)


def apply_mask(views, mask):
    """Restricts every view to a classic mask's rectangle; None when nothing is left."""
    if mask is None or mask is True:
        return views
    if isinstance(mask, (int, Sym)) and not isinstance(mask, IndexPred):
        if isinstance(mask, Sym):
            raise NotAffine(mask.variables(), "a mask that depends only on a loop index")
        return views if mask else None
    if not isinstance(mask, IndexPred):
        raise KernelError(f"mask= must be a comparison of nl.arange indices, found {mask!r}")
    ranges = mask.ranges()
    out = {}
    for slot, view in views.items():
        if view is None or not isinstance(view, Tensor):
            out[slot] = view
            continue
        for axis, (lo, hi) in ranges.items():
            position = view.ndim + axis
            if 0 <= position < view.ndim:
                if isinstance(lo, Sym) or isinstance(hi, Sym):
                    names = set()
                    for v in (lo, hi):
                        if isinstance(v, Sym):
                            names |= v.variables()
                    raise NotAffine(names, "a mask whose extent depends on a loop index")
                if (lo, hi) == (0, view.axes[position][1]):
                    continue
                view = restrict_axis(view, position, lo, hi)
                if view is None:
                    return None
        out[slot] = view
    return out


def _scalar_attr(value):
    if isinstance(value, Sym):
        return value
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        v = float(value)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return value if isinstance(value, int) else v
    if hasattr(value, "item") and not isinstance(value, Tensor):
        return _scalar_attr(value.item())
    raise KernelError(f"expected a number, found {value!r}")


def scalar_or_tensor(value, what, partitions):
    """(operand view or None, attribute value or None) for a number-or-[P,1]-tensor argument."""
    if value is None:
        return None, None
    if isinstance(value, Tensor):
        view = operand(value, what)
        require_tile(view, what)
        if view.free_elements() != 1:
            raise KernelError(f"{what} must be a number or a [P, 1] tile, found shape {list(view.shape)}")
        if view.partitions != partitions:
            if view.partitions == 1:
                raise KernelError(f"{what} has 1 partition but the data has {partitions}: "
                                  "broadcast it along the partition axis first")
            raise KernelError(f"{what} has {view.partitions} partitions, the data {partitions}")
        return view, None
    return None, _scalar_attr(value)


def emit_tensor_copy(dst, src, engine=None, source=None):
    require_tile(dst, "tensor_copy dst")
    require_tile(src, "tensor_copy src")
    check_match(dst, src, "tensor_copy")
    engine = engine or compiler("copy_engine", "vector")
    if engine == "gpsimd" and PSUM in (dst.storage.memory, src.storage.memory):
        engine = "vector"
    return emit("tensor_copy", engine, {"dst": dst, "src": src}, {}, source)


def emit_memset(dst, value, engine=None, source=None):
    require_tile(dst, "memset dst")
    engine = engine or default_memset_engine(dst)
    if engine == "gpsimd" and dst.storage.memory == PSUM:
        engine = "vector"
    return emit("memset", engine, {"dst": dst}, {"value": _scalar_attr(value)}, source)


def emit_activation(dst, src, func, scale=1.0, bias=None, reduce_dst=None, source=None):
    require_tile(dst, "activation dst")
    require_tile(src, "activation data")
    check_match(dst, src, "activation")
    operands = {"dst": dst, "src": src}
    attrs = {"func": activation_name(func)}
    sview, svalue = scalar_or_tensor(scale, "activation scale", src.partitions)
    bview, bvalue = scalar_or_tensor(bias, "activation bias", src.partitions)
    if sview is not None:
        operands["scale"] = sview
    elif svalue is not None and svalue != 1.0:
        attrs["scale"] = svalue
    if bview is not None:
        operands["bias"] = bview
    elif bvalue is not None and bvalue != 0.0:
        attrs["bias"] = bvalue
    if reduce_dst is not None:
        rview = operand(reduce_dst, "reduce_res")
        require_tile(rview, "reduce_res")
        operands["reduce_dst"] = rview
    return emit("activation", "scalar", operands, attrs, source)


def tensor_tensor_engine(alu, a, b, dst, engine=None):
    if engine:
        return engine
    if alu == "power":
        return "gpsimd"
    psum = PSUM in (a.storage.memory, b.storage.memory, dst.storage.memory)
    if (not psum and alu in ("add", "multiply", "subtract")
            and all(v.dtype.kind in "iu" and v.dtype.itemsize == 4 for v in (a, b))):
        return "gpsimd"
    return "vector"


def emit_tensor_tensor(dst, in0, in1, alu, engine=None, source=None):
    require_tile(dst, "tensor_tensor dst")
    require_tile(in0, "tensor_tensor data1")
    require_tile(in1, "tensor_tensor data2")
    check_match(in0, in1, "tensor_tensor")
    check_match(dst, in0, "tensor_tensor dst")
    if in0.storage.memory == PSUM and in1.storage.memory == PSUM:
        raise KernelError("tensor_tensor: both inputs are in PSUM (at most one may be)")
    alu = alu_name(alu)
    engine = tensor_tensor_engine(alu, in0, in1, dst, engine)
    return emit("tensor_tensor", engine, {"dst": dst, "in0": in0, "in1": in1}, {"alu": alu}, source)


def emit_tensor_scalar(dst, src, op0, operand0, reverse0=False, op1=None, operand1=None,
                       reverse1=False, engine=None, source=None):
    require_tile(dst, "tensor_scalar dst")
    require_tile(src, "tensor_scalar data")
    check_match(dst, src, "tensor_scalar")
    operands = {"dst": dst, "src": src}
    attrs = {"op0": alu_name(op0)}
    v0, n0 = scalar_or_tensor(operand0, "operand0", src.partitions)
    if v0 is not None:
        operands["operand0"] = v0
    else:
        attrs["operand0"] = n0
    if reverse0:
        attrs["reverse0"] = True
    if op1 is not None:
        attrs["op1"] = alu_name(op1)
        v1, n1 = scalar_or_tensor(operand1, "operand1", src.partitions)
        if v1 is not None:
            operands["operand1"] = v1
        else:
            attrs["operand1"] = n1 if n1 is not None else 0.0
        if reverse1:
            attrs["reverse1"] = True
    engine = engine or "vector"
    return emit("tensor_scalar", engine, operands, attrs, source)


def emit_tensor_reduce(dst, src, alu, axes, negate=False, keepdims=False, source=None):
    require_tile(dst, "tensor_reduce dst")
    require_tile(src, "tensor_reduce data")
    attrs = {"alu": alu_name(alu), "axis": list(axes)}
    if negate:
        attrs["negate"] = True
    if keepdims:
        attrs["keepdims"] = True
    expected = reduced_shape(src.shape, axes, keepdims)
    if not _same_shape(dst, new_result(expected, dst.dtype, SBUF)):
        # the format also accepts the kept-dims shape; try it before failing
        if not _same_shape(dst, new_result(reduced_shape(src.shape, axes, True), dst.dtype, SBUF)):
            raise KernelError(f"tensor_reduce of {list(src.shape)} over axes {list(axes)} gives "
                              f"{list(expected)}, the destination is {list(dst.shape)}")
    return emit("tensor_reduce", "vector", {"dst": dst, "src": src}, attrs, source)


def reduced_shape(shape, axes, keepdims):
    axes = set(axes)
    out = []
    for d, s in enumerate(shape):
        if d in axes:
            if keepdims:
                out.append(1)
        else:
            out.append(s)
    return tuple(out)


def normalize_axes(axis, ndim):
    if axis is None:
        return list(range(1, ndim))
    if isinstance(axis, (int, Sym)):
        axis = [axis]
    out = []
    for a in axis:
        a = int(a)
        if a < 0:
            a += ndim
        if a <= 0 or a >= ndim:
            raise KernelError(f"reduction axis {a} is not a free axis of a {ndim}-D tile "
                              "(axis 0 is the partition axis)")
        out.append(a)
    return sorted(set(out))


def emit_matmul(dst, stationary, moving, accumulate=False, is_transpose=False,
                perf_mode=None, source=None):
    require_tile(stationary, "nc_matmul stationary")
    require_tile(moving, "nc_matmul moving")
    if dst.storage.memory != PSUM:
        raise KernelError("nc_matmul writes PSUM; its destination is in "
                          f"{dst.storage.memory.upper()}")
    double_row = perf_mode is not None and "double_row" in str(getattr(perf_mode, "name", perf_mode))
    if not double_row:
        if stationary.partitions != moving.partitions:
            raise KernelError(
                f"nc_matmul contraction sizes differ: stationary {list(stationary.shape)} has "
                f"{stationary.partitions} partitions, moving {list(moving.shape)} has {moving.partitions}")
        m = stationary.free_elements()
        n = moving.free_elements()
        if dst.partitions * dst.free_elements() != m * n or dst.partitions != m:
            raise KernelError(f"nc_matmul of stationary {list(stationary.shape)} and moving "
                              f"{list(moving.shape)} gives [{m}, {n}], the destination is {list(dst.shape)}")
    attrs = {}
    if isinstance(accumulate, Sym) or accumulate:
        attrs["accumulate"] = accumulate
    if is_transpose:
        attrs["is_transpose"] = True
    if double_row:
        attrs["perf_mode"] = "double_row"
    return emit("nc_matmul", "tensor", {"dst": dst, "stationary": stationary, "moving": moving},
                attrs, source, accumulating=("dst",))


def emit_transpose(dst, src, engine=None, source=None):
    require_tile(src, "nc_transpose data")
    require_tile(dst, "nc_transpose dst")
    if engine is None:
        engine = "tensor"
    if src.partitions != dst.free_elements() or dst.partitions != src.free_elements():
        raise KernelError(f"nc_transpose of {list(src.shape)} gives [{src.free_elements()}, "
                          f"{src.partitions}], the destination is {list(dst.shape)}")
    return emit("nc_transpose", engine, {"dst": dst, "src": src}, {}, source)


def matmul_accumulate(dst, stationary, moving, perf_mode=None, source=None, is_transpose=False):
    """``psum[...] += matmul(...)``: accumulates; the first write after a zero-fill overwrites."""
    tile = dst.storage.tile
    accumulate = 1
    if tile is not None and tile.zero is not None:
        accumulate = sym_not(first_touch(dst))
    return emit_matmul(dst, stationary, moving, accumulate, is_transpose, perf_mode, source)


def matmul_first_write(dst, stationary, moving, perf_mode=None, source=None, is_transpose=False):
    """New API ``accumulate=None``: the first write of a PSUM region overwrites."""
    accumulate = sym_not(first_touch(dst)) if dst.storage.tile is not None else 1
    return emit_matmul(dst, stationary, moving, accumulate, is_transpose, perf_mode, source)


# ------------------------------------------------------------------------------------------------
# Classic assignment semantics


_just_written = [None]


def assign(target, idx, value):
    """``target[idx] = value``."""
    tracer = current()
    source = tracer.location(3)
    if value is _just_written[0] and value is not None:
        _just_written[0] = None
        return
    pending = tracer.take_pending(value) if isinstance(value, Tensor) else None
    tracer.flush()
    dst = index_view(target, idx)
    if pending is not None:
        pending.emit(dst)
        retarget(value, dst)
        return
    if isinstance(value, Tensor):
        src = value
        if dst.storage.on_chip and src.storage.on_chip:
            if src.storage.memory == PSUM and dst.storage.memory == PSUM:
                raise KernelError("copying PSUM to PSUM is not supported")
            emit_tensor_copy(dst, broadcast_to_match(src, dst), None, source)
        else:
            emit_dma(dst, src, source)
        return
    if isinstance(value, (int, float)) or hasattr(value, "item"):
        if not dst.storage.on_chip:
            raise KernelError("assigning a number to an HBM tensor is not supported")
        value = _scalar_attr(value)
        whole = _is_whole(dst)
        if value == 0 and whole and compiler("fold_zero_fill", True):
            zero_fill(dst, source)
        else:
            emit_memset(dst, value, None, source)
        return
    raise KernelError(f"cannot assign {type(value).__name__} to a tensor")


def _is_whole(view):
    whole = Tensor.whole(view.storage)
    return (view.offset == 0 and view.pstart == 0 and view.size == whole.size) is True


def broadcast_to_match(src, dst):
    if src.shape == dst.shape or _same_shape(src, dst):
        return src
    if src.ndim == dst.ndim and src.partitions == dst.partitions:
        return broadcast_free_view(src, dst.shape)
    return src


def augmented(target_view, alu, value):
    """``target += value`` (and -=, *=, /=): in place, returns the same view."""
    tracer = current()
    source = tracer.location(3)
    pending = tracer.take_pending(value) if isinstance(value, Tensor) else None
    tracer.flush()
    dst = target_view
    if (pending is not None and pending.accumulate is not None and alu == "add"
            and dst.storage.memory == PSUM):
        pending.accumulate(dst)
    else:
        accumulate_tile(dst, alu, value, pending, source)
    _just_written[0] = target_view
    return target_view


def accumulate_tile(dst, alu, value, pending, source):
    """dst (alu)= value. Into a zero-filled tile, the first accumulation of a region writes the
    value instead (a pending result straight into dst); under a traced loop the first
    iteration becomes an ``if`` of the lowered kernel."""
    if not dst.storage.on_chip:
        raise KernelError("'+=' on an HBM tensor is not supported (use nl.atomic_rmw)")
    tile = dst.storage.tile
    if tile is not None and tile.zero is not None and alu == "add" and isinstance(value, Tensor):
        cond = first_touch(dst)
        if not isinstance(cond, Sym):
            if cond:
                _first_write(dst, value, pending, source)
            else:
                _accumulate_into(dst, alu, value, pending, source)
            return
        tracer = current()
        record = If(cond, source)
        tracer.append(record)
        tracer.bodies.append(record.then)
        _first_write(dst, value, pending, source)
        tracer.bodies.pop()
        tracer.bodies.append(record.orelse)
        _accumulate_into(dst, alu, value, pending, source)
        tracer.bodies.pop()
        return
    _accumulate_into(dst, alu, value, pending, source)


def _first_write(dst, value, pending, source):
    if pending is not None and _same_shape(pending.tensor, dst):
        dst.storage.tile.zero.claimed = True
        pending.emit(dst)
        return
    if pending is not None:
        _materialize_pending(pending)
    _copy_or_scalar(dst, value, source)


def _accumulate_into(dst, alu, value, pending, source):
    if pending is not None:
        _materialize_pending(pending)
    _binary_into(dst, alu, dst, value, source,
                 accumulating=dst.storage.tile is not None and dst.storage.tile.zero is not None)


def _materialize_pending(pending):
    """Emits a pending result into its implicit tile (again, in each branch of an ``if``)."""
    if pending.tensor.storage.tile is None:
        create_implicit_tile(current(), pending.tensor.storage, pending.source)
    pending.emit(pending.tensor)


def _copy_or_scalar(dst, value, source):
    value = operand(value)
    if value.partitions == dst.partitions and value.free_elements() == 1 and dst.free_elements() > 1:
        emit_tensor_copy(dst, broadcast_free_view(value, dst.shape), None, source)
    else:
        emit("tensor_copy", compiler("copy_engine", "vector"),
             {"dst": dst, "src": broadcast_to_match(value, dst)}, {}, source, accumulating=("dst",))


def _binary_into(dst, alu, a, b, source, accumulating=False):
    """dst = a (alu) b for a tile a and a tile or number b (classic broadcasting rules)."""
    alu = alu_name(alu)
    acc = ("dst", "in0", "src") if accumulating else ()
    if isinstance(b, Tensor):
        b = operand(b)
        if b.shape != a.shape and b.partitions == a.partitions and b.free_elements() == 1:
            v, n = scalar_or_tensor(b, "operand", a.partitions)
            return emit("tensor_scalar", "vector", {"dst": dst, "src": a, "operand0": v},
                        {"op0": alu}, source, accumulating=acc)
        if b.partitions == 1 and a.partitions > 1:
            b = broadcast_partitions(b, a.partitions, source)
        b = broadcast_to_match(b, a)
        check_match(a, b, f"'{alu}'")
        engine = tensor_tensor_engine(alu, a, b, dst)
        return emit("tensor_tensor", engine, {"dst": dst, "in0": a, "in1": b}, {"alu": alu},
                    source, accumulating=acc)
    return emit("tensor_scalar", "vector", {"dst": dst, "src": a},
                {"op0": alu, "operand0": _scalar_attr(b)}, source, accumulating=acc)


def broadcast_partitions(row, partitions, source):
    """A [1, F] tile broadcast to [partitions, F]: a matmul with a ones row (TensorE), then a
    copy back to SBUF, per PSUM bank of F."""
    tracer = current()
    free = row.free_elements()
    ones = ones_row(partitions, row.dtype if row.dtype.itemsize <= 2 else dtypes.float32)
    out = new_result((partitions,) + row.shape[1:], row.dtype, SBUF)
    create_implicit_tile(tracer, out.storage, source)
    bank = tracer.target["psum_fmax"]
    flat_row = _flatten_free(row)
    flat_out = _flatten_free(out)
    for start in range(0, free, bank):
        width = min(bank, free - start)
        psum = new_result((partitions, width), dtypes.float32, PSUM)
        create_implicit_tile(tracer, psum.storage, source)
        emit_matmul(psum, ones, index_view(flat_row, (slice(None), slice(start, start + width))),
                    False, False, None, source)
        emit_tensor_copy(index_view(flat_out, (slice(None), slice(start, start + width))), psum,
                         None, source)
    return out


def _flatten_free(view):
    if view.ndim == 2:
        return view
    from .tensor import reshape_view

    return reshape_view(view, (view.partitions, view.free_elements()))


def ones_row(partitions, dtype):
    """A [1, partitions] tile of ones, created once per kernel (a compiler constant)."""
    tracer = current()
    key = ("ones", partitions, dtype.name)
    if key not in tracer.constants:
        saved = tracer.bodies, tracer.frames
        tracer.bodies, tracer.frames = [tracer.program], []
        view = new_result((1, partitions), dtype, SBUF)
        source = tracer.location(3)
        tile = create_implicit_tile(tracer, view.storage, source)
        tile.frames = ()
        record_index = len(tracer.program)
        emit_memset(view, 1.0, None, source)
        # constants live from the start: move the memset to the front of the program
        tracer.program.insert(0, tracer.program.pop(record_index))
        tile.created_seq = 0
        tracer.bodies, tracer.frames = saved
        tracer.constants[key] = view
    return tracer.constants[key]


def elementwise_operator(name, a, b, reverse):
    """Python operators on classic tiles: ``a + b`` is ``nl.add(a, b)``."""
    from . import language_core

    if reverse:
        return language_core.binary(name, b, a)
    return language_core.binary(name, a, b)


def classic_copy(x, dtype=None):
    from . import language_core

    return language_core.copy(x, dtype=dtype)


def broadcast_to(x, shape):
    from . import language_core

    return language_core.broadcast_to(x, shape)
