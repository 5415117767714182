"""Call summaries: a module call recorded once and replayed wherever the same call comes again.

A model's forward calls its N decoder layers one after another, and each model head (ForCausalLM,
ForSequenceClassification, ...) calls the whole model again: the interpreter would run the same
layer code N times per head. Each layer is a different object, but with the same structure (classes,
Python values, parameter shapes) and the same kind of inputs (shapes, dtypes, layouts, aliasing) it
dispatches the same ops, up to the names of the tensors. So the first such call is recorded (its ops,
the tensors it made, its graph breaks and notes, its result) and later ones are replayed with the
tensors renamed: parameters by their position in the object, inputs by their position in the
arguments, new tensors afresh.

A call is recorded only when nothing can tell two such calls apart: it runs while recording, outside
compiled regions and eager-only/compiled-only code, and it leaves the structure of its object and of
its arguments as it found them (a cache filled in, `self.x = ...`, an in-place view on an argument:
not recorded). Its result may hold tensors, plain values, and lists, dicts and objects that the call
made, not ones that existed before it.
"""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING

from kpredict.frontend.frame import MAX_OPS, _Budget, _span
from kpredict.frontend.keys import Key
from kpredict.frontend.objects import HOLDERS
from kpredict.frontend.values import (
    ClassRef, Dict, FuncRef, Instance, ModRef, NNModule, Opaque, Py, Seq, Sym, SymObj, TensorRef, Tracked, Unknown,
)
from kpredict.frontend import shapes as S
from kpredict.ir import GraphBreak, Op, Value
from kpredict.ir import Unknown as UnknownOp

if TYPE_CHECKING:
    from kpredict.frontend.interp import Interpreter

_IOM = operator.attrgetter("inputs", "outputs", "mutates")
MAX_SIGNATURE = 20_000  # items in a call's signature past which it is not summarized (a whole model)


class _NoSummary(Exception):
    pass


@dataclass(slots=True)
class Summary:
    leaves: list[int]  # tensors of the object and arguments, in signature order
    leaf_storages: list[int]  # their storages (a view's base need not be among the leaves)
    ops: list[Op]  # copies, as recorded
    values: list[Value]  # tensors the call made, in creation order (copies)
    strides: dict[int, tuple[int, ...]]
    matrix_t: set[int]
    inputs: list[int]  # what the call added to the graph's inputs (made here or imported)
    breaks: list[GraphBreak]
    graph_delta: int
    graph0: int
    unknowns: list[UnknownOp]
    assumptions: list[str]
    loop_symbols: list[str]
    ret: object
    steps: int
    stack_len: int
    anchored: bool  # every op is reported at the call site (code of another file)
    line: int = 0  # the recorded call's line (notes of anchored calls name it)
    needs: list[tuple[int, str, tuple[str, object]]] = field(default_factory=list)  # attributes read
    mode: str | None = None  # the mode it was recorded in, when it asked (torch.compiler.is_compiling)
    syms: frozenset[str] = frozenset()  # names of symbolic sizes the call looked up (Interpreter.sym)
    contained: bool | None = None  # whether a replay gives only the call's own tensors (_self_contained)
    external: tuple[int, ...] | None = None  # ids the ops read that are neither leaves nor made (first replay)
    # the sizes it met (frontend/shapes.meet) when recorded in a run that watches them, else None: such a
    # run replays only summaries that say what they met
    meets: tuple[tuple[int, int], ...] | None = None

    def fits(self, sig: Signature, mode: str) -> bool:
        return (self.mode is None or self.mode == mode) and all(sig.attr(i, name) == v for i, name, v in self.needs)


@dataclass(slots=True)
class Signature:
    key: tuple
    leaves: list[int]  # tensors in key order
    objects: dict[int, int]  # id of an object, list or dict -> its index in key order
    # object index -> (attribute names, their plain values as (type name, value), None where not plain)
    plain: dict[int, tuple[tuple[str, ...], tuple[tuple[str, object] | None, ...]]]

    def attr(self, i: int, name: str) -> tuple[str, object] | None:
        """The plain value of attribute `name` of object i, None when it has none."""
        got = self.plain.get(i)
        if got is None or name not in got[0]:
            return None
        return got[1][got[0].index(name)]


