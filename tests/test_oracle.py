"""The CPU oracle: what a TorchDispatchMode and the profiler really see (torch needed, else skipped).

Compile tests use small tensors where the figure does not depend on size; each costs about a second.
"""

from __future__ import annotations

import inspect

import pytest

from kpredict.ir import TensorMeta
from kpredict.verify.examples import build, parse_examples, static_meta

torch = pytest.importorskip("torch")
F = torch.nn.functional

from kpredict.verify.oracle import classify_name, measure  # noqa: E402

pytestmark = pytest.mark.oracle


def _line_of(fn, text: str) -> int:
    src, start = inspect.getsourcelines(fn)
    return start + next(i for i, s in enumerate(src) if text in s)


# ---------------------------------------------------------------------------------- the seed


def add_relu(a, b):
    return (a + b).relu()


def test_seed_add_relu_eager_and_compiled():
    n = 1_000_000
    r = measure(add_relu, (torch.randn(n), torch.randn(n)))
    e = r["eager"]
    assert (e["kernels"], e["reads"], e["writes"], e["bytes"], e["syncs"]) == (2, 3, 2, 20_000_000, 0)
    assert e["names"] == ["add", "relu"]
    assert [o["line"] for o in e["ops"]] == [_line_of(add_relu, "relu()")] * 2
    c = r["compiled"]
    assert c["kernels"] == 1
    assert c["names"] == ["cpp_fused_add_relu_0"]
    assert (c["graphs"], c["graph_breaks"]) == (1, [])


# ---------------------------------------------------------------------------------- compiled


def mm_relu(a, b):
    return (a @ b).relu()


def item_break(a):
    s = a.sum().item()
    return a * s


def randn_add(a):
    return a + torch.randn_like(a)


def test_compiled_mm_relu_is_extern_plus_fused():
    r = measure(mm_relu, (torch.randn(8, 8), torch.randn(8, 8)))
    assert r["eager"]["names"] == ["mm", "relu"]
    c = r["compiled"]
    assert c["names"] == ["aten::mm", "cpp_fused_relu_0"]
    assert [d["kind"] for d in c["detail"]] == ["extern", "generated"]


def test_compiled_item_graph_break():
    r = measure(item_break, (torch.randn(64),))
    e = r["eager"]
    assert (e["kernels"], e["syncs"], e["names"]) == (2, 1, ["sum", "mul"])
    c = r["compiled"]
    assert c["kernels"] == 2
    assert c["names"] == ["cpp_fused_sum_0", "cpp_fused_mul_0"]
    assert c["graphs"] == 2
    assert [b["line"] for b in c["graph_breaks"]] == [_line_of(item_break, ".item()")]
    assert "item()" in c["graph_breaks"][0]["reason"]


def test_compiled_random_adds_seed_fallback():
    c = measure(randn_add, (torch.randn(64),))["compiled"]
    assert c["names"] == ["aten::randint", "cpp_fused_add_randn_like_0"]
    assert [d["kind"] for d in c["detail"]] == ["fallback", "generated"]


# ---------------------------------------------------------------------------------- eager


def _eager(fn, *args):
    return measure(fn, args, compiled=False)["eager"]


@pytest.mark.parametrize("fn, args, names", [
    (lambda a, m: a.masked_fill(m, 0.0), (torch.randn(8), torch.rand(8) > 0.5), ["masked_fill"]),
    (lambda x: x.t().contiguous(), (torch.randn(4, 6),), ["clone"]),
    (lambda x: x.t().reshape(24), (torch.randn(4, 6),), ["clone"]),  # + _unsafe_view, an alias
    (lambda x: x.reshape(24), (torch.randn(4, 6),), []),
    (lambda x: x.view(-1).t() if x.dim() == 2 else x, (torch.randn(4, 6),), []),
    (lambda: torch.zeros(4, 4), (), ["zeros"]),
    (lambda x, w, b: F.linear(x, w, b), (torch.randn(4, 6), torch.randn(3, 6), torch.randn(3)), ["addmm"]),
    (lambda x, w: F.linear(x, w), (torch.randn(4, 6), torch.randn(3, 6)), ["mm"]),
    (lambda x: x.float(), (torch.randn(4),), []),
    (lambda x: torch.softmax(x, -1), (torch.randn(4, 6),), ["_softmax"]),
    (lambda x: F.dropout(x, training=False), (torch.randn(4),), []),
    (lambda x: x.detach().clone(), (torch.randn(4),), ["clone"]),
    (lambda a, b: torch.where(a > 0, a, b), (torch.randn(4), torch.randn(4)), ["gt", "where"]),
    (lambda x: x.split(2), (torch.randn(4),), []),
])
def test_eager_op_names(fn, args, names):
    assert _eager(fn, *args)["names"] == names


def test_eager_layer_norm_writes_mean_and_rstd():
    e = _eager(lambda x: F.layer_norm(x, (6,)), torch.randn(4, 6))
    assert (e["names"], e["reads"], e["writes"]) == (["native_layer_norm"], 1, 3)
    assert e["bytes"] == 4 * (24 + 24 + 4 + 4)


def test_eager_same_tensor_read_once():
    e = _eager(lambda x: x + x, torch.randn(10))
    assert (e["reads"], e["writes"], e["bytes"]) == (1, 1, 80)


