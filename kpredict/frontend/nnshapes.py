"""Shape rules of the torch.nn functional ops (convolution, pooling, normalization, losses).

Named by the `shape` field of their facts in rules/ops.toml. Each rule returns the output shape,
the reduction it performs (for the per-row statistics some of these ops also write) and how many
outputs it has; anything not known statically stays None, so bytes are only reported when every
size is known. Formulas are those of torch's documentation for each op.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kpredict.frontend import shapes as S
from kpredict.ir import TensorMeta

if TYPE_CHECKING:
    from kpredict.frontend.opsem import Args

Shape = tuple[int | None, ...] | None
RULES = frozenset({"conv", "conv_transpose", "pool", "adaptive_pool", "batch_norm", "group_norm", "loss",
                   "nll_loss", "pixel_shuffle", "pixel_unshuffle", "upsample", "glu", "same_stats", "mha", "outer",
                   "pad", "topk", "repeat", "tile", "im2col", "col2im"})


@dataclass(slots=True)
class NNShape:
    shape: Shape
    reduce: S.ReduceInfo | None = None
    n_out: int = 1


def _tuple(v: object, n: int, default: int) -> list[int | None]:
    if v is None:
        return [default] * n
    if isinstance(v, int) and not isinstance(v, bool):
        return [v] * n
    if isinstance(v, (tuple, list)) and len(v) == n and all(isinstance(x, int) or x is None for x in v):
        return list(v)
    if isinstance(v, (tuple, list)) and len(v) == 1 and isinstance(v[0], int):
        return [v[0]] * n
    return [None] * n


def _prod(xs: tuple[int | None, ...] | list[int | None]) -> int | None:
    n = 1
    for x in xs:
        if x is None:
            return None
        n *= x
    return n


def conv_out(size: int | None, k: int | None, s: int | None, p: int | None, d: int | None,
             ceil: bool = False) -> int | None:
    if None in (size, k, s, p, d) or not s:
        return None
    span = size + 2 * p - d * (k - 1) - 1  # type: ignore[operator]
    out = (math.ceil(span / s) if ceil else span // s) + 1  # type: ignore[operator]
    if ceil and (out - 1) * s >= size + p:  # type: ignore[operator]
        out -= 1  # the last window must start inside the input or its left padding
    return out


def nn_shape(rule: str, fact_name: str, a: Args, metas: list[TensorMeta]) -> NNShape:
    """The rule's result; inputs of a rank or kind the formula does not fit give unknown sizes."""
    try:
        return _nn_shape(rule, fact_name, a, metas)
    except (IndexError, TypeError, ValueError, ZeroDivisionError):
        return NNShape(None)