def signature(it: Interpreter, parts: list[object]) -> Signature:
    """A structural key for (object, args, kwargs): the plain values of objects' attributes are left
    out of it (layer_idx differs in every layer) and kept aside, so that a summary can be reused when
    the attributes that the call read hold the same values."""
    out: list[object] = []
    leaves: list[int] = []
    plain: dict[int, tuple] = {}
    seen_t: dict[int, int] = {}
    seen_st: dict[int, int] = {}
    seen_o: dict[int, int] = {}
    fg_values, sh_values = it.fg.values, it.shared.values
    check = it.shared.constructed.check  # KPREDICT_CHECK_MEMO: an object's cached part checked too
    strides, matrix_t = it.shared.strides, it.shared.matrix_t
    containers = HOLDERS
    stack: list[object] = list(reversed(parts))
    pop, push, emit = stack.pop, stack.extend, out.append
    while stack:
        if len(out) > MAX_SIGNATURE:
            raise _NoSummary()
        v = pop()
        t = type(v)
        if t is Py:  # the commonest item, decided without the isinstance chain below
            try:
                hash(v.value)
            except TypeError:
                raise _NoSummary() from None
            emit(("P", type(v.value).__name__, v.value))
            continue
        if t is TensorRef:
            vid = v.vid
            k = seen_t.get(vid)
            if k is not None:
                emit(("T", k))
                continue
            seen_t[vid] = len(leaves)
            leaves.append(vid)
            val = fg_values.get(vid)
            if val is not None:
                is_input, made_here = val.is_input, val.producer is None
            else:  # made elsewhere (module level, __init__): an input of this graph once used (it.local)
                val = sh_values.get(vid)
                if val is None:
                    raise _NoSummary()
                is_input, made_here = True, True
            st = seen_st.setdefault(val.storage, len(seen_st))
            emit(("t", val.meta, val.contiguous, st, strides.get(vid), vid in matrix_t, is_input, made_here))
            continue
        kind = containers.get(t)
        if kind is not None:
            k = seen_o.get(id(v))
            if k is not None:
                emit(("O", k))
                continue
            me = seen_o[id(v)] = len(seen_o)
            if kind == 0:
                c = v.signed
                if c is not None and c[0] == v.ver and not check:  # signed before, unchanged since (touch)
                    plain[me] = c[1]
                    emit(c[2])
                    push(c[3])
                    continue
                names = tuple(v.attrs)
                py_l: list[tuple[str, object] | None] = []
                kinds: list[str | None] = []
                items = []
                for x in v.attrs.values():  # one pass (this runs for every object of every call signed)
                    if isinstance(x, Py):
                        val = x.value
                        tn = type(val).__name__
                        py_l.append((tn, val))
                        kinds.append(tn)
                    else:
                        py_l.append(None)
                        kinds.append(None)
                        items.append(x)
                pl = plain[me] = (names, tuple(py_l))
                head = ("I", t is NNModule, v.cls, v.mod, v.training, names, tuple(kinds),
                        None if v.children is None else len(v.children), None if v.named is None else tuple(v.named))
                emit(head)
                if v.children:
                    items += v.children
                if v.named:
                    items += v.named.values()
                if check and c is not None and c[0] == v.ver and c[1:] != (pl, head, items[::-1]):
                    raise AssertionError(f"call signature: {v.cls} changed without touch()")
                v.signed = (v.ver, pl, head, items[::-1])
            elif kind == 1:
                emit(("S", v.kind, len(v.items)))
                items = v.items
            else:
                try:
                    emit(("D", tuple(v.items)))
                except TypeError:
                    raise _NoSummary() from None
                items = list(v.items.values())
            push(reversed(items))
        elif isinstance(v, Py):
            try:
                hash(v.value)
            except TypeError:
                raise _NoSummary() from None
            emit(("P", type(v.value).__name__, v.value))
        elif isinstance(v, Unknown) and v.src is not None:
            emit(("U", v.what))
            stack.append(TensorRef(v.src))  # the tensor it stands for is a leaf, mapped like the others
        elif isinstance(v, (Sym, SymObj, Opaque, Unknown, ModRef, ClassRef)) or (isinstance(v, FuncRef) and v.bound is None):
            emit(v)
        else:
            raise _NoSummary()
    return Signature(tuple(out), leaves, seen_o, plain)


