"""KP602 clone-of-temporary."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING


from kpredict.lint.context import FunctionContext, node_span
from kpredict.lint.figures import as_dict, describe, eager_figures
from kpredict.lint import hotpath
from kpredict.lint.model import Example, Fix, Hit, Rule
from kpredict.lint.rewrite import as_operand, receiver

if TYPE_CHECKING:
    import libcst as cst

COMPUTE = ("pointwise", "reduction", "extern", "fallback", "random")


class CloneOfTemporary(Rule):
    """
    ## What it does
    Finds `.clone()` (or `torch.clone`) of a tensor that was just computed and that nothing else
    uses, in code that does not run under `torch.compile`.

    ## Why it costs
    A fresh result is already a tensor of its own: nobody else holds it, so cloning it only
    launches a copy kernel that reads it and writes an identical tensor, doubling the memory it
    occupies for a moment.
    """

    code = "KP602"
    name = "clone-of-temporary"
    severity = "warning"
    summary = ".clone() of a freshly computed tensor that nothing else uses"
    fix = "Use the computed tensor directly."
    options = {hotpath.OPTION: False}
    option_docs = {hotpath.OPTION: hotpath.OPTION_DOC}

    INVALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(128, 128)\n"
            "def doubled(x):\n"
            "    y = (x * 2).clone()  # expect: KP602\n"
            "    return y\n",
            fixed=(
                "import torch\n"
                "\n"
                "\n"
                "# kpredict: example x=randn(128, 128)\n"
                "def doubled(x):\n"
                "    y = x * 2\n"
                "    return y\n"
            ),
        ),
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(128, 128)\n"
            "def scaled(x):\n"
            "    return torch.clone(x + 1) * 2  # expect: KP602\n",
            fixed=(
                "import torch\n"
                "\n"
                "\n"
                "# kpredict: example x=randn(128, 128)\n"
                "def scaled(x):\n"
                "    return (x + 1) * 2\n"
            ),
        ),
    ]
    VALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(128, 128)\n"
            "def snapshot(x):\n"
            "    y = x * 2\n"
            "    before = y.clone()\n"
            "    y.add_(1)\n"
            "    return before, y\n"
        ),
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(128, 128)\n"
            "def copy_input(x):\n"
            "    return x.clone()\n"
        ),
        Example(  # construction runs once
            "import torch\n"
            "\n"
            "\n"
            "class Attn(torch.nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.register_buffer('scale', (torch.ones(1) * 0.5).clone())\n"
        ),
    ]

    def check(self, fn: FunctionContext) -> Iterator[Hit]:
        if fn.compiled:
            return
        returned = {fn.storage(v) for v in fn.fg.returns}
        mutated = {fn.storage(m) for o in fn.fg.ops for m in o.mutates}
        for op in fn.own_ops:
            if op.name != "clone" or not op.inputs or fn.launches(op) == 0:
                continue
            p = fn.producer(op.inputs[0])
            if p is None or p.category not in COMPUTE or p.free_reason:
                continue
            st = fn.storage(op.inputs[0])
            if st in returned or st in mutated or [r.oid for r in fn.readers.get(st, [])] != [op.oid]:
                continue
            if fn.scope is not None and _held_elsewhere(fn.scope, op.span):
                continue
            eager = eager_figures(fn, {op.oid})
            message = (f"`{fn.text(op.span, 40)}` copies the result of {p.name}, which nothing else uses: "
                       f"{describe(eager)} for an identical tensor; using the result directly is 0 kernels")
            yield Hit(op.span, message, {"eager": as_dict(eager)}, _use_result(fn, op.span))


def _use_result(fn: FunctionContext, span) -> Fix | None:
    """`(a + b).clone()` / `torch.clone(a + b)` -> `(a + b)`: the values are the same, and the rule
    has checked that nothing else holds the tensor, so it is safe. Arguments (a memory format) change
    the layout: left alone."""
    import libcst as cst  # lazy: libcst takes a fifth of a second to import; only a fix needs it

    found = fn.facts.cst_node(span, cst.Call)
    if found is None:
        return None
    src, call = found
    value = receiver(call, "clone")
    node = fn.facts.node_at(span, ast.Call)
    if (value is None and isinstance(node, ast.Call) and fn.facts.resolve(node.func) == "torch.clone"
            and len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star):
        value = as_operand(call.args[0].value)
    if value is None:
        return None
    return Fix("Use the computed tensor instead of its clone", "safe", (src.replace(call, value),))


def _held_elsewhere(scope: ast.AST, span) -> bool:
    """Whether the cloned tensor may be held by other code, which the op graph does not show: the
    receiver is an attribute or an item (`out.coords.clone()`, `sd[key].clone()`), or a name read
    again after it was last assigned (`self.a = Buffer(t); self.b = Buffer(t.clone())`: the two
    buffers must not share storage; `e = x.clone(); e[...] = 0` while `x` is used later)."""
    call = next((n for n in ast.walk(scope) if isinstance(n, ast.Call) and node_span(n) == span), None)
    if call is None:
        return True  # cannot tell: stay silent rather than claim nothing else uses it
    recv = call.func.value if isinstance(call.func, ast.Attribute) else (call.args[0] if call.args else None)
    if isinstance(recv, (ast.Attribute, ast.Subscript)):
        return True
    if not isinstance(recv, ast.Name):
        return False
    name = recv.id
    bound = [getattr(n, "end_lineno", n.lineno) for n in ast.walk(scope)
             if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For))
             and n.lineno <= call.lineno
             and any(isinstance(t, ast.Name) and t.id == name and isinstance(t.ctx, ast.Store)
                     for t in ast.walk(n))]
    after = max(bound, default=0)
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and n is not recv
               and n.lineno > after for n in ast.walk(scope))
