"""The tracer: runs a kernel's Python once and records what the NeuronCore would execute.

State of one trace:
- a tree of records (instructions, loops, conditions) in program order;
- the loops being traced. A classic ``affine_range``/``sequential_range`` loop is traced ONCE
  with a symbolic index (expr.Sym) and becomes a loop of the kernel format; when Python needs a
  concrete value of its index (``if k == 0``, ``bufs[k % 2]``) the trace is restarted with that
  loop unrolled (``Restart``). Plain ``range`` loops and every loop of the new API run normally
  (unrolled);
- the logical on-chip tiles and HBM tensors created so far (allocation happens after the trace,
  alloc.py, because it needs each tile's last use);
- classic results not yet placed (``PendingResult``: ``out[...] = nl.exp(x)`` writes straight
  into ``out``, so a result is emitted only once it is known where it goes).

Records carry the kernel's ``file:line`` and a sequence number; lifetimes of tiles are in
sequence numbers.
"""

from __future__ import annotations

import linecache
import os
import re
import sys

from .errors import KernelError, is_frontend_file
from .expr import NotAffine, Sym, Var

_current = None

# Loops of the kernel format nest at most this deep; deeper traced loops are unrolled.
MAX_LOOP_DEPTH = 8


def current():
    if _current is None:
        raise KernelError("NKI calls are only valid while trnsim traces a kernel")
    return _current


def active():
    return _current


class Restart(Exception):
    """Trace again with ``sites`` unrolled."""

    def __init__(self, sites, reason):
        super().__init__(reason)
        self.sites = sites
        self.reason = reason


# ------------------------------------------------------------------------------------------------
# Records


class Instr:
    __slots__ = ("op", "engine", "operands", "attrs", "source", "seq", "frames", "label")

    def __init__(self, op, engine, operands, attrs, source, seq, frames):
        self.op = op
        self.engine = engine
        self.operands = operands  # slot name -> Tensor (or None)
        self.attrs = attrs  # attribute name -> value (numbers, strings, Sym, bool)
        self.source = source  # (file, line)
        self.seq = seq
        self.frames = frames  # symbolic frames active when emitted (outermost first)
        self.label = None


class Loop:
    __slots__ = ("var", "start", "stop", "step", "body", "source", "seq_begin", "seq_end", "kind")

    def __init__(self, var, start, stop, step, source, seq, kind):
        self.var = var
        self.start = start
        self.stop = stop
        self.step = step
        self.body = []
        self.source = source
        self.seq_begin = seq
        self.seq_end = None
        self.kind = kind


class If:
    __slots__ = ("cond", "then", "orelse", "source")

    def __init__(self, cond, source):
        self.cond = cond
        self.then = []
        self.orelse = []
        self.source = source


class Frame:
    """A loop being traced. Symbolic frames own a Var; unrolled frames only mark iterations."""

    __slots__ = ("symbolic", "var", "loop", "site", "trip", "start", "step", "buffers")

    def __init__(self, symbolic, var, loop, site, trip, start, step, buffers=None):
        self.buffers = buffers  # ncc.multi_buffer(k) on this loop
        self.symbolic = symbolic
        self.var = var
        self.loop = loop
        self.site = site
        self.trip = trip  # int, or None when the bounds are symbolic
        self.start = start
        self.step = step


