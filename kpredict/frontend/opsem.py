"""What applying one op does to the graph: inputs, outputs, shapes, layout, and when it is free.

The op's facts come from rules/ (category, shape rule, dtype rule, free_when); this module
interprets those rules against the abstract arguments of one call site.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kpredict.frontend import concrete as C
from kpredict.frontend import shapes as S
from kpredict.frontend import strides as L
from kpredict.frontend.frame import py
from kpredict.frontend.nnshapes import RULES as NN_RULES
from kpredict.frontend.nnshapes import nn_shape
from kpredict.frontend.values import ModRef, Opaque, Py, Seq, ShapeRef, SplitRef, TensorRef
from kpredict.ir import TensorMeta, shape_numel
from kpredict.opfacts import OpFact, default_targets

if TYPE_CHECKING:
    from kpredict.frontend.interp import Interpreter

_MISSING = object()


class Args:
    """Positional/keyword access to a call's abstract arguments (after `self`)."""

    def __init__(self, args: list[object], kwargs: dict[str, object]) -> None:
        self.args = args
        self.kwargs = kwargs

    def get(self, i: int | None, name: str | None, default: object = None) -> object:
        if name is not None and name in self.kwargs:
            return self.kwargs[name]
        if i is not None and i < len(self.args):
            return self.args[i]
        return default

    def py(self, i: int | None, name: str | None, default: object = None) -> object:
        v = self.get(i, name, _MISSING)
        if v is _MISSING:
            return default
        r = py(v, _MISSING)
        return default if r is _MISSING else r

    def ints_at(self, i: int, name: str | None = None) -> list[int | None] | None:
        """Sizes given as one argument (a tuple, list or int) at position i or by keyword."""
        v = self.get(i, name, _MISSING)
        if v is _MISSING:
            return None
        return Args([v], {}).ints(0)

    def ints(self, start: int, name: str | None = None) -> list[int | None] | None:
        """Sizes given as varargs (`view(2, 3)`), one tuple (`view((2, 3))`) or a keyword."""
        if name and name in self.kwargs:
            vals = [self.kwargs[name]]
        else:
            vals = self.args[start:]
        if len(vals) == 1:
            v = vals[0]
            if isinstance(v, ShapeRef):
                return None
            if isinstance(v, Seq):
                vals = v.items
            elif isinstance(v, Py) and isinstance(v.value, (tuple, list)):
                vals = [Py(x) for x in v.value]
        out: list[int | None] = []
        for v in vals:
            x = py(v, _MISSING)
            if isinstance(x, bool) or (x is not _MISSING and not isinstance(x, int)):
                return None
            out.append(None if x is _MISSING else x)  # type: ignore[arg-type]
        return out


def _dtype_arg(v: object) -> str | None:
    if isinstance(v, ModRef):
        return S.dtype_from_dotted(v.dotted)
    return None


def dtype_asked(args: Sequence[object], kwargs: dict[str, object]) -> str | None:
    """The dtype a call asks for: `dtype=`, or a dtype among its positional arguments
    (`torch.softmax(x, -1, torch.float32)`)."""
    return _dtype_arg(kwargs.get("dtype")) or next((d for d in map(_dtype_arg, args) if d), None)


def _dims(a: Args, i: int, name: str = "dim") -> tuple[list[int] | None, bool]:
    """(dims, known): dims None means 'all dims' when known is True."""
    v = a.get(i, name, _MISSING)
    if v is _MISSING or (isinstance(v, Py) and v.value is None):
        return None, True
    x = a.py(i, name, _MISSING)
    if isinstance(x, int) and not isinstance(x, bool):
        return [x], True
    if isinstance(x, (tuple, list)) and all(isinstance(d, int) for d in x):
        return list(x), True
    return None, False


