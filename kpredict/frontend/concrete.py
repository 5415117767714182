"""Tensor values known statically: small 1-D tensors, built from plain numbers, whose every element is known.

Model builders compute plain Python numbers with tensors: RegNet's per-block widths
(`torch.arange(depth) * w_a + w_0`, `torch.round(torch.log(...))`, `.int().tolist()`), timm's drop-path
rates (`[x.item() for x in torch.linspace(0, rate, depth)]`). The interpreter has no values for tensors,
so those numbers were unknown: widths became nothing, and each `DropPath(r) if r > 0. else Identity()`
a guess. Here such a tensor carries its elements (float32 arithmetic as torch does it on cpu, ints as
int64), and the ops builders use on them give elements again; anything else gives None (unknown), as
before. Only for tensors of at most MAX_ELEMENTS elements; in a call being predicted the ops still
run as ops (the interpreter keeps them), and only the Python values they give are known.
"""

from __future__ import annotations

import math
import operator
import struct
from collections.abc import Callable
from dataclasses import dataclass

MAX_ELEMENTS = 4096
Number = int | float | bool


@dataclass(frozen=True, slots=True)
class Concrete:
    """A 0-d or 1-d tensor's elements and kind ("float", "int" or "bool")."""
    values: tuple[Number, ...]
    dim: int  # 0 or 1
    kind: str

    @property
    def dtype(self) -> str:
        return {"float": "float32", "int": "int64", "bool": "bool"}[self.kind]

    def python(self) -> object:
        """`.tolist()`: a list for 1-d, the number for 0-d."""
        return list(self.values) if self.dim else self.values[0]


def _f32(x: float) -> float:
    """x rounded to float32, as a cpu float tensor holds it."""
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def _make(values: list[Number], dim: int, kind: str) -> Concrete | None:
    if len(values) > MAX_ELEMENTS:
        return None
    if kind == "float":
        values = [_f32(float(v)) for v in values]
    elif kind == "int":
        values = [int(v) for v in values]
    else:
        values = [bool(v) for v in values]
    return Concrete(tuple(values), dim, kind)


def _kind_of(vals: list[object], dtype: str | None) -> str | None:
    if dtype:
        d = dtype.rsplit(".", 1)[-1]
        if d.startswith("float") or d in ("half", "double", "bfloat16"):
            return "float"
        if d.startswith("int") or d.startswith("uint") or d == "long":
            return "int"
        if d == "bool":
            return "bool"
        return None
    if all(isinstance(v, bool) for v in vals):
        return "bool"
    if all(isinstance(v, int) for v in vals):
        return "int"
    return "float" if all(isinstance(v, (int, float)) for v in vals) else None


def create(name: str, args: list[object], kwargs: dict[str, object]) -> Concrete | None:
    """torch.arange / linspace / tensor / zeros / ones with plain-number arguments (dtype: its dotted name)."""
    dtype = kwargs.get("dtype")
    dtype = dtype if isinstance(dtype, str) else None
    if name == "arange" and 1 <= len(args) <= 3 and all(isinstance(a, (int, float)) for a in args):
        start, end, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
        if step == 0:
            return None
        n = max(0, math.ceil((end - start) / step))
        if n > MAX_ELEMENTS:
            return None
        kind = _kind_of([start, end, step], dtype)
        return _make([start + i * step for i in range(n)], 1, kind) if kind else None
    if name == "linspace" and len(args) == 3 and all(isinstance(a, (int, float)) for a in args):
        start, end, n = args
        if not isinstance(n, int) or not 0 <= n <= MAX_ELEMENTS:
            return None
        step = (end - start) / (n - 1) if n > 1 else 0.0
        # torch fills the first half from the start and the second half back from the end
        vals = [start + i * step if i < n // 2 else end - (n - 1 - i) * step for i in range(n)]
        return _make(vals, 1, _kind_of([0.0], dtype) or "float")
    if name in ("tensor", "as_tensor") and len(args) == 1:
        v = args[0]
        if isinstance(v, (int, float)):
            kind = _kind_of([v], dtype)
            return _make([v], 0, kind) if kind else None
        if isinstance(v, (list, tuple)) and all(isinstance(x, (int, float)) for x in v):
            kind = _kind_of(list(v), dtype) if v or dtype else "float"
            return _make(list(v), 1, kind) if kind else None
    if name in ("zeros", "ones") and len(args) == 1 and isinstance(args[0], int) and 0 <= args[0] <= MAX_ELEMENTS:
        kind = _kind_of([0.0], dtype) or "float"
        return _make([0 if name == "zeros" else 1] * args[0], 1, kind)
    return None


_UNARY: dict[str, Callable[[float], Number]] = {
    "round": round, "log": math.log, "exp": math.exp, "sqrt": math.sqrt, "floor": math.floor,
    "ceil": math.ceil, "abs": abs, "neg": operator.neg, "log2": math.log2, "trunc": math.trunc,
}
def _pow(x: Number, y: Number) -> Number:
    """x ** y, refused (OverflowError: the value is not known) where an integer result passes int64:
    torch wraps it there, and Python's exact big integers cost a second each (1 of 47 s on 60 files)."""
    if isinstance(x, int) and isinstance(y, int) and y > 0 and abs(x) > 1 and y * math.log2(abs(x)) >= 63:
        raise OverflowError("past int64")
    return operator.pow(x, y)


_BINARY: dict[str, Callable[[Number, Number], Number]] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
    "true_divide": operator.truediv, "divide": operator.truediv, "floor_divide": operator.floordiv,
    "pow": _pow, "remainder": operator.mod, "maximum": max, "minimum": min,
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
}
_COMPARE = {"eq", "ne", "lt", "le", "gt", "ge"}
CASTS = {"int": "int", "long": "int", "float": "float", "double": "float", "bool": "bool"}


