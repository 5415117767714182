"""`--output-format full`: each finding with a code frame, its figures and what to do instead."""

from __future__ import annotations

from kpredict.lint.model import Diagnostic, FileResult, LintRun
from kpredict.render.concise import fix_mark, summary
from kpredict.render.findings_common import figures_text, line_of

CONTEXT = 1
MAX_LINES = 8


def render(run: LintRun) -> str:
    blocks = [finding(run, f, d) for f, d in run.diagnostics()]
    blocks.append(summary(run) + "\n")
    return "\n".join(blocks)


def finding(run: LintRun, f: FileResult, d: Diagnostic) -> str:
    s = d.span
    out = [f"{f.path}:{s.line}:{s.col + 1}: {d.code}{fix_mark(run, d)} [{d.name}] {d.message}"]
    first = max(1, s.line - CONTEXT)
    last = min(len(f.lines), s.end_line + CONTEXT)
    shown = list(range(first, last + 1))
    if len(shown) > MAX_LINES:
        shown = shown[: MAX_LINES // 2] + [-1] + shown[-(MAX_LINES // 2):]
    width = len(str(last))
    gutter = " " * width
    out.append(f"{gutter} |")
    for n in shown:
        if n == -1:
            out.append(f"{'.' * width} |")
            continue
        text = line_of(f.lines, n).rstrip()
        out.append(f"{n:>{width}} | {text}".rstrip())
        if s.line <= n <= s.end_line:
            start = s.col if n == s.line else len(text) - len(text.lstrip())
            end = s.end_col if n == s.end_line else len(text)
            if end > start:
                out.append(f"{gutter} | {' ' * start}{'^' * (end - start)}")
    out.append(f"{gutter} |")
    figs = figures_text(d.figures)
    if figs:
        out.append(f"{gutter} = figures: {figs}")
    if d.help:
        out.append(f"{gutter} = help: {d.help}")
    if d.fix is not None:
        out.append(f"{gutter} = fix ({d.fix.applicability}): {d.fix.message}")
    return "\n".join(out) + "\n"
