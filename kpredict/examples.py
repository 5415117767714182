"""Example inputs and constructor arguments: `a=randn(1_000_000) n=128 config=GPTConfig(n_layer=2)`.

Layer: project settings and inputs (the analysis reads them from comments and pyproject.toml; verify
builds them with torch in kpredict/verify/examples.py).

Users write values on the command line (`--example`, `--init`), in a `# kpredict: example ...` or
`# kpredict: init ...` comment, or in pyproject.toml: `name=expr` items (`split_items`), each a Python
expression of the analyzed file's namespace. The static side evaluates them with the abstract
interpreter (kpredict/frontend/entry.py `input_values`), never by importing the file; verify's child,
the only place user code runs, evaluates them with `eval` in the imported module.

A small part of that language is read here without either: literals, a fixed set of torch
constructors (`randn(8)`, `torch.randint(0, 100, (2, 16))`, `zeros(..., dtype=...)`, `empty`) and
`ctor(...) > number`. Both sides take this fast path first (`parse_value`): `static_meta()` gives
shapes and dtypes without torch, kpredict.verify.examples.build() makes seeded torch tensors.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field
from typing import Any

from kpredict.ir import DTYPE_SIZES, TensorMeta

CONSTRUCTORS: tuple[str, ...] = ("randn", "rand", "randint", "zeros", "ones", "arange", "full", "empty")
DTYPES: frozenset[str] = frozenset(DTYPE_SIZES)
DTYPE_ALIASES: dict[str, str] = {
    "float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
    "short": "int16", "cfloat": "complex64", "cdouble": "complex128",
}
_COMPARE_OPS: dict[type, str] = {ast.Gt: "gt", ast.Lt: "lt", ast.GtE: "ge", ast.LtE: "le"}
_FLOATS = frozenset({"float32", "float64", "float16", "bfloat16", "complex64", "complex128",
                     "float8_e4m3fn", "float8_e5m2"})
# `name=` at the start of an item: a new item begins there (only at bracket depth 0).
_ITEM_START = re.compile(r"([A-Za-z_]\w*)\s*=(?!=)")


class ExampleError(ValueError):
    """An example string that cannot be understood; the message is one line, meant for users."""


@dataclass(frozen=True)
class TensorSpec:
    """One example tensor: a constructor call, optionally compared with a number (a bool mask)."""

    ctor: str
    shape: tuple[int, ...]
    dtype: str
    params: tuple[tuple[str, Any], ...] = ()  # constructor specifics: low/high, start/end/step, fill
    compare: tuple[str, float] | None = None  # ("gt", 0.5) for `rand(4, 4) > 0.5`
    requires_grad: bool = False

    @property
    def meta(self) -> TensorMeta:
        return TensorMeta(shape=self.shape, dtype="bool" if self.compare else self.dtype)


@dataclass(frozen=True)
class ExampleSpec:
    """Named example values in the order written; values are TensorSpec or plain Python values."""

    items: tuple[tuple[str, Any], ...] = ()
    sources: tuple[tuple[str, str], ...] = ()  # (name, value as written), to print and re-parse

    @property
    def text(self) -> str:
        return " ".join(f"{n}={v}" for n, v in self.sources)

    def names(self) -> list[str]:
        return [n for n, _ in self.items]

    def as_dict(self) -> dict[str, Any]:
        return dict(self.items)

    def merged(self, other: ExampleSpec) -> ExampleSpec:
        """`other`'s values win (the command line overrides a comment, a comment pyproject.toml)."""
        items, sources = dict(self.items), dict(self.sources)
        items.update(other.items)
        sources.update(other.sources)
        return ExampleSpec(tuple(items.items()), tuple(sources.items()))


@dataclass
class _Call:
    name: str
    args: list[Any] = field(default_factory=list)
    kwargs: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# parsing


