"""KP301 python-loop-over-tensor."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from kpredict.frontend.params import annotation_kind
from kpredict.ir import Span
from kpredict.lint.context import FunctionContext, contains, node_span
from kpredict.lint.figures import as_dict, describe, eager_figures, plural, transfers
from kpredict.lint import hotpath
from kpredict.lint.model import Example, Hit, Rule
from kpredict.lint.syncs import GUESS


class PythonLoopOverTensor(Rule):
    """
    ## What it does
    Finds Python `for` loops that walk over the rows or elements of a tensor (`for row in x`,
    `for i in range(len(x))`, `range(x.shape[0])`, `enumerate(x)`, `x.unbind()`) and launch kernels
    in every iteration, in code that does not run under `torch.compile`.

    ## Why it costs
    Each iteration launches the body's kernels again on a slice of the data: N rows cost N times
    the launches of one vectorized op over the whole tensor, each on a small piece that cannot keep
    the GPU busy, with the launch overhead (several microseconds each) paid N times.
    """

    code = "KP301"
    name = "python-loop-over-tensor"
    severity = "warning"
    summary = "A Python loop over a tensor's rows or elements that launches kernels in every iteration"
    fix = "Write the body once over the whole tensor (broadcasting, a batch dimension, torch.where, scatter/gather)."
    options = {"min-iterations": 2, hotpath.OPTION: False}
    option_docs = {"min-iterations": "Report loops that run at least this many times (when the count is known).",
                   hotpath.OPTION: hotpath.OPTION_DOC}

    INVALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(32, 128)\n"
            "def row_scale(x):\n"
            "    out = torch.empty_like(x)\n"
            "    for i in range(x.shape[0]):  # expect: KP301\n"
            "        out[i] = x[i] * 2 + 1\n"
            "    return out\n"
        ),
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(16, 64)\n"
            "def row_norms(x):\n"
            "    total = torch.zeros(64)\n"
            "    for row in x:  # expect: KP301\n"
            "        total += row.abs()\n"
            "    return total\n"
        ),
    ]
    VALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(32, 128)\n"
            "def row_scale(x):\n"
            "    return x * 2 + 1\n"
        ),
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(16, 64)\n"
            "def repeat(x, steps: int = 4):\n"
            "    for _ in range(steps):\n"
            "        x = x.tanh()\n"
            "    return x\n"
        ),
        Example(  # a list of tensors by its annotation: one step per parameter is the single-tensor path
            "import torch\n"
            "\n"
            "\n"
            "def sgd(params: list[torch.Tensor], grads: list[torch.Tensor], lr: float):\n"
            "    for i, p in enumerate(params):\n"
            "        p.add_(grads[i] * -lr)\n"
        ),
        Example(  # no annotation: walking it says nothing of a tensor (boxes per image, keys, levels)
            "import torch\n"
            "\n"
            "\n"
            "def areas(boxes):\n"
            "    out = []\n"
            "    for b in boxes:\n"
            "        out.append((b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]))\n"
            "    return out\n"
        ),
    ]

    def check(self, fn: FunctionContext) -> Iterator[Hit]:
        if fn.compiled:
            return
        reported: list[Span] = []
        for loop in fn.loops:
            if not isinstance(loop, (ast.For, ast.AsyncFor)):
                continue
            if any(contains(r, node_span(loop)) for r in reported):
                continue
            tensor = iterated_tensor(fn, loop.iter)
            if tensor is None:
                continue
            ops = [op for op in fn.ops_in(loop) if fn.launches(op) > 0]
            if not ops:
                continue
            runs = min(fn.span_counts[op.span] for op in ops)
            unknown = runs == 1 and any(a.startswith(f"line {loop.lineno}:") for a in fn.fg.assumptions)
            if runs < int(fn.options.get("min-iterations", 2)) and not unknown:
                continue
            eager = eager_figures(fn, {op.oid for op in ops})
            header = Span(loop.lineno, loop.col_offset, loop.iter.end_lineno or loop.lineno,
                          loop.iter.end_col_offset or 0)
            reported.append(node_span(loop))
            name = fn.text(node_span(tensor), 30)
            if unknown:
                message = (f"Python loop over `{name}` launches {describe(eager, 'moves')} in every iteration "
                           f"(the number of iterations is not known statically); vectorized, the loop would be "
                           f"about that much once")
                figs = {"per_iteration": as_dict(eager), "iterations": None}
            else:
                k, t = eager.kernels, transfers(eager)
                per_k = k // runs if isinstance(k, int) else k
                per_t = t // runs if isinstance(t, int) else t
                message = (f"Python loop over `{name}` runs {runs} times and launches {describe(eager, 'moves')}; "
                           f"vectorized it would be about {plural(per_k, 'kernel')} and {plural(per_t, 'transfer')}")
                figs = {"loop": as_dict(eager), "iterations": runs,
                        "vectorized": {"kernels": per_k, "transfers": per_t, "bytes": eager.bytes}}
            yield Hit(header, message, figs)


def iterated_tensor(fn: FunctionContext, it: ast.expr) -> ast.expr | None:
    """The tensor whose rows or elements a loop header walks over, or None."""
    if isinstance(it, ast.Call):
        callee = it.func
        if isinstance(callee, ast.Name) and callee.id in ("enumerate", "zip", "reversed"):
            for a in it.args:
                t = iterated_tensor(fn, a)
                if t is not None:
                    return t
            return None
        if isinstance(callee, ast.Name) and callee.id == "range" and it.args:
            stop = it.args[0] if len(it.args) == 1 else it.args[1]
            return size_of(fn, stop)
        if isinstance(callee, ast.Attribute) and callee.attr == "unbind" and fn.is_tensor_expr(callee.value):
            return callee.value
        if fn.facts.resolve(callee) == "torch.unbind" and it.args and fn.is_tensor_expr(it.args[0]):
            return it.args[0]
        return None
    if isinstance(it, (ast.Name, ast.BinOp, ast.Subscript)) and fn.is_tensor_expr(it):
        return None if not_known_tensor(fn, it, True) else it
    return None


def not_known_tensor(fn: FunctionContext, e: ast.expr, iterated: bool) -> bool:
    """Whether nothing but the interpreter's guess makes `e` (or the name it indexes) a tensor: a
    parameter annotated as a container or a scalar (`params: List[Tensor]`, `boxes: list[Tensor]`),
    or, for a loop that walks it directly or over its len(), a parameter with no annotation that the
    interpreter took for a tensor (`for box in boxes`, `for k in keys`): such parameters are lists far
    more often than tensors, while `x.shape[0]` or `x.size(0)` say tensor."""
    while isinstance(e, ast.Subscript):
        e = e.value
    if not isinstance(e, ast.Name) or not isinstance(fn.scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    a = fn.scope.args
    param = next((p for p in a.posonlyargs + a.args + a.kwonlyargs if p.arg == e.id), None)
    if param is None:
        return False
    if param.annotation is not None:
        kind, _ = annotation_kind(param.annotation)
        return kind is None or kind.what != "tensor"
    return iterated and f"{e.id}{GUESS}" in fn.fg.assumptions


def size_of(fn: FunctionContext, e: ast.expr) -> ast.expr | None:
    """`len(x)`, `x.shape[k]`, `x.size(k)`, `x.size()[k]`, `x.numel()` -> x (when x is a tensor)."""
    cand: ast.expr | None = None
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "len" and e.args:
        cand = e.args[0]
        if not_known_tensor(fn, cand, True):
            return None
    elif isinstance(e, ast.Subscript):
        v = e.value
        if isinstance(v, ast.Attribute) and v.attr == "shape":
            cand = v.value
        elif isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "size":
            cand = v.func.value
    elif isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in ("size", "numel", "nelement"):
        cand = e.func.value
    if cand is not None and fn.is_tensor_expr(cand) and not not_known_tensor(fn, cand, False):
        return cand
    return None
