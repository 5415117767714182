"""Where a function makes the host wait for the device: from the op graph, and from the source for
receivers the graph could not type (a module's output it does not understand yet)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from kpredict.ir import Op, Span
from kpredict.lint.context import FunctionContext, node_span

# Tensor methods that always copy device data to the host (the same reasons rules/ops.toml gives).
SYNC_METHODS = {
    "item": "Tensor.item() reads a value back to the host",
    "tolist": "Tensor.tolist() reads values back to the host",
    "numpy": "Tensor.numpy() leaves torch",
    "cpu": "Tensor.cpu() copies to the host",
}


@dataclass
class SyncSite:
    span: Span  # byte columns, like every span a rule handles
    reason: str
    ops: list[Op] = field(default_factory=list)  # one per time it runs in a call; empty: source only

    @property
    def count(self) -> int | None:
        return len(self.ops) or None


def sync_sites(fn: FunctionContext) -> list[SyncSite]:
    sites: dict[Span, SyncSite] = {}
    for op in fn.own_ops:
        if op.category != "sync":
            continue
        if _host_only(fn, op):
            sites[op.span] = None  # type: ignore[assignment]  # a host tensor: nothing to wait for
            continue
        site = sites.get(op.span)
        if site is None:
            node = fn.facts.node_at(op.span, ast.Call)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                reason = "print() of a tensor copies it to the host"
            else:
                fact = fn.table.ops.get(op.name)
                reason = (fact.graph_break if fact is not None and fact.graph_break else f"{op.name} waits for the device")
            site = sites[op.span] = SyncSite(op.span, reason)
        site.ops.append(op)
    if fn.scope is not None:
        for node in fn.facts.scope_body(fn.scope):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            span = node_span(node)
            if span in sites:
                continue
            attr = node.func.attr
            if attr in SYNC_METHODS and not node.args:
                sites[span] = SyncSite(span, SYNC_METHODS[attr])
            elif attr == "to" and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == "cpu":
                sites[span] = SyncSite(span, "Tensor.to('cpu') copies to the host")
    return sorted((s for s in sites.values() if s is not None), key=lambda s: (s.span.line, s.span.col))


# Constructors that make a tensor on the default device (the CPU) unless given device=.
HOST_FACTORIES = {"rand", "randn", "randint", "randperm", "tensor", "zeros", "ones", "empty", "full", "arange",
                  "linspace", "logspace", "eye", "scalar_tensor"}
MOVES = {"to", "_to_copy", "cuda", "copy_", "_to", "to_device"}


def _host_only(fn: FunctionContext, sync: Op) -> bool:
    """Whether everything the synced value is computed from was made by a constructor without
    device= (`torch.rand(1) < p` in a data transform) and never moved: a CPU tensor, which the host
    reads without waiting for any device."""
    stack = list(sync.inputs)
    seen: set = set()
    found = False
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        p = fn.producer(v)
        if p is None or p.name in MOVES:
            return False  # an input, a parameter or a move: may live on the device
        if p.name in HOST_FACTORIES:
            node = fn.facts.node_at(p.span, ast.Call)
            if not isinstance(node, ast.Call) or any(k.arg in ("device", "like") for k in node.keywords):
                return False
            found = True
            stack.extend(p.inputs)
            continue
        stack.extend(p.inputs)
    return found