def apply_op(it: Interpreter, fact: OpFact, t: TensorRef | None, args: list[object], kwargs: dict[str, object],
             node: ast.AST, *, category: str | None = None, quiet: bool = False) -> object:
    if fact.shape in MULTI_TENSOR:
        return _multi_tensor(it, fact, [t, *args] if t is not None else list(args), kwargs, node)
    if fact.dtype == "converts" and t is not None:
        t = _converted_input(it, t, args, kwargs, node)
    if fact.wrap_scalars and any(isinstance(x, Py) and isinstance(x.value, (int, float, bool)) for x in args):
        wrapped = []
        for x in args:
            if isinstance(x, Py) and isinstance(x.value, (int, float, bool)):
                x = apply_op(it, it.fact("scalar_tensor"), None, [x], {}, node)
            wrapped.append(x)
        args = wrapped
    if any(isinstance(x, ShapeRef) for x in list(args) + list(kwargs.values())):
        args = [_shape_value(it, x) for x in args]  # F.layer_norm(x, w.shape, ...): sizes, when known
        kwargs = {k: _shape_value(it, x) for k, x in kwargs.items()}
    if fact.name == "matmul" and t is not None and args and isinstance(args[0], TensorRef):
        t, b = _matmul_operands(it, t, args[0], node)
        args = [b, *args[1:]]
    a = Args(args, kwargs)
    tensors: list[TensorRef] = [t] if t is not None else []
    for v in list(args) + list(kwargs.values()):
        if isinstance(v, TensorRef):
            tensors.append(v)
        elif isinstance(v, Seq) and fact.shape in ("cat", "stack"):
            tensors.extend(x for x in v.items if isinstance(x, TensorRef))
    metas = [it.meta(x) for x in tensors]
    first = metas[0] if metas else TensorMeta()
    contiguous = True
    reduce: S.ReduceInfo | None = None
    aten = fact.aten
    cat = category or fact.category
    n_out = 1

    # ---------------------------------------------------------- host syncs
    if cat == "sync":
        op = it.emit(fact, node, tensors[:1], [], category="sync")
        if op is not None:
            op.syncs = 1
        if fact.returns == "tensor" and t is not None:
            return it.new_tensor(TensorMeta(first.shape, first.dtype, "cpu"))
        return Opaque(fact.name)

    # ---------------------------------------------------------- dtype
    dtype = _infer_dtype(it, fact, a, tensors, metas)

    # ---------------------------------------------------------- shape and layout
    shape, contiguous, reduce, n_out, aten = _infer_shape(it, fact, a, t, tensors, metas, aten)
    device = first.device
    out_meta = TensorMeta(shape, dtype, device)

    # ---------------------------------------------------------- when the op launches nothing
    free = None
    if fact.free_when == "same_dtype" and t is not None:
        if dtype is not None and dtype == first.dtype and a.py(None, "copy", False) is not True:  # copy=True copies
            free = "same dtype: returns the input"
    elif fact.free_when == "contiguous" and t is not None:
        if it.value(t).contiguous:
            free = "input already contiguous: a view"
        elif fact.shape in ("view", "flatten") and shape is not None and _viewable(it, t, shape):
            free = "the input's layout allows a view"
    elif fact.free_when == "not_training":
        training = a.py(2, "training", True)
        if training is False or (training is None and it.settings.mode == "eval"):
            free = "training=False: returns the input"

    if cat == "view" or free:
        base = t if t is not None else (tensors[0] if tensors else None)
        if base is None:
            return it.new_tensor(out_meta)
        if fact.returns == "tuple":
            return _tuple_views(it, fact, base, a, node)
        keeps_shape = fact.free_when in ("same_dtype", "not_training")  # a free reshape keeps its new shape
        out = it.new_tensor(out_meta if cat == "view" else TensorMeta(first.shape if keeps_shape else shape, first.dtype if fact.free_when == "same_dtype" else dtype, device),
                            storage=it.value(base).storage, contiguous=contiguous if cat == "view" else it.value(base).contiguous)
        if cat == "view" and fact.shape in ("transpose", "t"):
            _track_matrix_transpose(it, fact, a, base, out)
        _view_layout(it, fact, a, base, out, free is not None)
        it.emit(fact, node, [base], [out], free_reason=free, category="view")
        return out
    if cat == "alloc":
        out = it.new_tensor(out_meta)
        it.emit(fact, node, [], [out], category="alloc")
        return out

    # ---------------------------------------------------------- in-place: writes its own input
    if fact.inplace and t is not None:
        reads = [x for x in tensors if not (fact.eager_traffic == (0, 1) and x == t)]
        it.emit(fact, node, reads if fact.name not in ("fill_", "zero_") else [], [t], mutates=(t.vid,), category=cat,
                aten=aten, reduce=reduce)
        return t

    # ---------------------------------------------------------- out=: writes the tensor given
    given = kwargs.get("out")
    if isinstance(given, TensorRef) and fact.returns == "tensor":
        it.emit(fact, node, [x for x in tensors if x != given], [given], mutates=(given.vid,), category=cat,
                aten=aten, reduce=reduce)
        return given

    if fact.name in ("reshape", "flatten", "contiguous"):
        contiguous = True  # the copy these make when they cannot return a view is contiguous
    outs = [it.new_tensor(out_meta, contiguous=contiguous)]
    # TensorIterator's fast setup sees the tensors, and a Python number of add/mul/... as a 0-dim operand
    wrapped = fact.scalar_operand and any(isinstance(x, Py) and isinstance(x.value, (int, float))
                                          for x in (*a.args, *a.kwargs.values()))
    _output_layout(it, fact, cat, _layout_source(it, t, tensors, outs[0]), outs[0], [] if wrapped else tensors)
    if n_out == 2:  # max(dim)'s indices; aminmax's max, of the input's dtype
        outs.append(it.new_tensor(TensorMeta(shape, dtype if fact.returns == "pair" else "int64", device)))
    for _ in range(fact.stats_outputs):
        stat_shape = reduce.out_shape if reduce is not None else None
        outs.append(it.new_tensor(TensorMeta(stat_shape, "float32" if dtype in ("float16", "bfloat16") else dtype, device)))
    if fact.shape == "rnn_layer":  # also writes the last step's hidden and cell states, shaped like hx and cx
        outs += [it.new_tensor(TensorMeta(m.shape, dtype, device)) for m in (metas + [TensorMeta()] * 7)[5:7]]
    it.emit(fact, node, tensors, outs, category=cat, aten=aten, reduce=reduce)
    if fact.returns == "indices":
        return outs[1]  # argsort: sort's indices; its values are written too
    if n_out == 2 or fact.shape == "rnn_layer":
        return Seq(outs, "tuple")
    return outs[0]


MULTI_TENSOR = ("foreach", "foreach_reduce")


def _multi_tensor(it: Interpreter, fact: OpFact, args: list[object], kwargs: dict[str, object],
                  node: ast.AST) -> object:
    """A `torch._foreach_*` op or a fused optimizer step: one op over lists of tensors. It reads every
    tensor of its lists (and a tensor scalar), writes the lists its schema writes (`list_writes`) or one
    new tensor per tensor of the first list (0-dim for a reduction), and launches what the target's
    `foreach` rule counts from the tensors' sizes (rules/targets.toml; one kernel where there is none)."""
    params = list(args) + list(kwargs.values())
    lists: list[tuple[int, list[TensorRef]]] = []
    scalar_list = False
    reads: list[TensorRef] = []
    for pos, v in enumerate(params):
        if isinstance(v, Seq):
            tensors = [x for x in v.items if isinstance(x, TensorRef)]
            if tensors or not v.items:
                lists.append((pos, tensors))
            else:
                scalar_list = True
            reads += tensors
        elif isinstance(v, TensorRef):
            reads.append(v)
    written = [x for pos, ts in lists if pos in fact.list_writes for x in ts]
    written += [v for pos, v in enumerate(params) if pos in fact.list_writes and isinstance(v, TensorRef)]
    if not written and (not lists or not lists[0][1]):
        return Py(None) if fact.inplace else Seq([], "list")
    if fact.inplace or fact.list_writes:
        outs = written
        result: object = Py(None)
    else:
        reduce = fact.shape == "foreach_reduce"
        outs = []
        for x in lists[0][1]:
            m = it.meta(x)
            outs.append(it.new_tensor(TensorMeta(() if reduce else m.shape, m.dtype, m.device)))
        result = Seq(list(outs), "list")
    op = it.emit(fact, node, reads, outs, mutates=tuple(x.vid for x in written), category=fact.category)
    if op is not None:
        op.eager_kernels = _multi_tensor_launches(it, fact, lists, scalar_list, node)
    if it.phase == "forward" and op is not None:
        op.only = "eager"  # Inductor's foreach (combo) kernels are not modelled: said, and left out of them
        it.compiled_not_modelled(node, f"torch.{fact.name}: Inductor's foreach kernels not modelled")
    return result


