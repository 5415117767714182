"""kpredict against real transformers models in training (issue 30): one step of each causal LM of
scripts/transformers_scoreboard.py (the same tiny configs), written as a user would write it:

    model = LlamaForCausalLM(LlamaConfig(...)); optimizer = torch.optim.AdamW(model.parameters())
    def train_step(input_ids):
        optimizer.zero_grad(); out = model(input_ids=input_ids, labels=input_ids)
        out.loss.backward(); optimizer.step()

    PYTHONPATH=SITE python scripts/training_scoreboard.py --site SITE --measure    # what the store lacks
    python scripts/training_scoreboard.py --site SITE --markdown docs/training-scoreboard.md

Each step file is written in --work (default: a temporary folder) beside a link to SITE/transformers,
so the static path reads transformers' source and never imports it. --measure runs `kpredict verify
--device cpu --eager-only` on it (a child that imports transformers: the dispatch-mode oracle, with
autograd on) and stores the eager figures, per phase by the step's lines, in
benchmarks/training_scoreboard.json, keyed model|torch|cpu with a digest of the step's text and the
model's modeling and configuration files. Predictions are always made afresh and compared with it;
tests/test_training_scoreboard.py holds every prediction to the store.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
from transformers_scoreboard import EXAMPLE, MODELS, HFModel, _kpredict, _torch_version  # noqa: E402

DEFAULT_OUT = ROOT / "benchmarks" / "training_scoreboard.json"
STEP = '''import torch
from transformers.models.{name}.configuration_{name} import {config}
from transformers.models.{name}.modeling_{name} import {lm}

model = {lm}({config}({keywords})).train()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)


# kpredict: example {example}
def train_step(input_ids):
    optimizer.zero_grad()
    out = model(input_ids=input_ids, labels=input_ids)
    out.loss.backward()
    optimizer.step()
    return out.loss
'''
# the lines of STEP each phase runs on (what the oracle's per-line rows are summed by)
PHASE_LINES = {"forward": 12, "backward": 13, "optimizer": 14}
PHASES = tuple(PHASE_LINES)


def causal_lm(m: HFModel, site: Path) -> str | None:
    """The model's causal LM class (`<Prefix>ForCausalLM`, or `<Prefix>LMHeadModel` as GPT-2 names it),
    when its modeling file defines one."""
    text = m.path(site).read_text(encoding="utf-8") if m.path(site).is_file() else ""
    prefix = m.model.removesuffix("Model")
    return next((lm for lm in (prefix + "ForCausalLM", prefix + "LMHeadModel") if f"class {lm}(" in text), None)


def step_file(m: HFModel, site: Path, work: Path) -> Path | None:
    """Write the model's training step into `work` (beside a link to the site's transformers)."""
    lm = causal_lm(m, site)
    if lm is None:
        return None
    work.mkdir(parents=True, exist_ok=True)
    link = work / "transformers"
    if not link.exists():
        link.symlink_to(site / "transformers", target_is_directory=True)
    path = work / f"train_{m.name}.py"
    text = STEP.format(name=m.name, config=m.config, lm=lm, keywords=m.keywords, example=EXAMPLE)
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)
    return path


def digest(m: HFModel, site: Path, step: Path) -> str:
    h = hashlib.sha256(step.read_bytes())
    for path in (m.path(site), m.path(site).with_name(f"configuration_{m.name}.py")):
        h.update(path.read_bytes() if path.is_file() else b"-")
    return h.hexdigest()[:16]


def _figures(d: dict[str, Any]) -> dict[str, Any]:
    return {k: d.get(k) for k in ("kernels", "reads", "writes", "bytes")}


def predict(step: Path, site: Path, timeout: int) -> dict[str, Any]:
    """kpredict's static eager figures (`--target cpu`), in total and per phase, and the activation bytes."""
    _rc, doc = _kpredict(["--target", "cpu", "--output-format", "json", f"{step}::train_step"], site, timeout)
    try:
        f = doc["files"][0]
        if f["error"]:
            return {"error": str(f["error"])[:300]}
        fn = f["functions"][0]
        return {"eager": _figures(fn["eager"]), "lower_bound": bool(fn["eager"].get("lower_bound")),
                "causes": [c["what"] for c in fn["lower_bound_causes"]][:5],
                "phases": {p: _figures((fn.get("phases") or {}).get(p, {}).get("eager", {})) for p in PHASES},
                "activation_bytes": fn.get("activation_bytes")}
    except (TypeError, KeyError, IndexError):
        return {"error": "no report"}