def split_items(text: str) -> list[tuple[str, str]]:
    """'a=randn(8) b=rand(2, 2) > 0.5' -> [('a', 'randn(8)'), ('b', 'rand(2, 2) > 0.5')]."""
    text = text.strip()
    if not text:
        return []
    depth = 0
    starts: list[tuple[int, int, str]] = []  # (item start, value start, name)
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                raise ExampleError(f"unbalanced ')' in {text!r}")
        elif ch in "\"'":
            j = text.find(ch, i + 1)
            if j < 0:
                raise ExampleError(f"unterminated string in {text!r}")
            i = j
        elif depth == 0:
            m = _ITEM_START.match(text, i)
            if m and (i == 0 or text[i - 1] in " \t\n,;"):
                starts.append((i, m.end(), m.group(1)))
                i = m.end()
                continue
        i += 1
    if depth != 0:
        raise ExampleError(f"unbalanced '(' in {text!r}")
    if not starts or text[: starts[0][0]].strip(" \t\n,;"):
        raise ExampleError(f"expected name=value items, got {text!r}")
    items = []
    for k, (_s, vstart, name) in enumerate(starts):
        vend = starts[k + 1][0] if k + 1 < len(starts) else len(text)
        value = text[vstart:vend].strip().rstrip(",;").strip()
        if not value:
            raise ExampleError(f"{name}= has no value")
        items.append((name, value))
    return items


def parse_examples(text: str) -> ExampleSpec:
    """Parse an example string; raises ExampleError with a one-line message on bad input."""
    items: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for name, value in split_items(text):
        if name in items:
            raise ExampleError(f"{name} is given twice")
        items[name] = parse_value(value, name)
        sources[name] = value
    return ExampleSpec(tuple(items.items()), tuple(sources.items()))


def parse_value(src: str, name: str = "value") -> Any:
    """One value: a literal, a tuple/list of literals, a constructor call, or `ctor(...) > number`."""
    try:
        tree = ast.parse(src.replace("\n", " "), mode="eval")
    except SyntaxError:
        raise ExampleError(f"{name}: cannot parse {src!r}") from None
    return _value(tree.body, name)


def _value(node: ast.AST, name: str) -> Any:
    if isinstance(node, ast.Call):
        return _tensor(_call(node, name), name)
    if isinstance(node, ast.Compare):
        if len(node.ops) != 1 or type(node.ops[0]) not in _COMPARE_OPS:
            raise ExampleError(f"{name}: only one comparison (> < >= <=) with a number is allowed")
        left = _value(node.left, name)
        right = _literal(node.comparators[0], name)
        if not isinstance(left, TensorSpec) or left.compare or not isinstance(right, (int, float)):
            raise ExampleError(f"{name}: a comparison must be constructor(...) > number")
        return TensorSpec(left.ctor, left.shape, left.dtype, left.params,
                          (_COMPARE_OPS[type(node.ops[0])], float(right)), left.requires_grad)
    return _literal(node, name)


def _literal(node: ast.AST, name: str) -> Any:
    """Python literals only: numbers, bools, None, strings, tuples/lists of those, dtype names."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool, str, type(None))):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _literal(node.operand, name)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, (ast.Tuple, ast.List)):
        vals = [_literal(e, name) for e in node.elts]
        return tuple(vals) if isinstance(node, ast.Tuple) else vals
    dt = _dtype_name(node)
    if dt is not None:
        return _Dtype(dt)
    if isinstance(node, ast.Name) and node.id in ("inf", "nan"):
        return float(node.id)
    raise ExampleError(f"{name}: {ast.unparse(node)!r} is not allowed here (literals and "
                       f"{', '.join(CONSTRUCTORS)} only)")


@dataclass(frozen=True)
class _Dtype:
    name: str


def _dtype_name(node: ast.AST) -> str | None:
    """`float16`, `torch.float16` or `"float16"` -> 'float16'."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "torch":
        ident = node.attr
    elif isinstance(node, ast.Name):
        ident = node.id
    else:
        return None
    ident = DTYPE_ALIASES.get(ident, ident)
    return ident if ident in DTYPES else None


