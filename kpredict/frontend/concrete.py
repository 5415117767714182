"""Tensor values known statically: small tensors, built from plain numbers, whose every element is known.

Model builders compute plain Python numbers with tensors: RegNet's per-block widths
(`torch.arange(depth) * w_a + w_0`, `torch.round(torch.log(...))`, `.int().tolist()`), timm's drop-path
rates (`[x.item() for x in torch.linspace(0, rate, depth)]`). The interpreter has no values for tensors,
so those numbers were unknown: widths became nothing, and each `DropPath(r) if r > 0. else Identity()`
a guess. Here such a tensor carries its elements (float32 arithmetic as torch does it on cpu, ints as
int64), and the ops builders use on them give elements again; anything else gives None (unknown), as
before. Only for tensors of at most MAX_ELEMENTS elements; in a call being predicted the ops still
run as ops (the interpreter keeps them), and only the Python values they give are known.

Any rank, not only 1-D: transformers' forwards build their position ids as `arange(T).unsqueeze(0)`
and decide from them, in eager mode, whether the input is several sequences packed in one row
(`(diff(ids, prepend=ids[:, :1] - 1) != 1).cumsum(-1)[:, -1] == 0).all()`, masking_utils'
find_packed_sequence_indices). Whether an attention mask is built at all rests on that answer, so
2-D values (unsqueeze, basic indexing, cumsum and diff along a dim, broadcasting) are followed too.
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
    """A tensor's elements (row-major), its shape and kind ("float", "int" or "bool")."""
    values: tuple[Number, ...]
    shape: tuple[int, ...]
    kind: str

    @property
    def dim(self) -> int:
        return len(self.shape)

    @property
    def dtype(self) -> str:
        return {"float": "float32", "int": "int64", "bool": "bool"}[self.kind]

    def python(self) -> object:
        """`.tolist()`: nested lists, the number for 0-d."""
        def nest(vals: tuple[Number, ...], shape: tuple[int, ...]) -> object:
            if len(shape) <= 1:
                return list(vals) if shape else vals[0]
            step = len(vals) // shape[0] if shape[0] else 0
            return [nest(vals[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]
        return nest(self.values, self.shape)


def _f32(x: float) -> float:
    """x rounded to float32, as a cpu float tensor holds it."""
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def _make(values: list[Number], shape: tuple[int, ...] | int, kind: str) -> Concrete | None:
    """Elements of the given shape (an int: 0 for a 0-d tensor, 1 for 1-d of len(values))."""
    if isinstance(shape, int):
        shape = (len(values),) if shape else ()
    if len(values) > MAX_ELEMENTS or math.prod(shape) != len(values):
        return None
    if kind == "float":
        values = [_f32(float(v)) for v in values]
    elif kind == "int":
        values = [int(v) for v in values]
    else:
        values = [bool(v) for v in values]
    return Concrete(tuple(values), shape, kind)


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


def arange_bounds(pos: list[object], kw: dict[str, object]) -> tuple[object, object, object]:
    """(start, end, step) of `arange(end)`, `arange(start, end[, step])` or `arange(start=0, end=n)`, from
    its positional and keyword arguments as given (the interpreter passes None for what it does not know)."""
    if len(pos) == 1 and "end" not in kw:
        return kw.get("start", 0), pos[0], kw.get("step", 1)
    return (pos[0] if pos else kw.get("start", 0), pos[1] if len(pos) > 1 else kw.get("end"),
            pos[2] if len(pos) > 2 else kw.get("step", 1))


def create(name: str, args: list[object], kwargs: dict[str, object]) -> Concrete | None:
    """torch.arange / linspace / tensor / zeros / ones with plain-number arguments (dtype: its dotted name)."""
    dtype = kwargs.get("dtype")
    dtype = dtype if isinstance(dtype, str) else None
    bounds = arange_bounds(args, {k: kwargs[k] for k in ("start", "end", "step") if k in kwargs}) \
        if name == "arange" and len(args) <= 3 and (args or "end" in kwargs) else None
    if bounds is not None and all(isinstance(a, (int, float)) for a in bounds):
        start, end, step = bounds
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
    return _make(vals, c.shape, kind)


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """torch's broadcast of two shapes, None where they do not broadcast."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and 1 not in (x, y):
            return None
        out.append(y if x == 1 else x)
    return tuple(reversed(out))


def _expanded(c: Concrete, shape: tuple[int, ...]) -> list[Number]:
    """c's elements broadcast to `shape` (row-major)."""
    pad = (1,) * (len(shape) - c.dim) + c.shape
    strides, acc = [], 1
    for d in reversed(pad):
        strides.append(0 if d == 1 else acc)
        acc *= d
    strides.reverse()
    out = []
    for flat in range(math.prod(shape)):
        at, rest = 0, flat
        for d, st in zip(reversed(shape), reversed(strides)):
            at += (rest % d) * st if d else 0
            rest = rest // d if d else 0
        out.append(c.values[at])
    return out


def binary(name: str, a: Concrete | Number, b: Concrete | Number) -> Concrete | None:
    """An elementwise op of two tensors of the same length, or of a tensor and a number."""
    fn = _BINARY.get(name)
    if fn is None:
        return None
    sa = a.shape if isinstance(a, Concrete) else ()
    sb = b.shape if isinstance(b, Concrete) else ()
    shape = _broadcast(sa, sb)
    if shape is None or math.prod(shape) > MAX_ELEMENTS:
        return None
    if (isinstance(a, Concrete) and not a.values) or (isinstance(b, Concrete) and not b.values):
        return None  # an empty tensor (a size 0 met at marker sizes): no values to keep
    xs = _expanded(a, shape) if isinstance(a, Concrete) else [a] * math.prod(shape)
    ys = _expanded(b, shape) if isinstance(b, Concrete) else [b] * math.prod(shape)
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
    return _make(vals, shape, kind)


def reduce(name: str, c: Concrete) -> Concrete | None:
    """max / min / sum / prod / all / any over all elements (no dim argument)."""
    if name in ("all", "any"):  # of an empty tensor too: True / False, as torch answers
        return _make([(all if name == "all" else any)(bool(v) for v in c.values)], 0, "bool")
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
    out = [_make(list(vals), 1, c.kind)]  # torch.unique flattens
    if return_counts:
        out.append(_make([c.values.count(v) for v in vals], 1, "int"))
    return None if any(x is None for x in out) else out  # type: ignore[return-value]


def _lanes(shape: tuple[int, ...], dim: int) -> tuple[int, int, int]:
    """(outer, n, inner): a row-major tensor seen as outer x n x inner around `dim`."""
    return math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1:])


