"""Names for the dims of an input tensor whose shape nobody gave (issue 26, item 3).

A function analyzed alone takes a parameter without example for a tensor of unknown shape, so its
bytes were `?`. When the source says how many dims the tensor has and what they are called, each dim
gets that name; the name is a symbolic size like a loop count (`--dim T=1024` fixes it), and
kpredict.symbolic turns the bytes into a formula in the names. Where the names come from, in order:

1. a jaxtyping-style annotation, `x: Float[Tensor, "B T C"]` (a number is a fixed size; `...`,
   `*batch` or other forms give no names: the rank is not known);
2. a `# shape: (B, T, C)` comment on the parameter's line;
3. unpacking in the body, `B, T, C = x.size()` or `= x.shape` (an `_` target gets the positional
   name `x_2`);
4. token ids (an int64 tensor by its name or use, kpredict.frontend.params) with none of the above:
   `(B, T)`, batch by sequence, listed as an assumption.

Nothing is followed into callees: a cheap walk of the function's own AST, as params.py does.
"""

from __future__ import annotations

import ast
import re
from collections import deque
from dataclasses import dataclass

_SHAPE_COMMENT = re.compile(r"#\s*shape:\s*[(\[]?\s*([\w\s,]+?)\s*[)\]]?\s*$")
_JAXTYPING = ("Float", "Int", "Bool", "Shaped", "Num", "Real", "Integer", "Inexact", "Float32", "Float16",
              "BFloat16", "Int64", "Int32", "UInt8")


@dataclass(frozen=True, slots=True)
class DimNames:
    """The dims of one input: a name (a symbolic size) or a fixed int each, and where they come from."""

    dims: tuple[str | int, ...]
    why: str

    def text(self) -> str:
        return "(" + ", ".join(str(d) for d in self.dims) + ")"


def _tokens(parts: list[str]) -> tuple[str | int, ...] | None:
    out: list[str | int] = []
    for t in parts:
        if t.isdigit():
            out.append(int(t))
        elif t.isidentifier() and t != "_":
            out.append(t)
        else:
            return None  # `...`, `*batch`, `b=1`: the rank or the size is not a plain name
    return tuple(out) if out else None


def _from_annotation(ann: ast.expr | None) -> tuple[str | int, ...] | None:
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return None
    if not isinstance(ann, ast.Subscript):
        return None
    base = ann.value.attr if isinstance(ann.value, ast.Attribute) else getattr(ann.value, "id", "")
    if base not in _JAXTYPING or not isinstance(ann.slice, ast.Tuple) or len(ann.slice.elts) != 2:
        return None
    spec = ann.slice.elts[1]
    if not (isinstance(spec, ast.Constant) and isinstance(spec.value, str)):
        return None
    return _tokens(spec.value.split())


def _from_comment(p: ast.arg, lines: list[str]) -> tuple[str | int, ...] | None:
    line = lines[p.lineno - 1] if 0 < p.lineno <= len(lines) else ""
    m = _SHAPE_COMMENT.search(line)
    if m is None:
        return None
    return _tokens([t for t in re.split(r"[\s,]+", m.group(1)) if t])


def _unpackings(fdef: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, tuple[str | int, ...] | None]:
    """Each name's first `a, b, c = name.size()` (or `.shape`) in fdef's body, outside nested defs,
    breadth first: its dims, or None for a starred target (the rank is not known). Kept on the node:
    the body was walked once per parameter of every call (2.8 of 47 s over 60 transformers files)."""
    found = fdef.__dict__.get("_kp_unpacked")
    if found is not None:
        return found
    found = {}
    todo: deque[ast.AST] = deque(fdef.body)
    while todo:
        node = todo.popleft()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple):
            v = node.value
            of = v.func if isinstance(v, ast.Call) and not v.args and not v.keywords else v
            if (isinstance(of, ast.Attribute) and isinstance(of.value, ast.Name)
                    and of.attr == ("shape" if of is v else "size") and of.value.id not in found):
                name, elts = of.value.id, node.targets[0].elts
                found[name] = (tuple(t.id if t.id != "_" else f"{name}_{i}" for i, t in enumerate(elts))  # type: ignore[union-attr]
                               if all(isinstance(t, ast.Name) for t in elts) else None)
        todo.extend(ast.iter_child_nodes(node))
    fdef._kp_unpacked = found  # type: ignore[union-attr]
    return found


def dim_names(p: ast.arg, fdef: ast.FunctionDef | ast.AsyncFunctionDef | None, lines: list[str],
              token_ids: bool) -> DimNames | None:
    """The named dims of parameter `p` (a tensor of unknown shape), or None when the source does not
    say its rank; `token_ids`: it is an int64 tensor of token ids (rule 4)."""
    dims = _from_annotation(p.annotation)
    if dims is not None:
        return DimNames(dims, "its annotation")
    dims = _from_comment(p, lines)
    if dims is not None:
        return DimNames(dims, "its # shape: comment")
    if fdef is not None:
        dims = _unpackings(fdef).get(p.arg)
        if dims is not None:
            return DimNames(dims, f"unpacked from {p.arg}.size() in the body")
    if token_ids:
        return DimNames(("B", "T"), "token ids, batch by sequence, by convention")
    return None
