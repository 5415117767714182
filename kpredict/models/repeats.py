"""A graph's repeated layers, scheduled once: the Inductor model on N copies of a layer.

A model's forward runs its layer N times (`for layer in self.layers`), and its op graph holds N
copies of the layer's ops, equal up to renumbering (call summaries replay one recording). The
Inductor model decides each op's kernel from its neighbours, so the copies in the middle of the
stack get the same kernels, shifted; yet it spent ~9 µs per op on every copy again: on 300
transformers files, graphs of 1,000 ops and more (model forwards and their heads, 32 layers at a
config's defaults) took 4.1 of the 5.2 s of the Inductor model, and 60% of their ops were copies
beyond the fifth.

So the graph is scheduled with its first KEEP copies and its last one only; when its middle copies
got the same kernels, shifted by one copy each, copy PATTERN's kernels are repeated for the copies
left out (the same reasoning as the loop-count reruns of symbolic.py, checked here on every graph).
The copies are found by the ops' own fields and the places of their values (made in the same copy,
in the one before, shared by all, or a copy's own weight), never by where the code came from.
Whenever anything does not fit (a copy reading from two copies back, a value of a middle copy read
after the stack, a kernel reaching past its neighbour copies, kernels that do not repeat),
`schedule_repeats` returns None and the whole graph is scheduled.

On the 4,489 graphs of that sample the kernels are the same as the whole graph's on both targets;
110 graphs (348k ops) take the shortcut on cuda, 105 on cpu, and the Inductor model's time fell by
about 8% (cuda) and 5% (cpu): checking the copies op by op (about 2.8 µs per op, where the model
takes about 9) is most of what is left.
"""

from __future__ import annotations

import operator
from itertools import chain
from collections.abc import Callable
from dataclasses import dataclass, replace

from kpredict.ir import FunctionGraph, Kernel

KEEP = 4  # copies scheduled at the start of the stack: the first, two to compare, one before the last
PATTERN = KEEP - 2  # the copy whose kernels are repeated for the copies left out
MIN_COPIES = KEEP + 3  # fewer: too little to leave out to pay for the check
MIN_OPS = 600  # smaller graphs are scheduled whole (the search costs more than it saves)
MAX_TOKENS = 12  # tokens whose spacing proposes a period
MAX_TRIES = 4  # periods checked op by op

_TOKEN = operator.attrgetter("name", "aten", "category")


@dataclass
class Stack:
    """Copies `start + j*period ... + period` of the ops, j < count; per copy, its ids in order."""

    start: int
    period: int
    count: int
    own: list[dict[int, int]]  # per copy: id -> its index in `made` (>= 0) or in `weights` (-1 - index)
    made: list[list[int]]  # per copy: the values made there, in order
    weights: list[list[int]]  # per copy: the ids only it reads (a layer's weights), in the order first read
    graphs: int  # graphs each copy adds (graph breaks in a layer)


def _period_candidates(tokens: list[int]) -> list[int]:
    """Periods proposed by the spacing of tokens that recur at a constant distance."""
    pos: dict[int, list[int]] = {}
    for i, t in enumerate(tokens):
        p = pos.get(t)
        if p is None:
            pos[t] = [i]
        else:
            p.append(i)
    out: list[int] = []
    looked = 0
    # the rarest tokens first: one that comes once per layer is spaced by the layer's length
    for ps in sorted((ps for ps in pos.values() if len(ps) >= MIN_COPIES), key=len):
        gaps: dict[int, int] = {}
        for a, b in zip(ps, ps[1:]):
            gaps[b - a] = gaps.get(b - a, 0) + 1
        g, n = max(gaps.items(), key=operator.itemgetter(1))
        if n >= MIN_COPIES - 1 and g not in out:
            out.append(g)
        looked += 1
        if looked >= MAX_TOKENS:
            break
    return out


def _longest_run(tokens: list[int], period: int) -> tuple[int, int]:
    """(start, length) of the longest stretch where each token equals the one `period` later."""
    same = bytes(map(operator.eq, tokens, tokens[period:]))  # in C: one byte per comparison
    lens = list(map(len, same.split(b"\x00")))  # a wrong period splits it at almost every byte
    best = max(lens)
    k = lens.index(best)  # the first longest, as a left-to-right scan finds it
    return sum(lens[:k]) + k, best


