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

A float input the source says nothing about (transformers' `hidden_states`, 90% of its `forward`
methods) gets assumed names after the first analysis (`guess_shapes`): that analysis, with the shape
unknown, shows the rank the code needs: a 2-d convolution or pooling reached from an input of unknown
shape means images, `(B, C, H, W)`; `x.permute(...)` on the input itself gives its rank; else the layout
of a sequence model's activations, `(B, T, C)`. The names are shared by the function's inputs (a
residual added to the input has its shape), a feature dim then meets the widths of the weights it
reaches (kpredict.symbolic), and the assumption is listed with the figures.
"""

from __future__ import annotations

import ast
import re
from collections import deque
from dataclasses import dataclass

from kpredict.ir import FunctionGraph

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


def rank_hint(name: str, fdef: ast.FunctionDef | ast.AsyncFunctionDef | None) -> int:
    """The rank parameter `name`'s own code gives it: `name.permute(0, 2, 3, 1)` -> 4; -1 when it is
    unpacked as a tuple (`cos, sin = position_embeddings`: no tensor to name); 0 when neither."""
    if fdef is None:
        return 0
    found = fdef.__dict__.get("_kp_rank_hints")
    if found is None:
        found = {}
        for node in ast.walk(fdef):
            if (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple)
                    and isinstance(node.value, ast.Name)):
                found[node.value.id] = -1
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr == "permute" and isinstance(node.func.value, ast.Name) and node.args
                  and not node.keywords and all(isinstance(a, ast.Constant) for a in node.args)):
                found.setdefault(node.func.value.id, len(node.args))
        fdef._kp_rank_hints = found  # type: ignore[union-attr]
    return found.get(name, 0)


# names of ints that are sizes (hidden_size, num_channels, embed_dim, n_head): a marker size given to a
# flag, an index or a string field (`_attn_implementation`, `layer_idx`, `output_attentions`) breaks the run
# the size word ends the name (hidden_size, num_channels) or starts it (dim_feedforward, size_per_head):
# in the middle it names something else (_experts_implementation_internal, prefix_allowed_tokens_fn)
_WORDS = (r"(?:size|sizes|dim|dims|channels|features|heads|head|width|height|len|length|embd|embed|labels|"
          r"queries|points|patches|groups|experts|tokens|seq|bsz|bs|batch)")
_SIZE_WORDS = re.compile(rf"_{_WORDS}$|^{_WORDS}(?:_|$)|^(?:n|num|d)_|^[A-Z]$")


_NOT_SIZE = re.compile(r"_|(?:set|get|is|has|use|return|apply|init|compute|make)_")


def size_name(name: str) -> bool:
    """Whether a named int nobody gave reads as a size, which kpredict.symbolic may vary (a method's
    name read as an attribute, `set_output_features_output_indices`, is none)."""
    return _SIZE_WORDS.search(name) is not None and _NOT_SIZE.match(name) is None


# a count of heads or groups nobody gave: it divides a width (head_dim = hidden_size // num_heads), so
# it cannot take a marker size like the other names (kpredict.symbolic); it is fixed at HEAD_COUNT for
# the byte formula, a value that divides every marker width, and said so
_HEAD_COUNT = re.compile(r"(?:^|_)(?:heads?|n_head|groups)$")
HEAD_COUNT = 8


def head_count(name: str) -> bool:
    """Whether a named int is a count of heads or groups (num_attention_heads, n_head, num_groups)."""
    return _HEAD_COUNT.search(name) is not None


# ops that normalize over dim 1 (the channels): an input they read first is channels-first
_CHANNEL_NORMS = ("group_norm", "batch_norm", "instance_norm")
# the names a rank gets, and why: the usual layouts of activations
_LAYOUTS: dict[int, tuple[tuple[str, ...], str]] = {
    3: (("B", "T", "C"), "batch, sequence, features: a sequence model's activations"),
    4: (("B", "C", "H", "W"), "batch, channels, height, width"),
    5: (("B", "C", "D", "H", "W"), "batch, channels, depth, height, width"),
}
_CONV_LAYOUT = {3: (("B", "C", "L"), "batch, channels, length")}
# an op that reads a (batched) input of rank N + 2: convolutions, poolings, upsampling, padding modes
_SPATIAL = re.compile(r"(?:conv(?:_transpose)?|pool|upsample_\w+?|reflection_pad|replication_pad)(\d)d")


def guess_shapes(fg: FunctionGraph) -> dict[str, DimNames]:
    """Assumed named dims for the float inputs of `fg` whose shape nobody gave (the module docstring):
    from the first analysis, where they were unknown. Empty when there is none to name."""
    names = [n for n, r in fg.unsized_ranks.items() if r >= 0]
    if not names:
        return {}
    spatial, reached = None, ""
    for op in fg.ops:
        if not op.inputs or (v := fg.values.get(op.inputs[0])) is None or v.meta.shape is not None:
            continue
        if m := _SPATIAL.search(op.name):
            spatial, reached = int(m.group(1)) + 2, f"it reaches a {m.group(1)}-d convolution or pooling"
            break
        if op.name in _CHANNEL_NORMS and spatial is None:
            # normalized over dim 1: channels first; a conv net's (B, C, H, W) unless the module says 1d/3d
            nd = next((int(m.group(1)) for via in op.via if (m := re.search(r"Norm(\d)d", via))), 2)
            spatial, reached = nd + 2, f"it reaches a {op.name} (channels first)"
    out = {}
    for n in names:
        rank = fg.unsized_ranks[n] or spatial or 3
        dims, why = (_CONV_LAYOUT.get(rank) if rank == spatial else None) or _LAYOUTS.get(rank, (None, ""))
        if dims is None:
            continue
        said = (reached if rank == spatial
                else "its permute()" if fg.unsized_ranks[n] else "no rank in the code")
        if dims[-1] == "C" and (width := _last_width(fg, n)) is not None:
            # the width of the weight it meets first, read here: a rerun less to find it (symbolic.py)
            dims, said = dims[:-1] + (width[0],), f"{said}; C = {width[0]}, {width[1]}"
        out[n] = DimNames(dims, f"assumed: {why}; {said}; give it with --dim or a # shape: comment")
    return out


def _last_width(fg: FunctionGraph, name: str) -> tuple[int, str] | None:
    """The last dim input `name` must have, from an op of the first analysis that reads it directly
    with a weight of known size: a linear's in-features, a norm's width, a product with a 1-d weight."""
    vids = {v.vid for v in fg.values.values() if v.is_input and v.name == name}
    for op in fg.ops:
        if not op.inputs or op.inputs[0] not in vids or len(op.inputs) < 2:
            continue
        w = fg.values.get(op.inputs[1])
        shape = w.meta.shape if w is not None else None
        if not shape or not all(isinstance(d, int) for d in shape):
            continue
        if op.name == "linear" and len(shape) == 2:
            return shape[1], "the in-features of the linear it reaches"  # type: ignore[return-value]
        if op.name in ("layer_norm", "rms_norm", "mul", "add") and len(shape) == 1 and shape[0] > 1:
            return shape[0], f"the width of the weight of the {op.name} it reaches"  # type: ignore[return-value]
    return None
