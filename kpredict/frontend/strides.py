"""Strides of tensors whose shape is known: which views are contiguous, which reshapes copy.

Whether `reshape`, `contiguous()`, a batched matmul or a strided linear launches a copy depends on
the memory layout, not only on the shape: `q.view(B, T, H, D).transpose(1, 2)` is a strided view
whose batch dims cannot be merged without a copy, while attention's output has the layout of its
query so `y.transpose(1, 2).contiguous()` is free. These functions follow torch's own rules
(ATen's computeStride for views, TensorIterator's output layout that follows its input's stride
order, `empty_like` with preserve_format) on abstract shapes; anything unknown gives None.
"""

from __future__ import annotations

Strides = tuple[int, ...]
Shape = tuple[int, ...]


def contiguous_strides(shape: Shape) -> Strides:
    out = []
    acc = 1
    for d in reversed(shape):
        out.append(acc)
        acc *= max(d, 1)
    return tuple(reversed(out))


def is_contiguous(shape: Shape, strides: Strides) -> bool:
    """torch's definition: size-1 dims (and empty tensors) do not count."""
    if any(d == 0 for d in shape):
        return True
    expected = 1
    for d, s in zip(reversed(shape), reversed(strides)):
        if d == 1:
            continue
        if s != expected:
            return False
        expected *= d
    return True


def nhwc_ordered(shape: Shape, strides: Strides) -> bool:
    """A 4-D layout whose dims, largest stride first, are N, H, W, C with C of stride 1 (size-1 dims do
    not count): channels-last order, dense or not (a permuted NHWC tensor, a channel slice of one)."""
    if len(shape) != 4 or len(strides) != 4:
        return False
    order = [d for d in sorted(range(4), key=lambda d: -strides[d]) if shape[d] != 1]
    return order == [d for d in (0, 2, 3, 1) if shape[d] != 1] and (shape[1] == 1 or strides[1] == 1)


def suggests_channels_last(shape: Shape, strides: Strides) -> bool:
    """torch's `suggest_memory_format()` is channels-last (c10 is_channels_last_strides_2d): walking
    C, W, H, N, each stride is at least the span of the dims before it; the batch dim counts even of
    size 1, so `y.transpose(1, 2).reshape(1, C, H, W)` (a batch stride of C) suggests contiguous."""
    if len(shape) != 4 or len(strides) != 4 or strides[1] == 0:
        return False
    low = 0
    for d in (1, 3, 2, 0):
        if shape[d] == 0 or strides[d] < low or (d == 0 and low == strides[1]):
            return False
        low = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return True


def channels_last_contiguous(shape: Shape, strides: Strides) -> bool:
    """`is_contiguous(memory_format=torch.channels_last)`: dense in C, W, H, N order, size-1 dims aside."""
    if len(shape) != 4 or len(strides) != 4:
        return False
    expected = 1
    for d in (1, 3, 2, 0):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def as_suggested(shape: Shape, strides: Strides) -> bool:
    """Whether `x.contiguous(x.suggest_memory_format())` returns x itself: channels-last contiguous where
    the strides suggest channels-last, contiguous otherwise."""
    if suggests_channels_last(shape, strides):
        return channels_last_contiguous(shape, strides)
    return is_contiguous(shape, strides)


def is_dense(shape: Shape, strides: Strides) -> bool:
    """Non-overlapping and dense: some permutation of the dims is contiguous."""
    dims = sorted((s, d) for d, s in zip(shape, strides) if d != 1)
    expected = 1
    for s, d in dims:
        if s != expected:
            return False
        expected *= d
    return True


def order_of(strides: Strides) -> list[int]:
    """Dims from innermost to outermost by stride (ties: later dim is inner), as torch sorts them."""
    return sorted(range(len(strides)), key=lambda i: (strides[i], i))


def dense_like(shape: Shape, strides: Strides) -> Strides:
    """Strides of a new tensor laid out in the same dim order as `strides` (TensorIterator outputs,
    empty_like / clone with preserve_format)."""
    if is_dense(shape, strides):
        return strides
    out = [0] * len(shape)
    acc = 1
    for i in order_of(strides):
        out[i] = acc
        acc *= max(shape[i], 1)
    return tuple(out)


def view_strides(old_shape: Shape, old_strides: Strides, new_shape: Shape) -> Strides | None:
    """Strides of `t.view(new_shape)`, or None when no view exists (reshape must copy).

    ATen's computeStride: dims of the old shape are grouped into chunks that are contiguous among
    themselves, and each chunk must map onto a run of new dims with the same number of elements.
    """
    numel = 1
    for d in old_shape:
        numel *= d
    if numel == 0 or not old_shape:
        return contiguous_strides(new_shape)
    new = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base = old_strides[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1 and
                             old_strides[tensor_d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new)


def permuted(strides: Strides, dims: list[int]) -> Strides:
    return tuple(strides[d] for d in dims)


def transposed(strides: Strides, d0: int, d1: int) -> Strides:
    s = list(strides)
    s[d0], s[d1] = s[d1], s[d0]
    return tuple(s)