def unary(name: str, c: Concrete) -> Concrete | None:
    fn = _UNARY.get(name)
    if fn is None:
        return None
    try:
        vals = [fn(v) for v in c.values]
    except (ValueError, OverflowError):
        return None
    kind = c.kind if name not in ("log", "exp", "sqrt", "log2") else "float"
    if name in ("round", "floor", "ceil", "trunc") and c.kind == "float":
        kind = "float"  # torch.round of a float tensor stays float
    return _make(vals, c.dim, kind)


def binary(name: str, a: Concrete | Number, b: Concrete | Number) -> Concrete | None:
    """An elementwise op of two tensors of the same length, or of a tensor and a number."""
    fn = _BINARY.get(name)
    if fn is None:
        return None
    ca, cb = isinstance(a, Concrete), isinstance(b, Concrete)
    va = a.values if isinstance(a, Concrete) else None
    vb = b.values if isinstance(b, Concrete) else None
    if va is not None and vb is not None and len(va) != len(vb) and 1 not in (len(va), len(vb)):
        return None
    if (va is not None and not va) or (vb is not None and not vb):
        return None  # an empty tensor (a size 0 met at marker sizes): no values to keep
    n = max(len(va) if va is not None else 1, len(vb) if vb is not None else 1)
    xs = [va[i % len(va)] for i in range(n)] if va is not None else [a] * n
    ys = [vb[i % len(vb)] for i in range(n)] if vb is not None else [b] * n
    kinds = [x.kind for x in (a, b) if isinstance(x, Concrete)]
    plain = [x for x in (a, b) if not isinstance(x, Concrete)]
    if name in _COMPARE:
        kind = "bool"
    elif name in ("div", "true_divide", "divide") or "float" in kinds or any(isinstance(p, float) for p in plain):
        kind = "float"
    else:
        kind = "int" if "int" in kinds or plain else "bool"
    try:
        vals = [fn(x, y) for x, y in zip(xs, ys)]
    except (ZeroDivisionError, OverflowError, ValueError, TypeError):
        return None
    dim = max(x.dim for x in (a, b) if isinstance(x, Concrete)) if (ca or cb) else 0
    return _make(vals, dim, kind)


def reduce(name: str, c: Concrete) -> Concrete | None:
    """max / min / sum / prod over all elements (no dim argument)."""
    if not c.values:
        return None
    if name in ("max", "min", "amax", "amin"):
        v: Number = (max if "max" in name else min)(c.values)
    elif name == "sum":
        v = sum(c.values)
    elif name == "prod":
        v = math.prod(c.values)
    else:
        return None
    return _make([v], 0, "int" if c.kind == "bool" else c.kind)


def unique(c: Concrete, return_counts: bool) -> list[Concrete] | None:
    """torch.unique (sorted): the distinct elements, and with return_counts their counts."""
    vals = sorted(set(c.values))
    out = [_make(list(vals), 1, c.kind)]
    if return_counts:
        out.append(_make([c.values.count(v) for v in vals], 1, "int"))
    return None if any(x is None for x in out) else out  # type: ignore[return-value]


def diff(c: Concrete) -> Concrete | None:
    if c.dim != 1:
        return None
    return _make([b - a for a, b in zip(c.values, c.values[1:])], 1, "int" if c.kind == "bool" else c.kind)


def split(c: Concrete, sizes: list[int]) -> list[Concrete] | None:
    """`t.split([n0, n1, ...])` of a 1-d tensor."""
    if c.dim != 1 or sum(sizes) != len(c.values):
        return None
    out, at = [], 0
    for n in sizes:
        part = _make(list(c.values[at:at + n]), 1, c.kind)
        if part is None:
            return None
        out.append(part)
        at += n
    return out


def item(c: Concrete, i: int) -> Concrete:
    """The i-th element of a 1-d tensor, as a 0-d one."""
    return Concrete((c.values[i],), 0, c.kind)
