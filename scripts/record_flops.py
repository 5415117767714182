"""Measure what FlopCounterMode counts for the FLOP oracle's fixtures and store it (tests/flops_cases.py).

    python scripts/record_flops.py          # stale and missing entries only
    python scripts/record_flops.py --check  # say what is stale, measure nothing (exit 1 if any)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

import flops_cases  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only list stale or missing entries")
    args = ap.parse_args()
    store = flops_cases.load()
    stale = [flops_cases.rel(p) for p in flops_cases.FILES if flops_cases.current(store, p) is None]
    print(f"{flops_cases.store_path().relative_to(REPO)}: {len(flops_cases.FILES)} files, {len(stale)} stale or missing")
    for s in stale:
        print(f"  {s}")
    if args.check:
        return 1 if stale else 0
    flops_cases.answers(update=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
