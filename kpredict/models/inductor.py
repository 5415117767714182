"""The compile model: group a function's ops into the kernels TorchInductor would generate.

It follows the scheduler's rules as measured and read in docs/notes/inductor-rules.md (B.1-B.14):
- graph breaks split the function; nothing fuses across them; dead code is removed;
- pointwise ops over the same number of elements fuse vertically, whatever the chain length;
- a reduction takes its pointwise producers (prologue) and consumers over its input or output
  size (epilogue), and sibling reductions over the same rows;
- independent nodes reading a common buffer fuse horizontally;
- extern kernels (matmul, conv, attention) and fallbacks stay alone; a 1-D bias add after a
  matmul becomes addmm; softmax(q@k^T)@v becomes one attention kernel where the target rewrites it;
- on CUDA, long reductions with few outputs split into two kernels and then cannot host a
  full-size epilogue; any RNG adds one seed launch per graph;
- on CPU, every generated node between two extern kernels goes into one C++ function (kernel
  groups), in the graph's order after reorder_for_locality.
Target differences come from rules/targets.toml.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TypeGuard

from kpredict.ir import DTYPE_SIZES, EAGER_REGION, FunctionGraph, Kernel, Op, Value
from kpredict.models.eager import eager_kernels
from kpredict.opfacts import attention_kernel, default_table, default_targets
from kpredict.models.repeats import schedule_repeats

FUSIBLE = ("pointwise", "reduction", "random")
# ops that read a few rows of their producer's output through an index: on CPU they join the
# kernel of the reduction that produced it (log_softmax + nll_loss, layer_norm + x[:, [-1]])
GATHER_EPILOGUES = ("index", "nll_loss_forward", "nll_loss2d_forward")
UNROLL_REDUCTIONS = 8  # config.unroll_reductions_threshold
# activations whose decomposition reads their input twice [SRC torch/_decomp/decompositions.py silu,
# gelu, hardswish, mish]
SELF_REUSE = frozenset(("silu", "silu_", "gelu", "hardswish", "hardswish_", "mish", "mish_"))
REALIZE_ACC_READS = 8  # config.realize_acc_reads_threshold
REALIZE_OPS = 30  # config.realize_opcount_threshold: a value of more ops read twice is stored (has_large_inner_fn)
OPS_PER_NODE = 2  # inner-function ops per op of ours (its loads, index arithmetic, masks of a cat), roughly
REALIZE_READS = 4  # config.realize_reads_threshold: a value read twice with more loads is stored [SRC torch 2.13 _inductor/ir.py should_realize_on_reuse]
MAX_FUSION_SIZE = 64  # config.max_fusion_size [SRC torch/_inductor/config.py; NOTE cheat sheet 19]
# nodes reading one buffer are tried as fusion pairs only with the next 64 of them, in order
# [SRC torch 2.13 _inductor/config.py max_fusion_buffer_group_pairwise_attempts; scheduler.py get_possible_fusions]
PAIRWISE_ATTEMPTS = 64
# kernels side by side fuse only where their scheduler nodes lie at most this far apart in program order
# [SRC torch 2.13 _inductor/scheduler.py are_long_distant_nodes, choices.py can_fuse_horizontal]
FUSION_DISTANCE = 64
# views that start away from their base's first element (a read through one is at another index)
OFFSET_VIEWS = frozenset(("select", "narrow", "slice", "split", "split_with_sizes", "chunk", "unsafe_chunk", "unbind",
                          "tensor_split", "hsplit", "vsplit", "dsplit", "diagonal", "as_strided"))
# ops that copy their input view into a fresh tensor: their loops are the view's (kpredict.models.inductor._loops)
COPY_OF_VIEW = ("reshape", "clone", "contiguous", "flatten")
# views that reorder dims (kpredict.models.inductor._permuted_reads)
PERMUTING = ("transpose", "permute", "t", "swapaxes", "swapdims", "movedim", "moveaxis", "mT")
# reductions that carry their own full-size epilogue (row statistics, then every element rescaled)
ROW_EPILOGUE = ("_softmax", "_log_softmax", "layer_norm", "rms_norm")
_OID = operator.attrgetter("oid")
# the normalizing half of a group norm split from its statistics (split_group_norms): a pointwise node
# that never joins the reduction before it
GROUP_NORM_APPLY = "group_norm_apply"
PASSIVE = frozenset(("view", "alloc", "noop"))  # categories whose ops touch no memory of their own


# views after which a tensor keeps its memory layout (a library kernel can still write it in place)
_LAYOUT_KEEPING_VIEWS = frozenset({"view", "reshape", "_unsafe_view", "unsqueeze", "squeeze", "flatten", "unflatten",
                                   "alias", "detach"})


@dataclass(slots=True)
class Node:
    op: Op
    kind: str  # pw | red | extern | fallback
    numel: int | None  # elements iterated (pw: output numel; red: input numel)
    rout: int | None = None  # reduction outputs
    deps: set[int] = field(default_factory=set)  # oids this node reads from (same graph)
    absorbed_into: int | None = None  # oid of the node whose kernel computes this one


@dataclass(slots=True)
class Group:
    gid: int
    nodes: list[int]  # oids, program order
    kind: str  # fused | extern | fallback
    numel: int | None = None  # pointwise iteration size (None: unknown)
    red: tuple[int | None, int | None] | None = None  # (rin, rout) of its reductions
    red_len: int | None = None
    red_axis: str | None = None
    dtypes: set[str] = field(default_factory=set)
    weight: int = 0  # realized scheduler nodes among its nodes (see Scheduler.realized)
    mask: int = 0  # its nodes as a bit set over the graph's node positions
    sealed: bool = False  # an indirect store's kernel: nothing fuses into it (split_scatter_stores)


def _numel(fg: FunctionGraph, vid: int) -> int | None:
    v = fg.values.get(vid)
    return v.meta.numel if v is not None else None


ZERO_CONSTANTS = ("zeros", "zeros_like", "new_zeros")
ONE_CONSTANTS = ("ones", "ones_like", "new_ones")
_NEUTRAL = frozenset(ZERO_CONSTANTS + ONE_CONSTANTS)
FILLS = frozenset(ZERO_CONSTANTS + ONE_CONSTANTS + ("full", "full_like", "new_full"))  # aten.full once traced
_NAME = operator.attrgetter("name")


def _as_view(op: Op, keep: int, values: dict, reason: str, moved: dict[int, int] | None = None) -> Op:
    """Op, made a free view of value `keep`: its output takes keep's storage (in `values`); with
    `moved`, the old storage -> the new one, for the views of the output (see _rehome)."""
    out, kept = values[op.outputs[0]], values[keep]
    if moved is not None and out.storage != kept.storage:
        moved[out.storage] = kept.storage
    values[out.vid] = replace(out, storage=kept.storage, contiguous=kept.contiguous)
    return replace(op, category="view", free_reason=reason, inputs=(keep,))


def _rehome(values: dict, moved: dict[int, int]) -> None:
    """Views of an output made a view share the storage it took (a flatten of it read later)."""
    def final(st: int) -> int:
        while st in moved:
            st = moved[st]
        return st
    for vid, v in list(values.items()):
        if v.storage in moved:
            values[vid] = replace(v, storage=final(v.storage))


def fold_constants(fg: FunctionGraph) -> FunctionGraph:
    """`x + zeros(...)`, `x * ones(...)` are removed by Inductor's uniform-value constant folding.

    Returns a copy of the graph in which such ops are views of their other operand.
    """
    if _NEUTRAL.isdisjoint(map(_NAME, fg.ops)):  # no such constant: the commonest case, decided in C
        return fg
    producer = {vid: op for op in fg.ops for vid in op.outputs}
    values = dict(fg.values)
    moved: dict[int, int] = {}
    ops = []
    changed = False
    written: set[int] = set()  # storages an op has written into in place so far (m[a:b] = 1 on zeros)
    for op in fg.ops:
        if op.name in ("add", "sub", "mul", "div") and len(op.inputs) == 2 and op.outputs and not op.free_reason:
            neutral = ZERO_CONSTANTS if op.name in ("add", "sub") else ONE_CONSTANTS
            consts = [v for v in op.inputs if producer.get(v) is not None and producer[v].name in neutral
                      and values[v].storage not in written]
            others = [v for v in op.inputs if v not in consts]
            if op.name in ("sub", "div") and consts and consts[0] != op.inputs[1]:
                consts = []
            if len(consts) == 1 and len(others) == 1:
                keep, out = values[others[0]], values[op.outputs[0]]
                if keep.meta.shape is not None and keep.meta.shape == out.meta.shape:
                    ops.append(_as_view(op, others[0], values, "folded: adds zero / multiplies by one", moved))
                    changed = True
                    continue
        written.update(values[v].storage for v in op.mutates if v in values)
        ops.append(op)
    if not changed:
        return fg
    _rehome(values, moved)
    return replace(fg, ops=ops, values=values)


_CHAIN_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64"})


@lru_cache(maxsize=1)
def _casts() -> frozenset[str]:
    """The dtype casts: ops that return their input when it already has the dtype (rules/ops.toml)."""
    return frozenset(n for n, f in default_table().ops.items() if f.free_when == "same_dtype")


def fold_convert_chains(fg: FunctionGraph) -> FunctionGraph:
    """A cast of a cast between floating dtypes reads the first cast's input (Inductor's joint-graph
    pattern `pointless_convert`, made for AMP's casts) unless the intermediate is the narrower one
    (`x.half().float()` keeps its rounding): `x.float().to(torch.bfloat16)` of a bfloat16 `x` is `x`
    itself, a view; the first cast stays only for its other readers [SRC torch 2.13
    _inductor/fx_passes/joint_graph.py pointless_convert; M-CPU fixtures/training/autocast.py
    same_weight_twice]."""
    casts = _casts()
    if sum(1 for op in fg.ops if op.name in casts) < 2:
        return fg
    producer = {vid: op for op in fg.ops for vid in op.outputs}
    values = dict(fg.values)
    moved: dict[int, int] = {}
    ops, changed = [], False
    for op in fg.ops:
        first = producer.get(op.inputs[0]) if op.name in casts and op.inputs and op.outputs else None
        if first is not None and not op.free_reason and first.name in casts and not first.free_reason \
                and first.inputs and first.graph == op.graph and first.region == op.region:
            src = first.inputs[0]
            dtypes = (values[src].meta.dtype, values[first.outputs[0]].meta.dtype, values[op.outputs[0]].meta.dtype)
            if all(d in _CHAIN_DTYPES for d in dtypes) and DTYPE_SIZES[dtypes[1]] >= DTYPE_SIZES[dtypes[2]]:
                changed = True
                if dtypes[0] == dtypes[2]:
                    ops.append(_as_view(op, src, values, "folded: a cast back to its input's dtype", moved))
                else:
                    ops.append(replace(op, inputs=(src, *op.inputs[1:])))
                continue
        ops.append(op)
    if not changed:
        return fg
    _rehome(values, moved)
    return replace(fg, ops=ops, values=values)


def share_layout_copies(fg: FunctionGraph) -> FunctionGraph:
    """Two convolutions reading the same input of the graph read one channels-last copy of it: the
    second layout copy (`conv_layout`, compiled mode only) is a view of the first [M-CPU
    fixtures/models/resnet_block.py BasicBlock: x feeds conv1 and the 1x1 shortcut, one copy kernel].
    A tensor a generated kernel computes is written channels-last by that kernel for the first
    convolution; each other convolution reading it gets a copy kernel of its own, which fuses with
    nothing (compiled="alone") [M-CPU torchvision resnet18: the block after a downsample's add feeds
    conv1 and the 1x1 shortcut, 42 kernels; squeezenet1_1: each fire module's squeeze output feeds
    two expand convolutions, 53; scripts/zoo_scoreboard.py]."""
    made_by_kernel = {v for op in fg.ops if op.category in ("pointwise", "reduction") and op.compiled == "generated"
                      and not op.free_reason for v in op.outputs}
    conv_of = {op.inputs[0]: op for op in fg.ops if op.name.startswith("conv") and op.category == "extern"
               and len(op.inputs) > 1}  # a layout copy's output -> the convolution reading it
    made_by = {v: op for op in fg.ops for v in op.outputs}
    first: dict[tuple[int, bool], int] = {}  # (input value, spatial) -> output of its first layout copy
    moved: dict[int, int] = {}
    values = dict(fg.values)
    ops = []
    changed = False
    for op in fg.ops:
        if op.category == "extern" and op.name.startswith("conv") and op.inputs and op.inputs[0] in made_by_kernel:
            # a 1x1 or depthwise convolution that reads a kernel's output as it is (no layout copy: an
            # NHWC-ordered input on cpu) takes that kernel's layout as a layout copy would
            # [M-CPU probes cases12.py: a pooled map read by a 1x1 and a 3x3 head, the 3x3 copy alone]
            first.setdefault((op.inputs[0], False), op.inputs[0])
        if op.name == "conv_layout" and len(op.inputs) == 1 and len(op.outputs) == 1 and not op.free_reason:
            src = op.inputs[0]
            before = made_by.get(src)
            if op.outputs[0] in conv_of and not _dense_spatial(fg, conv_of[op.outputs[0]]) \
                    and before is not None and before.name == "conv_layout" and len(before.inputs) == 1 \
                    and (raw := made_by.get(before.inputs[0])) is not None and raw.name.startswith("conv") \
                    and raw.category == "extern":
                # a 1x1 or depthwise convolution reads the convolution before it as it is: neither layout
                # copy runs (the one after that convolution stays only for its other readers)
                # [M-CPU /tmp probes, torch 2.13: conv 3x3 -> depthwise 7x7, 2x2/2 -> depthwise, 3x3 -> 1x1,
                # depthwise -> 1x1: 4 kernels each; 3x3 -> 3x3: 5; timm convnext_atto 79]
                ops.append(_as_view(op, before.inputs[0], values, "read as the convolution before wrote it", moved))
                changed = True
                continue
            # the layout a kernel writes for a dense kxk convolution is not the one a 1x1 or depthwise
            # one reads, and the other way round (one copy each); an input of the graph is copied once
            spatial = src in made_by_kernel and _dense_spatial(fg, conv_of.get(op.outputs[0]))
            key = (src, spatial)
            if key in first:
                ops.append(_as_view(op, first[key], values, "the same layout copy as before", moved))
                changed = True
                continue
            if (src, not spatial) in first and src in made_by_kernel:
                op = replace(op, compiled="alone")
                changed = True
            first[key] = op.outputs[0]
        ops.append(op)
    if not changed:
        return fg
    _rehome(values, moved)
    return replace(fg, ops=ops, values=values)


def _dense_spatial(fg: FunctionGraph, conv: Op | None) -> bool:
    """Whether a convolution has a kernel wider than 1 and is not depthwise (weight (O, I/g, kh, kw))."""
    if conv is None:
        return False
    w = fg.values.get(conv.inputs[1])
    shape = w.meta.shape if w is not None else None
    return bool(shape and len(shape) >= 3 and shape[1] != 1 and any(k != 1 for k in shape[2:]))


CONV_OPS = frozenset(("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
                      "convolution"))


def _conv_kind(fg: FunctionGraph, conv: Op) -> tuple[str, int] | None:
    """The class Inductor's decide_layout_opt gives a convolution (grouped, small, in_out, default) and
    a figure proportional to its flops; None where a shape is not known."""
    x, w, out = (fg.values.get(v) for v in (conv.inputs[0], conv.inputs[1], conv.outputs[0] if conv.outputs else -1))
    shapes = [v.meta.shape if v is not None else None for v in (x, w, out)]
    if any(s is None or len(s) < 3 or any(d is None for d in s) for s in shapes):
        return None
    xs, ws, os_ = shapes  # weight (O, I/g, k...), read as laid out for transposed ones too, as Inductor does
    kernel = 1
    for d in ws[2:]:
        kernel *= d
    spatial = 1
    for d in os_[2:]:
        spatial *= d
    flops = os_[0] * spatial * ws[0] * ws[1] * kernel
    groups = xs[1] // ws[1] if not conv.name.startswith("conv_transpose") and ws[1] else 1
    if groups > 1 and ws[1] > 1:
        return "grouped", flops
    if ws[0] <= 64 and ws[1] <= 64:
        return "small", flops
    if ws[0] * 2 <= ws[1] and ws[2] > 1:
        return "in_out", flops
    return "default", flops


def _layout_opt(fg: FunctionGraph, ops: list[Op], conf: dict) -> bool:
    """Inductor's decide_layout_opt for an inference graph: no channels-last layout when the graph
    has 300 or more nodes per convolution, or when the flops of its convolutions weighted by the
    measured channels-last speedups of their class exceed their plain flops [SRC torch 2.13
    _inductor/graph.py GraphLowering.decide_layout_opt; rules/targets.toml]. FX nodes: the graph's tensor
    inputs, the output node, and per op its decomposition's nodes (`fx_nodes` in rules/ops.toml)."""
    convs = [op for op in ops if op.category == "extern" and op.name in CONV_OPS and len(op.inputs) >= 2]
    if not convs:
        return True
    used = {v for op in ops for v in op.inputs if fg.values.get(v) is not None and fg.values[v].producer is None}
    facts = default_table().ops
    nodes = len(used) + 1 + sum((f.fx_nodes if (f := facts.get(op.name)) else 1) for op in ops
                                if not op.free_reason and op.only != "eager" and op.name != "conv_layout")
    if nodes >= conf["layout_nodes_per_conv"] * len(convs):
        return False
    mult = conf["layout_flop_multipliers"]
    total = weighted = 0.0
    for conv in convs:
        kind = _conv_kind(fg, conv)
        if kind is not None:
            total += kind[1]
            weighted += kind[1] * mult[kind[0]]
    return weighted <= total


