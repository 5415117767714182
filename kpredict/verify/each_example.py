"""One loop over the functions of a file that have example inputs, run in this process: what the FLOP
oracle (verify.flops) and the timing calibration (verify.timing) share. Kept out of verify/child.py, whose
syntax is part of the CPU oracle's version (verify.recorded.MEASURING): a change there re-measures
every recorded fixture."""

from __future__ import annotations

import contextlib
import sys
from typing import Any

from kpredict.verify.annotations import annotations_for, definitions
from kpredict.verify.child import load_module


def each_example_function(path: str, measure: Any) -> dict[str, Any]:
    """`measure(module, path, qualname)` for every function of `path` with example inputs (as the CPU
    oracle's "*" request picks them), each failure that function's answer; a file that fails to load
    is the file's error. What the FLOP oracle and the timing calibration share."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    quals = [q for q, (_line, kind) in definitions(source).items()
             if kind == "def" and "<locals>" not in q and annotations_for(path, q, source).example is not None]
    out: dict[str, Any] = {"functions": {}, "error": None}
    try:
        with contextlib.redirect_stdout(sys.stderr):
            mod = load_module(path, [])
    except Exception as e:  # noqa: BLE001 - the file's own failure is its answer
        out["error"] = f"{type(e).__name__}: {e}"
        return out
    for q in quals:
        try:
            with contextlib.redirect_stdout(sys.stderr):
                out["functions"][q] = measure(mod, path, q)
        except Exception as e:  # noqa: BLE001 - one failing function must not stop the others
            out["functions"][q] = {"error": f"{type(e).__name__}: {e}"}
    return out