class LogicalTile:
    """One on-chip allocation request: a Storage, where and when it was created, its uses."""

    __slots__ = (
        "storage",
        "site",
        "created_seq",
        "frames",
        "last_use",
        "extend_to",
        "rotation",
        "rotation_instances",
        "address",
        "mod_alloc",
        "zero",
        "ident",
        "placement",
        "buffers",
    )

    def __init__(self, storage, site, created_seq, frames, ident):
        self.storage = storage
        self.site = site
        self.created_seq = created_seq
        self.frames = frames  # symbolic frames active at creation
        self.last_use = created_seq
        self.extend_to = set()  # Loop records whose end bounds the lifetime
        self.rotation = None  # Sym: flattened iteration index over self.frames, or None
        self.rotation_instances = 1  # iterations of the symbolic nest (None: unknown)
        self.address = None  # explicit (partition, byte offset)
        self.mod_alloc = None  # classic direct allocation (alloc.ModAlloc)
        self.zero = None  # ops.PendingZero while a zero-fill is deferred
        self.ident = ident
        self.placement = None  # set by alloc: (tensor name, slot expression)
        self.buffers = None  # rotation depth requested by ncc.multi_buffer

    def end_seq(self):
        end = self.last_use
        for loop in self.extend_to:
            if loop.seq_end is not None and loop.seq_end > end:
                end = loop.seq_end
        return end


class PendingResult:
    """A classic call's result whose destination is not known yet."""

    __slots__ = ("tensor", "emit", "source", "op", "accumulate", "scalar_op")

    def __init__(self, tensor, emit, source, op, accumulate=None):
        self.scalar_op = None  # (tile, alu, operand, reverse): a one-op tensor_scalar
        self.tensor = tensor  # the Tensor object handed to the kernel
        self.emit = emit  # emit(dst_view) writes the result into dst_view
        self.source = source
        self.op = op
        self.accumulate = accumulate  # accumulate(dst_view): matmuls into PSUM


# ------------------------------------------------------------------------------------------------

_RESERVED = {
    "and", "or", "not", "min", "max", "True", "False", "pid", "ncores", "chip", "local_core",
    "cores_per_chip", "pmax", "gemm_stationary_fmax", "gemm_moving_fmax", "psum_fmax",
    "psum_num_banks", "sbuf_partition_bytes", "p", "f", "f0", "f1", "f2", "f3",
}
_FOR_RE = re.compile(r"^\s*(?:async\s+)?for\s+([A-Za-z_][A-Za-z_0-9]*)\s+in\b")
_ASSIGN_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z_0-9]*)\s*(?::[^=]*)?=(?!=)")