def reduction_splits(c: dict, rin: int | None, rout: int | None, axis: str | None) -> bool:
    """Whether a CUDA reduction of `rin` elements into `rout` outputs splits into two kernels
    (docs/notes/inductor-rules.md B.4)."""
    if not c["split_reductions"] or rin is None or rout is None or rout == 0:
        return False
    rlen = rin // rout
    if rout == 1:
        return rlen > c["split_full_min_len"]
    if axis == "outer":
        return rout < c["split_outer_max_outputs"] and rlen > c["split_outer_min_len"]
    return rout < c["split_inner_max_outputs"] and rlen > c["split_inner_min_len"]


def _plain_layout_graphs(fg: FunctionGraph, conf: dict) -> set[int]:
    """Graphs with a convolution that Inductor keeps in the given layout (decide_layout_opt)."""
    graphs: dict[int, list[Op]] = {}
    for op in fg.ops:
        graphs.setdefault(op.graph, []).append(op)
    return {g for g, ops in graphs.items() if not _layout_opt(fg, ops, conf)}


def row_layouts(fg: FunctionGraph, conf: dict, plain: set[int]) -> FunctionGraph:
    """An inner reduction (layer norm over the last dim) whose full-size loads mostly run across rows
    is an outer one to Inductor, which then splits it and puts its epilogue in a kernel of its own.
    Inductor inlines the pointwise ops before a reduction, so its loads are the tensors those ops
    read (through views and the rescaling a norm's epilogue applies); a load is across rows when the tensor's last dim is not adjacent in memory
    (Value.strided_rows: a transposed view, a result laid out like one); a tie is outer [SRC torch
    2.13 _inductor/ir.py Reduction.num_splits get_read_indices; M-CUDA cudagen: timm vit_tiny's
    first layer norm over the transposed patch embedding, mixer_s16's token-major residual stream].
    Only where reductions split (cuda) and convolutions keep their layout: in a channels-last graph
    compiled strides are not eager's. plain: the graphs whose convolutions keep their layout."""
    if not conf.get("split_reductions") or not any(op.category == "reduction" for op in fg.ops):
        return fg
    conv_graphs = {op.graph for op in fg.ops if op.category == "extern" and op.name in CONV_OPS}
    producer = {v: op for op in fg.ops for v in op.outputs}
    changed = []
    for op in fg.ops:
        if op.category != "reduction" or op.reduce_axis != "inner" or not op.inputs or op.free_reason:
            continue
        x = fg.values.get(op.inputs[0])
        full = x.meta.shape if x is not None else None
        if full is None or None in full:
            continue
        if op.graph in conv_graphs and op.graph not in plain:
            # channels-last: a reduction over the spatial dims of an image (squeeze-excite's mean) runs
            # across rows [M-CUDA cudagen with cuDNN's layout: timm seresnet18]
            if len(full) == 4 and op.reduce_len == full[2] * full[3] and full[1] > 1:
                changed.append(op.oid)
            continue
        inner = outer = 0
        same = op.graph
        # a norm's output is its input rescaled: an inlined epilogue, loaded through
        for v in _inlined_loads(op.inputs[0], producer, lambda _v, p: p.graph == same,
                                lambda p: p.name in ROW_EPILOGUE and p.graph == same):
            val = fg.values.get(v)
            if val is None or not _full_size(val.meta.shape, full):
                continue
            if val.strided_rows:
                outer += 1
            else:
                inner += 1
        if outer and outer >= inner:
            changed.append(op.oid)
    if not changed:
        return fg
    ids = set(changed)
    return replace(fg, ops=[replace(op, reduce_axis="outer") if op.oid in ids else op for op in fg.ops])


def split_group_norms(fg: FunctionGraph, conf: dict, plain: set[int]) -> FunctionGraph:
    """In a channels-last graph (cuda), a group norm over an image is two kernels: its decomposition
    views the input as (N, G, C/G x H x W), a copy for a channels-last tensor, so the statistics are a
    reduction over that copy and the normalization a pointwise kernel over the input as it lies, which
    takes the pointwise ops after it (silu) [M-CUDA cudagen, torch 2.13: F.group_norm of a channels-last
    (1, 32, 8, 8) to (1, 64, 32, 32) tensor, then silu: triton_red/per_fused_..native_group_norm and
    triton_poi_fused_..native_group_norm_silu; diffusers' ResnetBlock2D]. Of an input no convolution
    wrote (a graph input) it is one kernel that stores its output in the convolution's layout, and what
    reads it is another kernel (`realized_norms`, Scheduler.can_fuse) [M-CUDA cudagen: GroupNorm -> silu
    -> conv of the input, triton_per_fused_..native_group_norm + triton_poi_fused_silu in place;
    diffusers' Transformer2DModel norm of its input, one kernel;
    fixtures/ops/cuda_layouts.py input_group_norm_silu_conv]. Statistics over more than 8,192 elements
    a group, more than one channel a group, split in three levels (`layout_norms`, emit_kernels).
    rules/targets.toml `group_norm_layout_split`; plain: the graphs whose convolutions keep their layout."""
    if not conf.get("group_norm_layout_split") or not any(op.name == "group_norm" for op in fg.ops):
        return fg
    conv_graphs = {op.graph for op in fg.ops if op.category == "extern" and op.name in CONV_OPS}
    producer = {v: op for op in fg.ops for v in op.outputs}
    next_oid = max(op.oid for op in fg.ops) + 1
    ops: list[Op] = []
    realized: set[int] = set()
    layout: set[int] = set()
    for op in fg.ops:
        x = fg.values.get(op.inputs[0]) if op.inputs else None
        shape = x.meta.shape if x is not None else None
        image_norm = (op.name == "group_norm" and op.category == "reduction" and not op.free_reason
                      and op.graph in conv_graphs and op.graph not in plain and shape is not None
                      and len(shape) == 4 and None not in shape and shape[2] * shape[3] != 1)
        if image_norm and not _conv_written(op.inputs[0], producer, fg.values):
            if shape[2] * shape[3] > 1:  # type: ignore[index]
                realized.add(op.oid)
            ops.append(op)
            continue
        if not image_norm or len(op.outputs) < 2:
            ops.append(op)
            continue
        hw = shape[2] * shape[3]  # type: ignore[index]
        # more than one channel a group: statistics that split take three levels (emit_kernels); a
        # channel a group is an outer reduction, split in two as any other
        layered = op.reduce_len not in (None, hw)
        if op.reduce_len in (None, shape[1] * hw) and not (  # type: ignore[index]
                layered and reduction_splits(conf, shape[0] * shape[1] * hw, shape[0], op.reduce_axis)):  # type: ignore[index]
            # one group: any order of the sample's elements will do, one kernel, unless its statistics
            # split [M-CUDA cudagen: GroupNorm(1, C) of a channels-last tensor, timm mobilevitv2; split:
            # poolformerv2's first stage, its normalized output a kernel of its own]
            if layered:
                layout.add(op.oid)
            ops.append(op)
            continue
        if layered:
            layout.add(next_oid)
        ops.append(replace(op, oid=next_oid, outputs=op.outputs[1:]))  # the statistics (mean, rstd)
        next_oid += 1
        ops.append(replace(op, name=GROUP_NORM_APPLY, category="pointwise", inputs=op.inputs + op.outputs[1:],
                           outputs=op.outputs[:1], reduce_numel=None, reduce_len=None, reduce_axis=None))
    if realized or layout:
        fg = replace(fg, realized_norms=frozenset(realized), layout_norms=frozenset(layout))
    if len(ops) == len(fg.ops):
        return fg
    values = dict(fg.values)
    for op in ops:
        for v in op.outputs:
            if v in values and values[v].producer != op.oid:
                values[v] = replace(values[v], producer=op.oid)
    return replace(fg, ops=ops, values=values)


def split_scatter_stores(fg: FunctionGraph, conf: dict) -> FunctionGraph:
    """On CUDA a store at indices (scatter, index_add, index_fill, index_copy: rules/ops.toml
    `indirect_store`) is a Triton kernel that fuses with nothing, before or after it, and an out-of-place
    one first copies self into its output, a pointwise kernel that fuses with self's producer [M-CUDA
    cudagen, torch 2.13: fixtures/ops/scatter_sort.py: x.scatter(1, idx, src) * 2 is
    triton_poi_fused_scatter_0 (copy), _1 (the scatter), triton_poi_fused_mul_2; zeros_like(x).scatter(...)
    triton_poi_fused_scatter_zeros_like_0 and _1; y = x + 1; y.index_add_(...) triton_poi_fused_add_0,
    triton_poi_fused_add_index_add_1]. On CPU every generated node between two extern kernels is one C++
    function anyway (kernel_groups) [M-CPU the same fixtures: one cpp kernel each]. rules/targets.toml
    `scatter_store_alone`. An accumulating store (scatter_add, scatter_reduce) is an aten call on CPU after
    the same copy [M-CPU fixtures/ops/scatter_sort.py scatter_add: cpp_fused_scatter_add_0,
    aten::scatter_reduce_]: split on every target where the store is a fallback."""
    table = default_table().ops
    if not any((f := table.get(op.name)) is not None and f.indirect_store for op in fg.ops):
        return fg
    alone = bool(conf.get("scatter_store_alone"))
    next_oid = max(op.oid for op in fg.ops) + 1
    next_vid = max(fg.values) + 1
    next_st = max(v.storage for v in fg.values.values()) + 1
    values = dict(fg.values)
    ops: list[Op] = []
    for op in fg.ops:
        f = table.get(op.name)
        if f is None or not f.indirect_store or op.free_reason or op.category != "pointwise" or not op.inputs \
                or not op.outputs or not (alone or op.compiled == "fallback"):
            ops.append(op)
            continue
        if not f.inplace:  # the copy of self into the output, then the store into that copy
            src = values[op.inputs[0]]
            copy = replace(values[op.outputs[0]], vid=next_vid, storage=next_st, producer=next_oid,
                           contiguous=True, name=None)
            values[next_vid] = copy
            ops.append(replace(op, oid=next_oid, inputs=(src.vid,), outputs=(next_vid,), mutates=(),
                               compiled="generated"))
            op = replace(op, inputs=(next_vid, *op.inputs[1:]))
            next_oid, next_vid, next_st = next_oid + 1, next_vid + 1, next_st + 1
        ops.append(replace(op, compiled="sealed") if op.compiled != "fallback" else op)
    return replace(fg, ops=ops, values=values)


ATTENTION_OPS = frozenset({"scaled_dot_product_attention"})


def copy_attention_views(fg: FunctionGraph, conf: dict) -> FunctionGraph:
    """On CUDA, a query, key or value that is a view of a pointwise value nothing else stores is copied
    by a kernel of its own, the pointwise recomputed in each copy: the fused attention kernel needs its
    inputs laid out, and lowering asks that of each view before anything stores their base
    (`sdpa_constraint`: not an aligned stored tensor, so `require_stride_order`, whose `copy_input` reads
    the view of the unstored value). torchvision's MultiheadAttention: the packed q/k/v projection's
    bias and `.contiguous()` are three copies, not one [SRC torch 2.13 _inductor/lowering.py
    sdpa_constraint, ir.py ExternKernel.require_strides; M-CUDA cudagen: torchvision vit_b_16, 3 copies
    per layer]. Except where lowering stores the base instead: the view's last dim is not a multiple of
    8 and the base's is. rules/targets.toml `attention_view_copies`."""
    if not conf.get("attention_view_copies") or not any(op.name in ATTENTION_OPS for op in fg.ops):
        return fg
    values = fg.values
    readers: dict[int, list[tuple[Op, int]]] = {}
    for op in fg.ops:
        if op.category in PASSIVE or op.free_reason:
            continue
        for i, v in enumerate(op.inputs):
            readers.setdefault(values[v].storage, []).append((op, i))
    producer = {op.oid: op for op in fg.ops}

    def library_made(v: int) -> bool:
        """A cat input read from a library kernel's output or a graph input, as it is."""
        st = values[v].storage if v in values else v
        p = producer.get(values[st].producer) if st in values and values[st].producer is not None else None
        return p is None or _library_call(p)

    def copied(v: int, graph: int) -> bool:
        val = values.get(v)
        if val is None or val.storage == v or val.storage not in values:
            return False  # not a view: stored as it is, or copied as it is (one kernel either way)
        base = values[val.storage]
        p = producer.get(base.producer) if base.producer is not None else None
        if not _generated_pointwise(p) or p.graph != graph or (p.name in ("cat", "stack") and not all(
                map(library_made, p.inputs))):
            # a cat of computed values is stored before it gets here: a ConcatKernel (a reduction's value)
            # or a long expression (has_large_inner_fn: gptj's rotary halves); not modelled here
            return False
        same = (val.contiguous, val.strided_rows) == (base.contiguous, base.strided_rows)
        if val.meta.shape == base.meta.shape and same:
            return False  # the value itself (a same-dtype type_as): lowering sees no view
        rs = readers.get(val.storage, ())
        if not all(r.name in ATTENTION_OPS and i < 3 for r, i in rs):
            return False
        shape, bshape = val.meta.shape, base.meta.shape
        if shape and bshape and isinstance(shape[-1], int) and isinstance(bshape[-1], int) \
                and shape[-1] % 8 and not bshape[-1] % 8:
            return False
        return True

    wanted = {(op.oid, v) for op in fg.ops if op.name in ATTENTION_OPS and op.outputs for v in op.inputs[:3]
              if copied(v, op.graph)}
    if not wanted:
        return fg
    next_oid = max(op.oid for op in fg.ops) + 1
    next_vid = max(values) + 1
    next_st = max(v.storage for v in values.values()) + 1
    values = dict(values)
    ops: list[Op] = []
    made: list[int] = []
    for op in fg.ops:
        if op.name not in ATTENTION_OPS or not op.outputs:
            ops.append(op)
            continue
        kname = attention_kernel(conf, values[op.outputs[0]].meta.dtype)
        copies: dict[int, int] = {}  # the same view given twice (key is value) is copied once
        for v in op.inputs[:3]:
            if v in copies or (op.oid, v) not in wanted:
                continue
            values[next_vid] = replace(values[v], vid=next_vid, storage=next_st, producer=next_oid,
                                       contiguous=True, name=None, strided_rows=False)
            ops.append(Op(next_oid, "clone", "pointwise", op.span, (v,), (next_vid,), aten=(kname, "clone"),
                          graph=op.graph, via=op.via, region=op.region, phase=op.phase))
            copies[v] = next_vid
            next_oid, next_vid, next_st = next_oid + 1, next_vid + 1, next_st + 1
        ops.append(replace(op, inputs=tuple(copies.get(v, v) if i < 3 else v for i, v in enumerate(op.inputs)))
                   if copies else op)
        made.extend(copies.values())
    copy_ops = frozenset(values[v].producer for v in made)
    return replace(fg, ops=ops, values=values, attention_copies=fg.attention_copies | copy_ops)


def _conv_written(vid: int, producer: dict[int, Op], values: dict[int, Value], depth: int = 24) -> bool:
    """Whether a value is a convolution's output, or computed elementwise (or viewed) from one: in a
    channels-last graph it lies channels-last. So does an image that is an (N, H, W, C) tensor's permute
    to (N, C, H, W) (timm's LayerNorm2d, metaformer's stem)."""
    stack, seen = [vid], set()
    while stack and len(seen) < depth:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        p = producer.get(v)
        if p is None:
            continue
        if p.category == "extern" and p.name in CONV_OPS:
            return True
        if p.name == "permute" and p.inputs and _nhwc_to_nchw(values, p.inputs[0], v):
            return True
        if p.category in ("pointwise", "view") and p.inputs:
            stack.extend(p.inputs)
    return False


def _nhwc_to_nchw(values: dict[int, Value], src: int, out: int) -> bool:
    """Whether `out` is 4-D `src`'s last dim moved second: channels-last strides, if `src` is dense
    (H == C leaves the permutation unknown from the shapes alone: not taken)."""
    a, b = values.get(src), values.get(out)
    if a is None or b is None or not a.contiguous or len(a.meta.shape) != 4 or len(b.meta.shape) != 4:
        return False
    n, h, w, c = a.meta.shape
    return tuple(b.meta.shape) == (n, c, h, w) and h != c


def _library_call(op: Op) -> bool:
    """Whether Inductor calls a library for the op (an extern kernel or an aten fallback): its output is
    a buffer of fixed layout, and its inputs are realized."""
    return op.category in ("extern", "fallback") or op.compiled in ("extern", "fallback")


def _generated_pointwise(p: Op | None) -> TypeGuard[Op]:
    """Whether an op is a pointwise op Inductor generates code for (not an aten call, not made free)."""
    return p is not None and p.category == "pointwise" and p.compiled == "generated" and not p.free_reason


def _inlined_loads(start: int, producer: dict[int, Op], inlines: Callable[[int, Op], bool],
                   passes: Callable[[Op], bool] = lambda p: False) -> list[int]:
    """The tensors a kernel loads for value `start` once lowering inlined the generated pointwise ops
    before it that `inlines(value, producer)` accepts, read through identities (a noop, an op made
    free) and the ops `passes` lets through to their first input; at most 64 values are visited."""
    out: list[int] = []
    stack, seen = [start], set()
    while stack and len(seen) < 64:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        p = producer.get(v)
        if _generated_pointwise(p) and inlines(v, p):
            stack.extend(p.inputs)
        elif p is not None and p.inputs and (p.category == "noop" or p.free_reason or passes(p)):
            stack.append(p.inputs[0])
        else:
            out.append(v)
    return out