def measure(step: Path, site: Path, timeout: int) -> dict[str, Any]:
    """The CPU oracle's eager figures (`kpredict verify --device cpu --eager-only`), per phase from the
    measured ops' lines."""
    rc, doc = _kpredict(["verify", "--device", "cpu", "--eager-only", "--output-format", "json", "--timeout",
                         str(timeout), f"{step}::train_step"], site, timeout + 60)
    try:
        fn = doc["functions"][0]
        e = fn["measured"]["eager"]
        phases = {}
        for p, line in PHASE_LINES.items():
            rows = [o for o in e["ops"] if o.get("line") == line and o.get("kind") == "kernel"
                    and not str(o.get("name", "")).startswith("profiler::")]
            phases[p] = {"kernels": sum(int(o.get("kernels", 1)) for o in rows),
                         "reads": sum(o["reads"] for o in rows), "writes": sum(o["writes"] for o in rows),
                         "bytes": sum(o["bytes"] for o in rows)}
        total = {k: sum(ph[k] for ph in phases.values()) for k in ("kernels", "reads", "writes", "bytes")}
        return {"eager": total, "phases": phases, "error": fn.get("error") and str(fn["error"])[:300]}
    except (TypeError, KeyError, IndexError):
        return {"error": "timeout" if rc == 124 else f"verify exit {rc}, no figures"}


def exact(p: dict[str, Any], m: dict[str, Any] | None) -> dict[str, bool | None]:
    ok = bool(m) and not m.get("error") and not p.get("error") and m.get("eager") is not None
    out: dict[str, bool | None] = {
        "kernels": p["eager"]["kernels"] == m["eager"]["kernels"] if ok else None,
        "transfers": (p["eager"]["reads"], p["eager"]["writes"]) == (m["eager"]["reads"], m["eager"]["writes"])
        if ok else None,
        "bytes": p["eager"]["bytes"] == m["eager"]["bytes"] if ok else None,
    }
    for ph in PHASES:
        out[ph] = (p["phases"][ph]["kernels"] == m["phases"][ph]["kernels"]) if ok else None
    return out