def _call(node: ast.Call, name: str) -> _Call:
    f = node.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "torch":
        fname = f.attr
    elif isinstance(f, ast.Name):
        fname = f.id
    else:
        raise ExampleError(f"{name}: only {', '.join(CONSTRUCTORS)} can be called")
    if fname not in CONSTRUCTORS:
        raise ExampleError(f"{name}: unknown constructor {fname!r} (known: {', '.join(CONSTRUCTORS)})")
    call = _Call(fname)
    for a in node.args:
        if isinstance(a, ast.Starred):
            raise ExampleError(f"{name}: *args are not allowed")
        call.args.append(_literal(a, name))
    for kw in node.keywords:
        if kw.arg is None:
            raise ExampleError(f"{name}: **kwargs are not allowed")
        call.kwargs[kw.arg] = _literal(kw.value, name)
    return call


def tensor_spec(ctor: str, args: list[Any], kwargs: dict[str, Any], name: str = "value") -> TensorSpec:
    """A constructor call whose arguments are already Python values (the static side evaluates them
    with the interpreter: `randint(0, V, (B, T))` with V a constant of the file); dtypes are given as
    their names (`dtype="float16"`). Raises ExampleError like parse_value."""
    if ctor not in CONSTRUCTORS:
        raise ExampleError(f"{name}: unknown constructor {ctor!r} (known: {', '.join(CONSTRUCTORS)})")
    kw = dict(kwargs)
    if isinstance(kw.get("dtype"), str):
        dt = DTYPE_ALIASES.get(kw["dtype"], kw["dtype"])
        if dt not in DTYPES:
            raise ExampleError(f"{name}: unknown dtype {kw['dtype']!r} (known: {', '.join(sorted(DTYPES))})")
        kw["dtype"] = _Dtype(dt)
    return _tensor(_Call(ctor, list(args), kw), name)


def merged_text(*texts: str | None) -> str:
    """`name=expr` items of several texts, a later text's item replacing an earlier one of the same
    name (the command line overrides a comment, a comment pyproject.toml); raises ExampleError."""
    items: dict[str, str] = {}
    for text in texts:
        for n, v in split_items(text or ""):
            items[n] = v
    return " ".join(f"{n}={v}" for n, v in items.items())


