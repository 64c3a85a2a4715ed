"""Tensors as a kernel sees them: storage in HBM, SBUF or PSUM, and strided views of it.

``Storage`` is one allocation: a kernel argument or output in HBM, or one logical on-chip tile
(every ``nl.ndarray`` call and every implicit result of a classic call is a new logical tile; the
allocator decides later which physical buffer holds it, alloc.py). ``Tensor`` is a view: an
element offset plus one (stride, size) pair per axis, in elements of the storage's dtype. On chip
the partition axis is separate (first partition + count); offsets and strides then count
elements inside one partition, laid out as the storage's non-partition dimensions, row-major.

Views are made by indexing (integers, slices, ``nl.ds``, ``...``, ``None``; classic index
expressions from ``nl.arange``/``nl.mgrid``), ``reshape``, ``ap`` and the other view methods.
A view that was made by basic indexing alone remembers the index per storage dimension so the
lowered kernel can show it as a slice (``t[k % 2, 0:128, 0:512]``); any other view is written as
an explicit access pattern (``t.ap(0:128, 4*k, [1, 512])``).
"""

from __future__ import annotations

from . import dtypes
from .errors import KernelError
from .expr import NotAffine, Sym, constant, is_symbolic, sym_and, sym_max, sym_min

HBM, SBUF, PSUM = "hbm", "sbuf", "psum"


class Storage:
    """One allocation. On chip it is a logical tile (alloc.py gives it a physical place)."""

    __slots__ = (
        "memory",
        "dtype",
        "shape",
        "partition_dim",
        "name",
        "hbm_kind",
        "tile",
        "__weakref__",
    )

    def __init__(self, memory, dtype, shape, partition_dim=0, name="", hbm_kind=None, tile=None):
        self.memory = memory
        self.dtype = dtype
        self.shape = tuple(shape)
        self.partition_dim = partition_dim
        self.name = name
        self.hbm_kind = hbm_kind  # "input", "shared", "private", "constant" (HBM only)
        self.tile = tile  # trace.LogicalTile (on chip only)

    @property
    def on_chip(self):
        return self.memory != HBM

    def free_shape(self):
        """On chip: the dimensions other than the partition dimension, in layout order."""
        return tuple(s for d, s in enumerate(self.shape) if d != self.partition_dim)

    def layout_strides(self):
        """Element stride of every storage dimension (on chip: None for the partition dim)."""
        dims = [d for d in range(len(self.shape)) if not (self.on_chip and d == self.partition_dim)]
        strides = [None] * len(self.shape)
        step = 1
        for d in reversed(dims):
            strides[d] = step
            step *= self.shape[d]
        return strides

    def elements_per_partition(self):
        n = 1
        for s in self.free_shape() if self.on_chip else self.shape:
            n *= s
        return n


