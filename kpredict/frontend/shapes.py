"""Shape, dtype and layout inference for the `shape` / `dtype` rules named in rules/*.toml.

Everything degrades to "unknown" (None) instead of guessing: bytes are only reported when every
shape and dtype involved is known.
"""

from __future__ import annotations

from dataclasses import dataclass

from kpredict.ir import TensorMeta

Shape = tuple[int | None, ...] | None

DTYPE_NAMES = {
    "float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
    "float16": "float16", "half": "float16", "bfloat16": "bfloat16", "int64": "int64",
    "long": "int64", "int32": "int32", "int": "int32", "int16": "int16", "short": "int16",
    "int8": "int8", "uint8": "uint8", "bool": "bool", "complex64": "complex64",
    "cfloat": "complex64", "complex128": "complex128",
}
_FLOAT_RANK = {"float16": 1, "bfloat16": 1, "float32": 2, "float64": 3}
_INT_RANK = {"bool": 0, "uint8": 1, "int8": 1, "int16": 2, "int32": 3, "int64": 4}


@dataclass(frozen=True, slots=True)
class DtypeInfo:
    """torch.finfo / torch.iinfo of a dtype: the limits model code reads (transformers' masks fill with
    `torch.finfo(dtype).min`); eps, tiny and resolution are None for integers."""
    bits: int
    min: float | int
    max: float | int
    eps: float | None = None
    tiny: float | None = None
    resolution: float | None = None


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    """`t.device` of a tensor on the target: `.type`, `.index`, and str() as torch writes it ("cpu",
    "cuda:0"), which model code uses as a cache key (timm's attention-bias caches: str(x.device))."""
    type: str
    index: int | None = None

    @classmethod
    def of(cls, target: str) -> DeviceInfo:
        return cls("cuda", 0) if target == "cuda" else cls(target)

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"


# IEEE 754 binary formats: (mantissa bits, largest exponent, bits) [SRC torch/csrc/TypeInfo.cpp via c10's
# std::numeric_limits]; float32 max = (2 - 2**-23) * 2**127 = 3.4028234663852886e38
_FLOAT_FORMATS = {"float16": (10, 15, 16), "bfloat16": (7, 127, 16), "float32": (23, 127, 32),
                  "float64": (52, 1023, 64)}
_INT_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 8}


def dtype_info(dtype: str) -> DtypeInfo | None:
    """finfo of a floating dtype or iinfo of an integer one (by its canonical name), None for others."""
    if dtype in _FLOAT_FORMATS:
        mant, emax, bits = _FLOAT_FORMATS[dtype]
        top = (2 - 2.0 ** -mant) * 2.0 ** emax
        digits = int(mant * 0.30102999566398120)  # decimal digits of precision, as numpy's finfo
        return DtypeInfo(bits, -top, top, 2.0 ** -mant, 2.0 ** (1 - emax), 10.0 ** -digits)
    if dtype in _INT_BITS:
        bits = _INT_BITS[dtype]
        return DtypeInfo(bits, 0, 2 ** bits - 1) if dtype == "uint8" else DtypeInfo(bits, -2 ** (bits - 1), 2 ** (bits - 1) - 1)
    return None


# Python's types as dtypes, as torch maps them (`torch.ones(3, dtype=bool)`: torch.bool; float: float64)
_PY_DTYPES = {"builtins.bool": "bool", "builtins.int": "int64", "builtins.float": "float64",
              "builtins.complex": "complex128"}


def dtype_from_dotted(dotted: str) -> str | None:
    """'torch.float16' -> 'float16'; 'builtins.bool' (dtype=bool) -> 'bool'."""
    if dotted.startswith("torch."):
        return DTYPE_NAMES.get(dotted[6:])
    return _PY_DTYPES.get(dotted)