def find_stack(fg: FunctionGraph, min_ops: int | None = None) -> Stack | None:
    """The longest stretch of ops made of equal copies (at least MIN_COPIES), or None; graphs of
    fewer than `min_ops` ops (default MIN_OPS, read at each call) are not searched."""
    ops = fg.ops
    if len(ops) < (MIN_OPS if min_ops is None else min_ops):
        return None
    tokens = list(map(_TOKEN, ops))
    index = {t: i for i, t in enumerate(dict.fromkeys(tokens))}  # each distinct token as a small int:
    tokens = list(map(index.__getitem__, tokens))  # compared a million times below, in C
    found: list[tuple[int, int, int]] = []
    periods = _period_candidates(tokens)
    for period in dict.fromkeys([*periods, *(2 * p for p in periods)]):  # twice: layers of two kinds, alternating
        start, length = _longest_run(tokens, period)
        count = length // period + 1
        if count >= MIN_COPIES:
            found.append((start, period, count))
    # the most ops covered first, then the most copies; a stack whose copies differ only in their
    # ids (one layer reads one rotary table, the next another) is tried again at twice its length
    for start, period, count in sorted(found, key=lambda f: (-f[1] * f[2], -f[2]))[:MAX_TRIES]:
        stack = _check_copies(fg, start, period, count)
        if stack is not None:
            return stack
    return None


# everything of an op but its ids and its place in the source (one C call per op)
_FIELDS = operator.attrgetter("name", "category", "aten", "eager_kernels", "eager_reads", "eager_writes", "syncs",
                              "compiled", "reduce_numel", "reduce_len", "reduce_axis", "free_reason", "region", "only")
_INPUTS = operator.attrgetter("inputs")
_OUTPUTS = operator.attrgetter("outputs")
_MUTATES = operator.attrgetter("mutates")


def _check_copies(fg: FunctionGraph, start: int, period: int, count: int) -> Stack | None:
    """The copies that are equal with their values in the same places: the first `count` copies
    from `start`, cut at the first that differs; None when fewer than MIN_COPIES are."""
    ops, values = fg.ops, fg.values
    blocks = [ops[start + j * period:start + (j + 1) * period] for j in range(count)]
    made = set(chain.from_iterable(map(_OUTPUTS, ops[start:start + count * period])))
    # the ids no copy makes, with the copy that first references them, when no copy but the next one
    # references them too (a layer's weight; transposed at the end of one copy and multiplied at
    # the start of the next), else -1 (shared: the attention mask, the rotary tables)
    users: dict[int, int] = {}
    for j, block in enumerate(blocks):
        ext = set(chain(chain.from_iterable(map(_INPUTS, block)), chain.from_iterable(map(_MUTATES, block))))
        ext -= made
        ext.update([values[x].storage for x in ext if x in values])
        for y in ext:
            u = users.get(y)
            if u is None:
                users[y] = j
            elif u != j and u != j - 1:
                users[y] = -1
    outside = [*ops[:start], *ops[start + count * period:]]
    seen = set(chain(chain.from_iterable(map(_INPUTS, outside)), chain.from_iterable(map(_OUTPUTS, outside)),
                     chain.from_iterable(map(_MUTATES, outside))))
    seen.update([values[x].storage for x in seen if x in values])
    for y in seen.intersection(users):
        users[y] = -1

    made_own: list[dict[int, int]] = []  # per copy: value made there -> its index, in the order made
    weight_own: list[dict[int, int]] = []  # per copy: its own weights -> index, in the order first read
    encodings: list[list] = []
    for j, block in enumerate(blocks):
        mine: dict[int, int] = {}
        weights: dict[int, int] = {}
        prev = made_own[j - 1] if j else {}
        prev_w = weight_own[j - 1] if j else {}
        enc: list = []
        add = enc.append

        def ref(x: int) -> object:
            """Where id x is: a value made in this copy (index >= 0) or in the one before (< 0),
            a weight of this copy or of the one before, or the id itself (shared by the copies)."""
            i = mine.get(x)
            if i is not None:
                return i
            i = prev.get(x)
            if i is not None:
                return -1 - i
            i = weights.get(x)
            if i is not None:
                return ("w", i)
            i = prev_w.get(x)
            if i is not None:
                return ("pw", i)
            if users.get(x) == j:  # this copy's own weight: new here
                i = weights[x] = len(weights)
                fixed(x)
                return ("w", i)
            return (x,)

        def fixed(x: int) -> None:
            """What is fixed about a new id of this copy: its metadata and storage."""
            v = values.get(x)
            add(None if v is None else (v.meta, v.contiguous, v.is_input, "self" if v.storage == x else ref(v.storage)))

        g0 = block[0].graph  # a layer with a graph break: each copy starts a later graph
        for op in block:
            add(_FIELDS(op))
            add(op.graph - g0)
            add(tuple(map(ref, op.inputs)))
            if op.mutates:
                for x in op.mutates:
                    if x not in mine:
                        return None  # changes what another copy or the caller holds: not followed
                add(tuple(map(ref, op.mutates)))
            for x in op.outputs:  # a new value, or one it writes again, in place
                if x not in mine and x not in prev and x not in users:
                    add(mine.setdefault(x, len(mine)))
                    fixed(x)
                else:
                    add(ref(x))
            add(len(op.outputs))
        made_own.append(mine)
        weight_own.append(weights)
        encodings.append(enc)
        if j >= 2 and enc != encodings[1]:  # the first copy reads what comes before the stack instead
            made_own.pop()
            weight_own.pop()
            break
    n = len(made_own)
    if n < MIN_COPIES:
        return None
    shift = {blocks[j + 1][0].graph - blocks[j][0].graph for j in range(n - 1)}
    if len(shift) != 1:
        return None
    own = [{**m, **{x: -1 - i for x, i in w.items()}} for m, w in zip(made_own, weight_own)]
    return Stack(start, period, n, own, [list(m) for m in made_own], [list(w) for w in weight_own], shift.pop())


