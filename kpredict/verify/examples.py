"""Example inputs and constructor arguments built as Python and torch values for the oracle (torch
imported lazily). The value language itself, and its static reading, is kpredict/examples.py."""

from __future__ import annotations

import types
from typing import Any

from kpredict.examples import (  # noqa: F401 - ExampleError, parse_examples, split_items, static_meta re-exported
    CONSTRUCTORS, ExampleError, ExampleSpec, TensorSpec, _Dtype, _plain, parse_examples, parse_value, split_items,
    static_meta,
)


def evaluate(text: str | None, namespace: dict[str, Any], device: str = "cpu", seed: int = 0) -> dict[str, Any]:
    """`name=expr` items as values. An item the tiny language reads (literals, torch constructors) is
    built as `build` builds it (seeded, the same values on every device); any other is evaluated with
    `eval` in `namespace` (the imported user module's), with torch, its constructors by their bare
    names and SimpleNamespace added where the module does not define them, tensors made on `device`.
    This runs the user's code: only verify's child calls it. Raises ExampleError (one line)."""
    import torch  # lazy: torch takes seconds to import, and only the oracle builds values

    gen = torch.Generator(device="cpu").manual_seed(seed)
    out: dict[str, Any] = {}
    env: dict[str, Any] | None = None
    for name, src in split_items(text or ""):
        if name in out:
            raise ExampleError(f"{name} is given twice")
        try:
            simple = parse_value(src, name)
        except ExampleError:
            pass
        else:
            out[name] = _build_one(torch, simple, device, gen)
            continue
        if env is None:
            env = {"torch": torch, "SimpleNamespace": types.SimpleNamespace,
                   **{c: getattr(torch, c) for c in CONSTRUCTORS}, **namespace}
        try:
            code = compile(src.replace("\n", " ").strip(), f"<{name}>", "eval")
        except SyntaxError as e:
            raise ExampleError(f"{name}={src}: not a Python expression ({e.msg})") from None
        torch.manual_seed(seed)
        try:
            with torch.device(device):
                out[name] = eval(code, env)  # noqa: S307 - the child is where user code runs
        except Exception as e:  # noqa: BLE001 - any failure of the user's expression is its one-line error
            text_ = str(e).strip().splitlines()
            raise ExampleError(f"{name}={src}: {type(e).__name__}: {text_[0] if text_ else ''}".rstrip(": ")) from None
    return out


def build(spec: ExampleSpec, device: str = "cpu", seed: int = 0) -> dict[str, Any]:
    """Make the example values, tensors on `device`, deterministic (seeded)."""
    import torch  # lazy: torch takes seconds to import, and only the oracle builds tensors

    gen = torch.Generator(device="cpu").manual_seed(seed)
    out: dict[str, Any] = {}
    for n, v in spec.items:
        out[n] = _build_one(torch, v, device, gen)
    return out


def _build_one(torch: Any, v: Any, device: str, gen: Any) -> Any:
    if isinstance(v, TensorSpec):
        return _build_tensor(torch, v, device, gen)
    if isinstance(v, _Dtype):
        return getattr(torch, v.name)
    return _plain(v)


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
    elif s.ctor == "empty":
        t = torch.empty(s.shape, dtype=dtype)
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
