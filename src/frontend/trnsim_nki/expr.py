"""Symbolic integer expressions: loop indices of traced loops and what kernels compute from them.

A loop traced once with a symbolic index (an ``affine_range`` body) produces offsets such as
``k*128`` or ``(m*16 + n) % 2``. They are kept as ``Sym`` values and rendered as expressions of
the trnsim kernel format (Python integer semantics: ``//`` and ``%`` floor, comparisons give 0/1).

Affine expressions (a constant plus integer multiples of variables) stay in normal form, so
``(k+1)*128 - k*128`` is the plain integer 128: tile sizes computed from a symbolic index are
concrete. Anything else (``//``, ``%``, products of variables, ``min``) becomes an opaque node
that is evaluated and rendered but never simplified.

Python control flow cannot branch on a value that differs between iterations: ``bool()``,
``int()`` and ``__index__`` of a symbolic value raise ``NotAffine`` naming the variables, and the
tracer then unrolls the loops that own them (trace.py).
"""

from __future__ import annotations

import operator


class NotAffine(BaseException):
    """Python needed a concrete value of a symbolic expression (``if k == 0``, ``bufs[k % 2]``).

    A BaseException so that a kernel's own ``except Exception`` does not swallow it.
    """

    def __init__(self, variables, what):
        super().__init__(what)
        self.variables = frozenset(v for v in variables if isinstance(v, Var))
        self.what = what


class Var:
    """A symbolic loop index or program id: ``name`` in range(start, stop, step)."""

    __slots__ = ("name", "start", "stop", "step", "owner")

    def __init__(self, name, start, stop, step, owner=None):
        self.name = name
        self.start = start
        self.stop = stop
        self.step = step
        self.owner = owner  # the tracer's loop frame that binds this variable

    def bounds(self):
        """(lowest, highest) value the variable takes; bounds may themselves be symbolic."""
        lo_start = lower(self.start)
        if self.step > 0:
            return lo_start, upper(self.stop) - 1
        return lower(self.stop) + 1, upper(self.start)


def lower(value):
    return value.bounds()[0] if isinstance(value, Sym) else value


def upper(value):
    return value.bounds()[1] if isinstance(value, Sym) else value


# Precedence of rendered operators (higher binds tighter), as in the kernel format's grammar.
_PREC = {"or": 1, "and": 2, "not": 3, "cmp": 4, "+": 5, "-": 5, "*": 6, "//": 6, "%": 6, "neg": 7}

_CMP_FUNCS = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


def _floordiv(a, b):
    return a // b


def _mod(a, b):
    return a % b


_BIN_FUNCS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": _floordiv, "%": _mod, "min": min, "max": max}