def _dim(c: Concrete, dim: object) -> int | None:
    if not isinstance(dim, int) or isinstance(dim, bool) or not -c.dim <= dim < max(c.dim, 1):
        return None
    return dim % c.dim if c.dim else None


def cat(parts: list[Concrete], dim: int) -> Concrete | None:
    """torch.cat of tensors of one rank along `dim`."""
    if not parts or any(p.dim != parts[0].dim for p in parts) or (d := _dim(parts[0], dim)) is None:
        return None
    if any(p.shape[:d] + p.shape[d + 1:] != parts[0].shape[:d] + parts[0].shape[d + 1:] for p in parts):
        return None
    outer, _, inner = _lanes(parts[0].shape, d)
    vals: list[Number] = []
    for o in range(outer):
        for p in parts:
            n = p.shape[d] * inner
            vals.extend(p.values[o * n:(o + 1) * n])
    kinds = {p.kind for p in parts}
    kind = "float" if "float" in kinds else "int" if "int" in kinds else "bool"
    shape = parts[0].shape[:d] + (sum(p.shape[d] for p in parts),) + parts[0].shape[d + 1:]
    return _make(vals, shape, kind)


def diff(c: Concrete, dim: object = -1, prepend: Concrete | None = None,
         append: Concrete | None = None) -> Concrete | None:
    """torch.diff(c, n=1, dim, prepend, append): the prepended/appended tensors are joined along dim first."""
    if c.dim == 0:
        return None
    whole = cat([x for x in (prepend, c, append) if x is not None], dim if isinstance(dim, int) else -1)
    d = _dim(c, dim)
    if whole is None or d is None:
        return None
    outer, n, inner = _lanes(whole.shape, d)
    if n == 0:
        return None
    v = whole.values
    vals = [v[(o * n + i + 1) * inner + k] - v[(o * n + i) * inner + k]
            for o in range(outer) for i in range(n - 1) for k in range(inner)]
    kind = "int" if whole.kind == "bool" else whole.kind
    if whole.kind == "bool":
        vals = [int(x != 0) for x in vals]  # torch.diff of bools is a logical xor
        kind = "bool"
    return _make(vals, whole.shape[:d] + (n - 1,) + whole.shape[d + 1:], kind)