def promote(dtypes: list[str | None], scalars: list[object] = ()) -> str | None:
    """torch's type promotion for tensors of the same category, plus Python scalars."""
    if not dtypes or any(d is None for d in dtypes):
        return None
    floats = [d for d in dtypes if d in _FLOAT_RANK]
    if floats:
        if len(set(floats)) == 1:
            return floats[0]
        if set(floats) == {"float16", "bfloat16"}:
            return "float32"
        return max(floats, key=lambda d: _FLOAT_RANK[d])
    if any(isinstance(s, float) for s in scalars):
        return "float32"
    ints = [d for d in dtypes if d in _INT_RANK]
    if ints and len(ints) == len(dtypes):
        best = max(ints, key=lambda d: _INT_RANK[d])
        if best == "bool" and any(isinstance(s, int) and not isinstance(s, bool) for s in scalars):
            return "int64"
        return best
    return dtypes[0]


# Marker sizes kpredict.symbolic is watching (None: not watching, the normal case), and the fixed sizes
# each met where torch requires equal sizes (a matmul's inner dims, a Linear's input width, broadcasting):
# a named dim that meets a weight's width is that width (`C` meets `n_embd` = 64), not a free size.
WATCH: frozenset[int] | None = None
# the meetings noted while each call summary being recorded runs (frontend/summaries.py): its replay
# notes them again, since a replayed call runs no shape rule
RECORDING: list[list[tuple[int, int]]] = []
MET: dict[int, set[int]] = {}


def meet(a: int | None, b: int | None) -> None:
    """Note that sizes a and b must be equal, when one is a watched marker (the other fixed or a marker)."""
    if WATCH is None or a is None or b is None or a == b or a == 1 or b == 1:
        return
    if a in WATCH:
        MET.setdefault(a, set()).add(b)
    elif 2 * a in WATCH and b not in WATCH:
        MET.setdefault(2 * a, set()).add(2 * b)  # half a marker (`cos[..., : C // 2]`) meets 32: C is 64
    if b in WATCH:
        MET.setdefault(b, set()).add(a)  # two markers that meet: two names for one size (symbolic.py)
    elif 2 * b in WATCH and a not in WATCH:
        MET.setdefault(2 * b, set()).add(2 * a)
    if (a in WATCH or b in WATCH or 2 * a in WATCH or 2 * b in WATCH) and RECORDING:
        for r in RECORDING:
            r.append((a, b))


def broadcast(shapes: list[Shape]) -> Shape:
    if any(s is None for s in shapes):
        return None
    if WATCH is not None:
        _meet_broadcast(shapes)
    rank = max((len(s) for s in shapes), default=0)  # type: ignore[arg-type]
    out: list[int | None] = []
    for i in range(rank):
        dim: int | None = 1
        for s in shapes:
            j = i - (rank - len(s))  # type: ignore[arg-type]
            if j < 0:
                continue
            d = s[j]  # type: ignore[index]
            if d is None:
                dim = None if dim in (1, None) else dim
            elif d != 1:
                dim = d
        out.append(dim)
    return tuple(out)


def _meet_broadcast(shapes: list[Shape]) -> None:
    rank = max((len(s) for s in shapes), default=0)  # type: ignore[arg-type]
    for i in range(1, rank + 1):
        sizes = [s[-i] for s in shapes if len(s) >= i]  # type: ignore[arg-type, index]
        for x in sizes[1:]:
            meet(sizes[0], x)


def norm_dim(d: int, rank: int) -> int:
    return d + rank if d < 0 else d


@dataclass(frozen=True, slots=True)
class ReduceInfo:
    out_shape: Shape
    reduce_len: int | None  # elements reduced per output
    axis: str  # inner | outer | all | unknown | window (a pooling op: reduce_len is the window's size)


