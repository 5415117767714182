"""Training steps (issue 30): what a step saves for its backward, against torch.

The step's kernels, transfers and bytes per phase are held to the CPU oracle by
tests/test_fixtures_oracle.py (fixtures/training/ run with autograd on). Here the other figure a
step has: the activation bytes autograd saves, measured with torch.autograd.graph.saved_tensors_hooks
(each saved tensor's storage once; parameters and other leaves that require grad, and their views,
left out).
"""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

import pytest

from kpredict.api import analyze_file
from kpredict.settings import Settings
from kpredict.verify.annotations import annotations_for

torch = pytest.importorskip("torch")

from kpredict.verify.examples import evaluate  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TRAINING = sorted((REPO / "fixtures" / "training").glob("*.py"))


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"kp_training_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def measured_saved_bytes(fn, kwargs: dict, monkeypatch) -> int:
    """The most bytes autograd holds for one backward while `fn` runs: the distinct storages packed
    since the last backward (which frees them), and the inputs of checkpointed segments (kept for their
    recomputation: the reentrant form saves them, the other holds them), leaves that require grad
    left out."""
    seen: dict[int, int] = {}
    alive: list = []  # what was packed stays alive while measured: a freed storage's address is reused
    most = [0]

    def pack(t):
        base = t._base if t._base is not None else t  # a parameter's view (W.t() of a linear) is the parameter
        if not (base.is_leaf and base.requires_grad):
            s = t.untyped_storage()
            seen[s.data_ptr()] = s.nbytes()
            alive.append(t)
        return t

    backward = torch.Tensor.backward

    def counted_backward(self, *a, **k):
        most[0] = max(most[0], sum(seen.values()))
        seen.clear()
        return backward(self, *a, **k)

    monkeypatch.setattr(torch.Tensor, "backward", counted_backward)
    checkpoint = torch.utils.checkpoint.checkpoint

    def kept_inputs(function, *args, **kwargs):
        """A checkpointed segment keeps its inputs for the recompute; the reentrant form only when one of
        them requires grad (else it records no backward)."""
        tensors = [t for t in args if isinstance(t, torch.Tensor)]
        if kwargs.get("use_reentrant", True) is False or any(t.requires_grad for t in tensors):
            for t in tensors:
                pack(t)
        return checkpoint(function, *args, **kwargs)

    monkeypatch.setattr(torch.utils.checkpoint, "checkpoint", kept_inputs)


    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn(**kwargs)
    return most[0]


def _steps() -> list[tuple[Path, str]]:
    out = []
    for path in TRAINING:
        report = analyze_file(path, Settings(target="cpu"))
        out += [(path, f.qualname) for f in report.functions if f.phases]
    return out


@pytest.mark.parametrize("path,qualname", _steps(), ids=lambda x: x if isinstance(x, str) else x.name)
def test_activation_bytes_equal_what_autograd_saves(path: Path, qualname: str, monkeypatch) -> None:
    mod = _load(path)
    ann = annotations_for(path, qualname)
    kwargs = evaluate(ann.example, vars(mod), "cpu")
    measured = measured_saved_bytes(getattr(mod, qualname), kwargs, monkeypatch)
    fn = next(f for f in analyze_file(path, Settings(target="cpu")).functions if f.qualname == qualname)
    assert not fn.lower_bound, fn.lower_bound_causes
    assert fn.activation_bytes == measured


def test_every_training_fixture_is_a_step() -> None:
    """Each fixture function runs a backward (a forward alone would not be checked here)."""
    steps = {q for p, q in _steps()}
    for path in TRAINING:
        for name, obj in vars(_load(path)).items():
            if isinstance(obj, types.FunctionType) and obj.__module__.startswith("kp_training_"):
                assert name in steps, f"{path.name}::{name} runs no backward kpredict sees"


def test_every_op_a_backward_rule_launches_has_facts() -> None:
    """rules/autograd.toml names aten ops; each must be in the op table, whose facts the eager model
    counts (an op without facts would be said as not understood)."""
    from kpredict.opfacts import load_table

    table = load_table()
    named = {st.op for rule in table.backward.values() for st in rule.steps if st.op not in ("", "view", "expand")}
    assert named and not sorted(named - set(table.ops))
    assert {"permute", "expand", "split", "partial", "stop", "constant"} <= set(table.grad_views.values())


def test_what_is_not_described_makes_lower_bounds() -> None:
    """Never silent: an optimizer option not described (capturable) makes the eager figures lower
    bounds naming it; the compiled figures of any step leave out its backward and optimizer, and say so
    (no speedup)."""
    src = (
        "import torch\n"
        "m = torch.nn.Linear(4, 4)\n"
        "opt = torch.optim.Adam(m.parameters(), capturable=True)\n"
        "# kpredict: example x=randn(2, 4)\n"
        "def step(x):\n"
        "    m(x).sum().backward()\n"
        "    opt.step()\n"
    )
    from kpredict.api import analyze_source

    fn = analyze_source(src, "step.py", Settings(target="cuda")).functions[0]
    assert fn.lower_bound and any("capturable" in u.name for u in fn.lower_bound_causes)
    path = REPO / "fixtures" / "training" / "gpt_step.py"
    cpu = next(f for f in analyze_file(path, Settings(target="cpu")).functions if f.qualname == "train_step")
    assert not cpu.lower_bound and cpu.speedup is None
    said = " ".join(u.name for u in cpu.compiled_causes)
    assert "compiled backward" in said and "compiled optimizer step" in said


def test_autocast_casts_where_it_applies() -> None:
    """An autocast region on the target's device type casts the ops it wraps (their CPU figures are
    held to the oracle: fixtures/ops/autocast.py, fixtures/training/autocast.py); a region for the other
    device type (torch.autocast("cuda") leaves cpu tensors alone) or one made with enabled=False changes
    nothing; on cuda a softmax of the float16 scores runs with a float32 result (ATen's half-to-float
    kernel, no cast), so the matmul after it casts the probabilities back, and x again (an input, not
    a parameter: not cached)."""
    from kpredict.api import analyze_source

    src = (
        "import torch\n"
        "lin = torch.nn.Linear(8, 8)\n"
        "# kpredict: example x=randn(4, 8)\n"
        "def linear(x):\n"
        "    with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "        return lin(x).relu()\n"
        "# kpredict: example x=randn(4, 8)\n"
        "def scores(x):\n"
        "    with torch.autocast('cuda'):\n"
        "        return (x @ x.T).softmax(-1) @ x\n"
        "# kpredict: example x=randn(4, 8)\n"
        "def off(x):\n"
        "    with torch.cuda.amp.autocast(enabled=False):\n"
        "        return lin(x).relu()\n"
    )
    for target, casts, said in (("cuda", {"linear": 3, "scores": 4, "off": 0}, set()),
                                ("cpu", {"linear": 0, "scores": 0, "off": 0}, set())):
        fns = {f.qualname: f for f in analyze_source(src, "amp.py", Settings(target=target)).functions}
        assert {q: sum(1 for r in f.ops if r.op == "_to_copy") for q, f in fns.items()} == casts, target
        assert {q for q, f in fns.items() if any("autocast" in u.name for u in f.lower_bound_causes)} == said