class IndexExpr:
    """A classic index expression: const + sum of coeff * iota, broadcast over ``shape``.

    Each ``nl.arange``/``nl.mgrid`` axis is an iota with an extent and an axis position counted
    from the right of its shape (NumPy broadcasting aligns shapes on the right).
    """

    __slots__ = ("const", "terms", "shape")

    def __init__(self, const, terms, shape):
        self.const = const  # int or Sym
        self.terms = terms  # dict Iota -> int coefficient
        self.shape = tuple(shape)

    @staticmethod
    def of_iota(iota, shape):
        return IndexExpr(0, {iota: 1}, shape)

    def _combine(self, other, sign):
        if isinstance(other, IndexExpr):
            terms = dict(self.terms)
            for iota, c in other.terms.items():
                terms[iota] = terms.get(iota, 0) + sign * c
            return IndexExpr(
                self.const + sign * other.const,
                {k: v for k, v in terms.items() if v},
                broadcast_shapes(self.shape, other.shape),
            )
        if isinstance(other, (int, Sym)) and not isinstance(other, bool):
            return IndexExpr(self.const + sign * other, dict(self.terms), self.shape)
        return NotImplemented

    def __add__(self, other):
        return self._combine(other, 1)

    __radd__ = __add__

    def __sub__(self, other):
        return self._combine(other, -1)

    def __rsub__(self, other):
        neg = IndexExpr(-self.const, {k: -v for k, v in self.terms.items()}, self.shape)
        return neg._combine(other, 1)

    def __neg__(self):
        return IndexExpr(-self.const, {k: -v for k, v in self.terms.items()}, self.shape)

    def __mul__(self, other):
        if isinstance(other, int) and not isinstance(other, bool):
            return IndexExpr(
                self.const * other, {k: v * other for k, v in self.terms.items() if v * other},
                self.shape,
            )
        if isinstance(other, Sym):
            raise KernelError("an nl.arange index multiplied by a loop index is not affine")
        return NotImplemented

    __rmul__ = __mul__

    def __floordiv__(self, other):
        raise KernelError("'//' of an nl.arange index is not supported (index expressions are affine)")

    __mod__ = __floordiv__

    def _cmp(self, op, other):
        diff = self - other
        return IndexPred([(diff, op)])

    def __lt__(self, other):
        return self._cmp("<", other)

    def __le__(self, other):
        return self._cmp("<=", other)

    def __gt__(self, other):
        return self._cmp(">", other)

    def __ge__(self, other):
        return self._cmp(">=", other)

    def __eq__(self, other):
        return self._cmp("==", other)

    def __ne__(self, other):
        return self._cmp("!=", other)

    __hash__ = object.__hash__

    def __bool__(self):
        raise KernelError("an nl.arange index expression has no truth value (use it in mask=)")

    def __getitem__(self, idx):
        """``nl.arange(n)[:, None]``: place the iota axes in a larger broadcast shape."""
        if not isinstance(idx, tuple):
            idx = (idx,)
        new_shape = []
        source_axes = []
        src = 0
        for item in idx:
            if item is None:
                new_shape.append(1)
                source_axes.append(None)
            elif isinstance(item, slice) and item == slice(None):
                new_shape.append(self.shape[src])
                source_axes.append(src)
                src += 1
            else:
                raise KernelError("an nl.arange index can only be reshaped with ':' and None")
        if src != len(self.shape):
            raise KernelError("an nl.arange index reshape must keep every axis")
        remap = {}
        for new_pos, old in enumerate(source_axes):
            if old is not None:
                remap[old - len(self.shape)] = new_pos - len(new_shape)
        terms = {}
        for iota, c in self.terms.items():
            terms[iota.moved(remap[iota.axis])] = c
        return IndexExpr(self.const, terms, new_shape)

    def iotas_by_axis(self):
        """{axis from the right: (iota, coeff)}; an axis carries at most one iota."""
        out = {}
        for iota, c in self.terms.items():
            if iota.axis in out:
                raise KernelError("two nl.arange indices on one broadcast axis of one index")
            out[iota.axis] = (iota, c)
        return out


class Iota:
    """One axis of ``nl.arange``/``nl.mgrid``: values start .. start+size-1 on ``axis``."""

    __slots__ = ("ident", "start", "size", "axis")

    _counter = [0]

    def __init__(self, start, size, axis, ident=None):
        if ident is None:
            Iota._counter[0] += 1
            ident = Iota._counter[0]
        self.ident = ident
        self.start = start
        self.size = size
        self.axis = axis  # negative: position from the right of the broadcast shape

    def moved(self, axis):
        return Iota(self.start, self.size, axis, self.ident)

    def __eq__(self, other):
        return isinstance(other, Iota) and other.ident == self.ident

    def __hash__(self):
        return hash(self.ident)


class IndexPred:
    """A mask: a conjunction of ``index_expr OP 0`` constraints (``&`` combines)."""

    __slots__ = ("constraints",)

    def __init__(self, constraints):
        self.constraints = constraints

    def __and__(self, other):
        if isinstance(other, IndexPred):
            return IndexPred(self.constraints + other.constraints)
        if other is True or other == 1:
            return self
        return NotImplemented

    __rand__ = __and__

    def __bool__(self):
        raise KernelError("a mask has no truth value in Python; combine masks with '&'")

    def ranges(self):
        """{axis from the right: (lo, hi)} of valid index positions (0-based along the axis).

        Each constraint must involve one iota (a rectangular mask)."""
        out = {}
        for expr, op in self.constraints:
            axes = expr.iotas_by_axis()
            if len(axes) != 1:
                raise KernelError(
                    "mask= must compare one nl.arange index at a time (rectangular masks); "
                    "use nisa.affine_select for triangular masks"
                )
            (axis, (iota, c)), = axes.items()
            # c * (iota.start + j) + const OP 0 for j in [0, size)
            base = expr.const + c * iota.start
            lo, hi = out.get(axis, (0, iota.size))
            if op in ("<", "<="):
                bound = -base if op == "<" else -base + 1  # c*j < bound
                if c > 0:
                    hi = sym_min(hi, _ceil_div(bound, c))
                else:
                    lo = sym_max(lo, _floor_div(bound, c) + 1)
            elif op in (">", ">="):
                bound = -base if op == ">" else -base - 1  # c*j > bound
                if c > 0:
                    lo = sym_max(lo, _floor_div(bound, c) + 1)
                else:
                    hi = sym_min(hi, _ceil_div(bound, c))
            elif op == "==":
                raise KernelError("mask= with '==' is not supported; use a slice")
            else:
                raise KernelError(f"mask= operator '{op}' is not supported")
            out[axis] = (sym_max(lo, 0), sym_min(hi, iota.size))
        return out