def test_eager_inplace_reads_and_writes_target():
    def f(a, b):
        a.add_(b)
        a.mul_(2)
        return a
    e = _eager(f, torch.randn(10), torch.randn(10))
    assert [(o["name"], o["reads"], o["writes"]) for o in e["ops"]] == [("add_", 2, 1), ("mul_", 1, 1)]


def test_eager_write_only_ops_do_not_read_target():
    def f(a, b):
        a.fill_(1.0)
        a.copy_(b)
        a.zero_()
        torch.add(b, b, out=a)
        return a
    e = _eager(f, torch.randn(10), torch.randn(10))
    assert [(o["name"], o["reads"], o["writes"]) for o in e["ops"]] == [
        ("fill_", 0, 1), ("copy_", 1, 1), ("zero_", 0, 1), ("add", 1, 1)]


def test_eager_allocations_are_not_kernels():
    e = _eager(lambda: torch.empty(4).fill_(2.0))
    assert e["names"] == ["fill_"]


def test_eager_syncs_are_not_kernels():
    def f(x):
        a = x.sum().item()
        b = x.tolist()
        return a, b, bool(x[0] > 0)
    e = _eager(f, torch.randn(4))
    assert e["syncs"] == 3
    assert e["names"] == ["sum", "gt"]
    assert [o["name"] for o in e["ops"] if o["kind"] == "sync"] == ["_local_scalar_dense", "tolist", "_local_scalar_dense"]


def _helper(x):
    return x * 2


def calls_helper(x):
    y = _helper(x)
    return y + 1


def test_eager_lines_point_at_the_issuing_line():
    e = _eager(calls_helper, torch.randn(4))
    assert [(o["name"], o["line"], o["function"]) for o in e["ops"]] == [
        ("mul", _line_of(_helper, "x * 2"), "_helper"), ("add", _line_of(calls_helper, "y + 1"), "calls_helper")]


def test_inputs_are_fresh_copies():
    a = torch.zeros(4)
    measure(lambda t: t.add_(1), (a,), compiled=False)
    assert a.sum().item() == 0


def test_user_exception_keeps_partial_measurement():
    def boom(x):
        y = x + 1
        raise ValueError("user bug")
    with pytest.raises(ValueError, match="user bug") as ei:
        measure(boom, (torch.randn(4),), compiled=False)
    assert ei.value.kpredict_partial["eager"]["names"] == ["add"]


def test_classify_name():
    assert classify_name("aten::t") == "view"
    assert classify_name("aten::_unsafe_view") == "view"
    assert classify_name("aten::empty_strided") == "alloc"
    assert classify_name("aten::item") == "sync"
    assert classify_name("aten::mm") == "kernel"


# ---------------------------------------------------------------------------------- examples


def test_examples_build_and_static_meta_agree():
    spec = parse_examples("a=randn(1_000_000) x=randn(64, 128, dtype=float16) i=randint(0, 1000, (8, 128)) "
                          "m=rand(4, 4) > 0.5 n=128 flag=True r=arange(10) f=full((2, 3), 2.5)")
    meta = static_meta(spec)
    built = build(spec)
    for name, m in meta.items():
        if isinstance(m, TensorMeta):
            t = built[name]
            assert tuple(t.shape) == m.shape and str(t.dtype) == f"torch.{m.dtype}", name
        else:
            assert built[name] == m
    assert meta["m"].dtype == "bool" and meta["i"].dtype == "int64" and meta["x"].nbytes == 64 * 128 * 2
    assert static_meta(spec, "cpu")["a"].device == "cpu"
    assert torch.equal(build(spec)["a"], built["a"])  # seeded


def print_tensor(a):
    t = a + 1
    print(t)
    return t * 2


def test_printing_a_tensor_is_one_sync_not_the_formatters_ops(capsys):
    r = measure(print_tensor, (torch.randn(4, 4),))
    e, c = r["eager"], r["compiled"]
    assert (e["names"], e["syncs"]) == (["add", "mul"], 1)
    assert [o["line"] for o in e["ops"] if o["kind"] == "sync"] == [_line_of(print_tensor, "print(t)")]
    assert c["names"] == ["cpp_fused_add_0", "cpp_fused_mul_0"]
    assert (c["graphs"], c["syncs"]) == (2, 1)


def test_like_ops_do_not_read_their_template():
    e = _eager(lambda a: torch.zeros_like(a) + torch.randn_like(a) + a.new_ones(4), torch.randn(4))
    assert [(o["name"], o["reads"], o["writes"]) for o in e["ops"]] == [
        ("zeros_like", 0, 1), ("randn_like", 0, 1), ("add", 2, 1), ("new_ones", 0, 1), ("add", 2, 1)]


def returns_views(x):
    return x[:, 1:3], x.t(), x.reshape(-1)


def test_compiled_output_views_regenerated_outside_the_graph_launch_nothing():
    r = measure(returns_views, (torch.randn(4, 6),))
    assert r["eager"]["kernels"] == 0
    assert r["compiled"]["kernels"] == 0, r["compiled"]["names"]


def test_classify_name_looks_through_composites():
    assert classify_name("aten::slice") == "view"
    assert classify_name("aten::to") == "composite"
    assert classify_name("aten::reshape") == "composite"
    assert classify_name("aten::sum") == "kernel"
