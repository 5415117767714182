"""Measure again what the CPU oracle tests read from the store, and write it (kpredict.verify.recorded).

    python scripts/record_oracle.py            # stale and missing entries only
    python scripts/record_oracle.py --all      # every entry, measured afresh
    python scripts/record_oracle.py --check    # say what is stale, measure nothing (exit 1 if any)

Runs the oracle tests themselves with KPREDICT_ORACLE=update (or record), so the entries are exactly
the requests those tests make, then removes entries no test asks for any more.
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

import oracle_cases  # noqa: E402
from kpredict.verify import recorded  # noqa: E402

TESTS = ["tests/test_fixtures_oracle.py", "tests/test_models_oracle.py",
         "tests/test_lint_rules.py::test_kp101_figures_match_the_cpu_oracle",
         "tests/test_named_sizes.py::test_formula_equals_the_cpu_oracle_at_two_sizes",
         "tests/test_named_sizes.py::test_assumed_layout_formula_equals_the_cpu_oracle",
         # real packages' models, in their own store (fixtures/oracle/packages-cpu-*), never pruned here
         "tests/test_verify_real_models.py"]


def _status(store: recorded.Store) -> tuple[list[str], set[str]]:
    importlib.reload(oracle_cases)  # the fixture lists as they are now: a fixture added meanwhile counts
    with tempfile.TemporaryDirectory() as tmp:
        reqs = oracle_cases.requests(Path(tmp))
        problems, wanted = [], set()
        for req in reqs:
            wanted.add(store.file_of(recorded.entry_id(req)).name)
            entry = store.get(req)
            why = "never recorded" if entry is None else recorded.why_stale(entry)
            if why:
                problems.append(f"{recorded.entry_id(req)}: {why}")
    return problems, wanted


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--all", action="store_true", help="measure every entry again, not only stale ones")
    ap.add_argument("--check", action="store_true", help="only list stale or missing entries")
    ap.add_argument("-n", default="2", help="pytest-xdist workers (default 2)")
    args = ap.parse_args()
    store = recorded.Store.for_device("cpu")
    problems, wanted = _status(store)
    print(f"{store.folder.relative_to(REPO)}: {len(wanted)} requests, {len(problems)} stale or missing")
    for p in problems:
        print(f"  {p}")
    if args.check:
        return 1 if problems else 0
    if problems or args.all:
        env = dict(os.environ, KPREDICT_ORACLE="record" if args.all else "update")
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", args.n, *TESTS]
        rc = subprocess.call(cmd, cwd=REPO, env=env)
        print(f"oracle tests exited {rc} (a mismatch is a prediction's failure, recorded all the same)")
    removed = [f for f in store.folder.glob("*.json") if f.name not in wanted]
    for f in removed:
        f.unlink()
    problems, _ = _status(store)
    print(f"removed {len(removed)} entries no test asks for; {len(problems)} still stale or missing")
    for p in problems:
        print(f"  {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