def _check_result(v: object, pre: set[int], made: set[int], depth: int = 0) -> None:
    """The result may hold only what the call made (and tensors and plain values)."""
    if depth > 20:
        raise _NoSummary()
    if isinstance(v, (Instance, Seq, Dict)):
        if id(v) in pre:
            raise _NoSummary()
        if id(v) in made:
            return
        made.add(id(v))
        if isinstance(v, Instance):
            if v.children is not None or v.named is not None:
                raise _NoSummary()
            items = list(v.attrs.values())
        else:
            items = list(v.items) if isinstance(v, Seq) else list(v.items.values())
        for x in items:
            _check_result(x, pre, made, depth + 1)
    elif isinstance(v, Tracked):
        v.used()  # the caller may act on it: the summary depends on it
    elif isinstance(v, (TensorRef, Py, Sym, SymObj, Opaque, Unknown, ModRef, ClassRef)):
        return
    elif isinstance(v, FuncRef) and v.bound is None:
        return
    else:
        raise _NoSummary()


def _map_result(v: object, vmap: dict[int, int], copies: dict[int, object]) -> object:
    if isinstance(v, TensorRef):
        return TensorRef(vmap.get(v.vid, v.vid))
    if isinstance(v, Unknown) and v.src is not None:
        return Unknown(v.what, vmap.get(v.src, v.src))
    if isinstance(v, Seq):
        c = copies.get(id(v))
        if c is None:
            c = copies[id(v)] = Seq([], v.kind)
            c.items = [_map_result(x, vmap, copies) for x in v.items]
        return c
    if isinstance(v, Dict):
        c = copies.get(id(v))
        if c is None:
            c = copies[id(v)] = Dict({})
            c.items = {k: _map_result(x, vmap, copies) for k, x in v.items.items()}
        return c
    if isinstance(v, Instance):
        c = copies.get(id(v))
        if c is None:
            c = copies[id(v)] = type(v)(v.cls, {}, v.mod, v.training)
            c.attrs = {k: _map_result(x, vmap, copies) for k, x in v.attrs.items()}
        return c
    return v


