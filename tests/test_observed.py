"""--target cuda predictions against what a GPU showed (fixtures/observed/<device>-<torch>.json).

The files are written by scripts/gpu_check.sh on a GPU machine and committed as data. Eager and
compiled kernel counts must match; a function whose figure differs fails with both numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kpredict.api import analyze_file, split_target
from kpredict.settings import Settings

REPO = Path(__file__).resolve().parent.parent
OBSERVED = sorted((REPO / "fixtures" / "observed").glob("*.json"))


def _cases() -> list[tuple[str, str, dict]]:
    out = []
    for f in OBSERVED:
        doc = json.loads(f.read_text())
        for spec, measured in sorted(doc["functions"].items()):
            out.append((f.name, spec, measured))
    return out


CASES = _cases()


@pytest.mark.skipif(not CASES, reason="no GPU observation recorded yet (run scripts/gpu_check.sh on a GPU)")
@pytest.mark.parametrize("source,spec,measured", CASES, ids=[f"{s}:{p}" for s, p, _ in CASES])
def test_cuda_prediction_matches_gpu_observation(source: str, spec: str, measured: dict) -> None:
    path, qual = split_target(spec)
    p = Path(path) if Path(path).is_absolute() else REPO / path
    rep = analyze_file(p, Settings(target="cuda"), only=qual)
    assert rep.error is None, rep.error
    fn = rep.functions[0]
    if measured.get("eager"):
        assert fn.eager.kernels == measured["eager"]["kernels"], (source, spec)
    if measured.get("compiled"):
        assert fn.compiled.kernels == measured["compiled"]["kernels"], (source, spec, measured["compiled"].get("names"))
