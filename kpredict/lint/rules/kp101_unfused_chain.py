"""KP101 unfused-elementwise-chain."""

from __future__ import annotations

from collections.abc import Iterator

from kpredict.lint.context import FunctionContext
from kpredict.lint.figures import as_dict, describe, eager_figures, fused_figures
from kpredict.lint import hotpath
from kpredict.lint.model import Example, Hit, Rule
from kpredict.ir import Op, Span
from kpredict.lint.syncs import host_only

ELEMENTWISE = ("pointwise", "random")


class UnfusedElementwiseChain(Rule):
    """
    ## What it does
    Finds chains of elementwise ops (arithmetic, activations, casts, comparisons) that feed each
    other in code that does not run under `torch.compile`, and says how many kernels and memory
    transfers fusing them would save, naming the ops and their lines. The fused figures come from
    kpredict's Inductor model run on the chain alone. A chain never crosses an op that is not
    elementwise (a matmul, a reduction, a module's convolution, a sync) or a concatenation: ops on
    both sides of one cannot share a kernel. Copies, casts, concatenations and fills do not count toward its length,
    and chains built only from CPU constructors (no `device=`) are CPU work, not reported.

    ## Why it costs
    In eager mode every elementwise op is a kernel of its own: it reads its inputs from GPU memory
    and writes its result back, so a chain of N ops moves every intermediate tensor through memory
    twice. Elementwise kernels are memory bound: the time goes into those transfers, not the math.
    Fused, the chain reads its inputs once and writes its results once.
    """

    code = "KP101"
    name = "unfused-elementwise-chain"
    severity = "warning"
    summary = "Elementwise ops that eager mode runs as one kernel each, where a fused kernel would do"
    fix = "Run the function under torch.compile (or use a fused op) so that the chain becomes one kernel."
    options = {"min-chain-length": 3, hotpath.OPTION: False}
    option_docs = {"min-chain-length": "Report chains of at least this many elementwise ops (copies, casts, "
                                       "concatenations and fills not counted).",
                   hotpath.OPTION: hotpath.OPTION_DOC}

    INVALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(64, 64)\n"
            "def gelu_tanh(x):\n"
            "    inner = 0.7978845608 * (x + 0.044715 * x ** 3)  # expect: KP101\n"
            "    return 0.5 * x * (1.0 + torch.tanh(inner))\n"
        ),
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example a=randn(1000) b=randn(1000)\n"
            "def scaled_sum(a, b):\n"
            "    c = a + b  # expect: KP101\n"
            "    d = c * 2\n"
            "    return d.relu()\n"
        ),
    ]
    VALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(64, 64)\n"
            "@torch.compile\n"
            "def gelu_tanh(x):\n"
            "    inner = 0.7978845608 * (x + 0.044715 * x ** 3)\n"
            "    return 0.5 * x * (1.0 + torch.tanh(inner))\n"
        ),
        Example(
            "import torch\n"
            "import torch.nn.functional as F\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(64, 64)\n"
            "def gelu_tanh(x):\n"
            "    return F.gelu(x, approximate='tanh')\n"
        ),
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example a=randn(1000) b=randn(1000)\n"
            "def scaled_sum(a, b):\n"
            "    c = a + b\n"
            "    d = c * 2\n"
            "    return d.relu()\n",
            options={"min-chain-length": 4},
        ),
        Example(  # the second add needs `y` through the matmul: no kernel can hold both adds
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(64, 64) w=randn(64, 64)\n"
            "def block(x, w):\n"
            "    y = x * 0.5 + 1\n"
            "    h = y @ w\n"
            "    return y + h * 2\n"
        ),
        Example(  # one-time setup: re-parameterizing weights runs once, off the hot path
            "import torch\n"
            "\n"
            "\n"
            "class Fuse(torch.nn.Module):\n"
            "    # kpredict: example w=randn(64, 64) b=randn(64)\n"
            "    def _fuse_bn_tensor(self, w, b):\n"
            "        return (w * 0.5 + b) * 2\n"
        ),
        Example(  # CPU constructors without device=: a data transform's random draw, no device kernels
            "import torch\n"
            "\n"
            "\n"
            "def make_params(height: int, width: int):\n"
            "    return torch.rand(1, 1, height, width) * 2 - 1 + 0.5\n"
        ),
    ]

    def check(self, fn: FunctionContext) -> Iterator[Hit]:
        if fn.compiled:
            return
        min_len = int(fn.options.get("min-chain-length", 3))
        members = [op for op in fn.own_ops if op.category in ELEMENTWISE and op.name not in JOINS
                   and not op.free_reason and fn.launches(op) > 0]
        ids = {op.oid for op in members}
        behind = behind_barriers(fn, [op.oid for op in members])
        bit = {op.oid: 1 << i for i, op in enumerate(members)}
        edges: list[tuple[int, int]] = []  # producer -> consumer among members, no barrier between
        last: dict[int, int] = {}  # storage -> last op writing it
        for op in fn.fg.ops:
            if op.oid in ids:
                for vid in op.inputs + op.mutates:
                    w = last.get(fn.storage(vid))
                    if w is not None and w in ids and not behind[op.oid] & bit[w]:
                        edges.append((w, op.oid))
            if op.category not in ("view", "alloc", "noop", "sync") and not op.free_reason:
                for vid in op.outputs + op.mutates:
                    last[fn.storage(vid)] = op.oid
        chains = components(members, edges)
        masks = [sum(bit[m] for m in oids) for oids in chains]
        if any(behind[o] & mask for oids, mask in zip(chains, masks) for o in oids):
            # A -> B -> C where C also needs A through a matmul: keep only edges within a stage
            stage = barrier_stages(fn)
            chains = components(members, [(w, o) for w, o in edges if stage[w] == stage[o]])
        for oids in sorted(chains, key=min):
            ops = [fn.op_by_id[o] for o in oids]
            if sum(op.name not in COPIES for op in ops) < min_len:
                continue  # copies into slices and casts: data movement, not a chain of arithmetic
            if host_only(fn, [v for op in ops for v in op.outputs]):
                continue  # made from CPU constructors: CPU work, no device kernels to fuse
            eager = eager_figures(fn, oids)
            fused = fused_figures(fn, oids)
            if not (isinstance(fused.kernels, int) and isinstance(eager.kernels, int)):
                continue
            if fused.kernels == 0 or fused.kernels >= eager.kernels:
                continue  # dead code, or nothing Inductor would fuse
            start = min((op.span.line, op.span.col) for op in ops)
            end = max((op.span.end_line, op.span.end_col) for op in ops)
            message = (f"{len(oids)} elementwise ops ({op_names(ops)}, {line_list(ops)}) launch "
                       f"{describe(eager, 'move')}; fused they would be {describe(fused)}")
            yield Hit(Span(start[0], start[1], end[0], end[1]), message,
                      {"ops": len(oids), "names": [op.name for op in ops],
                       "lines": sorted({op.span.line for op in ops}),
                       "eager": as_dict(eager), "fused": as_dict(fused)})