def reduce_shape(shape: Shape, dims: list[int] | None, keepdim: bool) -> ReduceInfo:
    if shape is None:
        return ReduceInfo(None, None, "unknown" if dims is not None else "all")
    rank = len(shape)
    if dims is None or rank == 0:
        n = 1
        for d in shape:
            n = None if (n is None or d is None) else n * d
        return ReduceInfo(tuple(1 for _ in shape) if keepdim else (), n, "all")
    ds = sorted({norm_dim(d, rank) for d in dims})
    if any(d < 0 or d >= rank for d in ds):
        return ReduceInfo(None, None, "unknown")
    red = 1
    for d in ds:
        red = None if (red is None or shape[d] is None) else red * shape[d]
    out = [1 if i in ds else s for i, s in enumerate(shape)] if keepdim else [s for i, s in enumerate(shape) if i not in ds]
    inner = ds == list(range(rank - len(ds), rank))
    if len(ds) == rank:
        axis = "all"
    else:
        axis = "inner" if inner else "outer"
    return ReduceInfo(tuple(out), red, axis)


def matmul_shape(a: Shape, b: Shape) -> Shape:
    if a is None or b is None or not a or not b:
        return None  # matmul of a 0-d tensor is an error in torch: nothing to predict
    if WATCH is not None:
        meet(a[-1], b[-2] if len(b) >= 2 else b[0])
    if len(a) == 1 and len(b) == 1:
        return ()
    if len(a) == 1:
        return b[:-2] + b[-1:]
    if len(b) == 1:
        return a[:-1]
    batch = broadcast([a[:-2], b[:-2]])
    if batch is None:
        return None
    return batch + (a[-2], b[-1])


