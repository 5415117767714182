"""`--output-format markdown`: a review comment. First a table of every function that launches
kernels (eager and compiled kernels and bytes, the modelled speedup, findings), then the findings
with their figures."""

from __future__ import annotations

from kpredict.lint.model import LintRun
from kpredict.render.findings_common import figures_text
from kpredict.render.text_report import at_least, human_bytes

COLLAPSE_ROWS = 30


def cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(run: LintRun) -> str:
    n = run.count
    title = "no findings" if n == 0 else f"{n} finding{'' if n == 1 else 's'}"
    if run.errors:
        e = len(run.errors)
        title += f", {e} file{'' if e == 1 else 's'} not analyzed"
    out = [f"### kpredict: {title}", "", f"Predicted for `{run.target}`, per call; compiled means under `torch.compile`.", ""]
    rows = []
    devices: set[str] = set()
    for f in run.files:
        if f.error:
            continue
        per_fn: dict[str, int] = {}
        for d in f.diagnostics:
            per_fn[d.qualname] = per_fn.get(d.qualname, 0) + 1
        for fn in f.report.functions:
            lb = fn.lower_bound  # never a silent zero: a function with something not understood is listed
            if not fn.eager.kernels and not fn.compiled.kernels and not lb and fn.qualname not in per_fn:
                continue
            speedup = "?" if fn.speedup is None or lb else f"{fn.speedup:.2f}x"
            if fn.device:
                devices.add(fn.device)
            rows.append(f"| `{cell(f.relpath)}::{cell(fn.qualname)}` | {cell(at_least(fn.eager.kernels, lb))} "
                        f"| {cell(at_least(human_bytes(fn.eager.bytes), lb))} | {cell(at_least(fn.compiled.kernels, lb))} "
                        f"| {cell(at_least(human_bytes(fn.compiled.bytes), lb))} | {speedup} | {per_fn.get(fn.qualname, 0)} |")
    if rows:
        table = ["| function | eager kernels | eager bytes | compiled kernels | compiled bytes | speedup | findings |",
                 "|---|---:|---:|---:|---:|---:|---:|", *rows]
        if len(rows) > COLLAPSE_ROWS:
            out += [f"<details><summary>{len(rows)} functions</summary>", "", *table, "", "</details>"]
        else:
            out += table
        out.append("")
        if devices:
            out += [f"Speedup: modelled eager time / compiled time, a roofline model on {', '.join(sorted(devices))} "
                    "(kpredict's docs/time.md), unchecked against a measurement.", ""]
    if n:
        out += ["#### Findings", ""]
        for f, d in run.diagnostics():
            out.append(f"- **{d.code}** `{f.relpath}:{d.span.line}:{d.span.col + 1}` in `{d.qualname}`: {d.message}")
            figs = figures_text(d.figures)
            if figs:
                out.append(f"  <br>figures: {figs}")
            if d.help:
                out.append(f"  <br>help: {d.help}")
        out.append("")
    errors = run.errors
    if errors:
        out += ["#### Not analyzed", ""]
        out += [f"- `{f.relpath}`: {f.error}" for f in errors]
        out.append("")
    return "\n".join(out)
