"""What a rule sees: one function's op graph and figures, plus the source facts the graph does not keep.

The op graph (kpredict.frontend) knows the ops of one call, with loops unrolled and helpers inlined,
and each op's source span. Some rules need more: which Python loop an op sits in, the source text of
a call, a `.cuda()` that the frontend treats as free. Those come from the module's `ast` tree
(kpredict.frontend.parse.parse_module), here, without touching the frontend.

Columns: the frontend's spans and `ast` positions are UTF-8 byte offsets; every rule works in those,
and the engine converts to code points (ir.Span's convention) once, when it makes a Diagnostic. A
fix's edits come from libcst (kpredict.lint.rewrite), in code points already.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from kpredict.frontend.parse import ModuleInfo
from kpredict.ir import FunctionGraph, FunctionReport, Kernel, Op, Span
from kpredict.lint import hotpath
from kpredict.lint.rewrite import RewriteSource
from kpredict.models.eager import eager_kernels
from kpredict.opfacts import OpTable
from kpredict.settings import Settings

LOOPS = (ast.For, ast.AsyncFor, ast.While)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def node_span(node: ast.AST) -> Span:
    return Span(node.lineno, node.col_offset, node.end_lineno or node.lineno,  # type: ignore[attr-defined]
                node.end_col_offset if node.end_col_offset is not None else node.col_offset)  # type: ignore[attr-defined]


def contains(outer: Span, inner: Span) -> bool:
    return (outer.line, outer.col) <= (inner.line, inner.col) and (inner.end_line, inner.end_col) <= (
        outer.end_line, outer.end_col)


class ModuleFacts:
    """Source-level facts of one module, computed lazily and shared by every function's context."""

    def __init__(self, module: ModuleInfo, path: str = "") -> None:
        self.module = module
        self.path = path or module.path
        self.lines = module.lines
        self._encoded: dict[int, bytes] = {}
        self._cold: dict[str, str | None] = {}

    @cached_property
    def rewrite_source(self) -> RewriteSource | None:
        """The module's libcst tree, parsed the first time a rule builds a fix (kpredict.lint.rewrite)."""
        return RewriteSource.parse("\n".join(self.lines) + "\n")

    def cst_node(self, span: Span, kind: type | tuple[type, ...]) -> tuple[RewriteSource, Any] | None:
        """(tree, node) for the libcst node of `kind` at an ast span (byte columns), or None."""
        src = self.rewrite_source
        if src is None:
            return None
        node = src.node_at(self.span_codepoints(span), kind)
        return None if node is None else (src, node)

    # ---------------------------------------------------------------- text and columns
    def line_bytes(self, line: int) -> bytes:
        b = self._encoded.get(line)
        if b is None:
            b = self.lines[line - 1].encode("utf-8") if 0 < line <= len(self.lines) else b""
            self._encoded[line] = b
        return b

    def to_codepoints(self, line: int, byte_col: int) -> int:
        return len(self.line_bytes(line)[:byte_col].decode("utf-8", errors="replace"))

    def span_codepoints(self, span: Span) -> Span:
        return Span(span.line, self.to_codepoints(span.line, span.col), span.end_line,
                    self.to_codepoints(span.end_line, span.end_col))

    def text(self, span: Span, limit: int | None = 60) -> str:
        """The source of a span (byte columns), on one line, whitespace collapsed; cut at `limit`."""
        if span.line == span.end_line:
            raw = self.line_bytes(span.line)[span.col:span.end_col].decode("utf-8", errors="replace")
        else:
            parts = [self.line_bytes(span.line)[span.col:].decode("utf-8", errors="replace")]
            parts += [self.lines[i - 1] for i in range(span.line + 1, span.end_line) if 0 < i <= len(self.lines)]
            parts.append(self.line_bytes(span.end_line)[:span.end_col].decode("utf-8", errors="replace"))
            raw = " ".join(parts)
        text = " ".join(raw.split())
        if limit is not None and len(text) > limit:
            text = text[: limit - 3] + "..."
        return text

    # ---------------------------------------------------------------- nodes
    @cached_property
    def nodes_by_span(self) -> dict[Span, list[ast.AST]]:
        index: dict[Span, list[ast.AST]] = {}
        for node in ast.walk(self.module.tree):
            if isinstance(node, (ast.expr, ast.stmt)):
                index.setdefault(node_span(node), []).append(node)
        return index

    def node_at(self, span: Span, kind: type | tuple[type, ...] = ast.AST) -> ast.AST | None:
        for node in self.nodes_by_span.get(span, ()):
            if isinstance(node, kind):
                return node
        return None

    @cached_property
    def statements_by_line(self) -> dict[int, ast.stmt]:
        """The outermost statement starting on each line."""
        out: dict[int, ast.stmt] = {}
        for node in ast.walk(self.module.tree):
            if isinstance(node, ast.stmt):
                out.setdefault(node.lineno, node)
        return out

    def scope_node(self, qualname: str) -> ast.AST | None:
        if qualname == "<module>":
            return self.module.tree
        return self.module.functions.get(qualname)

    def scope_body(self, scope: ast.AST) -> Iterator[ast.AST]:
        """Every node of a scope (function or module), not entering nested functions and classes."""
        if isinstance(scope, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)):
            stack: list[ast.AST] = list(scope.body)
        else:
            stack = list(ast.iter_child_nodes(scope))
        while stack:
            node = stack.pop()
            yield node
            if isinstance(node, SCOPES):
                continue
            stack.extend(ast.iter_child_nodes(node))

    def cold_reason(self, qualname: str) -> str | None:
        """Why a whole function is off the hot path (kpredict.lint.hotpath), or None."""
        if qualname not in self._cold:
            self._cold[qualname] = self.path_reason or hotpath.function_reason(self.module, qualname)
        return self._cold[qualname]

    @cached_property
    def path_reason(self) -> str | None:
        return hotpath.path_reason(self.path)

    def loops(self, qualname: str) -> list[ast.AST]:
        scope = self.scope_node(qualname)
        if scope is None:
            return []
        found = [n for n in self.scope_body(scope) if isinstance(n, LOOPS)]
        return sorted(found, key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]

    def resolve(self, func: ast.expr) -> str | None:
        """Dotted name of a callee through the module's imports: `F.gelu` -> torch.nn.functional.gelu."""
        parts: list[str] = []
        cur: ast.expr = func
        while isinstance(cur, ast.Attribute):
            parts.append(cur.attr)
            cur = cur.value
        if not isinstance(cur, ast.Name):
            return None
        head = self.module.imports.get(cur.id)
        if head is None:
            return None
        return ".".join([head] + parts[::-1])