# data movement and creation: copies into slices, casts, concatenation, lookups, fills. A chain must
# hold min-chain-length ops besides these: fusing a few copies saves nothing worth a review
COPIES = {"copy_", "clone", "contiguous", "_to_copy", "to", "fill_", "index_put_", "slice_scatter", "select_scatter",
          "cat", "stack", "index", "gather", "index_select", "embedding", "constant_pad_nd", "zeros", "ones", "full",
          "empty", "arange", "zeros_like", "ones_like", "full_like", "empty_like", "new_zeros", "new_ones", "new_full"}
FREE = ("view", "alloc", "noop")
# concatenation joins separate pieces (one per loop iteration, per level): ops on either side of it are
# no single chain, and whether Inductor folds a cat into its consumers depends on its inputs
JOINS = {"cat", "stack", "concat", "concatenate"}


def components(members: list[Op], edges: list[tuple[int, int]]) -> list[list[int]]:
    """The connected groups of members (op ids, in program order) that `edges` join."""
    parent = {op.oid: op.oid for op in members}

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for w, o in edges:
        parent[find(w)] = find(o)
    out: dict[int, list[int]] = {}
    for op in members:
        out.setdefault(find(op.oid), []).append(op.oid)
    return list(out.values())


def behind_barriers(fn: FunctionContext, members: list[int]) -> dict[int, int]:
    """For each op, the members (as bits, in `members` order) it depends on through an op that is not
    elementwise: a reduction, a matmul, a module call's convolution, a sync, a data-dependent op.
    Such a member cannot share a kernel with the op: whatever separates them runs in between, so a
    chain never takes that edge (its fused figure would count without the op in between)."""
    bit = {o: 1 << i for i, o in enumerate(members)}
    reach: dict[int, int] = {}  # storage -> members it was computed from, by any path
    behind: dict[int, int] = {}  # storage -> members it was computed from through a barrier
    out: dict[int, int] = {}
    for op in fn.fg.ops:
        r = b = 0
        for v in op.inputs + op.mutates:
            st = fn.storage(v)
            r |= reach.get(st, 0)
            b |= behind.get(st, 0)
        out[op.oid] = b
        if op.oid in bit:
            r |= bit[op.oid]
        elif not (op.category in FREE or op.free_reason or op.category in ELEMENTWISE) or op.name in JOINS:
            b |= r
        for v in op.outputs + op.mutates:
            st = fn.storage(v)
            reach[st] = reach.get(st, 0) | r
            behind[st] = behind.get(st, 0) | b
    return out


def barrier_stages(fn: FunctionContext) -> dict[int, int]:
    """For each op, how many ops that are not elementwise lie on the longest path from the function's
    inputs to it: a chain whose members depend on each other through such an op is cut by stage."""
    by_storage: dict[int, int] = {}
    out: dict[int, int] = {}
    for op in fn.fg.ops:
        s = max((by_storage.get(fn.storage(v), 0) for v in op.inputs + op.mutates), default=0)
        out[op.oid] = s
        free = op.category in FREE or op.free_reason
        after = s if free or op.category in ELEMENTWISE else s + 1
        for v in op.outputs + op.mutates:
            by_storage[fn.storage(v)] = max(by_storage.get(fn.storage(v), 0), after)
    return out


def op_names(ops: list[Op], limit: int = 6) -> str:
    """'mul x3, add x2, tanh': the chain's ops in order of first use, with counts."""
    counts: dict[str, int] = {}
    for op in ops:
        counts[op.name] = counts.get(op.name, 0) + 1
    parts = [f"{n} x{c}" if c > 1 else n for n, c in counts.items()]
    return ", ".join(parts[:limit]) + (f" and {len(parts) - limit} more" if len(parts) > limit else "")


def line_list(ops: list[Op]) -> str:
    """'line 6' or 'lines 6-8, 12': where the chain's ops are."""
    lines = sorted({op.span.line for op in ops})
    runs: list[list[int]] = []
    for n in lines:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
    return ("line " if len(lines) == 1 else "lines ") + text
