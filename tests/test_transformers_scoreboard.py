"""transformers' models (scripts/transformers_scoreboard.py, issue 27) against the CPU oracle's figures
recorded in benchmarks/transformers_scoreboard.json: each model's `<Model>.forward` is predicted afresh
(static, seconds) and held to what `kpredict verify --device cpu` measured for the same command, the
eager kernels and the compiled kernels and graphs. A model whose source or command changed since it
was measured (its digest) fails until `scripts/transformers_scoreboard.py --measure` measures it again.

The misses understood and not modelled yet are expected failures (strict: one that starts to match
fails, so the list stays true); docs/zoo-scoreboard.md says why each misses.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from kpredict.api import analyze_file
from kpredict.settings import Settings

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
from transformers_scoreboard import DEFAULT_OUT, EXAMPLE, MODELS, digest  # noqa: E402
from test_verify_real_models import TRANSFORMERS, _install  # noqa: E402

STORE = json.loads(DEFAULT_OUT.read_text()) if DEFAULT_OUT.is_file() else {"measured": {}}
MEASURED = {k.split("|")[0]: v for k, v in STORE["measured"].items()
            if k.endswith("|cpu") and not v.get("error") and v.get("compiled") is not None}

# eager kernels, compiled kernels (graphs): predicted vs measured, and why (docs/zoo-scoreboard.md)
_REALIZED = "compiled, cpu: Inductor realizes the attention kernel's pointwise inputs (mask, normed or rotated q/k) again per layer; kpredict shares one kernel"
_MOE = "eager: the experts a mixture-of-experts layer runs depend on the router's values (nonzero of the expert mask); compiled: 1 graph measured, kpredict breaks at nonzero"
MISSES: dict[str, str] = {
    "olmo": _REALIZED + " (30 vs 31)",
    "helium": _REALIZED + " (30 vs 31)",
    "gpt_bigcode": _REALIZED + " (20 vs 21)",
    "bloom": "compiled 23 vs 24, not read yet",
    "phi3": "compiled 23 vs 21 (fused qkv projection, rotary on a slice), not read yet",
    "deberta_v2": "compiled 33 vs 31, not read yet",
    "mixtral": _MOE + " (eager 103 vs 123)",
    "qwen2_moe": _MOE + " (eager 136 vs 156)",
    "granitemoe": _MOE + " (eager 104 vs 124)",
}


@pytest.fixture(scope="module")
def site() -> Path:
    return _install(TRANSFORMERS)


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=MISSES[n])) if n in MISSES else n
    for n in MODELS if n in MEASURED])
def test_prediction_equals_the_recorded_measurement(site: Path, name: str) -> None:
    m, got = MODELS[name], MEASURED[name]
    assert got["digest"] == digest(m, site), (
        f"{name}: measured for another source or command: run scripts/transformers_scoreboard.py --measure")
    q = f"{m.model}.forward"
    f = analyze_file(m.path(site), Settings(target="cpu"), only=q, examples={q: EXAMPLE},
                     inits={q: f"config={m.config}({m.keywords})"}).functions[0]
    assert (f.eager.kernels, f.compiled.kernels, f.compiled.graphs) == (got["eager"], got["compiled"], got["graphs"])


def test_most_models_are_measured() -> None:
    """The scoreboard is measured, not only listed: issue 27 asks for >= 50 architectures."""
    assert len(MEASURED) >= 0.9 * len(MODELS), sorted(set(MODELS) - set(MEASURED))
