"""`--output-format concise`: `path:line:col: KP101 message`, one line per finding (columns 1-based)."""

from __future__ import annotations

from kpredict.lint.model import Diagnostic, LintRun


def render(run: LintRun) -> str:
    out = [f"{f.path}:{d.span.line}:{d.span.col + 1}: {d.code}{fix_mark(run, d)} {d.message}"
           for f, d in run.diagnostics()]
    out.append(summary(run))
    return "\n".join(out) + "\n"


def fix_mark(run: LintRun, d: Diagnostic) -> str:
    """ruff's `[*]` after the code: `check --fix` would rewrite this finding's code."""
    return " [*]" if run.fixable(d) else ""


def summary(run: LintRun) -> str:
    """The last lines: "All checks passed!" only when every file was analyzed and nothing was found;
    files that could not be analyzed (each one `path: error: ...` line on stderr) are counted; with
    --fix, how many findings it fixed; else how many it could (ruff's wording)."""
    n, e = run.count, len(run.errors)
    total = n + (run.fixed or 0)
    found = f"Found {total} finding{'' if total == 1 else 's'}" if total else "No findings"
    if run.fixed:
        found += f" ({run.fixed} fixed, {n} remaining)"
    line = (f"{found}." if total else "All checks passed!") if not e else (
        f"{found}; {e} file{'' if e == 1 else 's'} could not be analyzed.")
    diags = [d for _, d in run.diagnostics()]
    fixable = sum(run.fixable(d) for d in diags)
    hidden = sum(d.fix is not None and not run.fixable(d) for d in diags)
    if fixable:
        line += f"\n[*] {fixable} fixable with the `--fix` option."
    if hidden:
        line += (f"\n{hidden} hidden fix{'' if hidden == 1 else 'es'} can be enabled with the "
                 f"`--unsafe-fixes` option.")
    return line