class Tracer:
    def __init__(self, target, unroll_sites, display_path, api):
        self.target = target
        self.unroll_sites = unroll_sites
        self.display_path = display_path
        self.api = api  # "classic" or "new" (the first module the kernel used decides)
        self.program = []
        self.bodies = [self.program]
        self.frames = []  # all active frames, outermost first
        self.seq = 0
        self.tiles = []
        self.hbm = []  # HBM Storages in creation order
        self.pending = {}  # id(Tensor) -> PendingResult, in creation order
        self.fused = {}  # id(Tensor) -> PendingResult folded into a later instruction
        self.dma_queues = {}  # DMA site -> queue
        self.loop_names = set()
        self.restart_reason = None
        self.instructions = 0
        self._code_is_user = {}
        self._display = {}
        self._assigned = {}
        self.uses_classic = False
        self.uses_new = False
        self.constants = {}  # shared constants (e.g. the ones row for partition broadcasts)

    # --- context ---------------------------------------------------------------------------------
    def __enter__(self):
        global _current
        self._previous = _current
        _current = self
        return self

    def __exit__(self, *exc):
        global _current
        _current = self._previous
        return False

    def check_pending_restart(self):
        if self.restart_reason is not None:
            sites, reason = self.restart_reason
            raise Restart(sites, reason)

    # --- source locations -------------------------------------------------------------------------
    def location(self, depth=1):
        """(file, line) of the innermost frame of the kernel's own code."""
        frame = sys._getframe(1)
        cache = self._code_is_user
        while frame is not None:
            code = frame.f_code
            user = cache.get(code)
            if user is None:
                filename = code.co_filename
                user = not filename.startswith("<") and not is_frontend_file(filename)
                cache[code] = user
            if user:
                filename = code.co_filename
                shown = self._display.get(filename)
                if shown is None:
                    shown = self.display_path(filename)
                    self._display[filename] = shown
                return (shown, frame.f_lineno, filename)
            frame = frame.f_back
        return ("<unknown>", 0, "")

    def source_line(self, location):
        return linecache.getline(location[2], location[1]) if len(location) > 2 else ""

    def assigned_name(self, location):
        """The variable a source line assigns to (``acc = nl.zeros(...)`` -> "acc"), or None."""
        key = location[:2]
        name = self._assigned.get(key, False)
        if name is False:
            match = _ASSIGN_RE.match(self.source_line(location))
            name = match.group(1) if match else None
            self._assigned[key] = name
        return name

    # --- records --------------------------------------------------------------------------------
    def next_seq(self):
        self.seq += 1
        return self.seq

    def symbolic_frames(self):
        return tuple(f for f in self.frames if f.symbolic)

    def append(self, record):
        self.bodies[-1].append(record)

    def emit(self, op, engine, operands, attrs, source=None):
        """Appends an instruction; notes every on-chip operand's use."""
        self.check_pending_restart()
        if source is None:
            source = self.location(2)
        seq = self.next_seq()
        frames = self.symbolic_frames()
        instr = Instr(op, engine, operands, attrs, source, seq, frames)
        for view in operands.values():
            if view is not None and view.storage.tile is not None:
                self.note_use(view.storage.tile, seq, frames)
        self.append(instr)
        self.instructions += 1
        return instr

    def note_use(self, tile, seq, frames):
        if seq > tile.last_use:
            tile.last_use = seq
        created = tile.frames
        for i, frame in enumerate(frames):
            if i >= len(created) or created[i] is not frame:
                tile.extend_to.add(frame.loop)
                break

    # --- tiles ------------------------------------------------------------------------------------
    def new_tile(self, storage, source, written_next=False):
        """A logical tile. ``written_next``: it is created by the next instruction (an implicit
        result), which may then reuse the bytes of an input it reads for the last time."""
        frames = self.symbolic_frames()
        created = self.seq + 1 if written_next else self.next_seq()
        tile = LogicalTile(storage, source[:2], created, frames, len(self.tiles))
        storage.tile = tile
        if frames:
            tile.rotation, tile.rotation_instances = flattened_index(frames)
            tile.buffers = next((f.buffers for f in reversed(frames) if f.buffers), None)
        self.tiles.append(tile)
        return tile

    # --- pending classic results -------------------------------------------------------------------
    def add_pending(self, pending):
        self.pending[id(pending.tensor)] = pending

    def take_pending(self, tensor):
        return self.pending.pop(id(tensor), None)

    def flush(self):
        """Emits every pending classic result into its own implicit tile."""
        while self.pending:
            key = next(iter(self.pending))
            pending = self.pending.pop(key)
            materialize(self, pending)

    # --- loops --------------------------------------------------------------------------------------
    def loop_var_name(self, location, base=None):
        if base is None:
            match = _FOR_RE.match(self.source_line(location))
            base = match.group(1) if match else "i"
        if base in _RESERVED or base.startswith("_"):
            base = "i_" + base.strip("_") if base.strip("_") else "i"
        active = {f.var.name for f in self.frames if f.symbolic}
        name = base
        n = 1
        while name in active or name in _RESERVED:
            n += 1
            name = f"{base}{n}"
        self.loop_names.add(name)
        return name


def flattened_index(frames):
    """(Sym, instances): the iteration number of a nest of symbolic loops, outermost first.

    Walks outwards while the inner loops have constant trip counts."""
    index = 0
    multiplier = 1
    instances = 1
    for frame in reversed(frames):
        norm = Sym.var(frame.var) - frame.start
        if frame.step != 1:
            norm = norm // frame.step
        index = index + norm * multiplier
        if frame.trip is None:
            return index, None
        multiplier *= frame.trip
        instances *= frame.trip
    return index, instances