class Summaries:
    """The summaries of one file's analyses (kept in `Shared`)."""

    def __init__(self) -> None:
        self.table: dict[tuple, list[Summary]] = {}
        self.own: list[tuple[tuple, Summary]] = []  # what this one recorded, in order (not what it was given)
        self.refused: set[tuple] = set()  # keys whose call changed its object or arguments
        self.reading: list[set[tuple[int, str]]] = []  # per call being recorded: (object id, attribute) read
        self.sym_reading: list[set[str]] = []  # per call being recorded: the symbolic sizes it looked up
        # per set of changed sizes: the summaries of `own` (its first n) that depend on none of them
        self.passing: dict[frozenset[str], tuple[int, list[tuple[tuple, Summary]]]] = {}

    def keep_into(self, out: Summaries, changed: set[str]) -> None:
        """Add to `out` (the summaries of a rerun with other loop counts, symbolic.py) this one's
        summaries that do not depend on the sizes named in `changed`: the rerun replays those instead
        of running the calls again. A summary depends on a size when the call looked it up (`sym_read`)
        or looped over it; a size that reached the call as a value (an argument, an object's attribute)
        is part of the call's signature, which the new value no longer matches. A summary whose ops
        read a tensor from outside the call (`_external`: an object reached another way), made a view
        of such a tensor, or returns one, is not kept: the rerun builds its objects afresh, and the
        replay would give the other analysis's tensor."""
        # only what this one recorded: what it was given came from another Summaries, which `out` is
        # also given from (Shared.for_rerun: every state's, in order), and a summary kept here depends on
        # no size that differs between the two, so the test gives the same answer there. Going over the
        # given ones too made each rerun's cost grow with the reruns before it (5.3 of 47 s on 60 files).
        table = out.table
        for key, s in self._independent(changed):
            have = table.get(key)
            if have is None:
                table[key] = [s]
            elif all(h is not s for h in have):
                have.append(s)

    def _independent(self, changed: set[str]) -> list[tuple[tuple, Summary]]:
        """The summaries of `own` that keep_into may give for `changed`, in order: worked out once per set
        of sizes (every later rerun state is offered this one's), again only for those recorded since."""
        sizes = frozenset(changed)
        n, done = self.passing.get(sizes, (0, []))
        own = self.own
        if n < len(own):
            done = done + [(key, s) for key, s in own[n:] if not (
                s.syms & sizes or not sizes.isdisjoint(s.loop_symbols) or not _self_contained(s))]
            self.passing[sizes] = (len(own), done)
        return done

    def sym_read(self, name: str) -> None:
        """A symbolic size was looked up (its --dim value or a symbol): the calls being recorded depend on it."""
        for r in self.sym_reading:
            r.add(name)

    def read(self, inst: Instance, attr: str) -> None:
        """An attribute of an object was read (called by the interpreter while recording)."""
        for r in self.reading:
            r.add((id(inst), attr))

    def read_value(self, inst: Instance, attr: str) -> object:
        """`inst.attr` read while recording: a plain value comes back as a `Tracked` one, which counts
        as read only once it is used (a plain value decides nothing until `.value` is read)."""
        v = inst.attrs[attr]
        if not isinstance(v, Py) or isinstance(v, Tracked):  # a Tracked one already says when it is used
            self.read(inst, attr)
            return v
        sets, key = list(self.reading), (id(inst), attr)

        def use() -> None:
            for r in sets:
                r.add(key)

        return Tracked(v.value, use)

    def call(self, it: Interpreter, inst: Instance, qualname: str, mod: str | None, args: list[object],
             kwargs: dict[str, object], node: ast.AST) -> object:
        """`inst(*args, **kwargs)` through its forward `qualname`: replayed, recorded, or just run."""
        run = lambda: it.run_function(qualname, args, kwargs, bound=inst, node=node, mod=mod)  # noqa: E731
        if not it.recording or it.region is not None or it.only is not None or it.autocast is not None:
            return run()  # an autocast region casts what the call does: its calls are run, not replayed
        bound = _bound(it.func_def(mod, qualname), args, kwargs)
        parts: list[object] = ([inst, *args, Py(tuple(kwargs))] + list(kwargs.values()) if bound is None
                               else [inst, Py("<bound>"), *bound])
        try:
            sig = signature(it, parts)
        except _NoSummary:
            return run()
        # inside code of another file every op is reported at the user's call (it.anchor): such a call
        # is kept apart from the same call made outside, whose ops keep their own lines
        key = Key((qualname, mod, bool(it.stack) and it.stack[0] == "<module>", it.anchor is not None, sig.key))
        for s in self.table.get(key, ()):
            if s.fits(sig, it.shared.mode) and (S.WATCH is None or s.meets is not None):
                if self.reading and s.needs:  # a call being recorded around this one depends on them too
                    ids = {i: o for o, i in sig.objects.items()}
                    for i, name, _ in s.needs:
                        for r in self.reading:
                            r.add((ids[i], name))
                if s.syms:
                    for r in self.sym_reading:
                        r.update(s.syms)
                return self.replay(it, s, sig.leaves, node)
        if key in self.refused:
            return run()
        return self.record(it, key, sig, parts, run, node)

    # ------------------------------------------------------------------ record
    def record(self, it: Interpreter, key: tuple, sig: Signature, parts: list[object], run,  # noqa: ANN001
               node: ast.AST) -> object:
        fg, sh = it.fg, it.shared
        leaves = sig.leaves
        n_ops, vid0, n_breaks, graph0 = len(fg.ops), sh._vid, len(fg.graph_breaks), it.graph
        n_in, steps0 = len(fg.inputs), it.steps_left
        stack_len = len(it.stack)
        asked = sh.mode_reads
        reads: set[tuple[int, str]] = set()
        syms: set[str] = set()
        self.reading.append(reads)
        self.sym_reading.append(syms)
        # notes are kept once per graph: collect the call's own, even those the graph already has
        outer = (fg.unknowns, fg.assumptions, fg.loop_symbols)
        fg.unknowns, fg.assumptions, fg.loop_symbols = [], [], []
        meets: list[tuple[int, int]] | None = [] if S.WATCH is not None else None
        if meets is not None:
            S.RECORDING.append(meets)
        try:
            ret = run()
        finally:
            if meets is not None:
                S.RECORDING.pop()
            self.reading.pop()
            self.sym_reading.pop()
            own = (fg.unknowns, fg.assumptions, fg.loop_symbols)
            fg.unknowns, fg.assumptions, fg.loop_symbols = outer
            for mine, theirs in zip(own, outer):
                theirs.extend(x for x in mine if x not in theirs)
        try:
            after = signature(it, parts)
        except _NoSummary:
            after = None
        if after is None or after.key != key[4] or after.plain != sig.plain:
            self.refused.add(key)  # the call changed what it was given: its effects cannot be replayed
            return ret
        pre = set(after.objects)  # the objects, lists and dicts it reaches: what reachable(*parts) walks
        made: set[int] = set()
        try:
            _check_result(ret, pre, made)  # also: a value the call returns counts as used
        except _NoSummary:
            self.refused.add(key)
            return ret
        new_vids = range(vid0 + 1, sh._vid + 1)
        values = []
        for v in new_vids:
            val = sh.values.get(v)
            if val is not None:
                local = fg.values.get(v, val)
                values.append(Value(v, local.meta, local.storage, local.contiguous, local.producer, local.is_input,
                                    local.name, local.strided_rows, requires_grad=val.requires_grad))
        needs = sorted({(sig.objects[o], name, v) for o, name in reads if o in sig.objects
                        for v in [sig.attr(sig.objects[o], name)] if v is not None}, key=lambda x: (x[0], x[1]))
        summary = Summary(
            leaves=list(leaves),
            leaf_storages=[_storage(it, v) for v in leaves],
            ops=fg.ops[n_ops:],  # ops are not changed once emitted: shared, not copied
            values=values,
            strides={v: sh.strides[v] for v in new_vids if v in sh.strides},
            matrix_t={v for v in new_vids if v in sh.matrix_t},
            inputs=list(fg.inputs[n_in:]),
            breaks=list(fg.graph_breaks[n_breaks:]),
            graph_delta=it.graph - graph0,
            graph0=graph0,
            unknowns=list(own[0]),
            assumptions=list(own[1]),
            loop_symbols=list(own[2]),
            ret=ret,
            steps=max(steps0 - it.steps_left, 0),
            stack_len=stack_len,
            anchored=key[1] is not None or key[3],
            line=getattr(it.anchor or node, "lineno", 0),
            needs=needs,
            mode=sh.mode if sh.mode_reads != asked else None,
            syms=frozenset(syms),
            meets=tuple(meets) if meets is not None else None,
        )
        self.table.setdefault(key, []).append(summary)
        self.own.append((key, summary))
        return ret

    # ------------------------------------------------------------------ replay
    def replay(self, it: Interpreter, s: Summary, leaves: list[int], node: ast.AST) -> object:
        fg, sh = it.fg, it.shared
        if s.mode is not None:
            sh.mode_reads += 1  # the call asked which mode it runs in: so does the call replaying it
        if S.WATCH is not None and s.meets:
            for a, b in s.meets:
                S.meet(a, b)
        it.steps_left -= s.steps
        if it.steps_left < 0 or len(fg.ops) + len(s.ops) > MAX_OPS:
            raise _Budget()
        vmap: dict[int, int] = dict(zip(s.leaves, leaves))
        smap: dict[int, int] = {old: _storage(it, new) for old, new in zip(s.leaf_storages, leaves)}
        first_vid, first_oid = sh.reserve(len(s.values), len(s.ops))
        for i, val in enumerate(s.values, first_vid):
            vmap[val.vid] = smap[val.vid] = i
        omap: dict[int, int] = {op.oid: i for i, op in enumerate(s.ops, first_oid)}
        for val in s.values:
            nv = Value(vmap[val.vid], val.meta, smap.get(val.storage, val.storage), val.contiguous,
                       omap.get(val.producer) if val.producer is not None else None, val.is_input, val.name,
                       val.strided_rows, requires_grad=val.requires_grad)
            fg.values[nv.vid] = nv
            sh.values[nv.vid] = nv
        for v, st in s.strides.items():
            sh.strides[vmap[v]] = st
        for v in s.matrix_t:
            sh.matrix_t.add(vmap[v])
        made = {vmap[val.vid] for val in s.values if val.is_input}
        for v in s.inputs:
            nv = vmap.get(v, v)
            if nv in made and nv not in fg.inputs:
                fg.inputs.append(nv)
        at = it.anchor or node  # where the ops are reported: the user's call
        span = _span(at)
        line = getattr(at, "lineno", 0)
        via = tuple(it.stack[1:])
        cut = max(s.stack_len - 1, 0)
        get, shift, anchored = vmap.get, it.graph - s.graph0, s.anchored
        vias: dict[tuple[str, ...], tuple[str, ...]] = {}  # most of a summary's ops share a few call chains
        moved: list[Op] = []
        for op in s.ops:  # map(get, vs, vs) is vmap.get(v, v) for each v, without a Python frame
            i, o, m, v = op.inputs, op.outputs, op.mutates, op.via
            w = vias.get(v)
            if w is None:
                w = vias[v] = via + v[cut:]
            moved.append(op.moved(omap[op.oid], tuple(map(get, i, i)), tuple(map(get, o, o)),
                                  tuple(map(get, m, m)) if m else (), op.graph + shift, w,
                                  span if anchored else op.span))
        fg.ops.extend(moved)
        known = fg.values
        # what the ops read that the replay did not make: the call's leaves and the ids its recording
        # read from outside (kept as they are); most replays bring no tensor from outside the graph
        if not known.keys() >= {*leaves, *_external(s)}:  # in C, without walking the ops
            for v in chain.from_iterable(chain.from_iterable(map(_IOM, moved))):
                if v not in known:
                    it.local(v)  # a parameter or a global tensor, entering this graph as an input
        for b in s.breaks:
            fg.graph_breaks.append(GraphBreak(line, b.reason) if s.anchored else b)
        it.graph += s.graph_delta
        for u in s.unknowns:
            u2 = UnknownOp(line, u.name) if s.anchored else u
            if u2 not in fg.unknowns:
                fg.unknowns.append(u2)
        for a in s.assumptions:
            if s.anchored and a.startswith(f"line {s.line}:"):  # noted at the call site: this one
                a = f"line {line}:" + a[len(f"line {s.line}:"):]
            if a not in fg.assumptions:
                fg.assumptions.append(a)
        for n in s.loop_symbols:
            if n not in fg.loop_symbols:
                fg.loop_symbols.append(n)
        return _map_result(s.ret, vmap, {})


