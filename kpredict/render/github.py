"""`--output-format github`: GitHub Actions workflow commands that become annotations.

`::warning file=…,line=…,endLine=…,col=…,endColumn=…,title=…::message`, escaped as actions/toolkit
does: in the message `%` -> %25, CR -> %0D, LF -> %0A; in property values also `:` -> %3A and
`,` -> %2C. Columns are 1-based (code points) and given only for single-line ranges. GitHub shows 10
annotations per level per step, so a summary notice follows when there are more. A file that
could not be analyzed is an `::error` annotation on that file (and its line, when the error names one).
"""

from __future__ import annotations

from collections import Counter

from kpredict.lint.model import LintRun
from kpredict.render.findings_common import error_line

LEVEL = {"error": "error", "warning": "warning", "info": "notice"}
SHOWN_PER_LEVEL = 10


def escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def render(run: LintRun) -> str:
    out = []
    levels: Counter[str] = Counter()
    for f, d in run.diagnostics():
        level = LEVEL.get(d.severity, "warning")
        levels[level] += 1
        s = d.span
        props = [f"title={escape_property(f'kpredict ({d.code})')}", f"file={escape_property(f.relpath)}",
                 f"line={s.line}", f"endLine={s.end_line}"]
        if s.line == s.end_line:
            props += [f"col={s.col + 1}", f"endColumn={s.end_col + 1}"]
        text = f"{f.relpath}:{s.line}:{s.col + 1}: {d.code} {d.message}"
        out.append(f"::{level} {','.join(props)}::{escape_data(text)}")
    for f in run.errors:
        levels["error"] += 1
        line = error_line(f.error or "")
        props = [f"title={escape_property('kpredict (error)')}", f"file={escape_property(f.relpath)}"]
        if line is not None:
            props.append(f"line={line}")
        out.append(f"::error {','.join(props)}::{escape_data(f'{f.relpath}: error: {f.error}')}")
    if any(n > SHOWN_PER_LEVEL for n in levels.values()):
        total = sum(levels.values())
        out.append(f"::notice title={escape_property('kpredict')}::"
                   + escape_data(f"{total} findings in total; GitHub shows {SHOWN_PER_LEVEL} annotations per level "
                                 "in a step: see the job log or the SARIF upload for all of them"))
    return "".join(line + "\n" for line in out)