def in_loop(loop: ast.AST, span: Span) -> bool:
    """Is `span` evaluated once per iteration of `loop` (its body, its while-test), not its `for` header?"""
    if not contains(node_span(loop), span):
        return False
    if isinstance(loop, (ast.For, ast.AsyncFor)):
        header = node_span(loop.iter)
        if contains(header, span) or contains(node_span(loop.target), span):
            return False
    return True


@dataclass
class FunctionContext:
    """One function, as a rule sees it."""

    qualname: str
    report: FunctionReport
    fg: FunctionGraph
    facts: ModuleFacts
    settings: Settings
    table: OpTable
    compiled: bool  # runs under torch.compile (wrapped in the file, or inlined into such a function)
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def target(self) -> str:
        return self.settings.target

    @cached_property
    def own_ops(self) -> list[Op]:
        """Ops written in this function's own body (not inlined from helpers it calls)."""
        return [op for op in self.fg.ops if not op.via]

    @cached_property
    def eager(self) -> list[Kernel]:
        return eager_kernels(self.fg, self.target, self.table)

    @cached_property
    def eager_by_op(self) -> dict[int, list[Kernel]]:
        out: dict[int, list[Kernel]] = {}
        for k in self.eager:
            for oid in k.ops:
                out.setdefault(oid, []).append(k)
        return out

    def launches(self, op: Op) -> int:
        return sum(k.launches for k in self.eager_by_op.get(op.oid, ()))

    @cached_property
    def span_counts(self) -> Counter[Span]:
        """How many times each source span was emitted: the iterations of the loops around it."""
        return Counter(op.span for op in self.own_ops)

    @cached_property
    def scope(self) -> ast.AST | None:
        return self.facts.scope_node(self.qualname)

    @cached_property
    def loops(self) -> list[ast.AST]:
        return self.facts.loops(self.qualname)

    def enclosing_loops(self, span: Span) -> list[ast.AST]:
        """Loops of this function around `span`, outermost first."""
        return [lp for lp in self.loops if in_loop(lp, span)]

    def ops_in(self, loop: ast.AST) -> list[Op]:
        return [op for op in self.own_ops if in_loop(loop, op.span)]

    @cached_property
    def tensor_names(self) -> set[str]:
        """Names bound to tensors in this function: tensor parameters, and names assigned the result
        of a tensor op (an op of the graph sits exactly at the assigned expression)."""
        names = {v.name for v in self.fg.values.values() if v.is_input and v.name}
        if self.scope is not None:
            for node in self.facts.scope_body(self.scope):
                if isinstance(node, ast.Assign) and node_span(node.value) in self.output_spans:
                    names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        return names

    @cached_property
    def output_spans(self) -> set[Span]:
        """Source spans of the ops that produce a tensor."""
        return {op.span for op in self.fg.ops if op.outputs}

    def is_tensor_expr(self, node: ast.expr) -> bool:
        """A name bound to a tensor, or an expression the graph has an op for."""
        if isinstance(node, ast.Name):
            return node.id in self.tensor_names
        return node_span(node) in self.output_spans

    @cached_property
    def lazy_blocks(self) -> list[Span]:
        return hotpath.lazy_init_blocks(self.scope) if self.scope is not None else []

    def cold(self, span: Span) -> str | None:
        """Why the code at `span` is off the hot path (runs once, or host-side), or None."""
        reason = self.facts.cold_reason(self.qualname)
        if reason is None and any(contains(b, span) for b in self.lazy_blocks):
            reason = "state built once (a lazy-initialization block)"
        return reason

    @property
    def is_forward(self) -> bool:
        return self.qualname.endswith(".forward")

    @cached_property
    def is_training_step(self) -> bool:
        """The function runs a backward (its own `loss.backward()`): a step of a training loop."""
        return any(op.phase == "backward" for op in self.fg.ops)

    def text(self, span: Span, limit: int | None = 60) -> str:
        return self.facts.text(span, limit)

    def producer(self, vid: int) -> Op | None:
        v = self.fg.values.get(vid)
        if v is None or v.producer is None:
            return None
        return self.op_by_id.get(v.producer)

    @cached_property
    def op_by_id(self) -> dict[int, Op]:
        return {op.oid: op for op in self.fg.ops}

    def storage(self, vid: int) -> int:
        v = self.fg.values.get(vid)
        return v.storage if v is not None else vid

    @cached_property
    def readers(self) -> dict[int, list[Op]]:
        """storage -> the ops that read it (views included), in program order."""
        out: dict[int, list[Op]] = {}
        for op in self.fg.ops:
            for vid in op.inputs:
                out.setdefault(self.storage(vid), []).append(op)
        return out