def _external(s: Summary) -> tuple[int, ...]:
    """The ids a summary's ops read that are neither its leaves nor made by the call (worked out once)."""
    if s.external is None:
        inside = {*s.leaves, *(val.vid for val in s.values)}
        s.external = tuple(set(chain.from_iterable(chain.from_iterable(map(_IOM, s.ops)))) - inside)
    return s.external


def _self_contained(s: Summary) -> bool:
    """Whether a replay of `s` gives only the call's own tensors and their storages (worked out once):
    its ops read no tensor from outside the call (`_external`), every tensor the call made lives in
    the storage of a leaf or of a tensor it made (not in that of a view's base reached another way,
    which a replay keeps as recorded), and its result holds no tensor but those."""
    if s.contained is None:
        made = {val.vid for val in s.values}
        inside = {*s.leaf_storages, *made}
        ids: list[int] = []
        _result_tensors(s.ret, ids, set())
        s.contained = (not _external(s) and all(val.storage in inside for val in s.values)
                       and {*s.leaves, *made}.issuperset(ids))
    return s.contained


def _result_tensors(v: object, out: list[int], seen: set[int]) -> None:
    if isinstance(v, TensorRef):
        out.append(v.vid)
    elif isinstance(v, Unknown) and v.src is not None:
        out.append(v.src)
    elif isinstance(v, (Seq, Dict, Instance)) and id(v) not in seen:
        seen.add(id(v))
        items = v.items if isinstance(v, Seq) else v.items.values() if isinstance(v, Dict) else v.attrs.values()
        for x in items:
            _result_tensors(x, out, seen)


