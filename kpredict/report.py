"""Assemble one function's report from its graph and the two models' kernels."""

from __future__ import annotations

import re

from kpredict.cost import kernel_costs, speedup, total
from kpredict.devices import default_flop_kinds, device_for
from kpredict.ir import EAGER_REGION, CompiledFigures, Figures, FunctionGraph, FunctionReport, Kernel, ModeCost, OpRow, Unknown
from kpredict.models.eager import eager_syncs
from kpredict.settings import Settings
from kpredict.traffic import figures, unsized_transfers


def function_report(fg: FunctionGraph, eager: list[Kernel], schedule: tuple[list[Kernel], FunctionGraph],
                    settings: Settings, costs: bool = True) -> FunctionReport:
    """The figures of one analyzed function; `schedule`: the compiled kernels and the graph they refer to
    (kpredict.models.inductor.compiled_schedule); `costs`: model its FLOPs and times too (kpredict.cost),
    which the byte-formula and loop-count reruns do not show (30% of a rerun's cost on kimi_linear)."""
    compiled, cg = schedule
    causes = lower_bound_causes(fg)
    partial = bool(causes)  # figures that are lower bounds: bytes too, without the tensors of unknown size
    syncs = eager_syncs(fg)
    e = figures(eager, fg, syncs, partial)
    traced = [op for op in fg.ops if op.only != "eager"]  # ops of eager mode only are in no graph
    c_syncs = sum(op.syncs for op in traced) if len(traced) != len(fg.ops) else syncs
    c = figures(compiled, cg, c_syncs, partial)
    graphs = (max((op.graph for op in traced), default=0) + 1) if traced else 1
    if any(op.region == EAGER_REGION for op in traced):  # frames Dynamo skips make no graph
        graphs = len({op.graph for op in traced if op.region != EAGER_REGION})
    cf = CompiledFigures(kernels=c.kernels, reads=c.reads, writes=c.writes, bytes=c.bytes, syncs=c_syncs,
                         graphs=graphs, graph_breaks=list(fg.graph_breaks),
                         kernel_names=[k.name for k in compiled for _ in range(k.launches)],
                         extern_inner=sum(k.launches for k in compiled if k.inner))
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
    assumptions = list(fg.assumptions)
    left = (unsized_transfers(eager, fg), unsized_transfers(compiled, cg)) if partial else (0, 0)
    if any(left):
        assumptions.append(f"bytes count only tensors of known size: {left[0]} eager and {left[1]} compiled transfers of "
                           "tensors of unknown size (from what is not understood) left out, a lower bound as the kernels are")
    device = device_for(settings.target, settings.gpu)
    notes: set[str] = set()
    kinds = default_flop_kinds()
    ec, cc = ((mode_cost(kernel_costs(kernels, g, device, kinds, notes)) for kernels, g in ((eager, fg), (compiled, cg)))
              if costs else (ModeCost(), ModeCost()))
    assumptions += sorted(notes)
    return FunctionReport(qualname=fg.qualname, line=fg.span.line, eager=e, compiled=cf, ops=rows,
                          unknown=list(fg.unknowns), assumptions=assumptions, graph=fg,
                          lower_bound=bool(causes), lower_bound_causes=causes,
                          compiled_causes=list(fg.compiled_unknowns), phases=phase_figures(fg, eager, syncs, partial),
                          activation_bytes=saved_bytes(fg), partial_bytes=any(left),
                          kernel_lists=(eager, compiled, cg) if fg.shape_symbols or settings.dims else None,
                          eager_cost=ec, compiled_cost=cc,
                          # a compiled figure that leaves part of the step out (its backward) is no speedup
                          speedup=None if fg.compiled_unknowns else speedup(ec.time_us, cc.time_us),
                          device=device.name)


def phase_figures(fg: FunctionGraph, eager: list[Kernel], syncs: int, partial: bool = False) -> dict[str, Figures]:
    """A training step's eager figures per phase (its ops' `phase`); none for a forward alone. `partial`:
    the function's figures are lower bounds, its bytes too (traffic.figures)."""
    phase = {op.oid: op.phase for op in fg.ops}
    if all(p == "forward" for p in phase.values()):
        return {}
    out: dict[str, Figures] = {}
    for name in ("forward", "backward", "optimizer"):
        mine = [k for k in eager if k.ops and phase.get(k.ops[0]) == name]
        if mine or name != "optimizer":
            out[name] = figures(mine, fg, syncs if name == "forward" else 0, partial)
    return out


def saved_bytes(fg: FunctionGraph) -> int | None:
    """Bytes of what autograd saved for a backward, the most of the function's backwards (each frees
    what it used): each saved tensor's storage once (the views of one qkv projection share it),
    parameters and other leaves that require grad left out (they are kept anyway). None when a size
    is unknown; 0 without a backward."""
    sizes = [_saved_bytes(fg, saved) for saved in fg.saved]
    return None if None in sizes else max(sizes, default=0)  # type: ignore[type-var]


def _saved_bytes(fg: FunctionGraph, saved: list[int]) -> int | None:
    total = 0
    seen: set[int] = set()
    for vid in saved:
        v = fg.values.get(vid)
        if v is None or v.requires_grad or v.storage in seen:
            continue
        seen.add(v.storage)
        base = fg.values.get(v.storage, v)
        if base.requires_grad:
            continue
        n = base.meta.nbytes
        if n is None:
            return None
        total += n
    return total


def mode_cost(costs: list) -> ModeCost:
    """A mode's totals of its kernels' modelled costs (kpredict.cost)."""
    return ModeCost(flops=total(costs, "flops"), flops_elementwise=total(costs, "flops_elementwise"),  # type: ignore[arg-type]
                    time_us=total(costs, "time_us"), kernels=costs)


def may_launch(u: Unknown) -> bool:
    """Whether something not understood may launch kernels. The interpreter records an unknown only
    where tensors reach it (an unresolved torch call, an unknown module or Tensor method, a call into
    code it cannot see, a recursive call not followed), so each may, except what is known to launch
    nothing: constructing a torch.optim optimizer (its state is made at its first step)."""
    return not _NO_LAUNCH.match(u.name)


_NO_LAUNCH = re.compile(r"torch\.optim\.[A-Z]\w*$")


def lower_bound_causes(fg: FunctionGraph) -> list[Unknown]:
    """Why a function's figures are lower bounds: what it (or what it inlines) does that is not
    understood, and an analysis cut short (at the def line, with the reason it gives)."""
    causes = [u for u in fg.unknowns if may_launch(u)]
    if fg.cut_short and not any(u.name.startswith("analysis cut short") for u in causes):
        why = next((a for a in reversed(fg.assumptions) if "first part" in a or a.startswith(("no tensor work in", "not analyzed: "))), "")
        causes.append(Unknown(fg.span.line, "analysis cut short" + (f": {why}" if why else "")))
    return causes
