"""torch.autocast: the casts an op's Autocast kernel makes before it runs (rules/autocast.toml).

Inside a region whose device type is the target's, an op (or catalogue function) that autocast
wraps gets its floating arguments cast to the policy's dtype, one `_to_copy` each, and then runs with
autocast off, so what it calls inside is not cast again. A float32 parameter cast to the region's
dtype is cast once per region (the autocast cache). cuda's float32 reductions (softmax, sum, norm)
are called with dtype=torch.float32; a policy not modelled is said.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kpredict.frontend.opsem import dtype_asked
from kpredict.frontend.values import ModRef, Seq, TensorRef
from kpredict.opfacts import default_autocast

if TYPE_CHECKING:
    from kpredict.frontend.interp import Interpreter

FLOATS = ("float32", "float16", "bfloat16")
CASTING = ("lower_precision_fp", "fp32", "promote")
# reductions autocast runs with a float32 result when the first argument is a floating tensor and no dtype
# is given (fp32_set_opt_dtype: softmax, sum, cumsum...; norm's fp32_append_dtype): the op called with
# dtype=torch.float32, whose own model decides whether that is a cast first (softmax) or not (sum)
FLOAT32_RESULT = ("fp32_set_opt_dtype", "fp32_append_dtype")


@dataclass(slots=True)
class Region:
    """An enabled autocast region on the target's device type: its dtype and its cast cache."""

    dtype: str
    cache: dict[int, TensorRef] = field(default_factory=dict)


def policy_of(target: str, name: str) -> str | None:
    conf = default_autocast()
    return conf[target]["policy"].get(conf["aliases"].get(name, name))


def default_dtype(target: str) -> str:
    return default_autocast()[target]["dtype"]


def cast_args(it: Interpreter, name: str, args: list[object], kwargs: dict[str, object],
              node: ast.AST) -> tuple[list[object], dict[str, object]] | None:
    """`args` and `kwargs` as op `name`'s Autocast kernel passes them on, or None when autocast leaves
    the call alone (no region, inside a wrapped op, not an op it wraps)."""
    region = it.autocast
    if region is None or it.autocast_busy:
        return None
    policy = policy_of(it.settings.target, name)
    if policy is None:
        return None
    if policy in FLOAT32_RESULT:
        first = next((t for v in args for t in _tensors(v)), None)
        if first is None or dtype_asked(args, kwargs) or it.meta(first).dtype not in FLOATS:
            return list(args), dict(kwargs)  # not eligible, or a dtype given: the op as called
        return list(args), {**kwargs, "dtype": ModRef("torch.float32")}
    if policy not in CASTING:
        it.unknown(node, f"torch.autocast: {name} ({policy}) is not modelled yet")
        return None
    tensors = [t for v in (*args, *kwargs.values()) for t in _tensors(v)]
    if policy == "lower_precision_fp":
        to = region.dtype
    elif policy == "fp32":
        to = "float32"
    else:
        to = "float32" if any(it.meta(t).dtype == "float32" for t in tensors) else region.dtype

    def cast(v: object) -> object:
        if isinstance(v, Seq):
            return Seq([cast(x) for x in v.items], v.kind)
        if not isinstance(v, TensorRef):
            return v
        dtype = it.meta(v).dtype
        if dtype not in FLOATS or dtype == to:
            return v
        val = it.value(v)
        cached = (to == region.dtype and dtype == "float32" and val.requires_grad and val.producer is None
                  and val.storage == v.vid)
        if cached and v.vid in region.cache:
            return region.cache[v.vid]
        out = it.apply_fact(it.fact("_to_copy"), v, [], {"dtype": ModRef(f"torch.{to}")}, node)
        if cached:
            region.cache[v.vid] = out  # type: ignore[assignment]
        return out

    return [cast(a) for a in args], {k: cast(v) for k, v in kwargs.items()}


def _tensors(v: object) -> list[TensorRef]:
    if isinstance(v, TensorRef):
        return [v]
    if isinstance(v, Seq):
        return [x for x in v.items if isinstance(x, TensorRef)]
    return []