def view_shape(shape: Shape, sizes: list[int | None]) -> Shape:
    if any(s is None for s in sizes):
        return tuple(sizes) if sizes.count(None) <= 0 else None
    if -1 in sizes:
        if shape is None or any(d is None for d in shape):
            return None
        total = 1
        for d in shape:
            total *= d  # type: ignore[operator]
        known = 1
        for s in sizes:
            if s != -1:
                known *= s  # type: ignore[operator]
        if known == 0:
            return None
        return tuple(total // known if s == -1 else s for s in sizes)
    return tuple(sizes)


def transpose_shape(shape: Shape, d0: int, d1: int) -> Shape:
    if shape is None:
        return None
    s = list(shape)
    if not s:
        return shape
    i, j = norm_dim(d0, len(s)), norm_dim(d1, len(s))
    if not (0 <= i < len(s) and 0 <= j < len(s)):
        return None
    s[i], s[j] = s[j], s[i]
    return tuple(s)


def permute_shape(shape: Shape, dims: list[int]) -> Shape:
    if shape is None or len(dims) != len(shape) or any(not -len(shape) <= d < len(shape) for d in dims):
        return None  # unknown, or a dim out of range (an error in torch; nothing to predict)
    return tuple(shape[norm_dim(d, len(shape))] for d in dims)


def unsqueeze_shape(shape: Shape, d: int) -> Shape:
    if shape is None:
        return None
    s = list(shape)
    d = d + len(s) + 1 if d < 0 else d
    s.insert(d, 1)
    return tuple(s)


def squeeze_shape(shape: Shape, d: int | None) -> Shape:
    if shape is None:
        return None
    if d is None:
        if any(x is None for x in shape):
            return None
        return tuple(x for x in shape if x != 1)
    d = norm_dim(d, len(shape))
    return tuple(x for i, x in enumerate(shape) if not (i == d and x == 1))


def flatten_shape(shape: Shape, start: int = 0, end: int = -1) -> Shape:
    if shape is None:
        return None
    if not shape:
        return (1,)
    s, e = norm_dim(start, len(shape)), norm_dim(end, len(shape))
    mid = 1
    for d in shape[s : e + 1]:
        mid = None if (mid is None or d is None) else mid * d
    return shape[:s] + (mid,) + shape[e + 1 :]


def expand_shape(shape: Shape, sizes: list[int | None]) -> Shape:
    if shape is None:
        return None if any(s in (-1, None) for s in sizes) else tuple(sizes)
    out = []
    off = len(sizes) - len(shape)
    for i, s in enumerate(sizes):
        if s == -1:
            out.append(shape[i - off] if i - off >= 0 else None)
        else:
            out.append(s)
    return tuple(out)


def cat_shape(shapes: list[Shape], dim: int) -> Shape:
    # ATen's cat skips 1-d empty tensors (cat_should_skip_tensor): a cache that starts as torch.empty(0)
    kept = [s for s in shapes if s != (0,)]
    shapes = kept or shapes[:1]
    if not shapes or any(s is None for s in shapes):
        return None
    rank = len(shapes[0])  # type: ignore[arg-type]
    if rank == 0:
        return None
    d = norm_dim(dim, rank)
    if not 0 <= d < rank:
        return None  # a dim out of range is an error in torch: nothing to predict
    total = 0
    for s in shapes:
        if len(s) != rank or s[d] is None:  # type: ignore[arg-type, index]
            return None
        total += s[d]  # type: ignore[index, operator]
    out = list(shapes[0])  # type: ignore[arg-type]
    out[d] = total
    return tuple(out)


def stack_shape(shapes: list[Shape], dim: int) -> Shape:
    if not shapes or any(s is None for s in shapes):
        return None
    first = list(shapes[0])  # type: ignore[arg-type]
    d = dim + len(first) + 1 if dim < 0 else dim
    first.insert(d, len(shapes))
    return tuple(first)


def slice_dim(size: int | None, start: int | None, stop: int | None, step: int | None) -> int | None:
    """A slice's length; None for an unknown size or a negative one (a size made at marker values, such as
    `H - 2 * k` in a rerun, that no real tensor has: edgetam_video crashed on it)."""
    if size is None or size < 0:
        return None
    return len(range(*slice(start, stop, step).indices(size)))


# one item of an index expression, as advanced_index_shape reads it: ("int",), ("none",), ("ellipsis",),
# ("slice", slice), ("tensor", index shape)
IndexItem = tuple


def advanced_index_shape(shape: Shape, items: list[IndexItem]) -> Shape:
    """The shape of `x[items]` with integer index tensors among the items, as torch computes it: integers
    select first (torch applies them as views), slices and None keep or add dims, and the index tensors
    broadcast to one shape, put where the first stood when they are adjacent, else in front (numpy's
    rule). None for an unknown size, a boolean mask (its size is data) or a malformed index."""
    if shape is None or () in items or sum(1 for it in items if it[0] == "ellipsis") > 1:
        return None
    consumed = sum(1 for it in items if it[0] in ("int", "slice", "tensor"))
    if consumed > len(shape):
        return None
    fill = [("slice", slice(None))] * (len(shape) - consumed)
    at = next((k for k, it in enumerate(items) if it[0] == "ellipsis"), len(items))
    items = items[:at] + fill + items[at + 1:]
    adv = object()
    dims: list[object] = []
    index_shapes: list[Shape] = []
    dim = 0
    for it in items:
        if it[0] == "none":
            dims.append(1)
        elif it[0] == "int":
            dim += 1
        elif it[0] == "slice":
            sl = it[1]
            dims.append(slice_dim(shape[dim], sl.start, sl.stop, sl.step))
            dim += 1
        else:
            dims.append(adv)
            index_shapes.append(it[1])
            dim += 1
    b = broadcast(index_shapes)
    if b is None or not index_shapes:
        return None
    where = [k for k, d in enumerate(dims) if d is adv]
    if where == list(range(where[0], where[-1] + 1)):
        out = dims[:where[0]] + list(b) + dims[where[-1] + 1:]
    else:
        out = list(b) + [d for d in dims if d is not adv]
    return tuple(out)  # type: ignore[arg-type]


def meta(shape: Shape, dtype: str | None, device: str | None = None) -> TensorMeta:
    return TensorMeta(shape=shape, dtype=dtype, device=device)