def _floor_div(a, b):
    return a // b


def _ceil_div(a, b):
    return -((-a) // b)


def broadcast_shapes(a, b):
    out = []
    for i in range(max(len(a), len(b))):
        x = a[len(a) - 1 - i] if i < len(a) else 1
        y = b[len(b) - 1 - i] if i < len(b) else 1
        if x != y and 1 not in (x, y):
            raise KernelError(f"index shapes {tuple(a)} and {tuple(b)} do not broadcast")
        out.append(max(x, y))
    return tuple(reversed(out))


class DynSlice:
    """``nl.ds(start, size)``: the slice start:start+size."""

    __slots__ = ("start", "size")

    def __init__(self, start, size):
        self.start = start
        self.size = size


# ------------------------------------------------------------------------------------------------


class Tensor:
    """A view of a Storage. What NKI calls a tensor or a tile."""

    __slots__ = ("storage", "dtype", "axes", "offset", "pstart", "paxis", "index_form", "checks",
                 "__weakref__")

    # axes: list of [stride, size] per view axis; on chip the partition axis (paxis) has stride
    # None and its size is the partition count. offset: element offset (per partition on chip).

    def __init__(self, storage, axes, offset=0, pstart=0, paxis=None, index_form=None):
        self.storage = storage
        self.dtype = storage.dtype
        self.axes = axes
        self.offset = offset
        self.pstart = pstart
        self.paxis = paxis
        self.index_form = index_form
        # Index bounds that only a mask can satisfy (classic ``x[rows, i_f]`` with rows past
        # the end and ``mask=(rows < R)``): checked when the view becomes an operand.
        self.checks = None

    @staticmethod
    def whole(storage):
        strides = storage.layout_strides()
        axes = [[strides[d], s] for d, s in enumerate(storage.shape)]
        paxis = storage.partition_dim if storage.on_chip else None
        form = [("s", 0, s, 1) for s in storage.shape]
        return Tensor(storage, axes, 0, 0, paxis, form)

    # --- attributes NKI exposes -----------------------------------------------------------------
    @property
    def shape(self):
        return tuple([a[1] for a in self.axes])

    @property
    def ndim(self):
        return len(self.axes)

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def size(self):
        n = 1
        for _, s in self.axes:
            n *= s
        return n

    @property
    def buffer(self):
        from . import buffers

        return buffers.buffer_of(self.storage)

    @property
    def name(self):
        return self.storage.name

    @property
    def on_chip(self):
        return self.storage.on_chip

    @property
    def memory(self):
        return self.storage.memory

    def __len__(self):
        return self.axes[0][1]

    def __repr__(self):
        return f"<{self.storage.memory} tensor {self.storage.name} {self.dtype} {list(self.shape)}>"

    # --- helpers --------------------------------------------------------------------------------
    def free_axes(self):
        """(stride, size) of every axis but the partition axis, in order."""
        return [(st, sz) for i, (st, sz) in enumerate(self.axes) if i != self.paxis]

    @property
    def partitions(self):
        return self.axes[self.paxis][1] if self.paxis is not None else 1

    def free_elements(self):
        n = 1
        for _, s in self.free_axes():
            n *= s
        return n

    def is_tile(self):
        return self.storage.on_chip and self.paxis == 0

    def _clone(self, axes, offset, pstart, paxis, index_form):
        return Tensor(self.storage, axes, offset, pstart, paxis, index_form)

    # --- indexing -------------------------------------------------------------------------------
    def __getitem__(self, idx):
        from . import trace

        trace.current().check_pending_restart()
        return index_view(self, idx)

    def __setitem__(self, idx, value):
        from . import ops

        ops.assign(self, idx, value)

    def __iter__(self):
        raise KernelError("iterating over a tensor is not supported; index it")

    # --- view methods ----------------------------------------------------------------------------
    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return reshape_view(self, tuple(shape))

    def view(self, dtype):
        dtype = dtypes.dtype_of(dtype)
        if dtype is self.dtype:
            return self
        raise KernelError(f"reinterpreting a {self.dtype} tensor as {dtype} is not supported")

    reinterpret_cast = view
    bitcast = view

    def astype(self, dtype):
        from . import ops

        return ops.classic_copy(self, dtype=dtype)

    def expand_dims(self, axis):
        return expand_dims_view(self, axis)

    expand_dim = expand_dims

    def broadcast_to(self, shape):
        from . import ops

        return ops.broadcast_to(self, tuple(shape))

    def broadcast(self, dim, size):
        shape = list(self.shape)
        shape[dim] = size
        return broadcast_free_view(self, tuple(shape))

    def assert_shape(self, shape):
        if tuple(shape) != self.shape:
            raise KernelError(f"shape {self.shape} is not the asserted {tuple(shape)}")
        return self

    def ap(self, pattern=None, offset=None, scalar_offset=None, vector_offset=None,
           indirect_dim=0, dtype=None):
        if scalar_offset is not None or vector_offset is not None:
            raise KernelError("indirect access patterns (scalar_offset/vector_offset) are not supported")
        if dtype is not None and dtypes.dtype_of(dtype) is not self.dtype:
            raise KernelError("ap(dtype=...) reinterpretation is not supported")
        return ap_view(self, pattern, offset)

    def permute(self, dims):
        dims = list(dims)
        if sorted(dims) != list(range(self.ndim)):
            raise KernelError(f"permute{tuple(dims)} is not a permutation of {self.ndim} axes")
        if self.paxis is not None and dims[0] != self.paxis:
            raise KernelError("permute must keep the partition dimension first")
        axes = [list(self.axes[d]) for d in dims]
        paxis = None if self.paxis is None else dims.index(self.paxis)
        return self._clone(axes, self.offset, self.pstart, paxis, None)

    # --- arithmetic (classic: Python operators map to nl element-wise ops) -----------------------
    def _binary(self, name, other, reverse=False):
        from . import ops

        return ops.elementwise_operator(name, self, other, reverse)

    def __add__(self, o):
        return self._binary("add", o)

    def __radd__(self, o):
        return self._binary("add", o, True)

    def __sub__(self, o):
        return self._binary("subtract", o)

    def __rsub__(self, o):
        return self._binary("subtract", o, True)

    def __mul__(self, o):
        return self._binary("multiply", o)

    def __rmul__(self, o):
        return self._binary("multiply", o, True)

    def __truediv__(self, o):
        return self._binary("divide", o)

    def __rtruediv__(self, o):
        return self._binary("divide", o, True)

    def __pow__(self, o):
        return self._binary("power", o)

    def __lshift__(self, o):
        return self._binary("left_shift", o)

    def __rshift__(self, o):
        return self._binary("right_shift", o)

    def __and__(self, o):
        return self._binary("bitwise_and", o)

    def __or__(self, o):
        return self._binary("bitwise_or", o)

    def __xor__(self, o):
        return self._binary("bitwise_xor", o)

    def __lt__(self, o):
        return self._binary("less", o)

    def __le__(self, o):
        return self._binary("less_equal", o)

    def __gt__(self, o):
        return self._binary("greater", o)

    def __ge__(self, o):
        return self._binary("greater_equal", o)

    def __neg__(self):
        from . import ops

        return ops.elementwise_operator("multiply", self, -1.0, False)

    def __iadd__(self, other):
        from . import ops

        return ops.augmented(self, "add", other)

    def __isub__(self, other):
        from . import ops

        return ops.augmented(self, "subtract", other)

    def __imul__(self, other):
        from . import ops

        return ops.augmented(self, "multiply", other)

    def __itruediv__(self, other):
        from . import ops

        return ops.augmented(self, "divide", other)

    __hash__ = object.__hash__

    def __bool__(self):
        raise KernelError("a tensor has no truth value in Python")


# ------------------------------------------------------------------------------------------------
# View construction


def _normalize_index(idx, ndim):
    if not isinstance(idx, tuple):
        idx = (idx,)
    out = []
    ellipsis = [i for i, x in enumerate(idx) if x is Ellipsis]
    if len(ellipsis) > 1:
        raise KernelError("an index may contain at most one '...'")
    consumed = sum(1 for x in idx if x is not None and x is not Ellipsis)
    for x in idx:
        if x is Ellipsis:
            out.extend([slice(None)] * (ndim - consumed))
        else:
            out.append(x)
    real = sum(1 for x in out if x is not None)
    if real > ndim:
        raise KernelError(f"too many indices ({real}) for a tensor with {ndim} dimensions")
    out.extend([slice(None)] * (ndim - real))
    return out


def _as_index_value(x):
    """int, Sym, IndexExpr, slice, DynSlice or None; anything else is an error."""
    if x is None or isinstance(x, (slice, DynSlice, IndexExpr, Sym)):
        return x
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, int):
        return x
    if isinstance(x, Tensor):
        return x  # an indirect index (index_view checks where it is allowed)
    index = getattr(x, "__index__", None)
    if index is not None:
        return int(index())
    if isinstance(x, (list, tuple)):
        raise KernelError("indexing with a list is not supported; use slices or nl.arange")
    raise KernelError(f"unsupported index {type(x).__name__} {x!r}")


