"""`--output-format concise`: `path:line:col: KP101 message`, one line per finding (columns 1-based)."""

from __future__ import annotations

from kpredict.lint.model import LintRun


def render(run: LintRun) -> str:
    out = [f"{f.path}:{d.span.line}:{d.span.col + 1}: {d.code} {d.message}" for f, d in run.diagnostics()]
    out.append(summary(run))
    return "\n".join(out) + "\n"


def summary(run: LintRun) -> str:
    n = run.count
    if n == 0:
        return "All checks passed!"
    return f"Found {n} finding{'' if n == 1 else 's'}."