def _multi_tensor_launches(it: Interpreter, fact: OpFact, lists: list[tuple[int, list[TensorRef]]],
                           scalar_list: bool, node: ast.AST) -> int:
    """multi_tensor_apply's launches on the target (0: the op's own count, one kernel on cpu)."""
    rule = default_targets().get(it.settings.target, {}).get("foreach")
    if not rule:
        return 0
    if not lists or not lists[0][1]:
        return 0  # no list (GradScaler's _amp_update_scale_): one kernel
    depth = sum(1 for pos, ts in lists if ts and pos not in fact.list_aside)
    if not fact.inplace and not fact.list_writes and fact.shape == "foreach":
        depth += 1  # the list of results
    depth = max(1, min(depth, len(rule["max_tensors"])))
    numels = [it.meta(x).numel for x in lists[0][1]]
    if any(n is None for n in numels):
        it.unknown(node, f"torch.{fact.name} over tensors of unknown size: its launches (one per chunk group) are a lower bound")
        numels = [1 if n is None else n for n in numels]
    table = rule["max_tensors_scalarlist"] if scalar_list else rule["max_tensors"]
    n = mta_launches([int(x) for x in numels], table[depth - 1], rule["max_blocks"][depth - 1], rule["chunk"])
    if fact.shape == "foreach_reduce":
        n += rule.get("reduce_scratch_fills", {}).get(fact.aten[0] if fact.aten else "", 0)
        n += -(-len(numels) // rule["reduce_cleanup_tensors"])
    return n


def mta_launches(numels: list[int], max_tensors: int, max_blocks: int, chunk: int) -> int:
    """Launches of multi_tensor_apply over tensors of these sizes: chunks are packed into one launch
    until it holds max_tensors tensors (after a tensor's last chunk) or max_blocks chunks; a tensor
    whose chunks run over a launch carries on into the next. Empty tensors are skipped."""
    launches = tensors = blocks = 0
    for n in numels:
        if n <= 0:
            continue
        tensors += 1
        left = -(-n // chunk)
        while left:
            take = min(left, max_blocks - blocks)
            blocks += take
            left -= take
            if blocks == max_blocks or (left == 0 and tensors == max_tensors):
                launches += 1
                blocks = 0
                tensors = 0 if left == 0 else 1
    return launches + (1 if blocks else 0)


def _converted_input(it: Interpreter, t: TensorRef, args: list[object], kwargs: dict[str, object],
                     node: ast.AST) -> TensorRef:
    """softmax / log_softmax with `dtype=`: ATen converts the input first (a cast kernel), except the
    target's fused half-to-float path (rules/targets.toml `softmax_half_to_float`: cuda, a float16 input
    and dtype=float32, one kernel) [SRC pytorch aten/src/ATen/native/SoftMax.cpp softmax(input, dim,
    dtype), log_softmax likewise] [M-CPU fixtures/ops/autocast.py softmax_in_float32]."""
    wanted = dtype_asked(args, kwargs)
    have = it.meta(t).dtype
    if wanted is None or have is None or wanted == have:
        return t
    fused = default_targets().get(it.settings.target, {}).get("softmax_half_to_float", [])
    if [have, wanted] in fused:
        return t
    out = apply_op(it, it.fact("_to_copy"), t, [], {"dtype": ModRef(f"torch.{wanted}")}, node)
    return out if isinstance(out, TensorRef) else t


def _shape_value(it: Interpreter, v: object) -> object:
    if isinstance(v, ShapeRef):
        shape = it.meta(TensorRef(v.vid)).shape
        if shape is not None and None not in shape:
            return Py(tuple(shape))
    return v


def _track_matrix_transpose(it: Interpreter, fact: OpFact, a: Args, base: TensorRef, out: TensorRef) -> None:
    """Remember views that are a contiguous tensor with its last two dims swapped (k.transpose(-2, -1)):
    their batch dims still merge without a copy, and swapping back gives a contiguous tensor."""
    shape = it.meta(base).shape
    if shape is None or len(shape) < 2:
        return
    if fact.shape == "t":
        d0, d1 = 0, 1
    else:
        d0, d1 = a.py(0, "dim0", 0), a.py(1, "dim1", 1)
        if not isinstance(d0, int) or not isinstance(d1, int):
            return
    last_two = {S.norm_dim(d0, len(shape)), S.norm_dim(d1, len(shape))} == {len(shape) - 2, len(shape) - 1}
    if not last_two:
        return
    if it.value(base).contiguous:
        it.shared.matrix_t.add(out.vid)
    elif base.vid in it.shared.matrix_t:
        it.value(out).contiguous = True


def _matmul_operands(it: Interpreter, x: TensorRef, y: TensorRef, node: ast.AST) -> tuple[TensorRef, TensorRef]:
    """Eager matmul reshapes its operands to 2-D or 3-D first; a strided operand that cannot be
    reshaped as a view is copied (a `clone` kernel) [SRC aten/src/ATen/native/LinearAlgebra.cpp
    _matmul_impl; M-CPU fixtures/models/causal_attention.py]."""
    rx, ry = it.meta(x).shape, it.meta(y).shape
    if rx is None or ry is None:
        return x, y

    def copied(v: TensorRef) -> TensorRef:
        return it.apply_fact(it.fact("clone"), v, [], {}, node)  # type: ignore[return-value]

    if len(rx) >= 3 and len(ry) <= 2:  # folded into one mm: x.reshape(-1, k)
        folded = (None, rx[-1]) if rx[-1] is not None else None
        ok = it.value(x).contiguous or (folded is not None and _viewable(it, x, (shape_numel(rx),) + folded[1:]))
        return (x if ok else copied(x)), y
    if len(rx) >= 3 or len(ry) >= 3:  # batched: batch dims merged into one
        def batch_ok(v: TensorRef, shape: tuple) -> bool:
            if len(shape) <= 3 or it.value(v).contiguous:
                return True
            st = it.strides_of(v)
            if st is not None and None not in shape:
                return L.view_strides(shape, st, (shape_numel(shape[:-2]),) + tuple(shape[-2:])) is not None
            return v.vid in it.shared.matrix_t
        x = x if batch_ok(x, rx) else copied(x)
        y = y if batch_ok(y, ry) else copied(y)
    return x, y


def _viewable(it: Interpreter, t: TensorRef, shape: tuple) -> bool:
    """Whether `t.view(shape)` exists (a reshape to it needs no copy)."""
    src, st = it.meta(t).shape, it.strides_of(t)
    if src is None or st is None or None in src:
        return False
    sizes = list(shape)
    if sizes.count(None) == 1 and shape_numel(src) is not None:
        known = shape_numel(tuple(d for d in sizes if d is not None)) or 1
        sizes = [(shape_numel(src) // known) if d is None else d for d in sizes]  # type: ignore[operator]
    if None in sizes or shape_numel(tuple(sizes)) != shape_numel(src):
        return False
    return L.view_strides(tuple(src), st, tuple(sizes)) is not None


_KEEPS_LAYOUT = ("pointwise", "random")
_NEW_LAYOUT = frozenset({"contiguous", "reshape", "flatten", "cat", "stack", "index", "embedding", "gather",
                         "index_select", "conv_layout", "scalar_tensor", "where"})


def _layout_source(it: Interpreter, t: TensorRef | None, tensors: list[TensorRef], out: TensorRef) -> TensorRef | None:
    """The input whose dim order an elementwise result takes: the first of the output's own shape.
    TensorIterator orders dims by the operands' strides, skipping those broadcast in a dim, so a
    broadcast operand first (`weight * x`, the RMSNorm of transformers) does not decide; the full one
    does [SRC aten/src/ATen/TensorIterator.cpp reorder_dimensions]."""
    first = t if t is not None else (tensors[0] if tensors else None)
    oshape = it.meta(out).shape
    if first is None or oshape is None or it.meta(first).shape == oshape:
        return first
    return next((x for x in ([t] if t is not None else []) + tensors if it.meta(x).shape == oshape), first)


def _output_layout(it: Interpreter, fact: OpFact, cat: str, src: TensorRef | None, out: TensorRef,
                   operands: Sequence[TensorRef] = ()) -> None:
    """TensorIterator lays an elementwise op's output out in its input's dim order; attention's
    output follows its query (empty_like) on cpu, and is (B, S, H, D) in memory from the cuda
    kernels [SRC aten/src/ATen/TensorIterator.cpp compute_strides; M-CPU fixtures/models/gpt.py,
    llama_block.py: no copy for y.transpose(1, 2).contiguous(); M-CUDA H200 torch 2.11:
    fixtures/libraries/transformers_lib.py sdpa_causal, no copy after a contiguous query]."""
    if src is None:
        return
    if fact.shape == "pool":
        _pool_layout(it, src, out)
        return
    if not (cat in _KEEPS_LAYOUT and fact.name not in _NEW_LAYOUT) and fact.shape != "sdpa":
        return
    st, shape, oshape = it.strides_of(src), it.meta(src).shape, it.meta(out).shape
    if st is None or shape is None or oshape is None or None in oshape or len(oshape) != len(shape):
        return
    if fact.shape != "sdpa" and tuple(oshape) != tuple(shape):
        return
    if fact.shape == "sdpa" and len(oshape) == 4 and _sdpa_layout(it.settings.target) == "bshd":
        b, h, s, d = oshape  # (B, H, S, D) seen over a contiguous (B, S, H, D) buffer
        it.set_strides(out, (s * h * d, d, h * d, 1))
        return
    if L.is_contiguous(tuple(shape), st):
        return
    if len(oshape) == 4 and operands and _all_channels_last(it, operands, tuple(oshape)):
        # TensorIterator's fast setup: operands of one shape, all channels-last contiguous (size-1 dims
        # aside; no Python number among them), give an output of channels-last's own strides [SRC aten/src/ATen/TensorIterator.cpp
        # compute_fast_setup_type; M-CPU diffusers 0.42.1 UNet2DModel: add of two (1, 64, 8, 8) of strides
        # (64, 1, 512, 64) writes (4096, 1, 512, 64)]
        n, c, h, w = oshape
        it.set_strides(out, (h * w * c, 1, w * c, c))
        return
    it.set_strides(out, L.dense_like(tuple(oshape), st))


def _all_channels_last(it: Interpreter, operands: Sequence[TensorRef], oshape: tuple) -> bool:
    for x in operands:
        st, shape = it.strides_of(x), it.meta(x).shape
        if st is None or shape is None or tuple(shape) != oshape or not L.channels_last_contiguous(oshape, st):
            return False
    return True


def _pool_layout(it: Interpreter, src: TensorRef, out: TensorRef) -> None:
    """ATen's 2-D pooling writes a channels-last output for an input in channels-last order (its
    suggest_memory_format), contiguous otherwise [SRC aten/src/ATen/native/DilatedMaxPool2d.cpp,
    AveragePool2d.cpp: memory_format = input.suggest_memory_format(); timm's sam2 pools q permuted from
    (B, H, W, C), and the attention after it reads a last dim of stride 1]."""
    st, shape, oshape = it.strides_of(src), it.meta(src).shape, it.meta(out).shape
    if st is None or shape is None or oshape is None or None in oshape or len(shape) != 4 or len(oshape) != 4:
        return
    if None in shape or L.is_contiguous(tuple(shape), st) or not L.nhwc_ordered(tuple(shape), st):
        return
    n, c, h, w = oshape
    it.set_strides(out, (h * w * c, 1, w * c, c))


def _sdpa_layout(target: str) -> str:
    """Where the fused attention kernels put their output (rules/targets.toml sdpa_output_layout)."""
    return default_targets().get(target, {}).get("sdpa_output_layout", "query")


def _view_layout(it: Interpreter, fact: OpFact, a: Args, base: TensorRef, out: TensorRef, free: bool) -> None:
    """The strides of a view (or of an op that returns its input), from its base's strides."""
    st, shape, oshape = it.strides_of(base), it.meta(base).shape, it.meta(out).shape
    if st is None or shape is None or oshape is None or None in shape or None in oshape:
        return
    shape, oshape = tuple(shape), tuple(oshape)
    new: tuple | None = None
    rule = fact.shape
    if free and oshape == shape:
        new = st
    elif rule == "transpose":
        d0, d1 = a.py(0, "dim0", 0), a.py(1, "dim1", 1)
        if isinstance(d0, int) and isinstance(d1, int) and shape:
            new = L.transposed(st, S.norm_dim(d0, len(shape)), S.norm_dim(d1, len(shape)))
    elif rule == "t" and len(shape) == 2:
        new = L.transposed(st, 0, 1)
    elif rule == "narrow" and len(oshape) == len(shape):
        new = st  # a part of one dim: the base's strides
    elif rule == "permute":
        dims = a.ints(0, "dims")
        if dims and None not in dims and len(dims) == len(shape):
            new = L.permuted(st, [S.norm_dim(d, len(shape)) for d in dims])  # type: ignore[arg-type]
    elif rule == "movedim":
        perm = _movedim_perm(a, len(shape))
        new = tuple(st[d] for d in perm) if perm is not None else None
    elif rule == "unfold":
        u = _unfold_args(a, shape)
        new = st[:u[0]] + (st[u[0]] * u[2],) + st[u[0] + 1:] + (st[u[0]],) if u is not None else None
    elif rule == "as_strided":
        strides = a.ints_at(1, "stride")
        new = tuple(strides) if strides is not None and None not in strides and len(strides) == len(oshape) else None  # type: ignore[arg-type]
    elif rule == "view_as_real":
        new = tuple(x * 2 for x in st) + (1,)
    elif rule == "view_as_complex":
        new = tuple(x // 2 for x in st[:-1]) if st[-1:] == (1,) and all(x % 2 == 0 for x in st[:-1]) else None
    elif rule == "expand":
        off = len(oshape) - len(shape)
        new = tuple(0 if i < off or shape[i - off] != oshape[i] else st[i - off] for i in range(len(oshape)))
    elif shape_numel(oshape) == shape_numel(shape):
        new = L.view_strides(shape, st, oshape)
    if new is not None:
        it.set_strides(out, new)


# more pieces than this from unbind / split / chunk are left unnamed (a SplitRef, as for an unknown
# count): a dim sized by a large symbolic value (boxes.unbind(-1) with its last dim unknown, then given
# a met size) made a million views, 3 minutes and 8.8 GB on torchvision's detection/_utils.py
MAX_PIECES = 1024


def _tuple_views(it: Interpreter, fact: OpFact, base: TensorRef, a: Args, node: ast.AST) -> object:
    m = it.meta(base)
    shape = m.shape
    if fact.shape == "unbind":
        dim = a.py(0, "dim", 0)
        n = shape[dim] if shape is not None and isinstance(dim, int) and -len(shape) <= dim < len(shape) else None
        if n is None:
            return SplitRef(base.vid, "unbind")
        if n > MAX_PIECES:
            return SplitRef(base.vid, "unbind")
        sub = tuple(d for i, d in enumerate(shape) if i != S.norm_dim(dim, len(shape)))  # type: ignore[arg-type]
        metas = [TensorMeta(sub, m.dtype, m.device)] * n
    else:
        dim = a.py(1, "dim", 0)
        if shape is None or not isinstance(dim, int) or not (-len(shape) <= dim < len(shape)):
            count = a.py(0, "chunks", None) if fact.shape == "chunk" else None
            if isinstance(count, int) and fact.shape == "chunk":
                metas = [TensorMeta(None, m.dtype, m.device)] * count
            else:
                return SplitRef(base.vid, fact.name)
        else:
            d = S.norm_dim(dim, len(shape))
            size = shape[d]
            arg0 = a.py(0, "split_size_or_sections" if fact.shape == "split" else "chunks", None)
            sizes: list[int] = []
            if size is None:
                if fact.shape == "chunk" and isinstance(arg0, int):
                    metas = [TensorMeta(None, m.dtype, m.device)] * arg0
                else:
                    return SplitRef(base.vid, fact.name)
            else:
                if fact.shape == "chunk" and isinstance(arg0, int) and arg0 > 0:
                    step = max(1, -(-size // arg0))  # a dim of size 0 (an empty slice): no chunk to make
                    sizes = [min(step, size - i) for i in range(0, size, step)]
                elif fact.shape == "split" and isinstance(arg0, int) and arg0 > 0:
                    sizes = [min(arg0, size - i) for i in range(0, size, arg0)]
                elif fact.shape == "split" and isinstance(arg0, (tuple, list)):
                    sizes = list(arg0)
                else:
                    return SplitRef(base.vid, fact.name)
                if len(sizes) > MAX_PIECES:
                    return SplitRef(base.vid, fact.name)
                metas = [TensorMeta(shape[:d] + (s,) + shape[d + 1:], m.dtype, m.device) for s in sizes]
    outs = []
    contiguous = it.value(base).contiguous
    for mm in metas:
        o = it.new_tensor(mm, storage=it.value(base).storage,
                          contiguous=contiguous and (fact.shape == "unbind" and (a.py(0, "dim", 0) == 0) or
                                                     (fact.shape != "unbind" and a.py(1, "dim", 0) == 0)))
        outs.append(o)
    st = it.strides_of(base)
    if st is not None and shape is not None:
        if fact.shape == "unbind":
            d = S.norm_dim(a.py(0, "dim", 0), len(shape))
            piece = st[:d] + st[d + 1:]
        else:
            piece = st  # pieces along a dim keep the base's strides
        for o in outs:
            if it.meta(o).shape is not None and None not in it.meta(o).shape and len(piece) == len(it.meta(o).shape):
                it.set_strides(o, piece)
    it.emit(fact, node, [base], outs, category="view")
    return Seq(outs, "tuple")


def _infer_dtype(it: Interpreter, fact: OpFact, a: Args, tensors: list[TensorRef], metas: list[TensorMeta]) -> str | None:
    rule = fact.dtype
    first = metas[0].dtype if metas else None
    explicit = _dtype_arg(a.get(None, "dtype"))
    if rule == "same":
        return first
    if rule == "bool":
        return "bool"
    if rule in ("int64", "float32", "float16", "bfloat16", "float64", "int32", "uint8", "int8", "int16", "complex64"):
        return rule
    if rule == "promote":
        scalars = [x.value for x in a.args if isinstance(x, Py)]
        return S.promote([m.dtype for m in metas], scalars)
    if rule == "float":
        p = S.promote([m.dtype for m in metas], [x.value for x in a.args if isinstance(x, Py)])
        return p if p is None or p in ("float16", "bfloat16", "float32", "float64") else "float32"
    if rule == "where":
        return S.promote([m.dtype for m in metas[1:]] or [None], [x.value for x in a.args[1:] if isinstance(x, Py)])
    if rule == "sum":
        if explicit:
            return explicit
        return "int64" if first in ("bool", "int8", "uint8", "int16", "int32", "int64") else first
    if rule == "converts":  # softmax(x, dim, dtype=...): the result is of the dtype asked for
        return dtype_asked(a.args, a.kwargs) or first
    if rule == "arg":
        for v in list(a.args) + list(a.kwargs.values()):
            d = _dtype_arg(v)
            if d:
                return d
        return first
    if rule == "like":
        return metas[1].dtype if len(metas) > 1 else None
    if rule == "creation":
        if explicit:
            return explicit
        return "int64" if fact.name == "randint" else "float32"
    if rule == "creation_like":
        return explicit or first
    if rule == "lifted_scalar":  # x[i] = v lifts v into a 0-dim tensor of x's dtype (given as dtype=)
        if explicit:
            return explicit
        v = a.py(0, None, None)
        return "bool" if isinstance(v, bool) else "int64" if isinstance(v, int) else \
            "float32" if isinstance(v, float) else None
    if rule == "creation_full":
        if explicit:
            return explicit
        fill = a.py(1, "fill_value", None)
        if isinstance(fill, bool):
            return "bool"
        if isinstance(fill, int):
            return "int64"
        return "float32"
    if rule == "arange":
        if explicit:
            return explicit
        vals = [v for v in _arange_range(a) if v is not None]
        if all(isinstance(v, int) or v is None for v in vals) and any(v is not None for v in vals):
            return "int64"
        return "float32"
    return first


def _movedim_perm(a: Args, ndim: int) -> list[int] | None:
    """The permutation `x.movedim(source, destination)` applies: the moved dims at their destinations,
    the others in their order [SRC aten/src/ATen/native/TensorShape.cpp movedim]."""
    src, dst = a.get(0, "source"), a.get(1, "destination")
    src_l, dst_l = Args([src], {}).ints(0), Args([dst], {}).ints(0)
    if not src_l or not dst_l or None in src_l or None in dst_l or len(src_l) != len(dst_l):
        return None
    try:
        s_n = [S.norm_dim(d, ndim) for d in src_l]  # type: ignore[arg-type]
        d_n = [S.norm_dim(d, ndim) for d in dst_l]  # type: ignore[arg-type]
    except (IndexError, ValueError):
        return None
    if not all(0 <= d < ndim for d in s_n + d_n) or len(set(s_n)) != len(s_n) or len(set(d_n)) != len(d_n):
        return None
    perm: list[int | None] = [None] * ndim
    for s_d, d_d in zip(s_n, d_n):
        perm[d_d] = s_d
    rest = iter(d for d in range(ndim) if d not in s_n)
    return [p if p is not None else next(rest) for p in perm]


def _unfold_args(a: Args, shape: tuple | None) -> tuple[int, int, int] | None:
    """(dim, size, step) of `x.unfold(dimension, size, step)` on a known dim, or None."""
    d, size, step = a.py(0, "dimension", None), a.py(1, "size", None), a.py(2, "step", None)
    if shape is None or not all(isinstance(v, int) for v in (d, size, step)) or step <= 0:  # type: ignore[operator]
        return None
    if not -len(shape) <= d < len(shape):  # type: ignore[operator]
        return None
    d = S.norm_dim(d, len(shape))  # type: ignore[arg-type]
    return (d, size, step) if isinstance(shape[d], int) and shape[d] >= size else None  # type: ignore[return-value]


def _arange_range(a: Args) -> tuple[object, object, object]:
    """(start, end, step) of an arange call, None where not known (concrete.arange_bounds)."""
    return C.arange_bounds([a.py(i, None, None) for i in range(len(a.args))],
                           {k: a.py(None, k, None) for k in ("start", "end", "step") if k in a.kwargs})


def _infer_shape(it: Interpreter, fact: OpFact, a: Args, t: TensorRef | None, tensors: list[TensorRef],
                 metas: list[TensorMeta], aten: tuple[str, ...]):
    rule = fact.shape
    first = metas[0] if metas else TensorMeta()
    contiguous = True
    reduce = None
    n_out = 1
    shape = None
    base_contig = it.value(t).contiguous if t is not None else True
    if rule == "same" or rule == "like":
        shape = first.shape
        if fact.category in ("pointwise",) and t is not None and not base_contig and len(tensors) == 1:
            contiguous = fact.name == "clone" and False or (fact.name in ("contiguous", "reshape", "flatten"))
        if fact.category == "reduction" and fact.name in ("_softmax", "_log_softmax", "cumsum", "cumprod"):
            dim = a.py(0, "dim", -1)
            if first.shape is not None and isinstance(dim, int) and -len(first.shape) <= dim < len(first.shape):
                reduce = S.reduce_shape(first.shape, [dim], True)
            else:
                reduce = S.ReduceInfo(first.shape, None, "unknown")
        elif fact.category == "reduction" and fact.name in ("layer_norm", "rms_norm"):
            ns = a.ints_at(0, "normalized_shape")
            if first.shape is not None and ns:
                reduce = S.reduce_shape(first.shape, list(range(-len(ns), 0)), True)
            else:
                reduce = S.ReduceInfo(first.shape, None, "inner")
    elif rule == "broadcast":
        shape = S.broadcast([m.shape for m in metas]) if metas else None
        if t is not None and not base_contig and all(m.shape == first.shape for m in metas[1:]) and len(metas) == 1:
            contiguous = False
    elif rule in ("reduce", "reduce_p"):
        skip = 1 if rule == "reduce_p" else 0  # norm(x, p, dim, keepdim): the order comes first
        dims, known = _dims(a, skip)
        keepdim = bool(a.py(1 + skip, "keepdim", False))
        if (fact.returns == "max" and dims is not None) or fact.returns == "pair":
            n_out = 2
        if known:
            reduce = S.reduce_shape(first.shape, dims, keepdim)
            shape = reduce.out_shape
        else:
            reduce = S.ReduceInfo(None, None, "unknown")
    elif rule == "matmul":
        if len(metas) >= 2:
            shape = S.matmul_shape(metas[0].shape, metas[1].shape)
            if metas[0].shape is not None and metas[1].shape is not None:
                ra, rb = len(metas[0].shape), len(metas[1].shape)
                if fact.name in ("matmul", "mm") or fact.aten == ("mm",):
                    aten = ("bmm",) if (ra >= 3 and rb >= 3) else ("mm",)
    elif rule == "linear":
        x, w = (metas + [TensorMeta(), TensorMeta()])[:2]
        if x.shape is not None and w.shape is not None and len(w.shape) == 2:
            shape = x.shape[:-1] + (w.shape[0],)
            if S.WATCH is not None and x.shape:
                S.meet(x.shape[-1], w.shape[1])
        bias = a.get(1, "bias")
        aten = ("addmm",) if isinstance(bias, TensorRef) else ("mm",)
    elif rule == "addmm":
        if len(metas) >= 3:
            shape = S.matmul_shape(metas[1].shape, metas[2].shape)
    elif rule == "histc":  # (bins,) counts, 100 by default
        bins = a.py(1, "bins", 100)
        shape = (bins,) if isinstance(bins, int) and not isinstance(bins, bool) else (None,)
    elif rule == "grouped_mm":  # (S, K) rows in groups against (E, K, N) -> (S, N); 3-D x 3-D: a bmm
        if len(metas) >= 2 and metas[0].shape is not None and metas[1].shape is not None:
            a_, b_ = metas[0].shape, metas[1].shape
            if len(a_) == 2 and len(b_) == 3:
                shape = (a_[0], b_[2])
            elif len(a_) == 3 and len(b_) == 3:
                shape = S.matmul_shape(a_, b_)
    elif rule == "view":
        sizes = a.ints(0, "shape")
        shape = S.view_shape(first.shape, sizes) if sizes is not None else None
        contiguous = base_contig
    elif rule == "movedim":
        perm = _movedim_perm(a, len(first.shape)) if first.shape is not None else None
        shape = tuple(first.shape[d] for d in perm) if perm is not None else None  # type: ignore[index]
        contiguous = perm == sorted(perm) if perm is not None else False
    elif rule == "unfold":
        u = _unfold_args(a, first.shape)
        if u is not None:
            d, size, step = u
            n = first.shape[d]  # type: ignore[index]
            shape = first.shape[:d] + ((n - size) // step + 1,) + first.shape[d + 1:] + (size,)  # type: ignore[operator,index]
        contiguous = False
    elif rule == "as_strided":
        sizes = a.ints_at(0, "size")
        shape = tuple(sizes) if sizes is not None and None not in sizes else None
        contiguous = False
    elif rule == "view_as_real":
        shape = first.shape + (2,) if first.shape is not None else None
        contiguous = base_contig
    elif rule == "view_as_complex":
        shape = first.shape[:-1] if first.shape is not None and first.shape[-1:] == (2,) else None
        contiguous = base_contig
    elif rule == "cdist":
        if len(metas) >= 2 and first.shape is not None and metas[1].shape is not None and len(metas[1].shape) >= 2:
            shape = first.shape[:-1] + (metas[1].shape[-2],)
    elif rule == "unflatten":
        d, sizes = a.py(0, "dim", None), a.ints(1, "sizes")
        if isinstance(d, int) and sizes is not None and first.shape is not None and -len(first.shape) <= d < len(first.shape):
            d = S.norm_dim(d, len(first.shape))
            part = S.view_shape((first.shape[d],), sizes)
            shape = first.shape[:d] + part + first.shape[d + 1:] if part is not None else None
        contiguous = base_contig
    elif rule == "flatten":
        shape = S.flatten_shape(first.shape, a.py(0, "start_dim", 0), a.py(1, "end_dim", -1))
    elif rule == "transpose":
        d0, d1 = a.py(0, "dim0", 0), a.py(1, "dim1", 1)
        shape = S.transpose_shape(first.shape, d0, d1) if isinstance(d0, int) and isinstance(d1, int) else None
        contiguous = False
    elif rule == "t":
        shape = tuple(reversed(first.shape)) if first.shape is not None else None
        contiguous = first.shape is not None and len(first.shape) < 2
    elif rule == "permute":
        dims = a.ints(0, "dims")
        shape = S.permute_shape(first.shape, dims) if dims and None not in dims else None  # type: ignore[arg-type]
        contiguous = (dims is not None and dims == sorted(dims, key=lambda d: -1 if d is None else d)
                      and all(d >= 0 for d in dims if d is not None))
    elif rule == "unsqueeze":
        d = a.py(0, "dim", None)
        shape = S.unsqueeze_shape(first.shape, d) if isinstance(d, int) else None
        contiguous = base_contig
    elif rule == "narrow":
        d, n = a.py(0, "dim", None), a.py(2, "length", None)
        if isinstance(d, int) and isinstance(n, int) and first.shape is not None \
                and -len(first.shape) <= d < len(first.shape):
            d = S.norm_dim(d, len(first.shape))
            shape = first.shape[:d] + (n,) + first.shape[d + 1:]
            # a part of the outermost dim that is not 1 is a contiguous block
            contiguous = base_contig and (n == first.shape[d] or all(x == 1 for x in first.shape[:d]))
    elif rule == "squeeze":
        d = a.py(0, "dim", None)
        shape = S.squeeze_shape(first.shape, d if isinstance(d, int) else None)
        contiguous = base_contig
    elif rule == "expand":
        sizes = a.ints(0, "size")
        shape = S.expand_shape(first.shape, sizes) if sizes is not None else None
        contiguous = shape == first.shape and shape is not None
    elif rule == "creation":
        sizes = a.ints(0, "size")
        if fact.name == "randint":
            sizes = a.ints_at(2, "size")
        shape = tuple(sizes) if sizes is not None and None not in sizes else None
    elif rule == "eye":  # torch.eye(n, m=n)
        n, m = a.py(0, "n", None), a.py(1, "m", None)
        if type(n) is int:
            shape = (n, m if type(m) is int else n)
    elif rule == "linspace":  # torch.linspace / logspace(start, end, steps)
        steps = a.py(2, "steps", None)
        if type(steps) is int:
            shape = (steps,)
    elif rule == "sort":  # values and int64 indices, each of the input's shape; rows along dim, as a scan's
        shape, n_out = first.shape, 2
        dim = a.py(0, "dim", -1)
        if first.shape is not None and isinstance(dim, int) and -len(first.shape) <= dim < len(first.shape):
            reduce = S.reduce_shape(first.shape, [dim], True)
        else:
            reduce = S.ReduceInfo(first.shape, None, "unknown")
    elif rule == "second":  # searchsorted(sorted_sequence, values): the values' shape
        shape = metas[1].shape if len(metas) > 1 else None
    elif rule == "creation_full":
        sizes = a.ints_at(0, "size")
        shape = tuple(sizes) if sizes is not None and None not in sizes else None
    elif rule == "arange":
        start, end, step = _arange_range(a)
        if all(isinstance(v, (int, float)) for v in (start, end, step)) and step:
            shape = (max(0, math.ceil((end - start) / step)),)  # type: ignore[operator]
    elif rule == "cat":
        d = a.py(1, "dim", 0)
        shape = S.cat_shape([m.shape for m in metas], d) if isinstance(d, int) else None
    elif rule == "einsum":
        shape = _einsum_shape(a.py(0, "equation", None), [m.shape for m in metas])
    elif rule == "stack":
        d = a.py(1, "dim", 0)
        shape = S.stack_shape([m.shape for m in metas], d) if isinstance(d, int) else None
    elif rule == "index":
        # x[:, idx], one integer index tensor on dim d, every other index whole (the interpreter says so
        # with `index_dim`): x.shape[:d] + idx.shape + x.shape[d + 1:]
        d = a.py(None, "index_dim", None)
        if isinstance(d, int) and len(metas) == 2 and first.shape is not None and d < len(first.shape) \
                and metas[1].shape is not None and metas[1].dtype != "bool":
            shape = first.shape[:d] + metas[1].shape + first.shape[d + 1:]
        elif isinstance(given := a.py(None, "index_shape", None), tuple):
            shape = given  # any other advanced index, sized by the interpreter (shapes.advanced_index_shape)
    elif rule == "index_select":
        # x.index_select(d, idx): x's shape with dim d as long as the (0-d or 1-d) index
        d = a.py(0, "dim", None)
        if isinstance(d, int) and first.shape is not None and len(metas) > 1 and metas[1].numel is not None \
                and -len(first.shape) <= d < len(first.shape):
            out = list(first.shape)
            out[S.norm_dim(d, len(out))] = metas[1].numel
            shape = tuple(out)
    elif rule == "gather":
        shape = metas[1].shape if len(metas) > 1 else None
    elif rule == "one_hot":
        n = a.py(0, "num_classes", -1)
        if first.shape is not None and type(n) is int and n > 0:
            shape = first.shape + (n,)
    elif rule == "embedding":
        if len(metas) >= 2 and metas[0].shape is not None and metas[1].shape is not None and len(metas[1].shape) == 2:
            shape = metas[0].shape + (metas[1].shape[1],)
    elif rule == "scalar":
        shape = ()
    elif rule == "sdpa":
        if len(metas) >= 3 and metas[0].shape is not None and metas[2].shape is not None:
            shape = metas[0].shape[:-1] + metas[2].shape[-1:]
        # the attention kernels also write the per-row logsumexp (B, H, L) [M-CPU probes cases5.py:sdpa_drop]
        reduce = S.ReduceInfo(metas[0].shape[:-1] if metas and metas[0].shape is not None else None, None, "inner")
    elif rule == "rnn_layer":
        # mkldnn_rnn_layer(input (T, B, I), w_ih, w_hh, b_ih, b_hh, hx (B, H), cx (B, H), ...): output (T, B, H)
        if len(metas) >= 7 and first.shape is not None and metas[5].shape is not None and len(first.shape) == 3:
            shape = first.shape[:2] + metas[5].shape[-1:]
    elif rule in NN_RULES:
        r = nn_shape(rule, fact.name, a, metas)
        shape, reduce, n_out = r.shape, r.reduce, r.n_out
    return shape, contiguous, reduce, n_out, aten


def _einsum_shape(eq: object, shapes: list[tuple[int | None, ...] | None]) -> tuple[int | None, ...] | None:
    """torch.einsum's output shape from its equation (explicit `->` or implicit: the letters used
    once, in alphabetical order); size-1 dims broadcast. No ellipsis."""
    if not isinstance(eq, str) or "." in eq:
        return None
    eq = eq.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes) or any(sh is None or len(sh) != len(tm) for sh, tm in zip(shapes, terms)):
        return None
    if not arrow:
        out = "".join(sorted(ch for ch in set(lhs) - {","} if lhs.count(ch) == 1))
    size: dict[str, int | None] = {}
    for sh, tm in zip(shapes, terms):
        for ch, d in zip(tm, sh):  # type: ignore[arg-type]
            if ch not in size or size[ch] == 1:
                size[ch] = d
    if any(ch not in size for ch in out):
        return None
    return tuple(size[ch] for ch in out)
