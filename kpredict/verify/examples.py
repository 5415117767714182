"""Example inputs built as torch tensors for the oracle (torch imported lazily). The example language
itself, and its static reading, is kpredict/examples.py."""

from __future__ import annotations

from typing import Any

from kpredict.examples import (  # noqa: F401 - ExampleError, parse_examples, split_items, static_meta re-exported
    ExampleError, ExampleSpec, TensorSpec, _Dtype, _plain, parse_examples, split_items, static_meta,
)


def build(spec: ExampleSpec, device: str = "cpu", seed: int = 0) -> dict[str, Any]:
    """Make the example values, tensors on `device`, deterministic (seeded)."""
    import torch  # lazy: torch takes seconds to import, and only the oracle builds tensors

    gen = torch.Generator(device="cpu").manual_seed(seed)
    out: dict[str, Any] = {}
    for n, v in spec.items:
        if isinstance(v, TensorSpec):
            out[n] = _build_tensor(torch, v, device, gen)
        elif isinstance(v, _Dtype):
            out[n] = getattr(torch, v.name)
        else:
            out[n] = _plain(v)
    return out


def _build_tensor(torch: Any, s: TensorSpec, device: str, gen: Any) -> Any:
    """Build on the CPU with a CPU generator (same values on every device), then move."""
    dtype = getattr(torch, s.dtype)
    p = dict(s.params)
    if s.ctor == "randn":
        t = torch.randn(s.shape, generator=gen, dtype=dtype)
    elif s.ctor == "rand":
        t = torch.rand(s.shape, generator=gen, dtype=dtype)
    elif s.ctor == "randint":
        t = torch.randint(p["low"], p["high"], s.shape, generator=gen, dtype=dtype)
    elif s.ctor == "zeros":
        t = torch.zeros(s.shape, dtype=dtype)
    elif s.ctor == "ones":
        t = torch.ones(s.shape, dtype=dtype)
    elif s.ctor == "arange":
        t = torch.arange(p["start"], p["end"], p["step"], dtype=dtype)
    else:
        t = torch.full(s.shape, p["fill"], dtype=dtype)
    if s.compare is not None:
        op, num = s.compare
        t = getattr(t, op)(num)
    t = t.to(device)
    if s.requires_grad:
        t.requires_grad_(True)
    return t
