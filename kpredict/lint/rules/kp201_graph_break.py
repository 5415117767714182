"""KP201 graph-break."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import replace

from kpredict.ir import Span
from kpredict.lint.context import FunctionContext, node_span
from kpredict.lint.figures import as_dict, describe, plural
from kpredict.lint.model import Example, Hit, Rule
from kpredict.models.inductor import compiled_schedule
from kpredict.traffic import figures


MAX_WHAT_IF = 32  # lines for which the compile model is rerun without the break (each run costs a schedule)


class GraphBreak(Rule):
    """
    ## What it does
    Reports each line that breaks the `torch.compile` graph of a compiled function (a host sync such
    as `.item()`, `print()` of a tensor, a branch on a tensor's value, an unsupported call), with
    Dynamo's reason, and the compiled figures with and without that break.

    ## Why it costs
    A graph break ends the compiled region: Inductor cannot fuse across it, every tensor that lives
    across the break is written to memory and read back, Python runs in between, and each piece is
    compiled and guarded on its own. A break inside a loop splits the function into many graphs.
    """

    code = "KP201"
    name = "graph-break"
    severity = "warning"
    summary = "A line that splits a torch.compile graph, with Dynamo's reason"
    fix = "Keep the compiled region free of host syncs, print() and branches on tensor values."

    INVALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(1024)\n"
            "@torch.compile\n"
            "def normalize(x):\n"
            "    y = x - x.mean()\n"
            "    print(y)  # expect: KP201\n"
            "    return y / y.std()\n"
        ),
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(1024)\n"
            "def clipped(x):\n"
            "    if x.max() > 1:  # expect: KP201\n"
            "        x = x.clamp(max=1)\n"
            "    return x * 2\n"
            "\n"
            "\n"
            "fast = torch.compile(clipped)\n"
            "out = fast(torch.randn(1024))\n"
        ),
    ]
    VALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(1024)\n"
            "@torch.compile\n"
            "def normalize(x):\n"
            "    y = x - x.mean()\n"
            "    return y / y.std()\n"
        ),
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(1024)\n"
            "def clipped(x):\n"
            "    if x.max() > 1:\n"
            "        x = x.clamp(max=1)\n"
            "    return x * 2\n"
        ),
    ]

    def check(self, fn: FunctionContext) -> Iterator[Hit]:
        if not fn.fg.compiled_call or not fn.fg.graph_breaks:
            return
        fg = fn.fg
        c = fn.report.compiled
        by_line: dict[int, list[str]] = {}
        for b in fg.graph_breaks:
            reasons = by_line.setdefault(b.line, [])
            if b.reason not in reasons:
                reasons.append(b.reason)
        graphs = max((op.graph for op in fg.ops if op.only != "eager"), default=0) + 1
        consistent = len(fg.graph_breaks) == graphs - 1
        for n, (line, reasons) in enumerate(sorted(by_line.items())):
            message = (f"graph break: {'; '.join(reasons)}; `{fn.qualname}` compiles into "
                       f"{plural(c.graphs, 'graph')} with {describe(c)}")
            figs = {"compiled": dict(as_dict(c), graphs=c.graphs)}
            if consistent and n < MAX_WHAT_IF:
                removed = [i for i, b in enumerate(fg.graph_breaks) if b.line == line]
                without, n_graphs = self._without(fn, removed, graphs)
                message += f"; without this break: {plural(n_graphs, 'graph')} with {describe(without)}"
                figs["without_break"] = dict(as_dict(without), graphs=n_graphs)
            yield Hit(self._span(fn, line), message, figs)

    @staticmethod
    def _without(fn: FunctionContext, removed: list[int], graphs: int):
        """Compiled figures with the breaks at indexes `removed` taken out (their graphs merged)."""
        def renumber(g: int) -> int:
            return g - sum(1 for i in removed if i < g)

        fg = replace(fn.fg, ops=[replace(op, graph=renumber(op.graph)) for op in fn.fg.ops],
                     graph_breaks=[b for i, b in enumerate(fn.fg.graph_breaks) if i not in removed])
        kernels, cg = compiled_schedule(fg, fn.target)
        return figures(kernels, cg), graphs - len(removed)

    @staticmethod
    def _span(fn: FunctionContext, line: int) -> Span:
        """The statement that breaks: the condition of an `if`/`while`, the iterable of a `for`."""
        best = fn.facts.statements_by_line.get(line)
        if isinstance(best, (ast.If, ast.While)):
            return node_span(best.test)
        if isinstance(best, (ast.For, ast.AsyncFor)):
            return node_span(best.iter)
        if best is not None and best.end_lineno == line:
            return node_span(best)
        text = fn.facts.line_bytes(line)
        indent = len(text) - len(text.lstrip())
        return Span(line, indent, line, len(text.rstrip()))
