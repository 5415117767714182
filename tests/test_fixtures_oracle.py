"""Every fixture function's --target cpu prediction equals what torch measures on CPU.

The oracle (kpredict.verify) runs each file's functions in a child process with the example inputs
written above each `def`, through the same code path as `kpredict verify --device cpu`. Nothing
here types an expected number: torch is the reference. Its answers are read from the store
(kpredict.verify.recorded) while their key holds; a changed fixture is measured again.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from kpredict.verify import recorded  # noqa: E402
from kpredict.verify.runner import run_verify  # noqa: E402
from oracle_cases import FIXTURE_FILES  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
FILES = FIXTURE_FILES


def _describe(check) -> str:
    bad = [f"{r.label}: predicted {r.predicted} measured {r.measured}" for r in check.rows if r.ok is False]
    return f"{check.qualname}: " + "; ".join(bad or [str(check.error)])


@pytest.mark.oracle
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_fixture_predictions_match_cpu_oracle(path: Path) -> None:
    res = run_verify(str(path), "*", device="cpu", timeout=1200, child=recorded.child())
    assert res.error is None, res.error
    assert res.functions, "no fixture function was measured"
    wrong = [_describe(f) for f in res.functions if not f.match]
    assert not wrong, "\n".join(wrong)
