"""KP601 noop-contiguous."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING


from kpredict.lint.context import FunctionContext
from kpredict.lint import hotpath
from kpredict.lint.model import Example, Fix, Hit, Rule
from kpredict.lint.rewrite import receiver

if TYPE_CHECKING:
    import libcst as cst

COMPUTE = ("pointwise", "reduction", "extern", "fallback", "random")
# pointwise-category ops that write a fresh contiguous result whatever their inputs' strides
FRESH = {"index", "gather", "index_select", "embedding", "cat", "stack", "constant_pad_nd"}


def _layout_unknown(fn: FunctionContext, vid: int) -> bool:
    """A value whose strides the graph cannot know: the caller's tensor when no example gave it (any
    layout may be passed), or einsum's result (which may be a permuted view of its matmul)."""
    v = fn.fg.values.get(vid)
    if v is None:
        return True
    if v.is_input:
        return any(a.startswith(f"{v.name}: ") and "tensor of unknown shape" in a for a in fn.fg.assumptions)
    p = fn.producer(vid)
    return p is not None and p.name == "einsum"


class NoopContiguous(Rule):
    """
    ## What it does
    Finds `.contiguous()` called on the result of an op that already returns a contiguous tensor
    (an elementwise op on contiguous inputs, a reduction, a matmul).

    ## Why it costs
    Nothing at run time: `.contiguous()` returns its input when it is already contiguous, and
    kpredict predicts 0 kernels for it. It is reported because it suggests a copy that never
    happens, which misleads readers who look for where the memory traffic goes; where a copy is
    really needed (after `transpose`, `permute`, `expand`), kpredict counts it and stays silent.
    """

    code = "KP601"
    name = "noop-contiguous"
    severity = "info"
    summary = ".contiguous() on a tensor that is already contiguous: it does nothing"
    fix = "Drop the .contiguous() call."
    options = {hotpath.OPTION: False}
    option_docs = {hotpath.OPTION: hotpath.OPTION_DOC}

    INVALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(64, 64)\n"
            "def shifted(x):\n"
            "    return (x + 1).contiguous()  # expect: KP601\n",
            fixed=(
                "import torch\n"
                "\n"
                "\n"
                "# kpredict: example x=randn(64, 64)\n"
                "def shifted(x):\n"
                "    return x + 1\n"
            ),
        ),
    ]
    VALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(64, 32)\n"
            "def transposed(x):\n"
            "    return x.t().contiguous()\n"
        ),
        Example(  # the caller's tensors may be strided: the add keeps their layout, so the copy may be real
            "import torch\n"
            "\n"
            "\n"
            "def combine(a, b):\n"
            "    return (a + b).contiguous()\n"
        ),
    ]

    def check(self, fn: FunctionContext) -> Iterator[Hit]:
        seen = set()
        for op in fn.own_ops:
            if op.name != "contiguous" or not op.free_reason or not op.inputs or op.span in seen:
                continue
            p = fn.producer(op.inputs[0])
            if p is None or p.category not in COMPUTE or p.free_reason:
                continue
            if not all(fn.fg.values[v].contiguous for v in p.inputs if v in fn.fg.values):
                continue  # eager keeps an input's layout: the result may not be contiguous
            if p.category == "pointwise" and p.name not in FRESH and any(_layout_unknown(fn, v) for v in p.inputs):
                continue  # ... and that layout is the caller's, or einsum's (a permuted view): maybe not contiguous
            seen.add(op.span)
            message = (f"`{fn.text(op.span, 40)}`: the result of {p.name} is already contiguous, so "
                       f".contiguous() launches 0 kernels and moves 0 transfers; it can go")
            yield Hit(op.span, message, {"eager": {"kernels": 0, "transfers": 0, "bytes": 0}}, _drop_call(fn, op.span))


def _drop_call(fn: FunctionContext, span) -> Fix | None:
    """`x.contiguous()` -> `x`: the same tensor object, since contiguous() returns its input when the
    layout is already contiguous; so a safe fix. With arguments (a memory format) it is left alone."""
    import libcst as cst  # lazy: libcst takes a fifth of a second to import; only a fix needs it

    found = fn.facts.cst_node(span, cst.Call)
    if found is None:
        return None
    src, call = found
    recv = receiver(call, "contiguous")
    if recv is None:
        return None
    return Fix("Drop the .contiguous() call", "safe", (src.replace(call, recv),))
