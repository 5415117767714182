"""One graph from a function analyzed twice: once as eager mode runs it, once as torch.compile traces it.

Code may ask which mode it runs in (`torch.compiler.is_compiling()`, transformers' `is_tracing()`)
and take other paths: transformers' mask builders check `mask.all()` on the host in eager mode only,
and build a mask they would skip in eager when compiled. A function that asked is interpreted once
per mode (entry.py); this module lines the two op sequences up and keeps one graph in which the ops
both runs made are shared and the others exist in their own mode only (`Op.only`), which the eager
model and the compile model already honour.
"""

from __future__ import annotations

from dataclasses import replace
from difflib import SequenceMatcher

from kpredict.ir import FunctionGraph, Op


def _key(op: Op) -> tuple:
    return (op.name, op.span, op.via, op.only, op.category)


def _common_ends(a: list[tuple], b: list[tuple]) -> tuple[int, int]:
    """Lengths of the longest common prefix and suffix (not overlapping)."""
    n = min(len(a), len(b))
    lo = 0
    while lo < n and a[lo] == b[lo]:
        lo += 1
    hi = 0
    while hi < n - lo and a[len(a) - 1 - hi] == b[len(b) - 1 - hi]:
        hi += 1
    return lo, hi


def merge_modes(eager: FunctionGraph, compiled: FunctionGraph) -> FunctionGraph:
    """The eager run's ops where the runs differ, marked eager-only; the compiled run's, marked
    compiled-only; the compiled run's where they agree (its dataflow is what Inductor schedules).
    Graph breaks, returns and compiled regions come from the compiled run; notes from both."""
    ka, kb = [_key(op) for op in eager.ops], [_key(op) for op in compiled.ops]
    lo, hi = _common_ends(ka, kb)
    ops: list[Op] = list(compiled.ops[:lo])
    mid_a, mid_b = ka[lo:len(ka) - hi], kb[lo:len(kb) - hi]
    # the middle is where the paths parted: usually a few ops (a mask builder), so an exact
    # alignment costs nothing next to the analysis that found it
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, mid_a, mid_b, autojunk=False).get_opcodes():
        if tag == "equal":
            ops.extend(compiled.ops[lo + j1:lo + j2])
            continue
        ops.extend(replace(op, only="eager") for op in eager.ops[lo + i1:lo + i2] if op.only != "compiled")
        ops.extend(replace(op, only="compiled") for op in compiled.ops[lo + j1:lo + j2] if op.only != "eager")
    ops.extend(compiled.ops[len(kb) - hi:])
    values = dict(eager.values)
    values.update(compiled.values)
    inputs = list(compiled.inputs) + [v for v in eager.inputs if v not in set(compiled.inputs)]
    return replace(
        compiled,
        ops=ops,
        values=values,
        inputs=inputs,
        unknowns=_union(eager.unknowns, compiled.unknowns),
        assumptions=_union(eager.assumptions, compiled.assumptions),
        loop_symbols=_union(eager.loop_symbols, compiled.loop_symbols),
        cut_short=eager.cut_short or compiled.cut_short,
    )


def _union(a: list, b: list) -> list:
    out = list(a)
    out.extend(x for x in b if x not in out)
    return out
