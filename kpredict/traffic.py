"""Memory traffic: array-sized transfers per kernel, and bytes when every shape is known."""

from __future__ import annotations

from kpredict.ir import Figures, FunctionGraph, Kernel


def _nbytes(fg: FunctionGraph, ref: int) -> int | None:
    """Bytes of a buffer given by value id or storage id; -1 marks a split reduction's partials."""
    if ref == -1:
        return 0  # partial sums of a split reduction: a few KB, not counted in bytes
    v = fg.values.get(ref)
    if v is None:
        for val in fg.values.values():
            if val.storage == ref:
                v = fg.values.get(val.storage) or val
                break
    return v.meta.nbytes if v is not None else None


def figures(kernels: list[Kernel], fg: FunctionGraph, syncs: int = 0, partial: bool = False) -> Figures:
    """Kernels, transfers and bytes of `kernels`. Bytes are None when a transfer's size is unknown, unless
    `partial` (the figures are lower bounds already, resting on something not understood): such transfers
    then count 0 bytes, and the total is a lower bound too (unsized_transfers says how many)."""
    reads = sum(len(k.reads) * k.launches for k in kernels)
    writes = sum(len(k.writes) * k.launches for k in kernels)
    total: int | None = 0
    for k in kernels:
        for ref in k.reads + k.writes:
            b = _nbytes(fg, ref)
            if b is None:
                if partial:
                    continue
                total = None
                break
            total += b * k.launches  # type: ignore[operator]
        if total is None:
            break
    return Figures(kernels=sum(k.launched for k in kernels), reads=reads, writes=writes, bytes=total, syncs=syncs)


def unsized_transfers(kernels: list[Kernel], fg: FunctionGraph) -> int:
    """How many of the kernels' transfers move a tensor of unknown size (left out of partial bytes)."""
    return sum(k.launches for k in kernels for ref in k.reads + k.writes if _nbytes(fg, ref) is None)
