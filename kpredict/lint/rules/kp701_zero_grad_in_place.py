"""KP701 zero-grad-in-place."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from kpredict.lint.context import FunctionContext, node_span
from kpredict.lint.figures import plural
from kpredict.lint.model import Example, Fix, Hit, Rule
from kpredict.render.text_report import human_bytes

ZEROING = ("zero_", "_foreach_zero_")


def _keeps_buffers(call: ast.Call) -> bool:
    """`x.zero_grad(set_to_none=False)` or `x.zero_grad(False)`."""
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "zero_grad"):
        return False
    given = [k.value for k in call.keywords if k.arg == "set_to_none"] or call.args[:1]
    return bool(given) and isinstance(given[0], ast.Constant) and given[0].value is False


class ZeroGradInPlace(Rule):
    """
    ## What it does
    Finds `zero_grad(set_to_none=False)` of an optimizer or a module in a training step.

    ## Why it costs
    With `set_to_none=False` every gradient is filled with zeros in place: one kernel per
    gradient (one `_foreach_zero_` per dtype with a foreach optimizer) writing all of their bytes,
    on every step, and the next backward adds into them instead of keeping its own result. With
    `set_to_none=True`, torch's default since 2.0, the gradients are dropped: no kernel, and their
    memory is free until the backward makes them again.
    """

    code = "KP701"
    name = "zero-grad-in-place"
    severity = "warning"
    summary = "zero_grad(set_to_none=False) fills every gradient with zeros on each step"
    fix = "Drop set_to_none=False (torch's default is True); read .grad only after the backward."

    INVALID = [
        Example(
            "import torch\n"
            "\n"
            "torch.manual_seed(0)\n"
            "model = torch.nn.Linear(64, 64)\n"
            "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(8, 64)\n"
            "def train(x):\n"
            "    for _ in range(2):\n"
            "        opt.zero_grad(set_to_none=False)  # expect: KP701\n"
            "        model(x).sum().backward()\n"
            "        opt.step()\n"
            "    return model.weight.detach()\n",
            fixed=(
                "import torch\n"
                "\n"
                "torch.manual_seed(0)\n"
                "model = torch.nn.Linear(64, 64)\n"
                "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "\n"
                "\n"
                "# kpredict: example x=randn(8, 64)\n"
                "def train(x):\n"
                "    for _ in range(2):\n"
                "        opt.zero_grad()\n"
                "        model(x).sum().backward()\n"
                "        opt.step()\n"
                "    return model.weight.detach()\n"
            ),
        ),
    ]
    VALID = [
        Example(
            "import torch\n"
            "\n"
            "model = torch.nn.Linear(64, 64)\n"
            "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(8, 64)\n"
            "def step(x):\n"
            "    opt.zero_grad()\n"
            "    model(x).sum().backward()\n"
            "    opt.step()\n"
        ),
        Example(  # before any backward there is no gradient to fill: nothing is launched
            "import torch\n"
            "\n"
            "model = torch.nn.Linear(64, 64)\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(8, 64)\n"
            "def forward_only(x):\n"
            "    model.zero_grad(set_to_none=False)\n"
            "    return model(x)\n"
        ),
    ]

    def check(self, fn: FunctionContext) -> Iterator[Hit]:
        if fn.scope is None:
            return
        for call in ast.walk(fn.scope):
            if not isinstance(call, ast.Call) or not _keeps_buffers(call):
                continue
            span = node_span(call)
            ops = [op for op in fn.fg.ops if op.span == span and op.name in ZEROING]
            if not ops:
                continue  # no gradient existed yet: it launched nothing
            kernels = sum(fn.launches(op) for op in ops)
            grads = sum(len(op.mutates) for op in ops)
            sizes = [fn.fg.values[v].meta.nbytes for op in ops for v in op.mutates if v in fn.fg.values]
            nbytes = None if any(b is None for b in sizes) else sum(sizes)
            what = fn.text(span, 40)
            written = f"writing {human_bytes(nbytes)}" if nbytes is not None else "writing all of their bytes"
            message = (f"`{what}` fills {plural(grads, 'gradient')} with zeros in place: "
                       f"{plural(kernels, 'kernel')} {written}, and the next backward adds into them; with set_to_none=True (torch's default) "
                       "they are dropped: no kernel")
            yield Hit(span, message, {"kernels": kernels, "bytes": nbytes, "gradients": grads},
                      _drop_keyword(fn, span))


def _drop_keyword(fn: FunctionContext, span) -> Fix | None:
    """`opt.zero_grad(set_to_none=False)` -> `opt.zero_grad()`. Unsafe: code that reads a `.grad`
    between zero_grad and the backward sees None instead of zeros."""
    import libcst as cst  # lazy: libcst takes a fifth of a second to import; only a fix needs it

    found = fn.facts.cst_node(span, cst.Call)
    if found is None:
        return None
    src, call = found
    if len(call.args) != 1:
        return None
    return Fix("Drop set_to_none=False", "unsafe", (src.replace(call, call.with_changes(args=[])),))