def markdown(rows: dict[str, Any], summary: dict[str, str]) -> str:
    lines = ["# Training scoreboard: one AdamW step of transformers' causal LMs", "",
             "Written by `scripts/training_scoreboard.py` (issue 30): each model's `ForCausalLM` at the "
             "transformers scoreboard's 2-layer config, input `" + EXAMPLE + "`, labels = input, `loss.backward()`, "
             "`AdamW.step()`; eager figures predicted by `kpredict --target cpu` (static) / measured by the CPU "
             "oracle (`kpredict verify --device cpu --eager-only`, torch " + summary.get("torch", "?") + "). "
             "**x** marks a figure that differs.", "",
             "Summary: " + ", ".join(f"{k} {v}" for k, v in summary.items() if k != "torch"), "",
             "| model | kernels | forward | backward | optimizer | bytes | activations (predicted) | note |",
             "|---|---|---|---|---|---|---|---|"]
    for name, r in rows.items():
        p, m, x = r["predicted"], r.get("measured") or {}, r["exact"]
        if p.get("error"):
            lines.append(f"| {name} | - | - | - | - | - | - | {p['error'][:80]} |")
            continue

        def cell(pv: Any, mv: Any, ok: bool | None) -> str:
            return f"{pv} / {mv if mv is not None else '-'}{' **x**' if ok is False else ''}"
        me, mp = m.get("eager") or {}, m.get("phases") or {}
        note = "; ".join(p.get("causes") or []) or (m.get("error") or "")
        lines.append(f"| {name} | {cell(p['eager']['kernels'], me.get('kernels'), x['kernels'])} | "
                     + " | ".join(cell(p['phases'][ph]['kernels'], (mp.get(ph) or {}).get('kernels'), x[ph])
                                  for ph in PHASES)
                     + f" | {cell(p['eager']['bytes'], me.get('bytes'), x['bytes'])} | {p.get('activation_bytes')} "
                       f"| {note[:100]} |")
    lines += ["", "Why each miss misses (mixture-of-experts routing, an activation not followed, backwards not "
              "described yet): `MISSES` in tests/test_training_scoreboard.py, which holds every other model to "
              "these figures."]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", required=True, type=Path, help="folder holding the transformers package source")
    ap.add_argument("--models", default=",".join(MODELS), help="comma list (models without a ForCausalLM are skipped)")
    ap.add_argument("--measure", action="store_true", help="measure what the store lacks (torch and transformers)")
    ap.add_argument("--work", type=Path, help="where the step files are written (default: a temporary folder)")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--markdown", type=Path)
    args = ap.parse_args()
    if not (args.site / "transformers").is_dir():
        print(f"{args.site}: no transformers folder here", file=sys.stderr)
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="kpredict-training-"))
    store: dict[str, Any] = json.loads(args.out.read_text()) if args.out.is_file() else {}
    measured: dict[str, Any] = store.setdefault("measured", {})
    tv = _torch_version()
    rows: dict[str, Any] = {}
    print(f"{'model':<16} {'kernels p/m':>12} {'fwd':>9} {'bwd':>9} {'opt':>9} bytes  note")
    for name in args.models.split(","):
        m = MODELS.get(name)
        step = step_file(m, args.site.resolve(), work) if m else None
        if step is None:
            continue
        key, h = f"{name}|{tv}|cpu", digest(m, args.site, step)
        old = measured.get(key)
        if args.measure and (not old or old.get("digest") != h):
            t1 = time.time()
            measured[key] = {"digest": h, **measure(step, args.site, args.timeout), "seconds": round(time.time() - t1, 1)}
            args.out.write_text(json.dumps(store, indent=1, sort_keys=True) + "\n")
        got = measured.get(key)
        stale = bool(got) and got.get("digest") != h
        p = predict(step, args.site, args.timeout)
        x = exact(p, None if stale else got)
        rows[name] = {"predicted": p, "measured": got, "stale": stale, "exact": x}
        mark = {True: "=", False: "x", None: "-"}
        g = (got or {}).get("eager") or {}
        gp = (got or {}).get("phases") or {}
        pp = p.get("phases") or {ph: {} for ph in PHASES}
        cells = [f"{pp[ph].get('kernels')}/{(gp.get(ph) or {}).get('kernels', '-')}{mark[x[ph]]}" for ph in PHASES]
        print(f"{name:<16} {str((p.get('eager') or {}).get('kernels')) + '/' + str(g.get('kernels', '-')):>11}"
              f"{mark[x['kernels']]} {cells[0]:>9} {cells[1]:>9} {cells[2]:>9} {mark[x['bytes']]:>5}  "
              f"{(p.get('error') or '; '.join(p.get('causes') or []) or (got or {}).get('error') or '')[:70]}", flush=True)
    judged = [r["exact"] for r in rows.values() if r["exact"]["kernels"] is not None]

    def count(k: str) -> str:
        vals = [x[k] for x in judged if x[k] is not None]
        return f"{sum(vals)}/{len(vals)}"

    summary = {"models": str(len(rows)), "measured": str(len(judged)),
               **{k: count(k) for k in ("kernels", "transfers", "bytes", *PHASES)}, "torch": tv}
    store["rows"], store["summary"] = rows, summary
    args.out.write_text(json.dumps(store, indent=1, sort_keys=True) + "\n")
    print(" ".join(f"{k}={v}" for k, v in summary.items()))
    if args.markdown:
        args.markdown.write_text(markdown(rows, summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
