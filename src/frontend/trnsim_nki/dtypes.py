"""NKI data types: the objects ``nl.float32`` ... stand for, their sizes, and type promotion.

A kernel may name a dtype as an ``nl`` attribute, a NumPy dtype or scalar type (``np.float32``),
or a string (``"bfloat16"``). All of them resolve to one ``DType`` by ``dtype_of``. Names are the
kernel format's (section 3 of docs/kernel-format.md).
"""

from __future__ import annotations


class DType:
    __slots__ = ("name", "itemsize", "kind", "bits")

    def __init__(self, name, itemsize, kind, bits):
        self.name = name
        self.itemsize = itemsize  # bytes in memory (packed x4 types: the container)
        self.kind = kind  # "f" float, "i" signed, "u" unsigned, "b" bool, "x" packed
        self.bits = bits  # significant bits, for promotion between floats

    def __repr__(self):
        return self.name

    def __str__(self):
        return self.name

    def __eq__(self, other):
        try:
            return dtype_of(other) is self
        except Exception:  # noqa: BLE001 - comparing with anything that is not a dtype
            return False

    def __hash__(self):
        return hash(self.name)

    # np.dtype-like attributes some kernels read
    @property
    def type(self):
        return self

    def __call__(self, value):
        """``nl.float32(1.5)``: a typed scalar."""
        return TypedScalar(value, self)


class TypedScalar(float):
    """A Python number with a dtype (``np.float16(1.2)`` style), for promotion rules."""

    def __new__(cls, value, dtype):
        obj = super().__new__(cls, float(value))
        obj.nki_dtype = dtype
        return obj


_ALL = [
    DType("float32", 4, "f", 32),
    DType("tfloat32", 4, "f", 19),
    DType("bfloat16", 2, "f", 16),
    DType("float16", 2, "f", 15),
    DType("float8_e4m3", 1, "f", 8),
    DType("float8_e5m2", 1, "f", 8),
    DType("float8_e4m3fn", 1, "f", 8),
    DType("float8_e8m0fnu", 1, "f", 8),
    DType("int8", 1, "i", 8),
    DType("int16", 2, "i", 16),
    DType("int32", 4, "i", 32),
    DType("uint8", 1, "u", 8),
    DType("uint16", 2, "u", 16),
    DType("uint32", 4, "u", 32),
    DType("bool", 1, "b", 1),
    DType("float8_e4m3fn_x4", 4, "x", 32),
    DType("float8_e5m2_x4", 4, "x", 32),
    DType("float4_e2m1fn_x4", 2, "x", 16),
]
BY_NAME = {d.name: d for d in _ALL}
_ALIASES = {
    "fp32": "float32",
    "float": "float32",
    "single": "float32",
    "tf32": "tfloat32",
    "bf16": "bfloat16",
    "bfloat16_t": "bfloat16",
    "fp16": "float16",
    "half": "float16",
    "fp8_e4m3": "float8_e4m3",
    "fp8_e5m2": "float8_e5m2",
    "float8e4": "float8_e4m3",
    "float8e5": "float8_e5m2",
    "float8_e4m3fnuz": "float8_e4m3fn",
    "bool_": "bool",
    "int": "int32",
    "int64": "int32",
    "uint64": "uint32",
    "float64": "float32",
    "double": "float32",
}

float32 = BY_NAME["float32"]
bfloat16 = BY_NAME["bfloat16"]
int32 = BY_NAME["int32"]
uint8 = BY_NAME["uint8"]
bool_ = BY_NAME["bool"]


class DTypeError(ValueError):
    pass


def dtype_of(value):
    """The DType a kernel meant by ``value`` (nl dtype, NumPy dtype/type, string)."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        name = value.strip().lower()
        name = _ALIASES.get(name, name)
        if name in BY_NAME:
            return BY_NAME[name]
        raise DTypeError(f"unknown dtype '{value}' (expected one of {', '.join(BY_NAME)})")
    if value is bool:
        return bool_
    if value is int:
        return int32
    if value is float:
        return float32
    # NumPy dtype objects, scalar types and ml_dtypes types: use their name.
    name = getattr(value, "name", None)
    if name is None and isinstance(value, type):
        name = value.__name__
    if name is None:
        inner = getattr(value, "dtype", None)
        if inner is not None and inner is not value:
            return dtype_of(inner)
        raise DTypeError(f"expected a dtype, found {type(value).__name__} {value!r}")
    return dtype_of(str(name))


def scalar_dtype(value):
    """dtype of a Python/NumPy scalar operand: weak Python scalars per the NKI promotion rules."""
    nki_dtype = getattr(value, "nki_dtype", None)
    if nki_dtype is not None:
        return nki_dtype
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int32
    if isinstance(value, float):
        return float32
    return dtype_of(getattr(value, "dtype", float32))


def promote(a, b):
    """Result dtype of an element-wise op on two tiles (NKI type-promotion rules)."""
    if a is b:
        return a
    fa, fb = a.kind == "f", b.kind == "f"
    if fa and not fb:
        return a
    if fb and not fa:
        return b
    if fa and fb:
        pair = {a.name, b.name}
        if pair == {"float16", "bfloat16"}:
            return float32
        if "float32" in pair or "tfloat32" in pair:
            return float32
        if pair <= {"float8_e4m3", "float8_e5m2", "float8_e4m3fn"}:
            return bfloat16
        if "float16" in pair:
            return BY_NAME["float16"]
        if "bfloat16" in pair:
            return bfloat16
        return a if a.bits >= b.bits else b
    # integers (bool counts as the narrowest unsigned)
    if a.kind == b.kind or "b" in (a.kind, b.kind):
        if a.kind == "b":
            return b
        if b.kind == "b":
            return a
        return a if a.itemsize >= b.itemsize else b
    signed, unsigned = (a, b) if a.kind == "i" else (b, a)
    if signed.itemsize > unsigned.itemsize:
        return signed
    if unsigned.itemsize == 4:
        return float32
    return BY_NAME["int16"] if unsigned.itemsize == 1 else BY_NAME["int32"]