def _bound(fdef: ast.FunctionDef | ast.AsyncFunctionDef | None, args: list[object],
           kwargs: dict[str, object]) -> list[object] | None:
    """The call's arguments as the callee's parameters receive them, in parameter order, with literal
    defaults filled in: `m(x)` and `m(x, mask=None)` are one call. None when that cannot be told
    without evaluating code (a default that is not a literal, a parameter left without a value)."""
    if fdef is None:
        return None
    a = fdef.args
    params = [*a.posonlyargs, *a.args][1:]  # without self
    if len(args) > len(params) and a.vararg is None:
        return None
    defaults = {p.arg: d for p, d in zip(reversed(params), reversed(a.defaults))}  # as bind_params pairs them
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        if d is not None:
            defaults[p.arg] = d
    n_posonly = max(len(a.posonlyargs) - 1, 0)  # parameters after self that cannot be passed by name
    out: list[object] = []
    used = 0
    for i, p in enumerate([*params, *a.kwonlyargs]):
        if i < len(params) and i < len(args):
            out.append(args[i])
        elif p.arg in kwargs and i >= n_posonly:
            out.append(kwargs[p.arg])
            used += 1
        else:
            d = defaults.get(p.arg)
            if not isinstance(d, ast.Constant):
                return None
            out.append(Py(d.value))
    if a.vararg is not None:
        out.append(Seq(list(args[len(params):])))
    if a.kwarg is not None:
        names = {p.arg for p in params[n_posonly:]} | {p.arg for p in a.kwonlyargs}
        out.append(Dict({k: v for k, v in kwargs.items() if k not in names}))
    elif used != len(kwargs):
        return None  # a keyword the callee does not take: left to the call to report
    return out


def _storage(it: Interpreter, vid: int) -> int:
    val = it.fg.values.get(vid) or it.shared.values.get(vid)
    return val.storage if val is not None else vid
