"""KP602 clone-of-temporary."""

from __future__ import annotations

from collections.abc import Iterator

from kpredict.lint.context import FunctionContext
from kpredict.lint.figures import as_dict, describe, eager_figures
from kpredict.lint.model import Example, Hit, Rule

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

    INVALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(128, 128)\n"
            "def doubled(x):\n"
            "    y = (x * 2).clone()  # expect: KP602\n"
            "    return y\n"
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
            eager = eager_figures(fn, {op.oid})
            message = (f"`{fn.text(op.span, 40)}` copies the result of {p.name}, which nothing else uses: "
                       f"{describe(eager)} for an identical tensor; using the result directly is 0 kernels")
            yield Hit(op.span, message, {"eager": as_dict(eager)})
