"""Eager autograd: the ops `loss.backward()` runs, built from the forward ops already recorded.

Autograd walks the graph from the loss back to the tensors that require grad (parameters,
`requires_grad=True`), running each op's derivative formula (rules/autograd.toml, quoting torch's
derivatives.yaml). What it launches besides the formulas, as torch's engine does
(torch/csrc/autograd/engine.cpp, input_buffer.cpp, functions/accumulate_grad.h):
  - the root gradient: `ones_like(loss)` for a scalar loss;
  - a value used by several ops gets one gradient per use, summed (one add per extra use);
  - a gradient that reaches a broadcast input is summed to its shape;
  - AccumulateGrad stores a leaf's gradient: it keeps the tensor it is given when nothing else holds
    it and its layout is the parameter's, else a copy (clone); into an existing `.grad` it adds in place.
    AccumulateGrad runs first of all ready nodes, so a gradient also handed to another op is copied.
The ops are recorded into the same graph with `phase = "backward"`, for eager only: the compiled
backward (AOTAutograd's joint graph and partition) is not modelled, which the figures say.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from kpredict.frontend.values import Py, TensorRef
from kpredict.frontend import shapes as S
from kpredict.frontend import strides as L
from kpredict.frontend.objects import FLOAT_DTYPES
from kpredict.ir import Checkpoint, Op, TensorMeta, shape_numel
from kpredict.opfacts import GradRule, GradStep, OpFact

if TYPE_CHECKING:
    from kpredict.frontend.interp import Interpreter

COMPILED_NOT_MODELLED = "compiled backward: AOTAutograd's backward graph is not modelled yet (eager only)"
# ops that launch nothing and carry no gradient, or whose outputs never need one
_NO_GRAD = ("alloc", "sync")


def needs_grad(it: Interpreter, ops: list[Op]) -> set[int]:
    """The values of `ops` that autograd records a gradient path for: floating outputs of an op with
    an input that requires grad or has such a path."""
    shared = it.shared.values
    needs = {vid for vid, v in shared.items() if v.requires_grad}
    stop = it.table.grad_views
    # a reentrant checkpoint runs its segment under no_grad: its outputs require grad only when one of
    # its tensor inputs does (the parameters inside do not count: they then get no gradient)
    reentrant = {oid: k for k, cp in enumerate(it.fg.checkpoints) if cp.reentrant for oid in cp.oids}
    tracked: dict[int, bool] = {}
    for op in ops:
        if op.category in _NO_GRAD or stop.get(op.name) in ("stop", "constant") or op.phase != "forward":
            continue
        k = reentrant.get(op.oid)
        if k is not None:
            if k not in tracked:
                tracked[k] = any(i in needs for i in it.fg.checkpoints[k].inputs)
            if not tracked[k]:
                continue
        if any(i in needs for i in op.inputs):
            for o in op.outputs:
                v = it.fg.values.get(o)
                if v is not None and (v.meta.dtype is None or v.meta.dtype in FLOAT_DTYPES):
                    needs.add(o)
    return needs


class Backward:
    """One `backward()` call: the ops it records, in the engine's order (reverse of the forward)."""

    def __init__(self, it: Interpreter, node: ast.AST) -> None:
        self.it = it
        self.node = node
        self.contrib: dict[int, list[int]] = {}  # forward value -> gradients reaching it
        self.st: dict[int, tuple | None] = {}  # gradient value -> its strides (None: not known)
        # gradient value -> the forward values whose input buffers hold it and have not run yet (an op's
        # backward releases its buffer): who else holds a gradient when AccumulateGrad runs
        self.pending: dict[int, set[int]] = {}
        self.leaf_vids: set[int] = set()
        self.given_now: list[tuple[int, int]] = []  # (leaf, gradient) given by the op being run
        self.holders: dict[tuple[int, int], set[int]] = {}  # (leaf, gradient) -> its holders then
        self.held: set[int] = set()  # gradients something outside autograd holds (a given gradient)
        self.saved: list[int] = []  # forward values the formulas read: what autograd saved for them
        self.producers: dict[int, Op] = {}
        self.in_region: set[int] = set()  # ops of checkpointed segments

    def stored(self, vid: int) -> int:
        """The tensor autograd saved for forward value `vid`: kpredict's layout marker (conv_layout)
        is no op of torch's, its input is what the convolution saved."""
        v = self.it.fg.values.get(vid)
        op = self.producers.get(v.producer) if v is not None and v.producer is not None else None
        return op.inputs[0] if op is not None and op.name == "conv_layout" and op.inputs else vid

    # ------------------------------------------------------------------ recording
    def fact(self, name: str) -> OpFact:
        return self.it.table.ops.get(name) or OpFact(name=name, category="extern")

    def emit(self, name: str, reads: list[int], writes: list[int], mutates: tuple[int, ...] = ()) -> None:
        it = self.it
        if name not in it.table.ops:  # the eager model would count it as nothing: said instead
            it.unknown(self.node, f"{name} (a backward op without facts in rules/)")
        op = it.emit(self.fact(name), self.node, [TensorRef(v) for v in reads], [TensorRef(v) for v in writes],
                     mutates=mutates)
        if op is not None:
            op.phase = "backward"
            op.only = "eager"

    def new(self, like: int, shape: tuple | None = None, dtype: str | None = None) -> int:
        m = self.it.fg.values[like].meta if like in self.it.fg.values else TensorMeta()
        meta = TensorMeta(m.shape if shape is None else shape, dtype or m.dtype, m.device)
        return self.it.new_tensor(meta, name="grad").vid

    def dense(self, vid: int) -> tuple | None:
        shape = self.it.fg.values[vid].meta.shape
        return None if shape is None or None in shape else L.contiguous_strides(tuple(shape))

    def strides(self, g: int) -> tuple | None:
        return self.st[g] if g in self.st else self.dense(g)

    def is_contig(self, g: int) -> bool:
        shape, st = self.it.fg.values[g].meta.shape, self.strides(g)
        return shape is None or None in shape or st is None or L.is_contiguous(tuple(shape), st)

    def fresh(self, vid: int) -> int:
        """A kernel's output: contiguous."""
        self.st[vid] = self.dense(vid)
        return vid

    def view(self, grad: int, like: int, st: tuple | None) -> int:
        """A view of `grad` with the shape of forward value `like` and strides `st`."""
        it = self.it
        m = it.fg.values[like].meta
        g = it.fg.values[grad]
        if g.meta.shape == m.shape and st == self.strides(grad):
            return grad
        contig = st is None or m.shape is None or None in m.shape or L.is_contiguous(tuple(m.shape), st)
        out = it.new_tensor(TensorMeta(m.shape, g.meta.dtype, g.meta.device), storage=g.storage, contiguous=contig,
                            name="grad")
        self.emit("view", [grad], [out.vid])
        self.st[out.vid] = st
        return out.vid

    def reshaped(self, g: int, x: int) -> int:
        """`grad.reshape(x.sizes())`: a view where the gradient's strides allow one, else a copy."""
        vals = self.it.fg.values
        gs, xs, st = vals[g].meta.shape, vals[x].meta.shape, self.strides(g)
        if gs is None or xs is None or None in gs or None in xs or st is None:
            return self.view(g, x, self.dense(x))
        vs = L.view_strides(tuple(gs), st, tuple(xs))
        if vs is not None:
            return self.view(g, x, vs)
        out = self.new(x)
        self.emit("clone", [g], [out])
        return self.fresh(out)

    def expanded(self, g: int, x: int) -> int:
        """`grad.expand(x.sizes())`: stride 0 on the dims it is broadcast along."""
        vals = self.it.fg.values
        gs, xs, st = vals[g].meta.shape, vals[x].meta.shape, self.strides(g)
        if gs is None or xs is None or st is None or None in xs:
            return self.view(g, x, None)
        n = len(xs) - len(gs)
        out = tuple(0 if k < n or gs[k - n] == 1 and xs[k] != 1 else st[k - n] for k in range(len(xs)))
        return self.view(g, x, out)

    def give(self, value: int, grad: int) -> None:
        self.contrib.setdefault(value, []).append(grad)
        self.pending.setdefault(grad, set()).add(value)
        if value in self.leaf_vids:
            self.given_now.append((value, grad))

    def settle(self) -> None:
        """After an op's backward: who holds each gradient it gave a leaf, as the leaf's AccumulateGrad
        (which runs before any other ready node) finds it."""
        for leaf, g in self.given_now:
            self.holders[(leaf, g)] = set(self.pending.get(g, ()))
        self.given_now.clear()

    def total(self, value: int) -> int:
        """The gradient of `value`: its contributions summed, one add per extra one."""
        gs = self.contrib.pop(value)
        for x in gs:
            self.pending.get(x, set()).discard(value)
        g = gs[0]
        for other in gs[1:]:  # torch's input buffer adds into the first gradient (add_, or add when shared)
            out = self.new(g)
            self.emit("add", [g, other], [out])
            self.st[out] = self.strides(g)
            g = out
        return g

    def sum_to(self, grad: int, like: int) -> int:
        """A gradient summed over the dims its input was broadcast over (at::sum_to)."""
        vals = self.it.fg.values
        gs, xs = vals[grad].meta.shape, vals[like].meta.shape
        if gs == xs or gs is None or xs is None:
            return grad
        out = self.new(like)
        self.emit("sum", [grad], [out])
        return self.fresh(out)

    # ------------------------------------------------------------------ the pass
    def run(self, root: TensorRef, given: TensorRef | None) -> None:
        it = self.it
        forward = unpacked(it, [op for op in it.fg.ops if op.phase == "forward"])
        self.producers = {op.oid: op for op in forward}
        needs = needs_grad(it, forward)
        if root.vid not in needs:
            it.unknown(self.node, "backward of a tensor that does not require grad")
            return
        if given is None:
            shape = it.fg.values[root.vid].meta.shape
            if shape is None or any(d != 1 for d in shape):
                it.unknown(self.node, "backward() of a tensor that may not be a scalar")
                return
            g = self.new(root.vid)
            self.emit("ones_like", [], [g])
        else:
            g = given.vid
            self.held.add(g)
        self.fresh(g)
        self.give(root.vid, g)
        leaves = {vid for vid in needs if it.shared.values[vid].requires_grad}
        self.leaf_vids = leaves
        region_of = {oid: k for k, cp in enumerate(it.fg.checkpoints) for oid in cp.oids}
        self.in_region = set(region_of)
        for cp in it.fg.checkpoints:  # a checkpointed segment keeps its inputs, not what its ops save
            if cp.reentrant and not any(v in needs for v in cp.inputs):
                continue  # no input needs grad: the reentrant form records no backward, keeps nothing
            self.saved.extend(v for v in cp.inputs if not it.shared.values[v].requires_grad)
        recomputed: set[int] = set()
        for at in range(len(forward) - 1, -1, -1):
            op = forward[at]
            outs = [o for o in op.outputs if o in self.contrib]
            if not outs:
                continue
            if op.only == "compiled" and self.rule_for(op) is None:  # the form for torch.compile: eager ran a twin
                self.to_twin(op, forward[at::-1])
                continue
            region = region_of.get(op.oid)
            if region is not None and region not in recomputed:  # the segment's forward again, before its backward
                recomputed.add(region)
                self.recompute(it.fg.checkpoints[region], needs)
            wanted = [i for i in op.inputs if i in needs]
            if not wanted:
                for o in outs:
                    self.contrib.pop(o, None)
                continue
            if op.mutates and not self.inplace_ok(op):
                it.unknown(self.node, f"backward through in-place {op.name}")
                return
            grads = {o: self.total(o) for o in outs}
            if op.category == "view" or op.free_reason:
                self.view_backward(op, grads, needs)
            else:
                self.rule_backward(op, grads, needs)
            self.settle()
        self.accumulate([v for v in self.contrib if v in leaves])
        it.fg.saved.append(self.saved)

    def packs(self, op: Op, needs: set[int]) -> tuple[bool, bool]:
        """Whether autograd saves inputs, and outputs, of `op` for the gradients its inputs need."""
        if op.category == "view" or op.free_reason:
            return False, False
        rule = self.rule_for(op)
        if rule is None:
            return False, False
        reads = {a for step in live_steps(rule, {f"g{k}" for k, v in enumerate(op.inputs) if v in needs})
                 for a in step.args}
        ins = any(a.startswith("in") and int(a[2:]) < len(op.inputs) for a in reads)
        outs = any(a.startswith("out") and int(a[3:]) < len(op.outputs) for a in reads)
        return ins, outs

    def recompute(self, cp: Checkpoint, needs: set[int]) -> None:
        """torch.utils.checkpoint's recomputation: the segment's ops run again in the backward. The
        reentrant form runs them all; the other stops as soon as every tensor the segment saved is
        saved again (set_checkpoint_early_stop, on by default): after the last op that saves an
        output, or before the last one that saves only inputs (inputs are saved before its kernel runs)."""
        it = self.it
        ops = [self.producers[oid] for oid in cp.oids if oid in self.producers]
        if not cp.reentrant:
            last, with_kernel = -1, False
            for k, op in enumerate(ops):
                ins, outs = self.packs(op, needs)
                if ins or outs:
                    last, with_kernel = k, outs
            ops = ops[: last + (1 if with_kernel else 0)] if last >= 0 else []
        vmap: dict[int, int] = {}
        for op in ops:
            outs = [it.new_tensor(it.fg.values[o].meta, name="recomputed").vid for o in op.outputs]
            vmap.update(zip(op.outputs, outs))
            again = op.moved(it.shared.next_oid(), tuple(vmap.get(i, i) for i in op.inputs), tuple(outs),
                             tuple(vmap.get(m, m) for m in op.mutates), op.graph, op.via, op.span)
            again.phase, again.only = "backward", "eager"
            for o in outs:
                it.fg.values[o].producer = again.oid
            it.fg.ops.append(again)

    def view_backward(self, op: Op, grads: dict[int, int], needs: set[int]) -> None:
        it = self.it
        kind = it.table.grad_views.get(op.name, "reshape")
        x = op.inputs[0]
        if kind == "stop" or x not in needs:
            return
        if kind == "split" or len(op.outputs) > 1:
            parts = []
            for o in op.outputs:
                if o in grads:
                    parts.append(grads[o])
                else:  # torch materializes an undefined gradient as zeros
                    z = self.new(o)
                    self.emit("zeros", [], [z])
                    parts.append(z)
            out = self.new(x)
            self.emit("stack" if op.name == "unbind" else "cat", parts, [out])
            self.give(x, self.fresh(out))
            return
        g = grads[op.outputs[0]]
        if kind == "partial":
            self.partial_backward(op, g, x)
            return
        if kind == "expand":
            self.give(x, self.sum_to(g, x))
            return
        if kind == "permute":
            self.give(x, self.view(g, x, self.unpermuted(op, g)))
            return
        self.give(x, self.reshaped(g, x))

    def unpermuted(self, op: Op, g: int) -> tuple | None:
        """The strides of `g` permuted back through the forward's permutation, read from the forward
        view's strides (each dim of the view is the dim of its input with its size and stride)."""
        it = self.it
        x, y = op.inputs[0], op.outputs[0]
        sx, sy, gst = it.strides_of(TensorRef(x)), it.strides_of(TensorRef(y)), self.strides(g)
        xs, ys = it.fg.values[x].meta.shape, it.fg.values[y].meta.shape
        if sx is None or sy is None or gst is None or xs is None or ys is None or len(xs) != len(ys):
            return None
        out: list[int | None] = [None] * len(xs)
        free = list(range(len(xs)))
        for i in range(len(ys)):
            j = next((j for j in free if xs[j] == ys[i] and sx[j] == sy[i]), None)
            if j is None:
                j = next((j for j in free if xs[j] == ys[i]), None)
            if j is None:
                return None
            free.remove(j)
            out[j] = gst[i]
        return tuple(out)  # type: ignore[arg-type]

    def partial_backward(self, op: Op, g: int, x: int) -> None:
        """The gradient of a view of part of `x` (`x[..., :4]`, `x[:, 0]`, narrow): torch indexes one dim
        at a time, and each step's backward writes zeros of its input's shape with the gradient in its
        part: one select_backward per dim indexed away, one slice_backward per dim cut, the last dim first."""
        it = self.it
        xs, ys = it.fg.values[x].meta.shape, it.fg.values[op.outputs[0]].meta.shape
        if xs is not None and ys is not None and None not in xs and None not in ys \
                and shape_numel(xs) == shape_numel(ys):  # `x[:, None]`, a full slice: all of x, reshaped
            self.give(x, self.reshaped(g, x))
            return
        if op.name not in ("slice", "select", "narrow", "getitem") or xs is None or ys is None or None in xs \
                or None in ys or len(ys) > len(xs):
            it.unknown(self.node, f"backward of {op.name} (a view of part of a tensor)")
            return
        # align the view's dims with the input's, left to right: a dim of the input that the next
        # dim of the view cannot be (it is larger) was indexed away when the ranks differ
        steps: list[tuple[str, int]] = []  # (op, dim of x), in the forward's order
        j, dropped = 0, len(xs) - len(ys)
        for d, n in enumerate(xs):
            if dropped and (j >= len(ys) or (ys[j] != n and len(xs) - d > len(ys) - j)):
                steps.append(("select_backward", d))
                dropped -= 1
                continue
            if j < len(ys) and ys[j] != n:
                steps.append(("slice_backward", d))
            j += 1
        shape = list(ys)
        cur = g
        for name, d in reversed(steps):
            if name == "select_backward":
                shape.insert(d, xs[d])
            else:
                shape[d] = xs[d]
            out = self.new(x, tuple(shape))
            self.emit(name, [cur], [out])
            cur = self.fresh(out)
        self.give(x, cur if steps else self.reshaped(g, x))

    def cat_backward(self, op: Op, g: int, needs: set[int]) -> None:
        """cat's (and stack's) backward gives each input its part of the gradient: a narrow (select) view,
        no kernel, strided unless every dim before the one concatenated has one element."""
        vals = self.it.fg.values
        ys = vals[op.outputs[0]].meta.shape
        for x in op.inputs:
            if x not in needs:
                continue
            xs = vals[x].meta.shape
            dim = next((d for d, (a, b) in enumerate(zip(xs or (), ys or ())) if a != b),
                       len(xs or ()) if op.name == "stack" else 0)
            st = self.strides(g)
            if st is not None and op.name == "stack":
                st = st[:dim] + st[dim + 1:]  # a select of the stacked dim
            self.give(x, self.view(g, x, st))

    def to_twin(self, op: Op, before: list[Op]) -> None:
        """Gradients reaching the output of a compiled-only op (the catalogue writes `dropout` once for
        Inductor and as bernoulli_, div_, mul for eager) go to its eager form's output: the nearest
        eager-only op before it with an output of the same shape and dtype."""
        vals = self.it.fg.values
        for o in op.outputs:
            if o not in self.contrib:
                continue
            meta = vals[o].meta
            twin = next((t.outputs[0] for t in before if t.only == "eager" and t.outputs
                         and vals[t.outputs[0]].meta == meta), None)
            gs = self.contrib.pop(o)
            if twin is None:
                self.it.unknown(self.node, f"backward of {op.name} (its eager form not found)")
                continue
            for g in gs:
                self.pending.get(g, set()).discard(o)
                self.give(twin, g)

    def folded(self, op: Op, g: int) -> int:
        """matmul and linear on batched operands run on folded views (bmm over the batch dims, or mm over
        every leading dim of an input times a 2-D weight): their output's gradient is reshaped to that
        fold first, a copy when its strides do not allow a view (the gradient of a transposed result)."""
        vals = self.it.fg.values
        gs, st = vals[g].meta.shape, self.strides(g)
        if op.name not in ("matmul", "linear") or gs is None or None in gs or st is None or len(gs) < 3:
            return g
        ranks = [len(vals[i].meta.shape or ()) for i in op.inputs[:2]]
        if op.name == "linear" or min(ranks) <= 2:
            fold = (shape_numel(gs[:-1]), gs[-1])
        else:
            fold = (shape_numel(gs[:-2]), gs[-2], gs[-1])
        if L.view_strides(tuple(gs), st, fold) is not None:  # type: ignore[arg-type]
            return g
        out = self.new(g)
        self.emit("clone", [g], [out])
        return self.fresh(out)

    def inplace_ok(self, op: Op) -> bool:
        """An in-place op on a tensor (`h += x`, `x.mul_(y)`) has the backward of its out-of-place form:
        walking back, the gradient gathered for the tensor is its value after the op's, and what the rule
        gives its first input is the gradient of its value before. Not a write into a view of another
        tensor (its base's gradient would be needed)."""
        return (len(op.mutates) == 1 and op.outputs == op.mutates and op.inputs[:1] == op.mutates
                and self.it.fg.values[op.mutates[0]].storage == op.mutates[0]
                and self.rule_for(op) is not None)

    def rule_for(self, op: Op) -> GradRule | None:
        table = self.it.table.backward
        for name in (op.name, op.name.rstrip("_") if op.mutates else op.name):
            rule = table.get(f"{name}/{len(op.inputs)}") or table.get(name)
            if rule is not None:
                return rule
        return None

    def rule_backward(self, op: Op, grads: dict[int, int], needs: set[int]) -> None:
        it = self.it
        if op.name in ("cat", "concat", "concatenate", "stack") and op.outputs and op.outputs[0] in grads:
            self.cat_backward(op, grads[op.outputs[0]], needs)
            return
        rule = self.rule_for(op)
        if rule is None:
            it.unknown(self.node, f"backward of {op.name}")
            return
        names: dict[str, int] = {f"in{k}": v for k, v in enumerate(op.inputs)}
        names.update({f"out{k}": v for k, v in enumerate(op.outputs)})
        first = op.outputs[0] if op.outputs else None
        if first not in grads:
            it.unknown(self.node, f"backward of {op.name} through an output other than its first")
            return
        names["grad"] = self.folded(op, grads[first])
        wanted = {f"g{k}" for k, v in enumerate(op.inputs) if v in needs}
        for step in live_steps(rule, wanted):
            self.step(op, step, names, wanted)

    def step(self, op: Op, step: GradStep, names: dict[str, int], wanted: set[str]) -> None:
        vals = self.it.fg.values
        reads = [names[a] for a in step.args if a in names]
        targets = [o for o in step.outs if not o.startswith("g") or (o in wanted and f"in{o[1:]}" in names)]
        if not targets:
            return
        if step.op in ("", "view", "expand"):  # the gradient itself, or a view of it
            g = reads[0]
            for o in targets:
                x = names["in0"] if o.startswith("t") else names[f"in{o[1:]}"]  # an intermediate: as in0
                if step.op == "expand":
                    v = self.expanded(g, x)
                elif step.op == "view":
                    v = self.reshaped(g, x)
                else:
                    v = self.sum_to(g, x)
                if o.startswith("t"):
                    names[o] = v
                else:
                    self.give(x, v)
            return
        # what the formula reads of the forward is what autograd saved for it (derivatives.yaml's
        # generated code saves a tensor only for the gradients of inputs that require one)
        if op.oid not in self.in_region:
            self.saved.extend(self.stored(names[a]) for a in step.args if a[:2] in ("in", "ou") and a in names)
        outs = []
        pointwise = self.fact(step.op).category == "pointwise"
        wide = S.broadcast([vals[r].meta.shape for r in reads]) if pointwise and reads and len(targets) == 1 else None
        for o in targets:
            if o.startswith("g"):
                x = names[f"in{o[1:]}"]
                if wide is not None and wide != vals[x].meta.shape:  # a broadcast input: summed to its shape next
                    v = self.fresh(self.new(x, wide))
                else:
                    v = self.fresh(self.new(x))
                    # laid out as its input: a 2-D mm (mm_mat1/mat2_backward pick the input's layout),
                    # attention's backward (empty_like of q, k, v), a pointwise op (TensorIterator
                    # follows its operands' layout); a batched matmul and the others write contiguously
                    rank = len(vals[x].meta.shape or ())
                    if (step.op in ("mm", "matmul") and rank <= 2) or step.op.startswith("_scaled_dot_product"):
                        self.st[v] = self.it.strides_of(TensorRef(x)) or self.st[v]
                    elif pointwise:  # as its first operand of that shape
                        src = next((r for r in reads if vals[r].meta.shape == vals[x].meta.shape), None)
                        if src is not None:
                            self.st[v] = self.strides(src) if src in self.st else (
                                self.it.strides_of(TensorRef(src)) or self.st[v])
            elif not reads:  # a 0-dim constant (scalar_tensor), in the gradient's dtype
                v = self.fresh(self.new(names["grad"], ()))
            else:
                shape = S.broadcast([vals[r].meta.shape for r in reads])
                v = self.fresh(self.new(reads[0], shape, "bool" if self.fact(step.op).dtype == "bool" else None))
            names[o] = v
            outs.append(v)
        name = step.op
        if name == "matmul":  # torch's matmul runs bmm on batched operands, mm otherwise
            name = "bmm" if max(len(vals[r].meta.shape or ()) for r in reads) >= 3 else "mm"
        self.emit(name, reads, outs)
        for o, v in zip(targets, outs):
            if o.startswith("g"):
                self.give(names[f"in{o[1:]}"], self.sum_to(v, names[f"in{o[1:]}"]))

    def accumulate(self, leaves: list[int]) -> None:
        """AccumulateGrad for each leaf reached, as torch/csrc/autograd/functions/accumulate_grad.h."""
        it = self.it
        finals = {leaf: self.total(leaf) for leaf in leaves}
        for leaf, g in finals.items():
            old = it.grads.get(leaf)
            if old is not None:
                self.emit("add_", [old, g], [old], mutates=(old,))
                continue
            holders = self.holders.get((leaf, g), {leaf})
            alone = holders <= self.leaf_vids and leaf == max(holders)  # other leaves only: the last keeps it
            if self.is_contig(g) and g not in self.held and alone:
                it.grads[leaf] = g  # kept as it is: nothing else holds it
                continue
            out = self.new(leaf)
            self.emit("clone", [g], [out])
            it.grads[leaf] = out


