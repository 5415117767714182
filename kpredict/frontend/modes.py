"""One graph from a function analyzed twice: once as eager mode runs it, once as torch.compile traces it.

Code may ask which mode it runs in (`torch.compiler.is_compiling()`, transformers' `is_tracing()`)
and take other paths: transformers' mask builders check `mask.all()` on the host in eager mode only,
and build a mask they would skip in eager when compiled. A function that asked is interpreted once
per mode (entry.py); this module lines the two op sequences up and keeps one graph in which the ops
both runs made are shared and the others exist in their own mode only (`Op.only`), which the eager
model and the compile model already honour.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import replace

from kpredict.ir import FunctionGraph, Op


def _key(op: Op) -> tuple:
    """What makes an op of one run the same as one of the other. The number of tensors it reads is part
    of it: transformers' attention gets a mask only when compiled (eager mode finds at run time that
    none is needed), and sdpa with a mask is not the eager run's sdpa without one."""
    return (op.name, op.span, op.via, op.only, op.category, len(op.inputs))


def _occurrences(keys: list[tuple]) -> list[tuple]:
    """Each key with the number of times it came before: the third `add` of a layer's line is
    (add, line, ..., 2), which names one op of each run."""
    seen: dict[tuple, int] = {}
    out = []
    for k in keys:
        n = seen.get(k, 0)
        seen[k] = n + 1
        out.append((k, n))
    return out


def _matches(a: list[tuple], b: list[tuple]) -> list[tuple[int, int]]:
    """Pairs (i, j) of ops the two runs share, increasing in both: the longest chain of ops named the
    same in both runs (unique names, so the longest increasing subsequence finds it in n log n)."""
    where = {k: j for j, k in enumerate(_occurrences(b))}
    pairs = [(i, where[k]) for i, k in enumerate(_occurrences(a)) if k in where]
    tails: list[int] = []  # tails[L]: index into pairs of the chain of length L+1 ending lowest
    back: list[int] = [-1] * len(pairs)
    for p, (_, j) in enumerate(pairs):
        lo = bisect_left(tails, j, key=lambda t: pairs[t][1])  # the first chain not ending below j
        if lo > 0:
            back[p] = tails[lo - 1]
        if lo == len(tails):
            tails.append(p)
        else:
            tails[lo] = p
    chain: list[tuple[int, int]] = []
    p = tails[-1] if tails else -1
    while p != -1:
        chain.append(pairs[p])
        p = back[p]
    return chain[::-1]


def merge_modes(eager: FunctionGraph, compiled: FunctionGraph) -> FunctionGraph:
    """The eager run's ops where the runs differ, marked eager-only; the compiled run's, marked
    compiled-only; the compiled run's where they agree (its dataflow is what Inductor schedules).
    Graph breaks, returns and compiled regions come from the compiled run; notes from both."""
    a, b = eager.ops, compiled.ops
    ops: list[Op] = []
    i0 = j0 = 0
    for i, j in [*_matches([_key(op) for op in a], [_key(op) for op in b]), (len(a), len(b))]:
        ops.extend(replace(op, only="eager") for op in a[i0:i] if op.only != "compiled")
        ops.extend(replace(op, only="compiled") for op in b[j0:j] if op.only != "eager")
        if j < len(b):
            ops.append(b[j])
        i0, j0 = i + 1, j + 1
    values = dict(eager.values)
    values.update(compiled.values)
    known = set(compiled.inputs)
    inputs = list(compiled.inputs) + [v for v in eager.inputs if v not in known]
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
