"""KP502 dtype-round-trip."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING


from kpredict.ir import Span
from kpredict.lint.context import FunctionContext, contains
from kpredict.lint.figures import as_dict, describe, eager_figures
from kpredict.lint import hotpath
from kpredict.lint.model import Example, Fix, Hit, Rule

if TYPE_CHECKING:
    import libcst as cst

CASTS = ("_to_copy", "float", "half", "bfloat16", "double", "type_as")
# (from, to) where `to` holds every value of `from` exactly: casting back returns the input
WIDENS = {("float16", "float32"), ("float16", "float64"), ("bfloat16", "float32"), ("bfloat16", "float64"),
          ("float32", "float64")}


class DtypeRoundTrip(Rule):
    """
    ## What it does
    Finds a cast to a wider floating dtype followed directly by a cast back, such as
    `x.float().half()` on a float16 tensor or `x.to(torch.float32).to(torch.bfloat16)` on a
    bfloat16 one, in code that does not run under `torch.compile`.

    ## Why it costs
    The wider type holds every value of the narrower one exactly, so the pair returns the input's
    values unchanged, yet each cast is a kernel that reads one full tensor and writes another: two
    launches and four tensor-sized transfers for nothing.
    """

    code = "KP502"
    name = "dtype-round-trip"
    severity = "warning"
    summary = "A cast to a wider dtype immediately cast back: two kernels that return the input's values"
    fix = "Use the tensor as it is, or do the work in the wider dtype before casting back."
    options = {hotpath.OPTION: False}
    option_docs = {hotpath.OPTION: hotpath.OPTION_DOC}

    INVALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(256, 256, dtype=float16)\n"
            "def normalize_input(x):\n"
            "    x = x.float().half()  # expect: KP502\n"
            "    return x * 2\n",
            fixed=(
                "import torch\n"
                "\n"
                "\n"
                "# kpredict: example x=randn(256, 256, dtype=float16)\n"
                "def normalize_input(x):\n"
                "    x = x\n"
                "    return x * 2\n"
            ),
        ),
    ]
    VALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(256, 256, dtype=float16)\n"
            "def upcast_math(x):\n"
            "    return (x.float() * 2).half()\n"
        ),
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(256, 256)\n"
            "def quantize(x):\n"
            "    return x.half().float()\n"
        ),
    ]

    def check(self, fn: FunctionContext) -> Iterator[Hit]:
        if fn.compiled:
            return
        for b in fn.own_ops:
            if b.name not in CASTS or b.free_reason or not b.inputs or not b.outputs:
                continue
            a = fn.producer(b.inputs[0])
            if a is None or a.via or a.name not in CASTS or a.free_reason or not a.inputs:
                continue
            src = fn.fg.values[a.inputs[0]].meta.dtype
            mid = fn.fg.values[a.outputs[0]].meta.dtype
            dst = fn.fg.values[b.outputs[0]].meta.dtype
            if src != dst or (src, mid) not in WIDENS:
                continue
            if [op.oid for op in fn.readers.get(fn.storage(a.outputs[0]), [])] != [b.oid]:
                continue  # the wide copy is used elsewhere too
            eager = eager_figures(fn, {a.oid, b.oid})
            span = b.span if contains(b.span, a.span) else Span(a.span.line, a.span.col, b.span.end_line,
                                                                    b.span.end_col)
            message = (f"`{fn.text(span, 40)}` converts {src} to {mid} and back: {describe(eager)} "
                       f"that return the input's values unchanged; using the input is 0 kernels")
            fix = _use_input(fn, b.span, a.span) if span == b.span else None
            yield Hit(span, message, {"eager": as_dict(eager), "dtypes": [src, mid, dst]}, fix)


def _use_input(fn: FunctionContext, outer: Span, inner: Span) -> Fix | None:
    """`x.float().half()` -> `x`, when both casts are methods chained on one expression. Unsafe: the
    same values, but the result is now `x` itself, so an in-place change of one is seen through the
    other, where the round trip made a copy."""
    import libcst as cst  # lazy: libcst takes a fifth of a second to import; only a fix needs it

    found = fn.facts.cst_node(outer, cst.Call)
    inner_found = fn.facts.cst_node(inner, cst.Call)
    if found is None or inner_found is None:
        return None
    src, call = found
    if not (isinstance(call.func, cst.Attribute) and call.func.value is inner_found[1]):
        return None
    first = inner_found[1]
    if not isinstance(first.func, cst.Attribute):
        return None
    return Fix("Use the input instead of the round trip", "unsafe", (src.replace(call, first.func.value),))