class Sym:
    """An integer expression over symbolic variables. Immutable."""

    __slots__ = ("terms", "const", "node")

    def __init__(self, terms=(), const=0, node=None):
        # Affine form: terms = ((Var, coeff), ...) sorted by name, coeff != 0; node = None.
        # Opaque form: node = (op, args...), terms = (), const = 0.
        self.terms = terms
        self.const = const
        self.node = node

    # --- construction ---------------------------------------------------------------------
    @staticmethod
    def var(v):
        return Sym(((v, 1),), 0)

    @staticmethod
    def opaque(op, *args):
        return Sym((), 0, (op,) + args)

    def is_affine(self):
        return self.node is None

    def variables(self):
        """The Vars this expression reads."""
        out = set()
        self._collect(out)
        return out

    def _collect(self, out):
        if self.node is None:
            for v, _ in self.terms:
                out.add(v)
                for bound in (v.start, v.stop):
                    if isinstance(bound, Sym):
                        bound._collect(out)
        else:
            for arg in self.node[1:]:
                if isinstance(arg, Sym):
                    arg._collect(out)

    def names(self):
        return {v.name for v in self.variables()}

    # --- evaluation -------------------------------------------------------------------------
    def evaluate(self, env):
        """Value with every variable bound in ``env`` (name -> int)."""
        if self.node is None:
            return self.const + sum(c * env[v.name] for v, c in self.terms)
        op = self.node[0]
        args = [a.evaluate(env) if isinstance(a, Sym) else a for a in self.node[1:]]
        if op in _BIN_FUNCS:
            return _BIN_FUNCS[op](args[0], args[1])
        if op in _CMP_FUNCS:
            return int(_CMP_FUNCS[op](args[0], args[1]))
        if op == "and":
            return args[0] and args[1]
        if op == "or":
            return args[0] or args[1]
        if op == "not":
            return int(not args[0])
        raise AssertionError(op)

    def bounds(self):
        """(lo, hi): every value the expression takes lies in [lo, hi] (interval arithmetic)."""
        if self.node is None:
            lo = hi = self.const
            for v, c in self.terms:
                vlo, vhi = v.bounds()
                if c > 0:
                    lo += c * vlo
                    hi += c * vhi
                else:
                    lo += c * vhi
                    hi += c * vlo
            return lo, hi
        op = self.node[0]
        a = self.node[1]
        b = self.node[2] if len(self.node) > 2 else None
        alo, ahi = (a.bounds() if isinstance(a, Sym) else (a, a))
        if b is not None:
            blo, bhi = (b.bounds() if isinstance(b, Sym) else (b, b))
        if op == "*":
            products = [alo * blo, alo * bhi, ahi * blo, ahi * bhi]
            return min(products), max(products)
        if op == "//" and blo == bhi and blo != 0:
            vals = [alo // blo, ahi // blo]
            return min(vals), max(vals)
        if op == "%" and blo == bhi and blo > 0:
            if ahi - alo < blo and alo % blo <= ahi % blo:
                return alo % blo, ahi % blo
            return 0, blo - 1
        if op == "min":
            return min(alo, blo), min(ahi, bhi)
        if op == "max":
            return max(alo, blo), max(ahi, bhi)
        if op in _CMP_FUNCS or op in ("not",):
            return 0, 1
        if op in ("and", "or"):
            return min(alo, blo, 0), max(ahi, bhi, 1)
        # Unbounded in general (division by a symbolic value): a wide but finite box.
        return -(1 << 62), 1 << 62

    # --- rendering ----------------------------------------------------------------------------
    def render(self):
        return self._render()[0]

    def _render(self):
        """(text, precedence of its top operator)."""
        if self.node is None:
            parts = []
            for v, c in self.terms:
                if c == 1:
                    parts.append(("+", v.name))
                elif c == -1:
                    parts.append(("-", v.name))
                elif c > 0:
                    parts.append(("+", f"{c}*{v.name}"))
                else:
                    parts.append(("-", f"{-c}*{v.name}"))
            if self.const > 0 or (self.const and parts):
                parts.append(("+" if self.const > 0 else "-", str(abs(self.const))))
            elif not parts:
                return str(self.const), 9
            elif self.const < 0:
                parts.append(("-", str(-self.const)))
            text = ""
            for i, (sign, body) in enumerate(parts):
                if i == 0:
                    text = body if sign == "+" else "-" + body
                else:
                    text += f" {sign} {body}"
            if len(parts) == 1:
                if parts[0][0] == "-":
                    return text, _PREC["neg"]
                return text, (6 if "*" in text else 9)
            return text, _PREC["+"]
        op = self.node[0]
        if op in ("min", "max"):
            a, b = (_render_arg(x, 0) for x in self.node[1:])
            return f"{op}({a}, {b})", 9
        if op == "not":
            return "not " + _render_arg(self.node[1], _PREC["not"] + 1), _PREC["not"]
        prec = _PREC["cmp"] if op in _CMP_FUNCS else _PREC[op]
        left = _render_arg(self.node[1], prec)
        right = _render_arg(self.node[2], prec + 1)
        return f"{left} {op} {right}", prec

    def __repr__(self):
        return f"Sym({self.render()})"

    # --- arithmetic -----------------------------------------------------------------------------
    def __add__(self, other):
        other = _coerce(other)
        if other is NotImplemented:
            return NotImplemented
        if isinstance(other, int):
            if self.node is None:
                return _make(self.terms, self.const + other)
            if other == 0:
                return self
            return Sym.opaque("+", self, other)
        if self.node is None and other.node is None:
            coeffs = {}
            order = {}
            for v, c in self.terms + other.terms:
                key = id(v)
                order[key] = v
                coeffs[key] = coeffs.get(key, 0) + c
            terms = tuple((order[k], c) for k, c in coeffs.items() if c)
            return _make(terms, self.const + other.const)
        return Sym.opaque("+", self, other)

    __radd__ = __add__

    def __neg__(self):
        if self.node is None:
            return _make(tuple((v, -c) for v, c in self.terms), -self.const)
        return Sym.opaque("-", 0, self)

    def __pos__(self):
        return self

    def __sub__(self, other):
        other = _coerce(other)
        if other is NotImplemented:
            return NotImplemented
        if isinstance(other, int):
            return self + (-other)
        if self.node is None and other.node is None:
            return self + (-other)
        return Sym.opaque("-", self, other)

    def __rsub__(self, other):
        other = _coerce(other)
        if other is NotImplemented:
            return NotImplemented
        return (-self) + other if self.node is None else Sym.opaque("-", other, self)

    def __mul__(self, other):
        other = _coerce(other)
        if other is NotImplemented:
            return NotImplemented
        if isinstance(other, int):
            if other == 0:
                return 0
            if self.node is None:
                return _make(tuple((v, c * other) for v, c in self.terms), self.const * other)
            if other == 1:
                return self
            return Sym.opaque("*", self, other)
        if other.node is None and not other.terms:
            return self * other.const
        if self.node is None and not self.terms:
            return other * self.const
        return Sym.opaque("*", self, other)

    __rmul__ = __mul__

    def __floordiv__(self, other):
        other = _coerce(other)
        if other is NotImplemented:
            return NotImplemented
        if isinstance(other, int):
            if other == 1:
                return self
            if self.node is None and other != 0 and self.const % other == 0 and all(
                c % other == 0 for _, c in self.terms
            ):
                return _make(tuple((v, c // other) for v, c in self.terms), self.const // other)
            if other > 0 and self.node is None:
                # (a*k + c) // d with c in [0, d) and a divisible by d: a/d*k + 0.
                divisible = tuple((v, c) for v, c in self.terms if c % other == 0)
                rest = tuple((v, c) for v, c in self.terms if c % other != 0)
                if not rest and 0 <= self.const < other:
                    return _make(tuple((v, c // other) for v, c in divisible), 0)
                lo, hi = self.bounds()
                if lo // other == hi // other:
                    return lo // other
        return Sym.opaque("//", self, other)

    def __rfloordiv__(self, other):
        other = _coerce(other)
        if other is NotImplemented:
            return NotImplemented
        return Sym.opaque("//", other, self)

    def __mod__(self, other):
        other = _coerce(other)
        if other is NotImplemented:
            return NotImplemented
        if isinstance(other, int):
            if other == 1:
                return 0
            if self.node is None and other > 0:
                terms = tuple((v, c) for v, c in self.terms if c % other != 0)
                reduced = _make(terms, self.const % other)
                if isinstance(reduced, int):
                    return reduced
                lo, hi = reduced.bounds()
                if 0 <= lo and hi < other:
                    return reduced
                return Sym.opaque("%", reduced, other)
        return Sym.opaque("%", self, other)

    def __rmod__(self, other):
        other = _coerce(other)
        if other is NotImplemented:
            return NotImplemented
        return Sym.opaque("%", other, self)

    def __truediv__(self, other):
        raise NotAffine(self.variables(), "true division '/' of a loop index")

    __rtruediv__ = __truediv__

    # --- comparisons (symbolic booleans) --------------------------------------------------------
    def _compare(self, op, other):
        other = _coerce(other)
        if other is NotImplemented:
            return NotImplemented
        diff = self - other
        if isinstance(diff, int):
            return int(_CMP_FUNCS[op](diff, 0))
        lo, hi = diff.bounds()
        if _CMP_FUNCS[op](lo, 0) and _CMP_FUNCS[op](hi, 0) and op not in ("==", "!="):
            return 1
        if not _CMP_FUNCS[op](lo, 0) and not _CMP_FUNCS[op](hi, 0) and op not in ("==", "!="):
            return 0
        if op == "==" and (lo > 0 or hi < 0):
            return 0
        if op == "!=" and (lo > 0 or hi < 0):
            return 1
        return Sym.opaque(op, self, other)

    def __lt__(self, other):
        return self._compare("<", other)

    def __le__(self, other):
        return self._compare("<=", other)

    def __gt__(self, other):
        return self._compare(">", other)

    def __ge__(self, other):
        return self._compare(">=", other)

    def __eq__(self, other):
        if not isinstance(other, (int, Sym)) or isinstance(other, bool):
            return NotImplemented if not isinstance(other, bool) else self._compare("==", int(other))
        return self._compare("==", other)

    def __ne__(self, other):
        if not isinstance(other, (int, Sym)) or isinstance(other, bool):
            return NotImplemented if not isinstance(other, bool) else self._compare("!=", int(other))
        return self._compare("!=", other)

    __hash__ = object.__hash__

    def __and__(self, other):
        return sym_and(self, other)

    __rand__ = __and__

    def __or__(self, other):
        return sym_or(self, other)

    __ror__ = __or__

    def __invert__(self):
        return sym_not(self)

    # --- Python needs a concrete value ----------------------------------------------------------
    def __bool__(self):
        raise NotAffine(self.variables(), f"a Python condition on '{self.render()}'")

    def __index__(self):
        raise NotAffine(self.variables(), f"a Python integer from '{self.render()}'")

    def __int__(self):
        raise NotAffine(self.variables(), f"int() of '{self.render()}'")

    def __float__(self):
        raise NotAffine(self.variables(), f"float() of '{self.render()}'")

    def __round__(self, ndigits=None):
        raise NotAffine(self.variables(), f"round() of '{self.render()}'")


def _render_arg(value, min_prec):
    if isinstance(value, Sym):
        text, prec = value._render()
    else:
        text, prec = str(value), (9 if value >= 0 else _PREC["neg"])
    return f"({text})" if prec < min_prec else text


def _coerce(value):
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, Sym)):
        return value
    index = getattr(value, "__index__", None)
    if index is not None and not isinstance(value, float):
        try:
            return int(index())
        except TypeError:
            return NotImplemented
    return NotImplemented


def _make(terms, const):
    if not terms:
        return const
    terms = tuple(sorted(terms, key=lambda t: t[0].name))
    return Sym(terms, const)


def sym_min(a, b):
    if not isinstance(a, Sym) and not isinstance(b, Sym):
        return min(a, b)
    diff = _coerce(a) - _coerce(b)
    if isinstance(diff, int):
        return a if diff <= 0 else b
    lo, hi = diff.bounds()
    if hi <= 0:
        return a
    if lo >= 0:
        return b
    return Sym.opaque("min", a, b)


def sym_max(a, b):
    if not isinstance(a, Sym) and not isinstance(b, Sym):
        return max(a, b)
    diff = _coerce(a) - _coerce(b)
    if isinstance(diff, int):
        return a if diff >= 0 else b
    lo, hi = diff.bounds()
    if lo >= 0:
        return a
    if hi <= 0:
        return b
    return Sym.opaque("max", a, b)


def sym_and(a, b):
    if isinstance(a, int) and not isinstance(a, Sym):
        return b if a else 0
    if isinstance(b, int) and not isinstance(b, Sym):
        return a if b else 0
    return Sym.opaque("and", a, b)


def sym_or(a, b):
    if isinstance(a, int) and not isinstance(a, Sym):
        return 1 if a else b
    if isinstance(b, int) and not isinstance(b, Sym):
        return 1 if b else a
    return Sym.opaque("or", a, b)


_NEGATED = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


def sym_not(a):
    if isinstance(a, int) and not isinstance(a, Sym):
        return int(not a)
    if a.node is not None and a.node[0] in _NEGATED:
        return Sym.opaque(_NEGATED[a.node[0]], a.node[1], a.node[2])
    if a.node is not None and a.node[0] == "not":
        return a.node[1]
    return Sym.opaque("not", a)


def render(value):
    """Kernel-format text of an int or a Sym."""
    if isinstance(value, Sym):
        return value.render()
    return str(int(value))


def is_symbolic(value):
    return isinstance(value, Sym)


def constant(value, what):
    """``value`` as a Python int; raises NotAffine when it varies between iterations."""
    if isinstance(value, Sym):
        raise NotAffine(value.variables(), what)
    return int(value)
