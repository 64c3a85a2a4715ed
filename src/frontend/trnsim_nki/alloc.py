"""On-chip allocation after the trace: logical tiles to physical buffers, buffers to addresses.

Rules (docs/nki-frontend.md, "Allocation"):
1. Tiles created at the same call site with the same shape and dtype share a pool of physical
   buffers (one tensor of the lowered kernel, with a leading buffer dimension).
2. A tile created inside a loop traced once (symbolic) rotates through ``B`` buffers
   (``compiler.loop_tile_buffers``): iteration i uses buffer i mod B, so iteration i+1's writes
   overlap iteration i's reads. Tiles of unrolled loops get the same rotation: a new tile takes
   the buffer of the tile B creations earlier at its site when that tile is dead (its last use is
   before the new tile's creation); while older tiles are still live (a Python list of tiles
   used later, the new API's explicit multi-buffering) the pool grows, so buffers the kernel
   keeps are never shared.
3. Pools are placed first-fit by lifetime: two pools whose lifetimes (first creation to last use,
   in program order; a tile used inside a traced loop lives to the loop's end) do not overlap may
   share bytes, except two pools of the same traced loop (its iterations overlap on the
   engines). Alignment: ``sbuf_alignment_bytes``; a PSUM buffer never straddles a 2 KiB bank.
4. When the pools do not fit: first, a result may take the bytes of an input that its
   instruction reads for the last time (in-place updates); then the largest multi-buffered pool
   live where memory ran out goes down to one buffer, one at a time (as a heuristic allocator
   would before spilling); if nothing is left to reduce, the error names the tiles live there.
Tiles with an explicit address (new API ``address=``, classic ``mod_alloc``) are placed there.
"""

from __future__ import annotations

from .errors import KernelError
from .expr import Sym
from .tensor import PSUM, SBUF


class Pool:
    __slots__ = (
        "key", "memory", "dtype", "shape", "partition_dim", "tiles", "slots", "rot",
        "free_bytes", "slot_bytes", "slot_elems", "flatten", "begin", "end", "offset",
        "partition_start", "fixed", "name", "site", "groups", "ring", "depth", "loops",
        "chain",
    )

    def __init__(self, key, memory, dtype, shape, partition_dim, rot, site):
        self.key = key
        self.memory = memory
        self.dtype = dtype
        self.shape = shape
        self.partition_dim = partition_dim
        self.tiles = []
        self.slots = 0
        self.rot = rot
        free = 1
        for d, s in enumerate(shape):
            if d != partition_dim:
                free *= s
        self.free_bytes = free * dtype.itemsize
        self.slot_bytes = self.free_bytes
        self.slot_elems = free
        self.flatten = False
        self.begin = None
        self.end = None
        self.offset = None
        self.partition_start = 0
        self.fixed = False
        self.name = None
        self.site = site
        self.groups = []  # per slot group: [end seq of occupant, instances so far]
        self.ring = 0
        self.depth = rot  # buffers a loop's tiles rotate through
        self.loops = set()  # outermost traced loops its tiles were created in
        self.chain = None  # pools updated in place of each other share this id

    @property
    def bytes(self):
        return self.slots * self.slot_bytes

    @property
    def partitions(self):
        return self.shape[self.partition_dim]