def _full_size(shape: tuple | None, full: tuple) -> bool:
    """A load that varies along every dim of the reduction's input: its shape, or that shape with
    one dim of another size (a part of a concatenation), not a broadcast (a dim of 1 there)."""
    if shape is None or len(shape) != len(full):
        return False
    differ = [(a, b) for a, b in zip(shape, full) if a != b]
    return len(differ) <= 1 and all(a is not None and a != 1 for a, _ in differ)


def choose_layout(fg: FunctionGraph, conf: dict, off: set[int]) -> FunctionGraph:
    """Where the target decides channels-last per graph (cuda), a graph decided against it runs its
    convolutions in the layout they are given: the copies before them (`conv_layout` of input and
    weight) are views of what they copy, unless the input is not contiguous; the one after is the
    bias add Inductor peels off the convolution, or nothing without a bias [M-CUDA cudagen, torch
    2.13: timm vit_tiny's patch embedding, one convolution, its bias added in the kernel after].
    off: the graphs decided against channels-last."""
    if conf.get("layout_optimization") != "heuristic" or "conv_layout" not in map(_NAME, fg.ops):
        return fg
    made_by = {v: op for op in fg.ops for v in op.outputs}
    conv_inputs = {op.inputs[0] for op in fg.ops if op.category == "extern" and op.name in CONV_OPS and op.inputs}
    values = dict(fg.values)
    ops = []
    changed = False
    moved: dict[int, int] = {}
    # a returned output is copied to the strides eager gives it (Inductor matches user-visible strides)
    returned = {fg.values[v].storage for v in fg.returns if v in fg.values}
    as_written: set[int] = set()  # outputs of convolutions read as cuDNN wrote them
    for op in fg.ops:
        if op.name == "conv_layout" and len(op.inputs) == 1 and not op.free_reason:
            before = op
            src = made_by.get(op.inputs[0])
            from_conv = src is not None and src.category == "extern" and src.name in CONV_OPS
            if op.graph in off:
                if from_conv:
                    if len(src.inputs) < 3:  # no bias: the convolution writes what its readers read
                        op = _as_view(op, op.inputs[0], values, "no channels-last layout in this graph", moved)
                elif values[op.inputs[0]].contiguous:
                    op = _as_view(op, op.inputs[0], values, "no channels-last layout in this graph", moved)
            elif from_conv and len(src.inputs) < 3 and values[op.outputs[0]].storage not in returned:
                # channels-last graph: cuDNN writes a channels-last output for a channels-last input,
                # so a convolution without a bias needs no kernel after it, and one reading it none
                # before [M-CUDA cudagen with cuDNN's layout rule: timm ese_vovnet19b_dw, depthwise
                # then 1x1 convolutions]
                op = _as_view(op, op.inputs[0], values, "written channels-last by cuDNN", moved)
                as_written.add(op.outputs[0])
            elif op.outputs[0] in conv_inputs and op.inputs[0] in as_written:
                op = _as_view(op, op.inputs[0], values, "written channels-last by cuDNN", moved)
            changed = changed or op is not before
        ops.append(op)
    if not changed:
        return fg
    _rehome(values, moved)
    return replace(fg, ops=ops, values=values)


def functionalize_view_writes(fg: FunctionGraph) -> FunctionGraph:
    """A write into part of a tensor the graph made (`m = x.new_zeros(...); m[a:b, c:d] = k`) is, once
    functionalized, a pointwise op over the whole tensor that reads its previous value (slice_scatter),
    so the writes chain and fuse with each other and with what reads the result, where eager launches
    one kernel per write [SRC torch 2.13 torch/_functorch functionalization, _inductor/lowering.py
    slice_scatter; M-CUDA cudagen: torchvision swin_t's shifted-window mask, nine writes into a zeros map
    in one or two kernels; fixtures/ops/view_writes.py]. Each such op writes the whole tensor (a new
    value of the same storage) and reads the one before."""
    made: dict[int, tuple[int, int]] = {}  # storage a generated op made -> (its latest whole value, graph)
    values, ops, changed = fg.values, [], False
    next_vid = None
    for op in fg.ops:
        out = op.outputs[0] if len(op.outputs) == 1 else None
        if out is not None and op.mutates == (out,) and op.category == "pointwise" and op.compiled == "generated" \
                and not op.free_reason and (st := values[out].storage) in made and made[st][0] != out \
                and made[st][1] == op.graph:
            whole = values[made[st][0]]
            if whole.meta.shape is not None:
                if next_vid is None:
                    values, next_vid = dict(values), max(values) + 1
                nv = replace(whole, vid=next_vid, producer=op.oid, name=None)
                values[next_vid] = nv
                op = replace(op, inputs=(*op.inputs, made[st][0]), outputs=(next_vid,), mutates=(next_vid,))
                made[st] = (next_vid, op.graph)
                next_vid += 1
                changed = True
        elif op.category == "pointwise" and op.compiled == "generated" and not op.mutates and out is not None \
                and not any(values[v].storage == values[out].storage for v in op.inputs if v in values):
            made[values[out].storage] = (out, op.graph)
        ops.append(op)
    return replace(fg, ops=ops, values=values) if changed else fg


def prepared(fg: FunctionGraph, conf: dict) -> FunctionGraph:
    """The graph Inductor schedules: without eager-only ops (torch.nn catalogue), constants folded,
    layout copies shared (C++). Each step returns its input when it changes nothing."""
    if any(op.only == "eager" for op in fg.ops):
        fg = replace(fg, ops=[op for op in fg.ops if op.only != "eager"])
    fg = fold_constants(fg)
    fg = fold_convert_chains(fg)
    fg = functionalize_view_writes(fg)
    convs = conf.get("layout_optimization") == "heuristic" and any(op.name in CONV_OPS for op in fg.ops)
    plain = _plain_layout_graphs(fg, conf) if convs else set()  # decided once for both passes below
    if convs:
        conv_graphs = {op.graph for op in fg.ops if op.category == "extern" and op.name in CONV_OPS}
        fg = replace(fg, channels_last_graphs=frozenset(conv_graphs - plain))
    fg = choose_layout(fg, conf, plain)
    fg = row_layouts(fg, conf, plain)
    fg = split_group_norms(fg, conf, plain)
    fg = split_scatter_stores(fg, conf)
    fg = copy_attention_views(fg, conf)
    if conf.get("kernel_groups"):
        fg = share_layout_copies(fg)
    return fg


@dataclass(frozen=True)
class MaskCopy:
    """A copy of an attention mask lowering makes before the call: the nodes it computes again, the
    storages it reads from outside them and the one it writes."""

    nodes: list[int]
    reads: tuple[int, ...]
    writes: tuple[int, ...]