def _check_bounds(value, size, what):
    """value (int or Sym) must lie in [0, size) for every iteration."""
    if isinstance(value, Sym):
        lo, hi = value.bounds()
    else:
        lo = hi = value
    if lo < 0 or hi >= size:
        shown = value.render() if isinstance(value, Sym) else str(value)
        extra = f" (takes values {lo}..{hi})" if isinstance(value, Sym) else ""
        raise KernelError(f"{what} index {shown}{extra} is out of bounds for size {size}")


def _slice_parts(item, size):
    """(start, count, step) of a slice or DynSlice over an axis of ``size``; count concrete."""
    if isinstance(item, DynSlice):
        start, count, step = item.start, item.size, 1
        count = constant(count, "the size of nl.ds()")
        if count <= 0:
            raise KernelError(f"nl.ds size must be positive, found {count}")
        return start, count, step
    step = 1 if item.step is None else item.step
    step = constant(step, "a slice step")
    if step == 0:
        raise KernelError("slice step cannot be zero")
    if step < 0:
        raise KernelError("negative slice steps are not supported")
    start = 0 if item.start is None else item.start
    stop = size if item.stop is None else item.stop
    if isinstance(start, int) and start < 0:
        start += size
    if isinstance(stop, int) and stop < 0:
        stop += size
    if isinstance(start, int) and isinstance(stop, int):
        start = max(0, min(start, size))
        stop = max(0, min(stop, size))
    span = stop - start
    if isinstance(span, Sym):
        raise NotAffine(span.variables(), "a slice whose size depends on a loop index")
    count = max(0, (span + step - 1) // step)
    if count == 0:
        raise KernelError(f"empty slice {_text(start)}:{_text(stop)} of an axis of size {size}")
    return start, count, step


def _text(v):
    return v.render() if isinstance(v, Sym) else str(v)


def index_view(view, idx):
    items = [_as_index_value(x) for x in _normalize_index(idx, view.ndim)]
    if any(isinstance(x, Tensor) for x in items):
        items = _indirect_items(view, items)
    if any(isinstance(x, IndexExpr) for x in items):
        return _advanced_view(view, items)
    axes = []
    offset = view.offset
    pstart = view.pstart
    paxis = None
    form = list(view.index_form) if view.index_form is not None else None
    # map from view axis to storage dim for the index form
    form_dims = _form_axis_dims(view) if form is not None else None
    src_axis = 0
    for item in items:
        if item is None:
            axes.append([0, 1])
            form = None
            continue
        stride, size = view.axes[src_axis]
        is_p = src_axis == view.paxis
        dim = form_dims[src_axis] if form is not None else None
        if isinstance(item, (int, Sym)):
            if isinstance(item, int) and item < 0:
                item += size
            _check_bounds(item, size, f"axis {src_axis}")
            if is_p:
                # on chip an integer partition index keeps a one-partition axis
                pstart = pstart + item
                paxis = len(axes)
                axes.append([None, 1])
                if form is not None:
                    _, fstart, _, fstep = form[dim]
                    form[dim] = ("s", fstart + fstep * item, 1, 1)
            else:
                offset = offset + item * stride
                if form is not None:
                    kind, fstart, _, fstep = form[dim]
                    form[dim] = ("i", fstart + fstep * item, None, None)
        else:
            start, count, step = _slice_parts(item, size)
            _check_bounds(start, size, f"axis {src_axis} slice start")
            last = start + (count - 1) * step
            _check_bounds(last, size, f"axis {src_axis} slice end")
            if is_p:
                if step != 1:
                    raise KernelError("the partition axis cannot be indexed with a step")
                pstart = pstart + start
                paxis = len(axes)
                axes.append([None, count])
            else:
                offset = offset + start * stride
                axes.append([stride * step, count])
            if form is not None:
                _, fstart, _, fstep = form[dim]
                form[dim] = ("s", fstart + fstep * start, count, fstep * step)
        src_axis += 1
    if view.storage.on_chip and paxis is None:
        raise KernelError("on-chip tensors keep their partition axis; index it with a slice")
    return Tensor(view.storage, axes, offset, pstart, paxis, form)


def _indirect_items(view, items):
    """``data[idx_tile[i_p, 0], i_f]``: rows of an HBM tensor chosen by an SBUF tile of
    indices (a gather or scatter DMA). The addresses depend on data the timing model does not
    have; the DMA is timed as one over as many consecutive rows (index i -> row i)."""
    if view.storage.on_chip:
        raise KernelError("an on-chip tensor cannot be indexed by a tensor (dynamic offsets are "
                          "not supported)")
    out = []
    for item in items:
        if isinstance(item, Tensor):
            if not item.storage.on_chip:
                raise KernelError("indirect indexes must be an SBUF tile of indices")
            sizes = item.shape
            nontrivial = [i for i, size in enumerate(sizes) if size != 1]
            if len(nontrivial) > 1:
                raise KernelError(f"an index tile of shape {list(sizes)} selects more than one "
                                  "axis; use a [P, 1] tile")
            position = nontrivial[0] if nontrivial else len(sizes) - 1
            iota = Iota(0, sizes[position], position - len(sizes))
            item = IndexExpr.of_iota(iota, sizes)
        out.append(item)
    return out


def _form_axis_dims(view):
    """For a view with an index form: the storage dimension of each view axis."""
    dims = [d for d, f in enumerate(view.index_form) if f[0] == "s"]
    if len(dims) != len(view.axes):
        return None
    return dims


def _advanced_view(view, items):
    """Classic advanced indexing with nl.arange/nl.mgrid expressions (NumPy semantics)."""
    adv_positions = [i for i, x in enumerate(items) if isinstance(x, IndexExpr)]
    deferred = []
    shapes = [items[i].shape for i in adv_positions]
    bshape = ()
    for s in shapes:
        bshape = broadcast_shapes(bshape, s)
    adjacent = adv_positions == list(range(adv_positions[0], adv_positions[-1] + 1))
    offset = view.offset
    pstart = view.pstart
    # broadcast axes (from the right) -> accumulated stride; partition mapping
    b_strides = {a: 0 for a in range(-len(bshape), 0)}
    b_partition_axis = None
    slice_axes = []  # (position in items, [stride, size]) or partition
    for pos, item in enumerate(items):
        stride, size = view.axes[pos]
        is_p = pos == view.paxis
        if isinstance(item, IndexExpr):
            lo, hi = _index_expr_bounds(item)
            if lo < 0 or hi >= size:
                deferred.append((item, pos, size))
            for axis, (iota, c) in item.iotas_by_axis().items():
                full_axis = axis  # already relative to the right of its own shape
                if is_p:
                    if c != 1 or b_partition_axis not in (None, full_axis):
                        raise KernelError("the partition axis must be indexed by one nl.arange with step 1")
                    b_partition_axis = full_axis
                else:
                    b_strides[full_axis] += c * stride
            base = item.const + sum(c * iota.start for iota, c in item.terms.items())
            if is_p:
                pstart = pstart + base
            else:
                offset = offset + base * stride
        elif isinstance(item, (int, Sym)):
            _check_bounds(item, size, f"axis {pos}")
            if is_p:
                raise KernelError("index the partition axis with nl.arange, not an integer, here")
            offset = offset + item * stride
        elif item is None:
            raise KernelError("None (new axis) cannot be mixed with nl.arange indices")
        else:
            start, count, step = _slice_parts(item, size)
            if is_p:
                if step != 1:
                    raise KernelError("the partition axis cannot be indexed with a step")
                pstart = pstart + start
                slice_axes.append((pos, None, count))
            else:
                offset = offset + start * stride
                slice_axes.append((pos, stride * step, count))
    b_axes = []
    paxis = None
    for i, size in enumerate(bshape):
        axis = i - len(bshape)
        if axis == b_partition_axis:
            paxis = len(b_axes)
            b_axes.append([None, size])
        else:
            b_axes.append([b_strides[axis], size])
    s_axes = []
    s_paxis = None
    for pos, stride, count in slice_axes:
        if stride is None:
            s_paxis = len(s_axes)
            s_axes.append([None, count])
        else:
            s_axes.append([stride, count])
    first_slice_before = [p for p, _, _ in slice_axes if p < adv_positions[0]]
    if adjacent:
        n_before = len(first_slice_before)
        axes = s_axes[:n_before] + b_axes + s_axes[n_before:]
        if paxis is not None:
            paxis += n_before
        elif s_paxis is not None:
            paxis = s_paxis if s_paxis < n_before else s_paxis + len(b_axes)
    else:
        axes = b_axes + s_axes
        if paxis is None and s_paxis is not None:
            paxis = s_paxis + len(b_axes)
    if view.storage.on_chip and paxis is None:
        raise KernelError("on-chip tensors keep their partition axis; index it with nl.arange or ':'")
    result = Tensor(view.storage, axes, offset, pstart, paxis, _slice_form(view, items, bshape))
    if deferred:
        first = (len([p for p, _, _ in slice_axes if p < adv_positions[0]]) if adjacent else 0)
        checks = []
        for item, pos, size in deferred:
            coeffs = {first + len(bshape) + axis: c
                      for axis, (iota, c) in item.iotas_by_axis().items()}
            base = item.const + sum(c * iota.start for iota, c in item.terms.items())
            checks.append((base, coeffs, size, pos))
        result.checks = checks
    return result


def check_bounds(view):
    """Raises for an index that leaves its dimension (see Tensor.checks)."""
    for base, coeffs, size, dim in view.checks or ():
        lo = hi = base
        if isinstance(base, Sym):
            lo, hi = base.bounds()
        for axis, c in coeffs.items():
            span = c * (view.axes[axis][1] - 1)
            lo, hi = lo + min(0, span), hi + max(0, span)
        if lo < 0 or hi >= size:
            raise KernelError(f"index expression on axis {dim} takes values {lo}..{hi}, out of "
                              f"bounds for size {size} (a mask= can limit it)")


def _slice_form(view, items, bshape):
    """The index form of an advanced index that is a plain slice in disguise: every index is a
    scalar or one nl.arange with a positive step, on increasing broadcast axes covering the
    whole broadcast shape (``t[k, i.p, i.x]`` with ``i = nl.mgrid[0:128, 0:512]``)."""
    if view.index_form is None or _form_axis_dims(view) is None:
        return None
    if any(isinstance(x, slice) or isinstance(x, DynSlice) for x in items):
        return None
    dims = _form_axis_dims(view)
    form = list(view.index_form)
    last_axis = None
    used_axes = 0
    for pos, item in enumerate(items):
        dim = dims[pos]
        _, fstart, _, fstep = form[dim]
        if isinstance(item, (int, Sym)):
            form[dim] = ("i", fstart + fstep * item, None, None)
            continue
        terms = item.iotas_by_axis()
        if len(terms) != 1:
            return None
        (axis, (iota, c)), = terms.items()
        if c <= 0 or (last_axis is not None and axis <= last_axis):
            return None
        last_axis = axis
        used_axes += 1
        start = item.const + c * iota.start
        form[dim] = ("s", fstart + fstep * start, iota.size, fstep * c)
    if used_axes != len(bshape):
        return None
    return form


def _index_expr_bounds(item):
    lo = hi = item.const
    if isinstance(lo, Sym):
        lo, hi = lo.bounds()
    for iota, c in item.terms.items():
        a, b = c * iota.start, c * (iota.start + iota.size - 1)
        lo += min(a, b)
        hi += max(a, b)
    return lo, hi


def restrict_axis(view, axis, lo, hi):
    """The view limited to positions [lo, hi) of ``axis`` (a mask or a clipped tile)."""
    lo = constant(lo, "a mask bound") if not isinstance(lo, int) else lo
    hi = constant(hi, "a mask bound") if not isinstance(hi, int) else hi
    axes = [list(a) for a in view.axes]
    stride, size = axes[axis]
    count = max(0, min(hi, size) - max(lo, 0))
    if count == 0:
        return None
    offset, pstart = view.offset, view.pstart
    if axis == view.paxis:
        pstart = pstart + lo
    else:
        offset = offset + lo * stride
    axes[axis] = [stride, count]
    form = None
    dims = _form_axis_dims(view) if view.index_form is not None else None
    if dims is not None:
        form = list(view.index_form)
        _, fstart, _, fstep = form[dims[axis]]
        form[dims[axis]] = ("s", fstart + fstep * lo, count, fstep)
    result = Tensor(view.storage, axes, offset, pstart, view.paxis, form)
    if view.checks:
        result.checks = [(base + coeffs.get(axis, 0) * lo, coeffs, size, dim)
                         for base, coeffs, size, dim in view.checks]
    return result


def is_contiguous(view):
    """True when the free axes (all axes for HBM) are row-major without gaps."""
    expect = 1
    for stride, size in reversed(view.free_axes()):
        if size == 1:
            continue
        if stride != expect:
            return False
        expect *= size
    return True


def reshape_view(view, shape):
    shape = tuple(int(constant(s, "a reshape size")) for s in shape)
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        shape = tuple(view.size // known if s == -1 else s for s in shape)
    total = 1
    for s in shape:
        total *= s
    if total != view.size:
        raise KernelError(f"cannot reshape {view.shape} ({view.size} elements) to {shape}")
    if view.storage.on_chip:
        if not shape or shape[0] != view.partitions or view.paxis != 0:
            raise KernelError(
                f"reshape of an on-chip tile must keep the partition dimension first: {view.shape} -> {shape}"
            )
        if not is_contiguous(view):
            raise KernelError("reshape of a non-contiguous on-chip view is not supported")
        axes = [[None, shape[0]]]
        step = 1
        free = []
        for s in reversed(shape[1:]):
            free.append([step, s])
            step *= s
        axes += list(reversed(free))
        return Tensor(view.storage, axes, view.offset, view.pstart, 0, None)
    if not is_contiguous(view):
        raise KernelError("reshape of a non-contiguous HBM view is not supported")
    axes = []
    step = 1
    for s in reversed(shape):
        axes.append([step, s])
        step *= s
    return Tensor(view.storage, list(reversed(axes)), view.offset, 0, None, None)


def expand_dims_view(view, axis):
    axis = axis if axis >= 0 else view.ndim + 1 + axis
    axes = [list(a) for a in view.axes]
    axes.insert(axis, [0, 1])
    paxis = view.paxis
    if paxis is not None and axis <= paxis:
        paxis += 1
    return Tensor(view.storage, axes, view.offset, view.pstart, paxis, None)


def broadcast_free_view(view, shape):
    """A view repeating size-1 free axes (stride 0); the partition axis must not change."""
    shape = tuple(shape)
    if len(shape) != view.ndim:
        if len(shape) < view.ndim:
            raise KernelError(f"cannot broadcast {view.shape} to {shape}")
        view = Tensor(view.storage, [[0, 1]] * (len(shape) - view.ndim) + [list(a) for a in view.axes],
                      view.offset, view.pstart,
                      None if view.paxis is None else view.paxis + len(shape) - view.ndim, None)
    axes = []
    for i, ((stride, size), want) in enumerate(zip(view.axes, shape)):
        if size == want:
            axes.append([stride, size])
        elif size == 1:
            if i == view.paxis:
                raise KernelError("broadcasting along the partition axis needs an instruction")
            axes.append([0, want])
        else:
            raise KernelError(f"cannot broadcast {view.shape} to {shape}")
    return Tensor(view.storage, axes, view.offset, view.pstart, view.paxis, None)


def ap_view(view, pattern, offset):
    """``t.ap([[stride, count], ...], offset=)``: an explicit pattern over t's storage."""
    storage = view.storage
    if pattern is None:
        raise KernelError("ap() needs a pattern [[stride, count], ...]")
    pairs = [(p[0], constant(p[1], "an ap() count")) for p in pattern]
    base = view.offset if offset is None else offset
    if storage.on_chip:
        per_partition = storage.elements_per_partition()
        pstep, pcount = pairs[0]
        axes = [[None, pcount]]
        axes += [[constant(s, "an ap() stride"), c] for s, c in pairs[1:]]
        if offset is None:
            return Tensor(storage, axes, view.offset, view.pstart, 0, None)
        if isinstance(base, Sym):
            raise NotAffine(base.variables(), "an ap() offset on chip that depends on a loop index")
        return Tensor(storage, axes, base % per_partition, base // per_partition, 0, None)
    axes = [[constant(s, "an ap() stride"), c] for s, c in pairs]
    return Tensor(storage, axes, base, 0, None, None)


def elements_range(view):
    """(first, last) element touched per partition (on chip) or overall (HBM), for bounds."""
    lo = hi = view.offset
    if isinstance(lo, Sym):
        lo, hi = lo.bounds()
    for stride, size in view.free_axes():
        span = stride * (size - 1)
        if span >= 0:
            hi += span
        else:
            lo += span
    return lo, hi


__all__ = [
    "HBM",
    "SBUF",
    "PSUM",
    "Storage",
    "Tensor",
    "IndexExpr",
    "IndexPred",
    "Iota",
    "DynSlice",
    "index_view",
    "restrict_axis",
    "reshape_view",
    "broadcast_free_view",
    "is_symbolic",
    "sym_and",
]