def _pad_psum(pool, bank_bytes):
    """PSUM slots must not cross a bank: pad a slot to a power of two (<= bank) or to whole
    banks."""
    size = pool.free_bytes
    if size <= bank_bytes:
        padded = 1
        while padded < size:
            padded *= 2
    else:
        padded = -(-size // bank_bytes) * bank_bytes
    if padded != size:
        pool.slot_bytes = padded
        pool.slot_elems = padded // pool.dtype.itemsize
        pool.flatten = True


def build_pools(tiles, buffers_per_loop, reduced):
    """Pools by site; ``reduced`` holds the keys of pools limited to one buffer."""
    pools = {}
    order = []
    for tile in tiles:
        storage = tile.storage
        rotating = tile.rotation is not None
        if tile.address is not None:
            key = ("fixed", tile.ident)
        else:
            key = (storage.memory, tile.site, storage.dtype.name, storage.shape,
                   storage.partition_dim, rotating, tile.buffers)
        pool = pools.get(key)
        if pool is None:
            depth = 1 if key in reduced else (tile.buffers or buffers_per_loop)
            rot = 1
            if rotating:
                rot = depth
                if tile.rotation_instances is not None:
                    rot = max(1, min(rot, tile.rotation_instances))
            pool = Pool(key, storage.memory, storage.dtype, storage.shape, storage.partition_dim,
                        rot, tile.site)
            pool.depth = depth
            pools[key] = pool
            order.append(pool)
        pool.tiles.append(tile)
    return order


def tile_begin(tile):
    return tile.created_seq


def tile_end(tile):
    """Last use, in program order. A tile created in a loop traced once lives within one
    iteration (its buffers rotate); a use in a loop entered after its creation extends it to
    that loop's end."""
    return tile.end_seq()


def assign_slots(pool):
    """Gives every tile of the pool a slot expression; sets pool.slots."""
    pool.groups = []
    pool.ring = 0
    for tile in pool.tiles:
        begin, end = tile_begin(tile), tile_end(tile)
        if tile.frames:
            pool.loops.add(tile.frames[0].loop)
        pool.begin = begin if pool.begin is None else min(pool.begin, begin)
        pool.end = end if pool.end is None else max(pool.end, end)
        if tile.address is not None:
            pool.groups = [[end, 0]]
            tile.placement = (pool, 0)
            continue
        ring_min = 1 if tile.rotation is not None else pool.depth
        chosen = None
        if len(pool.groups) >= ring_min:
            n = len(pool.groups)
            for step in range(n):
                g = (pool.ring + step) % n
                if pool.groups[g][0] <= tile.created_seq:
                    chosen = g
                    break
        if chosen is None:
            pool.groups.append([end, 0])
            chosen = len(pool.groups) - 1
        group = pool.groups[chosen]
        group[0] = end
        pool.ring = (chosen + 1) % max(1, len(pool.groups))
        if tile.rotation is not None:
            base = chosen * pool.rot
            if pool.rot == 1:
                slot = base
            else:
                slot = base + (group[1] + tile.rotation) % pool.rot
            if tile.rotation_instances is not None:
                group[1] += tile.rotation_instances
            tile.placement = (pool, slot)
        else:
            tile.placement = (pool, chosen)
    pool.slots = len(pool.groups) * (pool.rot if pool.tiles[0].rotation is not None else 1)


def place(pools, memory, capacity, alignment, bank_bytes, in_place):
    """First-fit by lifetime (in place where possible when ``in_place``). Returns None when it
    fits, else the failing pool."""
    placed = []
    for pool in pools:
        if pool.fixed:
            pool.chain = id(pool)
            placed.append(pool)
    for pool in sorted((p for p in pools if not p.fixed), key=lambda p: (p.begin, -p.bytes)):
        if in_place and _place_in_place(pool, placed):
            placed.append(pool)
            continue
        align = alignment
        if memory == PSUM:
            align = max(align, min(pool.slot_bytes, bank_bytes))
        busy = sorted(
            (p.offset, p.offset + p.bytes) for p in placed if _overlap(p, pool, in_place)
        )
        offset = 0
        for lo, hi in busy:
            if offset + pool.bytes <= lo:
                break
            if hi > offset:
                offset = -(-hi // align) * align
        if offset + pool.bytes > capacity:
            return pool
        pool.offset = offset
        pool.chain = id(pool)
        placed.append(pool)
    return None


def _place_in_place(pool, placed):
    """Puts ``pool`` on the bytes of a pool whose last read is this pool's first write, with
    the same buffers (an in-place update such as ``x = x - mean``). Pools chained this way
    share their bytes."""
    for base in placed:
        if (base.end != pool.begin or base.fixed or base.slots != pool.slots
                or base.slot_bytes != pool.slot_bytes):
            continue
        lo, hi = base.offset, base.offset + pool.bytes
        clash = any(p.chain != base.chain and _overlap(p, pool, True)
                    and p.offset < hi and lo < p.offset + p.bytes for p in placed)
        if not clash:
            pool.offset = base.offset
            pool.chain = base.chain
            return True
    return False


def _overlap(a, b, in_place=False):
    """Lifetimes overlap. Two pools of the same traced loop always overlap (its iterations run
    overlapped on the engines, so bytes one iteration has finished with are still in use by the
    iteration before it), except, with ``in_place``, a pool whose first write is the last read
    of the other (an in-place update)."""
    touching = a.end == b.begin or b.end == a.begin
    if touching and in_place:
        return a.begin == b.begin
    if a.loops & b.loops:
        return True
    return a.begin < b.end and b.begin < a.end


def allocate(tracer):
    """Places every logical tile. Returns the pools. When a memory overflows, the largest
    multi-buffered pool of that memory goes down to one buffer and placement starts again."""
    target = tracer.target
    depth = max(1, int(target.get("compiler", {}).get("loop_tile_buffers", 2)))
    reduced = set()
    in_place = False
    while True:
        pools = build_pools(tracer.tiles, depth, reduced)
        for pool in pools:
            assign_slots(pool)
            if pool.memory == PSUM:
                _pad_psum(pool, target["psum_bank_bytes"])
            _fix(pool, target)
        failure = None
        for memory, capacity, alignment in (
            (SBUF, target["sbuf_partition_bytes"], target["sbuf_alignment_bytes"]),
            (PSUM, target["psum_partition_bytes"], target["psum_alignment_bytes"]),
        ):
            failure = place([p for p in pools if p.memory == memory], memory, capacity,
                            alignment, target["psum_bank_bytes"], in_place)
            if failure is not None:
                break
        if failure is None:
            return pools
        if not in_place:
            in_place = True  # under pressure, element-wise updates reuse their input's bytes
            continue
        candidates = [p for p in pools if p.memory == failure.memory and p.depth > 1
                      and p.key not in reduced and p.slots > 1
                      and (p is failure or p.offset is not None and _overlap(p, failure))]
        if not candidates:
            raise _capacity_error(failure, pools, target)
        # the largest pool live where memory ran out; among equals the shortest-lived
        # (a temporary gains least from overlapping iterations)
        reduced.add(max(candidates, key=lambda p: (p.bytes, -(p.end - p.begin), p.begin)).key)


def _fix(pool, target):
    """Pools of tiles placed by the kernel: at their address; a direct allocation with a block
    dimension folds its blocks onto ``fold`` buffers ``stride`` bytes apart."""
    tile = pool.tiles[0]
    if tile.address is None:
        return
    pool.fixed = True
    pool.partition_start, pool.offset = tile.address
    if tile.mod_alloc is not None:
        fold, stride = tile.mod_alloc
        storage = tile.storage
        pool.shape = storage.shape[1:]
        pool.partition_dim = storage.partition_dim - 1
        pool.slots = fold
        pool.free_bytes = pool.slot_bytes = stride
        free = 1
        for d, size in enumerate(pool.shape):
            if d != pool.partition_dim:
                free *= size
        pool.slot_elems = stride // pool.dtype.itemsize
        pool.flatten = stride != free * pool.dtype.itemsize


def _capacity_error(failure, pools, target):
    memory = failure.memory
    capacity = target["sbuf_partition_bytes"] if memory == SBUF else target["psum_partition_bytes"]
    live = [p for p in pools if p.memory == memory and p.offset is not None
            and _overlap(p, failure)]
    live.sort(key=lambda p: -p.bytes)
    parts = [f"{p.site[0]}:{p.site[1]} {list(p.shape)} {p.dtype} x{p.slots} = {p.bytes} B"
             for p in live[:8]]
    used = sum(p.bytes for p in live)
    message = (
        f"{memory.upper()} is full: a tile {list(failure.shape)} {failure.dtype} x{failure.slots} "
        f"({failure.bytes} bytes per partition) does not fit beside {used} bytes already live "
        f"({capacity} bytes per partition on {target['name']})"
    )
    if parts:
        message += "; live: " + "; ".join(parts)
    return KernelError(message, where=failure.site)


def slot_text(slot):
    return slot.render() if isinstance(slot, Sym) else str(slot)