class Scheduler:
    def __init__(self, fg: FunctionGraph, target: str, conf: dict, ready: bool = False,
                 stmap: dict[int, int] | None = None) -> None:
        """ready: fg is already `prepared`; stmap: value id -> storage for fg.values, when the caller
        has it (module_kernels schedules thousands of segments of one graph)."""
        given = fg.values
        if not ready:
            fg = prepared(fg, conf)
        self.fg = fg
        self.target = target
        self.conf = conf
        self.ops = {op.oid: op for op in fg.ops}
        self._gids = itertools.count()
        if stmap is None or fg.values is not given:  # preparing made values of its own
            stmap = {vid: v.storage for vid, v in fg.values.items()}
        self._stmap = stmap  # value id -> storage
        # per op, the storages it reads and writes: every pass below walks these, millions of times
        # (map with two iterables is stmap.get(v, v) without a Python frame per value)
        get = stmap.get
        self.ins = {op.oid: tuple(map(get, op.inputs, op.inputs)) for op in fg.ops}
        self.outs = {op.oid: tuple(map(get, op.outputs, op.outputs)) if not op.mutates else
                     tuple(map(get, op.outputs + op.mutates, op.outputs + op.mutates)) for op in fg.ops}
        # ops that read and write no memory of their own (views, allocations, no-ops, ops made free)
        self.passive = {op.oid for op in fg.ops if op.category in PASSIVE or op.free_reason}
        self.single_graph = all(op.graph == 0 for op in fg.ops)
        # per value, memos of the layout vote (_rows, _stored) and of how many ops read it
        self._rows_memo: dict[int, bool] = {}
        self._stored_memo: dict[int, bool] = {}
        self._uses_memo: dict[int, int] | None = None
        self._users_memo: dict[int, list[Op]] | None = None
        self._read_key_memo: dict[int, int | tuple[int, int]] = {}
        self._stored_primed = False
        self._load_count_memo: dict[int, int] = {}
        self.graph_nodes: dict[int, Node] = {}  # the nodes of the graph being scheduled
        # a ConcatKernel's inputs after the first that it copies (a kernel each): cat oid -> input values
        self.concat_copies: dict[int, list[int]] = {}
        self.concats: set[int] = set()  # cats lowered as ConcatKernels in the graph being scheduled (concat_writers)
        self._orders: dict[int, int] = {}  # node -> its place among the scheduler nodes (_scheduler_orders)
        self._any_index_reads = False  # pointwise siblings fuse on a read of a buffer at any index (_share_reads)
        # attention the pattern matcher made from a masked softmax: its oid -> (the mask add, the mask's node)
        self.attention_masks: dict[int, tuple[int, int]] = {}
        self.mask_copies: dict[int, MaskCopy] = {}  # attention oid -> the mask's copy before it
        # storages the function returns, and its inputs' storages (the same for every graph)
        self.returned = {stmap.get(v, v) for v in fg.returns}
        self.input_storages = {stmap.get(v, v) for v in fg.inputs}

    def _st(self, vid: int) -> int:
        return self._stmap.get(vid, vid)

    # ------------------------------------------------------------------ dataflow
    def dataflow(self, ops: list[Op]) -> tuple[dict[int, set[int]], dict[int, int]]:
        """deps[oid] = compute ops (any graph) whose writes it reads; writer[vid] = last compute op writing it."""
        last: dict[int, int] = {}  # storage -> oid of last compute writer
        deps: dict[int, set[int]] = {}
        ins, outs, passive, get = self.ins, self.outs, self.passive, last.get
        for op in ops:
            oid = op.oid
            d = set(map(get, ins[oid]))
            if op.category in ("extern", "fallback"):
                for m in op.mutates:  # a call writing into a view (mm `out=` a slice) keeps the rest of the buffer
                    if (st := self._st(m)) != m and (w := get(st)) is not None:
                        d.add(w)
            d.discard(None)
            deps[oid] = d
            if oid in passive or op.category == "sync":
                continue
            for st in outs[oid]:
                last[st] = oid
        return deps, last

    def live_ops(self, ops: list[Op], deps: dict[int, set[int]], last: dict[int, int]) -> set[int]:
        """Dead-code elimination: keep ops whose results reach a return, a later graph, a sync or a mutated input."""
        live: set[int] = set()
        roots: set[int] = set()
        for vid in self.fg.returns:
            w = last.get(self._st(vid))
            if w is not None:
                roots.add(w)
        inputs = {self.fg.values[v].storage for v in self.fg.inputs if v in self.fg.values}
        for op in ops:
            if op.category == "sync":
                roots |= deps[op.oid]
            if op.mutates and any(self._st(m) in inputs for m in op.mutates):
                roots.add(op.oid)
            if op.category == "unknown":
                roots |= deps[op.oid]
            if op.opaque:  # a custom op's body runs whole when the op runs
                roots.add(op.oid)
        # values crossing a graph break are outputs of the earlier graph
        for op in ops:
            for d in deps[op.oid]:
                if self.ops[d].graph != op.graph:
                    roots.add(d)
        # an in-place op on a live buffer keeps the buffer's earlier writers alive through deps
        stack = list(roots)
        while stack:
            o = stack.pop()
            if o in live:
                continue
            live.add(o)
            stack.extend(deps.get(o, ()))
            # later in-place writers of the same storage are part of its final value
        written: set[int] | None = None  # storages the live ops write, kept up to date as live grows
        for op in ops:
            if op.mutates and op.oid not in live:
                if written is None:
                    written = {self._st(v) for o in live for v in self.ops[o].outputs}
                if any(self._st(m) in written for m in op.mutates):
                    stack = [op.oid]
                    while stack:
                        o = stack.pop()
                        if o not in live:
                            live.add(o)
                            written.update(self._st(v) for v in self.ops[o].outputs)
                            stack.extend(deps.get(o, ()))
        return live

    # ------------------------------------------------------------------ nodes
    def node_for(self, op: Op, deps: set[int]) -> Node | None:
        if op.category in ("view", "alloc", "noop", "sync", "unknown") or op.free_reason:
            return None
        if op.name == "cumsum" and op.inputs and (src := self._producers().get(self._view_base(op.inputs[0])[0])) \
                is not None and src.name in FILLS:
            # a running sum of a constant fill is an arange times the fill (pointless_cumsum_replacement):
            # pointwise [SRC torch 2.13 _inductor/fx_passes/post_grad.py; M-CUDA cudagen: transformers
            # opt's positions, torch.cumsum(torch.ones(B, T), dim=1), computed in the embedding's kernel]
            return Node(op, "pw", _numel(self.fg, op.outputs[0]) if op.outputs else None, deps=deps)
        comp = op.compiled
        if op.category == "extern" and comp != "generated":
            return Node(op, "extern" if comp == "extern" else "fallback", None, deps=deps)
        if op.category == "fallback" or comp == "fallback":
            return Node(op, "fallback", None, deps=deps)
        out_n = _numel(self.fg, op.outputs[0]) if op.outputs else None
        if op.category == "reduction" and (f := default_table().ops.get(op.name)) is not None and f.shape == "sort" \
                and not (op.reduce_len and op.reduce_len <= self.conf.get("sort_persistent_max", 0)):
            return Node(op, "fallback", None, deps=deps)  # a long row: the aten sort (Sort.create gives up)
        if op.category == "reduction":
            in_n = _numel(self.fg, op.inputs[0]) if op.inputs else None
            rout = None
            if op.reduce_len and in_n:
                rout = in_n // op.reduce_len
            if op.name in ("_softmax", "_log_softmax", "layer_norm", "rms_norm"):
                # row statistics + a full-size epilogue in one kernel
                return Node(op, "red", in_n, rout, deps=deps)
            if op.reduce_len is not None and op.reduce_len < UNROLL_REDUCTIONS and (rout or out_n) != 1:
                # a reduction of fewer than 8 elements is a pointwise node over its outputs
                # [SRC torch 2.13 _inductor/ir.py Reduction.create, config.unroll_reductions_threshold;
                # M-CUDA cudagen: timm seresnet18's squeeze of a 2x2 map after a batch norm read twice]
                return Node(op, "pw", out_n, deps=deps)
            return Node(op, "red", in_n, rout if rout is not None else out_n, deps=deps)
        return Node(op, "pw", out_n, deps=deps)

    # ------------------------------------------------------------------ the schedule
    def split(self, g: Group) -> bool:
        """Whether a CUDA reduction group splits into two kernels (docs/notes/inductor-rules.md B.4)."""
        if g.red is None or any(self.ops[o].name in ("argmax", "argmin") for o in g.nodes):
            return False
        return self._splits(g.red[0], g.red[1], g.red_axis)

    def _splits(self, rin: int | None, rout: int | None, axis: str | None) -> bool:
        return reduction_splits(self.conf, rin, rout, axis)

    def realized(self, g: Group) -> int:
        """Scheduler nodes in a group: lowering inlines single-use pointwise ops, so only reductions
        and values read more than once count towards max_fusion_size (100 chained ops: 1 kernel)."""
        return g.weight  # kept up to date as nodes join (see _join)

    def _weight(self, o: int) -> int:
        return 1 if self.ops[o].category == "reduction" or len(self.users.get(o, ())) > 1 else 0

    def _inlined_into(self, n: Node, numel: int) -> bool:
        """Whether pointwise node `n` has one reader, a pointwise op of `numel` elements."""
        users = self.users.get(n.op.oid, ())
        if len(users) != 1:
            return False
        u = self.ops.get(next(iter(users)))  # -1: read outside the graph
        return u is not None and u.category == "pointwise" and bool(u.outputs) \
            and _numel(self.fg, u.outputs[0]) == numel

    def inlinable(self, g: Group, n: Node) -> bool:
        """A pointwise group used only by `n` is inlined into it, whatever its size (broadcast operands),
        unless it loads more than 8 buffers or is a long expression loading more than one (more than 30
        ops, has_large_inner_fn): lowering then stores it (has_exceeded_max_reads, realize_hint) and a
        consumer of another size reads it from memory [SRC torch 2.13 _inductor/graph.py run_node,
        config.realize_acc_reads_threshold, realize_opcount_threshold, ir.py StorageBox.realize_hint;
        M-CUDA cudagen: timm test_resnet's last residual add (two batch norms) before the squeeze of its
        2x2 map; transformers glm and nemotron, the partial rotary k (a cat) before repeat_kv's copy]."""
        if g.red is not None or not all(self.users.get(o, set()) <= set(g.nodes) | {n.op.oid} for o in g.nodes):
            return False
        if not self.concats.isdisjoint(g.nodes):
            return False  # a ConcatKernel's output is stored, never inlined (concat_writers)
        if not self.conf.get("stored_values_split"):
            return True
        loads = self.loads(g)
        if loads > REALIZE_ACC_READS:
            return False
        if loads > 1 and self._inner_ops(g.nodes, self.graph_nodes) > REALIZE_OPS:
            return False  # a long expression is stored too (has_large_inner_fn)
        # a value an activation reads twice in its decomposition (silu: x * sigmoid(x)) has two users
        # in the FX graph: loading more than 4 buffers, it is stored (mark_reuse) [M-CUDA cudagen: timm
        # test_efficientnet's head, batch norm then silu then the squeeze of a 2x2 map: 2 kernels]
        return not (loads > REALIZE_READS and any(self.ops[o].name in SELF_REUSE for o in g.nodes))

    def loads(self, g: Group) -> int:
        """Loads at a varying index that a pointwise group makes (what Inductor's realize_hint counts):
        its inputs from outside it, less one-element ones; the bias a convolution's layout kernel adds;
        a pooling window's several loads of its input."""
        inside = {st for o in g.nodes for st in self.outs[o]}
        loads: set[int] = set()
        extra = 0
        producer = self._producers()
        peeled = self.conf.get("conv_bias_peeled", False)
        for o in g.nodes:
            op = self.ops[o]
            for v, st in zip(op.inputs, self.ins[o]):
                if st not in inside and _numel(self.fg, v) != 1:
                    loads.add(st)
            if op.name == "conv_layout" and peeled and op.inputs and (src := producer.get(op.inputs[0])) is not None \
                    and src.name in CONV_OPS and len(src.inputs) > 2:
                extra += 1  # the bias Inductor peeled off the convolution
            elif "pool" in op.name:
                extra += 1  # a pooling window loads its input at several indices
        return len(loads) + extra

    def _tiled(self, g: Group, n: Node) -> bool:
        """Whether a pointwise group feeding reduction `n` is a tiled (2-D) kernel, which a split reduction
        does not take. Inductor lays a stored pointwise value out by a vote of its loads (each full-size
        load for its own order; a tie: row-major) and tiles a kernel's loops at the contiguous dim of a
        load laid out the other way; the first kernel of a split reduction runs over loops split another
        way [SRC torch 2.13 _inductor/ir.py ComputedBuffer.get_fill_order, scheduler.py pick_loop_order,
        codegen/simd.py candidate_tilings and can_fuse (config.triton.tiling_prevents_reduction_fusion);
        M-CUDA cudagen: timm mixer_s16, the residual add of the channel MLP's output to the token-major
        stream is a kernel of its own before the next (split) layer norm; fixtures/ops/cuda_layouts.py
        token_mixer, the same add fused into an unsplit one]. Channels-last graphs are left out: their
        compiled layouts are not eager's."""
        if n.op.graph in self.fg.channels_last_graphs or not n.op.inputs:
            return False
        fed = self.fg.values.get(n.op.inputs[0])
        if fed is None or fed.meta.shape is None or fed.producer is None or fed.producer not in g.nodes:
            return False
        votes = {self._rows(v) for v in self._loads_of(fed.vid) if self._full(v, fed.meta.shape)}
        return len(votes) == 2

    def _full(self, vid: int, shape: tuple) -> bool:
        """Whether a value has the given shape (a full-size load, not a broadcast one)."""
        v = self.fg.values.get(vid)
        return v is not None and v.meta.shape == shape

    def _loads_of(self, vid: int) -> list[int]:
        """The tensors a pointwise value's kernel loads once lowering inlined the pointwise ops before it
        that it does not store (a value read again with more than 4 loads is stored: mark_reuse)."""
        return _inlined_loads(vid, self._producers(), lambda v, _p: v == vid or not self._stored(v))

    def _stored(self, vid: int) -> bool:
        """Whether lowering stores a pointwise value: read more than once, with more than 4 loads."""
        memo = self._stored_memo
        r = memo.get(vid)
        if r is None:
            memo[vid] = False  # a cycle's guess
            r = memo[vid] = self._value_uses().get(vid, 0) > 1 and self._load_count(vid) > REALIZE_READS
        return r

    def _load_count(self, vid: int) -> int:
        """Buffers a pointwise value's kernel loads: its loads, through views of values lowering inlines,
        and a linear's bias, which the pointwise kernel after its mm adds (addmm_unfuse_bias)."""
        memo = self._load_count_memo
        if vid in memo:
            return memo[vid]
        memo[vid] = 1  # a cycle's guess
        n = 0
        for v in self._loads_of(vid):
            base, p = self._view_base(v)
            if base != v and _generated_pointwise(p) and not self._stored(base):
                n += self._load_count(base)
            elif p is not None and p.name in ("linear", "addmm") and len(p.inputs) == 3 and self.unfuses_bias(p):
                n += 2
            else:
                n += 1
        memo[vid] = n
        return n

    def _view_base(self, vid: int) -> tuple[int, Op | None]:
        """The value a tensor is a view of (itself when no view made it), and that value's producer."""
        producer = self._producers()
        base, p = vid, producer.get(vid)
        while p is not None and p.category == "view" and p.inputs:
            base = p.inputs[0]
            p = producer.get(base)
        return base, p

    def _rows(self, vid: int) -> bool:
        """Whether a value lies with its last dim not adjacent in memory: a stored pointwise value by the
        vote of its loads, anything else as eager lays it out."""
        memo = self._rows_memo
        r = memo.get(vid)
        if r is None:
            memo[vid] = val_rows = self.fg.values[vid].strided_rows  # a cycle's guess
            p = self._producers().get(vid)
            if _generated_pointwise(p):
                shape = self.fg.values[vid].meta.shape
                votes = [self._rows(v) for v in self._loads_of(vid) if v != vid and self._full(v, shape)]
                val_rows = votes.count(True) > votes.count(False)
            r = memo[vid] = val_rows
        return r

    def _value_uses(self) -> dict[int, int]:
        uses = self._uses_memo
        if uses is None:
            uses = self._uses_memo = {}
            for op in self.fg.ops:
                for v in set(op.inputs).difference(op.outputs):  # an in-place op does not read its own result
                    uses[v] = uses.get(v, 0) + 1
        return uses

    def unfuses_bias(self, op: Op) -> bool:
        """Whether Inductor makes a linear's addmm an mm whose bias its users' kernel adds: only on a target
        that does and when every use of the result, through views, is an op torch tags pointwise (a cat,
        a reduction, a graph output keep the addmm) [SRC torch/_inductor/fx_passes/post_grad.py
        should_prefer_unfused_addmm, torch/_inductor/utils.py is_pointwise_use]."""
        if not self.conf.get("addmm_unfuse_bias"):
            return False
        if op.name not in ("linear", "addmm") or len(op.inputs) != 3:
            return True  # an mm and the add after it that the joint graph made one addmm
        bias = self.fg.values[op.inputs[2 if op.name == "linear" else 0]]
        if bias.meta.dtype in self.conf.get("addmm_fused_dtypes", ()):
            return False
        return self.pointwise_uses(op)

    def pointwise_uses(self, op: Op, also: tuple[str, ...] = ()) -> bool:
        """Whether every use of an op's result, through views, is an op torch tags pointwise (rules/
        pointwise_use) or one of `also`, in the op's graph and not returned [SRC torch 2.13
        _inductor/utils.py is_pointwise_use]."""
        users = self._users()
        table = default_table()
        todo, seen = list(op.outputs), set()
        while todo:
            v = todo.pop()
            if v in seen:
                continue
            seen.add(v)
            if self._st(v) in self.returned:
                return False
            for u in users.get(v, ()):
                if u.graph != op.graph:
                    return False  # an output of the graph
                if u.category in PASSIVE or u.free_reason:
                    todo.extend(u.outputs)
                elif u.name not in also and ((f := table.ops.get(u.name)) is None or not f.pointwise_use):
                    return False
        return True

    def _users(self) -> dict[int, list[Op]]:
        """Per value, the ops reading it."""
        users = self._users_memo
        if users is None:
            users = self._users_memo = {}
            for o in self.fg.ops:
                for v in set(o.inputs):
                    users.setdefault(v, []).append(o)
        return users

    def _read_twice(self, vid: int) -> bool:
        """Whether a value, or a view of it, has more than one reader (lowering's mark_reuse sees the
        readers of each view)."""
        users = self._users()
        todo = [vid]
        while todo:
            us = users.get(todo.pop(), ())
            if len(us) > 1:
                return True
            todo.extend(v for u in us if u.category == "view" for v in u.outputs)
        return False

    def _producers(self) -> dict[int, Op]:
        producer = getattr(self, "_producer_cache", None)  # once per function
        if producer is None:
            producer = self._producer_cache = {vid: op for op in self.fg.ops for vid in op.outputs}
        return producer

    def can_fuse(self, g: Group, n: Node, horizontal: bool = False) -> bool:
        if g.kind != "fused" or n.kind not in ("pw", "red") or g.sealed or n.op.compiled == "sealed":
            return False
        if self.realized(g) >= MAX_FUSION_SIZE:
            return False
        if g.red is None and self.conf.get("stored_values_split") \
                and (f := default_table().ops.get(n.op.name)) is not None and f.realize_input and self.loads(g) > 1:
            return False  # a window op realizes an input that loads several buffers (realize_hint)
        if g.red is None:
            if n.kind == "red" and self.conf.get("tiling_prevents_reduction_fusion") \
                    and self._splits(n.numel, n.rout, n.op.reduce_axis) and self._tiled(g, n):
                return False
            if n.kind == "red" and self.conf.get("stored_values_split") and n.op.name not in ("argmax", "argmin") \
                    and len(self.users.get(g.nodes[-1], ())) > 1 and self._splits(n.numel, n.rout, n.op.reduce_axis) \
                    and self.loads(g) > REALIZE_READS:
                # read again elsewhere and loading more than 4 buffers, the producer is realized
                # (mark_reuse) and computed by a kernel of its own before a split reduction
                # [M-CUDA cudagen with cuDNN's layout: timm seresnet18's batch norm before the squeeze]
                return False
            if g.numel is None or n.numel is None or g.numel == n.numel:
                return True
            # a smaller pointwise producer used only here is inlined (broadcast, arange, constants)
            return not horizontal and self.inlinable(g, n)
        rin, rout = g.red
        split = self.split(g)
        if n.op.name in GATHER_EPILOGUES and not horizontal:
            if self.conf.get("gather_epilogue_fusion"):
                return True  # rows picked out of a reduction's output (x[:, [-1]], nll_loss) [M-CPU fixtures/models/gpt.py]
            # Triton: a load at gathered indices of what the kernel reduces waits for all of it; a load
            # of another tensor at indices the reduction gives (masked_scatter's cumsum) does not, when
            # it has the reduction's size or its rows' (the gather of a mixture's tokens by the sorted
            # expert ids is 2,048 elements after a sort of 32: a kernel of its own in cudagen)
            producer = self._producers()
            src = producer.get(n.op.inputs[0]) if n.op.inputs else None
            return (src is None or src.oid not in g.nodes) and (n.numel is None or rin is None or n.numel in (rin, rout))
        if n.kind == "pw":
            if n.op.name == GROUP_NORM_APPLY:
                return False
            if n.op.reduce_axis == "window" and n.op.reduce_len != 1 and self.conf.get("stored_values_split") \
                    and not n.deps.isdisjoint(g.nodes):
                # a pooling window loads what the reduction's kernel writes at other indices than it
                # writes them: a kernel of its own [M-CUDA cudagen: timm poolformerv2's GroupNorm(1, C)
                # of an 8 x 8 map, then avg_pool2d(3, 1, 1): triton_red_..native_group_norm, then
                # triton_poi_fused_avg_pool2d]
                return False
            if self.fg.realized_norms and n.op.name != "conv_layout" and not self.fg.realized_norms.isdisjoint(n.deps) \
                    and not self.fg.realized_norms.isdisjoint(g.nodes):
                # the group norm stores its output in the layout a convolution wants; what reads it is
                # another kernel (split_group_norms)
                return False
            if n.numel is None or rin is None:
                return not split
            if n.numel == rout:
                return True
            # a split norm's full-size epilogue is a pointwise kernel of its own: it takes the
            # full-size pointwise ops after it [M-CUDA cudagen: fixtures/ops/cuda_layouts.py token_norms]
            if n.numel == rin:
                return not split or any(self.ops[o].name in ROW_EPILOGUE for o in g.nodes)
            # a smaller pointwise value only a full-size pointwise op reads is inlined into that reader
            # (rotate_half's -x2 into its cat), so it goes where the reader goes: into a normed query's
            # kernel with the rotary embedding [M-CUDA cudagen: fixtures/ops/qk_norm_rope.py]
            return not split and not horizontal and self._inlined_into(n, rin)
        # reduction after reduction: never into a split one, whose kernels end with its second level,
        # unless it has a full-size epilogue (a norm's), a pointwise kernel that a reduction over the
        # norm's output then joins [M-CUDA cudagen: timm mixer_s16's last layer norm (split) and the
        # mean over tokens after it, triton_per_fused_mean_native_layer_norm]
        if split:
            return not horizontal and n.numel == rin and any(self.ops[o].name in ROW_EPILOGUE for o in g.nodes) \
                and not self._splits(n.numel, n.rout, n.op.reduce_axis) and n.op.name not in ("argmax", "argmin")
        if rin is None or n.numel is None:
            return True
        if n.numel == rin and n.rout == rout:
            return True
        if horizontal and self.conf["mixed_reduction_fusion"] and n.numel == rin:
            return True
        return False

    def schedule(self) -> list[Kernel]:
        ops = self.fg.ops
        deps, last = self.dataflow(ops)
        live = self.live_ops(ops, deps, last)
        kernels: list[Kernel] = []
        graphs = sorted({op.graph for op in ops})
        by_graph: dict[int, list[Op]] = {gi: [] for gi in graphs}  # one pass, not one per graph
        for op in ops:
            if op.oid in live:
                by_graph[op.graph].append(op)
        for gi in graphs:
            kernels.extend(self.schedule_graph(by_graph[gi], deps, gi))
        return kernels

    def _read_index(self) -> tuple[dict[int, int], dict[int, list[tuple[int, int, bool]]]]:
        """Position of each op, and per storage the (position, graph, is_sync) of the ops reading it.

        Lets the per-graph passes below look only at the stretch of the function where a graph's ops
        lie, plus these summaries, instead of at every op for every graph (which made a function with
        thousands of graph breaks, such as a loop around .item(), quadratic)."""
        cached = getattr(self, "_read_index_cache", None)
        if cached is not None:
            return cached
        pos: dict[int, int] = {}
        reads: dict[int, list[tuple[int, int, bool]]] = {}
        passive = self.passive
        for i, op in enumerate(self.fg.ops):
            pos[op.oid] = i
            if op.oid in passive:
                continue
            entry = (i, op.graph, op.category == "sync")
            for st in self.ins[op.oid]:
                reads.setdefault(st, []).append(entry)
        self._read_index_cache = (pos, reads)
        return pos, reads

    def _window(self, nodes: dict[int, Node]) -> tuple[int, int]:
        """Positions of a graph's first and last node: nodes are kept in program order."""
        if not nodes:
            return 0, -1
        pos, _ = self._read_index()
        return pos[next(iter(nodes))], pos[next(reversed(nodes))]

    def schedule_graph(self, ops: list[Op], deps: dict[int, set[int]], gi: int) -> list[Kernel]:
        nodes: dict[int, Node] = {}
        passive, node_for = self.passive, self.node_for
        for op in ops:
            if op.oid in passive:
                continue
            # a node's deps are never changed in place (rewrite_attention assigns new ones): shared
            n = node_for(op, deps[op.oid] if self.single_graph else {d for d in deps[op.oid] if self.ops[d].graph == gi})
            if n is not None:
                nodes[op.oid] = n
        # consumers, for pattern rewrites
        users: dict[int, list[int]] = {o: [] for o in nodes}
        for o, n in nodes.items():
            for d in n.deps:
                if d in users:
                    users[d].append(o)
        self.rewrite_addmm(nodes, users)
        self.rewrite_attention(nodes, users)
        self.direct_attention_masks(nodes)
        self.rewrite_concat(nodes)
        # the cat's pointwise-use rule and the recompute rule below were measured on graphs without
        # convolutions only; the shared-input rule holds on both
        has_conv = any(n.op.name in CONV_OPS for n in nodes.values())
        self._any_index_reads = has_conv  # see _share_reads
        conv_free = bool(self.conf.get("concat_kernel_shared_inputs") or self.conf.get("recompute_cheap_reuse")) \
            and not has_conv
        if self.conf.get("concat_kernel"):
            self.concat_writers(nodes)
        elif self.conf.get("concat_kernel_shared_inputs"):
            self.concat_writers(nodes, self._shared_input_cats(nodes, uses=conv_free))
            self.concat_layouts(nodes)
        self.users = self.external_users(nodes, ops, gi)
        self.graph_nodes = nodes
        group_of: dict[int, int] = {}
        groups: dict[int, Group] = {}

        # ancestors of every node as a bit set over node positions: "is there a path from this group to
        # that node" is then one AND, where a walk over the graph per fusion check was quadratic
        bit = {o: 1 << i for i, o in enumerate(nodes)}
        rdeps = self._node_deps(nodes, deps, gi)
        anc: dict[int, int] = {}
        # one pass in node order: every dependency is an earlier op (dataflow follows program order,
        # _node_deps and rewrite_attention only gather deps of earlier ops)
        for o in nodes:
            m = 0
            for d in rdeps[o]:
                m |= bit[d] | anc[d]
            anc[o] = m

        generator_free = bool(self.conf.get("kernel_groups"))
        for oid, n in nodes.items():
            if n.absorbed_into is not None:
                continue
            if n.kind in ("extern", "fallback"):
                g = Group(next(self._gids), [oid], n.kind, weight=self._weight(oid), mask=bit[oid])
                groups[g.gid] = g
                group_of[oid] = g.gid
                continue
            cand = []
            for d in sorted(n.deps) if n.op.compiled not in ("alone", "sealed") else ():
                gd = group_of.get(d)
                if gd is not None and groups[gd].kind == "fused" and gd not in cand:
                    cand.append(gd)
            merged: Group | None = None
            for gd in cand:
                g = groups[gd]
                if not self.can_fuse(g, n):
                    continue
                if generator_free and len(cand) > 1 and self._generator(g, nodes):
                    # values made from nothing (arange, constants) are recomputed in each reader, never
                    # stored: a reader that waits on other inputs does not hold back the generator's
                    # other readers (C++ kernel groups keep program order) [M-CPU transformers qwen3]
                    continue
                mm = g.mask | (merged.mask if merged else 0)
                # n's other inputs must not depend on the group (the kernel would wait on itself)
                if any((bit[d] | anc[d]) & mm for d in rdeps[oid] if not bit[d] & mm):
                    continue
                if merged is None:
                    merged = g
                else:
                    merged.nodes.extend(g.nodes)
                    merged.nodes.sort()
                    merged.weight += g.weight
                    merged.mask |= g.mask
                    for o in g.nodes:
                        group_of[o] = merged.gid
                    self._merge_meta(merged, g)
                    del groups[g.gid]
            if merged is None:
                merged = Group(next(self._gids), [], "fused")
                groups[merged.gid] = merged
            merged.nodes.append(oid)
            merged.sealed = n.op.compiled == "sealed"
            merged.weight += self._weight(oid)
            merged.mask |= bit[oid]
            group_of[oid] = merged.gid
            if n.kind == "pw" and merged.red is None and n.numel is not None and merged.numel != n.numel:
                merged.numel = n.numel
            self._add_node(merged, n)
        if self.conf.get("recompute_cheap_reuse") and (conv_free or self.fg.attention_copies):
            self._recompute_cheap(groups, nodes, group_of, only=None if conv_free else self.fg.attention_copies)
        if self.attention_masks:
            self.copy_attention_masks(groups, nodes, group_of)
        if self.conf.get("epilogue_into_larger_copy"):
            self.inline_epilogue_tails(groups, nodes, group_of, bit)
        if self.conf.get("kernel_groups"):
            position = self._kernel_groups(groups, nodes, group_of, ops, deps)
            return self.emit_kernels(groups, nodes, group_of, ops, gi, position)
        # horizontal fusion: siblings reading a common buffer, no path between them
        group_reads: dict[int, set] = {}  # gid -> what its nodes read (_read_key; kept up to date on merges)
        shared_only = self.conf["horizontal_needs_shared_input"]
        readers: dict = {}  # read key -> gids of fused groups reading it (grows on merges)
        if shared_only:
            for g in groups.values():
                if g.kind == "fused" and not g.sealed:
                    for st in self._group_read_keys(g, nodes, group_reads):
                        readers.setdefault(st, set()).add(g.gid)
        dep_reach: dict[int, int] = {}  # gid -> what the group's nodes' outside dependencies reach (bit set)
        order = self._orders = self._scheduler_orders(nodes, group_of)
        span = {g.gid: (min(order.get(o, 0) for o in g.nodes), max(order.get(o, 0) for o in g.nodes))
                for g in groups.values()}

        def reach_of(g: Group) -> int:
            """Nodes that g's inputs from outside g depend on, themselves included: g cannot merge with
            a group among them (the merged kernel would wait on itself)."""
            r = dep_reach.get(g.gid)
            if r is None:
                r, m = 0, g.mask
                for o in g.nodes:
                    for d in rdeps[o]:
                        if not bit[d] & m:
                            r |= bit[d] | anc[d]
                dep_reach[g.gid] = r
            return r

        changed = True
        while changed:
            changed = False
            fused = [g for g in groups.values() if g.kind == "fused" and not g.sealed]
            pos = {g.gid: i for i, g in enumerate(fused)}
            # each buffer's readers in program order, as this pass begins (Inductor's buffer groups)
            in_order = {st: sorted(j for j in map(pos.get, r) if j is not None) for st, r in readers.items()}
            for i, a in enumerate(fused):

                def after(lo: int) -> list[Group]:
                    """Groups after position lo that a could merge with, in program order: with a shared
                    read, among the next PAIRWISE_ATTEMPTS readers of that buffer."""
                    if not shared_only:
                        return fused[lo + 1:]
                    near: set[int] = set()
                    for st in self._group_read_keys(a, nodes, group_reads):
                        order = in_order.get(st)
                        if order:
                            k = bisect.bisect_right(order, lo)
                            near.update(order[k:k + PAIRWISE_ATTEMPTS])
                    return [fused[j] for j in sorted(near)]

                cands = after(i)
                k = 0
                while k < len(cands):
                    b = cands[k]
                    k += 1
                    if a.gid not in groups:
                        break
                    if b.gid not in groups:
                        continue
                    if shared_only and not self._share_reads(a, b, nodes, group_reads):
                        continue
                    if a.weight + b.weight > MAX_FUSION_SIZE:
                        continue
                    if not self._compatible(a, b, nodes):
                        continue
                    (alo, ahi), (blo, bhi) = span[a.gid], span[b.gid]
                    if max(abs(alo - bhi), abs(blo - ahi)) > FUSION_DISTANCE:
                        continue
                    if reach_of(b) & a.mask or reach_of(a) & b.mask:
                        continue
                    self._absorb(a, b, group_of)
                    span[a.gid] = (min(alo, blo), max(ahi, bhi))
                    dep_reach.pop(a.gid, None)
                    rb = group_reads.pop(b.gid, None) or self._group_read_keys(b, nodes, {})
                    if a.gid in group_reads:
                        group_reads[a.gid] |= rb
                    for st in rb:
                        readers.setdefault(st, set()).add(a.gid)
                    del groups[b.gid]
                    changed = True
                    if shared_only:  # a reads more now: groups sharing only b's reads are candidates too
                        cands, k = after(pos[b.gid]), 0
        return self.concat_copy_windows(self.emit_kernels(groups, nodes, group_of, ops, gi), nodes, gi)

    def concat_copy_windows(self, kernels: list[Kernel], nodes: dict[int, Node], gi: int) -> list[Kernel]:
        """A library kernel's output that several ConcatKernels take is copied into their slices by copy
        nodes, one per concatenation, which fuse side by side only within 64 scheduler nodes of each
        other: a DenseNet layer's output goes into the next few layers' concatenations by one kernel and
        into the later ones by more. kpredict's concatenation kernels stand for one such kernel per
        output; a kernel is added for each further window [SRC torch 2.13 _inductor/ir.py
        ConcatKernel.realize_into (a copy of an extern output), scheduler.py are_long_distant_nodes;
        M-CUDA cudagen: torchvision densenet121, fixtures/ops/concat_windows.py]."""
        if not self.concats:
            return kernels
        orders = self._orders
        targets: dict[int, list[int]] = {}  # extern output -> the ConcatKernels copying it, in order
        for c in sorted(self.concats, key=lambda c: orders.get(c, 0)):
            if nodes[c].absorbed_into is not None:
                continue
            for v in dict.fromkeys(nodes[c].op.inputs):
                base, p = self._view_base(v)
                if p is not None and p.graph == gi and _library_call(p):
                    targets.setdefault(base, []).append(c)
        extra: dict[int, list[int]] = {}  # first cat of a window -> the outputs a kernel copies again there
        for v, cats in targets.items():
            start = orders.get(cats[0], 0)
            for c in cats[1:]:
                if orders.get(c, 0) - start > FUSION_DISTANCE:
                    extra.setdefault(c, []).append(v)
                    start = orders.get(c, 0)
        if not extra:
            return kernels
        out: list[Kernel] = []
        index = len(kernels)
        for k in kernels:
            out.append(k)
            for c in sorted(extra.keys() & set(k.ops)):
                for v in extra[c]:
                    out.append(Kernel(f"{self.conf['kernel_prefix']}_poi_fused_cat_{index}", (c,), (self._st(v),),
                                      (), "generated", gi))
                    index += 1
        return out

    def _scheduler_orders(self, nodes: dict[int, Node], group_of: dict[int, int]) -> dict[int, int]:
        """Each node's place among the scheduler nodes lowering made, in program order: a library call, a
        reduction and a value read outside its kernel or by more than one op are a buffer each (a node
        each); a value inlined into its one reader takes the place of the node it joins. Inductor fuses
        two kernels side by side only where these places lie at most 64 apart [SRC torch 2.13
        _inductor/choices.py can_fuse_horizontal, scheduler.py are_long_distant_nodes: min_order,
        max_order; M-CUDA cudagen: a dense block of 10 layers (DenseNet): a layer's output is copied
        into the concatenations of the next 4-7 layers by one kernel, the later ones by another]."""
        order: dict[int, int] = {}
        k = 0
        for oid, n in nodes.items():
            if n.absorbed_into is not None:
                continue
            order[oid] = k
            if oid in self.concats:  # lowering makes a node per input (a copy or its slice) and one for the cat
                k += len(n.op.inputs)
            users = self.users.get(oid, ())
            g = group_of.get(oid)
            if n.kind in ("extern", "fallback") or n.op.category == "reduction" or len(users) != 1 \
                    or any(group_of.get(u) != g for u in users):
                k += 1
        return order

    def _kernel_groups(self, groups: dict[int, Group], nodes: dict[int, Node], group_of: dict[int, int],
                       ops: list[Op], deps: dict[int, set[int]]) -> dict[int, int]:
        """The C++ backend writes every generated node between two extern kernels into one function
        (the scheduler flushes its kernel group at an extern or template node), whatever their sizes
        and whether they depend on each other [SRC torch 2.13 _inductor/scheduler.py codegen:
        flush() on node.is_extern(); codegen/cpp.py CppScheduling.codegen_node]. The nodes come in
        topological order, earliest first by the graph's order after reorder_for_locality, which
        moves each node's producers right before it [SRC fx_passes/post_grad.py
        reorder_for_locality]: q's rotary ops follow q's matmul, so the k matmul separates them
        from k's. Returns each remaining group's place in that order."""
        rank = locality_order(ops, self.ins, self.outs)

        def gid_of(o: int) -> int | None:
            n = nodes.get(o)
            if n is not None and n.absorbed_into is not None:
                o = n.absorbed_into
            return group_of.get(o)

        # a call kpredict cannot see into runs as a kernel of its own, between the others: a barrier
        # like an extern kernel (negative ids; it is no group)
        barriers = {-1 - op.oid: op for op in ops if op.category == "unknown"}

        def unit_of(o: int) -> int | None:
            return -1 - o if -1 - o in barriers else gid_of(o)

        after: dict[int, set[int]] = {u: set() for u in [*groups, *barriers]}  # unit -> units that need it first
        indeg: dict[int, int] = dict.fromkeys(after, 0)
        deps_of = [(o, n.deps) for o, n in nodes.items()] + [(op.oid, deps[op.oid]) for op in barriers.values()]
        for o, ds in deps_of:
            g = unit_of(o)
            if g is None:
                continue
            for d in ds:
                gd = unit_of(d)
                if gd is not None and gd != g and g not in after[gd]:
                    after[gd].add(g)
                    indeg[g] += 1
        first = {gid: min(rank.get(o, o) for o in g.nodes) for gid, g in groups.items()}
        first.update({u: rank.get(op.oid, op.oid) for u, op in barriers.items()})
        ready = [(first[gid], gid) for gid, k in indeg.items() if k == 0]
        heapq.heapify(ready)
        order: list[Group] = []
        while ready:
            _, gid = heapq.heappop(ready)
            order.append(groups[gid] if gid >= 0 else Group(gid, [], "barrier"))
            for x in after[gid]:
                indeg[x] -= 1
                if indeg[x] == 0:
                    heapq.heappush(ready, (first[x], x))
        placed = {g.gid for g in order}
        order += [g for g in groups.values() if g.gid not in placed]  # a cycle (not expected): program order
        run: Group | None = None
        position: dict[int, int] = {}
        for g in order:
            if g.kind != "fused" or run is None:
                run = g if g.kind == "fused" else None
                if g.gid >= 0:
                    position[g.gid] = len(position)
                continue
            self._absorb(run, g, group_of)
            del groups[g.gid]
        return position

    def _node_deps(self, nodes: dict[int, Node], deps: dict[int, set[int]], gi: int) -> dict[int, list[int]]:
        """Per node, the nodes it depends on, also through ops of its graph that are not nodes (a call
        kpredict cannot see into): what comes after such a call depends on what the call read, so
        nodes on its two sides are never siblings to fuse (that kernel would have to run the call)."""
        through: dict[int, list[int]] = {}  # op that is not a node -> the nodes it depends on

        def passes(e: int) -> bool:
            return e not in nodes and e in self.ops and self.ops[e].graph == gi

        def expand(d: int) -> list[int]:
            stack = [d]
            while stack:  # post-order over the ops that are not nodes, without recursion
                x = stack[-1]
                if x in through:
                    stack.pop()
                    continue
                todo = [e for e in deps.get(x, ()) if e not in through and passes(e)]
                if todo:
                    stack.extend(todo)
                    continue
                stack.pop()
                out: list[int] = []
                for e in deps.get(x, ()):
                    if e in nodes:
                        out.append(e)
                    elif e in through:
                        out.extend(through[e])
                through[x] = out
            return through[d]

        out: dict[int, list[int]] = {}
        for o, n in nodes.items():
            ds: list[int] = []
            for d in n.deps:
                if d in nodes:
                    ds.append(d)
                elif passes(d):
                    ds.extend(expand(d))
            out[o] = ds
        return out

    def _recompute_cheap(self, groups: dict[int, Group], nodes: dict[int, Node], group_of: dict[int, int],
                         only: frozenset[int] | None = None) -> None:
        """A pointwise group left as a kernel of its own that several generated kernels read, loading at
        most 4 buffers, is not stored: lowering inlines it into each reader, which computes it again
        (a rotary table's cos and sin in each of q's and k's kernels). A reader that needs it stored (a
        matmul, an extern call) or a use outside the graph keeps it [SRC torch 2.13 _inductor/ir.py
        StorageBox.should_realize_on_reuse, config.realize_reads_threshold, graph.py run_node
        needs_realized_inputs; M-CUDA cudagen: transformers llama's rotary tables, an arange read at
        another's index in fixtures/ops/advanced_index.py]. Its loads are counted with its own producers
        inlined (more than 4: stored), and a long expression is stored too (has_large_inner_fn, ~2
        inner-function ops per op; diffusers flux's three-axis rotary tables). Its ops are named in the
        first reader's kernel. With `only`, just the values only those ops read (graphs with convolutions,
        where the rule is measured for attention inputs' copies alone)."""
        for g in sorted(groups.values(), key=lambda g: min(g.nodes)):
            if g.kind != "fused" or g.red is not None or g.sealed or not self.concats.isdisjoint(g.nodes):
                continue
            if OPS_PER_NODE * self._inner_size(g.nodes, nodes) > REALIZE_OPS:
                continue  # a large inner function is stored (has_large_inner_fn)
            inside = set(g.nodes)
            readers = {u for o in g.nodes for u in self.users.get(o, ())} - inside
            if len(readers) < 2 or -1 in readers or (only is not None and not readers <= only) or any(
                    u not in nodes or nodes[u].kind not in ("pw", "red") or nodes[u].absorbed_into is not None
                    or u not in group_of or groups.get(group_of[u]) is None or groups[group_of[u]].kind != "fused"
                    for u in readers):
                continue
            if self.loads(g) > REALIZE_READS or any(self._load_count(v) > REALIZE_READS
                                                     for o in g.nodes for v in nodes[o].op.outputs):
                continue  # more than 4 loads once its own producers are inlined: stored (mark_reuse)
            first = min(readers)
            for o in g.nodes:
                nodes[o].absorbed_into = first
                group_of[o] = group_of[first]
            del groups[g.gid]

    def inline_epilogue_tails(self, groups: dict[int, Group], nodes: dict[int, Node], group_of: dict[int, int],
                              bit: dict[int, int]) -> None:
        """The last pointwise value of a reduction's kernel, read only by a pointwise op of more elements
        (repeat_kv's copy of a normed key), is not stored when lowering did not store it: its expression
        from the last value lowering stored (more than 30 ops and more than one load, or more than 8
        loads: has_exceeded_max_reads, realize_hint) is inlined into the reader, which computes it again
        from the reduction's stored statistics. The reader then reads what that expression reads (a
        rotary table's inputs) and can fuse side by side with a sibling that reads them too [SRC torch
        2.13 _inductor/graph.py run_node, ir.py StorageBox.realize_hint; M-CUDA cudagen: transformers
        qwen3, the normed and rotated k copied for two query heads a key head, computed in the query
        norm's kernel]."""
        memo: dict[int, bool] = {}
        for g in list(groups.values()):
            if g.kind != "fused" or g.red is None or g.sealed or self.split(g):
                continue
            inside = set(g.nodes)
            for e in reversed(g.nodes):
                n = nodes[e]
                users = self.users.get(e, ())
                if n.kind != "pw" or len(users) != 1 or n.numel is None:
                    continue
                c = next(iter(users))
                nc = nodes.get(c)
                if nc is None or c in inside or nc.kind != "pw" or nc.absorbed_into is not None or nc.numel is None \
                        or nc.numel <= n.numel:
                    continue
                gc = groups.get(group_of.get(c, -1))
                if gc is None or gc.kind != "fused" or gc.red is not None:
                    continue
                if self._stored_by_lowering(e, nodes, memo):
                    continue
                # the expression's nodes that nothing else reads move into the reader's kernel
                moved = {e}
                for o in sorted(inside, reverse=True):
                    if o < e and nodes[o].kind == "pw" and self.users.get(o, set()) <= moved:
                        moved.add(o)
                for o in moved:
                    nodes[o].absorbed_into = c
                    group_of[o] = gc.gid
                    g.mask &= ~bit[o]
                g.nodes = [o for o in g.nodes if o not in moved]
                break

    def _stored_by_lowering(self, o: int, nodes: dict[int, Node], memo: dict[int, bool]) -> bool:
        """Whether lowering stores pointwise node o's value for the size of its inner function: more
        than 8 loads, or more than one load and more than 30 ops (has_exceeded_max_reads, realize_hint).
        The function inlines the pointwise values before it that lowering does not store; each input
        of a cat is indexed apart, so a value two inputs of a cat read is counted twice (rotate_half's
        halves of a normed key) [SRC torch 2.13 _inductor/ir.py Loops.inner_fn_opcount; M-CUDA cudagen:
        the rotated half of qwen3's k times sin, 32 ops, stored; with sin an input, 28 ops, not]."""
        r = memo.get(o)
        if r is None:
            memo[o] = False  # a cycle's guess
            items: set[tuple] = set()
            loads: set[tuple] = set()
            self._expr(o, (), nodes, memo, items, loads)
            r = memo[o] = len(loads) > REALIZE_ACC_READS or (len(loads) > 1 and len(items) + len(loads) > REALIZE_OPS)
        return r

    def _expr(self, o: int, tag: tuple, nodes: dict[int, Node], memo: dict[int, bool], items: set[tuple],
              loads: set[tuple]) -> None:
        """Adds node o's inner-function ops (`items`) and loads at index `tag` (a cat input's own
        index), up to just past the 30-op threshold: one per op, two per input of a cat and one for
        its select, a mean's divide (two) where its output is loaded, a view copy free."""
        if (o, tag) in items or len(items) + len(loads) > REALIZE_OPS:
            return
        items.add((o, tag))
        op = self.ops[o]
        cat = op.name in ("cat", "stack")
        if cat:
            items.update((o, tag, i) for i in range(2 * len(op.inputs)))
        elif op.name in COPY_OF_VIEW:
            items.discard((o, tag))
        for i, v in enumerate(op.inputs):
            if _numel(self.fg, v) == 1:
                continue
            base, p = self._view_base(v)
            sub = tag + ((o, i),) if cat else tag
            d = nodes.get(p.oid) if p is not None else None
            if d is not None and d.kind == "pw" and not self._stored(base) and all(
                    u in nodes and nodes[u].kind == "pw" for u in self.users.get(p.oid, ())) \
                    and not self._stored_by_lowering(p.oid, nodes, memo):
                self._expr(p.oid, sub, nodes, memo, items, loads)
                continue
            loads.add((base, sub))
            if p is not None and p.name == "mean":
                items.update({(p.oid, sub, "div"), (p.oid, sub, "n")})

    def _inner_ops(self, start: list[int], nodes: dict[int, Node]) -> int:
        """About the ops of the inner function a pointwise group's value is once lowering inlined the
        pointwise ops before it that only pointwise ops read (Inductor's inner_fn_opcount, common parts
        counted once): one per op, one per load of a buffer, and a cat's masks and selects, about four
        per input [M-CUDA cudagen: glm's partial rotary k, 28 ops before its cat and 39 after]. A copy
        of a view is index arithmetic only."""
        seen: set[int] = set()
        stack = list(start)
        ops = 0
        while stack and len(seen) < 64:
            o = stack.pop()
            if o in seen:
                continue
            seen.add(o)
            n = nodes[o]
            copy = n.op.name in COPY_OF_VIEW
            if n.op.name in ("cat", "stack"):  # an empty input is skipped; one input left is a copy
                parts = sum(1 for v in n.op.inputs if _numel(self.fg, v) != 0)
                copy = parts < 2
                ops += 0 if copy else 1 + 4 * parts
            elif not copy:
                ops += 1
            for v in n.op.inputs:
                base, p = self._view_base(v)
                d = nodes.get(p.oid) if p is not None else None
                if d is not None and d.kind == "pw" and not self._stored(base) and p.oid not in self.concats and all(
                        u in nodes and nodes[u].kind == "pw" for u in self.users.get(p.oid, ())):
                    stack.append(p.oid)  # inlined (a ConcatKernel's output is stored)
                elif not copy:
                    ops += 1  # a load
        return ops

    @staticmethod
    def _inner_size(start: list[int], nodes: dict[int, Node]) -> int:
        """Pointwise ops in the expression a group's values are computed by once lowering inlined
        the pointwise ops before them (up to extern calls, reductions and graph inputs)."""
        seen: set[int] = set()
        stack = list(start)
        while stack and len(seen) < 64:
            o = stack.pop()
            if o in seen or o not in nodes or nodes[o].kind != "pw":
                continue
            seen.add(o)
            stack.extend(nodes[o].deps)
        return len(seen)

    def external_users(self, nodes: dict[int, Node], ops: list[Op], gi: int) -> dict[int, set[int]]:
        """For each node: the nodes of this graph reading its output, and -1 if it leaves the graph."""
        writer: dict[int, int] = {}
        out: dict[int, set[int]] = {o: set() for o in nodes}
        # before the first node nothing has a writer yet; after the last one the writers are final,
        # and any read there is from outside this graph's nodes (-1)
        lo, hi = self._window(nodes)
        _, reads = self._read_index()
        ins, outs, passive, get = self.ins, self.outs, self.passive, writer.get
        for op in self.fg.ops[lo:hi + 1]:
            oid = op.oid
            if oid in passive:
                continue
            mine = oid in nodes  # nodes are ops of graph gi
            r = oid if mine else -1
            for st in ins[oid]:
                w = get(st)
                if w is not None and w != oid:
                    out[w].add(r)
            if mine:
                for st in outs[oid]:
                    writer[st] = oid
        for st, w in writer.items():
            rs = reads.get(st)
            if rs and rs[-1][0] > hi:
                out[w].add(-1)
        for o in nodes:
            if not self.returned.isdisjoint(self.outs[o]):
                out[o].add(-1)
        return out

    def _add_node(self, g: Group, n: Node) -> None:
        out = n.op.outputs[0] if n.op.outputs else None
        if out is not None and self.fg.values.get(out) and self.fg.values[out].meta.dtype:
            g.dtypes.add(self.fg.values[out].meta.dtype)  # type: ignore[arg-type]
        if n.kind == "red":
            if g.red is None:
                g.red = (n.numel, n.rout)
                g.red_axis = n.op.reduce_axis
            if g.numel is None:
                g.numel = n.numel
        elif g.numel is None and g.red is None:
            g.numel = n.numel

    def _loops(self, g: Group) -> tuple[tuple[int, ...], bool] | None:
        """(loop sizes without size-1 loops, whether they are a copied strided view's) of a pointwise
        group's last full-size node: a copy of a strided view (repeat_kv's clone of a (B, Hkv, rep,
        T, D) expand) iterates over the view's dims."""
        for o in reversed(g.nodes):
            op = self.ops[o]
            if not op.outputs or _numel(self.fg, op.outputs[0]) != g.numel:
                continue
            src = self.fg.values.get(op.inputs[0]) if op.name in COPY_OF_VIEW and op.inputs else None
            view = src is not None and not src.contiguous
            shape = (src if view else self.fg.values[op.outputs[0]]).meta.shape  # type: ignore[union-attr]
            if shape is None or any(d is None for d in shape):
                return None
            return tuple(d for d in shape if d != 1), view  # type: ignore[misc]
        return None

    def _permuted_reads(self, g: Group) -> bool:
        """Whether the group reads a tensor from outside it through a transposed or permuted view.
        Inductor then cannot merge the group's loops into one, and siblings of other loops share no
        read at the same index (score_fusion_memory 0): they do not fuse side by side. With plain
        reads the loops merge and they do (q's rotary and k's rotary + repeat_kv: one kernel for
        contiguous q, k; two when q, k are transposed views of a projection, as in every transformers
        decoder) [SRC torch 2.13 _inductor/choices.py can_fuse_horizontal, scheduler.py
        score_fusion_memory; M-CUDA cudagen: fixtures/ops/gqa_rotary.py, transformers llama]."""
        inside = set(g.nodes)
        for o in g.nodes:
            for v in self.ops[o].inputs:
                val = self.fg.values.get(v)
                seen = 0
                while val is not None and val.producer is not None and val.producer not in inside and seen < 16:
                    op = self.ops.get(val.producer)
                    if op is None or op.oid not in self.passive:
                        break
                    if op.name in PERMUTING:
                        return True
                    val = self.fg.values.get(op.inputs[0]) if op.inputs else None
                    seen += 1
        return False

    def _absorb(self, a: Group, b: Group, group_of: dict[int, int]) -> None:
        """Group b's nodes join group a (one kernel); the caller drops b."""
        a.nodes = sorted(a.nodes + b.nodes)
        a.weight += b.weight
        a.mask |= b.mask
        for o in b.nodes:
            group_of[o] = a.gid
        self._merge_meta(a, b)

    def _merge_meta(self, a: Group, b: Group) -> None:
        if a.red is None and b.red is not None:
            a.red, a.red_axis = b.red, b.red_axis
        if a.numel is None:
            a.numel = b.numel
        a.dtypes |= b.dtypes

    def _group_read_keys(self, g: Group, nodes: dict[int, Node], memo: dict[int, set]) -> set:
        """What a group's nodes read, as horizontal fusion scores it (_read_key; memoized per group id),
        with what the cheap values it computes again read."""
        s = memo.get(g.gid)
        if s is None:
            s = set()
            for v, st, _again in self._reads_through(g.nodes, nodes):
                s.add(self._read_key(v, st))
                s.add(("buf", st))  # the buffer at any index (_share_reads)
            memo[g.gid] = s
        return s

    def _reads_through(self, start: list[int] | set[int], nodes: dict[int, Node]) -> Iterator[tuple[int, int, bool]]:
        """(value, storage, computed again) for each read of the nodes in `start`, and for each read of
        the values computed again where they are read (absorbed nodes outside `start`: _recompute_cheap),
        whose own reads follow theirs."""
        inside = set(start)
        todo, seen = list(start), set()
        producer = self._producers()
        while todo:
            o = todo.pop()
            if o in seen:
                continue
            seen.add(o)
            for v, st in zip(self.ops[o].inputs, self.ins[o]):
                p = producer.get(self._view_base(v)[0])
                again = p is not None and p.oid not in inside and (n := nodes.get(p.oid)) is not None \
                    and n.absorbed_into is not None
                if again:
                    todo.append(p.oid)  # type: ignore[union-attr]
                yield v, st, again

    def _read_key(self, vid: int, st: int) -> int | tuple[int, int]:
        """A read as Inductor's fusion score sees it, a buffer at an index: the storage, or for a read
        through a view at an offset (q and k selected from one projection) the storage with the
        offsetting view nearest it."""
        memo = self._read_key_memo
        key = memo.get(vid)
        if key is None:
            key, producer, v = st, self._producers(), vid
            p = producer.get(v)
            while p is not None and p.category == "view" and p.inputs:
                if p.name in OFFSET_VIEWS and _numel(self.fg, v) != _numel(self.fg, p.inputs[0]):
                    key = (st, v)  # a part of its base (a whole-range slice, `cos[None, :, :]`, is not)
                v = p.inputs[0]
                p = producer.get(v)
            memo[vid] = key
        return key

    def _share_reads(self, a: Group, b: Group, nodes: dict[int, Node], memo: dict[int, set]) -> bool:
        """Whether two groups read something in common as Inductor's fusion score counts it: the same
        buffer at the same index (MemoryDep equality; the buffer-overlap score is off: min_overlap_ratio
        1.1) [SRC torch 2.13 _inductor/scheduler.py score_fusion_memory, _can_use_buffer_overlap_scoring;
        M-CUDA cudagen: transformers persimmon, the q and k layer norms of one qkv projection are two
        kernels; a packed qkv's q, k and v copies are three (fixtures/ops/packed_qkv.py); phi3, deberta;
        diffusers flux's q and k rotary, which read cos and sin at the same index, one]. In graphs with
        convolutions two pointwise groups share any read of the same buffer, at any index: not Inductor's
        rule, but there it stands in for layout copies of channel slices kpredict makes and Inductor does
        not (res2net, mixnet: the same-index rule loses six zoo models; docs/zoo-scoreboard.md, stop 57)."""
        ka, kb = self._group_read_keys(a, nodes, memo), self._group_read_keys(b, nodes, memo)
        if a.red is None and b.red is None and self._any_index_reads:
            return not ka.isdisjoint(kb)
        return any(k in kb for k in ka if not (isinstance(k, tuple) and k[0] == "buf"))

    def _group_reads(self, g: Group, nodes: dict[int, Node], memo: dict[int, set[int]]) -> set[int]:
        """The storages a group's nodes read (memoized per group id)."""
        s = memo.get(g.gid)
        if s is None:
            s = {st for o in g.nodes for st in self.ins[o]}
            memo[g.gid] = s
        return s

    def _compatible(self, a: Group, b: Group, nodes: dict[int, Node]) -> bool:
        copies = self.fg.attention_copies
        if copies and not copies.isdisjoint(a.nodes) and not copies.isdisjoint(b.nodes):
            return False  # each copies another slice of its base: no read at the same index (copy_attention_views)
        if a.red is None and b.red is None:
            if a.numel is not None and b.numel is not None and a.numel != b.numel:
                return False
            if self.conf.get("horizontal_same_loops"):
                la, lb = self._loops(a), self._loops(b)
                if la is not None and lb is not None and la[0] != lb[0] and (la[1] or lb[1]) \
                        and (self._permuted_reads(a) or self._permuted_reads(b)):
                    return False
            return True
        if a.red is not None and b.red is not None:
            if a.red == b.red:
                return not (self.split(a) != self.split(b))
            return bool(self.conf["mixed_reduction_fusion"] and a.red[0] == b.red[0])
        r, p = (a, b) if a.red is not None else (b, a)
        rin, rout = r.red  # type: ignore[misc]
        if p.numel is None:
            return True
        if p.numel == rin and rout and (loops := self._loops(p)) is not None and loops[1]:
            # a copy of a strided view keeps the view's loops: it joins a reduction's kernel only where
            # they split into the reduction's rows and row length (SIMDKernel.is_compatible): repeat_kv's
            # (kv heads, 2, T, D) copy with a per-head q norm's (H x T) rows, not with a norm over each
            # token's whole projection [SRC torch 2.13 _inductor/codegen/simd.py can_fuse; M-CUDA
            # cudagen: transformers qwen3, olmo2]
            prefix = 1
            for d in loops[0]:
                prefix *= d
                if prefix >= rout:
                    break
            if prefix != rout:
                return False
        return p.numel == rout or (p.numel == rin and not self.split(r))

    # ------------------------------------------------------------------ rewrites
    def rewrite_addmm(self, nodes: dict[int, Node], users: dict[int, list[int]]) -> None:
        """mm followed by `+ bias` (1-D) becomes one addmm (joint-graph pattern)."""
        for oid, n in nodes.items():
            if n.kind != "extern" or n.op.aten not in (("mm",),) or len(users[oid]) != 1:
                continue
            u = nodes[users[oid][0]]
            if u.op.name not in ("add",) or len(u.op.inputs) != 2:
                continue
            other = [v for v in u.op.inputs if v not in n.op.outputs]
            if len(other) != 1:
                continue
            m = self.fg.values[other[0]].meta
            if m.shape is not None and len(m.shape) == 1:
                u.absorbed_into = oid
                n.op = _with_aten(n.op, ("addmm",))

    def rewrite_concat(self, nodes: dict[int, Node]) -> None:
        """cat of extern outputs only: the library kernels write straight into the output (Inductor's
        ConcatKernel), no copy kernel [M-CPU fixtures/models/fixed_loops.py Refiner.chunked]."""
        for oid, n in nodes.items():
            if n.op.name != "cat" or n.absorbed_into is not None or not n.deps:
                continue
            if all(d in nodes and nodes[d].kind == "extern" for d in n.deps) and len(n.deps) == len(n.op.inputs) \
                    and all(self._extern_output_as_is(v) for v in n.op.inputs):
                n.absorbed_into = max(n.deps)

    def _extern_output_as_is(self, vid: int) -> bool:
        """Whether a cat input is a library kernel's output seen through views that keep its layout
        (view, reshape, unsqueeze): the kernel writes into the cat's slice. A transposed or permuted view
        of it is copied into the output by a kernel [M-CPU diffusers 0.42.1 SD3 joint attention:
        torch.cat of q.view(B, -1, H, D).transpose(1, 2) with the text q, cpp_fused_cat_transpose_view x3]."""
        producer = self._producers()
        op = producer.get(vid)
        while op is not None and op.category == "view":
            if op.name not in _LAYOUT_KEEPING_VIEWS or not op.inputs:
                return False
            op = producer.get(op.inputs[0])
        return op is not None and not self._folded_matmul(op)

    def _folded_matmul(self, op: Op) -> bool:
        """A matmul of a batch of rows by a matrix (x @ w, a linear, with x of rank 3 or more): torch folds
        it to an mm of the flattened rows and views its result back, and a ConcatKernel copies a view into
        its slice [SRC torch 2.13 aten/src/ATen/native/LinearAlgebra.cpp _matmul_impl (fold), _inductor/
        ir.py ConcatKernel.realize_into: only a StorageBox is realized in place; M-CPU fixtures/ops/
        attention_views.py joined_values: cpp_fused__unsafe_view_cat_0 per cat of two matmuls]."""
        if op.name not in ("matmul", "linear") or len(op.inputs) < 2:
            return False
        a, b = (self.fg.values.get(v) for v in op.inputs[:2])
        if a is None or b is None or a.meta.shape is None or b.meta.shape is None:
            return False
        return len(a.meta.shape) > 2 and len(b.meta.shape) <= 2

    @staticmethod
    def _generator(g: Group, nodes: dict[int, Node]) -> bool:
        """Whether a fused group reads nothing from outside itself (aranges, constants and what is made
        of them only)."""
        inside = set(g.nodes)
        return all(d in inside for o in g.nodes for d in nodes[o].deps)

    def _shared_input_cats(self, nodes: dict[int, Node], uses: bool = True) -> set[int]:
        """The cats Inductor lowers as ConcatKernels on cuda (else a pointwise cat, fused with its readers):
        those with an input read elsewhere too that another op reads as a pointwise use, or that is a
        pointwise value still unstored when the cat is lowered (not stored for its readers, not realized
        by a library call or an earlier ConcatKernel before it), which a pointwise cat would compute
        again [SRC torch 2.13 _inductor/lowering.py cat, any_input_has_multi_consumers; M-CUDA cudagen:
        transformers gpt2, torch.diff(position_ids, prepend=...) in masking_utils.
        find_packed_sequence_indices: the prepended value and position_ids each a kernel writing into
        the cat, then the cumsum; torchvision densenet121, the pooled map; timm rdnet_tiny, a stage's
        last cat pointwise, its earlier outputs stored in earlier cats' slices]; and, with `uses` (graphs
        without convolutions, where it is measured), those that neither feed pointwise ops only (with an
        input computed anyway) nor have every input computed anyway and none fed by a reduction
        (fuse_pointwise_use, horizontal_fuse_cat) [M-CUDA cudagen: transformers persimmon, the partial
        rotary q and k: the rotated half written by one kernel, the normed half copied]."""
        cats: set[int] = set()
        readers = self._value_uses()
        in_concat: set[int] = set()  # inputs an earlier ConcatKernel stored into its slice
        for oid, n in sorted(nodes.items()):
            if n.op.name != "cat" or n.absorbed_into is not None or n.kind != "pw" or len(n.op.inputs) < 2:
                continue
            for v in n.op.inputs:
                if readers.get(v, 0) < 2:
                    continue
                base, p = self._view_base(v)
                if self._pointwise_reader(v, n.op) or (
                        _generated_pointwise(p) and base not in in_concat and not self._stored(base)
                        and not self._realized_before(v, n.op)):
                    cats.add(oid)
                    break
            else:
                if not uses:
                    continue
                self._stored_in_order()
                lowers = [self._cat_input_lowers(v) for v in n.op.inputs]
                if not (any(lowers) and self.pointwise_uses(n.op, ("cat", "constant_pad_nd"))) and not (
                        all(lowers) and not any(self._fed_by_reduction(v) for v in n.op.inputs)):
                    cats.add(oid)
            if oid in cats:
                in_concat.update(self._view_base(v)[0] for v in n.op.inputs)
        return cats

    def _pointwise_reader(self, vid: int, cat: Op) -> bool:
        """Whether an op other than `cat` reads the value as an op torch tags pointwise, through views and
        concatenations of it alone (which post-grad passes remove) [SRC torch 2.13 _inductor/lowering.py
        cat: any_input_has_multi_consumers, utils.py is_pointwise_use; M-CUDA cudagen: DenseNet, the pooled
        map read by the first layer's batch norm and every later layer's cat, written into each cat's
        slice by one kernel]."""
        users, table = self._users(), default_table().ops
        todo, seen = [vid], set()
        while todo:
            v = todo.pop()
            if v in seen:
                continue
            seen.add(v)
            for u in users.get(v, ()):
                if u is cat or u.graph != cat.graph or v in u.outputs:
                    continue
                if u.category in PASSIVE or u.free_reason or (u.name == "cat" and len(u.inputs) == 1):
                    todo.extend(u.outputs)
                elif (f := table.get(u.name)) is not None and f.pointwise_use:
                    return True
        return False

    def _realized_before(self, vid: int, op: Op) -> bool:
        """Whether a library call before `op` reads the value (a convolution, through the layout copy kpredict
        puts before it; an extern or fallback call): lowering that call realized it, so a later reader
        finds a buffer, not a pointwise value to compute again [SRC torch 2.13 _inductor/ir.py
        ExternKernel.realize_input]."""
        pos, _ = self._read_index()
        at = pos[op.oid]
        return any(pos[o.oid] < at and vid not in o.outputs and (o.name == "conv_layout" or _library_call(o))
                   for o in self._users().get(vid, ()))

    def _stored_in_order(self) -> None:
        """Decide `_stored` for every pointwise value in program order, once: asked first of a value at
        the end of a long chain (a scheduler's scalar arithmetic), its recursion would go as deep as the
        chain."""
        if self._stored_primed:
            return
        self._stored_primed = True
        for op in self.fg.ops:
            if op.category == "pointwise" and op.compiled == "generated" and not op.free_reason:
                for v in op.outputs:
                    self._stored(v)

    def _cat_input_lowers(self, vid: int) -> bool:
        """Whether a cat input is computed into the output anyway (should_lower_cat_input): a pointwise
        value lowering has not stored, or a view of a buffer whose layout is fixed (a graph input, a
        library kernel's output); not a stored value of a generated kernel, whose layout the cat picks."""
        base, p = self._view_base(vid)
        if p is None or _library_call(p):
            return True
        if _generated_pointwise(p):
            return not self._stored(base)
        if p.category == "reduction" and p.name in ROW_EPILOGUE:  # its normalizing step, stored when read twice
            return not self._read_twice(base)
        return False

    def _cat_input_copied(self, vid: int) -> bool:
        """Whether a ConcatKernel copies an input into its slice with a kernel of its own: part of a
        stored value (a slice of a norm's output read twice), which its producer does not write where the
        cat wants it [SRC torch 2.13 _inductor/ir.py ConcatKernel.create, realize_into: a copy node per
        input; M-CUDA cudagen: transformers persimmon, the normed half of a partial rotary q]."""
        base, p = self._view_base(vid)
        if base == vid or p is None or _numel(self.fg, vid) == _numel(self.fg, base):
            return False
        if p.category == "reduction":
            return p.name not in ROW_EPILOGUE or self._read_twice(base)
        return _generated_pointwise(p) and self._stored(base)

    def _fed_by_reduction(self, vid: int, depth: int = 16) -> bool:
        """Whether a cat input is a reduction's output or a pointwise expression lowering has not stored
        that reads one (can_fuse_reduction)."""
        base, p = self._view_base(vid)
        if p is None or depth == 0:
            return False
        if p.category == "reduction":
            return p.name not in ROW_EPILOGUE or not self._read_twice(base)
        if _generated_pointwise(p) and not self._stored(base):
            return any(self._fed_by_reduction(v, depth - 1) for v in p.inputs)
        return False

    def concat_writers(self, nodes: dict[int, Node], only: set[int] | None = None) -> None:
        """A cat lowered as a ConcatKernel (rules/targets.toml concat_kernel): each input is computed
        into its slice of the output where its producer is, and the cat's readers read the stored
        output. The cat node stands for the slice writes, sized as its first input, so a reader (of the
        whole output's size) starts a kernel of its own: rotate_half's cat is written right after q's
        matmul, and q * cos + rotate_half(q) * sin comes later [SRC torch 2.13 _inductor/lowering.py
        cat: ConcatKernel.create on cpu; M-CPU transformers llama: cpp_fused_..cat_neg_slice.. after
        each projection]."""
        self.concats = set()
        self.concat_copies = {}
        for oid, n in nodes.items():
            if n.op.name != "cat" or n.absorbed_into is not None or n.kind != "pw" or len(n.op.inputs) < 2 \
                    or (only is not None and oid not in only):
                continue
            self.concats.add(oid)
            if self.conf.get("concat_input_copies"):
                copied = [v for v in n.op.inputs[1:] if self._cat_input_copied(v)]
                if copied:
                    self.concat_copies[oid] = copied
            first = _numel(self.fg, n.op.inputs[0])
            if first is not None and first != n.numel:
                n.numel = first

    def concat_layouts(self, nodes: dict[int, Node]) -> None:
        """In a channels-last graph a ConcatKernel's output is laid out channels-last (as its inputs'
        meta values are), so the convolution reading it needs no layout copy [SRC torch 2.13
        _inductor/ir.py ConcatKernel.create: output_stride; M-CUDA cudagen: timm res2net50_14w_8s, the
        1x1 convolution after each block's concatenation reads it as written]."""
        for n in nodes.values():
            if n.op.name == "conv_layout" and n.absorbed_into is None and len(n.deps) == 1 \
                    and n.op.graph in self.fg.channels_last_graphs and (d := next(iter(n.deps))) in self.concats:
                n.absorbed_into = d

    def rewrite_attention(self, nodes: dict[int, Node], users: dict[int, list[int]]) -> None:
        """softmax(q @ k^T * s) @ v -> one SDPA kernel where the target's pattern matcher does it."""
        mode = self.conf["attention_rewrite"]
        if mode == "never":
            return
        for oid, n in nodes.items():
            if n.op.name != "_softmax" or n.absorbed_into is not None:
                continue
            chain: list[int] = []
            cur = n
            first_mm: Node | None = None
            mask: list[int] = []
            while True:
                ds = [d for d in cur.deps if d in nodes]
                if len(ds) == 2 and chain == [cur.op.oid] and cur.op.name in ("add", "add_") \
                        and self._mask_add(cur.op):
                    # (q @ k^T / s + mask).softmax(-1) @ v: the mask is not part of the chain
                    # [SRC torch 2.13 _inductor/fx_passes/fuse_attention.py _sfdp_pattern_5/6/14/16]
                    mask = [d for d in ds if nodes[d].op.name != "div"]
                    ds = [d for d in ds if nodes[d].op.name == "div"]
                if len(ds) != 1:
                    break
                d = nodes[ds[0]]
                if d.kind == "extern" and d.op.aten in (("bmm",), ("mm",)):
                    first_mm = d
                    break
                if d.kind != "pw" or len(users[d.op.oid]) != 1:
                    break
                chain.append(d.op.oid)
                cur = d
            if first_mm is None or len(users[oid]) != 1:
                continue
            shape = self.fg.values[n.op.inputs[0]].meta.shape if n.op.inputs else None
            if not chain and (shape is None or len(shape) != 3):
                # no scale between the product and the softmax: only the 3-d bmm form (Inductor's
                # _sfdp_pattern_13) matches; a 4-d matmul puts views in between [M-CPU
                # fixtures/sizes/assumed_layouts.py HeadAttention: bmm, softmax, bmm]
                continue
            second = nodes[users[oid][0]]
            if second.kind != "extern" or second.op.aten not in (("bmm",), ("mm",)) or len(users[first_mm.op.oid]) != 1:
                continue
            dtype = self.fg.values[n.op.outputs[0]].meta.dtype if n.op.outputs else None
            if mode == "half" and dtype not in ("float16", "bfloat16"):
                continue
            kname = attention_kernel(self.conf, dtype)
            second.kind = "fallback"
            second.op = _with_aten(second.op, (kname,))
            second.deps = (second.deps | first_mm.deps | n.deps | {d for c in chain for d in nodes[c].deps}) - {
                first_mm.op.oid, oid, *chain}
            for o in (first_mm.op.oid, oid, *chain):
                nodes[o].absorbed_into = second.op.oid
            for u in users[second.op.oid]:
                if self._heads_back(nodes[u], second.op, first_mm.op):
                    nodes[u].absorbed_into = second.op.oid
            if len(mask) == 1 and len(ds) == 1:
                self.attention_masks[second.op.oid] = (chain[0], mask[0])

    def direct_attention_masks(self, nodes: dict[int, Node]) -> None:
        """A mask given to scaled_dot_product_attention itself is the attention call's input as a matched
        pattern's is: copy_attention_masks treats both (the call stands for the mask's add) [SRC torch 2.13
        _inductor/lowering.py sdpa_constraint; M-CUDA cudagen and M-CPU oracle: transformers biogpt, its
        mask made from nothing copied before each attention call]."""
        for oid, n in nodes.items():
            if n.op.name != "scaled_dot_product_attention" or len(n.op.inputs) < 4 or n.absorbed_into is not None:
                continue
            _base, p = self._view_base(n.op.inputs[3])
            if p is not None and (m := nodes.get(p.oid)) is not None and m.kind == "pw":
                self.attention_masks[oid] = (oid, p.oid)

    def copy_attention_masks(self, groups: dict[int, Group], nodes: dict[int, Node], group_of: dict[int, int]) -> None:
        """The mask of an attention the pattern matcher made is an input of the attention call, and lowering
        asks it for a laid-out tensor: a view of a mask nothing has stored is copied before each call, the
        mask computed again in each copy, and not where the code computes it (sdpa_constraint,
        require_stride_order -> copy_input) [SRC torch 2.13 _inductor/lowering.py sdpa_constraint;
        M-CPU transformers megatron_bert, roformer: the bidirectional mask's kernel before each layer's
        attention]. Only where nothing but the masks' adds reads the mask's kernel."""
        by_group: dict[int, list[int]] = {}
        for attn, (_add, m) in self.attention_masks.items():
            if m in group_of and nodes[attn].absorbed_into is None:
                by_group.setdefault(group_of[m], []).append(attn)
        adds = {add for add, _m in self.attention_masks.values()}
        for gid, attns in by_group.items():
            g = groups.get(gid)
            if g is None or g.kind != "fused" or g.red is not None or g.sealed:
                continue
            inside = set(g.nodes)
            readers = {u for o in g.nodes for u in self.users.get(o, ())} - inside
            if not readers or not readers <= adds:
                continue
            taken = [g]  # with the kernels that compute only for the mask (inlined into the copies too)
            todo = list(g.nodes)
            while todo:  # the groups producing for what is taken so far, when nothing else reads them
                for d in nodes[todo.pop()].deps:
                    h = groups.get(group_of.get(d, -1))
                    if h is None or h in taken or h.kind != "fused" or h.red is not None or h.sealed:
                        continue
                    outside = {u for o in h.nodes for u in self.users.get(o, ())} - set(h.nodes)
                    if outside and outside <= inside:
                        taken.append(h)
                        inside |= set(h.nodes)
                        todo.extend(h.nodes)
            first = min(attns)
            made = {st for o in inside for st in self.outs[o]}
            # a value computed again where it is read (_recompute_cheap) is no buffer: its own reads are
            read = {st for _v, st, again in self._reads_through(inside, nodes) if not again}
            reads = tuple(sorted(read - made))
            copy = MaskCopy(sorted(inside), reads, tuple(self.outs[max(inside)]))
            # copies that read a buffer in common fuse into one kernel, before the first call [M-CPU
            # fixtures/ops/attention_views.py masked_scores: the ids' mask, one kernel]; a mask made from
            # nothing stored (megatron's ones and aranges) is copied before each call
            for a in ([first] if reads else attns):
                self.mask_copies[a] = copy
            for h in taken:
                for o in h.nodes:
                    nodes[o].absorbed_into = first
                    group_of[o] = group_of[first]
                del groups[h.gid]

    def _heads_back(self, n: Node, attn: Op, mm: Op) -> bool:
        """Whether `n` is out.transpose(1, 2).contiguous() (or permute(0, 2, 1, 3)) of an attention kernel's
        4-d output that the kernel already wrote as (B, S, H, D): no copy is left (rules/targets.toml
        sdpa_output_layout; "query": when the query is itself such a view, as a projection's heads are)
        [M-CPU transformers megatron_bert, roformer: no kernel between SDPA and the output projection]."""
        if n.kind != "pw" or n.op.name not in ("contiguous", "clone") or not n.op.inputs or not attn.outputs:
            return False
        producer = self._producers()
        view = producer.get(n.op.inputs[0])
        if view is None or view.category != "view" or view.name not in ("permute", "transpose") \
                or not view.inputs or view.inputs[0] != attn.outputs[0]:
            return False
        out = self.fg.values.get(attn.outputs[0])
        mid = self.fg.values.get(n.op.inputs[0])
        if out is None or mid is None or out.meta.shape is None or mid.meta.shape is None or len(out.meta.shape) != 4:
            return False
        s = out.meta.shape
        if tuple(mid.meta.shape) != (s[0], s[2], s[1], s[3]):
            return False
        layout = self.conf.get("sdpa_output_layout", "query")
        if layout == "bshd":
            return True
        q, p = mm.inputs[0] if mm.inputs else None, None
        while q is not None and (p := producer.get(q)) is not None and p.category == "view" and p.inputs \
                and len(self.fg.values[q].meta.shape or ()) != 4:
            q = p.inputs[0]
        qv = self.fg.values.get(q) if q is not None else None
        return qv is not None and not qv.contiguous

    def _mask_add(self, op: Op) -> bool:
        """An add of two tensors of rank 1 or more, one of them float or bool: the attention mask the
        pattern matcher takes (_sfdp_params_check: a tensor, not 0-d, of the query's dtype, float or bool)."""
        vals = [self.fg.values.get(v) for v in op.inputs]
        return len(vals) == 2 and all(v is not None and v.meta.shape for v in vals) and any(
            v.meta.dtype in ("float32", "bool", None) for v in vals)

    # ------------------------------------------------------------------ kernels
    def emit_kernels(self, groups: dict[int, Group], nodes: dict[int, Node], group_of: dict[int, int],
                     ops: list[Op], gi: int, position: dict[int, int] | None = None) -> list[Kernel]:
        """One Kernel per group, in program order or in `position` order (the C++ kernel groups)."""
        # what each group reads and writes: buffers crossing its boundary
        member: dict[int, int] = {}
        for g in groups.values():
            for o in g.nodes:
                member[o] = g.gid
        for o, n in nodes.items():
            if n.absorbed_into is not None:
                member[o] = member.get(n.absorbed_into, -1)
        consumers: dict[int, set[int]] = {}  # storage -> groups reading it (-1: outside the graph)
        writer_group: dict[int, int] = {}
        lo, hi = self._window(nodes)
        _, all_reads = self._read_index()

        def read_elsewhere(st: int) -> bool:
            """Is storage st read outside [lo, hi] by an op of another graph (or a sync of this one)?"""
            for i, g_, sync in all_reads.get(st, ()):
                if lo <= i <= hi:
                    continue
                if g_ != gi or sync:
                    return True
            return False

        ins, passive = self.ins, self.passive
        for op in self.fg.ops[lo:hi + 1]:
            oid = op.oid
            if oid in passive:
                continue
            if op.graph == gi:
                reader = member.get(oid)
                if reader is None:
                    if op.category != "sync":
                        continue  # dead in this graph
                    reader = -1
            else:
                reader = -1
            for st in ins[oid]:
                c = consumers.get(st)
                if c is None:
                    consumers[st] = {reader}
                else:
                    c.add(reader)
        returned, input_st = self.returned, self.input_storages
        if position is None:  # program order: ops made by a rewrite (copies) have later ids than the ops around them
            pos, _ = self._read_index()
            order = sorted(groups.values(), key=lambda g: min(pos[o] for o in g.nodes))
        else:
            order = sorted(groups.values(), key=lambda g: position[g.gid])
        first_reader: dict[int, tuple[int, Group]] | None = None  # storage -> first fused group reading it
        kernels: list[Kernel] = []
        has_random = any(nodes[o].op.category == "random" for g in order for o in g.nodes)
        if has_random and self.conf.get("random_seed_kernel"):
            kernels.append(Kernel(f"{self.conf['extern_prefix']}{self.conf['random_seed_kernel']}", (), (), (),
                                  "fallback", gi))
        index = 0
        read_memo: dict[int, set[int]] = {}
        absorbed: dict[int, list[Op]] = {}  # gid -> ops computed inside another node's kernel
        for n in nodes.values():
            if n.absorbed_into is not None:
                absorbed.setdefault(member.get(n.op.oid), []).append(n.op)
        for g in order:
            gops = [nodes[o].op for o in g.nodes] + absorbed.get(g.gid, [])
            own = {op.oid for op in gops}
            reads: list[int] = []
            writes: list[int] = []
            written_here: set[int] = set()
            for op in sorted(gops, key=_OID):
                for st in self.ins[op.oid]:
                    w = writer_group.get(st)
                    if st not in written_here and st not in reads and w != g.gid:
                        reads.append(st)
                for st in self.outs[op.oid]:
                    written_here.add(st)
                    writer_group[st] = g.gid
            gid, fused = g.gid, g.kind == "fused"
            for st in sorted(written_here):
                c = consumers.get(st)  # read by another group, outside, returned, an input's: written
                if ((c and (len(c) > 1 or gid not in c)) or st in returned or st in input_st or not fused
                        or read_elsewhere(st)):
                    writes.append(st)
            reads_v = tuple(reads)
            writes_v = tuple(writes)
            if g.kind in ("extern", "fallback"):
                op = nodes[g.nodes[0]].op
                aten = op.aten[0] if op.aten else op.name
                if op.name == "scaled_dot_product_attention" and op.outputs:  # the target's fused kernel
                    aten = attention_kernel(self.conf, self.fg.values[op.outputs[0]].meta.dtype)
                if g.kind == "extern" and aten == "addmm" and self.unfuses_bias(op):
                    if first_reader is None:  # one pass over the groups, not one per addmm
                        first_reader = {}
                        recomputed: dict[int, set[int]] = {}  # gid -> what the values it computes again read
                        for o, n in nodes.items():
                            if n.absorbed_into is not None and (gid := member.get(o, -1)) != -1:
                                recomputed.setdefault(gid, set()).update(self.ins[o])
                        for i, x in enumerate(groups.values()):
                            if x.kind == "fused":
                                for st in self._group_reads(x, nodes, read_memo) | recomputed.get(x.gid, set()):
                                    first_reader.setdefault(st, (i, x))
                    users = [first_reader[st] for st in {self._st(o) for o in op.outputs} if st in first_reader]
                    if users:
                        aten = "mm"
                        min(users, key=lambda u: u[0])[1].dtypes.add("__addmm__")
                mc = self.mask_copies.get(op.oid)
                if mc is not None and position is not None and kernels and kernels[-1].kind == "generated" \
                        and kernels[-1].graph == gi:
                    # the C++ kernel group right before the call takes the copy: one function [M-CPU timm
                    # coatnet: the relative position bias copied in the q/k/v split's kernel]
                    last = kernels[-1]
                    kernels[-1] = Kernel(last.name, tuple(sorted(set(last.ops) | set(mc.nodes))),
                                         tuple(dict.fromkeys(last.reads + mc.reads)),
                                         tuple(dict.fromkeys(last.writes + mc.writes)), "generated", gi)
                elif mc is not None:  # the mask copied before the call (copy_attention_masks)
                    mnames = "_".join(sorted(set(self.kernel_name_parts([nodes[o].op for o in mc.nodes], nodes))
                                             | {aten}))
                    cat = "poi_" if self.conf["categorized_names"] else ""
                    kernels.append(Kernel(f"{self.conf['kernel_prefix']}_{cat}fused_{mnames}_{index}",
                                          tuple(mc.nodes), mc.reads, mc.writes, "generated", gi))
                    index += 1
                kernels.append(Kernel(f"{self.conf['extern_prefix']}{aten}", tuple(sorted(own)), reads_v, writes_v,
                                      g.kind, gi, inner=op.opaque == "inner"))
                if g.kind == "fallback" or aten == (op.aten[0] if op.aten else op.name):
                    # the aten call launches what eager launches for it (topk on cuda: two kernels;
                    # an addmm whose bias ATen copies into the output before cuBLAS runs, unless
                    # Inductor made it an mm above)
                    fact = default_table().ops.get(op.name)
                    n = op.eager_kernels or (fact.own_launches(self.target) if fact is not None else 1)
                    if n > 1:  # (op.eager_kernels: one op standing for a custom op's loop, __kp_repeat__)
                        kernels.append(Kernel(f"{self.conf['extern_prefix']}{aten}", tuple(sorted(own)), (), (),
                                              g.kind, gi, n - 1, inner=True))
                continue
            names = self.kernel_name_parts(gops, nodes)
            if "__addmm__" in g.dtypes:
                names = sorted(set(names) | {"addmm"})
            prefix = self.conf["kernel_prefix"]
            split = self.split(g)
            joined = "_".join(names)
            if self.conf["categorized_names"]:
                if g.red is None:
                    cat = "poi"
                elif split:
                    cat = "red"
                else:
                    rlen = (g.red[0] // g.red[1]) if (g.red[0] and g.red[1]) else None
                    inner = g.red_axis in ("inner", "all")
                    per = rlen is not None and rlen <= (self.conf["persistent_max_len"] if inner else 64)
                    cat = "per" if per else "red"
                # a group norm's statistics over a channels-last image split along the layout: partial
                # sums per channel and slice of the map, then over the channels, then over the slices,
                # three persistent kernels [M-CUDA cudagen with cuDNN's layout: conv -> GroupNorm(G, C)
                # -> silu (-> conv) of (1, C, H, W), C in 32..256, G in 1..32, H in 4..64: wherever
                # C/G x H x W > 8192, per + per + per + poi; timm poolformerv2]
                layered = split and not self.fg.layout_norms.isdisjoint(own)
                if layered:
                    cat = "per"
                kernels.append(Kernel(f"{prefix}_{cat}_fused_{joined}_{index}", tuple(sorted(own)), reads_v,
                                      writes_v if not split else (-1,), "generated", gi))
                index += 1
                if layered:
                    kernels.append(Kernel(f"{prefix}_per_fused_{joined}_{index}", tuple(sorted(own)), (-1,), (-1,),
                                          "generated", gi))
                    index += 1
                if split:
                    # the second level finishes the reduction; a full-size epilogue (softmax's
                    # normalization, layer_norm's affine) needs a third, pointwise kernel [NOTE B.4, C.2]
                    epilogue = any(op.name in ROW_EPILOGUE for op in gops)
                    kernels.append(Kernel(f"{prefix}_per_fused_{joined}_{index}", tuple(sorted(own)), (-1,),
                                          (-1,) if epilogue else writes_v, "generated", gi))
                    index += 1
                    if epilogue:
                        last = "per" if sum(op.category == "reduction" for op in gops) > 1 else "poi"
                        kernels.append(Kernel(f"{prefix}_{last}_fused_{joined}_{index}", tuple(sorted(own)),
                                              reads_v + (-1,), writes_v, "generated", gi))
                        index += 1
            else:
                kernels.append(Kernel(f"{prefix}_fused_{joined}_{index}", tuple(sorted(own)), reads_v, writes_v,
                                      "generated", gi))
                index += 1
            for o in sorted(self.concat_copies.keys() & own) if self.concat_copies else ():
                for v in self.concat_copies[o]:  # an input a ConcatKernel copies into its slice
                    kernels.append(Kernel(f"{prefix}_poi_fused_cat_{index}", (o,), (self._st(v),),
                                          tuple(self.outs[o]), "generated", gi))
                    index += 1
        return kernels

    def kernel_name_parts(self, gops: list[Op], nodes: dict[int, Node]) -> list[str]:
        names: set[str] = set()
        own = {op.oid for op in gops}
        producer = self._producers()  # once per function, not once per kernel
        for op in gops:
            names.update(op.aten)
            # views feeding the kernel's ops are part of its index arithmetic, and of its name
            stack = [*op.inputs, *op.mutates]
            seen: set[int] | None = None  # views already followed (most inputs come from no view)
            while stack:
                vid = stack.pop()
                p = producer.get(vid)
                if p is None or p.oid in own:
                    continue
                if p.category in ("view", "alloc") or p.free_reason:
                    if seen is None:
                        seen = set()
                    elif vid in seen:
                        continue
                    seen.add(vid)
                    names.update(p.aten)
                    stack.extend(p.inputs)
        # uniform-value constants (zeros, ones, full) are folded into the kernel's other work [M-CPU oracle]
        folded = {"zeros", "ones", "full", "zeros_like", "ones_like", "full_like"}
        if names - folded:
            names -= folded
        return sorted(n for n in names if n)


def locality_order(ops: list[Op], ins: dict[int, tuple[int, ...]], outs: dict[int, tuple[int, ...]]) -> dict[int, int]:
    """Position of each op after Inductor's reorder_for_locality: walking the graph backwards, the
    producers of each node's arguments whose users all come later are moved right before it, in
    argument order (the walk then goes on from the last one moved). ins / outs: the storages each
    op reads and writes (views are not ops here: a view's reader reads its base's producer)."""
    producer: dict[int, int] = {}  # storage -> its last writer so far
    args: dict[int, list[int]] = {}  # op -> the producers of what it reads, in argument order
    users: dict[int, set[int]] = {}
    for op in ops:
        a = args[op.oid] = []
        for st in ins[op.oid]:
            p = producer.get(st)
            if p is not None:
                a.append(p)
                users.setdefault(p, set()).add(op.oid)
        for st in outs[op.oid]:
            producer[st] = op.oid
    prev: dict[int, int | None] = {}
    nxt: dict[int, int | None] = {}
    last: int | None = None
    for op in ops:
        prev[op.oid], nxt[op.oid] = last, None
        if last is not None:
            nxt[last] = op.oid
        last = op.oid
    head = ops[0].oid if ops else None

    def move_before(x: int, node: int) -> None:
        nonlocal head, last
        if nxt[x] == node:
            return
        p, n = prev[x], nxt[x]  # unlink x
        if p is not None:
            nxt[p] = n
        else:
            head = n
        if n is not None:
            prev[n] = p
        else:
            last = p
        b = prev[node]  # link x between b and node
        prev[x], nxt[x] = b, node
        prev[node] = x
        if b is not None:
            nxt[b] = x
        else:
            head = x

    seen: set[int] = set()
    cur = last
    while cur is not None:
        seen.add(cur)
        for p in args[cur]:
            if p != cur and p not in seen and users[p] <= seen:
                move_before(p, cur)
        cur = prev[cur]
    rank: dict[int, int] = {}
    cur, i = head, 0
    while cur is not None:
        rank[cur] = i
        cur, i = nxt[cur], i + 1
    return rank


def _with_aten(op: Op, aten: tuple[str, ...]) -> Op:
    return replace(op, aten=aten)


def compiled_kernels(fg: FunctionGraph, target: str, conf: dict | None = None) -> list[Kernel]:
    """What torch.compile(fn) launches per call; for <module>, what the script runs (see module_kernels)."""
    return compiled_schedule(fg, target, conf)[0]


def compiled_schedule(fg: FunctionGraph, target: str, conf: dict | None = None) -> tuple[list[Kernel], FunctionGraph]:
    """compiled_kernels and the graph their value ids refer to: the graph Inductor schedules (`prepared`),
    whose rewrites add values (a copy before an attention call, a scatter's stored base) that `fg` lacks.
    Bytes and costs of the kernels are counted against it."""
    conf = conf or default_targets()[target]
    if fg.qualname == "<module>":
        return module_schedule(fg, target, conf)
    # a frame Dynamo runs eagerly; ops of eager mode only (a host check the compiled run does not make,
    # inside catalogue code that broke its graph in the eager run) are in no compiled graph either way
    if any(op.region == EAGER_REGION and op.only != "eager" for op in fg.ops):
        return module_schedule(fg, target, conf, traced=lambda op: op.region != EAGER_REGION)
    fg = prepared(fg, conf)
    repeated = schedule_repeats(fg, lambda small: Scheduler(small, target, conf, ready=True).schedule())
    return (repeated if repeated is not None else Scheduler(fg, target, conf, ready=True).schedule()), fg


def module_kernels(fg: FunctionGraph, target: str, conf: dict,
                   traced: Callable[[Op], bool] = lambda op: op.region not in (None, EAGER_REGION)) -> list[Kernel]:
    """Top-level code is not compiled: its ops run eagerly, except calls through a torch.compile'd
    function, which each run that function's compiled kernels. With `traced`, the ops of a compiled
    function that Dynamo runs outside its graphs (EAGER_REGION) run eagerly the same way."""
    return module_schedule(fg, target, conf, traced)[0]


def module_schedule(fg: FunctionGraph, target: str, conf: dict,
                    traced: Callable[[Op], bool] = lambda op: op.region not in (None, EAGER_REGION)
                    ) -> tuple[list[Kernel], FunctionGraph]:
    """module_kernels and the graph their ids refer to: `fg` with the values each compiled segment's
    preparation added (each segment numbers its new values after the last one's)."""
    out: list[Kernel] = []
    values = fg.values
    segments: list[list[Op]] = []
    stmap = {vid: v.storage for vid, v in fg.values.items()}
    # per storage, how many ops read it: one a segment does not read all of is read outside it (worked
    # out per segment over every op, 12,288 segments of a fuzzed program cost 230 s)
    readers = _readers(fg.ops, stmap)
    returned = {stmap[r] for r in fg.returns if r in stmap}
    for op in fg.ops:
        if segments and segments[-1][0].region == op.region:
            segments[-1].append(op)
        else:
            segments.append([op])
    for seg in segments:
        region = seg[0].region
        if not traced(seg[0]):
            out.extend(outside_graph_kernels(replace(fg, ops=seg), target))
            continue
        own = _readers(seg, stmap)

        def kept(st: int) -> bool:
            return st in returned or readers.get(st, 0) > own.get(st, 0)
        returns = [v for op in seg for v in op.outputs if v in stmap and kept(stmap[v])]
        returns += fg.region_returns.get(region, [])
        produced = {v for op in seg for v in op.outputs}
        inputs = sorted({v for op in seg for v in op.inputs if v not in produced})
        sched = Scheduler(replace(fg, ops=seg, returns=returns, inputs=inputs, values=values), target, conf,
                          stmap=stmap)
        out.extend(sched.schedule())
        made = ({vid: v for vid, v in sched.fg.values.items() if vid not in values}
                if sched.fg.values is not values else {})
        if made:  # its preparation made values: the next segment numbers after them
            values = {**values, **made}
            stmap = {**stmap, **{vid: v.storage for vid, v in made.items()}}
    return out, (fg if values is fg.values else replace(fg, values=values))


def _readers(ops: list[Op], stmap: dict[int, int]) -> dict[int, int]:
    """Per storage, how many of `ops` read it (an op reading it twice counts once)."""
    out: dict[int, int] = {}
    for op in ops:
        for st in {stmap[v] for v in op.inputs if v in stmap}:
            out[st] = out.get(st, 0) + 1
    return out


def outside_graph_kernels(fg: FunctionGraph, target: str) -> list[Kernel]:
    """Ops run eagerly while a compiled call runs: what eager launches for them, plus a row for each
    op that a dispatch mode sees as a view but the profiler lists as an aten call of its own
    (`profiler_row` in rules/ops.toml: unsafe_split), which the CPU oracle counts there."""
    out = eager_kernels(fg, target)
    table = default_table()
    for op in fg.ops:
        fact = table.ops.get(op.name)
        if fact is not None and fact.profiler_row.get(target, 0) and op.only != "compiled":
            out.append(Kernel(f"aten::{op.aten[0] if op.aten else op.name}", (op.oid,), (), (), "eager", op.graph,
                              fact.profiler_row[target]))
    return out
