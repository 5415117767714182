"""Share of `forward` methods of transformers' modeling files whose eager and compiled bytes are a
number or a formula, analyzed with no flags (issue 26: 4% at first, the goal 95%).

  python scripts/bytes_coverage.py                 # every modeling_*.py file (a few minutes, one core)
  python scripts/bytes_coverage.py --limit 60      # 60 files, spread evenly
  python scripts/bytes_coverage.py --why 20        # and the first assumptions of 20 methods still at '?'
  python scripts/bytes_coverage.py --models .../diffusers/models --glob '*/*.py'   # another library's models

The wheel is the one benchmarks/throughput.py fetches (~/.cache/kpredict-bench/...); it is only read.
Prints the files, the forward methods, and how many have both bytes as a number, as a formula (at least
one of the two), or unknown (`?`, either).
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kpredict.api import analyze_file  # noqa: E402
from kpredict.settings import Settings  # noqa: E402

# the wheel as benchmarks/throughput.py unpacks it, else the copy tests/corpus_sources.py keeps (the same files)
MODELS = next((p for p in (Path.home() / ".cache/kpredict-bench/transformers-5.25.0-py3-none-any/transformers/models",
                           Path.home() / ".cache/kpredict-bench/corpus/transformers-5.25.0/transformers/models")
               if p.is_dir()), Path.home() / ".cache/kpredict-bench/transformers-5.25.0-py3-none-any/transformers/models")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=Path, default=MODELS)
    ap.add_argument("--glob", default="*/modeling_*.py", help="files under --models (diffusers: '*/*.py')")
    ap.add_argument("--limit", type=int, default=0, help="this many files, spread evenly (0: all)")
    ap.add_argument("--why", type=int, default=0, help="list this many methods whose bytes are unknown")
    a = ap.parse_args()
    files = sorted(a.models.glob(a.glob))
    if a.limit:
        step = max(1, len(files) // a.limit)
        files = files[::step][: a.limit]
    n = number = formula = unknown = errors = 0
    missing: list[str] = []
    reasons: Counter[str] = Counter()
    t0 = time.process_time()
    for f in files:
        rep = analyze_file(f, Settings())  # no flags: not even the nearest pyproject's settings
        if rep.error is not None:
            errors += 1
            print(f"{f.parent.name}/{f.name}: error: {rep.error}", file=sys.stderr)
        for fn in rep.functions:
            if not fn.qualname.endswith(".forward"):
                continue
            n += 1
            e, c = fn.eager.bytes, fn.compiled.bytes
            if e is None or c is None:
                unknown += 1
                reasons[reason(fn.assumptions)] += 1
                if len(missing) < a.why:
                    shapes = [x for x in fn.assumptions if "shape" in x][:2]
                    missing.append(f"  {f.parent.name}/{f.name}:{fn.line} {fn.qualname}: {'; '.join(shapes)}")
            elif isinstance(e, int) and isinstance(c, int):
                number += 1
            else:
                formula += 1
    pct = (lambda k: f"{100 * k / n:.1f}%") if n else (lambda k: "-")
    print(f"files {len(files)} ({errors} errors), forward methods {n}, {time.process_time() - t0:.0f} s CPU")
    print(f"bytes known: {number + formula} ({pct(number + formula)}): a number {number} ({pct(number)}), "
          f"a formula {formula} ({pct(formula)}); unknown {unknown} ({pct(unknown)})")
    for why, k in reasons.most_common():
        print(f"  {k:5d}  {why}")
    print("\n".join(missing))


# what the report says keeps a function's bytes unknown, first match wins (kpredict/symbolic.py, api.py)
REASONS = (
    ("a parameter of unknown shape", "a parameter's shape is not known with the inputs sized"),
    ("bytes not worked out with the inputs sized", "another tensor's shape is not known with the inputs sized"),
    ("are not a sum of products", "bytes are not a polynomial in the assumed sizes"),
    ("kernel counts depend on", "kernel counts change with the sizes"),
    ("time budget", "the file's time budget is spent"),
    ("bytes unknown: ", "a tensor's shape or dtype is not known, no size named to fit"),
    ("shape (", "an input has assumed dims; no formula for another reason"),
    ("tensor of unknown shape", "an input has no shape and no assumed layout"),
)


def reason(assumptions: list[str]) -> str:
    """The first of REASONS that the function's assumptions show."""
    text = "\n".join(assumptions)
    return next((why for key, why in REASONS if key in text), "not said")


if __name__ == "__main__":
    main()