def _reduced(fg: FunctionGraph, st: Stack) -> FunctionGraph | None:
    """The graph with the copies KEEP .. count-2 left out: the last copy reads from copy KEEP-1
    what it read from copy count-2."""
    ops, p, last = fg.ops, st.period, st.count - 1
    end = st.start + st.count * p
    dropped: set[int] = set()  # what follows the stack may read the first and the last copy only
    for j in range(1, last):
        dropped.update(st.made[j], st.weights[j])
    after = ops[end:]
    values = fg.values
    for op in after:
        if (not dropped.isdisjoint(op.inputs) or not dropped.isdisjoint(op.mutates)
                or any(x in values and values[x].storage in dropped for x in op.inputs)):
            return None
    # what it returns of the copies between the first and the last (a cache of every layer's keys
    # and values): the same in each, then the shortened graph returns it of the copies it keeps
    returned = set(fg.returns)
    ret = {tuple(i for x, i in st.own[j].items() if x in returned) for j in range(1, last)}
    if len(ret) != 1:
        return None
    swap = {**dict(zip(st.made[last - 1], st.made[KEEP - 1])), **dict(zip(st.weights[last - 1], st.weights[KEEP - 1]))}
    get = swap.get
    new_values = dict(values)
    for x in (*st.made[last], *st.weights[last]):
        v = values.get(x)
        if v is not None and v.storage in swap:
            new_values[x] = replace(v, storage=swap[v.storage])
    # the last copy and what follows come right after copy KEEP-1, in the graphs that follow its own
    # (with a graph break in each layer, the last copy's start shares a graph with the end of the one before)
    dg = (last - KEEP) * st.graphs
    moved = [replace(op, inputs=tuple(map(get, op.inputs, op.inputs)), outputs=tuple(map(get, op.outputs, op.outputs)),
                     graph=op.graph - dg)
             if dg or not swap.keys().isdisjoint(op.inputs) or not swap.keys().isdisjoint(op.outputs) else op
             for op in ops[st.start + last * p:end]]
    if dg:
        after = [replace(op, graph=op.graph - dg) for op in after]
    kept = [*ops[:st.start + KEEP * p], *moved, *after]
    gone: set[int] = set()
    for j in range(KEEP, last):
        gone.update(st.made[j], st.weights[j])
    return replace(fg, ops=kept, values=new_values, inputs=[v for v in fg.inputs if v not in gone],
                   returns=[v for v in fg.returns if v not in gone])