def _int(v: Any, name: str, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ExampleError(f"{name}: {what} must be an integer, got {v!r}")
    if v < 0:
        raise ExampleError(f"{name}: {what} must not be negative, got {v}")
    return v


def _shape(args: list[Any], name: str) -> tuple[int, ...]:
    """randn(2, 3) / randn((2, 3)) / randn([2, 3]) -> (2, 3)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = list(args[0])
    return tuple(_int(a, name, "a size") for a in args)


def _tensor(call: _Call, name: str) -> TensorSpec:
    kw = dict(call.kwargs)
    dtype_v = kw.pop("dtype", None)
    if dtype_v is not None and not isinstance(dtype_v, _Dtype):
        if isinstance(dtype_v, str) and _dtype_name(ast.Name(id=dtype_v)) is not None:
            dtype_v = _Dtype(_dtype_name(ast.Name(id=dtype_v)) or "")
        else:
            raise ExampleError(f"{name}: unknown dtype {dtype_v!r} (known: {', '.join(sorted(DTYPES))})")
    dtype = dtype_v.name if dtype_v else None
    requires_grad = kw.pop("requires_grad", False)
    if not isinstance(requires_grad, bool):
        raise ExampleError(f"{name}: requires_grad must be True or False")
    if "device" in kw:
        raise ExampleError(f"{name}: device= is not allowed here; use --device")
    params: dict[str, Any] = {}
    args = list(call.args)
    if call.name in ("randn", "rand", "zeros", "ones", "empty"):
        if "size" in kw:
            args = [kw.pop("size")] + args
        shape = _shape(args, name)
        default = "float32"
        if call.name in ("randn", "rand") and dtype and dtype not in _FLOATS:
            raise ExampleError(f"{name}: {call.name} needs a floating dtype, got {dtype}")
    elif call.name == "randint":
        size = kw.pop("size", None)
        if size is None:
            if not args or not isinstance(args[-1], (tuple, list)):
                raise ExampleError(f"{name}: randint needs a size tuple: randint(low, high, (n, ...))")
            size = args.pop()
        if "low" in kw:
            args = [kw.pop("low")] + args
        if "high" in kw:
            args.append(kw.pop("high"))
        if len(args) == 1:
            low, high = 0, args[0]
        elif len(args) == 2:
            low, high = args
        else:
            raise ExampleError(f"{name}: randint takes (high, size) or (low, high, size)")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (low, high)) or high <= low:
            raise ExampleError(f"{name}: randint needs integers low < high, got {low!r}, {high!r}")
        shape = _shape([size], name)
        params = {"low": low, "high": high}
        default = "int64"
    elif call.name == "arange":
        for k in ("start", "end", "step"):
            if k in kw:
                params[k] = kw.pop(k)
        vals = args + [params[k] for k in ("start", "end", "step") if k in params]
        if not 1 <= len(vals) <= 3 or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            raise ExampleError(f"{name}: arange takes (end), (start, end) or (start, end, step) numbers")
        start, end, step = (0, vals[0], 1) if len(vals) == 1 else (vals[0], vals[1], vals[2] if len(vals) == 3 else 1)
        if step == 0:
            raise ExampleError(f"{name}: arange step must not be 0")
        shape = (max(0, math.ceil((end - start) / step)),)
        params = {"start": start, "end": end, "step": step}
        default = "int64" if all(isinstance(v, int) for v in (start, end, step)) else "float32"
    else:  # full
        if "fill_value" in kw:
            args.append(kw.pop("fill_value"))
        if "size" in kw:
            args = [kw.pop("size")] + args
        if len(args) != 2 or not isinstance(args[0], (tuple, list)):
            raise ExampleError(f"{name}: full takes (size_tuple, fill_value)")
        fill = args[1]
        if not isinstance(fill, (int, float, bool)):
            raise ExampleError(f"{name}: full needs a number to fill with, got {fill!r}")
        shape = _shape([args[0]], name)
        params = {"fill": fill}
        default = "bool" if isinstance(fill, bool) else "int64" if isinstance(fill, int) else "float32"
    if kw:
        raise ExampleError(f"{name}: {call.name} does not take {', '.join(sorted(kw))}=")
    return TensorSpec(call.name, shape, dtype or default, tuple(params.items()), None, requires_grad)


# --------------------------------------------------------------------------------------------
# the two consumers


def static_meta(spec: ExampleSpec, device: str | None = None) -> dict[str, TensorMeta | Any]:
    """Shapes and dtypes for the static side (no torch): TensorMeta for tensors, values otherwise."""
    out: dict[str, Any] = {}
    for n, v in spec.items:
        if isinstance(v, TensorSpec):
            m = v.meta
            out[n] = TensorMeta(m.shape, m.dtype, device) if device else m
        else:
            out[n] = _plain(v)
    return out


def _plain(v: Any) -> Any:
    if isinstance(v, _Dtype):
        return v.name
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, tuple):
        return tuple(_plain(x) for x in v)
    return v


# --------------------------------------------------------------------------------------------
# where they are written in the analyzed file: `# kpredict:` comments
#
#     # kpredict: example a=randn(8) b=randn(8)      (above a def, or above its first decorator)
#     # kpredict: init d=128                         (above a class, or above the method)
#     # kpredict: cuda-only compiled=3 source=...    (any other tag is kept as free text)
#
# The comment block is the run of `#` lines directly above the definition, with no blank line in
# between; several lines with the same tag are joined. Plain text: the frontend reads them for the
# static side, kpredict/verify/annotations.py for the child.

MARK = re.compile(r"^\s*#\s*kpredict:\s*([A-Za-z][\w-]*)\b[ \t]*(.*?)\s*$")


def comment_block(lines: list[str], first_line: int) -> dict[str, list[str]]:
    """Tags of the `# kpredict:` lines in the comment run directly above 1-based `first_line`."""
    tags: dict[str, list[str]] = {}
    i = first_line - 2
    block: list[str] = []
    while i >= 0 and lines[i].lstrip().startswith("#"):
        block.insert(0, lines[i])
        i -= 1
    for text in block:
        m = MARK.match(text)
        if m:
            tags.setdefault(m.group(1), []).append(m.group(2))
    return tags


def joined(tags: dict[str, list[str]], tag: str) -> str | None:
    """The texts of all `tag` lines of a block, joined with spaces; None when the block has none."""
    return " ".join(tags[tag]).strip() if tag in tags else None
