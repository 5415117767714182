"""FLOPs and modelled time per kernel, eager and compiled (issue 29).

FLOPs come from each op's shapes with the formula rules/flops.toml names for it: matrix FLOPs (matmul,
conv, attention) as torch.utils.flop_counter counts them, and elementwise FLOPs (pointwise, reductions)
apart, by a convention. Time is a roofline per kernel on a device preset (rules/devices.toml):
max(bytes / bandwidth, FLOPs / peak for the dtype) plus a per-launch cost, and each kernel says what
bounds it. It is a model: no figure of it has been checked on a GPU yet.
"""

from __future__ import annotations

from math import prod

from kpredict.devices import Device, FlopKinds
from kpredict.ir import FunctionGraph, Kernel, KernelCost, Op

MATRIX_KINDS = frozenset({"matmul", "addmm", "conv", "conv_transpose", "sdpa"})


def _shape(fg: FunctionGraph, vids: tuple[int, ...], i: int) -> tuple[int, ...] | None:
    """The i-th value's shape when every dim is known."""
    if i >= len(vids):
        return None
    v = fg.values.get(vids[i])
    s = v.meta.shape if v is not None else None
    if s is None or any(d is None for d in s):
        return None
    return s  # type: ignore[return-value]


def op_flops(op: Op, fg: FunctionGraph, kinds: FlopKinds) -> tuple[int | None, int | None]:
    """(matrix FLOPs, elementwise FLOPs) of one op; None where its formula needs a shape not known,
    or where no formula counts it (kind `unknown`)."""
    if op.free_reason:
        return 0, 0  # launches nothing here (a no-op cast, a view in disguise)
    kind = kinds.kind(op.name, op.category)
    if kind == "none":
        return 0, 0
    if kind == "unknown":
        return None, 0
    if kind == "elementwise":
        out = _shape(fg, op.outputs, 0)
        return 0, (prod(out) if out is not None else None)
    if kind == "reduction":
        x = _shape(fg, op.inputs, 0)
        return 0, (prod(x) if x is not None else None)
    return _matrix_flops(kind, op, fg), 0


def _matrix_flops(kind: str, op: Op, fg: FunctionGraph) -> int | None:
    out = _shape(fg, op.outputs, 0)
    if kind in ("matmul", "addmm"):
        a = _shape(fg, op.inputs, 1 if kind == "addmm" else 0)
        if out is None or not a:
            return None
        return 2 * prod(out) * a[-1]
    if kind == "conv":
        w = _shape(fg, op.inputs, 1)
        if out is None or w is None or len(w) < 2:
            return None
        return 2 * prod(out) * prod(w[1:])
    if kind == "conv_transpose":
        x, w = _shape(fg, op.inputs, 0), _shape(fg, op.inputs, 1)
        if x is None or w is None or len(x) not in (len(w), len(w) - 1):
            return None
        batch, spatial = (x[0], x[2:]) if len(x) == len(w) else (1, x[1:])  # (N, C, ...) or unbatched (C, ...)
        return 2 * batch * prod(spatial) * prod(w)
    # sdpa: q (..., Hq, Sq, D), k (..., Hkv, Sk, D), v (..., Hkv, Sk, Dv); GQA broadcasts k and v
    q, k, v = (_shape(fg, op.inputs, i) for i in range(3))
    if q is None or k is None or v is None or len(q) < 2 or len(k) < 2:
        return None
    rows = prod(q[:-1])  # B * Hq * Sq
    return 2 * rows * k[-2] * q[-1] + 2 * rows * k[-2] * v[-1]


class _Sizes:
    """Bytes of a buffer as kpredict.traffic counts it (a value id, else the first value of that
    storage id; -1: a split reduction's partials, 0), with the storage lookup built once per function."""

    def __init__(self, fg: FunctionGraph) -> None:
        self.values = fg.values
        self.by_storage: dict[int, int | None] | None = None

    def __call__(self, ref: int) -> int | None:
        if ref == -1:
            return 0
        v = self.values.get(ref)
        if v is not None:
            return v.meta.nbytes
        if self.by_storage is None:
            self.by_storage = {}
            for val in self.values.values():
                self.by_storage.setdefault(val.storage, val.meta.nbytes)
        return self.by_storage.get(ref)

    def kernel(self, k: Kernel) -> int | None:
        total = 0
        for ref in k.reads + k.writes:
            b = self(ref)
            if b is None:
                return None
            total += b
        return total * k.launches


def _dtype(k: Kernel, fg: FunctionGraph, ops: dict[int, Op], kinds: FlopKinds) -> str | None:
    """The dtype a kernel's matrix work runs in: its first matrix op's output's."""
    for oid in k.ops:
        op = ops.get(oid)
        if op is not None and kinds.kind(op.name, op.category) in MATRIX_KINDS and op.outputs:
            v = fg.values.get(op.outputs[0])
            return v.meta.dtype if v is not None else None
    return None


def kernel_costs(kernels: list[Kernel], fg: FunctionGraph, device: Device, kinds: FlopKinds,
                 notes: set[str] | None = None) -> list[KernelCost]:
    """One KernelCost per kernel. An op listed by several kernels (a split reduction, a fused epilogue)
    counts its FLOPs in the first; `notes` collects what the model assumed (a dtype without a peak)."""
    ops = {op.oid: op for op in fg.ops}
    sizes = _Sizes(fg)
    seen: set[int] = set()
    out = []
    for k in kernels:
        mat: int | None = 0
        ew: int | None = 0
        for oid in k.ops:
            if oid in seen or oid not in ops:
                continue
            seen.add(oid)
            m, e = op_flops(ops[oid], fg, kinds)
            mat = None if m is None or mat is None else mat + m
            ew = None if e is None or ew is None else ew + e
        nbytes = sizes.kernel(k)
        launch = device.launch_us * k.launched
        if nbytes is None or mat is None or ew is None:
            out.append(KernelCost(k.name, mat, ew, nbytes, None, "unknown", k.launches))
            continue
        dtype = _dtype(k, fg, ops, kinds) if mat else None
        peak, known = device.matmul_peak(dtype)
        if mat and notes is not None:
            if not known:
                notes.add(f"time: no {device.name} peak for {dtype or 'an unknown dtype'} matmuls, taken at the fp32 rate")
            elif device.dtype_peak.get(dtype or "") == "fp32" and device.peaks["tf32"] > device.peaks["fp32"]:
                notes.add(f"time: float32 matmuls at {device.name}'s fp32 rate ({device.peaks['fp32'] / 1e12:g} TFLOPS): "
                          "TF32 off, torch's default float32 matmul precision")
        mem_us = nbytes / device.bandwidth * 1e6
        comp_us = (mat / peak + ew / device.vector_peak) * 1e6
        roof = max(mem_us, comp_us)
        bound = "launch" if launch and launch >= roof else ("memory" if mem_us >= comp_us else "compute")
        out.append(KernelCost(k.name, mat, ew, nbytes, roof + launch, bound, k.launches))
    return out


def total(costs: list[KernelCost], field: str) -> int | float | None:
    """The sum of one field over kernels; None when any kernel's is unknown."""
    s: int | float = 0
    for c in costs:
        v = getattr(c, field)
        if v is None:
            return None
        s += v
    return s


def speedup(eager_us: float | None, compiled_us: float | None) -> float | None:
    """Eager time / compiled time; None when either is unknown or nothing runs compiled."""
    if eager_us is None or compiled_us is None or compiled_us <= 0:
        return None
    return eager_us / compiled_us
