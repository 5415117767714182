"""Predictions against recorded observations (fixtures/observed/*.json).

What a GPU showed (written by scripts/gpu_check.sh on a GPU machine) is held against --target cuda;
what the CPU oracle showed for code that needs a library the test machine may lack (transformers,
fixtures/libraries/) against --target cpu. The files are committed as data. Eager and compiled
kernel counts must match; a function whose figure differs fails with both numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kpredict.api import analyze_file, split_target
from kpredict.settings import Settings
from kpredict.verify.runner import launches

REPO = Path(__file__).resolve().parent.parent
OBSERVED = sorted((REPO / "fixtures" / "observed").glob("*.json"))


def _cases() -> list[tuple[str, str, dict]]:
    out = []
    for f in OBSERVED:
        doc = json.loads(f.read_text())
        for spec, measured in sorted(doc["functions"].items()):
            out.append((f.name, spec, {**measured, "device": doc.get("device")}))
    return out


CASES = _cases()


@pytest.mark.skipif(not CASES, reason="no observation recorded yet (run scripts/gpu_check.sh on a GPU)")
@pytest.mark.parametrize("source,spec,measured", CASES, ids=[f"{s}:{p}" for s, p, _ in CASES])
def test_prediction_matches_recorded_observation(source: str, spec: str, measured: dict) -> None:
    """A GPU's observation is held against --target cuda; a CPU one (code that needs a library the
    test machine lacks, such as transformers) against --target cpu."""
    path, qual = split_target(spec)
    p = Path(path) if Path(path).is_absolute() else REPO / path
    target = "cpu" if measured.get("device") == "cpu" else "cuda"
    rep = analyze_file(p, Settings(target=target), only=qual)
    assert rep.error is None, rep.error
    fn = rep.functions[0]
    if measured.get("eager"):
        assert fn.eager.kernels == launches(measured["eager"]), (source, spec)
    if measured.get("compiled"):
        assert fn.compiled.kernels == launches(measured["compiled"]), (source, spec, measured["compiled"].get("names"))
