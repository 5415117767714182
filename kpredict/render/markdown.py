"""`--output-format markdown`: a review comment. First a table of the functions that launch kernels
(eager and compiled kernels and bytes, the modelled speedup, findings), costliest first, then the
findings, those of the costliest functions first.

The comment fits GitHub's cap on a comment (65,536 characters): on a whole tree the full list is
megabytes (3.6 MB on transformers' models/), which GitHub refuses. What does not fit is counted in a
summary line and left to the SARIF or JSON output, which the comment points to."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from kpredict.ir import FunctionReport
from kpredict.lint.model import Diagnostic, FileResult, LintRun
from kpredict.render.findings_common import figures_text
from kpredict.render.text_report import at_least, human_bytes

COLLAPSE_ROWS = 30
# GitHub refuses a comment over 65,536 characters; the CI recipe (docs/ci.md) puts `kpredict diff`'s
# table above this one in the same comment, so this part keeps 5.5 KB of the cap for it. Bytes are
# counted (UTF-8), never fewer than characters.
MAX_BYTES = 60_000
ERRORS_SHOWN = 20
SLACK = 200  # what the estimate of the fixed parts may miss (the <details> wrapper, the counts' digits)
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
TERM = re.compile(r"(\d+)?\s*\*?\s*([A-Za-z_]\w*)?")


def cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def count_rank(c: object) -> int:
    """A kernel count as a number to sort by: `4 + 13*n_layer` counts each symbol as 1 (a lower bound)."""
    if isinstance(c, int):
        return c
    total = 0
    for num, name in TERM.findall(str(c)):
        if num or name:
            total += int(num) if num else 1
    return total


def cost_key(fn: FunctionReport) -> tuple[int, float]:
    """Costliest first: eager kernels, then eager bytes (unknown bytes count 0)."""
    b = fn.eager.bytes
    return (-count_rank(fn.eager.kernels), -(float(b) if isinstance(b, int | float) else 0.0))


def _size(lines: Iterable[str]) -> int:
    return sum(len(line.encode("utf-8")) + 1 for line in lines)


def _table_row(f: FileResult, fn: FunctionReport, findings: int) -> str:
    lb = fn.lower_bound
    speedup = "?" if fn.speedup is None or lb else f"{fn.speedup:.2f}x"
    return (f"| `{cell(f.relpath)}::{cell(fn.qualname)}` | {cell(at_least(fn.eager.kernels, lb))} "
            f"| {cell(at_least(human_bytes(fn.eager.bytes), lb))} | {cell(at_least(fn.compiled.kernels, lb))} "
            f"| {cell(at_least(human_bytes(fn.compiled.bytes), lb))} | {speedup} | {findings} |")


def _finding(f: FileResult, d: Diagnostic) -> list[str]:
    out = [f"- **{d.code}** `{f.relpath}:{d.span.line}:{d.span.col + 1}` in `{d.qualname}`: {d.message}"]
    figs = figures_text(d.figures)
    if figs:
        out.append(f"  <br>figures: {figs}")
    if d.help:
        out.append(f"  <br>help: {d.help}")
    return out


def _fit(blocks: list[list[str]], budget: int) -> int:
    """How many of `blocks`, in order, fit in `budget` bytes."""
    used = 0
    for i, b in enumerate(blocks):
        used += _size(b)
        if used > budget:
            return i
    return len(blocks)


def render(run: LintRun, max_bytes: int = MAX_BYTES) -> str:
    n = run.count
    title = "no findings" if n == 0 else f"{n} finding{'' if n == 1 else 's'}"
    if run.errors:
        e = len(run.errors)
        title += f", {e} file{'' if e == 1 else 's'} not analyzed"
    head = [f"### kpredict: {title}", "", f"Predicted for `{run.target}`, per call; compiled means under `torch.compile`.",
            ""]
    # functions, costliest first; a function with something not understood is listed even at 0 kernels
    # (never a silent zero)
    ranked: list[tuple[tuple[int, float], int, FileResult, FunctionReport, int]] = []
    devices: set[str] = set()
    for i, f in enumerate(run.files):
        if f.error:
            continue
        per_fn = Counter(d.qualname for d in f.diagnostics)
        for fn in f.report.functions:
            if not fn.eager.kernels and not fn.compiled.kernels and not fn.lower_bound and fn.qualname not in per_fn:
                continue
            if fn.device:
                devices.add(fn.device)
            ranked.append((cost_key(fn), i, f, fn, per_fn.get(fn.qualname, 0)))
    ranked.sort(key=lambda r: (r[0], r[1], r[3].line))
    rows = [[_table_row(f, fn, k)] for _, _, f, fn, k in ranked]
    rank = {(id(f), fn.qualname): pos for pos, (_, _, f, fn, _) in enumerate(ranked)}
    # findings: errors first, then those of the costliest functions
    diags = sorted(((f, d) for f in run.files for d in f.diagnostics),
                   key=lambda fd: (SEVERITY_ORDER.get(fd[1].severity, 3), rank.get((id(fd[0]), fd[1].qualname),
                                                                                  len(ranked)),
                                   fd[0].relpath, fd[1].span.line, fd[1].span.col))
    entries = [_finding(f, d) for f, d in diags]
    errors = [[f"- `{f.relpath}`: {f.error}"] for f in run.errors]
    note = ([f"Speedup: modelled eager time / compiled time, a roofline model on {', '.join(sorted(devices))} "
             "(kpredict's docs/time.md), unchecked against a measurement.", ""] if devices and rows else [])

    def assemble(n_rows: int, n_entries: int, n_errors: int, tail: list[str]) -> list[str]:
        out = list(head)
        if n_rows:
            table = ["| function | eager kernels | eager bytes | compiled kernels | compiled bytes | speedup | findings |",
                     "|---|---:|---:|---:|---:|---:|---:|", *(r[0] for r in rows[:n_rows])]
            if n_rows > COLLAPSE_ROWS:
                shown = f"{n_rows} functions" if n_rows == len(rows) else f"the {n_rows} costliest of {len(rows)} functions"
                out += [f"<details><summary>{shown}</summary>", "", *table, "", "</details>"]
            else:
                out += table
            out.append("")
            out += note
        if n_entries:
            out += ["#### Findings", ""]
            for e in entries[:n_entries]:
                out += e
            out.append("")
        if n_errors:
            out += ["#### Not analyzed", ""]
            for e in errors[:n_errors]:
                out += e
            out.append("")
        return out + tail

    full = assemble(len(rows), len(entries), len(errors), [])
    if _size(full) <= max_bytes:
        return "\n".join(full)
    # too long for one comment: the costliest first, a summary line for the rest, a pointer to the full output
    n_errors = min(len(errors), ERRORS_SHOWN)
    tail = _rest_lines(rows, entries, errors, diags, len(rows), len(entries), n_errors, run.full_output)  # longest
    fixed = _size(assemble(1, 1, n_errors, tail)) - _size(rows[0] if rows else []) - _size(entries[0] if entries else [])
    budget = max(0, max_bytes - fixed - SLACK)
    n_rows = _fit(rows, budget // 2)  # half for each, what one leaves goes to the other
    n_entries = _fit(entries, budget - _size(r[0] for r in rows[:n_rows]))
    n_rows = _fit(rows, budget - sum(_size(e) for e in entries[:n_entries]))
    tail = _rest_lines(rows, entries, errors, diags, n_rows, n_entries, n_errors, run.full_output)
    return "\n".join(assemble(n_rows, n_entries, n_errors, tail))


def _rest_lines(rows: list[list[str]], entries: list[list[str]], errors: list[list[str]],
                diags: list[tuple[FileResult, Diagnostic]], n_rows: int, n_entries: int, n_errors: int,
                full_output: str) -> list[str]:
    """The summary line of what is left out, and where the full results are."""
    parts = []
    if n_rows < len(rows):
        parts.append(f"{len(rows) - n_rows:,} of {len(rows):,} functions (the cheapest)")
    if n_entries < len(entries):
        by_code = Counter(d.code for _, d in diags[n_entries:])
        codes = ", ".join(f"{c} {k:,}" for c, k in sorted(by_code.items(), key=lambda kv: (-kv[1], kv[0])))
        parts.append(f"{len(entries) - n_entries:,} of {len(entries):,} findings ({codes})")
    if n_errors < len(errors):
        parts.append(f"{len(errors) - n_errors:,} of {len(errors):,} files not analyzed")
    where = f"[the full output]({full_output})" if full_output else "the full output"
    return [f"**Not shown**, to fit GitHub's 64 KB limit on a comment: {' and '.join(parts)}. Every finding "
            f"and function is in {where}: `kpredict check --output-format sarif` (or `json`) on the same paths.", ""]
