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
    for k in eager:
        for oid in k.ops:
            n, r, w = per_op.get(oid, (0, 0, 0))
            per_op[oid] = (n + k.launches, r + len(k.reads) * k.launches, w + len(k.writes) * k.launches)
    rows = []
    for op in fg.ops:
        n, r, w = per_op.get(op.oid, (0, 0, 0))
        rows.append(OpRow(span=op.span, op=op.name, kind=op.category if not op.free_reason else "view",
                          kernels=n, reads=r, writes=w, group=group_of.get(op.oid)))
    return FunctionReport(qualname=fg.qualname, line=fg.span.line, eager=e, compiled=cf, ops=rows,
                          unknown=list(fg.unknowns), assumptions=list(fg.assumptions), graph=fg)
