"""KP101 unfused-elementwise-chain."""

from __future__ import annotations

from collections.abc import Iterator

from kpredict.lint.context import FunctionContext
from kpredict.lint.figures import as_dict, describe, eager_figures, fused_figures
from kpredict.lint.model import Example, Hit, Rule
from kpredict.ir import Span

ELEMENTWISE = ("pointwise", "random")


class UnfusedElementwiseChain(Rule):
    """
    ## What it does
    Finds chains of elementwise ops (arithmetic, activations, casts, comparisons) that feed each
    other in code that does not run under `torch.compile`, and says how many kernels and memory
    transfers fusing them would save. The fused figures come from kpredict's Inductor model run on
    the chain alone.

    ## Why it costs
    In eager mode every elementwise op is a kernel of its own: it reads its inputs from GPU memory
    and writes its result back, so a chain of N ops moves every intermediate tensor through memory
    twice. Elementwise kernels are memory bound: the time goes into those transfers, not the math.
    Fused, the chain reads its inputs once and writes its results once.
    """

    code = "KP101"
    name = "unfused-elementwise-chain"
    severity = "warning"
    summary = "Elementwise ops that eager mode runs as one kernel each, where a fused kernel would do"
    fix = "Run the function under torch.compile (or use a fused op) so that the chain becomes one kernel."
    options = {"min-chain-length": 3}
    option_docs = {"min-chain-length": "Report chains of at least this many elementwise ops."}

    INVALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(64, 64)\n"
            "def gelu_tanh(x):\n"
            "    inner = 0.7978845608 * (x + 0.044715 * x ** 3)  # expect: KP101\n"
            "    return 0.5 * x * (1.0 + torch.tanh(inner))\n"
        ),
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example a=randn(1000) b=randn(1000)\n"
            "def scaled_sum(a, b):\n"
            "    c = a + b  # expect: KP101\n"
            "    d = c * 2\n"
            "    return d.relu()\n"
        ),
    ]
    VALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(64, 64)\n"
            "@torch.compile\n"
            "def gelu_tanh(x):\n"
            "    inner = 0.7978845608 * (x + 0.044715 * x ** 3)\n"
            "    return 0.5 * x * (1.0 + torch.tanh(inner))\n"
        ),
        Example(
            "import torch\n"
            "import torch.nn.functional as F\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(64, 64)\n"
            "def gelu_tanh(x):\n"
            "    return F.gelu(x, approximate='tanh')\n"
        ),
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example a=randn(1000) b=randn(1000)\n"
            "def scaled_sum(a, b):\n"
            "    c = a + b\n"
            "    d = c * 2\n"
            "    return d.relu()\n",
            options={"min-chain-length": 4},
        ),
    ]

    def check(self, fn: FunctionContext) -> Iterator[Hit]:
        if fn.compiled:
            return
        min_len = int(fn.options.get("min-chain-length", 3))
        members = [op for op in fn.own_ops
                   if op.category in ELEMENTWISE and not op.free_reason and fn.launches(op) > 0]
        ids = {op.oid for op in members}
        parent = {oid: oid for oid in ids}

        def find(a: int) -> int:
            while parent[a] != a:
                parent[a] = parent[parent[a]]
                a = parent[a]
            return a

        last: dict[int, int] = {}  # storage -> last op writing it
        for op in fn.fg.ops:
            if op.oid in ids:
                for vid in op.inputs + op.mutates:
                    w = last.get(fn.storage(vid))
                    if w is not None and w in ids:
                        parent[find(w)] = find(op.oid)
            if op.category not in ("view", "alloc", "noop", "sync") and not op.free_reason:
                for vid in op.outputs + op.mutates:
                    last[fn.storage(vid)] = op.oid
        chains: dict[int, list[int]] = {}
        for op in members:
            chains.setdefault(find(op.oid), []).append(op.oid)
        for oids in sorted(chains.values(), key=min):
            if len(oids) < min_len:
                continue
            eager = eager_figures(fn, oids)
            fused = fused_figures(fn, oids)
            if not (isinstance(fused.kernels, int) and isinstance(eager.kernels, int)):
                continue
            if fused.kernels == 0 or fused.kernels >= eager.kernels:
                continue  # dead code, or nothing Inductor would fuse
            ops = [fn.op_by_id[o] for o in oids]
            start = min((op.span.line, op.span.col) for op in ops)
            end = max((op.span.end_line, op.span.end_col) for op in ops)
            message = (f"{len(oids)} elementwise ops launch {describe(eager, 'move')}; "
                       f"fused they would be {describe(fused)}")
            yield Hit(Span(start[0], start[1], end[0], end[1]), message,
                      {"ops": len(oids), "eager": as_dict(eager), "fused": as_dict(fused)})
