"""Where a function makes the host wait for the device: from the op graph, and from the source for
receivers the graph could not type (a module's output it does not understand yet)."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field

from kpredict.frontend.parse import node_text
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
        if _host_only(fn, op) or _guessed_input(fn, op):
            sites[op.span] = None  # type: ignore[assignment]  # a host tensor, or nothing says it is a tensor
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
    found = [s for s in sites.values() if s is not None]
    if found:  # the source walk below costs more than the common case, a function with no sync, needs
        skip = _not_waits(fn)
        found = [s for s in found if s.span not in skip]
    return sorted(found, key=lambda s: (s.span.line, s.span.col))


# Constructors that make a tensor on the default device (the CPU) unless given device=.
HOST_FACTORIES = {"rand", "randn", "randint", "randperm", "tensor", "zeros", "ones", "empty", "full", "arange",
                  "linspace", "logspace", "eye", "scalar_tensor"}
MOVES = {"to", "_to_copy", "cuda", "copy_", "_to", "to_device"}


def _host_only(fn: FunctionContext, sync: Op) -> bool:
    """Whether the synced value is a CPU tensor: the host reads it without waiting for any device."""
    return host_only(fn, sync.inputs)


def host_only(fn: FunctionContext, vids: Iterable[int]) -> bool:
    """Whether everything these values are computed from was made by a constructor without device=
    (`torch.rand(1) < p` in a data transform) and never moved: CPU tensors."""
    stack = list(vids)
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
            continue  # its arguments are sizes and bounds: the tensor is made on the CPU whatever they are
        stack.extend(p.inputs)
    return found


# the plain guess the interpreter makes for a parameter with no annotation, default, example or telling use
GUESS = ": tensor of unknown shape, float32"


def _guessed_input(fn: FunctionContext, sync: Op) -> bool:
    """A branch, int()/float() or comparison with Python values on a bare parameter that is a tensor
    only by the interpreter's guess (`if output_attentions:`, `if program >= limit:`) or whose
    annotation allows a Python number (`n: int | Tensor`): such parameters are flags and sizes far
    more often than tensors, so no sync is claimed."""
    node = fn.facts.node_at(sync.span, ast.expr)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("int", "float", "bool"):
        node = node.args[0] if len(node.args) == 1 else None
    vids = list(sync.inputs)
    if isinstance(node, ast.Compare) and len(vids) == 1:
        cmp = fn.producer(vids[0])  # `program >= limit`: the comparison's tensor operands are what is read
        if cmp is None or cmp.name not in COMPARISONS:
            return False
        vids = list(cmp.inputs)
        node = next((o for o in [node.left, *node.comparators] if isinstance(o, ast.Name)), None)
    if not isinstance(node, ast.Name):
        return False  # `mask.tolist()`, `x.sum() > 0`: the code treats it as a tensor
    guessed = {a.split(":", 1)[0] for a in fn.fg.assumptions if a.endswith(GUESS)}
    if isinstance(fn.scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = fn.scope.args
        guessed |= {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs if _scalar_allowed(p.annotation)}
    for vid in vids:
        v = fn.fg.values.get(vid)
        if v is None or not v.is_input or v.name not in guessed:
            return False
    return bool(vids)


COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}


def _scalar_allowed(ann: ast.expr | None) -> bool:
    """Whether an annotation lets the value be a Python int, float or bool (`int | torch.Tensor`)."""
    if ann is None:
        return False
    members: list[ast.expr] = []
    stack = [ann]
    while stack:
        e = stack.pop()
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.BitOr):
            stack += [e.left, e.right]
        elif isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name) and e.value.id in ("Union", "Optional"):
            stack += list(e.slice.elts) if isinstance(e.slice, ast.Tuple) else [e.slice]
        else:
            members.append(e)
    return len(members) > 1 and any(isinstance(m, ast.Name) and m.id in ("int", "float", "bool") for m in members)


# methods only Python strings have: a value they are called on, and a comparison with it, is no tensor
STR_METHODS = {"startswith", "endswith", "isalpha", "isnumeric", "isdigit", "isalnum", "isspace", "isupper",
               "islower", "strip", "lstrip", "rstrip", "lower", "upper", "casefold", "removeprefix",
               "removesuffix", "encode", "format", "splitlines", "partition", "rpartition"}


def _not_waits(fn: FunctionContext) -> set[Span]:
    """Spans that look like syncs but make the host wait for nothing it could avoid: string tests
    (`key.startswith("norm")`, `key == "conv.bias"`), values handed to numpy (`x.cpu().numpy()`: leaving
    torch is the point), and anything in a `raise` statement (it runs only when a check fails)."""
    if fn.scope is None:
        return set()
    out: set[Span] = set()
    strs: set[str] = set()
    nodes = list(fn.facts.scope_body(fn.scope))
    for node in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in STR_METHODS:
            strs.add(node_text(node.func.value))
            out.add(node_span(node))
        elif (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
              and isinstance(node.value.value, str)):
            strs.update(node_text(t) for t in node.targets)
    for node in nodes:
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(isinstance(o, ast.Constant) and isinstance(o.value, str) or node_text(o) in strs
                   for o in operands):
                out.add(node_span(node))
        elif isinstance(node, ast.Raise):
            out.update(node_span(n) for n in ast.walk(node) if isinstance(n, ast.expr))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "numpy":
            cur: ast.expr = node
            while isinstance(cur, ast.Call) and isinstance(cur.func, ast.Attribute):
                out.add(node_span(cur))  # x.cpu().float().numpy(): every link of the chain
                cur = cur.func.value
    # `k.startswith("a") or k == "b"`, `not k.endswith(...)`: innermost first, so nesting composes
    logic = [n for n in nodes if isinstance(n, ast.BoolOp) or isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not)]
    for n in sorted(logic, key=lambda n: len(node_text(n))):
        parts = n.values if isinstance(n, ast.BoolOp) else [n.operand]
        if all(node_span(v) in out for v in parts):
            out.add(node_span(n))
    return out