def schedule_repeats(fg: FunctionGraph, schedule: Callable[[FunctionGraph], list[Kernel]],
                     min_ops: int | None = None) -> list[Kernel] | None:
    """The kernels of `fg`, from a schedule of its repeated layers shortened to KEEP + 1 copies;
    None when it has no such stack or its kernels do not repeat (the caller schedules it whole)."""
    st = find_stack(fg, min_ops)
    if st is None:
        return None
    small = _reduced(fg, st)
    if small is None:
        return None
    kernels = schedule(small)
    p, last = st.period, st.count - 1
    # where each op of the shortened graph is: -1 before the stack, copy 0..KEEP-1, KEEP for the
    # last copy, KEEP + 1 after the stack
    block_of_op: dict[int, int] = {}
    for i, op in enumerate(small.ops):
        j = (i - st.start) // p if i >= st.start else -1
        block_of_op[op.oid] = min(j, KEEP + 1)
    copy_of = [*range(KEEP), last]  # shortened copy -> copy of the whole stack
    block_of_id: dict[int, int] = {}
    for j, c in enumerate(copy_of):
        for x in (*st.made[c], *st.weights[c]):
            block_of_id[x] = j
    oids = [[op.oid for op in fg.ops[st.start + c * p:st.start + (c + 1) * p]] for c in range(st.count)]
    index_of_op = {oid: i for j in copy_of for i, oid in enumerate(oids[j])}

    def moved(k: Kernel, to: dict[int, int], by: int) -> Kernel | None:
        """Kernel k of the shortened graph for copies `to` (shortened copy -> copy of the stack), `by`
        copies later in the stack than where it is."""
        def op_id(o: int) -> int | None:
            j = block_of_op.get(o, -1)
            if j < 0 or j > KEEP:
                return o
            c = to.get(j)
            return None if c is None else oids[c][index_of_op[o]]

        def val_id(x: int) -> int | None:
            j = block_of_id.get(x)
            if j is None:
                return x
            c = to.get(j)
            if c is None:
                return None
            i = st.own[copy_of[j]][x]
            ids = st.made[c] if i >= 0 else st.weights[c]
            i = i if i >= 0 else -1 - i
            return ids[i] if i < len(ids) else None

        new_ops = [op_id(o) for o in k.ops]
        reads = [val_id(x) for x in k.reads]
        writes = [val_id(x) for x in k.writes]
        if None in new_ops or None in reads or None in writes:
            return None
        return Kernel(k.name, tuple(sorted(new_ops)), tuple(reads), tuple(sorted(writes)) if k.writes == tuple(
            sorted(k.writes)) else tuple(writes), k.kind, k.graph + by * st.graphs, k.launches)  # type: ignore[arg-type]

    def home(k: Kernel) -> int:
        return block_of_op.get(k.ops[0], -1) if k.ops else -1

    # kernels of what comes before the stack may come among the first copy's (C++: the locality
    # order moves producers next to their first reader), and those of what follows among the last's
    raw = [home(k) for k in kernels]
    homes = [min(max(h, 0), KEEP) for h in raw]
    for h, k in zip(raw, kernels):  # a kernel spans its copy and its neighbours only
        near = (0, KEEP) if h > KEEP else (h - 1, h, h + 1)
        if any(block_of_op.get(o, -1) not in near for o in k.ops if 0 <= block_of_op.get(o, -1) <= KEEP) or any(
                block_of_id[x] not in near for x in (*k.reads, *k.writes) if x in block_of_id):
            return None
    if homes != sorted(homes):
        return None  # kernels of one copy not together in the order: not repeated as they are
    by_home: dict[int, list[Kernel]] = {}
    for h, k in zip(homes, kernels):
        by_home.setdefault(h, []).append(k)
    # the middle copies got the same kernels, shifted by one copy each
    for a in range(1, PATTERN):
        shift = {a - 1: a, a: a + 1, a + 1: a + 2}
        ka, kb = by_home.get(a, []), by_home.get(a + 1, [])
        if len(ka) != len(kb):
            return None
        for x, y in zip(ka, kb):
            m = moved(x, shift, 1)
            if m is None or _base(m) != _base(y):
                return None
    out = [k for h, k in zip(homes, kernels) if h < PATTERN]
    for c in range(PATTERN, last - 1):  # copy PATTERN of the shortened graph stands for copies PATTERN .. last-2
        for k in by_home.get(PATTERN, ()):
            m = moved(k, {PATTERN - 1: c - 1, PATTERN: c, PATTERN + 1: c + 1}, c - PATTERN)
            if m is None:
                return None
            out.append(m)
    for h, k in zip(homes, kernels):  # copy KEEP-1 stands for copy last-1; the last copy and what follows
        if h > PATTERN:  # are themselves
            m = moved(k, {PATTERN: last - 2, KEEP - 1: last - 1, KEEP: last}, last - KEEP)
            if m is None:
                return None
            out.append(m)
    return _numbered(out)


def _base(k: Kernel) -> tuple:
    """A kernel without the index that ends a generated kernel's name."""
    name = k.name.rsplit("_", 1)[0] if k.kind == "generated" else k.name
    return (name, k.ops, k.reads, k.writes, k.kind, k.graph, k.launches)


def _numbered(kernels: list[Kernel]) -> list[Kernel]:
    """Generated kernels numbered again in order, from 0 in each graph, as the scheduler names them."""
    index: dict[int, int] = {}
    for k in kernels:
        if k.kind == "generated":
            i = index.get(k.graph, 0)
            k.name = f"{k.name.rsplit('_', 1)[0]}_{i}"
            index[k.graph] = i + 1
    return kernels
