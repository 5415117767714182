"""Parameter kinds (issue 26, item 5): what a parameter of a function analyzed alone is, when no
example, call site or `--example` gives it a value.

Before this, every parameter without annotation or default was a float32 tensor, and so was any
parameter annotated `torch.LongTensor` or `Optional[int]`: token ids then made phantom casts, and
bool flags made phantom tensor-to-bool syncs and graph breaks. The rules, in order:

1. Annotations are honoured. `torch.LongTensor` / `IntTensor` / `BoolTensor` / `HalfTensor` / ...
   give a tensor of that dtype (`Tensor`, `FloatTensor`, `Parameter`: float32, as before);
   `Optional[X]`, `Union[X, None]` and `X | None` are X (a required parameter is passed);
   `int` is a named symbol, `float`, `bool`, `str` an unknown Python value (never a tensor, never a
   sync); `list[...]`, `dict`, `tuple` and other classes are left to the interpreter (a config
   object when the class is known, else an unknown value).
2. Defaults are honoured by the interpreter (Interpreter.default_value): a parameter with a default
   takes it, as a caller that does not pass it. A `None` default means the argument is absent,
   with one exception kept from before: the first tensor-annotated parameter of a `forward` with
   a `None` default is the input when no required tensor is given (`forward(self, input_ids:
   Optional[torch.LongTensor] = None, ...)`); its dtype now comes from its annotation.
3. Without annotation and default, the body's use decides (a cheap walk of the function's AST,
   nothing followed into callees): a parameter fed to an embedding (`self.wte(idx)`,
   `self.embed_tokens(x)`, `F.embedding(x, w)`, `F.one_hot(x)`), used as an index (`t[x]`,
   `.gather(d, x)`, `.index_select(d, x)`, `torch.gather(t, d, x)`) or as the target of
   `cross_entropy`/`nll_loss`, or named `*_ids`, is an int64 tensor; one whose every use is a
   condition (`if x:`, `if not x`, `x and y` in a test, `while x`, `a if x else b`, `assert x`) is
   a bool flag (an unknown Python bool: both branches are analyzed, no sync). Anything else stays
   a float32 tensor.

Each kind chosen here is listed among the function's assumptions, with its reason.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from kpredict.frontend.parse import node_text

# tensor classes of torch and their dtypes
TENSOR_DTYPES = {
    "Tensor": "float32", "FloatTensor": "float32", "Parameter": "float32", "DoubleTensor": "float64",
    "HalfTensor": "float16", "BFloat16Tensor": "bfloat16", "LongTensor": "int64", "IntTensor": "int32",
    "ShortTensor": "int16", "CharTensor": "int8", "ByteTensor": "uint8", "BoolTensor": "bool",
}
SCALARS = ("int", "float", "bool", "str", "bytes", "complex")
_OPTIONAL = ("Optional",)
_UNION = ("Union",)


@dataclass(frozen=True, slots=True)
class Kind:
    """What a parameter is taken as: `what` is "tensor" (with `dtype`) or a Python scalar type name
    ("int", "float", "bool", "str", ...); `why` says where that comes from, for the assumption."""

    what: str
    dtype: str = ""
    why: str = ""


def _last_name(e: ast.expr) -> str:
    if isinstance(e, ast.Name):
        return e.id
    if isinstance(e, ast.Attribute):
        return e.attr
    return ""


def _unwrapped(ann: ast.expr | None) -> tuple[ast.expr | None, bool]:
    """The annotation inside Optional[...] / Union[..., None] / `| None` (a string annotation parsed),
    and whether it was so wrapped; None when there is none or it does not parse."""
    if ann is None:
        return None, False
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):  # "torch.LongTensor"
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return None, False
    optional = False
    for _ in range(4):  # unwrap Optional[Optional[...]] and the like
        inner = _unwrap_optional(ann)
        if inner is None:
            break
        ann, optional = inner, True
    return ann, optional


def annotation_kind(ann: ast.expr | None) -> tuple[Kind | None, bool]:
    """(kind, optional) of an annotation: kind None when it names no tensor class and no scalar;
    optional when it was wrapped in Optional[...] / Union[..., None] / `| None`."""
    ann, optional = _unwrapped(ann)
    if ann is None:
        return None, False
    name = _last_name(ann.value if isinstance(ann, ast.Subscript) else ann)
    text = node_text(ann)
    if name in TENSOR_DTYPES:
        return Kind("tensor", TENSOR_DTYPES[name], f"annotation {text}"), optional
    if name in SCALARS and not isinstance(ann, ast.Subscript):
        return Kind(name, why=f"annotation {text}"), optional
    return None, optional


def _unwrap_optional(ann: ast.expr) -> ast.expr | None:
    """X for Optional[X], Union[X, None] and X | None (None when `ann` is no such form)."""
    if isinstance(ann, ast.Subscript):
        base = _last_name(ann.value)
        if base in _OPTIONAL:
            return ann.slice
        if base in _UNION and isinstance(ann.slice, ast.Tuple):
            rest = [e for e in ann.slice.elts if not _is_none(e)]
            if len(rest) == 1 and len(rest) < len(ann.slice.elts):
                return rest[0]
        return None
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        if _is_none(ann.right):
            return ann.left
        if _is_none(ann.left):
            return ann.right
    return None


def _is_none(e: ast.expr) -> bool:
    return isinstance(e, ast.Constant) and e.value is None


def tensor_dtype(ann: ast.expr | None) -> str:
    """The dtype a tensor annotation names (float32 for plain Tensor or no tensor class)."""
    kind, _ = annotation_kind(ann)
    return kind.dtype if kind is not None and kind.what == "tensor" else "float32"


def optional_mask(p: ast.arg) -> bool:
    """A mask parameter whose annotation allows None (`attention_mask: torch.Tensor | None`)."""
    kind, optional = annotation_kind(p.annotation)
    return optional and kind is not None and kind.what == "tensor" and "mask" in p.arg


def tensor_tuple(p: ast.arg) -> list[ast.arg]:
    """`x: tuple[torch.Tensor, torch.Tensor]` (or `| None`): one parameter per tensor, named x_0, x_1
    with its annotation; empty for any other annotation (`tuple[torch.Tensor, ...]` has no count)."""
    ann, _ = _unwrapped(p.annotation)
    if not (isinstance(ann, ast.Subscript) and _last_name(ann.value) in ("tuple", "Tuple")
            and isinstance(ann.slice, ast.Tuple) and ann.slice.elts):
        return []
    elts = ann.slice.elts
    if not all((k := annotation_kind(e)[0]) is not None and k.what == "tensor" for e in elts):
        return []
    return [ast.arg(arg=f"{p.arg}_{i}", annotation=e, lineno=p.lineno, col_offset=p.col_offset)
            for i, e in enumerate(elts)]


_INDEX_NAME = re.compile(r"(?:^|_)(?:ids|idx|index|indices|tokens)$")


def annotated_tensor(p: ast.arg, fdef: ast.FunctionDef | ast.AsyncFunctionDef | None) -> Kind | None:
    """A tensor-annotated parameter's kind (None without a tensor annotation). A plain `Tensor`
    names no dtype: its name or use decides as for an untyped one (`input_ids: torch.Tensor | None`,
    fed to an embedding: int64; CLIP's text model was a float32 tensor of unknown shape), else float32."""
    ann, _ = _unwrapped(p.annotation)
    kind, _ = annotation_kind(ann)
    if ann is None or kind is None or kind.what != "tensor":
        return None
    if _last_name(ann) == "Tensor" and fdef is not None:
        use = use_kind(fdef, p.arg)
        # "fed to self.patch_embeddings" is no evidence for an annotated tensor (pixel_values of a conv
        # patch embedding, FocalNet): only an index use or an index's name is
        if use is not None and use.what == "tensor" and (
                not use.why.startswith("fed to") or _INDEX_NAME.search(p.arg) is not None):
            return use
    return kind


def dtype_source(p: ast.arg, kind: Kind) -> str:
    """Where an annotated input's dtype comes from, for its assumption: the annotation as written, or
    the name or use that made a plain `Tensor` int64."""
    return f"annotation {node_text(p.annotation)}" if kind.why.startswith("annotation") else kind.why


_INDEX_METHODS = {"gather": 1, "index_select": 1, "scatter": 1, "scatter_add": 1, "index_add": 1,
                  "take_along_dim": 1, "take": 0}  # method name -> position of the index argument
_TARGET_LOSSES = ("cross_entropy", "nll_loss")
_SAME_VALUES = ("view", "reshape", "flatten", "contiguous", "long", "to", "unsqueeze", "squeeze")


def _is_embedding(func: ast.expr) -> bool:
    name = _last_name(func).lower()
    return "emb" in name or name in ("wte", "wpe", "one_hot")


def _loads(fdef: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[dict[int, ast.AST], dict[str, list[ast.Name]]]:
    """Each node's parent, and the names the function reads, in ast.walk's order. Kept on the node:
    they were built again for each parameter of each call (1 of 47 s over 60 transformers files)."""
    found = fdef.__dict__.get("_kp_loads")
    if found is None:
        parents: dict[int, ast.AST] = {}
        loads: dict[str, list[ast.Name]] = {}
        for node in ast.walk(fdef):
            if node is not fdef:  # fdef itself is no use's parent that counts, and would make a cycle
                for child in ast.iter_child_nodes(node):
                    parents[id(child)] = node
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                loads.setdefault(node.id, []).append(node)
        found = fdef._kp_loads = (parents, loads)  # type: ignore[union-attr]
    return found


def use_kind(fdef: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> Kind | None:
    """The kind the body's use gives parameter `name` (no annotation, no default), else None."""
    parents, by_name = _loads(fdef)
    loads = by_name.get(name)
    if not loads:
        return None
    for n in loads:
        use: ast.expr = n
        for _ in range(4):  # targets.view(-1), idx.reshape(B, T), idx.contiguous(): the same values
            attr = parents.get(id(use))
            call = parents.get(id(attr))
            if not (isinstance(attr, ast.Attribute) and attr.attr in _SAME_VALUES
                    and isinstance(call, ast.Call) and call.func is attr):
                break
            use = call
        why = _int_use(use, parents.get(id(use)), n.lineno)
        if why:
            return Kind("tensor", "int64", why)
    if name.endswith("_ids") or name in ("ids", "token_ids", "tokens"):
        return Kind("tensor", "int64", f"its name, {name}")
    if all(_condition_use(n, parents) for n in loads):
        return Kind("bool", why="used only as a condition")
    return None


def _int_use(n: ast.expr, parent: ast.AST | None, lineno: int) -> str:
    """Why this use of the parameter makes it an integer tensor ("" when it does not)."""
    line = f"line {lineno}"
    if isinstance(parent, ast.Call) and n in parent.args:
        pos = parent.args.index(n)
        method = _last_name(parent.func)
        if pos == 0 and _is_embedding(parent.func):
            return f"fed to {node_text(parent.func)}, {line}"
        if method in _TARGET_LOSSES and pos == 1:
            return f"the target of {method}, {line}"
        is_method = isinstance(parent.func, ast.Attribute) and not (
            isinstance(parent.func.value, ast.Name) and parent.func.value.id in ("torch", "F"))
        if method in _INDEX_METHODS and pos == _INDEX_METHODS[method] + (0 if is_method else 1):
            return f"the index of {method}, {line}"
    if isinstance(parent, ast.Subscript) and parent.slice is n:
        return f"used as an index, {line}"
    return ""


def _condition_use(n: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """Whether this use only decides a condition: it reaches a test through `not`/`and`/`or`."""
    cur = n
    for _ in range(16):
        parent = parents.get(id(cur))
        if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
            cur = parent
            continue
        if isinstance(parent, ast.BoolOp):
            cur = parent
            continue
        if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            return parent.test is cur
        return False
    return False


def param_kind(p: ast.arg, fdef: ast.FunctionDef | ast.AsyncFunctionDef | None) -> Kind | None:
    """The kind of a parameter with no argument and no default, where it differs from what the
    interpreter took before (a float32 tensor for tensor annotations and untyped parameters, a
    symbol or unknown value for bare scalar annotations): a tensor of another dtype, a scalar
    behind Optional[...] / `| None`, or an untyped parameter whose use says int64 tensor or bool.
    None: the interpreter's own rules apply."""
    kind, optional = annotation_kind(p.annotation)
    if kind is not None:
        if kind.what == "tensor":
            kind = annotated_tensor(p, fdef) or kind
            return kind if kind.dtype != "float32" else None
        return kind if optional else None
    if p.annotation is None and fdef is not None:
        return use_kind(fdef, p.arg)
    return None


def describe(p: ast.arg, kind: Kind) -> str:
    """The assumption line for a parameter taken as `kind`."""
    if kind.what == "tensor":
        return f"{p.arg}: {kind.dtype} tensor of unknown shape ({kind.why})"
    if kind.what == "int":
        return f"{p.arg}: an int, not known statically ({kind.why}; symbol {p.arg})"
    if kind.what == "bool":
        return f"{p.arg}: a bool flag, not known statically ({kind.why}); both branches analyzed"
    return f"{p.arg}: a {kind.what}, not known statically ({kind.why})"