def unpacked(it: Interpreter, ops: list[Op]) -> list[Op]:
    """`q, k, v = qkv` makes its three views without an op (iterating a tensor records none): autograd
    sees one unbind, whose backward stacks the parts. Such views (no producer, another value's storage,
    as many as the first dim of the latest value of that storage shaped (n, *part)) get that unbind,
    placed after the whole's producer."""
    vals = it.fg.values
    groups: dict[int, list[int]] = {}
    for v in vals.values():
        if v.producer is None and not v.is_input and v.storage != v.vid and v.storage in vals:
            groups.setdefault(v.storage, []).append(v.vid)
    if not groups:
        return ops
    out = list(ops)
    for storage, parts in groups.items():
        shape = vals[parts[0]].meta.shape
        if shape is None or any(vals[p].meta.shape != shape for p in parts):
            continue
        whole = max((v.vid for v in vals.values() if v.storage == storage and v.vid not in parts
                     and v.meta.shape == (len(parts), *shape) and v.vid < min(parts)), default=None)
        if whole is None:
            continue
        at = next((k + 1 for k, op in enumerate(out) if whole in op.outputs), 0)
        span = out[at - 1].span if at else (out[0].span if out else None)
        if span is None:
            continue
        out.insert(at, Op(-at - 1, "unbind", "view", span, (whole,), tuple(sorted(parts))))
    return out


def live_steps(rule: GradRule, wanted: set[str]) -> list[GradStep]:
    """The steps of `rule` a backward runs: those writing a wanted gradient, and the intermediates
    those read (found back to front), in the rule's order."""
    live = set(wanted)
    for step in reversed(rule.steps):
        if live & set(step.outs):
            live |= {a for a in step.args if a.startswith("t")}
    return [step for step in rule.steps if live & set(step.outs)]


def grad_of(it: Interpreter, t: TensorRef) -> object:
    """`t.grad`: the gradient a backward stored for a leaf, else None."""
    g = it.grads.get(t.vid)
    return Py(None) if g is None else TensorRef(g)
