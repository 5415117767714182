"""The example-input parser: literals and a few constructors only, never eval (no torch needed)."""

from __future__ import annotations

import pytest

from kpredict.ir import TensorMeta
from kpredict.verify.examples import ExampleError, parse_examples, split_items, static_meta


def test_split_items_respects_brackets_and_comparisons():
    assert split_items("a=randn(64, 128, dtype=float16) m=rand(4, 4) > 0.5, n=128") == [
        ("a", "randn(64, 128, dtype=float16)"), ("m", "rand(4, 4) > 0.5"), ("n", "128")]


def test_static_meta_without_torch():
    meta = static_meta(parse_examples(
        "a=randn(1_000_000) i=randint(1000, (8, 128)) z=zeros((3, 4), dtype=torch.bfloat16) "
        "r=arange(0, 10, 3) f=full((2,), True) n=128 s='mean' t=(1, -2)"))
    assert meta["a"] == TensorMeta((1_000_000,), "float32")
    assert meta["a"].nbytes == 4_000_000
    assert meta["i"] == TensorMeta((8, 128), "int64")
    assert meta["z"] == TensorMeta((3, 4), "bfloat16")
    assert meta["r"] == TensorMeta((4,), "int64")
    assert meta["f"] == TensorMeta((2,), "bool")
    assert (meta["n"], meta["s"], meta["t"]) == (128, "mean", (1, -2))


@pytest.mark.parametrize("bad", [
    "a=eval('1')", "a=randn(8", "randn(8)", "a=randn(8).t()", "a=__import__('os')", "a=randn(2) a=randn(3)",
    "a=randn(2, device='cuda')", "a=randn(2, dtype=int64)", "a=randn(x)", "a=", "a=randint(5)",
    "a=lambda: 1", "a=randn(-1)", "a=[x for x in ()]", "a=randn(2, dtype=float99)", "a=open('f')",
])
def test_bad_input_is_one_line_error(bad):
    with pytest.raises(ExampleError) as ei:
        parse_examples(bad)
    assert str(ei.value) and "\n" not in str(ei.value)