def _nn_shape(rule: str, fact_name: str, a: Args, metas: list[TensorMeta]) -> NNShape:
    x = metas[0].shape if metas else None
    if rule == "conv":
        w = metas[1].shape if len(metas) > 1 else None
        if x is None or w is None:
            return NNShape(None)
        nsp = len(w) - 2
        batched = len(x) == nsp + 2
        spatial = x[-nsp:]
        if S.WATCH is not None and len(x) >= nsp + 1 and w[1] is not None:
            S.meet(x[-nsp - 1], w[1] * (a.py(6, "groups", 1) or 1))  # input channels: the weight's x groups
        stride = _tuple(a.py(2, "stride", 1), nsp, 1)
        dil = _tuple(a.py(4, "dilation", 1), nsp, 1)
        pad_arg = a.py(3, "padding", 0)
        if pad_arg == "same":
            out = list(spatial)
        else:
            pad = [0] * nsp if pad_arg == "valid" else _tuple(pad_arg, nsp, 0)
            out = [conv_out(spatial[i], w[2 + i], stride[i], pad[i], dil[i]) for i in range(nsp)]
        lead = (x[0], w[0]) if batched else (w[0],)
        return NNShape(lead + tuple(out))
    if rule == "conv_transpose":
        w = metas[1].shape if len(metas) > 1 else None
        if x is None or w is None:
            return NNShape(None)
        nsp = len(w) - 2
        batched = len(x) == nsp + 2
        stride = _tuple(a.py(2, "stride", 1), nsp, 1)
        pad = _tuple(a.py(3, "padding", 0), nsp, 0)
        opad = _tuple(a.py(4, "output_padding", 0), nsp, 0)
        groups = a.py(5, "groups", 1)
        dil = _tuple(a.py(6, "dilation", 1), nsp, 1)
        out = []
        for i in range(nsp):
            parts = (x[-nsp + i], stride[i], pad[i], dil[i], w[2 + i], opad[i])
            if None in parts:
                out.append(None)
            else:
                n, s, p, d, k, op = parts  # type: ignore[misc]
                out.append((n - 1) * s - 2 * p + d * (k - 1) + op + 1)
        cout = w[1] * groups if isinstance(groups, int) and w[1] is not None else None
        lead = (x[0], cout) if batched else (cout,)
        return NNShape(lead + tuple(out))
    if rule == "pool":
        # max_pool2d_with_indices(x, kernel, stride, padding, dilation, ceil_mode) / avg_pool2d(x, kernel,
        # stride, padding, ceil_mode, ...): the last two dims are pooled (three for the 3d ops)
        if x is None:
            return NNShape(None, n_out=2 if "indices" in fact_name else 1)
        n = 3 if "3d" in fact_name else 2
        k = _tuple(a.py(0, "kernel_size", None), n, 1)
        s_arg = a.py(1, "stride", None)
        s = k if s_arg in (None, [], ()) else _tuple(s_arg, n, 1)
        p = _tuple(a.py(2, "padding", 0), n, 0)
        is_max = "max" in fact_name
        d = _tuple(a.py(3, "dilation", 1), n, 1) if is_max else [1] * n
        ceil = bool(a.py(4 if is_max else 3, "ceil_mode", False))
        out = tuple(conv_out(x[-n + i], k[i], s[i], p[i], d[i], ceil) for i in range(n))
        # the window's size, as a reduction's length: what each output loads (Scheduler.loads)
        window = math.prod(k) if all(isinstance(v, int) for v in k) else None  # type: ignore[arg-type]
        return NNShape(x[:-n] + out, S.ReduceInfo(None, window, "window"), n_out=2 if is_max else 1)
    if rule == "adaptive_pool":
        n = 3 if "3d" in fact_name else 1 if "1d" in fact_name else 2
        size = _tuple(a.py(0, "output_size", None), n, 1)
        if x is None:
            return NNShape(None, n_out=2 if "max" in fact_name else 1)
        size = [x[-n + i] if v is None else v for i, v in enumerate(size)]
        return NNShape(x[:-n] + tuple(size), n_out=2 if "max" in fact_name else 1)
    if rule in ("batch_norm", "group_norm") and S.WATCH is not None and x is not None and len(x) >= 2:
        w = metas[1].shape if len(metas) > 1 else None  # running_mean / weight: one per channel
        if w is not None and len(w) == 1:
            S.meet(x[1], w[0])
    if rule == "batch_norm":
        if x is None or len(x) < 2:
            return NNShape(x, S.ReduceInfo(None, None, "outer"))
        if fact_name.endswith("no_training"):
            return NNShape(x, S.ReduceInfo((0,), None, "outer"))  # eval writes two empty statistics
        n = _prod([d for i, d in enumerate(x) if i != 1])
        return NNShape(x, S.ReduceInfo((x[1],), n, "outer"))
    if rule == "group_norm":
        g = a.py(0, "num_groups", None)
        if x is None or not isinstance(g, int) or len(x) < 2:
            return NNShape(x, S.ReduceInfo(None, None, "inner"))
        total = _prod(x)
        per = total // (x[0] * g) if total is not None and x[0] else None
        return NNShape(x, S.ReduceInfo((x[0], g), per, "inner"))
    if rule in ("loss", "nll_loss"):
        reduction = a.py(None, "reduction", "mean")
        if rule == "nll_loss":
            target = metas[1].shape if len(metas) > 1 else None
            out = () if reduction != "none" else target
            return NNShape(out, S.ReduceInfo((), _prod(target) if target is not None else None, "all"))
        out = () if reduction != "none" else x
        return NNShape(out, S.ReduceInfo((), _prod(x) if x is not None else None, "all"))
    if rule == "mha":
        # _native_multi_head_attention(q, k, v, ..., need_weights): out like q, averaged weights (N, L, S)
        k = metas[1].shape if len(metas) > 1 else None
        if not a.py(None, "need_weights", False):
            return NNShape(x)
        stat = (x[0], x[1], k[1]) if x is not None and k is not None and len(x) == 3 and len(k) == 3 else None
        return NNShape(x, S.ReduceInfo(stat, None, "inner"))
    if rule == "pad":
        pad = a.py(0, "pad", None)
        if x is None or not isinstance(pad, (tuple, list)) or len(pad) % 2 or len(pad) // 2 > len(x):
            return NNShape(None)
        out = list(x)
        for i in range(len(pad) // 2):
            d = len(x) - 1 - i
            out[d] = None if out[d] is None else out[d] + pad[2 * i] + pad[2 * i + 1]
        return NNShape(tuple(out))
    if rule == "topk":
        k = a.py(0, "k", None)
        dim = a.py(1, "dim", -1)
        if x is None or not isinstance(k, int) or not isinstance(dim, int):
            return NNShape(None, n_out=2)
        dd = S.norm_dim(dim, len(x))
        return NNShape(tuple(k if i == dd else v for i, v in enumerate(x)), n_out=2)
    if rule == "repeat":
        reps = a.ints(0, "repeats")
        if x is None or not reps or None in reps or len(reps) < len(x):
            return NNShape(None)
        xs = (1,) * (len(reps) - len(x)) + tuple(x)
        return NNShape(tuple(None if d is None else d * r for d, r in zip(xs, reps)))  # type: ignore[operator]
    if rule == "tile":  # torch.tile: repeat, the repeats padded with leading 1s to the input's rank
        reps = a.ints(0, "dims")
        if x is None or not reps or None in reps:
            return NNShape(None)
        reps = [1] * (len(x) - len(reps)) + list(reps)
        xs = (1,) * (len(reps) - len(x)) + tuple(x)
        return NNShape(tuple(None if d is None else d * r for d, r in zip(xs, reps)))  # type: ignore[operator]
    if rule == "im2col":
        # im2col(x, kernel_size, dilation, padding, stride): (N, C, H, W) -> (N, C*kh*kw, L), L the
        # number of sliding positions (torch.nn.Unfold's documentation)
        k, d = _tuple(a.py(0, "kernel_size", None), 2, 1), _tuple(a.py(1, "dilation", 1), 2, 1)
        p, st = _tuple(a.py(2, "padding", 0), 2, 0), _tuple(a.py(3, "stride", 1), 2, 1)
        if x is None or len(x) not in (3, 4) or x[-3] is None:
            return NNShape(None)
        blocks = [conv_out(x[-2 + i], k[i], st[i], p[i], d[i]) for i in range(2)]
        lead = x[:1] if len(x) == 4 else ()
        kk = _prod(k)
        return NNShape(lead + (x[-3] * kk if kk is not None else None, _prod(blocks)))
    if rule == "col2im":
        # col2im(x, output_size, kernel_size, dilation, padding, stride): (N, C*kh*kw, L) -> (N, C, H, W)
        size = _tuple(a.py(0, "output_size", None), 2, 1)
        kk = _prod(_tuple(a.py(1, "kernel_size", None), 2, 1))
        if x is None or len(x) not in (2, 3) or x[-2] is None or not kk:
            return NNShape(None)
        lead = x[:1] if len(x) == 3 else ()
        return NNShape(lead + (x[-2] // kk,) + tuple(size))
    if rule == "outer":
        y = metas[1].shape if len(metas) > 1 else None
        return NNShape((_prod(x), _prod(y)) if x is not None and y is not None else None)
    if rule == "same_stats":
        return NNShape(x, S.ReduceInfo(x, None, "inner"))
    if rule == "pixel_shuffle":
        r = a.py(0, "upscale_factor", None)
        if x is None or not isinstance(r, int) or len(x) < 3 or x[-3] is None:
            return NNShape(None)
        h, w = x[-2], x[-1]
        return NNShape(x[:-3] + (x[-3] // (r * r), h * r if h else None, w * r if w else None))
    if rule == "pixel_unshuffle":
        r = a.py(0, "downscale_factor", None)
        if x is None or not isinstance(r, int) or len(x) < 3 or x[-3] is None:
            return NNShape(None)
        h, w = x[-2], x[-1]
        return NNShape(x[:-3] + (x[-3] * r * r, h // r if h else None, w // r if w else None))
    if rule == "upsample":
        size = a.py(0, "output_size", None)
        scale = a.py(1, "scales", None)
        if x is None:
            return NNShape(None)
        n = len(x) - 2
        if size is not None:
            return NNShape(x[:2] + tuple(_tuple(size, n, 1)))
        sc = scale if isinstance(scale, (tuple, list)) else [scale] * n
        if all(isinstance(v, (int, float)) for v in sc):
            return NNShape(x[:2] + tuple(int(d * f) if d is not None else None for d, f in zip(x[2:], sc)))
        return NNShape(None)
    if rule == "glu":
        dim = a.py(0, "dim", -1)
        if x is None or not isinstance(dim, int) or not -len(x) <= dim < len(x):
            return NNShape(None)
        dd = S.norm_dim(dim, len(x))
        return NNShape(tuple(v // 2 if (i == dd and v is not None) else v for i, v in enumerate(x)))
    return NNShape(None)
