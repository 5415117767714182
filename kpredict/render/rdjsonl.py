"""`--output-format rdjsonl`: reviewdog's Diagnostic objects, one JSON per line (`reviewdog -f=rdjsonl`).

From reviewdog's proto/rdf/reviewdog.proto: `message`, `location{path, range{start, end}}` with
1-based lines and 1-based columns counted in UTF-8 bytes, `end` exclusive; `severity`
ERROR|WARNING|INFO; `source{name}`; `code{value}`; `suggestions[{range, text}]` for a fix `check --fix`
would apply (reviewdog posts them as suggested changes a reviewer applies with one click). A file that could not be analyzed is an ERROR
diagnostic without a code (on its line when the error names one, else on the whole file).
"""

from __future__ import annotations

import json

from kpredict.ir import Span
from kpredict.lint.model import LintRun
from kpredict.render.findings_common import error_line, line_of, utf8_column

SEVERITY = {"error": "ERROR", "warning": "WARNING", "info": "INFO"}


def _range(lines: list[str], s: Span) -> dict:
    start = utf8_column(line_of(lines, s.line), s.col) + 1
    end = utf8_column(line_of(lines, s.end_line), s.end_col) + 1
    return {"start": {"line": s.line, "column": start}, "end": {"line": s.end_line, "column": end}}


def render(run: LintRun) -> str:
    out = []
    for f, d in run.diagnostics():
        obj = {
            "message": d.message,
            "location": {"path": f.relpath, "range": _range(f.lines, d.span)},
            "severity": SEVERITY.get(d.severity, "WARNING"),
            "source": {"name": "kpredict"},
            "code": {"value": d.code},
        }
        if run.fixable(d):
            assert d.fix is not None
            obj["suggestions"] = [{"range": _range(f.lines, e.span), "text": e.content} for e in d.fix.edits]
        out.append(json.dumps(obj, ensure_ascii=False))
    for f in run.errors:
        location: dict = {"path": f.relpath}
        line = error_line(f.error or "")
        if line is not None:
            location["range"] = {"start": {"line": line}}
        out.append(json.dumps({"message": f"error: {f.error}", "location": location, "severity": "ERROR",
                               "source": {"name": "kpredict"}}, ensure_ascii=False))
    return "".join(line + "\n" for line in out)
