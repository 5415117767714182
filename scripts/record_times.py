"""Calibrate the time model on a GPU (issue 29): measure each fixture function's eager and compiled
time (kpredict.verify.timing: CUDA events, median of N calls after warm-up), store it as observation
data, and say how often the predicted compiled speedup is within +-30% of the measured one.

    python scripts/record_times.py --device cuda --gpu h100     # measure, write, compare
    python scripts/record_times.py --compare FILE.json --gpu h100   # compare a stored observation

Writes fixtures/observed/times-<device name>-torch-<version>.json. Predictions are made for
--target cuda with the --gpu preset (rules/devices.toml); pick the preset of the card measured.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from kpredict.api import analyze_file  # noqa: E402
from kpredict.settings import Settings  # noqa: E402

TOLERANCE = 0.30


def compare(observed: dict, gpu: str, target: str = "cuda") -> tuple[list[dict], float | None]:
    """Per measured function: predicted and measured speedup, and whether they agree within +-30%
    of the measured one; and the share that agree (None when nothing was measured)."""
    rows = []
    for path, answer in observed["files"].items():
        fns = {fn.qualname: fn for fn in analyze_file(REPO / path, Settings(target=target, gpu=gpu)).functions}
        for q, m in answer.get("functions", {}).items():
            if "eager_us" not in m or "compiled_us" not in m or q not in fns or fns[q].speedup is None:
                continue
            measured = m["eager_us"] / m["compiled_us"]
            predicted = fns[q].speedup
            rows.append({"path": path, "qualname": q, "measured": measured, "predicted": predicted,
                         "eager_us": m["eager_us"], "predicted_eager_us": fns[q].eager_cost.time_us,
                         "within": abs(predicted - measured) <= TOLERANCE * measured})
    share = sum(r["within"] for r in rows) / len(rows) if rows else None
    return rows, share


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--gpu", default="h100", help="device preset the predictions are made for")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--compare", metavar="FILE", help="compare a stored observation; measure nothing")
    ap.add_argument("paths", nargs="*", help="fixture files (default: the FLOP oracle's list)")
    a = ap.parse_args()
    if a.compare:
        observed = json.loads(Path(a.compare).read_text(encoding="utf-8"))
    else:
        import flops_cases

        paths = a.paths or [flops_cases.rel(p) for p in flops_cases.FILES]
        out = subprocess.run([sys.executable, "-m", "kpredict.verify.timing", "--device", a.device,
                              "--runs", str(a.runs), *paths], cwd=REPO, capture_output=True, text=True, check=True)
        observed = json.loads(out.stdout)
        slug = re.sub(r"[^A-Za-z0-9.+-]+", "-", observed["device_name"]).strip("-").lower()
        dest = REPO / "fixtures" / "observed" / f"times-{slug}-torch-{observed['torch']}.json"
        dest.write_text(json.dumps(observed, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {dest.relative_to(REPO)}")
    rows, share = compare(observed, a.gpu)
    for r in rows:
        mark = "ok " if r["within"] else "off"
        print(f"{mark} {r['path']}::{r['qualname']}: speedup predicted {r['predicted']:.2f}x, measured {r['measured']:.2f}x")
    print(f"{len(rows)} functions; compiled speedup within +-30%: "
          + ("n/a" if share is None else f"{share:.0%}") + f" (issue 29 asks for >= 80%) on preset {a.gpu}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