def cumsum(c: Concrete, dim: object) -> Concrete | None:
    """torch.cumsum along dim (bools and ints sum as int64)."""
    d = _dim(c, dim)
    if d is None:
        return None
    outer, n, inner = _lanes(c.shape, d)
    vals = list(c.values)
    for o in range(outer):
        for k in range(inner):
            acc: Number = 0
            for i in range(n):
                at = (o * n + i) * inner + k
                acc = acc + vals[at]
                vals[at] = acc
    return _make(vals, c.shape, "int" if c.kind == "bool" else c.kind)


def flip(c: Concrete, dims: object) -> Concrete | None:
    """torch.flip(c, dims): each listed dim reversed (timm's NesT counts its blocks per level so)."""
    ds = [dims] if isinstance(dims, int) else dims
    if not isinstance(ds, (list, tuple)) or c.dim == 0:
        return None
    vals = list(c.values)
    for dim in ds:
        d = _dim(c, dim)
        if d is None:
            return None
        outer, n, inner = _lanes(c.shape, d)
        vals = [vals[(o * n + (n - 1 - i)) * inner + k] for o in range(outer) for i in range(n) for k in range(inner)]
    return Concrete(tuple(vals), c.shape, c.kind)


def unsqueeze(c: Concrete, dim: object) -> Concrete | None:
    if not isinstance(dim, int) or isinstance(dim, bool) or not -c.dim - 1 <= dim <= c.dim:
        return None
    d = dim % (c.dim + 1)
    return Concrete(c.values, c.shape[:d] + (1,) + c.shape[d:], c.kind)


def index(c: Concrete, parts: list[object]) -> Concrete | None:
    """Basic indexing: each part an int, a slice of ints, None (a new dim) or Ellipsis."""
    if parts.count(Ellipsis) > 1:
        return None
    used = sum(1 for p in parts if p is not None and p is not Ellipsis)
    if used > c.dim:
        return None
    if Ellipsis in parts:
        at = parts.index(Ellipsis)
        parts = parts[:at] + [slice(None)] * (c.dim - used) + parts[at + 1:]
    parts = parts + [slice(None)] * (c.dim - sum(1 for p in parts if p is not None))
    # per source dim: the indices kept, and whether the dim stays
    picks: list[tuple[list[int], bool]] = []
    shape: list[int] = []
    d = 0
    for p in parts:
        if p is None:
            shape.append(1)
            continue
        n = c.shape[d]
        if isinstance(p, bool) or not isinstance(p, (int, slice)):
            return None
        if isinstance(p, int):
            if not -n <= p < n:
                return None
            picks.append(([p % n], False))
        else:
            if not all(x is None or (isinstance(x, int) and not isinstance(x, bool)) for x in (p.start, p.stop, p.step)):
                return None
            if p.step is not None and p.step <= 0:
                return None
            kept = list(range(n))[p]
            picks.append((kept, True))
            shape.append(len(kept))
        d += 1
    strides, acc = [], 1
    for n in reversed(c.shape):
        strides.append(acc)
        acc *= n
    strides.reverse()
    offsets = [0]
    for (kept, _), st in zip(picks, strides):
        offsets = [o + i * st for o in offsets for i in kept]
    return _make([c.values[o] for o in offsets], tuple(shape), c.kind)


def reshape(c: Concrete, shape: list[object]) -> Concrete | None:
    """view / reshape to a shape of ints (one may be -1)."""
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in shape) or sum(x == -1 for x in shape) > 1:
        return None
    known = math.prod(x for x in shape if x != -1)
    if -1 in shape:
        if known == 0 or len(c.values) % known:
            return None
        shape = [len(c.values) // known if x == -1 else x for x in shape]
    if math.prod(shape) != len(c.values):  # type: ignore[arg-type]
        return None
    return Concrete(c.values, tuple(shape), c.kind)  # type: ignore[arg-type]


def expand(c: Concrete, shape: list[object]) -> Concrete | None:
    """expand to a shape of ints (-1 keeps a dim)."""
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in shape) or len(shape) < c.dim:
        return None
    pad = (1,) * (len(shape) - c.dim) + c.shape
    out = tuple(p if x == -1 else x for x, p in zip(shape, pad))  # type: ignore[misc]
    if any(p not in (1, x) for p, x in zip(pad, out)) or math.prod(out) > MAX_ELEMENTS:
        return None
    return _make(_expanded(c, out), out, c.kind)


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
    return Concrete((c.values[i],), (), c.kind)
