"""`--output-format concise`: `path:line:col: KP101 message`, one line per finding (columns 1-based)."""

from __future__ import annotations

from kpredict.lint.model import LintRun


def render(run: LintRun) -> str:
    out = [f"{f.path}:{d.span.line}:{d.span.col + 1}: {d.code} {d.message}" for f, d in run.diagnostics()]
    out.append(summary(run))
    return "\n".join(out) + "\n"


def summary(run: LintRun) -> str:
    """The last line: "All checks passed!" only when every file was analyzed and nothing was found;
    files that could not be analyzed (each one `path: error: ...` line on stderr) are counted."""
    n, e = run.count, len(run.errors)
    found = f"Found {n} finding{'' if n == 1 else 's'}" if n else "No findings"
    if not e:
        return f"{found}." if n else "All checks passed!"
    return f"{found}; {e} file{'' if e == 1 else 's'} could not be analyzed."
