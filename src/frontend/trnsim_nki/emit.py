"""Writes a finished trace as a ``trnsim-kernel/1`` document.

Tensors: HBM tensors under the kernel's names (arguments keep their parameter names), then one
tensor per on-chip pool (alloc.py) with an explicit ``partition_start``/``offset``. Statements:
instructions with a ``source`` ("file.py:LINE"), loops traced once as ``for`` statements,
first-iteration conditions as ``if``. Operands are slices when the view came from basic indexing,
else explicit access patterns (``t.ap(...)``).
"""

from __future__ import annotations

import keyword
import re

from . import ops
from .alloc import slot_text
from .errors import KernelError
from .expr import Sym, render
from .tensor import HBM, PSUM
from .trace import If, Instr, Loop, _RESERVED

_DEFAULT_ENGINE = {
    "tensor_tensor": "vector", "tensor_scalar": "vector", "tensor_copy": "vector",
    "memset": "vector", "nc_transpose": "tensor",
}
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z_0-9]*$")


class Namer:
    def __init__(self, taken):
        self.taken = set(taken) | _RESERVED

    def name(self, hint, fallback):
        base = hint if hint and _IDENT.match(hint) and not keyword.iskeyword(hint) else fallback
        name = base
        n = 1
        while name in self.taken:
            n += 1
            name = f"{base}_{n}"
        self.taken.add(name)
        return name


def build_document(tracer, pools, kernel_name, description, input_names):
    namer = Namer(tracer.loop_names)
    tensors = {}
    hbm_names = {}
    for storage in tracer.hbm:
        fallback = "out" if storage.hbm_kind in ("shared",) else "hbm"
        name = namer.name(storage.name, fallback)
        hbm_names[id(storage)] = name
        decl = {"memory": "hbm", "dtype": storage.dtype.name, "shape": list(storage.shape)}
        if storage.hbm_kind == "private" and tracer.cores > 1:
            decl["per_core"] = True
        tensors[name] = decl
    for pool in sorted(pools, key=lambda p: (p.memory != "sbuf", p.offset, p.begin)):
        tile = pool.tiles[0]
        hint = tile.storage.name or ""
        pool.name = namer.name(hint, f"{'psum' if pool.memory == PSUM else 'sb'}_l{pool.site[1]}")
        decl = {"memory": pool.memory, "dtype": pool.dtype.name}
        if pool.flatten:
            shape = [pool.partitions, pool.slot_elems]
            pdim = 0
        else:
            shape = list(pool.shape)
            pdim = pool.partition_dim
        if pool.slots > 1 or pool.flatten:
            shape = [pool.slots] + shape
            pdim += 1
        decl["shape"] = shape
        if pdim:
            decl["partition_dim"] = pdim
        if pool.partition_start:
            decl["partition_start"] = pool.partition_start
        decl["offset"] = pool.offset
        tensors[pool.name] = decl
    renderer = Renderer(hbm_names)
    program = renderer.body(tracer.program)
    doc = {"format": "trnsim-kernel/1", "name": kernel_name}
    if description:
        doc["description"] = description
    if tracer.cores > 1:
        doc["cores"] = tracer.cores
    doc["tensors"] = tensors
    doc["program"] = program
    return doc


class Renderer:
    def __init__(self, hbm_names):
        self.hbm_names = hbm_names

    def body(self, records):
        out = []
        for record in records:
            item = self.record(record)
            if item is not None:
                out.append(item)
        return out

    def record(self, record):
        if isinstance(record, Instr):
            return self.instruction(record)
        if isinstance(record, Loop):
            body = self.body(record.body)
            if not body:
                return None
            start, stop, step = record.start, record.stop, record.step
            if step == 1 and start == 0 and not isinstance(start, Sym):
                rng = _expr(stop)
            elif step == 1:
                rng = [_expr(start), _expr(stop)]
            else:
                rng = [_expr(start), _expr(stop), step]
            item = {"for": record.var.name, "range": rng, "body": body}
            _add_source(item, record.source)
            return item
        if isinstance(record, If):
            then = self.body(record.then)
            orelse = self.body(record.orelse)
            if not then and not orelse:
                return None
            item = {"if": _expr(record.cond), "then": then}
            if orelse:
                item["else"] = orelse
            _add_source(item, record.source)
            return item
        if isinstance(record, ops.ZeroFill):
            if not record.needed:
                return None
            item = {"op": "memset", "dst": self.operand(record.view), "value": 0}
            if record.engine != "vector":
                item["engine"] = record.engine
            _add_source(item, record.source)
            return item
        raise AssertionError(record)

    def instruction(self, instr):
        item = {"op": instr.op}
        for slot, view in instr.operands.items():
            if view is not None:
                item[slot] = self.operand(view)
        for key, value in instr.attrs.items():
            item[key] = _attr(value)
        default = _DEFAULT_ENGINE.get(instr.op)
        if default is not None and instr.engine != default:
            item["engine"] = instr.engine
        _add_source(item, instr.source)
        return item

    def operand(self, view):
        storage = view.storage
        if storage.memory == HBM:
            name = self.hbm_names[id(storage)]
            if view.index_form is not None:
                return name + _index_text(view.index_form, storage.shape)
            if _is_whole_contiguous(view):
                return name  # a reshape of the whole tensor: shapes match up to size-1 axes
            return f"{name}.ap({_expr_text(view.offset)}, {_pairs(view.free_axes())})"
        tile = storage.tile
        if tile is None or tile.placement is None:
            raise KernelError("internal: an on-chip operand without a placement")
        pool, slot = tile.placement
        if tile.mod_alloc is not None:
            return self._mod_alloc_operand(view, pool, tile)
        if view.index_form is not None and not pool.flatten:
            form = list(view.index_form)
            text = _index_items(form, storage.shape, storage.partition_dim)
            if pool.slots > 1:
                text = [slot_text(slot)] + text
            return f"{pool.name}[{', '.join(text)}]" if text else pool.name
        offset = view.offset
        if pool.slots > 1 or pool.flatten:
            offset = slot * pool.slot_elems + offset
        p0 = view.pstart
        p1 = p0 + view.partitions
        pairs = view.free_axes()
        text = f"{pool.name}.ap({_expr_text(p0)}:{_expr_text(p1)}, {_expr_text(offset)}"
        if pairs:
            text += ", " + _pairs(pairs)
        return text + ")"

    def _mod_alloc_operand(self, view, pool, tile):
        """A view of a directly allocated tensor whose blocks fold onto ``pool.slots`` buffers:
        block b is buffer b mod k."""
        storage = view.storage
        if view.index_form is None or view.index_form[0][0] != "i":
            raise KernelError("a directly allocated tensor with a block dimension must be "
                              "indexed by an integer block first (t[i] or t[i, ...])")
        block = view.index_form[0][1]
        slot = block % pool.slots if pool.slots > 1 else 0
        if not pool.flatten:
            text = _index_items(view.index_form[1:], storage.shape[1:], storage.partition_dim - 1)
            if pool.slots > 1:
                text = [slot_text(slot)] + text
            return f"{pool.name}[{', '.join(text)}]" if text else pool.name
        block_elems = 1
        for d, size in enumerate(storage.shape):
            if d > storage.partition_dim:
                block_elems *= size
        offset = slot * pool.slot_elems + (view.offset - block * block_elems)
        text = (f"{pool.name}.ap({_expr_text(view.pstart)}:{_expr_text(view.pstart + view.partitions)}, "
                f"{_expr_text(offset)}")
        pairs = view.free_axes()
        if pairs:
            text += ", " + _pairs(pairs)
        return text + ")"


