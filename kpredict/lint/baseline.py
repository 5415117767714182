"""The kernel budget: a baseline file of per-function figures (and of the findings that existed).

    {"schema": "kpredict/baseline/v1", "target": "cuda",
     "functions": {"src/model.py::Block.forward": {"eager": {"kernels": 14, "bytes": 3600000},
                                                   "compiled": {"kernels": 3, "bytes": 1200000}}},
     "findings": ["<fingerprint>", ...]}

Functions are keyed by their file's path relative to the repository root and their qualname,
never by line, so moving code does not break the budget. `check --baseline` reports KP801 for a
function whose eager or compiled kernels or bytes grew beyond the record, and hides findings whose
fingerprint the baseline holds. A function the baseline does not know has no budget yet.
"""

from __future__ import annotations

import json
import os
from typing import Any

from kpredict.ir import FunctionReport, Span
from kpredict.lint.config import ConfigError
from kpredict.lint.model import Diagnostic, FileResult
from kpredict.lint.registry import by_code
from kpredict.render.text_report import human_bytes

SCHEMA = "kpredict/baseline/v1"
BUDGET = "KP801"
METRICS = (("eager", "kernels"), ("eager", "bytes"), ("compiled", "kernels"), ("compiled", "bytes"))


def key(relpath: str, qualname: str) -> str:
    return f"{relpath}::{qualname}"


def figures_of(fn: FunctionReport) -> dict[str, dict[str, Any]]:
    return {"eager": {"kernels": fn.eager.kernels, "bytes": fn.eager.bytes},
            "compiled": {"kernels": fn.compiled.kernels, "bytes": fn.compiled.bytes}}


def record(files: list[FileResult], target: str) -> dict[str, Any]:
    functions = {}
    findings = set()
    for f in files:
        if f.error:
            continue
        for fn in f.report.functions:
            functions[key(f.relpath, fn.qualname)] = figures_of(fn)
        findings.update(d.fingerprint for d in f.diagnostics if d.code != BUDGET and d.fingerprint)
    return {"schema": SCHEMA, "target": target, "functions": dict(sorted(functions.items())),
            "findings": sorted(findings)}


def write(path: str, doc: dict[str, Any]) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=2, ensure_ascii=False)
        fh.write("\n")
    os.replace(tmp, path)


def load(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such baseline (record one with --write-baseline)") from None
    except (OSError, ValueError) as e:
        raise ConfigError(f"{path}: not a kpredict baseline ({e})") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("functions"), dict):
        raise ConfigError(f"{path}: not a kpredict baseline (expected schema {SCHEMA!r})")
    return doc


def growth(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """'eager 14 -> 17 kernels (+3)' for each metric that grew; unknown or symbolic figures are skipped."""
    out = []
    for mode, metric in METRICS:
        old = (before.get(mode) or {}).get(metric)
        new = (after.get(mode) or {}).get(metric)
        if isinstance(old, int) and isinstance(new, int) and new > old:
            out.append(change_text(mode, metric, old, new))
    return out


def change_text(mode: str, metric: str, old: int, new: int) -> str:
    d = new - old
    sign = "+" if d >= 0 else "-"
    if metric == "bytes":
        return f"{mode} {human_bytes(old)} -> {human_bytes(new)} ({sign}{human_bytes(abs(d))})"
    return f"{mode} {old} -> {new} kernels ({sign}{abs(d)})"


def budget_findings(relpath: str, functions: list[FunctionReport], lines: list[str],
                    entries: dict[str, Any]) -> list[Diagnostic]:
    rule = by_code()[BUDGET]
    out = []
    for fn in functions:
        recorded = entries.get(key(relpath, fn.qualname))
        if not isinstance(recorded, dict):
            continue
        grew = growth(recorded, figures_of(fn))
        if not grew:
            continue
        if fn.lower_bound:  # the new figures are at least these: something not understood may add more
            c = fn.lower_bound_causes[0]
            grew = [g.replace(" -> ", " -> at least ", 1) for g in grew]
            grew[-1] += f" (lower bounds: not understood at line {c.line}, {c.name})"
        text = lines[fn.line - 1] if 0 < fn.line <= len(lines) else ""
        indent = len(text) - len(text.lstrip())
        span = Span(fn.line, indent, fn.line, len(text.rstrip()))
        out.append(Diagnostic(
            code=rule.code, severity=rule.severity, qualname=fn.qualname, span=span, name=rule.name,
            message=f"`{fn.qualname}` is over its kernel budget: {', '.join(grew)}",
            figures={"baseline": recorded, "now": figures_of(fn)}, help=rule.fix,
            snippet=" ".join(text.split())))
    return out


def apply(files: list[FileResult], doc: dict[str, Any], target: str, enabled_budget: bool = True) -> None:
    """Add budget findings and drop findings the baseline already holds (in place)."""
    if doc.get("target") not in (None, target):
        raise ConfigError(f"the baseline was recorded for --target {doc.get('target')}, this run is for {target}")
    known = set(doc.get("findings") or [])
    entries = doc["functions"]
    for f in files:
        if f.error:
            continue
        f.diagnostics = [d for d in f.diagnostics if d.fingerprint not in known]
        if enabled_budget:
            f.diagnostics.extend(budget_findings(f.relpath, f.report.functions, f.lines, entries))
            f.diagnostics.sort(key=lambda d: (d.span.line, d.span.col, d.code))
