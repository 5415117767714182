"""Code that asks whether it is being compiled: one graph, with the ops of each mode marked.

The figures themselves are torch's: fixtures/ops/modes.py and fixtures/models/mode_layers.py are
held against the CPU oracle by test_fixtures_oracle.py and test_models_oracle.py. These tests check
the op graph that carries them: which ops exist in which mode, and that calls recorded in one mode
are not replayed in the other.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from kpredict.api import analyze_file, analyze_source
from kpredict.settings import Settings

REPO = Path(__file__).resolve().parent.parent


def _fn(report, qualname: str):
    return next(f for f in report.functions if f.qualname == qualname)


def _ops_by_mode(fr) -> Counter:
    return Counter((op.name, op.only) for op in fr.graph.ops if op.category != "view")


def test_each_mode_keeps_its_own_branch_and_shares_the_rest() -> None:
    fr = _fn(analyze_file(REPO / "fixtures" / "ops" / "modes.py", Settings(target="cpu")), "mode_branch")
    assert _ops_by_mode(fr) == Counter({("sin", None): 1, ("cos", None): 1, ("mul", "eager"): 1,
                                        ("add", "compiled"): 1})
    assert fr.eager.kernels == 3 and fr.compiled.kernels == 1 and fr.compiled.graphs == 1


def test_a_helper_returning_none_in_eager_mode_only() -> None:
    fr = _fn(analyze_file(REPO / "fixtures" / "ops" / "modes.py", Settings(target="cpu")), "mode_helper_returns")
    assert _ops_by_mode(fr) == Counter({("sin", None): 1, ("cos", None): 1, ("cumsum", "compiled"): 1,
                                        ("add", "compiled"): 1})


def test_layers_that_ask_are_replayed_in_their_own_mode() -> None:
    fr = _fn(analyze_file(REPO / "fixtures" / "models" / "mode_layers.py", Settings(target="cpu")),
             "GatedStack.forward")
    ops = _ops_by_mode(fr)
    # three layers: a compiled-mode replay of an eager recording would have no relu at all
    assert ops[("relu", "compiled")] == 3
    assert ops[("sigmoid", "eager")] == 3 and ops[("mul", "eager")] == 3
    assert ops[("linear", None)] == 3


def test_code_that_does_not_ask_is_analyzed_once() -> None:
    src = "import torch\n\n\ndef f(x: torch.Tensor):\n    return x.sin().cos()\n"
    fr = analyze_source(src, "t.py", Settings(target="cpu")).functions[0]
    assert all(op.only is None for op in fr.graph.ops)


def test_tracing_and_export_queries_are_false_in_both_modes() -> None:
    src = (
        "import torch\nimport torch.fx\n\n\n"
        "def f(x: torch.Tensor):\n"
        "    if torch.jit.is_tracing() or torch.compiler.is_exporting():\n"
        "        x = x.exp()\n"
        "    if isinstance(x, torch.fx.Proxy):\n"
        "        x = x.tan()\n"
        "    return x.sin()\n"
    )
    fr = analyze_source(src, "t.py", Settings(target="cpu")).functions[0]
    assert [op.name for op in fr.graph.ops] == ["sin"]
    assert not fr.assumptions or all("condition not known" not in a for a in fr.assumptions)


def test_transformers_mode_helpers_without_transformers_in_the_tree() -> None:
    src = (
        "import torch\nfrom transformers.utils import is_torchdynamo_compiling\n\n\n"
        "def f(x: torch.Tensor):\n"
        "    if not is_torchdynamo_compiling():\n"
        "        return x.sin()\n"
        "    return x.cos()\n"
    )
    fr = analyze_source(src, "t.py", Settings(target="cpu")).functions[0]
    assert _ops_by_mode(fr) == Counter({("sin", "eager"): 1, ("cos", "compiled"): 1})
    assert fr.eager.kernels == 1 and fr.compiled.kernels == 1


def test_packed_position_check_is_decided_from_known_elements() -> None:
    """transformers' packed-sequence check reads `(seq[:, -1] == 0).all()` on the host in eager mode;
    position ids made by arange(T).unsqueeze(0) have elements known statically (concrete.py), so eager
    mode takes the maskless path, and its attention, which reads no mask, is not the compiled run's
    (which builds one) merged into one op: eager 9 kernels, 22 transfers, 1 sync by the CPU oracle
    (the fixture's recorded figures; test_fixtures_oracle.py holds all of them)."""
    fr = _fn(analyze_file(REPO / "fixtures" / "ops" / "modes.py", Settings(target="cpu")), "mode_packed_positions")
    sdpa = [op for op in fr.graph.ops if op.name == "scaled_dot_product_attention"]
    assert sorted((op.only, len(op.inputs)) for op in sdpa) == [("compiled", 4), ("eager", 3)]
    assert (fr.eager.kernels, fr.eager.reads + fr.eager.writes, fr.eager.syncs) == (9, 22, 1)
