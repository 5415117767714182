"""Assemble one function's report from its graph and the two models' kernels."""

from __future__ import annotations

from kpredict.ir import CompiledFigures, FunctionGraph, FunctionReport, Kernel, OpRow
from kpredict.models.eager import eager_syncs
from kpredict.settings import Settings
from kpredict.traffic import figures


def function_report(fg: FunctionGraph, eager: list[Kernel], compiled: list[Kernel], settings: Settings) -> FunctionReport:
    syncs = eager_syncs(fg)
    e = figures(eager, fg, syncs)
    traced = [op for op in fg.ops if op.only != "eager"]  # ops of eager mode only are in no graph
    c_syncs = sum(op.syncs for op in traced) if len(traced) != len(fg.ops) else syncs
    c = figures(compiled, fg, c_syncs)
    graphs = (max((op.graph for op in traced), default=0) + 1) if traced else 1
    cf = CompiledFigures(kernels=c.kernels, reads=c.reads, writes=c.writes, bytes=c.bytes, syncs=c_syncs,
                         graphs=graphs, graph_breaks=list(fg.graph_breaks),
                         kernel_names=[k.name for k in compiled for _ in range(k.launches)])
    group_of: dict[int, int] = {}
    for i, k in enumerate(compiled):
        for oid in k.ops:
            group_of.setdefault(oid, i)
    per_op: dict[int, tuple[int, int, int]] = {}
    none = (0, 0, 0)
    for k in eager:
        n, r, w = k.launched, len(k.reads) * k.launches, len(k.writes) * k.launches
        for oid in k.ops:
            a, b, c = per_op.get(oid, none)
            per_op[oid] = (a + n, b + r, c + w)
    rows = []
    add, get, group = rows.append, per_op.get, group_of.get
    for op in fg.ops:  # one row per op (hundreds of thousands per file): positional fields, no frame
        n, r, w = get(op.oid, none)
        add(OpRow(op.span, op.name, op.category if not op.free_reason else "view", n, r, w, group(op.oid)))
    return FunctionReport(qualname=fg.qualname, line=fg.span.line, eager=e, compiled=cf, ops=rows,
                          unknown=list(fg.unknowns), assumptions=list(fg.assumptions), graph=fg)