def _index_items(form, shape, partition_dim):
    items = []
    for d, entry in enumerate(form):
        if entry[0] == "i":
            items.append(_expr_text(entry[1]))
        else:
            _, start, count, step = entry
            if count == shape[d] and step == 1 and not isinstance(start, Sym) and start == 0:
                items.append(":")
                continue
            stop = start + count * step if step == 1 else start + (count - 1) * step + 1
            text = f"{_expr_text(start)}:{_expr_text(stop)}"
            if step != 1:
                text += f":{step}"
            items.append(text)
    while items and items[-1] == ":":
        items.pop()
    return items


def _index_text(form, shape):
    items = _index_items(form, shape, None)
    return f"[{', '.join(items)}]" if items else ""


def _pairs(axes):
    return ", ".join(f"[{_expr_text(s)}, {c}]" for s, c in axes)


def _expr_text(value):
    return render(value)


def _expr(value):
    if isinstance(value, Sym):
        return value.render()
    return int(value)


def _attr(value):
    if isinstance(value, Sym):
        return value.render()
    if isinstance(value, bool):
        return value
    return value


def _add_source(item, location):
    """``"source": "file.py:LINE"`` when the record comes from a line of the kernel's files."""
    if location[1] > 0 and not str(location[0]).startswith("<"):
        item["source"] = f"{location[0]}:{location[1]}"


def dumps(doc):
    """JSON text: one statement or tensor per line, nested bodies indented."""
    out = []
    _write(doc, 0, out)
    return "".join(out) + "\n"


def _inline(value):
    import json

    return json.dumps(value, separators=(", ", ": "))


def _write(value, indent, out):
    pad = " " * indent
    if isinstance(value, dict):
        nested = any(isinstance(v, (dict, list)) and _has_nesting(v) for v in value.values())
        if not nested:
            out.append(_inline(value))
            return
        out.append("{\n")
        items = list(value.items())
        for i, (k, v) in enumerate(items):
            out.append(f"{pad}  {_inline(k)}: ")
            _write(v, indent + 2, out)
            out.append(",\n" if i + 1 < len(items) else "\n")
        out.append(pad + "}")
        return
    if isinstance(value, list):
        if not any(isinstance(v, (dict, list)) for v in value):
            out.append(_inline(value))
            return
        out.append("[\n")
        for i, v in enumerate(value):
            out.append(pad + "  ")
            _write(v, indent + 2, out)
            out.append(",\n" if i + 1 < len(value) else "\n")
        out.append(pad + "]")
        return
    out.append(_inline(value))


def _has_nesting(value):
    if isinstance(value, dict):
        return len(value) > 0 and (len(value) > 1 or any(isinstance(v, (dict, list)) for v in value.values())) and any(
            isinstance(v, (dict, list)) for v in value.values()) or len(value) > 6
    if isinstance(value, list):
        return any(isinstance(v, (dict, list)) for v in value)
    return False


def _is_whole_contiguous(view):
    from .tensor import is_contiguous

    total = 1
    for s in view.storage.shape:
        total *= s
    same = tuple(s for s in view.shape if s != 1) == tuple(s for s in view.storage.shape if s != 1)
    return (not isinstance(view.offset, Sym) and view.offset == 0 and view.size == total
            and is_contiguous(view) and same)