def materialize(tracer, pending):
    """Emits a pending result into the implicit tile its Tensor already views."""
    from . import ops

    tensor = pending.tensor
    ops.create_implicit_tile(tracer, tensor.storage, pending.source)
    pending.emit(tensor)


def loop_trip(start, stop, step):
    span = stop - start
    if isinstance(span, Sym):
        return None
    if step > 0:
        return max(0, (span + step - 1) // step)
    return max(0, (-span + (-step) - 1) // (-step))


def traced_range(kind, args, directives=None):
    """An ``affine_range``/``sequential_range``/``static_range`` of the classic API."""
    tracer = current()
    if len(args) == 1:
        start, stop, step = 0, args[0], 1
    elif len(args) == 2:
        start, stop, step = args[0], args[1], 1
    elif len(args) == 3:
        start, stop, step = args
    else:
        raise KernelError(f"{kind}() takes 1 to 3 arguments, found {len(args)}")
    for value in (start, stop, step):
        if not isinstance(value, (int, Sym)):
            index = getattr(value, "__index__", None)
            if index is None:
                raise KernelError(f"{kind}() bounds must be integers, found {value!r}")
    start = start if isinstance(start, Sym) else int(start)
    stop = stop if isinstance(stop, Sym) else int(stop)
    if isinstance(step, Sym):
        raise NotAffine(step.variables(), f"a {kind}() step that depends on a loop index")
    step = int(step)
    if step == 0:
        raise KernelError(f"{kind}() step cannot be zero")
    location = tracer.location(3)
    site = location[:2]
    buffers = None
    for directive in directives if isinstance(directives, (list, tuple)) else [directives]:
        if getattr(directive, "name", None) == "multi_buffer":
            buffers = int(directive.options["factor"])
    symbolic = (kind in ("affine_range", "sequential_range") and site not in tracer.unroll_sites
                and len(tracer.symbolic_frames()) < MAX_LOOP_DEPTH)
    if symbolic:
        return _symbolic_loop(tracer, kind, start, stop, step, location, buffers)
    return _unrolled_loop(tracer, start, stop, step, location)


def _unrolled_loop(tracer, start, stop, step, location):
    if isinstance(start, Sym) or isinstance(stop, Sym):
        names = (start.variables() if isinstance(start, Sym) else set()) | (
            stop.variables() if isinstance(stop, Sym) else set())
        raise NotAffine(names, "an unrolled loop whose bounds depend on a traced loop index")
    for value in range(start, stop, step):
        tracer.flush()
        tracer.check_pending_restart()
        yield value
    tracer.flush()


def _symbolic_loop(tracer, kind, start, stop, step, location, buffers=None):
    trip = loop_trip(start, stop, step)
    if trip == 0:
        return
    tracer.flush()
    name = tracer.loop_var_name(location)
    var = Var(name, start, stop, step)
    loop = Loop(var, start, stop, step, location[:2], tracer.next_seq(), kind)
    frame = Frame(True, var, loop, location[:2], trip, start, step, buffers)
    var.owner = frame
    tracer.append(loop)
    tracer.bodies.append(loop.body)
    tracer.frames.append(frame)
    finished = False
    try:
        yield Sym.var(var)
        finished = True
    finally:
        if tracer.frames and tracer.frames[-1] is frame:
            if finished:
                tracer.flush()
            tracer.frames.pop()
            tracer.bodies.pop()
            loop.seq_end = tracer.next_seq()
            if not finished and tracer.restart_reason is None and sys.exc_info()[0] is None:
                # `break` out of a loop traced once: trace it unrolled instead.
                tracer.restart_reason = ({frame.site}, "break in a traced loop")


def sites_for(tracer_frames, names):
    """The loop sites whose symbolic variables are among ``names``."""
    return {f.site for f in tracer_frames if f.symbolic and f.var.name in names}


def display_path_factory(base_dir):
    def display(filename):
        try:
            rel = os.path.relpath(filename, base_dir)
        except ValueError:
            return filename
        return filename if rel.startswith("..") else rel

    return display
