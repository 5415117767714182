"""The numbers a finding quotes, always from the models: eager kernels of a set of ops, and what
Inductor would launch for the same ops (the compile model run on the sub-graph they form)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kpredict.ir import Count, Figures, FunctionGraph, Kernel
from kpredict.lint.context import FunctionContext
from kpredict.models.inductor import compiled_schedule
from kpredict.render.text_report import human_bytes
from kpredict.traffic import figures

FREE = ("view", "alloc", "noop")


def transfers(f: Figures) -> Count:
    if isinstance(f.reads, int) and isinstance(f.writes, int):
        return f.reads + f.writes
    return f"{f.reads} + {f.writes}"


def as_dict(f: Figures) -> dict[str, Any]:
    return {"kernels": f.kernels, "transfers": transfers(f), "bytes": f.bytes}


def plural(n: Count, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def describe(f: Figures | dict[str, Any], verb: str = "") -> str:
    """'4 kernels and 9 transfers (36.9 KB)'; verb='move' gives '4 kernels and move 9 transfers ...'."""
    d = as_dict(f) if isinstance(f, Figures) else f
    text = f"{plural(d['kernels'], 'kernel')} and {verb + ' ' if verb else ''}{plural(d['transfers'], 'transfer')}"
    if d.get("bytes") is not None:
        text += f" ({human_bytes(d['bytes'])})"
    return text


def eager_figures(fn: FunctionContext, oids: set[int] | list[int]) -> Figures:
    """Eager kernels, transfers and bytes of the given ops (each op runs on its own)."""
    want = set(oids)
    kernels = [k for k in fn.eager if set(k.ops) <= want]
    return figures(kernels, fn.fg)


def subgraph(fn: FunctionContext, oids: set[int]) -> FunctionGraph:
    """The function's graph cut down to `oids` (and the free view ops that connect them).

    A value of the cut escapes (is a result of the sub-graph) when an op outside it reads its storage
    or the function returns it, exactly as an intermediate would have to be written to memory.
    """
    fg = fn.fg
    is_free = lambda op: op.category in FREE or op.free_reason  # noqa: E731
    outside = {fn.storage(v) for op in fg.ops if op.oid not in oids and not is_free(op) for v in op.inputs}
    outside |= {fn.storage(v) for v in fg.returns}
    ops = [op for op in fg.ops if op.oid in oids or is_free(op)]
    returns: list[int] = []
    for op in ops:
        if op.oid in oids:
            returns.extend(v for v in op.outputs + op.mutates if fn.storage(v) in outside and v not in returns)
    return replace(fg, ops=ops, returns=returns, graph_breaks=[])


def fused_kernels(fn: FunctionContext, oids: set[int]) -> tuple[list[Kernel], FunctionGraph]:
    return compiled_schedule(subgraph(fn, oids), fn.target)


def fused_figures(fn: FunctionContext, oids: set[int] | list[int]) -> Figures:
    """What TorchInductor would launch for these ops alone (the compile model on their sub-graph)."""
    kernels, sub = fused_kernels(fn, set(oids))
    return figures(kernels, sub)


def total(fs: list[Figures]) -> Figures:
    """Sum of figures (bytes unknown when any part is)."""
    out = Figures(0, 0, 0, 0, 0)
    for f in fs:
        out.kernels = _add(out.kernels, f.kernels)
        out.reads = _add(out.reads, f.reads)
        out.writes = _add(out.writes, f.writes)
        out.bytes = None if out.bytes is None or f.bytes is None else _add(out.bytes, f.bytes)
    return out


def _add(a: Count, b: Count) -> Count:
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    return f"{a} + {b}"
