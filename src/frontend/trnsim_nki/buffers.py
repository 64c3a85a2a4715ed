"""Buffers a tensor can be created in: ``nl.sbuf``, ``nl.psum``, ``nl.hbm``/``private_hbm``,
``nl.shared_hbm``, and the classic direct-allocation buffers of ``neuronxcc.nki.compiler``
(``ncc.sbuf.mod_alloc(...)``, ``ncc.psum.mod_alloc(...)``, ``ncc.sbuf.alloc(func)``).
"""

from __future__ import annotations

from .errors import KernelError
from .tensor import HBM, PSUM, SBUF


class Buffer:
    """A memory kind, optionally with a placement rule (direct allocation)."""

    def __init__(self, memory, name, hbm_kind=None, placement=None):
        self.memory = memory
        self.name = name
        self.hbm_kind = hbm_kind
        self.placement = placement  # ModAlloc / FuncAlloc or None (automatic)

    def __repr__(self):
        return f"nl.{self.name}"

    # the new API's MemoryRegion enum and helpers compare buffers by kind
    def __eq__(self, other):
        return isinstance(other, Buffer) and other.memory == self.memory and (
            other.hbm_kind == self.hbm_kind)

    def __hash__(self):
        return hash((self.memory, self.hbm_kind))

    # classic: ncc.sbuf.mod_alloc(...) etc. are reached through these objects
    def mod_alloc(self, *, base_addr=0, base_partition=0, num_par_tiles=(), num_free_tiles=(),
                  base_bank=None, num_bank_tiles=()):
        if self.memory == HBM:
            raise KernelError("mod_alloc is only for sbuf and psum")
        if self.memory == PSUM:
            bank = 0 if base_bank is None else int(base_bank)
            tiles = tuple(num_bank_tiles) or tuple(num_free_tiles)
            return Buffer(self.memory, self.name + ".mod_alloc", placement=ModAlloc(
                self.memory, int(base_partition), int(base_addr), tiles, bank))
        return Buffer(self.memory, self.name + ".mod_alloc", placement=ModAlloc(
            self.memory, int(base_partition), int(base_addr), tuple(num_free_tiles), None,
            tuple(num_par_tiles)))

    def alloc(self, func):
        if self.memory == HBM:
            raise KernelError("alloc(func) is only for sbuf and psum")
        return Buffer(self.memory, self.name + ".alloc", placement=FuncAlloc(func))

    def auto_alloc(self):
        return Buffer(self.memory, self.name)


class ModAlloc:
    """Classic ``mod_alloc``: block i of a tensor lives at base + (i % k) * block bytes."""

    def __init__(self, memory, base_partition, base_addr, num_free_tiles, base_bank,
                 num_par_tiles=()):
        self.memory = memory
        self.base_partition = base_partition
        self.base_addr = base_addr
        self.num_free_tiles = num_free_tiles
        self.base_bank = base_bank
        self.num_par_tiles = num_par_tiles
        if any(p != 1 for p in num_par_tiles):
            raise KernelError("mod_alloc num_par_tiles other than 1 is not supported")

    def byte_offset(self, bank_bytes):
        if self.base_bank is not None:
            return self.base_bank * bank_bytes + self.base_addr
        return self.base_addr


class FuncAlloc:
    """Classic ``alloc(func)``: func(block index tuple, partitions, bytes) -> (partition, byte)."""

    def __init__(self, func):
        self.func = func


sbuf = Buffer(SBUF, "sbuf")
psum = Buffer(PSUM, "psum")
private_hbm = Buffer(HBM, "private_hbm", hbm_kind="private")
hbm = private_hbm
shared_hbm = Buffer(HBM, "shared_hbm", hbm_kind="shared")


def resolve(buffer):
    """A Buffer from what a kernel passed as ``buffer=`` (None means SBUF)."""
    if buffer is None:
        return sbuf
    if isinstance(buffer, Buffer):
        return buffer
    if isinstance(buffer, str):
        name = buffer.lower()
        table = {"sbuf": sbuf, "psum": psum, "hbm": hbm, "private_hbm": private_hbm,
                 "shared_hbm": shared_hbm}
        if name in table:
            return table[name]
    raise KernelError(f"unknown buffer {buffer!r} (expected nl.sbuf, nl.psum, nl.hbm, "
                      "nl.private_hbm or nl.shared_hbm)")


def buffer_of(storage):
    if storage.memory == SBUF:
        return sbuf
    if storage.memory == PSUM:
        return psum
    return shared_hbm if storage.hbm_kind in ("shared", "input") else private_hbm
