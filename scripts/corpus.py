"""Run kpredict over a corpus of real model code and measure how much of it is understood.

    python scripts/corpus.py [--target cpu] [--timeout 120] [--jobs 2] [--json out.json] PATH...

For every .py file under PATH (never imported, never run): crashes (an internal error instead of a
report), time, and for every `forward` method: whether it gets a prediction (at least one kernel),
and whether it is fully understood (no `unknown` entry). Prints totals and the most frequent things
not understood, which is where the next work on the frontend should go.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor


class _Timeout(BaseException):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Timeout()


def analyze_one(args: tuple[str, str, int]) -> dict:
    path, target, timeout = args
    from kpredict.api import analyze_file
    from kpredict.settings import Settings

    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    t0 = time.time()
    out: dict = {"path": path, "error": None, "timeout": False, "functions": []}
    try:
        rep = analyze_file(path, Settings(target=target))
        out["error"] = rep.error
        for fn in rep.functions:
            out["functions"].append({
                "qualname": fn.qualname, "eager": fn.eager.kernels, "compiled": fn.compiled.kernels,
                "unknown": [u.name for u in fn.unknown],
            })
    except _Timeout:
        out["timeout"] = True
    finally:
        signal.alarm(0)
    out["seconds"] = round(time.time() - t0, 2)
    return out


def crashed(r: dict) -> bool:
    err = r["error"] or ""
    return err.startswith("internal error") or any(
        any(u.startswith("internal error") for u in f["unknown"]) for f in r["functions"])


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--target", default="cpu")
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json")
    ap.add_argument("--glob", default="*.py")
    a = ap.parse_args(argv)
    from pathlib import Path

    files: list[str] = []
    for p in a.paths:
        pp = Path(p)
        files.extend(sorted(str(f) for f in pp.rglob(a.glob)) if pp.is_dir() else [p])
    with ProcessPoolExecutor(a.jobs) as ex:
        results = list(ex.map(analyze_one, [(f, a.target, a.timeout) for f in files]))
    fwd = [f for r in results for f in r["functions"] if f["qualname"].endswith(".forward")]
    predicted = [f for f in fwd if f["eager"] not in (0, None)]
    clean = [f for f in predicted if not f["unknown"]]
    unknown = Counter(u for f in fwd for u in set(f["unknown"]))
    summary = {
        "files": len(results),
        "parse_errors": sum(1 for r in results if r["error"] and not crashed(r)),
        "crashes": sum(1 for r in results if crashed(r)),
        "timeouts": sum(1 for r in results if r["timeout"]),
        "functions": sum(len(r["functions"]) for r in results),
        "forward_methods": len(fwd),
        "forward_with_prediction": len(predicted),
        "forward_fully_understood": len(clean),
        "seconds": round(sum(r["seconds"] for r in results), 1),
    }
    print(json.dumps(summary, indent=2))
    for r in results:
        if crashed(r) or r["timeout"]:
            print("CRASH" if crashed(r) else "TIMEOUT", r["path"], r["error"] or "")
    print("most frequent things not understood in forward methods:")
    for name, n in unknown.most_common(25):
        print(f"  {n:5d}  {name}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"summary": summary, "results": results, "unknown": unknown.most_common()}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.exit(main(sys.argv[1:]))
