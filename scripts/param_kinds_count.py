"""Syncs and graph breaks predicted over the `forward` methods of transformers' modeling files, to
measure how parameter kinds (issue 26, item 5) change them: a bool flag taken as a float32 tensor
makes a phantom tensor-to-bool sync and a graph break; token ids taken as float32 make phantom casts.

  python scripts/param_kinds_count.py                 # 40 modeling files, spread evenly
  python scripts/param_kinds_count.py --limit 120 --list

The wheel is the one benchmarks/throughput.py fetches (~/.cache/kpredict-bench/...); it is only read.
Prints: files, forward methods, methods with any sync, total syncs, methods with any graph break,
total graph breaks (eager syncs and compiled breaks), and the parameters taken as tensors by dtype.
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kpredict.api import analyze_file  # noqa: E402

MODELS = Path.home() / ".cache/kpredict-bench/transformers-5.25.0-py3-none-any/transformers/models"


def _int(c: object) -> int:
    return c if isinstance(c, int) else 1  # a symbolic count is at least one


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=Path, default=MODELS)
    ap.add_argument("--limit", type=int, default=40)
    ap.add_argument("--list", action="store_true", help="print each forward with a sync or break")
    a = ap.parse_args()
    files = sorted(a.models.glob("*/modeling_*.py"))
    step = max(1, len(files) // a.limit)
    files = files[::step][: a.limit]
    n = sync_fns = syncs = brk_fns = brks = 0
    kinds: Counter[str] = Counter()
    for f in files:
        rep = analyze_file(f)
        for fn in rep.functions:
            if not fn.qualname.endswith(".forward"):
                continue
            n += 1
            s, b = _int(fn.eager.syncs), len(fn.compiled.graph_breaks)
            syncs += s
            brks += b
            sync_fns += s > 0
            brk_fns += b > 0
            for text in fn.assumptions:
                m = re.match(r"(\w+): (?:(\w+) )?tensor of unknown shape(?:, (\w+))?", text)
                if m:
                    kinds[m.group(2) or m.group(3) or "?"] += 1
            if a.list and (s or b):
                print(f"  {f.parent.name}/{f.name}:{fn.line} {fn.qualname}: syncs {s}, breaks {b}")
    print(f"files {len(files)}, forward methods {n}")
    print(f"syncs: {syncs} in {sync_fns} methods; graph breaks: {brks} in {brk_fns} methods")
    print("parameters taken as tensors, by dtype:", dict(sorted(kinds.items())))


if __name__ == "__main__":
    main()
