"""Tensor elements kpredict knows statically (kpredict/frontend/concrete.py), held against torch
itself on the same inputs: the ops transformers' packed-sequence check and model builders apply to
small tensors built from sizes (any rank: position ids are arange(T).unsqueeze(0))."""

from __future__ import annotations

import pytest

from kpredict.frontend import concrete as C

torch = pytest.importorskip("torch")


def _c(t) -> C.Concrete:  # noqa: ANN001
    kind = "bool" if t.dtype == torch.bool else "float" if t.is_floating_point() else "int"
    return C.Concrete(tuple(t.flatten().tolist()), tuple(t.shape), kind)


def _same(got: C.Concrete | None, want) -> None:  # noqa: ANN001
    assert got is not None
    assert got == _c(want)


IDS = torch.arange(6).unsqueeze(0)
PACKED = torch.tensor([[0, 1, 2, 0, 1, 0]])
GRID = torch.arange(12).reshape(3, 4)


@pytest.mark.parametrize("ids", [IDS, PACKED])
def test_packed_sequence_check(ids) -> None:  # noqa: ANN001
    """transformers' find_packed_sequence_indices, step by step."""
    c = _c(ids)
    first = C.binary("sub", C.index(c, [slice(None), slice(None, 1)]), 1)
    _same(first, ids[:, :1] - 1)
    d = C.diff(c, -1, prepend=first)
    _same(d, torch.diff(ids, prepend=ids[:, :1] - 1, dim=-1))
    seq = C.cumsum(C.binary("ne", d, 1), -1)
    want = (torch.diff(ids, prepend=ids[:, :1] - 1, dim=-1) != 1).cumsum(-1)
    _same(seq, want)
    last = C.binary("eq", C.index(seq, [slice(None), -1]), 0)
    _same(C.reduce("all", last), (want[:, -1] == 0).all())


@pytest.mark.parametrize("parts, want", [
    ([1], GRID[1]), ([slice(None), 2], GRID[:, 2]), ([slice(1, None), slice(None, None, 2)], GRID[1:, ::2]),
    ([None, slice(None), -1], GRID[None, :, -1]), ([Ellipsis, 0], GRID[..., 0]), ([-1, -1], GRID[-1, -1]),
])
def test_basic_indexing(parts, want) -> None:  # noqa: ANN001
    _same(C.index(_c(GRID), parts), want)


def test_broadcasting_and_shape_ops() -> None:
    col, row = _c(torch.arange(3)[:, None]), _c(torch.arange(4)[None, :])
    _same(C.binary("ge", col, row), torch.arange(3)[:, None] >= torch.arange(4)[None, :])
    _same(C.binary("add", _c(GRID), row), GRID + torch.arange(4)[None, :])
    _same(C.unsqueeze(_c(torch.arange(5)), -1), torch.arange(5).unsqueeze(-1))
    _same(C.cumsum(_c(GRID), 0), GRID.cumsum(0))
    _same(C.diff(_c(GRID), 0), torch.diff(GRID, dim=0))
    _same(C.diff(_c(GRID > 5), 1), torch.diff(GRID > 5, dim=1))
    _same(C.reshape(_c(GRID), [2, -1]), GRID.reshape(2, -1))
    _same(C.expand(_c(torch.arange(4)[None, :]), [3, -1]), torch.arange(4)[None, :].expand(3, -1))
    _same(C.reduce("any", _c(GRID > 10)), (GRID > 10).any())
    assert C.binary("add", _c(torch.arange(3)), _c(torch.arange(4))) is None  # shapes that do not broadcast
    assert _c(GRID).python() == GRID.tolist()


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float64", "int32"])
def test_a_tensor_built_with_a_dtype_keeps_it(dtype: str) -> None:
    """`torch.tensor(0.8, dtype=torch.bfloat16)` in a constructor (transformers' XIELUActivation
    parameters): its elements are known, and its dtype is the one asked for, as torch's is (it was
    float32: the parameters' bytes and the ops that read them were counted at 4 bytes each)."""
    from kpredict.api import analyze_source
    from kpredict.settings import Settings

    src = f"import torch\n\n\ndef f():\n    a = torch.tensor(3, dtype=torch.{dtype})\n    return (a * 2).unsqueeze(0)\n"
    fn = analyze_source(src, "m.py", Settings(target="cpu")).functions[0]
    got = [fn.graph.values[i].meta.dtype for op in fn.graph.ops for i in op.inputs]
    want = (torch.tensor(3, dtype=getattr(torch, dtype)) * 2).dtype
    assert got == [str(want).removeprefix("torch.")] * 2, got
