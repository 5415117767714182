"""The eager model: every launching op is dispatched on its own and goes through memory.

Per op: the number of kernels the target launches (rules/), one read per distinct tensor input and
one write per output (an in-place op reads and writes its target). An op that launches two kernels
out of place (scatter, baddbmm...) is a copy of its input followed by the in-place op, unless its
facts say the launches are one op's (group_norm on cuda), whose transfers are then counted once.
A copy the target does with a driver memcpy (rules/targets.toml memcpy_copies: clone of a contiguous
tensor on cuda) moves its bytes without a kernel launch: kind "memcpy", counted in traffic only.
"""

from __future__ import annotations

from kpredict.ir import FunctionGraph, Kernel
from kpredict.opfacts import OpTable, attention_kernel, default_table, default_targets

SILENT = ("view", "alloc", "noop", "sync")


def eager_kernels(fg: FunctionGraph, target: str, table: OpTable | None = None) -> list[Kernel]:
    table = table or default_table()
    out: list[Kernel] = []
    facts = table.ops
    conf = default_targets().get(target, {})
    memcpy = frozenset(conf.get("memcpy_copies", ()))
    for op in fg.ops:  # once per op of every function: no call per op
        if op.only == "compiled" or op.category in SILENT or op.free_reason:
            continue
        fact = facts.get(op.name)
        if fact is None:
            continue
        n = op.eager_kernels or fact.eager_kernels(target)  # the op's own count: a multi-tensor op's launches
        if n == 0:
            continue
        name = f"aten::{fact.eager_name or (op.aten[0] if op.aten else op.name)}"
        if op.name == "scaled_dot_product_attention" and "sdpa_kernel" in conf and op.outputs:
            name = f"aten::{attention_kernel(conf, fg.values[op.outputs[0]].meta.dtype)}"
        reads = tuple(op.inputs)
        writes = tuple(op.outputs)
        if fact.eager_traffic is not None:
            r, w = fact.eager_traffic
            reads, writes = reads[:r], writes[:w] if w <= len(writes) else writes
        if op.name in memcpy and op.inputs and _contiguous(fg, op.inputs[0]):
            # a same-layout copy: the driver's memcpy moves the bytes, no kernel is launched
            out.append(Kernel(name, (op.oid,), reads, writes, "memcpy", op.graph))
            continue
        if fact.own_launches(target) >= 2 or (op.eager_kernels and n >= 2):
            # one op, several launches: its transfers are the op's, counted once (as the oracle does)
            out.append(Kernel(name, (op.oid,), reads, writes, "eager", op.graph))
            out.append(Kernel(name, (op.oid,), (), (), "eager", op.graph, n - 1))
            continue
        if n >= 2 and op.inputs and op.outputs:
            # copy of self into the output, then the in-place kernel over it
            out.append(Kernel(f"aten::copy_", (op.oid,), (op.inputs[0],), (op.outputs[0],), "eager", op.graph))
            out.append(Kernel(name, (op.oid,), (op.outputs[0],) + tuple(op.inputs[1:]), writes, "eager", op.graph,
                              launches=n - 1))
            continue
        out.append(Kernel(name, (op.oid,), reads, writes, "eager", op.graph, n))
    return out


def _contiguous(fg: FunctionGraph, vid: int) -> bool:
    v = fg.values.get(vid)
    return v is not None and v.contiguous


def eager_syncs(fg: FunctionGraph) -> int:
    return sum(op.syncs for op in fg.ops if op.only != "compiled")
